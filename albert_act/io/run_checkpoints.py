"""A pre-training run's checkpoints (<run>/checkpoints/): what they hold (`checkpoint_contents`),
saving without leaving half-written files, and reading the newest intact one, both to resume the
run (`restore_latest_intact`) and for its weights and tau (`newest_weights`, `stored_tau`: what
`Source` reads of a run, TensorFlow's ckpt-<update> or the JAX backend's jax-<update>.npz). Which
checkpoint is the newest intact one is `newest_intact`'s answer, for every reader."""

import os
import re

import numpy as np
import tensorflow as tf

from albert_act.base import artifacts, text_files, write_failures
from albert_act.io.newest_intact import NPZ_READ_ERRORS, Refused, Unusable, finite, first_line, newest_intact

READ_ERRORS = (tf.errors.OpError, IndexError, ValueError, OSError)  # what TensorFlow raises on a damaged file


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
        reason = write_failures.write_error(error)
        fix = ("make the folder writable" if "Permission denied" in reason or "Read-only" in reason else "free space")
        kept = (f"the newest checkpoint is {manager.latest_checkpoint}: {fix} and re-run the same command to "
                "resume from it") if manager.latest_checkpoint else (f"no checkpoint of this run was saved: {fix} "
                                                                     "and re-run the same command to start again")
        raise ValueError(f"{manager.directory}: could not write ckpt-{step} ({reason[:200]}); "
                         f"{kept}") from None


def checkpoint_state(directory):
    """TensorFlow's state file of a run's checkpoints/ (`tf.train.get_checkpoint_state`: which checkpoints it keeps),
    or None; an empty or damaged one (a full disk, or a kill while it was rewritten) is named in a warning, and None:
    the checkpoints on disk are read instead."""
    try:
        return tf.train.get_checkpoint_state(directory)
    except ValueError:  # TensorFlow's "Invalid checkpoint state loaded from ..."
        print(f"warning: {os.path.join(directory, 'checkpoint')} is empty or damaged (a full disk, or a kill while it "
              "was rewritten?): it only lists the checkpoints, which are read from the files on disk", flush=True)
        return None


def indexless(directory):
    """The checkpoints in `directory` whose .data files are there without their .index (a copy cut short, a file
    deleted), oldest first: unreadable, but a run's, never a sign that it saved none."""
    data = text_files.glob(os.path.join(directory, "ckpt-*.data-*"))
    cut = {path.split(".data-")[0] for path in data} - set(artifacts.checkpoints_on_disk(directory).values())
    return sorted(cut, key=lambda prefix: int(prefix.rsplit("-", 1)[1]) if prefix.rsplit("-", 1)[1].isdigit() else -1)


def indexless_refusal(prefix, what_to_do):
    """The refusal of a run whose checkpoints all lost their .index (`indexless`; `prefix`: the newest)."""
    return ValueError(f"{prefix}: its .data file is there without its .index (a copy cut short, or the file deleted), "
                      f"so no checkpoint of the run reads; {what_to_do}")


def check_own_updates(directory, steps):
    """ValueError for a checkpoint in `directory` saved past the run's `steps` updates: another run's, copied or
    linked in (resumed or exported, its weights would pass for this run's)."""
    found = artifacts.checkpoints_on_disk(directory)
    if isinstance(steps, int) and found and max(found) > steps:
        raise ValueError(f"{found[max(found)]} is of update {max(found):,}, past the run's {steps:,} (its "
                         f"{artifacts.CONFIG}): another run's checkpoint, copied or linked in; move it away")


def checkpoint_managers(config, checkpoint, write_dir):
    """(the manager that saves into <write_dir>/checkpoints, the one that restores from the run's own:
    the same one, but for a multi-worker job's other workers, which write to scratch and restore the
    chief's), each keeping `keep_checkpoints`. A damaged state file, which TensorFlow's manager cannot start
    from, is set aside as checkpoint.damaged (`checkpoint_state`)."""
    def manager(run_dir):
        directory = os.path.join(run_dir, artifacts.CHECKPOINTS)
        state_file = os.path.join(directory, "checkpoint")
        if tf.io.gfile.exists(state_file) and checkpoint_state(directory) is None:
            tf.io.gfile.rename(state_file, state_file + ".damaged", overwrite=True)
            print(f"note: it is kept as {state_file}.damaged; the run writes a new one", flush=True)
        return tf.train.CheckpointManager(checkpoint, directory, max_to_keep=config.keep_checkpoints)

    saving = manager(write_dir)
    return saving, saving if write_dir == config.model_dir else manager(config.model_dir)


def checkpoint_update(path):
    """The update a checkpoint prefix (".../ckpt-<update>") was saved at."""
    return int(path.rsplit("-", 1)[1])


def _checkpoints(manager):
    """{update: prefix} of the manager's checkpoints that are on disk (one listed but gone is named), and of any
    ckpt-N on disk that its state file does not list: a run killed (SIGKILL, power loss) after writing ckpt-N but
    before updating the state file still resumes from ckpt-N."""
    paths = artifacts.checkpoints_on_disk(manager.directory)
    for path in manager.checkpoints:
        if tf.io.gfile.exists(path + ".index"):
            paths[checkpoint_update(path)] = path
        else:  # (its files deleted or moved: no read to fail in TensorFlow's words)
            print(f"warning: {os.path.join(manager.directory, 'checkpoint')} names {path}, which is not there (its "
                  "files deleted or moved?); resuming from the newest checkpoint on disk", flush=True)
    return paths


def restore_latest_intact(checkpoint, manager, usable=None):
    """Restores the newest checkpoint that reads whole (`newest_intact`); an unreadable one (a truncated
    .data file, a crash mid-write), or one that `usable(update)` refuses (a string: why), is named, and
    the one before it is tried. Returns the path restored, or None."""
    def restore(update, path):
        refused = usable(update) if usable else None
        if refused:
            raise Unusable(refused)
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
        except AssertionError as error:  # (the file whole, another model's: a fixed-depth run's, another preset's)
            if "not bound to checkpointed values" not in str(error):
                raise
            raise Unusable(f"holds another model's checkpoint: {str(error).split(' ')[1]} of this run's weights are not "
                           "in it (a fixed-depth run's, or another preset's, copied in?)") from None
        except ValueError as error:
            if "incompatible tensor with shape" not in str(error):
                raise
            raise Unusable("holds another model's checkpoint: weights of other shapes (another --override or preset's, "
                           f"copied in?): {first_line(error)[:120]}") from None
        except tf.errors.NotFoundError as error:
            if "DeserializeIterator" in str(error):
                raise Refused(_records_gone(path, str(error))) from None
            raise

    newest = newest_intact(_checkpoints(manager), restore, manager.directory, errors=Exception, read_as="resumed from")
    return newest[1] if newest else None


def _records_gone(path, error):
    """Why a checkpoint's input position does not restore: TensorFlow's iterator names a record file it reads by the
    name the run started with, relative to the folder it started in, or absolute and since moved."""
    missing = re.search(r"from checkpoint: (.+?); No such file", error)
    if missing is None or not os.path.isabs(missing.group(1)):
        named = f" ({missing.group(1)})" if missing else ""
        return (f"{path}: its saved input position names record files{named} that are not found from this folder "
                f"({os.getcwd()}): a run started with relative --train_files resumes from the folder it was started in")
    folder = os.path.dirname(missing.group(1))
    return (f"{path}: its saved input position names {missing.group(1)}, which is not there now (the records moved or "
            f"renamed since the run started?): the position is kept by the files' names, so put them back in {folder}, "
            f"or link their new folder there (ln -s <their new folder> {folder}), and re-run the same command")


def newest_weights(run, steps=None):
    """(update, path, model weights) of a pre-training run's newest intact checkpoint, TensorFlow's
    (checkpoints/ckpt-<update>) or, where it has none, the JAX backend's (checkpoints/jax-<update>.npz).
    A damaged one is named in a warning and the one before it is read, as the run's resume does; a
    ValueError names every damaged file when none reads, and a checkpoint past the run's `steps` (its
    config.json's: another run's, `check_own_updates`)."""
    directory = os.path.join(run, artifacts.CHECKPOINTS)
    found = artifacts.checkpoints_on_disk(directory)
    if not found and artifacts.jax_checkpoints_on_disk(directory):
        return newest_intact(artifacts.jax_checkpoints_on_disk(directory), _jax_weights, directory,
                             errors=NPZ_READ_ERRORS, owner=run)
    cut = [] if found else indexless(directory)
    if cut:
        raise indexless_refusal(cut[-1], "copy the whole checkpoint back")
    if not found:
        raise ValueError(f"{run}: no checkpoint in {directory}")
    check_own_updates(directory, steps)
    state = checkpoint_state(directory)
    named = state.model_checkpoint_path if state else None
    if named and not tf.io.gfile.exists(named + ".index"):
        print(f"warning: {os.path.join(directory, 'checkpoint')} names {named}, which is not there; reading the "
              "newest checkpoint on disk")
    return newest_intact(found, _tf_weights, directory, errors=READ_ERRORS, owner=run)


def inside_run(path, run):
    """The refusal of `path`, a file or folder of the pre-training run `run` (its checkpoints/, one checkpoint): the run
    dir is read, its newest checkpoint; an earlier one named is read from a copy of the run that holds it alone."""
    newest = _last_update(run)
    asked = re.match(rf"(ckpt-|{artifacts.JAX_CHECKPOINT_PREFIX})(\d+)", os.path.basename(str(path).rstrip("/")))
    said = f"{path} is inside the pre-training run {run}: give the run dir itself (its newest intact checkpoint"
    if not asked or newest is None or int(asked.group(2)) >= newest:
        return said + " is read)"
    copy = f"{run.rstrip('/')}-{asked.group(2)}"
    return (f"{said}, of update {newest}, is read); for update {asked.group(2)}'s weights, give a copy of the run that "
            f"holds that checkpoint alone (mkdir -p {copy}/{artifacts.CHECKPOINTS} && cp {run}/{artifacts.CONFIG} "
            f"{run}/{artifacts.VOCAB} {copy}/ ; cp {run}/{artifacts.CHECKPOINTS}/{asked.group(1)}{asked.group(2)}[.-]* "
            f"{copy}/{artifacts.CHECKPOINTS}/), then {copy}")


def _last_update(run):
    """The update of the newest checkpoint on disk of the run `run` (TensorFlow's or the JAX backend's), or None."""
    directory = os.path.join(run, artifacts.CHECKPOINTS)
    return max([*artifacts.checkpoints_on_disk(directory), *artifacts.jax_checkpoints_on_disk(directory)], default=None)


def earlier_update_read(run, update, steps):
    """Why a run's weights of `update`, before its `steps`, are read: it stopped there (its command resumes it), or
    its later checkpoints on disk (TensorFlow's or the JAX backend's) do not read (each named in a warning)."""
    last = _last_update(run) or 0
    if last <= update:
        return (f"{run} stopped at update {update:,} of its {steps:,}: an unfinished run's weights are read (to finish "
                "it, run its command again: it resumes)")
    return (f"{run}'s checkpoints past update {update:,} do not read (named above): the weights of update {update:,} "
            f"are read, not those of its last, {last:,}")


def _tf_weights(update, prefix):
    """{variable path: value} of the model weights in one checkpoint of a run; reads every tensor,
    so a damaged .index or .data file raises here (`READ_ERRORS`)."""
    reader = tf.train.load_checkpoint(prefix)
    head, tail = "model/", "/.ATTRIBUTES/VARIABLE_VALUE"
    return _finite({name[len(head) : -len(tail)].replace(".S", "/"): reader.get_tensor(name)
                    for name in reader.get_variable_to_shape_map()
                    if name.startswith(head)})  # not the optimizer's or the input pipeline's state


def _jax_weights(update, path):
    """The model weights in one checkpoint of a JAX run (`NPZ_READ_ERRORS` when damaged)."""
    with np.load(path, allow_pickle=False) as data:
        return _finite({name.split("/", 1)[1]: data[name] for name in data.files
                        if name.startswith(("trainable/", "non_trainable/"))})


def _finite(weights):
    """`weights`, each checked by `finite` (a ValueError names the first with non-finite values)."""
    return {name: finite(name, value) for name, value in weights.items()}


def stored_tau(path, signed):
    """The ponder-cost weight stored in the run checkpoint `path` (plus its proportional part when the
    target control is `signed`), or None for a TensorFlow checkpoint that does not hold one."""
    if path.endswith(".npz"):  # a JAX run's
        with np.load(path) as data:
            return float(data["tau"]) + (float(data["tau_proportional"]) if signed else 0.0)
    reader = tf.train.load_checkpoint(path)
    key = "ponder_cost_weight/.ATTRIBUTES/VARIABLE_VALUE"
    if key not in reader.get_variable_to_shape_map():
        return None
    stored = reader.get_tensor(key)
    proportional = "ponder_cost_weight_proportional/.ATTRIBUTES/VARIABLE_VALUE"
    if signed and proportional in reader.get_variable_to_shape_map():
        stored = stored + reader.get_tensor(proportional)
    return stored
