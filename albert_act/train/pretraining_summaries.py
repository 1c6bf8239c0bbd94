"""What a pre-training run reports: `summarize` turns summed step outputs into losses, accuracies
(with intervals and baselines at evaluation) and the iteration table; the TensorBoard writers."""

import numpy as np
import tensorflow as tf

from albert_act.analysis import confidence, token_types
from albert_act.train.losses import pretraining_loss

def summarize(sums, ponder_cost_weight):
    """Losses, accuracies and the iteration table from summed step outputs (numpy).

    `sums["depth"]` is (K, 5) totals while training, (S, K, 5) per held-out sequence at
    evaluation (then the table has 95% intervals).
    """
    losses = pretraining_loss(sums, sums["mlm_weight"], sums["examples"], ponder_cost_weight)
    result = {k: float(v) for k, v in losses.items()}
    result["mlm_accuracy"] = float(sums["mlm_correct"] / max(sums["mlm_weight"], 1.0))
    result["sop_accuracy"] = float(sums["sop_correct"] / sums["examples"])
    result["examples"] = int(sums["examples"])
    if "overflows" in sums:
        result["overflows"] = int(sums["overflows"])
    result["iterations"] = token_types.summarize(sums["depth"], sums.get("histogram"))
    if np.ndim(sums["depth"]) == 3:  # per held-out sequence: the paper's ordering, with intervals
        result["differences"] = token_types.differences(sums["depth"])
    if "histogram" in sums:
        result["iteration_histogram"] = result["iterations"]["all"]["histogram"]
    if "gradient_norm" in sums:
        result["gradient_norm"] = float(sums["gradient_norm"])
    if "accuracy" in sums:  # evaluation: intervals over sequences, and the baselines to beat
        per_sequence = np.asarray(sums["accuracy"], np.float64)
        counts = confidence.resample_counts(len(per_sequence))
        result["mlm_accuracy_interval"] = [float(v) for v in confidence.percentile_interval(
            confidence.resampled_ratios(per_sequence[:, 0], per_sequence[:, 1], counts))]
        result["sop_accuracy_interval"] = [float(v) for v in confidence.percentile_interval(
            confidence.resampled_ratios(per_sequence[:, 2], np.ones(len(per_sequence)), counts))]
        targets = np.asarray(sums["target_counts"], np.float64)
        result["mlm_unigram_baseline"] = float(targets.max() / max(targets.sum(), 1.0))
        share = targets[targets > 0] / targets.sum()
        result["mlm_unigram_loss"] = float(-(share * np.log(share)).sum())  # the best loss without context
        swapped = float(sums["sop_swapped"]) / max(float(sums["examples"]), 1.0)
        result["sop_majority_baseline"] = max(swapped, 1.0 - swapped)
    return result


def write_summaries(writer, step, result, extra=None):
    with writer.as_default(step=step):
        for key in ("loss", "mlm_loss", "sop_loss", "ponder_loss", "ponder_cost", "mlm_accuracy", "sop_accuracy",
                    "gradient_norm", "overflows"):
            if key in result:
                tf.summary.scalar(key, result[key])
        for name in token_types.TOKEN_TYPES:
            row = result["iterations"][name]
            if row["count"]:
                tf.summary.scalar(f"iterations/{_tag(name)}", row["mean"])
                tf.summary.scalar(f"expected_iterations/{_tag(name)}", row["expected_mean"])
        if "iteration_histogram" in result:
            counts = np.asarray(result["iteration_histogram"])
            tf.summary.histogram("iterations/histogram", np.repeat(np.arange(len(counts)), counts).astype("float32"))
        for key, value in (extra or {}).items():
            tf.summary.scalar(key, value)
    writer.flush()


def write_token_type_image(writer, step, iterations, max_iterations):
    """The iterations-per-token-type bar chart (as in `albert_act.analyze`) as a TensorBoard image."""
    from albert_act.analysis.plots import token_types_png

    image = tf.image.decode_png(token_types_png(iterations, max_iterations), channels=4)
    with writer.as_default(step=step):
        tf.summary.image("iterations/token_types", image[None])
    writer.flush()


def _tag(token_type):
    return token_type.replace("[", "").replace("]", "").replace("->", "_to_")
