"""A fine-tuning task's data: its examples and labels (`load_task`: a GLUE task or a probing task),
and the examples encoded as the exports encode them (`encode`, `EncodedTask`)."""

import dataclasses
import os
import unicodedata

import numpy as np

from albert_act.base import overlap
from pipelines import glue, probing
from pipelines.packing import TextEncoder, pack_texts

PROBING_TASKS = tuple(probing.TASK_FILES)


@dataclasses.dataclass
class TaskData:
    name: str
    labels: tuple  # () for regression
    train: list
    dev: list
    metric_task: str  # key for glue_metrics.task_metrics
    skipped: tuple = ()  # (file, [line numbers]) of malformed rows the GLUE reader skipped

    def dev_in_train(self, train=None):
        """How many dev examples are also examples of `train` (the ones trained on: all training examples by
        default), the same text or pair as the tokenizer reads it (Unicode form NFKC, spaces aside): their dev
        numbers measure memory, not generalisation."""
        def key(example):
            return tuple(" ".join(unicodedata.normalize("NFKC", text or "").split())
                         for text in (example.text_a, example.text_b))

        seen = {key(e) for e in (self.train if train is None else train)}
        return sum(key(e) in seen for e in self.dev)


def load_task(name, data_dir):
    """Train and dev examples of a GLUE task (glue_data/<Task> dir) or a probing task (SentEval file dir)."""
    key = name.lower()
    if key in PROBING_TASKS:
        if os.path.isfile(data_dir):  # the task file itself, given for its folder
            raise ValueError(f"--data_dir {data_dir} is a file, not a folder: give the folder of the task's SentEval "
                             f"file ({probing.TASK_FILES[key]}), e.g. {os.path.dirname(data_dir) or '.'}")
        path = os.path.join(data_dir, probing.TASK_FILES[key])
        data = probing.read_senteval(path)
        as_examples = lambda rows, split: [glue.Example(f"{split}-{i}", s, None, l) for i, (l, s) in enumerate(rows)]  # noqa: E731
        labels = tuple(sorted({label for label, _ in data["tr"]}))
        if not data["tr"] or not data["va"]:
            raise ValueError(f"{path}: no {' and no '.join(s for s in ('tr', 'va') if not data[s])} lines: fine-tuning "
                             "trains on the tr lines and keeps the epoch that does best on the va lines")
        if len(labels) < 2:
            raise ValueError(f"{path}: every tr line has the label {labels[0]!r}: a classifier needs two labels or more")
        train, dev = as_examples(data["tr"], "tr"), as_examples(data["va"], "va")
        for rows, split, counted in ((train, "tr", "in training"), (dev, "va", "in the dev numbers")):
            _note_repeats(rows, f"{path}'s {split} lines", counted,
                          lambda guid, split=split: f"{split} line {int(guid.split('-')[1]) + 1}")  # (the n-th of them)
        return TaskData(key, labels, train, dev, key)
    if key not in glue.TASKS:
        raise ValueError(f"unknown task {name!r}; expected a GLUE task {sorted(glue.TASKS)} "
                         f"or a probing task {sorted(PROBING_TASKS)}")
    task = glue.TASKS[key]
    if "train" not in task.splits:
        raise ValueError(f"{task.name} has no training data: it is predicted with the MNLI model")
    splits = [os.path.join(data_dir, task.splits[s]) for s in ("train", glue.DEV_SPLIT.get(key, "dev"))]
    if all(os.path.exists(p) for p in splits) and os.path.samefile(*splits):
        raise ValueError(f"{splits[0]} is {splits[1]} (a link): dev numbers would measure the training data")
    train, train_report = glue.read_glue(key, data_dir, "train")
    dev, dev_report = glue.read_glue(key, data_dir, glue.DEV_SPLIT.get(key, "dev"))
    if set(task.metrics) & {"pearson", "spearman", "matthews_correlation"} and len({e.label for e in dev}) == 1:
        raise ValueError(f"{dev_report['file']}: every gold label is {dev[0].label!r}: the task's "
                         f"{' and '.join(task.metrics)}, by which the best epoch is chosen, is no number on labels that "
                         "do not vary (a correlation needs two values or more)")
    if task.metrics[0] == "f1" and all(e.label != task.labels[1] for e in dev):
        raise ValueError(f"{dev_report['file']}: no gold label is {task.labels[1]!r} (the positive class): the task's F1, by "
                         "which the best epoch is chosen, is 0 whatever the model predicts")
    if len({e.label for e in train}) == 1:
        raise ValueError(f"{train_report['file']}: every training label is {train[0].label!r}: the model would learn "
                         "that answer and nothing else (a task needs two labels or more)")
    _check_repeats(train, dev, train_report["file"], dev_report["file"], key in SYMMETRIC)
    skipped = tuple((r["file"], r["skipped_lines"], r["malformed_rows_skipped"]) for r in (train_report, dev_report)
                    if r["malformed_rows_skipped"])
    return TaskData(key, task.labels, train, dev, key, skipped)


REPEATS_NOTED = 0.05  # of a split's rows: GLUE's own files repeat up to 0.5% (SST-2's phrases); a file given twice, 50%


SYMMETRIC = ("mrpc", "qqp", "sts-b")  # pair tasks whose answer is the same with the two sentences swapped


def _check_repeats(train, dev, train_file, dev_file, symmetric=False):
    """Training (or dev) rows that repeat an earlier one (a file concatenated twice), noted past `REPEATS_NOTED`; dev
    examples whose sentences are training ones: refused past half of them (dev numbers would measure the
    training data), noted past `REPEATS_NOTED`: their sentences compare as the model reads them (`_sentences`)."""
    for rows, file, counted in ((train, train_file, "in training"), (dev, dev_file, "in the dev numbers")):
        _note_repeats(rows, file, counted, symmetric=symmetric)
    texts = {_sentences(e) for e in train}
    shared = sum(_sentences(e) in texts for e in dev)
    if 2 * shared > len(dev):
        raise ValueError(f"{dev_file}: {shared:,} of its {len(dev):,} examples are also in {train_file} (the same "
                         "sentences, as the model reads them): dev numbers would measure the training data; give a "
                         "dev split apart from it")
    if shared > REPEATS_NOTED * len(dev):
        print(f"note: {dev_file}: {shared:,} of its {len(dev):,} examples are also in {train_file}: dev numbers "
              "are partly on training data")


def _note_repeats(rows, file, counted, line=lambda guid: f"line {guid.split('-')[-1]}", symmetric=False):
    """Notes rows that repeat an earlier row (past `REPEATS_NOTED`), and those that repeat its sentences with
    another label; `line`: where a row is, from its guid; `symmetric`: a pair swapped is the same row."""
    labels, repeats, other = {}, [], []  # sentences: their first label; rows that repeat one; with another label
    for example in rows:
        key = (_spaced(example.text_a), _spaced(example.text_b))  # ("good", "good ,": SST-2's two)
        key = tuple(sorted(key, key=str)) if symmetric else key
        repeats += [example.guid] if labels.get(key) == example.label else []
        other += [example.guid] if labels.get(key, example.label) != example.label else []
        labels.setdefault(key, example.label)
    if len(repeats) > REPEATS_NOTED * len(rows):
        print(f"note: {file}: {len(repeats):,} of its {len(rows):,} rows repeat an earlier row (the first at "
              f"{line(repeats[0])}): each counts once more {counted}")
    if len(other) > REPEATS_NOTED * len(rows):
        print(f"note: {file}: {len(other):,} of its {len(rows):,} rows repeat an earlier row's sentences with another "
              f"label (the first at {line(other[0])}): the same text has two answers {counted}")


def _spaced(text):
    return None if text is None else " ".join(text.split())


def _sentences(example):
    """An example's sentences as the model reads them (`overlap.unit_key`: case, accents, spaces and punctuation
    aside), in either order: a pair given the other way round holds the same sentences."""
    return tuple(sorted(overlap.unit_key(text) for text in (example.text_a, example.text_b) if text is not None))


def encode(tokenizer, examples, max_seq_length):
    """`[CLS] A [SEP] (B [SEP])` ids of the examples, by the packer the exports run
    (`pipelines.packing`); returns (inputs of int32 (N, max_seq_length), truncated count)."""
    encoder = TextEncoder(tokenizer.model_proto, max_seq_length)
    pair = bool(examples) and examples[0].text_b is not None
    inputs, truncated = pack_texts(encoder, [e.text_a for e in examples],
                                   [e.text_b for e in examples] if pair else None)
    return inputs, int(truncated.sum())


def targets(task, examples):
    if not task.labels:
        return np.array([float(e.label) for e in examples], "float32")
    index = {label: i for i, label in enumerate(task.labels)}
    missing = sorted({e.label for e in examples} - set(index))
    if missing:
        raise ValueError(f"{task.name}: labels {missing} outside the task's set {list(task.labels)}")
    return np.array([index[e.label] for e in examples], "int32")


class EncodedTask:
    """A task's training examples (cut to `max_train_examples`) and dev set, encoded for the model."""

    def __init__(self, task, train, tokenizer, max_seq_length):
        self.train, self.max_seq_length = train, max_seq_length
        self.train_inputs, self.truncated = encode(tokenizer, train, max_seq_length)
        self.dev_inputs, _ = encode(tokenizer, task.dev, max_seq_length)
        self.train_targets, self.dev_targets = targets(task, train), targets(task, task.dev)
        self.pair = bool(train) and train[0].text_b is not None
