"""What the paper's pre-training costs: FLOPs per update and per token, and hours on TPUs and GPUs.

    .venv/bin/python -m benchmarks.cost_model [--utilization 0.4] [--share 0.30] [--no-check]

Counts the training FLOPs of tiny / small / base (ALBERT-base sizes with N_max 6 / 12 / 24,
sequence 128, 20 masked positions, `albert_act/train/pretraining_config.py`) for the paper's 112,500
updates of 4,096 sequences, three ways:

* fixed depth (ALBERT, `--halting none`): every token through N_max iterations;
* the static ACT loop (`--execution static`, what TPUs run): the same iterations plus the
  halting unit, so the same cost;
* computing only the running tokens (`--execution gather`/`bucket`) at a depth share
  (mean N / N_max; default 0.30, the quick start's measured 1.79 of 6): the encoder's
  iterations scale with the share, the first one always runs, embeddings and heads do not.
  This is the floor: `gather` computes, per row, as many slots as the fullest row needs.

FLOPs count a multiply-add as 2. Forward per sequence of T tokens, hidden H, FFN F, embedding
E, vocabulary V, P masked positions, N iterations:
    embeddings  2 T E H
    iteration   T (8 H^2 + 4 H F) + 4 T^2 H   (q, k, v and output projections, FFN, scores and
                                               the weighted sum) + 2 T H for the halting unit
    MLM head    P (2 H E + 2 E V);   SOP head 2 H^2 + 4 H
Training = 3 x forward (the backward pass costs two forwards; LAMB's elementwise work is
left out: about 30 FLOPs per parameter per update, under 0.01%).

Hours = total FLOPs / (peak x utilization). Peaks (bf16, dense), per device as rented:
TPU v2-8 = 4 chips x 45 TFLOPS, v3-8 = 4 x 123, v4-8 = 4 x 275 (Google Cloud TPU docs,
"System architecture" of v2, v3 and v4); A100 312 TFLOPS and H100 SXM 989 TFLOPS (NVIDIA's
data sheets, without sparsity). The utilization is an assumption (default 40%: what BERT-size
models commonly reach; ACT's masked loop and small matmuls may get less), stated in the table.

Check (`--no-check` skips it): the formula against TensorFlow's own count of the floating
point operations in the forward graph of each preset's backbone at fixed depth (the graph
profiler's `float_ops`, which counts matmuls and elementwise ops it has statistics for), and
against a timed training update of the demo preset on this CPU (its FLOP rate).
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/cost_model.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.cost_model")

import argparse
import os

from albert_act.base import entry

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

UPDATES, BATCH, LENGTH, PREDICTIONS = 112_500, 4096, 128, 20  # the paper's pre-training
PEAKS = {  # TFLOPS, bf16 dense
    "TPU v2-8": 4 * 45, "TPU v3-8": 4 * 123, "TPU v4-8": 4 * 275, "A100": 312, "H100 SXM": 989,
}
COLAB_SESSION_HOURS = 12  # a Colab session's upper bound (its FAQ: "up to 12 hours"; often less)


def forward_flops(sizes, iterations, length=LENGTH, predictions=PREDICTIONS, halting=True):
    """Forward FLOPs of one sequence: (embeddings + heads, per iteration) for `sizes` (backbone kwargs)."""
    h, f, e, v = sizes["hidden_dim"], sizes["intermediate_dim"], sizes["embedding_dim"], sizes["vocabulary_size"]
    per_iteration = length * (8 * h * h + 4 * h * f) + 4 * length * length * h + (2 * length * h if halting else 0)
    fixed = 2 * length * e * h + predictions * (2 * h * e + 2 * e * v) + 2 * h * h + 4 * h
    return fixed, per_iteration


def training_flops(sizes, iterations, halting=True):
    fixed, per_iteration = forward_flops(sizes, iterations, halting=halting)
    return 3 * (fixed + iterations * per_iteration)


def cost_table(share, utilization):
    from albert_act import PRESETS

    rows = []
    for name in ("tiny", "small", "base"):
        sizes, n_max = PRESETS[name].backbone, PRESETS[name].backbone["max_iterations"]
        running = max(1.0, share * n_max)  # the first iteration always runs
        for label, flops in (("fixed depth", training_flops(sizes, n_max, halting=False)),
                             ("static ACT", training_flops(sizes, n_max)),
                             (f"running tokens only, share {running / n_max:.3g}"
                              + (f" (not {share:.3g}: 1 iteration at least)" if running > share * n_max else ""),
                              training_flops(sizes, running))):
            per_update = flops * BATCH
            total = per_update * UPDATES
            hours = {device: total / (peak * 1e12 * utilization) / 3600 for device, peak in PEAKS.items()}
            rows.append((name, n_max, label, per_update, flops / LENGTH, total, hours))
    return rows


def profiler_flops(name, length=LENGTH):
    """TensorFlow's float_ops count of the preset's fixed-depth backbone forward for one sequence."""
    import tensorflow as tf

    from albert_act import backbone_from_preset

    backbone = backbone_from_preset(name, halting="none", max_sequence_length=length)
    spec = {k: tf.TensorSpec([1, length], tf.int32) for k in ("token_ids", "segment_ids", "padding_mask")}
    concrete = tf.function(lambda inputs: backbone(inputs)["sequence_output"]).get_concrete_function(spec)
    options = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    return tf.compat.v1.profiler.profile(concrete.graph, options=options).total_float_ops


def measured_demo_update(runs=5):
    """(seconds per update, training FLOPs per update) of the demo preset's fixed-depth update,
    batch 32 of 64 tokens, XLA, on this machine (benchmarks.pretrain_speed's step)."""
    import statistics
    import time

    import tensorflow as tf

    from albert_act import PRESETS
    from benchmarks.pretrain_speed import random_records, trainer_for
    from pipelines.pretraining_dataset import parse_examples

    trainer = trainer_for("demo", 64, "none", "static", 32, 32, jit_compile=True)
    records, shapes = random_records(32, 64, trainer.backbone.vocabulary_size)
    step = trainer.make_train_step(parse=lambda serialized: parse_examples(serialized, *shapes))
    iterator = iter(tf.data.Dataset.from_tensors(tf.constant(records)).repeat())
    step(iterator)["examples"].numpy()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        step(iterator)["examples"].numpy()
        times.append(time.perf_counter() - start)
    sizes = PRESETS["demo"].backbone
    fixed, per_iteration = forward_flops(sizes, 6, length=64, predictions=12, halting=False)
    return statistics.median(times), 32 * 3 * (fixed + 6 * per_iteration)


def main(argv=None):
    from albert_act.base import cli
    from benchmarks import arguments

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cost_model", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share", type=float, default=0.30, help="mean N / N_max for the running-tokens rows")
    parser.add_argument("--utilization", type=float, default=0.40,
                        help="share of the peak FLOP rate reached (0.001 to 1: below 0.1%% is no forecast)")
    parser.add_argument("--no-check", dest="check", action="store_false", help="skip the TensorFlow cross-checks")
    args = cli.parse_checked(parser, argv, {"utilization": "[0.001,1]"})
    if not 0 < args.share <= 1:  # NaN too
        raise SystemExit(f"error: --share must be a number in (0, 1], got {args.share}")
    if args.check and cli.jax_backend():
        raise SystemExit("error: the checks trace the model with TensorFlow, and KERAS_BACKEND is jax here: run it "
                         "without KERAS_BACKEND=jax, or pass --no-check for the tables alone")
    cli.quiet_start(argv)  # TensorFlow's loggers at errors only: the check's tables stay whole
    arguments.run(_tables, args)


def _tables(args):

    print(f"\nThe paper's pre-training: {UPDATES:,} updates x {BATCH:,} sequences x {LENGTH} tokens "
          f"({PREDICTIONS} masked); hours at {args.utilization * 100:.3g}% of the bf16 peak\n")
    devices = list(PEAKS)
    print("| preset | N_max | execution | PFLOP / update | MFLOP / token | EFLOP total | "
          + " | ".join(f"h on {d}" for d in devices) + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(devices))
    for name, n_max, label, per_update, per_token, total, hours in cost_table(args.share, args.utilization):
        print(f"| {name} | {n_max} | {label} | {per_update / 1e15:.2f} | {per_token / 1e6:.0f} | {total / 1e18:.1f} | "
              + " | ".join(f"{hours[d]:,.0f}" for d in devices) + " |")
    print(f"\nA Colab session lasts at most {COLAB_SESSION_HOURS} h: the TPU v2-8 column in sessions is the hours "
          f"/ {COLAB_SESSION_HOURS}; a run resumes across sessions from its last checkpoint in the bucket "
          "(colab/pretrain_tpu.ipynb re-run).")
    if not args.check:
        return

    from albert_act import PRESETS

    print("\nCheck 1: the formula against TensorFlow's count (forward, one sequence, fixed depth)\n")
    print("| preset | formula GFLOP | TensorFlow float_ops GFLOP | ratio |")
    print("|---|---|---|---|")
    for name in ("tiny", "small", "base"):
        sizes = PRESETS[name].backbone
        fixed, per_iteration = forward_flops(sizes, sizes["max_iterations"], predictions=0, halting=False)
        # the backbone has no MLM/SOP head: the formula without them (and without the pooler)
        formula = fixed - (2 * sizes["hidden_dim"] ** 2 + 4 * sizes["hidden_dim"]) + sizes["max_iterations"] * per_iteration
        counted = profiler_flops(name)
        print(f"| {name} | {formula / 1e9:.2f} | {counted / 1e9:.2f} | {counted / formula:.3f} |")

    seconds, flops = measured_demo_update()
    print(f"\nCheck 2: a timed demo update (fixed depth, batch 32 x 64, XLA) on this CPU: {seconds:.3f} s for "
          f"{flops / 1e9:.1f} GFLOP = {flops / seconds / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    entry.run(main)
