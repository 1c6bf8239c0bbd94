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

import argparse
import json
import os
import shlex
import sys

from albert_act.base import cli, outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _override(text):
    key, _, value = text.partition("=")
    if not key or not _:
        raise argparse.ArgumentTypeError(f"--override expects key=value, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _tau(text):
    if text == "auto":
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tau expects a number or 'auto', got {text!r}") from None


def parse_args(argv=None):
    from albert_act import distribution  # (TensorFlow: after the quiet start, as every import below)
    from albert_act.model.halting import TRAINING_EXECUTIONS
    from albert_act.model.presets import PRESETS

    parser = cli.parser("pretrain", __doc__)
    preset_help = "default: the preset's (albert_act/model/presets.py)"
    parser.add_argument("--preset", default="demo", choices=sorted(PRESETS),
                        help="model and run settings; the paper's tiny/small/base, or the CPU demo")
    parser.add_argument("--train_files", nargs="+", help="TFRecord globs (default: the embedded demo data)")
    parser.add_argument("--eval_files", nargs="+", help="held-out TFRecord globs")
    parser.add_argument("--model_dir", default=None, help="run directory (default: runs/<preset>)")
    parser.add_argument("--steps", type=int, default=None,
                        help=f"optimizer updates; the preset's warm-up counts scale with it ({preset_help})")
    parser.add_argument("--warmup_steps", type=int, default=None, help=f"learning-rate warm-up updates ({preset_help})")
    parser.add_argument("--learning_rate", type=float, default=None, help=f"peak LAMB learning rate ({preset_help})")
    parser.add_argument("--global_batch_size", type=int, default=None,
                        help=f"sequences per optimizer update ({preset_help})")
    parser.add_argument("--micro_batch_size", type=int, default=None,
                        help=f"per replica; accumulation = global / (micro x replicas) ({preset_help})")
    distribution.add_arguments(parser, f"XLA-compile the per-replica steps; always on for TPU ({preset_help})",
                               multiworker=True)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--deterministic", action="store_true", help="deterministic ops and data order")
    parser.add_argument("--input_streams", type=int, default=None,
                        help="input streams the global batch is read as, each from its share of the train files "
                             "(default: the job's workers, one each; one process given N reads what N workers read)")
    _add_depth_flags(parser, preset_help, TRAINING_EXECUTIONS)
    _add_run_flags(parser)
    args = cli.parse_checked(parser, argv, FLAG_RULES)
    if args.model_dir is None:
        args.model_dir = os.path.join(REPO, "runs", args.preset)
    return args


def _add_depth_flags(parser, preset_help, executions):
    """The flags of depth: the ponder cost's weight and schedule, the loop's execution, halting and
    sharing, and the backbone's own settings (--override)."""
    parser.add_argument("--tau", type=_tau, default=None,
                        help="ponder-cost weight: a number, or 'auto' (tau x ponder cost = 10%% of MLM + SOP "
                             f"when the ponder cost switches on) ({preset_help})")
    parser.add_argument("--ponder_warmup_start", type=int, default=None,
                        help=f"updates trained with tau = 0 before the ponder cost switches on ({preset_help})")
    parser.add_argument("--ponder_warmup_steps", type=int, default=None,
                        help=f"updates over which tau then ramps linearly from 0 to its value ({preset_help})")
    parser.add_argument("--target_iterations", type=float, default=None,
                        help="a mean depth to keep: once the ponder cost is on, tau is adjusted after every update "
                             "(dual ascent on log tau) until the mean iterations per token come to this; "
                             "--tau is then where tau starts (default: off, tau stays fixed)")
    parser.add_argument("--execution", default=None, choices=executions,
                        help="ACT loop in training: static (N_max steps over every token; XLA/TPU), while "
                             "(stops once every token of the batch has halted), gather (each iteration computes "
                             "only the running tokens; dynamic shapes, CPU/GPU, needs --no-jit_compile) or bucket "
                             "(the same at static widths; XLA/TPU; --override capacity=K caps them). Same numbers "
                             f"and gradients ({preset_help})")
    parser.add_argument("--halting", default="act", choices=["act", "none"],
                        help="act: learned per-token depth; none: fixed depth N_max (the ALBERT baseline)")
    parser.add_argument("--unshared", action="store_true", help="N_max distinct layers (BERT baseline)")
    parser.add_argument("--override", type=_override, action="append", default=[], metavar="KEY=VALUE",
                        help="change one backbone setting of the preset, e.g. --override hidden_dim=256 "
                             "(repeatable; the keys are AlbertActBackbone's arguments)")


def _add_run_flags(parser):
    """The flags of the run's outputs: checkpoints, TensorBoard, evaluation, export, warm start, data."""
    parser.add_argument("--checkpoint_every", type=int, default=500, help="updates between checkpoints")
    parser.add_argument("--keep_checkpoints", type=int, default=5)
    parser.add_argument("--log_every", type=int, default=50,
                        help="updates averaged into each TensorBoard point")
    parser.add_argument("--eval_batches", type=int, default=None, help="default: the whole eval shard")
    parser.add_argument("--eval_every", type=int, default=None,
                        help="evaluate on the held-out records every this many updates too (TensorBoard's eval "
                             "folder and one line each in <model_dir>/held_out.jsonl; default: at the end only)")
    parser.add_argument("--export_dir", default=None,
                        help="raw-text SavedModel written at the end, needs --vocab "
                             "(default for the demo: saved_models/albert_act_demo/1)")
    parser.add_argument("--no_export", action="store_true")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a SavedModel at --export_dir that another run wrote (this run's own earlier "
                             "export is replaced without it); checked before the first update")
    parser.add_argument("--vocab", default=None,
                        help="SentencePiece model of the data, kept with the run for fine-tuning (demo: its own)")
    parser.add_argument("--init_from", default=None,
                        help="start from these weights: a pre-training run, an export, or a public ALBERT checkpoint "
                             "(Hugging Face dir, TF1 checkpoint, keras-hub preset); its sizes and vocabulary are "
                             "used, the preset's halting and depth cap added (a new halting unit: --override "
                             "halting_bias_initializer=B)")
    parser.add_argument("--demo_data_dir", default=os.path.join(REPO, "data_cache", "demo"),
                        help="where the embedded default's corpus, vocabulary and TFRecords are built once and reused")


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


def interrupted_message(model_dir):
    """One line for Ctrl-C or SIGTERM: what the run kept, and how to go on."""
    import tensorflow as tf

    from albert_act.base import artifacts

    latest = tf.train.latest_checkpoint(os.path.join(model_dir, artifacts.CHECKPOINTS))
    if latest is None:
        return (f"before the first checkpoint: nothing of this run is kept in {model_dir}; "
                "re-run the same command to start again")
    return (f"the newest checkpoint is {latest} (update {latest.rsplit('-', 1)[-1]}); re-run the same "
            "command to resume from it")


FLAG_RULES = {"steps": "int[1,100000000]", "warmup_steps": "int>=0", "learning_rate": ">0",
              "global_batch_size": "int[1,65536]", "micro_batch_size": "int[1,65536]", "seed": "int>=0",
              "input_streams": "int[1,1024]", "ponder_warmup_start": "int>=0", "ponder_warmup_steps": "int>=0",
              "checkpoint_every": "int>=1", "keep_checkpoints": "int[1,100000]", "log_every": "int>=1",
              "eval_batches": "int[1,1000000]", "eval_every": "int>=1", "target_iterations": ">0"}


def conflicting_flags(args):
    """A message for flags that are given but could not take effect (None when there are none):
    a flag the run would silently ignore is refused instead."""
    if not args.train_files and args.vocab:
        return (f"--vocab {args.vocab}: the demo data (no --train_files) is made with its own vocabulary; make "
                "records with your vocabulary (python -m pipelines.create_pretraining_data --vocab ...) and pass "
                "them as --train_files and --eval_files")
    if args.no_export and args.export_dir:
        return f"--no_export and --export_dir {args.export_dir} contradict each other: give one"
    ponder = [f"--{name}" for name in ("tau", "target_iterations", "ponder_warmup_start", "ponder_warmup_steps")
              if getattr(args, name) is not None]
    if args.halting == "none" and ponder:
        return (f"{', '.join(ponder)}: --halting none runs every token to N_max, so there is no ponder cost to "
                "weigh or steer; drop them")
    return None


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    args = parse_args(argv)
    if bool(args.train_files) != bool(args.eval_files):
        sys.exit("error: give both --train_files and --eval_files, or neither (the embedded demo data)")
    conflict = conflicting_flags(args)
    if conflict:
        sys.exit(f"error: {conflict}")
    from albert_act.base import artifacts
    from albert_act.train.pretraining_run import PretrainConfig, run_pretraining

    train_files, eval_files, export_dir, vocab = args.train_files, args.eval_files, args.export_dir, args.vocab
    if not train_files:
        from albert_act.train.demo_data import prepare_demo_data

        with cli.failures(args.demo_data_dir, "nothing was written", "the demo data was not checked"):
            outputs.check_dir_target(args.demo_data_dir, "--demo_data_dir")
        train, evaluation, vocab = prepare_demo_data(args.demo_data_dir)
        train_files, eval_files = [train], [evaluation]
        export_dir = export_dir or os.path.join(REPO, "saved_models", "albert_act_demo", "1")
    config = PretrainConfig(
        train_files=train_files, eval_files=eval_files, model_dir=args.model_dir, preset=args.preset,
        backbone_overrides=dict(args.override), halting=args.halting, share_weights=not args.unshared,
        ponder_cost_weight=args.tau, ponder_warmup_start=args.ponder_warmup_start,
        ponder_warmup_steps=args.ponder_warmup_steps, target_iterations=args.target_iterations,
        execution=args.execution, jit_compile=args.jit_compile,
        steps=args.steps, warmup_steps=args.warmup_steps,
        learning_rate=args.learning_rate, global_batch_size=args.global_batch_size,
        micro_batch_size=args.micro_batch_size, strategy=args.strategy, precision=args.precision,
        seed=args.seed, deterministic=args.deterministic, input_streams=args.input_streams, checkpoint_every=args.checkpoint_every,
        keep_checkpoints=args.keep_checkpoints, log_every=args.log_every, eval_batches=args.eval_batches,
        eval_every=args.eval_every,
        export_dir=None if args.no_export else export_dir, overwrite_export=args.overwrite, vocab=vocab,
        init_from=args.init_from,
    )
    cli.stop_on_sigterm()
    kept = interrupted_message(args.model_dir)
    with cli.failures("the run or its export", kept, kept, refusals=(ValueError, FloatingPointError)):
        result = run_pretraining(config)
    print(evaluation_summary(result))
    print(result["table"])
    if "export" in result:
        answer = result["export"]["fill_mask"]
        print(f"\nSavedModel (raw text in; fill_mask, encoder): {result['export']['dir']}")
        print(f"  fill_mask({answer['tokens'][1:-1]}) -> {answer['top_k_tokens'][0][:3]}, "
              f"iterations {answer['iterations'][:sum(answer['padding_mask'])]}")
    else:
        print("\nno SavedModel written (--export_dir and --vocab give one; python -m albert_act.export makes one later)")
    print(f"checkpoints: {os.path.join(args.model_dir, artifacts.CHECKPOINTS)}")
    print(f"held-out evaluation: {os.path.join(args.model_dir, artifacts.EVALUATION)}")
    print(f"TensorBoard: tensorboard --logdir {shlex.quote(args.model_dir)}")


if __name__ == "__main__":
    main()
