"""The tokenized corpus without TensorFlow, and pre-training batches made from it on the fly.

The data tool (`pipelines.create_pretraining_data`) writes, beside its TFRecords, the pieces of
its training documents and of its held-out documents as two NumPy files (`TOKENS_TRAIN`,
`TOKENS_EVAL`):

    ids            uint16 (uint32 above 65,536 pieces): every piece of every sentence, in order
    sentence_ends  int64: the end of each sentence in `ids` (exclusive)
    document_ends  int64: the end of each document in sentences (exclusive)
    documents      int64: each document's index in the input, which seeds its instances
    word_start     uint8 (vocabulary,): 1 where a piece begins a word; bare_space: the "▁" piece
    config         the `InstanceConfig` as JSON; vocabulary: the SHA-256 of the vocabulary

`InstanceStream` makes instances from it by the rules of `pipelines.instances` (the same code):
pass p over the corpus masks document d as the data tool's duplicate p of d, so passes
0 .. dupe_factor - 1 hold exactly the TFRecords' instances (tests/test_token_corpus.py), and
later passes mask afresh. Documents come in a seeded order per pass, and the instances of each
window of 512 documents in a seeded order; the stream's position (pass, window, instance) is a
tuple that a checkpoint keeps, so a resumed run reads on exactly.
Batches are NumPy dicts with the names of `pipelines.pretraining_dataset`: the JAX backend's
input, where TensorFlow is absent.
"""

import collections
import dataclasses
import glob
import io
import json
import os
import random
import re
import zipfile

import numpy as np

from albert_act.base.artifacts import TOKENS_EVAL, TOKENS_TRAIN, first_line, refuse_run_files  # noqa: F401 (the files' names)
from albert_act.base import encodings
from pipelines import instances


def packed(doc_index, sentences, vocabulary_size):
    """One document, compact: (doc_index, its pieces as one uint16/uint32 array, its sentence lengths)."""
    dtype = np.uint16 if vocabulary_size <= 1 << 16 else np.uint32
    pieces = np.fromiter((i for s in sentences for i in s), dtype, sum(len(s) for s in sentences))
    return doc_index, pieces, np.asarray([len(s) for s in sentences], np.int64)


def encoded(documents, config, word_start, bare_space, vocabulary_fingerprint, shards=None):
    """The NumPy file (.npz, as bytes) of `documents`, [`packed`(...)]: bytes, so that any file system
    takes them (np.savez seeks back in its output, which a gs:// or file:// object cannot). shards: {name: bytes}
    of the TFRecord shards written beside it from the same documents (`token_files` checks them)."""
    buffer = io.BytesIO()
    dtype = np.uint16 if len(word_start) <= 1 << 16 else np.uint32
    ids = np.concatenate([p for _, p, _ in documents]) if documents else np.zeros(0, dtype)
    lengths = np.concatenate([n for _, _, n in documents]) if documents else np.zeros(0, np.int64)
    np.savez(buffer, ids=ids.astype(dtype), sentence_ends=np.cumsum(lengths, dtype=np.int64),
             document_ends=np.cumsum([len(n) for _, _, n in documents], dtype=np.int64),
             documents=np.asarray([d for d, _, _ in documents], np.int64), word_start=np.asarray(word_start, np.uint8),
             bare_space=np.int64(bare_space), config=json.dumps(dataclasses.asdict(config)),
             vocabulary=vocabulary_fingerprint, shards=json.dumps(shards or {}, sort_keys=True))
    return buffer.getvalue()


def _within_a_sequence(saved):
    """A saved config's max_predictions_per_seq, at most the max_seq_length - 2 pieces a sequence can
    mask: corpora made before InstanceConfig refused more hold 150 or 8192 (the slots past that were
    padding, so the masking is the same)."""
    length, slots = saved.get("max_seq_length"), saved.get("max_predictions_per_seq")
    if isinstance(length, int) and isinstance(slots, int) and slots > length - 2:
        return {**saved, "max_predictions_per_seq": length - 2}
    return saved


class TokenCorpus:
    """A token corpus file, read whole (the English corpus is ~20 MB)."""

    def __init__(self, path):
        try:
            with np.load(path, allow_pickle=False) as data:
                self.ids, self.sentence_ends = data["ids"], data["sentence_ends"]
                self.document_ends, self.documents = data["document_ends"], data["documents"]
                self.word_start = [int(x) for x in data["word_start"]]  # a list: indexed per piece
                self.bare_space = int(data["bare_space"])
                self.config = instances.InstanceConfig(**_within_a_sequence(json.loads(str(data["config"]))))
                self.vocabulary = str(data["vocabulary"])
        except PermissionError:  # (whole, but not readable to this user: not to be made again)
            raise ValueError(f"{path}: cannot be read (permission denied): make it readable (chmod u+r {path})") from None
        except KeyError as error:  # (whole, but without an array the data tool writes)
            raise ValueError(f"{path}: a token corpus without its {str(error.args[0]).split()[0]!r} array (an older data tool's, or "
                             "edited); make the records again with python -m pipelines.create_pretraining_data") from None
        except (OSError, ValueError, EOFError, TypeError, zipfile.BadZipFile) as error:
            raise ValueError(f"{path}: not a token corpus of the data tool, or cut short ({first_line(error)}); "
                             "make the records again with python -m pipelines.create_pretraining_data") from None
        self.path = path
        self._check_structure()
        largest = int(self.ids.max()) if self.ids.size else -1
        if largest >= len(self.word_start):  # the boundaries are `_check_structure`'s
            raise ValueError(f"{path}: damaged token corpus (piece id {largest} of a {len(self.word_start)}-piece "
                             "vocabulary); make the records again with python -m pipelines.create_pretraining_data")

    def _check_structure(self):
        """The arrays' kinds and boundaries, as the data tool writes them: integer ids; sentence and
        document ends that never go back, the last of each closing its pieces and its sentences."""
        arrays = {"ids": self.ids, "sentence_ends": self.sentence_ends, "document_ends": self.document_ends,
                  "documents": self.documents}
        for name, array in arrays.items():
            if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer) or (array.size and array.min() < 0):
                raise ValueError(f"{self.path}: damaged token corpus ({name} must be non-negative integers in one "
                                 f"row, got {array.dtype} of shape {array.shape}); make the records again with "
                                 "python -m pipelines.create_pretraining_data")
        for name, ends, total in (("sentence_ends", self.sentence_ends, self.ids.size),
                                  ("document_ends", self.document_ends, self.sentence_ends.size)):
            if np.any(np.diff(ends) < 0) or (ends[-1] if ends.size else 0) != total:
                raise ValueError(f"{self.path}: damaged token corpus ({name} go back or do not end at {total}); "
                                 "make the records again with python -m pipelines.create_pretraining_data")
        pieces = len(self.word_start)
        if pieces != self.config.vocabulary_size or not -1 <= self.bare_space < pieces:
            raise ValueError(f"{self.path}: damaged token corpus (word_start has {pieces} entries and bare_space is "
                             f"{self.bare_space}, for the {self.config.vocabulary_size}-piece vocabulary of its "
                             "config); make the records again with python -m pipelines.create_pretraining_data")
        if self.documents.size != self.document_ends.size:
            raise ValueError(f"{self.path}: damaged token corpus ({self.documents.size} documents, "
                             f"{self.document_ends.size} document ends); make the records again with python -m "
                             "pipelines.create_pretraining_data")

    def fingerprint(self):
        """16 hex digits of the SHA-256 of the documents' pieces and boundaries: the same for a copied
        or moved corpus, another for other documents (a checkpoint keeps its run's)."""
        import hashlib

        digest = hashlib.sha256()
        for array in (self.ids, self.sentence_ends, self.document_ends, self.documents):
            digest.update(np.ascontiguousarray(array).tobytes())
        return digest.hexdigest()[:16]

    def __len__(self):
        return len(self.documents)

    def sentences(self, k):
        """The k-th document as a list of sentences, each a list of piece ids."""
        first = int(self.document_ends[k - 1]) if k else 0
        ends = self.sentence_ends[first : int(self.document_ends[k])]
        starts = np.concatenate([[self.sentence_ends[first - 1] if first else 0], ends[:-1]])
        return [self.ids[a:b].tolist() for a, b in zip(starts, ends)]


class InstanceStream:
    """Pre-training instances of a `TokenCorpus`, pass after pass, from a position.

    held_out: make each document once, pairs only (as the data tool makes held-out records), in
    the corpus's order, and stop. Else pass p makes duplicate p of every document: the documents in
    a seeded order, taken `window` at a time, each window's instances in a seeded order (as the
    data tool's shuffle buffer mixes its records: a batch is not a few documents' consecutive
    segments), for ever. `position` (pass, window, instance) is where the next instance comes from:
    a window is made again from it, so a resumed stream reads on exactly, with no buffer to keep."""

    WINDOW = 512  # documents whose instances are shuffled together

    def __init__(self, corpus, seed=12345, held_out=False, position=(0, 0, 0)):
        self.corpus, self.seed, self.held_out = corpus, seed, held_out
        self.config = dataclasses.replace(corpus.config, single_segment_prob=0.0) if held_out else corpus.config
        self.position = tuple(int(x) for x in position)
        self.stats = collections.Counter()
        self._cache = None  # (pass, window, its instances)

    def order(self, pass_index):
        """The documents' order in pass `pass_index` (the corpus's own when held out)."""
        order = list(range(len(self.corpus)))
        if not self.held_out:
            random.Random(f"{self.seed}/order/{pass_index}").shuffle(order)
        return order

    def _window(self, pass_index, window):
        """The instances of window `window` of pass `pass_index`, in their order."""
        if self._cache is None or self._cache[:2] != (pass_index, window):
            made = []
            for k in self.order(pass_index)[window * self.WINDOW:(window + 1) * self.WINDOW]:
                made += instances.document_features(self.corpus.sentences(k), int(self.corpus.documents[k]),
                                                    pass_index, self.config, self.corpus.word_start, self.stats,
                                                    self.corpus.bare_space)
            if not self.held_out:
                random.Random(f"{self.seed}/window/{pass_index}/{window}").shuffle(made)
            self._cache = (pass_index, window, made)
        return self._cache[2]

    def __iter__(self):
        return self

    def __next__(self):
        pass_index, window, index = self.position
        windows = -(-len(self.corpus) // self.WINDOW)
        visited = 0  # windows read without an instance: a whole pass of them, and the corpus makes none
        while True:
            if window >= windows:
                if self.held_out:
                    raise StopIteration
                if not windows or visited > windows:  # it would spin for ever
                    raise ValueError(f"{self.corpus.path}: makes no pre-training instance ({len(self.corpus)} "
                                     "documents); make the records of a larger text")
                pass_index, window, index = pass_index + 1, 0, 0
            made = self._window(pass_index, window)
            if index < len(made):
                self.position = (pass_index, window, index + 1)
                return made[index]
            visited += 1
            window, index = window + 1, 0

    def batch(self, size):
        """The next `size` instances as (inputs, labels) of NumPy arrays (fewer at a held-out end; None
        when none is left), named as `pipelines.pretraining_dataset`'s."""
        rows = []
        for features in self:
            rows.append(features)
            if len(rows) == size:
                break
        if not rows:
            return None
        column = lambda name, dtype: np.asarray([r[name] for r in rows], dtype)  # noqa: E731
        inputs = {"token_ids": column("input_ids", np.int32), "segment_ids": column("segment_ids", np.int32),
                  "padding_mask": column("input_mask", np.int32),
                  "masked_positions": column("masked_lm_positions", np.int32)}
        labels = {"masked_lm_ids": column("masked_lm_ids", np.int32),
                  "masked_lm_weights": column("masked_lm_weights", np.float32),
                  "sentence_order_label": column("next_sentence_labels", np.int32)[:, 0]}
        return inputs, labels


WINDOW, SEEN = 16, 0.5  # pieces: a run this long in two corpora is the same text; of a document's runs: it is seen


def shared_documents(train, held_out, sample=1_000_000):
    """The share of `held_out`'s documents (a `TokenCorpus`) whose text is in `train`'s (of its first `sample` pieces):
    most of their runs of `WINDOW` pieces found there, as a second data run of the same text (another --seed or
    --eval_fraction) leaves its held-out documents among the first run's training ones. NumPy's
    `pipelines.record_overlap`, for the JAX backend's corpora."""
    weights = np.random.default_rng(0).integers(1, 2**63, WINDOW, dtype=np.uint64) | np.uint64(1)

    def runs(ids):
        if ids.size < WINDOW:
            return np.zeros(0, np.uint64)
        return (np.lib.stride_tricks.sliding_window_view(ids.astype(np.uint64), WINDOW) * weights).sum(axis=1)

    starts = np.concatenate([[0], held_out.sentence_ends])[np.concatenate([[0], held_out.document_ends[:-1]])]
    ends = held_out.sentence_ends[held_out.document_ends - 1]
    held = [runs(held_out.ids[start:end]) for start, end in zip(starts, ends)]
    owner = np.repeat(np.arange(len(held)), [len(r) for r in held])  # each run's document
    if not owner.size:
        return 0.0
    found = np.isin(np.concatenate(held), runs(train.ids[:sample]))  # (one sort of each side)
    counts, hits = np.bincount(owner, minlength=len(held)), np.bincount(owner, found, minlength=len(held))
    documents = counts > 0
    return float(np.mean(hits[documents] >= SEEN * counts[documents]))


def token_files(patterns, held_out=None):
    """The token corpus for TFRecord patterns (or a tokens-*.npz path given as it is): the data
    tool's file in the patterns' folder, tokens-eval.npz for eval-* shards (or all, `held_out`), else tokens-train.npz.
    The corpus holds every shard's instances, so the patterns must cover all of its shards: a run
    on some of them would train on the rest as well."""
    corpora = {}  # corpus -> the shards the patterns match (None: the .npz given)
    for pattern in patterns:
        if pattern.endswith(".npz"):
            found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
            if len(found) > 1:
                raise ValueError(f"{pattern} matches {len(found)} token corpora ({', '.join(found[:3])}): name the one "
                                 "to read (tokens-train.npz for training, tokens-eval.npz held out)")
            corpora.setdefault(found[0] if found else pattern, None)
            continue
        found = glob.glob(pattern)
        refuse_run_files(found or [pattern], " or its token corpus (tokens-*.npz)")
        if os.path.isfile(pattern) and not pattern.endswith(".tfrecord"):
            raise ValueError(f"{pattern}: neither the data tool's TFRecord shards nor its token corpus (tokens-*.npz)"
                             f"{encodings.compression_hint(pattern)}")
        if os.path.isdir(pattern):
            raise ValueError(f"{pattern} is a folder: give its shards ({os.path.join(pattern, 'train-*.tfrecord')}) "
                             "or its token corpus (tokens-*.npz)")
        if not found and "://" not in pattern:
            raise ValueError(f"{pattern} matches no file")
        if corpus := next((f for f in found if f.endswith(".npz")), None):  # ('*eval*': the shards and their corpus)
            raise ValueError(f"{pattern} matches the token corpus {corpus} beside shards: give the shards alone ("
                             f"{os.path.join(os.path.dirname(pattern), os.path.basename(corpus)[7:-4] + '-*.tfrecord')}"
                             "), or the corpus alone")
        evaluated = held_out if held_out is not None else os.path.basename(pattern).startswith("eval") or (
            found and all(os.path.basename(f).startswith("eval") for f in found))  # ('*.tfrecord' of eval shards)
        name = TOKENS_EVAL if evaluated else TOKENS_TRAIN
        folder, targets = os.path.dirname(pattern), {os.path.dirname(os.path.realpath(f)) for f in found}
        if len(targets) == 1 and not os.path.exists(os.path.join(folder, name)) and all(map(os.path.islink, found)):
            folder = targets.pop()  # (links to a data run's shards: its corpus is beside them)
        matched = corpora.setdefault(os.path.join(folder, name), set())
        if twice := next((f for f in found if os.path.realpath(f) in matched), None):  # (as the TensorFlow backend)
            raise ValueError(f"{twice}: given twice in {' '.join(patterns)!r} (by two patterns, or a link): give each "
                             "shard once")
        matched.update(map(os.path.realpath, found))
    missing = [path for path in corpora if not os.path.exists(path)]
    if missing:
        raise ValueError(f"{missing[0]}: no token corpus (the JAX backend reads the data tool's tokens-*.npz beside "
                         "its TFRecords; make the records again with this version of python -m "
                         "pipelines.create_pretraining_data)")
    if other := next((path for path in corpora if "://" not in path and not os.path.isfile(path)), None):
        from albert_act.base import named_pipes  # (np.load of a pipe with no writer waits without a word)

        kind = ("a named pipe (FIFO)" if named_pipes.is_fifo(other) else "a folder" if os.path.isdir(other) else
                "not a regular file (a device?)")
        raise ValueError(f"{other}: {kind}, where the JAX backend reads the data tool's token corpus, a zip archive "
                         "that is read by seeking in it: give the file itself")
    if len(corpora) != 1:
        raise ValueError(f"the JAX backend reads one token corpus per run, got {len(corpora)}: {', '.join(corpora)}; "
                         "make one data run of all the texts (python -m pipelines.create_pretraining_data --input A B "
                         "...), or train on the TensorFlow backend, which reads the shards of several data runs")
    (corpus, matched), = corpora.items()
    if matched is not None:
        _check_shards(patterns, corpus, matched)
    _check_renamed(patterns, matched, corpus, _check_written_with(corpus))
    return corpus


def _check_shards(patterns, corpus, matched):
    """ValueError where the shards the patterns match (`matched`, real paths) are not all the shards the token corpus
    `corpus` holds, or include others: the JAX backend reads the corpus, all of it."""
    prefix = "eval" if os.path.basename(corpus) == TOKENS_EVAL else "train"
    shards = {os.path.realpath(path)
              for path in glob.glob(os.path.join(os.path.dirname(corpus), f"{prefix}-*-of-*.tfrecord"))}
    others = sorted(os.path.basename(path) for path in matched - shards)
    if shards and others:
        raise ValueError(f"{', '.join(patterns)} matches {others[0]}, which is not one of the {prefix} shards "
                         f"that the JAX backend reads as {corpus}: give {prefix} shards only ("
                         f"{os.path.join(os.path.dirname(corpus), prefix + '-*-of-*.tfrecord')})")
    of = {int(m.group(1)) for m in (re.search(r"-of-(\d+)\.tfrecord$", path) for path in shards) if m}
    if shards and of and len(shards) < max(of):  # (the others deleted, or left behind by a copy)
        _check_renamed(patterns, matched, corpus, _record(corpus))  # (or the corpus's shards renamed -of-00003)
        raise ValueError(f"{os.path.dirname(corpus) or '.'} holds {len(shards)} of the {max(of)} {prefix} shards "
                         f"(their names say -of-{max(of):05d}) that its token corpus {corpus} holds, and the JAX "
                         f"backend reads that corpus: it would train on all {max(of)}; make records of the "
                         "documents you want")
    if shards and not shards <= matched:
        raise ValueError(f"{', '.join(patterns)} matches {len(matched & shards)} of the {len(shards)} shards in "
                         f"{os.path.dirname(corpus) or '.'}, but the JAX backend reads their token corpus "
                         f"{corpus}, which holds all of them: give all the shards ("
                         f"{os.path.join(os.path.dirname(corpus), prefix + '-*.tfrecord')}), or make records "
                         "of the documents you want")


def _check_renamed(patterns, matched, corpus, written):
    """ValueError when the patterns match a shard (of the paths `matched`) that the token corpus was not written
    with (`written`, its record): renamed shards, whose corpus holds the documents of all it was written with."""
    names = {os.path.basename(path) for path in matched or ()}
    if written and names - set(written):
        raise ValueError(f"{', '.join(patterns)} matches {sorted(names - set(written))[0]}, none of the shards "
                         f"{corpus} was written with ({', '.join(sorted(written))}): renamed, or another data run's? "
                         "The JAX backend reads that corpus, not the shards: give the data tool's shards by their names")


def _record(corpus):
    """The shards ({name: bytes}) the token corpus `corpus` records it was written with; None where it records none
    (an older corpus) or cannot be read (named as damaged where it is read)."""
    try:
        with np.load(corpus, allow_pickle=False) as data:
            return json.loads(str(data["shards"])) if "shards" in data.files else None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):
        return None


def _record_framed(path):
    """Whether the TFRecord file `path` begins with a record's frame: a length (8 bytes, little-endian) that the file
    holds, and that length's masked CRC32C where google-crc32c is there to check it (a file of NULs has neither)."""
    try:
        with open(path, "rb") as f:
            head = f.read(12)
        size = os.path.getsize(path)
    except OSError:
        return True  # (named where it is read)
    if size == 0:
        return True  # (an empty shard: a data run of few documents writes one)
    length = int.from_bytes(head[:8], "little") if len(head) == 12 else -1
    if not 0 < length <= size - 16:
        return False
    try:
        from pipelines.tfrecord_writer import masked_crc
    except ImportError:  # (google-crc32c, a TensorFlow requirement, may be missing where JAX alone is)
        return True
    return masked_crc(head[:8]) == int.from_bytes(head[8:12], "little")


def _check_written_with(corpus):
    """ValueError when the token corpus `corpus` records other TFRecord shards (names and sizes) than its folder
    holds: the corpus of other records (replaced, copied beside another data run's, or swapped with the held-out
    one), which the JAX backend would train on instead of the shards given; a corpus copied alone (no shard of
    its beside it) passes. Corpora written without the record (older ones) are not checked. Returns the record
    ({shard name: bytes}), or None."""
    if not (written := _record(corpus)):
        return None
    wanted = "eval-" if os.path.basename(corpus) == TOKENS_EVAL else "train-" if os.path.basename(
        corpus) == TOKENS_TRAIN else None
    if wanted and not all(name.startswith(wanted) for name in written):  # (tokens-train.npz and tokens-eval.npz swapped)
        raise ValueError(f"{corpus} was written with the shards {', '.join(sorted(written))}, not {wanted}* ones: the "
                         f"other token corpus under this one's name (the two swapped?); the JAX backend would train "
                         "on held-out documents, or hold out training ones: make the records again")
    folder = os.path.dirname(corpus) or "."
    there = {name: os.path.getsize(os.path.join(folder, name)) for name in written
             if os.path.isfile(os.path.join(folder, name))}
    if there and there != written and sorted(there.values()) == sorted(written.values()) and len(there) == len(written):
        differ = sorted(name for name in written if there[name] != written[name])  # (renamed into each other)
        raise ValueError(f"{folder}'s shards {', '.join(differ)} have each other's sizes ({corpus} was written with "
                         f"{differ[0]} of {written[differ[0]]:,} bytes; it is {there[differ[0]]:,}): renamed into each "
                         "other? Give them their data tool names back (the corpus holds them by name), or make the "
                         "records again")
    if damaged := next((name for name in sorted(there) if there[name] == written[name]
                        and not _record_framed(os.path.join(folder, name))), None):  # (zeroed by a failed copy)
        raise ValueError(f"{os.path.join(folder, damaged)}: not a TFRecord shard (its first record's frame does not "
                         "read: zeroed or overwritten, though of its size), while the JAX backend would train on its "
                         f"token corpus {corpus} without a word: copy the shard again, or make the records again")
    if there and there != written:  # (none there: the corpus copied alone, to a machine with JAX)
        differ = next(name for name in sorted(written) if there.get(name) != written[name])
        found = f"{there[differ]:,} bytes" if differ in there else "not there"
        cut = (f"{differ} cut short (a copy that stopped: copy it again), or " if there.get(differ, written[differ])
               < written[differ] else "")
        if there.get(differ, 0) > written[differ] and there[differ] % written[differ] == 0:  # (cat a a > a, or b)
            cut = (f"{differ} joined with a copy of itself (exactly {there[differ] // written[differ]} times its size: "
                   "cat of the shard with itself? make the records again, or put the data tool's shard back), or ")
        raise ValueError(f"{corpus} was written with the shards {', '.join(sorted(written))} ({differ}: "
                         f"{written[differ]:,} bytes), but {folder}'s {differ} is {found}: {cut}the token corpus of "
                         "other records (replaced, copied beside another data run's shards, or swapped with the other "
                         "corpus?), which the JAX backend would read instead of the shards; keep each data run's "
                         "files together")
    return written
