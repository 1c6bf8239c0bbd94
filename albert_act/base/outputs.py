"""How every command writes its output: one process per output dir, and outputs replaced whole.

- `DirectoryLock(path, what)`: a second process on the same run or output dir is refused at once, naming
  the holder; the lock goes with its process (exit, crash, kill), and one a dead process left is taken over.
- `staging_dir(parent)` + `replace_dir(staged, target, staging)`: an output is written beside its final place and
  moved in by renames, so a full disk, Ctrl-C or a kill leaves the old version or the new one, whole.
No TensorFlow here (the data tool uses these too). Remote paths (gs://) are not locked (`.note`)."""

import atexit
import contextlib
import errno
import json
import os
import stat

from albert_act.base import checks


def write_file(path, data):
    """Writes the bytes `data` to the local file `path` whole (`write_with`)."""
    def write(partial):
        with open(partial, "wb") as f:
            f.write(data)

    write_with(path, write)


def write_with(path, write):
    """Writes the local file `path` whole: `write(partial)` writes a hidden sibling whose name keeps
    the file's ending (Keras' save_weights needs `.weights.h5`), renamed over `path` once complete,
    so a full disk, Ctrl-C or a kill leaves the old file and no reader sees half of one. A symlink
    at `path` is followed: the file it names is replaced, not the link."""
    path = followed(path)
    folder, name = os.path.split(path)
    if os.path.isdir(path):  # the rename would fail naming the hidden partial file
        raise IsADirectoryError(errno.EISDIR, "a folder is where this file is written", path)
    remove_dead_partials(folder, PARTIAL_PREFIX, f"-{name}")
    partial = os.path.join(folder, f"{PARTIAL_PREFIX}{os.getpid()}-{name}")
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(partial)


PARTIAL_PREFIX = ".partial-"  # .partial-<pid>-<name>: a file being written by process <pid>
SAVED_MODEL = "saved_model.pb"  # a SavedModel's graph: its folder is an export (artifacts names the rest)


def remove_dead_partials(folder, prefix, suffix):
    """Removes the files `<prefix><pid><suffix>` in `folder` that a dead process left (SIGKILL, power
    loss: its `finally` never ran); a running process's are left alone. Called before each write."""
    if not os.path.isdir(folder):
        return
    for entry in os.listdir(folder):
        pid = entry[len(prefix) : len(entry) - len(suffix)] if entry.startswith(prefix) and entry.endswith(suffix) else ""
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):  # (another writer removed it first)
                os.remove(os.path.join(folder, entry))


def check_dir_target(path, flag=None, holds_a_file=False):
    """ValueError when the directory `path` (to be created or written into) is a file or lies under one: "--output_dir
    runs/x/notes.txt/y: runs/x/notes.txt is a file, not a directory"; or when it is the current folder or holds it
    (`.`, `..`, the shell's folder by any name): an output replaced whole would move the folder one is in away, and
    one written into would mix with what is there; or inside a SavedModel; or in a folder not writable. holds_a_file:
    `path` is the folder of an output file (a zip, a vocabulary), which may be the current folder. A link loop on the
    way is named; a scheme typed with one slash (`gs:/b/x`) too. Remote paths pass (their filesystem says when written)."""
    path, named = str(path), f"{flag + ' ' if flag else ''}{path}"
    if "://" in path:
        return
    _check_scheme(path, named)
    if not holds_a_file:
        _check_not_current_folder(path, named)
    try:
        os.path.realpath(path, strict=True)
    except FileNotFoundError:  # to be made (through a link, perhaps: made where it points)
        pass
    except OSError as error:  # a loop: checked before the work, not found when its result is written
        if error.errno == errno.ELOOP:  # (a file on the way, ENOTDIR, is said below)
            raise ValueError(f"{named}: a symbolic link on the way names no place ({error.strerror}: it leads back "
                             "to itself); remove it or point it at a folder") from None
    ancestor = os.path.abspath(path)
    while not os.path.exists(ancestor):
        ancestor = os.path.dirname(ancestor)
    if not os.path.isdir(ancestor):
        if ancestor == os.path.abspath(path):
            raise ValueError(f"{named} is a file, not a directory")
        raise ValueError(f"{named}: {ancestor} is a file, not a directory")
    checks.refuse_unwritable(ancestor, named)  # (the folder it is written into, or made in: before the work)
    above = os.path.join(ancestor, "_") if ancestor != os.path.abspath(path) or holds_a_file else ancestor  # (a SavedModel:
    while above != os.path.dirname(above):  # a part of that one, written there)
        above = os.path.dirname(above)
        if os.path.isfile(os.path.join(above, SAVED_MODEL)):
            raise ValueError(f"{named} is inside the SavedModel {above}: written there, it would be a part of that "
                             "one; write it to a folder of its own")


def _check_scheme(path, named):
    """ValueError for a local path whose first part is a scheme (`gs:/b/x`, `s3:b`): a remote path typed with one
    slash, which would be written into a local folder named `gs:`, with no word of it."""
    first = path.split("/", 1)[0]
    if first[:-1].isalnum() and first[:1].isalpha() and first.endswith(":"):
        raise ValueError(f"{named} begins with {first!r}, a scheme with one slash: a remote path begins {first}//; "
                         f"for a local folder named {first!r}, write ./{path}")


def _check_not_current_folder(path, named):
    try:
        here = os.path.realpath(os.getcwd())
    except FileNotFoundError:  # the shell's folder was deleted: no path can be it
        return
    target = os.path.realpath(path)
    if here == target:
        raise ValueError(f"{named} is the current folder ({here}); give a new folder for the output (e.g. a name "
                         "inside this one)")
    if here.startswith(target.rstrip(os.sep) + os.sep):
        raise ValueError(f"{named} holds the current folder ({here} lies inside {target}); give a new folder for "
                         "the output, outside the folder you are in")


def lock_path(path):
    """The lock file of a run or output dir: a hidden sibling, `<parent>/.<name>.lock`, of the real folder (a link to
    it is one lock with it), there before the dir is and never inside what it guards (a SavedModel, a run)."""
    path = os.path.realpath(str(path).rstrip("/"))
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.lock")


_MINE = set()  # the lock files this process holds (`DirectoryLock`), which it does not count as held by another
_HELD = {}  # path -> the DirectoryLock this process holds on it until its command ends (`hold`)


def hold(path, flag="--output_dir", a_file=False):
    """Locks the output `path` (`DirectoryLock`) until the command ends (`cli.failures` calls `release_held`; the
    process's exit, else), so that a second process writing there at the same time is refused at once (the one to
    finish last would replace the other's): an analysis, a benchmark's results, a vocabulary or probing task files.
    Again in the same process (a notebook's second command): held already. Prints the lock's `notice`, if any.
    a_file: the output is a file (a zip), not a dir."""
    key = os.path.realpath(str(path))
    if key in _HELD or "://" in str(path):
        return
    _check_scheme(str(path), f"{flag} {path}")
    checks.refuse_mounts_within(path, flag, a_file)
    lock = DirectoryLock(path, "command", flag, a_file, say=True).acquire()
    if not _HELD:
        atexit.register(release_held)
    _HELD[key] = lock


def release_held(inside=None):
    """Releases every lock `hold` took (or those of the outputs in the folder `inside`: staged, to be moved)."""
    for key in [key for key in reversed(_HELD) if inside is None or key.startswith(os.path.join(inside, ""))]:
        _HELD.pop(key).release()


class DirectoryLock:
    """One process at a time on a dir: an exclusive `flock` on `lock_path(path)`, which the kernel releases when the
    holder exits, crashes or is killed: a lock file left by a dead process is taken over (`took_over` names it). A
    second process is refused at once with a ValueError naming the holder (pid, host, command, start time). Remote
    paths (gs://) and systems without `fcntl` are not locked: `self.active` is False and a `note` says so."""

    def __init__(self, path, what, flag=None, a_file=False, say=False):
        self.path, self.what, self.flag = str(path), what, flag  # flag: names the dir in a refusal
        self.a_file = a_file  # the output is a file (a zip, a vocabulary's prefix): no dir checks
        self.say = say  # print the `notice`, once the lock is held
        self.file = self.lock_name = None  # lock_path's, once held
        self.created = None
        self.took_over = None
        self.active = False
        self.note = None

    def acquire(self):
        self._lock()
        if self.say and self.notice():
            print(self.notice())
        return self

    def _lock(self):
        import datetime
        import socket
        import sys

        try:
            import fcntl
        except ImportError:  # Windows
            self.note = f"{self.path}: not locked (no fcntl here); do not start a second run on it"
            return
        if "://" in self.path:
            self.note = f"{self.path}: not locked (remote path); do not start a second run on it"
            return
        if not self.a_file:
            check_dir_target(self.path, self.flag)
        base = os.path.basename(self.path.rstrip("/"))
        if base.startswith(".") and base.endswith(".lock") and len(base) > 6:  # lock_path's form
            raise ValueError(f"{self.flag + ' ' if self.flag else ''}{self.path} is the name of the lock that guards "
                             f"{os.path.join(os.path.dirname(self.path), base[1:-5])} (a command writing there may "
                             "hold it): choose another name")
        name = self.lock_name = lock_path(self.path)
        self.created = _first_missing(os.path.dirname(name))  # removed on release if still empty
        os.makedirs(os.path.realpath(os.path.dirname(name)), exist_ok=True)  # a link: where it points
        while True:
            handle = self._open_lock_file(name)
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.seek(0)
                holder = _describe_holder(handle.read())
                handle.close()
                raise ValueError(f"{self.flag + ' ' if self.flag else ''}{self.path} is in use by another {self.what}"
                                 f"{holder}; wait for it to end "
                                 f"or stop it (its lock: {name})") from None
            try:  # the holder before us may have removed the file between our open and our lock
                if os.fstat(handle.fileno()).st_ino == os.stat(name).st_ino:
                    break
            except FileNotFoundError:
                pass
            handle.close()
        handle.seek(0)
        left = handle.read().strip()
        if left and not _describe_holder(left):  # a user's file by that name: not replaced by a lock
            handle.close()
            raise ValueError(f"{name} is not a lock of albert-act's ({len(left)} characters of something else), yet "
                             f"it is where {self._guarded()}'s lock goes: move it away")
        if left:  # a holder that ended without releasing: killed, or the machine stopped
            self.took_over = _describe_holder(left).strip(" ()") or "an unknown process"
        handle.seek(0)
        handle.truncate()
        try:  # who holds it, for the refusal's message; a full disk leaves the lock without it (unbuffered: no
            os.write(handle.fileno(), json.dumps({  # write is left for close() to try again, and fail, at release)
                "pid": os.getpid(), "host": socket.gethostname(),
                "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])[:300],
                "started": datetime.datetime.now().isoformat(timespec="seconds")}).encode())
        except OSError:
            pass
        self.file, self.active = handle, True
        _MINE.add(name)

    def notice(self):
        """The line a command prints once it holds the lock: a lock taken over from a dead process, or none taken
        (`note`); None otherwise."""
        if self.took_over:
            return f"{self.path}: the process that held it ({self.took_over}) is gone; taking it over"
        return self.note

    def _guarded(self):
        return f"{self.flag + ' ' if self.flag else ''}{self.path}"

    def _open_lock_file(self, name):
        """The lock file `name`, opened to read and write (made if missing), never through a link (the file it
        names, a user's, would be emptied) nor a folder: those refused, naming the lock."""
        try:
            descriptor = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.EISDIR):
                kind = f"a link (to {os.readlink(name)})" if os.path.islink(name) else "a folder"
                raise ValueError(f"{name}, where {self._guarded()}'s lock goes, is {kind}, not a lock file: move it "
                                 "away") from None
            if error.errno == errno.ENAMETOOLONG:
                raise OSError(error.errno, f"{error.strerror}: {self._guarded()} leaves no room for the hidden files "
                                           "written beside it; give it a name of at most 230 characters", self.path) from None
            parent = os.path.dirname(name)
            if os.path.isdir(self.path) and os.access(self.path, os.W_OK) and not os.access(parent, os.W_OK):
                raise OSError(error.errno, f"{error.strerror}: {self._guarded()} is writable, but not its folder "
                                           f"{parent}, where its lock goes ({os.path.basename(name)}): make that folder "
                                           "writable, or choose an output in a writable folder", name) from None
            # a folder that takes no files (/proc, a read-only mount): named as given
            raise OSError(error.errno, f"{error.strerror}; {self._guarded()} cannot be written there", self.path) from None
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise ValueError(f"{name}, where {self._guarded()}'s lock goes, is not a file: move it away")
        return os.fdopen(descriptor, "r+")

    def release(self):
        if self.file is None:
            return
        try:
            os.remove(self.lock_name)  # while still held: no one can lock the removed file
        except FileNotFoundError:
            pass
        with contextlib.suppress(OSError):
            self.file.close()
        self.file, self.active = None, False
        _MINE.discard(self.lock_name)
        folder = os.path.dirname(self.lock_name)
        while self.created:  # the folders made for the lock, if the command left nothing in them
            try:
                os.rmdir(folder)
            except OSError:
                break
            if folder == self.created:
                break
            folder = os.path.dirname(folder)

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
        return False


def _first_missing(folder):
    """The outermost missing folder on the way to `folder`, or None if it exists."""
    missing = None
    while not os.path.exists(folder):
        missing, folder = folder, os.path.dirname(folder)
    return missing


def _describe_holder(text):
    try:
        holder = json.loads(text)
        return f" (pid {holder['pid']} on {holder['host']}, `{holder['command']}`, started {holder['started']})"
    except (ValueError, KeyError, TypeError):
        return ""


STAGING_PREFIX = ".staging-"


def _alive(pid):
    """Whether process `pid` runs: a zombie (killed, not yet reaped by its parent) does not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[:1] != ["Z"]
    except OSError:  # it ended meanwhile; or no /proc (macOS), where os.kill is the answer
        return not os.path.isdir("/proc/self")


def staging_dir(parent):
    """A TemporaryDirectory beside the output (same filesystem: the final move is a rename), named
    `.staging-<pid>-*`. Staging dirs that a dead process left (killed, out of memory) are removed first, an
    earlier output moved aside into one put back; those of running processes are left alone."""
    import shutil
    import tempfile

    os.makedirs(os.path.realpath(parent), exist_ok=True)  # a link to a folder still to be made: made there
    for name in os.listdir(parent):
        if name.startswith(STAGING_PREFIX):
            pid, dead = name[len(STAGING_PREFIX):].split("-", 1)[0], os.path.join(parent, name)
            if not pid.isdigit() or not _alive(int(pid)):
                for kept in os.listdir(dead) if os.path.isdir(dead) else ():  # killed between `replace_dir`'s moves:
                    if kept.startswith("previous-") and not os.path.lexists(os.path.join(parent, kept[9:])):
                        os.replace(os.path.join(dead, kept), os.path.join(parent, kept[9:]))  # the earlier output back
                shutil.rmtree(dead, ignore_errors=True)
    return tempfile.TemporaryDirectory(dir=parent, prefix=f"{STAGING_PREFIX}{os.getpid()}-")


def followed(path):
    """`path`, absolute, with a symlink in its last part followed: an output replaced whole
    (`replace_dir`) goes into the folder the link names, where a rename over the path would replace
    the link itself by a folder (and leave the link's target as it was). A link loop is refused."""
    path = os.path.abspath(path)
    if not os.path.islink(path):
        return path
    try:
        return os.path.realpath(path, strict=True)
    except FileNotFoundError:  # a link to a path still to be made: made there
        return os.path.realpath(path)
    except OSError as error:  # a loop (ELOOP): it names no place at all
        if error.errno != errno.ELOOP:  # a file on the way (ENOTDIR): the write says so
            return os.path.realpath(path)
        raise ValueError(f"{path}: a symbolic link that names no place ({error.strerror}: it leads back to "
                         "itself); remove it or point it at a folder") from None


def replace_dir(staged, target, staging):
    """Moves the finished dir `staged` to `target`, with its permissions (and its files'). An existing `target` is
    first renamed into `staging` (removed with it): at every moment one whole version is in place, never half of one."""
    if os.path.lexists(target):
        os.chmod(staged, stat.S_IMODE(os.stat(target).st_mode))  # a folder its owner made private stays private
        for name in os.listdir(staged):  # and so does a file in it
            if os.path.isfile(earlier := os.path.join(target, name)) and not os.path.islink(earlier):
                os.chmod(os.path.join(staged, name), stat.S_IMODE(os.stat(earlier).st_mode))
        os.replace(target, os.path.join(staging, f"previous-{os.path.basename(target)}"))
    os.replace(staged, target)


def _check_not_nested(output_dir, flag):
    """ValueError for an output dir (replaced whole at its end) that holds, or lies inside, one that another
    process writes now: the one to end last would replace or remove the other's result."""
    path = os.path.realpath(output_dir)
    for folder, names, files in os.walk(path) if os.path.isdir(path) else ():
        names[:] = [n for n in names if not n.startswith(STAGING_PREFIX)]  # locks: `lock_path`'s .<name>.lock
        for name in (n for n in files if n.startswith(".") and n.endswith(".lock")):
            holder = held_elsewhere(os.path.join(folder, name))
            if holder is not None:
                raise ValueError(f"{flag} {output_dir} holds {os.path.join(folder, name[1:-5])}, which another command "
                                 f"is writing now{holder}; this command replaces {output_dir} whole when it ends: wait "
                                 f"for that one, or choose another {flag}")
    parent = os.path.dirname(path)
    while parent != os.path.dirname(parent):
        holder = held_elsewhere(lock_path(parent))
        if holder is not None:
            raise ValueError(f"{flag} {output_dir} is inside {parent}, which another command is writing now{holder}: "
                             f"its end could replace or remove it; wait for that one, or choose another {flag}")
        parent = os.path.dirname(parent)


def held_elsewhere(name):
    """Who holds the lock file `name` (" (pid ...)", or "" unsaid) when another process does; else None."""
    try:
        import fcntl
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW)
    except (ImportError, OSError):  # no fcntl (Windows: nothing is locked), or no such lock
        return None
    try:
        if name not in _MINE:
            fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except OSError:
        return _describe_holder(os.read(descriptor, 4096).decode("utf-8", "replace"))
    finally:
        os.close(descriptor)  # and a shared lock with it


REMOTE_REFUSED = ("is remote: this command writes its output whole beside it and renames it into place, which needs "
                  "a local folder; write it to a local folder, then copy it (gsutil cp -r)")


def check_output_dir(output_dir, overwrite, own_files, what, earlier, flag="--output_dir", reused=False):
    """Before any model loads: a local --output_dir that is new, empty or holds only an earlier result of the same kind
    (`own_files`, `earlier`), replaced only with --overwrite; one with other files (a data folder, a .git) is refused,
    as is one that is a file. reused: the command goes on from its finished runs there, which needs no --overwrite."""
    if "://" in str(output_dir):  # written beside it and renamed in: the names would make a local folder "gs:"
        raise ValueError(f"{flag} {output_dir} {REMOTE_REFUSED}")
    check_dir_target(output_dir, flag)
    hold(output_dir, flag)  # then what is there: another process cannot write it while this one runs
    _check_not_nested(output_dir, flag)
    if not reused:  # (a dir reused holds its runs, each moved in: the dir itself is not renamed)
        checks.refuse_mount_point(output_dir, flag, "results")
    if os.path.isdir(output_dir):
        entries = {n for n in os.listdir(output_dir)  # not a writer's lock, staging dir or partial; a .git counts
                   if not (n.startswith((STAGING_PREFIX, PARTIAL_PREFIX)) or n.startswith(".") and n.endswith(".lock"))}
        others = sorted(entries - set(own_files))
        if others:
            writes = "writes its runs and results there" if reused else "replaces its dir whole"
            raise ValueError(f"{flag} {output_dir} holds other files ({', '.join(others[:5])}); {what} {writes}: "
                             "choose a new or empty one")
        if entries and not overwrite and not reused:
            raise ValueError(f"{flag} {output_dir} holds {earlier} ({', '.join(sorted(entries)[:3])}"
                             f"{', ...' if len(entries) > 3 else ''}); pass --overwrite to replace it, or choose "
                             f"another {flag}")
