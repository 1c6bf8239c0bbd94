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

import json
import os
import sys

from albert_act import cli

cli.silence()  # before TensorFlow loads: quiet unless --verbose

from albert_act import artifacts
from albert_act.model.halting import EXECUTIONS


def parse_args(argv=None):
    parser = cli.parser("export", __doc__)
    parser.add_argument("--checkpoint", required=True, help="run dir, fine-tuning dir or earlier export")
    parser.add_argument("--kind", required=True, choices=["pretraining", "classifier"])
    parser.add_argument("--output", required=True, help="saved_models/<name>/<version>")
    parser.add_argument("--vocab", default=None, help="SentencePiece model (default: the one stored with --checkpoint)")
    parser.add_argument("--execution", default="sparse", choices=EXECUTIONS,
                        help="sparse: compute only running tokens (CPU/GPU serving); static: TPU")
    parser.add_argument("--max_seq_length", type=int, default=None,
                        help="longer inputs are truncated (default: the fine-tuning length / the model's maximum)")
    parser.add_argument("--top_k", type=int, default=5, help="fill_mask predictions per [MASK]")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        artifacts.check_export_target(args.output, args.overwrite, source=args.checkpoint)  # before loading
    except ValueError as error:
        sys.exit(f"error: {error}")
    from albert_act.serve.savedmodel import example_query, export_from

    try:
        export_dir = export_from(args.checkpoint, args.kind, args.output, args.vocab, args.execution,
                                 args.max_seq_length, args.top_k, args.overwrite)
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
