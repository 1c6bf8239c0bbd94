"""Whether a run dir resumes the run the flags describe: the settings that may change between a run and its
resumption (`RESUMABLE_CHANGES`), the others that differ (`changed_settings`), and the refusal that names them
(`another_run`). Used by both backends' pre-training."""

import keras

# Settings that may change between a run and its resumption; anything else must match.
RESUMABLE_CHANGES = {"train_files", "eval_files", "checkpoint_every", "keep_checkpoints", "log_every",
                     "eval_batches", "eval_every", "strategy", "export_dir", "overwrite_export", "vocab",
                     "model_dir"}  # the same run, copied, moved or written with a trailing slash


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
    now). Another --preset is said first, with three of the settings that differ with it; other --steps (a finished
    run given more) are told how to train on from its weights, and that the schedules following --steps change."""
    preset = [(key, there, now) for key, there, now in differing if key == "preset"]
    shown = (preset + [d for d in differing if d[0] != "preset"])[:4 if preset else None]
    details = ", ".join(f"{key}: {there!r} there, {now!r} now" for key, there, now in shown) + (
        f", and {len(differing) - len(shown)} more settings" if len(differing) > len(shown) else "")
    resume = f"--preset {preset[0][1]} (and the run's other settings)" if preset else "the same settings"
    longer = "" if preset or "steps" not in (key for key, _, _ in differing) else (
        f"; to train it on for other --steps, start a new run from its weights: --init_from {model_dir} --model_dir "
        "<a new dir> (the settings that follow --steps by default, its warm-ups and ponder ramp, change with it"
        + ("; on the TensorFlow backend: KERAS_BACKEND unset" if keras.backend.backend() == "jax" else "") + ")")
    return ValueError(f"{model_dir} holds a run with another config ({details}); use a new --model_dir, or "
                      f"{resume} to resume{longer}")
