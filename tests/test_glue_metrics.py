"""GLUE metrics against hand-computed values."""

import math

import pytest

from albert_act.train import glue_metrics as m


def test_matthews_by_hand():
    # tp=2 tn=1 fp=1 fn=1: (2*1 - 1*1) / sqrt(3*3*2*2) = 1/6
    assert m.matthews_correlation([1, 1, 1, 0, 0], [1, 1, 0, 1, 0]) == pytest.approx(1 / 6)
    assert m.matthews_correlation([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert m.matthews_correlation([1, 1, 0, 0], [1, 1, 1, 1]) == 0.0  # constant prediction


def test_f1_and_accuracy_by_hand():
    # tp=2 fp=1 fn=1: precision 2/3, recall 2/3, F1 2/3
    assert m.f1([1, 1, 1, 0, 0], [1, 1, 0, 1, 0]) == pytest.approx(2 / 3)
    assert m.accuracy([1, 1, 1, 0, 0], [1, 1, 0, 1, 0]) == pytest.approx(0.6)
    assert m.f1([0, 0], [0, 0]) == 0.0


def test_correlations_by_hand():
    assert m.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    # x = 1,2,3,4 ; y = 1,3,2,4: deviations (-1.5,-.5,.5,1.5)(-1.5,.5,-.5,1.5) -> 4/5
    assert m.pearson([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    # Spearman with ties: ranks of (10, 20, 20, 30) are (1, 2.5, 2.5, 4)
    assert m.spearman([10, 20, 20, 30], [1, 2, 3, 4]) == pytest.approx(m.pearson([1, 2.5, 2.5, 4], [1, 2, 3, 4]))
    assert m.spearman([1, 2, 3, 4], [1, 4, 9, 16]) == 1.0  # monotone, not linear
    assert m.spearman([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_task_metrics_per_task():
    assert list(m.task_metrics("cola", [1, 0], [1, 0])) == ["matthews_correlation"]
    assert list(m.task_metrics("mrpc", [1, 0], [1, 0])) == ["f1", "accuracy"]
    assert list(m.task_metrics("sts-b", [1.0, 2.0, 3.0], [1.1, 2.1, 2.9])) == ["pearson", "spearman"]
    assert m.task_metrics("rte", ["a", "b"], ["a", "a"]) == {"accuracy": 0.5}
    assert not math.isnan(m.task_metrics("sts-b", [1, 1], [1, 2])["pearson"])
