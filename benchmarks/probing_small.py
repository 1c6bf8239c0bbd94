"""The paper's Tables 3-5 the paper's way: fine-tune on a probing task, then count iterations per relation.

    .venv/bin/python -m benchmarks.probing_small [--init saved_models/albert_act_english/1] \\
        [--ud ../shared/data/ud_english_ewt] [--tasks tense subj_number obj_number] [--output_dir runs/probing_small]

1. Probing tasks (SentEval format, `pipelines.probing`) from UD English EWT train + dev:
   Tense (the main verb's tag), SubjNum and ObjNum (the tag of the root's nsubj / obj).
2. For each task, the pre-trained model is fine-tuned twice from the same weights: with
   ACT (its own halting unit, ponder cost --tau) and at fixed depth N_max (halting none).
   Each is scored on the task's test split (te): accuracy with a 95% bootstrap interval,
   beside the majority class.
3. The ACT probing model runs on the held-out UD test file (never in the probing data):
   mean iterations of each word's first piece per dependency relation, with 95% intervals
   (bootstrap over sentences), for the 10 most frequent relations, and each relation's
   difference from the mean of every word. The task-crucial relation (root for Tense,
   nsubj for SubjNum, obj for ObjNum) runs deeper, as the paper claims, when the interval
   of that difference lies above 0.
Prints Markdown and writes results.json (and each analysis's plots) in --output_dir.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/probing_small.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.probing_small")

import argparse
import collections
import json
import os
import sys

from albert_act.base import cli, entry  # noqa: E402

cli.quiet_start()  # TensorFlow and SentencePiece start quietly, as in the CLIs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRUCIAL = {"tense": "root", "subj_number": "nsubj", "obj_number": "obj"}
NAMES = {"tense": "Tense", "subj_number": "SubjNum", "obj_number": "ObjNum"}
MAX_SEQ_LENGTH = 64  # UD sentences average ~17 words; the few longer ones are cut at the end


def test_accuracy(export_dir, rows, batch_size=64, seed=0):
    """Accuracy of a probing export on [(label, sentence)], with its 95% bootstrap interval."""
    import numpy as np
    import tensorflow as tf

    from albert_act.analysis import confidence
    from albert_act.io.exports import load_export

    classify = load_export(export_dir).signatures["serving_default"]
    hits = []
    for start in range(0, len(rows), batch_size):
        chunk = rows[start : start + batch_size]
        names = classify(tf.constant([sentence for _, sentence in chunk]))["label_names"].numpy()
        hits += [float(name.decode() == label) for name, (label, _) in zip(names, chunk)]
    hits = np.array(hits)
    resampled = confidence.resampled_ratios(hits, np.ones_like(hits), confidence.resample_counts(len(hits), seed=seed))
    low, high = confidence.percentile_interval(resampled)
    return float(hits.mean()), [float(low), float(high)]


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.probing_small")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.probing_small", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default=os.path.join(REPO, "saved_models", "albert_act_english", "1"))
    parser.add_argument("--ud", default=os.path.join(REPO, "..", "shared", "data", "ud_english_ewt"),
                        help="folder with en_ewt-ud-{train,dev,test}.conllu")
    parser.add_argument("--tasks", nargs="+", default=list(CRUCIAL), choices=list(CRUCIAL))
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--tau", type=float, default=1e-3, help="ponder-cost weight in ACT fine-tuning (paper's tiny)")
    parser.add_argument("--no_fixed_depth", action="store_true", help="skip the fixed-depth fine-tuning")
    parser.add_argument("--relations", type=int, default=10, help="the most frequent relations shown")
    parser.add_argument("--train_examples", type=int, default=None, help="cut each training set (default: all)")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--output_dir", default=os.path.join(REPO, "runs", "probing_small"))
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"seed": "int:seed", "epochs": "int[1,1000]",
                                            "learning_rate": "learning_rate", "tau": ">=0",
                                            "relations": "int>=1", "train_examples": "int>=1",
                                            **dict.fromkeys(("init", "ud", "output_dir"), "path")})
    if os.path.isfile(args.ud):
        sys.exit(f"error: --ud {args.ud} is a file: give the folder holding en_ewt-ud-train.conllu, -dev and -test "
                 f"(e.g. {os.path.dirname(args.ud) or '.'})")
    files = {split: os.path.join(args.ud, f"en_ewt-ud-{split}.conllu") for split in ("train", "dev", "test")}
    for path in [args.init, *files.values()]:
        if not os.path.exists(path):
            sys.exit(f"error: {path} not found")
    from albert_act.base.artifacts import check_output_dir
    from albert_act.io.source import Source
    from benchmarks import arguments

    try:  # before any fine-tuning
        if Source.open(args.init).info["kind"] != "pretraining":
            raise ValueError(f"--init {args.init} is a fine-tuned model: the probes fine-tune a pre-training model")
        check_output_dir(args.output_dir, args.overwrite, OUTPUT_ENTRIES, "the benchmark",
                         "an earlier (or stopped) probing_small result")
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    return arguments.fine_tunings(args.output_dir, _run, args, files)


OUTPUT_ENTRIES = ("data", "act", "fixed", "dependencies", "results.json")


def _run(args, files):
    from albert_act import analyze
    from albert_act.base import outputs
    from albert_act.train import finetuning_run
    from albert_act.train.finetuning_config import FinetuneConfig
    from pipelines import probing

    data_dir = os.path.join(args.output_dir, "data")
    if not os.path.exists(os.path.join(data_dir, probing.TASK_FILES["tense"])):
        probing.build_probing_tasks(data_dir, [files["train"], files["dev"]])
    results = {}
    for task in args.tasks:
        data = probing.read_senteval(os.path.join(data_dir, probing.TASK_FILES[task]))
        majority = collections.Counter(label for label, _ in data["tr"]).most_common(1)[0][0]
        row = {"test_examples": len(data["te"]), "train_examples": len(data["tr"]),
               "majority": sum(label == majority for label, _ in data["te"]) / len(data["te"])}
        variants = [("act", dict(halting="act", ponder_cost_weight=args.tau))]
        if not args.no_fixed_depth:
            variants.append(("fixed", dict(halting="none")))
        for name, settings in variants:
            output = os.path.join(args.output_dir, name, task)
            config = FinetuneConfig(task=task, data_dir=data_dir, init=args.init, output_dir=output, overwrite=True,
                                    learning_rate=args.learning_rate, epochs=args.epochs, seed=args.seed,
                                    max_seq_length=MAX_SEQ_LENGTH, max_train_examples=args.train_examples, **settings)
            result = finetuning_run.finetune(config, progress=False)
            accuracy, interval = test_accuracy(result["export"], data["te"])
            row[name] = {"test_accuracy": accuracy, "test_interval": interval,
                         "dev_accuracy": result["best"]["accuracy"], "iterations": result["best"]["iterations"]["all"],
                         "export": result["export"]}
            print(f"{task} {name}: test accuracy {accuracy:.3f} [{interval[0]:.3f}, {interval[1]:.3f}] "
                  f"(majority {row['majority']:.3f})", flush=True)
        analysis_dir = os.path.join(args.output_dir, "dependencies", task)
        analyze.main(["dependencies", "--init", row["act"]["export"], "--parsed", files["test"],
                      "--output_dir", analysis_dir, "--overwrite"])
        with open(os.path.join(analysis_dir, "dependencies.json")) as f:
            row["dependencies"] = json.load(f)
        results[task] = row

    table = markdown(results, args.relations)
    print("\n" + table)
    outputs.write_file(os.path.join(args.output_dir, "results.json"),
                       json.dumps({"tasks": results, "markdown": table}, indent=2).encode("utf-8"))
    return results


def markdown(results, top):
    fixed = any("fixed" in row for row in results.values())
    lines = ["| task (train / test) | ACT test accuracy [95% CI] | "
             + ("fixed depth [95% CI] | " if fixed else "") + "majority class | ACT mean N |",
             "|---|---|" + ("---|" if fixed else "") + "---|---|"]
    for task, row in results.items():
        cells = [f"{row['act']['test_accuracy']:.3f} [{row['act']['test_interval'][0]:.3f}, "
                 f"{row['act']['test_interval'][1]:.3f}]"]
        if fixed:
            cells.append(f"{row['fixed']['test_accuracy']:.3f} [{row['fixed']['test_interval'][0]:.3f}, "
                         f"{row['fixed']['test_interval'][1]:.3f}]")
        lines.append(f"| {NAMES[task]} ({row['train_examples']} / {row['test_examples']}) | {' | '.join(cells)} | "
                     f"{row['majority']:.3f} | {row['act']['iterations']:.2f} |")
    for task, row in results.items():
        dependencies = row["dependencies"]
        relations = sorted(dependencies["relations"].items(), key=lambda kv: -kv[1]["words"])[:top]
        low, high = dependencies["mean_first_piece_interval"]
        lines += ["", f"{NAMES[task]}: iterations per relation of the ACT probing model on {dependencies['sentences']} "
                      f"held-out UD test sentences (first piece of each word; every word: "
                      f"{dependencies['mean_first_piece']:.2f} [{low:.2f}, {high:.2f}]), the {top} most frequent:", "",
                  "| relation | words | mean N [95% CI] | minus every word's [95% CI] | deeper |", "|---|---|---|---|---|"]
        for name, r in relations:
            lines.append(f"| {name} | {r['words']} | {r['first_piece_mean']:.2f} [{r['first_piece_interval'][0]:.2f}, "
                         f"{r['first_piece_interval'][1]:.2f}] | {r['difference_from_mean']:+.2f} "
                         f"[{r['difference_interval'][0]:+.2f}, {r['difference_interval'][1]:+.2f}] | "
                         f"{'yes' if r['deeper'] else 'no'} |")
        crucial = dependencies["relations"].get(CRUCIAL[task])
        if crucial is None:
            verdict = "not in the data"
        else:
            (dlow, dhigh), claim = crucial["difference_interval"], "the paper's claim"
            verdict = (f"{crucial['difference_from_mean']:+.2f} [{dlow:+.2f}, {dhigh:+.2f}] against the average word: "
                       + (f"deeper, {claim} holds" if crucial["deeper"] else f"not deeper beyond its interval, {claim} "
                          "does not hold here"))
        lines += ["", f"Task-crucial relation {CRUCIAL[task]}: {verdict}."]
    return "\n".join(lines)


if __name__ == "__main__":
    entry.run(main)
