"""Loading a trained backbone and its vocabulary: from a pre-training run dir, or from a SavedModel
exported by pre-training (albert_act_config.json) or by fine-tuning (albert_act_task.json)."""

import json
import os

import tensorflow as tf

from albert_act.backbone import AlbertActBackbone
from pipelines.tokenizer import Tokenizer

_CONFIG_FILES = ("albert_act_config.json", "albert_act_task.json")


def _weights_and_config(init):
    """({variable path: numpy value}, backbone config) of a run dir or an exported SavedModel."""
    if tf.io.gfile.exists(os.path.join(init, "config.json")):
        with tf.io.gfile.GFile(os.path.join(init, "config.json")) as f:
            config = json.load(f)["backbone"]
        checkpoint = tf.train.latest_checkpoint(os.path.join(init, "checkpoints"))
        if checkpoint is None:
            raise ValueError(f"{init}: no checkpoint in {os.path.join(init, 'checkpoints')}")
        reader = tf.train.load_checkpoint(checkpoint)
        prefix, suffix = "model/", "/.ATTRIBUTES/VARIABLE_VALUE"
        values = {name[len(prefix) : -len(suffix)].replace(".S", "/"): reader.get_tensor(name)
                  for name in reader.get_variable_to_shape_map()
                  if name.startswith(prefix)}  # not the input pipeline's state
        return values, config
    for name in _CONFIG_FILES:
        if tf.io.gfile.exists(os.path.join(init, name)):
            with tf.io.gfile.GFile(os.path.join(init, name)) as f:
                config = json.load(f)["backbone"]
            return {v.name.removesuffix(":0"): v.numpy() for v in tf.saved_model.load(init).variables}, config
    raise ValueError(f"{init}: neither a pre-training run dir (config.json) nor an albert-act SavedModel "
                     f"({' or '.join(_CONFIG_FILES)})")


def load_pretrained_backbone(init, vocab=None, dropout=0.1, **overrides):
    """(backbone, tokenizer). Every backbone weight must be found, with its shape.

    `overrides` change settings that do not touch weights (e.g. return_details=True,
    execution="while").
    """
    values, config = _weights_and_config(init)
    config = {k: v for k, v in config.items() if k not in ("name", "trainable", "dtype")}
    backbone = AlbertActBackbone(**{**config, "dropout": dropout, **overrides})
    for variable in backbone.weights:
        value = values.get(variable.path)
        if value is None:
            raise ValueError(f"{init}: no weight for {variable.path}")
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{init}: {variable.path} has shape {value.shape}, the model needs {variable.shape}")
        variable.assign(value)
    vocab = vocab or os.path.join(init, "vocab.model")
    if not tf.io.gfile.exists(vocab):
        raise ValueError(f"no vocabulary at {vocab}; pass --vocab (the SentencePiece model of pre-training)")
    tokenizer = Tokenizer.from_file(vocab)
    if tokenizer.vocabulary_size != backbone.vocabulary_size:
        raise ValueError(f"{vocab} has {tokenizer.vocabulary_size} pieces, the model {backbone.vocabulary_size}")
    return backbone, tokenizer


def with_execution(backbone, execution):
    """The same backbone (same weights) with another execution mode, e.g. "sparse" for serving."""
    if backbone.execution == execution:
        return backbone
    config = {k: v for k, v in backbone.get_config().items() if k not in ("name", "trainable")}
    rebuilt = AlbertActBackbone(**{**config, "execution": execution})
    rebuilt.set_weights(backbone.get_weights())
    return rebuilt
