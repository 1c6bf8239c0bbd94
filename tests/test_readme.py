"""Every command block of the README and then of the docs pages it lists (in the order of its
Documentation table), run in order as a new user would, in a copy of the repository.

Slow (the quick start alone is ~5 minutes): `pytest -m slow tests/test_readme.py`. The commands are
read from the README itself, so a documented command that stops working fails here. Each must exit
0, and the project's own commands must print no TensorFlow start-up noise (no `E0000`/`W0000`
lines, no C++ `LOG(INFO)` lines, no traceback). Two changes, both to keep the run in CI's budget: `.venv/bin/python` is
this interpreter, and the `--preset tiny` example (the paper's 112,500 updates of 4,096) runs
4 updates of 8. The commands on `albert-base-v2` (downloaded by the user) run on the Hugging Face
dir that the README's clean-clone commands write just before them (real names and shapes, demo
sizes: its data at 64 pieces), pre-training 4 updates of 8 and fine-tuning 1 epoch of 64 examples. The install and test
commands of the quick start are not re-run.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHORT_TINY = ["--steps", "4", "--global_batch_size", "8", "--micro_batch_size", "8", "--eval_batches", "1"]
STAND_IN = "saved_models/albert_fixed_hf"  # written by the README's commands, read where it says albert-base-v2
SHORT_FINETUNE = ["--epochs", "1", "--max_train_examples", "64"]


def readme_commands(text):
    """The README's indented shell commands, in order, continuation lines joined; the quick
    start's `python3 -m venv ... && ...` line reduced to its last command."""
    commands, current = [], None
    for line in text.splitlines():
        body = line[4:] if line.startswith("    ") else None
        if current is not None:
            current += " " + body.strip().rstrip("\\").strip() if body is not None else ""
            if body is None or not body.rstrip().endswith("\\"):
                commands.append(current.strip())
                current = None
            continue
        if body is None:
            continue
        stripped = body.strip()
        if stripped.startswith("python3 -m venv"):
            stripped = stripped.split("&&")[-1].strip()
        if re.match(r"(\.venv/bin/)?python -(m|c) ", stripped) and not re.match(r"\S*python -m [\w.]*<", stripped):
            command = stripped.split("  #")[0].rstrip("\\").strip()
            if stripped.endswith("\\"):
                current = command
            else:
                commands.append(command)
    return commands


def documented_pages():
    """README.md, then each docs page in the order the README's Documentation table lists them."""
    readme = (REPO / "README.md").read_text()
    listed = re.findall(r"^\| \[(docs/[\w\-]+\.md)\]", readme, re.M)
    return [REPO / "README.md"] + [REPO / page for page in listed]


def documented_commands():
    return [c for page in documented_pages() for c in readme_commands(page.read_text())]


def test_readme_commands_are_found():
    pages = documented_pages()
    assert len(pages) == 16 and sorted(pages[1:]) == sorted((REPO / "docs").glob("*.md"))  # every page listed
    commands = documented_commands()
    assert commands[0] == ".venv/bin/python -m albert_act.pretrain"
    assert any(c.startswith(".venv/bin/python -m albert_act.finetune --task rte") for c in commands)
    assert any("--output_dir data/pretraining" in c for c in commands)  # a continuation line joined
    assert commands[1] == ".venv/bin/python -m pytest"  # found, and not re-run below


@pytest.mark.slow
def test_every_readme_command_runs_in_order(tmp_path):
    clone = tmp_path / "albert-act"
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, clone / name)
    shared = REPO.parent / "shared"
    if shared.exists():
        (tmp_path / "shared").symlink_to(shared)
    for command in documented_commands():
        if command.endswith("-m pytest"):
            continue
        args = command.replace(".venv/bin/python", sys.executable, 1)
        if "--preset tiny" in args:
            args += " " + " ".join(SHORT_TINY)
        if "albert-base-v2" in args:
            args = args.replace("albert-base-v2/spiece.model", f"{STAND_IN}/spiece.model").replace("albert-base-v2", STAND_IN)
            args += " " + " ".join(SHORT_TINY if "albert_act.pretrain" in args else
                                   SHORT_FINETUNE if "albert_act.finetune" in args else
                                   ["--max_seq_length", "64"] if "create_pretraining_data" in args else [])
        result = subprocess.run(args, shell=True, cwd=clone, capture_output=True, text=True, timeout=1200,
                                env={**os.environ, "PYTHONPATH": str(clone)})
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"{command}\n{output[-3000:]}"
        if "-m albert_act." in command or "-m pipelines." in command:
            noisy = [line for line in output.splitlines() if re.match(r"[EWI]0000|Traceback|\S+\.cc\(\d+\) LOG", line)]
            assert noisy == [], f"{command}: {noisy[:3]}"


def test_the_readmes_snippet_runs_as_printed():
    """The README's Python snippet (the English model asked one sentence), run as a user runs it: a fresh
    interpreter in the repository's root; its top guess and the depth of every piece as the README prints."""
    import json

    readme = (REPO / "README.md").read_text()
    snippet = re.search(r"```python\n(.*?)```", readme, re.S).group(1)
    assert len(snippet.strip().splitlines()) == 5
    run = subprocess.run([sys.executable, "-c", snippet], cwd=REPO, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert run.returncode == 0, run.stderr[-2000:]
    guesses, depths = run.stdout.strip().splitlines()[-2:]
    printed = re.search(r"It prints `(\[.*?\])` and\s+`(\[.*?\])`", readme, re.S)
    assert json.loads(guesses.replace("'", '"'))[0] == json.loads(printed.group(1).replace("'", '"'))[0]
    assert depths == printed.group(2)
