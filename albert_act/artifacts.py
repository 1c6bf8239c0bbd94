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
                        <dir>/classifier.weights.h5  the best dev epoch's weights
                        <dir>/vocab.model, <dir>/results.json, <dir>/export/1 (a SavedModel)
    SavedModel export   <export>/saved_model.pb, variables/,
                        <export>/assets/albert_act_export.json, <export>/assets/vocab.model
                        exports are versioned as TensorFlow Serving expects: <base>/<version>

Public ALBERT checkpoints are read too (`albert_act.model.albert_checkpoints`); their names are
other projects' and listed here beside ours (`public_kind_of` says which a dir is).
"""

import json
import os

import tensorflow as tf

from pipelines import outputs
from pipelines.create_pretraining_data import STATS_JSON  # noqa: F401  (the data tool's report)

CONFIG = "config.json"
CHECKPOINTS = "checkpoints"
VOCAB = "vocab.model"
EVALUATION = "evaluation.json"
FINETUNED_INFO = "classifier.json"
WEIGHTS = "classifier.weights.h5"
RESULTS = "results.json"
EXPORT = "export"  # inside a fine-tuning dir: export/<version>
EXPORT_INFO = "albert_act_export.json"  # an asset of every SavedModel
ASSETS = "assets"
SAVED_MODEL = "saved_model.pb"
TRAIN_EVENTS, EVAL_EVENTS = "train", "eval"  # TensorBoard folders of a run
DEMO_RECIPE, DEMO_CORPUS, DEMO_RECORDS = "recipe.json", "corpus.txt", "records"

KINDS = ("pretraining-run", "finetuned", "export")

# Other projects' names: Hugging Face transformers, google-research/albert (TF1), keras-hub.
HF_CONFIG, HF_WEIGHTS, HF_VOCAB = "config.json", "model.safetensors", "spiece.model"
TF1_CONFIG, TF1_VOCAB = "albert_config.json", "30k-clean.model"
KERAS_HUB_CONFIG, KERAS_HUB_WEIGHTS, KERAS_HUB_TASK = "config.json", "model.weights.h5", "task.json"
KERAS_HUB_VOCAB = "assets/tokenizer/vocabulary.spm"
PUBLIC_KINDS = ("huggingface", "tf1-checkpoint", "keras-hub-preset")


def public_kind_of(path):
    """"huggingface", "tf1-checkpoint" or "keras-hub-preset" for a public ALBERT checkpoint, else None."""
    path = str(path)
    if tf.io.gfile.exists(path + ".index"):  # a TF1 checkpoint prefix
        return "tf1-checkpoint" if tf.io.gfile.exists(os.path.join(os.path.dirname(path), TF1_CONFIG)) else None
    if tf.io.gfile.exists(os.path.join(path, TF1_CONFIG)):
        return "tf1-checkpoint"
    if tf.io.gfile.exists(os.path.join(path, CHECKPOINTS)):  # a pre-training run also has a config.json
        return None
    if tf.io.gfile.exists(os.path.join(path, HF_WEIGHTS)) and tf.io.gfile.exists(os.path.join(path, HF_CONFIG)):
        return "huggingface"
    if tf.io.gfile.exists(os.path.join(path, KERAS_HUB_WEIGHTS)) and tf.io.gfile.exists(os.path.join(path, KERAS_HUB_CONFIG)):
        return "keras-hub-preset"
    return None


def kind_of(path):
    """"pretraining-run", "finetuned", "export" or one of `PUBLIC_KINDS`; ValueError naming what each
    needs otherwise."""
    if tf.io.gfile.exists(os.path.join(path, CONFIG)) and tf.io.gfile.exists(os.path.join(path, CHECKPOINTS)):
        return "pretraining-run"
    if tf.io.gfile.exists(os.path.join(path, FINETUNED_INFO)):
        return "finetuned"
    if tf.io.gfile.exists(os.path.join(path, ASSETS, EXPORT_INFO)):
        return "export"
    public = public_kind_of(path)
    if public:
        return public
    raise ValueError(f"{path}: not a pre-training run dir ({CONFIG} + {CHECKPOINTS}/), a fine-tuning dir "
                     f"({FINETUNED_INFO}), an albert-act SavedModel ({ASSETS}/{EXPORT_INFO}), or a public ALBERT "
                     f"checkpoint: Hugging Face ({HF_CONFIG} + {HF_WEIGHTS}), TF1 ({TF1_CONFIG} + model.ckpt*.index) "
                     f"or keras-hub ({KERAS_HUB_CONFIG} + {KERAS_HUB_WEIGHTS})")


def read_json(path):
    """The JSON object (a dict) in `path`; a ValueError names the file, and the line and column
    where it stops being JSON (a truncated or hand-edited config), or what it holds instead."""
    if tf.io.gfile.isdir(path):
        raise ValueError(f"{path} is a directory, not a JSON file")
    try:
        with tf.io.gfile.GFile(path) as f:
            value = json.load(f)
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} line {error.lineno} column {error.colno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file (not UTF-8), so not JSON") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: a JSON {type(value).__name__} where an object ({{...}}) was expected")
    return value


def write_json(path, value):
    """Writes `value` as JSON, whole: a local file is written beside `path` and renamed over it."""
    if "://" in str(path):
        with tf.io.gfile.GFile(path, "w") as f:
            json.dump(value, f, indent=2)
    else:
        outputs.write_file(path, json.dumps(value, indent=2).encode())


def read_info(path):
    """What `path` holds: {"kind": "pretraining" | "classifier", "backbone": config, ...}."""
    kind = kind_of(path)
    if kind in PUBLIC_KINDS:
        raise ValueError(f"{path} is a {kind}: albert_act.model.loading.source_info reads it")
    if kind == "pretraining-run":
        run = read_json(os.path.join(path, CONFIG))
        return {"kind": "pretraining", "backbone": run["backbone"], "pretraining": run}
    if kind == "finetuned":
        return read_json(os.path.join(path, FINETUNED_INFO))
    return read_json(os.path.join(path, ASSETS, EXPORT_INFO))


def vocab_candidates(path):
    """Where the vocabulary of a run, fine-tuning dir, export or public checkpoint lies, in the order to try."""
    if public_kind_of(path):
        directory = os.path.dirname(path) if tf.io.gfile.exists(str(path) + ".index") else path
        return [os.path.join(directory, name) for name in (HF_VOCAB, TF1_VOCAB, KERAS_HUB_VOCAB)]
    return [os.path.join(path, VOCAB), os.path.join(path, ASSETS, VOCAB)]


def find_vocab(path):
    """The first of `vocab_candidates(path)` that exists, or None."""
    return next((c for c in vocab_candidates(path) if tf.io.gfile.exists(c)), None)


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


SAVED_MODEL_ENTRIES = {SAVED_MODEL, "variables", ASSETS, "fingerprint.pb", "saved_model.pbtxt"}


def same_path(a, b):
    """Whether two paths name the same dir: local ones resolved (links, `..`, a trailing slash),
    remote ones (gs://) compared as written without a trailing slash."""
    norm = lambda p: str(p).rstrip("/") if "://" in str(p) else os.path.realpath(p)  # noqa: E731
    return norm(a) == norm(b)


def check_export_target(export_dir, overwrite=False, source=None):
    """Refuses, before any model is loaded, to write an export where it would destroy something.

    An empty or missing dir is fine. An existing SavedModel is replaced only with `overwrite`.
    Never replaced: `source` itself (the checkpoint being exported), a pre-training run, a
    fine-tuning dir, or a dir holding anything a SavedModel does not.
    """
    if source is not None and same_path(export_dir, source):
        raise ValueError(f"{export_dir} is the --checkpoint being exported; write the export to another dir")
    outputs.check_dir_target(export_dir)
    if not tf.io.gfile.exists(export_dir) or not tf.io.gfile.listdir(export_dir):
        return
    if not tf.io.gfile.isdir(export_dir):
        raise ValueError(f"{export_dir} is a file, not a directory")
    entries = sorted(e.rstrip("/") for e in tf.io.gfile.listdir(export_dir))
    for kind, marker in (("a pre-training run", CONFIG), ("a fine-tuning dir", FINETUNED_INFO)):
        if marker in entries:
            raise ValueError(f"{export_dir} holds {kind} ({marker}); --overwrite replaces only a SavedModel, "
                             "so choose another --output")
    others = [e for e in entries if e not in SAVED_MODEL_ENTRIES]
    if others:
        raise ValueError(f"{export_dir} holds other files ({', '.join(others[:5])}); --overwrite replaces only a "
                         "SavedModel, so choose another --output")
    if not overwrite:
        raise ValueError(f"{export_dir} exists; choose a new version number (e.g. .../2) or pass --overwrite")
