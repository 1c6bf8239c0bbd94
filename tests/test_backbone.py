"""`AlbertActBackbone`: NumPy reference, execution modes, XLA, mixed precision, padding, peers."""

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf

import numpy_reference
from albert_act import AlbertActBackbone, copy_keras_hub_albert_weights
from conftest import (
    TINY,
    assert_config_round_trip,
    assert_keras_file_round_trip,
    random_inputs,
    spread_halting,
    to_numpy,
)

OUTPUT_NAMES = {"sequence_output", "pooled_output", "iterations", "remainders", "expected_iterations", "ponder_cost", "overflows"}


def _backbone(**overrides):
    return AlbertActBackbone(**{**TINY, **overrides})


@pytest.mark.parametrize("execution", ["static", "while"])
def test_matches_numpy_reference_with_varied_depths(execution):
    backbone = _backbone(execution=execution, return_details=True)
    spread_halting(backbone)
    inputs = random_inputs([12, 9, 4, 1], padded_length=12)
    actual = to_numpy(backbone(inputs))
    expected = numpy_reference.backbone(backbone, inputs)
    real = inputs["padding_mask"].astype(bool)
    assert len(np.unique(expected["iterations"][real])) >= 3  # varied depths, not one
    for key in ("iterations", "remainders", "expected_iterations", "ponder_cost", "pooled_output"):
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-5, err_msg=key)
    np.testing.assert_allclose(actual["sequence_output"][real], expected["sequence_output"][real], atol=1e-5)
    np.testing.assert_allclose(actual["update_weights"], expected["update_weights"], atol=1e-5)
    # Update weights of every real token sum to one; padding has none.
    np.testing.assert_allclose(actual["update_weights"].sum(-1), real.astype("float32"), atol=1e-5)


def test_named_outputs_and_shapes():
    backbone = _backbone(return_details=True)
    out = backbone(random_inputs([7, 3], padded_length=7))
    assert OUTPUT_NAMES | {"halting_probabilities", "update_weights", "iteration_states"} == set(out)
    hidden = TINY["hidden_dim"]
    assert tuple(out["sequence_output"].shape) == (2, 7, hidden)
    assert tuple(out["pooled_output"].shape) == (2, hidden)
    assert tuple(out["halting_probabilities"].shape) == (2, 7, 5)
    assert tuple(out["iteration_states"].shape) == (2, 5, 7, hidden)
    np.testing.assert_array_equal(out["iterations"].numpy()[1, 3:], 0.0)  # padding: N = 0
    assert set(_backbone()(random_inputs([3], padded_length=3))) == OUTPUT_NAMES


def test_iteration_states_end_at_the_sequence_output():
    for execution in ("static", "while"):
        backbone = _backbone(execution=execution, return_details=True)
        spread_halting(backbone, scale=0.01, bias=2.0)  # p ~ .88: all halt at n = 2, the while loop exits early
        out = to_numpy(backbone(random_inputs([8, 5], padded_length=8)))
        assert out["iterations"].max() == 2
        np.testing.assert_allclose(out["iteration_states"][:, -1], out["sequence_output"], atol=1e-6)


@pytest.mark.parametrize("share_weights", [True, pytest.param(False, marks=pytest.mark.slow)])  # unshared: ~18 s
def test_static_while_and_jit_agree(share_weights):
    inputs = random_inputs([10, 6, 2], padded_length=10)
    static = _backbone(execution="static", share_weights=share_weights, return_details=True)
    dynamic = _backbone(execution="while", share_weights=share_weights, return_details=True)
    spread_halting(static)
    dynamic.set_weights(static.get_weights())
    reference = to_numpy(static(inputs))
    for model in (static, dynamic):
        for jit in (False, True):
            out = to_numpy(tf.function(model, jit_compile=jit)(inputs))
            for key in reference:
                np.testing.assert_allclose(out[key], reference[key], atol=1e-5, err_msg=f"{model.execution} jit={jit} {key}")


def test_halting_none_runs_every_real_token_max_iterations():
    backbone = _backbone(halting="none")
    inputs = random_inputs([6, 3], padded_length=6)
    out = to_numpy(backbone(inputs))
    np.testing.assert_array_equal(out["iterations"], inputs["padding_mask"] * 5.0)
    np.testing.assert_array_equal(out["remainders"], 0.0)
    np.testing.assert_array_equal(out["ponder_cost"], [30.0, 15.0])
    expected = numpy_reference.backbone(backbone, inputs)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(out["sequence_output"][real], expected["sequence_output"][real], atol=1e-5)
    assert backbone.encoder.halting_unit is None


def test_unshared_weights_have_max_iterations_blocks():
    shared, unshared = _backbone(), _backbone(share_weights=False)
    assert len(shared.encoder.blocks) == 1 and len(unshared.encoder.blocks) == 5
    block_params = shared.encoder.blocks[0].count_params()
    assert unshared.count_params() - shared.count_params() == 4 * block_params


@pytest.mark.parametrize("share_weights", [True, False])
def test_parity_with_keras_hub_albert(share_weights):
    sizes = {k: TINY[k] for k in ("vocabulary_size", "num_heads", "embedding_dim", "hidden_dim", "intermediate_dim", "max_sequence_length")}
    hub = keras_hub.models.AlbertBackbone(num_layers=5, num_groups=1 if share_weights else 5, **sizes)
    ours = AlbertActBackbone(max_iterations=5, halting="none", share_weights=share_weights, **sizes)
    copy_keras_hub_albert_weights(hub, ours)
    inputs = random_inputs([16, 11, 4], padded_length=16)
    expected, actual = to_numpy(hub(inputs)), to_numpy(ours(inputs))
    real = inputs["padding_mask"].astype(bool)  # keras-hub also updates padding; we freeze it
    np.testing.assert_allclose(actual["sequence_output"][real], expected["sequence_output"][real], atol=1e-5)
    np.testing.assert_allclose(actual["pooled_output"], expected["pooled_output"], atol=1e-5)


def test_keras_hub_copy_rejects_mismatched_layouts():
    hub = keras_hub.models.AlbertBackbone(num_layers=4, num_groups=2, num_heads=2, vocabulary_size=64,
                                          embedding_dim=8, hidden_dim=16, intermediate_dim=32, max_sequence_length=128)
    with pytest.raises(ValueError, match="keras-hub backbone has 2 groups"):
        copy_keras_hub_albert_weights(hub, _backbone())
    hub = keras_hub.models.AlbertBackbone(num_layers=5, num_heads=2, vocabulary_size=99, embedding_dim=8,
                                          hidden_dim=16, intermediate_dim=32, max_sequence_length=128)
    with pytest.raises(ValueError, match=r"token embedding: weight .* has shape \(400, 16\), keras-hub's .* has \(99, 8\)"):
        copy_keras_hub_albert_weights(hub, _backbone())


def test_padding_invariance_32_vs_128():
    backbone = _backbone(max_iterations=6)
    spread_halting(backbone)
    short = random_inputs([20, 13], padded_length=32)
    long = {k: np.pad(v, [(0, 0), (0, 96)]) for k, v in short.items()}  # same tokens, padded to 128
    a, b = to_numpy(backbone(short)), to_numpy(backbone(long))
    for row, length in enumerate([20, 13]):
        for key in ("sequence_output", "iterations", "remainders"):
            np.testing.assert_allclose(a[key][row, :length], b[key][row, :length], atol=1e-5, err_msg=key)
    for key in ("pooled_output", "ponder_cost"):
        np.testing.assert_allclose(a[key], b[key], atol=1e-5, err_msg=key)
    np.testing.assert_array_equal(b["iterations"][:, 32:], 0.0)


def test_gradients_reach_halting_unit_through_remainders_only():
    backbone = _backbone()
    spread_halting(backbone)
    inputs = random_inputs([9, 5], padded_length=9)
    unit_kernel = backbone.encoder.halting_unit.dense.kernel
    with tf.GradientTape(persistent=True) as tape:
        out = backbone(inputs)
        ponder = tf.reduce_mean(out["ponder_cost"])
        iterations = tf.reduce_sum(out["iterations"])
    grad = tape.gradient(ponder, unit_kernel)
    assert grad is not None and np.abs(grad.numpy()).max() > 1e-4
    # N_t is a step function: no variable receives a gradient from it.
    assert all(g is None for g in tape.gradient(iterations, backbone.trainable_variables))
    # And the ponder gradient also reaches the shared block (via p's dependence on y).
    block_grad = tape.gradient(ponder, backbone.encoder.blocks[0].query_dense.kernel)
    assert block_grad is not None and np.abs(block_grad.numpy()).max() > 0


@pytest.mark.parametrize("execution", ["static", "while"])
def test_mixed_bfloat16_keeps_act_state_float32(execution):
    keras.config.set_dtype_policy("mixed_bfloat16")
    backbone = _backbone(execution=execution, return_details=True)
    spread_halting(backbone)
    assert backbone.encoder.blocks[0].compute_dtype == "bfloat16"
    assert backbone.encoder.halting_unit.dense.kernel.dtype == "float32"
    inputs = random_inputs([8, 4], padded_length=8)
    out = backbone(inputs)
    for key in ("sequence_output", "iterations", "remainders", "ponder_cost", "update_weights", "iteration_states"):
        assert out[key].dtype == "float32", key
    real = inputs["padding_mask"].astype("float32")
    np.testing.assert_allclose(out["update_weights"].numpy().sum(-1), real, atol=1e-5)
    # The mixed policy must also train: the halting unit's gradient is finite.
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(backbone(inputs)["ponder_cost"])
    g = tape.gradient(loss, backbone.encoder.halting_unit.dense.kernel)
    assert np.isfinite(g.numpy()).all()


def test_config_round_trip_and_keras_file(tmp_path):
    backbone = _backbone(share_weights=False, execution="while", halting_bias_initializer=0.5)
    spread_halting(backbone)
    rebuilt = assert_config_round_trip(backbone)
    assert rebuilt.get_config()["execution"] == "while"
    assert_keras_file_round_trip(backbone, random_inputs([6, 4], padded_length=6), tmp_path)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(max_iterations=0), r"max_iterations must be an integer in \[1, 64\], got 0"),
        (dict(max_iterations=100000), r"max_iterations must be an integer in \[1, 64\], got 100000"),
        (dict(halting="graves"), r"halting must be one of \['act', 'none'\], got 'graves'"),
        (dict(execution="dense"), r"execution must be one of \['static', 'while', 'sparse', 'gather', 'bucket'\], got 'dense'"),
        (dict(halting_epsilon=1.5), r"halting_epsilon must be a number in \(0, 1\), got 1.5"),
        (dict(vocabulary_size=-3), "vocabulary_size must be an integer >= 1, got -3"),
        (dict(share_weights="yes"), r"share_weights must be one of \[True, False\], got 'yes'"),
        (dict(num_heads=3), r"hidden size \(32\) must be divisible by num_heads \(3\)"),
    ],
)
def test_bad_config_raises_naming_the_value(overrides, message):
    with pytest.raises(ValueError, match=message):
        _backbone(**overrides)
