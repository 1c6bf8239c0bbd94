"""Held-out accuracy against updates: every kept checkpoint of a pre-training run, evaluated again.

    points = learning_curve("runs/english")   # [{"step", "mlm_accuracy", "mlm_accuracy_interval", ...}]

The run's own settings (`<model_dir>/config.json`) rebuild the model; each checkpoint's weights
are restored (not its optimizer's or input pipeline's state) and evaluated on the run's held-out
records, exactly as the run's final evaluation is. Keep checkpoints with `--keep_checkpoints`.
"""

import dataclasses
import os

import tensorflow as tf

from albert_act import distribution
from albert_act.base import artifacts
from albert_act.base.artifacts import checkpoints_on_disk
from albert_act.io.run_checkpoints import checkpoint_state
from albert_act.train.pretraining_run import PretrainConfig, Pretrainer, checkpoint_contents

KEPT = ("step", *artifacts.HELD_OUT_KEPT)  # what a run's held_out.jsonl keeps of each evaluation


def learning_curve(model_dir, eval_files=None, eval_batches=None, progress=False):
    """[{step, accuracies with intervals, baselines, mlm_loss, mean_iterations}] for every checkpoint
    kept in `model_dir`, oldest first. eval_files: default the run's own held-out files."""
    record = artifacts.read_json(os.path.join(model_dir, artifacts.CONFIG))
    config = dataclasses.replace(PretrainConfig.from_record(record), eval_batches=eval_batches)
    patterns = eval_files or config.eval_files
    files = sorted(path for pattern in patterns for path in tf.io.gfile.glob(pattern))
    if not files:
        raise ValueError(f"no evaluation records match {patterns}")
    directory = os.path.join(model_dir, artifacts.CHECKPOINTS)
    state = checkpoint_state(directory)  # (a damaged one: named, and the files on disk read)
    kept = list(state.all_model_checkpoint_paths) if state else [p for _, p in sorted(checkpoints_on_disk(directory).items())]
    if not kept:
        raise ValueError(f"{model_dir}: no checkpoints in {directory}")
    strategy, kind = distribution.make_strategy(config.strategy)
    trainer = Pretrainer(config.resolved(), strategy, kind)
    checkpoint = tf.train.Checkpoint(**checkpoint_contents(trainer.model, trainer.optimizer),
                                     **trainer.checkpoint_contents())
    points = []
    for path in kept:
        checkpoint.restore(path).expect_partial()  # the input pipeline's position is not needed
        result = trainer.evaluate(files)
        result["step"] = int(trainer.optimizer.iterations.numpy())
        points.append({**{k: result[k] for k in KEPT}, "mean_iterations": result["iterations"]["all"]["mean"]})
        if progress:
            print(f"update {result['step']}: MLM {result['mlm_accuracy']:.3f}, SOP {result['sop_accuracy']:.3f}, "
                  f"N {points[-1]['mean_iterations']:.2f}", flush=True)
    return points


def markdown(points):
    lines = ["| updates | MLM accuracy [95% CI] | SOP accuracy [95% CI] | mean N |", "|---|---|---|---|"]
    for p in points:
        (ml, mh), (sl, sh) = p["mlm_accuracy_interval"], p["sop_accuracy_interval"]
        lines.append(f"| {p['step']} | {p['mlm_accuracy']:.3f} [{ml:.3f}, {mh:.3f}] | "
                     f"{p['sop_accuracy']:.3f} [{sl:.3f}, {sh:.3f}] | {p['mean_iterations']:.2f} |")
    if points:
        lines.append(f"| baseline | {points[0]['mlm_unigram_baseline']:.3f} (most frequent token) | "
                     f"{points[0]['sop_majority_baseline']:.3f} (majority) | |")
    return "\n".join(lines)
