"""albert-act: ALBERT with per-token adaptive depth (Adaptive Computation Time).

The model's classes are importable from here (`from albert_act import AlbertActBackbone`); they
load on first use, so `import albert_act.base.cli` (which every CLI imports first) does not load Keras.
Run as `python -m`, a stop before the command's own handler is in place is one line, not a traceback.
"""

import importlib
import os
import sys

import _signal  # the interpreter's own, loaded as it starts (`signal` takes milliseconds to import)


def _stopped_while_starting(number, frame):
    """Ctrl-C or SIGTERM before the command's own handler (`albert_act.base.cli`) is in place: one line,
    status 130, no traceback from whichever import it landed in. Nothing has been read or written yet."""
    sys.stderr.write("stopped: before any work: nothing was written\n")
    sys.stderr.flush()
    os._exit(130)


if sys.argv[:1] == ["-m"]:  # `python -m albert_act.<command>` (pipelines and benchmarks import this first):
    for _number in (_signal.SIGINT, _signal.SIGTERM):  # runpy sets argv[0] to "-m" while it imports the packages
        _signal.signal(_number, _stopped_while_starting)

_EXPORTS = {
    "AdaptiveDepthEncoder": "albert_act.model.adaptive_encoder",
    "AlbertActBackbone": "albert_act.model.backbone",
    "AlbertActClassifier": "albert_act.model.classifier",
    "AlbertActPretrainingModel": "albert_act.model.pretraining_model",
    "FactorizedEmbedding": "albert_act.model.embeddings",
    "HaltingUnit": "albert_act.model.halting",
    "MaskedLMHead": "albert_act.model.masked_lm_head",
    "PRESETS": "albert_act.model.presets",
    "Source": "albert_act.io.source",
    "TransformerBlock": "albert_act.model.transformer_block",
    "backbone_from_preset": "albert_act.model.presets",
    "copy_keras_hub_albert_weights": "albert_act.io.keras_hub_weights",
    "get_preset": "albert_act.model.presets",
    "halting_loop": "albert_act.model.halting",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'albert_act' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value
