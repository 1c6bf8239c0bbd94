"""Pre-training, the job: checks, strategy, (resumed) training, checkpoints, TensorBoard, evaluation
and the export, under any tf.distribute strategy.

Read top to bottom: `run_pretraining` (one run per model dir; the other workers of a multi-worker
job write to scratch), `_run` (the job's parts in order), `_resume` (the input stream and the
newest intact checkpoint, or a warm start), `_train` (the update loop), `_finish` (evaluation and
export). The parts live beside it: `pretraining_config` (settings and their checks),
`pretrainer` (the step and tau), `input_streams` (the input's saved positions),
`pretraining_summaries`; the run's checkpoints are `albert_act.io.run_checkpoints`'.
"""

import math
import os
import shutil
import tempfile
import time

import tensorflow as tf

from albert_act import distribution
from albert_act.base import artifacts, bars, outputs, text_files
from albert_act.analysis import token_types
from albert_act.io.run_checkpoints import (checkpoint_contents, checkpoint_managers, checkpoint_update,
                                           restore_latest_intact, save_checkpoint)
from albert_act.io.source import HALTING_UNIT, INIT_FRESH, Source
from albert_act.train.input_streams import InputStreams
from albert_act.train.pretrainer import AUTO_SHARE, Pretrainer
from albert_act.train.pretraining_config import PretrainConfig, config_record  # noqa: F401  (the API)
from albert_act.train.pretraining_preflight import check_export_dir, preflight
from albert_act.train.pretraining_summaries import (depth_line, depth_spread, held_out_curve, one_depth_warning,
                                                    summarize, write_summaries, write_token_type_image)
from pipelines.pretraining_dataset import corrupt_file, misshapen, parse_examples, record_shapes


def run_pretraining(config, progress=True):
    """The whole job: checks, strategy, (resumed) training, checkpoints, TensorBoard, evaluation,
    and the SavedModel when `config.export_dir` is set (it needs `config.vocab`).

    Returns the final held-out evaluation (JSON-ready; also <model_dir>/evaluation.json):
    losses, accuracies with intervals and baselines, `iterations` (Table 1), `differences`,
    `table` (Markdown), `step`, `model_dir`, and `export` when one was written. The trained
    model is in the run dir: `Source.open(model_dir).pretraining_model()` (albert_act.io.source).
    """
    workers, task_type, index, chief = distribution.cluster_task()
    if not chief:  # another worker of a multi-worker job: it reads the chief's run, writes to scratch
        scratch = tempfile.mkdtemp(prefix=f"albert_act_{task_type}{index}_")
        try:
            with outputs.DirectoryLock(scratch, "pre-training worker"):
                return _run(config, progress, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    with outputs.DirectoryLock(config.model_dir, "pre-training run", "--model_dir", say=progress):
        return _run(config, progress, config.model_dir)


def _run(config, progress, write_dir):
    """The job; `write_dir` is the model dir, or a scratch dir for a multi-worker job's non-chief
    workers (which take part in every step and checkpoint save, and restore from the chief's)."""
    source = Source.open(config.init_from) if config.init_from else None  # a warm start's
    config = config.resolved(source)
    if source is not None and source.info["backbone"].get("share_weights", True) and not config.share_weights:
        raise ValueError(f"--init_from {config.init_from} has one layer shared by its iterations, and --unshared "
                         f"asks {config.backbone_config()['max_iterations']} layers of their own, which it does not "
                         "hold: drop --unshared (or start the unshared run from scratch)")
    strategy, kind = distribution.make_strategy(config.strategy)
    train_files, eval_files = preflight(config, strategy.num_replicas_in_sync)
    if config.deterministic:
        tf.config.experimental.enable_op_determinism()
    trainer = Pretrainer(config, strategy, kind)
    streams, manager, restored = _resume(config, trainer, train_files, write_dir, progress, source)
    # Written only once the run is known to go on: a refused resume leaves the run dir as it was.
    text_files.makedirs(write_dir)
    artifacts.write_json(os.path.join(write_dir, artifacts.CONFIG),  # with what its records hold, for a resume
                         {**config_record(config), artifacts.TRAIN_SHARDS: artifacts.shard_fingerprints(train_files),
                          artifacts.EVAL_SHARDS: artifacts.shard_fingerprints(eval_files)})
    if config.vocab:  # the run dir is self-contained: fine-tuning finds the vocabulary there
        text_files.write_bytes(os.path.join(write_dir, artifacts.VOCAB), text_files.read_bytes(config.vocab))  # (read
        # whole first, written beside and renamed: --vocab <the run's own copy>, or a link to it, is not emptied)
    if progress:
        resumed = f", resumed from {restored}" if restored else ""
        print(f"pre-training {config.preset} ({config.halting}, {'shared' if config.share_weights else 'unshared'}) "
              f"on {kind} x{strategy.num_replicas_in_sync}, {trainer.precision}, {trainer.batch_line()}"
              f"{_streams_note(streams)}{resumed}")
        if restored and checkpoint_update(restored) >= config.steps:  # (a finished run, given again)
            print(f"note: {restored} is the run's last update ({config.steps:,}): nothing is left to train, so the "
                  "updates' settings (--eval_every, --checkpoint_every, --log_every) change nothing; it is evaluated "
                  f"(and exported) again; to train on, start a new run from its weights (--init_from {config.model_dir} "
                  "--model_dir <a new dir> --steps N)")
            curve = os.path.join(config.model_dir, artifacts.HELD_OUT_CURVE)
            if config.eval_every and config.eval_every < config.steps and not tf.io.gfile.exists(curve):
                print(f"note: {curve} is gone: it will hold this evaluation alone; the run's earlier ones (every "
                      f"{config.eval_every:,} update{'s' * (config.eval_every > 1)}) are in its TensorBoard events under {artifacts.EVAL_EVENTS}/")
    _train(config, trainer, streams, manager, (train_files, eval_files), write_dir, progress)
    return _finish(config, trainer, eval_files, write_dir, chief=write_dir == config.model_dir)


def _resume(config, trainer, train_files, write_dir, progress, source):
    """(input streams, checkpoint manager, the checkpoint restored or None): the newest intact
    checkpoint restored, or on a fresh run the warm start from `source` (`config.init_from`).

    The input iterators yield batches of serialized records and their positions are saved with
    every checkpoint (shuffle buffer included; `InputStreams`), so a resumed run continues with
    exactly the next batch, reading nothing twice. A worker of a multi-worker job reads its own
    stream, and restores the chief's checkpoint and its own stream's position."""
    streams = InputStreams(config, train_files, distribution.input_worker(trainer.strategy))
    checkpoint = tf.train.Checkpoint(**checkpoint_contents(trainer.model, trainer.optimizer),
                                     **streams.checkpoint_contents(), **trainer.checkpoint_contents())
    manager, chiefs = checkpoint_managers(config, checkpoint, write_dir)
    restored = restore_latest_intact(checkpoint, chiefs, usable=streams.missing)
    if restored:
        streams.restore(checkpoint_update(restored))
    if source is not None and not restored:
        fresh = source.load_into(trainer.model, INIT_FRESH)
        if progress:
            new = [prefix.rstrip("/") for prefix in INIT_FRESH if any(p.startswith(prefix) for p in fresh)]
            bias = f" (halting bias {trainer.backbone.halting_bias_initializer:g})" if HALTING_UNIT[:-1] in new else ""
            print(f"started from {config.init_from}; new: {', '.join(new) or 'none'}{bias}")
            note = halting_changes(config.init_from, source.info.get("backbone") or {}, trainer.backbone.encoder)
            if note:
                print(note, flush=True)
    return streams, manager, restored


def halting_changes(init_from, before, encoder):
    """A note where the model warm-started from (`init_from`, its backbone settings `before`) halted otherwise than the
    `encoder` of this run will (its halting_epsilon or max_iterations: the preset's, not the weights'), or None."""
    changed = [f"{key} {before[key]} there, {getattr(encoder, key)} here" for key in ("halting_epsilon", "max_iterations")
               if before.get(key) is not None and before[key] != getattr(encoder, key)]
    return (f"note: {init_from} was trained with other halting settings ({'; '.join(changed)}): this run halts by its "
            "own (--override KEY=VALUE keeps the other's)") if changed else None


def _streams_note(streams):
    if streams.count == 1:
        return ""
    read = f"stream {streams.own[0]}" if len(streams.own) == 1 else f"all {streams.count}"
    return f", input in {streams.count} streams (reading {read})"


def _train(config, trainer, streams, manager, files, write_dir, progress):
    """Updates until `config.steps`: each worker parses the rows it read of the global batch; a
    summary every `log_every` updates, a held-out evaluation every `eval_every`, a checkpoint every
    `checkpoint_every` and at the end. files: (train files, eval files)."""
    train_files, eval_files = files
    shapes = record_shapes(train_files[0])
    train_step = trainer.make_train_step(parse=lambda serialized: parse_examples(serialized, *shapes))
    writer = tf.summary.create_file_writer(os.path.join(write_dir, artifacts.TRAIN_EVENTS))
    shown = ["loss", "mlm_acc", "sop_acc", "iterations"] + (["overflows"] if config.execution == "bucket" else [])
    bar = bars.progress_bar(config.steps, shown) if progress else None
    step = int(trainer.optimizer.iterations.numpy())
    window, window_start = None, time.perf_counter()
    while step < config.steps:
        sums = _update(train_step, streams.iterators, step, train_files, manager)
        tau = float(trainer.tau_at(step))  # what this update used
        step += 1
        result = summarize(sums, tau, trainer.objective.kl_weight)
        _calibrate(trainer, step, result, progress)
        trainer.steer_tau(step, result)
        if not math.isfinite(result["loss"]):
            raise FloatingPointError(
                f"non-finite loss at step {step} (mlm {result['mlm_loss']}, sop {result['sop_loss']}, "
                f"ponder {result['ponder_cost']}); stopped without saving. Last good checkpoint: "
                f"{manager.latest_checkpoint}")
        window = sums if window is None else {k: window[k] + sums[k] for k in window}
        if bar is not None:
            values = [("loss", result["loss"]), ("mlm_acc", result["mlm_accuracy"]),
                      ("sop_acc", result["sop_accuracy"]), ("iterations", result["iterations"]["all"]["mean"]),
                      ("overflows", result["overflows"])]
            bar.update(step, [(k, v) for k, v in values if k in shown])
        if step % config.log_every == 0 or step == config.steps:
            logged = summarize(window, tau, trainer.objective.kl_weight)
            logged["gradient_norm"] = trainer.mean_gradient_norm(window)
            write_summaries(writer, step, logged, {
                "learning_rate": float(trainer.schedule(step - 1)), "ponder_cost_weight": tau,
                "examples_per_second": window["examples"] / (time.perf_counter() - window_start)})
            window, window_start = None, time.perf_counter()
        if config.eval_every and step % config.eval_every == 0 and step < config.steps:  # the last: _finish
            held_out(trainer, eval_files, write_dir, step, progress)
        if step % config.checkpoint_every == 0 or step == config.steps:
            artifacts.check_run_in_place(write_dir, f"the checkpoint of update {step}")
            streams.save(step)  # first: a checkpoint on disk always has its input positions
            save_checkpoint(manager, step)


def _update(train_step, iterators, step, train_files, manager):
    """One update's summed outputs (numpy); a corrupt record or a lost worker as one ValueError."""
    try:
        return {k: v.numpy() for k, v in train_step(iterators).items()}
    except tf.errors.DataLossError as error:
        raise ValueError(f"{corrupt_file(train_files)}: a corrupt record at update {step + 1} "
                         f"({str(error).splitlines()[0]}); the checkpoints written so far are intact: "
                         "replace the shard and re-run to resume") from None
    except tf.errors.InvalidArgumentError:  # a record of another shape past the sample the preflight read
        odd = next(filter(None, map(misshapen, train_files)), None)
        if odd is None:
            raise
        raise ValueError(f"{odd} (read at update {step + 1}; the checkpoints written so far are intact: "
                         "replace the shard and re-run to resume)") from None
    except (tf.errors.UnavailableError, tf.errors.CancelledError, tf.errors.AbortedError) as error:
        if distribution.cluster_task()[0] > 1:  # a collective op lost its peer
            cause = next((line for line in str(error).splitlines() if "aborted" in line.lower()), type(error).__name__)
            raise ValueError(f"another worker of the job stopped at update {step + 1} ({cause.strip()}); the "
                             f"checkpoints so far are intact ({manager.latest_checkpoint or 'none yet'}): "
                             "start every worker again with the same command to resume") from None
        raise


def _calibrate(trainer, step, result, progress):
    """--tau auto: set tau once, from the global batch of the update where the ponder cost starts
    (the same number whether or not the run was resumed)."""
    if trainer.calibrates_at(step):
        calibrated = trainer.calibrate_tau(result["mlm_loss"], result["sop_loss"], result["ponder_cost"])
        if progress:
            print(f"\n--tau auto at update {step}: tau = {AUTO_SHARE} x (MLM {result['mlm_loss']:.3f} + SOP "
                  f"{result['sop_loss']:.3f}) / ponder cost {result['ponder_cost']:.1f} = {calibrated:.3g}")


def held_out(trainer, eval_files, write_dir, step, progress=False):
    """The held-out evaluation at update `step`: TensorBoard's eval folder (with the token-type chart)
    and one line of <write_dir>/held_out.jsonl, replacing the lines of this step and later ones (which
    a run resumed from an earlier checkpoint writes again). Returns the evaluation."""
    evaluation = trainer.evaluate(eval_files)
    artifacts.check_run_in_place(write_dir, f"the evaluation of update {step}")
    writer = tf.summary.create_file_writer(os.path.join(write_dir, artifacts.EVAL_EVENTS))
    write_summaries(writer, step, evaluation, {"ponder_cost_weight": float(trainer.tau_at(step - 1))})
    write_token_type_image(writer, step, evaluation["iterations"], trainer.backbone.max_iterations)
    path = os.path.join(write_dir, artifacts.HELD_OUT_CURVE)
    earlier = tf.io.gfile.GFile(path, "rb").read() if tf.io.gfile.exists(path) else b""
    text, line = held_out_curve(path, earlier, step, evaluation, trainer.tau_at(step - 1))
    spread = line["depth_spread"]
    text_files.write_bytes(path, text.encode("utf-8"))  # whole, renamed into place
    if progress:
        (low, high) = evaluation["mlm_accuracy_interval"]
        print(f"\nheld out at update {step}: MLM {evaluation['mlm_accuracy']:.3f} [{low:.3f}, {high:.3f}] (loss "
              f"{evaluation['mlm_loss']:.3f}), SOP {evaluation['sop_accuracy']:.3f}, mean N "
              f"{line['mean_iterations']:.2f}, tau {line['ponder_cost_weight']:.3g}", flush=True)
    if progress and trainer.config.halting != "none":
        print(depth_line(spread), flush=True)
        config = trainer.config
        warning = one_depth_warning(spread)
        if warning and step >= config.ponder_warmup_start + config.ponder_warmup_steps:
            print(f"  {warning}", flush=True)
    return evaluation



def _finish(config, trainer, eval_files, write_dir, chief):
    """The held-out evaluation (TensorBoard, held_out.jsonl, evaluation.json) and, on the chief, the export."""
    step = int(trainer.optimizer.iterations.numpy())
    evaluation = held_out(trainer, eval_files, write_dir, step)
    evaluation["step"] = step
    evaluation["model_dir"] = config.model_dir
    evaluation["table"] = token_types.markdown_table(evaluation["iterations"], trainer.backbone.max_iterations,
                                                     evaluation["differences"])
    if config.halting != "none":  # how depth varies per token, and a warning when it hardly does
        spread = depth_spread(evaluation)
        warning = one_depth_warning(spread) if step >= config.ponder_warmup_start + config.ponder_warmup_steps else None
        evaluation["depth"] = depth_line(spread).strip() + (f"\n{warning}" if warning else "")
    if config.export_dir and chief:  # the raw-text SavedModel the config names, loaded back and asked one query
        try:
            evaluation["export"] = _export(config, trainer, step)
        except ValueError as error:  # (refused: another command wrote or writes it): the run is finished all the same
            artifacts.write_json(os.path.join(write_dir, artifacts.EVALUATION), evaluation)
            raise ValueError(f"{error}. The run itself is finished: its held-out evaluation is in "
                             f"{os.path.join(write_dir, artifacts.EVALUATION)}") from None
    artifacts.write_json(os.path.join(write_dir, artifacts.EVALUATION), evaluation)
    return evaluation


def _export(config, trainer, step):
    """The run's SavedModel at `config.export_dir`, loaded back and asked one query: {dir, fill_mask}.
    Another run given the same --export_dir may have written it since the preflight, or write it now:
    that one is named (by its lock, or its record) and left whole, not replaced or called damaged."""
    from albert_act.serve.savedmodel import example_query, export_pretraining, record_tau

    # The tau the model was trained with at the end (--tau auto's calibration, --target_iterations'
    # last step), beside what was asked for.
    record = record_tau(config_record(config), float(trainer.tau_at(step - 1)), step)
    lock = outputs.DirectoryLock(config.export_dir, "run's export", "--export_dir")
    try:
        lock.acquire()
    except ValueError as error:
        raise ValueError(f"{error}; this run's weights are in its checkpoints: export them with python -m "
                         f"albert_act.export --checkpoint {config.model_dir} --kind pretraining --output <another "
                         "dir>") from None
    try:
        check_export_dir(config, at_end=True)
        export_pretraining(trainer.model, config.export_dir, text_files.read_bytes(config.vocab),
                           pretraining_config=record, overwrite=True)
        return {"dir": config.export_dir, "fill_mask": example_query(config.export_dir)["fill_mask"]}
    finally:
        lock.release()

