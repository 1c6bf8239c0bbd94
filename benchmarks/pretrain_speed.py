"""Training-update time and model-FLOP utilisation against depth: ACT executions vs fixed depth.

    .venv/bin/python -m benchmarks.pretrain_speed [--preset demo|english] [--lengths 64 128 512]
        [--patterns uniform tail] [--executions static gather bucket] [--runs 5] [--checkpoint runs/demo]

Each row times the whole update of `albert_act.train.pretraining_run` as a run makes it: the
global batch's serialized records parsed inside the step, forward, loss, backward over the
micro-batches, clipping and the LAMB update, on one random batch (all real tokens, 20% of
them masked, `--batch` sequences in micro-batches of `--micro_batch`; both default to the
preset's), after one warm-up update; medians over --runs updates. The learning rate is 0, so
the weights stay.

Depth is scripted: the halting probability of every token is replaced by a fixed per-token
p (`ScriptedDepth`), so each token halts at the iteration the pattern gives it, whatever the
weights; the halting unit still runs, and its gradient is computed.
* fixed depth: `--halting none`, static loop under XLA, N_max iterations for every token (the baseline);
* `uniform`: every token at the same N = share x N_max (1, 2, 3 of 6 for shares 1/6, 1/3, 1/2);
* `tail`: depth varies per token like a trained model's, with a tail at the cap
  (`tail_depths`): 1% of the tokens at N_max and the rest 1, 2, ... with geometric odds, at
  a mean of 1.05 (the first English model's), 2 and 3;
* ACT at the trained demo's real depth (with --checkpoint, demo preset, length 64): the quick
  start's weights on a batch of its own training records.

Executions: `static` (every iteration for every token; XLA), `gather` (running tokens only,
dynamic shapes; no XLA), `bucket` (running tokens only at static widths; XLA) and
`bucket-pow2` (bucket with halving widths only, as before the multiples of 16 were added). Each
(length, execution) runs in its own process, whose peak resident memory is reported.

MFU: the layer FLOPs the depth needs (training = 3 x forward: per token and iteration run,
8 H^2 for the query/key/value/output projections, 4 H F for the feed-forward and 4 T H for the
attention, times the iterations really run), per second, over this machine's float32 matmul
peak measured in the same run (`matmul_peak`, a 2048^3 `tf.matmul`). The embedding, heads,
loss and optimizer are not counted, so a perfect update would score below 1. "ratio" is
s/update over the fixed-depth row of the same length; "ratio / share" is 1 for a cost that
follows the depth exactly.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/pretrain_speed.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.pretrain_speed")

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

from albert_act.base import entry

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARES = {"1/6": 1, "1/3": 2, "1/2": 3}  # share of N_max = 6 -> uniform iterations per token
TAIL_MEANS = {"1/6": 1.05, "1/3": 2.0, "1/2": 3.0}  # the tail pattern's mean N per share
TAIL_AT_CAP = 0.01  # share of the tokens that run to N_max in the tail pattern
XLA = {"static": True, "bucket": True, "gather": False, "while": False, "bucket-pow2": True}
# "bucket-pow2": bucket with its widths before the multiples of FINE_STEP (halvings only), for comparison.


def halting_probability(iterations, max_iterations, epsilon=0.01):
    """A constant p that makes a token halt at exactly `iterations`: the smallest n with
    n p >= 1 - eps is `iterations` (p between (1 - eps) / n and (1 - eps) / (n - 1)); at the cap,
    any p that has not reached 1 - eps by then."""
    if iterations == 1:
        return 0.9975
    if iterations >= max_iterations:
        return (1 - epsilon) / (max_iterations + 1)
    return (1 - epsilon) * (1 / iterations + 1 / (iterations - 1)) / 2


def halting_bias(iterations, epsilon=0.01):
    """The bias b whose p = sigmoid(b) makes every token halt at `iterations` (halting kernel 0)."""
    p = halting_probability(iterations, math.inf, epsilon)
    return math.log(p / (1 - p))


def tail_odds(mean, max_iterations=6, at_cap=TAIL_AT_CAP):
    """Probabilities of N = 1..max_iterations: `at_cap` at N_max, the rest proportional to r^(n-1)
    for n < N_max, r chosen (bisection) so that the mean is `mean`."""
    def distribution(r):
        weights = [r ** n for n in range(max_iterations - 1)]
        return [(1 - at_cap) * w / sum(weights) for w in weights] + [at_cap]

    def mean_of(r):
        return sum((n + 1) * q for n, q in enumerate(distribution(r)))

    low, high = 0.0, 50.0
    if not mean_of(low) <= mean <= mean_of(high):
        raise ValueError(f"mean {mean} is out of reach with {at_cap} of the tokens at {max_iterations}")
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if mean_of(middle) < mean else (low, middle)
    return distribution(low)


def tail_depths(shape, mean, max_iterations=6, seed=0):
    """int (B, T): N per token, `tail_odds(mean)` of the tokens at each N (counts rounded), at
    random positions; the batch mean is `mean` to within one token's step."""
    import numpy as np

    size = int(np.prod(shape))
    odds = np.array(tail_odds(mean, max_iterations))
    counts = np.floor(odds * size).astype(int)
    counts[0] += size - counts.sum()  # the rounding's leftovers halt at 1
    flat = np.repeat(np.arange(1, max_iterations + 1), counts)
    for _ in range(size):  # the leftovers may have pulled the mean down: one token a step up at a time
        if flat.mean() >= mean - 0.5 / size:
            break
        flat[np.flatnonzero(flat < max_iterations - 1)[-1]] += 1
    np.random.default_rng(seed).shuffle(flat)
    return flat.reshape(shape)


class ScriptedDepth:
    """Makes every ACT loop halt token (b, t) at depths[b, t] of a micro-batch of `shape`: the raw
    halting probability handed to `act_update` is replaced by the constant p of that depth
    (`+ 0 x p`, so the halting unit's gradient is still computed). The p's live in a variable, so
    one traced (and compiled) step serves every pattern (`set`). Patches the loops' module-level
    `act_update` until `undo`; build the step after this."""

    def __init__(self, shape, max_iterations, epsilon=0.01):
        import tensorflow as tf

        from albert_act.model import gathered_halting, halting

        self.max_iterations, self.epsilon = max_iterations, epsilon
        self.table = tf.Variable(tf.ones(shape), trainable=False, name="scripted_probability")
        self.originals = {module: module.act_update for module in (halting, gathered_halting)}
        update, table = self.originals[halting], self.table

        def scripted(state, y, raw_probability, *args, **kwargs):
            if raw_probability is not None:
                raw_probability = tf.convert_to_tensor(table) + 0.0 * tf.cast(raw_probability, tf.float32)
            return update(state, y, raw_probability, *args, **kwargs)

        for module in self.originals:
            module.act_update = scripted

    def set(self, depths):
        import numpy as np

        probability = np.vectorize(lambda n: halting_probability(int(n), self.max_iterations, self.epsilon))
        self.table.assign(probability(np.asarray(depths)).astype("float32"))

    def undo(self):
        for module, original in self.originals.items():
            module.act_update = original


def layer_flops(hidden, intermediate, length):
    """Forward FLOPs of one token through one iteration of the layer (matmuls and attention only)."""
    return 8 * hidden * hidden + 4 * hidden * intermediate + 4 * length * hidden


def model_flop_utilisation(flops, tokens, iterations, seconds, peak):
    """MFU: `flops` per token and iteration (training's, `3 x layer_flops`) x the tokens x their mean
    iterations, per second, over the matmul `peak` (FLOP/s)."""
    return flops * tokens * iterations / seconds / peak


def timed(fn, runs):
    """(seconds of fn's first call, median seconds of the next `runs` calls)."""
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


def matmul_peak(size=2048, runs=20):
    """This machine's float32 matmul peak, FLOP/s: the fastest of `runs` (size x size) @ (size x size)
    (the fastest, not the median: other tenants of a shared machine only ever slow a run down)."""
    import tensorflow as tf

    a = tf.random.normal((size, size))
    b = tf.random.normal((size, size))
    product = tf.function(lambda a, b: tf.reduce_sum(tf.matmul(a, b)))
    product(a, b).numpy()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        product(a, b).numpy()
        times.append(time.perf_counter() - start)
    return 2 * size ** 3 / min(times)


def random_records(batch, length, vocabulary, seed=0):
    """`batch` serialized pre-training records of `length` pieces, all real, 20% masked (the data
    tool's layout: max_predictions 1.2 x round(0.2 (T - 3)), the unused ones of weight 0)."""
    import numpy as np

    from pipelines.tf_example import float_feature, int64_feature, serialize_example

    rng = np.random.default_rng(seed)
    masked = max(4, round(0.2 * (length - 3)))
    predictions = math.ceil(1.2 * masked)
    records = []
    for row in range(batch):
        tokens = rng.integers(5, vocabulary, length)
        tokens[0] = 2
        positions = np.sort(rng.choice(np.arange(1, length), masked, replace=False))
        features = {
            "input_ids": tokens, "input_mask": np.ones(length, int), "segment_ids": np.arange(length) >= length // 2,
            "masked_lm_positions": np.pad(positions, (0, predictions - masked)),
            "masked_lm_ids": np.pad(rng.integers(5, vocabulary, masked), (0, predictions - masked)),
            "next_sentence_labels": [row % 2], "token_boundary": np.ones(length, int)}
        serialized = {k: int64_feature([int(x) for x in v]) for k, v in features.items()}
        serialized["masked_lm_weights"] = float_feature([1.0] * masked + [0.0] * (predictions - masked))
        records.append(serialize_example(serialized))
    return records, (length, predictions)


def trainer_for(preset, length, halting, execution, batch, micro_batch, jit_compile=None):
    """A `Pretrainer` at the preset's sizes (positions at least `length`), at the least learning rate a run
    takes (a run takes no rate of 0): the weights stay almost as they are."""
    import tensorflow as tf

    from albert_act.base.checks import LEAST_LEARNING_RATE
    from albert_act.train.pretrainer import Pretrainer
    from albert_act.train.pretraining_run import PretrainConfig

    config = PretrainConfig(train_files=[], eval_files=[], model_dir="unused", preset=preset, halting=halting,
                            execution=execution, jit_compile=XLA[execution] if jit_compile is None else jit_compile,
                            steps=1000, warmup_steps=0, learning_rate=LEAST_LEARNING_RATE, global_batch_size=batch,
                            micro_batch_size=micro_batch, ponder_cost_weight=1e-3,
                            backbone_overrides={"max_sequence_length": max(64, length)}).resolved()
    return Pretrainer(config, tf.distribute.get_strategy(), "cpu")


def measure(args):
    """One process: one (length, halting, execution), every pattern and share asked for. Prints one JSON line."""
    import tensorflow as tf

    from albert_act.io.run_checkpoints import checkpoint_contents
    from pipelines.pretraining_dataset import parse_examples

    length, halting, execution = args.length, args.halting, args.execution
    if execution == "bucket-pow2":
        from albert_act.model import gathered_halting

        gathered_halting.FINE_STEP, execution = length + 1, "bucket"
    trainer = trainer_for(args.preset, length, halting, execution, args.batch, args.micro_batch,
                          jit_compile=XLA[args.execution])
    n_max = trainer.backbone.max_iterations
    records, shapes = random_records(args.batch, length, trainer.backbone.vocabulary_size)
    step = trainer.make_train_step(parse=lambda serialized: parse_examples(serialized, *shapes))

    def time_batch(batch, parsed=False):
        if parsed:  # the trained rows: records already parsed
            step_fn, element = trainer.make_train_step(), batch
        else:
            step_fn, element = step, tf.constant(batch)
        iterator = iter(tf.data.Dataset.from_tensors(element).repeat())
        sums = {}

        def update():
            sums.update(step_fn(iterator))
            sums["examples"].numpy()

        first, seconds = timed(update, args.runs)
        depth = sums["depth"].numpy()  # (K, parts): row 0 is "all"; parts: count, sum N, ...
        return {"seconds": seconds, "first": first, "tokens": float(depth[0, 0]),
                "iterations": float(depth[0, 1] / depth[0, 0]), "overflows": float(sums["overflows"])}

    rows = {}
    if halting == "none":
        rows["fixed"] = time_batch(records)
    else:
        script = ScriptedDepth((args.micro_batch, length), n_max)
        try:  # `step` is traced (and compiled) at its first call, here, once, reading the scripted p's
            for pattern in args.patterns:
                for share in args.shares:
                    script.set([[SHARES[share]] * length] * args.micro_batch if pattern == "uniform"
                               else tail_depths((args.micro_batch, length), TAIL_MEANS[share], n_max))
                    rows[f"{pattern} {share}"] = time_batch(records)
        finally:
            script.undo()
        if args.checkpoint and length == 64 and args.preset == "demo":
            rows["trained"] = time_batch(trained_batch(args, trainer, checkpoint_contents), parsed=True)
    rows["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rows["layer_flops"] = 3 * layer_flops(trainer.backbone.hidden_dim, trainer.backbone.intermediate_dim, length)
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
    """Times `execution` ("name" or "name@micro_batch") in its own process; its rows, or None past the timeout."""
    execution, _, micro_batch = execution.partition("@")
    command = [sys.executable, "-m", "benchmarks.pretrain_speed", "--child", "--length", str(length),
               "--halting", halting, "--execution", execution, "--runs", str(args.runs), "--batch", str(args.batch),
               "--micro_batch", micro_batch or str(args.micro_batch), "--preset", args.preset, "--shares", *args.shares,
               "--patterns", *args.patterns] + (["--checkpoint", args.checkpoint] if args.checkpoint else [])
    print(f"(timing length {length}, {'fixed depth' if halting == 'none' else execution} ...)", file=sys.stderr, flush=True)
    return child_result(command, args.child_timeout)


def child_result(command, timeout=None):
    """Runs a benchmark's child process; the JSON of its last line, or None past `timeout` seconds."""
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # XLA's compile of `bucket`'s switch ran for over an hour on a 2-core CPU
        return None
    if done.returncode:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def not_done_row(args, length, depth, execution):
    return f"| {length} | {depth} | {execution} | | not done within --child_timeout {args.child_timeout:g} s | | | | | | |"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        name = next(line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
        flags = next(line.split(":", 1)[1].split() for line in lines if line.startswith("flags"))
        return f"{name}, {os.cpu_count()} CPUs, " + " ".join(f for f in ("avx2", "fma", "avx512f", "amx_tile") if f in flags)
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def row_text(length, depth, execution, row, base, rows, peak):
    """One table row: mean N, s/update, pieces/s, MFU, ratios, memory, first call."""
    share = row["iterations"] / 6
    pieces = row["tokens"] / row["seconds"]
    mfu = model_flop_utilisation(rows["layer_flops"], row["tokens"], row["iterations"], row["seconds"], peak)
    overflow = f" ({row['overflows']:.0f} overflows)" if row["overflows"] else ""
    return (f"| {length} | {depth} | {execution}{overflow} | {row['iterations']:.2f} | {row['seconds']:.3f} | "
            f"{pieces:,.0f} | {mfu:.2f} | {row['seconds'] / base:.2f} | {row['seconds'] / base / share:.2f} | "
            f"{rows['peak_rss_mb']:.0f} | {row['first']:.0f} |")


def main(argv=None):
    from albert_act.base import cli
    from benchmarks import arguments

    cli.quiet_start(argv)  # first: Ctrl-C stops with one line from here on, and TensorFlow loads quietly
    cli.tensorflow_only("python -m benchmarks.pretrain_speed")
    from albert_act.model.presets import get_preset

    parser = argparse.ArgumentParser(prog="python -m benchmarks.pretrain_speed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="demo", choices=["demo", "english"],
                        help="the model's sizes, and the batch unless given (default: demo)")
    parser.add_argument("--lengths", type=int, nargs="+", default=None,
                        help="sequence lengths (default: 64 128 512 for demo, 128 for english)")
    parser.add_argument("--executions", nargs="+", default=["static", "gather", "bucket"],
                        help="static, gather, bucket or bucket-pow2, each optionally with its own micro-batch "
                             "(gather@64); the baseline, fixed depth, runs at --micro_batch, and fixed@64 adds "
                             "fixed depth at another")
    parser.add_argument("--shares", nargs="+", default=list(SHARES), choices=list(SHARES))
    parser.add_argument("--patterns", nargs="+", default=["uniform", "tail"], choices=["uniform", "tail"],
                        help="depth patterns (default: both)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--batch", type=int, default=None, help="sequences per update (default: the preset's)")
    parser.add_argument("--micro_batch", type=int, default=None,
                        help="sequences per micro-batch (default: the preset's, at most --batch)")
    parser.add_argument("--checkpoint", default=os.path.join(REPO, "runs", "demo"),
                        help="the quick start's run dir, for the trained-depth rows (demo; skipped if absent)")
    parser.add_argument("--child_timeout", type=float, default=1200,
                        help="seconds one (length, execution) process may take, compile included; past it, "
                             "its rows say so and the table goes on")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--length", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--halting", help=argparse.SUPPRESS)
    parser.add_argument("--execution", help=argparse.SUPPRESS)
    args = cli.parse_checked(parser, argv, {"lengths": "int[2,4096]", "runs": "int[1,1000]", "batch": "int>=1",
                                            "micro_batch": "int>=1", "child_timeout": ">0", "checkpoint": "path"})
    hidden = [flag for flag, value in (("--length", args.length), ("--halting", args.halting),
                                       ("--execution", args.execution)) if value is not None]
    if hidden and not args.child:
        parser.error(f"{hidden[0]} belongs to the benchmark's own measuring processes: choose lengths and "
                     "executions with --lengths and --executions")
    if args.child and None in (args.length, args.halting, args.execution):
        parser.error("--child is how the benchmark starts its own measuring processes (with --length, --halting and "
                     "--execution): run it without --child")
    training = get_preset(args.preset).training
    args.batch = args.batch or training["global_batch_size"]
    args.micro_batch = min(args.micro_batch or training["micro_batch_size"], args.batch)
    for execution in args.executions:
        if execution.partition("@")[0] not in ("fixed", *XLA):
            parser.error(f"--executions {execution}: expected one of fixed, {', '.join(XLA)}, optionally @ a micro-batch")
        micro_batch = execution.partition("@")[2]
        if "@" in execution and (not micro_batch.isdigit() or int(micro_batch) < 1):
            parser.error(f"--executions {execution}: the micro-batch after @ must be a positive whole number")
    for micro_batch in [args.micro_batch] + [int(e.partition("@")[2]) for e in args.executions if "@" in e]:
        if args.batch % micro_batch:
            parser.error(f"--batch {args.batch} must be a multiple of the micro-batch {micro_batch}")
    args.lengths = args.lengths or ([64, 128, 512] if args.preset == "demo" else [128])
    if args.checkpoint and not os.path.exists(os.path.join(args.checkpoint, "config.json")):
        if not args.child and args.preset == "demo":
            print(f"(no quick-start run at {args.checkpoint}: run `python -m albert_act.pretrain` for the trained rows)")
        args.checkpoint = None
    return arguments.run(measure if args.child else _tables, args)


def _tables(args):
    import tensorflow as tf

    peak = matmul_peak()
    print(f"\n{cpu_model()}; TF {tf.__version__}; {args.preset} sizes, {args.batch} sequences per update in "
          f"micro-batches of {args.micro_batch} (or as an execution@micro-batch says), medians of {args.runs} updates; float32 matmul peak "
          f"{peak / 1e9:.0f} GFLOP/s (2048^3, this run)\n")
    print("| length | depth | execution | mean N | s / update | pieces / s | MFU | ratio to fixed depth | "
          "ratio / share | peak RSS MB | first call s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for length in args.lengths:
        fixed = run_child(args, length, "none", "static")
        if fixed is None:
            print(not_done_row(args, length, "fixed 6", "static"))
            continue
        base = fixed["fixed"]["seconds"]
        print(row_text(length, "fixed 6", "static", fixed["fixed"], base, fixed, peak), flush=True)
        # "static@64" style: that execution at its own micro-batch; "fixed@64": fixed depth at another micro-batch
        results = {execution: run_child(args, length, "none", "static" + execution[5:]) if execution.startswith("fixed")
                   else run_child(args, length, "act", execution) for execution in args.executions}
        for execution in [e for e, rows in results.items() if rows is None]:
            print(not_done_row(args, length, "all", execution))
        results = {execution: rows for execution, rows in results.items() if rows is not None}
        depths = [f"{pattern} {share}" for pattern in args.patterns for share in args.shares]
        for depth in ["fixed", *depths, "trained"]:
            for execution, rows in results.items():
                if depth in rows:
                    label = "fixed 6" if depth == "fixed" else depth
                    print(row_text(length, label, execution, rows[depth], base, rows, peak), flush=True)


if __name__ == "__main__":
    entry.run(main)
