"""Presets hold the paper's numbers (Table 1), build working backbones, and say what each is for."""

import io
import re
import tokenize

import pytest

from albert_act import PRESETS, backbone_from_preset, get_preset
from conftest import random_inputs
from test_docs import unknown_modules_and_flags
from test_readme import REPO

SOURCE = REPO / "albert_act" / "model" / "presets.py"
SECTION = re.compile(r"(docs/[\w-]+\.md|README) \"([^\"]+)\"")  # a page and one of its headings, as the presets cite them


@pytest.mark.parametrize("name, tau, n_max", [("tiny", 1e-3, 6), ("small", 5e-4, 12), ("base", 2.5e-4, 24)])
def test_paper_presets(name, tau, n_max):
    preset = get_preset(name)
    assert preset.ponder_cost_weight == tau
    assert preset.backbone["max_iterations"] == n_max
    expected_sizes = dict(vocabulary_size=30000, embedding_dim=128, hidden_dim=768, num_heads=12,
                          intermediate_dim=3072, max_sequence_length=128, dropout=0.0)
    assert {k: preset.backbone[k] for k in expected_sizes} == expected_sizes
    # ... and the paper's run: ALBERT's LAMB schedule at batch 4096, constant tau, static loop.
    assert {k: preset.training[k] for k in ("steps", "warmup_steps", "learning_rate", "global_batch_size",
                                             "ponder_warmup_start", "ponder_warmup_steps", "execution")} == \
        dict(steps=112500, warmup_steps=3125, learning_rate=1.76e-3, global_batch_size=4096,
             ponder_warmup_start=0, ponder_warmup_steps=0, execution="static")


def test_run_settings_come_from_the_preset_and_scale_with_steps():
    from albert_act.train.pretraining_run import PretrainConfig

    demo = PretrainConfig(train_files=[], eval_files=[], model_dir="x").resolved()
    assert (demo.steps, demo.warmup_steps, demo.ponder_warmup_start, demo.ponder_cost_weight, demo.deterministic) == \
        (1000, 50, 500, "auto", True)
    halved = PretrainConfig(train_files=[], eval_files=[], model_dir="x", steps=500, ponder_warmup_steps=7).resolved()
    assert (halved.warmup_steps, halved.ponder_warmup_start, halved.ponder_warmup_steps) == (25, 250, 7)
    tiny = PretrainConfig(train_files=[], eval_files=[], model_dir="x", preset="tiny", learning_rate=1e-3).resolved()
    assert (tiny.steps, tiny.global_batch_size, tiny.learning_rate, tiny.ponder_cost_weight) == (112500, 4096, 1e-3, 1e-3)
    assert not tiny.deterministic and not PretrainConfig(train_files=[], eval_files=[], model_dir="x",
                                                         deterministic=False).resolved().deterministic


def test_every_preset_builds_and_demo_runs():
    assert set(PRESETS) == {"tiny", "small", "base", "demo", "english"}
    backbone = backbone_from_preset("demo", max_sequence_length=16)
    out = backbone(random_inputs([16, 9], padded_length=16, vocabulary_size=2000))
    assert tuple(out["sequence_output"].shape) == (2, 16, 128)
    base = backbone_from_preset("base")
    assert base.max_iterations == 24 and len(base.encoder.blocks) == 1


def test_unknown_preset_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown preset 'huge'; expected one of \['base', 'demo', 'english', 'small', 'tiny'\]"):
        get_preset("huge")


def test_every_preset_describes_itself_and_names_a_command_that_exists():
    for name, preset in PRESETS.items():
        commands = re.findall(r"`((?:\.venv/bin/)?python -m (?:albert_act|benchmarks)\.[^`]+)`", preset.description)
        assert preset.description.strip() and commands, f"{name}: no `python -m ...` command in its description"
        wrong = unknown_modules_and_flags("".join(f"    {command}\n" for command in commands))
        assert wrong == [], f"{name}: {wrong}"


def test_the_sections_the_presets_cite_exist():
    comments = [token.string for token in tokenize.generate_tokens(io.StringIO(SOURCE.read_text()).readline)
                if token.type == tokenize.COMMENT]
    cited = SECTION.findall(" ".join(comments + [preset.description for preset in PRESETS.values()]))
    assert len(cited) >= 8  # every measured value points at its page
    missing = []
    for page, heading in sorted(set(cited)):
        path = REPO / ("README.md" if page == "README" else page)
        headings = [line.lstrip("#").strip() for line in path.read_text().splitlines() if line.startswith("#")]
        if not any(h == heading or h.startswith(heading + " (") for h in headings):
            missing.append(f'{page} "{heading}"')
    assert missing == [], missing


def test_the_presets_carry_no_dates_or_issue_numbers():
    text = SOURCE.read_text()
    assert not re.findall(r"20\d\d-[01]\d-[0-3]\d|issue \d|until 20|since 20", text)
