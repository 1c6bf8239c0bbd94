"""The shipped English model's recipe: Wikipedia text -> vocabulary -> records -> `english` preset.

    .venv/bin/python -m benchmarks.english_small [--wikipedia ../shared/data] [--data_dir data_cache/english] \\
        [--model_dir runs/english] [--export_dir saved_models/albert_act_english/1] [pretrain flags ...]

1. Vocabulary: SentencePiece unigram, 8,000 pieces, on wiki_en_train.txt + wiki_en_more.txt
   (8.5 M words), with byte fallback and ASCII punctuation as pieces (the CLI's defaults);
   <data_dir>/vocab.model.
2. Records: ALBERT's whole-word n-gram masking with sentence-order prediction at 128 pieces,
   short_seq_prob 0.1, --dupe_factor maskings of every training document, and 10% single
   segments ([CLS] A [SEP], the shape of a served sentence) (<data_dir>/train); the held-out
   file wiki_en_valid.txt (documents never trained on) once, pairs only (<data_dir>/valid).
3. Pre-training: `python -m albert_act.pretrain --preset english` on those records, with
   the held-out records as its evaluation, then the raw-text SavedModel at --export_dir.
4. Learning curve: every kept checkpoint evaluated again on the held-out records
   (<model_dir>/learning_curve.md, .json and .png; `albert_act.train.learning_curve`).

Each step is skipped when its output is already there, and pre-training resumes from its last
checkpoint: re-running the same command after Ctrl-C (or a lost session) goes on where it
stopped. Flags after the known ones go to `albert_act.pretrain` (e.g. --steps 200 for a trial,
--override hidden_dim=128). The preset's 2,000 updates take about an hour on 2 CPU cores; the
shipped model's flags (its model card) took about 8 hours.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/english_small.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.english_small")

import argparse
import os
import sys

from albert_act.base import entry, text_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN_TEXT = ("wikipedia_en_sample/wiki_en_train.txt", "wikipedia_en_more/wiki_en_more.txt")
VALID_TEXT = "wikipedia_en_sample/wiki_en_valid.txt"
VOCABULARY_SIZE = 8000
MAX_SEQ_LENGTH = 128
SHORT_SEQ_PROB = 0.1  # ALBERT's
SINGLE_SEGMENT_PROB = 0.1  # training records only: held-out SOP accuracy is measured on pairs


def build_vocabulary(args):
    path = os.path.join(args.data_dir, "vocab.model")
    if os.path.exists(path):
        print(f"vocabulary: {path} (already built)")
        return path
    from pipelines import train_tokenizer

    text_files.makedirs(args.data_dir)
    train_tokenizer.main(["--input", *args.train_text, "--output", os.path.join(args.data_dir, "vocab"),
                          "--vocab_size", str(VOCABULARY_SIZE)])
    return path


def build_records(args, vocab, name, inputs, dupe_factor):
    output_dir = os.path.join(args.data_dir, name)
    if os.path.exists(os.path.join(output_dir, "stats.json")):  # written last: the shards are complete
        print(f"records: {output_dir} (already built)")
        return os.path.join(output_dir, "train-*.tfrecord")
    from pipelines import create_pretraining_data

    create_pretraining_data.main(["--input", *inputs, "--vocab", vocab, "--output_dir", output_dir,
                                  "--max_seq_length", str(MAX_SEQ_LENGTH), "--short_seq_prob", str(SHORT_SEQ_PROB),
                                  "--dupe_factor", str(dupe_factor), "--eval_fraction", "0",
                                  "--single_segment_prob", str(SINGLE_SEGMENT_PROB if name == "train" else 0.0),
                                  "--num_shards", "8" if name == "train" else "1"])
    return os.path.join(output_dir, "train-*.tfrecord")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.english_small", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wikipedia", default=os.path.join(REPO, "..", "shared", "data"),
                        help="folder holding wikipedia_en_sample/ and wikipedia_en_more/")
    parser.add_argument("--data_dir", default=os.path.join(REPO, "data_cache", "english"))
    parser.add_argument("--dupe_factor", type=int, default=3, help="maskings of each training document")
    parser.add_argument("--model_dir", default=os.path.join(REPO, "runs", "english"))
    parser.add_argument("--export_dir", default=os.path.join(REPO, "saved_models", "albert_act_english", "1"))
    from albert_act.base import cli, outputs

    cli.quiet_start(argv)  # as albert_act.pretrain: TensorFlow loads quietly unless --verbose
    args, pretrain_flags = parser.parse_known_args(argv)
    cli.check_flags(args, {"dupe_factor": "int[1,100]", **dict.fromkeys(
        ("wikipedia", "data_dir", "model_dir", "export_dir"), "path")})
    args.train_text = [os.path.join(args.wikipedia, name) for name in TRAIN_TEXT]
    valid_text = os.path.join(args.wikipedia, VALID_TEXT)
    missing = [path for path in [*args.train_text, valid_text] if not os.path.exists(path)]
    if missing:
        sys.exit(f"error: {missing[0]} not found (--wikipedia names the folder holding wikipedia_en_sample/ "
                 "and wikipedia_en_more/)")
    cli.stop_on_interrupt()  # Ctrl-C while the data is built: one line (the finished steps are kept)
    cli.stop_on_sigterm()
    kept = "the steps finished before are kept"
    with cli.failures(args.data_dir, kept, f"{kept}; re-run the same command to go on from there"):
        outputs.check_dir_target(args.data_dir, "--data_dir")
        check_pretrain_flags(pretrain_argv(args, "TRAIN", "VALID", "VOCAB", pretrain_flags))  # before minutes of data
        vocab = build_vocabulary(args)
        train = build_records(args, vocab, "train", args.train_text, args.dupe_factor)
        valid = build_records(args, vocab, "valid", [valid_text], 1)
    from albert_act import pretrain

    pretrain.main(pretrain_argv(args, train, valid, vocab, pretrain_flags))
    write_learning_curve(args.model_dir)


def pretrain_argv(args, train, valid, vocab, pretrain_flags):
    """`albert_act.pretrain`'s flags: the english preset on these records, then the flags given."""
    return ["--preset", "english", "--train_files", train, "--eval_files", valid, "--vocab", vocab,
            "--model_dir", args.model_dir, "--export_dir", args.export_dir, "--keep_checkpoints", "20",
            "--checkpoint_every", "200", *pretrain_flags]


def check_pretrain_flags(argv):
    """The flags that go to `albert_act.pretrain`, read and their values checked before the data is
    built: a typo or a bad value ends the command at once, not after minutes of data building."""
    from albert_act import pretrain
    from albert_act.base import settings
    from albert_act.train.pretraining_config import PretrainConfig

    try:
        args = pretrain.parse_args(argv)
    except SystemExit as error:
        if error.code == 2:  # argparse's usage and error, for a flag neither command knows
            sys.exit("error: flags after english_small's own (--wikipedia, --data_dir, --dupe_factor, --model_dir, "
                     "--export_dir) go to python -m albert_act.pretrain, which refused the one above; its --help "
                     "lists them")
        raise
    settings.config_from(PretrainConfig, args)


def write_learning_curve(model_dir):
    """<model_dir>/learning_curve.md, .json and .png: from the run's own held-out evaluations
    (held_out.jsonl, written with --eval_every) where it has them, else every kept checkpoint
    evaluated again."""
    import json

    from albert_act.analysis import plots
    from albert_act.train import learning_curve

    held_out = os.path.join(model_dir, "held_out.jsonl")
    if os.path.exists(held_out):
        print(f"\nlearning curve: {held_out}", flush=True)
        with open(held_out) as f:
            points = [json.loads(line) for line in f if line.strip()]
    else:
        print("\nlearning curve: every kept checkpoint on the held-out records", flush=True)
        points = learning_curve.learning_curve(model_dir, progress=True)
    table = learning_curve.markdown(points)
    print(table)
    with open(os.path.join(model_dir, "learning_curve.json"), "w") as f:
        json.dump(points, f, indent=2)
    with open(os.path.join(model_dir, "learning_curve.md"), "w") as f:
        f.write(table + "\n")
    plots.plot_learning_curve(points, os.path.join(model_dir, "learning_curve.png"))


if __name__ == "__main__":
    entry.run(main)
