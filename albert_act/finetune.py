"""Fine-tune on a GLUE task or a probing task, from a pre-training run, an exported SavedModel or a
public ALBERT checkpoint (a Hugging Face dir, a google-research/albert TF1 checkpoint, a keras-hub preset).

    python -m albert_act.finetune --task rte --data_dir ../shared/data/glue/RTE --init runs/demo
    python -m albert_act.finetune --task tense --data_dir probing/ --init saved_models/albert_act_demo/1 --grid
    python -m albert_act.finetune --task rte --data_dir ../shared/data/glue/RTE --init models/albert-base-v2 --halting act

(models/albert-base-v2: a public checkpoint's folder on disk, e.g. Hugging Face's, downloaded before; nothing is
downloaded here.)

Classification (regression for STS-B) on the pooled output; GLUE's metrics on dev
(Matthews for CoLA, F1 + accuracy for MRPC/QQP, Pearson + Spearman for STS-B,
accuracy otherwise); the best dev epoch is kept (<output_dir>/classifier.weights.h5,
classifier.json, vocab.model) and exported as a raw-text SavedModel in
<output_dir>/export/1 (strings in, labels and per-token iterations out; ready for
TensorFlow Serving and `python -m albert_act.glue_submission`). --grid runs the paper's grid: learning
rate {5e-5, 3e-5, 2e-5} x batch {16, 32} x epochs {2, 3, 4} x --seeds.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: albert_act/finetune.py is part of albert-act: run it from the repository root as "
                     "python -m albert_act.finetune")

import contextlib
import glob
import json
import os
import sys

from albert_act.base import cli, entry, outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    cli.tensorflow_only("python -m albert_act.finetune")
    from albert_act.base import artifacts, settings
    from albert_act.train import finetuning_run
    from albert_act.train.earlier_run import EarlierRun
    from albert_act.train.finetuning_config import PAPER_GRID, FinetuneConfig, grid_sets_aside

    parser = cli.parser("finetune", __doc__)
    args = settings.parse_flags(parser, FinetuneConfig, argv, required=("task", "data_dir", "init"))
    if args.output_dir is None:
        args.output_dir = os.path.join(REPO, "runs", "finetune", args.task.lower())
    if args.grid:  # typed at their default's value, or from a --config file: the config cannot tell
        typed = {name: getattr(args, name) for name in PAPER_GRID if name in args.typed}
        default = {name: FinetuneConfig.__dataclass_fields__[name].default for name in PAPER_GRID}
        filed = {name: getattr(args, name) for name in PAPER_GRID
                 if name not in args.typed and getattr(args, name) != default[name]}
        if typed or filed:
            grid_from = None if "grid" in args.typed else args.config  # --grid typed, or in the --config file
            sys.exit(f"error: {grid_sets_aside(typed or filed, None if typed else args.config, grid_from)}")
    config = settings.config_from(FinetuneConfig, args)
    output_dir = config.output_dir
    explain = settings.explained(args)  # a path of a --config file: where it came from
    with cli.failures(output_dir, "nothing was written", "nothing was written; re-run the same command", explain=explain):
        _check_target(config, args)
    cli.stop_on_sigterm()
    earlier = EarlierRun(output_dir)  # a finished one --overwrite sets aside until it is replaced
    back = lambda message: message + (  # noqa: E731 (a failure's line, once a failure has put the earlier one back)
        f"; the earlier fine-tuning in {output_dir} is back in place, whole" if earlier.restored else "")
    with cli.failures(output_dir, lambda: back("files written whole before are intact: free space and re-run the same "
                                               "command"), _stopped(config, earlier),
                      refusals=(ValueError, FloatingPointError), explain=lambda message: back(explain(message))):
        with outputs.DirectoryLock(output_dir, "fine-tuning", "--output_dir", say=True):
            if earlier.recover():  # left by a process that ended at once: back, then judged
                _check_target(config, args)  # (without --overwrite: refused)
            with earlier if config.overwrite else contextlib.nullcontext():  # a finished one that --overwrite
                if config.grid:  # replaces: set aside until this one (a grid: all its points) has finished
                    summary = finetuning_run.grid_search(config)
                    result = summary["best"]
                    print(f"grid: {len(summary['runs'])} runs; best below")
                else:
                    result = finetuning_run.finetune(config)
    print(f"\n{result['task']} dev, {result['train_examples']} training examples:\n")
    print(finetuning_run.format_results(result))
    print(f"\nresults: {os.path.join(output_dir, artifacts.RESULTS)}\nSavedModel: {result['export']}")
    print(json.dumps({"best": result["best"]}))


def _stopped(config, earlier):
    """The stop line of a fine-tuning or grid, asked when the stop comes (an epoch may not have finished yet)."""
    from albert_act.base import artifacts
    from albert_act.train import finetuning_run

    def stopped():
        earlier.put_back()  # (here too: a stop inside a long native call ends the process at once after this)
        output_dir = config.output_dir
        if earlier.restored:
            return (f"the earlier fine-tuning in {output_dir} is back in place, whole (this run's part"
                    f"{', its finished grid points too,' if config.grid else ''} is dropped); re-run the same command "
                    "to replace it")
        if config.grid and os.path.exists(os.path.join(output_dir, artifacts.RESULTS)):
            return f"the grid had finished: its results are in {os.path.join(output_dir, artifacts.RESULTS)}"
        if config.grid:  # the finished points are kept, and the same command goes on from them
            data = finetuning_run.data_key(finetuning_run.load_task(config.task, config.data_dir))
            done = [point for point in config.grid_points() if finetuning_run.finished_point(point, data)]
            return (f"{len(done)} of {len(config.grid_points())} grid points finished (in "
                    f"{os.path.join(output_dir, artifacts.GRID)}); re-run the same command"
                    f"{' without --overwrite' if config.overwrite else ''} to go on from them")
        saved = glob.glob(os.path.join(glob.escape(output_dir), "**" if config.grid else "", artifacts.WEIGHTS),
                          recursive=True)  # (one run's own weights: not those of a grid's points there before)
        kept = f"{output_dir} keeps the best epoch saved so far" if saved else "no epoch had finished: no weights were saved"
        return f"{kept}; a fine-tuning run restarts from its --init: re-run the same command"

    return stopped


def _check_target(config, args):
    """Refuses an --output_dir that this fine-tuning or grid would wrongly replace (ValueError): one of a run's own
    finetune_config.json, given as --config from another folder (the run copied or moved: which is meant?), or a
    point of a grid (the grid's results would no longer describe it)."""
    from albert_act.base import artifacts
    from albert_act.train import finetuning_run

    if ("output_dir" in getattr(args, "from_file", {}) and "output_dir" not in args.typed
            and os.path.basename(args.config) == artifacts.FINETUNE_CONFIG
            and not artifacts.same_path(os.path.dirname(os.path.abspath(args.config)), config.output_dir)):
        relative = "" if os.path.isabs(args.from_file["output_dir"]) else ", relative to the current folder"
        raise ValueError(f"--config {args.config} is the record of a fine-tuning in {config.output_dir} (its "
                         f"output_dir{relative}), not of the folder it lies in (a copy, or a move?): give --output_dir, "
                         "the folder to write")
    grid_dir = artifacts.folder_holding(config.output_dir, artifacts.GRID)  # (a grid's point's)
    if grid_dir and os.path.exists(os.path.join(grid_dir, artifacts.FINETUNE_CONFIG)):
        raise ValueError(f"--output_dir {config.output_dir} is a point of the grid in {grid_dir}, whose "
                         f"{artifacts.RESULTS} and best export describe it: run the grid again (finetune --grid ... "
                         "--overwrite), or fine-tune into another --output_dir")
    artifacts.check_not_in_a_run(config.output_dir, "--output_dir")
    artifacts.check_finetuning_target(config.output_dir, config.overwrite, config.grid)
    if "://" not in config.init and artifacts.within(config.init, config.output_dir):
        raise ValueError(f"--init {config.init} is in the --output_dir {config.output_dir}, which this fine-tuning "
                         "writes (and --overwrite sets aside): copy it elsewhere first, or fine-tune into another "
                         "--output_dir")
    if config.grid and not config.overwrite:
        finetuning_run.check_grid_settings(config)


if __name__ == "__main__":
    entry.run(main)
