"""Reading text files, local or remote (`gs://`, via tf.io.gfile), with line-accurate errors."""

import glob as _glob


def is_remote(path):
    return "://" in path


def expand_patterns(patterns):
    """Sorted files matching each pattern; ValueError naming a pattern that matches nothing."""
    files = []
    for pattern in patterns:
        if is_remote(pattern):
            import tensorflow as tf

            matches = sorted(tf.io.gfile.glob(pattern))
        else:
            matches = sorted(_glob.glob(pattern))
        if not matches:
            raise ValueError(f"no file matches {pattern!r}")
        files.extend(matches)
    return files


def open_binary(path, mode="rb"):
    if is_remote(path):
        import tensorflow as tf

        return tf.io.gfile.GFile(path, mode)
    return open(path, mode)


def read_bytes(path):
    try:
        with open_binary(path) as f:
            return f.read()
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None


def read_lines(path, skip_invalid_utf8=False, invalid_lines=None):
    """Yields (line number, text without the newline) of a UTF-8 file.

    A line that is not valid UTF-8 raises ValueError("<path> line <n>: not valid
    UTF-8 ...") unless `skip_invalid_utf8`, in which case it is skipped and its
    line number appended to `invalid_lines` (a list) if given.
    """
    try:
        handle = open_binary(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                if not skip_invalid_utf8:
                    raise ValueError(
                        f"{path} line {number}: not valid UTF-8 ({error.reason} at byte "
                        f"{error.start}); pass --skip_invalid_utf8 to skip such lines"
                    ) from None
                if invalid_lines is not None:
                    invalid_lines.append((path, number))
                continue
            yield number, line.rstrip("\r\n")
