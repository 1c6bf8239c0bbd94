"""Pre-train adaptive-depth ALBERT: MLM + SOP + tau * ponder cost, LAMB, gradient accumulation.

With no arguments, runs the embedded default on the CPU in a few minutes:
synthetic corpus -> vocabulary -> TFRecords (cached in data_cache/demo) -> `demo`
preset -> training -> evaluation on the held-out shard -> checkpoint ->
SavedModel in saved_models/albert_act_demo/1 -> mean iterations per token type.

    python -m albert_act.pretrain
    python -m albert_act.pretrain --preset tiny --train_files 'gs://b/data/train-*' \\
        --eval_files 'gs://b/data/eval-*' --model_dir gs://b/runs/tiny --steps 112500 \\
        --global_batch_size 4096 --micro_batch_size 128 --strategy tpu

Re-running with the same --model_dir resumes from the last checkpoint.
TensorBoard: tensorboard --logdir <model_dir>
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: albert_act/pretrain.py is part of albert-act: run it from the repository root as "
                     "python -m albert_act.pretrain")

import dataclasses
import json
import os
import shlex
import sys

from albert_act.base import artifacts, cli, entry, outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv=None):
    """The flags, made from `PretrainConfig`'s fields (albert_act/train/pretraining_config.py: name,
    type, default, help and range in one place, with --config and --set), and the command's own:
    --no_export and --demo_data_dir."""
    from albert_act.base import settings  # (TensorFlow: after the quiet start, as every import below)
    from albert_act.train.pretraining_config import PretrainConfig

    parser = cli.parser("pretrain", __doc__)
    parser.add_argument("--no_export", action="store_true", help="write no SavedModel at the end")
    parser.add_argument("--demo_data_dir", default=os.path.join(REPO, "data_cache", "demo"),
                        help="where the embedded default's corpus, vocabulary and TFRecords are built once and reused")
    args = settings.parse_flags(parser, PretrainConfig, argv, paths=("demo_data_dir",))
    typed = sys.argv[1:] if argv is None else argv
    args.model_dir_typed = any(a == "--model_dir" or a.startswith("--model_dir=") for a in typed) or \
        "model_dir" in args.given
    if args.model_dir is None:
        args.model_dir = os.path.join(REPO, "runs", args.preset)
    return args


def evaluation_summary(result):
    """The held-out numbers in words: losses, accuracies with 95% intervals beside their baselines."""
    mlm_low, mlm_high = result["mlm_accuracy_interval"]
    sop_low, sop_high = result["sop_accuracy_interval"]
    return (f"\nheld-out evaluation after {result['step']} updates ({result['examples']} sequences):\n"
            f"  loss {result['loss']:.3f} = MLM {result['mlm_loss']:.3f} + SOP {result['sop_loss']:.3f} "
            f"+ tau x ponder {result['ponder_loss']:.3f} (MLM loss without context: {result['mlm_unigram_loss']:.3f})\n"
            f"  MLM accuracy {result['mlm_accuracy']:.3f} [95% CI {mlm_low:.3f}, {mlm_high:.3f}]; "
            f"baseline (always the most frequent masked token) {result['mlm_unigram_baseline']:.3f}\n"
            f"  SOP accuracy {result['sop_accuracy']:.3f} [95% CI {sop_low:.3f}, {sop_high:.3f}]; "
            f"baseline (majority class) {result['sop_majority_baseline']:.3f}\n"
            f"\nIterations per token type on the held-out sequences (the paper's Table 1):\n")


def interrupted_message(model_dir, jax=False):
    """One line for Ctrl-C or SIGTERM: what the run kept, and how to go on."""
    if jax:
        from albert_act.train.jax_pretraining import checkpoints

        found = checkpoints(model_dir)
    else:  # (the files on disk, as the resume reads them: not TensorFlow's state file, which may be cut short)
        found = artifacts.checkpoints_on_disk(os.path.join(model_dir, artifacts.CHECKPOINTS))
    latest = found[max(found)] if found else None
    if latest is None:
        return (f"before the first checkpoint: no checkpoint of this run was saved in {model_dir}; "
                "re-run the same command to start again")
    return (f"the newest checkpoint is {latest} (update {latest.rsplit('-', 1)[-1].removesuffix('.npz')}); re-run the same "
            "command to resume from it")


def jax_ignored_flags(args):
    """On the JAX backend: the flags of TensorFlow's run that it does not read (refused, not ignored)."""
    capacity = dict(getattr(args, "backbone_overrides", None) or {}).get("capacity")
    if capacity is not None:
        return (f"--override capacity={capacity}: a cap on the tokens an iteration computes is TensorFlow's --execution "
                "bucket; the JAX backend computes every running token: drop it, or run on TensorFlow (KERAS_BACKEND "
                "unset)")
    given = [f"--{name} {getattr(args, name)}" for name in ("strategy", "input_streams", "export_dir")
             if name in args.given and getattr(args, name) not in (None, "auto")]
    given += ["--overwrite"] if "overwrite_export" in args.given and args.overwrite_export else []  # (of an export)
    if given:
        return (f"{', '.join(given)}: TensorFlow's, which the JAX backend does not read (it uses every local device, "
                "one input stream, and writes model.weights.h5: python -m albert_act.export --checkpoint <model_dir> "
                "--kind pretraining --output DIR on a machine with TensorFlow writes the SavedModel); drop them")
    return None


def _in_config_file(args, name):
    """Whether --config's file gave the setting `name` (a path's, or a flag's words)."""
    return name in getattr(args, "from_file", {}) or f"--{name}" in getattr(args, "file_words", {})


def conflicting_flags(args):
    """A message for flags that are given but could not take effect (None when there are none):
    a flag the run would silently ignore is refused instead. (Settings read from --config's
    file are not flags given.)"""
    if bool(args.train_files) != bool(args.eval_files):
        from_file = {n: v for n, v in getattr(args, "from_file", {}).items() if n in ("train_files", "eval_files")}
        said = "" if not from_file else f" (--config {args.config} gives " + ", ".join(
            f"{n} {json.dumps(v)}" for n, v in sorted(from_file.items())) + ")"
        return f"give both --train_files and --eval_files, or neither (the embedded demo data){said}"
    try:  # (a run inside another's checkpoints/, train/ or eval/, which that one writes and cleans)
        artifacts.check_not_in_a_run(args.model_dir, "--model_dir")
    except ValueError as error:
        return str(error)
    for name in ("train_files", "eval_files"):  # (an empty list is no file, not the demo data's default)
        in_file = _in_config_file(args, name)
        if (name in args.given or in_file) and not getattr(args, name):
            return (f"{name} is given empty ({getattr(args, name)!r}{f' by --config {args.config}' * in_file}): it "
                    "names no record file; give a pattern, or leave it out for the demo data")
    if not args.train_files and args.vocab:
        in_file = "vocab" not in args.given and _in_config_file(args, "vocab")  # (dropped there, not typed)
        return (f"--vocab {args.vocab}{f' (from --config {args.config})' * in_file}: the demo data (no --train_files) is "
                f"made with its own vocabulary ({os.path.join(args.demo_data_dir, artifacts.VOCAB)}), which the run's "
                f"export carries: drop {f'vocab from {args.config}' if in_file else '--vocab'}; "
                "or make records with your vocabulary (python -m pipelines.create_pretraining_data --vocab ...) and pass "
                "them as --train_files and --eval_files")
    if args.train_files and "demo_data_dir" in args.typed:
        return (f"--demo_data_dir {args.demo_data_dir} is where the embedded demo data is built; with --train_files "
                "there is none to build: give one")
    if args.no_export and "export_dir" in args.given:
        return f"--no_export and --export_dir {args.export_dir} contradict each other: give one"
    if args.no_export and "overwrite_export" in args.given and args.overwrite_export:  # (false asks for nothing)
        return "--overwrite lets the run's SavedModel replace another's; --no_export writes none: give one"
    config = os.path.expanduser(args.config) if args.config and "://" not in args.config else None
    folder = os.path.dirname(os.path.abspath(config)) if config else None
    if folder and not args.model_dir_typed and os.path.isdir(os.path.join(folder, artifacts.CHECKPOINTS)) and \
            os.path.realpath(folder) != os.path.realpath(args.model_dir):
        return (f"--config {args.config} lies in the run {folder} but names model_dir {args.model_dir}, which this "
                f"would resume: pass --model_dir {shlex.quote(folder)} to go on with this one, or --model_dir NEW to "
                "repeat the run in a new dir")
    from albert_act.base import settings
    from albert_act.train.pretraining_config import PretrainConfig, fixed_depth_conflict

    flags = {field.name: settings.flag_name(field) for field in dataclasses.fields(PretrainConfig)}
    return fixed_depth_conflict(args, args.given, flags.get)


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow (not on the JAX backend), quietly unless --verbose
    jax = cli.jax_backend()  # the JAX backend's run, without TensorFlow: albert_act/train/jax_pretraining.py
    args = parse_args(argv)
    conflict = conflicting_flags(args) or (jax_ignored_flags(args) if jax else None)
    if conflict:
        sys.exit(f"error: {conflict}")
    from albert_act.base import settings
    from albert_act.train.pretraining_config import PretrainConfig

    changes = {"export_dir": None} if args.no_export else {}
    config = settings.config_from(PretrainConfig, args, **changes)  # the values, checked before any work
    if not config.train_files:
        from albert_act.train.demo_data import check_cache_dir, prepare_demo_data

        with cli.failures(args.demo_data_dir, "nothing was written", "the demo data was not checked"):
            outputs.check_dir_target(args.demo_data_dir, "--demo_data_dir")
            artifacts.check_not_in_a_run(args.demo_data_dir, "--demo_data_dir", run=config.model_dir)
            check_cache_dir(args.demo_data_dir)
        train, evaluation, vocab = prepare_demo_data(args.demo_data_dir)
        demo_export = None if args.no_export else os.path.join(REPO, "saved_models", "albert_act_demo", "1")
        config = dataclasses.replace(config, train_files=[train], eval_files=[evaluation], vocab=vocab,
                                     export_dir=config.export_dir or demo_export)
    cli.stop_on_sigterm()
    kept = lambda: interrupted_message(config.model_dir, jax)  # noqa: E731 (what is on disk when it stops)
    with cli.exit_at_once_when_stopped(), \
            cli.failures("the run or its export", kept, kept, refusals=(ValueError, FloatingPointError),
                         explain=settings.explained(args)):
        if jax:
            from albert_act.train.jax_pretraining import run_jax_pretraining

            result = run_jax_pretraining(config)
        else:
            from albert_act.train.pretraining_run import run_pretraining

            result = run_pretraining(config)
    print(evaluation_summary(result))
    print(result["table"])
    if "depth" in result:
        print(f"\n{result['depth']}")
    if "export" in result:
        answer = result["export"]["fill_mask"]
        print(f"\nSavedModel (raw text in; fill_mask, encoder): {result['export']['dir']}")
        print(f"  fill_mask({answer['tokens'][1:-1]}) -> {answer['top_k_tokens'][0][:3]}, "
              f"iterations {answer['iterations'][:sum(answer['padding_mask'])]}")
        if not os.path.basename(os.path.normpath(result["export"]["dir"])).isdigit():  # TF Serving needs a version
            from albert_act.io.exports import serve_command

            print(f"  {serve_command(os.path.normpath(result['export']['dir']), '--export_dir')}")
    elif jax:
        print(f"\nweights: {os.path.join(config.model_dir, artifacts.JAX_FINAL_WEIGHTS)} (a SavedModel needs TensorFlow: "
              f"python -m albert_act.export --checkpoint {shlex.quote(config.model_dir)} --kind pretraining "
              "--output DIR)")
    else:
        print("\nno SavedModel written (--export_dir and --vocab give one; python -m albert_act.export makes one later)")
    print(f"checkpoints: {os.path.join(config.model_dir, artifacts.CHECKPOINTS)}")
    print(f"held-out evaluation: {os.path.join(config.model_dir, artifacts.EVALUATION)}")
    if not jax:
        print(f"TensorBoard: tensorboard --logdir {shlex.quote(config.model_dir)}")


if __name__ == "__main__":
    entry.run(main)
