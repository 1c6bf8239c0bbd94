"""Confidence intervals by the percentile bootstrap over held-out sequences.

Tokens of one sequence are not independent (they attend to each other), so the
unit resampled is the sequence: each resample draws S sequences with
replacement, and a statistic such as "mean iterations of [CLS] tokens" is
recomputed as sum(numerators) / sum(denominators) over the drawn sequences.

    counts = resample_counts(num_sequences, resamples=2000, seed=0)  # (R, S)
    means = resampled_ratios(sums, token_counts, counts)              # (R, ...)
    low, high = percentile_interval(means)
"""

import warnings

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 2000


def resample_counts(num_sequences, resamples=RESAMPLES, seed=0):
    """int (R, S): how often each of S sequences is drawn in each of R resamples of size S.

    Drawing S sequences with replacement is a multinomial draw of S over S equally
    likely sequences; counts are all a ratio of sums needs.
    """
    if num_sequences < 1:
        raise ValueError(f"need at least one sequence to resample, got {num_sequences}")
    rng = np.random.default_rng(seed)
    return rng.multinomial(num_sequences, np.full(num_sequences, 1.0 / num_sequences), size=resamples)


def resampled_ratios(numerators, denominators, counts, chunk=256):
    """float64 (R, ...): sum_s c_rs num_s / sum_s c_rs den_s for every resample r.

    numerators, denominators: (S, ...) per-sequence sums; counts: (R, S) from
    `resample_counts`. A resample whose denominator is 0 gives nan.
    """
    numerators = np.asarray(numerators, np.float64)
    denominators = np.asarray(denominators, np.float64)
    counts = np.asarray(counts, np.float64)
    out = []
    for start in range(0, len(counts), chunk):  # bounded memory for long evaluation sets
        c = counts[start : start + chunk]
        num = np.tensordot(c, numerators, axes=(1, 0))
        den = np.tensordot(c, denominators, axes=(1, 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan))
    return np.concatenate(out)


def percentile_interval(samples, confidence=CONFIDENCE):
    """(low, high) arrays: the central `confidence` interval of `samples` along axis 0 (nan ignored)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    tail = 50.0 * (1.0 - confidence)
    samples = np.asarray(samples, np.float64)
    if np.all(np.isnan(samples)):
        nan = np.full(samples.shape[1:], np.nan)
        return nan, nan
    with warnings.catch_warnings():  # columns that are all nan (a type absent from every sequence) stay nan
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(samples, [tail, 100.0 - tail], axis=0)
    return low, high
