"""LAMB against a NumPy re-statement of ALBERT's maths; the learning-rate schedule by hand."""

import keras
import numpy as np
import pytest

from albert_act.train.lamb import Lamb
from albert_act.train.learning_rate import WarmupLinearDecay


def numpy_lamb(weights, gradients, lr, steps, decay_excluded, adaptation_excluded,
               weight_decay=0.01, beta_1=0.9, beta_2=0.999, epsilon=1e-6):
    """ALBERT's lamb_optimizer.py, restated: no bias correction, decay inside the trust ratio."""
    weights = {k: v.astype(np.float64).copy() for k, v in weights.items()}
    m = {k: np.zeros_like(v) for k, v in weights.items()}
    v = {k: np.zeros_like(w) for k, w in weights.items()}
    for step in range(steps):
        for name, w in weights.items():
            g = gradients[step][name].astype(np.float64)
            m[name] = beta_1 * m[name] + (1 - beta_1) * g
            v[name] = beta_2 * v[name] + (1 - beta_2) * g * g
            update = m[name] / (np.sqrt(v[name]) + epsilon)
            if name not in decay_excluded:
                update = update + weight_decay * w
            ratio = 1.0
            if name not in adaptation_excluded:
                w_norm, u_norm = np.linalg.norm(w), np.linalg.norm(update)
                ratio = w_norm / u_norm if w_norm > 0 and u_norm > 0 else 1.0
            weights[name] = w - lr * ratio * update
    return weights


def test_matches_numpy_restatement_over_several_steps():
    rng = np.random.default_rng(0)
    shapes = {"dense/kernel": (4, 3), "dense/bias": (3,), "layer_norm/gamma": (3,), "zero/kernel": (2, 2)}
    initial = {k: rng.normal(size=s).astype("float32") for k, s in shapes.items()}
    initial["zero/kernel"][:] = 0.0  # ||w|| = 0: trust ratio falls back to 1
    variables = {k: keras.Variable(v, name=k.split("/")[1]) for k, v in initial.items()}
    for name, variable in variables.items():  # give each the path ALBERT's name matching sees
        variable._path = name
    gradients = [{k: rng.normal(size=s).astype("float32") for k, s in shapes.items()} for _ in range(5)]
    optimizer = Lamb(learning_rate=0.01)
    for step_gradients in gradients:
        optimizer.apply_gradients([(step_gradients[k], variables[k]) for k in shapes])
    excluded = {"dense/bias", "layer_norm/gamma"}
    expected = numpy_lamb(initial, gradients, 0.01, 5, excluded, excluded)
    for name in shapes:
        np.testing.assert_allclose(variables[name].numpy(), expected[name], rtol=1e-5, atol=1e-6, err_msg=name)
    # The excluded/included split matters: with nothing excluded the result differs.
    different = numpy_lamb(initial, gradients, 0.01, 5, set(), set())
    assert np.abs(different["dense/bias"] - expected["dense/bias"]).max() > 1e-3


def test_first_step_moves_each_adapted_variable_by_lr_times_its_norm():
    # Step 1: m = .1 g, v = .001 g^2 -> u ~ sqrt(10) sign(g); r = ||w|| / ||u + .01 w||.
    w = keras.Variable(np.array([3.0, 4.0], "float32"))
    w._path = "kernel"
    Lamb(learning_rate=0.1, weight_decay_rate=0.0).apply_gradients([(np.array([1.0, -2.0], "float32"), w)])
    # ||update|| = lr * ||w|| = 0.5, along sign(g) = (1, -1)/sqrt(2).
    np.testing.assert_allclose(w.numpy(), [3 - 0.5 / np.sqrt(2), 4 + 0.5 / np.sqrt(2)], rtol=1e-4)


def test_schedule_warmup_then_linear_decay():
    schedule = WarmupLinearDecay(1e-3, warmup_steps=10, total_steps=100)
    values = [float(schedule(s)) for s in (0, 5, 10, 50, 100, 120)]
    np.testing.assert_allclose(values, [0.0, 5e-4, 9e-4, 5e-4, 0.0, 0.0], atol=1e-9)
    assert WarmupLinearDecay.from_config(schedule.get_config()).get_config() == schedule.get_config()
    with pytest.raises(ValueError, match="need 0 <= warmup_steps <= total_steps"):
        WarmupLinearDecay(1e-3, warmup_steps=20, total_steps=10)


def test_lamb_config_round_trip():
    optimizer = Lamb(learning_rate=WarmupLinearDecay(2e-3, 5, 50), weight_decay_rate=0.02)
    config = optimizer.get_config()
    rebuilt = Lamb.from_config(config)
    assert rebuilt.weight_decay_rate == 0.02 and rebuilt.get_config()["epsilon"] == 1e-6
