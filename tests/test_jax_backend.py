"""The model on Keras 3's JAX backend, in a process where TensorFlow cannot be imported
(tests/jax_side.py): the same weights give the TensorFlow backend's outputs, iterations, loss and
gradients, and LAMB's updates lower the loss there."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone, AlbertActPretrainingModel
from albert_act.train.losses import Objective, geometric_prior
from conftest import TINY, random_inputs, spread_halting

pytest.importorskip("jax", reason="jax is in requirements.txt; this venv lacks it")

JAX_SIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_side.py")


def _case(tmp_path, objective, execution="static"):
    """Writes the weights and inputs for the JAX side; returns (spec, arrays, the TF side's results)."""
    keras.utils.set_random_seed(0)
    backbone = AlbertActBackbone(**TINY, execution=execution, return_details=objective.iteration_outputs)
    spread_halting(backbone)
    model = AlbertActPretrainingModel(backbone, iteration_outputs=objective.iteration_outputs)
    inputs = random_inputs([12, 7, 12], padded_length=12, seed=3)
    inputs["masked_positions"] = np.array([[1, 4, 8], [2, 5, 6], [3, 7, 10]], "int32")
    rng = np.random.default_rng(1)
    labels = {"masked_lm_ids": rng.integers(5, 60, (3, 3)).astype("int32"),
              "masked_lm_weights": np.array([[1, 1, 1], [1, 1, 0], [1, 1, 1]], "float32"),
              "sentence_order_label": np.array([0, 1, 1], "int32")}
    weights = str(tmp_path / "model.weights.h5")
    model.save_weights(weights)
    tau = 0.01

    @tf.function
    def run():
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            sums = objective.sums(outputs, labels)
            loss = objective.losses(sums, sums["mlm_weight"], sums["examples"], tau)["loss"]
        return loss, outputs, tape.gradient(loss, model.trainable_variables)

    loss, outputs, gradients = run()
    tf_side = {"loss": float(loss), "outputs": {k: v.numpy() for k, v in outputs.items()},
               "gradients": {v.path: tf.convert_to_tensor(g).numpy() for v, g in zip(model.trainable_variables, gradients)}}
    spec = {"backbone": {**TINY, "execution": execution}, "weights": weights, "tau": tau, "learning_rate": 0.01,
            "updates": 5, "mlm_objective": objective.mlm_objective, "kl_weight": objective.kl_weight,
            "prior": list(objective.prior) if objective.prior else None}
    source = tmp_path / "in.npz"
    np.savez(source, spec=json.dumps(spec), **inputs, **labels)
    return source, tf_side


def _jax(tmp_path, source):
    destination = tmp_path / "out.npz"
    run = subprocess.run([sys.executable, JAX_SIDE, str(source), str(destination)], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "KERAS_BACKEND": "jax"})
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(np.load(destination))


def _relative(a, b, floor=1e-6):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), floor))


@pytest.mark.parametrize("objective", [
    Objective(),
    Objective("per_iteration", 0.3, tuple(geometric_prior(2.5, TINY["max_iterations"]))),
], ids=["act", "per-iteration + KL"])
def test_the_same_weights_give_the_same_numbers_on_jax_without_tensorflow(tmp_path, objective):
    source, expected = _case(tmp_path, objective)
    actual = _jax(tmp_path, source)
    assert str(actual["backend"]) == "jax" and not bool(actual["tensorflow_loaded"])
    real = np.load(source)["padding_mask"] == 1
    iterations = expected["outputs"]["iterations"]
    assert len(np.unique(iterations[real])) >= 3  # depths vary: the halting arithmetic is exercised
    np.testing.assert_array_equal(actual["output/iterations"], iterations)
    for key, value in expected["outputs"].items():
        assert _relative(actual[f"output/{key}"], value) <= 1e-5, key
    assert abs(float(actual["loss"]) - expected["loss"]) <= 1e-5 * abs(expected["loss"])
    largest = max(float(np.abs(g).max()) for g in expected["gradients"].values())
    assert set(expected["gradients"]) == {k.removeprefix("gradient/") for k in actual if k.startswith("gradient/")}
    for path, gradient in expected["gradients"].items():
        # relative to the gradient's own size, or to 1e-3 of the largest for one that is ~0 (float noise)
        assert _relative(actual[f"gradient/{path}"], gradient, 1e-3 * largest) <= 1e-4, path
    # LAMB's updates on JAX lower the loss of the batch they fit.
    losses = actual["losses"]
    assert losses[-1] < losses[0] - 0.05, losses
