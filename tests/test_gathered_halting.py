"""Training that computes only running tokens (`execution="gather"` and `"bucket"`): the static
loop's losses, outputs and gradients on the same weights; overflows of a capacity; XLA.

Forward numbers against the NumPy reference and the hand-computed cases run for every execution
in tests/test_halting.py; here the pre-training model's losses and every gradient.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone
from albert_act.model.gathered_halting import bucket_widths
from albert_act.model.halting import halting_loop
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from albert_act.train.losses import loss_sums, pretraining_loss
from conftest import TINY, random_inputs, spread_halting
from test_halting import run_scripted, scripted

SLOTTED = ("gather", "bucket")


def _labels(batch, seed=0):
    rng = np.random.default_rng(seed)
    inputs_positions = np.sort(rng.integers(1, 3, (batch, 3)) + np.arange(3) * 3, axis=1)  # inside every row
    return inputs_positions.astype("int32"), {
        "masked_lm_ids": tf.constant(rng.integers(5, 60, (batch, 3)), tf.int32),
        "masked_lm_weights": tf.ones((batch, 3)),
        "sentence_order_label": tf.constant(rng.integers(0, 2, batch), tf.int32),
    }


def _losses_and_gradients(model, inputs, labels):
    """MLM, SOP, ponder cost, N, R and the gradient of MLM + SOP + tau x ponder for every trainable variable."""

    @tf.function
    def run(inputs):
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            sums = loss_sums(outputs, labels)
            losses = pretraining_loss(sums, sums["mlm_weight"], sums["examples"], 0.01)
        gradients = tape.gradient(losses["loss"], model.trainable_variables)
        values = {k: losses[k] for k in ("mlm_loss", "sop_loss", "ponder_cost")}
        values.update(iterations=outputs["iterations"], remainders=outputs["remainders"],
                      overflows=outputs["overflows"])
        return values, [tf.convert_to_tensor(g) for g in gradients]

    values, gradients = run(inputs)
    return {k: v.numpy() for k, v in values.items()}, [g.numpy() for g in gradients]


def _relative(actual, expected, floor):
    return float(np.max(np.abs(actual - expected)) / max(float(np.max(np.abs(expected))), floor))


# ~20-30 s each (two models traced with their gradients): all with -m slow; the default run compares gather's
# losses, KL and gradients with the static loop's in test_halting_objectives (every training execution).
CASES = [pytest.param(execution, case, marks=pytest.mark.slow)
         for execution in SLOTTED for case in ("shared", "unshared", "fixed depth", "all halt at 1", "all reach N_max")]


@pytest.mark.parametrize("execution, case", CASES)
def test_losses_outputs_and_gradients_equal_the_static_loop(execution, case):
    overrides = {"unshared": dict(share_weights=False), "fixed depth": dict(halting="none")}.get(case, {})
    lengths = [16, 3, 16, 9, 1, 12]  # padding in most rows, one row of one token
    inputs = {k: tf.constant(v) for k, v in random_inputs(lengths, padded_length=16, seed=5).items()}
    positions, labels = _labels(len(lengths))
    inputs["masked_positions"] = tf.constant(positions)
    results = {}
    for name in ("static", execution):
        keras.utils.set_random_seed(0)
        backbone = AlbertActBackbone(**TINY, **overrides, execution=name)
        if backbone.encoder.halting_unit is not None:
            spread_halting(backbone)
            unit = backbone.encoder.halting_unit.dense
            if case in ("all halt at 1", "all reach N_max"):  # p = 0.9997 or 0.018 for every token
                unit.kernel.assign(tf.zeros_like(unit.kernel))
                unit.bias.assign([8.0 if case == "all halt at 1" else -4.0])
        results[name] = _losses_and_gradients(AlbertActPretrainingModel(backbone), inputs, labels)
        variables = [v.path for v in backbone.trainable_variables]
    (expected, expected_grads), (actual, actual_grads) = results["static"], results[execution]
    real = inputs["padding_mask"].numpy() == 1
    n = expected["iterations"][real]
    expected_depths = {"all halt at 1": {1.0}, "all reach N_max": {5.0}, "fixed depth": {5.0}}.get(case)
    if expected_depths:
        assert set(np.unique(n)) == expected_depths
    else:  # varied depths, or the case proves little
        assert len(np.unique(n)) >= 3
    for key in ("mlm_loss", "sop_loss", "ponder_cost", "iterations", "remainders"):
        assert _relative(actual[key], expected[key], 1e-6) <= 1e-5, key
    np.testing.assert_array_equal(actual["overflows"], 0)
    # Relative to each gradient's own size; a gradient that is 0 in exact arithmetic (the key bias:
    # softmax ignores it) is float noise, compared with the largest gradient of the model instead.
    scale = max(float(np.max(np.abs(g))) for g in expected_grads)
    for path, a, b in zip(variables, actual_grads, expected_grads):
        assert _relative(a, b, 1e-3 * scale) <= 1e-5, path


def test_halted_tokens_get_gradient_through_the_key_value_cache():
    # A token that halts at iteration 1 still shapes later iterations as a key/value: its initial
    # state's gradient must equal the static loop's, which is nonzero only through attention.
    inputs = {k: tf.constant(v) for k, v in random_inputs([10], padded_length=10, seed=2).items()}
    grads, depth = {}, None
    for execution in ("static", "gather", "bucket"):
        keras.utils.set_random_seed(1)
        backbone = AlbertActBackbone(**TINY, execution=execution)
        spread_halting(backbone, seed=4)
        hidden = backbone.embeddings(inputs["token_ids"], inputs["segment_ids"])
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            out = backbone.encoder(hidden, inputs["padding_mask"])
            target = tf.reduce_sum(out["sequence_output"] * tf.sin(tf.range(32, dtype=tf.float32)))
        grads[execution], depth = tape.gradient(target, hidden).numpy(), out["iterations"].numpy()[0]
    early = int(np.argmin(depth))
    assert depth[early] < depth.max()  # it halted before others
    # Relative to the gradient's own size (up to ~16 here): float32 noise of the CPU's kernels (with
    # AVX-512 and oneDNN one element of 320 differed by 1.1e-5) must not decide it.
    scale = float(np.max(np.abs(grads["static"])))
    for execution in ("gather", "bucket"):
        assert np.max(np.abs(grads[execution] - grads["static"])) <= 1e-5 * scale, execution


def test_bucket_widths():
    assert bucket_widths(128) == [0, 4, 8, 16, 32, 48, 64, 80, 96, 112, 128]  # halvings, and multiples of 16
    assert bucket_widths(512) == [0, 4, 8, 16, 32, 64, *range(128, 513, 64)]  # multiples of 512 / 8
    assert bucket_widths(16) == [0, 4, 8, 16]
    assert bucket_widths(64, capacity=20) == [0, 3, 5, 10, 16, 20]  # a capacity is the largest width
    assert bucket_widths(3) == [0, 3]


def test_overflow_halts_the_act_way_and_is_counted():
    # 5 tokens, p = 0.1 at every iteration, capacity 2: after iteration 1 (every token, dense),
    # tokens 2-4 do not fit. They halt at n = 2 with R = 1 - 0.1 on their state (y = h), so
    # h^2 = h^1 = 0.1 (y^1 = h^0 + 1 = 1, lam 0.1), E = 1 x 0.1 + 2 x 0.9 = 1.9. Tokens 0-1 run to the cap.
    p = np.full((1, 5, 4), 0.1, "float32")
    out = run_scripted(p, np.ones((1, 5)), n_max=4, execution="bucket", capacity=2)
    np.testing.assert_array_equal(out["iterations"], [[4, 4, 2, 2, 2]])
    np.testing.assert_allclose(out["remainders"], [[0.7, 0.7, 0.9, 0.9, 0.9]], atol=1e-6)
    np.testing.assert_allclose(out["expected_iterations"][0, 2:], 1.9, atol=1e-6)
    np.testing.assert_allclose(out["sequence_output"][0, 2:, 0], 0.1, atol=1e-6)
    np.testing.assert_allclose(out["update_weights"].sum(-1), 1.0, atol=1e-6)  # every halting mass sums to 1
    np.testing.assert_array_equal(out["overflows"], [3])
    # With room for every token, the same case is the static loop's.
    exact = run_scripted(p, np.ones((1, 5)), n_max=4, execution="bucket", capacity=5)
    static = run_scripted(p, np.ones((1, 5)), n_max=4, execution="static")
    np.testing.assert_array_equal(exact["overflows"], [0])
    np.testing.assert_allclose(exact["sequence_output"], static["sequence_output"], atol=1e-6)


def test_dynamic_form_runs_without_a_static_length():
    # A signature of unknown length (a serving signature, Keras' symbolic build): gather works,
    # and bucket falls back to dynamic widths.
    layer, halting_fn = scripted(np.full((2, 6, 3), 0.4, "float32"))
    for execution in SLOTTED:
        fn = tf.function(lambda h, m, e=execution: halting_loop(h, m, layer, halting_fn, 3, execution=e),
                         input_signature=[tf.TensorSpec([None, None, 2]), tf.TensorSpec([None, None], tf.int32)])
        h = np.stack([np.zeros((2, 6)), np.broadcast_to(np.arange(6.0), (2, 6))], -1).astype("float32")
        out = fn(h, np.ones((2, 6), "int32"))
        np.testing.assert_array_equal(out["iterations"].numpy(), 3)


def test_pretraining_chooses_an_execution_xla_compiles():
    from albert_act.train.pretraining_config import PretrainConfig

    def config(**kwargs):
        return PretrainConfig(train_files=[], eval_files=[], model_dir="run", **kwargs).resolved()

    assert (config().execution, config().jit_compile) == ("gather", False)  # the demo's default
    assert config(jit_compile=True, execution="static").execution == "static"
    # One answer, whoever chose gather (the preset or the user): refused under XLA, not swapped.
    for asked in (dict(jit_compile=True), dict(execution="gather", jit_compile=True)):
        with pytest.raises(ValueError, match="--execution gather has dynamic shapes, which XLA does not compile"):
            config(**asked)


def test_every_switch_of_widths_reads_through_an_optimization_barrier():
    """What keeps bucket's XLA compile short (docs/pretraining.md): the bridge's value inference,
    asked of each input of a Case op, stops at an XlaOptimizationBarrier instead of walking back
    through every earlier switch. Checked on the graph, forward and backward: no timing."""
    backbone = AlbertActBackbone(**{**TINY, "max_iterations": 3}, execution="bucket")
    inputs = {k: tf.constant(v) for k, v in random_inputs([8, 5], 8).items()}
    backbone(inputs)

    @tf.function
    def step(inputs):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(backbone(inputs, training=True)["sequence_output"])
        return tape.gradient(loss, backbone.trainable_variables)

    graph = step.get_concrete_function(inputs).graph
    cases = [op for op in graph.get_operations() if op.type in ("Case", "StatelessCase")]
    assert len(cases) == 4  # 2 switched iterations, forward and backward
    assert all(case.inputs[0].op.type == "XlaOptimizationBarrier" for case in cases)  # the branch index
    for case in cases:  # walking back from any input reaches no earlier switch without a barrier
        seen, todo = set(), [tensor.op for tensor in case.inputs]
        while todo:
            op = todo.pop()
            if op.name in seen or op.type == "XlaOptimizationBarrier":
                continue
            seen.add(op.name)
            assert op.type not in ("Case", "StatelessCase"), f"{case.name} reads {op.name} without a barrier"
            todo.extend(tensor.op for tensor in op.inputs)


@pytest.mark.slow  # ~30 s: two models traced with their gradients at 48 positions
def test_bucket_fine_widths_equal_the_static_loop():
    # At 48 positions the widths are 0 3 6 12 16 24 32 48: some iterations must pick a multiple of
    # 16 that is not a halving (16 or 32), else the case proves nothing about them.
    lengths = [48, 40, 33, 48]
    inputs = {k: tf.constant(v) for k, v in random_inputs(lengths, padded_length=48, seed=3).items()}
    positions, labels = _labels(len(lengths))
    inputs["masked_positions"] = tf.constant(positions)
    results = {}
    for name in ("static", "bucket"):
        keras.utils.set_random_seed(0)
        backbone = AlbertActBackbone(**TINY, execution=name)
        spread_halting(backbone, seed=1, scale=0.3, bias=1.5)  # the fullest row runs 48, 27, 23, 16 tokens
        results[name] = _losses_and_gradients(AlbertActPretrainingModel(backbone), inputs, labels)
        variables = [v.path for v in backbone.trainable_variables]
    (expected, expected_grads), (actual, actual_grads) = results["static"], results["bucket"]
    widths = bucket_widths(48)
    assert widths == [0, 3, 6, 12, 16, 24, 32, 48]
    running = [int(np.max(np.sum(expected["iterations"] > i, axis=1))) for i in range(1, TINY["max_iterations"])]
    chosen = [next(w for w in widths if w >= needed) for needed in running]
    assert {16, 32} <= set(chosen), (running, chosen)
    for key in ("mlm_loss", "sop_loss", "ponder_cost", "iterations", "remainders"):
        assert _relative(actual[key], expected[key], 1e-6) <= 1e-5, key
    scale = max(float(np.max(np.abs(g))) for g in expected_grads)
    for path, a, b in zip(variables, actual_grads, expected_grads):
        assert _relative(a, b, 1e-3 * scale) <= 1e-5, path
