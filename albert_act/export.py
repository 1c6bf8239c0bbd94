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

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: albert_act/export.py is part of albert-act: run it from the repository root as "
                     "python -m albert_act.export")

import json
import shlex

from albert_act.base import cli, entry, outputs


def parse_args(argv=None):
    """The flags, made from `ExportConfig`'s fields (albert_act/serve/export_config.py), with --config
    (an export's assets/albert_act_export.json, or a saved config) and --set."""
    from albert_act.base import settings  # (Keras: after the quiet start)
    from albert_act.serve.export_config import ExportConfig

    parser = cli.parser("export", __doc__)
    return settings.parse_flags(parser, ExportConfig, argv, required=("checkpoint", "kind", "output"))


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    cli.tensorflow_only("python -m albert_act.export")
    from albert_act.base import settings
    from albert_act.serve.export_config import ExportConfig

    args = parse_args(argv)
    config = settings.config_from(ExportConfig, args).resolved()
    cli.stop_on_sigterm()
    # A full disk, a lost mount: the staging dir went, the old output stays. Once the export is in place (its
    # example query runs after), a stop or a failure says it is whole.
    written = []
    kept = lambda: f"{written[0]} is written whole" if written else "the previous one is intact"  # noqa: E731
    with cli.failures(config.output, kept,
                      lambda: f"{written[0]} is written whole; only its example query was cut short" if written else
                      f"nothing was written to {config.output} (an existing one is intact); re-run the command",
                      explain=settings.explained(args)):
        with outputs.DirectoryLock(config.output, "export", "--output", say=True):
            _export(config, written)


def _export(config, written):
    """Exports `config`; `written` gets the export's path once it is in place."""
    if config.format == "huggingface":
        from albert_act.serve.huggingface import export_huggingface

        output = export_huggingface(config.checkpoint, config.output, config.vocab, config.overwrite)
        written.append(output)
        print(f"Hugging Face ALBERT: {output} (config.json, model.safetensors, spiece.model)")
        print(f"fine-tune it: python -m albert_act.finetune --task rte --data_dir <glue>/RTE --init {shlex.quote(output)}")
        return
    from albert_act.serve.savedmodel import example_query, export_from

    export_dir = export_from(config)
    written.append(export_dir)
    print(f"SavedModel: {export_dir}")
    for name, answer in example_query(export_dir).items():
        print(f"\n{name}: {json.dumps(answer, ensure_ascii=False)}")
    from albert_act.io.exports import serve_command

    print("\n" + serve_command(export_dir))



if __name__ == "__main__":
    entry.run(main)
