"""Loading trained weights and their vocabulary from a pre-training run dir, a fine-tuning dir,
or a SavedModel written by `albert_act.serving` (its asset albert_act_export.json says what it is).

Weights are matched by variable path, so a backbone loads from any of them, and a whole
model (pre-training or classifier) from a source that holds its heads.
"""

import json
import os

import tensorflow as tf

from albert_act.backbone import AlbertActBackbone
from albert_act.serving import EXPORT_INFO, VOCAB
from pipelines.tokenizer import Tokenizer

FINETUNED_INFO = "classifier.json"  # a fine-tuning output dir: this + classifier.weights.h5 + vocab.model


def kind_of(init):
    """"pretraining-run", "finetuned", or "export"; ValueError for anything else."""
    if tf.io.gfile.exists(os.path.join(init, "config.json")) and tf.io.gfile.exists(os.path.join(init, "checkpoints")):
        return "pretraining-run"
    if tf.io.gfile.exists(os.path.join(init, FINETUNED_INFO)):
        return "finetuned"
    if tf.io.gfile.exists(os.path.join(init, "assets", EXPORT_INFO)):
        return "export"
    raise ValueError(f"{init}: not a pre-training run dir (config.json + checkpoints/), a fine-tuning dir "
                     f"({FINETUNED_INFO}) or an albert-act SavedModel (assets/{EXPORT_INFO})")


def read_info(init):
    """The description of `init`: {"kind": "pretraining" | "classifier", "backbone": config, ...}."""
    kind = kind_of(init)
    if kind == "pretraining-run":
        with tf.io.gfile.GFile(os.path.join(init, "config.json")) as f:
            run = json.load(f)
        return {"kind": "pretraining", "backbone": run["backbone"], "pretraining": run}
    path = os.path.join(init, FINETUNED_INFO) if kind == "finetuned" else os.path.join(init, "assets", EXPORT_INFO)
    with tf.io.gfile.GFile(path) as f:
        return json.load(f)


def read_weights(init):
    """{variable path: numpy value} of every model weight stored in `init`."""
    kind = kind_of(init)
    if kind == "pretraining-run":
        checkpoint = tf.train.latest_checkpoint(os.path.join(init, "checkpoints"))
        if checkpoint is None:
            raise ValueError(f"{init}: no checkpoint in {os.path.join(init, 'checkpoints')}")
        reader = tf.train.load_checkpoint(checkpoint)
        prefix, suffix = "model/", "/.ATTRIBUTES/VARIABLE_VALUE"
        return {name[len(prefix) : -len(suffix)].replace(".S", "/"): reader.get_tensor(name)
                for name in reader.get_variable_to_shape_map()
                if name.startswith(prefix)}  # not the optimizer's or the input pipeline's state
    if kind == "finetuned":
        from albert_act.finetuning import WEIGHTS

        model = classifier_from_info(read_info(init))
        model.load_weights(os.path.join(init, WEIGHTS))
        return {v.path: v.numpy() for v in model.variables}
    return {v.name.removesuffix(":0"): v.numpy() for v in tf.saved_model.load(init).variables}


def assign_weights(model, values, source):
    """Sets every weight of `model` from `values` by path; ValueError names a missing or misshapen one."""
    for variable in model.weights:
        value = values.get(variable.path)
        if value is None:
            raise ValueError(f"{source}: no weight for {variable.path}")
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{source}: {variable.path} has shape {value.shape}, the model needs {variable.shape}")
        variable.assign(value)


def load_tokenizer(init, vocab=None, vocabulary_size=None):
    """The vocabulary given, or the one stored in `init` (vocab.model, or assets/vocab.model)."""
    candidates = [vocab] if vocab else [os.path.join(init, VOCAB), os.path.join(init, "assets", VOCAB)]
    found = next((c for c in candidates if tf.io.gfile.exists(c)), None)
    if found is None:
        raise ValueError(f"no vocabulary at {candidates[0]}; pass --vocab (the SentencePiece model of pre-training)")
    tokenizer = Tokenizer.from_file(found)
    if vocabulary_size is not None and tokenizer.vocabulary_size != vocabulary_size:
        raise ValueError(f"{found} has {tokenizer.vocabulary_size} pieces, the model {vocabulary_size}")
    return tokenizer


def _backbone_kwargs(config):
    return {k: v for k, v in config.items() if k not in ("name", "trainable", "dtype")}


def classifier_from_info(info, dropout=None):
    """An untrained `AlbertActClassifier` shaped (and named, so weight paths match) as `info` describes."""
    from albert_act.classifier import AlbertActClassifier

    backbone = AlbertActBackbone(**_backbone_kwargs(info["backbone"]), name=info["backbone"]["name"])
    return AlbertActClassifier(backbone, num_classes=info["num_classes"],
                               dropout=info.get("dropout", 0.0) if dropout is None else dropout)


def load_pretrained_backbone(init, vocab=None, dropout=0.1, **overrides):
    """(backbone, tokenizer). Every backbone weight must be found, with its shape.

    `overrides` change settings that do not touch weights (e.g. return_details=True,
    execution="while").
    """
    config = read_info(init)["backbone"]
    backbone = AlbertActBackbone(**{**_backbone_kwargs(config), "dropout": dropout, **overrides})
    assign_weights(backbone, read_weights(init), init)
    return backbone, load_tokenizer(init, vocab, backbone.vocabulary_size)


def load_pretraining_model(init, vocab=None):
    """(AlbertActPretrainingModel with its MLM and SOP heads, tokenizer, info) from a run dir or a pre-training export."""
    from albert_act.pretraining_model import AlbertActPretrainingModel

    info = read_info(init)
    if info["kind"] != "pretraining":
        raise ValueError(f"{init} holds a {info['kind']} model, not a pre-training one (no MLM head)")
    backbone = AlbertActBackbone(**{**_backbone_kwargs(info["backbone"]), "dropout": 0.0})
    model = AlbertActPretrainingModel(backbone)
    assign_weights(model, read_weights(init), init)
    return model, load_tokenizer(init, vocab, backbone.vocabulary_size), info
