"""A pre-training run's checkpoints: what they hold (`checkpoint_contents`), saving without leaving
half-written files, restoring the newest intact one, and what a warm start from another model may
leave new (`INIT_FRESH`; the weights come from `Source.load_into`)."""

import os

import tensorflow as tf

from albert_act.model.source import HALTING_UNIT
from pipelines import cli

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


def _checkpoint_paths(manager):
    """The manager's checkpoints, oldest first, and any ckpt-N on disk that its state file does not
    list: a run killed (SIGKILL, power loss) after writing ckpt-N but before updating the state
    file still resumes from ckpt-N."""
    paths = {}
    for index in tf.io.gfile.glob(os.path.join(manager.directory, "ckpt-*.index")):
        number = index[: -len(".index")].rsplit("-", 1)[1]
        if number.isdigit():
            paths[int(number)] = index[: -len(".index")]
    for path in manager.checkpoints:
        paths[int(path.rsplit("-", 1)[1])] = path
    return [paths[number] for number in sorted(paths)]


def restore_latest_intact(checkpoint, manager):
    """Restores the newest checkpoint that reads whole; an unreadable one (a truncated .data file,
    a crash mid-write) is named, and the one before it is tried. Returns the path restored, or None."""
    failures = []
    for path in reversed(_checkpoint_paths(manager)):
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
        except Exception as error:  # noqa: BLE001 (TensorFlow raises OpError, IndexError, ValueError...)
            failures.append(f"{path}: unreadable ({type(error).__name__}: {str(error).splitlines()[0][:200]})")
            print(f"warning: {failures[-1]}; trying the checkpoint before it")
            continue
        if failures:
            print(f"resumed from {path}, the newest intact checkpoint")
        return path
    if failures:
        raise ValueError(f"no intact checkpoint in {manager.directory}: " + "; ".join(failures))
    return None


def corrupt_file(files):
    """The first of `files` that does not read through to its end (which shard a DataLossError came from)."""
    for path in files:
        try:
            for _ in tf.data.TFRecordDataset(path):
                pass
        except tf.errors.DataLossError:
            return path
    return f"one of {files}"
