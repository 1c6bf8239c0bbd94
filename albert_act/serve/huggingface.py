"""A fixed-depth pre-training model written as a Hugging Face ALBERT dir (config.json,
model.safetensors, spiece.model), which transformers, keras-hub and `--init` read."""

import os

from albert_act.base import artifacts, outputs
from albert_act.io import public_checkpoints
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
        public_checkpoints.write_huggingface(weights, info["backbone"], output, tokenizer.model_proto)
        return output
    path = os.path.abspath(output)
    with outputs.staging_dir(os.path.dirname(path)) as staging:
        staged = os.path.join(staging, "huggingface")
        public_checkpoints.write_huggingface(weights, info["backbone"], staged, tokenizer.model_proto)
        outputs.replace_dir(staged, path, staging)
    return output
