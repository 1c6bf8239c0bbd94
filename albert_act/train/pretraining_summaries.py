"""What a pre-training run reports: `summarize` turns summed step outputs into losses, accuracies
(with intervals and baselines at evaluation) and the iteration table; `evaluation_sums`, what one
held-out batch adds to them (keras.ops: every backend, XLA); the TensorBoard writers."""

import numpy as np

from albert_act.analysis import confidence, token_types
from albert_act.train.losses import pretraining_loss

# One depth holding more than this share of the ordinary pieces, after the ponder ramp: warned of.
ONE_DEPTH_WARNING = 0.9


def summarize(sums, ponder_cost_weight, kl_weight=0.0):
    """Losses, accuracies and the iteration table from summed step outputs (numpy).

    `sums["depth"]` is (K, 5) totals while training, (S, K, 5) per held-out sequence at
    evaluation (then the table has 95% intervals). With `sums["halting_logit"]` (count, sum, sum
    of squares of the first iteration's halting logit over ordinary pieces), its mean and std.
    """
    losses = pretraining_loss(sums, sums["mlm_weight"], sums["examples"], ponder_cost_weight, kl_weight)
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
    if "halting_logit" in sums:
        count, total, squares = (float(v) for v in sums["halting_logit"])
        mean = total / max(count, 1.0)
        result["halting_logit"] = {"mean": mean, "std": float(np.sqrt(max(squares / max(count, 1.0) - mean ** 2, 0.0)))}
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


def evaluation_sums(model, inputs, labels, objective):
    """What one held-out batch adds to an evaluation (`summarize`): the `objective`'s loss sums, the
    iteration histogram per token type (K, N+1), the first-iteration halting logit's count, sum and
    sum of squares over ordinary pieces, and per sequence (for intervals) the depth sums (B, K, 5) and
    MLM hits, MLM weight and SOP hit (B, 3); the baselines' counts: each piece as a masked target
    (V,), and the swapped pairs. `model`: an `AlbertActPretrainingModel`."""
    from keras import ops

    outputs = model(inputs, training=False)
    sums = objective.sums(outputs, labels)
    masks = token_types.token_type_masks(inputs, labels)
    logits = model.backbone.first_halting_logits(inputs)  # (B, T), None at fixed depth
    if logits is not None:
        ordinary = ops.cast(masks["unmasked"], "float32")
        sums["halting_logit"] = ops.stack([ops.sum(ordinary), ops.sum(logits * ordinary),
                                           ops.sum(ops.square(logits) * ordinary)])
    sums["histogram"] = token_types.iteration_histogram(outputs["iterations"], masks, model.backbone.max_iterations)
    sums["depth"] = depth_sums_of(outputs, inputs, labels)
    weights = ops.cast(labels["masked_lm_weights"], "float32")
    targets = ops.cast(labels["masked_lm_ids"], "int32")
    mlm_hit = ops.cast(ops.equal(ops.cast(ops.argmax(outputs["mlm_logits"], axis=-1), "int32"), targets), "float32")
    sop_hit = ops.equal(ops.cast(ops.argmax(outputs["sop_logits"], axis=-1), "int32"),
                        ops.cast(labels["sentence_order_label"], "int32"))
    sums["accuracy"] = ops.stack([ops.sum(mlm_hit * weights, axis=1), ops.sum(weights, axis=1),
                                  ops.cast(sop_hit, "float32")], axis=1)
    sums["target_counts"] = ops.segment_sum(ops.reshape(weights, [-1]), ops.reshape(targets, [-1]),
                                            num_segments=model.backbone.vocabulary_size)
    sums["sop_swapped"] = ops.sum(ops.cast(labels["sentence_order_label"], "float32"))
    return sums


def depth_sums_of(outputs, inputs, labels):
    """(B, K, 5) per-sequence depth sums per token type (Table 1) for one batch."""
    masks = token_types.token_type_masks(inputs, labels)
    return token_types.depth_sums(outputs["iterations"], outputs["expected_iterations"], masks)


def depth_spread(result):
    """How depth varies over ordinary (unmasked) pieces, from an evaluation with its histogram:
    {"shares": [share at N = 1 .. N_max], "std": std of N, "halting_logit": {mean, std} of the first
    iteration's halting logit, "halting_unit": {kernel_norm, bias}} (the last two where known)."""
    row = result["iterations"]["unmasked"]
    counts = np.asarray(row.get("histogram", []), np.float64)[1:]
    spread = {"shares": [float(c) for c in counts / max(counts.sum(), 1.0)], "std": row["std"]}
    for key in ("halting_logit", "halting_unit"):
        if key in result:
            spread[key] = result[key]
    return spread


def depth_line(spread):
    """`depth_spread` in one line of words."""
    shares = ", ".join(f"{n} {share:.0%}" for n, share in enumerate(spread["shares"], 1) if share >= 0.005)
    line = f"  depth of unmasked pieces: N = {shares or '-'}; std N {spread['std']:.2f}"
    if "halting_logit" in spread:
        logit = spread["halting_logit"]
        line += f"; first-iteration halting logit {logit['mean']:+.2f} (std over pieces {logit['std']:.2f})"
    if "halting_unit" in spread:
        unit = spread["halting_unit"]
        line += f"; halting unit |w| {unit['kernel_norm']:.3f}, b {unit['bias']:+.2f}"
    return line


def held_out_curve(path, earlier, step, evaluation, tau):
    """held_out.jsonl's new text: the lines of `earlier` (its bytes, b"" when new) before `step`, and
    this evaluation's line (later lines go: a resumed run writes them again). A line that is not
    JSON is refused, naming the file and line. Returns (text, the new line's record)."""
    import json

    from albert_act.base import artifacts

    kept, same = [], None  # the lines before `step`; the earlier line of `step` itself
    try:
        earlier = earlier.decode("utf-8") if isinstance(earlier, bytes) else earlier
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not a held-out curve (not UTF-8 text at byte {error.start}); move it away (the "
                         "run writes its lines again from its evaluations on) and re-run") from None
    for number, text in enumerate(earlier.splitlines(), 1):
        if not text.strip():
            continue
        try:
            if (record := json.loads(text))["step"] < step:
                kept.append(text)
            same = (number, record) if record["step"] == step else same
        except (ValueError, KeyError, TypeError):
            raise ValueError(f"{path} line {number}: not a held-out evaluation's JSON line (cut short or edited); "
                             "remove that line (the run writes its later lines again) and re-run") from None
    line = {"step": step, **{k: evaluation[k] for k in artifacts.HELD_OUT_KEPT},
            "mean_iterations": evaluation["iterations"]["all"]["mean"],
            "expected_iterations": evaluation["iterations"]["all"]["expected_mean"],
            "ponder_cost_weight": float(tau), "depth_spread": depth_spread(evaluation)}
    if same and any(isinstance(same[1].get(k), (int, float)) and abs(same[1][k] - line[k]) > 1e-6
                    for k in ("mlm_accuracy", "sop_accuracy")):  # (the same weights evaluated again: the same numbers)
        print(f"note: {path} line {same[0]}, of update {step:,}, said MLM {same[1]['mlm_accuracy']:.3f}, SOP "
              f"{same[1]['sop_accuracy']:.3f}, where this evaluation of the run's weights of that update gives MLM "
              f"{line['mlm_accuracy']:.3f}, SOP {line['sop_accuracy']:.3f} (the line edited, another run's copied in, or "
              "other held-out batches): replaced", flush=True)
    return "\n".join(kept + [json.dumps(line)]) + "\n", line


def one_depth_warning(spread):
    """A warning when one depth holds over ONE_DEPTH_WARNING of the ordinary pieces, else None."""
    shares = spread["shares"]
    if not shares or max(shares) <= ONE_DEPTH_WARNING:
        return None
    depth = int(np.argmax(shares)) + 1
    return (f"warning: {max(shares):.1%} of the unmasked pieces ran exactly {depth} iteration(s): depth hardly "
            "varies per token (the halting unit tells tokens apart by a logit std of "
            f"{spread.get('halting_logit', {}).get('std', float('nan')):.2f})")


def write_summaries(writer, step, result, extra=None):
    import tensorflow as tf  # TensorBoard's writer; what comes before it serves the JAX backend too

    with writer.as_default(step=step):
        for key in ("loss", "mlm_loss", "mlm_objective", "sop_loss", "ponder_loss", "ponder_cost", "kl", "mlm_accuracy",
                    "sop_accuracy", "gradient_norm", "overflows"):
            if key in result:
                tf.summary.scalar(key, result[key])
        if "histogram" in result["iterations"]["unmasked"]:
            spread = depth_spread(result)
            for n, share in enumerate(spread["shares"], 1):
                tf.summary.scalar(f"depth/unmasked_share_N{n}", share)
            tf.summary.scalar("depth/unmasked_std", spread["std"])
            for group in ("halting_logit", "halting_unit"):
                for key, value in spread.get(group, {}).items():
                    tf.summary.scalar(f"{group}/{key}", value)
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
    import tensorflow as tf

    from albert_act.analysis.plots import token_types_png

    image = tf.image.decode_png(token_types_png(iterations, max_iterations), channels=4)
    with writer.as_default(step=step):
        tf.summary.image("iterations/token_types", image[None])
    writer.flush()


def _tag(token_type):
    return token_type.replace("[", "").replace("]", "").replace("->", "_to_")
