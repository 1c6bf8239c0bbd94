"""benchmarks.pretrain_speed and benchmarks.update_profile: the scripted depth patterns, the FLOP count
behind MFU, and the profile's parts on a tiny model. No time is asserted."""

import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone
from albert_act.model import gathered_halting, halting
from benchmarks import pretrain_speed
from conftest import TINY, random_inputs


def test_tail_odds_and_depths_hit_their_means_with_a_tail_at_the_cap():
    for share, mean in pretrain_speed.TAIL_MEANS.items():
        odds = pretrain_speed.tail_odds(mean, 6)
        assert sum(odds) == pytest.approx(1.0)
        assert odds[-1] == pytest.approx(0.01)  # the tail at N_max
        assert sum((n + 1) * q for n, q in enumerate(odds)) == pytest.approx(mean, abs=1e-6)
        assert all(a >= b for a, b in zip(odds[:-2], odds[1:-1])), share  # geometric: fewer tokens deeper
        depths = pretrain_speed.tail_depths((64, 128), mean, 6)
        assert depths.shape == (64, 128) and depths.min() == 1 and depths.max() == 6
        assert abs(depths.mean() - mean) <= 1 / depths.size
        assert np.mean(depths == 6) == pytest.approx(0.01, abs=1e-3)
    # share 1/6: all but the tail at 1 (the first English model's 1.05)
    assert np.bincount(pretrain_speed.tail_depths((64, 128), 1.05, 6).ravel()).tolist()[1] >= 8100
    with pytest.raises(ValueError, match="out of reach"):
        pretrain_speed.tail_odds(1.0, 6)  # a tail at 6 makes the mean at least 1.05


def test_halting_probability_halts_at_exactly_that_iteration():
    epsilon = 0.01
    for n_max in (6, 12):
        for n in range(1, n_max + 1):
            p = pretrain_speed.halting_probability(n, n_max, epsilon)
            sums = p * np.arange(1, n_max + 1)
            halted = int(np.argmax(sums >= 1 - epsilon)) + 1 if (sums >= 1 - epsilon).any() else n_max
            assert halted == n, (n, p)
    assert pretrain_speed.halting_bias(2) == pytest.approx(np.log(0.7425 / 0.2575))


@pytest.mark.parametrize("execution", ["static", "gather", "bucket"])
def test_scripted_depth_halts_every_token_where_scripted(execution):
    rng = np.random.default_rng(0)
    lengths = [8, 8, 8]
    inputs = {k: tf.constant(v) for k, v in random_inputs(lengths, 8).items()}
    depths = rng.integers(1, TINY["max_iterations"] + 1, (3, 8))
    backbone = AlbertActBackbone(**TINY, execution=execution)
    original = halting.act_update
    script = pretrain_speed.ScriptedDepth((3, 8), TINY["max_iterations"])
    try:
        run = tf.function(lambda inputs: backbone(inputs)["iterations"])
        for pattern in (depths, np.full((3, 8), 2)):  # one trace serves every pattern
            script.set(pattern)
            np.testing.assert_array_equal(run(inputs).numpy(), pattern)
    finally:
        script.undo()
    assert halting.act_update is original and gathered_halting.act_update is original


def test_layer_flops_by_hand():
    # H 128, F 512, T 128: 8 H^2 = 131072 (q, k, v, output), 4 H F = 262144, 4 T H = 65536
    assert pretrain_speed.layer_flops(128, 512, 128) == 458752
    assert pretrain_speed.layer_flops(768, 3072, 512) == 8 * 768 ** 2 + 4 * 768 * 3072 + 4 * 512 * 768


def test_random_records_parse_as_the_data_tool_writes_them():
    from pipelines.pretraining_dataset import parse_examples

    records, (length, predictions) = pretrain_speed.random_records(4, 128, 8000)
    assert (length, predictions) == (128, 30)  # 1.2 x round(0.2 x 125) = 30, as the data tool's default
    inputs, labels = parse_examples(tf.constant(records), length, predictions)
    assert inputs["token_ids"].shape == (4, 128) and int(tf.reduce_min(inputs["token_ids"][:, 1:])) >= 5
    np.testing.assert_array_equal(tf.reduce_sum(labels["masked_lm_weights"], 1).numpy(), [25] * 4)
    np.testing.assert_array_equal(labels["sentence_order_label"].numpy(), [0, 1, 0, 1])


@pytest.mark.slow  # ~30 s: the demo's sizes, each part traced forward and backward
def test_update_profile_parts_on_the_demo_model():
    from benchmarks import update_profile

    trainer = pretrain_speed.trainer_for("demo", 64, "act", "gather", 8, 4)
    records, shapes = pretrain_speed.random_records(8, 64, trainer.backbone.vocabulary_size)
    from pipelines.pretraining_dataset import parse_examples

    inputs, labels = parse_examples(tf.constant(records), *shapes)
    micro = {k: v[:4] for k, v in inputs.items()}, {k: v[:4] for k, v in labels.items()}
    functions, optimizer = update_profile.part_functions(trainer, micro, tf.reduce_sum(labels["masked_lm_weights"]),
                                                         jit_compile=False)
    assert list(functions) == list(update_profile.PARTS[1:6])
    for name, (forward, forward_backward, args) in functions.items():
        assert np.isfinite(float(forward(*args))), name
        assert np.isfinite(float(forward_backward(*args))), name
    before = [v.numpy().copy() for v in trainer.model.trainable_variables]
    optimizer()
    # learning rate 0: LAMB's update leaves every weight as it was, but it ran (its moments moved)
    for a, v in zip(before, trainer.model.trainable_variables):
        np.testing.assert_array_equal(a, v.numpy())
    assert float(tf.reduce_max(tf.abs(trainer.optimizer._m[0]))) > 0


def test_model_flop_utilisation_and_timed_by_hand():
    # 1.376 MFLOP per token-iteration x 16,384 tokens x 6 iterations in 2 s, over a 100 GFLOP/s peak
    assert pretrain_speed.model_flop_utilisation(1376256, 16384, 6.0, 2.0, 100e9) == pytest.approx(0.6765, abs=1e-4)
    calls = []
    first, median = pretrain_speed.timed(lambda: calls.append(1), 4)
    assert len(calls) == 5 and first >= 0 and median >= 0  # one warm-up call, then 4 timed
