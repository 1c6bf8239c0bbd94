"""The served depth knob: held-out MLM and time against the iteration cap, for one model.

    .venv/bin/python -m benchmarks.depth_knob --init saved_models/albert_act_english/1 \\
        --records 'data/english_held_out/*.tfrecord' [--caps 1 2 3 4 5] [--output_dir runs/depth_knob]

Every token halts by the cap (`fill_mask_capped` / `encoder_capped` in a SavedModel,
`AlbertActBackbone.capped` in Python): the same weights, shallower. For each cap, the held-out
records are run through the model as it serves (execution "sparse": only running tokens are
computed), and the table gives the mean iterations N of all tokens, MLM accuracy with its 95%
interval (bootstrap over sequences) and its loss, and the time per sequence (the median of
--repeats passes, after one pass that traces). The last row, no cap, is the model as trained.
Writes depth_knob.md, .json and .png (accuracy and time against mean N) to --output_dir (new, empty,
or an earlier result of this benchmark, replaced with --overwrite).
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/depth_knob.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.depth_knob")

import argparse
import json
import os
import time

from albert_act.base import checks, cli, entry
from benchmarks import arguments

cli.quiet_start()

import numpy as np  # noqa: E402


OUTPUT_FILES = ("depth_knob.md", "depth_knob.json", "depth_knob.png")


def measure(init, records, caps, batch_size=64, max_batches=None, repeats=3):
    """[{cap, mean_n, mlm_accuracy, mlm_interval, mlm_loss, ms_per_sequence}], the last row uncapped."""
    import tensorflow as tf

    from albert_act.analysis import confidence
    from albert_act.model.pretraining_model import AlbertActPretrainingModel
    from albert_act.io.source import Source
    from albert_act.serve.savedmodel import serving_backbone
    from pipelines.pretraining_dataset import guarded, make_pretraining_dataset

    model, _ = Source.open(init).pretraining_model()
    serving = AlbertActPretrainingModel(serving_backbone(model.backbone, "sparse"))
    serving.set_weights(model.get_weights())
    n_max = serving.backbone.max_iterations
    dataset = make_pretraining_dataset(records, batch_size, training=False,
                                       max_length=serving.backbone.max_sequence_length)
    batches = [batch for i, batch in enumerate(guarded(dataset, records)) if max_batches is None or i < max_batches]

    @tf.function
    def step(inputs, labels, cap):
        outputs = serving.capped(inputs, cap)
        weights = tf.cast(labels["masked_lm_weights"], tf.float32)
        log_p = tf.nn.log_softmax(outputs["mlm_logits"], axis=-1)
        targets = tf.cast(labels["masked_lm_ids"], tf.int32)
        loss = -tf.gather(log_p, targets, batch_dims=2) * weights
        hit = tf.cast(tf.equal(tf.argmax(log_p, -1, output_type=tf.int32), targets), tf.float32) * weights
        real = tf.cast(inputs["padding_mask"], tf.float32)
        return (tf.reduce_sum(hit, 1), tf.reduce_sum(weights, 1), tf.reduce_sum(loss),
                tf.reduce_sum(outputs["iterations"] * real), tf.reduce_sum(real))

    rows = []
    for cap in [*caps, n_max]:
        def run_all():
            return [step(inputs, labels, tf.constant(cap, tf.int32)) for inputs, labels in batches]
        run_all()  # traced and warmed
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            results = run_all()
            times.append(time.perf_counter() - start)
        hits = np.concatenate([r[0].numpy() for r in results])
        weights = np.concatenate([r[1].numpy() for r in results])
        counts = confidence.resample_counts(len(hits))
        low, high = confidence.percentile_interval(confidence.resampled_ratios(hits, weights, counts))
        rows.append({"cap": None if cap == n_max and len(rows) == len(caps) else int(cap),
                     "mean_n": float(sum(r[3] for r in results) / sum(r[4] for r in results)),
                     "mlm_accuracy": float(hits.sum() / weights.sum()), "mlm_interval": [float(low), float(high)],
                     "mlm_loss": float(sum(r[2] for r in results) / weights.sum()),
                     "ms_per_sequence": 1000 * float(np.median(times)) / len(hits)})
    return rows


def markdown(rows):
    lines = ["| cap | mean N | held-out MLM [95% CI] | MLM loss | ms / sequence | time vs no cap |", "|---|---|---|---|---|---|"]
    full = rows[-1]["ms_per_sequence"]
    for row in rows:
        low, high = row["mlm_interval"]
        lines.append(f"| {row['cap'] or 'none (as trained)'} | {row['mean_n']:.2f} | {row['mlm_accuracy']:.3f} "
                     f"[{low:.3f}, {high:.3f}] | {row['mlm_loss']:.3f} | {row['ms_per_sequence']:.2f} | "
                     f"{row['ms_per_sequence'] / full:.2f}x |")
    return "\n".join(lines)


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = [r["mean_n"] for r in rows]
    figure, left = plt.subplots(figsize=(6, 4), dpi=120)
    accuracy = [r["mlm_accuracy"] for r in rows]
    errors = np.array([[a - r["mlm_interval"][0], r["mlm_interval"][1] - a] for a, r in zip(accuracy, rows)]).T
    left.errorbar(n, accuracy, yerr=errors, marker="o", color="tab:blue", capsize=3, label="held-out MLM accuracy")
    left.set_xlabel("mean iterations N per token")
    left.set_ylabel("held-out MLM accuracy (95% CI)", color="tab:blue")
    right = left.twinx()
    right.plot(n, [r["ms_per_sequence"] for r in rows], marker="s", color="tab:red", label="time")
    right.set_ylabel("ms per sequence", color="tab:red")
    for r in rows:
        left.annotate(f"cap {r['cap']}" if r["cap"] else "no cap", (r["mean_n"], r["mlm_accuracy"]),
                      textcoords="offset points", xytext=(4, -12), fontsize=8)
    left.set_title("The served depth knob: accuracy and time against depth")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.depth_knob")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.depth_knob", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", required=True, help="a pre-training run dir or export")
    parser.add_argument("--records", required=True, help="held-out pre-training TFRecords (a glob)")
    parser.add_argument("--caps", type=int, nargs="+", default=None, help="default: 1 .. N_max - 1")
    parser.add_argument("--max_batches", type=int, default=None, help="of 64 sequences (default: all)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes of each setting")
    parser.add_argument("--output_dir", default=os.path.join("runs", "depth_knob"))
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"max_batches": "int>=1", "repeats": "int[1,100]",
                                            **dict.fromkeys(("init", "records", "output_dir"), "path")})
    import glob

    records = sorted(glob.glob(args.records))
    if os.path.isdir(args.records):
        raise SystemExit(f"error: --records {args.records} is a folder: give its held-out shards (a glob such as "
                         f"'{os.path.join(args.records, 'eval-*.tfrecord')}')")
    if not records:
        raise SystemExit(f"error: --records {args.records} matches no file")
    from albert_act.analysis.report import check_not_trained_on, check_output_dir
    from albert_act.io.source import Source
    from pipelines.pretraining_dataset import check_masked
    from pipelines.record_vocabulary import check_records_vocabulary

    try:  # the checks analyze and served_depth make: held-out records of the model's own vocabulary
        check_output_dir(args.output_dir, args.overwrite, OUTPUT_FILES, "the benchmark", "an earlier depth_knob result")
        source = Source.open(args.init)
        n_max = source.info["backbone"]["max_iterations"]
        bad = [cap for cap in args.caps or () if not 1 <= cap <= n_max]
        if bad:
            raise ValueError(f"--caps must be iterations in [1, N_max={n_max}], got {bad[0]}")
        if n_max in (args.caps or ()):  # capped at N_max is the model as trained: the same row twice
            raise ValueError(f"--caps {n_max} is N_max, the model as trained, which the table's last row always "
                             f"measures: give caps below {n_max}")
        checks.rule_check("--caps", args.caps, "int>=1")  # each cap once: twice is the same row again
        check_not_trained_on(source, records)
        for path in records:
            check_records_vocabulary(path, source.tokenizer().model_proto, f"{args.init}'s vocabulary")
        check_masked(records, "the held-out MLM accuracy of each cap would be of nothing")
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    if args.caps is None:
        args.caps = list(range(1, n_max))
    arguments.run(_measure_and_write, args, records, output=args.output_dir,
                  stopped=arguments.said_when_stopped(args.output_dir, "depth_knob.json"))


def _measure_and_write(args, records):
    from albert_act.base import outputs
    from benchmarks.depth_probes import machine

    # what the records' reader finds (another length, a corrupt record, a token corpus given) is a ValueError
    rows = measure(args.init, records, args.caps, max_batches=args.max_batches, repeats=args.repeats)
    table = markdown(rows)
    print(table + f"\n\nMachine: {machine()}; {args.init} on {args.records}.")
    arguments.write_whole(args.output_dir, {  # the three files, or the earlier result: never a mix
        "depth_knob.md": lambda path: outputs.write_file(path, (table + "\n").encode("utf-8")),
        "depth_knob.json": lambda path: outputs.write_file(path, json.dumps(rows, indent=2).encode("utf-8")),
        "depth_knob.png": lambda path: plot(rows, path)})


if __name__ == "__main__":
    entry.run(main)
