"""Every name albert-act writes to disk, and what a directory holds. The one owner: readers
and writers import these names, never spell them.

Three kinds of directories (local or gs://):

    pre-training run    <run>/config.json            the resolved PretrainConfig (+ "backbone")
                        <run>/checkpoints/ckpt-N.*   model, optimizer, input position, tau
                        <run>/vocab.model            the data's SentencePiece model
                        <run>/evaluation.json        the final held-out evaluation
                        <run>/train/, <run>/eval/    TensorBoard event files
    demo data           <cache>/recipe.json, corpus.txt, vocab.model, records/ (the data tool's
                        output: shards and stats.json)
    fine-tuning dir     <dir>/classifier.json        task, labels, settings, backbone config
                        <dir>/finetune_config.json   the FinetuneConfig it ran with
                        <dir>/classifier.weights.h5  the best dev epoch's weights
                        <dir>/vocab.model, <dir>/results.json, <dir>/export/1 (a SavedModel)
    SavedModel export   <export>/saved_model.pb, variables/,
                        <export>/assets/albert_act_export.json, <export>/assets/vocab.model
                        exports are versioned as TensorFlow Serving expects: <base>/<version>

Public ALBERT checkpoints are read too (`albert_act.io.public_checkpoints`); their names are
other projects' and listed here beside ours. Which kind a dir is, `albert_act.io.source` works out.
"""

import os
import re

from albert_act.base import checks, json_files, outputs, text_files

CONFIG = "config.json"
CHECKPOINTS = "checkpoints"
INPUT_POSITIONS = "input"  # a run of several input streams: input/stream-<k>/ckpt-<update>
VOCAB = "vocab.model"
EVALUATION = "evaluation.json"
HELD_OUT_CURVE = "held_out.jsonl"  # a pre-training run's held-out evaluations, one JSON line each (--eval_every)
# What held_out.jsonl keeps of an evaluation (beside the step, the mean depth and tau).
HELD_OUT_KEPT = ("mlm_accuracy", "mlm_accuracy_interval", "mlm_unigram_baseline", "mlm_loss", "mlm_unigram_loss",
                 "sop_accuracy", "sop_accuracy_interval", "sop_majority_baseline")
FINETUNED_INFO = "classifier.json"
FINETUNE_CONFIG = "finetune_config.json"  # a fine-tuning dir's FinetuneConfig: repeats the run (finetune --config)
WEIGHTS = "classifier.weights.h5"
RESULTS = "results.json"
EXPORT = "export"  # inside a fine-tuning dir: export/<version>
GRID = "grid"  # inside a fine-tuning dir: grid/<one run per grid point>
EARLIER_RUN = ".earlier_run"  # inside a fine-tuning dir: a finished one that `finetune --overwrite` sets aside
EXPORT_INFO = "albert_act_export.json"  # an asset of every SavedModel
ASSETS = "assets"
SAVED_MODEL = outputs.SAVED_MODEL
TRAIN_EVENTS, EVAL_EVENTS = "train", "eval"  # TensorBoard folders of a run
EVENTS = "events.out.tfevents."  # TensorBoard's files' names begin so
DEMO_RECIPE, DEMO_CORPUS, DEMO_RECORDS = "recipe.json", "corpus.txt", "records"
STATS_JSON, STATS_MD = "stats.json", "stats.md"  # the data tool's report, in its --output_dir
# The data tool's tokenized training and held-out documents, without TensorFlow (pipelines/token_corpus.py).
TOKENS_TRAIN, TOKENS_EVAL = "tokens-train.npz", "tokens-eval.npz"
INCOMPLETE = "_incomplete"  # the data tool's shards being written, moved out when all are whole

# Other projects' names: Hugging Face transformers, google-research/albert (TF1), keras-hub.
HF_CONFIG, HF_WEIGHTS, HF_VOCAB = "config.json", "model.safetensors", "spiece.model"
TF1_CONFIG, TF1_VOCAB = "albert_config.json", "30k-clean.model"
KERAS_HUB_CONFIG, KERAS_HUB_WEIGHTS, KERAS_HUB_TASK = "config.json", "model.weights.h5", "task.json"
KERAS_HUB_VOCAB = "assets/tokenizer/vocabulary.spm"


read_json, write_json = json_files.read_json, json_files.write_json  # (a run's and an export's JSON files)


def _gfile():
    return text_files.gfile()  # TensorFlow loads on first use: the data tool imports these names


def checkpoints_on_disk(directory):
    """{update: prefix} of the ckpt-<update>.index files in `directory` (a run's checkpoints/)."""
    prefixes = (index[: -len(".index")] for index in text_files.glob(os.path.join(directory, "ckpt-*.index")))
    return {int(p.rsplit("-", 1)[1]): p for p in prefixes if p.rsplit("-", 1)[1].isdigit()}


JAX_CHECKPOINT_PREFIX = "jax-"  # a JAX run's checkpoints: checkpoints/jax-<update>.npz (train/jax_pretraining.py)
JAX_FINAL_WEIGHTS = "model.weights.h5"  # a JAX run's weights at its end, in Keras' format


def jax_checkpoints_on_disk(directory):
    """{update: path} of the jax-<update>.npz files in `directory` (a JAX run's checkpoints/)."""
    found = {}
    for name in os.listdir(directory) if os.path.isdir(directory) else ():
        stem = name[len(JAX_CHECKPOINT_PREFIX):-len(".npz")] if name.startswith(JAX_CHECKPOINT_PREFIX) and \
            name.endswith(".npz") else ""
        if stem.isdigit():
            found[int(stem)] = os.path.join(directory, name)
    return found


def is_run_record(record):
    """Whether a config.json's object is a pre-training run's (it names its preset), not a Hugging Face, keras-hub
    or another tool's."""
    return "preset" in record


def settings_lost(model_dir):
    """The refusal for a run dir with checkpoints and no config.json (either backend's run)."""
    return ValueError(f"{model_dir} holds checkpoints but no {CONFIG}, so the settings they were trained with are "
                      f"unknown; put its {CONFIG} back, or use a new --model_dir")


def run_file(path):
    """What `path` is where it is a run's own file or folder, given where records are read: "a run's TensorBoard
    folder (its events)", "a run's TensorBoard events file", "a run's checkpoint file"; else ""."""
    name = os.path.basename(str(path).rstrip("/"))
    if text_files.isdir(path):
        return "a run's TensorBoard folder (its events)" if text_files.glob(os.path.join(path, EVENTS + "*")) else ""
    if name.startswith(EVENTS):
        return "a run's TensorBoard events file"
    if re.fullmatch(rf"ckpt-\d+(\.index|\.data-\d+-of-\d+)|checkpoint|{JAX_CHECKPOINT_PREFIX}\d+\.npz", name):
        return "a run's checkpoint file"
    return ""


def refuse_run_files(paths, or_else=""):
    """ValueError naming the first of `paths` that is a run's own file or folder (`run_file`), given where records are
    read; `or_else`: what else the reader takes (", or its token corpus")."""
    for path in paths:
        if kind := run_file(path):
            raise ValueError(f"{path} is {kind}, not records: give the data tool's shards (e.g. its eval-*.tfrecord)"
                             f"{or_else}")


def check_run_in_place(model_dir, what):
    """ValueError when a run's folder lost its config.json while the run went on (moved or removed mid-run): `what`
    (the checkpoint or curve about to be written) is not written, where a new folder would be begun at the old place."""
    if not text_files.exists(os.path.join(model_dir, CONFIG)):  # (a local path without TensorFlow: the JAX backend's)
        raise ValueError(f"{model_dir}: the run's folder was moved or removed while it trained ({CONFIG} is gone from "
                         f"it), so {what} was not written; if you moved it, re-run the same command with --model_dir "
                         "at its new place: it resumes from its newest checkpoint there")


SAVED_MODEL_ENTRIES = {SAVED_MODEL, "variables", ASSETS, "fingerprint.pb", "saved_model.pbtxt"}
FINETUNING_ENTRIES = {FINETUNED_INFO, FINETUNE_CONFIG, WEIGHTS, VOCAB, RESULTS, EXPORT, GRID}


# The paths in a run's settings (config.json) and in an export's (ExportConfig); an export stores
# both relative to itself, so a shipped model names no directory of the machine that built it.
RUN_PATHS = ("train_files", "eval_files", "model_dir", "vocab", "export_dir", "init_from")
EXPORT_PATHS = ("checkpoint", "output", "vocab")


def _each_path(record, change, keys):
    record = dict(record)
    for key in keys:
        value = record.get(key)
        if isinstance(value, list):
            record[key] = [change(v) if isinstance(v, str) and "://" not in v else v for v in value]
        elif isinstance(value, str) and "://" not in value:
            record[key] = change(value)
    return record


def relative_paths(record, base, keys=RUN_PATHS):
    """The settings `record` (a run's; an export's with `EXPORT_PATHS`) with its local paths written
    relative to the dir `base`."""
    if "://" in str(base):
        return dict(record)
    base = os.path.abspath(base)
    return _each_path(record, lambda p: os.path.relpath(os.path.abspath(p), base), keys)


def absolute_paths(record, base, keys=RUN_PATHS):
    """The inverse of `relative_paths`: relative local paths resolved against the dir `base`."""
    if "://" in str(base):
        return dict(record)
    return _each_path(record, lambda p: p if os.path.isabs(p) else os.path.normpath(os.path.join(base, p)), keys)


def same_path(a, b):
    """Whether two paths name the same dir: local ones resolved (links, `..`, a trailing slash),
    remote ones (gs://) compared as written without a trailing slash."""
    norm = lambda p: str(p).rstrip("/") if "://" in str(p) else os.path.realpath(p)  # noqa: E731
    return norm(a) == norm(b)


TRAIN_SHARDS = "train_shards"  # an export's record: the (length, SHA-256 of the first MiB) of each training shard
EVAL_SHARDS = "eval_shards"  # a run's config.json: the same of each held-out shard it is evaluated on


def shard_fingerprints(patterns):
    """[[length, SHA-256 of the first MiB]] of the files the globs `patterns` match on this machine
    (`text_files.content_key`): what an export carries of its training shards, so that records it was
    trained on are told by their content wherever the export is copied ([] where none is found)."""
    files = [path for pattern in patterns or () for path in text_files.glob(pattern)]
    return [list(key) for key in sorted({text_files.content_key(path) for path in files})]


def trained_on(files, fingerprints):
    """[(file, its fingerprint)] of `files` whose content is one of `fingerprints` (`shard_fingerprints`)."""
    known = {tuple(key) for key in fingerprints or ()}
    found = []
    for path in files:
        key = text_files.content_key(path)
        if key in known:
            found.append((path, key))
    return found


def same_files(first, second):
    """[(a, b)]: the files of `first` that are a file of `second` under another name: the same file
    (a link, `..`) or the same bytes (a copy; compared where the sizes agree, by their first MiB and
    their length). Train and evaluation files are told apart by content, not by the name given."""
    def key(path):
        return os.path.realpath(path) if "://" not in str(path) else str(path)

    by_key = {key(b): b for b in second}
    pairs = [(a, by_key[key(a)]) for a in first if key(a) in by_key]
    sizes = {}
    for b in second:
        sizes.setdefault(text_files.size(b), []).append(b)
    for a in first:
        length = text_files.size(a)
        same_size = [b for b in sizes.get(length, []) if length and (a, b) not in pairs]
        if same_size:  # contents read only where the lengths agree
            start = text_files.content_key(a)
            pairs += [(a, b) for b in same_size if text_files.content_key(b) == start]
    return pairs


def check_export_target(export_dir, overwrite=False, source=None, flag="--output"):
    """Refuses, before any model is loaded, to write an export where it would destroy something, or where it cannot
    be written. An empty or missing dir is fine. An existing SavedModel is replaced only with `overwrite` (from its
    folder, which must be writable). Never replaced: `source` itself (the checkpoint being exported), a pre-training
    run, a fine-tuning dir or its own export (but by itself), or a dir holding anything a SavedModel does not. `flag`
    names the export dir in the messages (pre-training's is --export_dir)."""
    if source is not None and same_path(export_dir, source):
        raise ValueError(f"{flag} {export_dir} is the --checkpoint being exported; write the export to another dir")
    outputs.check_dir_target(export_dir, flag)
    checks.pattern_free(export_dir, flag)
    check_not_in_a_run(export_dir, flag)
    owner = folder_holding(export_dir, EXPORT)  # <fine-tuning dir>/export/1: written again by that dir (or a point of
    if source is not None and owner and not within(source, owner) and any(  # its grid); a fine-tuning's: no source
            _gfile().exists(os.path.join(owner, f)) for f in (FINETUNED_INFO, FINETUNE_CONFIG)):
        raise ValueError(f"{flag} {export_dir} is in the exports of the fine-tuning in {owner} (its {RESULTS} names "
                         f"{os.path.join(owner, EXPORT, '1')}; a server would take any version there for that "
                         f"fine-tuning): write this one to another {flag}")
    checks.refuse_mount_point(export_dir, flag, "1")
    if "://" not in export_dir and os.path.isdir(export_dir):  # replaced from beside it, where its lock goes too
        checks.refuse_unwritable(os.path.dirname(os.path.abspath(export_dir)), f"{flag} {export_dir}")
    if not _gfile().exists(export_dir) or not _gfile().listdir(export_dir):
        return
    entries = sorted(e.rstrip("/") for e in _gfile().listdir(export_dir))
    for kind, marker in ((_config_owner(entries), CONFIG), ("a fine-tuning dir", FINETUNED_INFO)):
        if marker in entries:
            raise ValueError(f"{flag} {export_dir} holds {kind} ({marker}); --overwrite replaces only a SavedModel, "
                             f"so choose another {flag}")
    others = [e for e in entries if e not in SAVED_MODEL_ENTRIES]
    if others and all(e.isdigit() and _gfile().exists(os.path.join(export_dir, e, SAVED_MODEL)) for e in others):
        raise ValueError(f"{flag} {export_dir} is an export's base path, holding its versions ({', '.join(others[:5])}),"
                         f" each a SavedModel: give a version folder in it, a new one (e.g. "
                         f"{os.path.join(export_dir, str(max(map(int, others)) + 1))})")
    if others:
        raise ValueError(f"{flag} {export_dir} holds other files ({', '.join(others[:5])}); --overwrite replaces only "
                         f"a SavedModel, so choose another {flag}")
    if not overwrite:
        raise ValueError(f"{flag} {export_dir} exists; choose a new version number (e.g. .../2) or pass --overwrite")


def _config_owner(entries):
    """What a folder holding a config.json is, by its other entries: a Hugging Face model, or a pre-training run."""
    return "a Hugging Face model" if HF_WEIGHTS in entries or "pytorch_model.bin" in entries else "a pre-training run"


def folder_holding(path, named):
    """The folder holding `path` as <folder>/`named`/<path's name> (a fine-tuning's export/1, grid/<point>), or None."""
    parent = os.path.dirname(os.path.normpath(path))
    return (os.path.dirname(parent) or None) if os.path.basename(parent) == named else None


def within(path, folder):
    """Whether `path` is `folder` or inside it (links followed)."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_finetuning_target(output_dir, overwrite=True, grid=False):
    """Refuses, before any model is loaded, to fine-tune into a dir that holds something else: a
    missing or empty dir is fine, and so is an earlier fine-tuning or grid dir (only what
    fine-tuning writes) that did not finish; one that did (results.json) is replaced only with
    `overwrite` (a `grid` into a finished grid's dir is judged by `finetuning_run.check_grid_settings`);
    a pre-training run or a dir of other files (the GLUE data, say) never is."""
    outputs.check_dir_target(output_dir, "--output_dir")
    checks.pattern_free(output_dir, "--output_dir")  # (its export/1 and weights: TensorFlow's and Keras' files)
    if not _gfile().exists(output_dir):
        return
    entries = text_files.visible_entries(output_dir)
    if CONFIG in entries:
        raise ValueError(f"--output_dir {output_dir} holds {_config_owner(entries)} ({CONFIG}); fine-tune into another "
                         "dir")
    others = [e for e in entries if e not in FINETUNING_ENTRIES]
    if others:
        raise ValueError(f"--output_dir {output_dir} holds other files ({', '.join(others[:5])}); fine-tune into a "
                         "new or empty dir, or an earlier fine-tuning dir")
    if RESULTS in entries and not {FINETUNE_CONFIG, FINETUNED_INFO, GRID} & set(entries):
        raise ValueError(f"--output_dir {output_dir} holds a {RESULTS} that is no fine-tuning's (none of its "
                         f"{FINETUNE_CONFIG}, {FINETUNED_INFO} beside it: a benchmark's, say); fine-tune into a new or "
                         "empty dir")
    if EXPORT in entries and not _gfile().isdir(os.path.join(output_dir, EXPORT)):
        raise ValueError(f"--output_dir {output_dir} holds a file named {EXPORT}, where the fine-tuning's export goes: "
                         "move it away")
    if RESULTS in entries and _gfile().isdir(os.path.join(output_dir, RESULTS)):
        raise ValueError(f"--output_dir {output_dir} holds a folder named {RESULTS}, where the fine-tuning's results "
                         "go: move it away")
    if GRID in entries and RESULTS not in entries and not grid and not overwrite:  # a grid stopped: its points
        raise ValueError(f"--output_dir {output_dir} holds a grid that stopped before its end ({GRID}/: its finished "
                         "points, which the grid goes on from); re-run the grid (finetune --grid) to finish it, pass "
                         "--overwrite to replace it by this one run, or choose another --output_dir")
    if RESULTS in entries and not overwrite:
        missing = missing_export(output_dir)
        if GRID in entries and grid:  # its points are whole (each checked as the grid goes on): a grid with a damaged
            return  # results.json or export goes on (`finetuning_run.grid_repair`), a whole one is refused there
        raise ValueError(f"--output_dir {output_dir} holds a finished fine-tuning ({RESULTS})"
                         + (f" whose export {missing} is missing" if missing else "")
                         + "; pass --overwrite to replace it, or choose another --output_dir")


def set_aside(folder):
    """Where a fine-tuning dir's finished run is set aside by `finetune --overwrite` (one running, or stopped outright
    by SIGKILL before it could put it back): what to do, for a reader that finds the dir without its files; or None."""
    if not _gfile().isdir(os.path.join(folder, EARLIER_RUN)):
        return None
    return (f"its finished fine-tuning is set aside in {os.path.join(folder, EARLIER_RUN)} by a `finetune --overwrite` "
            "that is running or was killed: let it finish, or run that command again (it puts the earlier one back "
            "first, and replaces it only once it has finished)")


def set_aside_above(path, levels=3):
    """For a `path` that is not there: the nearest folder above it (`levels` at most: a fine-tuning dir's export/1)
    whose finished run is set aside (`set_aside`), in words; or None."""
    folder = os.path.normpath(path)
    for _ in range(levels):
        folder = os.path.dirname(folder)
        if folder and (aside := set_aside(folder)):
            return f"{folder}'s {aside.removeprefix('its ')}"
    return None


def missing_export(output_dir):
    """The export that a finished fine-tuning's (or grid's: its best point's) results.json names, when it lacks its
    saved_model.pb (deleted, moved, cut off); else (that, or no results.json) None."""
    try:
        results = read_json(os.path.join(output_dir, RESULTS))
    except (ValueError, OSError):
        return None  # none, or a damaged one: named where the results are read
    best = results.get("best")  # a grid's best point; a single fine-tuning's best epoch, without an export
    export = results.get("export", best.get("export") if isinstance(best, dict) else None)
    return export if isinstance(export, str) and not _gfile().exists(os.path.join(export, SAVED_MODEL)) else None


def check_huggingface_target(output, overwrite=False):
    """Refuses, before any model is loaded, to write a Hugging Face dir where it would destroy something:
    an empty or missing dir is fine; an existing Hugging Face dir (config.json + model.safetensors) is
    replaced only with `overwrite`; anything else never."""
    if _gfile().exists(output) and not _gfile().isdir(output):
        raise ValueError(f"{output} is a file; --output is the Hugging Face dir to write")
    outputs.check_dir_target(output, "--output")
    if not _gfile().exists(output) or not _gfile().listdir(output):
        return
    huggingface = all(_gfile().exists(os.path.join(output, name)) for name in (HF_CONFIG, HF_WEIGHTS))
    if not overwrite or not huggingface:
        raise ValueError(f"{output} exists and is not empty; --overwrite replaces only a Hugging Face dir")


def first_line(error):
    """An error as one short line: its type and the first line of its message. NumPy's advice for a
    file it would unpickle (allow_pickle=True) is not the user's to take: unpickling runs the file's
    code, and such a file (pickled objects, or bytes of no NumPy format) is never one of ours."""
    if "allow_pickle" in str(error):
        return "not a NumPy file of arrays (NumPy would read it as pickled Python objects, which are never loaded)"
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:200]}"


def other_eval_batches(model_dir, before, now):
    """The refusal of a run resumed, or a finished run evaluated again, on other held-out batches than before: its
    held-out curve would mix two held-out sets, and its evaluation.json be replaced by one of other batches."""
    def shown(batches):
        return "the whole eval shard" if batches is None else f"{batches:,} held-out batch{'es' * (batches != 1)}"
    again = f"--eval_batches {before}" if before is not None else "no --eval_batches"
    return (f"{model_dir} was evaluated on {shown(before)}, and this command asks {shown(now)}: resumed (or, "
            f"finished, evaluated again), its {HELD_OUT_CURVE} would mix two "
            f"held-out sets and its {EVALUATION} be replaced; give {again} (evaluate other batches with "
            f"python -m albert_act.analyze held-out --init {model_dir}{f' --max_batches {now}' if now else ''})")


def check_not_in_a_run(path, flag, run=None):
    """ValueError where the output `path` lies in a pre-training run's checkpoints/, train/ or eval/, which the run
    writes, resumes from and cleans; `run`: the command's own run dir, one before its config.json is written."""
    parts = os.path.abspath(path).split(os.sep) if "://" not in path else []
    for i in range(1, len(parts)):  # (the folder parts[:i], and its child on the way, parts[i])
        folder = os.sep.join(parts[:i]) or os.sep
        own = run is not None and same_path(folder, run)
        if parts[i] in (CHECKPOINTS, TRAIN_EVENTS, EVAL_EVENTS) and (own or os.path.isfile(os.path.join(folder, CONFIG))):
            raise ValueError(f"{flag} {path} lies in {'this run' if own else f'the run {folder}'}'s {parts[i]}/ "
                             "folder, which the run writes, resumes from and cleans: write it to a folder of its own "
                             "(e.g. beside the run)")


def check_output_dir(output_dir, overwrite, own_files, what, earlier, flag="--output_dir", reused=False):
    """`outputs.check_output_dir`, for an output that is not in a run's checkpoints/, train/ or eval/
    (`check_not_in_a_run`): every command's and benchmark's results folder."""
    check_not_in_a_run(output_dir, flag)
    outputs.check_output_dir(output_dir, overwrite, own_files, what, earlier, flag, reused)
