"""Writes the trained backbone as a SavedModel (token ids in; named outputs, iterations included)."""

import dataclasses
import json
import os

import tensorflow as tf

from albert_act.pretrained import with_execution


def export_backbone(backbone, export_dir, config=None, vocab=None, execution="sparse"):
    """SavedModel with a `serving_default` signature over token_ids / segment_ids / padding_mask.

    `execution` defaults to "sparse" (CPU/GPU serving computes only running tokens);
    pass "static" for a TPU. The resolved run config (if given) and the backbone config
    are written beside it as albert_act_config.json, the vocabulary (if given) as vocab.model.
    """
    backbone = with_execution(backbone, execution)
    backbone.export(export_dir, format="tf_saved_model", verbose=False)
    if vocab:
        tf.io.gfile.copy(vocab, os.path.join(export_dir, "vocab.model"), overwrite=True)
    record = {"backbone": backbone.get_config()}
    if config is not None:
        record["pretraining"] = json.loads(json.dumps(dataclasses.asdict(config)))
    with tf.io.gfile.GFile(os.path.join(export_dir, "albert_act_config.json"), "w") as f:
        json.dump(record, f, indent=2)
