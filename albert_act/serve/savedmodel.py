"""Raw-text SavedModels: ALBERT's normalization, SentencePiece and the model in one graph.

`export_classifier(model, ...)` and `export_pretraining(model, ...)` write a SavedModel
that takes strings and answers with the prediction and each token's number of
iterations. It needs TensorFlow and tensorflow-text to load (`import tensorflow_text`
registers the tokenizer ops), not albert_act. Signatures:

classifier:   serving_default(text [, text_pair])
              -> label_ids, label_names, probabilities (classification) or score (regression),
                 logits, and the depth fields below
pre-training: fill_mask(text with literal "[MASK]")
              -> mask_positions (B, M; -1 pads), top_k_ids, top_k_tokens, top_k_probabilities (B, M, k),
                 and the depth fields
              encoder(text) = serving_default
              -> sequence_output (B, T, H), pooled_output (B, H), and the depth fields
              encoder_ids(token_ids, segment_ids, padding_mask)  (your own tokenization)
              -> sequence_output, pooled_output, iterations, remainders, ponder_cost
              fill_mask_capped(text, max_iterations), encoder_capped(text, max_iterations)
              -> as fill_mask and encoder, every token halting by max_iterations (an int32
                 scalar >= 1; N_max and above change nothing): the depth knob, less time for
                 a less accurate answer
depth fields: iterations int32 (B, T) (0 on padding), mean_iterations (B,), tokens (B, T)
              SentencePiece pieces ("" on padding), token_ids, padding_mask, truncated bool (B,)

Batches are padded to their longest member; inputs longer than `max_seq_length` are
cut, longest segment first (`pipelines.packing`, as in fine-tuning), and flagged `truncated`.
The export's settings (task, labels, backbone config) are the asset albert_act_export.json,
its vocabulary the asset vocab.model.
"""

import dataclasses
import functools
import inspect
import json
import os
import tempfile

import tensorflow as tf

from albert_act.base import artifacts, checks, text_files
from albert_act.base.outputs import followed, replace_dir, staging_dir
from albert_act.io.exports import load_export
from albert_act.io.source import Source
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.halting import EXECUTIONS
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from pipelines.packing import TextEncoder
from pipelines.tokenizer import MASK_ID

_STRINGS = tf.TensorSpec([None], tf.string)


def _depth_fields(encoder, inputs, outputs, truncated):
    real = tf.cast(inputs["padding_mask"], tf.float32)
    iterations = outputs["iterations"] * real
    return {
        "iterations": tf.cast(tf.round(iterations), tf.int32),
        "mean_iterations": tf.reduce_sum(iterations, 1) / tf.maximum(tf.reduce_sum(real, 1), 1.0),
        "tokens": encoder.pieces(inputs["token_ids"], inputs["padding_mask"]),
        "token_ids": inputs["token_ids"],
        "padding_mask": inputs["padding_mask"],
        "truncated": truncated,
    }


def _with_a_spare_row(function):
    """An empty batch gets empty answers, not a graph error (the MLM head's gather refuses zero
    rows): every text input gets one more, empty, string and every output loses that row."""
    names = list(inspect.signature(function).parameters)

    @functools.wraps(function)  # the signature keeps the function's input names (text, text_pair)
    def wrapped(*texts):
        # A client can send any rank (a signature does not enforce its spec at run time): refuse all
        # but a list, naming the input (EnsureShape checks the shape the tensor really has).
        texts = [_utf8(name, tf.ensure_shape(text, [None], name=f"{name}_must_be_a_list_of_strings"))
                 for name, text in zip(names, texts)]
        outputs = function(*[tf.concat([text, [""]], 0) for text in texts])
        return {name: value[:-1] for name, value in outputs.items()}
    return wrapped


def _mask_positions(inputs):
    """int32 (B, M): the positions of each row's [MASK] tokens, in order, -1 after a row's last."""
    is_mask = (inputs["token_ids"] == MASK_ID) & (inputs["padding_mask"] > 0)
    where = tf.where(is_mask)  # row-major: (row, position) pairs in order
    return tf.RaggedTensor.from_value_rowids(
        tf.cast(where[:, 1], tf.int32), where[:, 0], nrows=tf.shape(is_mask, out_type=tf.int64)[0]).to_tensor(-1)


def _capped(function):
    """`function(text, cap)` as a signature's (text, max_iterations): the cap checked (a scalar of at
    least 1), the text given a spare row (`_with_a_spare_row`)."""
    def capped(text, max_iterations):
        cap = tf.ensure_shape(max_iterations, [], name="max_iterations_must_be_a_scalar")
        check = tf.debugging.assert_positive(cap, message="max_iterations must be at least 1 (the iterations every "
                                                          "token may run at most)")
        with tf.control_dependencies([check]):
            cap = tf.identity(cap)
        return _with_a_spare_row(lambda text: function(text, cap))(text)
    return capped


def _utf8(name, text):
    """`text`, to be used only after a check that every string is UTF-8: other bytes (Latin-1's
    "caf\xe9") would reach SentencePiece as <unk> pieces, with no sign of it."""
    same = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace") == text
    check = tf.debugging.assert_equal(tf.reduce_all(same), True, message=(
        f"{name}: a string is not valid UTF-8 (e.g. Latin-1 bytes); decode it to text and send it as UTF-8"))
    with tf.control_dependencies([check]):
        return tf.identity(text)


def _same_batch(text, text_pair):
    """The pair inputs, to be used only once they are known to hold as many strings."""
    check = tf.debugging.assert_equal(tf.size(text), tf.size(text_pair),
                                      message="text and text_pair must hold as many strings (one pair per row)")
    with tf.control_dependencies([check]):
        return tf.identity(text), tf.identity(text_pair)


def _check_ids(token_ids, segment_ids, padding_mask, max_length, vocabulary_size):
    """encoder_ids' inputs as a client may send them, checked before the model reads them: each
    refusal names the input. Returns the three inputs, to be used only after the checks."""
    token_ids, segment_ids, padding_mask = (tf.ensure_shape(value, [None, None], name=f"{name}_must_be_rows_of_ids")
                                            for name, value in (("token_ids", token_ids), ("segment_ids", segment_ids),
                                                                ("padding_mask", padding_mask)))
    checks = []
    for name, value in (("segment_ids", segment_ids), ("padding_mask", padding_mask)):
        checks.append(tf.debugging.assert_equal(tf.shape(value), tf.shape(token_ids),
                                                message=f"encoder_ids: {name} must have the shape of token_ids (batch, length)"))
    checks += [
        tf.debugging.assert_positive(tf.shape(token_ids)[1],
                                     message="encoder_ids: token_ids has no positions (length 0); send at least [CLS] and [SEP]"),
        tf.debugging.assert_less_equal(tf.shape(token_ids)[1], max_length,
                                       message=f"encoder_ids: token_ids is longer than the {max_length} positions the model takes"),
        tf.debugging.assert_non_negative(token_ids, message="encoder_ids: token_ids holds a negative id"),
        tf.debugging.assert_less(token_ids, vocabulary_size,
                                 message=f"encoder_ids: token_ids holds an id outside the vocabulary of {vocabulary_size}"),
    ]
    with tf.control_dependencies(checks[:3]):  # values are compared only once the shapes agree
        for name, value in (("segment_ids", segment_ids), ("padding_mask", padding_mask)):
            checks.append(tf.debugging.assert_equal(tf.reduce_all((value == 0) | (value == 1)), True,
                                                    message=f"encoder_ids: {name} must hold only 0 and 1"))
        checks.append(tf.debugging.assert_equal(tf.reduce_all(tf.reduce_any(padding_mask == 1, axis=1)), True,
                                                message="encoder_ids: a row of padding_mask is all 0 (no token to encode: "
                                                        "1 marks each real token, [CLS] first)"))
    with tf.control_dependencies(checks):
        return tf.identity(token_ids), tf.identity(segment_ids), tf.identity(padding_mask)


def serving_backbone(backbone, execution="sparse"):
    """A float32 copy of `backbone` (same weights, no dropout) that runs `execution`."""
    checks.one_of("execution", execution, EXECUTIONS)
    config = {k: v for k, v in backbone.get_config().items() if k not in ("name", "trainable", "dtype")}
    copy = AlbertActBackbone(**{**config, "execution": execution, "return_details": False, "dropout": 0.0},
                             dtype="float32", name=backbone.name)
    copy.set_weights(backbone.get_weights())
    return copy


def _write(export_dir, model, encoder, endpoints, info, model_proto, overwrite):
    """Saves the SavedModel in a staging dir, then moves (or, to gs://, copies) it to `export_dir`.

    `endpoints`: {signature name: (function, input signature)}; each is also an attribute
    of the loaded object (e.g. `tf.saved_model.load(dir).fill_mask(text)`).
    """
    remote = text_files.is_remote(export_dir)
    export_dir = export_dir if remote else followed(export_dir)  # a symlink: into the folder it names
    artifacts.check_export_target(export_dir, overwrite)
    parent = None if remote else os.path.dirname(export_dir)
    if parent:
        text_files.makedirs(parent)
    with (staging_dir(parent) if parent else tempfile.TemporaryDirectory(prefix=".staging-")) as staging:
        files = os.path.join(staging, "files")
        os.makedirs(files)
        with open(os.path.join(files, artifacts.EXPORT_INFO), "w") as f:
            json.dump(info, f, indent=2)
        with open(os.path.join(files, artifacts.VOCAB), "wb") as f:
            f.write(model_proto)
        root = tf.__internal__.tracking.AutoTrackable()  # what Keras's own exports use: `variables` settable
        root.model = model
        root.variables = list(model.variables)
        root.text_encoder = encoder  # the SentencePiece resource
        root.export_info = tf.saved_model.Asset(os.path.join(files, artifacts.EXPORT_INFO))
        root.vocabulary = tf.saved_model.Asset(os.path.join(files, artifacts.VOCAB))
        signatures, captured, traced_once = {}, {}, {}
        for name, (function, input_signature) in endpoints.items():
            # One trace per function (a trace of the halting loop takes seconds): names for the same
            # function (serving_default, encoder) share it, and the attribute is the concrete function,
            # which the save keeps as traced (a tf.function attribute is traced again inside the save).
            if id(function) not in traced_once:
                traced_once[id(function)] = tf.function(function, input_signature=input_signature,
                                                        autograph=False).get_concrete_function()
            signatures[name] = traced_once[id(function)]
            setattr(root, name, signatures[name])
            captured.update({id(v): v for v in signatures[name].variables})
        # The tf.Variables the graphs read, tracked as themselves: TF1-style loaders
        # (`saved_model_cli run`, TensorFlow Serving) restore variables by these names.
        root.captured_variables = list(captured.values())
        saved = os.path.join(staging, "saved_model")
        tf.saved_model.save(root, saved, signatures=signatures)
        if remote:  # gs:// has no rename of a dir: the old version goes, then the new one is copied
            if tf.io.gfile.exists(export_dir):
                tf.io.gfile.rmtree(export_dir)
            _copy_tree(saved, export_dir)
        else:
            replace_dir(saved, export_dir, staging)
    return export_dir


def _copy_tree(source, destination):
    for directory, _, names in tf.io.gfile.walk(source):
        target = os.path.join(destination, os.path.relpath(directory, source))
        text_files.makedirs(target)
        for name in names:
            tf.io.gfile.copy(os.path.join(directory, name), os.path.join(target, name), overwrite=True)


def export_classifier(model, export_dir, model_proto, task, labels, pair, max_seq_length,
                      execution="sparse", overwrite=False, record=None):
    """Raw-text SavedModel of a fine-tuned `AlbertActClassifier`; returns the export dir.

    Args:
        model: `AlbertActClassifier` (num_classes 1 = regression, `labels` empty).
        model_proto: bytes of its SentencePiece model.
        task: str, the task name (stored in the export's info).
        labels: label names, index = class id; () for regression.
        pair: bool, the task takes sentence pairs (signature inputs text, text_pair).
        execution: the backbone's execution mode in the export ("sparse": only running
            tokens are computed; "static" for a TPU).
        record: more entries of the export's info (albert_act_export.json), e.g. the ExportConfig.
    """
    if len(labels) != (model.num_classes if model.num_classes > 1 else 0):
        raise ValueError(f"{len(labels)} labels for a model with {model.num_classes} outputs")
    if max_seq_length > model.backbone.max_sequence_length:
        raise ValueError(f"max_seq_length {max_seq_length} exceeds the model's {model.backbone.max_sequence_length}")
    if pair and max_seq_length < 5:
        raise ValueError(f"max_seq_length {max_seq_length} leaves no piece for one of a pair's sentences ([CLS] A [SEP] "
                         "B [SEP] takes 3 pieces of its own): give 5 or more")
    serving = AlbertActClassifier(serving_backbone(model.backbone, execution), num_classes=model.num_classes,
                                  dropout=model.dropout, initializer_range=model.initializer_range)
    serving.set_weights(model.get_weights())
    encoder = TextEncoder(model_proto, max_seq_length)
    label_names = tf.constant(list(labels) or [""])

    def classify(segments):
        inputs, truncated = encoder.pack(segments)
        outputs = serving(inputs, training=False)
        result = {"logits": outputs["logits"], **_depth_fields(encoder, inputs, outputs, truncated)}
        if labels:
            result["probabilities"] = tf.nn.softmax(outputs["logits"], axis=-1)
            result["label_ids"] = tf.argmax(outputs["logits"], axis=-1, output_type=tf.int32)
            result["label_names"] = tf.gather(label_names, result["label_ids"])
        else:
            result["score"] = outputs["logits"][:, 0]
        return result

    def classify_pairs(text, text_pair):
        text, text_pair = _same_batch(text, text_pair)
        return _with_a_spare_row(lambda text, text_pair: classify([encoder.tokenize(text), encoder.tokenize(text_pair)]))(
            text, text_pair)

    if pair:
        endpoint = (classify_pairs, [_STRINGS, _STRINGS])
    else:
        endpoint = (_with_a_spare_row(lambda text: classify([encoder.tokenize(text)])), [_STRINGS])
    info = {"kind": "classifier", "task": task, "labels": list(labels), "pair": bool(pair),
            "max_seq_length": max_seq_length, "execution": execution, "num_classes": model.num_classes,
            "backbone": serving.backbone.get_config(), **(record or {})}
    return _write(export_dir, serving, encoder, {"serving_default": endpoint}, info, model_proto, overwrite)


def export_pretraining(model, export_dir, model_proto, max_seq_length=None, top_k=5, execution="sparse",
                       pretraining_config=None, overwrite=False, record=None):
    """Raw-text SavedModel of an `AlbertActPretrainingModel` (fill_mask, encoder, encoder_ids).

    Args:
        max_seq_length: default the backbone's `max_sequence_length`.
        top_k: predictions per [MASK].
        pretraining_config: dict, stored in the info asset (the run's resolved settings).
        record: more entries of the info asset, e.g. the ExportConfig it was written with.
    """
    backbone = serving_backbone(model.backbone, execution)
    serving = AlbertActPretrainingModel(backbone, initializer_range=model.initializer_range)
    serving.set_weights(model.get_weights())
    max_seq_length = max_seq_length or backbone.max_sequence_length
    if max_seq_length > backbone.max_sequence_length:
        raise ValueError(f"max_seq_length {max_seq_length} exceeds the model's {backbone.max_sequence_length}")
    if not 1 <= top_k <= backbone.vocabulary_size:
        raise ValueError(f"top_k must be in [1, {backbone.vocabulary_size}], got {top_k}")
    encoder = TextEncoder(model_proto, max_seq_length)

    def fill_mask(text, cap=None):
        inputs, truncated = encoder.pack([encoder.tokenize_with_masks(text)])
        positions = _mask_positions(inputs)  # (B, M), -1 pads
        inputs = {**inputs, "masked_positions": tf.maximum(positions, 0)}
        outputs = serving(inputs, training=False) if cap is None else serving.capped(inputs, cap)
        probabilities = tf.nn.softmax(outputs["mlm_logits"], axis=-1)
        top = tf.math.top_k(probabilities, k=top_k)
        valid = (positions >= 0)[:, :, None]
        return {
            "mask_positions": positions,
            "top_k_ids": tf.where(valid, top.indices, -1),
            "top_k_tokens": tf.where(valid, encoder.tokenizer.sentencepiece.id_to_string(top.indices), ""),
            "top_k_probabilities": tf.where(valid, top.values, 0.0),
            **_depth_fields(encoder, inputs, outputs, truncated),
        }

    def encode(text, cap=None):
        inputs, truncated = encoder.pack([encoder.tokenize(text)])
        outputs = backbone(inputs, training=False) if cap is None else backbone.capped(inputs, cap)
        return {"sequence_output": outputs["sequence_output"], "pooled_output": outputs["pooled_output"],
                **_depth_fields(encoder, inputs, outputs, truncated)}

    def encode_ids(token_ids, segment_ids, padding_mask):
        token_ids, segment_ids, padding_mask = _check_ids(token_ids, segment_ids, padding_mask,
                                                          backbone.max_sequence_length, backbone.vocabulary_size)
        outputs = backbone({"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask},
                           training=False)
        return {k: outputs[k] for k in ("sequence_output", "pooled_output", "iterations", "remainders", "ponder_cost")}

    ids, scalar = tf.TensorSpec([None, None], tf.int32), tf.TensorSpec([], tf.int32)
    encode_all, fill_mask_all = _with_a_spare_row(lambda text: encode(text)), _with_a_spare_row(lambda text: fill_mask(text))
    endpoints = {"serving_default": (encode_all, [_STRINGS]), "encoder": (encode_all, [_STRINGS]),
                 "fill_mask": (fill_mask_all, [_STRINGS]), "encoder_ids": (encode_ids, [ids, ids, ids]),
                 "fill_mask_capped": (_capped(fill_mask), [_STRINGS, scalar]),
                 "encoder_capped": (_capped(encode), [_STRINGS, scalar])}
    info = {"kind": "pretraining", "max_seq_length": max_seq_length, "top_k": top_k, "execution": execution,
            "backbone": backbone.get_config(), **_run_record(pretraining_config, export_dir, record)}
    return _write(export_dir, serving, encoder, endpoints, info, model_proto, overwrite)


def _run_record(pretraining_config, export_dir, record):
    """What a pre-training export records of its run: its settings (paths relative to the export),
    `record`'s entries, and the fingerprints of its training shards, which travel with the export (a
    copy loses the paths' meaning): `record`'s (an earlier export's), else those of the files on disk."""
    shards = (record or {}).get(artifacts.TRAIN_SHARDS) or artifacts.shard_fingerprints(
        (pretraining_config or {}).get("train_files"))
    return {"pretraining": pretraining_config and artifacts.relative_paths(pretraining_config, export_dir),
            **(record or {}), artifacts.TRAIN_SHARDS: shards}


# Queries `example_query` asks (the demo's synthetic corpus has such sentences).
EXAMPLES = {
    "fill_mask": ["He remembered the [MASK] brave key."],
    "encoder": ["He remembered the poor brave key."],
    "serving_default": ["He remembered the poor brave key."],
}


def export_from(config):
    """A raw-text SavedModel of the model in `config.checkpoint` (a pre-training run dir, a fine-tuning
    dir, an earlier export, or a public ALBERT checkpoint with its MLM head, exported at its fixed
    depth) written to `config.output` (a resolved `ExportConfig`, recorded in the export as
    "export"); returns its directory. `config.kind` must match the source. Refuses an output that
    would destroy something (`artifacts.check_export_target`) before any weight is read. Its paths are
    recorded relative to the export, as the run's are."""
    source, output, overwrite = Source.open(config.checkpoint), config.output, config.overwrite
    if source.info["kind"] != config.kind:
        raise ValueError(f"{source.path} holds a {source.info['kind']} model, not --kind {config.kind}")
    artifacts.check_export_target(output, overwrite, source=source.path)
    tokenizer = source.tokenizer(config.vocab)
    record = {"export": artifacts.relative_paths(dataclasses.asdict(config), output, artifacts.EXPORT_PATHS)}
    if source.train_shards:  # an earlier export's, a fine-tuning's: its run's shards may not be on this machine
        record[artifacts.TRAIN_SHARDS] = source.train_shards
    if config.kind == "pretraining":
        model, info = source.pretraining_model()
        return export_pretraining(model, output, tokenizer.model_proto, config.max_seq_length, config.top_k,
                                  config.execution, _with_trained_tau(info.get("pretraining"), source), overwrite,
                                  record)
    # A fine-tuning dir or an earlier classifier export: the weights by path, either way.
    model, info = source.classifier(dropout=0.0), source.info
    return export_classifier(model, output, tokenizer.model_proto, info["task"], info["labels"], info["pair"],
                             config.max_seq_length or info["max_seq_length"], config.execution, overwrite, record)


def _with_trained_tau(pretraining, source):
    """A run's settings with the tau it had reached (`Source.trained_tau`) as ponder_cost_weight, beside
    the one given (`ponder_cost_weight_given`: "auto", or --target_iterations' start), as the run's own
    export at its end records them."""
    trained = source.trained_tau() if pretraining else None
    return pretraining if trained is None else record_tau(pretraining, *trained)


def record_tau(pretraining, tau, update):
    """A run's settings recording `tau`, the ponder-cost weight reached at `update`, as ponder_cost_weight,
    beside the one given; what an export of the run's weights keeps, at its end or from a checkpoint."""
    return {**pretraining, "ponder_cost_weight": tau, "ponder_cost_weight_given": pretraining.get("ponder_cost_weight"),
            "ponder_cost_weight_update": update}


def example_query(export_dir):
    """Loads the export as a server would and answers one query per signature, JSON-ready."""
    loaded = load_export(export_dir)
    answers = {}
    for name, function in loaded.signatures.items():
        inputs = function.structured_input_signature[1]
        if not all(spec.dtype == tf.string for spec in inputs.values()):
            continue  # encoder_ids: token ids, not text
        text = EXAMPLES.get(name, EXAMPLES["serving_default"])
        outputs = function(**{key: tf.constant(text) for key in inputs})
        answers[name] = {k: _jsonable(v.numpy()[0]) for k, v in outputs.items()
                         if k not in ("sequence_output", "pooled_output")}
    return answers


def _jsonable(value):
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, float):
        return round(value, 4)
    return value
