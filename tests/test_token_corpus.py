"""The tokenized corpus the data tool writes beside its TFRecords, and the instances made from it on
the fly (pipelines/token_corpus.py): the same instances as the TFRecords, fresh masks after them,
exact resumption, and no TensorFlow."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from pipelines import token_corpus
from pipelines.pretraining_dataset import REQUIRED_FEATURES

FEATURES = ("input_ids", "input_mask", "segment_ids", "token_boundary", "masked_lm_positions", "masked_lm_ids",
            "masked_lm_weights", "next_sentence_labels")


def _records(pattern):
    """Every record of the files as a tuple of its features' values (a sortable key)."""
    rows = []
    for path in sorted(tf.io.gfile.glob(pattern)):
        for raw in tf.data.TFRecordDataset(path):
            feature = tf.train.Example.FromString(raw.numpy()).features.feature
            rows.append(tuple(tuple(feature[name].float_list.value if name == "masked_lm_weights"
                                    else feature[name].int64_list.value) for name in FEATURES))
    return rows


def _made(features):
    return tuple(tuple(float(v) for v in features[n]) if n == "masked_lm_weights" else tuple(features[n])
                 for n in FEATURES)


def test_passes_hold_exactly_the_tfrecords_instances_and_later_passes_mask_afresh(records):
    folder = Path(records[0]).parent
    corpus = token_corpus.TokenCorpus(str(folder / token_corpus.TOKENS_TRAIN))
    dupe_factor = corpus.config.dupe_factor  # 2 in the fixture
    stream = token_corpus.InstanceStream(corpus, seed=7)
    per_pass = [[], [], []]
    for features in stream:
        if stream.position[0] >= len(per_pass):
            break
        per_pass[stream.position[0]].append(_made(features))
    expected = sorted(_records(records[0]))
    assert sorted(per_pass[0] + per_pass[1]) == expected  # duplicates 0 and 1, whatever the order
    assert len(expected) > 100
    # Pass 2 masks the same documents anew: other positions, the same pieces.
    assert sorted(per_pass[2]) != sorted(per_pass[0]) and len(per_pass[2]) > 0.8 * len(per_pass[0])
    # The statistics the data tool reports follow: SOP balance and the masked share.
    labels = np.array([row[-1][0] for row in per_pass[2]])
    assert 0.4 < labels.mean() < 0.6
    maskable = sum(sum(1 for piece in row[0] if piece not in (0, 2, 3)) for row in per_pass[2])  # not pad, [CLS], [SEP]
    masked = sum(sum(row[6]) for row in per_pass[2]) / maskable
    assert 0.17 < masked < 0.23  # 20% of the maskable pieces
    assert dupe_factor == 2


def test_held_out_documents_give_the_eval_shard(records):
    folder = Path(records[0]).parent
    stream = token_corpus.InstanceStream(token_corpus.TokenCorpus(str(folder / token_corpus.TOKENS_EVAL)), held_out=True)
    assert sorted(_made(f) for f in stream) == sorted(_records(records[1]))


def test_held_out_documents_trained_on_are_told_from_their_text(records):
    """The JAX run's check that a second data run's held-out documents are not the first run's training ones (the
    TensorFlow run's `record_overlap`, in NumPy): a data run's own split shares nothing; a corpus against itself
    shares (nearly) every document; fewer pieces read of the training side, fewer found."""
    folder = Path(records[0]).parent
    train = token_corpus.TokenCorpus(str(folder / token_corpus.TOKENS_TRAIN))
    held_out = token_corpus.TokenCorpus(str(folder / token_corpus.TOKENS_EVAL))
    assert token_corpus.shared_documents(train, held_out) == 0.0
    assert token_corpus.shared_documents(held_out, held_out) == 1.0
    assert token_corpus.shared_documents(train, train) > 0.9
    assert token_corpus.shared_documents(train, train, sample=train.ids.size // 2) < 0.6


def test_batches_resume_exactly_from_a_position(records):
    corpus = token_corpus.TokenCorpus(str(Path(records[0]).parent / token_corpus.TOKENS_TRAIN))
    stream = token_corpus.InstanceStream(corpus, seed=3)
    stream.batch(5)
    position = stream.position
    expected = stream.batch(7)
    resumed = token_corpus.InstanceStream(corpus, seed=3, position=position).batch(7)
    for part in range(2):
        for name in expected[part]:
            np.testing.assert_array_equal(resumed[part][name], expected[part][name])
    inputs, labels = expected
    assert inputs["token_ids"].shape == (7, 64) and inputs["token_ids"].dtype == np.int32
    assert labels["sentence_order_label"].shape == (7,) and labels["masked_lm_weights"].dtype == np.float32
    assert set(REQUIRED_FEATURES) <= set(FEATURES)


def test_the_corpus_is_compact_and_read_without_tensorflow(records):
    path = Path(records[0]).parent / token_corpus.TOKENS_TRAIN
    data = np.load(path)
    assert data["ids"].dtype == np.uint16
    assert os.path.getsize(path) < 2.2 * data["ids"].size + 64 * 1024  # two bytes a piece, and the index
    script = ("import sys; sys.modules['tensorflow'] = None\n"
              "from pipelines import token_corpus\n"
              f"stream = token_corpus.InstanceStream(token_corpus.TokenCorpus({str(path)!r}))\n"
              "inputs, labels = stream.batch(4)\n"
              "print(inputs['token_ids'].shape, 'tensorflow' in sys.modules and sys.modules['tensorflow'] is not None)")
    repo = Path(__file__).resolve().parents[1]
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=repo, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["(4,", "64)", "False"]


def test_a_damaged_corpus_is_named(tmp_path):
    bad = tmp_path / "tokens-train.npz"
    bad.write_bytes(b"not numpy")
    import pytest

    with pytest.raises(ValueError, match=f"{bad}: not a token corpus of the data tool"):
        token_corpus.TokenCorpus(str(bad))


def test_written_through_a_url_like_a_bucket(records, tmp_path):
    """The data tool writes to gs:// through tf.io.gfile, whose objects cannot seek back as np.savez
    does: the token corpus is encoded in memory first. file:// stands in for the bucket."""
    from pipelines.create_pretraining_data import create_pretraining_data

    root = Path(records[0]).parent.parent
    local = token_corpus.TokenCorpus(str(Path(records[0]).parent / token_corpus.TOKENS_TRAIN))
    create_pretraining_data([str(root / "corpus.txt")], str(root / "vocab.model"), f"file://{tmp_path}/data",
                            local.config, num_shards=2, workers=1, eval_fraction=0.05, progress=False)
    remote = token_corpus.TokenCorpus(str(tmp_path / "data" / token_corpus.TOKENS_TRAIN))
    assert np.array_equal(remote.ids, local.ids) and np.array_equal(remote.documents, local.documents)
    assert remote.config == local.config and len(remote.ids) > 1000


def test_a_cut_or_empty_corpus_is_named_not_a_traceback(records, tmp_path):
    whole = (Path(records[0]).parent / token_corpus.TOKENS_TRAIN).read_bytes()
    for name, content in (("cut.npz", whole[: len(whole) // 2]), ("empty.npz", b""), ("text.npz", b"ids\n")):
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ValueError, match=rf"{name}: not a token corpus of the data tool, or cut short .*make the "
                                             "records again"):
            token_corpus.TokenCorpus(str(tmp_path / name))


def test_ids_outside_its_vocabulary_are_named(records, tmp_path):
    with np.load(Path(records[0]).parent / token_corpus.TOKENS_TRAIN) as data:
        fields = dict(data)
    fields["ids"] = fields["ids"].copy()
    fields["ids"][5] = len(fields["word_start"])  # one past the vocabulary
    np.savez(tmp_path / "bad.npz", **fields)
    with pytest.raises(ValueError, match=r"bad.npz: damaged token corpus \(piece id 400 of a 400-piece vocabulary"):
        token_corpus.TokenCorpus(str(tmp_path / "bad.npz"))


def test_a_corpus_made_with_more_prediction_slots_than_a_sequence_holds_is_read(records, tmp_path):
    """Corpora made before InstanceConfig bounded max_predictions_per_seq by the sequence (8192 given,
    or 150: the default 1.2 x the budget at --masked_lm_prob 0.999) read with the bound."""
    import json

    with np.load(Path(records[0]).parent / token_corpus.TOKENS_TRAIN) as data:
        fields = dict(data)
    config = json.loads(str(fields["config"]))
    fields["config"] = np.array(json.dumps({**config, "max_predictions_per_seq": 8192}))
    np.savez(tmp_path / "old.npz", **fields)
    assert token_corpus.TokenCorpus(str(tmp_path / "old.npz")).config.max_predictions_per_seq == \
        config["max_seq_length"] - 2


def test_a_pickled_file_is_refused_without_numpys_advice_to_unpickle_it(tmp_path):
    for name, save in (("objects.npz", lambda p: np.savez(p, ids=np.array([{"a": 1}], dtype=object))),
                       ("pickle.npz", lambda p: p.write_bytes(b"\x80\x04K\x01."))):  # pickle.dumps(1)
        save(tmp_path / name)
        with pytest.raises(ValueError) as refused:
            token_corpus.TokenCorpus(str(tmp_path / name))
        assert "not a NumPy file of arrays (NumPy would read it as pickled Python objects, which are never loaded)" \
            in str(refused.value), str(refused.value)
        assert "allow_pickle" not in str(refused.value)


def test_a_corpus_of_the_wrong_kinds_or_bounds_is_named_and_an_empty_one_does_not_spin(records, tmp_path):
    with np.load(Path(records[0]).parent / token_corpus.TOKENS_TRAIN) as data:
        fields = dict(data)
    cases = {"float_ids": ({"ids": fields["ids"].astype(np.float32)}, r"ids must be non-negative integers"),
             "negative_ends": ({"document_ends": -fields["document_ends"]}, r"document_ends must be non-negative"),
             "ends_past": ({"document_ends": fields["document_ends"] + 1}, r"document_ends go back or do not end at"),
             "sentence_back": ({"sentence_ends": fields["sentence_ends"][::-1]}, r"sentence_ends go back"),
             "word_start_cut": ({"word_start": fields["word_start"][:100]}, r"word_start has 100 entries"),
             "bare_space_far": ({"bare_space": np.int64(99999)}, r"bare_space is 99999, for the 400-piece"),
             "unknown_setting": ({"config": fields["config"].item()[:-1] + ', "colour": 1}'},
                                 r"not a token corpus of the data tool, or cut short \(TypeError")}
    for name, (change, match) in cases.items():
        np.savez(tmp_path / f"{name}.npz", **{**fields, **change})
        with pytest.raises(ValueError, match=rf"{name}.npz: .*{match}"):
            token_corpus.TokenCorpus(str(tmp_path / f"{name}.npz"))
    empty = {**fields, "ids": fields["ids"][:0], "sentence_ends": fields["sentence_ends"][:0],
             "document_ends": fields["document_ends"][:0], "documents": fields["documents"][:0]}
    np.savez(tmp_path / "empty.npz", **empty)
    stream = token_corpus.InstanceStream(token_corpus.TokenCorpus(str(tmp_path / "empty.npz")))
    with pytest.raises(ValueError, match=r"empty.npz: makes no pre-training instance \(0 documents\)"):
        stream.batch(8)


def test_a_token_corpus_not_readable_is_not_called_damaged(tmp_path, monkeypatch):
    """A whole tokens-train.npz of mode 000 was 'not a token corpus, or cut short: make the records again'."""
    def refused(path, allow_pickle=False):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(np, "load", refused)
    with pytest.raises(ValueError, match=r"tokens-train.npz: cannot be read \(permission denied\): make it readable "
                                         r"\(chmod u\+r"):
        token_corpus.TokenCorpus(str(tmp_path / "tokens-train.npz"))


def test_held_out_records_with_no_window_of_text_compare_to_nothing_without_a_warning(records, monkeypatch):
    """Held-out records of which no run of WINDOW text pieces is read (a few short ones) made numpy's 'Mean of empty
    slice' reach the user before the refusal that followed."""
    import glob
    import warnings

    from pipelines import record_overlap

    real = record_overlap._windows
    monkeypatch.setattr(record_overlap, "_windows", lambda files, *a: (
        (np.zeros(0, np.int64), np.zeros(0, np.uint64)), 14) if files == ["held"] else real(files, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        share, (rows, held) = record_overlap.trained_share(sorted(glob.glob(records[0])), ["held"], 64, 15)
    assert (share, held) == (0.0, 0) and rows > 0


def test_a_runs_own_files_given_as_records_are_named(tmp_path):
    """A run's TensorBoard folder or its events given as --train_files or --eval_files on JAX were told to make the
    records again, or to give shards in that folder (round 44 A96, A98); a checkpoint's files are named alike."""
    import re

    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "events.out.tfevents.1.host.1.v2").write_bytes(b"\0" * 16)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "jax-3.npz").write_bytes(b"\0" * 16)
    for given, said in ((tmp_path / "train", "a run's TensorBoard folder (its events)"),
                        (tmp_path / "train" / "*", "a run's TensorBoard events file"),
                        (tmp_path / "checkpoints" / "jax-*", "a run's checkpoint file")):
        with pytest.raises(ValueError, match=rf"is {re.escape(said)}, not records: give the data tool's shards \(e.g. "
                                             r"its eval-\*.tfrecord\) or its token corpus \(tokens-\*.npz\)$"):
            token_corpus.token_files([str(given)])
