"""The losses, in one place: pre-training (MLM + SOP + tau * ponder) and fine-tuning.

    loss = sum(w * xent(mlm)) / sum(w)          weighted mean over masked positions
         + mean over sequences of xent(sop)
         + tau * mean over sequences of ponder_cost

With gradient accumulation and several replicas, each micro-batch contributes
its *sums* divided by the *global* denominators (all masked weights and all
sequences of the update), so the accumulated gradient is exactly the gradient of
the loss on the whole global batch.
"""

from keras import ops


def loss_sums(outputs, labels):
    """Per-batch sums (float32 scalars) from which losses and accuracies are formed.

    outputs: the pre-training model's dict (mlm_logits, sop_logits, ponder_cost).
    labels: masked_lm_ids, masked_lm_weights, sentence_order_label.
    """
    weights = ops.cast(labels["masked_lm_weights"], "float32")  # (B, P)
    mlm_xent = ops.sparse_categorical_crossentropy(
        labels["masked_lm_ids"], outputs["mlm_logits"], from_logits=True
    )  # (B, P)
    mlm_hit = ops.cast(ops.equal(ops.argmax(outputs["mlm_logits"], -1), ops.cast(labels["masked_lm_ids"], "int64")), "float32")
    sop_xent = ops.sparse_categorical_crossentropy(
        labels["sentence_order_label"], outputs["sop_logits"], from_logits=True
    )  # (B,)
    sop_hit = ops.cast(ops.equal(ops.argmax(outputs["sop_logits"], -1), ops.cast(labels["sentence_order_label"], "int64")), "float32")
    return {
        "mlm_loss_sum": ops.sum(mlm_xent * weights),
        "mlm_correct": ops.sum(mlm_hit * weights),
        "mlm_weight": ops.sum(weights),
        "sop_loss_sum": ops.sum(sop_xent),
        "sop_correct": ops.sum(sop_hit),
        "ponder_cost_sum": ops.sum(ops.cast(outputs["ponder_cost"], "float32")),
        "examples": ops.cast(ops.shape(weights)[0], "float32"),
    }


def pretraining_loss(sums, mlm_weight, examples, ponder_cost_weight):
    """MLM + SOP + tau * ponder from `loss_sums`, normalized by the given (global) denominators.

    Returns a dict: `loss` (what is minimized), `mlm_loss`, `sop_loss`, `ponder_cost`
    (mean per sequence) and `ponder_loss` (tau * ponder_cost).
    """
    mlm_loss = sums["mlm_loss_sum"] / ops.maximum(mlm_weight, 1.0)
    sop_loss = sums["sop_loss_sum"] / examples
    ponder_cost = sums["ponder_cost_sum"] / examples
    ponder_loss = ponder_cost_weight * ponder_cost
    return {
        "loss": mlm_loss + sop_loss + ponder_loss,
        "mlm_loss": mlm_loss,
        "sop_loss": sop_loss,
        "ponder_cost": ponder_cost,
        "ponder_loss": ponder_loss,
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
