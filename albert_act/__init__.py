"""albert-act: ALBERT with per-token adaptive depth (Adaptive Computation Time).

The model's classes are importable from here (`from albert_act import AlbertActBackbone`); they
load on first use, so `import albert_act.base.cli` (which every CLI imports first) does not load Keras.
"""

import importlib

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
