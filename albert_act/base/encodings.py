"""What a file that is not UTF-8 text is (compressed, a PDF, UTF-16 or UTF-32 text, an image, a database, a
TFRecord...), named from its first bytes with the command that makes text of it, where one does; and what a line
that is not UTF-8 (`not_utf8`) or holds NUL bytes (`nul_line`) is, with the advice its bytes call for."""

import os
import re
import shlex


_UNZLIB = ("python3 -c \"import sys, zlib; open(sys.argv[1] + '.raw', 'wb').write(zlib.decompress(open(sys.argv[1], "
           "'rb').read()))\"")  # (writes PATH.raw: no common tool reads a bare ZLIB stream)
# How compressed files start, and the command that makes text of them.
COMPRESSED = ((b"\x1f\x8b", "gzip", "gunzip -c"), (b"BZh", "bzip2", "bunzip2 -c"), (b"\xfd7zXZ\x00", "xz", "unxz -c"),
              (b"\x28\xb5\x2f\xfd", "zstd", "unzstd -c"), (b"PK\x03\x04", "zip", "unzip -p"),
              (b"\x04\x22\x4d\x18", "LZ4", "unlz4 -c"), (b"\x1f\x9d", "compress (.Z)", "gzip -dc"),  # (to stdout)
              (b"\x5d\x00\x00", "legacy LZMA", "xz -dc --format=lzma"), (b"LZIP", "lzip", "lzip -dc"),
              (b"\x89LZO\x00", "lzop", "lzop -dc"), (b"\xff\x06\x00\x00sNaPpY", "snappy", "snzip -dc"),
              *((b"x" + level, "ZLIB", _UNZLIB) for level in (b"\x01", b"\x9c", b"\xda")))  # (TFRecordOptions')


def _compression(start):
    """(kind, the command that decompresses it) of a file that starts with the bytes `start`, or None."""
    return next(((kind, command) for magic, kind, command in COMPRESSED if start.startswith(magic)), None)


def compression_hint(path):
    """"; a gzip-compressed file: decompress it first (gunzip PATH)" for a local compressed file, else ""."""
    try:
        with open(path, "rb") as f:
            found = _compression(f.read(8))
    except OSError:
        return ""
    return f"; a {found[0]}-compressed file: decompress it first ({_decompress(found, path)})" if found else ""


def refuse_other_encodings(path, first_line, in_place=False):
    """ValueError for a file whose first line (bytes) is an image, a database, a NumPy file, compressed, a PDF, a
    TFRecord, or UTF-16 or UTF-32 text (with or without its byte-order mark), naming what it is and how to convert
    it (in_place: a file read by its name, a GLUE task's train.tsv: converted into that name)."""
    path = os.fspath(path)
    head = _head(path, first_line)
    named = next((kind for magic, kind in BINARY if head.startswith(magic) and (  # (a text may begin "MZ is")
        b"\x00" in head[:64] or any(b < 0x20 or b >= 0x7F for b in magic) or not text_like(head))), None)
    if named:
        raise ValueError(f"{path}: {named}, not text; give a UTF-8 text file")
    if head.startswith(b"PK\x03\x04") and path.endswith(".npz"):  # (not to be unzipped)
        raise ValueError(f"{path}: a NumPy archive (.npz: the data tool's token corpus for the JAX backend?), not "
                         "text; give a UTF-8 text file")
    zipped = ZIPPED.get(os.path.splitext(path)[1].lower()) if head.startswith(b"PK\x03\x04") else None
    if head.startswith(b"PK\x03\x04") and head[30:].startswith(OFFICE_PARTS):  # (its first part's name, whatever
        zipped = zipped or ("an office document (a spreadsheet, a text or slides: a zip of XML parts, whatever its "
                            "name says): save it as plain text, or as tab-separated text for a table")  # its name)
    if zipped or head[257:262] == b"ustar":  # (zip files in disguise: no text inside to unzip; a tar archive)
        untar = f"tar -xOf {path} > {path}.text && mv {path}.text {path}" if in_place else f"tar -xf {path}"
        raise ValueError(f"{path}: {zipped or 'a tar archive: extract its files first (' + untar + ')'}; not "
                         "text: give a UTF-8 text file")
    _refuse_compressed(path, first_line, in_place)
    kind = MODEL_FILES.get(os.path.splitext(path)[1].lower()) or (
        "a variables file of a SavedModel or checkpoint" if ".data-" in os.path.basename(path) else None)
    if kind and not text_like(head):
        raise ValueError(f"{path}: {kind}, not text; give a UTF-8 text file")
    if first_line.startswith(b"/annex/objects/") and len(first_line) < 400:  # (an unlocked git-annex file, unfetched)
        raise ValueError(f"{path}: a git-annex pointer (the path of its content), not the file itself, whose content "
                         f"was not fetched: fetch it first (git annex get {path})")
    if first_line.startswith(b"version https://git-lfs.github.com/spec/"):
        raise ValueError(f"{path}: a Git LFS pointer (a few lines naming the file), not the file itself, whose content "
                         "was not downloaded: fetch it first (git lfs pull, in the repository it was cloned with)")
    if first_line.startswith((b"-----BEGIN PGP MESSAGE-----", b"-----BEGIN AGE ENCRYPTED FILE-----")):
        raise ValueError(f"{path}: an encrypted message (ASCII-armoured), not text; decrypt it first (e.g. gpg -d "
                         f"{path} > text.txt)")
    if first_line.startswith(b"%PDF-"):
        raise ValueError(f"{path}: a PDF document, not text; extract its text first (e.g. pdftotext {path} text.txt)")
    if first_line.startswith(b"%!PS"):
        raise ValueError(f"{path}: a PostScript document (a program that draws pages), not text; extract its text "
                         f"first (e.g. ps2ascii {path} text.txt)")
    _refuse_utf16(path, first_line, head, in_place)


def _refuse_compressed(path, start, in_place=False):
    """A compressed file named as such (its bytes would be invalid UTF-8, or skipped with --skip_invalid_utf8)."""
    found = _compression(start)
    if found:
        raise ValueError(f"{path}: a {found[0]}-compressed file, not text; decompress it first "
                         f"({_decompress(found, path, in_place)})")


def _decompress(found, path, in_place=False):
    """The command that decompresses `path` (of the kind `found`), into a file beside it (in_place: into `path`); a
    path with spaces is quoted as the shell needs it."""
    q = shlex.quote
    if piped(path) and found[0] not in ("zip", "ZLIB"):  # (read already: decompressed where it is written)
        return f"in the pipe that feeds it: ... | {found[1]} | <this command, reading {path}>"
    if found[0] == "ZLIB":
        return f"{found[1]} {q(path)}" + (f" && mv {q(path + '.raw')} {q(path)}" if in_place else "")
    if in_place:
        return f"{found[1]} {q(path)} > {q(path + '.text')} && mv {q(path + '.text')} {q(path)}"
    root, suffix = os.path.splitext(path)
    text = root if suffix in (".gz", ".bz2", ".xz", ".zst", ".lz4", ".zip", ".Z", ".lzma", ".lz", ".lzo", ".sz") else f"{root}.decompressed{suffix}"
    return f"{found[1]} {q(path)} > {q(text)}"


def piped(path):
    """Whether `path` names a pipe's end (standard input, a process substitution's /dev/fd/63): read once, and gone
    when the command ends, so a fix goes into the pipe, not onto the path."""
    return str(path).startswith(("/dev/stdin", "/dev/fd/", "/proc/self/fd/"))


_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
          (b"\xfe\xff", "UTF-16"))  # byte-order marks (UTF-32's first: it begins as UTF-16LE's)


def _refuse_utf16(path, start, head, in_place=False):
    """UTF-16 or UTF-32 text (a byte-order mark, or NUL bytes between its letters: `_utf_width` of the file's `head`)
    is not read as UTF-8 with lines skipped: the lines left would be letters split by NULs. Other NULs in the first
    line `start`: a binary file, named (`_binary_kind`)."""
    kind = next((name for mark, name in _MARKS if start.startswith(mark)), None)
    mark = 4 if kind == "UTF-32" else 2  # (a stray mark before UTF-8 text: a file begun by PowerShell, written on
    if kind and b"\x00" not in (rest := head[mark:]) and text_like(rest) and b" " in rest:  # in UTF-8)
        raise ValueError(f"{path}: a {kind} byte-order mark ({head[:mark].hex(' ').upper()}) before UTF-8 text (a file "
                         f"begun by one tool and written on by another?): remove its first {mark} bytes (tail -c "
                         f"+{mark + 1} {path} > fixed.txt); converting it from {kind} would garble it")
    separator = 0 if b"\x00" in start and _nul_separated(head) else next((c for c in b"\f\x1e\x1f" if start.count(c) > 2), None)
    if kind is None and separator is not None:  # (find -print0's; a form feed a page; ASCII's record, unit separators)
        named = {0: "NUL bytes (as find -print0 and xargs -0 write them)", 12: "form feeds (U+000C)",
                 30: "record separators (U+001E)", 31: "unit separators (U+001F)"}[separator]
        raise ValueError(f"{path}: text whose lines are separated by {named}, not line ends: convert them first (tr "
                         f"'\\{separator:03o}' '\\n' < {path} > lines.txt)")
    if kind is None and b"\x00" not in start:  # (UTF-16 of a script with no NUL byte: Chinese, a line of it)
        kind = _utf16_text(head)
    if kind is None and b"\x00" in start:
        if inflated := _raw_deflate(head):
            raise ValueError(f"{path}: {_inflated(path, inflated)}")
        binary = _binary_kind(head)
        if binary:
            raise ValueError(f"{path}: {binary}, not text; give a UTF-8 text file")
        kind = _utf_width(head)  # (UTF-16LE: no mark to tell it, so named for iconv)
    if kind:
        why = (f"its first line holds NUL bytes or a {kind[:6]} byte-order mark" if b"\x00" in start or kind in
               [name for _, name in _MARKS] else f"its first bytes read as {kind} text, of a script with no NUL byte")
        if kind in ("UTF-16", "UTF-32") and (second := _second_mark(path, start[:mark])):  # (its own mark's bytes)
            turned, other, there = second  # (iconv would garble the second part)
            raise ValueError(f"{path}: {kind} text (a {start[:mark].hex(' ').upper()} "
                             f"mark at its start) whose second part, from byte {turned:,}, is {other} "
                             f"({there.hex(' ').upper()} there: two files joined?): convert each part alone, then join "
                             f"them (head -c {turned} {path} | iconv -f {kind} -t UTF-8 > part1.txt; tail -c "
                             f"+{turned + 1} {path} | iconv -f {other} -t UTF-8 > part2.txt)")
        if _utf8_tail(path):  # (iconv of the whole would garble the UTF-8 part)
            raise ValueError(f"{path}: {kind} text at its start ({why}), but UTF-8 at its end: two files of different "
                             f"encodings joined? Convert the {kind} part alone (iconv -f {kind} -t UTF-8), then join them")
        size = os.path.getsize(path) if "://" not in path and os.path.isfile(path) else 0
        if cut := size % (int(kind[4:6]) // 8):  # (iconv stops at the cut character, naming no line)
            raise ValueError(f"{path}: {kind} text, not UTF-8 ({why}), cut short: its {size} bytes are no whole number "
                             f"of {kind} characters (a copy cut short?); copy the whole file again, or drop the cut "
                             f"character: head -c -{cut} {path} | iconv -f {kind} -t UTF-8 > "
                             "converted.txt")
        if piped(path):  # (read already: converted where it is written)
            raise ValueError(f"{path}: {kind} text, not UTF-8 ({why}); convert it in the pipe that feeds it: ... | "
                             f"iconv -f {kind} -t UTF-8 | <this command, reading {path}>")
        raise ValueError(f"{path}: {kind} text, not UTF-8 ({why}); convert it first: iconv -f {kind} -t UTF-8 {path} > "
                         + (f"{path}.text && mv {path}.text {path}" if in_place else "converted.txt"))


def _second_mark(path, mark):
    """(the offset, the encoding, the mark) of the first byte-order mark in the local UTF-16 or UTF-32 file `path`
    (its first 64 MiB), begun by the mark `mark`, of another encoding or order at an offset of a character (U+FFFE in
    its own order, no character; a UTF-16 mark in UTF-32, a code point beyond Unicode's): a file joined to it; or
    None."""
    if (data := _local_bytes(path)) is None:
        return None
    found, width = [], len(mark)
    own = "UTF-32" if width == 4 else "UTF-16"  # (the other encoding's marks, and its own in the other order)
    for other, kind in [(m, k) for m, k in _MARKS if k != own] + [(mark[::-1], own)]:
        at = data.find(other, width)
        while at != -1 and (at % width or width == 4 and kind == "UTF-16" and data[at:at + 4] in (mark, mark[::-1])):
            at = data.find(other, at + 1)
        found += [(at, kind, other)] if at != -1 else []
    return min(found, default=None)


def eight_bit(raw):
    """(iconv's name, a reader's name) of the 8-bit encoding the bytes `raw` (not UTF-8) are most likely in: Mac Roman
    where bytes 80-9F (its accented small letters: é is 8E) outnumber C0-FF (Latin-1's and Windows-1252's: é is E9),
    else Windows-1252 (Latin-1 with quotes and dashes at 80-9F)."""
    low, high = sum(0x80 <= b <= 0x9F for b in raw), sum(b >= 0xC0 for b in raw)
    return ("MACINTOSH", "Mac Roman") if low > high else ("WINDOWS-1252", "Latin-1 or Windows-1252")


def dangling_link(path, pattern):
    """What is said of `path`, matched by `pattern`, a symbolic link to nothing: git-annex's (its content not
    fetched: got with git annex get), or another."""
    matched = f" (matched by {pattern!r})" if path != pattern else ""
    if "/annex/objects/" in os.readlink(path):
        return (f"{path}: a git-annex link to {os.readlink(path)}, whose content was not fetched{matched}: fetch it "
                f"(git annex get {path})")
    chain, at = [path], path
    while os.path.islink(at) and len(chain) < 40:  # (a loop: a.txt -> b.txt -> a.txt, each link's target there)
        at = os.path.join(os.path.dirname(at), os.readlink(at))
        if any(os.path.abspath(at) == os.path.abspath(seen) for seen in chain):
            return (f"{path}: a symbolic link in a loop ({' -> '.join(map(os.path.basename, [*chain, at]))}){matched}, "
                    "which leads to no file; remove the link, or point it at the file")
        chain.append(at)
    return f"{path}: a symbolic link to {os.readlink(path)}, which does not exist{matched}; remove the link, or point it at the file"


def _utf8_tail(path):
    """Whether the local file `path`, 1 KiB or more, ends in UTF-8 text with no NUL byte (its last 256 bytes)."""
    tail = _tail(path, 256, least=1024)
    return tail is not None and b"\x00" not in tail and text_like(tail[tail.find(b"\n") + 1:]) and tail.count(b" ") >= 4


def _tail(path, size, least=0):
    """The last `size` bytes of the local file `path` of `least` bytes or more; None for another (a bucket's, a pipe's,
    a shorter one) or one that does not read."""
    try:
        if "://" in os.fspath(path) or not os.path.isfile(path) or os.path.getsize(path) < least:
            return None
        with open(path, "rb") as f:
            f.seek(max(0, os.path.getsize(path) - size))
            return f.read()
    except OSError:
        return None


BINARY = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
          (b"SQLite format 3\x00", "an SQLite database"), (b"\x7fELF", "a program (ELF)"),
          (b"\x93NUMPY", "a NumPy array (.npy)"), (b"MZ", "a Windows program (.exe, .dll)"),
          (b"\xd0\xcf\x11\xe0", "an MS Office 97-2003 document (.doc, .xls, .ppt): save it as plain text (.txt)"),
          (b"RIFF", "a RIFF file (WAV audio, AVI video, a WebP image)"), (b"wOFF", "a web font"),
          (b"wOF2", "a web font"), (b"OggS", "an Ogg audio or video file"), (b"fLaC", "a FLAC audio file"),
          (b"Rar!\x1a\x07", "a RAR archive"), (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
          (b"\xca\xfe\xba\xbe", "a Java class file (or a macOS program)"), (b"\x00\x00\x01\x00", "an icon (.ico)"),
          (b"\x89HDF\r\n\x1a\n", "an HDF5 file (Keras weights, .h5)"),
          (b"PAR1", "a Parquet table (write its text column out as plain text, e.g. with pandas' read_parquet)"),
          (b"ARROW1", "an Arrow table (write its text column out as plain text)"),
          (b"!<arch>\n", "an ar archive (.a, .deb): extract its files first (ar x)"))
MODEL_FILES = {".pb": "a protobuf file (a SavedModel's saved_model.pb?)", ".model": "a SentencePiece model (--vocab "
               "takes it)", ".index": "a TensorFlow checkpoint's index", ".npz": "a NumPy archive", ".pt": "PyTorch "
               "weights", ".pth": "PyTorch weights", ".bin": "a binary file (model weights?)", ".safetensors": "model "
               "weights (safetensors)", ".keras": "a Keras model file", ".tflite": "a TensorFlow Lite model"}
OFFICE_PARTS = (b"[Content_Types].xml", b"_rels/", b"docProps/", b"word/", b"xl/", b"ppt/", b"mimetype")
ZIPPED = {".docx": "a Word document: save it as plain text (.txt)", ".odt": "an OpenDocument text: save it as plain "
          "text (.txt)", ".xlsx": "an Excel workbook", ".ods": "an OpenDocument spreadsheet", ".pptx": "a PowerPoint "
          "deck", ".odp": "an OpenDocument presentation", ".epub": "an e-book (EPUB): convert it to plain text first",
          ".jar": "a Java archive (a program)", ".apk": "an Android package (a program)", ".whl": "a Python wheel"}


def text_like(head):
    """Whether the bytes `head` (a file's start) could be UTF-8 text: no NUL, and valid UTF-8 but for a character cut
    at the end."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return b"\x00" not in head and error.start >= len(head) - 3
    return b"\x00" not in head


def _head(path, start, size=512):
    """The first `size` bytes of the file `path` (512: a tar archive's header), or of `start` (its first line, or the
    line read) where it is not a local file (a bucket's or a pipe's first line is all there is)."""
    data = _local_bytes(path, size)
    return start[:size] if data is None else data


def _nul_separated(head):
    """Whether `head`, with NUL bytes and no line end, is UTF-8 text whose lines are separated by NULs (find -print0):
    a NUL after every few words, never two together."""
    parts = head.split(b"\x00")
    return (b"\n" not in head and b"\x00\x00" not in head and text_like(head.replace(b"\x00", b"\n"))
            and sum(len(part) for part in parts[:-1]) >= 8 * (len(parts) - 1) and b" " in head)


def _binary_kind(head):
    """What a file that starts with `head` (NUL bytes in its first line) is, when not UTF-16 or UTF-32 text: a
    TFRecord (a length, its checksum, then a tf.train.Example), another binary file, or None (NULs beside letters:
    text)."""
    if len(head) > 12 and head[12] == 0x0A and 0 < int.from_bytes(head[:8], "little") < 1 << 31:
        return "a TFRecord file (records for pre-training or fine-tuning, read with --records or --train_files)"
    if _utf_width(head):
        return None
    return "a binary file (NUL bytes scattered, where UTF-16 text holds one beside each letter)"


def _utf_width(head):
    """"UTF-32LE", "UTF-16BE"... where the NUL bytes of `head` fall as ASCII letters' do in it (three or one beside
    each letter, after it or before it), else None."""
    letters = head[:min(64, len(head)) // 4 * 4]
    for width, offsets, order in ((4, (1, 2, 3), "LE"), (4, (0, 1, 2), "BE"), (2, (1,), "LE"), (2, (0,), "BE")):
        nul = [letters[i] == 0 for i in range(len(letters)) if i % width in offsets]
        other = [letters[i] == 0 for i in range(len(letters)) if i % width not in offsets]
        if nul and sum(nul) >= 0.8 * len(nul) and sum(other) <= 0.2 * len(other):
            return f"UTF-{8 * width}{order}"
    return _utf16_text(head)


def _utf16_text(head):
    """"UTF-16LE" or "UTF-16BE" where `head`, not UTF-8, reads as text in that encoding whatever its script (Cyrillic,
    Chinese: letters with no NUL byte): no control character, no lone surrogate, and a space or a line end among
    every 40 characters (random bytes hold none), else None."""
    if text_like(head):
        return None
    for order in ("LE", "BE"):
        try:
            text = head[:len(head) // 2 * 2].decode(f"utf-16-{order.lower()}")
        except UnicodeDecodeError:
            continue
        spaces = sum(c in " \n\r\t\u3000" for c in text)
        if len(text) >= 8 and spaces >= len(text) / 40 and all(c.isprintable() or c in "\n\r\t" for c in text[:-1]):
            return f"UTF-16{order}"
    return None


def not_utf8(path, number, raw, error, skip_flag, accented):
    """The refusal of line `number` (bytes `raw`) that does not decode (`error`), with the advice its bytes call for:
    surrogates (CESU-8, as Java writes characters past U+FFFF), a file that mixes encodings (UTF-8 accents at line
    `accented` before it), or else a Windows-1252 file to convert."""
    skip = ", or pass --skip_invalid_utf8 to skip such lines" if skip_flag else ""
    if b"\xc0\x80" in raw:  # (Java's modified UTF-8: NUL as two bytes)
        advice = ("its bytes hold C0 80, a NUL written as Java's modified UTF-8 (DataOutputStream, JNI) writes it: "
                  f"remove them (sed 's/\\xc0\\x80//g' {path} > fixed.txt){skip}")
    elif re.search(rb"\xed[\xa0-\xbf]", raw):
        advice = ("its bytes hold a character past U+FFFF written as two UTF-16 surrogates (CESU-8 or WTF-8, as Java "
                  f"and some Windows tools write emoji): re-save the file as UTF-8{skip}")
    elif _head(path, raw if number == 1 else b"").startswith(b"\xef\xbb\xbf"):  # (the mark, then Windows-1252)
        advice = (f"yet the file begins with a UTF-8 byte-order mark: the mark is wrong (added to text of another "
                  f"encoding, Windows-1252 most often): remove it and convert the rest (tail -c +4 {path} | iconv -f "
                  f"cp1252 -t UTF-8 > converted.txt; another encoding takes its own -f){skip}")
    elif number == 1 and (inflated := _raw_deflate(_head(path, raw, 4096))):
        advice = f"its bytes are {_inflated(path, inflated)}"
    elif appended := _appended_mark(path):
        advice = (f"and from byte {appended[0]:,} on it holds {appended[1]} text (a {appended[2].hex(' ').upper()} "
                  "byte-order mark: a file appended to one of another encoding?): convert each part alone, then join "
                  f"them (head -c {appended[0]} {path} | iconv -f cp1252 -t UTF-8 > part1.txt, or the first part's own "
                  f"encoding; tail -c +{appended[0] + 1} {path} | iconv -f {appended[1]} -t UTF-8 > part2.txt){skip}")
    elif accented or (accented := _utf8_line_after(path, number)):
        pasted = "e.g. Latin-1 pasted in" if accented < number else "UTF-8 lines pasted into a file of another encoding?"
        advice = (f"the file mixes encodings (line {accented} is UTF-8 beyond ASCII; this line is not: {pasted}): "
                  "converting the whole file would garble the UTF-8 lines; "
                  + (f"fix line {number} alone, or " if accented < number else "")
                  + f"convert what is not UTF-8 alone ({_MIXED} < {path} > converted.txt){skip}")
    elif (guess := guessed_encoding(_head(path, raw, 1 << 16))) and guess[0] != "CP1252":  # (its letters tell: Cyrillic...)
        advice = (f"its bytes read as {guess[1]} text ({guess[0]}, by charset-normalizer's guess): convert it (iconv -f "
                  f"{guess[0]} -t UTF-8 {path} > converted.txt){skip}" if skip_flag else
                  f"its bytes read as {guess[1]} text ({guess[0]}): save the file as UTF-8 text (iconv -f {guess[0]} -t UTF-8)")
    else:  # (Western European most often; EBCDIC and others need their own -f)
        advice = (f"convert the file from its encoding (e.g. iconv -f cp1252 -t UTF-8 {path} > converted.txt for "
                  f"Windows-1252; another, such as Shift-JIS, GB18030, KOI8-R or EBCDIC, takes its own -f){skip}"
                  if skip_flag else "save the file as UTF-8 text (e.g. iconv -f cp1252 -t UTF-8)")
    return ValueError(f"{path} line {number}: not valid UTF-8 ({error.reason} at byte {error.start}); {advice}")


_WESTERN = {"cp1252", "cp1250", "latin_1", "iso8859_15", "iso8859_2", "cp1254", "iso8859_9", "mac_roman", "cp850"}
_ICONV = {"euc_jis_2004": "EUC-JP", "euc_jisx0213": "EUC-JP", "shift_jis_2004": "SHIFT_JIS", "shift_jisx0213": "SHIFT_JIS",
          "mac_cyrillic": "MAC-CYRILLIC"}


def guessed_encoding(data):
    """(iconv's name, the language) of the encoding that charset-normalizer finds `data` (bytes not UTF-8) written in;
    ("CP1252", ...) for text of a Western European script (its guess among Latin ones is often a near one, cp1250 for
    French), None where it finds none, or where fewer than 32 bytes are beyond ASCII."""
    from charset_normalizer import from_bytes

    if sum(byte >= 0x80 for byte in data[: 1 << 16]) < 32:  # (a stray byte or two: too little to tell a script by)
        return None
    best = from_bytes(data[: 1 << 16]).best()
    if best is None or best.language == "Unknown":
        return None
    if best.encoding in _WESTERN:
        return "CP1252", "Western European"
    return _ICONV.get(best.encoding, best.encoding.upper().replace("_", "-")), best.language


_MIXED = ("python3 -c \"import codecs, sys; codecs.register_error('cp1252', lambda e: (e.object[e.start:e.end]"
          ".decode('cp1252', 'replace'), e.end)); sys.stdout.write(sys.stdin.buffer.read().decode('utf-8', 'cp1252'))\"")
# (reads UTF-8, and each run of bytes that is not as Windows-1252: a file of both, converted without garbling either)


def _local_bytes(path, size=64 << 20):
    """The first `size` bytes of the local file `path`, or None (a bucket's, a pipe's, one that cannot be read)."""
    try:
        if "://" not in os.fspath(path) and os.path.isfile(path):
            with open(path, "rb") as f:
                return f.read(size)
    except OSError:
        pass
    return None


def _inflated(path, text):  # (what is said of a raw DEFLATE stream that inflates to `text`, with its command)
    return (f"a raw DEFLATE stream (no gzip or zlib header), which inflates to text ({text[:30]!r}): decompress it "
            f"first (python3 -c \"import sys, zlib; sys.stdout.buffer.write(zlib.decompress(open(sys.argv[1], 'rb')."
            f"read(), -15))\" {path} > text.txt)")


def _raw_deflate(head):
    """The text that a raw DEFLATE stream (no header: zlib's wbits -15) `head` begins inflates to, if text; or None."""
    import zlib

    try:
        text = zlib.decompressobj(-zlib.MAX_WBITS).decompress(head, 1 << 16)
    except zlib.error:
        return None
    return text.decode("utf-8", "replace") if len(text) >= 16 and text_like(text[:4096]) and b" " in text else None


def _appended_mark(path):
    """(offset, encoding, mark) of a UTF-16/32 byte-order mark at a line's start in `path` (appended to it), or None."""
    data = _local_bytes(path) or b""
    found = [(at + 1, kind, mark) for mark, kind in _MARKS if (at := data.find(b"\n" + mark)) != -1 and (
        _utf_width(data[at + 1 + len(mark):at + 65 + len(mark)]) or "").startswith(kind)]  # (its text: NULs beside)
    return min(found, key=lambda f: (f[0], -len(f[2])), default=None)


def _utf8_line_after(path, number):
    """The number of the first line after line `number` of the local file `path` (its first 64 MiB) that is UTF-8
    beyond ASCII, or None: a file mostly of another encoding with UTF-8 lines in it."""
    lines = (_local_bytes(path) or b"").split(b"\n")[number:-1]
    for later, raw in enumerate(lines, number + 1):
        if not raw.isascii():
            try:
                raw.decode("utf-8")
                return later
            except UnicodeDecodeError:
                continue
    return None


def nul_line(path, number, raw, skip_flag):
    """The refusal of line `number` (bytes `raw`) holding NUL bytes: UTF-16 text (`_utf_width`: files of two encodings
    joined), or a binary file's bytes."""
    kind = _utf_width(raw[:64])
    mark, joined = next(((m, name) for m, name in _MARKS if raw.startswith(m)), (b"", None))  # (a file begun with its
    if kind and number > 1 and joined:  # mark)
        return ValueError(f"{path} line {number}: {joined} text (a {mark.hex(' ').upper()} "
                          "byte-order mark, then NUL bytes beside its letters) in a file read as UTF-8 (a file of "
                          "another encoding joined on?): convert that part alone, then join them (head -n "
                          f"{number - 1} {path} > part1.txt; tail -n +{number} {path} | iconv -f {joined} -t UTF-8 > "
                          "part2.txt; cat part1.txt part2.txt > text.txt)")
    if kind and number > 1:
        return ValueError(f"{path} line {number}: {kind} text (NUL bytes beside its letters) in a file read as UTF-8 (a "
                          f"file of another encoding joined on, or a line pasted in?): convert that part alone (iconv -f {kind} -t UTF-8)"
                          + (", or pass --skip_invalid_utf8 to skip such lines" if skip_flag and number > 8 else ""))
    if number > 1 and b"\0" not in raw.rstrip(b"\0\r\n"):  # (NULs that end a line, after text: no binary file)
        end = " to the file's end" if (tail := _tail(path, 4096)) is not None and not tail.strip(b"\0") else ""
        return ValueError(f"{path} line {number}: NUL bytes{end}, as a file zero-filled after a crash (or a copy "
                          f"cut short) holds them, after {number - 1:,} lines of text; keep those (head -n {number - 1} "
                          f"{path} > fixed.txt) and check that nothing is missing at their end")
    return ValueError(f"{path} line {number}: NUL bytes, as a binary file holds (a SentencePiece .model, a TFRecord, an "
                      "image...), not text; give a UTF-8 text file")

