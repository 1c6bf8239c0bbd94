"""An albert-act export (a SavedModel written by `python -m albert_act.export`) on disk: where it is
(`find_export`: a version folder, or inside a fine-tuning dir) and loading it (`load_export`), a
damaged one named by the file that does not read."""

import os
import shlex

import tensorflow as tf

from albert_act.base import artifacts, cli
from albert_act.base.artifacts import ASSETS, CHECKPOINTS, CONFIG, EXPORT, EXPORT_INFO, FINETUNED_INFO, SAVED_MODEL
from albert_act.io.newest_intact import first_line
from albert_act.io.run_checkpoints import READ_ERRORS


def find_export(path):
    """The export dir at `path`: `path` itself, its highest numeric version (TensorFlow Serving's
    <model_base_path>/<version>), or that inside <path>/export (a fine-tuning dir); None if none."""
    for base in (path, os.path.join(path, EXPORT)):
        if tf.io.gfile.exists(os.path.join(base, ASSETS, EXPORT_INFO)):
            return base
        if tf.io.gfile.isdir(base):
            versions = [int(v.rstrip("/")) for v in tf.io.gfile.listdir(base) if v.rstrip("/").isdigit()]
            for version in sorted(versions, reverse=True):
                candidate = os.path.join(base, str(version))
                if tf.io.gfile.exists(os.path.join(candidate, ASSETS, EXPORT_INFO)):
                    return candidate
    return None


def not_a_pretraining_export(path, signature):
    """The refusal of `path` where a pre-training SavedModel (one with `signature`) is asked; a pre-training run
    dir is told how to export it."""
    how, parent = "", os.path.dirname(str(path).rstrip("/"))
    if tf.io.gfile.exists(os.path.join(path, CONFIG)) and tf.io.gfile.isdir(os.path.join(path, CHECKPOINTS)):
        how = (f": {path} is a pre-training run; export it first (python -m albert_act.export --checkpoint {path} "
               "--kind pretraining --output <dir>/1) and give that export")
    elif any(all(tf.io.gfile.exists(os.path.join(path, name)) for name in names) for names in (
            (artifacts.HF_CONFIG, artifacts.HF_WEIGHTS), (artifacts.KERAS_HUB_WEIGHTS, artifacts.KERAS_HUB_VOCAB))):
        hub = "Hugging Face" if tf.io.gfile.exists(os.path.join(path, artifacts.HF_WEIGHTS)) else "keras-hub"
        how = (f": it is a {hub} ALBERT; export it first (python -m albert_act.export --checkpoint {path} --kind "
               "pretraining --output <dir>/1) and give that export")
    elif parent and tf.io.gfile.exists(os.path.join(parent, SAVED_MODEL)):  # its variables/ or assets/ folder
        how = f": it is a folder inside the SavedModel {parent}: give that"
    elif tf.io.gfile.exists(os.path.join(path, FINETUNED_INFO)) or _export_kind(path) == "classifier":
        what = "a fine-tuning dir" if tf.io.gfile.exists(os.path.join(path, FINETUNED_INFO)) else "a classifier's export"
        how = (f": it is {what} (a fine-tuned classifier); give the export of a pre-training run (python -m "
               "albert_act.export --checkpoint <run dir> --kind pretraining --output <dir>/1)")
    return ValueError(f"{path} is not a pre-training SavedModel (one with a{'n' if signature[0] in 'aeiou' else ''} "
                      f"{signature} signature){how}")


def _export_kind(path):
    """The kind ("pretraining", "classifier") an albert-act export's assets record, or None."""
    try:
        return artifacts.read_json(os.path.join(path, ASSETS, EXPORT_INFO)).get("kind")
    except (OSError, ValueError, tf.errors.OpError):
        return None


def load_export(path):
    """`tf.saved_model.load(path)` of an albert-act export, quietly; a damaged export (its
    variables or saved_model.pb corrupt or truncated) is a ValueError naming the file."""
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops the export's graph holds)

    try:
        with cli.quiet_stderr():  # loading runs SentencePiece, which logs an INFO line
            return tf.saved_model.load(str(path))
    except READ_ERRORS as error:
        if "incompatible tensor with shape" in str(error):  # (whole files, of two exports: variables/ copied over)
            raise ValueError(f"{path}: its variables/ are another model's (weights of other shapes than its "
                             f"saved_model.pb's: {first_line(error)[:120]}; copied from another export?); export the "
                             "model again from its run or fine-tuning dir") from None
        part, state = _damaged_part(str(path))
        raise ValueError(f"{part}: damaged export, {state} ({first_line(error)}); export the model again from its "
                         "run or fine-tuning dir") from None


def _damaged_part(path):
    """(which file of the export at `path` does not read whole, "missing" or "not readable"): the
    variables' index (read first: a missing or cut one is itself named, not the data it indexes),
    their data (each tensor read through), else saved_model.pb."""
    prefix = os.path.join(path, "variables", "variables")
    index, data = prefix + ".index", sorted(tf.io.gfile.glob(prefix + ".data-*"))
    weights = f"{data[0] if len(data) == 1 else prefix + '.data-*'} (the export's weights)"
    if not tf.io.gfile.exists(index):
        return f"{index} (the export's weight index)", "missing"
    try:
        reader = tf.train.load_checkpoint(prefix)
    except Exception:  # noqa: BLE001 (TensorFlow raises OpError, IndexError, ValueError...)
        return (f"{index} (the export's weight index)", "not readable") if data else (weights, "missing")
    try:
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except Exception:  # noqa: BLE001
        return weights, "not readable"
    return os.path.join(path, SAVED_MODEL), "not readable"


def damaged_file(path):
    """The file of the export at `path` that does not read whole, with its state ("... (the export's weight
    index) missing"), or None: every variable reads through and saved_model.pb parses. Without loading it."""
    from tensorflow.core.protobuf import saved_model_pb2

    part, state = _damaged_part(str(path))
    if part == os.path.join(str(path), SAVED_MODEL):
        try:
            with tf.io.gfile.GFile(part, "rb") as f:
                saved_model_pb2.SavedModel().ParseFromString(f.read())
            return None
        except Exception:  # noqa: BLE001 (missing: NotFoundError; cut: DecodeError)
            pass
    return f"{part} {state}"


def serve_command(export_dir, flag="--output"):
    """How to serve the export with TensorFlow Serving, which loads <base>/<version>/: the command,
    paths quoted for the shell, or, for an export dir not named by a version number, the `flag` that gets one."""
    version, base = os.path.basename(export_dir), os.path.dirname(export_dir)
    if not version.isdigit():
        return (f"serve: TensorFlow Serving loads <base>/<version number>/, and {export_dir} is not named by a "
                f"number: export with {flag} {shlex.quote(os.path.join(export_dir, '1'))} to serve it")
    name = os.path.basename(base)
    return (f"serve: docker run -p 8501:8501 -v {shlex.quote(f'{base}:/models/{name}')} "
            f"-e {shlex.quote(f'MODEL_NAME={name}')} tensorflow/serving")
