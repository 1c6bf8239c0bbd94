"""A pre-training run's checkpoints: what they hold (`checkpoint_contents`), saving without leaving
half-written files, restoring the newest intact one, and what a warm start from another model may
leave new (`INIT_FRESH`; the weights come from `Source.load_into`)."""

import os

import tensorflow as tf

from albert_act.base import artifacts, cli
from albert_act.model.source import HALTING_UNIT
from pipelines.pretraining_dataset import serialized_batches

# Weights a warm start may lack: the new halting unit, and heads the checkpoint does not have.
INIT_FRESH = (HALTING_UNIT, "pooler/", "sop_head/", "masked_lm_head/")


def checkpoint_contents(model, optimizer=None):
    """What a checkpoint holds, keyed by variable path ("model/<path>", "optimizer/<path>").

    Explicit, so that any program can restore the model's weights by name (Keras 3
    does not expose every sub-layer as a checkpoint child).
    """
    contents = {"model": {v.path: v for v in model.variables}}
    if optimizer is not None:
        contents["optimizer"] = {v.path: v for v in optimizer.variables}
    if len(contents["model"]) != len(model.variables):
        raise ValueError("duplicate variable paths in the model")
    return contents


def save_checkpoint(manager, step):
    """`manager.save`; when it fails (a full disk, a lost bucket) the half-written files are removed
    and a ValueError says which checkpoint the run can resume from."""
    def remove_partial():
        for leftover in tf.io.gfile.glob(os.path.join(manager.directory, f"ckpt-{step}_temp*")):
            tf.io.gfile.rmtree(leftover) if tf.io.gfile.isdir(leftover) else tf.io.gfile.remove(leftover)

    try:
        manager.save(checkpoint_number=step)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while saving: the previous checkpoint stays the newest
        remove_partial()
        raise
    except (OSError, tf.errors.OpError) as error:
        remove_partial()
        kept = (f"the newest checkpoint is {manager.latest_checkpoint}: free space and re-run the same command to "
                "resume from it") if manager.latest_checkpoint else ("no checkpoint of this run was saved: free space "
                                                                     "and re-run the same command to start again")
        raise ValueError(f"{manager.directory}: could not write ckpt-{step} ({cli.write_error(error)[:200]}); "
                         f"{kept}") from None


def checkpoint_managers(config, checkpoint, write_dir):
    """(the manager that saves into <write_dir>/checkpoints, the one that restores from the run's own:
    the same one, but for a multi-worker job's other workers, which write to scratch and restore the
    chief's), each keeping `keep_checkpoints`."""
    def manager(run_dir):
        return tf.train.CheckpointManager(checkpoint, os.path.join(run_dir, artifacts.CHECKPOINTS),
                                          max_to_keep=config.keep_checkpoints)

    saving = manager(write_dir)
    return saving, saving if write_dir == config.model_dir else manager(config.model_dir)


def checkpoint_update(path):
    """The update a checkpoint prefix (".../ckpt-<update>") was saved at."""
    return int(path.rsplit("-", 1)[1])


def _checkpoint_paths(manager):
    """The manager's checkpoints, oldest first, and any ckpt-N on disk that its state file does not
    list: a run killed (SIGKILL, power loss) after writing ckpt-N but before updating the state
    file still resumes from ckpt-N."""
    paths = artifacts.checkpoints_on_disk(manager.directory)
    for path in manager.checkpoints:
        paths[checkpoint_update(path)] = path
    return [paths[number] for number in sorted(paths)]


def restore_latest_intact(checkpoint, manager, usable=None):
    """Restores the newest checkpoint that reads whole; an unreadable one (a truncated .data file,
    a crash mid-write), or one that `usable(update)` refuses (a string: why), is named, and the
    one before it is tried. Returns the path restored, or None."""
    failures = []
    for path in reversed(_checkpoint_paths(manager)):
        refused = usable(checkpoint_update(path)) if usable else None
        if refused:
            failures.append(f"{path}: {refused}")
            print(f"warning: {failures[-1]}; trying the checkpoint before it")
            continue
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
        except Exception as error:  # noqa: BLE001 (TensorFlow raises OpError, IndexError, ValueError...)
            if isinstance(error, tf.errors.NotFoundError) and "DeserializeIterator" in str(error):
                raise ValueError(f"{path}: its saved input position names record files that are not found from "
                                 f"this folder ({os.getcwd()}): a run started with relative --train_files resumes "
                                 "from the folder it was started in") from None
            failures.append(f"{path}: unreadable ({type(error).__name__}: {str(error).splitlines()[0][:200]})")
            print(f"warning: {failures[-1]}; trying the checkpoint before it")
            continue
        if failures:
            print(f"resumed from {path}, the newest intact checkpoint")
        return path
    if failures:
        raise ValueError(f"no intact checkpoint in {manager.directory}: " + "; ".join(failures))
    return None


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


def corrupt_file(files):
    """The first of `files` that does not read through to its end (which shard a DataLossError came from)."""
    for path in files:
        try:
            for _ in tf.data.TFRecordDataset(path):
                pass
        except tf.errors.DataLossError:
            return path
    return f"one of {files}"
