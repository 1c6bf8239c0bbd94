"""Whether a run dir resumes the run the flags describe: the settings that may change between a run and its
resumption (`RESUMABLE_CHANGES`), the others that differ (`changed_settings`), and the refusal that names them
(`another_run`), and the run dir's entries a resumption writes into (`check_run_entries`). Used by both backends'
pre-training."""

import json
import os

import keras

from albert_act.base import artifacts

# Settings that may change between a run and its resumption; anything else must match.
RESUMABLE_CHANGES = {"train_files", "eval_files", "checkpoint_every", "keep_checkpoints", "log_every",
                     "eval_batches", "eval_every", "strategy", "export_dir", "overwrite_export", "vocab",
                     "model_dir"}  # the same run, copied, moved or written with a trailing slash


def run_record(path, checkpoints):
    """The run's config.json (`path`, a dict) before it is resumed; a damaged one (not JSON, cut, a run's without
    its "backbone", or with a value no run writes) is named with what to do (`checkpoints`: whether the run has any, which were trained with it)."""
    advice = ("; the run's checkpoints need the settings they were trained with: put a whole copy of its "
              f"{artifacts.CONFIG} back (the checkpoints are untouched), or use a new --model_dir") if checkpoints else (
              "; the run saved no checkpoint: delete it to start afresh, or use a new --model_dir")
    try:
        record = artifacts.read_json(path)
    except ValueError as error:
        raise ValueError(f"{error}{advice}") from None
    if artifacts.is_run_record(record) and not isinstance(record.get("backbone"), dict):
        raise ValueError(f"{path}: a run's settings without their \"backbone\" (cut or edited){advice}")
    if checkpoints and not artifacts.is_run_record(record):  # ({}, or another tool's file over the run's)
        raise ValueError(f"{path} names no preset, so it is not the settings of the checkpoints beside it (emptied, "
                         f"or replaced by another tool's file){advice}")
    if artifacts.is_run_record(record):
        from albert_act.train.pretraining_config import PretrainConfig

        try:  # each value as a run writes it ("steps": "3" is an edit, not another run's setting)
            config = PretrainConfig.from_record(record)
        except ValueError as error:
            raise ValueError(f"{path}: {error} (the file was edited?){advice}") from None
        nulls = _edited_nulls(record, config)
        if nulls:
            raise ValueError(f"{path}: {nulls[0]} is null, where a run writes the value it trained with (the file was "
                             f"edited?){advice}")
    return record


def _edited_nulls(record, config):
    """The settings a run's record (read as `config`) holds as null where a run writes a value: a run's config.json is
    resolved, so a null the preset or the defaults would fill in is an edit; and the backbone's that the preset sets."""
    import dataclasses

    from albert_act.model.presets import get_preset

    resolved = dataclasses.replace(config, init_from=None).resolved()  # (--init_from's sizes: the backbone's own)
    backbone = get_preset(config.preset).backbone
    return sorted(key for key, value in record.items() if value is None and getattr(resolved, key, None) is not None) + \
        sorted(f"backbone.{key}" for key, value in record["backbone"].items() if value is None and backbone.get(key)
               is not None)


def changed_settings(previous, current):
    """`config_differences` of two config records, but for `RESUMABLE_CHANGES`."""
    return config_differences({k: v for k, v in previous.items() if k not in RESUMABLE_CHANGES},
                              {k: v for k, v in current.items() if k not in RESUMABLE_CHANGES})


def config_differences(previous, current, prefix=""):
    """[(key, previous value, current value)] where two config records differ; in settings that are
    dicts on both sides (backbone, backbone_overrides) only the keys that differ, as "backbone.key"."""
    found = []
    for key in sorted(set(previous) | set(current)):
        there, now = previous.get(key), current.get(key)
        if isinstance(there, dict) and isinstance(now, dict):
            found += config_differences(there, now, f"{prefix}{key}.")
        elif there != now:
            found.append((prefix + key, there, now))
    return found


def another_run(model_dir, differing):
    """The refusal of a run dir whose run has other settings (`config_differences`: each with its value there and
    now). Another --preset or --init_from is said first, with three of the settings that differ with it (the backbone's
    they bring); other --steps (a finished run given more) are told how to train on from its weights, and that the
    schedules following --steps change."""
    preset = [(key, there, now) for key, there, now in differing if key == "preset"]
    leading = preset + [d for d in differing if d[0] == "init_from"]
    shown = (leading + [d for d in differing if d not in leading])[:4 if leading else None]
    said = lambda value: "unset (the default)" if value is None else repr(value)  # noqa: E731 (not None: a setting)
    details = ", ".join(f"{key}: {said(there)} there, {said(now)} now" for key, there, now in shown) + (
        f", and {len(differing) - len(shown)} more settings" if len(differing) > len(shown) else "")
    resume = f"--preset {preset[0][1]} (and the run's other settings)" if preset else "the same settings"
    longer = "" if preset or "steps" not in (key for key, _, _ in differing) else (
        f"; to train it on for other --steps, start a new run from its weights: --init_from {model_dir} --model_dir "
        "<a new dir> (the settings that follow --steps by default, its warm-ups and ponder ramp, change with it"
        + ("; on the TensorFlow backend: KERAS_BACKEND unset" if keras.backend.backend() == "jax" else "") + ")")
    same = sorted({f"{key.split('.', 1)[1]}={now!r}" for key, there, now in differing if there is None and (
        now is not None and now == _backbone_default(key))})  # (an override at the run's default: the same model)
    defaults = "" if not same or len(same) * 2 < len(differing) else (
        f"; {', '.join(same)}, as given now, {'is' if len(same) == 1 else 'are'} the default the run was trained "
        f"with: drop {'it' if len(same) == 1 else 'them'} (--override, --set) and it resumes")
    return ValueError(f"{model_dir} holds a run with another config ({details}); use a new --model_dir, or "
                      f"{resume} to resume{longer}{defaults}")


def _backbone_default(key):
    """The backbone's default of a "backbone.X" or "backbone_overrides.X" setting, or a marker that equals nothing."""
    import inspect

    from albert_act.model.backbone import AlbertActBackbone

    name = key.split(".", 1)[1] if key.startswith(("backbone.", "backbone_overrides.")) else None
    parameter = inspect.signature(AlbertActBackbone.__init__).parameters.get(name) if name else None
    return inspect.Parameter.empty if parameter is None else parameter.default


def check_run_entries(model_dir, exists=os.path.exists, isdir=os.path.isdir):
    """Refuses a run dir whose checkpoints/, train/, eval/ is a file or not writable, or held_out.jsonl, evaluation.json,
    vocab.model, model.weights.h5 a folder, before any training: a write would fail after the work. `exists`/`isdir`:
    gfile's."""
    folders = (artifacts.CHECKPOINTS, artifacts.TRAIN_EVENTS, artifacts.EVAL_EVENTS)
    for name in (*folders, artifacts.HELD_OUT_CURVE, artifacts.EVALUATION, artifacts.VOCAB, artifacts.JAX_FINAL_WEIGHTS):
        folder = name in folders
        if exists(path := os.path.join(model_dir, name)) and isdir(path) != folder:
            raise ValueError(f"{path} is a {'file' if folder else 'folder'}, where the run keeps its {name}"
                             f"{' folder' * folder}: move it away, or use a new --model_dir")
    if "://" in model_dir:
        return
    unwritable = [path for path in [model_dir, *(os.path.join(model_dir, name) for name in folders)]
                  if os.path.isdir(path) and not os.access(path, os.W_OK | os.X_OK)]  # all at once, not one a try
    if unwritable:
        named = " and ".join(unwritable) if len(unwritable) < 3 else f"{', '.join(unwritable[:-1])} and {unwritable[-1]}"
        which = "it" if len(unwritable) == 1 else "them"
        raise ValueError(f"{named} {'is' if len(unwritable) == 1 else 'are'} not writable to you, and the run writes "
                         f"there (after the work): make {which} writable (chmod -R u+w "
                         f"{unwritable[0] if len(unwritable) == 1 else model_dir}), or use a new --model_dir")


def _step(line):
    """The update of one line of a held-out curve, or None for a line that is not an evaluation's (cut short or edited:
    named where the run writes the curve again)."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    return record.get("step") if isinstance(record, dict) else None


def check_results_kept(model_dir, checkpoint_every):
    """Refuses a run dir with no checkpoint that holds what only a run that saved one writes: its final evaluation,
    model.weights.h5 (a JAX run's end), TensorFlow's list of its checkpoints, or a held-out evaluation at or past
    update `checkpoint_every`. Its checkpoints were deleted or not copied: starting afresh would replace the run's
    results (a run that saved none, stopped early, starts afresh)."""
    from albert_act.base import text_files

    kept = [name for name in (artifacts.EVALUATION, artifacts.JAX_FINAL_WEIGHTS,
                              os.path.join(artifacts.CHECKPOINTS, "checkpoint"))
            if text_files.exists(os.path.join(model_dir, name))]
    curve = os.path.join(model_dir, artifacts.HELD_OUT_CURVE)
    if not kept and text_files.exists(curve):
        reached = max((step for line in text_files.read_bytes(curve).decode("utf-8", "replace").splitlines()
                       if isinstance(step := _step(line), int)), default=0)
        kept = [f"{artifacts.HELD_OUT_CURVE} up to update {reached}"] if reached >= checkpoint_every else []
    if kept:
        raise ValueError(f"{model_dir} holds a run's results ({', '.join(kept)}) but no checkpoint in "
                         f"{artifacts.CHECKPOINTS}/ (deleted, or a copy made without them?); a fresh start would "
                         "replace them, so nothing was changed: put the checkpoints back to resume the run, or use a "
                         "new --model_dir")
