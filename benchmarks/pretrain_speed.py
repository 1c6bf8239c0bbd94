"""Training-step time against depth: ACT executions vs fixed depth, same batch, same run.

    .venv/bin/python -m benchmarks.pretrain_speed [--lengths 64 128 512] [--runs 5] [--checkpoint runs/demo]

Each row times the real training step of `albert_act.train.pretraining_run` (forward, loss,
backward, LAMB update) at demo sizes (H 128, 4 heads, FFN 512, N_max 6) on one random
batch of `--batch` sequences (all real tokens, 20% masked), after one warm-up update;
medians over --runs updates. The learning rate is 0, so the weights, and the depth, stay.

* fixed depth: `--halting none`, static loop, N_max iterations for every token (the baseline);
* ACT at a scripted depth share N / N_max of 1/6, 1/3, 1/2: a halting unit with kernel 0 and
  bias b gives every token the same p = sigmoid(b), so every token halts at the same N;
* ACT at the trained demo's real depth (with --checkpoint, length 64): the quick start's
  weights on a batch of its own training records.

Executions: `static` (every iteration for every token; XLA), `gather` (running tokens only,
dynamic shapes; no XLA) and `bucket` (running tokens only at static widths; XLA). Each
(length, execution) runs in its own process, whose peak resident memory is reported.
"ratio" is s/update over the fixed-depth row of the same length; "ratio / share" is 1 for a
cost that follows the depth exactly.
"""

import argparse
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARES = {"1/6": 1, "1/3": 2, "1/2": 3}  # share of N_max = 6 -> iterations per token
XLA = {"static": True, "bucket": True, "gather": False, "while": False}


def halting_bias(iterations, epsilon=0.01):
    """A bias whose p = sigmoid(b) makes every token halt at exactly `iterations`: the smallest
    n with n p >= 1 - eps is `iterations` (p between (1 - eps) / n and (1 - eps) / (n - 1))."""
    if iterations == 1:
        return 6.0  # p = 0.9975
    p = (1 - epsilon) * (1 / iterations + 1 / (iterations - 1)) / 2
    return math.log(p / (1 - p))


def random_batch(batch, length, vocabulary, seed=0):
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    predictions = max(4, length // 5)
    tokens = rng.integers(5, vocabulary, (batch, length))
    tokens[:, 0] = 2
    positions = np.sort(np.stack([rng.choice(np.arange(1, length), predictions, replace=False)
                                  for _ in range(batch)]), axis=1)
    inputs = {"token_ids": tokens, "segment_ids": (np.arange(length)[None] >= length // 2) + 0 * tokens,
              "padding_mask": np.ones((batch, length), "int32"), "masked_positions": positions}
    labels = {"masked_lm_ids": rng.integers(5, vocabulary, (batch, predictions)),
              "masked_lm_weights": np.ones((batch, predictions), "float32"),
              "sentence_order_label": rng.integers(0, 2, batch)}
    cast = lambda d: {k: tf.constant(v, tf.float32 if v.dtype == np.float32 else tf.int32) for k, v in d.items()}  # noqa: E731
    return cast(inputs), cast(labels)


def measure(args):
    """One process: one (length, halting, execution), every share asked for. Prints one JSON line."""
    import tensorflow as tf

    from albert_act.train.pretrainer import Pretrainer
    from albert_act.train.pretraining_checkpoints import checkpoint_contents
    from albert_act.train.pretraining_run import PretrainConfig

    length, halting, execution = args.length, args.halting, args.execution
    config = PretrainConfig(train_files=[], eval_files=[], model_dir="", preset="demo", halting=halting,
                            execution=execution, jit_compile=XLA[execution], steps=1000, warmup_steps=0,
                            learning_rate=0.0, global_batch_size=args.batch, micro_batch_size=args.batch,
                            backbone_overrides={"max_sequence_length": max(64, length)}).resolved()
    trainer = Pretrainer(config, tf.distribute.get_strategy(), "cpu")
    step = trainer.make_train_step()

    def time_batch(batch):
        iterator = iter(tf.data.Dataset.from_tensors(batch).repeat())
        start = time.perf_counter()
        sums = step(iterator)
        sums["examples"].numpy()
        first = time.perf_counter() - start
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            sums = step(iterator)
            sums["examples"].numpy()
            times.append(time.perf_counter() - start)
        depth = sums["depth"].numpy()  # (K, parts): row 0 is "all"; parts: count, sum N, ...
        return {"seconds": statistics.median(times), "first": first,
                "iterations": float(depth[0, 1] / depth[0, 0]), "overflows": float(sums["overflows"])}

    rows = {}
    batch = random_batch(args.batch, length, trainer.backbone.vocabulary_size)
    if halting == "none":
        rows["fixed"] = time_batch(batch)
    else:
        unit = trainer.backbone.encoder.halting_unit.dense
        for share in args.shares:
            unit.kernel.assign(tf.zeros_like(unit.kernel))
            unit.bias.assign([halting_bias(SHARES[share])])
            rows[share] = time_batch(batch)
        if args.checkpoint and length == 64:
            rows["trained"] = time_batch(trained_batch(args, trainer, checkpoint_contents))
    rows["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(rows))


def trained_batch(args, trainer, checkpoint_contents):
    """Restores the quick start's weights into the trainer's model; returns a batch of its training records."""
    import tensorflow as tf

    from pipelines.pretraining_dataset import make_pretraining_dataset

    with open(os.path.join(args.checkpoint, "config.json")) as f:
        train_files = json.load(f)["train_files"]
    checkpoint = tf.train.Checkpoint(**checkpoint_contents(trainer.model))
    checkpoint.restore(tf.train.latest_checkpoint(os.path.join(args.checkpoint, "checkpoints"))).expect_partial()
    return next(iter(make_pretraining_dataset(train_files, args.batch, training=False)))


def run_child(args, length, halting, execution):
    command = [sys.executable, "-m", "benchmarks.pretrain_speed", "--child", "--length", str(length),
               "--halting", halting, "--execution", execution, "--runs", str(args.runs), "--batch", str(args.batch),
               "--shares", *args.shares] + (["--checkpoint", args.checkpoint] if args.checkpoint else [])
    print(f"(timing length {length}, {'fixed depth' if halting == 'none' else execution} ...)", file=sys.stderr, flush=True)
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=args.child_timeout)
    except subprocess.TimeoutExpired:  # XLA's compile of `bucket`'s switch ran for over an hour on a 2-core CPU
        return None
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def not_done_row(args, length, depth, execution):
    return f"| {length} | {depth} | {execution} | | not done within --child_timeout {args.child_timeout:g} s | | | | |"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        name = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
        flags = next(line.split(":", 1)[1].split() for line in lines if line.startswith("flags"))
        return f"{name}, {os.cpu_count()} CPUs, " + " ".join(f for f in ("avx2", "avx512f", "amx_tile") if f in flags)
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=[64, 128, 512])
    parser.add_argument("--executions", nargs="+", default=["static", "gather", "bucket"])
    parser.add_argument("--shares", nargs="+", default=list(SHARES), choices=list(SHARES))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--checkpoint", default=os.path.join(REPO, "runs", "demo"),
                        help="the quick start's run dir, for the trained-depth rows (skipped if absent)")
    parser.add_argument("--child_timeout", type=float, default=1200,
                        help="seconds one (length, execution) process may take, compile included; past it, "
                             "its rows say so and the table goes on")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--halting", help=argparse.SUPPRESS)
    parser.add_argument("--execution", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.checkpoint and not os.path.exists(os.path.join(args.checkpoint, "config.json")):
        if not args.child:
            print(f"(no quick-start run at {args.checkpoint}: run `python -m albert_act.pretrain` for the trained rows)")
        args.checkpoint = None
    if args.child:
        return measure(args)

    import tensorflow as tf

    print(f"\n{cpu_model()}; TF {tf.__version__}; batch {args.batch}, demo sizes, medians of {args.runs} updates\n")
    print("| length | depth | execution | mean N | s / update | ratio to fixed depth | ratio / share | "
          "peak RSS MB | first call s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for length in args.lengths:
        fixed = run_child(args, length, "none", "static")
        if fixed is None:
            print(not_done_row(args, length, "fixed 6", "static"))
            continue
        base = fixed["fixed"]["seconds"]
        print(f"| {length} | fixed {6} | static | 6.00 | {base:.3f} | 1.00 | 1.00 | {fixed['peak_rss_mb']:.0f} | "
              f"{fixed['fixed']['first']:.0f} |", flush=True)
        results = {execution: run_child(args, length, "act", execution) for execution in args.executions}
        for execution in [e for e, rows in results.items() if rows is None]:
            print(not_done_row(args, length, "all", execution))
        results = {execution: rows for execution, rows in results.items() if rows is not None}
        for depth in [*args.shares, "trained"]:
            for execution, rows in results.items():
                if depth not in rows:
                    continue
                row = rows[depth]
                share = row["iterations"] / 6
                overflow = f" ({row['overflows']:.0f} overflows)" if row["overflows"] else ""
                print(f"| {length} | {depth} | {execution}{overflow} | {row['iterations']:.2f} | {row['seconds']:.3f} | "
                      f"{row['seconds'] / base:.2f} | {row['seconds'] / base / share:.2f} | {rows['peak_rss_mb']:.0f} | "
                      f"{row['first']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
