"""The ACT loop (`albert_act.model.halting`): hand-computed cases, NumPy reference, modes, gradients."""

import keras
import numpy as np
import pytest
import tensorflow as tf
from keras import ops

import numpy_reference
from albert_act.model.halting import (EXECUTIONS, TRAINING_EXECUTIONS, HaltingUnit, IteratedLayer, halting_loop,
                                      ponder_weight_in_force)


def tokenwise(fn):
    """An `IteratedLayer` for a layer without attention, y = fn(h, i), in the form every execution
    takes: sparse calls it through project_fn (keys unused) and attend_fn."""
    return IteratedLayer(fn, project_fn=lambda states, i: (states[:, None],) * 3,
                         attend_fn=lambda query_states, query, keys, i: fn(query_states, i))


def scripted(probabilities):
    """(layer, halting_fn): the layer adds (i + 1) to every channel of h but the last, which carries
    the token's position; halting_fn returns p[b, position, i] from a (B, T, N) table. The position
    travels with the state, so the table is read right in the sparse loop's slots too."""
    table = ops.convert_to_tensor(np.asarray(probabilities, "float32"))

    def layer_fn(h, i):
        step = ops.cast(i + 1, "float32") * ops.concatenate([ops.ones(h.shape[-1] - 1), ops.zeros(1)])
        return h + step

    def halting_fn(y, i):
        positions = ops.cast(ops.round(y[..., -1]), "int32")  # (B, W)
        return ops.take_along_axis(ops.take(table, i, axis=2), positions, axis=1)

    return tokenwise(layer_fn), halting_fn


def run_scripted(probabilities, real, n_max, execution, h0=None, **kwargs):
    probabilities = np.asarray(probabilities, "float32")
    batch, length, _ = probabilities.shape
    if h0 is None:
        h0 = np.zeros((batch, length, 1), "float32")
    positions = np.broadcast_to(np.arange(length, dtype="float32")[None, :, None], (batch, length, 1))
    layer, halting_fn = scripted(probabilities)
    out = halting_loop(np.concatenate([h0, positions], -1), real, layer, halting_fn, n_max, execution=execution,
                       return_details=True, **kwargs)
    out = {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
    np.testing.assert_array_equal(out["sequence_output"][..., -1], positions[..., 0])  # positions kept
    out["sequence_output"], out["iteration_states"] = out["sequence_output"][..., :-1], out["iteration_states"][..., :-1]
    return out


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_hand_computed_mixed_halting(execution):
    # Four tokens, N_max = 4, scripted p per iteration; h0 = 0, y^n = h^{n-1} + n.
    #  t0: p = .3 .5 .3   -> sums .3 .8 1.1   halts n=3, R = 1 - .8 = .2, lam = .3 .5 .2
    #  t1: p = .995       -> halts n=1, R = 1, lam = 1
    #  t2: p = .1 each    -> reaches the cap, N=4, R = 1 - .3 = .7, lam = .1 .1 .1 .7
    #  t3: padding         -> N = R = 0, never updated
    p = [[[0.3, 0.5, 0.3, 0.9], [0.995, 0.5, 0.5, 0.5], [0.1, 0.1, 0.1, 0.1], [0.9, 0.9, 0.9, 0.9]]]
    out = run_scripted(p, np.array([[1, 1, 1, 0]]), n_max=4, execution=execution)
    np.testing.assert_allclose(out["iterations"], [[3, 1, 4, 0]])
    np.testing.assert_allclose(out["remainders"], [[0.2, 1.0, 0.7, 0.0]], atol=1e-6)
    np.testing.assert_allclose(out["ponder_cost"], [3.2 + 2.0 + 4.7], atol=1e-5)
    # E = sum n lam: t0 .3 + 1.0 + .6 = 1.9; t1 1; t2 .1 + .2 + .3 + 2.8 = 3.4; padding 0.
    np.testing.assert_allclose(out["expected_iterations"], [[1.9, 1.0, 3.4, 0.0]], atol=1e-5)
    np.testing.assert_allclose(
        out["update_weights"][0],
        [[0.3, 0.5, 0.2, 0], [1, 0, 0, 0], [0.1, 0.1, 0.1, 0.7], [0, 0, 0, 0]],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        out["halting_probabilities"][0],
        [[0.3, 0.5, 0.3, 0], [0.995, 0, 0, 0], [0.1, 0.1, 0.1, 0.1], [0, 0, 0, 0]],
        atol=1e-6,
    )
    # h^n = lam y^n + (1 - lam) h^{n-1} with y^n = h^{n-1} + n  =>  h^n = h^{n-1} + lam * n.
    # t0: .3*1 + .5*2 + .2*3 = 1.9;  t1: 1;  t2: .1 + .2 + .3 + .7*4 = 3.4;  padding: 0.
    np.testing.assert_allclose(out["sequence_output"][0, :, 0], [1.9, 1.0, 3.4, 0.0], atol=1e-5)
    # Per-iteration states: t1 frozen after n = 1.
    np.testing.assert_allclose(out["iteration_states"][0, :, 1, 0], [1, 1, 1, 1], atol=1e-6)
    np.testing.assert_allclose(out["iteration_states"][0, :, 0, 0], [0.3, 1.3, 1.9, 1.9], atol=1e-5)


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_every_token_halts_at_step_one(execution):
    p = np.full((2, 3, 5), 0.999, "float32")
    h0 = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")
    out = run_scripted(p, np.ones((2, 3)), n_max=5, execution=execution, h0=h0)
    np.testing.assert_array_equal(out["iterations"], np.ones((2, 3)))
    np.testing.assert_allclose(out["remainders"], np.ones((2, 3)))  # R = 1 - (empty sum)
    np.testing.assert_allclose(out["ponder_cost"], [6.0, 6.0])
    np.testing.assert_allclose(out["expected_iterations"], np.ones((2, 3)))
    np.testing.assert_allclose(out["sequence_output"], h0 + 1.0, atol=1e-6)  # lam = 1: h^1 = y^1
    np.testing.assert_allclose(out["update_weights"][..., 0], 1.0)
    np.testing.assert_allclose(out["update_weights"][..., 1:], 0.0)


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_remainder_is_forced_at_the_cap(execution):
    # p = 0.05 never reaches 0.99 in 6 steps: the cap halts with R = 1 - 5 * 0.05 = 0.75.
    p = np.full((1, 2, 6), 0.05, "float32")
    out = run_scripted(p, np.ones((1, 2)), n_max=6, execution=execution)
    np.testing.assert_array_equal(out["iterations"], [[6, 6]])
    np.testing.assert_allclose(out["remainders"], [[0.75, 0.75]], atol=1e-6)
    np.testing.assert_allclose(out["update_weights"].sum(-1), 1.0, atol=1e-6)  # weights sum to 1
    np.testing.assert_allclose(out["update_weights"][0, 0], [0.05] * 5 + [0.75], atol=1e-6)
    np.testing.assert_allclose(out["expected_iterations"], [[0.05 * 15 + 0.75 * 6] * 2], atol=1e-5)


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_threshold_is_one_minus_epsilon(execution):
    # 0.5 + 0.485 = 0.985 < 0.99 keeps running; 0.5 + 0.495 = 0.995 >= 0.99 halts at n=2.
    p = [[[0.5, 0.485, 0.9], [0.5, 0.495, 0.9]]]
    out = run_scripted(p, np.ones((1, 2)), n_max=3, execution=execution)
    np.testing.assert_array_equal(out["iterations"], [[3, 2]])
    np.testing.assert_allclose(out["remainders"], [[1 - 0.985, 0.5]], atol=1e-6)


def test_all_padding_runs_nothing():
    for execution in EXECUTIONS:
        out = run_scripted(np.full((1, 3, 4), 0.5), np.zeros((1, 3)), n_max=4, execution=execution)
        np.testing.assert_array_equal(out["iterations"], 0)
        np.testing.assert_array_equal(out["ponder_cost"], [0.0])
        np.testing.assert_array_equal(out["iteration_states"], 0)


def test_fixed_depth_when_halting_fn_is_none():
    layer_fn = lambda h, i: 2.0 * h + 1.0  # noqa: E731
    h0 = np.ones((1, 3, 2), "float32")
    for execution in EXECUTIONS:
        out = halting_loop(h0, np.array([[1, 1, 0]]), tokenwise(layer_fn), None, 3, execution=execution)
        out = {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
        np.testing.assert_array_equal(out["iterations"], [[3, 3, 0]])
        np.testing.assert_array_equal(out["remainders"], 0.0)
        np.testing.assert_array_equal(out["expected_iterations"], [[3, 3, 0]])  # all weight at N_max
        # 1 -> 3 -> 7 -> 15 on real tokens; padding stays 1.
        np.testing.assert_array_equal(out["sequence_output"][0, :, 0], [15, 15, 1])


class _Mixing:
    """A token-mixing layer f(h) = tanh(h W + mean_real(h) U), in TF and in NumPy."""

    def __init__(self, hidden, real, seed):
        rng = np.random.default_rng(seed)
        self.W = rng.normal(0, 0.7, (hidden, hidden))
        self.U = rng.normal(0, 0.7, (hidden, hidden))
        self.w = rng.normal(0, 1.0, hidden)
        self.real = np.asarray(real, "float64")

    def numpy_layer(self, h):
        mean = (h * self.real[..., None]).sum(1, keepdims=True) / self.real.sum(1)[:, None, None]
        return np.tanh(h @ self.W + mean @ self.U)

    def numpy_halting(self, y):
        return 1 / (1 + np.exp(-(y @ self.w - 0.2)))

    def layer_fn(self, h, i):
        real = ops.convert_to_tensor(self.real[..., None], "float32")
        mean = ops.sum(h * real, axis=1, keepdims=True) / ops.sum(real, axis=1, keepdims=True)
        return ops.tanh(ops.matmul(h, self.W.astype("float32")) + ops.matmul(mean, self.U.astype("float32")))

    def halting_fn(self, y, i):
        return ops.sigmoid(ops.matmul(y, self.w.astype("float32")) - 0.2)

    def mix(self, h, mean):
        return ops.tanh(ops.matmul(h, self.W.astype("float32")) + ops.matmul(mean, self.U.astype("float32")))

    def iterated_layer(self):
        """The same layer as projections + attention (what the sparse loop needs): the mean over
        real tokens is an attention with equal weights, over the key/value groups it is given."""

        def project_fn(states, i):
            return (states[:, None],) * 3  # (B, 1, S, H): one head

        def attend_fn(query_states, query, keys, i):
            total = sum(ops.sum(ops.where(ops.transpose(mask, (0, 1, 3, 2)), value, 0.0), axis=2) for _, value, mask in keys)
            count = sum(ops.sum(ops.cast(mask, "float32"), axis=3) for _, _, mask in keys)  # (B, 1, 1)
            return self.mix(query_states, total / count)

        return IteratedLayer(self.layer_fn, project_fn, attend_fn)


@pytest.mark.parametrize("execution", EXECUTIONS)
def test_matches_numpy_reference_on_random_inputs(execution):
    rng = np.random.default_rng(7)
    lengths = [11, 7, 1, 9]
    real = np.arange(11)[None] < np.array(lengths)[:, None]
    h0 = rng.normal(size=(4, 11, 6)).astype("float32")
    mixing = _Mixing(6, real, seed=3)
    expected = numpy_reference.act(h0, real, mixing.numpy_layer, mixing.numpy_halting, max_iterations=6)
    out = halting_loop(h0, real, mixing.iterated_layer(), mixing.halting_fn, 6, execution=execution, return_details=True)
    out = {k: keras.ops.convert_to_numpy(v) for k, v in out.items()}
    # The case must exercise varied depths, or it proves little.
    assert len(np.unique(expected["iterations"][real])) >= 3
    for key in ("iterations", "remainders", "expected_iterations", "ponder_cost", "update_weights",
                "halting_probabilities", "sequence_output"):
        np.testing.assert_allclose(out[key], expected[key], atol=1e-5, err_msg=key)


def test_static_and_while_agree_under_jit():
    rng = np.random.default_rng(1)
    real = np.arange(9)[None] < np.array([9, 4, 6])[:, None]
    h0 = rng.normal(size=(3, 9, 5)).astype("float32")
    mixing = _Mixing(5, real, seed=4)

    def run(execution):
        fn = lambda h: halting_loop(h, real, mixing.layer_fn, mixing.halting_fn, 6,  # noqa: E731
                                    execution=execution, return_details=True)
        return {k: v.numpy() for k, v in tf.function(fn, jit_compile=True)(h0).items()}

    static, dynamic = run("static"), run("while")
    for key in static:
        np.testing.assert_allclose(dynamic[key], static[key], atol=1e-6, err_msg=key)


def test_ponder_gradient_flows_through_remainder_only():
    # p = sigmoid(b) at every step, b = -0.5 -> p = .3775: sums .3775, .755, 1.13 => N = 3,
    # R = 1 - 2p, so d(ponder)/db = dR/db = -2 p (1 - p); N contributes nothing.
    b = tf.Variable(-0.5)
    layer = tokenwise(lambda h, i: h)
    halting_fn = lambda y, i: tf.sigmoid(b) * tf.ones(tf.shape(y)[:2])  # noqa: E731
    for execution in TRAINING_EXECUTIONS:
        with tf.GradientTape(persistent=True) as tape:
            out = halting_loop(tf.zeros((1, 1, 1)), [[1]], layer, halting_fn, 6, execution=execution)
            ponder = tf.reduce_sum(out["ponder_cost"])
            iterations = tf.reduce_sum(out["iterations"])
        p = 1 / (1 + np.exp(0.5))
        assert out["iterations"].numpy()[0, 0] == 3
        np.testing.assert_allclose(tape.gradient(ponder, b).numpy(), -2 * p * (1 - p), rtol=1e-5)
        gradient = tape.gradient(iterations, b)  # None, or an explicit 0 through bucket's own gradient
        assert gradient is None or float(gradient) == 0.0, execution


def test_state_is_float32_for_low_precision_layers():
    layer_fn = lambda h, i: ops.cast(h, "bfloat16") + ops.cast(1.0, "bfloat16")  # noqa: E731
    halting_fn = lambda y, i: ops.cast(ops.full(ops.shape(y)[:2], 0.3), "bfloat16")  # noqa: E731
    out = halting_loop(np.zeros((1, 2, 3), "float32"), [[1, 1]], layer_fn, halting_fn, 4, return_details=True)
    for key, value in out.items():
        assert value.dtype == "float32", key
    # p = .3 (exact in bf16? no: .30078125) -> N = 4 at the cap, R = 1 - 3p.
    np.testing.assert_allclose(out["remainders"].numpy(), 1 - 3 * 0.30078125, atol=1e-6)


def test_halting_unit_is_float32_with_zero_bias_by_default():
    keras.config.set_dtype_policy("mixed_bfloat16")
    unit = HaltingUnit()
    p = unit(keras.random.normal((2, 3, 8)))
    assert p.dtype == "float32" and tuple(p.shape) == (2, 3)
    assert unit.dense.kernel.dtype == "float32"
    np.testing.assert_array_equal(unit.dense.bias.numpy(), [0.0])
    assert HaltingUnit(bias_initializer=1.5).get_config()["bias_initializer"] == 1.5


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_iterations=0), r"max_iterations must be an integer in \[1, 64\], got 0"),
        (dict(max_iterations=2.5), r"max_iterations must be an integer in \[1, 64\], got 2.5"),
        (dict(epsilon=0.0), r"epsilon must be a number in \(0, 1\), got 0.0"),
        (dict(epsilon=1.0), r"epsilon must be a number in \(0, 1\), got 1.0"),
        (dict(execution="fast"), r"execution must be one of \['static', 'while', 'sparse', 'gather', 'bucket'\], got 'fast'"),
        (dict(execution="bucket", capacity=0), "capacity must be an integer >= 1, got 0"),
    ],
)
def test_bad_arguments_name_the_value(kwargs, message):
    args = dict(max_iterations=3)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        halting_loop(np.zeros((1, 1, 1)), [[1]], lambda h, i: h, None, **args)


@pytest.mark.parametrize("stored, halting, in_force", [
    (2.5e-3, "act", 2.5e-3),     # a fixed or steered tau, as stored
    (-1.0, "act", 0.0),          # --tau auto before its calibration: no ponder cost
    (0.0, "act", 0.0),
    (2.5e-3, "none", 0.0),       # fixed depth: the ponder cost is a constant, never weighed
])
def test_ponder_weight_in_force(stored, halting, in_force):
    for value in (stored, tf.Variable(stored, dtype=tf.float32), np.float32(stored)):
        assert float(ponder_weight_in_force(value, halting)) == pytest.approx(in_force)
