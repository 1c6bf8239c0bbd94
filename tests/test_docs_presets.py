"""docs/pretraining.md's preset tables give each preset's model and run as `albert_act.PRESETS` has
them: a value changed on one side only, a preset added or removed, fails here."""

import re

from test_readme import REPO

PAGE = REPO / "docs" / "pretraining.md"
UNSET = "-"  # the table's mark for a setting the preset leaves at its default


def documented_tables(text):
    """The Presets section's tables as {header's first column: {preset: {key: cell}}}, cells as written."""
    section = text.split("\n### Presets\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    tables = {}
    for block in re.findall(r"((?:^\|.*\|\n)+)", section + "\n", re.M):
        rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in block.strip().splitlines()]
        header, body = rows[0], rows[2:]
        keys = [cell.strip("`") for cell in header[1:]]
        tables[keys[0]] = {row[0]: dict(zip(keys, row[1:])) for row in body}
    return tables


def parse(cell):
    """A cell's value: "-" (unset), a bool, a number (commas allowed) or a word."""
    if cell == UNSET:
        return UNSET
    if cell in ("True", "False"):
        return cell == "True"
    try:
        return float(cell.replace(",", ""))
    except ValueError:
        return cell.strip("`")


def differences(documented, actual):
    """`key: documented != actual` for each cell that does not say what `actual` (a dict) holds."""
    wrong = []
    for key, cell in documented.items():
        value = parse(cell)
        if value == UNSET:
            if key in actual:
                wrong.append(f"{key}: documented as unset, the preset has {actual[key]!r}")
        elif key not in actual:
            wrong.append(f"{key}: documented {cell}, the preset leaves it unset")
        elif isinstance(value, float) and not isinstance(actual[key], (bool, str)):
            if abs(value - float(actual[key])) > 1e-12 * max(1.0, abs(value)):
                wrong.append(f"{key}: documented {cell}, the preset has {actual[key]!r}")
        elif value != actual[key]:
            wrong.append(f"{key}: documented {cell}, the preset has {actual[key]!r}")
    return wrong


def test_the_check_finds_a_changed_value_and_an_unset_one():
    actual = {"steps": 1000, "learning_rate": 1e-2, "execution": "gather", "jit_compile": False}
    documented = {"steps": "1,000", "learning_rate": "1e-2", "execution": "gather", "jit_compile": "False"}
    assert differences(documented, actual) == []
    assert differences({**documented, "steps": "1,400"}, actual) == ["steps: documented 1,400, the preset has 1000"]
    assert differences({"deterministic": "True"}, actual) == ["deterministic: documented True, the preset leaves it unset"]
    assert differences({"steps": "-"}, actual) == ["steps: documented as unset, the preset has 1000"]
    assert differences({"jit_compile": "True"}, actual) == ["jit_compile: documented True, the preset has False"]


def test_the_pretraining_pages_preset_tables_are_the_presets():
    from albert_act import PRESETS

    tables = documented_tables(PAGE.read_text(encoding="utf-8"))
    model = tables["vocabulary_size"]  # the run's settings: the schedule's table and the depth recipe's
    run = {name: {**tables["steps"][name], **tables["target_iterations"].get(name, {})} for name in tables["steps"]}
    assert sorted(model) == sorted(run) == sorted(PRESETS)  # every preset, and no other
    wrong = []
    for name, preset in PRESETS.items():
        backbone = {k: v for k, v in preset.backbone.items() if k != "dropout"}  # dropout: 0 in every preset (below)
        wrong += [f"{name} model {problem}" for problem in differences(model[name], backbone)]
        wrong += [f"{name} run {problem}" for problem in differences(run[name], preset.training)]
        undocumented = set(preset.training) - set(run[name])
        wrong += [f"{name} run: {key} is not in the table" for key in sorted(undocumented)]
        wrong += [f"{name} model: {key} is not in the table" for key in sorted(set(backbone) - set(model[name]))]
        assert preset.backbone.get("dropout") == 0.0, name  # the page says "every preset has dropout 0"
    assert wrong == [], wrong
