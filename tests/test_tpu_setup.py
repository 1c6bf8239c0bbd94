"""The TPU setup: requirements-tpu.txt installs TensorFlow's TPU build without PyPI's
`tensorflow` beside it, and asking for a TPU where TensorFlow cannot see one says which build is
installed and what to install."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from albert_act import distribution

REPO = Path(__file__).resolve().parents[1]


def _pins(name):
    lines = (REPO / name).read_text().splitlines()
    return dict(re.match(r"([A-Za-z0-9_.-]+)==(\S+)", line).groups() for line in lines if "==" in line and
                not line.startswith("#"))


def test_the_tpu_pins_match_the_main_ones_and_leave_out_what_pulls_in_pypi_tensorflow():
    main, tpu = _pins("requirements.txt"), _pins("requirements-tpu.txt")
    assert tpu["tensorflow-tpu"] == "2.20.0" and tpu["tensorboard"].startswith("2.20.")
    # tensorflow-text and keras-hub declare PyPI's tensorflow: installed with --no-deps (the file says how)
    assert not {"tensorflow", "tensorflow-text", "keras-hub"} & set(tpu)
    text = (REPO / "requirements-tpu.txt").read_text()
    assert "pip install --no-deps tensorflow-text==2.20.1" in text and "libtpu-tf-releases" in text
    for name in set(main) & set(tpu) - {"tensorboard"}:  # tensorboard follows TensorFlow's minor version
        assert tpu[name] == main[name], name  # one version of each other shared dependency


def test_a_tpu_that_is_not_there_names_the_build_and_the_install():
    with pytest.raises(ValueError) as error:
        distribution.make_strategy("tpu")
    message = str(error.value)
    assert message.startswith("--strategy tpu: no TPU found at 'local' (")
    assert re.search(r"installed: tensorflow 2\.\d+\.\d+ \(PyPI's build: it does not reach a TPU\)", message), message
    assert "pip install -r requirements-tpu.txt && pip install --no-deps tensorflow-text==2.20.1" in message


def test_a_pod_slice_is_addressed_by_the_name_in_albert_act_tpu(monkeypatch):
    assert distribution.tpu_address({}) == "local"
    assert distribution.tpu_address({"ALBERT_ACT_TPU": "my-v4-32"}) == "my-v4-32"
    given = []

    def resolver(tpu):
        given.append(tpu)
        raise ValueError("no such TPU")

    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", resolver)
    monkeypatch.setenv("ALBERT_ACT_TPU", "my-v4-32")
    with pytest.raises(ValueError, match=r"no TPU found at 'my-v4-32' \(no such TPU\)"):
        distribution.make_strategy("tpu")
    assert given == ["my-v4-32"]


@pytest.mark.slow
def test_the_tpu_requirements_resolve_together(tmp_path):
    """pip's resolver, on PyPI (Google's libtpu index, which a TPU VM reaches, is not reachable here)."""
    report, requirements = tmp_path / "report.json", tmp_path / "requirements-tpu.txt"
    # Without the --find-links line: an unreachable index costs minutes of retries before pip goes on.
    requirements.write_text("".join(line for line in (REPO / "requirements-tpu.txt").read_text().splitlines(True)
                                    if not line.startswith("--find-links")))
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                           "-r", str(requirements), "--report", str(report)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    chosen = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
              for item in json.loads(report.read_text())["install"]}
    assert chosen["tensorflow-tpu"] == "2.20.0" and "libtpu" in chosen
    assert "tensorflow" not in chosen and "tensorflow-text" not in chosen  # nothing overwrites the TPU build


@pytest.mark.slow
def test_the_jax_tpu_path_resolves_to_the_pinned_jax_with_its_tpu_runtime(tmp_path):
    """The TPU notebook's BACKEND = "jax" installs requirements.txt and "jax[tpu]": the pinned jax,
    PyPI's libtpu made for it, and PyPI's TensorFlow (which does not take the TPU) beside it."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
                           "-r", str(REPO / "requirements.txt"), "jax[tpu]", "--report", str(report)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    chosen = {item["metadata"]["name"].lower().replace("_", "-"): item["metadata"]["version"]
              for item in json.loads(report.read_text())["install"]}
    pinned = dict(line.strip().split("==") for line in (REPO / "requirements.txt").read_text().splitlines()
                  if "==" in line and not line.startswith("#"))
    assert chosen["jax"] == pinned["jax"] and chosen["jaxlib"] == pinned["jaxlib"]
    assert "libtpu" in chosen and "tensorflow-tpu" not in chosen and chosen["tensorflow"] == pinned["tensorflow"]


def test_a_keras_json_floatx_is_set_back_to_the_commands_precision(capsys):
    """keras.json's "floatx": "float16" (KERAS_HOME) made pre-training fail in TensorFlow's words (AddV2 of float16
    and float32, round 42 B45): floatx is set back to float32, with a note, and the dtype policy is the precision's."""
    import keras

    from albert_act import distribution

    try:
        keras.config.set_floatx("float16")
        assert distribution.resolve_precision("auto", "cpu") == "float32"
        assert keras.config.floatx() == "float32" and keras.config.dtype_policy().name == "float32"
        assert capsys.readouterr().out.startswith("note: Keras' floatx is float16 (keras.json in KERAS_HOME, or "
                                                  "~/.keras); this command's precision is float32")
    finally:
        keras.config.set_floatx("float32")
