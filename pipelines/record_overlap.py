"""Held-out records that hold training text: a second data run of the same text (another --seed, another
--eval_fraction) splits its documents otherwise, so its held-out records hold the first run's training documents,
under other shard names and other masks. Told from the records themselves: runs of `WINDOW` pieces of their text
(each masked piece put back: the records keep the original ids of what they mask), digested, in both."""

import numpy as np
import tensorflow as tf

WINDOW = 16  # pieces: a run this long, within a segment, in two records is the same text
SAMPLE_EVAL, SAMPLE_WINDOWS = 2000, 1_000_000  # held-out records read; training windows read (records: that / length)
SEEN = 0.5  # of a held-out record's runs found in training records: that record's text was trained on
REFUSED = 0.2  # of the held-out records seen: refused (two runs of one data tool over different text: none)


def shared_text(train_files, eval_files):
    """`trained_share` of files that read, of one shape; (0.0, (0, 0)) where they do not (an empty, cut or corrupt
    shard, two lengths): the records' own checks name those."""
    from pipelines.pretraining_dataset import record_shapes

    try:
        shape = record_shapes(eval_files[0])
        if record_shapes(train_files[0]) != shape:
            return 0.0, (0, 0)
        return trained_share(train_files, eval_files, *shape)
    except (ValueError, tf.errors.OpError):
        return 0.0, (0, 0)


def trained_share(train_files, eval_files, seq, predictions):
    """(the share of the held-out records whose text is in the training records read, how many were read each)."""
    held, _ = _windows(eval_files, SAMPLE_EVAL, seq, predictions)
    trained, rows = _windows(train_files, max(1, SAMPLE_WINDOWS // seq), seq, predictions)
    if not len(held[0]) or not rows:  # (no window read: nothing to compare, and no mean of nothing to warn of)
        return 0.0, (rows, 0)
    known = np.unique(trained[1])
    found = np.isin(held[1], known)
    counts, hits = np.bincount(held[0], minlength=len(held)), np.bincount(held[0], found, minlength=len(held))
    records = counts > 0
    return float(np.mean(hits[records] >= SEEN * counts[records])), (rows, int(records.sum()))


def _windows(files, limit, seq, predictions):
    """The first `limit` records' digests of their runs of `WINDOW` pieces, within one segment: ((record, digest)
    arrays, how many records were read)."""
    spec = {name: tf.io.FixedLenFeature([n], tf.int64) for name, n in (
        ("input_ids", seq), ("input_mask", seq), ("segment_ids", seq), ("masked_lm_positions", predictions),
        ("masked_lm_ids", predictions))}
    spec["masked_lm_weights"] = tf.io.FixedLenFeature([predictions], tf.float32)
    found, read = [], 0
    dataset = tf.data.Dataset.from_tensor_slices(list(files)).interleave(tf.data.TFRecordDataset, cycle_length=8)
    for batch in dataset.take(limit).batch(1024).map(lambda b: tf.io.parse_example(b, spec)):
        ids, mask, segments = (batch[k].numpy().astype(np.uint64) for k in ("input_ids", "input_mask", "segment_ids"))
        put = batch["masked_lm_weights"].numpy() > 0
        rows = np.nonzero(put)[0]
        ids[rows, batch["masked_lm_positions"].numpy()[put]] = batch["masked_lm_ids"].numpy()[put]
        ends = np.cumsum(mask, axis=1) == mask.sum(axis=1, keepdims=True)  # [SEP] ends a segment: not text
        text = (mask > 0) & ~ends & (np.arange(seq) > 0)  # ([CLS] first)
        text[:, :-1] &= segments[:, 1:] == segments[:, :-1]  # (the first segment's [SEP])
        digest = np.zeros((len(ids), seq - WINDOW + 1), np.uint64)
        whole = np.ones_like(digest, bool)
        for k in range(WINDOW):
            digest = digest * np.uint64(1_000_003) + ids[:, k:k + digest.shape[1]]
            whole &= text[:, k:k + digest.shape[1]]
        found.append((np.nonzero(whole)[0] + read, digest[whole]))
        read += len(ids)
    if not found:
        return (np.zeros(0, np.int64), np.zeros(0, np.uint64)), 0
    return tuple(np.concatenate(parts) for parts in zip(*found)), read
