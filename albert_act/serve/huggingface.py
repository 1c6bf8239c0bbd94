"""A fixed-depth pre-training model written as a Hugging Face ALBERT dir (config.json,
model.safetensors, spiece.model), which transformers, keras-hub and `--init` read: the inverse
of `albert_act.io.public_checkpoints`' reading, from its tables of names and layouts."""

import json
import os

import numpy as np
import tensorflow as tf

from albert_act.base import artifacts, outputs, text_files
from albert_act.io.public_checkpoints import (BACKBONE_WEIGHTS, DENSE, HEADS_BIAS, HEADS_IN, HEADS_OUT, MLM_WEIGHTS,
                                              OUTPUT_WEIGHTS, POOLER_WEIGHTS, SOP_WEIGHTS)
from albert_act.io.source import Source


def export_huggingface(checkpoint, output, vocab=None, overwrite=False):
    """Writes the pre-training model at `checkpoint` (any `Source`) to `output`; returns `output`.
    A full disk or Ctrl-C leaves an existing dir whole (written beside it, then renamed over it)."""
    source = Source.open(checkpoint)
    artifacts.check_huggingface_target(output, overwrite)  # before any weight is read
    model, info = source.pretraining_model()
    tokenizer = source.tokenizer(vocab)
    weights = {v.path: v.numpy() for v in model.weights}
    if "://" in output:  # gs:// has no rename of a dir: written in place
        write_huggingface(weights, info["backbone"], output, tokenizer.model_proto)
        return output
    path = outputs.followed(output)  # a symlink: into the folder it names
    with outputs.staging_dir(os.path.dirname(path)) as staging:
        staged = os.path.join(staging, "huggingface")
        write_huggingface(weights, info["backbone"], staged, tokenizer.model_proto)
        outputs.replace_dir(staged, path, staging)
    return output


def write_huggingface(weights, backbone_config, output_dir, vocab_bytes=None):
    """Writes a Hugging Face ALBERT dir (AlbertForPreTraining layout: config.json, model.safetensors,
    spiece.model) from our weights {variable path: array} and backbone config.

    Only a model that Hugging Face's ALBERT computes the same is written: shared weights, fixed
    depth (`halting="none"`), which `read_albert_checkpoint` and keras-hub read back.
    """
    from safetensors.numpy import save

    if backbone_config.get("halting", "act") != "none" or not backbone_config.get("share_weights", True):
        raise ValueError("a Hugging Face ALBERT has one shared layer at fixed depth: this model has "
                         f"halting={backbone_config.get('halting')!r}, share_weights="
                         f"{backbone_config.get('share_weights')} (pre-train with --halting none)")
    tensors = {}
    for table, prefix, head in ((BACKBONE_WEIGHTS + POOLER_WEIGHTS, "albert.", False), (MLM_WEIGHTS, "", True),
                                (SOP_WEIGHTS, "", True)):
        if head and not all(entry[0] in weights for entry in table):
            continue
        for ours, hf_key, _, layout in table:
            tensors[prefix + hf_key] = _from_ours(weights[ours], layout, True)
    if "predictions.bias" in tensors:  # what transformers itself saves for the tied decoder
        tensors["predictions.decoder.bias"] = tensors["predictions.bias"].copy()
    config = {
        "architectures": ["AlbertForPreTraining"], "model_type": "albert",
        "vocab_size": backbone_config["vocabulary_size"], "embedding_size": backbone_config["embedding_dim"],
        "hidden_size": backbone_config["hidden_dim"], "num_attention_heads": backbone_config["num_heads"],
        "intermediate_size": backbone_config["intermediate_dim"],
        "num_hidden_layers": backbone_config["max_iterations"], "num_hidden_groups": 1, "inner_group_num": 1,
        "hidden_act": "gelu_new" if backbone_config.get("gelu_approximate", True) else "gelu",
        "max_position_embeddings": backbone_config["max_sequence_length"],
        "type_vocab_size": backbone_config.get("num_segments", 2),
        "layer_norm_eps": backbone_config.get("layer_norm_epsilon", 1e-12),
        "initializer_range": backbone_config.get("initializer_range", 0.02),
        "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "classifier_dropout_prob": 0.1,
        "position_embedding_type": "absolute", "pad_token_id": 0, "bos_token_id": 2, "eos_token_id": 3,
    }
    text_files.makedirs(output_dir)
    with tf.io.gfile.GFile(os.path.join(output_dir, artifacts.HF_WEIGHTS), "wb") as f:
        f.write(save(tensors, metadata={"format": "pt"}))  # "pt": what transformers expects to find
    with tf.io.gfile.GFile(os.path.join(output_dir, artifacts.HF_CONFIG), "w") as f:
        json.dump(config, f, indent=2)
    if vocab_bytes is not None:
        with tf.io.gfile.GFile(os.path.join(output_dir, artifacts.HF_VOCAB), "wb") as f:
            f.write(vocab_bytes)
    return output_dir


def _from_ours(value, layout, store_as_out_in):
    """The inverse of `_to_ours`: our variable's value as the checkpoint stores it."""
    value = np.asarray(value, dtype=np.float32)
    if layout == HEADS_IN:
        value = value.reshape(value.shape[0], -1)
    elif layout == HEADS_BIAS:
        value = value.reshape(-1)
    elif layout == HEADS_OUT:
        value = value.reshape(-1, value.shape[-1])
    if layout == OUTPUT_WEIGHTS or (layout in (DENSE, HEADS_IN, HEADS_OUT) and store_as_out_in):
        value = value.T
    return np.ascontiguousarray(value)
