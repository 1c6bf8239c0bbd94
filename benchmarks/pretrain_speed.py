"""Training-step throughput: examples/s and tokens/s for demo and tiny sizes, ACT vs halting "none".

    .venv/bin/python -m benchmarks.pretrain_speed [--runs 5] [--presets demo tiny]

Each row times the real training step of `albert_act.train.pretraining_run` (forward, loss,
backward, gradient accumulation, LAMB update) on random data shaped like
pre-training batches (sequence 128, 20% masked), after one warm-up update;
medians over --runs updates. tokens/s counts real (non-padding) tokens. The ACT
rows start from the initial halting unit (p ~ 0.5: tokens halt after 2-3
iterations); "none" runs every token N_max iterations. Ratios are against the
"none" row of the same preset, measured in the same run.
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_act.train.pretraining_run import PretrainConfig, Pretrainer  # noqa: E402
from albert_act.model.presets import get_preset  # noqa: E402


def random_batch(batch, length, predictions, vocabulary, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(length // 2, length + 1, batch)
    real = np.arange(length)[None] < lengths[:, None]
    tokens = np.where(real, rng.integers(5, vocabulary, (batch, length)), 0)
    tokens[:, 0] = 2
    positions = np.sort(rng.integers(1, length // 2, (batch, predictions)), axis=1)
    inputs = {"token_ids": tokens, "segment_ids": (np.arange(length)[None] > lengths[:, None] // 2) & real,
              "padding_mask": real, "masked_positions": positions}
    labels = {"masked_lm_ids": rng.integers(5, vocabulary, (batch, predictions)),
              "masked_lm_weights": np.ones((batch, predictions), "float32"),
              "sentence_order_label": rng.integers(0, 2, batch)}
    cast = lambda d: {k: tf.constant(v, tf.float32 if v.dtype == np.float32 else tf.int32) for k, v in d.items()}  # noqa: E731
    return (cast(inputs), cast(labels)), int(real.sum())


def measure(preset, halting, global_batch, micro_batch, runs):
    config = PretrainConfig(train_files=[], eval_files=[], model_dir="", preset=preset, halting=halting,
                            steps=1000, warmup_steps=0, global_batch_size=global_batch,
                            micro_batch_size=micro_batch).resolved()
    strategy = tf.distribute.get_strategy()
    trainer = Pretrainer(config, strategy, "cpu")
    batch, real_tokens = random_batch(global_batch, 128, 26, config.backbone_config()["vocabulary_size"])
    iterator = iter(tf.data.Dataset.from_tensors(batch).repeat())
    step = trainer.make_train_step()
    step(iterator)["examples"].numpy()  # trace + warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        sums = step(iterator)
        sums["examples"].numpy()
        times.append(time.perf_counter() - start)
    mean_iterations = float(sums["all/sum"] / sums["all/count"])
    seconds = statistics.median(times)
    return global_batch / seconds, real_tokens / seconds, mean_iterations, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", nargs="+", default=["demo", "tiny"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--global_batch_size", type=int, default=32)
    parser.add_argument("--micro_batch_size", type=int, default=16)
    args = parser.parse_args()
    rows = []
    for preset in args.presets:
        base = None
        for halting in ("none", "act"):
            result = measure(preset, halting, args.global_batch_size, args.micro_batch_size, args.runs)
            base = base or result
            rows.append((preset, halting, *result, result[0] / base[0]))
    print(f"\nglobal batch {args.global_batch_size} = {args.global_batch_size // args.micro_batch_size} x "
          f"{args.micro_batch_size}, sequence 128, {os.cpu_count()} CPUs, TF {tf.__version__}, medians of {args.runs}\n")
    print("| preset | halting | N_max | mean iterations | s / update | examples/s | tokens/s | speed vs none |")
    print("|---|---|---|---|---|---|---|---|")
    for preset, halting, examples, tokens, iterations, seconds, ratio in rows:
        n_max = get_preset(preset).backbone["max_iterations"]
        print(f"| {preset} | {halting} | {n_max} | {iterations:.2f} | {seconds:.2f} | {examples:.1f} | {tokens:.0f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
