"""Pre-training's input streams and their saved positions (`InputStreams`)."""

import os

import tensorflow as tf

from albert_act.base import artifacts
from pipelines.pretraining_dataset import serialized_batches


class InputStreams:
    """This process's input streams (`serialized_batches`) and their saved positions.

    One stream (one process, the default): its iterator is part of the run's checkpoint
    (`checkpoint_contents`). Several (`input_streams`): the process that reads stream k (worker
    k of a multi-worker job, or one process reading all) writes its position beside the run's
    checkpoints as <model_dir>/input/stream-<k>/ckpt-<update>, before the checkpoint of that
    update, and a run resumes only from a checkpoint whose update every stream has a position for.
    """

    def __init__(self, config, train_files, worker=(0, 1)):
        """worker: (index, workers) of this process's input worker; one worker reads every stream."""
        index, workers = worker
        self.count, self.keep = config.input_streams, config.keep_checkpoints
        self.own = [index] if workers > 1 else list(range(self.count))
        self.root = os.path.join(config.model_dir, artifacts.INPUT_POSITIONS)
        self.iterators = tuple(iter(serialized_batches(
            train_files, config.global_batch_size, seed=config.seed, deterministic=config.deterministic,
            streams=self.count, stream=k)) for k in self.own)

    def checkpoint_contents(self):
        """What the run's checkpoint holds of the input: the iterator, when there is one stream."""
        return {"iterator": self.iterators[0]} if self.count == 1 else {}

    def _prefix(self, stream, update):
        return os.path.join(self.root, f"stream-{stream}", f"ckpt-{update}")

    def missing(self, update):
        """Why the positions at `update` cannot resume every stream (None when they can)."""
        if self.count == 1:
            return None
        absent = [k for k in range(self.count) if not tf.io.gfile.exists(self._prefix(k, update) + ".index")]
        return f"no input position of stream {absent[0]} at update {update} ({self._prefix(absent[0], update)})" \
            if absent else None

    def save(self, update):
        """Writes this process's stream positions at `update`, keeping the newest `keep` of each."""
        if self.count == 1:
            return
        for k, iterator in zip(self.own, self.iterators):
            tf.train.Checkpoint(iterator=iterator).write(self._prefix(k, update))
            for old in sorted(artifacts.checkpoints_on_disk(os.path.dirname(self._prefix(k, update))))[:-self.keep]:
                for leftover in tf.io.gfile.glob(self._prefix(k, old) + ".*"):
                    tf.io.gfile.remove(leftover)

    def restore(self, update):
        if self.count > 1:
            for k, iterator in zip(self.own, self.iterators):
                tf.train.Checkpoint(iterator=iterator).read(self._prefix(k, update)).assert_consumed()
