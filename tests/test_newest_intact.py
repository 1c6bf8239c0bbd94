"""The one search for a run's newest intact checkpoint (`albert_act.io.newest_intact`), which Source,
the TensorFlow resume and the JAX resume all ask: newest first, a damaged or unusable one named and
passed over, every failure named when none reads, a refusal ending the search."""

from pathlib import Path

import pytest

from albert_act.io.newest_intact import NPZ_READ_ERRORS, Refused, Unusable, newest_intact


def _reader(damaged=(), unusable=(), refused=()):
    def read(update, path):
        if update in refused:
            raise Refused(f"{path}: not from here")
        if update in unusable:
            raise Unusable(f"no input position at update {update}")
        if update in damaged:
            raise OSError(f"truncated {path}\nsecond line")
        return f"weights of {update}"
    return read


FOUND = {2: "run/ckpt-2", 10: "run/ckpt-10", 4: "run/ckpt-4"}


def test_the_newest_whole_checkpoint_is_read_and_the_damaged_ones_named():
    said = []
    assert newest_intact(FOUND, _reader(), "run/checkpoints", OSError, say=said.append) == (10, "run/ckpt-10",
                                                                                             "weights of 10")
    assert said == []  # nothing to say when the newest reads
    assert newest_intact(FOUND, _reader(damaged=(10,), unusable=(4,)), "run/checkpoints", OSError, owner="run",
                         say=said.append) == (2, "run/ckpt-2", "weights of 2")
    assert said == ["warning: run/ckpt-10: unreadable (OSError: truncated run/ckpt-10); reading the checkpoint before it",
                    "warning: run/ckpt-4: no input position at update 4; reading the checkpoint before it",
                    "read run/ckpt-2, the newest intact checkpoint of run"]


def test_none_intact_names_every_failure_and_a_refusal_stops_the_search():
    with pytest.raises(ValueError, match=r"^run: no intact checkpoint in run/checkpoints: run/ckpt-10: unreadable "
                                         r"\(OSError: truncated run/ckpt-10\); run/ckpt-4: unreadable .*; run/ckpt-2: "):
        newest_intact(FOUND, _reader(damaged=(2, 4, 10)), "run/checkpoints", NPZ_READ_ERRORS, owner="run",
                      say=lambda line: None)
    with pytest.raises(Refused, match="run/ckpt-4: not from here"):
        newest_intact(FOUND, _reader(damaged=(10,), refused=(4,)), "run/checkpoints", Exception, say=lambda line: None)
    assert newest_intact({}, _reader(), "run/checkpoints", OSError) is None  # a fresh run
    with pytest.raises(KeyError):  # an error not named as a damaged file's is not passed over
        newest_intact(FOUND, lambda update, path: {}[path], "run/checkpoints", OSError)


def test_a_cut_npz_is_damaged_and_the_one_before_it_read(tmp_path):
    """A JAX checkpoint cut short (a zip without its directory: BadZipFile) is passed over like any
    damaged file, by the search every reader of a JAX run's checkpoints asks."""
    import numpy as np

    for update in (1, 2):
        np.savez(tmp_path / f"jax-{update}.npz", weights=np.full(3, float(update)))
    whole = (tmp_path / "jax-2.npz").read_bytes()
    (tmp_path / "jax-2.npz").write_bytes(whole[: len(whole) // 2])
    said = []

    def read(update, path):
        with np.load(path) as data:
            return data["weights"].tolist()

    found = {u: str(tmp_path / f"jax-{u}.npz") for u in (1, 2)}
    assert newest_intact(found, read, str(tmp_path), NPZ_READ_ERRORS, say=said.append) == (1, found[1], [1.0] * 3)
    assert "jax-2.npz: unreadable (BadZipFile" in said[0]
    (tmp_path / "jax-1.npz").write_bytes(b"")
    with pytest.raises(ValueError, match=r"no intact checkpoint in .*jax-2.npz: unreadable .*jax-1.npz: unreadable"):
        newest_intact(found, read, str(tmp_path), NPZ_READ_ERRORS, say=said.append)


def test_a_checkpoint_listed_but_deleted_is_named_and_the_one_before_it_restored(tmp_path, capsys):
    """The state file lists ckpt-2, whose files were deleted: said in our words (not TensorFlow's NotFoundError), and
    ckpt-1 restored."""
    import tensorflow as tf

    from albert_act.io.run_checkpoints import restore_latest_intact

    variable = tf.Variable(1.0)
    checkpoint = tf.train.Checkpoint(value=variable)
    manager = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=5)
    manager.save(checkpoint_number=1)
    variable.assign(2.0)
    manager.save(checkpoint_number=2)
    for name in tmp_path.glob("ckpt-2.*"):
        name.unlink()
    variable.assign(0.0)
    again = tf.train.CheckpointManager(checkpoint, str(tmp_path), max_to_keep=5)
    assert restore_latest_intact(checkpoint, again) == str(tmp_path / "ckpt-1")
    assert float(variable.numpy()) == 1.0
    out = capsys.readouterr().out
    assert f"warning: {tmp_path / 'checkpoint'} names {tmp_path / 'ckpt-2'}, which is not there (its files deleted or " \
           "moved?); resuming from the newest checkpoint on disk" in out
    assert "NotFoundError" not in out and "Failed to find" not in out


def test_another_models_checkpoint_is_named_as_such(tmp_path, capsys):
    """A fixed-depth run's ckpt-3 copied into an ACT run was 'unreadable' in TensorFlow's words ('changes in the
    Python program'): it reads whole, and lacks this model's weights; the one before it is read."""
    import tensorflow as tf

    from albert_act.io.run_checkpoints import restore_latest_intact

    ours = {"a": tf.Variable(1.0), "b": tf.Variable(2.0)}
    theirs = {"a": tf.Variable(5.0)}  # (no "b": as a fixed-depth model has no halting unit)
    tf.train.CheckpointManager(tf.train.Checkpoint(**ours), str(tmp_path), 5).save(checkpoint_number=2)
    tf.train.CheckpointManager(tf.train.Checkpoint(**theirs), str(tmp_path), 5).save(checkpoint_number=3)
    restored = restore_latest_intact(tf.train.Checkpoint(**ours), tf.train.CheckpointManager(
        tf.train.Checkpoint(**ours), str(tmp_path), 5))
    assert restored.endswith("ckpt-2") and float(ours["a"].numpy()) == 1.0
    assert "ckpt-3: holds another model's checkpoint: 1 of this run's weights are not in it" in capsys.readouterr().out
    wider = {"a": tf.Variable([1.0, 2.0]), "b": tf.Variable(2.0)}  # (another --override's: other shapes)
    tf.train.CheckpointManager(tf.train.Checkpoint(**wider), str(tmp_path), 5).save(checkpoint_number=4)
    restored = restore_latest_intact(tf.train.Checkpoint(**ours), tf.train.CheckpointManager(
        tf.train.Checkpoint(**ours), str(tmp_path), 5))
    assert restored.endswith("ckpt-2")
    assert "ckpt-4: holds another model's checkpoint: weights of other shapes" in capsys.readouterr().out


def test_a_position_naming_moved_records_says_which_file_and_how_to_resume():
    """TensorFlow's input position keeps the record files' names: an absolute one since moved is named with the link
    that resumes the run (round 43 B142 was told a relative start was the cause); a relative one with its folder."""
    from albert_act.io.run_checkpoints import _records_gone

    def error(name):  # TensorFlow's words, as a resumed run gets them
        return ("Error when restoring from checkpoint or SavedModel at run/checkpoints/ckpt-15: {{function_node "
                "__wrapped__DeserializeIterator_device_/job:localhost/replica:0/task:0/device:CPU:0}} Failed to restore "
                f"dataset iterator from checkpoint: {name}; No such file or directory. Make sure the dataset ...")

    moved = _records_gone("run/checkpoints/ckpt-15", error("/data/rec/train-00001-of-00004.tfrecord"))
    assert moved == ("run/checkpoints/ckpt-15: its saved input position names /data/rec/train-00001-of-00004.tfrecord, "
                     "which is not there now (the records moved or renamed since the run started?): the position is "
                     "kept by the files' names, so put them back in /data/rec, or link their new folder there (ln -s "
                     "<their new folder> /data/rec), and re-run the same command")
    relative = _records_gone("run/checkpoints/ckpt-15", error("rec/train-00001-of-00004.tfrecord"))
    assert relative.startswith("run/checkpoints/ckpt-15: its saved input position names record files "
                               "(rec/train-00001-of-00004.tfrecord) that are not found from this folder (")
    assert relative.endswith("a run started with relative --train_files resumes from the folder it was started in")


def test_an_earlier_checkpoint_of_a_run_is_told_how_to_be_read(tmp_path):
    """--init_from RUN/checkpoints/ckpt-2 of a run that holds ckpt-4 was told to give the run dir, whose newest
    checkpoint is read, not the one asked for (round 44 B86): the copy that holds it alone is named, with its commands."""
    import subprocess

    from albert_act.io.run_checkpoints import inside_run

    run = tmp_path / "run"
    (run / "checkpoints").mkdir(parents=True)
    for name in ("config.json", "vocab.model", "checkpoints/ckpt-2.index", "checkpoints/ckpt-2.data-00000-of-00001",
                 "checkpoints/ckpt-4.index", "checkpoints/ckpt-4.data-00000-of-00001"):
        (run / name).write_text(name)
    assert inside_run(f"{run}/checkpoints/ckpt-4", str(run)) == (
        f"{run}/checkpoints/ckpt-4 is inside the pre-training run {run}: give the run dir itself (its newest intact "
        "checkpoint is read)")
    said = inside_run(f"{run}/checkpoints/ckpt-2", str(run))
    assert said.startswith(f"{run}/checkpoints/ckpt-2 is inside the pre-training run {run}: give the run dir itself (its "
                           "newest intact checkpoint, of update 4, is read); for update 2's weights, give a copy of the "
                           "run that holds that checkpoint alone (")
    assert said.endswith(f"), then {run}-2")
    subprocess.run(["bash", "-c", said.split("alone (")[1].rsplit("), then", 1)[0]], check=True)
    assert sorted(str(p.relative_to(f"{run}-2")) for p in Path(f"{run}-2").rglob("*")) == [
        "checkpoints", "checkpoints/ckpt-2.data-00000-of-00001", "checkpoints/ckpt-2.index", "config.json", "vocab.model"]
