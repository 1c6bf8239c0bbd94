"""Public ALBERT checkpoints, read into albert-act's weights: Hugging Face, TF1 and keras-hub.

Three formats, each a directory (`albert_act.io.source` tells which, and finds the vocabulary):

    huggingface       config.json ("model_type": "albert") + model.safetensors [+ spiece.model]
                      (AlbertModel, AlbertForMaskedLM or AlbertForPreTraining; read with the
                      `safetensors` package's NumPy API, no torch)
    tf1-checkpoint    albert_config.json + model.ckpt-*.index/.data-* [+ 30k-clean.model]
                      (google-research/albert's release; or the checkpoint prefix itself)
    keras-hub-preset  config.json ("class_name": "AlbertBackbone") + model.weights.h5
                      [+ assets/tokenizer/vocabulary.spm; + task.json/task.weights.h5 of an
                      AlbertMaskedLM, whose MLM head is read too]

Every weight lands at the variable path of `AlbertActPretrainingModel` (which the backbone
shares): embeddings, the shared block, the pooler, the MLM head (transform dense + LayerNorm +
output bias; the decoder is tied to the token embeddings) and the SOP head where the checkpoint
has one. The sizes, the vocabulary, the GELU variant and the LayerNorm epsilon come from the
checkpoint's config; the depth it was trained at (`num_hidden_layers`) becomes `max_iterations`
with `halting="none"`, which is ALBERT exactly. Anything our model cannot represent (several
groups, more than one inner layer, another activation, an untied decoder) is refused, naming the
setting or the weight and its value.

`albert_act.serve.huggingface` writes the inverse (config.json + model.safetensors + spiece.model)
from these tables, so a fixed-depth model trained here can be read by Hugging Face tools, by
keras-hub and by us.
"""

import dataclasses
import os
import re

import numpy as np
import tensorflow as tf

from albert_act.base import artifacts

SAME, DENSE, HEADS_IN, HEADS_BIAS, HEADS_OUT, OUTPUT_WEIGHTS = "same", "dense", "heads_in", "heads_bias", "heads_out", "output_weights"

_BLOCK = "encoder/transformer_block_0/"
_HF_LAYER = "encoder.albert_layer_groups.0.albert_layers.0."
_TF1_LAYER = "bert/encoder/transformer/group_0/inner_group_0/"

# (our variable path, Hugging Face key (without "albert."), TF1 variable name, layout). Layouts:
# SAME as stored; DENSE our (in, out) kernel = HF's (out, in) transposed = TF1's (in, out);
# HEADS_IN/HEADS_BIAS/HEADS_OUT the attention's (H, heads, head) / (heads, head) / (heads, head, H)
# = the 2-D kernels reshaped; OUTPUT_WEIGHTS the SOP kernel, stored (2, H) in both.
# Names: transformers' modeling_albert.py and keras-hub's convert_albert.py; google-research/albert's
# modeling.py (attention_ffn_block, transformer_model) and run_pretraining.py (cls/...).
BACKBONE_WEIGHTS = [
    ("embeddings/token_embedding/embeddings", "embeddings.word_embeddings.weight", "bert/embeddings/word_embeddings", SAME),
    ("embeddings/position_embeddings", "embeddings.position_embeddings.weight", "bert/embeddings/position_embeddings", SAME),
    ("embeddings/segment_embedding/embeddings", "embeddings.token_type_embeddings.weight",
     "bert/embeddings/token_type_embeddings", SAME),
    ("embeddings/layer_norm/gamma", "embeddings.LayerNorm.weight", "bert/embeddings/LayerNorm/gamma", SAME),
    ("embeddings/layer_norm/beta", "embeddings.LayerNorm.bias", "bert/embeddings/LayerNorm/beta", SAME),
    ("embeddings/projection/kernel", "encoder.embedding_hidden_mapping_in.weight",
     "bert/encoder/embedding_hidden_mapping_in/kernel", DENSE),
    ("embeddings/projection/bias", "encoder.embedding_hidden_mapping_in.bias",
     "bert/encoder/embedding_hidden_mapping_in/bias", SAME),
    *[entry for name in ("query", "key", "value") for entry in (
        (f"{_BLOCK}{name}/kernel", f"{_HF_LAYER}attention.{name}.weight", f"{_TF1_LAYER}attention_1/self/{name}/kernel", HEADS_IN),
        (f"{_BLOCK}{name}/bias", f"{_HF_LAYER}attention.{name}.bias", f"{_TF1_LAYER}attention_1/self/{name}/bias", HEADS_BIAS))],
    (f"{_BLOCK}attention_output/kernel", f"{_HF_LAYER}attention.dense.weight", f"{_TF1_LAYER}attention_1/output/dense/kernel", HEADS_OUT),
    (f"{_BLOCK}attention_output/bias", f"{_HF_LAYER}attention.dense.bias", f"{_TF1_LAYER}attention_1/output/dense/bias", SAME),
    (f"{_BLOCK}attention_layer_norm/gamma", f"{_HF_LAYER}attention.LayerNorm.weight", f"{_TF1_LAYER}LayerNorm/gamma", SAME),
    (f"{_BLOCK}attention_layer_norm/beta", f"{_HF_LAYER}attention.LayerNorm.bias", f"{_TF1_LAYER}LayerNorm/beta", SAME),
    (f"{_BLOCK}intermediate/kernel", f"{_HF_LAYER}ffn.weight", f"{_TF1_LAYER}ffn_1/intermediate/dense/kernel", DENSE),
    (f"{_BLOCK}intermediate/bias", f"{_HF_LAYER}ffn.bias", f"{_TF1_LAYER}ffn_1/intermediate/dense/bias", SAME),
    (f"{_BLOCK}output/kernel", f"{_HF_LAYER}ffn_output.weight", f"{_TF1_LAYER}ffn_1/intermediate/output/dense/kernel", DENSE),
    (f"{_BLOCK}output/bias", f"{_HF_LAYER}ffn_output.bias", f"{_TF1_LAYER}ffn_1/intermediate/output/dense/bias", SAME),
    (f"{_BLOCK}output_layer_norm/gamma", f"{_HF_LAYER}full_layer_layer_norm.weight", f"{_TF1_LAYER}LayerNorm_1/gamma", SAME),
    (f"{_BLOCK}output_layer_norm/beta", f"{_HF_LAYER}full_layer_layer_norm.bias", f"{_TF1_LAYER}LayerNorm_1/beta", SAME),
]
# The pooler (dense + tanh on [CLS]) is part of our backbone, but transformers builds
# AlbertForMaskedLM without one: where it is missing it starts at its initializer (`AlbertCheckpoint.new`).
POOLER_WEIGHTS = [
    ("pooler/kernel", "pooler.weight", "bert/pooler/dense/kernel", DENSE),
    ("pooler/bias", "pooler.bias", "bert/pooler/dense/bias", SAME),
]
MLM_WEIGHTS = [
    ("masked_lm_head/dense/kernel", "predictions.dense.weight", "cls/predictions/transform/dense/kernel", DENSE),
    ("masked_lm_head/dense/bias", "predictions.dense.bias", "cls/predictions/transform/dense/bias", SAME),
    ("masked_lm_head/layer_norm/gamma", "predictions.LayerNorm.weight", "cls/predictions/transform/LayerNorm/gamma", SAME),
    ("masked_lm_head/layer_norm/beta", "predictions.LayerNorm.bias", "cls/predictions/transform/LayerNorm/beta", SAME),
    ("masked_lm_head/output_bias", "predictions.bias", "cls/predictions/output_bias", SAME),
]
SOP_WEIGHTS = [
    ("sop_head/kernel", "sop_classifier.classifier.weight", "cls/seq_relationship/output_weights", OUTPUT_WEIGHTS),
    ("sop_head/bias", "sop_classifier.classifier.bias", "cls/seq_relationship/output_bias", SAME),
]
HEADS = {"mlm": MLM_WEIGHTS, "sop": SOP_WEIGHTS}
ALL_WEIGHTS = BACKBONE_WEIGHTS + POOLER_WEIGHTS + MLM_WEIGHTS + SOP_WEIGHTS

# Hugging Face's names for the GELU in its tanh form (ALBERT's own) and the exact one.
HF_ACTIVATIONS = {"gelu_new": True, "gelu_pytorch_tanh": True, "gelu": False}
# google-research/albert's modeling.gelu is the tanh form, whatever the name says.
TF1_ACTIVATIONS = {"gelu": True}
_HF_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")  # index buffers, not weights
_TF1_SKIPPED = re.compile(r"(^global_step$|/adam_[mv]$|/lamb_[mv]$|/Adam(_1)?$)")  # optimizer state


@dataclasses.dataclass
class AlbertCheckpoint:
    """What a public ALBERT checkpoint holds, in our terms.

    format: "huggingface", "tf1-checkpoint" or "keras-hub-preset".
    backbone: `AlbertActBackbone` arguments of the model as trained: its sizes, GELU variant and
        epsilon, `max_iterations` = its depth, `halting="none"`, shared weights.
    weights: {our variable path: array} (backbone, and the heads in `heads`).
    heads: the heads found, of ("mlm", "sop").
    ignored: stored names that are not part of the model (e.g. a fine-tuned classifier).
    new: prefixes of backbone weights the checkpoint lacks, left at their initializer when loaded:
        ("pooler/",) for Hugging Face's AlbertForMaskedLM, which has no pooler.
    """

    format: str
    path: str
    backbone: dict
    weights: dict
    heads: tuple
    ignored: list = dataclasses.field(default_factory=list)
    new: tuple = ()



def read_albert_checkpoint(path, kind, backbone=None):
    """Reads the checkpoint of format `kind` at `path` (see the module docstring); ValueError says what
    is wrong. `albert_act.io.source.Source` works out the kind, and passes the `backbone` config
    it read (`read_albert_config`) so that it is read once."""
    backbone = backbone or read_albert_config(path, kind)
    return {"huggingface": _read_huggingface, "tf1-checkpoint": _read_tf1,
            "keras-hub-preset": _read_keras_hub}[kind](path, backbone)


def read_albert_config(path, kind):
    """The backbone config of the checkpoint of format `kind` at `path`, from its config file alone."""
    return {"huggingface": _huggingface_config, "tf1-checkpoint": _tf1_config,
            "keras-hub-preset": _keras_hub_config}[kind](path)


# --- configs ---------------------------------------------------------------------------------------


def _refuse_layout(source, groups, inner, depth):
    if groups != 1:
        raise ValueError(f"{source}: num_hidden_groups = {groups}; albert-act iterates one shared layer "
                         "(num_hidden_groups = 1, as every released ALBERT)")
    if inner != 1:
        raise ValueError(f"{source}: inner_group_num = {inner}; albert-act's shared layer is one attention + FFN "
                         "block (inner_group_num = 1)")
    if not isinstance(depth, int) or depth < 1:
        raise ValueError(f"{source}: num_hidden_layers = {depth!r}; expected a positive integer")


def _sizes(config, source, epsilon, activations):
    act = config.get("hidden_act", "gelu")
    if act not in activations:
        raise ValueError(f"{source}: hidden_act = {act!r}; albert-act's layer computes GELU, one of "
                         f"{sorted(activations)} here")
    try:
        sizes = dict(vocabulary_size=config["vocab_size"], embedding_dim=config["embedding_size"],
                     hidden_dim=config["hidden_size"], num_heads=config["num_attention_heads"],
                     intermediate_dim=config["intermediate_size"],
                     max_sequence_length=config["max_position_embeddings"],
                     num_segments=config.get("type_vocab_size", 2))
    except KeyError as missing:
        raise ValueError(f"{source}: no {missing} in the config") from None
    if sizes["hidden_dim"] % sizes["num_heads"]:
        raise ValueError(f"{source}: hidden_size {sizes['hidden_dim']} is not a multiple of "
                         f"num_attention_heads {sizes['num_heads']}")
    return {**sizes, "layer_norm_epsilon": float(epsilon), "initializer_range": config.get("initializer_range", 0.02),
            "gelu_approximate": activations[act], "max_iterations": config["num_hidden_layers"],
            "halting": "none", "share_weights": True}


def huggingface_backbone_config(config, source):
    """Our backbone arguments from a Hugging Face `AlbertConfig` dict."""
    if config.get("model_type") != "albert":
        raise ValueError(f"{source}: model_type = {config.get('model_type')!r}, not 'albert'")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{source}: position_embedding_type = {config['position_embedding_type']!r}; albert-act "
                         "has learned absolute positions only")
    _refuse_layout(source, config.get("num_hidden_groups", 1), config.get("inner_group_num", 1),
                   config.get("num_hidden_layers"))
    return _sizes(config, source, config.get("layer_norm_eps", 1e-12), HF_ACTIVATIONS)


def tf1_backbone_config(config, source):
    """Our backbone arguments from google-research/albert's `albert_config.json`."""
    _refuse_layout(source, config.get("num_hidden_groups", 1), config.get("inner_group_num", 1),
                   config.get("num_hidden_layers"))
    if config.get("net_structure_type", 0) != 0 or config.get("layers_to_keep"):
        raise ValueError(f"{source}: net_structure_type = {config.get('net_structure_type')}, layers_to_keep = "
                         f"{config.get('layers_to_keep')}; albert-act reads the standard structure (0, [])")
    return _sizes(config, source, 1e-12, TF1_ACTIVATIONS)  # contrib layer_norm's epsilon


def _huggingface_config(path):
    config_path = os.path.join(path, artifacts.HF_CONFIG)
    return huggingface_backbone_config(artifacts.read_json(config_path), config_path)


def _tf1_directory(path):
    """The dir of a TF1 checkpoint given as its dir or as its prefix."""
    return path if tf.io.gfile.isdir(path) else os.path.dirname(path)


def _tf1_config(path):
    config_path = os.path.join(_tf1_directory(path), artifacts.TF1_CONFIG)
    return tf1_backbone_config(artifacts.read_json(config_path), config_path)


def _keras_hub_config(path):
    """Our backbone arguments from a keras-hub preset's config.json (keras-hub fixes GELU's tanh
    form and the epsilon 1e-12 in its AlbertBackbone)."""
    config_path = os.path.join(path, artifacts.KERAS_HUB_CONFIG)
    described = artifacts.read_json(config_path)
    if described.get("class_name") != "AlbertBackbone":
        raise ValueError(f"{config_path}: class_name = {described.get('class_name')!r}, not 'AlbertBackbone'")
    hub = described.get("config", {})
    _refuse_layout(config_path, hub.get("num_groups", 1), hub.get("num_inner_repetitions", 1), hub.get("num_layers"))
    try:
        sizes = {k: hub[k] for k in ("vocabulary_size", "embedding_dim", "hidden_dim", "num_heads", "intermediate_dim",
                                     "max_sequence_length", "num_segments")}
    except KeyError as missing:
        raise ValueError(f"{config_path}: no {missing} in the config") from None
    return {**sizes, "layer_norm_epsilon": 1e-12, "initializer_range": 0.02, "gelu_approximate": True,
            "max_iterations": hub["num_layers"], "halting": "none", "share_weights": True}


# --- weights ----------------------------------------------------------------------------------------


def _to_ours(value, layout, stored_as_out_in, heads):
    """A stored array in our variable's layout; `stored_as_out_in`: kernels are (out, in) (torch Linear)."""
    value = np.asarray(value, dtype=np.float32)
    if layout in (DENSE, HEADS_IN, HEADS_OUT) and stored_as_out_in:
        value = value.T
    if layout == OUTPUT_WEIGHTS:
        value = value.T  # (2, H) -> (H, 2)
    if layout == HEADS_IN:
        return value.reshape(value.shape[0], heads, -1)
    if layout == HEADS_BIAS:
        return value.reshape(heads, -1)
    if layout == HEADS_OUT:
        return value.reshape(heads, -1, value.shape[-1])
    return value


def _stored_names(column):
    """{our variable path: the checkpoint's name} for column 1 (Hugging Face) or 2 (TF1)."""
    return {entry[0]: entry[column] for entry in ALL_WEIGHTS}


def _collect(stored, source, column, stored_as_out_in, heads):
    """(weights, heads found, new): every backbone weight (required; the pooler may be missing,
    then `new` is ("pooler/",)) and each head found whole."""
    def take(table, required):
        names = [entry[column] for entry in table]
        if not required and not any(n in stored for n in names):
            return None
        missing = [n for n in names if n not in stored]
        if missing:
            raise ValueError(f"{source}: no weight {missing[0]} ({len(missing) - 1} more missing)")
        return {entry[0]: _to_ours(stored[entry[column]], entry[3], stored_as_out_in, heads) for entry in table}

    weights = take(BACKBONE_WEIGHTS, required=True)
    pooler = take(POOLER_WEIGHTS, required=False)
    weights.update(pooler or {})
    found = []
    for head, table in HEADS.items():
        part = take(table, required=False)
        if part is not None:
            weights.update(part)
            found.append(head)
    return weights, tuple(found), () if pooler else ("pooler/",)


def _check_shapes(weights, backbone, source, names):
    """The config's sizes against the stored weights: the first that disagrees is named."""
    vocab, embed, hidden = backbone["vocabulary_size"], backbone["embedding_dim"], backbone["hidden_dim"]
    heads, ffn = backbone["num_heads"], backbone["intermediate_dim"]
    expected = {
        "embeddings/token_embedding/embeddings": (vocab, embed),
        "embeddings/position_embeddings": (backbone["max_sequence_length"], embed),
        "embeddings/segment_embedding/embeddings": (backbone["num_segments"], embed),
        "embeddings/projection/kernel": (embed, hidden),
        f"{_BLOCK}query/kernel": (hidden, heads, hidden // heads),
        f"{_BLOCK}attention_output/kernel": (heads, hidden // heads, hidden),
        f"{_BLOCK}intermediate/kernel": (hidden, ffn),
        "pooler/kernel": (hidden, hidden),
        "masked_lm_head/dense/kernel": (hidden, embed),
        "masked_lm_head/output_bias": (vocab,),
        "sop_head/kernel": (hidden, 2),
    }
    for path, shape in expected.items():
        if path in weights and tuple(weights[path].shape) != shape:
            raise ValueError(f"{source}: {names.get(path, path)} does not match the config: {tuple(weights[path].shape)} "
                             f"where its sizes give {shape} (as albert-act lays it out: kernels (in, out))")


def _read_huggingface(path, backbone):
    from safetensors.numpy import load  # the NumPy API: no torch

    weights_path = os.path.join(path, artifacts.HF_WEIGHTS)
    with tf.io.gfile.GFile(weights_path, "rb") as f:  # local or gs://
        data = f.read()
    try:
        stored = {key.removeprefix("albert."): value for key, value in load(data).items()}
    except Exception as error:  # safetensors raises its own SafetensorError
        raise ValueError(f"{weights_path}: not a readable safetensors file ({error})") from None
    for key in stored:
        match = re.search(r"albert_layer_groups\.(\d+)\.albert_layers\.(\d+)\.", key)
        if match and match.groups() != ("0", "0"):
            raise ValueError(f"{weights_path}: holds {key}; albert-act has one shared layer (group 0, inner "
                             "layer 0)")
    # The decoder is tied to the token embeddings; safetensors stores a tied tensor once, or twice.
    decoder = stored.pop("predictions.decoder.weight", None)
    if decoder is not None and not np.array_equal(decoder, stored.get("embeddings.word_embeddings.weight")):
        raise ValueError(f"{weights_path}: predictions.decoder.weight differs from embeddings.word_embeddings.weight; "
                         "albert-act's MLM decoder is tied to the token embeddings")
    decoder_bias = stored.pop("predictions.decoder.bias", None)
    if decoder_bias is not None:
        if "predictions.bias" in stored and not np.array_equal(decoder_bias, stored["predictions.bias"]):
            raise ValueError(f"{weights_path}: predictions.decoder.bias differs from predictions.bias")
        stored.setdefault("predictions.bias", decoder_bias)
    weights, heads, new = _collect(stored, weights_path, 1, True, backbone["num_heads"])
    names = _stored_names(1)
    ignored = sorted(k for k in stored if k not in set(names.values()) and k not in _HF_BUFFERS)
    _check_shapes(weights, backbone, weights_path, names)
    return AlbertCheckpoint("huggingface", path, backbone, weights, heads, ignored, new)


def tf1_checkpoint_prefix(path):
    """The checkpoint prefix at `path`: `path` itself, the dir's `checkpoint` file's, or its one *.index."""
    if tf.io.gfile.exists(path + ".index"):
        return path
    latest = tf.train.latest_checkpoint(path)
    if latest:
        return latest
    indexes = sorted(tf.io.gfile.glob(os.path.join(path, "*.index")))
    if not indexes:
        raise ValueError(f"{path}: no TF1 checkpoint (model.ckpt*.index) beside {artifacts.TF1_CONFIG}")
    if len(indexes) > 1:
        raise ValueError(f"{path}: holds {len(indexes)} checkpoints ({', '.join(os.path.basename(i) for i in indexes)}); "
                         "pass the prefix of one, e.g. " + indexes[-1].removesuffix(".index"))
    return indexes[0].removesuffix(".index")


def _read_tf1(path, backbone):
    prefix = tf1_checkpoint_prefix(path)
    try:
        reader = tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise ValueError(f"{prefix}: not a readable TF checkpoint ({str(error).splitlines()[0]})") from None
    names = [n for n in reader.get_variable_to_shape_map() if not _TF1_SKIPPED.search(n)]
    for name in names:
        match = re.search(r"/group_(\d+)/inner_group_(\d+)/", name)
        if match and match.groups() != ("0", "0"):
            raise ValueError(f"{prefix}: holds {name}; albert-act has one shared layer (group_0/inner_group_0)")
    stored = {n: reader.get_tensor(n) for n in names}
    weights, heads, new = _collect(stored, prefix, 2, False, backbone["num_heads"])
    stored_names = _stored_names(2)
    _check_shapes(weights, backbone, prefix, stored_names)
    return AlbertCheckpoint("tf1-checkpoint", path, backbone, weights, heads,
                            sorted(n for n in names if n not in set(stored_names.values())), new)


def _read_keras_hub(path, backbone):
    import keras_hub

    from albert_act.io.keras_hub_weights import copy_keras_hub_albert_weights
    from albert_act.model.backbone import AlbertActBackbone

    with_head = tf.io.gfile.exists(os.path.join(path, artifacts.KERAS_HUB_TASK))
    if with_head:
        task = keras_hub.models.AlbertMaskedLM.from_preset(path, preprocessor=None)
        hub = task.backbone
    else:
        hub = keras_hub.models.AlbertBackbone.from_preset(path)
    ours = AlbertActBackbone(**backbone)
    copy_keras_hub_albert_weights(hub, ours)
    weights = {v.path: v.numpy() for v in ours.weights}
    heads = ()
    if with_head:
        head = task.masked_lm_head
        weights.update({
            "masked_lm_head/dense/kernel": head._intermediate_dense.kernel.numpy(),
            "masked_lm_head/dense/bias": head._intermediate_dense.bias.numpy(),
            "masked_lm_head/layer_norm/gamma": head._intermediate_layer_norm.gamma.numpy(),
            "masked_lm_head/layer_norm/beta": head._intermediate_layer_norm.beta.numpy(),
            "masked_lm_head/output_bias": head._bias.numpy(),
        })
        heads = ("mlm",)
    return AlbertCheckpoint("keras-hub-preset", path, backbone, weights, heads)
