"""Build the GLUE server submission zip from fine-tuned SavedModels.

    python -m albert_act.glue_submission --models runs/finetune --data_dir glue_data --output runs/submission.zip

--models holds one folder per task (cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, rte,
wnli): a raw-text classifier export (`python -m albert_act.export --kind classifier`),
a TensorFlow Serving model base path (its highest version is used), or a fine-tuning
output dir (its export/). MNLI's model also predicts MNLI-mm and the diagnostic AX.
Only TensorFlow and tensorflow-text run the models: the exports hold their tokenizer.
Writes the 11 files the server expects (header `index<TAB>prediction`; labels as
the server spells them; STS-B a score in [0, 5]), checks each one against its
test file (every index once, label spelling, row count) and refuses an incomplete
zip unless --allow_partial, which then names the missing files on screen and in
the zip's comment.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: albert_act/glue_submission.py is part of albert-act: run it from the repository root as "
                     "python -m albert_act.glue_submission")

import os

from albert_act.base import artifacts, cli, entry, outputs, text_files

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    cli.tensorflow_only("python -m albert_act.glue_submission")
    parser = cli.parser("glue_submission", __doc__)
    parser.add_argument("--models", required=True, help="folder with one fine-tuned export per task")
    parser.add_argument("--data_dir", required=True, help="glue_data folder (CoLA/, SST-2/, ..., diagnostic/)")
    parser.add_argument("--output", default=os.path.join(REPO, "runs", "submission.zip"))
    parser.add_argument("--allow_partial", action="store_true", help="write a zip without the missing tasks")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output zip")
    args = cli.parse_checked(parser, argv, dict.fromkeys(("models", "data_dir", "output"), "path"))
    from albert_act.serve.submission import SUBMISSION, build_submission

    # A stop ends the process at once after its line, without the interpreter's teardown beside TensorFlow's
    # threads (a SavedModel loading or running), which can end in a segmentation fault.
    written = text_files.replaced_since(args.output)

    def stopped():  # the zip is renamed into place whole, as the last step: a stop may come just after it
        if written():
            return f"{args.output} was written whole, all its files validated, just before the stop"
        return f"no zip was written ({args.output}, if it exists, is the previous one); re-run the same command"

    with cli.exit_at_once_when_stopped(), cli.failures(args.output, "the previous one (if any) is intact", stopped):
        check_paths(args)
        result = build_submission(args.models, args.data_dir, args.output, args.allow_partial)
    print(f"\nwrote {args.output}: {len(result['written'])} of {len(SUBMISSION)} files, all validated")
    if result["missing"]:
        print("PARTIAL: the GLUE server will reject it until these are added:")
        for name, reason in result["missing"].items():
            print(f"  {name}: {reason}")


def check_paths(args):
    """Before any model loads: two folders that exist, and an --output that can be a .zip file."""
    for flag, path in (("--models", args.models), ("--data_dir", args.data_dir)):
        if os.path.isfile(path):
            raise ValueError(f"{flag} {path} is a file, not a folder")
        if not os.path.isdir(path):
            raise ValueError(f"{flag} {path}: no such folder")
    from albert_act.io.exports import find_export

    if find_export(args.models) is not None:
        raise ValueError(f"--models {args.models} is itself a model (an export or a fine-tuning dir); give the "
                         "folder that holds one per task, each named by its task (e.g. runs/finetune, holding rte/, "
                         "sst-2/, ...)")
    if os.path.isdir(args.output) or args.output.endswith(("/", os.sep)):  # (a folder, or one yet to be made)
        raise ValueError(f"--output {args.output} is a folder; give the zip file's path (e.g. "
                         f"{os.path.join(args.output, 'submission.zip')})")
    if not args.output.endswith(".zip"):
        raise ValueError(f"--output {args.output}: the GLUE server takes a .zip file (its name ending in .zip, in "
                         f"lower case); e.g. --output {os.path.splitext(args.output)[0]}.zip")
    if "://" in args.output:  # written beside it and renamed in: the name would make a local folder "gs:"
        raise ValueError(f"--output {args.output} {outputs.REMOTE_REFUSED}")
    outputs.check_dir_target(os.path.dirname(os.path.abspath(args.output)), "--output", holds_a_file=True)
    artifacts.check_not_in_a_run(args.output, "--output")
    outputs.hold(args.output, "--output", a_file=True)  # then whether it exists: no second process writes it meanwhile
    if os.path.exists(args.output) and not args.overwrite:
        raise ValueError(f"--output {args.output} exists; pass --overwrite to replace it, or choose another name")


if __name__ == "__main__":
    entry.run(main)
