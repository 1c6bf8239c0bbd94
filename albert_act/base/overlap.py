"""The overlap check between input files given together: a file whose units (sentences, documents), as its reader
takes them, are mostly in other files given is a copy, whatever its line ends, indentation, order or columns
not read; its units would count twice (or be both trained on and held out). No TensorFlow."""

import collections
import re
import unicodedata

# Where a sentence ends inside a line: after . ! or ? (and a closing quote or bracket), before white space
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"'\u2019\u201d)\]]))\s+")


def split_sentences(line):
    """A line's sentences, for the overlap check (`check_units_once`): a copy whose lines were joined
    or split differently holds the same ones. A one-word part goes with the next (the last with the one before)."""
    parts, held = [], ""
    for part in _SENTENCE_END.split(line):
        held = f"{held} {part}" if held else part
        if " " in held:  # a one-word part ("Mr.", "e.g.") is an abbreviation's more often than a sentence
            parts.append(held)
            held = ""
    if held and parts:  # a last word after a sentence's end
        parts[-1] = f"{parts[-1]} {held}"
    elif held:
        parts.append(held)
    return parts


def unit_key(words, ordered=True):
    """A unit (a sentence, a document's lines) as a reader takes it, for `check_units_once`: its words (strings;
    a document's lines), each in NFKC and case-folded (ALBERT's vocabularies lowercase) with its spaces collapsed,
    in their order (or, not `ordered`, in any), as a 64-bit digest."""
    import hashlib

    words = [" ".join(unicodedata.normalize("NFKC", word).casefold().split()) for word in words]
    text = "\n".join(words if ordered else sorted(words))
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


SHARED_FLOOR = 10  # units: fewer shared, however large a part of a small file (a stub's "References"), is no copy


def check_units_once(units, what, why, flag="--input"):
    """Files given together that hold the same units (`what`: "documents", "sentences") as the reader takes them
    (`units` {path: [`unit_key`, ...]}, in the order given). A file more than half of whose distinct units (and
    `SHARED_FLOOR` at least) are in other files is a copy, or a part of one, whatever else differs (line ends,
    indentation, a column not read, a sentence cut, the order): ValueError naming it (the smallest such file) and
    those files, `why` saying what twice would do. Returns a note for each later file that shares fewer."""
    import numpy as np  # 8 bytes a unit: a set of Python ints took ten times that, for a corpus of many millions

    order, none = list(units), np.empty(0, np.uint64)
    distinct = {path: _unique(np.asarray(units[path], dtype=np.uint64)) for path in order}
    owned, owner, pairs = none, np.empty(0, np.int64), collections.Counter()  # a unit's first file (its index)
    for index, path in enumerate(order):
        held = np.isin(distinct[path], owned, assume_unique=True)
        counts = np.bincount(owner[np.searchsorted(owned, distinct[path][held])], minlength=index)
        pairs.update({(order[first], path): int(count) for first, count in enumerate(counts) if count})
        merged = np.concatenate([owned, distinct[path][~held]])
        sort = np.argsort(merged, kind="stable")
        owned, owner = merged[sort], np.concatenate([owner, np.full(int((~held).sum()), index)])[sort]
    every = np.sort(np.concatenate([none, *distinct.values()]))
    twice = _unique(every[1:][every[1:] == every[:-1]])  # units in 2 files or more
    shared = {path: int(np.isin(distinct[path], twice, assume_unique=True).sum()) for path in order}
    for path in sorted((p for p in units if shared[p]), key=lambda p: (len(distinct[p]), -order.index(p))):
        others = sorted({b if a == path else a for a, b in pairs if path in (a, b)},  # most shared first
                        key=lambda o: (-pairs[path, o] - pairs[o, path], order.index(o)))
        if 2 * shared[path] > len(distinct[path]) and shared[path] >= SHARED_FLOOR:
            raise ValueError(f"{flag} {path}: {shared[path]:,} of its {len(distinct[path]):,} distinct {what} are also "
                             f"in {', '.join(others)} (the same words, as they are read): a copy, or a part of one; "
                             f"{why}; give each of the {what} once (cut them from one of the files)")
    return [f"note: {shared[path]:,} of the {len(distinct[path]):,} distinct {what} of {path} are also in "
            f"{', '.join(sorted({a for a, b in pairs if b == path}))}: they count once for each file that holds them"
            for path in units if any(b == path for _, b in pairs)]


def _unique(keys):
    """The sorted distinct values of a uint64 array (np.unique hashes them in NumPy 2.4: 40 times slower here)."""
    import numpy as np

    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys
