"""Raw text -> sharded TFRecords of ALBERT pre-training instances (SOP + n-gram masking).

    python -m pipelines.create_pretraining_data --input 'corpus/*.txt' --vocab vocab/albert.model \\
        --output_dir data/pretraining --dupe_factor 10 --num_shards 8

Input: one sentence per line, a blank line between documents (files or globs,
local or gs://). Output in --output_dir: train-NNNNN-of-NNNNN.tfrecord,
eval-00000-of-00001.tfrecord (held-out documents, never in train),
stats.json and stats.md. The semantics are in `pipelines/instances.py`. Beside
them, the documents' pieces without TensorFlow: tokens-train.npz and
tokens-eval.npz (`pipelines/token_corpus.py`; about 2 bytes a piece), from which
the JAX backend makes the same instances on the fly.

Reproducible: the same inputs, vocabulary and flags give byte-identical shards
for any --workers. Streaming: memory is bounded by --shuffle_buffer, the
in-flight batches and the pieces themselves (2-4 bytes each), not by the text. Shards are written to
<output_dir>/_incomplete/ and moved into place only when everything succeeded;
stats.json is written last.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: pipelines/create_pretraining_data.py is part of albert-act: run it from the repository root as "
                     "python -m pipelines.create_pretraining_data")

import array
import collections
import errno
import json
import os
import random
import sys
import time

from albert_act.base import checks, cli, entry, outputs, overlap, plain_text, text_files
from albert_act.base.artifacts import INCOMPLETE, STATS_JSON, STATS_MD, TOKENS_EVAL, TOKENS_TRAIN, check_not_in_a_run
from pipelines import instances, record_warnings, token_corpus, worker_pool
from pipelines.tfrecord_writer import TFRecordWriter
from pipelines.tokenizer import Tokenizer, skipped_lines_note


def read_documents(files, skip_invalid_utf8=False, invalid_lines=None, units=None):
    """Yields lists of sentence strings; a blank line (or a file's end) ends a document. units: a dict, given, of
    {path: its documents' `overlap.sentence_keys`}, filled as they are read (the overlap check's units: a copy
    whose documents were merged, split, cut or added to, or whose lines were joined, holds the same ones)."""
    for path in files:
        document, keys = [], None if units is None else units.setdefault(path, array.array("Q"))
        for _, line in plain_text.read_text_lines(path, skip_invalid_utf8, invalid_lines):
            line = line.strip()
            if line and (line.isascii() or not text_files.is_blank(line)):  # (a zero-width space alone is blank)
                document.append(line)
            elif document:
                yield _keyed(document, keys)
                document = []
        if document:
            yield _keyed(document, keys)


def _keyed(document, keys):
    """`document`, its `overlap.sentence_keys` added to `keys` (an array; None: not asked)."""
    if keys is not None:
        keys.extend(overlap.sentence_keys(document))
    return document


def check_documents_once(files, read=None):
    """ValueError for a file given twice, or for files that hold the same sentences, as `read_documents` reads them
    (`overlap.check_units_once`): a note for a few sentences in two files. A pipe is read once, by the work: with
    one among the files, this returns a dict for the work to fill (`read_documents`' units), compared after it
    (`read`), before any shard is in place; else None."""
    why = "its sentences would be both trained on and held out"
    if read is None:
        text_files.check_each_file_once(files, why)
        if not all(map(text_files.rereadable, files)):
            return {}
        read = {}
        for _ in read_documents(files, True, [], read):
            pass
    for note in overlap.check_units_once(read, "sentences", why):
        print(note)
    empty = [path for path in files if path in read and not read[path] and text_files.rereadable(path) and
             text_files.text_key(path) is None]  # (a second file left empty: said; no sentence compared is no proof)
    if empty and len(empty) < len(files):
        print(f"note: --input {empty[0]}{f' and {len(empty) - 1} more' if len(empty) > 1 else ''} hold"
              f"{'s' * (len(empty) == 1)} no text (empty, or blank lines alone): nothing is read from "
              f"{'it' if len(empty) == 1 else 'them'}")
    return None


class _ShardWriter:
    """Seeded shuffle buffer, then round-robin over the shards: deterministic output order."""

    def __init__(self, directory, prefix, num_shards, buffer_size, seed):
        self.names = [f"{prefix}-{i:05d}-of-{num_shards:05d}.tfrecord" for i in range(num_shards)]
        self.writers = [TFRecordWriter(os.path.join(directory, n)) for n in self.names]
        self.buffer, self.buffer_size = [], buffer_size
        self.rng = random.Random(f"{seed}/shuffle/{prefix}")
        self.written = 0

    def _write(self, record):
        self.writers[self.written % len(self.writers)].write(record)
        self.written += 1

    def add(self, record):
        if len(self.buffer) < self.buffer_size:
            self.buffer.append(record)
            return
        j = self.rng.randrange(self.buffer_size)
        self._write(self.buffer[j])
        self.buffer[j] = record

    def close(self):
        self.rng.shuffle(self.buffer)
        for record in self.buffer:
            self._write(record)
        for writer in self.writers:
            writer.close()


# The writing's own settings (`InstanceConfig` checks the instances'), one rule each, for the function
# and its flags alike: more than half the documents held out would leave the training shards the minority.
RUN_RULES = {"num_shards": "int[1,100000]", "workers": "int[1,1024]", "eval_fraction": "[0,0.5]",
             "shuffle_buffer": "int[1,10000000]"}


def create_pretraining_data(
    input_patterns,
    vocab,
    output_dir,
    config,
    num_shards=8,
    workers=None,
    eval_fraction=0.01,
    shuffle_buffer=10000,
    docs_per_task=64,
    skip_invalid_utf8=False,
    progress=True,
):
    """Writes the shards and the stats report; returns the stats dict (also in stats.json).

    Raises ValueError (naming the file, line or value) for: a pattern matching no
    file, a missing file, non-UTF-8 text (unless skip_invalid_utf8), an empty
    corpus, a vocabulary without ALBERT's special ids, an output directory that
    already holds shards, and bad config values.
    """
    workers = workers or os.cpu_count()
    for name, value in (("num_shards", num_shards), ("workers", workers), ("eval_fraction", eval_fraction),
                        ("shuffle_buffer", shuffle_buffer)):
        checks.rule_check(name, value, RUN_RULES[name])
    files = text_files.expand_patterns(input_patterns)
    piped = check_documents_once(files)  # {} where a pipe is among them: filled by the work, compared after it
    tokenizer = Tokenizer.from_file(vocab)
    if config.vocabulary_size != tokenizer.vocabulary_size:
        raise ValueError(
            f"config.vocabulary_size={config.vocabulary_size} but {vocab} has {tokenizer.vocabulary_size} pieces"
        )
    _check_output_dir(output_dir)
    staging = os.path.join(output_dir, INCOMPLETE)
    if text_files.exists(staging):
        text_files.rmtree(staging)  # left by a crashed run: never complete
    created = not text_files.exists(output_dir)
    text_files.makedirs(staging)
    start = time.perf_counter()
    invalid_lines = []
    try:
        stats = _write_shards(files, tokenizer, config, staging, num_shards, workers, eval_fraction,
                              shuffle_buffer, docs_per_task, skip_invalid_utf8, invalid_lines, progress, piped)
        report = _report(stats, invalid_lines, config, files, vocab, num_shards, eval_fraction,
                         workers, time.perf_counter() - start)
        _write_report(report, staging)  # (with the shards: an earlier report is replaced by the same move)
        text_files.move_in_together([(os.path.join(staging, name), os.path.join(output_dir, name))  # all or none,
                                     for name in text_files.listdir(staging)], staging)  # whatever stops it
    except BaseException as error:
        text_files.rmtree(staging)  # a failed run leaves nothing that looks like output
        if created and not text_files.listdir(output_dir):
            text_files.rmtree(output_dir)  # nor a folder it made
        if isinstance(error, OSError):  # a full disk (ENOSPC), a lost mount: a message, not a traceback
            raise _write_failure(error, output_dir, num_shards) from None
        raise
    text_files.rmtree(staging)  # (with an earlier report, replaced)
    return report


def _check_output_dir(output_dir):
    """Refuses an --output_dir that holds shards or files of anything else (a run, an export, the
    corpus itself: the shards would be written among them); a new or empty one, or one holding only
    an earlier report or a crashed run's staging folder, passes."""
    outputs.check_dir_target(output_dir, "--output_dir")
    check_not_in_a_run(output_dir, "--output_dir")
    if not text_files.exists(output_dir):
        return
    existing = text_files.glob(os.path.join(output_dir, "*.tfrecord"))
    if existing and text_files.exists(os.path.join(output_dir, INCOMPLETE)):  # (a kill while they were moved in)
        raise ValueError(f"{output_dir} holds {len(existing)} shard(s) and {INCOMPLETE}/: a run killed while it moved "
                         f"its shards into place, a part of its output; delete them and {INCOMPLETE}/, and re-run")
    if existing:
        raise ValueError(
            f"{output_dir} already holds {len(existing)} shard(s) (e.g. {os.path.basename(existing[0])}); "
            "choose a new directory or delete them"
        )
    staging = os.path.join(output_dir, INCOMPLETE)
    if os.path.islink(staging) or text_files.exists(staging) and not text_files.isdir(staging):
        raise ValueError(f"{staging} is {'a link' if os.path.islink(staging) else 'a file'}, where this tool stages its "
                         f"shards (and deletes what is there): move it away, or write to another --output_dir")
    others = [name for name in text_files.visible_entries(output_dir) if name not in (STATS_JSON, STATS_MD, INCOMPLETE)]
    if others:
        raise ValueError(f"--output_dir {output_dir} holds other files ({', '.join(others[:5])}); write the "
                         "records to a new or empty directory")


def _write_shards(files, tokenizer, config, staging, num_shards, workers, eval_fraction,
                  shuffle_buffer, docs_per_task, skip_invalid_utf8, invalid_lines, progress, piped=None):
    """Documents -> workers -> shuffle buffers -> shards in `staging`; returns the summed stats. piped: the dict of
    `check_documents_once` (a pipe among the files), filled and checked here."""
    stats = collections.Counter()
    train = _ShardWriter(staging, "train", num_shards, shuffle_buffer, config.seed)
    evaluation = _ShardWriter(staging, "eval", 1, shuffle_buffer, config.seed)
    documents = read_documents(files, skip_invalid_utf8, invalid_lines, piped)
    results = worker_pool.ordered_map(
        instances.process_documents,
        worker_pool.batches(documents, docs_per_task),
        workers,
        instances.init_worker,
        (tokenizer.model_proto, config, eval_fraction),
    )
    bar = _progress_bar(progress)
    tokenized = {False: [], True: []}  # the documents' pieces, training and held out (pipelines.token_corpus)
    for train_records, eval_records, batch_stats, documents in results:
        for record in train_records:
            train.add(record)
        for record in eval_records:
            evaluation.add(record)
        for doc_index, held_out, sentences in documents:  # kept compact: one array of pieces a document
            tokenized[held_out].append(token_corpus.packed(doc_index, sentences, tokenizer.vocabulary_size))
        stats.update(batch_stats)
        bar.update(batch_stats["documents"])
        bar.set_postfix(instances=stats["instances"], refresh=False)
    bar.close()
    train.close()
    evaluation.close()
    if stats["documents"] == 0 and invalid_lines:  # (--skip_invalid_utf8 skipped every line there was)
        raise ValueError(f"no line left to read in {files}: --skip_invalid_utf8 skipped all {len(invalid_lines):,} "
                         f"lines as not UTF-8 ({invalid_lines[0][0]} line {invalid_lines[0][1]} first): a binary file, "
                         "or text in another encoding? Give UTF-8 text (iconv -f ENCODING -t UTF-8 converts it)")
    if stats["documents"] == 0:
        raise ValueError(f"empty corpus: no non-blank line in {files}")
    if piped is not None:  # every document read now, a pipe's too: compared before any shard is in place
        check_documents_once(files, piped)
    _check_filled(train.written, num_shards, eval_fraction, stats)
    word_start, bare_space = instances.word_start_table(tokenizer)
    for held_out, name in ((False, TOKENS_TRAIN), (True, TOKENS_EVAL)):
        shards = {shard: text_files.size(os.path.join(staging, shard)) for shard in text_files.listdir(staging)
                  if shard.startswith("eval-" if held_out else "train-") and shard.endswith(".tfrecord")}
        text_files.write_bytes(os.path.join(staging, name), token_corpus.encoded(
            tokenized[held_out], config, word_start, bare_space, vocab_fingerprint(tokenizer.model_proto), shards))
    return stats


def _write_failure(error, output_dir, num_shards):
    """The refusal for an OSError while writing: a full disk (ENOSPC), a lost mount, too many files open."""
    advice = "free space" if error.errno != errno.EMFILE else (
        f"--num_shards {num_shards} files open at once is more than this system allows (ulimit -n): fewer shards")
    return ValueError(f"writing shards to {output_dir} failed: {error.strerror or error}"
                      f"{f' ({error.filename})' if error.filename else ''}; nothing was kept: {advice}, and re-run")


def _check_filled(written, num_shards, eval_fraction, stats):
    """Records that would train nothing are refused, not written: no training instance at all (the
    eval fraction held out every document), or shards left empty (more shards than instances)."""
    documents = f"{stats['documents']} documents ({stats['train_documents']} for training)"
    if written == 0 and stats["eval_documents"]:
        raise ValueError(f"no training instance from {documents}: --eval_fraction {eval_fraction} held out "
                         f"{stats['eval_documents']}; lower it or give more text")
    if written == 0 and stats["single_segment_dropped"]:  # e.g. a file that is one word, longer than a sequence
        raise ValueError(f"no training instance from {documents}: {stats['single_segment_dropped']} chunk(s) of one "
                         "word each, which a sentence-order pair cannot cut in two, were dropped (a text of one word, "
                         "or without spaces?); give text of several words")
    if written == 0:
        raise ValueError(f"no training instance from {documents}: the text is too short to make one (an instance "
                         "needs at least a sentence of pieces); give more text")
    if written < num_shards:
        long = record_warnings.cut_off(stats["truncated_tokens"], stats["tokens"]) > record_warnings.TRUNCATION_WARNED
        raise ValueError(f"--num_shards {num_shards} but {documents} gave {written} training instances: "
                         f"{num_shards - written} shards would be empty; use --num_shards {written} or fewer" + (
                             ", but most of the text's pieces were cut off to fit sequences, as each line is read as a "
                             "sentence (a document on one line?): give a sentence a line (a blank line between "
                             "documents)" if long else ""))


def _progress_bar(enabled):
    from tqdm import tqdm

    # disable=None: shown on a terminal only (redrawing writes escapes into log files)
    return tqdm(unit=" docs", disable=None if enabled else True, mininterval=1.0, file=sys.stderr)


def vocab_fingerprint(model_proto):
    """What stats.json records of the vocabulary the records were made with: the SHA-256 of its
    SentencePiece model, so that a reader with another vocabulary of the same size is caught."""
    import hashlib

    return hashlib.sha256(model_proto).hexdigest()


def _report(stats, invalid_lines, config, files, vocab, num_shards, eval_fraction, workers, seconds):
    masked = stats["masked_tokens"]
    spans = {n: stats[f"ngram_{n}"] for n in range(1, config.max_ngram + 1)}
    total_spans = sum(spans.values())
    harmonic = sum(1.0 / n for n in spans)
    return {
        "inputs": files,
        "vocab": vocab,
        "vocab_sha256": vocab_fingerprint(Tokenizer.from_file(vocab).model_proto),
        "config": {**vars(config), "num_shards": num_shards, "eval_fraction": eval_fraction},
        "documents": {"total": stats["documents"], "train": stats["train_documents"], "eval": stats["eval_documents"]},
        "sentences": stats["sentences"],
        "empty_sentences_skipped": stats["empty_sentences"],
        "invalid_utf8_lines_skipped": [f"{path} line {line}" for path, line in invalid_lines],
        "instances": {"total": stats["instances"], "train": stats["instances"] - stats["eval_instances"],
                      "eval": stats["eval_instances"]},
        "tokens": stats["tokens"],
        "mean_tokens_per_instance": stats["tokens"] / max(1, stats["instances"]),
        "unknown_fraction": stats["unknown_tokens"] / max(1, stats["tokens"]),  # <unk>: text --vocab cannot read
        "unreadable_sentences": stats["unreadable_sentences"],  # most of their characters in no piece of --vocab
        "masked_fraction": masked / max(1, stats["maskable_tokens"]),
        "instances_with_no_masked_piece": stats["unmasked_instances"],
        "replacement_mix": {k: stats[f"replaced_{k}"] / max(1, masked) for k in ("mask", "keep", "random")},
        "ngram_spans": {
            str(n): {"count": c, "fraction": c / max(1, total_spans), "expected": (1.0 / n) / harmonic}
            for n, c in spans.items()
        },
        "sop_swapped_fraction": stats["sop_swapped"] / max(1, stats["instances"]),
        "truncation": {"instances": stats["truncated_instances"], "tokens_removed": stats["truncated_tokens"]},
        "single_segment_chunks": {"split_at_a_word": stats["single_segment_split"],
                                  "dropped_one_word": stats["single_segment_dropped"]},
        "short_target_documents": stats["short_targets"],
        "single_segment_instances": stats["single_segments"],
        "workers": workers,
        "seconds": seconds,
        "instances_per_second": stats["instances"] / max(seconds, 1e-9),
    }


def _write_report(report, output_dir):
    lines = [
        "# Pre-training data", "",
        f"- documents: {report['documents']['total']} ({report['documents']['train']} train, "
        f"{report['documents']['eval']} eval), sentences: {report['sentences']}",
        f"- instances: {report['instances']['train']} train, {report['instances']['eval']} eval; "
        f"tokens: {report['tokens']} ({report['mean_tokens_per_instance']:.1f} per instance)",
        f"- unknown pieces (<unk>): {report['unknown_fraction']:.4f} of the tokens; sentences mostly of characters in "
        f"no piece: {report['unreadable_sentences']}",
        f"- masked fraction: {report['masked_fraction']:.4f} (target {report['config']['masked_lm_prob']}); "
        f"instances with no masked piece (SOP only): {report['instances_with_no_masked_piece']}",
        "- replacement mix: " + ", ".join(f"{k} {v:.4f}" for k, v in report["replacement_mix"].items()),
        f"- SOP swapped: {report['sop_swapped_fraction']:.4f}",
        f"- truncated instances: {report['truncation']['instances']} "
        f"({report['truncation']['tokens_removed']} tokens removed)",
        f"- single-segment chunks: {report['single_segment_chunks']['split_at_a_word']} split at a word, "
        f"{report['single_segment_chunks']['dropped_one_word']} dropped (one word); single-segment instances "
        f"([CLS] A [SEP], --single_segment_prob): {report['single_segment_instances']}",
        f"- empty sentences skipped: {report['empty_sentences_skipped']}; "
        f"invalid UTF-8 lines skipped: {len(report['invalid_utf8_lines_skipped'])}",
        f"- {report['instances_per_second']:.0f} instances/s with {report['workers']} workers",
        "", "| n-gram (words) | spans | fraction | expected (1/n) |", "|---|---|---|---|",
    ]
    lines += [f"| {n} | {v['count']} | {v['fraction']:.4f} | {v['expected']:.4f} |" for n, v in report["ngram_spans"].items()]
    with text_files.open_binary(os.path.join(output_dir, STATS_MD), "wb") as f:
        f.write(("\n".join(lines) + "\n").encode("utf-8"))
    with text_files.open_binary(os.path.join(output_dir, STATS_JSON), "wb") as f:
        f.write(json.dumps(report, indent=2).encode("utf-8"))


FLAG_RULES = {"max_seq_length": "int[5,8192]", "masked_lm_prob": "(0,1)", "short_seq_prob": "[0,1]",
              "single_segment_prob": "[0,1]", "dupe_factor": "int[1,1000]",
              "max_predictions_per_seq": "int[1,8192]", "seed": "int:seed", "max_ngram": "int[1,10]",
              **RUN_RULES, **dict.fromkeys(("input", "vocab", "output_dir"), "path")}


def main(argv=None):
    cli.quiet_start(argv, tensorflow=False)  # first; TensorFlow, if a gs:// path needs it, loads quietly
    parser = cli.parser("create_pretraining_data", __doc__, package="pipelines")
    parser.add_argument("--input", nargs="+", required=True, help="text files or globs (local or gs://)")
    parser.add_argument("--vocab", required=True, help="SentencePiece .model from pipelines.train_tokenizer")
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--masked_lm_prob", type=float, default=0.20, help="fraction of tokens masked (paper: 0.20)")
    parser.add_argument("--max_predictions_per_seq", type=int, default=None,
                        help="default: 1.2 x round(masked_lm_prob * (max_seq_length - 3)), room for the last span, "
                             "at most max_seq_length - 2")
    parser.add_argument("--max_ngram", type=int, default=3)
    parser.add_argument("--dupe_factor", type=int, default=10, help="maskings of each training document")
    parser.add_argument("--short_seq_prob", type=float, default=0.1)
    parser.add_argument("--single_segment_prob", type=float, default=0.0,
                        help="share of instances that are one segment, [CLS] A [SEP] (a served sentence's shape; "
                             "SOP label 0); default 0, ALBERT's pairs only. Leave it 0 for held-out records that "
                             "measure SOP")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--num_shards", type=int, default=8)
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: all cores)")
    parser.add_argument("--eval_fraction", type=float, default=0.01,
                        help="fraction of documents held out for the eval shard")
    parser.add_argument("--shuffle_buffer", type=int, default=10000, help="instances in the writer's shuffle buffer")
    parser.add_argument("--skip_invalid_utf8", action="store_true",
                        help="skip (and count) lines that are not UTF-8 instead of failing")
    args = cli.parse_checked(parser, argv, FLAG_RULES)
    cli.stop_on_sigterm()
    with cli.failures(args.output_dir, "shards are written whole; re-run the same command",
                      f"nothing was written to {args.output_dir}; re-run the same command"):
        vocabulary_size = Tokenizer.from_file(args.vocab).vocabulary_size
        config = instances.InstanceConfig(
            vocabulary_size=vocabulary_size,
            max_seq_length=args.max_seq_length,
            masked_lm_prob=args.masked_lm_prob,
            max_predictions_per_seq=args.max_predictions_per_seq,
            max_ngram=args.max_ngram,
            short_seq_prob=args.short_seq_prob,
            single_segment_prob=args.single_segment_prob,
            dupe_factor=args.dupe_factor,
            seed=args.seed,
        )
        with outputs.DirectoryLock(args.output_dir, "data run", "--output_dir", say=True):
            report = create_pretraining_data(
                args.input, args.vocab, args.output_dir, config, num_shards=args.num_shards,
                workers=args.workers, eval_fraction=args.eval_fraction,
                shuffle_buffer=args.shuffle_buffer, skip_invalid_utf8=args.skip_invalid_utf8,
            )
    print(f"wrote {report['instances']['train']} train and {report['instances']['eval']} eval instances "
          f"to {args.output_dir} in {report['seconds']:.1f} s; stats in {os.path.join(args.output_dir, STATS_MD)}")
    _print_notes(report, args.eval_fraction)


def _print_notes(report, eval_fraction):
    """The notes and warnings on what the data run made: lines skipped, an empty eval shard, records unmasked..."""
    if invalid := report["invalid_utf8_lines_skipped"]:
        print(skipped_lines_note([line.rsplit(" line ", 1) for line in invalid], report["sentences"]))
    if eval_fraction > 0 and not report["instances"]["eval"]:
        one = report["documents"]["total"] == 1  # (a text with no blank line: warned of below)
        print(f"note: the eval shard is empty (--eval_fraction {eval_fraction} of "
              f"{'one document' if one else 'too few documents'}); pre-training needs held-out records: "
              + ("give documents apart, a blank line between them" if one else
                 "raise --eval_fraction or give more documents"))
    if note := record_warnings.unmasked_note(report):
        print(note)
    for warning in record_warnings.warnings(report):
        print(f"warning: {warning}")


if __name__ == "__main__":
    entry.run(main)
