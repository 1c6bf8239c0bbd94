"""tf.data reader for pre-training TFRecords (ours or the original ALBERT tool's).

Each element is `(inputs, labels)`:
    inputs: token_ids, segment_ids, padding_mask (B, T) and masked_positions (B, P), int32;
    labels: masked_lm_ids (B, P) int32, masked_lm_weights (B, P) float32,
            sentence_order_label (B,) int32 (1 = segments swapped).

    dataset = make_pretraining_dataset("data/train-*.tfrecord", batch_size=64)
    strategy.distribute_datasets_from_function(
        lambda context: make_pretraining_dataset(pattern, 4096, input_context=context))
"""

import contextlib
import os

import tensorflow as tf

from google.protobuf.message import DecodeError

from albert_act.base import artifacts, checks, encodings, text_files, write_failures


REQUIRED_FEATURES = ("input_ids", "input_mask", "segment_ids", "masked_lm_positions", "masked_lm_ids",
                     "masked_lm_weights", "next_sentence_labels")


def _text_hint(path):
    """"; a text file ..." for a local file that begins as text (a TFRecord begins with a length, NUL bytes in it)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError:
        return ""
    text = head.decode("utf-8", "ignore")  # (a character cut at the end: dropped)
    if not head or not encodings.text_like(head) or any(c < " " and c not in "\t\r\n" for c in text):
        return ""
    kind = "JSON" if text.lstrip()[:1] in ("{", "[") else "text"
    return (f"; it is {kind} (it begins {text[:30]!r}), not records: give the data tool's shards (python -m "
            "pipelines.create_pretraining_data writes them)")


def record_shapes(path):
    """(max_seq_length, max_predictions_per_seq) of the first record in `path`; ValueError naming
    the file when it is not a TFRecord of tf.train.Examples with every feature the reader parses."""
    try:
        raws = [raw.numpy() for raw in tf.data.TFRecordDataset(path).take(1)]
        feature = tf.train.Example.FromString(raws[0]).features.feature if raws else None
    except (tf.errors.OpError, DecodeError) as error:  # truncated/flipped bytes, or not an Example
        raise ValueError(f"{path}: not a readable TFRecord of tf.train.Examples ({write_failures.tf_message(error)})"
                         f"{encodings.compression_hint(path) or _text_hint(path)}") from None
    for raw in raws:
        missing = sorted(set(REQUIRED_FEATURES) - set(feature))
        if missing:
            raise ValueError(f"{path}: records lack {', '.join(missing)} (not ALBERT pre-training records?)")
        _check_first_record(path, feature)
        return len(feature["input_ids"].int64_list.value), len(feature["masked_lm_positions"].int64_list.value)
    raise ValueError(f"{path}: no records")


def _check_first_record(path, feature):
    """ValueError naming the file where its first record holds a feature of another type than the reader parses
    (masked_lm_weights as integers), segment ids or a sentence-order label other than 0 and 1 (another tool's
    records: three segments, three-way labels), or no token."""
    for name in REQUIRED_FEATURES:
        kind, wanted = feature[name].WhichOneof("kind"), "float_list" if name == "masked_lm_weights" else "int64_list"
        if kind != wanted:
            raise ValueError(f"{path}: its records hold {name} as {kind or 'nothing'}, not {wanted} (another tool's "
                             "records?): make them with pipelines.create_pretraining_data")
    for name in ("segment_ids", "next_sentence_labels"):
        outside = sorted(set(feature[name].int64_list.value) - {0, 1})
        if outside:
            raise ValueError(f"{path}: its first record's {name} holds {outside[0]}, where 0 and 1 are read (two "
                             "segments, sentence order kept or swapped: another tool's records?); make them with "
                             "pipelines.create_pretraining_data")
    if not any(feature["input_mask"].int64_list.value):  # (no masked piece: the data tool writes a few such records)
        raise ValueError(f"{path}: its first record holds no token (input_mask all 0), which the data tool never "
                         "writes (another tool's records?): its numbers would be of nothing; make the records with "
                         "pipelines.create_pretraining_data")


def record_files(file_pattern, what="TFRecord"):
    """The sorted files a pattern (or a list of them) matches, local ones as absolute paths (a run's
    saved input position names them: it resumes from any folder); ValueError when none does, when
    one is a directory, or lies in a data run's staging folder (_incomplete/), or when two hold the same records (a copy,
    by `text_files.content_key`)."""
    patterns = [file_pattern] if isinstance(file_pattern, str) else list(file_pattern)
    matched = {pattern: text_files.glob(pattern) for pattern in patterns}
    files = sorted(f if text_files.is_remote(f) else os.path.abspath(f) for found in matched.values() for f in found)
    if not files:  # ("rec[1]/train-*": [1] is a class of characters, matching rec1)
        bracket = " ([ ] in a pattern match one of the characters between them: write a folder named rec[1] as " \
                  "rec[[]1])" if any("[" in pattern for pattern in patterns) else ""
        raise ValueError(f"no {what} file matches {file_pattern!r}{bracket}")
    for path in files:  # (TensorFlow's readers take UTF-8 names only; a device or a pipe would be read without end)
        checks.utf8_name(path)
        text_files.refuse_device(path, f"a {what} file", pipes=False)  # (records are read more than once)
        text_files.refuse_fifo(path, f"among the {what} files ({' '.join(patterns)})")
    unmatched = [pattern for pattern, found in matched.items() if not found]
    if unmatched:  # the others' files alone would be read, without a word
        raise ValueError(f"no {what} file matches {unmatched[0]!r}, one of {patterns}: fix it, or leave it out")
    real = [f if text_files.is_remote(f) else os.path.realpath(f) for f in files]
    twice = next((f for f, r in zip(files, real) if real.count(r) > 1), None)
    if twice:
        raise ValueError(f"{twice}: given twice in {file_pattern!r} (by two patterns, or a link): each {what} file once, "
                         "or its records count twice")
    from albert_act.base.artifacts import INCOMPLETE, TOKENS_EVAL, TOKENS_TRAIN

    tokens = next((f for f in files if os.path.basename(f) in (TOKENS_TRAIN, TOKENS_EVAL)), None)
    if tokens:  # (a zip archive of arrays: not to be unzipped)
        given = tokens in patterns or os.path.abspath(tokens) in [os.path.abspath(p) for p in patterns if "://" not in p]
        matched_by = "" if given else " (matched by " + " ".join(patterns) + ")"
        shards = ("eval" if os.path.basename(tokens) == TOKENS_EVAL else "train") + "-*.tfrecord"  # (the data tool's)
        raise ValueError(f"{tokens} is the data tool's token file for the JAX backend (KERAS_BACKEND=jax reads it), "
                         f"not a {what} file{matched_by}: give "
                         f"the .tfrecord shards beside it (e.g. {os.path.join(os.path.dirname(tokens), shards)})")
    staged = next((f for f in files if os.path.basename(os.path.dirname(f.rstrip("/"))) == INCOMPLETE), None)
    if staged:  # (the data tool's shards being written, whole or not, moved out when all are)
        raise ValueError(f"{staged} lies in the data tool's {os.path.dirname(staged)}: a run's unfinished output (it "
                         "was stopped, or is still running); re-run the data tool, and give the shards it moves out")
    folders = [f for f in files if text_files.isdir(f)]
    artifacts.refuse_run_files(files)  # (a run's train/, a checkpoint's files)
    if folders:
        raise ValueError(f"{folders[0]} is a directory, not a TFRecord file: give the files, or a glob such as "
                         f"{folders[0].rstrip('/')}/*.tfrecord")
    first = {}  # a copy under another name: its records would count twice, and the intervals narrow
    for path in files:
        copy_of = first.setdefault(text_files.content_key(path), path)
        if copy_of != path:
            raise ValueError(f"{path} holds the same records as {copy_of} (a copy: the same length and first MiB): "
                             f"give each {what} file once, or its records count twice")
    return files


def check_records(path, vocabulary, max_length, sample_records=2000):
    """`record_shapes(path)`, after checking that its sequences fit `max_length` and that the ids
    of its first `sample_records` records lie inside `vocabulary`: ValueError naming the file
    (records made with another vocabulary, or for a longer model)."""
    seq, predictions = record_shapes(path)
    if seq > max_length:
        raise ValueError(f"{path}: sequences of {seq} tokens, the model takes at most {max_length}")
    spec = {"input_ids": tf.io.FixedLenFeature([seq], tf.int64),
            "masked_lm_ids": tf.io.FixedLenFeature([predictions], tf.int64)}
    try:
        batches = list(tf.data.TFRecordDataset(path).take(sample_records).batch(sample_records))
    except tf.errors.DataLossError as error:
        raise ValueError(f"{path}: corrupt within its first {sample_records} records ({write_failures.tf_message(error)}); "
                         "make the shard again, or leave it out") from None
    for batch in batches:
        if odd := _misshapen_in(path, batch, seq, predictions):
            raise odd
        repeats = len(batch) - len(set(batch.numpy().tolist()))
        if repeats > max(2, REPEATED_RECORDS * len(batch)) and path not in _REPEATS_WARNED:  # (once a process)
            _REPEATS_WARNED.add(path)
            print(f"warning: {path}: {repeats:,} of its first {len(batch):,} records repeat others in it, byte for "
                  "byte (a shard joined with itself, by cat?): each counts twice, and intervals over sequences "
                  "narrow as if there were more; make the shard again", flush=True)
        for key, values in tf.io.parse_example(batch, spec).items():
            top = int(tf.reduce_max(values))
            if top >= vocabulary:
                raise ValueError(f"{path}: {key} holds token id {top}, outside the model's vocabulary of "
                                 f"{vocabulary} (was the data made with another vocabulary?)")
    return seq, predictions


def check_masked(files, why, kind="record", sample_records=2000):
    """ValueError when no record of the first `sample_records` of each of `files` holds a masked piece
    (masked_lm_weights all 0: another tool's records, made for sentence order alone); `why`: what would be of
    nothing, said with it."""
    for path in files:
        spec = {"masked_lm_weights": tf.io.FixedLenFeature([record_shapes(path)[1]], tf.float32)}
        for batch in tf.data.TFRecordDataset(path).take(sample_records).batch(sample_records):
            if float(tf.reduce_sum(tf.io.parse_example(batch, spec)["masked_lm_weights"])) > 0:
                return
    raise ValueError(f"{files[0]}{' ...' if len(files) > 1 else ''}: no {kind} (of the first {sample_records:,} of "
                     f"each file) holds a masked piece (masked_lm_weights all 0): {why}; make the records with "
                     "pipelines.create_pretraining_data")


REPEATED_RECORDS = 0.05  # of a shard's sampled records that may repeat others before it is warned of
_REPEATS_WARNED = set()


def count_records(paths, limit):
    """How many records the files `paths` hold together, counting no further than `limit`."""
    counted = tf.data.TFRecordDataset(paths).take(limit).reduce(tf.constant(0, tf.int64), lambda n, _: n + 1)
    return int(counted)


def corrupt_record(path, error):
    """The refusal for a shard that does not read whole (TensorFlow's DataLossError `error`)."""
    return ValueError(f"{path}: a corrupt record ({write_failures.tf_message(error)}); make the shard again, or leave it out")


def corrupt_file(files):
    """The first of `files` that does not read through to its end (which shard a DataLossError came from)."""
    for path in files:
        try:
            for _ in tf.data.TFRecordDataset(path):
                pass
        except tf.errors.DataLossError:
            return path
    return f"one of {files}"


def misshapen(path, limit=None):
    """A ValueError naming the first of the first `limit` (None: all) records of `path` whose length or number of
    predictions differs from its first record's (shards of two --max_seq_length joined with cat), or None."""
    seq, predictions = record_shapes(path)
    records = tf.data.TFRecordDataset(path)
    done = 0
    for batch in (records if limit is None else records.take(limit)).batch(1024):
        if odd := _misshapen_in(path, batch, seq, predictions, done):
            return odd
        done += len(batch)
    return None


def _misshapen_in(path, batch, seq, predictions, done=0):
    """`misshapen`'s ValueError for the first record of `batch` (serialized records of `path`, `done` read before it)
    whose shape is not (`seq`, `predictions`), or None."""
    parsed = tf.io.parse_example(batch, {name: tf.io.RaggedFeature(tf.int64) for name in ("input_ids",
                                                                                          "masked_lm_positions")})
    lengths = zip(parsed["input_ids"].row_lengths().numpy(), parsed["masked_lm_positions"].row_lengths().numpy())
    for index, shape in enumerate(lengths, done + 1):
        if tuple(shape) != (seq, predictions):
            return ValueError(f"{path}: record {index} holds {shape[0]} pieces with {shape[1]} predictions, its first "
                              f"{seq} with {predictions} (shards of two --max_seq_length or --max_predictions_per_seq "
                              "joined into one file?): a file's records are read at one shape; make it again")
    return None


@contextlib.contextmanager
def reading(files):
    """TensorFlow's errors while reading the record files `files` (a pattern or a list), as one ValueError naming
    the shard: a corrupt record (DataLossError), or one of another shape than its shard's first."""
    try:
        yield
    except tf.errors.DataLossError as error:
        raise corrupt_record(corrupt_file(record_files(files)), error) from None
    except tf.errors.InvalidArgumentError:
        odd = next(filter(None, map(misshapen, record_files(files))), None)
        if odd is None:  # (not the records': the model's, raised as it is)
            raise
        raise odd from None


def guarded(dataset, files):
    """The elements of `dataset` (read from the record files `files`), with `reading(files)`'s errors."""
    with reading(files):
        yield from dataset


def parse_examples(serialized, seq_length, max_predictions):
    """A batch (or a single) serialized Example -> (inputs, labels) as documented above."""
    int_feature = lambda n: tf.io.FixedLenFeature([n], tf.int64)  # noqa: E731
    spec = {
        "input_ids": int_feature(seq_length),
        "input_mask": int_feature(seq_length),
        "segment_ids": int_feature(seq_length),
        "masked_lm_positions": int_feature(max_predictions),
        "masked_lm_ids": int_feature(max_predictions),
        "masked_lm_weights": tf.io.FixedLenFeature([max_predictions], tf.float32),
        "next_sentence_labels": int_feature(1),
    }
    parsed = tf.io.parse_example(serialized, spec)
    as_int32 = lambda name: tf.cast(parsed[name], tf.int32)  # noqa: E731
    inputs = {
        "token_ids": as_int32("input_ids"),
        "segment_ids": as_int32("segment_ids"),
        "padding_mask": as_int32("input_mask"),
        "masked_positions": as_int32("masked_lm_positions"),
    }
    labels = {
        "masked_lm_ids": as_int32("masked_lm_ids"),
        "masked_lm_weights": parsed["masked_lm_weights"],
        "sentence_order_label": tf.squeeze(as_int32("next_sentence_labels"), -1),
    }
    return inputs, labels


def make_pretraining_dataset(
    file_pattern,
    batch_size,
    training=True,
    seq_length=None,
    max_predictions=None,
    seed=None,
    deterministic=False,
    shuffle_buffer=10000,
    input_context=None,
    max_length=None,
):
    """Batched (inputs, labels) from TFRecord files.

    Args:
        file_pattern: glob or list of globs (local or gs://).
        batch_size: global batch size; with `input_context` it is divided by the
            number of replicas (per-replica batches) and files are sharded per
            input pipeline (records, when there are fewer files than pipelines).
        training: shuffle files and records, repeat forever, drop the remainder.
            False reads every record once, in file order, keeping the last batch.
        seq_length, max_predictions: default to the first record's shapes.
        seed: seeds file and record shuffling.
        deterministic: fixed element order (with a seed: the same batches every run).
        shuffle_buffer: records in the shuffle buffer.
        input_context: `tf.distribute.InputContext`, as given by
            `strategy.distribute_datasets_from_function`.
        max_length: the model's longest sequence; longer records are refused, naming the file.
    """
    files = record_files(file_pattern)
    seq_length, max_predictions = _shapes(files, seq_length, max_predictions, max_length)
    dataset = _serialized(files, batch_size, training, seed, deterministic, shuffle_buffer, input_context)
    dataset = dataset.map(
        lambda serialized: parse_examples(serialized, seq_length, max_predictions),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic or not training,
    )
    return dataset.prefetch(tf.data.AUTOTUNE)


def serialized_batches(file_pattern, batch_size, seed=None, deterministic=False, shuffle_buffer=10000,
                       streams=1, stream=0):
    """Pre-training's input, stream `stream` of `streams`: batches of `batch_size // streams`
    serialized records (shuffled and repeated as `make_pretraining_dataset(training=True)` does),
    left unparsed. A global batch is the rows of stream 0, then stream 1's, ...; each stream reads
    only its share of the files (files stream, stream + streams, ...), or, with fewer files than
    streams, every file and its share of the records. A multi-worker job gives worker i stream i,
    so each worker reads only its share; one process reading every stream makes the same global
    batches. Each stream has its own position to checkpoint. `streams=1` is the whole input."""
    files = record_files(file_pattern)
    if not 0 <= stream < streams or batch_size % streams:
        raise ValueError(f"stream {stream} of {streams}: the global batch {batch_size} must divide into {streams} streams")
    context = tf.distribute.InputContext(streams, stream, streams) if streams > 1 else None
    seed = None if seed is None else seed + stream  # streams shuffle differently
    dataset = _serialized(files, batch_size, True, seed, deterministic, shuffle_buffer, context)
    return dataset.prefetch(tf.data.AUTOTUNE)


def non_empty(files):
    """The files of `files` that hold anything (the data tool leaves an empty eval shard for
    --eval_fraction 0)."""
    return [path for path in files if tf.io.gfile.stat(path).length > 0]


def _shapes(files, seq_length, max_predictions, max_length):
    """(sequence length, predictions) of every record: those given, else the first shard's with records (one may be
    empty); ValueError naming a shard whose records have another shape (two data runs' records mixed)."""
    shaped = non_empty(files) or files[:1]
    first = record_shapes(shaped[0])
    seq_length, max_predictions = seq_length or first[0], max_predictions or first[1]
    for path in shaped:
        if (shape := record_shapes(path)) != (seq_length, max_predictions):
            where = f"{shaped[0]}'s are of" if path != shaped[0] else "the reader takes"
            raise ValueError(f"{path}: records of {shape[0]} pieces with {shape[1]} predictions each, where {where} "
                             f"{seq_length} with {max_predictions} (records of two data runs, made with another "
                             "--max_seq_length or --max_predictions_per_seq?): give records of one shape")
    if max_length is not None and seq_length > max_length:
        raise ValueError(f"{files[0]}: sequences of {seq_length} tokens, the model takes at most {max_length}")
    return seq_length, max_predictions


def _serialized(files, batch_size, training, seed, deterministic, shuffle_buffer, input_context):
    """Batches of serialized records: the reading, sharding and shuffling of both readers above."""
    dataset = tf.data.Dataset.from_tensor_slices(files)
    pipelines, record_shard, reading = 1, False, len(files)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
        pipelines = input_context.num_input_pipelines
        # Each input pipeline (one per worker) reads its share of the files, or, with fewer files
        # than pipelines, every file and its share of the records: every record read once.
        record_shard = 1 < pipelines and len(files) < pipelines
        if pipelines > 1 and not record_shard:
            dataset = dataset.shard(pipelines, input_context.input_pipeline_id)
            reading = len(files[input_context.input_pipeline_id::pipelines])
    if training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()
    dataset = dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(reading, 8),  # more would read one file's next pass beside its current one
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=deterministic or not training,
    )
    if record_shard:
        dataset = dataset.shard(pipelines, input_context.input_pipeline_id)
    if training:
        dataset = dataset.shuffle(shuffle_buffer, seed=seed)
    options = tf.data.Options()
    options.deterministic = deterministic or not training
    return dataset.batch(batch_size, drop_remainder=training).with_options(options)
