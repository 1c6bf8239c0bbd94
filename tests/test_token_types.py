"""Token types of Table 1 and their depth statistics: hand-computed buckets, sums, histograms and
bootstrap intervals, checked against a plain NumPy restatement."""

import numpy as np
import pytest

from albert_act.analysis import confidence, token_types

# [CLS] a [MASK] c [SEP] d r [SEP] pad ; selected: 2 ([MASK], orig 9), 3 (kept, orig c=7), 6 (random 8, orig 5)
INPUTS = {"token_ids": np.array([[2, 6, 4, 7, 3, 5, 8, 3, 0]]), "padding_mask": np.array([[1] * 8 + [0]]),
          "masked_positions": np.array([[2, 3, 6, 0]])}
LABELS = {"masked_lm_ids": np.array([[9, 7, 5, 0]]), "masked_lm_weights": np.array([[1.0, 1.0, 1.0, 0.0]])}
ITERATIONS = np.array([[6, 1, 3, 2, 5, 1, 4, 5, 0]], "float32")
EXPECTED = np.array([[5.5, 1.0, 2.5, 1.5, 4.0, 1.0, 3.5, 4.5, 0.0]], "float32")


def test_buckets_by_hand():
    masks = {k: np.asarray(v)[0].nonzero()[0].tolist() for k, v in token_types.token_type_masks(INPUTS, LABELS).items()}
    # [MASK]->random is position 6 only, not position 2 whose input is [MASK] (the authors' scripts mixed them).
    assert masks == {"all": [0, 1, 2, 3, 4, 5, 6, 7], "[CLS]": [0], "[SEP]": [4, 7], "unmasked": [1, 5],
                     "[MASK]->[MASK]": [2], "[MASK]->random": [6], "[MASK]->original": [3]}


def test_sums_histogram_and_table_by_hand():
    masks = token_types.token_type_masks(INPUTS, LABELS)
    sums = np.asarray(token_types.depth_sums(ITERATIONS, EXPECTED, masks))
    assert sums.shape == (1, len(token_types.TOKEN_TYPES), len(token_types.PARTS))
    sep = sums[0, token_types.TOKEN_TYPES.index("[SEP]")]
    np.testing.assert_allclose(sep, [2, 10, 50, 8.5, 36.25])  # N 5, 5; E 4.0, 4.5
    histogram = np.asarray(token_types.iteration_histogram(ITERATIONS, masks, 6))
    assert histogram[token_types.TOKEN_TYPES.index("unmasked")].tolist() == [0, 2, 0, 0, 0, 0, 0]
    assert histogram[0].tolist() == [0, 2, 1, 1, 1, 2, 1]  # all real tokens; padding is not counted
    table = token_types.summarize(sums[0], histogram)  # totals: no intervals
    assert table["[SEP]"]["mean"] == 5.0 and table["[SEP]"]["std"] == 0.0
    assert table["[SEP]"]["expected_mean"] == pytest.approx(4.25) and table["[SEP]"]["expected_std"] == pytest.approx(0.25)
    assert table["all"]["count"] == 8 and table["all"]["mean"] == pytest.approx(27 / 8)
    assert table["unmasked"]["histogram"] == [0, 2, 0, 0, 0, 0, 0]
    assert "interval" not in table["all"] and set(table) == set(token_types.TOKEN_TYPES)


def _restated_bootstrap(numerators, denominators, counts):
    """The resampled ratio, one resample and one sequence at a time."""
    out = []
    for row in counts:
        num = sum(c * n for c, n in zip(row, numerators))
        den = sum(c * d for c, d in zip(row, denominators))
        out.append(num / den if den > 0 else np.nan)
    return np.array(out)


def test_bootstrap_matches_a_numpy_restatement():
    rng = np.random.default_rng(3)
    numerators, denominators = rng.uniform(0, 10, 40), rng.integers(0, 4, 40).astype(float)
    counts = confidence.resample_counts(40, resamples=300, seed=5)
    assert counts.shape == (300, 40) and (counts.sum(axis=1) == 40).all()
    np.testing.assert_allclose(confidence.resampled_ratios(numerators, denominators, counts, chunk=7),
                               _restated_bootstrap(numerators, denominators, counts))
    samples = confidence.resampled_ratios(numerators, denominators, counts)
    low, high = confidence.percentile_interval(samples)
    ordered = np.sort(samples)
    # numpy's default percentile interpolates linearly between order statistics
    assert low == pytest.approx(np.interp(0.025 * 299, np.arange(300), ordered))
    assert high == pytest.approx(np.interp(0.975 * 299, np.arange(300), ordered))


def test_bootstrap_interval_agrees_with_normal_theory():
    # One token per sequence: the ratio is a plain mean, whose 95% interval is mean +- 1.96 sd / sqrt(n).
    values = np.random.default_rng(0).normal(3.0, 1.0, 400)
    samples = confidence.resampled_ratios(values, np.ones_like(values), confidence.resample_counts(400, seed=1))
    low, high = confidence.percentile_interval(samples)
    half = 1.96 * values.std() / np.sqrt(400)
    assert low == pytest.approx(values.mean() - half, abs=0.02) and high == pytest.approx(values.mean() + half, abs=0.02)
    # Identical sequences leave nothing to resample: the interval collapses onto the mean.
    same = confidence.resampled_ratios(np.full(50, 6.0), np.full(50, 2.0), confidence.resample_counts(50))
    assert confidence.percentile_interval(same) == (3.0, 3.0)


def test_table_intervals_and_the_ordering_verdict():
    # 60 sequences; [CLS] runs 3 iterations, [MASK]->[MASK] about 2.5, unmasked 1 or 2.
    rng = np.random.default_rng(0)
    k = {name: i for i, name in enumerate(token_types.TOKEN_TYPES)}
    sums = np.zeros((60, len(token_types.TOKEN_TYPES), 5))
    for s in range(60):
        for name, values in (("[CLS]", np.array([3.0])), ("[MASK]->[MASK]", rng.choice([2.0, 3.0], 4)),
                             ("unmasked", rng.choice([1.0, 2.0], 20))):
            sums[s, k[name]] = [len(values), values.sum(), (values ** 2).sum(), values.sum() - 0.5, 0]
    sums[:, k["all"]] = sums[:, [k["[CLS]"], k["[MASK]->[MASK]"], k["unmasked"]]].sum(axis=1)
    table, rows = token_types.summarize(sums), token_types.differences(sums)
    unmasked = table["unmasked"]
    low, high = unmasked["interval"]
    assert low < unmasked["mean"] < high and 0.05 < high - low < 0.3
    assert table["[CLS]"]["interval"] == [3.0, 3.0]
    difference = rows["[CLS] - unmasked"]
    assert difference["mean"] == pytest.approx(3.0 - unmasked["mean"])
    assert difference["interval"] == pytest.approx([3.0 - high, 3.0 - low], abs=1e-9)  # [CLS] is constant
    assert token_types.ordering_holds(rows)
    markdown = token_types.markdown_table(table, 6, rows)
    assert "| [CLS] | 3.00 [3.00, 3.00] |" in markdown and "ordering" in markdown and " holds" in markdown
    # Swap the roles: unmasked deepest, so the ordering does not hold and the table says so.
    sums[:, [k["[CLS]"], k["unmasked"]]] = sums[:, [k["unmasked"], k["[CLS]"]]]
    swapped = token_types.differences(sums)
    assert not token_types.ordering_holds(swapped)
    assert "does not hold" in token_types.markdown_table(token_types.summarize(sums), 6, swapped)
    # A fixed-depth model (every token at N_max = 3): no ordering to hold or fail, and the table says so.
    fixed = sums.copy()
    fixed[..., 1], fixed[..., 2] = 3 * fixed[..., 0], 9 * fixed[..., 0]
    markdown = token_types.markdown_table(token_types.summarize(fixed), 3, token_types.differences(fixed))
    assert "does not apply: every token ran all 3 iterations (as at fixed depth)" in markdown and "hold" not in markdown
