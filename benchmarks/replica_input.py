"""What pre-training's input costs per optimizer update: bytes sent to the replicas, and records
parsed per worker.

The global batch is read as one input stream per worker
(`pipelines.pretraining_dataset.serialized_batches`): worker i reads only stream i, its share of
the files, and parses it; each replica is sent only its rows
(`albert_act.distribution.distribute_rows`). The tables set this beside two simpler inputs: every
worker reads and parses the whole global batch and every replica receives all of it; or every
worker reads every record and parses only its share.

Two tables:
1. bytes sent to the replicas per update, for a v2-8 (8 replicas) at the paper's 4096 x 128 with
   20 predictions per sequence, computed from a real parsed batch of the record format (int32
   ids, float32 weights);
2. measured here: records read and parsed, bytes read and parsed, and the time of one worker's
   input (read, shuffle, parse) per update, for 1 and 2 workers, on four TFRecord files of
   random records written to a temporary folder.

    python -m benchmarks.replica_input [--batch 4096] [--length 128] [--predictions 20] [--replicas 8]
        [--updates 20]

The share of a TPU step this takes cannot be measured without a TPU; see the README.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/replica_input.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.replica_input")

import argparse
import os
import tempfile
import time

from albert_act.base import cli, entry
from benchmarks import arguments

cli.quiet_start()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from pipelines import tf_example  # noqa: E402
from pipelines.pretraining_dataset import parse_examples, serialized_batches  # noqa: E402


def _record(rng, length, predictions):
    return tf_example.serialize_example({
        "input_ids": tf_example.int64_feature(rng.integers(5, 30000, length).tolist()),
        "input_mask": tf_example.int64_feature([1] * length),
        "segment_ids": tf_example.int64_feature([0] * (length // 2) + [1] * (length - length // 2)),
        "masked_lm_positions": tf_example.int64_feature(sorted(rng.choice(length, predictions, replace=False).tolist())),
        "masked_lm_ids": tf_example.int64_feature(rng.integers(5, 30000, predictions).tolist()),
        "masked_lm_weights": tf_example.float_feature([1.0] * predictions),
        "next_sentence_labels": tf_example.int64_feature([int(rng.integers(2))])})


def parsed_bytes(parsed):
    return sum(int(np.prod(t.shape)) * t.dtype.size for t in tf.nest.flatten(parsed))


def replica_table(args, record):
    per_batch = parsed_bytes(parse_examples(tf.constant([record] * args.batch), args.length, args.predictions))
    whole, rows = per_batch * args.replicas, per_batch
    print(f"global batch {args.batch} x {args.length}, {args.predictions} predictions, {args.replicas} replicas\n")
    print("| input | bytes to the replicas per update | per sequence | ratio |")
    print("|---|---|---|---|")
    print(f"| every replica gets the global batch | {whole / 2**20:.1f} MiB | "
          f"{whole / args.batch:.0f} B | {whole / rows:.1f} |")
    print(f"| each replica gets its rows (`distribute_rows`) | {rows / 2**20:.1f} MiB | "
          f"{rows / args.batch:.0f} B | 1.0 |")


def _time_input(batches, parse, updates):
    """(seconds per update, the last serialized batch, its parsed rows) of `updates` updates of
    one worker's input: the next batch read and shuffled (prefetched in the background, as in
    training), then parsed."""
    serialized = next(batches)
    parsed = parse(serialized)  # traced once
    start = time.perf_counter()
    for _ in range(updates):
        serialized = next(batches)
        parsed = parse(serialized)
        tf.nest.flatten(parsed)[0].numpy()
    return (time.perf_counter() - start) / updates, serialized, parsed


def worker_table(args, folder):
    rng = np.random.default_rng(0)
    files = [os.path.join(folder, f"records-{k}.tfrecord") for k in range(4)]
    for path in files:
        with tf.io.TFRecordWriter(path) as writer:
            for _ in range(args.batch // 2):
                writer.write(_record(rng, args.length, args.predictions))
    print(f"\nmeasured per update on this machine, global batch {args.batch} x {args.length}, {len(files)} files, "
          f"mean of {args.updates} updates\n")
    print("| workers | input of one worker | records read | serialized bytes read | records parsed | parsed bytes "
          "| time per update (read + parse) | ratio to 1 worker |")
    print("|---|---|---|---|---|---|---|---|")
    half = args.batch // 2
    runs = [(1, "the whole stream", 1, lambda s: parse_examples(s, args.length, args.predictions)),
            (2, "every record, parses its half", 1,
             lambda s: parse_examples(s[:half], args.length, args.predictions)),
            (2, "its own stream", 2, lambda s: parse_examples(s, args.length, args.predictions))]
    baseline = None
    for workers, what, streams, parse in runs:
        batches = iter(serialized_batches(files, args.batch, seed=0, streams=streams, stream=0))
        seconds, serialized, parsed = _time_input(batches, tf.function(parse), args.updates)
        read = int(tf.reduce_sum(tf.strings.length(serialized)))
        baseline = baseline or seconds
        print(f"| {workers} | {what} | {int(serialized.shape[0])} | {read / 2**20:.2f} MiB | "
              f"{int(tf.nest.flatten(parsed)[0].shape[0])} | {parsed_bytes(parsed) / 2**20:.2f} MiB | "
              f"{seconds * 1e3:.1f} ms | {seconds / baseline:.2f} |")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replica_input", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=8)
    parser.add_argument("--updates", type=int, default=20)
    args = cli.parse_checked(parser, argv, {"batch": "int[1,1048576]", "length": "int[2,8192]",
                                            "predictions": "int>=1", "replicas": "int[1,4096]", "updates": "int[1,100000]"})
    if args.predictions > args.length:
        raise SystemExit(f"error: --predictions {args.predictions} must be at most --length {args.length}")
    if args.batch % args.replicas:
        raise SystemExit(f"error: --batch {args.batch} must be a multiple of --replicas {args.replicas}")
    arguments.run(_tables, args)


def _tables(args):
    """The replica table, then the worker table (its records in a temporary folder)."""
    replica_table(args, _record(np.random.default_rng(0), args.length, args.predictions))
    with tempfile.TemporaryDirectory() as folder:
        worker_table(args, folder)


if __name__ == "__main__":
    entry.run(main)
