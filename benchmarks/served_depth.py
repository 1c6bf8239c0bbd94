"""Why a served sentence runs a different depth than the held-out pairs: the same sequences, re-shaped.

    .venv/bin/python -m benchmarks.served_depth [--init saved_models/albert_act_demo/1] \\
        [--records 'data_cache/demo/records/eval-*.tfrecord'] [--max_sequences 2000]

Pre-training shows the model pairs of segments with 15% of the pieces masked; a server
sends it one sentence, one segment, with at most a [MASK] or two. The held-out records
(by default the quick start's, with its export) are run through the SavedModel's
`encoder_ids` signature in five shapes, each one step from the last toward a served
sentence, so that each step's change of depth can be read off:
  1. the pairs as recorded (masked, two segments);
  2. the same pairs with every masked position given back its original piece;
  3. the same pieces as one segment (segment ids all 0, [SEP]s kept);
  4. two segments again, each cut to its first --short pieces;
  5. the first segment alone, cut to its first 2 x --short pieces: a served sentence.
Printed per shape: mean length, the mean iterations N of the ordinary pieces (not [CLS] or
[SEP]) and of [CLS], with 95% bootstrap intervals over sequences, and the share of ordinary
pieces that run 2 or more iterations. Writes results.json to --output_dir when given.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/served_depth.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.served_depth")

import argparse
import json
import os

from albert_act.base import cli, entry, outputs, text_files  # noqa: E402
from benchmarks import arguments  # noqa: E402

cli.quiet_start()  # TensorFlow and SentencePiece start quietly, as in the CLIs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPES = ("pairs as recorded (15% masked)", "pairs, masks given back their pieces",
          "the same pieces as one segment", "pairs, each segment cut to --short pieces",
          "first segment alone, cut to 2 x --short pieces")


def shapes(token_ids, segment_ids, originals, short):
    """{shape: (token_ids, segment_ids)} of one unpadded record, in `SHAPES` order.

    token_ids, segment_ids: int arrays, [CLS] A [SEP] B [SEP]; originals: token_ids with every
    masked position given back its original piece. Cut segments keep their [SEP]."""
    import numpy as np

    from pipelines.tokenizer import CLS_ID, SEP_ID

    token_ids, segment_ids, originals = (np.asarray(a, np.int32) for a in (token_ids, segment_ids, originals))
    separators = np.flatnonzero(token_ids == SEP_ID)
    if token_ids[0] != CLS_ID or len(separators) != 2 or separators[1] != len(token_ids) - 1:
        raise ValueError(f"not a [CLS] A [SEP] B [SEP] record: {token_ids.tolist()}")
    first, second = originals[1:separators[0]], originals[separators[0] + 1:-1]

    def pack(*segments):
        ids = [CLS_ID]
        segs = [0]
        for index, pieces in enumerate(segments):
            ids += list(pieces) + [SEP_ID]
            segs += [index] * (len(pieces) + 1)
        return np.array(ids, np.int32), np.array(segs, np.int32)

    return dict(zip(SHAPES, (
        (token_ids, segment_ids),
        (originals, segment_ids),
        (originals, np.zeros_like(segment_ids)),
        pack(first[:short], second[:short]),
        pack(first[:2 * short]),
    )))


def read_records(files, max_sequences, max_length):
    """[(token_ids, segment_ids, originals)] of the first max_sequences records, unpadded.
    Records longer than max_length (the model's) are refused, naming the file."""
    from pipelines.pretraining_dataset import guarded, make_pretraining_dataset

    rows = []
    for inputs, labels in guarded(make_pretraining_dataset(files, 64, training=False, max_length=max_length), files):
        ids, segs = inputs["token_ids"].numpy(), inputs["segment_ids"].numpy()
        lengths = inputs["padding_mask"].numpy().sum(1)
        positions, pieces = inputs["masked_positions"].numpy(), labels["masked_lm_ids"].numpy()
        weights = labels["masked_lm_weights"].numpy()
        for row in range(len(ids)):
            length = int(lengths[row])
            originals = ids[row, :length].copy()
            selected = weights[row] > 0
            originals[positions[row, selected]] = pieces[row, selected]
            rows.append((ids[row, :length], segs[row, :length], originals))
            if len(rows) == max_sequences:
                return rows
    return rows


def depth_of(encode_ids, sequences, batch_size=64):
    """Per sequence: (length, sum and count of ordinary pieces' N, pieces with N >= 2, [CLS] N)."""
    import numpy as np
    import tensorflow as tf

    from pipelines.tokenizer import CLS_ID, SEP_ID

    out = []
    for start in range(0, len(sequences), batch_size):
        chunk = sequences[start:start + batch_size]
        width = max(len(ids) for ids, _ in chunk)
        arrays = np.zeros((3, len(chunk), width), np.int32)
        for row, (ids, segs) in enumerate(chunk):
            arrays[0, row, :len(ids)], arrays[1, row, :len(ids)], arrays[2, row, :len(ids)] = ids, segs, 1
        iterations = encode_ids(token_ids=tf.constant(arrays[0]), segment_ids=tf.constant(arrays[1]),
                                padding_mask=tf.constant(arrays[2]))["iterations"].numpy()
        for row, (ids, _) in enumerate(chunk):
            n = iterations[row, :len(ids)]
            ordinary = n[(ids != CLS_ID) & (ids != SEP_ID)]
            out.append((len(ids), ordinary.sum(), len(ordinary), (ordinary >= 2).sum(), n[0]))
    return np.array(out, np.float64)


def summarize(per_sequence, seed=0):
    """Means with 95% bootstrap intervals over sequences, from `depth_of`'s rows."""
    from benchmarks.served_fill_mask import interval

    lengths, sums, pieces, deep, cls = per_sequence.T
    return {"sequences": len(per_sequence), "mean_length": float(lengths.mean()),
            "ordinary": interval(sums, pieces, seed), "share_2_or_more": float(deep.sum() / pieces.sum()),
            "cls": interval(cls, seed=seed)}


OUTPUT_FILES = {"results.json"}


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.served_depth")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.served_depth", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default=os.path.join(REPO, "saved_models", "albert_act_demo", "1"),
                        help="a pre-training SavedModel (the quick start writes this default)")
    parser.add_argument("--records", default=os.path.join(REPO, "data_cache", "demo", "records", "eval-*.tfrecord"),
                        help="held-out pre-training TFRecords (glob) made with the model's vocabulary")
    parser.add_argument("--max_sequences", type=int, default=2000)
    parser.add_argument("--short", type=int, default=8, help="pieces kept per segment in shape 4 (twice that in 5)")
    parser.add_argument("--output_dir", default=None, help="where results.json goes (default: printed only)")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"max_sequences": "int[2,100000000]", "short": "int>=1",
                                            **dict.fromkeys(("init", "records", "output_dir"), "path")})
    return arguments.run(_measure, args, output=args.output_dir or "the table")


def _measure(args):
    """The five shapes' depths, printed (and written to --output_dir); ValueError for a bad input."""
    from albert_act.analysis.report import check_not_trained_on, check_output_dir
    from albert_act.io.exports import find_export, load_export, not_a_pretraining_export
    from albert_act.io.source import Source
    from pipelines.pretraining_dataset import check_masked, check_records, non_empty, record_files
    from pipelines.record_vocabulary import check_records_vocabulary

    if args.output_dir:
        check_output_dir(args.output_dir, args.overwrite, OUTPUT_FILES, "the benchmark", "an earlier served_depth result")
    if not os.path.exists(args.init):
        default = args.init == os.path.join(REPO, "saved_models", "albert_act_demo", "1")
        raise ValueError(f"--init {args.init}: no such export" + (" (the default is written by the README's quick "
                                                                   "start)" if default else ""))
    files = record_files(args.records, "held-out TFRecord")
    export = find_export(args.init)
    source = Source.open(export) if export else None
    if source is None or source.info["kind"] != "pretraining":
        raise not_a_pretraining_export(args.init, "encoder_ids")
    backbone = source.info["backbone"]
    if 2 * args.short >= backbone["max_sequence_length"]:  # (shapes 4 and 5 would be 2 and 3, uncut, said as cut)
        raise ValueError(f"--short {args.short} cuts nothing of a {backbone['max_sequence_length']}-position model's "
                         f"segments: give --short below {backbone['max_sequence_length'] // 2}")
    # training records or another vocabulary (as analyze refuses them), too long, only empty shards: named
    check_not_trained_on(source, files)
    holding = non_empty(files)  # (an empty shard has nothing to check; only empty shards: named below)
    for path in files:
        if path in holding:  # (repeated records too)
            check_records(path, backbone["vocabulary_size"], backbone["max_sequence_length"])
        check_records_vocabulary(path, source.tokenizer().model_proto, f"{export}'s vocabulary")
    check_masked(holding or files[:1], "the depth of the [MASK]s served would be of nothing")
    records = read_records(files, args.max_sequences, backbone["max_sequence_length"])
    if not records:
        raise ValueError(f"no records in {args.records}")
    largest = max(int(max(ids.max(), originals.max())) for ids, _, originals in records)
    if largest >= backbone["vocabulary_size"]:
        raise ValueError(f"{args.records} holds id {largest}, outside the model's vocabulary of "
                         f"{backbone['vocabulary_size']}: records made with another vocabulary")
    try:
        shaped = [shapes(*record, args.short) for record in records]
    except ValueError as error:  # records of another kind (e.g. single segments)
        raise ValueError(f"{args.records}: {error}") from None
    if len({tuple(ids) for ids, _, _ in records}) < 2:  # the intervals are over sequences: one (twice) gives no width
        raise ValueError(f"{args.records} holds 1 distinct record: the 95% intervals, over sequences, need 2 at least")
    encode_ids = load_export(export).signatures["encoder_ids"]  # a damaged one: its file named

    results = {name: summarize(depth_of(encode_ids, [row[name] for row in shaped])) for name in SHAPES}
    max_iterations = backbone["max_iterations"]
    print(f"{len(records)} held-out sequences of {args.records}, through {export}'s encoder_ids "
          f"(N of {max_iterations}; --short {args.short})\n")
    print("| shape | mean length | ordinary pieces' N [95% CI] | share N >= 2 | [CLS] N [95% CI] |")
    print("|---|---|---|---|---|")
    for index, (name, r) in enumerate(results.items(), 1):
        (mean, (low, high)), (cls, (cls_low, cls_high)) = r["ordinary"], r["cls"]
        print(f"| {index}. {name} | {r['mean_length']:.1f} | {mean:.2f} [{low:.2f}, {high:.2f}] | "
              f"{r['share_2_or_more']:.2f} | {cls:.2f} [{cls_low:.2f}, {cls_high:.2f}] |")
    if args.output_dir:
        text_files.makedirs(args.output_dir)
        outputs.write_file(os.path.join(args.output_dir, "results.json"), json.dumps(
            {"init": export, "records": files, "max_iterations": max_iterations, "short": args.short,
             "shapes": results}, indent=1).encode("utf-8"))
    return results


if __name__ == "__main__":
    entry.run(main)
