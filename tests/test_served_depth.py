"""benchmarks.served_depth: the held-out records re-shaped toward a served sentence, step by step."""

import json
import re
import shutil

import numpy as np
import pytest

from benchmarks import served_depth
from conftest import TINY_RUN
from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID


def test_each_shape_is_one_step_from_the_last_toward_a_served_sentence():
    # [CLS] 10 [MASK] 12 [SEP] 13 14 15 [SEP], the [MASK] standing for 11.
    ids = [CLS_ID, 10, MASK_ID, 12, SEP_ID, 13, 14, 15, SEP_ID]
    segments = [0, 0, 0, 0, 0, 1, 1, 1, 1]
    originals = [CLS_ID, 10, 11, 12, SEP_ID, 13, 14, 15, SEP_ID]
    got = {name: (a.tolist(), s.tolist()) for name, (a, s) in served_depth.shapes(ids, segments, originals, 2).items()}
    assert list(got) == list(served_depth.SHAPES)
    assert list(got.values()) == [
        (ids, segments),
        (originals, segments),
        (originals, [0] * 9),
        ([CLS_ID, 10, 11, SEP_ID, 13, 14, SEP_ID], [0, 0, 0, 0, 1, 1, 1]),
        ([CLS_ID, 10, 11, 12, SEP_ID], [0, 0, 0, 0, 0]),
    ]


def test_a_record_that_is_not_a_pair_is_refused_with_its_pieces():
    with pytest.raises(ValueError, match=r"not a \[CLS\] A \[SEP\] B \[SEP\] record: \[2, 10, 3\]"):
        served_depth.shapes([CLS_ID, 10, SEP_ID], [0, 0, 0], [CLS_ID, 10, SEP_ID], 2)


def test_summaries_are_ratios_of_sums_over_sequences():
    # (length, sum of ordinary N, ordinary pieces, pieces with N >= 2, [CLS] N) per sequence.
    rows = np.array([(5, 6, 3, 3, 2), (3, 1, 1, 0, 1)], np.float64)
    summary = served_depth.summarize(rows)
    assert summary["sequences"] == 2 and summary["mean_length"] == 4.0
    assert summary["ordinary"][0] == pytest.approx(7 / 4) and summary["share_2_or_more"] == pytest.approx(3 / 4)
    assert summary["cls"][0] == pytest.approx(1.5)
    # Resamples draw whole sequences: the ordinary mean lies between one sequence's 1.0 and the other's 2.0.
    low, high = summary["ordinary"][1]
    assert 1.0 <= low <= 7 / 4 <= high <= 2.0


def test_the_benchmark_runs_an_export_on_held_out_records(tiny_run, records, tmp_path, capsys):
    _, export_dir = tiny_run
    results = served_depth.main(["--init", export_dir, "--records", records[1], "--max_sequences", "12",
                                 "--output_dir", str(tmp_path)])
    assert list(results) == list(served_depth.SHAPES)
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["shapes"] == json.loads(json.dumps(results))
    max_iterations = written["max_iterations"]
    assert max_iterations == TINY_RUN["max_iterations"]
    for name, summary in results.items():
        assert summary["sequences"] == 12
        mean, (low, high) = summary["ordinary"]
        assert 1.0 <= low <= mean <= high <= max_iterations, name
    first, alone = results[served_depth.SHAPES[0]], results[served_depth.SHAPES[4]]
    assert alone["mean_length"] <= 2 * 8 + 2 < first["mean_length"]
    table = capsys.readouterr().out
    assert "| 5. first segment alone, cut to 2 x --short pieces |" in table


def test_a_missing_export_is_named(tmp_path):
    with pytest.raises(SystemExit, match="--init .*nowhere: no such export$"):
        served_depth.main(["--init", str(tmp_path / "nowhere"), "--records", str(tmp_path / "*.tfrecord")])


def test_a_corrupt_held_out_shard_is_named(tiny_run, records, tmp_path):
    import glob
    import shutil

    for path in glob.glob(records[1]):
        shutil.copy(path, tmp_path)
    shard = sorted(tmp_path.glob("*.tfrecord"))[0]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(SystemExit, match=rf"error: {shard}: corrupt within its first 2000 records \(.*\); make the "
                                         r"shard again"):
        served_depth.main(["--init", tiny_run[1], "--records", str(tmp_path / "*.tfrecord")])


@pytest.mark.parametrize("change, message", [
    (dict(records="{folder}"), r"records is a directory, not a TFRecord file: give the files, or a glob such as "),
    (dict(output_dir="{file}"), r"--output_dir .*notes.txt is a file"),
    (dict(output_dir=""), r"--output_dir must be a path, got ''"),
    (dict(output_dir="{others}"), r"--output_dir .*others holds other files \(classifier.json\)"),
    (dict(init=""), r"--init must be a path, got ''"),
], ids=["records-a-folder", "output-a-file", "output-empty", "output-of-other-files", "init-empty"])
def test_bad_paths_are_refused_before_any_work(change, message, tiny_run, records, tmp_path, capsys):
    """Round eight's served_depth cases: a folder for --records, a file or '' for --output_dir, a dir of
    someone's results.json (it was written over), '' for --init: one "error:" line each, nothing written."""
    folder = tmp_path / "records"
    folder.mkdir()
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "others").mkdir()
    (tmp_path / "others" / "results.json").write_text('{"best": "mine"}')
    (tmp_path / "others" / "classifier.json").write_text("{}")
    flags = {"init": tiny_run[1], "records": records[1], "output_dir": str(tmp_path / "out")}
    for key, value in change.items():
        flags[key] = value.format(folder=folder, file=tmp_path / "notes.txt", others=tmp_path / "others")
    with pytest.raises(SystemExit) as stop:
        served_depth.main([a for key, value in flags.items() for a in (f"--{key}", value)] + ["--max_sequences", "4"])
    assert re.search(message, str(stop.value)), stop.value
    assert (tmp_path / "others" / "results.json").read_text() == '{"best": "mine"}'
    assert not (tmp_path / "out").exists()


def write_record(path, ids, segments, length):
    """One pre-training record of `ids` (one [MASK] at position 2, standing for 11), padded to length."""
    import tensorflow as tf

    from pipelines.tf_example import float_feature, int64_feature, serialize_example

    pad = [0] * (length - len(ids))
    record = serialize_example({
        "input_ids": int64_feature(ids + pad), "input_mask": int64_feature([1] * len(ids) + pad),
        "segment_ids": int64_feature(segments + pad), "masked_lm_positions": int64_feature([2, 0]),
        "masked_lm_ids": int64_feature([11, 0]), "masked_lm_weights": float_feature([1.0, 0.0]),
        "next_sentence_labels": int64_feature([0])})
    with tf.io.TFRecordWriter(str(path)) as writer:
        writer.write(record)
    return path


PAIR = [CLS_ID, 10, MASK_ID, 12, SEP_ID, 13, SEP_ID]


@pytest.mark.parametrize("ids, segments, length, message", [
    ([CLS_ID, 10, MASK_ID, 12, SEP_ID], [0] * 5, 8,  # one segment: what a fine-tuning file might hold
     r"one\.tfrecord: not a \[CLS\] A \[SEP\] B \[SEP\] record"),
    (PAIR[:5] + [5000] + PAIR[6:], [0] * 5 + [1] * 2, 8,  # made with a larger vocabulary
     r"one\.tfrecord: input_ids holds token id 5000, outside the model's vocabulary of \d+ \(was the data made with "
     r"another vocabulary\?\)"),
    (PAIR, [0] * 5 + [1] * 2, 128,  # made for longer sequences than the model's 64
     r"one\.tfrecord: sequences of 128 tokens, the model takes at most 64"),
], ids=["single segment", "another vocabulary", "too long"])
def test_records_the_model_cannot_read_are_refused_naming_them(tiny_run, tmp_path, ids, segments, length, message):
    path = write_record(tmp_path / "one.tfrecord", ids, segments, length)
    with pytest.raises(SystemExit, match=message):
        served_depth.main(["--init", tiny_run[1], "--records", str(path)])


def test_one_sequence_gives_no_interval_and_is_refused(tiny_run, tmp_path):
    """A 95% bootstrap interval over one sequence has no width ("1.26 [1.26, 1.26]"), shown as if measured: the
    benchmark asks for 2 sequences at least, by its flag and by what the records hold."""
    with pytest.raises(SystemExit, match=r"--max_sequences must be an integer in \[2, 100000000\], got 1"):
        served_depth.main(["--init", tiny_run[1], "--max_sequences", "1"])
    path = write_record(tmp_path / "one.tfrecord", PAIR, [0] * 5 + [1] * 2, 64)
    with pytest.raises(SystemExit, match=r"one\.tfrecord holds 1 distinct record: the 95% intervals, over sequences, "
                                         r"need 2 at least"):
        served_depth.main(["--init", tiny_run[1], "--records", str(path)])
    shutil.copy(path, tmp_path / "two.tfrecord")  # a copy of the file: refused as such, wherever records are read
    with pytest.raises(SystemExit, match=r"two\.tfrecord holds the same records as .*one\.tfrecord \(a copy: the same "
                                         r"length and first MiB\): give each held-out TFRecord file once"):
        served_depth.main(["--init", tiny_run[1], "--records", str(tmp_path / "*.tfrecord")])
    (tmp_path / "two.tfrecord").write_bytes(path.read_bytes() * 2)  # the record twice in one file: one sequence
    with pytest.raises(SystemExit, match=r"two\.tfrecord holds 1 distinct record"):
        served_depth.main(["--init", tiny_run[1], "--records", str(tmp_path / "two.tfrecord")])
