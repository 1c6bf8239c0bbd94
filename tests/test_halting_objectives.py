"""What shapes the halting distribution in pre-training, against NumPy restatements on hand-sized
cases: PonderNet's per-iteration MLM objective, the KL term toward a truncated geometric prior, the
halting unit's own LAMB settings, and the depth statistics printed at every held-out evaluation."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from albert_act.train.lamb import Lamb
from albert_act.train.losses import Objective, geometric_prior, loss_sums, pretraining_loss
from albert_act.train.pretraining_config import PretrainConfig
from albert_act.train.pretraining_summaries import depth_line, depth_spread, one_depth_warning
from conftest import TINY, random_inputs, spread_halting
from test_lamb import numpy_lamb


def _log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


# --- the prior ------------------------------------------------------------------------------------

def test_geometric_prior_by_hand():
    # N_max 2: g = (q, 1 - q), mean 2 - q; a mean of 1.5 is q = 0.5.
    np.testing.assert_allclose(geometric_prior(1.5, 2), [0.5, 0.5], atol=1e-12)
    # N_max 3: mean q + 2q(1-q) + 3(1-q)^2 = 3 - 3q + q^2; 1.75 -> q = 0.5: g = (.5, .25, .25).
    np.testing.assert_allclose(geometric_prior(1.75, 3), [0.5, 0.25, 0.25], atol=1e-12)
    for mean, n_max in ((3.0, 6), (1.2, 6), (5.5, 6), (8.0, 12)):
        g = geometric_prior(mean, n_max)
        assert abs(g.sum() - 1) < 1e-12 and abs((g * np.arange(1, n_max + 1)).sum() - mean) < 1e-9
        assert np.all(np.diff(g[:-1]) < 0)  # geometric below the cap
    np.testing.assert_allclose(geometric_prior(1.0, 4), [1, 0, 0, 0], atol=1e-9)
    with pytest.raises(ValueError, match=r"prior's mean must be in \[1, max_iterations=6\], got 7"):
        geometric_prior(7, 6)


# --- the losses, against NumPy --------------------------------------------------------------------

def _hand_outputs():
    """Two sequences, N_max 3, two masked positions each (the second of sequence 2 unweighted),
    vocabulary 4; halting weights lam that sum to 1 per real token (token 3 of sequence 2 is padding)."""
    rng = np.random.default_rng(3)
    lam = np.array([[[0.2, 0.8, 0.0], [1.0, 0.0, 0.0], [0.3, 0.3, 0.4]],
                    [[0.5, 0.25, 0.25], [0.1, 0.9, 0.0], [0.0, 0.0, 0.0]]], "float32")  # (B, T, N)
    positions = np.array([[0, 2], [1, 0]])
    outputs = {"mlm_logits": rng.normal(size=(2, 2, 4)).astype("float32"),
               "sop_logits": rng.normal(size=(2, 2)).astype("float32"),
               "ponder_cost": np.array([6.0, 3.5], "float32"),
               "mlm_iteration_logits": rng.normal(size=(2, 3, 2, 4)).astype("float32"),  # (B, N, P, V)
               "mlm_iteration_weights": np.take_along_axis(lam, positions[..., None], axis=1),  # (B, P, N)
               "halting_weights": lam}
    labels = {"masked_lm_ids": np.array([[1, 3], [2, 0]]), "masked_lm_weights": np.array([[1, 1], [1, 0]], "float32"),
              "sentence_order_label": np.array([1, 0])}
    return outputs, labels


def test_per_iteration_mlm_and_kl_match_numpy():
    outputs, labels = _hand_outputs()
    weights = labels["masked_lm_weights"]
    # sum_n lam_t^n xent(h_t^n) per masked position, then the weighted mean over positions.
    xent = -np.take_along_axis(_log_softmax(outputs["mlm_iteration_logits"]),
                               np.broadcast_to(labels["masked_lm_ids"][:, None, :, None], (2, 3, 2, 1)), -1)[..., 0]
    per_position = (np.transpose(outputs["mlm_iteration_weights"], (0, 2, 1)) * xent).sum(1)  # (B, P)
    expected_objective = (per_position * weights).sum() / weights.sum()
    # KL(lam_t || g) over real tokens (0 log 0 = 0), the mean per sequence, then over sequences.
    g = geometric_prior(2.0, 3)
    lam = outputs["halting_weights"].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(lam > 0, lam * np.log(lam / g), 0.0).sum(-1)  # (B, T)
    expected_kl = (kl[0].mean() + kl[1, :2].mean()) / 2
    final = -np.take_along_axis(_log_softmax(outputs["mlm_logits"]), labels["masked_lm_ids"][..., None], -1)[..., 0]
    expected_final = (final * weights).sum() / weights.sum()

    sums = loss_sums(outputs, labels, "per_iteration", prior=g)
    losses = {k: float(v) for k, v in pretraining_loss(sums, sums["mlm_weight"], sums["examples"], 0.01, 0.5).items()}
    np.testing.assert_allclose(losses["mlm_objective"], expected_objective, rtol=1e-5)
    np.testing.assert_allclose(losses["mlm_loss"], expected_final, rtol=1e-5)  # reported: the final state's
    np.testing.assert_allclose(losses["kl"], expected_kl, rtol=1e-5)
    np.testing.assert_allclose(losses["kl_loss"], 0.5 * expected_kl, rtol=1e-5)
    np.testing.assert_allclose(losses["loss"], expected_objective + losses["sop_loss"] + 0.01 * 4.75 + 0.5 * expected_kl,
                               rtol=1e-5)
    # ACT's own objective: the final state's loss is what is minimized, and no KL.
    final_sums = loss_sums(outputs, labels)
    final_losses = pretraining_loss(final_sums, final_sums["mlm_weight"], final_sums["examples"], 0.01)
    np.testing.assert_allclose(float(final_losses["mlm_objective"]), expected_final, rtol=1e-5)
    assert float(final_sums["kl_sum"]) == 0.0


def test_kl_is_zero_at_the_prior_and_positive_elsewhere():
    g = geometric_prior(2.0, 3).astype("float32")
    at_prior = {"halting_weights": np.broadcast_to(g, (1, 2, 3)).copy()}
    from albert_act.train.losses import halting_kl

    assert abs(float(halting_kl(at_prior, g)[0])) < 1e-6
    shallow = {"halting_weights": np.array([[[1.0, 0.0, 0.0]]], "float32")}  # N = 1: KL = -log g_1
    np.testing.assert_allclose(float(halting_kl(shallow, g)[0]), -np.log(g[0]), rtol=1e-5)


def test_per_iteration_objective_moves_halting_toward_the_iteration_that_predicts_best():
    # One masked token, N_max 2, lam = (p, 1 - p). Iteration 2 predicts better (lower xent), so
    # d objective / d p = xent_1 - xent_2 > 0: lowering p (halting later) lowers the loss.
    logits = tf.Variable(np.array([0.0]), dtype=tf.float32)  # the halting logit
    good, bad = np.array([5.0, 0.0]), np.array([0.0, 5.0])  # class 0 is the target
    iteration_logits = np.stack([bad, good])[None, :, None, :].astype("float32")  # (1, N=2, P=1, V=2)
    labels = {"masked_lm_ids": np.array([[0]]), "masked_lm_weights": np.ones((1, 1), "float32"),
              "sentence_order_label": np.array([0])}
    with tf.GradientTape() as tape:
        p = tf.sigmoid(logits)
        lam = tf.stack([p, 1 - p], axis=-1)[None]  # (1, P=1, N=2)
        outputs = {"mlm_logits": iteration_logits[:, 1], "sop_logits": np.zeros((1, 2), "float32"),
                   "ponder_cost": np.zeros(1, "float32"), "mlm_iteration_logits": iteration_logits,
                   "mlm_iteration_weights": lam}
        sums = loss_sums(outputs, labels, "per_iteration")
        loss = pretraining_loss(sums, sums["mlm_weight"], sums["examples"], 0.0)["loss"]
    gradient = float(tape.gradient(loss, logits)[0])
    xent_bad, xent_good = -_log_softmax(bad)[0], -_log_softmax(good)[0]
    np.testing.assert_allclose(gradient, 0.25 * (xent_bad - xent_good), rtol=1e-5)  # dp/dlogit = 1/4 at 0


# --- the model: iteration outputs, differentiable in every training execution ------------------------

def _labels(batch):
    rng = np.random.default_rng(0)
    positions = np.sort(rng.integers(1, 3, (batch, 3)) + np.arange(3) * 3, axis=1).astype("int32")
    return positions, {"masked_lm_ids": tf.constant(rng.integers(5, 60, (batch, 3)), tf.int32),
                       "masked_lm_weights": tf.ones((batch, 3)),
                       "sentence_order_label": tf.constant(rng.integers(0, 2, batch), tf.int32)}


def _objective_and_gradients(execution, inputs, labels, objective):
    keras.utils.set_random_seed(0)
    backbone = AlbertActBackbone(**TINY, execution=execution, return_details=True)
    spread_halting(backbone)
    model = AlbertActPretrainingModel(backbone, iteration_outputs=True)

    @tf.function
    def run(inputs):
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            sums = objective.sums(outputs, labels)
            losses = objective.losses(sums, sums["mlm_weight"], sums["examples"], 0.01)
        return losses, outputs, [tf.convert_to_tensor(g) for g in tape.gradient(losses["loss"], model.trainable_variables)]

    losses, outputs, gradients = run(inputs)
    return {k: float(v) for k, v in losses.items()}, outputs, [g.numpy() for g in gradients]


@pytest.mark.parametrize("execution", [pytest.param(e, marks=pytest.mark.slow) for e in ("gather", "bucket")])  # (~15 s
# each; the static loop's objectives are tested against the NumPy statement by default)
def test_per_iteration_objective_and_kl_are_the_static_loops_in_every_training_execution(execution):
    lengths = [16, 3, 16, 9]
    inputs = {k: tf.constant(v) for k, v in random_inputs(lengths, padded_length=16, seed=5).items()}
    positions, labels = _labels(len(lengths))
    inputs["masked_positions"] = tf.constant(positions)
    objective = Objective("per_iteration", 0.3, tuple(geometric_prior(2.5, TINY["max_iterations"])))
    expected, outputs, expected_grads = _objective_and_gradients("static", inputs, labels, objective)
    actual, _, actual_grads = _objective_and_gradients(execution, inputs, labels, objective)
    real = inputs["padding_mask"].numpy() == 1
    assert len(np.unique(outputs["iterations"].numpy()[real])) >= 3  # depths vary: the weights matter
    # The iteration outputs' weights are the halting distribution at the masked positions.
    at_real = np.take_along_axis(real, positions, axis=1)  # masked positions on real tokens (row 2 has 3)
    np.testing.assert_allclose(outputs["mlm_iteration_weights"].numpy().sum(-1)[at_real], 1.0, atol=1e-6)
    # At each token's last iteration and after it, its state is the final one: the same logits.
    n = outputs["iterations"].numpy().astype(int)
    last = np.take_along_axis(n, positions, axis=1) - 1  # (B, P)
    at_last = np.take_along_axis(outputs["mlm_iteration_logits"].numpy(), last[:, None, :, None], axis=1)[:, 0]
    scale = float(np.abs(outputs["mlm_logits"].numpy()).max())
    assert np.abs(at_last - outputs["mlm_logits"].numpy()).max() <= 1e-5 * scale
    for key in ("mlm_objective", "mlm_loss", "kl", "loss"):
        assert abs(actual[key] - expected[key]) <= 1e-5 * abs(expected[key]), key
    assert expected["kl"] > 0 and expected["mlm_objective"] != expected["mlm_loss"]
    largest = max(float(np.abs(g).max()) for g in expected_grads)
    for a, b in zip(actual_grads, expected_grads):
        assert np.abs(a - b).max() <= 1e-5 * max(float(np.abs(b).max()), 1e-3 * largest)


def test_iteration_outputs_need_the_details():
    backbone = AlbertActBackbone(**TINY)
    with pytest.raises(ValueError, match="iteration_outputs needs a backbone built with return_details=True"):
        AlbertActPretrainingModel(backbone, iteration_outputs=True)


# --- the halting unit's optimizer ----------------------------------------------------------------------

def test_learning_rate_scale_and_exclusion_of_the_halting_unit():
    rng = np.random.default_rng(1)
    shapes = {"encoder/halting_unit/dense/kernel": (4, 1), "encoder/block/kernel": (4, 3)}
    initial = {k: rng.normal(size=s).astype("float32") for k, s in shapes.items()}
    gradients = [{k: rng.normal(size=s).astype("float32") for k, s in shapes.items()} for _ in range(3)]
    variables = {k: keras.Variable(v) for k, v in initial.items()}
    for name, variable in variables.items():
        variable._path = name
    optimizer = Lamb(learning_rate=0.01, exclude_from_weight_decay=("bias", "halting_unit"),
                     exclude_from_layer_adaptation=("bias", "halting_unit"), learning_rate_scales={"halting_unit": 3.0})
    for step in gradients:
        optimizer.apply_gradients([(step[k], variables[k]) for k in shapes])
    halting, block = shapes
    # The halting kernel: lr 0.03, no trust ratio, no decay; the block's kernel: ALBERT's LAMB at 0.01.
    expected = numpy_lamb({halting: initial[halting]}, [{halting: g[halting]} for g in gradients], 0.03, 3,
                          {halting}, {halting})
    np.testing.assert_allclose(variables[halting].numpy(), expected[halting], rtol=1e-5, atol=1e-6)
    expected = numpy_lamb({block: initial[block]}, [{block: g[block]} for g in gradients], 0.01, 3, set(), set())
    np.testing.assert_allclose(variables[block].numpy(), expected[block], rtol=1e-5, atol=1e-6)
    assert Lamb.from_config(optimizer.get_config()).learning_rate_scales == {"halting_unit": 3.0}


# --- the depth statistics of every held-out evaluation ------------------------------------------------

def test_first_halting_logits_are_the_first_iterations():
    keras.utils.set_random_seed(0)
    backbone = AlbertActBackbone(**TINY, return_details=True)
    spread_halting(backbone)
    inputs = random_inputs([7, 4], padded_length=7, seed=1)
    logits = backbone.first_halting_logits(inputs).numpy()
    p = backbone(inputs)["halting_probabilities"].numpy()[..., 0]
    real = inputs["padding_mask"] == 1
    np.testing.assert_allclose(1 / (1 + np.exp(-logits[real])), p[real], rtol=1e-5, atol=1e-7)
    assert logits[real].std() > 0.1  # tokens differ: the comparison means something
    assert AlbertActBackbone(**TINY, halting="none").first_halting_logits(inputs) is None


def _evaluation(histogram, std, logit_std=0.1):
    counts = np.array(histogram)
    return {"iterations": {"unmasked": {"histogram": [0, *counts], "std": std}},
            "halting_logit": {"mean": -0.4, "std": logit_std}, "halting_unit": {"kernel_norm": 0.215, "bias": -0.4}}


def test_depth_spread_line_and_warning():
    spread = depth_spread(_evaluation([0, 5, 940, 55, 0, 0], std=0.23))
    np.testing.assert_allclose(spread["shares"], [0, 0.005, 0.94, 0.055, 0, 0])
    line = depth_line(spread)
    assert "N = 2 0%, 3 94%, 4 6%; std N 0.23" in line.replace("0.5%", "0%")
    assert "first-iteration halting logit -0.40 (std over pieces 0.10); halting unit |w| 0.215, b -0.40" in line
    warning = one_depth_warning(spread)
    assert warning.startswith("warning: 94.0% of the unmasked pieces ran exactly 3 iteration(s)")
    assert one_depth_warning(depth_spread(_evaluation([100, 300, 400, 150, 50, 0], std=1.0))) is None


def test_halting_settings_are_refused_where_they_mean_nothing():
    base = dict(train_files=["a"], eval_files=["b"], model_dir="m")
    with pytest.raises(ValueError, match="mlm_objective per_iteration shapes the halting distribution of ACT; "
                                         "--halting none"):
        PretrainConfig(**base, halting="none", mlm_objective="per_iteration")
    with pytest.raises(ValueError, match="kl_weight 0.1 pulls .* give --target_iterations"):
        PretrainConfig(**base, kl_weight=0.1)
    config = PretrainConfig(**base, kl_weight=0.1, target_iterations=3).resolved()
    assert Objective.of(config, 6).prior is not None and Objective.of(config, 6).iteration_outputs
    assert not Objective.of(PretrainConfig(**base).resolved(), 6).iteration_outputs


# --- the depth target's controller ---------------------------------------------------------------------

def test_steered_tau_by_hand():
    from albert_act.train.ponder import SIGNED_GAIN, SIGNED_RATE, TARGET_RATE, steered_tau

    # tau (the default): log tau moves by TARGET_RATE per iteration of gap; never below TAU_RANGE's floor.
    np.testing.assert_allclose(steered_tau(1e-3, 0.5, "tau", 0.2), (1e-3 * np.exp(TARGET_RATE * 0.5), 0.0))
    np.testing.assert_allclose(steered_tau(0.0, 1.0, "tau", 0.2), (1e-7 * np.exp(TARGET_RATE), 0.0))
    assert steered_tau(1e-7, -1.0, "tau", 0.2) == (1e-7, 0.0)
    assert steered_tau(-1.0, 2.0, "tau", 0.2) == (-1.0, 0.0)  # auto's not-yet-calibrated tau waits
    # signed: an integral and a proportional part, in units of auto's tau; they cross 0 (depth below
    # the target is rewarded), and the proportional part turns at once when the gap does.
    np.testing.assert_allclose(steered_tau(1e-3, -0.5, "signed", 0.2),
                               (1e-3 - SIGNED_RATE * 0.5 * 0.2, -SIGNED_GAIN * 0.5 * 0.2))
    below, above = steered_tau(0.0, -1.0, "signed", 0.2), steered_tau(0.0, 1.0, "signed", 0.2)
    assert sum(below) < 0 < sum(above)
    assert steered_tau(0.9, 100.0, "signed", 1.0) == (1.0, 1.0)  # bounded


def test_the_target_holds_the_mean_of_the_pieces_named():
    """--target_pieces unmasked: tau is steered by the ordinary pieces' mean depth alone ([CLS], [SEP] and
    the pieces selected for prediction left out), computed here by hand from one batch."""
    from albert_act.analysis import token_types
    from albert_act.train.ponder import held_depth
    from albert_act.train.pretraining_summaries import depth_sums_of

    cls, sep, mask = token_types.CLS_ID, token_types.SEP_ID, token_types.MASK_ID
    tokens = np.array([[cls, 7, mask, 9, sep, 11, sep, 0]])  # position 2 and 5 are selected, 7 is padding
    iterations = np.array([[6, 2, 6, 3, 1, 5, 2, 0]], np.float32)
    inputs = {"token_ids": tokens, "padding_mask": (tokens > 0).astype("int32"), "masked_positions": np.array([[2, 5]])}
    labels = {"masked_lm_weights": np.array([[1.0, 1.0]]), "masked_lm_ids": np.array([[8, 11]])}
    depth = depth_sums_of({"iterations": iterations, "expected_iterations": iterations}, inputs, labels)
    result = {"iterations": token_types.summarize(np.asarray(depth).sum(0))}  # as `summarize` makes it
    assert held_depth(result, "unmasked") == pytest.approx((2 + 3) / 2)  # pieces 7 and 9
    assert held_depth(result, "all") == pytest.approx((6 + 2 + 6 + 3 + 1 + 5 + 2) / 7)
    assert held_depth(result, None) == held_depth(result, "all")  # a run saved before the setting
    with pytest.raises(ValueError, match="--target_pieces unmasked says whose mean depth --target_iterations holds"):
        PretrainConfig(train_files=["a"], eval_files=["b"], model_dir="m", target_pieces="unmasked")


def test_signed_control_needs_a_target_and_a_numeric_start():
    base = dict(train_files=["a"], eval_files=["b"], model_dir="m", target_control="signed")
    with pytest.raises(ValueError, match="give --target_iterations and a number for --tau"):
        PretrainConfig(**base, ponder_cost_weight=0.0)
    with pytest.raises(ValueError, match="not 'auto'"):
        PretrainConfig(**base, target_iterations=2.0, ponder_cost_weight="auto")
    PretrainConfig(**base, target_iterations=2.0, ponder_cost_weight=0.0)


def test_signed_tau_is_in_force_below_zero():
    from albert_act.model.halting import ponder_weight_in_force

    assert float(ponder_weight_in_force(-0.002, "act", signed=True)) == pytest.approx(-0.002)
    assert float(ponder_weight_in_force(-0.002, "act")) == 0.0
    assert float(ponder_weight_in_force(-0.002, "none", signed=True)) == 0.0


# --- the served depth knob -----------------------------------------------------------------------------

@pytest.mark.parametrize("execution", ["static", "while", "sparse"])
def test_an_iteration_cap_is_the_same_weights_at_a_smaller_n_max(execution):
    keras.utils.set_random_seed(0)
    deep = AlbertActBackbone(**TINY, execution=execution)
    spread_halting(deep, bias=-1.5)
    inputs = random_inputs([9, 5, 9], padded_length=9, seed=2)
    assert deep(inputs)["iterations"].numpy().max() > 2  # the cap will matter
    shallow = AlbertActBackbone(**{**TINY, "max_iterations": 2}, execution=execution)
    shallow.set_weights(deep.get_weights())
    expected, actual = shallow(inputs), deep.capped(inputs, tf.constant(2))
    for key in ("sequence_output", "pooled_output", "iterations", "remainders", "expected_iterations", "ponder_cost"):
        np.testing.assert_allclose(actual[key].numpy(), expected[key].numpy(), atol=1e-5, err_msg=key)
    uncapped = deep.capped(inputs, 99)
    np.testing.assert_allclose(uncapped["sequence_output"].numpy(), deep(inputs)["sequence_output"].numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="iteration_cap is a serving knob"):
        AlbertActBackbone(**TINY, execution="gather").capped(inputs, 2)


def test_final_and_halting_moves_only_the_halting_distribution():
    # The held mixture adds sum_n lam_n xent_n to the final loss, but its gradient reaches lam alone:
    # d/d logits of the iteration outputs is 0, d/d p is that of the mixture.
    outputs, labels = _hand_outputs()
    iteration_logits = tf.Variable(outputs["mlm_iteration_logits"])
    weights = tf.Variable(outputs["mlm_iteration_weights"])
    with tf.GradientTape(persistent=True) as tape:
        held = loss_sums({**outputs, "mlm_iteration_logits": iteration_logits, "mlm_iteration_weights": weights},
                         labels, "final_and_halting")
        mixed = loss_sums({**outputs, "mlm_iteration_logits": iteration_logits, "mlm_iteration_weights": weights},
                          labels, "per_iteration")
    assert tape.gradient(held["mlm_objective_sum"], iteration_logits) is None or \
        float(tf.reduce_max(tf.abs(tape.gradient(held["mlm_objective_sum"], iteration_logits)))) == 0.0
    np.testing.assert_allclose(tape.gradient(held["mlm_objective_sum"], weights).numpy(),
                               tape.gradient(mixed["mlm_objective_sum"], weights).numpy(), rtol=1e-6)
    np.testing.assert_allclose(float(held["mlm_objective_sum"]),
                               float(held["mlm_loss_sum"]) + float(mixed["mlm_objective_sum"]), rtol=1e-6)


def test_the_halting_signal_weight_scales_the_held_mixture_alone():
    outputs, labels = _hand_outputs()
    full = loss_sums(outputs, labels, "final_and_halting")
    tenth = loss_sums(outputs, labels, "final_and_halting", halting_signal_weight=0.1)
    mixture = float(full["mlm_objective_sum"]) - float(full["mlm_loss_sum"])
    np.testing.assert_allclose(float(tenth["mlm_objective_sum"]) - float(tenth["mlm_loss_sum"]), 0.1 * mixture, rtol=1e-5)
    assert mixture > 0
