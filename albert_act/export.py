"""Export a trained model as a raw-text SavedModel (tokenizer inside) for TensorFlow Serving.

    python -m albert_act.export --checkpoint runs/demo --kind pretraining \\
        --output saved_models/albert_act_demo/1
    python -m albert_act.export --checkpoint runs/finetune/rte --kind classifier \\
        --output saved_models/rte/1

--checkpoint: a pre-training run dir (its latest checkpoint), a fine-tuning output dir
(`python -m albert_act.finetune`), an earlier export (to re-export, e.g. with
--execution static for a TPU), or a public ALBERT checkpoint with its MLM head (a Hugging Face
dir, a TF1 checkpoint, a keras-hub preset; exported at its fixed depth). --output is
<model_base_path>/<version>, the layout TensorFlow Serving watches. Signatures (see the
README's "Serving" section):

  pretraining: fill_mask(text), encoder(text) = serving_default, encoder_ids(token_ids, ...)
  classifier:  serving_default(text [, text_pair])

Every answer carries the per-token `iterations` and the `tokens`. After writing, the
export is loaded back and asked one query, printed as the JSON TensorFlow Serving returns.

--format huggingface writes a fixed-depth pre-training model (--halting none) instead as a
Hugging Face ALBERT dir (config.json, model.safetensors, spiece.model), which transformers,
keras-hub and `--init` read:

    python -m albert_act.export --checkpoint runs/albert_fixed --kind pretraining \
        --format huggingface --output saved_models/albert_fixed_hf
"""

import json
import os
import shlex
import sys

from albert_act.base import checks, cli, outputs


def parse_args(argv=None):
    from albert_act.model.halting import EXECUTIONS  # (Keras: after the quiet start)

    parser = cli.parser("export", __doc__)
    parser.add_argument("--checkpoint", required=True,
                        help="run dir, fine-tuning dir, earlier export, or Hugging Face / TF1 / keras-hub ALBERT")
    parser.add_argument("--kind", required=True, choices=["pretraining", "classifier"])
    parser.add_argument("--output", required=True, help="saved_models/<name>/<version>")
    parser.add_argument("--vocab", default=None, help="SentencePiece model (default: the one stored with --checkpoint)")
    parser.add_argument("--execution", default="sparse", choices=EXECUTIONS,
                        help="sparse: compute only running tokens (CPU/GPU serving); static: TPU")
    parser.add_argument("--max_seq_length", type=int, default=None,
                        help="longer inputs are truncated (default: the fine-tuning length / the model's maximum)")
    parser.add_argument("--top_k", type=int, default=None, help="fill_mask predictions per [MASK] (default: 5; "
                                                                 "--kind pretraining only)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    parser.add_argument("--format", default="savedmodel", choices=["savedmodel", "huggingface"],
                        help="savedmodel: raw text in, for TensorFlow Serving; huggingface: config.json + "
                             "model.safetensors + spiece.model of a fixed-depth model")
    args = cli.parse_checked(parser, argv, {"top_k": "int[1,1000]", "max_seq_length": f"int[3,{checks.MAX_SEQUENCE_LENGTH}]"})
    if args.top_k is not None and args.kind != "pretraining":
        sys.exit(f"error: --top_k is fill_mask's, which only --kind pretraining exports have (not --kind {args.kind})")
    args.top_k = args.top_k or 5
    return args


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    args = parse_args(argv)
    cli.stop_on_sigterm()
    # A full disk, a lost mount: the staging dir went, the old output stays.
    with cli.failures(args.output, "the previous one is intact",
                      f"nothing was written to {args.output} (an existing one is intact); re-run the command"):
        with outputs.DirectoryLock(args.output, "export"):
            _export(args)


def _export(args):
    if args.format == "huggingface":
        from albert_act.serve.huggingface import export_huggingface

        if args.kind != "pretraining":
            raise ValueError("--format huggingface writes a pre-training model (AlbertForPreTraining): use --kind "
                             "pretraining")
        output = export_huggingface(args.checkpoint, args.output, args.vocab, args.overwrite)
        print(f"Hugging Face ALBERT: {output} (config.json, model.safetensors, spiece.model)")
        print(f"fine-tune it: python -m albert_act.finetune --task rte --data_dir <glue>/RTE --init {shlex.quote(output)}")
        return
    from albert_act.serve.savedmodel import example_query, export_from

    export_dir = export_from(args.checkpoint, args.kind, args.output, args.vocab, args.execution,
                             args.max_seq_length, args.top_k, args.overwrite)
    print(f"SavedModel: {export_dir}")
    for name, answer in example_query(export_dir).items():
        print(f"\n{name}: {json.dumps(answer, ensure_ascii=False)}")
    print("\n" + serve_command(export_dir))


def serve_command(export_dir):
    """How to serve the export with TensorFlow Serving, which loads <base>/<version>/: the command,
    paths quoted for the shell, or, for an --output not named by a version number, how to get one."""
    version, base = os.path.basename(export_dir), os.path.dirname(export_dir)
    if not version.isdigit():
        return (f"serve: TensorFlow Serving loads <base>/<version number>/, and {export_dir} is not named by a "
                f"number: export with --output {shlex.quote(os.path.join(export_dir, '1'))} to serve it")
    name = os.path.basename(base)
    return (f"serve: docker run -p 8501:8501 -v {shlex.quote(f'{base}:/models/{name}')} "
            f"-e {shlex.quote(f'MODEL_NAME={name}')} tensorflow/serving")


if __name__ == "__main__":
    main()
