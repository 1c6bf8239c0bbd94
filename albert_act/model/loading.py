"""Loading trained weights and their vocabulary from a pre-training run dir, a fine-tuning dir,
a SavedModel written by `albert_act.serve.savedmodel`, or a public ALBERT checkpoint (Hugging Face,
TF1, keras-hub: `albert_act.model.albert_checkpoints`); `albert_act.artifacts` says which is which.

Weights are matched by variable path, so a backbone loads from any of them, and a whole
model (pre-training or classifier) from a source that holds its heads. The halting can differ
from the source's (`halting=`): ACT over a fixed-depth checkpoint gets a new halting unit (its
initializer, `halting_bias_initializer`), a fixed-depth model over an ACT one drops it.
"""

import os

import tensorflow as tf

from albert_act import artifacts
from pipelines import cli
from albert_act.model.albert_checkpoints import read_albert_checkpoint, read_albert_config
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from pipelines.tokenizer import Tokenizer


HALTING_UNIT = "encoder/halting_unit/"


def read_source(init):
    """(info, {variable path: numpy value}) of what `init` holds; info as `artifacts.read_info`."""
    if artifacts.public_kind_of(init):
        checkpoint = read_albert_checkpoint(init)
        return checkpoint.info(), checkpoint.weights
    return artifacts.read_info(init), read_weights(init)


def source_info(init):
    """`artifacts.read_info`, public ALBERT checkpoints included (a fixed-depth pre-training model, from
    its config file alone: `read_source` gives the weights and the heads found)."""
    if artifacts.public_kind_of(init):
        kind, backbone = read_albert_config(init)
        return {"kind": "pretraining", "backbone": backbone, "source_format": kind}
    return artifacts.read_info(init)


def read_weights(init):
    """{variable path: numpy value} of every model weight stored in `init`."""
    kind = artifacts.kind_of(init)
    if kind in artifacts.PUBLIC_KINDS:
        return read_albert_checkpoint(init).weights
    if kind == "pretraining-run":
        checkpoint = tf.train.latest_checkpoint(os.path.join(init, artifacts.CHECKPOINTS))
        if checkpoint is None:
            raise ValueError(f"{init}: no checkpoint in {os.path.join(init, artifacts.CHECKPOINTS)}")
        reader = tf.train.load_checkpoint(checkpoint)
        prefix, suffix = "model/", "/.ATTRIBUTES/VARIABLE_VALUE"
        return {name[len(prefix) : -len(suffix)].replace(".S", "/"): reader.get_tensor(name)
                for name in reader.get_variable_to_shape_map()
                if name.startswith(prefix)}  # not the optimizer's or the input pipeline's state
    if kind == "finetuned":
        model, _, _ = load_finetuned(init, load_vocabulary=False)
        return {v.path: v.numpy() for v in model.variables}
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops the export's graph holds)

    with cli.quiet_stderr():  # loading runs SentencePiece, which logs an INFO line
        loaded = tf.saved_model.load(init)
    return {v.name.removesuffix(":0"): v.numpy() for v in loaded.variables}


def assign_weights(model, values, source, fresh=()):
    """Sets every weight of `model` from `values` by path; ValueError names a missing or misshapen one,
    and a stored weight of the model's own layers that the model has no place for (a config that
    does not match the checkpoint, e.g. halting=none over an ACT checkpoint).

    fresh: path prefixes that may be missing from `values`; those weights keep their initializer.
    Returns the paths left at their initializer."""
    paths = {variable.path for variable in model.weights}
    layers = {path.split("/")[0] for path in paths}
    unused = sorted(k for k in values  # (dropout's RNG state is numbered per process: not a weight)
                    if k.split("/")[0] in layers and k not in paths and "seed_generator" not in k)
    if unused:
        raise ValueError(f"{source}: holds {unused[0]} (and {len(unused) - 1} more), which the model built from "
                         "its config has no place for: does the config match the checkpoint?")
    kept = []
    for variable in model.weights:
        value = values.get(variable.path)
        if value is None and variable.path.startswith(tuple(fresh)):
            kept.append(variable.path)
            continue
        if value is None:
            raise ValueError(f"{source}: no weight for {variable.path}")
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{source}: {variable.path} has shape {value.shape}, the model needs {variable.shape}")
        variable.assign(value)
    return kept


def rehalt(config, values, source, halting=None, max_iterations=None):
    """(backbone config, weights, fresh prefixes) with the halting and depth cap asked for.

    halting "act" over a fixed-depth source: the halting unit is new (fresh). "none" over an ACT
    source: its halting unit is dropped. max_iterations: the depth cap (for halting="none", the depth);
    a checkpoint of unshared blocks keeps its own, one block per iteration.
    """
    config, fresh = dict(config), ()
    if halting is not None and halting != config.get("halting", "act"):
        config["halting"] = halting
        if halting == "act":
            fresh = (HALTING_UNIT,)
        else:
            values = {k: v for k, v in values.items() if not k.startswith(HALTING_UNIT)}
    if max_iterations is not None and max_iterations != config["max_iterations"]:
        if not config.get("share_weights", True):
            raise ValueError(f"{source}: a model of {config['max_iterations']} unshared blocks has that depth; "
                             f"max_iterations={max_iterations} needs shared weights")
        config["max_iterations"] = max_iterations
    return config, values, fresh


def load_tokenizer(init, vocab=None, vocabulary_size=None):
    """The vocabulary given, or the one stored in `init` (vocab.model, or assets/vocab.model)."""
    candidates = [vocab] if vocab else artifacts.vocab_candidates(init)
    found = next((c for c in candidates if tf.io.gfile.exists(c)), None)
    if found is None and vocab:
        raise ValueError(f"--vocab {vocab}: no such file (the SentencePiece model of pre-training)")
    if found is None:
        raise ValueError(f"no vocabulary at {' or '.join(candidates)}; pass --vocab (the SentencePiece model of "
                         "pre-training)")
    tokenizer = Tokenizer.from_file(found)
    if vocabulary_size is not None and tokenizer.vocabulary_size != vocabulary_size:
        raise ValueError(f"{found} has {tokenizer.vocabulary_size} pieces, the model {vocabulary_size}")
    return tokenizer


def _backbone_kwargs(config):
    return {k: v for k, v in config.items() if k not in ("name", "trainable", "dtype")}


def classifier_from_info(info, dropout=None):
    """An untrained `AlbertActClassifier` shaped (and named, so weight paths match) as `info` describes."""
    backbone = AlbertActBackbone(**_backbone_kwargs(info["backbone"]), name=info["backbone"]["name"])
    return AlbertActClassifier(backbone, num_classes=info["num_classes"],
                               dropout=info.get("dropout", 0.0) if dropout is None else dropout)


def load_pretrained_backbone(init, vocab=None, dropout=0.1, halting=None, max_iterations=None, new_weights=None,
                             **overrides):
    """(backbone, tokenizer). Every backbone weight must be found, with its shape (the halting unit
    excepted when `halting` adds ACT to a fixed-depth source: see `rehalt`; the pooler when the
    source has none, e.g. Hugging Face's AlbertForMaskedLM). `new_weights`, a list, receives the
    paths left at their initializer.

    `overrides` change settings that do not touch weights (e.g. return_details=True,
    execution="while", halting_bias_initializer=-2.0 for a new halting unit).
    """
    info, values = read_source(init)
    config, values, fresh = rehalt(_backbone_kwargs(info["backbone"]), values, init, halting, max_iterations)
    backbone = AlbertActBackbone(**{**config, "dropout": dropout, **overrides})
    kept = assign_weights(backbone, values, init, fresh + tuple(info.get("new", ())))
    if new_weights is not None:
        new_weights.extend(kept)
    return backbone, load_tokenizer(init, vocab, backbone.vocabulary_size)


def load_pretraining_model(init, vocab=None, halting=None, max_iterations=None, new_heads=False, **overrides):
    """(AlbertActPretrainingModel with its MLM and SOP heads, tokenizer, info) from a run dir, a pre-training
    export or a public ALBERT checkpoint. info["fresh"] lists the weights left at their initializer:
    a new halting unit, the SOP head and pooler of a checkpoint without them (e.g. Hugging Face's
    AlbertForMaskedLM) and, with `new_heads`, the heads a checkpoint lacks altogether (e.g. an AlbertModel)."""
    info, values = read_source(init)
    if info["kind"] != "pretraining":
        raise ValueError(f"{init} holds a {info['kind']} model, not a pre-training one (no MLM head)")
    config, values, fresh = rehalt(_backbone_kwargs(info["backbone"]), values, init, halting, max_iterations)
    heads = info.get("heads")
    if heads is not None:  # a public checkpoint: its heads may be missing
        if "mlm" not in heads and not new_heads:
            raise ValueError(f"{init}: holds no MLM head (only the encoder, e.g. a Hugging Face AlbertModel); "
                             "it can be fine-tuned (--init), not used for fill-mask")
        fresh += ("sop_head/",) + (("masked_lm_head/",) if new_heads else ()) + tuple(info.get("new", ()))
    backbone = AlbertActBackbone(**{**config, "dropout": 0.0, **overrides})
    model = AlbertActPretrainingModel(backbone)
    info = {**info, "backbone": backbone.get_config(), "fresh": assign_weights(model, values, init, fresh)}
    return model, load_tokenizer(init, vocab, backbone.vocabulary_size), info


def load_finetuned(output_dir, dropout=None, vocab=None, load_vocabulary=True):
    """(AlbertActClassifier with the best epoch's weights, its classifier.json dict, tokenizer or None)
    of a fine-tuning dir."""
    info = artifacts.read_json(os.path.join(output_dir, artifacts.FINETUNED_INFO))
    model = classifier_from_info(info, dropout)
    weights = os.path.join(output_dir, artifacts.WEIGHTS)
    if not tf.io.gfile.exists(weights):
        raise ValueError(f"{output_dir}: no {artifacts.WEIGHTS} (fine-tuning did not finish an epoch)")
    model.load_weights(weights)
    tokenizer = load_tokenizer(output_dir, vocab, model.backbone.vocabulary_size) if load_vocabulary else None
    return model, info, tokenizer
