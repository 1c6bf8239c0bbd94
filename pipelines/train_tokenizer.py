"""Train the SentencePiece vocabulary (unigram or BPE, lowercase, ALBERT's normalization).

    python -m pipelines.train_tokenizer --input 'corpus/*.txt' --output vocab/albert --vocab_size 30000

Characters that are not pieces become their UTF-8 bytes (--byte_fallback, on by default), never
<unk>; letters, digits and ASCII punctuation are pieces however rare they are in the text
(--required_chars). Writes <output>.model (and <output>.vocab, one "piece<TAB>score" per line). Ids:
<pad>=0 <unk>=1 [CLS]=2 [SEP]=3 [MASK]=4. An existing vocabulary at <output> is replaced only with
--overwrite: records, runs and exports made with it would read other pieces.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: pipelines/train_tokenizer.py is part of albert-act: run it from the repository root as "
                     "python -m pipelines.train_tokenizer")

import argparse
import os
import re
import unicodedata

from albert_act.base import artifacts, cli, entry, outputs, text_files
from pipelines.tokenizer import ENGLISH_CHARACTERS, MODEL_TYPES, Tokenizer, train_sentencepiece


def write_vocabulary(model_proto, output_prefix):
    """Writes <prefix>.model and <prefix>.vocab; returns the Tokenizer."""
    tokenizer = Tokenizer(model_proto, source=output_prefix + ".model")
    if os.path.dirname(output_prefix):
        text_files.makedirs(os.path.dirname(output_prefix))
    processor = tokenizer.processor
    lines = (f"{processor.id_to_piece(i)}\t{processor.get_score(i)}\n" for i in range(tokenizer.vocabulary_size))
    vocab = "".join(lines).encode("utf-8")
    if text_files.is_remote(output_prefix):  # (an object appears only once closed)
        text_files.write_bytes(output_prefix + ".model", model_proto)
        text_files.write_bytes(output_prefix + ".vocab", vocab)
        return tokenizer

    def write_model(partial):  # the pair whole: both written beside their places before either is renamed in (a
        with open(partial, "wb") as f:  # full disk while writing either leaves the earlier pair as it was)
            f.write(model_proto)
        outputs.write_file(output_prefix + ".vocab", vocab)

    outputs.write_with(output_prefix + ".model", write_model)
    return tokenizer


# Folders whose vocabulary file others read: (what, the files that say so)
_READERS = (("a pre-training run", (artifacts.CONFIG, artifacts.CHECKPOINTS)), ("a fine-tuning dir", (
    artifacts.FINETUNED_INFO,)), ("a SavedModel export", (artifacts.SAVED_MODEL,)), ("a data run's records", (
        artifacts.STATS_JSON,)))


def _check_not_read_there(output, existing):
    """Refuses (ValueError) to replace the vocabulary of a folder whose run, fine-tuning, export or records read
    it: --overwrite too (what reads it would read other pieces, and the old one would be gone)."""
    folder = os.path.dirname(os.path.abspath(output))
    owner = next((what for what, marks in _READERS if all(text_files.exists(os.path.join(folder, m)) for m in marks)),
                 None) if existing and not text_files.is_remote(output) else None
    if owner:
        raise ValueError(f"--output {output}: {existing[0]} is the vocabulary of {owner} in {folder}, which reads "
                         "it; a new one there leaves that unusable: write it elsewhere")


def main(argv=None):
    cli.quiet_start(argv, tensorflow=False)  # first; TensorFlow, if a gs:// path needs it, loads quietly
    parser = cli.parser("train_tokenizer", __doc__, package="pipelines")
    parser.add_argument("--input", nargs="+", required=True, help="text files or globs (local or gs://)")
    parser.add_argument("--output", required=True, help="output prefix: writes PREFIX.model and PREFIX.vocab (a name "
                                                        "ending in .model or .vocab is taken as PREFIX.model)")
    parser.add_argument("--vocab_size", type=int, default=30000, help="pieces, the 5 special ones included")
    parser.add_argument("--model_type", default="unigram", choices=MODEL_TYPES,
                        help="unigram (ALBERT's); bpe for small synthetic corpora, where SentencePiece's "
                             "unigram trainer splits the most frequent words into letters")
    parser.add_argument("--max_sentences", type=int, default=2_000_000,
                        help="seeded reservoir sample of lines to train on (bounds memory)")
    parser.add_argument("--byte_fallback", action=argparse.BooleanOptionalAction, default=True,
                        help="characters that are not pieces become their UTF-8 bytes (256 pieces) instead of "
                             "<unk> (default: on; --no-byte_fallback for vocabularies under ~400 pieces)")
    parser.add_argument("--required_chars", default=ENGLISH_CHARACTERS, type=_required_chars,
                        help="characters kept as pieces however rare in the text, each written out (not ranges; "
                             "default: a to z, 0 to 9, ASCII punctuation and common symbols; with --model_type bpe, "
                             "those the text holds; --required_chars= for none)")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--skip_invalid_utf8", action="store_true",
                        help="skip lines that are not UTF-8 instead of failing")
    parser.add_argument("--threads", type=int, default=1,
                        help="SentencePiece threads (1 keeps the vocabulary byte-identical run to run)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing PREFIX.model / PREFIX.vocab")
    args = cli.parse_checked(parser, argv, {"vocab_size": "int[5,1000000]", "max_sentences": "int>=1",
                                            "threads": "int[1,1024]", "seed": "int:seed", "input": "path",
                                            "output": "path"})
    if args.output.endswith((".model", ".vocab")):  # a file name given for the prefix: vocab.model, not vocab.model.model
        args.output = args.output[: -len(".model")]
    existing = []  # (filled below: what a failed write leaves as it was)
    kept = lambda: ("the vocabulary there before is intact" if existing else "neither was written") + (  # noqa: E731
        ": free space and re-run the same command")
    with cli.failures(f"{args.output}.model and .vocab", kept, "the vocabulary was not trained; re-run the same command"):
        if args.output.endswith(("/", os.sep)) or text_files.isdir(args.output):
            raise ValueError(f"--output {args.output} is a directory; --output is a file prefix, e.g. "
                             f"{os.path.join(args.output, 'vocab')} (writes vocab.model and vocab.vocab there)")
        if not text_files.is_remote(args.output):
            outputs.check_dir_target(os.path.dirname(os.path.abspath(args.output)), "--output", holds_a_file=True)
            for path in (args.output, args.output + ".model", args.output + ".vocab"):  # the two files too: another
                outputs.hold(path, "--output", a_file=True)  # command's output named so is refused while this runs
        existing += [p for p in (args.output + ".model", args.output + ".vocab") if text_files.exists(p)]
        folders = [p for p in existing if text_files.isdir(p)]
        if folders:
            raise ValueError(f"--output {args.output}: {folders[0]} is a folder, where the vocabulary's file would be "
                             "written: choose another --output")
        _check_not_read_there(args.output, existing)
        if existing and not args.overwrite:
            raise ValueError(f"--output {args.output}: {existing[0]} exists (a vocabulary that records and models may "
                             "have been made with); choose another --output, or pass --overwrite to replace it")
        files = text_files.expand_patterns(args.input)
        text_files.check_each_file_once(files, "its sentences would count twice in the vocabulary's statistics")
        text_files.check_inputs_are_not_outputs(files, existing, "--input")
        proto = train_sentencepiece(files, args.vocab_size, args.max_sentences, args.seed, args.threads,
                                    model_type=args.model_type, skip_invalid_utf8=args.skip_invalid_utf8,
                                    byte_fallback=args.byte_fallback, required_chars=args.required_chars)
        tokenizer = write_vocabulary(proto, args.output)
    print(f"wrote {args.output}.model ({tokenizer.vocabulary_size} pieces) and {args.output}.vocab")
    if args.required_chars != ENGLISH_CHARACTERS:  # (what the default's loses is in --help)
        _note_missing(args.required_chars, tokenizer, args.model_type, args.byte_fallback)


def _required_chars(value):
    """--required_chars, refused where it holds a byte that is not UTF-8 (a Latin-1 terminal's 'ÿ') or whitespace,
    which the normalization makes a space: neither can be a piece."""
    byte = next((c for c in value if "\udc80" <= c <= "\udcff"), None)
    if byte:
        raise argparse.ArgumentTypeError(f"holds the byte 0x{ord(byte) - 0xDC00:02x}, which is not UTF-8 (as a "
                                         "Latin-1 terminal sends an accented letter): type the characters as UTF-8")
    if len(value) > 1 and os.path.isfile(value):  # (the characters themselves are asked for, not a file of them)
        raise argparse.ArgumentTypeError(f"takes the characters themselves, and {value} is a file: give what it holds "
                                         f"(--required_chars \"$(cat {value})\")")
    invisible = next((c for i, c in enumerate(value) if unicodedata.category(c) == "Cf" and not (  # (a joiner inside
        c == "\u200d" and 0 < i < len(value) - 1 and not value[i - 1].isspace() and not value[i + 1].isspace())), None)
    # an emoji's sequence, 👨\u200d👩\u200d👧, is its own: each code point gets a piece)
    if invisible:  # (a byte-order mark pasted with the characters: a piece no text shows)
        raise argparse.ArgumentTypeError(f"holds U+{ord(invisible):04X}, an invisible character (a byte-order mark or "
                                         "a zero-width one, pasted with the others): leave it out")
    span = next((s for s in re.finditer(r"(?=([^\s-])-([^\s-]))", value) if s.group(1) != s.group(2) and (
        s.group(1).isalnum() and s.group(2).isalnum() or min(map(ord, s.groups())) > 127)), None)  # (a regex's 'a-z',
    if span:  # as --help writes the default; 'z-a'; an emoji's or a script's block, '\U0001f600-\U0001f64f')
        first, last = span.groups()
        low, high = ord(min(first, last)), ord(max(first, last))
        written = "".join(map(chr, range(low, high + 1))) if high - low < 64 else (
            f"\"$(python3 -c 'print(\"\".join(map(chr, range(0x{low:X}, 0x{high:X} + 1))))')\", {high - low + 1:,} of them")
        raise argparse.ArgumentTypeError(f"holds '{first}-{last}', which is read as the three characters {first}, - and "
                                         f"{last}, not as a range: write the characters out ({written}); a '-' of its "
                                         "own goes first or last")
    escape = re.search(r"\\[uUx][0-9a-fA-F]{2,8}|\\[wdsWDSpP]|\[:[a-z]+:\]|[Uu]\+[0-9A-Fa-f]{4,6}|&(?:[a-zA-Z]{2,8}|#\d{2,7}|"
                       r"#x[0-9a-fA-F]{2,6});|(?:%[0-9A-Fa-f]{2}){2,}|\{[^{}]\.\.[^{}]\}", value)  # ('\u4e2d', '\w', '[:alpha:]',
    # 'U+00E9', '&eacute;', '%C3%A9', bash's '{a..z}')
    if escape:
        raise argparse.ArgumentTypeError(f"holds '{escape.group()}', read as its characters one by one, not as the "
                                         "escape or class it writes: give the characters themselves (bash types "
                                         "$'\\u4e2d' as the one character)")
    space = next((c for c in value if c.isspace() and c != " "), None)
    if space:
        raise argparse.ArgumentTypeError(f"holds {space!r}, whitespace, which the normalization makes a space: no "
                                         "piece holds it; leave it out")
    return value


def _note_missing(required_chars, tokenizer, model_type, byte_fallback):
    """Notes naming the characters of --required_chars that the normalization changes (accents, capitals), and
    those that a BPE vocabulary has no piece for (the text lacks them: read as their bytes, or as <unk> without
    --byte_fallback)."""
    from pipelines import normalization

    changed = {c: n for c in dict.fromkeys(required_chars) if (n := normalization.normalize(c)) != c}
    if changed:
        said = ", ".join(f"{c} reads as {n or 'nothing'}" for c, n in list(changed.items())[:8])
        print(f"note: --required_chars: {said}: the normalization lowercases every text and strips its accents (as "
              "ALBERT's does), so these need no piece of their own")
    if model_type != "bpe":
        return
    asked = dict.fromkeys(normalization.normalize(required_chars).replace(" ", ""))
    missing = "".join(c for c in asked if tokenizer.processor.piece_to_id(c) == tokenizer.processor.unk_id())
    if missing:
        print(f"note: --required_chars: {len(missing)} of its {len(asked)} characters ({missing[:20]!r}) are not in "
              "the text and have no piece (SentencePiece's BPE trainer stops on a required character it never sees): "
              + (f"they read as their UTF-8 bytes' pieces (--byte_fallback: {missing[0]!r} is "
                 f"{' '.join(f'<0x{b:02X}>' for b in missing[0].encode())}), not as one piece each"
                 if byte_fallback else "they read as <unk>") + "; with --model_type unigram each gets a piece")


if __name__ == "__main__":
    entry.run(main)
