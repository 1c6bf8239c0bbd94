"""The Colab notebooks: committed without outputs, thin, and executed end to end in smoke mode
(ALBERT_ACT_SMOKE=1: CPU, embedded corpus, demo preset) by a real notebook runner (nbclient)."""

import ast
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("pretrain_tpu", "finetune_glue", "analyze_depth")


def _read(name):
    return nbformat.read(REPO / "colab" / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_committed_without_outputs_with_a_parameters_cell_and_no_logic_of_their_own(name):
    notebook = _read(name)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.outputs == [] and cell.execution_count is None for cell in code)
    assert "parameters" in code[0].metadata.get("tags", []) and "SMOKE" in code[0].source
    for cell in code:  # thin: calls into the library, never class definitions
        tree = ast.parse(cell.source)
        assert not any(isinstance(node, ast.ClassDef) for node in ast.walk(tree)), cell.source[:80]


@pytest.fixture(scope="module")
def smoke_dir(tmp_path_factory):
    """Where the notebooks write in smoke mode (ALBERT_ACT_SMOKE_DIR): shared by the three, so the
    finetune and analysis notebooks build the demo data once; nothing goes into the repository."""
    return tmp_path_factory.mktemp("colab_smoke")


# All three run with `pytest -m slow` (about 60 s for the TPU notebook, 90 s for the other two):
# their code paths are covered by the default run's own tests (the TPU's steps XLA-compiled in
# bf16 on the CPU by tests/test_xla.py; fine-tuning, submission, analyses by theirs). That the
# notebooks are committed without outputs is checked in the default run.
# The TPU notebook's JAX path ("pretrain_tpu:jax") pre-trains in a KERAS_BACKEND=jax process on the CPU (about
# 90 s more): its compiled update is the one tests/test_jax_backend.py checks against TensorFlow's.
SMOKE_RUNS = [pytest.param(name, marks=pytest.mark.slow) for name in (*NOTEBOOKS, "pretrain_tpu:jax")]


@pytest.mark.parametrize("name", SMOKE_RUNS)
def test_runs_end_to_end_in_smoke_mode(name, smoke_dir, monkeypatch, request):
    name, _, backend = name.partition(":")
    if name == "finetune_glue":
        request.getfixturevalue("shared_data")  # GLUE from ../shared/data (skips, or fails under CI, without it)
    monkeypatch.setenv("ALBERT_ACT_SMOKE", "1")
    monkeypatch.setenv("ALBERT_ACT_SMOKE_DIR", str(smoke_dir))
    monkeypatch.setenv("ALBERT_ACT_BACKEND", backend or "tensorflow")
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "3")
    notebook = _read(name)
    # Executes every cell in a fresh Python kernel, from the repository root, like a clone on Colab.
    NotebookClient(notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}).execute()
    text = "\n".join(output.get("text", "") for cell in notebook.cells if cell.cell_type == "code"
                     for output in cell.outputs)
    if name == "pretrain_tpu":
        bucket = f"file://{smoke_dir}/bucket"
        if backend == "jax":  # the run on local disk, exported to the bucket by TensorFlow
            assert "pre-training demo (act) on JAX, cpu x1, mixed_bfloat16" in text and "resumed at update 4" in text
            assert (smoke_dir / "albert-act-jax" / "runs" / "demo" / "checkpoints" / "jax-4.npz").exists()
            assert '"step": 4' in text  # held_out.jsonl
        else:
            assert "cpu: 1 replica(s)" in text and f"resumed from {bucket}/runs/demo/checkpoints/ckpt-4" in text
        assert f"{bucket}/saved_models/demo/1" in text and "fill_mask: {" in text
    if name == "finetune_glue":
        assert (smoke_dir / "finetune" / "submission.zip").exists() and "written: ['STS-B.tsv', 'RTE.tsv']" in text
        assert "('[CLS]'," in text  # tokens paired with their iterations
    if name == "analyze_depth":
        assert (smoke_dir / "analysis" / "sentence.png").exists() and (smoke_dir / "analysis" / "report" / "report.md").exists()
        assert "('[CLS]'," in text and "## Iterations per token type" in text
