"""GLUE dev for pre-trained models, beside the majority class and a bag-of-words linear baseline.

    .venv/bin/python -m benchmarks.glue_small [--models ACT=saved_models/albert_act_english/1 ...] \\
        [--tasks cola sst-2 mrpc sts-b rte] [--glue ../shared/data/glue] [--output_dir runs/glue_small]

Per task, in one run on the same training data:
- majority class: the training set's most frequent label predicted for every dev example
  (the mean training score for STS-B);
- bag of words: TF-IDF of word unigrams and bigrams (Keras TextVectorization, 20,000 terms,
  fitted on the training text) into one linear layer, softmax (or a linear output for STS-B),
  Adam, the best dev epoch of --bow_epochs; for pairs, the features of A, of B and of the
  terms they share, side by side;
- each --models NAME=INIT (a pre-training run, an export or any `--init` that
  `albert_act.finetune` takes) fine-tuned by `albert_act.train.finetuning_run.finetune`, the best
  dev epoch kept, its raw-text export in <output_dir>/<name>/<task>/export/1.
Prints a Markdown table (and results.json in --output_dir). A partial GLUE submission from
one model's fine-tunings: `python -m albert_act.glue_submission --models <output_dir>/<name>
--data_dir ../shared/data/glue --output submission.zip --allow_partial`.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/glue_small.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.glue_small")

import argparse
import collections
import json
import os
import time

from albert_act.base import cli, entry, text_files  # noqa: E402

cli.quiet_start()  # TensorFlow and SentencePiece start quietly, as in the CLIs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {"cola": "CoLA", "sst-2": "SST-2", "mrpc": "MRPC", "sts-b": "STS-B", "rte": "RTE"}
# Single sentences are short: 64 pieces hold all but a few, at half the cost of 128.
MAX_SEQ_LENGTH = {"cola": 64, "sst-2": 64, "mrpc": 128, "sts-b": 128, "rte": 128}


def majority_baseline(task):
    """Dev metrics of predicting the training set's most frequent label (mean score for regression)."""
    import numpy as np

    from albert_act.train import glue_metrics

    if not task.labels:
        targets = np.array([float(e.label) for e in task.dev])
        mean = np.mean([float(e.label) for e in task.train])
        # A constant has no correlation: Pearson/Spearman are undefined, reported as 0.
        return {name: 0.0 for name in glue_metrics.TASK_METRICS[task.metric_task]} | {"constant": float(mean)}
    label = collections.Counter(e.label for e in task.train).most_common(1)[0][0]
    targets = np.array([task.labels.index(e.label) for e in task.dev])
    return glue_metrics.task_metrics(task.metric_task, targets, np.full_like(targets, task.labels.index(label)))


def bag_of_words(task, epochs=8, seed=12345):
    """Dev metrics of the best epoch of a linear model on TF-IDF unigrams and bigrams."""
    import keras
    import numpy as np
    import tensorflow as tf

    from albert_act.train import glue_metrics

    keras.utils.set_random_seed(seed)
    pair = task.train[0].text_b is not None
    vectorizer = keras.layers.TextVectorization(max_tokens=20000, ngrams=2, output_mode="tf_idf")
    vectorizer.adapt([e.text_a for e in task.train] + ([e.text_b for e in task.train] if pair else []))

    def features(a, b):
        a = vectorizer(a)
        if not pair:
            return a
        b = vectorizer(b)
        return tf.concat([a, b, tf.minimum(a, b)], axis=1)

    def dataset(examples, shuffle):
        regression = not task.labels
        targets = (np.array([float(e.label) for e in examples], "float32") if regression else
                   np.array([task.labels.index(e.label) for e in examples], "int32"))
        data = tf.data.Dataset.from_tensor_slices(
            ([e.text_a for e in examples], [e.text_b or "" for e in examples], targets))
        if shuffle:
            data = data.shuffle(len(examples), seed=seed)
        # Vectorized batch by batch: the dense TF-IDF rows of a whole task would not fit in memory.
        return data.batch(32).map(lambda a, b, y: (features(a, b), y)), targets

    regression = not task.labels
    train, _ = dataset(task.train, shuffle=True)
    dev, dev_y = dataset(task.dev, shuffle=False)
    width = vectorizer.vocabulary_size() * (3 if pair else 1)
    model = keras.Sequential([keras.Input((width,)), keras.layers.Dense(1 if regression else len(task.labels))])
    model.compile(optimizer=keras.optimizers.Adam(1e-3),
                  loss="mse" if regression else keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    best = None
    for _ in range(epochs):
        model.fit(train, epochs=1, verbose=0, shuffle=False)  # shuffled by the dataset
        outputs = model.predict(dev, verbose=0)
        predictions = outputs[:, 0] if regression else outputs.argmax(-1)
        scores = glue_metrics.task_metrics(task.metric_task, dev_y, predictions)
        if best is None or next(iter(scores.values())) > next(iter(best.values())):
            best = scores
    return best


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.glue_small")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.glue_small", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="*",
                        default=["ACT=" + os.path.join(REPO, "saved_models", "albert_act_english", "1")],
                        help="NAME=INIT pairs (none: the baselines alone)")
    parser.add_argument("--tasks", nargs="+", default=list(FOLDERS), choices=list(FOLDERS))
    parser.add_argument("--glue", default=os.path.join(REPO, "..", "shared", "data", "glue"),
                        help="glue_data folder (with CoLA/, SST-2/, ...)")
    parser.add_argument("--train_examples", type=int, default=None,
                        help="cut every training set to its first N examples (default: all)")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=1e-3,
                        help="AdamW peak (1e-3: the English model's SST-2 0.812 against 0.751 at 1e-4; RTE "
                             "0.563 against 0.545; CoLA and MRPC stay at the majority class at 1e-4, 3e-4 "
                             "and 1e-3 alike, STS-B 0.10 / 0.06 / 0.11)")
    parser.add_argument("--bow_epochs", type=int, default=8)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--output_dir", default=os.path.join(REPO, "runs", "glue_small"))
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"seed": "int:seed", "train_examples": "int>=1", "epochs": "int[1,1000]",
                                            "learning_rate": "learning_rate", "bow_epochs": "int[1,1000]",
                                            **dict.fromkeys(("glue", "output_dir"), "path")})
    from albert_act.base.artifacts import check_output_dir
    from albert_act.io.source import Source
    from benchmarks import arguments

    try:  # before any fine-tuning: the models, the tasks' folders and the output dir
        models = arguments.named(args.models, "a model (a pre-training run dir or export)",
                                 "ACT=saved_models/albert_act_english/1")
        longest = {}
        for name, init in models.items():
            if not os.path.exists(init):
                raise ValueError(f"--models {name}={init}: {init} not found")
            longest[name] = Source.open(init).info["backbone"]["max_sequence_length"]
        if not os.path.isdir(args.glue):
            raise ValueError(f"no GLUE data at {args.glue} (pass --glue DIR)")
        missing = [FOLDERS[task] for task in args.tasks if not os.path.isdir(os.path.join(args.glue, FOLDERS[task]))]
        if missing:
            raise ValueError(f"--glue {args.glue} holds no {', '.join(missing)} folder (the glue_data folder has one "
                             "per task)")
        check_output_dir(args.output_dir, args.overwrite, {"results.json", *models}, "the benchmark",
                         "an earlier (or stopped) glue_small result")
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    return arguments.fine_tunings(args.output_dir, _run, args, models, longest)


def _run(args, models, longest):
    from albert_act.base import outputs
    from albert_act.train import finetuning_run
    from albert_act.train.finetuning_config import FinetuneConfig
    from albert_act.train.finetuning_data import load_task

    rows = {}
    for task_name in args.tasks:
        data_dir = os.path.join(args.glue, FOLDERS[task_name])
        task = load_task(task_name, data_dir)
        finetuning_run.print_skipped(task)  # the rows the baselines and the models do without
        if args.train_examples:
            task.train = task.train[: args.train_examples]
        start = time.perf_counter()
        row = {"train_examples": len(task.train), "dev_examples": len(task.dev),
               "majority": majority_baseline(task), "bag_of_words": bag_of_words(task, args.bow_epochs, args.seed)}
        print(f"{task_name}: majority {row['majority']}, bag of words {row['bag_of_words']} "
              f"({time.perf_counter() - start:.0f} s)", flush=True)
        for name, init in models.items():
            start = time.perf_counter()
            config = FinetuneConfig(task=task_name, data_dir=data_dir, init=init, overwrite=True,
                                    output_dir=os.path.join(args.output_dir, name, task_name),
                                    learning_rate=args.learning_rate, epochs=args.epochs, seed=args.seed,
                                    max_seq_length=min(MAX_SEQ_LENGTH[task_name], longest[name]),
                                    max_train_examples=args.train_examples)
            result = finetuning_run.finetune(config, progress=False)
            row[name] = {**{k: v for k, v in result["best"].items() if k != "iterations"},
                         "iterations": result["best"]["iterations"]["all"], "seconds": time.perf_counter() - start}
            row["metric"] = result["metric"]
            print(f"{task_name} {name}: {row['metric']} {row[name][row['metric']]:.3f} "
                  f"({row[name]['seconds']:.0f} s)", flush=True)
        row.setdefault("metric", next(iter(row["majority"])))
        rows[task_name] = row

    table = markdown(rows, list(models))
    print("\n" + table)
    text_files.makedirs(args.output_dir)
    outputs.write_file(os.path.join(args.output_dir, "results.json"),
                       json.dumps({"tasks": rows, "models": models, "markdown": table}, indent=2).encode("utf-8"))
    return rows


def markdown(rows, names):
    lines = ["| task (train / dev) | metric | " + " | ".join(names + ["bag of words", "majority class"]) + " |",
             "|---" * (len(names) + 4) + "|"]
    for task, row in rows.items():
        metric = row["metric"]
        cells = [f"{row[n][metric]:.3f} (N {row[n]['iterations']:.2f})" for n in names]
        cells += [f"{row['bag_of_words'][metric]:.3f}", f"{row['majority'][metric]:.3f}"]
        lines.append(f"| {task} ({row['train_examples']} / {row['dev_examples']}) | {metric} | {' | '.join(cells)} |")
    return "\n".join(lines)


if __name__ == "__main__":
    entry.run(main)
