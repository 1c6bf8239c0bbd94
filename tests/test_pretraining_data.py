"""Pre-training instances: statistics on the real Wikipedia sample, determinism, round trips, bad input."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from conftest import create_shards
from pipelines import tf_example
from pipelines.pretraining_dataset import make_pretraining_dataset, parse_examples
from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def wiki_shards(shared_data, wiki_vocab, tmp_path_factory):
    output = tmp_path_factory.mktemp("shards")
    report = create_shards(wiki_vocab, [str(shared_data / "wikipedia_en_sample" / "wiki_en_train.txt")], output)
    return output, report


@pytest.fixture(scope="module")
def wiki_instances(wiki_shards):
    """Every instance, train and eval, as numpy arrays."""
    output, _ = wiki_shards
    dataset = make_pretraining_dataset(str(output / "*.tfrecord"), batch_size=4096, training=False)
    batches = list(dataset.as_numpy_iterator())
    inputs = {k: np.concatenate([b[0][k] for b in batches]) for k in batches[0][0]}
    labels = {k: np.concatenate([b[1][k] for b in batches]) for k in batches[0][1]}
    return inputs, labels


def test_structure_of_every_instance(wiki_instances, wiki_shards):
    inputs, labels = wiki_instances
    _, report = wiki_shards
    tokens, segments, mask = inputs["token_ids"], inputs["segment_ids"], inputs["padding_mask"]
    assert len(tokens) == report["instances"]["total"] > 17000
    lengths = mask.sum(1)
    assert tokens.shape[1] == 128 and (lengths <= 128).all() and (lengths >= 5).all()
    assert (tokens[:, 0] == CLS_ID).all()
    assert (tokens[np.arange(len(tokens)), lengths - 1] == SEP_ID).all()
    assert ((tokens == SEP_ID) & (mask == 1)).sum(1).tolist() == [2] * len(tokens)
    assert (tokens[mask == 0] == 0).all() and (segments[mask == 0] == 0).all()
    first_sep = np.argmax(tokens == SEP_ID, axis=1)
    position = np.arange(128)[None]
    expected_segments = ((position > first_sep[:, None]) & (mask == 1)).astype(int)
    np.testing.assert_array_equal(segments, expected_segments)


def test_masking_statistics_on_wikipedia(wiki_instances, wiki_shards):
    inputs, labels = wiki_instances
    tokens, positions, weights = inputs["token_ids"], inputs["masked_positions"], labels["masked_lm_weights"]
    real = weights > 0
    maskable = inputs["padding_mask"].sum() - 3 * len(tokens)
    assert abs(real.sum() / maskable - 0.20) < 0.01  # masked fraction within 1 point
    at = np.take_along_axis(tokens, positions, axis=1)[real]
    gold = labels["masked_lm_ids"][real]
    as_mask = np.mean(at == MASK_ID)
    kept = np.mean(at == gold)
    assert abs(as_mask - 0.8) < 0.02 and abs(kept - 0.1) < 0.02 and abs(1 - as_mask - kept - 0.1) < 0.02
    # Never a special token, never padding; predictions padded with weight 0.
    assert not np.isin(gold, [0, CLS_ID, SEP_ID, MASK_ID]).any()
    assert (np.take_along_axis(inputs["padding_mask"], positions, axis=1)[real] == 1).all()
    assert (positions[~real] == 0).all() and (labels["masked_lm_ids"][~real] == 0).all()
    # SOP balance.
    assert abs(labels["sentence_order_label"].mean() - 0.5) < 0.02


def test_span_lengths_follow_one_over_n(wiki_shards):
    _, report = wiki_shards
    for n, span in report["ngram_spans"].items():
        assert abs(span["fraction"] - span["expected"]) < 0.03, (n, span)
    assert report["ngram_spans"]["3"]["count"] > 1000


def test_the_design_lists_the_records_features(wiki_shards):
    """docs/design.md's list of a record's features is what the writer writes, no more, no less."""
    import re

    output, _ = wiki_shards
    raw = next(iter(tf.data.TFRecordDataset(str(output / "train-00000-of-00004.tfrecord")).take(1)))
    written = set(tf.train.Example.FromString(raw.numpy()).features.feature)
    design = open(os.path.join(REPO, "docs", "design.md"), encoding="utf-8").read()
    listed = re.search(r"TFRecords of tf\.train\.Example with (.*?); the same", design, re.S).group(1)
    assert set(re.findall(r"`(\w+)`", listed)) == written


def test_whole_words_are_masked_together(wiki_shards):
    output, _ = wiki_shards
    # token_boundary is not a model input: parse it from the same raw records.
    raw = next(iter(tf.data.TFRecordDataset(str(output / "train-00000-of-00004.tfrecord")).batch(3000)))
    inputs, labels = (tree_to_numpy(x) for x in parse_examples(raw, 128, 30))
    boundary = tf.io.parse_example(raw, {"token_boundary": tf.io.FixedLenFeature([128], tf.int64)})["token_boundary"].numpy()
    n = len(boundary)
    real = labels["masked_lm_weights"] > 0
    rows = np.repeat(np.arange(n)[:, None], real.shape[1], axis=1)
    masked = np.zeros((n, 128), bool)
    masked[rows[real], inputs["masked_positions"][real]] = True
    tokens = inputs["token_ids"].copy()
    tokens[rows[real], inputs["masked_positions"][real]] = labels["masked_lm_ids"][real]
    # A continuation piece: not a word start, real, and not the first piece of a segment.
    continuation = (boundary == 0) & (inputs["padding_mask"] == 1)
    continuation[:, 1:] &= ~np.isin(tokens[:, :-1], [CLS_ID, SEP_ID])
    # A masked continuation has its predecessor masked; a masked piece, its continuation.
    assert (masked[:, 1:] & continuation[:, 1:] <= masked[:, :-1]).all()
    assert (masked[:, :-1] & continuation[:, 1:] <= masked[:, 1:]).all()
    assert continuation.sum() > 10000 and masked.sum() > 50000  # the check had material
    np.testing.assert_array_equal(boundary[:, 0], 1)


def tree_to_numpy(tree):
    return {k: v.numpy() for k, v in tree.items()}


def test_labels_and_segments_are_the_original_text(wiki_instances, wiki_tokenizer, shared_data):
    """Un-masking and un-swapping gives two runs of tokens that occur, in order, in the corpus."""
    inputs, labels = wiki_instances
    from pipelines.create_pretraining_data import read_documents

    documents = read_documents([str(shared_data / "wikipedia_en_sample" / "wiki_en_train.txt")])
    encoded = wiki_tokenizer.encode([s for doc in documents for s in doc])
    stream = np.concatenate([np.asarray(s, np.int32) for s in encoded]).astype(">u2").tobytes()
    rng = np.random.default_rng(0)
    for i in rng.choice(len(inputs["token_ids"]), 300, replace=False):
        tokens = inputs["token_ids"][i].copy()
        real = labels["masked_lm_weights"][i] > 0
        tokens[inputs["masked_positions"][i][real]] = labels["masked_lm_ids"][i][real]
        length = inputs["padding_mask"][i].sum()
        sep = np.flatnonzero(tokens[:length] == SEP_ID)
        first, second = tokens[1 : sep[0]], tokens[sep[0] + 1 : length - 1]
        if labels["sentence_order_label"][i] == 1:
            first, second = second, first
        at_first = stream.find(first.astype(">u2").tobytes())
        assert at_first >= 0 and at_first % 2 == 0, i
        assert stream.find(second.astype(">u2").tobytes(), at_first + 2 * len(first)) >= 0, i


def test_report_matches_the_records(wiki_shards, wiki_instances):
    output, report = wiki_shards
    inputs, labels = wiki_instances
    on_disk = json.loads((output / "stats.json").read_text())
    assert on_disk["instances"] == report["instances"]
    assert report["instances"]["eval"] > 0 and report["documents"]["eval"] > 0
    real = labels["masked_lm_weights"] > 0
    assert on_disk["tokens"] == int(inputs["padding_mask"].sum())
    assert abs(on_disk["masked_fraction"] - real.sum() / (inputs["padding_mask"].sum() - 3 * len(real))) < 1e-9
    assert abs(on_disk["sop_swapped_fraction"] - labels["sentence_order_label"].mean()) < 1e-9
    assert "| 3 |" in (output / "stats.md").read_text()
    assert not (output / "_incomplete").exists()


@pytest.mark.slow  # ~15 s: three runs of the data tool; `pytest -m slow`
def test_byte_identical_for_any_worker_count(shared_data, wiki_vocab, tmp_path):
    text = [str(shared_data / "wikipedia_en_sample" / "wiki_en_valid.txt")]
    runs = [create_shards(wiki_vocab, text, tmp_path / f"w{w}", workers=w) for w in (1, 2)]
    create_shards(wiki_vocab, text, tmp_path / "again", workers=2)
    names = sorted(p.name for p in (tmp_path / "w1").glob("*.tfrecord"))
    assert names == ["eval-00000-of-00001.tfrecord"] + [f"train-{i:05d}-of-00004.tfrecord" for i in range(4)]
    for name in names:
        first = (tmp_path / "w1" / name).read_bytes()
        assert first == (tmp_path / "w2" / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name
    assert runs[0]["instances"] == runs[1]["instances"]
    different_seed = create_shards(wiki_vocab, text, tmp_path / "seed", workers=2, instance={"seed": 99})
    assert (tmp_path / "seed" / names[1]).read_bytes() != (tmp_path / "w1" / names[1]).read_bytes()
    assert different_seed["instances"]["total"] > 0


def test_eval_documents_never_feed_training(shared_data, wiki_vocab, tmp_path):
    create_shards(wiki_vocab, [str(shared_data / "wikipedia_en_sample" / "bert_sample_text.txt")], tmp_path / "a",
            eval_fraction=0.0)
    assert sum(1 for _ in tf.data.TFRecordDataset(str(tmp_path / "a" / "eval-00000-of-00001.tfrecord"))) == 0
    from pipelines.instances import is_eval_document

    held_out = [d for d in range(2000) if is_eval_document(d, 12345, 0.1)]
    assert 150 < len(held_out) < 250  # ~10%, chosen per document, seeded
    assert held_out == [d for d in range(2000) if is_eval_document(d, 12345, 0.1)]


def test_hand_serialized_example_matches_tensorflow():
    ours = tf_example.serialize_example({
        "b": tf_example.int64_feature([0, 1, 127, 128, 300, 70000, 2**40]),
        "a": tf_example.float_feature([1.0, 0.5, -2.25]),
        "c": tf_example.int64_feature([]),
    })
    theirs = tf.train.Example(features=tf.train.Features(feature={
        "b": tf.train.Feature(int64_list=tf.train.Int64List(value=[0, 1, 127, 128, 300, 70000, 2**40])),
        "a": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 0.5, -2.25])),
        "c": tf.train.Feature(int64_list=tf.train.Int64List(value=[])),
    }))
    assert tf.train.Example.FromString(ours) == theirs


def test_parse_eagerly_and_in_dataset_map(wiki_shards):
    output, _ = wiki_shards
    path = str(output / "eval-00000-of-00001.tfrecord")
    serialized = [r.numpy() for r in tf.data.TFRecordDataset(path).take(8)]
    eager_inputs, eager_labels = parse_examples(tf.constant(serialized), 128, 30)
    mapped = tf.data.TFRecordDataset(path).take(8).batch(8).map(lambda s: parse_examples(s, 128, 30))
    graph_inputs, graph_labels = next(iter(mapped))
    for key in eager_inputs:
        np.testing.assert_array_equal(eager_inputs[key], graph_inputs[key])
    for key in eager_labels:
        np.testing.assert_array_equal(eager_labels[key], graph_labels[key])
    assert eager_inputs["masked_positions"].shape == (8, 30) and eager_labels["sentence_order_label"].shape == (8,)


def test_training_dataset_repeats_shuffles_deterministically(wiki_shards):
    output, _ = wiki_shards
    pattern = str(output / "train-*.tfrecord")
    first = make_pretraining_dataset(pattern, 16, seed=3, deterministic=True)
    second = make_pretraining_dataset(pattern, 16, seed=3, deterministic=True)
    a = [x[0]["token_ids"] for x in first.take(3).as_numpy_iterator()]
    b = [x[0]["token_ids"] for x in second.take(3).as_numpy_iterator()]
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and a[0].shape == (16, 128)
    with pytest.raises(ValueError, match="no TFRecord file matches"):
        make_pretraining_dataset(str(output / "nothing-*.tfrecord"), 4)


def test_per_replica_batches_under_mirrored_strategy(wiki_shards):
    output, _ = wiki_shards
    script = textwrap.dedent(f"""
        import tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from pipelines.pretraining_dataset import make_pretraining_dataset
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        dataset = strategy.distribute_datasets_from_function(
            lambda context: make_pretraining_dataset({str(output / 'train-*.tfrecord')!r}, 8, seed=1,
                                                     input_context=context))
        inputs, labels = next(iter(dataset))
        shapes = [t.shape for t in strategy.experimental_local_results(inputs["token_ids"])]
        print("SHAPES", shapes)
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert "SHAPES [TensorShape([4, 128]), TensorShape([4, 128])]" in result.stdout, result.stderr[-2000:]


def test_tfrecord_writer_matches_tensorflow_byte_for_byte(tmp_path):
    from pipelines.tfrecord_writer import TFRecordWriter

    records = [b"", b"a", b"hello world" * 100, bytes(range(256))]
    with TFRecordWriter(str(tmp_path / "ours.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    with tf.io.TFRecordWriter(str(tmp_path / "theirs.tfrecord")) as writer:
        for record in records:
            writer.write(record)
    assert (tmp_path / "ours.tfrecord").read_bytes() == (tmp_path / "theirs.tfrecord").read_bytes()


def test_local_data_creation_does_not_import_tensorflow(wiki_vocab, tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("One sentence here.\nAnother one follows.\n\nA second document.\nWith two lines.\n")
    script = textwrap.dedent(f"""
        import sys
        from pipelines import create_pretraining_data
        create_pretraining_data.main(["--input", {str(corpus)!r}, "--vocab", {wiki_vocab!r},
                                      "--output_dir", {str(tmp_path / 'out')!r}, "--workers", "1"])
        print("TENSORFLOW IMPORTED" if "tensorflow" in sys.modules else "NO TENSORFLOW")
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "NO TENSORFLOW" in result.stdout, result.stdout + result.stderr[-2000:]


def test_workers_start_deaf_to_a_terminals_ctrl_c():
    """A terminal's Ctrl-C reaches the whole process group: the workers, spawned with SIGINT blocked
    (`_spawning`), cannot be interrupted while they import (a traceback each); once started they
    ignore it, and the main process stops the run with its one line."""
    import signal
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from pipelines import worker_pool

    probe = "import signal; print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))"
    with worker_pool._spawning():
        spawned = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert spawned.stdout.strip() == "True", spawned.stderr
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # here, as it was
    with ProcessPoolExecutor(1, mp_context=get_context("spawn"), initializer=worker_pool._start_worker,
                             initargs=(int, ())) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
        assert signal.SIGINT not in pool.submit(signal.pthread_sigmask, signal.SIG_BLOCK, []).result()


def test_reads_records_in_the_original_albert_layout(tmp_path):
    """Features as google-research/albert writes them (int64 lists, float weights, 20 predictions)."""
    ints = lambda v: tf.train.Feature(int64_list=tf.train.Int64List(value=v))  # noqa: E731
    ids = [2, 15, 4, 16, 3, 17, 4, 3] + [0] * 8
    example = tf.train.Example(features=tf.train.Features(feature={
        "input_ids": ints(ids), "input_mask": ints([1] * 8 + [0] * 8), "segment_ids": ints([0] * 5 + [1] * 3 + [0] * 8),
        "token_boundary": ints([1] * 8 + [0] * 8), "masked_lm_positions": ints([2, 6] + [0] * 18),
        "masked_lm_ids": ints([20, 21] + [0] * 18), "next_sentence_labels": ints([1]),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(value=[1.0, 1.0] + [0.0] * 18)),
    }))
    with tf.io.TFRecordWriter(str(tmp_path / "albert.tfrecord")) as writer:
        writer.write(example.SerializeToString())
    inputs, labels = next(iter(make_pretraining_dataset(str(tmp_path / "albert.tfrecord"), 4, training=False)))
    assert inputs["token_ids"].numpy().tolist() == [ids] and inputs["masked_positions"].shape == (1, 20)
    assert labels["masked_lm_ids"].numpy()[0, :2].tolist() == [20, 21]
    assert labels["sentence_order_label"].numpy().tolist() == [1]


def test_single_segment_instances_have_the_shape_of_a_served_sentence():
    # Documents of 8 sentences of 12 pieces each; ids 5.. all begin words.
    from pipelines import instances

    rng = np.random.default_rng(0)
    documents = [[list(rng.integers(5, 300, 12)) for _ in range(8)] for _ in range(200)]
    word_start = [1] * 300

    def make(**settings):
        config = instances.InstanceConfig(vocabulary_size=300, max_seq_length=64, dupe_factor=1, **settings)
        stats = __import__("collections").Counter()
        records = [r for d, doc in enumerate(documents) for r in instances.document_instances(doc, d, 0, config,
                                                                                               word_start, stats)]
        return records, stats

    pairs, _ = make()
    assert make(single_segment_prob=0.0)[0] == pairs  # no extra random draw: ALBERT's records unchanged
    records, stats = make(single_segment_prob=0.3)
    parsed = [tf.train.Example.FromString(r).features.feature for r in records]
    ids = [list(p["input_ids"].int64_list.value) for p in parsed]
    single = [row for row in ids if row.count(SEP_ID) == 1]
    assert stats["single_segments"] == len(single) and 0.2 < len(single) / len(ids) < 0.4
    masked, maskable = 0, 0
    for p, row in zip(parsed, ids):
        length = sum(p["input_mask"].int64_list.value)
        if row.count(SEP_ID) == 1:
            assert row[0] == CLS_ID and row[length - 1] == SEP_ID and 3 <= length <= 64
            assert set(p["segment_ids"].int64_list.value) == {0} and p["next_sentence_labels"].int64_list.value == [0]
            masked, maskable = masked + sum(p["masked_lm_weights"].float_list.value), maskable + length - 2
        else:
            assert row[:length].count(SEP_ID) == 2
    assert 0.15 < masked / maskable < 0.25  # masked like any other sequence
    with pytest.raises(ValueError, match=r"single_segment_prob must be in \[0, 1\], got 1.5"):
        instances.InstanceConfig(vocabulary_size=300, single_segment_prob=1.5)


def test_a_bare_word_start_piece_is_masked_with_the_word_it_begins():
    # SentencePiece writes "▁(" as "▁" "(" when it has no "▁(" piece: the two are one word, so a
    # mask never leaves a bare "▁" that a served "[MASK](" cannot have.
    from pipelines import instances

    word_start = [1] * 50
    assert instances.word_starts([2, 7, 9, 11, 9, 3], word_start, bare_space=9) == [1, 1, 1, 0, 1, 1]
    assert instances.word_starts([2, 7, 9, 11], word_start) == [1, 1, 1, 1]


def test_text_the_vocabulary_cannot_read_and_text_cut_off_are_warned():
    """A sentence of another script is one <unk> piece, so its share of sentences is told beside the pieces'; a
    text most of whose pieces were cut off (a document on one line) is told, the English text's share is not."""
    from pipelines import instances
    from pipelines.record_warnings import truncation_warning, unknown_warning
    from pipelines.tokenizer import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(__file__).resolve().parents[1] / "saved_models" / "albert_act_english" / "1"
                                        / "assets" / "vocab.model"))  # the shipped English model's
    known = instances.known_characters(tokenizer)
    assert instances.unreadable("数据库是一个按照数据结构来组织的仓库。", known)
    assert not instances.unreadable("The café (数据) was open.", known)
    assert not instances.unreadable("THE CASTLE OF ÉLAN, BUILT IN 1602 ★", known)  # read lower-cased, accents off
    report = {"unknown_fraction": 0.02, "sentences": 100, "unreadable_sentences": 18, "vocab": "v.model"}
    assert unknown_warning(report).startswith("2% of the pieces are <unk>, and 18% of the sentences are mostly "
                                              "characters that are in no piece: --vocab v.model cannot read")
    assert unknown_warning({**report, "unreadable_sentences": 10}) is None
    cut = {"truncation": {"tokens_removed": 21}, "tokens": 79, "config": {"max_seq_length": 128}}
    assert truncation_warning(cut) is None  # English Wikipedia at 128 pieces
    assert truncation_warning({**cut, "truncation": {"tokens_removed": 444_082}, "tokens": 128}).startswith(
        "100% of the text's pieces were cut off to fit sequences of 128: each line is read as a sentence")
    assert unknown_warning({**report, "unknown_fraction": 0.3, "unreadable_sentences": 0}).startswith(
        "30% of the pieces are <unk>: --vocab v.model cannot read")


def test_the_masking_warning_names_the_setting_that_missed():
    """Whole-word spans overshoot the target in short sequences (use longer ones); a rate below one piece
    per sequence is raised to one (use a larger rate, or longer sequences); long spans in short sequences
    fall short of it (use shorter spans or longer sequences); on target, nothing."""
    from pipelines.record_warnings import masking_warning

    def report(rate, length, share):
        return {"config": {"masked_lm_prob": rate, "max_seq_length": length, "max_ngram": 10}, "masked_fraction": share,
                "instances": {"total": 3}, "mean_tokens_per_instance": 12.0}

    assert masking_warning(report(0.2, 16, 0.5)) == (
        "50% of the maskable pieces are masked against --masked_lm_prob 0.2: sequences of 16 pieces (12.0 on average) "
        "are too short for it; use a longer --max_seq_length (ALBERT: 512, the demo 64)")
    assert "is less than one piece" in masking_warning(report(0.01, 16, 0.08))
    assert masking_warning(report(0.2, 128, 0.21)) is None
    assert masking_warning(report(0.2, 64, 0.175)) is None  # the English text at 64 pieces
    assert masking_warning(report(0.999, 128, 0.814)).startswith(  # 19 points short, though above 0.75 x target
        "81.4% of the maskable pieces are masked against --masked_lm_prob 0.999: spans of up to")
    assert masking_warning(report(0.2, 16, 0.08)) == (
        "8% of the maskable pieces are masked against --masked_lm_prob 0.2: spans of up to --max_ngram 10 whole words "
        "that would pass a sequence's budget are skipped, and sequences of 16 pieces (12.0 on average) leave little "
        "room; use a smaller --max_ngram or a longer --max_seq_length")
