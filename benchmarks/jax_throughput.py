"""Training throughput on the JAX backend: pieces per second and MFU of whole pre-training updates.

    KERAS_BACKEND=jax python -m benchmarks.jax_throughput [--widths 128 256 512 768] [--batch 64]
        [--precisions float32 mixed_bfloat16] [--updates 10] [--peak_tflops P]

Each row times `albert_act.train.jax_pretraining.JaxPretrainer.update` (forward, backward, LAMB,
as a run takes it) on random sequences of 128 pieces, 8,000-piece vocabulary, 20 masked positions,
at hidden size H (heads H/64, at least 2; feed-forward 4H; N_max 6): fixed depth (every token 6
iterations), and ACT with the halting unit set so that every token halts after 3, in the static
execution (all 6 iterations computed, halted tokens masked) and in bucket (`switched_halting`: the
running tokens only). The last column is each row's time against fixed depth's. MFU: the FLOPs
of the iterations computed (3 x forward of the blocks, attention included, and the MLM head) over
the elapsed time, against
the device's bf16 dense peak (H100 and H200: 989 TFLOP/s; --peak_tflops for others; none on a CPU).
The first two updates (compilation) are not timed. Prints a Markdown table and the device.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/jax_throughput.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.jax_throughput")

import argparse
import os
import time

os.environ.setdefault("KERAS_BACKEND", "jax")

from albert_act.base import cli, entry  # noqa: E402
from benchmarks import arguments  # noqa: E402

cli.quiet_start()  # first: Ctrl-C stops with one line from here on (TensorFlow, where installed, loads quietly)

import jax  # noqa: E402
import numpy as np  # noqa: E402

PEAKS = {"H100": 989e12, "H200": 989e12, "A100": 312e12}
LENGTH, VOCABULARY, MASKED, N_MAX, EMBEDDING = 128, 8000, 20, 6, 128


def update_flops(width, batch, iterations=N_MAX):
    """Training FLOPs of one update (3 x forward): the blocks of `iterations` iterations over every
    token (projections 8H^2, feed-forward 16H^2, attention 4TH per token) and the MLM head."""
    block = batch * LENGTH * (24 * width ** 2 + 4 * LENGTH * width)
    head = batch * MASKED * 2 * (width * EMBEDDING + EMBEDDING * VOCABULARY)
    embed = batch * LENGTH * 2 * EMBEDDING * width
    return 3 * (iterations * block + head + embed)


def random_batch(batch, seed=0):
    rng = np.random.default_rng(seed)
    positions = np.sort(rng.choice(np.arange(1, LENGTH - 1), (batch, MASKED)), axis=1).astype(np.int32)
    inputs = {"token_ids": rng.integers(5, VOCABULARY, (batch, LENGTH)).astype(np.int32),
              "segment_ids": (np.arange(LENGTH)[None] >= LENGTH // 2).repeat(batch, 0).astype(np.int32),
              "padding_mask": np.ones((batch, LENGTH), np.int32), "masked_positions": positions}
    labels = {"masked_lm_ids": rng.integers(5, VOCABULARY, (batch, MASKED)).astype(np.int32),
              "masked_lm_weights": np.ones((batch, MASKED), np.float32),
              "sentence_order_label": rng.integers(0, 2, batch).astype(np.int32)}
    return inputs, labels


def trainer_for(width, batch, precision, halting, execution="static"):
    from albert_act.train.jax_pretraining import JaxPretrainer
    from albert_act.train.pretraining_config import PretrainConfig

    heads = max(2, width // 64)
    config = PretrainConfig(
        train_files=["unused"], eval_files=["unused"], model_dir="unused", preset="english", halting=halting,
        backbone_overrides={"hidden_dim": width, "num_heads": heads, "intermediate_dim": 4 * width},
        global_batch_size=batch, micro_batch_size=batch // len(jax.local_devices()), precision=precision,
        ponder_cost_weight=1e-3 if halting == "act" else 0.0, ponder_warmup_start=0, ponder_warmup_steps=0,
        steps=1000, warmup_steps=10, learning_rate=1e-3, execution=execution).resolved()
    trainer = JaxPretrainer(config)
    if halting == "act":  # p = 0.4 at every iteration: every token halts after 3 (0.4 + 0.4 < 0.99 <= 1.2)
        unit = trainer.backbone.encoder.halting_unit.dense
        index = {v.path: i for i, v in enumerate(trainer.model.trainable_variables)}
        trainer.state["trainable"][index[unit.kernel.path]] *= 0.0
        trainer.state["trainable"][index[unit.bias.path]] = np.full((1,), np.log(0.4 / 0.6), np.float32)
    return trainer


def measure(width, batch, precision, halting, updates, execution="static"):
    trainer = trainer_for(width, batch, precision, halting, execution)
    data = random_batch(batch)
    sums = None
    for step in range(2):  # compile, warm up
        sums = trainer.update(data, step)
    start = time.perf_counter()
    for step in range(updates):
        sums = trainer.update(data, step + 2)
    jax.block_until_ready(trainer.state["trainable"])
    seconds = (time.perf_counter() - start) / updates
    mean_n = float(sums["depth"][0, 1] / max(sums["depth"][0, 0], 1))
    return {"seconds": seconds, "pieces_per_second": batch * LENGTH / seconds, "mean_n": mean_n,
            "flops_per_second": update_flops(width, batch) / seconds}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.jax_throughput", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--widths", type=int, nargs="+", default=[128, 256, 512, 768])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--precisions", nargs="+", default=["float32", "mixed_bfloat16"],
                        choices=["float32", "mixed_bfloat16", "mixed_float16"])
    parser.add_argument("--updates", type=int, default=10)
    parser.add_argument("--peak_tflops", type=float, default=None)
    args = cli.parse_checked(parser, argv, {"widths": "int[2,16384]", "batch": "int[1,65536]",
                                            "updates": "int[1,100000]", "peak_tflops": ">0"})
    uneven = [width for width in args.widths if width % max(2, width // 64)]
    if uneven:
        raise SystemExit(f"error: --widths: {uneven[0]} does not divide into its {max(2, uneven[0] // 64)} heads of "
                         "H/64 (at least 2): give a multiple of 64, or an even width below 128")
    arguments.run(_measure, args)


def _measure(args):
    device = jax.devices()[0]
    kind = getattr(device, "device_kind", device.platform)
    peak = args.peak_tflops * 1e12 if args.peak_tflops else next((v for k, v in PEAKS.items() if k in kind), None)
    print(f"device: {kind} x{len(jax.devices())} ({jax.default_backend()}), jax {jax.__version__}; "
          f"bf16 peak {'%.0f TFLOP/s' % (peak / 1e12) if peak else 'unknown'}", flush=True)
    lines = ["| H | precision | depth | mean N | s / update | pieces/s | TFLOP/s | MFU | time vs fixed |",
             "|---|---|---|---|---|---|---|---|---|"]
    for width in args.widths:
        for precision in args.precisions:
            fixed = measure(width, args.batch, precision, "none", args.updates)
            rows = [("fixed 6", fixed), ("ACT, static", measure(width, args.batch, precision, "act", args.updates)),
                    ("ACT, bucket", measure(width, args.batch, precision, "act", args.updates, "bucket"))]
            for name, row in rows:
                # MFU counts the FLOPs of the iterations computed: all 6 but for bucket (the running ones)
                flops = row["flops_per_second"] * (row["mean_n"] / N_MAX if name == "ACT, bucket" else 1.0)
                mfu = f"{flops / peak:.2f}" if peak else "-"
                ratio = f"{row['seconds'] / fixed['seconds']:.2f}" if name != "fixed 6" else ""
                lines.append(f"| {width} | {precision} | {name} | {row['mean_n']:.2f} | {row['seconds']:.4f} | "
                             f"{row['pieces_per_second']:.0f} | {flops / 1e12:.2f} | {mfu} | {ratio} |")
            print("\n".join(lines[-3:]), flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    entry.run(main)
