"""Export a trained model as a raw-text SavedModel (tokenizer inside) for TensorFlow Serving.

    python -m albert_act.export --checkpoint runs/demo --kind pretraining \\
        --output saved_models/albert_act_demo/1
    python -m albert_act.export --checkpoint runs/finetune/rte --kind classifier \\
        --output saved_models/rte/1

--checkpoint: a pre-training run dir (its latest checkpoint), a fine-tuning output dir
(`python -m albert_act.finetune`), or an earlier export (to re-export, e.g. with
--execution static for a TPU). --output is <model_base_path>/<version>, the layout
TensorFlow Serving watches. Signatures (see the README's "Serving" section):

  pretraining: fill_mask(text), encoder(text) = serving_default, encoder_ids(token_ids, ...)
  classifier:  serving_default(text [, text_pair])

Every answer carries the per-token `iterations` and the `tokens`. After writing, the
export is loaded back and asked one query, printed as the JSON TensorFlow Serving returns.
"""

import argparse
import json
import os
import sys

EXAMPLES = {  # (the demo's synthetic corpus has such sentences)
    "fill_mask": ["He remembered the [MASK] brave key."],
    "encoder": ["He remembered the poor brave key."],
    "serving_default": ["He remembered the poor brave key."],
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", required=True, help="run dir, fine-tuning dir or earlier export")
    parser.add_argument("--kind", required=True, choices=["pretraining", "classifier"])
    parser.add_argument("--output", required=True, help="saved_models/<name>/<version>")
    parser.add_argument("--vocab", default=None, help="SentencePiece model (default: the one stored with --checkpoint)")
    parser.add_argument("--execution", default="sparse", choices=["sparse", "static", "while"],
                        help="sparse: compute only running tokens (CPU/GPU serving); static: TPU")
    parser.add_argument("--max_seq_length", type=int, default=None,
                        help="longer inputs are truncated (default: the fine-tuning length / the model's maximum)")
    parser.add_argument("--top_k", type=int, default=5, help="fill_mask predictions per [MASK]")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    return parser.parse_args(argv)


def export(args):
    """Writes the export; returns its directory."""
    from albert_act import serving
    from albert_act.pretrained import (assign_weights, classifier_from_info, load_pretraining_model, load_tokenizer,
                                       read_info, read_weights)

    info = read_info(args.checkpoint)
    if info["kind"] != args.kind:
        raise ValueError(f"{args.checkpoint} holds a {info['kind']} model, not --kind {args.kind}")
    if args.kind == "pretraining":
        model, tokenizer, info = load_pretraining_model(args.checkpoint, args.vocab)
        return serving.export_pretraining(model, args.output, tokenizer.model_proto, args.max_seq_length, args.top_k,
                                          args.execution, info.get("pretraining"), args.overwrite)
    # A fine-tuning dir or an earlier classifier export: the weights by path, either way.
    model = classifier_from_info(info, dropout=0.0)
    assign_weights(model, read_weights(args.checkpoint), args.checkpoint)
    tokenizer = load_tokenizer(args.checkpoint, args.vocab, model.backbone.vocabulary_size)
    return serving.export_classifier(model, args.output, tokenizer.model_proto, info["task"], info["labels"],
                                     info["pair"], args.max_seq_length or info["max_seq_length"], args.execution,
                                     args.overwrite)


def example_query(export_dir):
    """Loads the export as a server would and answers one query per signature, JSON-ready."""
    import tensorflow as tf

    loaded = tf.saved_model.load(export_dir)
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


def main(argv=None):
    args = parse_args(argv)
    try:
        export_dir = export(args)
    except ValueError as error:
        sys.exit(f"error: {error}")
    print(f"SavedModel: {export_dir}")
    for name, answer in example_query(export_dir).items():
        print(f"\n{name}: {json.dumps(answer, ensure_ascii=False)}")
    base = os.path.dirname(export_dir)
    print(f"\nserve: docker run -p 8501:8501 -v {base}:/models/{os.path.basename(base)} "
          f"-e MODEL_NAME={os.path.basename(base)} tensorflow/serving")


if __name__ == "__main__":
    main()
