"""albert-act: ALBERT with per-token adaptive depth (Adaptive Computation Time)."""

from albert_act.model.adaptive_encoder import AdaptiveDepthEncoder
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.embeddings import FactorizedEmbedding
from albert_act.model.halting import HaltingUnit, halting_loop
from albert_act.model.keras_hub_weights import copy_keras_hub_albert_weights
from albert_act.model.masked_lm_head import MaskedLMHead
from albert_act.model.presets import PRESETS, backbone_from_preset, get_preset
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from albert_act.model.transformer_block import TransformerBlock

__all__ = [
    "PRESETS",
    "AdaptiveDepthEncoder",
    "AlbertActBackbone",
    "AlbertActClassifier",
    "AlbertActPretrainingModel",
    "MaskedLMHead",
    "FactorizedEmbedding",
    "HaltingUnit",
    "TransformerBlock",
    "backbone_from_preset",
    "copy_keras_hub_albert_weights",
    "get_preset",
    "halting_loop",
]
