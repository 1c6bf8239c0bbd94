"""The fine-tuning model and its steps: `build_classifier` (an AlbertActClassifier over a backbone,
AdamW with warm-up and linear decay), `ClassifierSteps` (the per-replica train and predict
functions under any strategy, XLA-compiled as TPUStrategy compiles them) and `evaluate` (the
task's dev metrics and the mean iterations per token)."""

import keras
import numpy as np
import tensorflow as tf

from albert_act import distribution
from albert_act.analysis import confidence
from albert_act.model.classifier import AlbertActClassifier
from albert_act.train import glue_metrics
from albert_act.train.learning_rate import WarmupLinearDecay
from albert_act.train.losses import finetuning_loss
from pipelines.tokenizer import CLS_ID, SEP_ID


def build_classifier(backbone, task, strategy, seed, learning_rate, total_steps, ponder_cost_weight, jit_compile):
    """(AlbertActClassifier over `backbone`, its ClassifierSteps with AdamW and a warm-up of 10%)."""
    with strategy.scope():
        keras.utils.set_random_seed(seed)  # after encoding: the head's initial weights depend on the seed alone
        model = AlbertActClassifier(backbone, num_classes=len(task.labels) or 1)
        optimizer = keras.optimizers.AdamW(WarmupLinearDecay(learning_rate, int(0.1 * total_steps), total_steps),
                                           weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)
        optimizer.exclude_from_weight_decay(var_names=["layer_norm", "bias"])
    return model, ClassifierSteps(model, optimizer, strategy, not task.labels, ponder_cost_weight, jit_compile)


class ClassifierSteps:
    """The per-replica functions of fine-tuning, as `strategy.run` runs them (XLA-compiled when
    `jit_compile`, as TPUStrategy compiles them): `replica_train` (one AdamW update from this
    replica's rows of the global batch) and `replica_predict` (logits and iterations).

    Build `model` and `optimizer` inside `strategy.scope()`, after `distribution.resolve`.
    At fixed depth (`halting` "none") `ponder_cost_weight` is 0 whatever is asked: every token
    runs N_max, so the ponder cost is a constant with no gradient that would only shift the loss.
    """

    def __init__(self, model, optimizer, strategy, regression, ponder_cost_weight=0.0, jit_compile=False):
        self.model, self.optimizer, self.strategy = model, optimizer, strategy
        fixed_depth = model.backbone.halting == "none"
        self.regression, self.ponder_cost_weight = regression, 0.0 if fixed_depth else ponder_cost_weight
        with strategy.scope():  # variables exist before any step is traced (XLA creates none)
            model({k: np.zeros((1, 2), "int32") + 1 for k in ("token_ids", "padding_mask")} | {
                "segment_ids": np.zeros((1, 2), "int32")}, training=False)
            optimizer.build(model.trainable_variables)
        replica_train = distribution.compiled(self.replica_train, jit_compile)

        @tf.function
        def train_step(inputs, targets):
            loss = strategy.run(replica_train, args=(inputs, targets))
            return strategy.reduce("mean", loss, axis=None)

        self.train_step = train_step
        self.predict = distribution.row_runner(self.replica_predict, strategy, jit_compile)

    def replica_train(self, inputs, targets):
        """The mean loss of this replica's rows; its gradient / replicas, which the optimizer sums
        over replicas: the update is the global batch's."""
        inputs, targets = distribution.replica_rows((inputs, targets))
        variables, replicas = self.model.trainable_variables, self.strategy.num_replicas_in_sync
        with tf.GradientTape() as tape:
            outputs = self.model(inputs, training=True)
            loss = finetuning_loss(outputs, targets, self.regression, self.ponder_cost_weight)
            share = loss / replicas
        gradients = tape.gradient(share, variables)
        self.optimizer.apply_gradients(zip(gradients, variables))
        return loss

    def replica_predict(self, inputs):
        outputs = self.model(inputs, training=False)
        return {"logits": tf.cast(outputs["logits"], tf.float32), "iterations": outputs["iterations"]}


def evaluate(task, steps, inputs, targets):
    """Task metrics (the accuracy with its interval, for classification) and mean iterations per
    token on the given (dev) data (`steps`: ClassifierSteps)."""
    outputs = predict(steps, inputs)
    if task.labels:
        predictions = outputs["logits"].argmax(-1)
    else:
        predictions = outputs["logits"][:, 0]
    metrics = glue_metrics.task_metrics(task.metric_task, targets, predictions)
    if task.labels:  # the accuracy's 95% bootstrap interval over the dev examples
        correct = (predictions == targets).astype("float64")
        ratios = confidence.resampled_ratios(correct, np.ones_like(correct), confidence.resample_counts(len(correct)))
        metrics["accuracy_interval"] = [float(bound) for bound in confidence.percentile_interval(ratios)]
    real = inputs["padding_mask"].astype(bool)
    tokens = inputs["token_ids"]
    masks = {"all": real, "[CLS]": real & (tokens == CLS_ID), "[SEP]": real & (tokens == SEP_ID)}
    masks["other"] = real & ~masks["[CLS]"] & ~masks["[SEP]"]
    metrics["iterations"] = {name: float(outputs["iterations"][m].mean()) for name, m in masks.items()}
    return metrics


def majority(task, targets):
    """{"label", "accuracy"}: the dev accuracy of always answering the most frequent dev label
    (None for regression): the baseline every classifier is read against."""
    if not task.labels or not len(targets):
        return None
    counts = np.bincount(targets, minlength=len(task.labels))
    return {"label": task.labels[int(counts.argmax())], "accuracy": float(counts.max() / len(targets))}


def predict(steps, inputs, batch_size=64):
    outputs = [steps.predict({k: v[start : start + batch_size] for k, v in inputs.items()})
               for start in range(0, len(inputs["token_ids"]), batch_size)]
    return {k: np.concatenate([o[k] for o in outputs]) for k in ("logits", "iterations")}
