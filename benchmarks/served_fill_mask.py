"""A pre-training export as users serve it: single sentences, one word masked, through `fill_mask`.

    .venv/bin/python -m benchmarks.served_fill_mask [--init saved_models/albert_act_english/1] \\
        [--conllu ../shared/data/ud_english_ewt/en_ewt-ud-test.conllu] [--sentences 500] [--seed 0]

For each of --sentences sentences of the CoNLL-U file (seeded choice), one word whose
normalized form is a single piece of the model's vocabulary (letters only; sentences of 4-60
words that fit the export's length) is replaced by
[MASK]; the sentence (its word forms joined by spaces) is sent alone to the SavedModel's
`fill_mask` signature, as a server would receive it. Printed:
- top-1 and top-5 accuracy on the masked word, each with a 95% bootstrap interval, beside
  the unigram baseline (always answering the most frequent masked word of this very set,
  an upper bound on any context-free guess of one word);
- mean iterations per token type ([CLS], [SEP], [MASK], other words) with 95% intervals
  over sentences, as served (padding excluded);
- milliseconds per query.
Writes results.json to --output_dir when given.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/served_fill_mask.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.served_fill_mask")

import argparse
import collections
import json
import glob
import os
import sys
import time

from albert_act.base import cli, entry, overlap, prose, text_files  # noqa: E402
from benchmarks import arguments  # noqa: E402

cli.quiet_start()  # TensorFlow and SentencePiece start quietly, as in the CLIs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UD_TEST = os.path.join(REPO, "..", "shared", "data", "ud_english_ewt", "en_ewt-ud-test.conllu")
TYPES = ("[CLS]", "[SEP]", "[MASK]", "other")


def masked_queries(sentences, tokenizer, count, seed, max_length):
    """[(text with one [MASK], target piece id, target word)]: one single-piece word per sentence,
    from sentences of 4-60 words whose pieces fit in `max_length` with [CLS] and [SEP], none of them written
    [MASK] (the query's one mask is the word asked). The text is
    the sentence as written (its SpaceAfter=No kept: "the book.", not "the book .")."""
    import numpy as np

    from pipelines import probing

    rng = np.random.default_rng(seed)
    queries = []
    for index in rng.permutation(len(sentences)):
        words = sentences[index]
        forms, glued = [form for form, *_ in words], probing.glued_words(words)
        if not 4 <= len(forms) <= 60 or len(tokenizer.encode([probing.sentence_text(words)])[0]) + 2 > max_length:
            continue
        if any(prose.masks_in(form) for form in forms):  # (a word written [MASK]: a second mask, read first)
            continue
        candidates = []
        for position, form in enumerate(forms):
            if form.isalpha() and not glued[position]:
                pieces = tokenizer.encode([form])[0]
                if len(pieces) == 1:
                    candidates.append((position, pieces[0]))
        if not candidates:
            continue
        position, piece = candidates[rng.integers(len(candidates))]
        masked = [("[MASK]",) + tuple(word[1:]) if k == position else word for k, word in enumerate(words)]
        queries.append((probing.sentence_text(masked), piece, forms[position]))
        if len(queries) == count:
            break
    return queries


def interval(values, weights=None, seed=0):
    """Mean of values (per sentence sums / counts when weights) and its 95% bootstrap interval."""
    import numpy as np

    from albert_act.analysis import confidence

    values = np.asarray(values, dtype=np.float64)
    weights = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64)
    counts = confidence.resample_counts(len(values), seed=seed)
    low, high = confidence.percentile_interval(confidence.resampled_ratios(values, weights, counts))
    return float(values.sum() / weights.sum()), (float(low), float(high))


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.served_fill_mask")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.served_fill_mask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default=os.path.join(REPO, "saved_models", "albert_act_english", "1"),
                        help="a pre-training SavedModel (albert_act.export, or a pre-training run's export)")
    parser.add_argument("--conllu", default=UD_TEST)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_dir", default=None, help="where results.json goes (default: printed only)")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"seed": "int:seed", "sentences": "int[2,1000000]",
                                            **dict.fromkeys(("init", "conllu", "output_dir"), "path")})
    for path in (args.init, args.conllu):
        if not os.path.exists(path):
            sys.exit(f"error: {path} not found" + (" (read as a name: * ? [ ] make no pattern here; give one file)"
                                                   if glob.has_magic(path) else ""))

    from albert_act.base.artifacts import check_output_dir
    from albert_act.io.exports import find_export, not_a_pretraining_export
    from albert_act.io.source import Source
    from pipelines import probing

    try:  # before the model loads: the model, the parses and the output dir
        if args.output_dir is not None:
            check_output_dir(args.output_dir, args.overwrite, ("results.json",), "the benchmark",
                             "an earlier served_fill_mask result")
        export = find_export(args.init)
        source = Source.open(export) if export else None
        if source is None or source.info["kind"] != "pretraining":
            raise not_a_pretraining_export(args.init, "fill_mask")
        tokenizer, max_length = source.tokenizer(), source.info["max_seq_length"]
        queries = masked_queries(list(probing.read_parsed(args.conllu, words_only=True)), tokenizer, args.sentences, args.seed,
                                 max_length)
        distinct = len({overlap.unit_key(text) for text, _, _ in queries})  # twice (or café, cafe) is one
        if distinct < 2:  # the intervals are over sentences: one alone gives an interval of no width
            raise ValueError(f"--conllu {args.conllu}: {distinct or 'no'} sentence to ask (the 95% intervals, over "
                             f"sentences, need 2 at least): one of 4-60 words, with an alphabetic word of one piece to "
                             f"mask, that fits the model's {max_length} positions")
        if len(queries) - distinct >= max(2, 0.1 * len(queries)):  # (one sentence written 60 times: not 50 of them)
            print(f"warning: --conllu {args.conllu}: {len(queries) - distinct} of the {len(queries)} sentences asked "
                  "repeat one asked before them: each is served and counted again, as if another sentence, and the "
                  "95% intervals are too narrow; leave the repeated sentences out of the file", file=sys.stderr)
        if len(queries) < args.sentences:  # the file (or the export's length) gives fewer: said, not hidden
            print(f"note: --sentences {args.sentences}, but only {len(queries)} sentences of {args.conllu} can be asked "
                  f"(4-60 words, an alphabetic word of one piece to mask, fitting the export's {max_length} positions): "
                  f"the table is over {len(queries)}" + (", and its 95% intervals are rough below 30 sentences"
                                                        if len(queries) < 30 else ""), file=sys.stderr)
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    return arguments.run(_serve, args, export, tokenizer, queries, output=args.output_dir)


def _serve(args, export, tokenizer, queries):
    import numpy as np
    import tensorflow as tf

    from albert_act.base import outputs
    from albert_act.io.exports import load_export

    fill_mask = load_export(export).signatures["fill_mask"]  # a damaged one: named

    hits1, hits5, seconds = [], [], []
    sums, counts = np.zeros((len(queries), len(TYPES))), np.zeros((len(queries), len(TYPES)))
    for row, (text, piece, _) in enumerate(queries):
        start = time.perf_counter()
        answer = fill_mask(tf.constant([text]))
        seconds.append(time.perf_counter() - start)
        top = answer["top_k_ids"].numpy()[0, 0]
        hits1.append(float(top[0] == piece))
        hits5.append(float(piece in top))
        iterations = answer["iterations"].numpy()[0]
        mask = answer["padding_mask"].numpy()[0] > 0
        tokens = answer["tokens"].numpy()[0]
        for position in np.flatnonzero(mask):
            token = tokens[position].decode()
            kind = token if token in TYPES[:3] else "other"
            sums[row, TYPES.index(kind)] += iterations[position]
            counts[row, TYPES.index(kind)] += 1

    targets = collections.Counter(piece for _, piece, _ in queries)
    most_frequent, frequency = targets.most_common(1)[0]
    result = {
        "init": export, "conllu": args.conllu, "queries": len(queries), "sentences_asked": args.sentences,
        "top1": interval(hits1), "top5": interval(hits5),
        "unigram_baseline": frequency / len(queries), "unigram_word": tokenizer.id_to_piece([most_frequent])[0],
        "iterations": {kind: interval(sums[:, i], counts[:, i]) for i, kind in enumerate(TYPES)},
        "ms_per_query": 1000 * float(np.median(seconds[1:] or seconds)),
    }
    asked = f" (of {args.sentences} asked)" if len(queries) < args.sentences else ""
    print(f"{len(queries)} single sentences{asked} of {os.path.basename(args.conllu)}, one word masked, served by {export}\n")
    print("| measure | value [95% CI] |\n|---|---|")
    for name in ("top1", "top5"):
        mean, (low, high) = result[name]
        print(f"| {name.replace('top', 'top-')} accuracy | {mean:.3f} [{low:.3f}, {high:.3f}] |")
    print(f"| unigram baseline (always {result['unigram_word']!r}) | {result['unigram_baseline']:.3f} |")
    for kind in TYPES:
        mean, (low, high) = result["iterations"][kind]
        print(f"| iterations, {kind} | {mean:.2f} [{low:.2f}, {high:.2f}] |")
    print(f"| median ms per query | {result['ms_per_query']:.1f} |")
    if args.output_dir:
        text_files.makedirs(args.output_dir)
        outputs.write_file(os.path.join(args.output_dir, "results.json"), json.dumps(result, indent=2).encode("utf-8"))
    return result


if __name__ == "__main__":
    entry.run(main)
