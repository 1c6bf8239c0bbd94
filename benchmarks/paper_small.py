"""A small reproduction of the paper: ACT against fixed-depth ALBERT and BERT, same data, same budget.

    .venv/bin/python -m benchmarks.paper_small [--steps 2000] [--glue ../shared/data/glue] \\
        [--tasks rte sst-2] [--train_examples 8000] [--output_dir runs/paper_small]

Three models are pre-trained with the `demo` preset on the embedded corpus (the quick
start's data), each for the same updates, batch and seed:
  ACT     learned per-token depth (halting "act"), tau and its warm-up from the preset;
  ALBERT  fixed depth N_max with the shared layer (halting "none");
  BERT    fixed depth N_max with N_max distinct layers (halting "none", unshared).
For each: held-out MLM and SOP accuracy with 95% bootstrap intervals beside their
baselines, mean iterations N and expected iterations E, wall time; then Table 1 (token
types, intervals) of the ACT model; then each model fine-tuned on every --tasks (from
../shared/data/glue; large training sets cut to --train_examples), dev metric beside the
majority-class baseline. Prints Markdown and writes results.json in --output_dir.

Slow (about 20 minutes on 2 CPU cores); not part of the test run.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/paper_small.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.paper_small")

import argparse
import collections
import json
import os
import sys
import time

from albert_act.base import entry, text_files

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {"rte": "RTE", "sst-2": "SST-2", "cola": "CoLA", "mrpc": "MRPC"}
MODELS = (("ACT", dict(halting="act", share_weights=True)),
          ("ALBERT", dict(halting="none", share_weights=True)),
          ("BERT", dict(halting="none", share_weights=False)))


def majority_baseline(task):
    """Dev metric of always predicting the training set's most frequent label (0 for Matthews)."""
    import numpy as np

    from albert_act.train import glue_metrics

    label = collections.Counter(e.label for e in task.train).most_common(1)[0][0]
    targets = np.array([task.labels.index(e.label) for e in task.dev])
    return glue_metrics.task_metrics(task.metric_task, targets, np.full_like(targets, task.labels.index(label)))


def pretrain_all(args, train, evaluation, vocab):
    from albert_act.train.pretraining_run import PretrainConfig, run_pretraining

    results = {}
    for name, settings in MODELS:
        start = time.perf_counter()
        config = PretrainConfig(train_files=[train], eval_files=[evaluation], vocab=vocab, steps=args.steps,
                                model_dir=os.path.join(args.output_dir, name.lower()), seed=args.seed, **settings)
        result = run_pretraining(config, progress=False)
        results[name] = {k: result[k] for k in ("mlm_accuracy", "mlm_accuracy_interval", "mlm_unigram_baseline",
                                                "sop_accuracy", "sop_accuracy_interval", "sop_majority_baseline",
                                                "mlm_loss", "sop_loss", "iterations", "table")}
        results[name].update(seconds=time.perf_counter() - start, model_dir=config.model_dir)
        print(f"{name}: MLM {result['mlm_accuracy']:.3f}, SOP {result['sop_accuracy']:.3f}, "
              f"mean N {result['iterations']['all']['mean']:.2f} ({results[name]['seconds']:.0f} s)", flush=True)
    return results


def finetune_all(args, pretrained):
    from albert_act.train import finetuning_run
    from albert_act.train.finetuning_config import FinetuneConfig
    from albert_act.train.finetuning_data import load_task

    scores = {}
    for task_name in args.tasks:
        data_dir = os.path.join(args.glue, FOLDERS[task_name])
        task = load_task(task_name, data_dir)
        baseline = majority_baseline(task) if task.labels else None
        for name, info in pretrained.items():
            config = FinetuneConfig(task=task_name, data_dir=data_dir, init=info["model_dir"], overwrite=True,
                                    output_dir=os.path.join(args.output_dir, "finetune", name.lower(), task_name),
                                    learning_rate=args.finetune_learning_rate, epochs=args.epochs, seed=args.seed,
                                    max_train_examples=args.train_examples)
            result = finetuning_run.finetune(config, progress=False)
            metric = result["metric"]
            scores.setdefault(task_name, {"metric": metric, "baseline": baseline and baseline[metric]})[name] = {
                "score": result["best"][metric], "iterations": result["best"]["iterations"]["all"],
                "train_examples": result["train_examples"], "dev_examples": result["dev_examples"]}
            print(f"{task_name} {name}: {metric} {result['best'][metric]:.3f}", flush=True)
    return scores


def markdown(pretrained, scores, steps):
    lines = [f"Pre-training: {steps} updates each, the demo preset's batch and schedule, the same data and seed.", "",
             "| model | MLM accuracy [95% CI] | SOP accuracy [95% CI] | mean N | mean E | minutes |",
             "|---|---|---|---|---|---|"]
    for name, r in pretrained.items():
        (ml, mh), (sl, sh) = r["mlm_accuracy_interval"], r["sop_accuracy_interval"]
        every = r["iterations"]["all"]
        lines.append(f"| {name} | {r['mlm_accuracy']:.3f} [{ml:.3f}, {mh:.3f}] | {r['sop_accuracy']:.3f} "
                     f"[{sl:.3f}, {sh:.3f}] | {every['mean']:.2f} | {every['expected_mean']:.2f} | {r['seconds'] / 60:.1f} |")
    first = next(iter(pretrained.values()))
    lines += [f"| baseline | {first['mlm_unigram_baseline']:.3f} (most frequent token) | "
              f"{first['sop_majority_baseline']:.3f} (majority) | | | |", "",
              "Table 1 of the ACT model (held-out sequences):", "", pretrained["ACT"]["table"]]
    if scores:
        names = list(pretrained)
        lines += ["", "Fine-tuning (dev; best of the epochs):", "",
                  "| task | metric | " + " | ".join(names) + " | majority class |", "|---" * (len(names) + 3) + "|"]
        for task, row in scores.items():
            baseline = "-" if row["baseline"] is None else f"{row['baseline']:.3f}"
            cells = " | ".join(f"{row[n]['score']:.3f}" for n in names)
            examples = row[names[0]]
            lines.append(f"| {task} ({examples['train_examples']} train, {examples['dev_examples']} dev) | "
                         f"{row['metric']} | {cells} | {baseline} |")
    return "\n".join(lines)


def main(argv=None):
    from albert_act.base import cli
    from benchmarks import arguments

    cli.quiet_start(argv)  # first: Ctrl-C stops with one line from here on; TensorFlow and SentencePiece are quiet
    cli.tensorflow_only("python -m benchmarks.paper_small")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paper_small", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=2000, help="pre-training updates per model")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--glue", default=os.path.join(REPO, "..", "shared", "data", "glue"),
                        help="glue_data folder (with RTE/, SST-2/, ...); '' skips fine-tuning")
    parser.add_argument("--tasks", nargs="+", default=["rte", "sst-2"], choices=list(FOLDERS))
    parser.add_argument("--train_examples", type=int, default=8000, help="cut larger training sets to this many")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--finetune_learning_rate", type=float, default=1e-4,
                        help="AdamW peak (1e-4: the demo models are small and briefly trained)")
    parser.add_argument("--output_dir", default=os.path.join(REPO, "runs", "paper_small"))

    args = cli.parse_checked(parser, argv, {"seed": "int:seed", "steps": "int>=1", "train_examples": "int>=1",
                                            "epochs": "int[1,1000]",
                                            "finetune_learning_rate": "learning_rate", "output_dir": "path"})
    if args.glue and not os.path.isdir(args.glue):
        sys.exit(f"error: no GLUE data at {args.glue} (pass --glue DIR, or --glue '' to skip fine-tuning)")
    missing = [FOLDERS[task] for task in args.tasks
               if args.glue and not os.path.isdir(os.path.join(args.glue, FOLDERS[task]))]
    if missing:
        sys.exit(f"error: --glue {args.glue} holds no {', '.join(missing)} folder (the glue_data folder has one per "
                 "task)")
    from albert_act.base.artifacts import check_output_dir

    try:  # its own runs are reused (a finished one is not trained again); anything else there is refused
        check_output_dir(args.output_dir, False, OUTPUT_ENTRIES, "the benchmark", "", reused=True)
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    arguments.run(_run, args, output=args.output_dir,
                  kept="the runs finished in --output_dir are kept, and the same command goes on from them")


OUTPUT_ENTRIES = {"results.json", "finetune", *(name.lower() for name, _ in MODELS)}


def _run(args):
    from albert_act.base import outputs
    from albert_act.train.demo_data import prepare_demo_data

    train, evaluation, vocab = prepare_demo_data(os.path.join(REPO, "data_cache", "demo"))
    pretrained = pretrain_all(args, train, evaluation, vocab)
    scores = finetune_all(args, pretrained) if args.glue else {}
    table = markdown(pretrained, scores, args.steps)
    print("\n" + table)
    text_files.makedirs(args.output_dir)
    outputs.write_file(os.path.join(args.output_dir, "results.json"), json.dumps(
        {"pretraining": pretrained, "finetuning": scores, "markdown": table}, indent=2).encode("utf-8"))

if __name__ == "__main__":
    entry.run(main)
