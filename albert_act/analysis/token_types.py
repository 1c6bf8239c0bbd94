"""Token types of the paper's Table 1, and depth statistics per type with confidence intervals.

For a pre-training instance, each real token is one of:
    [CLS], [SEP], unmasked (any other token not selected for prediction),
    [MASK]->[MASK]     selected, and its input is [MASK],
    [MASK]->random     selected, and its input is neither [MASK] nor the original token,
    [MASK]->original   selected, and its input is the original token.
(The authors' scripts counted [MASK] inputs in "random" too; we do not.)

Two depths per token: N_t, the whole number of iterations, and E_t, the expected
iteration of its halting distribution (`albert_act.model.halting`), which shows
differences smaller than one iteration. Statistics are kept per sequence, so
that intervals come from a bootstrap over sequences (`albert_act.analysis.confidence`).
Everything on the TensorFlow side has static shapes (masks and one-hot sums),
so the steps that compute it compile with XLA.
"""

import numpy as np
from keras import ops

from albert_act.analysis import confidence
from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID

TOKEN_TYPES = ("all", "[CLS]", "[SEP]", "unmasked", "[MASK]->[MASK]", "[MASK]->random", "[MASK]->original")
# Parts of the per-sequence sums, last axis of `depth_sums`.
PARTS = ("count", "iterations", "iterations_squared", "expected", "expected_squared")
# The paper's ordering: these types run deeper than unmasked tokens.
DEEPER_THAN_UNMASKED = ("[CLS]", "[MASK]->[MASK]")


def token_type_masks(inputs, labels):
    """{type: bool (B, T)} for the batch; `all` is every real token."""
    tokens = inputs["token_ids"]  # (B, T)
    real = ops.cast(inputs["padding_mask"], "bool")
    length = ops.shape(tokens)[1]
    selected_weights = ops.cast(labels["masked_lm_weights"] > 0, "int32")  # (B, P)
    one_hot = ops.one_hot(inputs["masked_positions"], length, dtype="int32")  # (B, P, T)
    selected = ops.sum(one_hot * selected_weights[..., None], axis=1) > 0  # (B, T)
    original = ops.sum(one_hot * (ops.cast(labels["masked_lm_ids"], "int32") * selected_weights)[..., None], axis=1)
    is_mask = ops.equal(tokens, MASK_ID)
    is_original = ops.equal(tokens, original)
    is_cls, is_sep = ops.equal(tokens, CLS_ID) & real, ops.equal(tokens, SEP_ID) & real
    return {
        "all": real,
        "[CLS]": is_cls,
        "[SEP]": is_sep,
        "unmasked": real & ~selected & ~is_cls & ~is_sep,
        "[MASK]->[MASK]": selected & is_mask,
        "[MASK]->random": selected & ~is_mask & ~is_original,
        "[MASK]->original": selected & is_original,
    }


def depth_sums(iterations, expected_iterations, masks):
    """float32 (B, K, 5): per sequence and token type (K = len(TOKEN_TYPES)), the `PARTS`:
    token count, sum of N, sum of N^2, sum of E, sum of E^2. Sum over axis 0 for a batch total."""
    weights = ops.stack([ops.cast(masks[name], "float32") for name in TOKEN_TYPES], axis=1)  # (B, K, T)
    n = ops.cast(iterations, "float32")[:, None, :]  # (B, 1, T)
    e = ops.cast(expected_iterations, "float32")[:, None, :]
    parts = [weights, weights * n, weights * n * n, weights * e, weights * e * e]
    return ops.stack([ops.sum(p, axis=-1) for p in parts], axis=-1)


def iteration_histogram(iterations, masks, max_iterations):
    """float32 (K, N_max + 1): tokens of each type with N = 0..N_max, summed over the batch (one-hot, no bincount)."""
    one_hot = ops.one_hot(ops.cast(iterations, "int32"), max_iterations + 1, dtype="float32")  # (B, T, N+1)
    weights = ops.stack([ops.cast(masks[name], "float32") for name in TOKEN_TYPES], axis=0)  # (K, B, T)
    return ops.einsum("kbt,btn->kn", weights, one_hot)


def _moments(total, prefix):
    count = total[..., 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total[..., prefix] / np.maximum(count, 1), np.nan)
        variance = np.where(count > 0, total[..., prefix + 1] / np.maximum(count, 1) - mean ** 2, np.nan)
    return mean, np.sqrt(np.maximum(variance, 0.0))


def _resampled_means(sums, seed):
    """{"mean": (R, K), "expected_mean": (R, K)}: the per-type means of N and E over bootstrap resamples."""
    counts = confidence.resample_counts(len(sums), seed=seed)
    return {"mean": confidence.resampled_ratios(sums[..., 1], sums[..., 0], counts),
            "expected_mean": confidence.resampled_ratios(sums[..., 3], sums[..., 0], counts)}


def _interval_key(key):
    return {"mean": "interval", "expected_mean": "expected_interval"}[key]


def summarize(sums, histogram=None, seed=0):
    """Table 1 as {type: row} (every TOKEN_TYPES entry) from `depth_sums`, numpy.

    sums: (S, K, 5) per-sequence sums (then every mean gets a 95% bootstrap interval
    over the S sequences), or (K, 5) totals (means and stds only).
    histogram: optional (K, N_max + 1) counts, copied into the rows.

    Each row: count, mean, std (of N), expected_mean, expected_std (of E), and with
    per-sequence sums interval, expected_interval ([low, high] of the two means).
    """
    sums = np.asarray(sums, np.float64)
    total = sums.sum(axis=0) if sums.ndim == 3 else sums
    mean_n, std_n = _moments(total, 1)
    mean_e, std_e = _moments(total, 3)
    table = {}
    for k, name in enumerate(TOKEN_TYPES):
        table[name] = {"count": int(total[k, 0]), "mean": float(mean_n[k]), "std": float(std_n[k]),
                       "expected_mean": float(mean_e[k]), "expected_std": float(std_e[k])}
        if histogram is not None:
            table[name]["histogram"] = [int(c) for c in np.asarray(histogram)[k]]
    if sums.ndim == 3 and len(sums):
        for key, samples in _resampled_means(sums, seed).items():
            low, high = confidence.percentile_interval(samples)
            for k, name in enumerate(TOKEN_TYPES):
                table[name][_interval_key(key)] = [float(low[k]), float(high[k])]
    return table


def differences(sums, seed=0):
    """{"<type> - unmasked": {mean, interval, expected_mean, expected_interval}} for each type of
    DEEPER_THAN_UNMASKED, from (S, K, 5) per-sequence sums: the differences of the mean N and E,
    with 95% intervals from the same bootstrap resamples as `summarize` (same seed)."""
    sums = np.asarray(sums, np.float64)
    total = sums.sum(axis=0)
    unmasked = TOKEN_TYPES.index("unmasked")
    resampled = _resampled_means(sums, seed)
    rows = {}
    for name in DEEPER_THAN_UNMASKED:
        k, row = TOKEN_TYPES.index(name), {}
        for key, part in (("mean", 1), ("expected_mean", 3)):
            with np.errstate(invalid="ignore", divide="ignore"):
                means = total[:, part] / total[:, 0]
            low, high = confidence.percentile_interval(resampled[key][:, k] - resampled[key][:, unmasked])
            row[key] = float(means[k] - means[unmasked])
            row[_interval_key(key)] = [float(low), float(high)]
        rows[f"{name} - unmasked"] = row
    return rows


def _cell(row, key):
    if not row["count"]:
        return "-"
    interval = row.get(_interval_key(key))
    text = f"{row[key]:.2f}"
    return text if interval is None else f"{text} [{interval[0]:.2f}, {interval[1]:.2f}]"


def ordering_holds(difference_rows):
    """True when every DEEPER_THAN_UNMASKED type has more iterations N than unmasked tokens,
    with the whole 95% interval of the difference above 0 (`differences`' rows)."""
    return bool(difference_rows) and all(row["interval"][0] > 0 for row in difference_rows.values())


def markdown_table(table, max_iterations, difference_rows=None):
    """The paper's Table 1 as Markdown from `summarize`: N and E per type (95% intervals when
    known), `all` last; then, given `differences`, the differences to unmasked tokens and
    whether the paper's ordering holds."""
    with_intervals = "interval" in table["all"]
    ci = " [95% CI]" if with_intervals else ""
    lines = [f"| token type | iterations N (of {max_iterations}){ci} | std N | expected iterations E{ci} | tokens |",
             "|---|---|---|---|---|"]
    for name in TOKEN_TYPES[1:] + TOKEN_TYPES[:1]:
        row = table[name]
        std = f"{row['std']:.2f}" if row["count"] else "-"
        lines.append(f"| {name} | {_cell(row, 'mean')} | {std} | {_cell(row, 'expected_mean')} | {row['count']} |")
    if difference_rows:
        lines.append("")
        for label, row in difference_rows.items():
            n_low, n_high = row["interval"]
            e_low, e_high = row["expected_interval"]
            lines.append(f"- {label}: N {row['mean']:+.2f} [{n_low:+.2f}, {n_high:+.2f}], "
                         f"E {row['expected_mean']:+.2f} [{e_low:+.2f}, {e_high:+.2f}]")
        whole = table["all"]
        if whole["count"] and whole["std"] < 1e-9 and abs(whole["mean"] - max_iterations) < 1e-9:
            verdict = f"does not apply: every token ran all {max_iterations} iterations (as at fixed depth)"
        else:
            verdict = "holds" if ordering_holds(difference_rows) else "does not hold"
        lines.append(f"- The paper's ordering ([CLS] and [MASK]->[MASK] deeper than unmasked tokens, "
                     f"95% interval of the difference in N above 0) {verdict}. Intervals: bootstrap over "
                     f"{confidence.RESAMPLES} resamples of the held-out sequences.")
    return "\n".join(lines)
