"""Depth against difficulty: does a token that is harder to predict run deeper?

Per token, the ACT model's N (and E) against the token's surprisal, -ln p(token | context), under
a reference model: the paper's comparison is a fixed-depth ALBERT trained on the same records.
Surprisal is what masked LM measures, so the reference predicts each token with it masked:
- the record's own predicted positions ([MASK]->[MASK], [MASK]->random, [MASK]->original) as the
  record masks them, so their surprisal is the reference's MLM loss there (its mean is the
  reference's held-out MLM loss);
- unmasked tokens in a copy of the record where `UNMASKED_PER_SEQUENCE` of them, drawn at random,
  are [MASK] too (beside the record's own masks), so that their context is nearly the record's.
N and E are the ACT model's on the record as it is.

The statistics (`summarize`): per token type, Spearman's rank correlation of N with surprisal
(ties share their mean rank) and of E with it, each with a 95% bootstrap interval over sequences
(`albert_act.analysis.confidence`), and the mean N and E per surprisal quintile of the type's
tokens (types apart: a [MASK] input and a word the model sees run differently however hard).
"""

import math

import numpy as np
import tensorflow as tf

from albert_act.analysis import confidence, depth, token_types
from pipelines.pretraining_dataset import guarded, make_pretraining_dataset
from pipelines.tokenizer import MASK_ID

UNMASKED_PER_SEQUENCE = 4
PREDICTED = ("[MASK]->[MASK]", "[MASK]->random", "[MASK]->original")
TYPES = ("all", "unmasked") + PREDICTED  # "all": every token with a surprisal (the sampled unmasked ones included)
BINS = 5


def average_ranks(values):
    """float64 ranks 1..n of `values`, ties sharing their mean rank."""
    _, inverse, counts = np.unique(np.asarray(values), return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[inverse.reshape(-1)]


def spearman(x, y, weights=None):
    """Spearman's rank correlation of x and y, each pair counted `weights` times (None: once);
    nan when either does not vary (a model whose depth is the same for every token)."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if weights is not None:
        x, y = np.repeat(x, weights), np.repeat(y, weights)
    if len(x) < 2:
        return float("nan")
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    scale = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / scale) if scale > 0 else float("nan")


def spearman_interval(x, y, sequences, resamples=1000, seed=0):
    """(rho, low, high): Spearman's rho of the pairs and its 95% percentile bootstrap interval, resampling
    whole sequences (`sequences[i]`: the sequence of pair i), as the rest of the analyses do."""
    ids, index = np.unique(np.asarray(sequences), return_inverse=True)
    counts = confidence.resample_counts(len(ids), resamples, seed)  # (R, S)
    samples = np.array([spearman(x, y, weights=row[index]) for row in counts])
    low, high = confidence.percentile_interval(samples[:, None])
    return spearman(x, y), float(low[0]), float(high[0])


def _reference_surprisal(reference, inputs, positions, targets):
    """-ln p(target) at each of `positions` (B, P) of the reference's MLM head on `inputs`."""
    logits = reference({**inputs, "masked_positions": tf.constant(positions, tf.int32)}, training=False)["mlm_logits"]
    log_p = tf.nn.log_softmax(tf.cast(logits, tf.float32), axis=-1)
    return -np.take_along_axis(log_p.numpy(), np.asarray(targets, np.int64)[..., None], axis=-1)[..., 0]


def _unmasked_sample(tokens, unmasked, rng):
    """(token ids with a draw of up to UNMASKED_PER_SEQUENCE unmasked tokens per row set to [MASK],
    their positions (B, K), their original ids (B, K), which of the K are real (B, K))."""
    rows = len(tokens)
    positions = np.zeros((rows, UNMASKED_PER_SEQUENCE), np.int32)
    real = np.zeros((rows, UNMASKED_PER_SEQUENCE), bool)
    masked = tokens.copy()
    for row in range(rows):
        candidates = np.flatnonzero(unmasked[row])
        drawn = np.sort(rng.choice(candidates, min(UNMASKED_PER_SEQUENCE, len(candidates)), replace=False))
        positions[row, : len(drawn)], real[row, : len(drawn)] = drawn, True
        masked[row, drawn] = MASK_ID
    return masked, positions, np.take_along_axis(tokens, positions, axis=1), real


def collect(run, reference, files, max_length, batch_size=64, max_batches=None, seed=0, progress=False):
    """Every token with a surprisal on pre-training TFRecords `files`: dict of 1-D numpy arrays
    `sequence`, `type` (index into TYPES), `iterations`, `expected`, `surprisal` (nats).
    run: the ACT model's forward pass (`depth.inference`); reference: a pre-training model."""
    rng = np.random.default_rng(seed)
    found = {k: [] for k in ("sequence", "type", "iterations", "expected", "surprisal")}
    dataset = make_pretraining_dataset(files, batch_size, training=False, max_length=max_length)
    first = 0
    for i, (inputs, labels) in enumerate(depth.progress_bar(guarded(dataset, files), progress, "difficulty (batches)", max_batches)):
        if max_batches is not None and i >= max_batches:
            break
        model_inputs = depth.model_inputs(inputs)
        ran = run(model_inputs)
        masks = {k: np.asarray(v) for k, v in token_types.token_type_masks(inputs, labels).items()}
        positions = inputs["masked_positions"].numpy()
        weights, targets = labels["masked_lm_weights"].numpy() > 0, labels["masked_lm_ids"].numpy()
        rows = np.arange(len(positions))[:, None]
        kind = np.select([masks[name][rows, positions] for name in PREDICTED],
                         [TYPES.index(name) for name in PREDICTED], -1)
        parts = [(positions, weights & (kind >= 0), kind, _reference_surprisal(reference, model_inputs, positions,
                                                                               targets))]
        tokens, unmasked = inputs["token_ids"].numpy(), masks["unmasked"]
        masked, drawn, originals, real = _unmasked_sample(tokens, unmasked, rng)
        surprisal = _reference_surprisal(reference, {**model_inputs, "token_ids": tf.constant(masked)}, drawn, originals)
        parts.append((drawn, real, np.full(drawn.shape, TYPES.index("unmasked")), surprisal))
        for where, keep, type_index, values in parts:
            row_of = np.broadcast_to(rows, where.shape)
            found["sequence"].append((first + row_of)[keep])
            found["type"].append(type_index[keep])
            found["iterations"].append(np.asarray(ran["iterations"])[row_of, where][keep])
            found["expected"].append(np.asarray(ran["expected_iterations"])[row_of, where][keep])
            found["surprisal"].append(values[keep])
        first += len(tokens)
    if first == 0:
        raise ValueError(f"no records in {files}")
    return {k: np.concatenate(v).astype(np.int64 if k in ("sequence", "type") else np.float64)
            for k, v in found.items()}


CHANCE_MARGIN = 0.5  # nats: a reference whose mean surprisal comes this close to a uniform guess's predicts nothing


def chance_note(types, vocabulary_size):
    """A note when the reference's mean surprisal over `types["all"]` is within `CHANCE_MARGIN` of a uniform guess
    over its `vocabulary_size` pieces (ln V: an untrained, or barely trained, model), else None."""
    chance = math.log(vocabulary_size)
    mean = types.get("all", {}).get("mean_surprisal")
    if mean is None or mean < chance - CHANCE_MARGIN:
        return None
    return (f"The reference is at chance: its mean surprisal, {mean:.2f} nats, is that of a uniform guess over its "
            f"{vocabulary_size:,} pieces (ln {vocabulary_size:,} = {chance:.2f}), so it measures no difficulty and "
            "the correlations below measure nothing; give a trained reference.")


def summarize(found, resamples=1000, seed=0):
    """JSON-ready: per token type, the count, mean surprisal, mean N and E, Spearman's rho of N and of E
    with surprisal [95% CI over sequences, `resamples` of them], and the mean N and E [95% CI] per
    surprisal quintile of that type's tokens (`bins`)."""
    types = {}
    for index, name in enumerate(TYPES):
        keep = np.ones(len(found["type"]), bool) if name == "all" else found["type"] == index
        if not keep.any():
            types[name] = {"count": 0}
            continue
        s, n, e, seq = (found[k][keep] for k in ("surprisal", "iterations", "expected", "sequence"))
        types[name] = {"count": int(keep.sum()), "sequences": int(len(np.unique(seq))), "mean_surprisal": float(s.mean()),
                       "mean_iterations": float(n.mean()), "mean_expected": float(e.mean()),
                       "spearman_iterations": spearman_interval(n, s, seq, resamples, seed),
                       "spearman_expected": spearman_interval(e, s, seq, resamples, seed),
                       "bins": _quintiles({k: v[keep] for k, v in found.items()}, seed)}
    return {"types": types, "unmasked_per_sequence": UNMASKED_PER_SEQUENCE, "resamples": resamples}


def _quintiles(found, seed):
    """Mean N and E per surprisal quintile (equal counts by rank: ties never empty a bin) with 95%
    intervals over sequences (ratios of per-sequence sums); [] for fewer tokens than bins."""
    count = len(found["surprisal"])
    if count < BINS:
        return []
    which = np.empty(count, np.int64)
    which[np.argsort(found["surprisal"], kind="stable")] = np.arange(count) * BINS // count
    ids, sequence = np.unique(found["sequence"], return_inverse=True)
    counts = confidence.resample_counts(len(ids), seed=seed)
    bins = []
    for b in range(BINS):
        keep = which == b
        row = {"surprisal_range": [float(found["surprisal"][keep].min()), float(found["surprisal"][keep].max())],
               "count": int(keep.sum())}
        for key, name in (("iterations", "mean_iterations"), ("expected", "mean_expected")):
            numerators = np.bincount(sequence[keep], found[key][keep], minlength=len(ids))
            denominators = np.bincount(sequence[keep], minlength=len(ids)).astype(np.float64)
            low, high = confidence.percentile_interval(confidence.resampled_ratios(numerators, denominators, counts))
            row[name] = [float(found[key][keep].mean()), float(low), float(high)]
        bins.append(row)
    return bins
