"""Files, local or remote (`gs://` through tf.io.gfile), with line-accurate errors.

TensorFlow is imported only for remote paths: the data tools start in a fraction
of a second on local files (importing TensorFlow takes ~4 s on a 2-core CPU).
"""

import errno
import glob as _glob
import os
import re
import shutil
import stat
import sys
import unicodedata

from albert_act.base import checks, encodings, named_pipes


def is_remote(path):
    return "://" in str(path)


def gfile():
    """tf.io.gfile for remote paths, its errors OSErrors that name the path (`_Remote`)."""
    from albert_act.base import cli

    return _Remote(cli.load_tensorflow().io.gfile)  # quietly, in a quiet command


class _Remote:
    """tf.io.gfile, whose functions raise an OSError naming the path where TensorFlow raises its own error (no
    network, no such bucket, a scheme it lacks: hdfs://), which a command's error tail gives in one line."""

    def __init__(self, gfile):
        self.gfile = gfile

    def __getattr__(self, name):
        function = getattr(self.gfile, name)
        if name == "GFile" or not callable(function):
            return function

        def called(path, *args, **kwargs):
            try:
                return function(path, *args, **kwargs)
            except sys.modules["tensorflow"].errors.OpError as error:
                raise OSError(errno.EIO, str(error.message).splitlines()[0], str(path)) from None
        return called


def glob(pattern):
    """The sorted paths `pattern` matches ("**" any depth of folders, as a shell's globstar); a remote pattern that
    cannot be listed (no network, no such bucket, a scheme TensorFlow lacks: hdfs://) is a ValueError naming it."""
    if not is_remote(pattern):
        return sorted(_glob.glob(pattern, recursive=True))
    try:
        return sorted(gfile().glob(pattern))
    except OSError as error:
        raise ValueError(f"{pattern} cannot be listed: {error.strerror}") from None


def exists(path):
    return gfile().exists(path) if is_remote(path) else os.path.exists(path)


def makedirs(path):
    """A folder and its parents, as os.makedirs(exist_ok=True); a symlink on the way to a folder still
    to be made is followed: the folder is made where it points (os.makedirs stopped at the link)."""
    if is_remote(path):
        return gfile().makedirs(path)
    try:
        os.path.realpath(path, strict=True)
    except FileNotFoundError:  # a folder still to be made (through a link, perhaps)
        pass
    except OSError as error:  # a link on the way that leads back to itself
        if error.errno == errno.ELOOP:  # (a file on the way, ENOTDIR: os.makedirs says it)
            raise ValueError(f"{path}: a symbolic link on the way names no place ({error.strerror}: it leads back "
                             "to itself); remove it or point it at a folder") from None
    os.makedirs(os.path.realpath(path), exist_ok=True)


def rmtree(path):
    gfile().rmtree(path) if is_remote(path) else shutil.rmtree(path)


def remove(path):
    gfile().remove(path) if is_remote(path) else os.remove(path)


def remove_any(path):
    """Removes the file or folder `path`, if there is one."""
    if isdir(path):
        rmtree(path)
    elif exists(path):
        remove(path)


def rename(source, destination):
    gfile().rename(source, destination) if is_remote(source) else os.replace(source, destination)


def move_in_together(pairs, aside):
    """Renames each (staged, place) of `pairs` into place as one output: a place's earlier file first goes into the
    folder `aside` (as previous-<name>, where `outputs.staging_dir` puts it back after a kill); a failure or a stop
    (any exception) on the way undoes every rename made, the earlier files back, and is raised again."""
    done = []  # the renames begun, (from, to): noted first, so that a stop between a rename and its note loses none
    try:
        for staged, place in pairs:
            if exists(place):
                done.append((place, aside.rstrip("/") + "/previous-" + os.path.basename(place)))
                rename(*done[-1])
            done.append((staged, place))
            rename(staged, place)
    except BaseException:
        for source, destination in reversed(done):
            if exists(destination) and not exists(source):  # (made: undone)
                rename(destination, source)
        raise


def listdir(path):
    return sorted(gfile().listdir(path) if is_remote(path) else os.listdir(path))


def visible_entries(path):
    """The sorted names in the folder `path` (local or gs://) but hidden ones (locks, staging dirs,
    partial files); [] when it is not a folder."""
    if not isdir(path):
        return []
    return [name.rstrip("/") for name in listdir(path) if not name.startswith(".")]


def isdir(path):
    return gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def expand_patterns(patterns):
    """Sorted files matching each pattern (a pattern that names an existing file: that file); ValueError naming a
    pattern that matches nothing, or a directory where files are expected."""
    files = []
    for pattern in patterns:  # a file whose name holds * ? or [ ] ("notes[1].txt") is that file, where it exists
        matches = [pattern] if not is_remote(pattern) and os.path.isfile(pattern) else glob(pattern)
        if not matches:
            folder = os.path.dirname(pattern) or "."
            if not is_remote(pattern) and os.path.isdir(folder) and not os.access(folder, os.R_OK | os.X_OK):
                raise ValueError(f"no file matches {pattern!r}: {folder} cannot be read (permission denied), so its "
                                 f"files cannot be listed; make it readable (chmod u+rx {folder})")
            raise ValueError(f"no file matches {pattern!r}" + (": '-' is no name for standard input here; give "
                                                               "/dev/stdin" if pattern == "-" else ""))
        for path in matches:
            refuse_device(path)
            checks.utf8_name(path)
            if not is_remote(path) and os.path.islink(path) and not os.path.exists(path):  # (glob lists it)
                raise ValueError(encodings.dangling_link(path, pattern))
            if path != pattern:
                refuse_fifo(path, f"matched by {pattern!r}", "give it by its own name if that is meant, or leave it out")
        folders = [path for path in matches if isdir(path)]
        if folders:
            raise ValueError(f"{folders[0]} is a directory, not a file: give the files, or a glob such as "
                             f"{os.path.join(folders[0], '*')}")
        files.extend(matches)
    return files


def refuse_fifo(path, found_by, advice="give a file there, or leave it out"):
    """ValueError for a local named pipe (FIFO) that the user did not name (`found_by`: how it was found, "matched
    by '*.txt'"), or that is read more than once: reading it waits for a program to write it, without a word."""
    if not is_remote(path) and named_pipes.is_fifo(path):
        raise ValueError(f"{path}: a named pipe (FIFO) {found_by}: reading it waits for a program to write it; {advice}")


def refuse_device(path, kind="a text file", pipes=True):
    """ValueError for a local character or block device (/dev/zero, a disk), not a file (`kind`) or a pipe (where
    `pipes`: a reader that reads once): no lines, or one without end, read into memory until it is full."""
    try:
        mode = os.stat(path).st_mode if not is_remote(path) else 0
    except OSError:
        return
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):  # (a socket: a server's, not a file)
        raise ValueError(f"{path} is a {'socket' if stat.S_ISSOCK(mode) else 'device'}, not {kind}: give a file"
                         f"{' (or a pipe)' * pipes}")


def size(path):
    """The file's length in bytes (local or gs://)."""
    return gfile().stat(path).length if is_remote(path) else os.path.getsize(path)


ENDS_BEFORE_NEWLINE = "\u2028\u2029\v\x85"  # line ends that, right before a newline, end that same line (an export's)
LINE_ENDS = re.compile("[\r\u2028\u2029\x85\v]")  # line ends inside what a file's newlines make one line (\v: Word's
# manual line break, as its plain-text export keeps it)
SHARED_START = 2**16  # characters: two texts that begin with as many of the same are one text, or one holds the other
SHORT_TEXT, MANY_FILES = 500, 100  # characters, files: one short text repeated among many files is the corpus's


def check_each_file_once(files, why, flag="--input", comments=None):
    """ValueError for a file of --input given twice: the same path (or two globs that both match it), a copy
    under another name (the same `text_key`: saved by another editor), a text that begins as another one does
    (the first `SHARED_START` characters), or one that begins with all of a shorter one (among `MANY_FILES` or more,
    a text under `SHORT_TEXT` characters repeated is the corpus's own, noted); `why`: what twice would
    do, e.g. "its sentences would be both trained on and held out"; comments: the start of the lines that no
    reader counts ("#" in CoNLL-U), left out."""
    seen = {}
    for path in files:
        key = path if is_remote(path) else os.path.realpath(path)
        if key in seen:
            also = "" if seen[key] == path else f" (also as {seen[key]})"
            raise ValueError(f"{flag} matches {path} twice{also}: {why}; give each file once")
        seen[key] = path
    starts, by_start, repeats = {}, {}, []
    for path in filter(rereadable, files):  # a pipe (/dev/stdin, a FIFO) is read once, by the work: not here
        try:
            starts[path] = kept, digests = _start_digests(path, comments)
        except OSError:
            continue  # reading it names the problem
        first = by_start.setdefault(digests[-1], path) if digests else path
        if first == path:
            continue
        if kept < SHORT_TEXT and len(files) >= MANY_FILES:  # (a corpus of short documents: some repeat, as in any)
            repeats.append((path, first))
            continue
        if kept < SHARED_START or text_key(path, comments=comments) == text_key(first, comments=comments):
            raise ValueError(f"{flag} {path} holds the same text as {first} (a copy: line ends, blank lines, "
                             f"a byte-order mark and the Unicode form aside): {why}; give each text once")
        raise ValueError(f"{flag} {path} and {first} begin with the same text (their first {SHARED_START:,} "
                         f"characters at least), then differ: one holds a part of the other. For the text they "
                         f"share, {why}; give each text once (cut the shared part from one of them)")
    shorter = {digests[-1]: path for path, (kept, digests) in starts.items() if digests and kept < SHARED_START}
    for path in starts if shorter else ():  # read again: the digest after each line is not kept for every file
        part = next((shorter[d] for d in _start_digests(path, comments)[1][:-1] if d in shorter), None)
        if part is not None and starts[part][0] < SHORT_TEXT and len(files) >= MANY_FILES:
            repeats.append((path, part))
        elif part is not None:
            raise ValueError(f"{flag} {path} begins with all the text of {part}, then goes on: for that text, {why}; "
                             "give each text once (cut it from one of them)")
    if repeats:
        print(f"note: {len(repeats)} of the {len(files):,} files of {flag} repeat the short text (under {SHORT_TEXT} "
              f"characters) of another, or begin with it (e.g. {repeats[0][0]}: {repeats[0][1]}): read as they are, "
              "as the documents of a corpus of short ones", flush=True)


def rereadable(path):
    """Whether `path` can be read before the work reads it: a file, local or remote, not a pipe (/dev/stdin, a FIFO)."""
    return is_remote(path) or os.path.isfile(path)


def _start_digests(path, comments=None):
    """(characters, digests): the SHA-256 of the text's start (`text_key`'s) after each of its lines, up to its
    first `SHARED_START` characters (the last digest), and how many characters that is."""
    steps = [(kept, digest.hexdigest()) for kept, digest in _running_digests(path, SHARED_START, comments)]
    return (steps[-1][0] if steps else 0), [digest for _, digest in steps]


def replaced_since(path):
    """A function that says whether the local file `path` was written (replaced, or made) since this call: how a
    stop line tells an output moved into place just before the stop from the one that was there."""
    def stamp():
        try:
            status = os.stat(path)
        except OSError:
            return None
        return status.st_dev, status.st_ino, status.st_mtime_ns

    before = stamp()
    return lambda: stamp() not in (None, before)


def check_inputs_are_not_outputs(inputs, written, flag):
    """ValueError for an input (of `flag`) that is one of the files `written` (by name, a link or a hard link):
    read, then replaced by the output, even with --overwrite, which is for an earlier output."""
    there = [output for output in written if not is_remote(output) and os.path.exists(output)]
    for path in inputs:
        for output in there:
            if not is_remote(path) and os.path.exists(path) and os.path.samefile(path, output):
                raise ValueError(f"{flag} {path} is {output}, which this command writes: the input would be replaced "
                                 "by the output (--overwrite is for an earlier output); give two different files")


def text_key(path, characters=None, comments=None):
    """SHA-256 of the text as a reader of its words sees it (`normalised_lines`): equal for a text file and its
    copy saved by another editor; of its first `characters` only, or of all of it (None); None for a file of
    nothing but blank lines."""
    digest = None
    for _, digest in _running_digests(path, characters, comments):
        pass
    return digest.hexdigest() if digest else None


def _running_digests(path, characters=None, comments=None):
    """(characters so far, the running SHA-256, to read at once) after each of the text's `normalised_lines`, each
    with its line end, up to its first `characters` (None: all of it)."""
    import hashlib

    digest, kept = hashlib.sha256(), 0
    for line in normalised_lines(path, comments):
        line = (line + "\n")[: None if characters is None else characters - kept]
        digest.update(line.encode("utf-8"))
        kept += len(line)
        yield kept, digest
        if characters is not None and kept >= characters:
            return


def normalised_lines(path, comments=None):
    """The file's lines in Unicode form NFKC (as SentencePiece reads them), without a byte-order mark, line end
    or trailing spaces; blank lines, and those that start with `comments`, left out. Read a MiB at a time (a
    line longer than 16 MiB is cut there)."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    rest, start = "", True
    with open_binary(path) as f:
        while True:
            chunk = f.read(2**20)
            text = rest + decoder.decode(chunk, final=not chunk)
            if start:
                text, start = text.removeprefix("\ufeff"), False
            lines = text.split("\n")
            rest = lines.pop() if chunk and len(lines[-1]) < 2**24 else ""
            for line in lines:
                line = unicodedata.normalize("NFKC", line.removeprefix("\ufeff")).rstrip()
                if line and not (comments and line.lstrip().startswith(comments)):
                    yield line
            if not chunk:
                return


def content_key(path):
    """(length, SHA-256 of the first MiB): equal for a file and its copy under another name (how
    inputs given twice, or evaluation files that are training files, are told by content)."""
    import hashlib

    with open_binary(path) as f:
        return size(path), hashlib.sha256(f.read(2**20)).hexdigest()


def visible(text):
    """`text` without its invisible characters (Unicode Cf: zero-width spaces and joiners, directional marks)."""
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def is_blank(text):
    """Whether `text` holds nothing but whitespace and invisible characters: a line of them is no sentence."""
    return not visible(text).strip()


def open_binary(path, mode="rb"):
    """A file object; for reading a remote one, first whether it is there: TensorFlow's reader yields no line where
    the path cannot be reached (an OSError naming it, `_Remote`) or is missing (FileNotFoundError)."""
    if not is_remote(path):
        return named_pipes.opened(path, mode) if "r" in mode and named_pipes.is_fifo(path) else open(path, mode)
    if "r" in mode and not gfile().exists(path):
        raise FileNotFoundError(errno.ENOENT, "No such file", path)
    return gfile().GFile(path, mode)


def write_bytes(path, data):
    """Writes `data` to `path` whole: a local file is written beside it and renamed over it, so a
    full disk or Ctrl-C leaves the old file; a gs:// object appears only once closed anyway."""
    if is_remote(path):
        with gfile().GFile(path, "wb") as f:
            f.write(data)
    else:
        from albert_act.base import outputs

        outputs.write_file(path, data)


def read_bytes(path):
    try:
        with open_binary(path) as f:
            return f.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, where a file was expected") from None


def _warn_of_nel(path, number):
    """Warns of U+0085 inside line `number` of a file of newlines, where it is most often Windows-1252's ellipsis
    decoded as Latin-1, not an EBCDIC line end; returns `number`."""
    print(f"warning: {path} line {number}: U+0085 (NEL) inside a line, read as a line end; in a file of newlines it is "
          "most often Windows-1252's '\u2026' decoded as Latin-1 (the sentence is cut in two there): if so, replace it "
          f"first (sed 's/\\xc2\\x85/\u2026/g' {path} > fixed.txt)", file=sys.stderr)
    return number


def read_lines(path, skip_invalid_utf8=False, invalid_lines=None, skip_flag=True, in_place=False):
    """Yields (line number, text without the newline) of a UTF-8 file; a byte-order mark at its start, or at a
    line's (files joined with cat), is dropped, and a lone CR inside a line (or U+2028, U+2029, NEL, a vertical tab) ends a line
    (both parts carry the line's number).

    A line that is not valid UTF-8 raises ValueError("<path> line <n>: not valid
    UTF-8 ...") unless `skip_invalid_utf8`, in which case it is skipped and
    (path, line number) is appended to `invalid_lines` (a list) if given. A gzip, bzip2, xz,
    zstd or zip file raises ValueError naming its compression, and a UTF-16 or UTF-32 one (a
    byte-order mark, or NUL bytes in its first line) its encoding, whatever `skip_invalid_utf8`.
    skip_flag: whether the caller has --skip_invalid_utf8 to recommend; in_place: the file is read by its name (a
    task's file in a --data_dir): conversions are advised into that name. A device (/dev/zero) raises ValueError.
    """
    refuse_device(path)
    checks.utf8_name(path)
    try:
        handle = open_binary(path)
    except FileNotFoundError:
        pattern = " (read as a name: * ? [ ] make no pattern here; give one file)" if _glob.has_magic(path) else ""
        raise ValueError(f"{path}: no such file{pattern}") from None
    except IsADirectoryError:
        raise ValueError(f"{path}: a folder, where a text file was expected") from None
    except OSError as error:  # a link loop (ELOOP), a file it may not read (EACCES): the input, not an output
        raise ValueError(f"{path}: cannot be read ({error.strerror})") from None
    accented = nel = lf_cr = None  # the first line of UTF-8 beyond ASCII; of U+0085 in a line; LF CR line ends
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1:
                encodings.refuse_other_encodings(path, raw, in_place)
                if b"\n" not in raw and b"\r" in raw.rstrip(b"\r"):  # every line one: read whole, it would merge
                    old = "" if encodings.text_like(raw[:4096]) else encodings.eight_bit(raw)  # (Mac Roman, or not)
                    raise ValueError(f"{path}: lines end in a lone CR (classic Mac line ends){old and f', its text not UTF-8 ({old[1]}?)'}; "
                                     f"convert them first: tr '\\r' '\\n' < {path}{old and f' | iconv -f {old[0]} -t UTF-8'} > converted.txt")
            elif raw.count(b"\x00") >= 3:  # (the first line's NULs: named above; one NUL in a line of text is that
                # line's fault, which its reader names) UTF-16 text joined on, or a binary file
                if number <= 8 or not skip_invalid_utf8:
                    raise encodings.nul_line(path, number, raw, skip_flag)
                if invalid_lines is not None:
                    invalid_lines.append((path, number))
                continue
            try:
                line = raw.decode("utf-8")
                accented = accented or (None if raw.isascii() else number)  # (UTF-8 beyond ASCII: the file is UTF-8)
            except UnicodeDecodeError as error:
                if not skip_invalid_utf8:
                    raise encodings.not_utf8(path, number, raw, error, skip_flag, accented) from None
                if invalid_lines is not None:
                    invalid_lines.append((path, number))
                continue
            lf_cr = raw.startswith(b"\r") if number == 2 else lf_cr  # (LF CR line ends, RISC OS's: told at line 2)
            if line.startswith("\ufeff") or (lf_cr and line.startswith("\r")):  # a byte-order mark, a file's or one of
                line = line[1:]  # files joined with cat (each its own), is no character; nor LF CR's CR
            line = line.rstrip("\r\n").rstrip(ENDS_BEFORE_NEWLINE)  # (before a newline they end its line)
            if nel is None and "\x85" in line and raw.endswith(b"\n"):  # (inside a line of a file of newlines)
                nel = _warn_of_nel(path, number)
            if LINE_ENDS.search(line):  # a lone CR inside (classic Mac text pasted in), U+2028, U+2029, NEL or \v (a
                yield from ((number, piece) for piece in LINE_ENDS.split(line))  # JavaScript or EBCDIC export): a
                # line end, as Python's str.splitlines and editors take it
            else:
                yield number, line
