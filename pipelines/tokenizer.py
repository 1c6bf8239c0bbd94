"""SentencePiece vocabulary with ALBERT's special ids, and encoding in Python and in the graph.

Ids: <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4. The model's own normalizer is
"identity"; `pipelines.normalization` is applied before SentencePiece, both when
the vocabulary is trained and when text is encoded.
"""

import array
import os
import random
import re
import string
import sys

import numpy as np
import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2

from albert_act.base import overlap, plain_text, text_files
from pipelines import normalization

SPECIAL_TOKENS = ("<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]")
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)
# "[MASK]" in a served text, in any case: normalization lowercases text before SentencePiece, so
# "[mask]" could never be read as anything else. The same regex in Python's re and in RE2 (the graph).
MASK_PATTERN = r"(?i)\[mask\]"
WORD_START = "\u2581"  # SentencePiece's "▁": the piece begins a new word
_PUNCTUATION = frozenset(string.punctuation)


def sample_sentences(files, max_sentences, seed, skip_invalid_utf8=False, units=None, invalid_lines=None):
    """A seeded reservoir sample of normalized, non-empty lines (memory bounded by `max_sentences`), and how many
    lines it was drawn from. units: a dict, given, of {path: its sentences' `overlap.keys_of`, an array}
    (`overlap.check_units_once`); invalid_lines: a list, given, of the (path, line) skipped as not UTF-8."""
    rng = random.Random(f"{seed}/tokenizer-sample")
    sample, seen = [], 0
    for path in files:
        keys = None if units is None else units.setdefault(path, array.array("Q"))
        stream = overlap.Sentences()  # the file's sentences, however its lines are cut
        for _, line in plain_text.read_text_lines(path, skip_invalid_utf8, invalid_lines):
            if units is not None:  # (the line as written: its tabs and line numbers as they are)
                keys.extend(overlap.keys_of(stream.feed(line)))
            line = normalization.normalize(line)
            if not line:
                continue
            seen += 1
            if len(sample) < max_sentences:
                sample.append(line)
            else:
                j = rng.randrange(seen)
                if j < max_sentences:
                    sample[j] = line
        if units is not None:
            keys.extend(overlap.keys_of(stream.end()))
    return sample, seen


MODEL_TYPES = ("unigram", "bpe")
MAX_LINE_BYTES = 4192  # SentencePiece's max_sentence_length: longer lines are left out of training


# Characters an English vocabulary keeps as pieces however rare they are in its training text
# (Wikipedia has few "?" and "!": with SentencePiece's character coverage of 0.9995 they were <unk>).
# Letters and digits first, then ASCII punctuation and symbols as they appear after normalization
# (NFKD keeps these; it turns "…" into "...").
ENGLISH_CHARACTERS = string.ascii_lowercase + string.digits + string.punctuation + "€£¥©®°±§¶•–—‘’“”«»×÷"


def skipped_lines_note(skipped, read):
    """The note for lines --skip_invalid_utf8 skipped (`skipped`: (path, line) each) of `read` lines read in all."""
    share = len(skipped) / max(1, len(skipped) + read)
    return (f"{'warning' if share > 0.1 else 'note'}: --skip_invalid_utf8 skipped {len(skipped):,} of the "
            f"{len(skipped) + read:,} lines with text, as not UTF-8 ({skipped[0][0]} line {skipped[0][1]} first)" + (
                ": most of it is in another encoding? Convert it (iconv -f ENCODING -t UTF-8) rather than skip it"
                if share > 0.1 else ""))


def _sample_with_notes(files, max_sentences, seed, skip_invalid_utf8):
    """`sample_sentences`, with notes on lines skipped, files that repeat each other, and the sample's share."""
    units, skipped = {}, []  # each file's sentences, as the trainer takes them (a file more than half of whose sentences
    sentences, lines = sample_sentences(files, max_sentences, seed, skip_invalid_utf8, units, skipped)  # another holds)
    if skipped:
        print(skipped_lines_note(skipped, lines))
    for note in overlap.check_units_once(units, "sentences", "its sentences would count twice in the "
                                            "vocabulary's statistics"):
        print(note)
    if lines > len(sentences):
        print(f"note: the vocabulary is trained on a seeded sample of {len(sentences):,} of the {lines:,} lines "
              "(--max_sentences)")
    return sentences, lines


def train_sentencepiece(files, vocab_size=30000, max_sentences=2_000_000, seed=12345, num_threads=1,
                        model_type="unigram", skip_invalid_utf8=False, byte_fallback=False, required_chars=""):
    """Trains a vocabulary on normalized text; returns the serialized model (bytes).

    byte_fallback: characters that are not pieces become their UTF-8 bytes (256 pieces <0x00>..<0xFF>)
    instead of <unk>. required_chars: characters kept as pieces however rare they are in the text
    (e.g. `ENGLISH_CHARACTERS`; with "bpe", those the text holds).

    model_type: "unigram" (ALBERT's) or "bpe". SentencePiece's unigram trainer splits
    very frequent short words of a low-diversity corpus into letters ("near" ->
    "▁nea r", "a" -> "▁ a"; google/sentencepiece issue 967): fine on real text,
    but the embedded synthetic corpus needs "bpe".

    Raises ValueError when the files hold no text, or when `vocab_size` is larger
    than the text supports (SentencePiece's message says the largest possible).
    """
    if model_type not in MODEL_TYPES:
        raise ValueError(f"model_type must be one of {list(MODEL_TYPES)}, got {model_type!r}")
    sentences, lines = _sample_with_notes(files, max_sentences, seed, skip_invalid_utf8)
    if not sentences:
        raise ValueError(f"no text to train a vocabulary on in {files}")
    if all(len(line.encode()) > MAX_LINE_BYTES for line in sentences):
        raise ValueError(f"every line of {files} is longer than {MAX_LINE_BYTES} bytes, and SentencePiece trains only "
                         "on shorter ones (a sentence or a paragraph per line, as the data tool reads them): split "
                         "the text into lines")
    long = [len(line.encode()) for line in sentences if len(line.encode()) > MAX_LINE_BYTES]
    if long:  # SentencePiece leaves them out without a word
        share = sum(long) / sum(len(line.encode()) for line in sentences)
        print(f"note: {len(long)} line(s) longer than {MAX_LINE_BYTES} bytes, {share:.0%} of the text, are left out of "
              "the vocabulary's training (SentencePiece's limit): split them into sentences or paragraphs",
              file=sys.stderr)
    options = dict(
        vocab_size=vocab_size,
        model_type=model_type,
        pad_id=PAD_ID,
        unk_id=UNK_ID,
        bos_id=-1,
        eos_id=-1,
        control_symbols=list(SPECIAL_TOKENS[2:]),
        normalization_rule_name="identity",
        shuffle_input_sentence=False,  # our sample is already seeded
        input_sentence_size=0,
        byte_fallback=byte_fallback,
        required_chars=_required(normalization.normalize(required_chars).replace(" ", ""), sentences, model_type),
        num_threads=num_threads,
        max_sentence_length=MAX_LINE_BYTES,
        minloglevel=2,
    )
    try:
        return _train_in_child(sentences, options)
    except RuntimeError as error:
        raise ValueError(_training_failure(str(error), files, len(sentences), max_sentences, byte_fallback)) from None


# SentencePiece's trainer holds the interpreter (the GIL) until it has finished, minutes on a large corpus: in
# the command's own process, Ctrl-C would wait for it. It runs in a child interpreter of its own session (a
# terminal's Ctrl-C reaches only the command, which ends the child; a command killed outright takes it with
# it), fed the sentences and options on stdin
# (pickled) and writing the model, or the trainer's error after a 0 byte, on stdout.
_CHILD = """
import ctypes, io, os, pickle, signal, sys
try:  # Linux's PR_SET_PDEATHSIG: the child ends with the command however it ends (SIGKILL included)
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
except (AttributeError, OSError):
    pass
if os.getppid() != int(sys.argv[1]):  # the command ended before that
    sys.exit(1)
import sentencepiece as spm
sentences, options = pickle.load(sys.stdin.buffer)
model = io.BytesIO()
try:
    spm.SentencePieceTrainer.train(sentence_iterator=iter(sentences), model_writer=model, **options)
except RuntimeError as error:
    sys.stdout.buffer.write(b"\\0" + str(error).encode("utf-8"))
else:
    sys.stdout.buffer.write(b"\\1" + model.getvalue())
"""


def _train_in_child(sentences, options):
    """The serialized model SentencePiece trains on `sentences` with `options`, in a child process
    (`_CHILD`); RuntimeError with the trainer's message when it refuses, or when it ends the process."""
    import os
    import pickle
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(os.getpid())], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             start_new_session=True)
    try:
        output, _ = child.communicate(pickle.dumps((sentences, options), protocol=pickle.HIGHEST_PROTOCOL))
    finally:  # Ctrl-C, SIGTERM: the child is ended with the command
        if child.poll() is None:
            child.kill()
            child.wait()
    if output[:1] == b"\1" and child.returncode == 0:
        return output[1:]
    if output[:1] == b"\0":
        raise RuntimeError(output[1:].decode("utf-8", "replace"))
    raise RuntimeError(f"the trainer ended its process (exit status {child.returncode})")


def _required(chars, sentences, model_type):
    """The required characters SentencePiece is given: all of `chars` for unigram, which makes each a piece
    even where the text lacks it; for BPE only those the text holds, since its trainer aborts the process
    on a required character it never sees (a frequency of 0)."""
    if model_type != "bpe":
        return chars
    seen = set().union(*map(set, sentences))
    return "".join(c for c in chars if c in seen)


def _training_failure(message, files, sentences, max_sentences, byte_fallback):
    """SentencePiece's training error in the flags' words: a --vocab_size too large or too small for
    the corpus says the size that would do."""
    most = re.search(r"Vocabulary size too high \((\d+)\)\. Please set it to a value <= (\d+)", message)
    if most:
        lines = f"{sentences:,} line" + ("s" if sentences > 1 else "")
        capped = (f" (the {lines} sampled by --max_sentences {max_sentences:,}; raise it)"
                  if sentences >= max_sentences else "")
        return (f"--vocab_size {most.group(1)} is too large for this corpus: SentencePiece can make at most "
                f"{most.group(2)} pieces from {files}{capped}; pass --vocab_size {most.group(2)} or less, or give "
                "more text")
    least = re.search(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)", message)
    if least:
        kept = (" (256 of them the byte fallback's: --no-byte_fallback drops them; --required_chars= keeps "
                "only the corpus's own characters)") if byte_fallback else ""
        return (f"--vocab_size {least.group(1)} is too small for this corpus: its characters and the special "
                f"pieces need {least.group(2)}{kept}; pass --vocab_size {least.group(2)} or more")
    return f"SentencePiece could not train on {files}: {message}"


def _check_whole(model_proto, size, source):
    """A SentencePiece model cut short at a piece's end still parses, with fewer pieces and no trainer
    or normalizer spec (they are written after the pieces): refused, as is one with fewer pieces
    than it was trained to have."""
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(model_proto)
    missing = [name for name in ("trainer_spec", "normalizer_spec") if not model.HasField(name)]
    if missing:
        raise ValueError(f"{source}: a truncated or damaged SentencePiece model ({size} pieces and no "
                         f"{' or '.join(missing)}, which a whole model ends with); copy it again from where it was made")
    if model.trainer_spec.vocab_size > size:
        raise ValueError(f"{source}: a truncated or damaged SentencePiece model: {size} pieces, where it was trained "
                         f"with {model.trainer_spec.vocab_size}")


def without_dummy_prefix(model_proto):
    """The SentencePiece model, changed to encode a text as the rest of a word: no "▁" is put
    before its first piece (the text that follows a [MASK] with no space between them)."""
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(model_proto)
    model.normalizer_spec.add_dummy_prefix = False
    return model.SerializeToString()


def starts_a_word(part, first):
    """Whether the text `part` of a served text split at "[MASK]" begins a new word: the text's
    first part, or a part that begins with a space (NUL is one after normalization)."""
    return first or part[:1].isspace() or part[:1] == "\x00"


class Tokenizer:
    """A SentencePiece model with ALBERT's special ids and normalization.

    Args:
        model_proto: bytes of a SentencePiece model.
        source: where it came from, for error messages.

    Raises:
        ValueError if the vocabulary lacks a special token at its id.
    """

    def __init__(self, model_proto, source="<model bytes>"):
        self.model_proto = model_proto
        self.source = source
        try:
            self.processor = spm.SentencePieceProcessor(model_proto=model_proto)
        except RuntimeError:
            raise ValueError(f"{source}: not a SentencePiece model (make one with "
                             "`python -m pipelines.train_tokenizer`)") from None
        size = self.processor.get_piece_size()
        _check_whole(model_proto, size, source)
        wrong = []
        for expected_id, piece in enumerate(SPECIAL_TOKENS):  # ALBERT's own ids (its 30k-clean.model has them)
            found = self.processor.id_to_piece(expected_id) if expected_id < size else None
            if found != piece:
                wrong.append(f"{piece} at id {expected_id}, found {found!r}")
        if wrong:
            raise ValueError(f"{source}: vocabulary must have " + "; ".join(wrong) + " (ALBERT's special ids; "
                             "train one with `python -m pipelines.train_tokenizer`)")

    @classmethod
    def from_file(cls, path):
        text_files.refuse_fifo(path, "given as the vocabulary", "a vocabulary is read more than once (the checks, the "
                               "work, the copy kept beside the output): give the .model file itself")
        text_files.refuse_device(path, "a SentencePiece model")
        if not text_files.exists(path):
            raise ValueError(f"{path}: no such file (the SentencePiece model)")
        if text_files.isdir(path):
            raise ValueError(f"{path} is a directory, not a SentencePiece model (a .model file)")
        model = os.path.splitext(str(path))[0] + ".model"
        if str(path).endswith(".vocab") and text_files.exists(model):  # (train_tokenizer writes both: the list, the model)
            raise ValueError(f"{path}: the vocabulary's list of pieces, which SentencePiece writes beside its model; "
                             f"give the model: {model}")
        return cls(text_files.read_bytes(path), source=path)

    @classmethod
    def for_model(cls, path, rows):
        """The tokenizer of the file `path`, refused unless it has the model's `rows` pieces (the check both
        pre-training backends make before any compute)."""
        return cls.from_file(path).sized_for(rows)

    def sized_for(self, rows):
        """This tokenizer, refused unless it has the model's `rows` pieces."""
        if self.vocabulary_size != rows:
            raise ValueError(f"{self.source} has {self.vocabulary_size} pieces but the model's vocabulary_size is "
                             f"{rows}; make the data with a {rows}-piece vocabulary, or pass --override "
                             f"vocabulary_size={self.vocabulary_size}")
        return self

    @property
    def vocabulary_size(self):
        return self.processor.get_piece_size()

    def encode(self, texts, word_start=True):
        """Normalizes and encodes a list of strings -> list of lists of ids (no specials added).

        word_start=False encodes each string as the rest of a word (no "▁" before its first piece)."""
        normalized = [normalization.normalize(t) for t in texts]
        if word_start:
            return self.processor.encode(normalized)
        if getattr(self, "_word_rest", None) is None:
            self._word_rest = spm.SentencePieceProcessor(model_proto=without_dummy_prefix(self.model_proto))
        return self._word_rest.encode(normalized)

    def encode_with_masks(self, text):
        """One served text's ids, each literal "[MASK]" (any case) the [MASK] id: the Python statement of
        `pipelines.packing.TextEncoder.tokenize_with_masks` (the parts between markers encoded on
        their own, a part that follows a [MASK] with no space as the rest of its word)."""
        ids = []
        # Normalized first (as each part is again, idempotently), so a mask typed another way that the
        # model reads as "[mask]" is one too: fullwidth "［ＭＡＳＫ］", accented "[MÁSK]".
        for i, part in enumerate(re.split(MASK_PATTERN, normalization.normalize(text))):
            ids += ([MASK_ID] if i else []) + self.encode([part], word_start=starts_a_word(part, i == 0))[0]
        return ids

    def id_to_piece(self, ids):
        return [self.processor.id_to_piece(int(i)) for i in ids]

    def word_start_table(self):
        """bool (V,): ids that begin a word (a "▁" piece, a punctuation piece, or a special token).

        Whole-word masking groups every other piece with the word before it, as ALBERT does.
        """
        table = np.zeros(self.vocabulary_size, bool)
        for i in range(self.vocabulary_size):
            piece = self.processor.id_to_piece(i)
            table[i] = piece.startswith(WORD_START) or piece in _PUNCTUATION or i < len(SPECIAL_TOKENS)
        return table

    def graph_tokenizer(self):
        """A `pipelines.graph_tokenizer.GraphTokenizer` (tf.Module) with this model: same ids, in the graph."""
        from pipelines.graph_tokenizer import GraphTokenizer  # TensorFlow only when asked for

        return GraphTokenizer(self.model_proto)
