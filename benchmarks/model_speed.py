"""Forward and forward+backward time of the backbones, side by side in one run.

    .venv/bin/python -m benchmarks.model_speed                  # demo sizes, batch 16, seq 128
    .venv/bin/python -m benchmarks.model_speed --preset tiny --batch-size 8

Rows: our ACT backbone with every token running to N_max (halting bias -30, so
p ~ 1e-13: nothing halts early; static and while execution), our fixed-depth
backbone (`halting="none"`), and keras-hub's `AlbertBackbone` at the same depth
and sizes. Each step is a `tf.function` (no XLA); times are medians of --runs
calls after the first traced calls are thrown away. Ratios are against
`halting="none"` (ours) and against keras-hub.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/model_speed.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.model_speed")

import argparse
import os
import statistics
import time

from albert_act.base import cli, entry
from benchmarks import arguments

cli.quiet_start()  # first: Ctrl-C stops with one line from here on, and TensorFlow loads quietly

import keras  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_act import AlbertActBackbone, copy_keras_hub_albert_weights, get_preset  # noqa: E402


def make_inputs(batch_size, length, vocabulary_size, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(length // 2, length + 1, batch_size)
    real = np.arange(length)[None] < lengths[:, None]
    return {
        "token_ids": tf.constant(np.where(real, rng.integers(5, vocabulary_size, real.shape), 0), tf.int32),
        "segment_ids": tf.constant((np.arange(length)[None] >= lengths[:, None] // 2) & real, tf.int32),
        "padding_mask": tf.constant(real, tf.int32),
    }


def loss_of(outputs):
    loss = tf.reduce_mean(tf.square(outputs["sequence_output"])) + tf.reduce_mean(outputs["pooled_output"])
    if "ponder_cost" in outputs:  # what pre-training adds for ACT (tau * ponder)
        loss += 1e-3 * tf.reduce_mean(outputs["ponder_cost"])
    return loss


def materialize(outputs):
    """Waits for every output (gradients of embeddings are IndexedSlices)."""
    for t in tf.nest.flatten(outputs, expand_composites=True):
        t.numpy()


def median_seconds(fn, inputs, runs, warmup=2):
    for _ in range(warmup):
        materialize(fn(inputs))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        materialize(fn(inputs))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def timed(model, inputs, runs):
    forward = tf.function(lambda x: model(x, training=False))

    @tf.function
    def forward_backward(x):
        with tf.GradientTape() as tape:
            loss = loss_of(model(x, training=True))
        return tape.gradient(loss, model.trainable_variables)

    return median_seconds(forward, inputs, runs), median_seconds(forward_backward, inputs, runs)


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.model_speed")
    from albert_act import PRESETS

    parser = argparse.ArgumentParser(prog="python -m benchmarks.model_speed", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="demo", choices=sorted(PRESETS), help="size preset (default: demo)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--runs", type=int, default=10, help="timed calls per measurement (median)")
    args = cli.parse_checked(parser, argv, {"batch_size": ("int[1,65536]", "batch-size"),
                                            "sequence_length": ("int[2,8192]", "sequence-length"),
                                            "runs": "int[1,1000]"})
    arguments.run(_measure, args)


def _measure(args):
    config = dict(get_preset(args.preset).backbone, max_sequence_length=args.sequence_length)
    depth = config["max_iterations"]
    sizes = {k: config[k] for k in ("vocabulary_size", "num_heads", "embedding_dim", "hidden_dim",
                                    "intermediate_dim", "max_sequence_length", "dropout")}
    inputs = make_inputs(args.batch_size, args.sequence_length, config["vocabulary_size"])

    hub = keras_hub.models.AlbertBackbone(num_layers=depth, **sizes)
    fixed = AlbertActBackbone(**config, halting="none")
    copy_keras_hub_albert_weights(hub, fixed)
    models = {"keras-hub AlbertBackbone": hub, 'ours halting="none"': fixed}
    for execution in ("static", "while"):
        act = AlbertActBackbone(**{**config, "halting_bias_initializer": -30.0}, execution=execution)
        copy_keras_hub_albert_weights(hub, act)
        models[f"ours ACT, all run to N_max ({execution})"] = act

    # Check the ACT rows really ran every real token to the cap.
    for name, model in models.items():
        if "ACT" in name:
            iterations = model(inputs)["iterations"].numpy()
            real = inputs["padding_mask"].numpy().astype(bool)
            assert (iterations[real] == depth).all(), f"{name}: some token halted early"

    results = {name: timed(model, inputs, args.runs) for name, model in models.items()}
    base_fwd, base_fb = results['ours halting="none"']
    hub_fwd, hub_fb = results["keras-hub AlbertBackbone"]
    print(
        f"\npreset={args.preset} depth={depth} H={config['hidden_dim']} batch={args.batch_size} "
        f"seq={args.sequence_length} runs={args.runs} TF={tf.__version__} Keras={keras.__version__} "
        f"cpus={os.cpu_count()}\n"
    )
    header = "| model | forward ms | fwd+bwd ms | fwd+bwd / ours none | fwd+bwd / keras-hub | forward / keras-hub |"
    print(header)
    print("|---|---|---|---|---|---|")
    for name, (fwd, fb) in results.items():
        print(f"| {name} | {fwd * 1e3:.1f} | {fb * 1e3:.1f} | {fb / base_fb:.3f} | {fb / hub_fb:.3f} | {fwd / hub_fwd:.3f} |")


if __name__ == "__main__":
    entry.run(main)
