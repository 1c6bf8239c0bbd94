"""One process per run or output dir, and outputs replaced whole (albert_act/base/outputs.py); Ctrl-C,
SIGTERM and SIGKILL on a real pre-training run (those last ones under `-m slow`)."""

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from albert_act.base import outputs, text_files
from conftest import STATIC_FLAGS, TINY_RUN

REPO = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _python(code, **kwargs):
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, env=ENV, capture_output=True, text=True, **kwargs)


def test_a_second_process_is_refused_at_once_naming_the_holder(tmp_path):
    with outputs.DirectoryLock(tmp_path / "run", "pre-training run") as lock:
        assert lock.active and Path(outputs.lock_path(tmp_path / "run")).exists()
        other = _python(f"from albert_act.base.outputs import DirectoryLock; DirectoryLock({str(tmp_path / 'run')!r}, "
                        "'pre-training run').acquire()", timeout=60)
        assert other.returncode != 0
        assert re.search(rf"run is in use by another pre-training run \(pid {os.getpid()} on .*, started ", other.stderr)
    assert not Path(outputs.lock_path(tmp_path / "run")).exists()  # released: removed
    with outputs.DirectoryLock(tmp_path / "run", "pre-training run") as again:
        assert again.active and again.took_over is None


def test_the_lock_lies_beside_the_dir_not_in_it(tmp_path):
    assert outputs.lock_path(tmp_path / "saved" / "1") == str(tmp_path / "saved" / ".1.lock")
    assert outputs.lock_path(str(tmp_path / "run") + "/") == str(tmp_path / ".run.lock")
    # a link to an output is the output: two benchmarks, one given the folder and one a link to it, both ran and
    # the last to end replaced the other's result; one lock now, beside the real folder, and a link still to be made
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "new_link").symlink_to(tmp_path / "later")
    assert outputs.lock_path(tmp_path / "link") == outputs.lock_path(tmp_path / "real") == str(tmp_path / ".real.lock")
    assert outputs.lock_path(tmp_path / "new_link") == str(tmp_path / ".later.lock")
    with outputs.DirectoryLock(tmp_path / "real", "command", "--output_dir"):
        with pytest.raises(ValueError, match=rf"--output_dir {tmp_path}/link is in use by another command .*its lock: "
                                             rf"{tmp_path}/.real.lock"):
            outputs.DirectoryLock(tmp_path / "link", "command", "--output_dir").acquire()
    assert not os.path.lexists(tmp_path / ".real.lock")
    # an output named as another output's lock would replace the lock of the command writing there
    with outputs.DirectoryLock(tmp_path / "big.txt", "command", "--output", a_file=True):
        with pytest.raises(ValueError, match=r"--output \S*/.big.txt.lock is the name of the lock that guards "
                                             r"\S*/big.txt \(a command writing there may hold it\): choose another name"):
            outputs.DirectoryLock(outputs.lock_path(tmp_path / "big.txt"), "command", "--output", a_file=True).acquire()


def test_a_lock_on_a_full_disk_is_held_and_released_without_a_word(tmp_path, monkeypatch):
    """On a full disk the holder's line cannot be written: the lock holds all the same, and its release does
    not try the write again (a buffered write, retried by close(), had ended every command on a full disk in a
    traceback after its own one-line error)."""
    import errno

    real = os.write

    def full(descriptor, data):
        if data.startswith(b'{"pid"'):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(descriptor, data)

    monkeypatch.setattr(os, "write", full)
    lock = outputs.DirectoryLock(tmp_path / "out", "command", "--output_dir").acquire()
    monkeypatch.undo()
    assert lock.active and Path(outputs.lock_path(tmp_path / "out")).read_text() == ""
    lock.release()
    assert not Path(outputs.lock_path(tmp_path / "out")).exists() and not lock.active


def test_what_lies_where_a_lock_goes_is_never_emptied(tmp_path, monkeypatch):
    """The lock's place held a link to a user's corpus (it was emptied and given the holder's line), a link to
    /dev/null ("Invalid argument"), a folder, or a file of the user's: each refused, naming the lock's place."""
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("a user's corpus\n")
    lock = Path(outputs.lock_path(tmp_path / "out.txt"))
    for make, kind in ((lambda: lock.symlink_to(corpus), rf"a link \(to {corpus}\)"),
                       (lambda: lock.symlink_to("/dev/null"), r"a link \(to /dev/null\)"), (lock.mkdir, "a folder")):
        make()
        with pytest.raises(ValueError, match=rf"^{lock}, where --output \S*out.txt's lock goes, is {kind}, not a lock "
                                             r"file: move it away$"):
            outputs.DirectoryLock(tmp_path / "out.txt", "command", "--output", a_file=True).acquire()
        lock.rmdir() if lock.is_dir() and not lock.is_symlink() else lock.unlink()
    assert corpus.read_text() == "a user's corpus\n"
    lock.write_text("my notes\n")
    with pytest.raises(ValueError, match=rf"^{lock} is not a lock of albert-act's \(8 characters of something else\), "
                                         r"yet it is where --output \S*out.txt's lock goes: move it away$"):
        outputs.DirectoryLock(tmp_path / "out.txt", "command", "--output", a_file=True).acquire()
    assert lock.read_text() == "my notes\n"
    lock.unlink()
    (tmp_path / "out").mkdir()  # a writable output in a folder that is not (a volume mounted in a read-only one)
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda path, *a: (_ for _ in ()).throw(OSError(30, "Read-only file system"))
                        if str(path).endswith(".lock") else real_open(path, *a))
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(tmp_path))
    with pytest.raises(OSError, match=rf"Read-only file system: --output_dir {tmp_path / 'out'} is writable, but not "
                                      rf"its folder {tmp_path}, where its lock goes \(.out.lock\): make that folder "
                                      r"writable, or choose an output in a writable folder"):
        outputs.DirectoryLock(tmp_path / "out", "command", "--output_dir").acquire()


def test_a_lock_left_by_a_killed_process_is_taken_over_and_named(tmp_path):
    target = str(tmp_path / "run")
    killed = _python(f"import os; from albert_act.base.outputs import DirectoryLock; DirectoryLock({target!r}, 'x').acquire(); "
                     "print(os.getpid(), flush=True); os.kill(os.getpid(), 9)", timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert Path(outputs.lock_path(target)).read_text()  # left behind, with its holder
    with outputs.DirectoryLock(target, "x") as lock:
        assert lock.active and f"pid {killed.stdout.split()[0]} on " in lock.took_over
        assert lock.notice().startswith(f"{target}: the process that held it (pid {killed.stdout.split()[0]} on ")
        assert lock.notice().endswith("is gone; taking it over")


@contextlib.contextmanager
def _another_process(code):
    """A process that runs `code` (its locks taken through `outputs`) and holds them until the block ends, when
    it is killed (its lock files left, as a kill leaves them)."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; from albert_act.base import outputs\n" + code +
                               "\nprint('held', flush=True); time.sleep(60)"],
                              cwd=REPO, env=ENV, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def test_outputs_checked_for_overwrite_are_held_so_that_two_at_once_cannot_both_write(tmp_path, capsys):
    """Two analyses, benchmarks, vocabularies, probing builds or GLUE zips given one output at once: each had checked that no
    earlier output was there, and the one to finish last replaced the other's without --overwrite. The output is
    locked before that check (`outputs.hold`): the second is refused at once, naming the first."""
    from albert_act import glue_submission
    from pipelines import probing, train_tokenizer

    targets = {name: str(tmp_path / name) for name in ("analysis", "vocab", "probing", "submission.zip")}
    with _another_process(f"for path in {list(targets.values())!r}: outputs.hold(path)") as holder:
        busy = rf"is in use by another command \(pid {holder.pid} on .*, `-c`, started .*\); wait for it to end"
        with pytest.raises(ValueError, match=busy):
            outputs.check_output_dir(targets["analysis"], False, ("a.md",), "an analysis", "an earlier analysis")
        with pytest.raises(SystemExit, match=busy):
            train_tokenizer.main(["--input", str(REPO / "README.md"), "--output", targets["vocab"]])
        with pytest.raises(SystemExit, match=busy):
            probing.main(["--synthetic_documents", "5", "--output_dir", targets["probing"]])
        (tmp_path / "models").mkdir()
        with pytest.raises(SystemExit, match=busy):
            glue_submission.main(["--models", str(tmp_path / "models"), "--data_dir", str(tmp_path / "models"),
                                  "--output", targets["submission.zip"]])
    assert sorted(os.listdir(tmp_path)) == [".analysis.lock", ".probing.lock", ".submission.zip.lock", ".vocab.lock",
                                            "models"]  # the killed holder's
    outputs.check_output_dir(targets["analysis"], False, ("a.md",), "an analysis", "an earlier analysis")  # taken over
    assert "analysis: the process that held it (pid" in capsys.readouterr().out
    outputs.release_held()
    assert sorted(os.listdir(tmp_path)) == [".probing.lock", ".submission.zip.lock", ".vocab.lock", "models"]


def test_an_output_replaced_whole_is_not_nested_with_one_being_written(tmp_path):
    """analyze --output_dir nest/inner running, then analyze --output_dir nest: both ended 'written', and the
    outer one, moved over nest whole, had removed the inner analysis. Each way round, the second is refused."""
    nest, inner = tmp_path / "nest", tmp_path / "nest" / "inner"
    nest.mkdir()
    for first, second, message in (
            (inner, nest, rf"--output_dir {nest} holds {inner}, which another command is writing now \(pid {{pid}} on "
                          rf".*\); this command replaces \S*nest whole when it ends: wait for that one"),
            (nest, inner, rf"--output_dir \S*nest/inner is inside {nest}, which another command is writing now \(pid "
                          r"{pid} on .*\): its end could replace or remove it")):
        with _another_process(f"outputs.check_output_dir({str(first)!r}, False, [], 'x', 'y')") as holder:
            with pytest.raises(ValueError, match=message.replace("{pid}", str(holder.pid))):
                outputs.check_output_dir(str(second), False, [], "x", "y")
        outputs.release_held()
    outputs.check_output_dir(str(inner), False, [], "x", "y")  # its own locks: not another's
    outputs.check_output_dir(str(nest), False, [], "x", "y")
    outputs.release_held()


def test_a_users_hidden_files_are_other_files_in_an_output_replaced_whole(tmp_path):
    """analyze --output_dir a folder holding only .git/ and .notes.txt: accepted, and the folder replaced whole
    deleted them. Hidden entries are the user's unless they are a writer's lock, staging dir or partial file."""
    (tmp_path / "out" / ".git").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"--output_dir \S*out holds other files \(.git\); x replaces its dir whole"):
        outputs.check_output_dir(str(tmp_path / "out"), True, ["a.md"], "x", "y")
    outputs.release_held()
    (tmp_path / "out" / ".git").rmdir()
    for name in (".staging-1-x", ".partial-1-a.md", ".inner.lock"):
        (tmp_path / "out" / name).write_text("")
    outputs.check_output_dir(str(tmp_path / "out"), True, ["a.md"], "x", "y")
    outputs.release_held()


def test_an_output_moved_aside_by_a_killed_writer_is_put_back(tmp_path):
    """`replace_dir` moves the earlier output into its staging dir, then the new one into place: a writer killed
    between the two moves left the earlier output in a dead staging dir, which the next writer removed. It is
    put back now (where nothing has taken its place), and the dead staging dir removed as before."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    staging = tmp_path / f".staging-{dead.stdout.strip()}-x1"
    (staging / "previous-table").mkdir(parents=True)
    (staging / "previous-table" / "probes.md").write_text("earlier")
    (staging / "result").mkdir()  # the new one, never moved in
    (staging / "previous-kept").mkdir()  # an output of that name in place already: left as it is
    (tmp_path / "kept").mkdir()
    with outputs.staging_dir(str(tmp_path)):
        assert (tmp_path / "table" / "probes.md").read_text() == "earlier" and not staging.exists()
    assert sorted(os.listdir(tmp_path)) == ["kept", "table"] and os.listdir(tmp_path / "kept") == []


def test_a_run_folder_moved_mid_run_stops_the_run_where_a_new_one_would_be_begun(tmp_path):
    from albert_act.base import artifacts

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text("{}")
    artifacts.check_run_in_place(str(run), "the checkpoint of update 10")  # in place: nothing said
    run.rename(tmp_path / "moved")
    with pytest.raises(ValueError) as raised:
        artifacts.check_run_in_place(str(run), "the checkpoint of update 10")
    assert str(raised.value).startswith(f"{run}: the run's folder was moved or removed while it trained")
    assert "the checkpoint of update 10 was not written" in str(raised.value)
    assert "--model_dir at its new place" in str(raised.value)
    assert not run.exists()  # nothing begun at the old place


def test_a_benchmarks_result_is_replaced_in_one_step(tmp_path):
    """depth_knob wrote its .md, .json and .png one by one: a stop between them left a new table beside an old
    plot. `arguments.write_whole` stages them and moves them in together; a failure leaves the earlier result."""
    from benchmarks import arguments

    (tmp_path / "knob").mkdir()
    (tmp_path / "knob" / "r.md").write_text("earlier")
    written = text_files.replaced_since(str(tmp_path / "knob" / "r.json"))
    with pytest.raises(OSError):
        arguments.write_whole(str(tmp_path / "knob"), {"r.md": lambda path: Path(path).write_text("new"),
                                                       "r.json": lambda path: open(os.path.join(path, "x"), "w")})
    assert [p.name for p in (tmp_path / "knob").iterdir()] == ["r.md"] and not written()
    (tmp_path / "knob").chmod(0o700)  # made private by its owner: the new result stays private
    (tmp_path / "knob" / "r.md").chmod(0o600)  # and so does a file made private in it
    arguments.write_whole(str(tmp_path / "knob"), {"r.md": lambda path: Path(path).write_text("new"),
                                                   "r.json": lambda path: Path(path).write_text("{}")})
    assert sorted(p.name for p in (tmp_path / "knob").iterdir()) == ["r.json", "r.md"] and written()
    assert (tmp_path / "knob").stat().st_mode & 0o777 == 0o700 and (tmp_path / "knob" / "r.md").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "knob" / "r.md").read_text() == "new" and sorted(os.listdir(tmp_path)) == ["knob"]


def test_an_output_in_a_folder_not_writable_is_refused_before_the_work(tmp_path, monkeypatch):
    """An output made in, or written into, a folder the user cannot write (a read-only disk, another user's folder)
    is refused when checked, before the work, not when its result is written; a writable one passes."""
    locked = tmp_path / "shared"
    locked.mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(locked) and real_access(path, mode))
    for target in (locked / "export" / "1", locked):
        with pytest.raises(ValueError, match=rf"^--export_dir {target}: {locked} is (not writable to you|on a "
                                             r"read-only disk); give a folder you can write \(or make it writable\)$"):
            outputs.check_dir_target(target, "--export_dir")
    outputs.check_dir_target(tmp_path / "mine" / "1", "--export_dir")
    from albert_act.base import artifacts

    (locked / "1").mkdir()  # an export there, writable itself, replaced from its folder (where its lock goes too)
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(locked) and real_access(path, mode))
    with pytest.raises(ValueError, match=rf"^--export_dir {locked / '1'}: {locked} is (not writable to you|on a read-only disk)"):
        artifacts.check_export_target(str(locked / "1"), overwrite=True, flag="--export_dir")


def test_an_output_replaced_whole_is_not_a_mount_point(tmp_path, monkeypatch):
    """A mount point (a container's volume) cannot be renamed over: analyze and export failed with 'Device or
    resource busy' after all their work. Refused before it, with the way forward."""
    from albert_act.base import artifacts

    mount = tmp_path / "volume"
    mount.mkdir()
    monkeypatch.setattr(os.path, "ismount", lambda path: str(path).rstrip("/") == str(mount))
    with pytest.raises(ValueError, match=rf"^--output_dir {mount} is a mount point: the output is moved into place "
                                         rf"whole by a rename, which a mount point refuses; write into a folder inside "
                                         rf"it, e.g. {mount / 'results'}$"):
        outputs.check_output_dir(str(mount), False, [], "x", "y")
    outputs.release_held()
    with pytest.raises(ValueError, match=rf"^--output {mount} is a mount point: .* e.g. {mount / '1'}$"):
        artifacts.check_export_target(str(mount))
    outputs.check_output_dir(str(mount), False, [], "x", "y", reused=True)  # its runs go inside: no rename of it
    outputs.release_held()


def test_a_bind_mount_on_the_same_file_system_is_a_mount_point(tmp_path, monkeypatch):
    """`os.path.ismount` compares devices, which a bind mount of a folder on the same file system shares with its
    parent: such an output also failed after all its work. /proc/self/mountinfo names it (a space spelled \\040)."""
    import io

    from albert_act.base import checks

    mount = Path(os.path.realpath(tmp_path)) / "bound here"
    mount.mkdir()
    table = (f"42 27 254:0 /elsewhere {str(mount).replace(' ', chr(92) + '040')} rw,relatime - ext4 /dev/vda rw\n"
             "27 1 254:0 / / rw - ext4 /dev/vda rw\n")
    monkeypatch.setattr(checks, "open", lambda path, **kw: io.StringIO(table), raising=False)
    assert checks._mount_points() == {str(mount), "/"}
    with pytest.raises(ValueError, match=r"^--output_dir .*bound here is a mount point"):
        checks.refuse_mount_point(str(mount), "--output_dir", "results")
    checks.refuse_mount_point(str(tmp_path), "--output_dir", "results")
    with pytest.raises(ValueError, match=r"^--output_dir .*: .*bound here is a mount point \(a file or folder mounted "
                                         r"there\), .* write the output elsewhere, then copy it there \(cp\)$"):
        checks.refuse_mounts_within(str(mount.parent), "--output_dir")  # a file or folder mounted inside
    with pytest.raises(ValueError, match=r"^--output .*bound here: .*bound here is a mount point"):
        checks.refuse_mounts_within(str(mount), "--output", a_file=True)  # a file mounted where the output goes
    checks.refuse_mounts_within(str(mount.parent / "bound"), "--output_dir")  # a sibling's name is no folder of it


def test_a_remote_text_that_cannot_be_reached_is_not_read_as_empty(monkeypatch):
    """TensorFlow's reader yields no line for a gs:// file it cannot reach: analyze --text and finetune's SentEval
    file called it empty. Its existence is asked first, through `text_files.gfile`, whose errors name the path."""
    from albert_act.base import text_files

    def offline(path):
        raise OSError(errno.EIO, "Could not resolve host: www.googleapis.com", path)

    class Missing:
        exists = staticmethod(lambda path: False)

    monkeypatch.setattr(text_files, "gfile", lambda: type("Offline", (), {"exists": staticmethod(offline)}))
    with pytest.raises(ValueError, match=r"^gs://b/s.txt: cannot be read \(Could not resolve host: www.googleapis.com\)"):
        list(text_files.read_lines("gs://b/s.txt"))
    monkeypatch.setattr(text_files, "gfile", lambda: Missing)
    with pytest.raises(ValueError, match=r"^gs://b/s.txt: no such file$"):
        list(text_files.read_lines("gs://b/s.txt"))


def test_remote_paths_are_not_locked_and_say_so():
    with outputs.DirectoryLock("gs://bucket/run", "pre-training run") as lock:
        assert not lock.active and "not locked (remote path)" in lock.note


def test_staging_dirs_of_dead_processes_are_removed_and_live_ones_kept(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    (tmp_path / f".staging-{dead_pid}-abc").mkdir()
    (tmp_path / f".staging-{dead_pid}-abc" / "half.pb").write_bytes(b"x" * 10)
    (tmp_path / f".staging-{os.getppid()}-def").mkdir()  # a live process (our parent) may be writing a sibling
    (tmp_path / "1").mkdir()
    with outputs.staging_dir(str(tmp_path)) as staging:
        assert Path(staging).name.startswith(f".staging-{os.getpid()}-")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([f".staging-{os.getppid()}-def", "1"])


def test_partial_files_of_dead_processes_are_removed_by_the_next_write_and_live_ones_kept(tmp_path):
    dead = 4_194_305  # above Linux's largest pid: no such process
    for name in (f".partial-{dead}-config.json", f".partial-{os.getppid()}-config.json",
                 f".partial-{dead}-other.json", f".s.zip.{dead}.partial"):
        (tmp_path / name).write_text("half")
    outputs.write_file(tmp_path / "config.json", b"{}")
    assert (tmp_path / "config.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["config.json", f".partial-{os.getppid()}-config.json", f".partial-{dead}-other.json", f".s.zip.{dead}.partial"])
    outputs.remove_dead_partials(str(tmp_path), ".s.zip.", ".partial")  # the submission's own pattern
    assert not (tmp_path / f".s.zip.{dead}.partial").exists()


def test_a_killed_writer_not_yet_reaped_is_dead(tmp_path):
    """A writer killed a moment ago is a zombie until its parent reaps it: os.kill(pid, 0) still finds it, but
    its partial file is no one's and the next write removes it (it had stayed, 20 MB, after a lock takeover)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    for _ in range(200):  # exited, not reaped: a zombie
        if open(f"/proc/{child.pid}/stat").read().rpartition(")")[2].split()[0] == "Z":
            break
        time.sleep(0.05)
    (tmp_path / f".partial-{child.pid}-big.txt").write_text("half")
    assert not outputs._alive(child.pid) and outputs._alive(os.getpid())
    outputs.write_file(tmp_path / "big.txt", b"whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]
    child.wait()


def test_an_interrupted_write_leaves_the_old_version_whole(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    (target / "model.safetensors").write_bytes(b"old" * 1000)
    with pytest.raises(OSError):
        with outputs.staging_dir(str(tmp_path)) as staging:
            staged = Path(staging) / "new"
            staged.mkdir()
            (staged / "model.safetensors").write_bytes(b"ne")  # a full disk mid-way
            raise OSError(28, "No space left on device")
    assert (target / "model.safetensors").read_bytes() == b"old" * 1000
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    with outputs.staging_dir(str(tmp_path)) as staging:
        staged = Path(staging) / "new"
        staged.mkdir()
        (staged / "model.safetensors").write_bytes(b"new")
        outputs.replace_dir(str(staged), str(target), staging)
    assert (target / "model.safetensors").read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_an_output_that_is_a_symlink_is_written_where_it_points(tmp_path):
    """`--output link` (a symlink to a folder or a file): the output goes where the link points, and
    the link stays a link (a rename over it replaced the link by a folder, and left its target empty)."""
    (tmp_path / "target").mkdir()
    (tmp_path / "link").symlink_to("target")
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "saved_model.pb").write_text("model")
    path = outputs.followed(tmp_path / "link")
    with outputs.staging_dir(os.path.dirname(path)) as staging:
        outputs.replace_dir(str(staged), path, staging)
    assert (path, (tmp_path / "link").is_symlink()) == (str(tmp_path / "target"), True)
    assert (tmp_path / "link" / "saved_model.pb").read_text() == "model"
    (tmp_path / "file.txt").write_text("old")
    (tmp_path / "file_link").symlink_to("file.txt")
    outputs.write_file(tmp_path / "file_link", b"new")
    assert ((tmp_path / "file_link").is_symlink(), (tmp_path / "file.txt").read_text()) == (True, "new")
    assert outputs.followed(tmp_path / "file.txt") == str(tmp_path / "file.txt")
    (tmp_path / "dangling").symlink_to("made_later")  # a link to a path still to be made: made there
    assert outputs.followed(tmp_path / "dangling") == str(tmp_path / "made_later")
    text_files.makedirs(tmp_path / "dangling" / "sub")  # os.makedirs stopped at the link: "File exists"
    assert ((tmp_path / "made_later" / "sub").is_dir(), (tmp_path / "dangling").is_symlink()) == (True, True)
    (tmp_path / "loop_a").symlink_to("loop_b")
    (tmp_path / "loop_b").symlink_to("loop_a")
    with pytest.raises(ValueError, match=r"loop_a: a symbolic link that names no place \(.*: it leads back to itself\)"):
        outputs.followed(tmp_path / "loop_a")
    with pytest.raises(ValueError, match=r"loop_a/sub: a symbolic link on the way names no place"):
        text_files.makedirs(tmp_path / "loop_a" / "sub")
    with pytest.raises(ValueError, match=r"--output_dir .*loop_a: a symbolic link on the way names no place"):
        outputs.check_dir_target(tmp_path / "loop_a", "--output_dir")  # before the work, not after it
    with pytest.raises(ValueError, match=r"loop_a: cannot be read \(Too many levels of symbolic links\)"):
        list(text_files.read_lines(tmp_path / "loop_a"))  # an input: not blamed on the writing of the outputs


def test_a_huggingface_export_that_fails_keeps_the_old_dir(tmp_path, monkeypatch, capsys):
    """The loss the issue found: --format huggingface --overwrite on a full disk truncated the old
    model.safetensors. Now it is written in a staging dir and moved in only when whole."""
    import types

    import numpy as np

    from albert_act import export
    from albert_act.serve import huggingface

    old = tmp_path / "hf"
    old.mkdir()
    (old / "config.json").write_text('{"model_type": "albert"}')
    (old / "model.safetensors").write_bytes(b"old weights")

    def full_disk(weights, config, output_dir, vocab_bytes=None):
        os.makedirs(output_dir, exist_ok=True)
        Path(output_dir, "model.safetensors").write_bytes(b"half")
        raise OSError(28, "No space left on device")

    weight = types.SimpleNamespace(path="w", numpy=lambda: np.zeros(2))
    model = types.SimpleNamespace(weights=[weight])
    source = types.SimpleNamespace(pretraining_model=lambda: (model, {"backbone": {}}),
                                   tokenizer=lambda vocab=None: types.SimpleNamespace(model_proto=b""))
    monkeypatch.setattr(huggingface, "Source", types.SimpleNamespace(open=lambda path: source))
    monkeypatch.setattr(huggingface, "write_huggingface", full_disk)
    with pytest.raises(SystemExit) as exit_:
        export.main(["--checkpoint", str(tmp_path), "--kind", "pretraining", "--format", "huggingface",
                     "--output", str(old), "--overwrite"])
    assert re.search(r"error: could not write .*hf: No space left on device; the previous one is intact", str(exit_.value))
    assert (old / "model.safetensors").read_bytes() == b"old weights"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf"]  # no staging left, no lock left


# --- real processes: a pre-training run, a second terminal, Ctrl-C, SIGTERM, SIGKILL ------------------

def _pretrain_command(records, model_dir, steps):
    overrides = [a for k, v in TINY_RUN.items() for a in ("--override", f"{k}={v}")]
    return [sys.executable, "-m", "albert_act.pretrain", "--train_files", records[0], "--eval_files", records[1],
            "--model_dir", str(model_dir), "--steps", str(steps), "--global_batch_size", "8", "--micro_batch_size", "8",
            "--checkpoint_every", "5", "--no-jit_compile", "--no_export", "--eval_batches", "1", *STATIC_FLAGS, *overrides]


def _wait_for_checkpoint(model_dir, process, timeout=240):
    start = time.time()
    while time.time() - start < timeout:
        if list((model_dir / "checkpoints").glob("ckpt-*.index")):
            return
        assert process.poll() is None, process.communicate()[1][-2000:]
        time.sleep(0.5)
    raise AssertionError("no checkpoint written")


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_second_terminal_is_refused_and_a_stop_says_what_was_kept(stop, records, tmp_path):
    model_dir = tmp_path / "run"
    command = _pretrain_command(records, model_dir, 100000) + ["--log_every", "1"]
    first = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_checkpoint(model_dir, first)
        second = subprocess.run(command, cwd=REPO, env=ENV, capture_output=True, text=True, timeout=300)
        assert second.returncode == 1
        assert f"is in use by another pre-training run (pid {first.pid} on " in second.stderr, second.stderr[-2000:]
        first.send_signal(stop)
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 130, err[-2000:]
    assert "Traceback" not in err and re.search(r"stopped: the newest checkpoint is .*ckpt-\d+ \(update \d+\); re-run "
                                                r"the same command to resume from it", err), err[-2000:]
    assert not Path(outputs.lock_path(model_dir)).exists()
    assert not list((model_dir / "checkpoints").glob("*_temp*"))
    # The process ends at once, without the interpreter's teardown: TensorBoard has every update logged.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    newest = int(re.search(r"\(update (\d+)\)", err).group(1))
    logged = [e.step for e in EventAccumulator(str(model_dir / "train")).Reload().Tensors("loss")]
    assert logged and max(logged) >= newest, (logged, newest)


@pytest.mark.slow
def test_after_a_sigkill_the_next_run_takes_over_and_resumes(records, tmp_path):
    model_dir = tmp_path / "run"
    first = subprocess.Popen(_pretrain_command(records, model_dir, 100000), cwd=REPO, env=ENV,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_checkpoint(model_dir, first)
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=60)
    finally:
        first.kill()
    assert Path(outputs.lock_path(model_dir)).exists()  # left behind by the killed run
    latest = max(int(p.name.split("-")[1].split(".")[0]) for p in (model_dir / "checkpoints").glob("ckpt-*.index"))
    # The same settings (steps included) resume; stopped again at once by SIGINT once it has taken over.
    second = subprocess.Popen(_pretrain_command(records, model_dir, 100000), cwd=REPO, env=ENV,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        start = time.time()
        while time.time() - start < 240 and second.poll() is None:
            newest = max(int(p.name.split("-")[1].split(".")[0]) for p in (model_dir / "checkpoints").glob("ckpt-*.index"))
            if newest > latest:  # it has taken over and trained on
                break
            time.sleep(0.5)
        second.send_signal(signal.SIGINT)
        out, err = second.communicate(timeout=120)
    finally:
        second.kill()
    assert f"the process that held it (pid {first.pid} on " in out and "is gone; taking it over" in out, out[-2000:]
    assert "resumed from" in out, out[-2000:]
    assert second.returncode == 130 and "Traceback" not in err, err[-2000:]


# --- real processes: the data tool and an export stopped half-way ---------------------------------

def _stop_when(command, ready, stop, timeout=240):
    """Starts `command`, sends `stop` once `ready()` is true; returns (exit status, stderr)."""
    process = subprocess.Popen(command, cwd=REPO, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))  # (not nohup's SIGHUP)
    try:
        start = time.time()
        while not ready():
            assert process.poll() is None, process.communicate()[1][-2000:]
            assert time.time() - start < timeout, "never got half-way"
            time.sleep(0.05)
        process.send_signal(stop)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    return process.returncode, err


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stopped_data_run_keeps_nothing_half_written(stop, records, tmp_path):
    from pipelines import synthetic_corpus

    synthetic_corpus.write_corpus(tmp_path / "corpus.txt", 2000, seed=1)
    output = tmp_path / "records"
    command = [sys.executable, "-m", "pipelines.create_pretraining_data", "--input", str(tmp_path / "corpus.txt"),
               "--vocab", str(Path(records[0]).parent.parent / "vocab.model"), "--output_dir", str(output),
               "--max_seq_length", "64", "--workers", "1", "--num_shards", "2", "--dupe_factor", "20"]
    status, err = _stop_when(command, lambda: (output / "_incomplete").exists(), stop)
    assert status == 130 and "Traceback" not in err, err[-2000:]
    assert err.strip().splitlines()[-1] == f"stopped: nothing was written to {output}; re-run the same command"
    assert list(output.iterdir()) == [] and not Path(outputs.lock_path(output)).exists()


@pytest.mark.slow
def test_a_stopped_export_keeps_the_previous_version(tiny_run, tmp_path):
    target = tmp_path / "export" / "1"
    target.parent.mkdir()
    import shutil

    shutil.copytree(tiny_run[1], target)
    before = sorted((str(p.relative_to(target)), p.stat().st_size) for p in target.rglob("*") if p.is_file())
    command = [sys.executable, "-m", "albert_act.export", "--checkpoint", str(tiny_run[0]), "--kind", "pretraining",
               "--output", str(target), "--overwrite"]
    staged = lambda: any(p.name.startswith(".staging-") for p in target.parent.iterdir())  # noqa: E731
    status, err = _stop_when(command, staged, signal.SIGINT)
    assert status == 130 and "Traceback" not in err, err[-2000:]
    assert err.strip().splitlines()[-1] == (f"stopped: nothing was written to {target} (an existing one is intact); "
                                            "re-run the command")
    assert sorted((str(p.relative_to(target)), p.stat().st_size) for p in target.rglob("*") if p.is_file()) == before
    assert [p.name for p in target.parent.iterdir()] == ["1"]  # no staging dir, no lock left


def test_a_files_error_before_the_commands_work_is_one_line():
    """`entry.run`: a remote --init that does not answer raised outside `cli.failures` (the input's kind is read
    first) and printed a traceback; now its line, exit status 1. Another exception goes on up as it is."""
    from albert_act.base import entry

    def offline():
        raise OSError(errno.EIO, "Could not resolve host: www.googleapis.com", "gs://bucket/run")

    with pytest.raises(SystemExit, match=r"^error: Could not resolve host: www.googleapis.com \(gs://bucket/run\)$"):
        entry.run(offline)
    with pytest.raises(KeyError):
        entry.run(lambda: {}["a fault of the code"])


def test_an_input_that_cannot_be_read_is_no_write_failure(tmp_path, monkeypatch):
    """A refused read of an input (a --vocab of mode 000) is said as a read of that file, with how to mend it, not as
    a write of the output; a refused write is still one."""
    from albert_act.base import write_failures

    vocab = tmp_path / "noread.model"
    vocab.write_bytes(b"x")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(vocab) and real_access(path, mode))
    refused = PermissionError(13, "Permission denied", str(vocab))
    assert write_failures.io_failure(refused, "the analysis", "the previous one is intact") == (
        f"could not read {vocab}: Permission denied; make it readable (chmod u+r {vocab}), or give a copy you can "
        "read; the previous one is intact")
    written = PermissionError(13, "Permission denied", str(tmp_path / "out" / "table.md"))
    assert write_failures.io_failure(written, "the analysis", "re-run the same command").startswith(
        "could not write the analysis: Permission denied")


def test_write_errors_in_words():
    """A full disk, as TensorFlow's saver and as the system report it: the reason and the output, no
    op or function names, and not the saver's temporary file."""
    import tensorflow as tf

    from albert_act.base import write_failures

    saver = tf.errors.ResourceExhaustedError(None, None, (
        "{{function_node __wrapped__SaveV2_dtypes_69_device_/job:localhost/replica:0/task:0/device:CPU:0}} "
        "/m/e/.staging-11730-3fyrp215/saved_model/variables/variables_temp/part-00000-of-00001.data-00000-of-00001"
        ".tempstate12620388184455204987; No space left on device [Op:SaveV2]"))
    assert write_failures.write_error(saver) == "No space left on device (/m/e)"
    checkpoint = tf.errors.ResourceExhaustedError(None, None, "/r/checkpoints/ckpt-4_temp/part-00000-of-00001.data"
                                                  "-00000-of-00001.tempstate1; No space left on device")
    assert write_failures.write_error(checkpoint) == "No space left on device (/r/checkpoints/ckpt-4)"
    assert write_failures.write_error(OSError(28, "No space left on device", "/r/x.json")) == "No space left on device (/r/x.json)"
    kept = "files written whole before are intact: free space and re-run the same command"
    assert write_failures.io_failure(OSError(28, "No space left on device", "/r/x"), "runs/x", kept) == (
        f"could not write runs/x: No space left on device (/r/x); {kept}")
    assert write_failures.io_failure(OSError(1, "Operation not permitted", "/sys/x"), "runs/x", kept) == (  # not a full disk
        "could not write runs/x: Operation not permitted (/sys/x); files written whole before are intact: make the "
        "output's folder writable (or choose another) and re-run the same command")
    assert write_failures.io_failure(OSError(28, "No space left on device", "/r/x"), "runs/x", "no checkpoint was "
                                     "saved; re-run the same command to start again") == ("could not write runs/x: No "
        "space left on device (/r/x); no checkpoint was saved; free space and re-run the same command to start again")
    assert write_failures.io_failure(OSError(30, "Read-only file system", "/ro/x"), "ro/x", "shards are written "
                                     "whole; re-run the same command") == ("could not write ro/x: Read-only file system "
        "(/ro/x); shards are written whole; make the output's folder writable (or choose another), then re-run")
    assert OSError in write_failures.write_errors() and tf.errors.ResourceExhaustedError in write_failures.write_errors()
    offline = tf.errors.FailedPreconditionError(None, None, "Error executing an HTTP request: libcurl code 6\n\t when "
                                                "reading metadata of gs://bucket/e/1")  # no network: one line
    assert isinstance(offline, write_failures.write_errors()) and write_failures.io_failure(offline, "x", kept) == (
        "Error executing an HTTP request: libcurl code 6 when reading metadata of gs://bucket/e/1")
    fault = tf.errors.FailedPreconditionError(None, None, "Could not read uninitialized variable")
    with pytest.raises(tf.errors.FailedPreconditionError):  # not a remote path's: the code's fault, as it is
        write_failures.io_failure(fault, "x", kept)


def test_a_savedmodel_export_on_a_full_disk_keeps_the_old_one(tiny_run, tmp_path, monkeypatch):
    """TensorFlow's saver raises ResourceExhaustedError, not OSError, on a full disk: it was a traceback."""
    import tensorflow as tf

    from albert_act import export
    from albert_act.serve import savedmodel

    old = tmp_path / "e" / "1"
    shutil.copytree(tiny_run[1], old)
    before = sorted((p.relative_to(old), p.stat().st_size) for p in old.rglob("*"))

    def full_disk(root, path, signatures=None):
        Path(path).mkdir(parents=True)
        (Path(path) / "saved_model.pb").write_bytes(b"half")
        raise tf.errors.ResourceExhaustedError(None, None, f"{path}/variables/variables_temp/part-0.tempstate1; "
                                               "No space left on device [Op:SaveV2]")

    monkeypatch.setattr(savedmodel.tf.saved_model, "save", full_disk)
    with pytest.raises(SystemExit) as exit_:
        export.main(["--checkpoint", tiny_run[0], "--kind", "pretraining", "--output", str(old), "--overwrite"])
    assert re.fullmatch(r"error: could not write .*e/1: No space left on device \(.*e\); the previous one is intact",
                        str(exit_.value)), exit_.value
    assert sorted((p.relative_to(old), p.stat().st_size) for p in old.rglob("*")) == before
    assert sorted(p.name for p in (tmp_path / "e").iterdir()) == ["1"]  # no staging dir, no lock left


def test_fine_tuning_checks_the_room_for_its_weights_and_keeps_the_best_so_far(tmp_path, monkeypatch):
    """HDF5 filling the disk mid-write crashed the interpreter at exit (status 139, 16 tracebacks):
    the weights are written only when the disk has room for them, and beside the previous best."""
    import collections

    import keras

    from albert_act.train import finetuning_run

    model = keras.Sequential([keras.Input((30,)), keras.layers.Dense(200)])  # 24 KiB of weights
    best = tmp_path / "classifier.weights.h5"
    finetuning_run._save_weights(model, str(best))
    saved = best.read_bytes()
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(2**30, 2**30 - 2**19, 2**19))
    with pytest.raises(OSError, match=r"No space left on device \(it needs about 1.0 MiB, 0.5 MiB are free\)") as error:
        finetuning_run._save_weights(model, str(best))
    assert error.value.errno == 28 and error.value.filename == str(best)
    assert best.read_bytes() == saved and sorted(p.name for p in tmp_path.iterdir()) == [best.name]


@pytest.mark.parametrize("command", ["tokenizer", "analyze"])
def test_commands_end_a_full_disk_with_one_line(command, tiny_run, records, tmp_path, monkeypatch):
    """train_tokenizer and analyze ended a full disk in a traceback; now one line, and nothing half-written."""
    from albert_act.base import outputs

    def full_disk(path, data):
        raise OSError(28, "No space left on device", str(path))

    if command == "tokenizer":
        from pipelines import train_tokenizer as module

        corpus = tmp_path / "corpus.txt"
        corpus.write_text("".join(f"line {i} of a small corpus\n" for i in range(50)))
        monkeypatch.setattr(outputs, "write_with", full_disk)  # (the pair: the .model's write holds the .vocab's)
        argv = ["--input", str(corpus), "--output", str(tmp_path / "out" / "v"), "--vocab_size", "30",
                "--no-byte_fallback", "--required_chars=", "--model_type", "bpe"]
        expected = r"error: could not write .*out/v.model and .vocab: No space left on device \(.*v.model\); neither was written: free space and re-run the same command"
    else:
        from albert_act import analyze as module
        from albert_act.analysis import report

        monkeypatch.setattr(report.outputs, "replace_dir", lambda *a: full_disk(tmp_path / "out", b""))
        argv = ["token-types", "--init", tiny_run[0], "--output_dir", str(tmp_path / "out"), "--max_batches", "1"]
        expected = r"error: could not write the analysis: No space left on device \(.*out\); the previous one \(if any\) is intact"
    assert outputs  # the writers above are the ones every command uses
    with pytest.raises(SystemExit) as exit_:
        module.main(argv)
    assert re.fullmatch(expected, str(exit_.value)), exit_.value
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_one_error_tail(capsys):
    """cli.failures: a refusal, a refused write and Ctrl-C each end in one line, never a traceback."""
    import errno

    from albert_act.base import cli

    cases = ((ValueError("bad x"), "error: bad x", ""),
             (OSError(errno.ENOSPC, "No space left on device", "/out/f"),
              "error: could not write OUT: No space left on device (/out/f); KEPT", ""),
             (OSError(errno.EIO, "Input/output error", "/in/f"), "error: Input/output error (/in/f)", ""),
             (KeyboardInterrupt(), 130, "stopped: STOP\n"))
    for raised, code, stderr in cases:
        with pytest.raises(SystemExit) as stop:
            with cli.failures("OUT", "KEPT", "STOP"):
                raise raised
        assert stop.value.code == code and capsys.readouterr().err == stderr
    with pytest.raises(FloatingPointError):  # not a refusal unless the command says so
        with cli.failures("OUT", "KEPT", "STOP"):
            raise FloatingPointError("nan")


def _interrupt_at(records, root, point, delay=0.0):
    """A tiny pre-training run with a checkpoint every update and an export, sent SIGINT `delay`
    seconds after `point`: "spawn", or the first stdout line holding that text. (status, stdout,
    stderr); status 0 when the run ended before the signal."""
    root.mkdir(parents=True, exist_ok=True)
    vocab = str(Path(records[0]).parent.parent / "vocab.model")
    command = [a for a in _pretrain_command(records, root / "run", 3) if a != "--no_export"]
    command[command.index("--checkpoint_every") + 1] = "1"
    command += ["--export_dir", str(root / "export" / "1"), "--vocab", vocab]
    process = subprocess.Popen(command, cwd=REPO, env={**ENV, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    seen = []
    try:
        if point != "spawn":
            for line in process.stdout:
                seen.append(line)
                if point in line:
                    break
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=240)
    finally:
        process.kill()
    return process.returncode, "".join(seen) + out, err


def _one_stop_line(status, err):
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 130 and "Traceback" not in err and len(lines) == 1 and lines[0].startswith("stopped: "), \
        (status, err[-3000:])


@pytest.mark.parametrize("point, delay", [("spawn", 1.5), pytest.param("pre-training ", 0.0, marks=pytest.mark.slow)],
                         ids=["start-up", "tracing"])
def test_ctrl_c_while_starting_or_tracing_gives_one_line(point, delay, records, tmp_path):
    """Ctrl-C while TensorFlow loads (before any `failures` block) and while the first update traces:
    one "stopped: ..." line, status 130, no traceback."""
    status, _, err = _interrupt_at(records, tmp_path, point, delay)
    _one_stop_line(status, err)


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_run_gives_one_line(records, tmp_path):
    """SIGINT at many moments of one tiny run (start-up, flag parsing, preflight, tracing, each update
    and its checkpoint write, the evaluation, the export and its load-back, the final printing), timed
    as fractions of an uninterrupted run's length: each ends with one line, never a traceback."""
    start = time.time()
    status, out, err = _interrupt_at(records, tmp_path / "whole", "held-out evaluation after", 60)
    length = time.time() - start
    assert status in (0, 130), err[-2000:]
    stopped = 0
    for k in range(1, 11):
        status, _, err = _interrupt_at(records, tmp_path / f"at_{k}", "spawn", length * k / 11)
        if status == 0:  # it had ended: nothing to stop
            continue
        _one_stop_line(status, err)
        stopped += 1
    assert stopped >= 7, stopped


def test_a_stop_put_off_longer_than_the_grace_ends_the_command_with_the_works_line(tmp_path):
    """A stop that lands where it must be put off (TensorFlow tracing or loading, here a finalizer) waits for
    that code to end; on a loaded machine a tracing took minutes. After `STOP_GRACE` seconds of waiting the
    command ends all the same, with the line of the work it stopped (status 130), before the code ends."""
    script = tmp_path / "slow_finalizer.py"
    script.write_text("import time\n"
                      "from albert_act.base import cli\n"
                      "cli.stop_on_interrupt()\n"
                      "class Slow:\n"
                      "    def __del__(self):\n"
                      "        end = time.monotonic() + 20 * cli.STOP_GRACE\n"
                      "        while time.monotonic() < end:\n"
                      "            pass\n"
                      "        print('the finalizer ended', flush=True)\n"
                      "with cli.failures('OUT', 'KEPT', 'the newest checkpoint is ckpt-4'):\n"
                      "    print('ready', flush=True)\n"
                      "    Slow()\n")
    process = subprocess.Popen([sys.executable, str(script)], cwd=REPO, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline() == "ready\n"
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=240)
    finally:
        process.kill()
    assert process.returncode == 130 and err == "stopped: the newest checkpoint is ckpt-4\n", (out, err)
    assert "the finalizer ended" not in out


def test_a_stop_swallowed_where_python_ignores_exceptions_still_stops(capsys):
    """SIGINT handled inside a gc callback (JAX registers one) raises where Python prints and drops
    exceptions, or inside TensorFlow's Python called from its C++: the handler sees that frame and sends the
    signal again, and a block that ends with a stop pending says "stopped" all the same (status 130), not "done"."""
    import gc

    from albert_act.base import cli

    seen = []
    callback = lambda phase, info: seen.append(cli._in_ignored_context(sys._getframe()))  # noqa: E731
    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)
    assert seen and all(seen) and not cli._in_ignored_context(sys._getframe())
    scope = {"sys": sys}  # the import system's weak-reference callback on a module lock ("Exception ignored in: cb")
    exec(compile("def cb():\n    return sys._getframe()\n", "<frozen importlib._bootstrap>", "exec"), scope)
    assert cli._in_ignored_context(scope["cb"]())
    # TensorFlow's own Python, which its C++ calls while loading a SavedModel: an exception raised there came out
    # as "RuntimeError: pybind11::error_already_set: MISMATCH ... REPLACED BY KeyboardInterrupt" (or a crash)
    import tensorflow as tf

    def frame_in(path, caller=None, name="load_partial"):  # the frame of a function of `path`, called from
        scope = {"sys": sys}  # the function `name` of the file `caller`
        exec(compile("def here():\n    return sys._getframe()\n", path, "exec"), scope)
        if caller is None:
            return scope["here"]()
        exec(compile(f"def {name}():\n    return here()\n", caller, "exec"), scope)
        return scope[name]()

    python = os.path.join(os.path.dirname(tf.__file__), "python")
    ops, load = os.path.join(python, "ops.py"), os.path.join(python, "saved_model", "load.py")
    assert cli._in_ignored_context(frame_in(ops, load))  # loading a SavedModel
    assert not cli._in_ignored_context(frame_in(ops))  # a model answering: deferred there, a stop never landed
    assert not cli._in_ignored_context(frame_in(ops, os.path.join(python, "saved_model", "function_deserialization.py"),
                                                "restored_function_body"))  # a loaded model answering
    assert not cli._in_ignored_context(frame_in("/home/me/tensorflow/albert-act/run.py"))  # a clone's own path
    assert cli._in_ignored_context(frame_in("/home/me/albert-act/model.py", os.path.join(python, "framework",
                                            "func_graph.py"), "func_graph_from_py_func"))  # our code being traced
    with pytest.raises(SystemExit) as stop:
        with cli.failures("OUT", "KEPT", "the newest checkpoint is ckpt-4"):
            cli._PENDING[0] = signal.SIGINT  # as the handler leaves it when its exception was dropped
    assert stop.value.code == 130 and capsys.readouterr().err == "stopped: the newest checkpoint is ckpt-4\n"
    assert cli._PENDING[0] is None
    with cli.failures("OUT", "KEPT", "STOP"):  # the next work is not stopped by the last one's signal
        pass


def test_a_stop_during_a_long_native_call_says_its_line_within_seconds():
    """Inside one native call that does not return to Python (here libc's system(), which restarts its
    wait after a signal, as XLA's compiler does not look at signals), the handler cannot run: the
    watchdog says the block's stop line a few seconds after the signal, and ends the process (130)."""
    script = (
        "import ctypes, sys\n"
        "from albert_act.base import cli\n"
        "cli.stop_on_interrupt(); cli.stop_on_sigterm()\n"
        "with cli.failures('OUT', 'KEPT', lambda: 'the newest checkpoint is ckpt-7'):\n"
        "    print('native', flush=True)\n"
        "    ctypes.CDLL(None).system(b'sleep 40')\n"
        "print('returned', flush=True)\n")
    process = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert process.stdout.readline() == "native\n"
        time.sleep(0.5)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)  # system() leaves SIGINT to its child; a SIGTERM reaches us
        process.wait(timeout=30)
        waited = time.monotonic() - signalled
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # and the `sleep` it started, which holds its pipes
    out, err = process.stdout.read(), process.stderr.read()
    assert process.returncode == 130 and "returned" not in out
    assert err == "stopped: the newest checkpoint is ckpt-7\n"
    assert waited < 30  # the call itself would have lasted 40 s


def test_a_dir_that_cannot_be_made_is_named_as_given_not_its_lock():
    if not os.path.isdir("/proc/self"):
        pytest.skip("no /proc here (a folder that takes no files)")
    with pytest.raises(OSError) as refused:
        with outputs.DirectoryLock("/proc/albert_act_run", "pre-training run", "--model_dir"):
            pass
    assert str(refused.value).endswith("; --model_dir /proc/albert_act_run cannot be written there: "
                                       "'/proc/albert_act_run'") and ".lock" not in str(refused.value), str(refused.value)


def test_a_run_still_training_is_read_at_its_newest_checkpoint_with_a_note(tiny_run, tmp_path, capsys):
    """A run another process holds (still training): a reader (export, finetune --init, --init_from) takes its
    newest checkpoint and says so, naming the holder and the update."""
    from albert_act.io.source import Source

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time; f = open(sys.argv[1], 'w'); "
                               "f.write('{\"pid\": 1, \"host\": \"vm\", \"command\": \"pretrain.py\", \"started\": \"now\"}');"
                               " f.flush(); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
                               outputs.lock_path(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        update = Source.open(str(run)).run_checkpoint[0]
    finally:
        holder.kill()
        holder.wait()  # (its lock goes with it: read before it is gone, the run is still training)
    assert capsys.readouterr().err == (f"note: {run} is still training (pid 1 on vm, `pretrain.py`, started now): its "
                                       f"newest checkpoint now, of update {update:,}, is read\n")
    config = json.loads((run / "config.json").read_text())  # its run stopped before its --steps: said too
    (run / "config.json").write_text(json.dumps({**config, "steps": 400}))
    update = Source.open(str(run)).run_checkpoint[0]
    assert capsys.readouterr().err == (f"note: {run} stopped at update {update:,} of its 400: an unfinished run's "
                                       "weights are read (to finish it, run its command again: it resumes)\n")
    (run / "config.json").write_text(json.dumps(config))  # finished: nothing said
    assert Source.open(str(run)).run_checkpoint[0] == update and capsys.readouterr().err == ""


def test_a_run_whose_events_folder_is_not_writable_is_refused_before_training(tmp_path, monkeypatch):
    """A resumed run whose eval/ was read-only failed after its evaluation ('Permission denied'), advising a re-run
    that failed the same way; now refused first, naming the folder and chmod. A writable run passes."""
    from albert_act.train.resumption import check_run_entries

    for name in ("checkpoints", "train", "eval"):
        (tmp_path / "run" / name).mkdir(parents=True)
    check_run_entries(str(tmp_path / "run"))
    real_access = os.access
    locked = tmp_path / "run" / "eval"
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(locked) and real_access(path, mode))
    with pytest.raises(ValueError, match=rf"^{locked} is not writable to you, and the run writes there \(after "
                                         rf"the work\): make it writable \(chmod -R u\+w {locked}\), or use a new "
                                         r"--model_dir$"):
        check_run_entries(str(tmp_path / "run"))
    run = tmp_path / "run"  # a read-only copy (chmod -R a-w): every folder named at once, one chmod for all
    monkeypatch.setattr(os, "access", lambda path, mode: not str(path).startswith(str(run)) and real_access(path, mode))
    with pytest.raises(ValueError) as raised:
        check_run_entries(str(run))
    assert str(raised.value) == (f"{run}, {run}/checkpoints, {run}/train and {run}/eval are not writable to you, and "
                                 f"the run writes there (after the work): make them writable (chmod -R u+w {run}), "
                                 "or use a new --model_dir")


@pytest.mark.parametrize("kept, said", [
    ({"model.weights.h5": ""}, r"\(model.weights.h5\)"),
    ({"checkpoints/checkpoint": 'model_checkpoint_path: "ckpt-3"\n'}, r"\(checkpoints/checkpoint\)"),
    ({"held_out.jsonl": '{"step": 2}\n{"step": 4}\n'}, r"\(held_out.jsonl up to update 4\)"),
    ({"held_out.jsonl": '{"step": 2}\n'}, None),  # evaluated before its first checkpoint (at 4): it saved none
    ({"held_out.jsonl": '{"step": 4}\n{"step": 5, "mlm_acc'}, r"\(held_out.jsonl up to update 4\)"),  # (a line cut
    ({"held_out.jsonl": '{"step": 2}\n{"step": [4]}\n'}, None),  # short by a kill; an edited one: not read, not a
    ({}, None),  # traceback)
], ids=["jax-final-weights", "checkpoint-list", "evaluated-past-a-checkpoint", "evaluated-before-one",
        "a-line-cut-short", "a-line-edited", "nothing"])
def test_a_run_whose_checkpoints_were_deleted_keeps_its_results(tmp_path, kept, said):
    """A finished run with its checkpoints deleted started afresh, removing its results (TensorFlow) or replacing
    them without a word (JAX); a run that saved none (stopped before its first) still starts afresh."""
    from albert_act.train.resumption import check_results_kept

    (tmp_path / "run" / "checkpoints").mkdir(parents=True)
    for name, text in kept.items():
        (tmp_path / "run" / name).write_text(text)
    if said is None:
        check_results_kept(str(tmp_path / "run"), 4)
        return
    with pytest.raises(ValueError, match=rf"run holds a run's results {said} but no checkpoint in checkpoints/"):
        check_results_kept(str(tmp_path / "run"), 4)


def test_demo_data_whose_vocabulary_was_replaced_is_named(tmp_path):
    """A --demo_data_dir whose vocab.model was replaced was 'reused', then its records refused as another
    vocabulary's with advice to make them again (the demo makes its own): the file at fault is named first."""
    from albert_act.base import artifacts
    from albert_act.train.demo_data import DEMO_DATA, check_cache_dir
    from pipelines.create_pretraining_data import vocab_fingerprint

    records = tmp_path / artifacts.DEMO_RECORDS
    records.mkdir()
    (tmp_path / artifacts.DEMO_RECIPE).write_text(json.dumps(DEMO_DATA))
    for name in (artifacts.TOKENS_TRAIN, artifacts.TOKENS_EVAL):
        (records / name).write_bytes(b"")
    (records / artifacts.STATS_JSON).write_text(json.dumps({"vocab_sha256": vocab_fingerprint(b"the demo's")}))
    (tmp_path / artifacts.VOCAB).write_bytes(b"the demo's")
    check_cache_dir(str(tmp_path))
    (tmp_path / artifacts.VOCAB).write_bytes(b"another vocabulary")
    with pytest.raises(ValueError, match=r"vocab.model is not the vocabulary the demo records in \S+ were made with "
                                         r"\(replaced by another\?\): put the demo's own back"):
        check_cache_dir(str(tmp_path))
