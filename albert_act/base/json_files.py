"""JSON files albert-act reads and writes (a run's config.json, an export's record, results): read once (a pipe
works), a duplicate key refused with its line, the line of each key kept for messages about a value; written whole."""

import json
import os

from albert_act.base import outputs, text_files


def read_json(path, lines=None):
    """The JSON object (a dict) in `path`; a ValueError names the file, and the line and column
    where it stops being JSON (a truncated or hand-edited config), or what it holds instead.
    lines: a dict, given {key: the line (1-based) where it is first written as a key}, and {"outer.key": its line
    inside the top-level object "outer"} (for messages about a value: the file is read once, so a pipe works)."""
    remote = "://" in str(path)  # a local file is read without TensorFlow (the JAX backend has none)
    if text_files.gfile().isdir(path) if remote else os.path.isdir(path):
        raise ValueError(f"{path} is a directory, not a JSON file")
    try:
        with text_files.gfile().GFile(path, "rb") if remote else open(path, "rb") as f:
            text = f.read().decode("utf-8").removeprefix("\ufeff")  # read once (a pipe); a byte-order mark is no error
        value = json.loads(text, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as duplicate:
        line = _line_of_second(text, duplicate.key)
        raise ValueError(f"{path}{f' line {line}' if line else ''}: {duplicate.key!r} is given twice in one object "
                         "(JSON keeps the last without a word): give it once") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} line {error.lineno} column {error.colno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (not UTF-8), so not JSON") from None
    if not isinstance(value, dict):
        kind = {type(None): "null", list: "array ([...])", str: "string", bool: "true or false", int: "number",
                float: "number"}.get(type(value), type(value).__name__)  # (JSON's names, not Python's NoneType)
        raise ValueError(f"{path}: a JSON {kind} where an object ({{...}}) was expected")
    if lines is not None:
        for key in _all_keys(value):
            found = _key_positions(text, key)
            if found and key not in lines:
                lines[key] = text.count("\n", 0, found[0]) + 1
        for outer in (key for key, inner in value.items() if isinstance(inner, dict)):  # (an export's "export")
            start = _key_positions(text, outer)[0]
            end = _object_end(text, text.index("{", start))
            for key in value[outer]:
                found = [at for at in _key_positions(text, key) if start < at < end]
                lines[f"{outer}.{key}"] = text.count("\n", 0, found[0]) + 1 if found else lines.get(key)
    return value


def _object_end(text, start):
    """The offset of the '}' closing the JSON object that opens at `start` in `text` (strings' braces skipped)."""
    depth, quoted, escaped = 0, False, False
    for at in range(start, len(text)):
        char = text[at]
        if quoted:
            quoted, escaped = (escaped or char != '"'), (not escaped and char == "\\")
        elif char == '"':
            quoted = True
        elif char in "{}":
            depth += 1 if char == "{" else -1
            if depth == 0:
                return at
    return len(text)


def _all_keys(value):
    """The keys of a JSON object and of the objects inside it."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _all_keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _all_keys(inner)


class DuplicateKey(Exception):
    """A key written twice in one JSON object (`no_duplicate_keys`): JSON would keep the last without a word."""

    def __init__(self, key):
        super().__init__(key)
        self.key = key


def no_duplicate_keys(pairs):
    """json.loads' object_pairs_hook that raises `DuplicateKey` for a key given twice."""
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise DuplicateKey(key)
        seen.add(key)
    return dict(pairs)


def _line_of_second(text, key):
    """The line (1-based) where `key` appears as a JSON key the second time, or None."""
    found = _key_positions(text, key)
    return text.count("\n", 0, found[1]) + 1 if len(found) > 1 else None


def _key_positions(text, key):
    """Where `key` is written as a JSON key in `text` (offsets)."""
    import re

    return [m.start() for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text)]


def write_json(path, value):
    """Writes `value` as JSON, whole: a local file is written beside `path` and renamed over it."""
    if "://" in str(path):
        with text_files.gfile().GFile(path, "w") as f:
            json.dump(value, f, indent=2)
    else:
        outputs.write_file(path, json.dumps(value, indent=2).encode())
