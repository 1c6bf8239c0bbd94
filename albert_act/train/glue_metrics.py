"""GLUE metrics as the benchmark defines them, in NumPy.

CoLA: Matthews correlation. MRPC, QQP: accuracy and F1 (positive class 1).
STS-B: Pearson and Spearman correlation. Every other task: accuracy.
The first metric listed for a task is the one used to select checkpoints.
"""

import numpy as np

from pipelines import glue


def accuracy(labels, predictions):
    return float(np.mean(np.asarray(labels) == np.asarray(predictions)))


def f1(labels, predictions, positive=1):
    labels, predictions = np.asarray(labels) == positive, np.asarray(predictions) == positive
    true_positive = np.sum(labels & predictions)
    if true_positive == 0:
        return 0.0
    precision, recall = true_positive / predictions.sum(), true_positive / labels.sum()
    return float(2 * precision * recall / (precision + recall))


def matthews_correlation(labels, predictions):
    labels, predictions = np.asarray(labels, bool), np.asarray(predictions, bool)
    tp, tn = np.sum(labels & predictions), np.sum(~labels & ~predictions)
    fp, fn = np.sum(~labels & predictions), np.sum(labels & ~predictions)
    denominator = np.sqrt(float(tp + fp) * float(tp + fn) * float(tn + fp) * float(tn + fn))
    return 0.0 if denominator == 0 else float((tp * tn - fp * fn) / denominator)


def pearson(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return 0.0 if denominator == 0 else float((x * y).sum() / denominator)


def _ranks(values):
    """Ranks from 1, ties sharing their average rank (as Spearman requires)."""
    values = np.asarray(values, float)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x, y):
    return pearson(_ranks(x), _ranks(y))


# Each GLUE task's dev metrics, from its entry in pipelines/glue.py (the one GLUE table); a task not
# there (a probing task) is scored by accuracy.
TASK_METRICS = {name: task.metrics for name, task in glue.TASKS.items()}
_FUNCTIONS = {"accuracy": accuracy, "f1": f1, "matthews_correlation": matthews_correlation,
              "pearson": pearson, "spearman": spearman}


def task_metrics(task, labels, predictions):
    """{metric: value} for a GLUE task (or a probing task: accuracy); the first key selects models."""
    return {name: _FUNCTIONS[name](labels, predictions) for name in TASK_METRICS.get(task, ("accuracy",))}
