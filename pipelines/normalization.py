"""ALBERT's text normalization, in Python and in the TensorFlow graph, identical by test.

Steps, in this order: NUL to a space (graph ops read C strings, which end at NUL); Unicode NFKD; drop combining marks (category Mn, i.e. strip
accents); lowercase; collapse runs of Unicode whitespace to one space; strip the ends.
NFKD runs first because it can itself produce spaces (no-break space -> space).

The vocabulary is trained on normalized text and SentencePiece's own normalizer is
set to "identity", so this is the only normalization, at training and at encoding
time, in Python (`normalize`) and in the graph (`normalize_tensor`).
"""

import re
import unicodedata

# Unicode whitespace as code-point ranges: exactly the characters of Python's
# str.isspace() (tested). Both regexes are built from this one table, because RE2's
# \s is ASCII-only and Python's `re` spells code points differently.
WHITESPACE_RANGES = (
    (0x09, 0x0D), (0x1C, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)


def _whitespace_run(spell):
    parts = (spell(a) if a == b else f"{spell(a)}-{spell(b)}" for a, b in WHITESPACE_RANGES)
    return "[" + "".join(parts) + "]+"


_PY_WHITESPACE = re.compile(_whitespace_run(lambda c: f"\\U{c:08x}"))
_RE2_WHITESPACE = _whitespace_run(lambda c: f"\\x{{{c:x}}}")
RE2_WHITESPACE_CHARACTER = _RE2_WHITESPACE[:-1]  # one Unicode whitespace character, for RE2 (graph) regexes


def normalize(text):
    """Normalizes one Python string (see the module docstring)."""
    text = text.replace("\x00", " ")  # NUL ends a C string in the graph's ops: a space in both
    if text.isascii():  # fast path: NFKD and accent stripping change no ASCII character
        return _PY_WHITESPACE.sub(" ", text.lower()).strip(" ")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    return _PY_WHITESPACE.sub(" ", text.lower()).strip(" ")


def normalize_tensor(text):
    """Normalizes a string tensor of any shape, in the graph (tensorflow-text)."""
    import tensorflow as tf
    import tensorflow_text as tf_text

    text = tf.strings.regex_replace(text, r"\x00", " ")  # before ops that would end the string there
    text = tf_text.normalize_utf8(text, "NFKD")
    text = tf.strings.regex_replace(text, r"\p{Mn}", "")
    text = tf.strings.lower(text, encoding="utf-8")
    text = tf.strings.regex_replace(text, _RE2_WHITESPACE, " ")
    return tf.strings.regex_replace(text, "^ | $", "")
