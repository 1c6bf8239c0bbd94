"""Presets hold the paper's numbers (Table 1) and build working backbones."""

import pytest

from albert_act import PRESETS, backbone_from_preset, get_preset
from conftest import random_inputs


@pytest.mark.parametrize("name, tau, n_max", [("tiny", 1e-3, 6), ("small", 5e-4, 12), ("base", 2.5e-4, 24)])
def test_paper_presets(name, tau, n_max):
    preset = get_preset(name)
    assert preset.ponder_cost_weight == tau
    assert preset.backbone["max_iterations"] == n_max
    expected_sizes = dict(vocabulary_size=30000, embedding_dim=128, hidden_dim=768, num_heads=12,
                          intermediate_dim=3072, max_sequence_length=128, dropout=0.0)
    assert {k: preset.backbone[k] for k in expected_sizes} == expected_sizes


def test_every_preset_builds_and_demo_runs():
    assert set(PRESETS) == {"tiny", "small", "base", "demo"}
    backbone = backbone_from_preset("demo", max_sequence_length=16)
    out = backbone(random_inputs([16, 9], padded_length=16, vocabulary_size=8000))
    assert tuple(out["sequence_output"].shape) == (2, 16, 128)
    base = backbone_from_preset("base")
    assert base.max_iterations == 24 and len(base.encoder.blocks) == 1


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; expected one of \['base', 'demo', 'small', 'tiny'\]"):
        get_preset("huge")
