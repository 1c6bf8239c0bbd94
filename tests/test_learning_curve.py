"""The learning curve re-evaluates a run's kept checkpoints exactly as the run's own final evaluation."""

import json
from pathlib import Path

import pytest

from conftest import png_ink


@pytest.mark.slow  # ~40 s: rebuilds and re-evaluates the run; `pytest -m slow`
def test_the_last_point_is_the_runs_own_final_evaluation(tiny_run, tmp_path):
    from albert_act.analysis.plots import plot_learning_curve
    from albert_act.train.learning_curve import learning_curve, markdown

    run = Path(tiny_run[0])
    final = json.loads((run / "evaluation.json").read_text())
    points = learning_curve(str(run), eval_batches=1)
    assert [p["step"] for p in points] == [final["step"]] == [3]
    assert points[-1]["mlm_accuracy"] == pytest.approx(final["mlm_accuracy"], abs=1e-6)
    assert points[-1]["sop_accuracy"] == pytest.approx(final["sop_accuracy"], abs=1e-6)
    assert points[-1]["mean_iterations"] == pytest.approx(final["iterations"]["all"]["mean"], abs=1e-5)
    low, high = points[-1]["mlm_accuracy_interval"]
    assert low <= points[-1]["mlm_accuracy"] <= high
    table = markdown(points)
    assert f"| 3 | {final['mlm_accuracy']:.3f} [" in table and "(most frequent token)" in table
    plot_learning_curve(points, tmp_path / "curve.png")
    height, width, ink, _ = png_ink(tmp_path / "curve.png")
    assert width > height and 0.01 < ink < 0.5


def test_a_run_without_checkpoints_is_named(tiny_run, tmp_path):
    import shutil

    from albert_act.train.learning_curve import learning_curve

    copy = tmp_path / "run"
    shutil.copytree(tiny_run[0], copy)
    shutil.rmtree(copy / "checkpoints")
    with pytest.raises(ValueError, match=r"run: no checkpoints in .*checkpoints"):
        learning_curve(str(copy), eval_batches=1)
