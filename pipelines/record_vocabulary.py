"""Whether pre-training records were made with a vocabulary: from the records themselves (`check_word_starts`: the
word starts the data tool wrote against the vocabulary's), and from the data tool's report beside them
(`recorded_vocabulary`, stats.json), which a lost, damaged or copied report never skips (`check_records_vocabulary`)."""

import json
import os

import tensorflow as tf

from google.protobuf.message import DecodeError

from albert_act.base import text_files
from pipelines.pretraining_dataset import reading, record_shapes


def recorded_vocabulary(path, key="vocab_sha256"):
    """What the data tool's stats.json beside the shard `path` records of its vocabulary (the fingerprint; "size":
    its number of pieces), or None (no report, a damaged one, or one without it): for records compared with each
    other, or with a model, no vocabulary given."""
    from albert_act.base.artifacts import STATS_JSON

    stats_path = os.path.join(os.path.dirname(path), STATS_JSON)
    try:
        with text_files.open_binary(stats_path) as f:
            stats = json.loads(f.read())
        return stats["config"].get("vocabulary_size") if key == "size" else stats.get(key)
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return None


def check_records_vocabulary(path, model_proto, vocab_name):
    """ValueError when the shard `path` was made with another vocabulary than `model_proto`
    (`vocab_name`, for the message): its ids would mean other pieces, even where they fit the
    model's vocabulary size. Known from the data tool's stats.json beside it (the vocabulary's
    fingerprint), and from the records themselves (`check_word_starts`; fewer of them where the report
    agrees): a lost, damaged (named as such, once) or copied side file never skips the check."""
    from albert_act.base.artifacts import STATS_JSON
    from pipelines.create_pretraining_data import vocab_fingerprint

    stats_path = os.path.join(os.path.dirname(path), STATS_JSON)
    if not text_files.exists(stats_path):
        check_word_starts(path, model_proto, vocab_name)
        return
    try:
        with text_files.open_binary(stats_path) as f:
            stats = json.loads(f.read())
        recorded = stats.get("vocab_sha256")
    except (ValueError, AttributeError) as error:  # cut short, edited, or not a JSON object
        if stats_path not in _DAMAGED_REPORTED:
            _DAMAGED_REPORTED.add(stats_path)
            print(f"warning: {stats_path} is damaged ({str(error).splitlines()[0][:100]}), so it does not say which "
                  "vocabulary the records were made with; they are checked by their content instead", flush=True)
        check_word_starts(path, model_proto, vocab_name)
        return
    if not recorded:  # a report without the fingerprint: the records say it
        check_word_starts(path, model_proto, vocab_name)
    elif recorded != vocab_fingerprint(model_proto):
        then = stats.get("vocab")
        changed = isinstance(then, str) and text_files.exists(then) and vocab_fingerprint(
            text_files.read_bytes(then)) != recorded  # (the same name, trained again in place)
        own = isinstance(then, str) and not changed and text_files.exists(then)  # (there, as it was)
        raise ValueError(f"{path}: made with another vocabulary ({then}, per {stats_path}"
                         f"{'; that file has been replaced since, trained again in place?' if changed else ''}) than "
                         f"the model's ({vocab_name}): its ids would mean other pieces; make the records with the "
                         f"model's vocabulary{f', or use theirs ({then})' if own else ''}")
    else:  # (a report copied beside other records vouches for none: they are sampled all the same)
        check_word_starts(path, model_proto, vocab_name, sample_records=50)


_DAMAGED_REPORTED = set()  # stats.json files already named as damaged in this process

MISMATCHED_STARTS = 0.05  # share of word starts that may differ before records are another vocabulary's


def check_word_starts(path, model_proto, vocab_name, sample_records=200):
    """The records' `token_boundary` (1 where a piece begins a word, written from the vocabulary the
    data was made with) against what `model_proto` says of the same ids, over the unmasked pieces of
    the first `sample_records` records: ValueError when more than MISMATCHED_STARTS of them differ."""
    from pipelines.instances import word_starts
    from pipelines.tokenizer import UNK_ID, WORD_START, Tokenizer

    tokenizer = Tokenizer(model_proto)
    table, bare = [int(x) for x in tokenizer.word_start_table()], tokenizer.processor.piece_to_id(WORD_START)
    try:
        seq, predictions = record_shapes(path)
        first = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(path).take(1))).numpy())
    except (ValueError, StopIteration, DecodeError, tf.errors.OpError):
        return  # an empty or unreadable shard: `check_records` names its faults
    if "token_boundary" not in first.features.feature:
        return  # records of the original ALBERT tool: nothing to compare
    spec = {name: tf.io.FixedLenFeature([n], tf.int64) for name, n in (
        ("input_ids", seq), ("input_mask", seq), ("token_boundary", seq), ("masked_lm_positions", predictions))}
    differ = compared = 0
    with reading(path):  # (a corrupt record, or one of another shape, named)
        for serialized in tf.data.TFRecordDataset(path).take(sample_records):
            record = {k: v.numpy().tolist() for k, v in tf.io.parse_single_example(serialized, spec).items()}
            length = sum(record["input_mask"])
            ids = record["input_ids"][:length]
            if max(ids, default=0) >= len(table):
                return  # `check_records` names ids outside the vocabulary
            starts = word_starts(ids, table, -1 if bare == UNK_ID else bare)
            masked = set(record["masked_lm_positions"])
            for position in range(1, length):  # a piece after a replaced one may start a word or not
                if position not in masked and position - 1 not in masked:
                    compared += 1
                    differ += starts[position] != record["token_boundary"][position]
    if compared and differ > MISMATCHED_STARTS * compared:
        raise ValueError(f"{path}: made with another vocabulary than {vocab_name}: {differ} of {compared} word starts "
                         f"in its first records differ from that vocabulary's ({100 * differ / compared:.0f}%), so its "
                         "ids would mean other pieces; make the records with the model's vocabulary")
