"""The GLUE server's submission zip from fine-tuned raw-text SavedModels (CLI: `albert_act.glue_submission`).

`build_submission` writes the 11 files the server expects (header `index<TAB>prediction`;
labels as the server spells them; STS-B a score in [0, 5]) from one export per task (an
export, a TensorFlow Serving base path, or a fine-tuning dir), checks each against its
test file (every index once, label spelling, row count), and refuses an incomplete zip
unless `allow_partial`, which then names the missing files in the zip's comment. Only
TensorFlow and tensorflow-text run the models: the exports hold their tokenizer.
"""


import os
import tempfile
import zipfile

import tensorflow as tf

from albert_act.base import artifacts, outputs, text_files
from albert_act.io.exports import find_export, load_export
from albert_act.io.source import Source
from pipelines import glue

# file in the zip -> (the task whose model predicts it, the task whose test file it reads, the split),
# from pipelines/glue.py (the one GLUE table).
SUBMISSION = {file_name: (task.predicted_by or name, name, split)
              for name, task in glue.TASKS.items() for file_name, split in task.submission}


class ExportedClassifier:
    """A raw-text classifier export (`albert_act.serve.savedmodel`): strings in, label names or scores out."""

    def __init__(self, export_dir):
        self.info = Source.open(export_dir).info
        if self.info["kind"] != "classifier":
            raise ValueError(f"{export_dir} is a {self.info['kind']} export, not a fine-tuned classifier")
        self.serve = load_export(export_dir).signatures["serving_default"]

    def predict(self, examples, batch_size=64):
        """Label strings (classification) or scores clipped to [0, 5] (regression)."""
        import tensorflow as tf

        predictions = []
        for start in range(0, len(examples), batch_size):
            batch = examples[start : start + batch_size]
            inputs = {"text": tf.constant([e.text_a for e in batch])}
            if self.info["pair"]:
                inputs["text_pair"] = tf.constant([e.text_b or "" for e in batch])
            outputs = self.serve(**inputs)
            if self.info["labels"]:
                predictions += [label.decode() for label in outputs["label_names"].numpy()]
            else:
                predictions += [f"{min(max(float(x), 0.0), 5.0):.3f}" for x in outputs["score"].numpy()]
        return predictions


def validate(path, task, test_examples):
    """Problems with a written submission file (empty list when it is right)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    problems = []
    if not lines or lines[0] != "index\tprediction":
        problems.append(f"{os.path.basename(path)}: header must be 'index<TAB>prediction'")
        return problems
    seen = {}
    allowed = set(glue.TASKS[task].labels)
    for number, line in enumerate(lines[1:], start=2):
        parts = line.split("\t")
        if len(parts) != 2:
            problems.append(f"{os.path.basename(path)} line {number}: expected 2 fields")
            continue
        index, prediction = parts
        seen[index] = seen.get(index, 0) + 1
        if allowed and prediction not in allowed:
            problems.append(f"{os.path.basename(path)} line {number}: label {prediction!r} not in {sorted(allowed)}")
        if not allowed:
            try:
                ok = 0.0 <= float(prediction) <= 5.0
            except ValueError:
                ok = False
            if not ok:
                problems.append(f"{os.path.basename(path)} line {number}: score {prediction!r} not in [0, 5]")
    expected = [e.guid for e in test_examples]
    missing = [i for i in expected if i not in seen]
    repeated = [i for i, c in seen.items() if c > 1]
    extra = sorted(set(seen) - set(expected))
    if missing or repeated or extra:
        problems.append(f"{os.path.basename(path)}: {len(missing)} test indices missing, {len(repeated)} repeated, "
                        f"{len(extra)} unknown (expected {len(expected)} rows)")
    return problems


def build_submission(models_dir, data_dir, output, allow_partial=False, progress=True):
    """Writes the zip; returns {"written": [...], "missing": {file: reason}}. ValueError if not complete (unless allowed) or invalid."""
    with tempfile.TemporaryDirectory() as staging:
        return _build(models_dir, data_dir, output, allow_partial, progress, staging)


def _folded(name):
    return name.lower().replace("-", "").replace("_", "")


def task_folder(models_dir, model_task):
    """The folder of `models_dir` that holds `model_task`'s model, spelled as this project spells the
    task (rte, sst-2) or as glue_data does (RTE, SST-2; case, "-" and "_" ignored); None if none."""
    entries = [e.rstrip("/") for e in tf.io.gfile.listdir(models_dir)] if tf.io.gfile.isdir(models_dir) else []
    found = sorted(e for e in entries if _folded(e) == _folded(model_task)
                   and tf.io.gfile.isdir(os.path.join(models_dir, e)))
    if len(found) > 1:
        raise ValueError(f"--models {models_dir} holds {' and '.join(found)}: one folder per task, please")
    return os.path.join(models_dir, found[0]) if found else None


def _refuse_incomplete(missing):
    raise ValueError("incomplete submission, not written; missing: "
                     + "; ".join(f"{k} ({v})" for k, v in missing.items())
                     + ". Pass --allow_partial to write the files that exist.")


def _inputs(models_dir, data_dir):
    """({file: (export, test path)} of the files that can be written, {file: why not} of the others):
    found from the folders alone, before any model runs."""
    found, missing = {}, {}
    for file_name, (model_task, data_task, split) in SUBMISSION.items():
        folder = task_folder(models_dir, model_task)
        export = find_export(folder) if folder else None
        task = glue.TASKS[data_task]
        test_path = os.path.join(data_dir, task.directory, task.splits[split])
        if export is None:
            entry = folder or os.path.join(models_dir, model_task)  # a file of the task's name, perhaps
            missing[file_name] = (f"{entry} {_lacks(entry)}" if tf.io.gfile.exists(entry) or os.path.islink(entry) else
                                  f"no {model_task} model in {models_dir}")
        elif not os.path.exists(test_path):
            missing[file_name] = f"no test data at {test_path}"
        else:
            found[file_name] = export, test_path
    return found, missing


def _build(models_dir, data_dir, output, allow_partial, progress, staging):
    written, problems, models = [], [], {}
    found, missing = _inputs(models_dir, data_dir)
    if found and missing and not allow_partial:  # refused before any prediction is computed
        _refuse_incomplete(missing)
    for file_name, (model_task, data_task, split) in SUBMISSION.items():
        if file_name not in found:
            continue
        export = found[file_name][0]
        task = glue.TASKS[data_task]
        if model_task not in models:
            models[model_task] = ExportedClassifier(export)
            trained_for = models[model_task].info["task"].lower()
            if trained_for != model_task:
                raise ValueError(f"{export} was fine-tuned on {trained_for}, not {model_task}")
        examples, report = glue.read_glue(data_task, os.path.join(data_dir, task.directory), split)
        if report["blank_rows_kept"]:  # answered all the same: the server scores every index
            lines = ", ".join(map(str, report["blank_lines"]))
            print(f"note: {report['file']}: {report['blank_rows_kept']} row(s) with a blank sentence, predicted from "
                  f"the other sentence or none (lines {lines}{', ...' if report['blank_rows_kept'] > 20 else ''})")
        predictions = models[model_task].predict(examples)
        path = os.path.join(staging, file_name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("index\tprediction\n" + "".join(f"{e.guid}\t{p}\n" for e, p in zip(examples, predictions)))
        problems += validate(path, data_task, examples)
        written.append(file_name)
        if progress:
            print(f"{file_name}: {len(examples)} predictions from {export}")
    if problems:
        raise ValueError("invalid submission files:\n" + "\n".join(problems))
    no_data = [why for why in missing.values() if why.startswith("no test data")]
    if not written and no_data:  # models found, but not their tasks' test files
        raise ValueError(f"--data_dir {data_dir}: {no_data[0]}{f' (and {len(no_data) - 1} more)' if len(no_data) > 1 else ''}"
                         "; --data_dir is the GLUE folder holding a folder per task (RTE/test.tsv, SST-2/test.tsv, "
                         "...), not a task's folder; nothing written")
    if not written:
        raise ValueError(_no_model_found(models_dir))
    if missing and not allow_partial:
        _refuse_incomplete(missing)
    # Written beside the output and renamed over it: a full disk or Ctrl-C leaves the old zip whole.
    output = outputs.followed(output)  # a symlink: the zip goes where it points, and the link stays
    folder, name = os.path.split(output)
    text_files.makedirs(folder)
    outputs.remove_dead_partials(folder, f".{name}.", ".partial")  # of a killed earlier run
    partial = os.path.join(folder, f".{name}.{os.getpid()}.partial")
    try:
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for file_name in written:
                archive.write(os.path.join(staging, file_name), file_name)
            if missing:
                archive.comment = ("PARTIAL submission, missing: " + ", ".join(missing)).encode()
        os.replace(partial, output)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return {"written": written, "missing": missing}


def _no_model_found(models_dir):
    """Why --models gave no task's model: what it holds, and what a task's folder there lacks."""
    held = sorted(e.rstrip("/") for e in tf.io.gfile.listdir(models_dir)) if tf.io.gfile.isdir(models_dir) else []
    tasks = sorted({t for t, _, _ in SUBMISSION.values()})
    named = [h for h in held if h in tasks]
    folder = os.path.join(models_dir, named[0]) if named else None  # a task's folder without a model
    inside = f"; {folder} {_lacks(folder)}" if folder else ""
    return (f"no task's model found in --models {models_dir} (it holds {held or 'nothing'}); expected folders named "
            f"after the tasks ({', '.join(tasks)}), each holding a fine-tuning dir or an export{inside}; nothing written")


def _lacks(folder):
    """What a task's folder without a model lacks: a fine-tuning dir its export (and the command that
    makes it), anything else a numbered version."""
    if os.path.islink(folder) and not os.path.exists(folder):
        return "is a symbolic link that names no place (a loop, or a missing target)"
    if not tf.io.gfile.isdir(folder):
        return "is a file, not a folder: a task's entry is a folder holding a fine-tuning dir or an export"
    if (aside := artifacts.set_aside(folder)) and not tf.io.gfile.exists(os.path.join(folder, artifacts.WEIGHTS)):
        return f"is a fine-tuning dir whose weights are not in place: {aside}"
    if tf.io.gfile.exists(os.path.join(folder, artifacts.FINETUNED_INFO)) and not tf.io.gfile.exists(
            os.path.join(folder, artifacts.WEIGHTS)):  # stopped before its first epoch ended: nothing to export
        return (f"is a fine-tuning dir that finished no epoch (no {artifacts.WEIGHTS}): run its fine-tuning again "
                f"(python -m albert_act.finetune --config {folder}/{artifacts.FINETUNE_CONFIG} --output_dir {folder}), "
                "which exports it")
    if tf.io.gfile.exists(os.path.join(folder, artifacts.FINETUNED_INFO)):
        return (f"is a fine-tuning dir without its export/: make it with python -m albert_act.export --checkpoint "
                f"{folder} --kind classifier --output {folder}/export/1")
    return (f"holds no export: an export's versions are numbered folders ({folder}/1/), and a fine-tuning dir holds "
            "classifier.json and export/")
