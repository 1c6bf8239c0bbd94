"""Model presets, as plain Python. `python -c "from albert_act import presets; print(presets.PRESETS)"`.

`tiny`, `small` and `base` are the paper's (Simoulin & Crabbé 2021, Table 1):
ALBERT-base sizes with a depth cap N_max and a ponder-cost weight tau. `demo` is
sized for a 2-core CPU so the whole pipeline runs in minutes.
"""

import dataclasses

from albert_act.backbone import AlbertActBackbone

# ALBERT-base: E=128, H=768, 12 heads, FFN 3072, vocabulary 30k, sequence 128.
# GELU (tanh approximation), LayerNorm eps 1e-12 and post-LN are fixed in the layers;
# dropout is 0 in pre-training, as in the paper.
_ALBERT_BASE = dict(
    vocabulary_size=30000,
    embedding_dim=128,
    hidden_dim=768,
    num_heads=12,
    intermediate_dim=3072,
    max_sequence_length=128,
    dropout=0.0,
)


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named model configuration.

    backbone: keyword arguments of `AlbertActBackbone`.
    ponder_cost_weight: tau in loss = MLM + SOP + tau * mean ponder cost.
    """

    backbone: dict
    ponder_cost_weight: float


PRESETS = {
    # Paper's "tiny": at most 6 iterations, strongest depth penalty.
    "tiny": Preset(backbone=dict(_ALBERT_BASE, max_iterations=6), ponder_cost_weight=1e-3),
    # Paper's "small": at most 12 iterations (ALBERT-base's depth).
    "small": Preset(backbone=dict(_ALBERT_BASE, max_iterations=12), ponder_cost_weight=5e-4),
    # Paper's "base": at most 24 iterations, weakest penalty.
    "base": Preset(backbone=dict(_ALBERT_BASE, max_iterations=24), ponder_cost_weight=2.5e-4),
    # CPU demo: small widths, a vocabulary that a few MB of text supports, 6 iterations.
    "demo": Preset(
        backbone=dict(
            vocabulary_size=8000,
            embedding_dim=64,
            hidden_dim=128,
            num_heads=4,
            intermediate_dim=512,
            max_iterations=6,
            max_sequence_length=128,
            dropout=0.0,
        ),
        ponder_cost_weight=1e-3,
    ),
}


def get_preset(name):
    """Returns the `Preset` called `name`; ValueError naming the choices otherwise."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")
    return PRESETS[name]


def backbone_from_preset(name, **overrides):
    """Builds an `AlbertActBackbone` from preset `name`, with keyword overrides."""
    return AlbertActBackbone(**{**get_preset(name).backbone, **overrides})
