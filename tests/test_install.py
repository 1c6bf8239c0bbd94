"""The project installs, editable, into a venv (pyproject.toml): its commands then run from any folder."""

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_pyproject_installs_every_package_with_the_pinned_requirements():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    include = config["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = sorted(p.name for p in REPO.iterdir() if (p / "__init__.py").is_file() and p.name != "benchmarks")
    assert packages == ["albert_act", "pipelines"]  # benchmarks/ (a package for its start-up) runs from a clone
    assert sorted(name for name in include if "*" not in name) == packages
    assert all(f"{name}.*" in include for name in packages)  # and their subpackages
    assert config["project"]["dynamic"] == ["dependencies"]  # pinned in one place:
    assert config["tool"]["setuptools"]["dynamic"]["dependencies"]["file"] == ["requirements.txt"]


@pytest.mark.slow  # a venv and a build of the project (~30 s; pip fetches setuptools from the package index)
def test_an_editable_install_finds_the_package_from_another_folder(tmp_path):
    import shutil

    # A copy of what the install reads: setuptools writes its .egg-info beside the sources.
    project = tmp_path / "project"
    for name in ("albert_act", "pipelines"):
        shutil.copytree(REPO / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "requirements.txt", "README.md"):
        shutil.copy(REPO / name, project / name)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "-e", str(project)],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    found = subprocess.run([str(venv / "bin" / "python"), "-c", "import importlib.util as u; "
                            "print(u.find_spec('albert_act').origin, u.find_spec('albert_act.base.cli').origin)"],
                           cwd=elsewhere, capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == [str(project / "albert_act" / "__init__.py"), str(project / "pipelines" / "cli.py")]
    assert not list(REPO.glob("*.egg-info"))  # nothing written into the repository
