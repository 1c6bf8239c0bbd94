"""The same weights on TensorFlow and on JAX: outputs, iterations, loss and gradients, across machines.

    python -m benchmarks.backend_parity --write DIR          # here, with TensorFlow: the reference
    KERAS_BACKEND=jax python -m benchmarks.backend_parity --check DIR   # there, e.g. on a GPU: compared

--write saves a small model's weights (.weights.h5), a batch, and the TensorFlow backend's outputs,
loss and per-variable gradients of MLM + SOP + tau x ponder (ACT, depths spread over 1..6) to DIR.
--check computes the same on the JAX backend of this machine and prints the largest differences,
each relative to its tensor's scale; it exits with 1 when outputs differ by more than 1e-5, any
gradient by more than 1e-4 (float32; on a GPU TF32 matmuls are turned off for it), or when any
token's iteration count differs. tests/test_jax_backend.py holds the same comparison on the CPU.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/backend_parity.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.backend_parity")

import argparse
import json
import os
import sys
import zipfile

import numpy as np

from albert_act.base import entry, text_files
from benchmarks import arguments

CONFIG = dict(vocabulary_size=400, num_heads=2, embedding_dim=16, hidden_dim=32, intermediate_dim=64,
              max_iterations=6, max_sequence_length=128)
TAU = 0.01


FILES = ("model.weights.h5", "reference.npz")  # what --write writes


def _model():
    import keras

    from albert_act import AlbertActBackbone, AlbertActPretrainingModel

    keras.utils.set_random_seed(0)
    backbone = AlbertActBackbone(**CONFIG, execution="static")
    return backbone, AlbertActPretrainingModel(backbone)


def _batch():
    rng = np.random.default_rng(3)
    lengths = np.array([24, 17, 24, 9])
    real = np.arange(24)[None] < lengths[:, None]
    inputs = {"token_ids": np.where(real, rng.integers(5, 400, (4, 24)), 0).astype("int32"),
              "segment_ids": (np.arange(24)[None] >= lengths[:, None] // 2).astype("int32") * real,
              "padding_mask": real.astype("int32"),
              "masked_positions": np.sort(rng.integers(1, 8, (4, 3)) + np.arange(3) * 2, axis=1).astype("int32")}
    labels = {"masked_lm_ids": rng.integers(5, 400, (4, 3)).astype("int32"),
              "masked_lm_weights": np.ones((4, 3), "float32"), "sentence_order_label": np.array([0, 1, 1, 0], "int32")}
    return inputs, labels


def write(directory):
    import tensorflow as tf

    from albert_act.train.losses import Objective

    backbone, model = _model()
    unit = backbone.encoder.halting_unit.dense
    rng = np.random.default_rng(0)
    unit.kernel.assign(rng.normal(0.0, 0.5, unit.kernel.shape).astype("float32"))
    unit.bias.assign([-0.8])
    inputs, labels = _batch()
    with tf.GradientTape() as tape:
        answers = model(inputs, training=True)
        sums = Objective().sums(answers, labels)
        loss = Objective().losses(sums, sums["mlm_weight"], sums["examples"], TAU)["loss"]
    gradients = tape.gradient(loss, model.trainable_variables)
    arrays = {"loss": float(loss), **inputs, **labels, **{f"output/{k}": np.asarray(v) for k, v in answers.items()},
              **{f"gradient/{v.path}": tf.convert_to_tensor(g).numpy()
                 for v, g in zip(model.trainable_variables, gradients)}}
    arguments.write_whole(directory, {  # the reference in place whole, or the earlier one
        "model.weights.h5": model.save_weights, "reference.npz": lambda path: np.savez(path, **arrays)})
    print(f"reference written to {directory} (mean N {float(np.asarray(answers['iterations'])[inputs['padding_mask'] == 1].mean()):.2f})")


def check(directory):
    import jax

    from albert_act.train.losses import Objective

    jax.config.update("jax_default_matmul_precision", "highest")  # no TF32 on a GPU: float32 as the reference
    _, model = _model()
    model.load_weights(os.path.join(directory, "model.weights.h5"))
    reference = dict(np.load(os.path.join(directory, "reference.npz")))
    inputs = {k: reference[k] for k in ("token_ids", "segment_ids", "padding_mask", "masked_positions")}
    labels = {k: reference[k] for k in ("masked_lm_ids", "masked_lm_weights", "sentence_order_label")}
    trainable = [v.value for v in model.trainable_variables]
    frozen = [v.value for v in model.non_trainable_variables]

    def loss_fn(trainable):
        outputs, _ = model.stateless_call(trainable, frozen, inputs, training=True)
        sums = Objective().sums(outputs, labels)
        return Objective().losses(sums, sums["mlm_weight"], sums["examples"], TAU)["loss"], outputs

    (loss, outputs), gradients = jax.jit(jax.value_and_grad(loss_fn, has_aux=True))(trainable)
    relative = lambda a, b, floor=1e-6: float(np.max(np.abs(np.asarray(a) - b)) / max(float(np.max(np.abs(b))), floor))  # noqa: E731
    output_gap = max(relative(outputs[k], reference[f"output/{k}"]) for k in outputs)
    largest = max(float(np.abs(reference[f"gradient/{v.path}"]).max()) for v in model.trainable_variables)
    gradient_gap = max(relative(g, reference[f"gradient/{v.path}"], 1e-3 * largest)
                       for v, g in zip(model.trainable_variables, gradients))
    same_depth = bool(np.array_equal(np.asarray(outputs["iterations"]), reference["output/iterations"]))
    result = {"device": str(jax.devices()[0]), "jax": jax.__version__, "outputs": output_gap,
              "gradients": gradient_gap, "loss": abs(float(loss) - float(reference["loss"])) / abs(float(reference["loss"])),
              "iterations_identical": same_depth}
    print(json.dumps(result))
    return output_gap <= 1e-5 and gradient_gap <= 1e-4 and same_depth


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.backend_parity", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", metavar="DIR")
    group.add_argument("--check", metavar="DIR")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier reference in --write's DIR")
    from albert_act.base import cli

    args = cli.parse_checked(parser, argv, {"write": "path", "check": "path"})
    cli.quiet_start(argv)
    try:  # before any model is built
        if args.write:
            from albert_act.base.artifacts import check_output_dir

            if cli.jax_backend():
                raise ValueError("--write computes the reference on Keras's TensorFlow backend, and KERAS_BACKEND is "
                                 "jax here: run it without KERAS_BACKEND=jax (--check then compares JAX with it)")
            check_output_dir(args.write, args.overwrite, FILES, "the reference", "an earlier reference", "--write")
        else:
            import keras

            if keras.backend.backend() != "jax":
                raise ValueError(f"--check compares Keras's JAX backend with the reference, and Keras runs on "
                                 f"{keras.backend.backend()} here: run it as KERAS_BACKEND=jax python -m "
                                 "benchmarks.backend_parity --check DIR")
            missing = [name for name in FILES if not os.path.isfile(os.path.join(args.check, name))]
            if missing:
                raise ValueError(f"--check {args.check} holds no {' or '.join(missing)}: give the DIR that --write "
                                 "wrote")
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.write)) from None
    # a stop ends the process at once: on JAX, the interpreter's teardown beside XLA's threads crashed it
    reference = os.path.join(args.write or "", "reference.npz")
    earlier, written = os.path.exists(reference), text_files.replaced_since(reference)

    def stopped():  # the reference is moved into place whole, as write's last step: a stop may come just after it
        if args.write and written():
            return f"the new reference is in {args.write}, written whole just before the stop"
        return arguments.NOTHING_WRITTEN + (" (an earlier reference there is intact)" if earlier else "")

    if not arguments.run(_write_or_check, args, output=args.write or args.check, stopped=stopped):
        sys.exit(1)


def _write_or_check(args):
    """--write's reference (True), or --check's comparison: whether the backends agree."""
    if args.write:
        write(args.write)
        return True
    try:
        return check(args.check)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:  # h5py's, NumPy's refusals
        raise ValueError(f"--check {args.check}: its reference does not read whole ({type(error).__name__}: {error}): "
                         "write it again with --write") from None  # of a damaged file (a cut or empty .npz: zip's)


if __name__ == "__main__":
    entry.run(main)
