"""What feeding every replica the whole global batch costs: bytes moved per optimizer update.

The pre-training loop hands one plain (checkpointable) iterator's global batch to `strategy.run`;
every replica receives all of it and keeps its own rows (`Pretrainer.replica_step`). Per-replica
input (`distribute_datasets_from_function`) would send each replica only its rows. This prints the
bytes per update both ways, from a real parsed batch of the record format (int32 ids, float32
weights), for a v2-8 (8 replicas) at the paper's 4096 x 128 with 20 predictions per sequence.

    python -m benchmarks.replica_input [--batch 4096] [--length 128] [--predictions 20] [--replicas 8]

The share of a TPU step this takes cannot be measured without a TPU; see the README.
"""

import argparse

import numpy as np
import tensorflow as tf

from pipelines import tf_example
from pipelines.pretraining_dataset import parse_examples


def batch_bytes(batch, length, predictions):
    """Bytes of one parsed (inputs, labels) batch of `batch` sequences."""
    record = tf_example.serialize_example({
        "input_ids": tf_example.int64_feature([5] * length), "input_mask": tf_example.int64_feature([1] * length),
        "segment_ids": tf_example.int64_feature([0] * length),
        "masked_lm_positions": tf_example.int64_feature([1] * predictions),
        "masked_lm_ids": tf_example.int64_feature([7] * predictions),
        "masked_lm_weights": tf_example.float_feature([1.0] * predictions),
        "next_sentence_labels": tf_example.int64_feature([0])})
    inputs, labels = parse_examples(tf.constant([record] * batch), length, predictions)
    return sum(int(np.prod(t.shape)) * t.dtype.size for t in tf.nest.flatten((inputs, labels)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--predictions", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=8)
    args = parser.parse_args(argv)
    per_batch = batch_bytes(args.batch, args.length, args.predictions)
    whole, rows = per_batch * args.replicas, per_batch
    print(f"global batch {args.batch} x {args.length}, {args.predictions} predictions, {args.replicas} replicas\n")
    print("| input | bytes to the replicas per update | per sequence | ratio |")
    print("|---|---|---|---|")
    print(f"| every replica gets the global batch (today) | {whole / 2**20:.1f} MiB | "
          f"{whole / args.batch:.0f} B | {whole / rows:.1f} |")
    print(f"| each replica gets its rows (per-replica input) | {rows / 2**20:.1f} MiB | "
          f"{rows / args.batch:.0f} B | 1.0 |")


if __name__ == "__main__":
    main()
