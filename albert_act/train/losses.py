"""The losses, in one place: pre-training (MLM + SOP + tau * ponder [+ beta * KL]) and fine-tuning.

    loss = sum(w * xent(mlm)) / sum(w)          weighted mean over masked positions
         + mean over sequences of xent(sop)
         + tau * mean over sequences of ponder_cost
         + beta * mean over sequences of KL       (optional: `kl_weight`)

The MLM term comes in two forms (`mlm_objective`):
- "final": the cross-entropy of the final state h^{N_t} (ACT's: the loss of the mixture);
- "per_iteration": PonderNet's (Banino et al. 2021) mixture of losses, the cross-entropy of every
  iteration's state h^n weighted by the token's halting distribution,
      sum_n lam_t^n xent(h_t^n)        (h^n = h^{N_t} for n > N_t, where lam_t^n = 0),
  so d loss / d lam_t^n is that iteration's own loss: a token whose later states predict better
  is pushed to put its weight there (to halt later), token by token. The head learns from the
  weighted states too, so it fits best the iterations that already carry most weight, which then
  predict best: on the demo [MASK] inputs came to halt earlier than the words around them;
- "final_and_halting": the final state's cross-entropy, plus the mixture with every iteration's
  cross-entropy held constant (stop_gradient): d loss / d lam_t^n is still that iteration's loss,
  so each token's halting distribution is pushed toward the iterations that predict its target
  best, but the head and the states learn from the final state alone, as in ACT. The mixture is
  weighed by `halting_signal_weight`: the ponder cost that holds the mean depth must be able to
  outweigh it (on the English model the early iterations' loss exceeds the final one by nats).
The KL term, KL(lam_t || g), per real token, averaged over the sequence's tokens: g is the
truncated geometric distribution over 1..N_max whose mean is the target depth (`geometric_prior`).

With gradient accumulation and several replicas, each micro-batch contributes
its *sums* divided by the *global* denominators (all masked weights and all
sequences of the update), so the accumulated gradient is exactly the gradient of
the loss on the whole global batch.
"""

import dataclasses

import numpy as np
from keras import ops

MLM_OBJECTIVES = ("final", "per_iteration", "final_and_halting")


@dataclasses.dataclass(frozen=True)
class Objective:
    """What a pre-training run minimizes beyond MLM + SOP + tau x ponder: the MLM term's form
    (`mlm_objective`), and beta (`kl_weight`) with the KL term's prior (`geometric_prior`, or None)."""

    mlm_objective: str = "final"
    kl_weight: float = 0.0
    prior: tuple | None = None
    halting_signal_weight: float = 1.0

    @classmethod
    def of(cls, config, max_iterations):
        """The objective of a resolved `PretrainConfig`."""
        prior = tuple(geometric_prior(config.target_iterations, max_iterations)) if config.kl_weight else None
        return cls(config.mlm_objective, float(config.kl_weight), prior, float(config.halting_signal_weight))

    @property
    def iteration_outputs(self):
        """Whether the model must output every iteration's MLM logits and halting weights."""
        return self.mlm_objective != "final" or self.prior is not None

    def sums(self, outputs, labels):
        return loss_sums(outputs, labels, self.mlm_objective, self.prior, self.halting_signal_weight)

    def losses(self, sums, mlm_weight, examples, ponder_cost_weight):
        return pretraining_loss(sums, mlm_weight, examples, ponder_cost_weight, self.kl_weight)


def geometric_prior(mean, max_iterations):
    """float64 (N_max,): g_n = q (1 - q)^(n-1) for n < N_max and the rest, (1 - q)^(N_max-1), at
    N_max (as ACT forces the remainder at the cap), with q chosen so that sum_n n g_n = `mean`."""
    if not 1 <= mean <= max_iterations:
        raise ValueError(f"the prior's mean must be in [1, max_iterations={max_iterations}], got {mean}")
    n = np.arange(1, max_iterations + 1)

    def prior(q):
        g = q * (1 - q) ** (n - 1.0)
        g[-1] = (1 - q) ** (max_iterations - 1.0)
        return g

    low, high = 0.0, 1.0  # the mean falls from N_max (q = 0) to 1 (q = 1)
    for _ in range(200):
        q = (low + high) / 2
        low, high = (q, high) if (n * prior(q)).sum() > mean else (low, q)
    return prior((low + high) / 2)


def loss_sums(outputs, labels, mlm_objective="final", prior=None, halting_signal_weight=1.0):
    """Per-batch sums (float32 scalars) from which losses and accuracies are formed.

    outputs: the pre-training model's dict (mlm_logits, sop_logits, ponder_cost; with
        mlm_objective "per_iteration" or a prior, also its iteration outputs).
    labels: masked_lm_ids, masked_lm_weights, sentence_order_label.
    mlm_objective: "final" or "per_iteration" (the module's docstring); `mlm_objective_sum` is the
        sum the loss minimizes, `mlm_loss_sum` always the final state's (what inference reads).
    prior: None, or the (N_max,) `geometric_prior` of the KL term (`kl_sum`).
    halting_signal_weight: final_and_halting's weight of the held mixture, against the final loss.
    """
    weights = ops.cast(labels["masked_lm_weights"], "float32")  # (B, P)
    mlm_xent = ops.sparse_categorical_crossentropy(
        labels["masked_lm_ids"], outputs["mlm_logits"], from_logits=True
    )  # (B, P)
    # int32 on both sides: argmax gives int64 on TensorFlow, int32 on JAX (whose int64 is off by default)
    mlm_hit = ops.cast(ops.equal(ops.cast(ops.argmax(outputs["mlm_logits"], -1), "int32"),
                                 ops.cast(labels["masked_lm_ids"], "int32")), "float32")
    sop_xent = ops.sparse_categorical_crossentropy(
        labels["sentence_order_label"], outputs["sop_logits"], from_logits=True
    )  # (B,)
    sop_hit = ops.cast(ops.equal(ops.cast(ops.argmax(outputs["sop_logits"], -1), "int32"),
                                 ops.cast(labels["sentence_order_label"], "int32")), "float32")
    sums = {
        "mlm_loss_sum": ops.sum(mlm_xent * weights),
        "mlm_correct": ops.sum(mlm_hit * weights),
        "mlm_weight": ops.sum(weights),
        "sop_loss_sum": ops.sum(sop_xent),
        "sop_correct": ops.sum(sop_hit),
        "ponder_cost_sum": ops.sum(ops.cast(outputs["ponder_cost"], "float32")),
        "examples": ops.cast(ops.shape(weights)[0], "float32"),
    }
    sums["mlm_objective_sum"] = sums["mlm_loss_sum"]
    if mlm_objective == "per_iteration":
        sums["mlm_objective_sum"] = ops.sum(iteration_mlm_xent(outputs, labels) * weights)
    elif mlm_objective == "final_and_halting":
        sums["mlm_objective_sum"] = sums["mlm_loss_sum"] + halting_signal_weight * ops.sum(
            iteration_mlm_xent(outputs, labels, hold_losses=True) * weights)
    sums["kl_sum"] = ops.zeros(()) if prior is None else ops.sum(halting_kl(outputs, prior))
    return sums


def iteration_mlm_xent(outputs, labels, hold_losses=False):
    """(B, P): sum_n lam_t^n xent(h_t^n) at each masked position t (the model's iteration outputs:
    `mlm_iteration_logits` (B, N, P, V), `mlm_iteration_weights` (B, P, N)); hold_losses: the
    cross-entropies as constants, so the gradient reaches the halting weights alone."""
    logits = outputs["mlm_iteration_logits"]
    targets = ops.broadcast_to(ops.expand_dims(labels["masked_lm_ids"], 1), ops.shape(logits)[:3])  # (B, N, P)
    xent = ops.sparse_categorical_crossentropy(targets, logits, from_logits=True)  # (B, N, P)
    if hold_losses:
        xent = ops.stop_gradient(xent)
    lam = ops.transpose(ops.cast(outputs["mlm_iteration_weights"], "float32"), (0, 2, 1))  # (B, N, P)
    return ops.sum(lam * xent, axis=1)


def halting_kl(outputs, prior):
    """(B,): per sequence, the mean over its real tokens of KL(lam_t || prior); lam_t^n = 0 terms
    count 0 (`halting_weights` (B, T, N), 0 on padding, whose tokens are left out)."""
    lam = ops.cast(outputs["halting_weights"], "float32")  # (B, T, N)
    log_prior = ops.log(ops.convert_to_tensor(np.asarray(prior, np.float32)))  # (N,)
    terms = ops.where(lam > 0, lam * (ops.log(ops.maximum(lam, 1e-30)) - log_prior), 0.0)
    real = ops.cast(ops.sum(lam, axis=-1) > 0.5, "float32")  # (B, T): a real token's weights sum to 1
    per_token = ops.sum(terms, axis=-1) * real
    return ops.sum(per_token, axis=-1) / ops.maximum(ops.sum(real, axis=-1), 1.0)


def pretraining_loss(sums, mlm_weight, examples, ponder_cost_weight, kl_weight=0.0):
    """MLM + SOP + tau * ponder + beta * KL from `loss_sums`, normalized by the given (global) denominators.

    Returns a dict: `loss` (what is minimized), `mlm_loss` (the final state's), `mlm_objective`
    (the MLM term minimized: `mlm_loss` unless per_iteration), `sop_loss`, `ponder_cost` (mean per
    sequence), `ponder_loss` (tau * ponder_cost), `kl` (mean per sequence) and `kl_loss` (beta * kl).
    """
    mlm_loss = sums["mlm_loss_sum"] / ops.maximum(mlm_weight, 1.0)
    mlm_objective = sums.get("mlm_objective_sum", sums["mlm_loss_sum"]) / ops.maximum(mlm_weight, 1.0)
    sop_loss = sums["sop_loss_sum"] / examples
    ponder_cost = sums["ponder_cost_sum"] / examples
    ponder_loss = ponder_cost_weight * ponder_cost
    kl = sums.get("kl_sum", 0.0) / examples
    kl_loss = kl_weight * kl
    return {
        "loss": mlm_objective + sop_loss + ponder_loss + kl_loss,
        "mlm_loss": mlm_loss,
        "mlm_objective": mlm_objective,
        "sop_loss": sop_loss,
        "ponder_cost": ponder_cost,
        "ponder_loss": ponder_loss,
        "kl": kl,
        "kl_loss": kl_loss,
    }


def finetuning_loss(outputs, targets, regression, ponder_cost_weight=0.0):
    """Mean cross-entropy of the logits (classification) or squared error of the score
    (regression, e.g. STS-B), + tau * mean ponder cost. outputs: the classifier's dict."""
    logits = ops.cast(outputs["logits"], "float32")
    if regression:
        loss = ops.mean(ops.square(logits[:, 0] - ops.cast(targets, "float32")))
    else:
        loss = ops.mean(ops.sparse_categorical_crossentropy(targets, logits, from_logits=True))
    return loss + ponder_cost_weight * ops.mean(ops.cast(outputs["ponder_cost"], "float32"))
