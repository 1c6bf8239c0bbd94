"""Adding ACT to a fixed-depth ALBERT: what the new halting unit's initial bias does, measured.

1. Pre-trains a fixed-depth ALBERT (the demo preset with --halting none: 6 iterations of one shared
   layer) on the embedded corpus, and writes it as a Hugging Face dir, the format a user brings.
2. Reads that dir back as the ACT model (N_max 6) with a new halting unit at each initial bias b,
   and reports held-out MLM and SOP accuracy and mean iterations before any update, then after
   --steps updates of continued pre-training (`--init_from`, the demo's schedule scaled).
3. Does the same for the fixed-depth model itself: the baseline, in the same run.

    python -m benchmarks.warm_start [--fixed_steps 1000] [--steps 300] [--biases 0 -1 -2 -3]

Runs go to --output_dir (default runs/warm_start); a finished one is reused.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/warm_start.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.warm_start")

import argparse
import json
import os
import re

from albert_act.base import cli, entry
from benchmarks import arguments

cli.quiet_start()

from albert_act import distribution  # noqa: E402
from albert_act.io.source import INIT_FRESH, Source  # noqa: E402
from albert_act.serve.huggingface import write_huggingface  # noqa: E402
from albert_act.train.demo_data import prepare_demo_data  # noqa: E402
from albert_act.train.pretrainer import Pretrainer  # noqa: E402
from albert_act.train.pretraining_run import PretrainConfig, run_pretraining  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _numbers(result):
    return {"mlm_accuracy": result["mlm_accuracy"], "mlm_interval": result["mlm_accuracy_interval"],
            "sop_accuracy": result["sop_accuracy"], "iterations": result["iterations"]["all"]["mean"]}


def before_training(config, init_from, eval_files):
    """Held-out numbers of the warm-started model before its first update."""
    config = config.resolved()
    strategy, kind = distribution.make_strategy(config.strategy)
    trainer = Pretrainer(config, strategy, kind)
    Source.open(init_from).load_into(trainer.model, INIT_FRESH)
    trainer.tau.assign(0.0)  # "auto" is not calibrated yet; the accuracies do not depend on it
    return _numbers(trainer.evaluate(eval_files))


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.warm_start")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.warm_start", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixed_steps", type=int, default=1000, help="updates of the fixed-depth ALBERT")
    parser.add_argument("--steps", type=int, default=300, help="updates of continued pre-training per variant")
    parser.add_argument("--biases", type=float, nargs="+", default=[0.0, -1.0, -2.0, -3.0])
    parser.add_argument("--output_dir", default=os.path.join(REPO, "runs", "warm_start"))
    args = cli.parse_checked(parser, argv, {"fixed_steps": "int>=1", "steps": "int>=1", "biases": "finite",
                                            "output_dir": "path"})
    from albert_act.base.artifacts import check_output_dir

    variants = [("fixed depth 6 (ALBERT)", "none", None)] + [(f"ACT, bias {b:g}", "act", b) for b in args.biases]
    try:  # its own runs are reused (a finished one is not trained again); anything else there is refused
        check_output_dir(args.output_dir, True, {"fixed", "fixed_hf", "warm_start.json", *(
            _run_name(halting, bias) for _, halting, bias in variants)}, "the benchmark", "", reused=True)
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    arguments.run(_run, args, variants, output=args.output_dir,
                  kept="the runs finished in --output_dir are kept, and the same command goes on from them")


def _run_name(halting, bias):
    """The folder of a variant's run in --output_dir: none, act0.0, act-1.0, ..."""
    return f"{halting}{'' if bias is None else bias:}"


def _pretrain(config):
    """run_pretraining, a refusal of a run of other settings said in this benchmark's flags (not pretrain's)."""
    try:
        return run_pretraining(config, progress=False)
    except ValueError as error:
        found = re.search(r"holds a run with another config \((.*?)\); use a new --model_dir", str(error))
        if found is None:
            raise
        raise ValueError(f"{config.model_dir} holds a run of this benchmark made with other settings ({found.group(1)}"
                         "): give another --output_dir, or the --fixed_steps and --steps it was made with") from None


def _run(args, variants):
    from albert_act.base import outputs

    train, evaluation, vocab = prepare_demo_data(os.path.join(REPO, "data_cache", "demo"), progress=False)
    common = dict(train_files=[train], eval_files=[evaluation], vocab=vocab, preset="demo")
    fixed_run = os.path.join(args.output_dir, "fixed")
    print(f"fixed-depth ALBERT: {args.fixed_steps} updates -> {fixed_run}")
    fixed = _pretrain(PretrainConfig(model_dir=fixed_run, halting="none", steps=args.fixed_steps, **common))
    print(f"  held-out MLM {fixed['mlm_accuracy']:.3f}, SOP {fixed['sop_accuracy']:.3f}")
    hf_dir = os.path.join(args.output_dir, "fixed_hf")
    source = Source.open(fixed_run)
    (model, info), tokenizer = source.pretraining_model(), source.tokenizer()
    write_huggingface({v.path: v.numpy() for v in model.weights}, info["backbone"], hf_dir, tokenizer.model_proto)

    rows = []
    for name, halting, bias in variants:
        config = PretrainConfig(model_dir=os.path.join(args.output_dir, _run_name(halting, bias)),
                                halting=halting, steps=args.steps, init_from=hf_dir,
                                backbone_overrides={} if bias is None else {"halting_bias_initializer": bias}, **common)
        before = before_training(config, hf_dir, [evaluation])
        after = _numbers(_pretrain(config))
        rows.append({"variant": name, "before": before, "after": after})
        print(f"  {name}: before MLM {before['mlm_accuracy']:.3f} it {before['iterations']:.2f}; after "
              f"{args.steps}: MLM {after['mlm_accuracy']:.3f} it {after['iterations']:.2f}")

    print(f"\nWarm start from a fixed-depth ALBERT ({args.fixed_steps} updates; held-out MLM {fixed['mlm_accuracy']:.3f}, "
          f"SOP {fixed['sop_accuracy']:.3f}), demo corpus, held-out shard:\n")
    print(f"| model | MLM before | SOP before | iterations before | MLM after {args.steps} | SOP after "
          f"| iterations after |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        b, a = row["before"], row["after"]
        print(f"| {row['variant']} | {b['mlm_accuracy']:.3f} [{b['mlm_interval'][0]:.3f}, {b['mlm_interval'][1]:.3f}] "
              f"| {b['sop_accuracy']:.3f} | {b['iterations']:.2f} "
              f"| {a['mlm_accuracy']:.3f} [{a['mlm_interval'][0]:.3f}, {a['mlm_interval'][1]:.3f}] "
              f"| {a['sop_accuracy']:.3f} | {a['iterations']:.2f} |")
    outputs.write_file(os.path.join(args.output_dir, "warm_start.json"), json.dumps(
        {"fixed": _numbers(fixed), "steps": args.steps, "rows": rows}, indent=2).encode("utf-8"))


if __name__ == "__main__":
    entry.run(main)
