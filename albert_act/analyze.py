"""Depth analyses of a trained model: tables (Markdown), numbers (JSON) and plots (PNG).

    python -m albert_act.analyze token-types  --init runs/demo
    python -m albert_act.analyze dependencies --init runs/demo --parsed '../shared/data/ud_english_ewt/*.conllu'
    python -m albert_act.analyze fixed-point  --init runs/demo
    python -m albert_act.analyze sentences    --init runs/demo --text my_sentences.txt
    python -m albert_act.analyze held-out     --init runs/demo
    python -m albert_act.analyze difficulty   --init runs/demo --reference runs/demo_fixed
    python -m albert_act.analyze report       --init runs/demo          # all but sentences and difficulty

--init: a pre-training run dir or an exported SavedModel (pre-training or a fine-tuned
probing model). held-out, token-types and fixed-point read pre-training TFRecords (--records;
default: the run's held-out shard). dependencies reads CoNLL-U / CoNLL-X / PTB .dp
files (--parsed; default: gold parses of the embedded corpus, generated on the spot).
sentences reads plain text, one sentence per line (--text), each asked alone as a server is.
difficulty sets each token's depth against its surprisal under --reference (a pre-training model
of the same vocabulary, e.g. fixed-depth ALBERT trained on the same records), on TFRecords.
Outputs go to --output_dir (default runs/analysis/<mode>, so that modes do not overwrite each other).
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: albert_act/analyze.py is part of albert-act: run it from the repository root as "
                     "python -m albert_act.analyze")

import os
import sys

from albert_act.base import cli, entry, text_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The optional inputs each mode reads: a flag of `MODE_FLAGS` given to a mode that does not read it is
# refused (the other flags, `init`, `vocab`, `output_dir` and the machine's, every mode reads).
MODE_FLAGS = ("records", "max_batches", "parsed", "text", "reference", "documents", "keep_subtypes")
TFRECORDS = {"records", "max_batches"}
READS = {"token-types": TFRECORDS, "fixed-point": TFRECORDS, "held-out": TFRECORDS, "sentences": {"text"},
         "difficulty": TFRECORDS | {"reference"},
         "dependencies": {"parsed", "documents", "keep_subtypes"},
         "report": TFRECORDS | {"parsed", "documents", "keep_subtypes"}}


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    cli.tensorflow_only("python -m albert_act.analyze")
    from albert_act import distribution
    from albert_act.analysis import report
    from albert_act.train.pretrainer import evaluate_model

    parser = cli.parser("analyze", __doc__)
    parser.add_argument("mode", choices=report.MODES)
    parser.add_argument("--init", required=True, help="pre-training run dir or exported SavedModel")
    parser.add_argument("--vocab", default=None, help="default: vocab.model inside --init")
    parser.add_argument("--records", nargs="+", default=None, help="pre-training TFRecords (default: the run's eval shard)")
    parser.add_argument("--parsed", nargs="+", default=None, help="CoNLL-U / CoNLL-X / .dp files or globs")
    parser.add_argument("--text", default=None, help="sentences mode: a plain-text file, one sentence per line")
    parser.add_argument("--reference", default=None,
                        help="difficulty mode: the pre-training model (run dir or export) whose surprisal depth is set against")
    parser.add_argument("--documents", type=int, default=500, help="embedded-corpus documents when no --parsed")
    parser.add_argument("--keep_subtypes", action="store_true", help="keep nmod:poss apart from nmod")
    parser.add_argument("--max_batches", type=int, default=None, help="limit the TFRecord batches read")
    parser.add_argument("--output_dir", default=None, help="default: runs/analysis/<mode>")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier analysis in --output_dir")
    distribution.add_arguments(parser)
    paths = ("init", "vocab", "records", "parsed", "text", "reference", "output_dir")
    args = cli.parse_checked(parser, argv, {"documents": "int[1,100000]", "max_batches": "int>=1",
                                            **dict.fromkeys(paths, "path")})
    unread = [f"--{name}" for name in MODE_FLAGS
              if getattr(args, name) != parser.get_default(name) and name not in READS[args.mode]]
    if unread:
        sys.exit(f"error: the {args.mode} analysis does not read {', '.join(unread)} (it reads "
                 f"{', '.join('--' + n for n in sorted(READS[args.mode])) or 'only --init'})")
    if args.parsed and args.documents != parser.get_default("documents"):
        sys.exit(f"error: --documents {args.documents} sizes the embedded corpus, which --parsed replaces: give one")
    args.output_dir = args.output_dir or os.path.join(REPO, "runs", "analysis", args.mode)
    # A failed write: the staging dir goes; the previous analysis stays.
    moved_in = text_files.replaced_since(args.output_dir)  # the analysis is moved into place whole, or not at all
    with cli.failures("the analysis", "the previous one (if any) is intact",
                      lambda: f"the {args.mode} analysis is in {args.output_dir}, written whole just before the stop"
                      if moved_in() else f"nothing was written: the {args.mode} analysis did not finish (an earlier "
                      f"one in {args.output_dir}, if any, is intact); re-run the same command"):
        report.check_output_dir(args.output_dir, args.overwrite)
        sections = report.run_analyses(args.mode, args.init, args.output_dir, args.vocab, args.records, args.parsed,
                                       args.documents, args.keep_subtypes, args.max_batches, args.strategy,
                                       args.precision, args.jit_compile, evaluate_model, args.text,
                                       args.reference)
    for title, markdown, _ in sections:
        print(f"\n## {title}\n\n{markdown}")
    target = "report.md" if args.mode == "report" else "*.md, *.json, *.png"
    print(f"\nwritten to {args.output_dir} ({target})")


if __name__ == "__main__":
    entry.run(main)
