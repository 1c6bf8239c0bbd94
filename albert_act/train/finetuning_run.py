"""Fine-tuning on GLUE and probing tasks: classification or regression on the pooled output.

Read top to bottom: `load_task` (examples and label set), `encode` ([CLS] A [SEP] B [SEP],
`pipelines.packing`), `finetune` (AdamW, warmup + linear decay, the loss of
`albert_act.train.losses`, best dev epoch kept, raw-text SavedModel export), `grid_search`
(the paper's grid). What a fine-tuning dir holds: `albert_act.base.artifacts`.
"""

import dataclasses
import itertools
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

from albert_act.base import artifacts
from albert_act import distribution
from albert_act.base import checks, cli, outputs
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.source import HALTING_UNIT, Source
from albert_act.serve import savedmodel
from albert_act.train import glue_metrics
from albert_act.train.learning_rate import WarmupLinearDecay
from albert_act.train.losses import finetuning_loss
from pipelines import glue, probing
from pipelines.packing import TextEncoder, pack_texts
from pipelines.tokenizer import CLS_ID, SEP_ID

PAPER_GRID = {"learning_rate": (5e-5, 3e-5, 2e-5), "batch_size": (16, 32), "epochs": (2, 3, 4)}
PROBING_TASKS = tuple(probing.TASK_FILES)


@dataclasses.dataclass
class TaskData:
    name: str
    labels: tuple  # () for regression
    train: list
    dev: list
    metric_task: str  # key for glue_metrics.task_metrics
    skipped: tuple = ()  # (file, [line numbers]) of malformed rows the GLUE reader skipped


def load_task(name, data_dir):
    """Train and dev examples of a GLUE task (glue_data/<Task> dir) or a probing task (SentEval file dir)."""
    key = name.lower()
    if key in PROBING_TASKS:
        data = probing.read_senteval(os.path.join(data_dir, probing.TASK_FILES[key]))
        as_examples = lambda rows, split: [glue.Example(f"{split}-{i}", s, None, l) for i, (l, s) in enumerate(rows)]  # noqa: E731
        labels = tuple(sorted({label for label, _ in data["tr"]}))
        return TaskData(key, labels, as_examples(data["tr"], "tr"), as_examples(data["va"], "va"), key)
    if key not in glue.TASKS:
        raise ValueError(f"unknown task {name!r}; expected a GLUE task {sorted(glue.TASKS)} "
                         f"or a probing task {sorted(PROBING_TASKS)}")
    task = glue.TASKS[key]
    if "train" not in task.splits:
        raise ValueError(f"{task.name} has no training data: it is predicted with the MNLI model")
    splits = [os.path.join(data_dir, task.splits[s]) for s in ("train", glue.DEV_SPLIT.get(key, "dev"))]
    if all(os.path.exists(p) for p in splits) and os.path.samefile(*splits):
        raise ValueError(f"{splits[0]} is {splits[1]} (a link): dev numbers would measure the training data")
    train, train_report = glue.read_glue(key, data_dir, "train")
    dev, dev_report = glue.read_glue(key, data_dir, glue.DEV_SPLIT.get(key, "dev"))
    skipped = tuple((r["file"], r["skipped_lines"], r["malformed_rows_skipped"]) for r in (train_report, dev_report)
                    if r["malformed_rows_skipped"])
    return TaskData(key, task.labels, train, dev, key, skipped)


def _check_settings(batch_size, epochs, learning_rate):
    checks.positive_int("batch_size", batch_size)
    checks.positive_int("epochs", epochs)
    if not learning_rate > 0:
        raise ValueError(f"learning_rate must be > 0, got {learning_rate}")


def _check_halting_bias(bias, new_weights, init):
    if bias and not any(p.startswith(HALTING_UNIT) for p in new_weights):
        raise ValueError(f"--halting_bias sets a new halting unit's start, and {init} has its own halting unit "
                         f"(or --halting none has none): drop --halting_bias")


def encode(tokenizer, examples, max_seq_length):
    """`[CLS] A [SEP] (B [SEP])` ids of the examples, by the packer the exports run
    (`pipelines.packing`); returns (inputs of int32 (N, max_seq_length), truncated count)."""
    encoder = TextEncoder(tokenizer.model_proto, max_seq_length)
    pair = bool(examples) and examples[0].text_b is not None
    inputs, truncated = pack_texts(encoder, [e.text_a for e in examples],
                                   [e.text_b for e in examples] if pair else None)
    return inputs, int(truncated.sum())


def _targets(task, examples):
    if not task.labels:
        return np.array([float(e.label) for e in examples], "float32")
    index = {label: i for i, label in enumerate(task.labels)}
    missing = sorted({e.label for e in examples} - set(index))
    if missing:
        raise ValueError(f"{task.name}: labels {missing} outside the task's set {list(task.labels)}")
    return np.array([index[e.label] for e in examples], "int32")


def _predict(steps, inputs, batch_size=64):
    outputs = [steps.predict({k: v[start : start + batch_size] for k, v in inputs.items()})
               for start in range(0, len(inputs["token_ids"]), batch_size)]
    return {k: np.concatenate([o[k] for o in outputs]) for k in ("logits", "iterations")}


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
    """Task metrics and mean iterations per token on the given (dev) data (`steps`: ClassifierSteps)."""
    outputs = _predict(steps, inputs)
    if task.labels:
        predictions = outputs["logits"].argmax(-1)
    else:
        predictions = outputs["logits"][:, 0]
    metrics = glue_metrics.task_metrics(task.metric_task, targets, predictions)
    real = inputs["padding_mask"].astype(bool)
    tokens = inputs["token_ids"]
    masks = {"all": real, "[CLS]": real & (tokens == CLS_ID), "[SEP]": real & (tokens == SEP_ID)}
    masks["other"] = real & ~masks["[CLS]"] & ~masks["[SEP]"]
    metrics["iterations"] = {name: float(outputs["iterations"][m].mean()) for name, m in masks.items()}
    return metrics


def finetune(task_name, data_dir, init, output_dir, learning_rate=3e-5, batch_size=32, epochs=3, seed=12345,
             ponder_cost_weight=0.0, max_seq_length=None, vocab=None, max_train_examples=None, progress=True,
             strategy="auto", precision="auto", jit_compile=None, halting=None, max_iterations=None,
             halting_bias_initializer=None):
    """Fine-tunes, keeps the best dev epoch, exports a SavedModel; returns the results dict (also results.json).

    init: a pre-training run, an export, or a public ALBERT checkpoint (Hugging Face, TF1, keras-hub).
    halting, max_iterations: "act" or "none" and the depth cap; default: `init`'s own (a public
    checkpoint's: "none" at its depth). ACT over a fixed-depth model starts a new halting unit,
    its bias at `halting_bias_initializer` (default: the backbone's, 0).
    max_seq_length: default 128, or the model's `max_sequence_length` if shorter (the demo's: 64).
    strategy, precision, jit_compile: as for pre-training (`albert_act.distribution.resolve`);
    batch_size is the global batch, divided among the replicas.
    """
    _check_settings(batch_size, epochs, learning_rate)
    task = load_task(task_name, data_dir)
    strategy, kind, precision, jit_compile = distribution.resolve(strategy, precision, jit_compile)
    checks.divisible("batch_size", batch_size, "replicas", strategy.num_replicas_in_sync)
    bias = {} if halting_bias_initializer is None else {"halting_bias_initializer": halting_bias_initializer}
    source = Source.open(init)
    tokenizer = source.tokenizer(vocab)
    with strategy.scope():  # new_weights: a new halting unit; the pooler of a checkpoint without one
        backbone, new_weights = source.backbone(halting=halting, max_iterations=max_iterations, **bias)
    _check_halting_bias(bias, new_weights, init)
    max_seq_length = max_seq_length or min(128, backbone.max_sequence_length)
    if max_seq_length > backbone.max_sequence_length:
        raise ValueError(f"max_seq_length {max_seq_length} exceeds the model's {backbone.max_sequence_length}")
    data = _Data(task, task.train[:max_train_examples] if max_train_examples else task.train, tokenizer,
                 max_seq_length)
    steps_per_epoch = max(1, len(data.train) // batch_size)
    model, steps = _classifier(backbone, task, strategy, seed, learning_rate, steps_per_epoch * epochs,
                               ponder_cost_weight, jit_compile)
    _write_setup(output_dir, task, data, model, tokenizer)
    main_metric = next(iter(glue_metrics.TASK_METRICS.get(task.metric_task, ("accuracy",))))
    initial = evaluate(task, steps, data.dev_inputs, data.dev_targets)
    if progress:
        print(f"{init}: {backbone.halting}, {'at most ' if backbone.halting == 'act' else ''}{backbone.max_iterations} "
              f"iterations of {'a shared layer' if backbone.share_weights else 'unshared layers'}")
        if new_weights:
            print(f"new (at their initializer, not in {init}): {', '.join(sorted({p.rsplit('/', 1)[0] for p in new_weights}))}")
        print(f"{task.name}: {len(data.train)} training examples, {len(task.dev)} dev; {steps_per_epoch} updates of "
              f"{batch_size} per epoch on {kind} x{strategy.num_replicas_in_sync}, {precision}"
              f"{', XLA' if jit_compile else ''}")
        _print_notes(task, data)
        print(f"before training: dev {main_metric} {initial[main_metric]:.4f}")
    history, best = _train_epochs(steps, model, task, data, epochs, batch_size, seed, main_metric,
                                  os.path.join(output_dir, artifacts.WEIGHTS), progress)
    export_dir = savedmodel.export_classifier(model, os.path.join(output_dir, artifacts.EXPORT, "1"),
                                              tokenizer.model_proto, task.name, task.labels, data.pair,
                                              max_seq_length, overwrite=True)
    result = {"task": task.name, "init": init, "learning_rate": learning_rate, "batch_size": batch_size,
              "strategy": f"{kind} x{strategy.num_replicas_in_sync}", "precision": precision, "jit_compile": jit_compile,
              "epochs": epochs, "seed": seed, "ponder_cost_weight": steps.ponder_cost_weight, "halting": backbone.halting,
              "max_iterations": backbone.max_iterations,
              "train_examples": len(data.train), "dev_examples": len(task.dev), "truncated_train_examples": data.truncated,
              "metric": main_metric, "initial": initial, "history": history, "best": best, "export": export_dir}
    artifacts.write_json(os.path.join(output_dir, artifacts.RESULTS), result)
    return result


class _Data:
    """A task's training examples (cut to `max_train_examples`) and dev set, encoded for the model."""

    def __init__(self, task, train, tokenizer, max_seq_length):
        self.train, self.max_seq_length = train, max_seq_length
        self.train_inputs, self.truncated = encode(tokenizer, train, max_seq_length)
        self.dev_inputs, _ = encode(tokenizer, task.dev, max_seq_length)
        self.train_targets, self.dev_targets = _targets(task, train), _targets(task, task.dev)
        self.pair = bool(train) and train[0].text_b is not None


def _classifier(backbone, task, strategy, seed, learning_rate, total_steps, ponder_cost_weight, jit_compile):
    """(AlbertActClassifier over `backbone`, its ClassifierSteps with AdamW and a warm-up of 10%)."""
    with strategy.scope():
        keras.utils.set_random_seed(seed)  # after encoding: the head's initial weights depend on the seed alone
        model = AlbertActClassifier(backbone, num_classes=len(task.labels) or 1)
        optimizer = keras.optimizers.AdamW(WarmupLinearDecay(learning_rate, int(0.1 * total_steps), total_steps),
                                           weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0)
        optimizer.exclude_from_weight_decay(var_names=["layer_norm", "bias"])
    return model, ClassifierSteps(model, optimizer, strategy, not task.labels, ponder_cost_weight, jit_compile)


def _write_setup(output_dir, task, data, model, tokenizer):
    """classifier.json and the vocabulary: what loads the fine-tuned model back."""
    os.makedirs(output_dir, exist_ok=True)
    artifacts.write_json(os.path.join(output_dir, artifacts.FINETUNED_INFO), {
        "kind": "classifier", "task": task.name, "labels": list(task.labels), "pair": data.pair,
        "max_seq_length": data.max_seq_length, "num_classes": model.num_classes, "dropout": model.dropout,
        "backbone": model.backbone.get_config()})
    outputs.write_file(os.path.join(output_dir, artifacts.VOCAB), tokenizer.model_proto)


def _print_notes(task, data):
    for path, lines, count in task.skipped:
        print(f"note: {path}: {count} malformed row(s) skipped (lines {', '.join(map(str, lines))}"
              f"{', ...' if count > len(lines) else ''})")
    if data.truncated:
        print(f"note: {data.truncated} of {len(data.train)} training examples ({data.truncated / len(data.train):.0%}) "
              f"are longer than {data.max_seq_length} pieces and were cut (longest segment first)")


def _train_epochs(steps, model, task, data, epochs, batch_size, seed, main_metric, best_path, progress):
    """(history, best): the dev metrics after each epoch; the best epoch's weights are saved at
    `best_path` and left in `model`."""
    rng, history, best = np.random.default_rng(seed), [], None
    steps_per_epoch = max(1, len(data.train) // batch_size)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(data.train))
        if progress:
            print(f"epoch {epoch}/{epochs}")
        bar = cli.progress_bar(steps_per_epoch, ["loss"]) if progress else None
        for step in range(steps_per_epoch):
            index = order[step * batch_size : (step + 1) * batch_size]
            loss = steps.train_step({k: v[index] for k, v in data.train_inputs.items()}, data.train_targets[index])
            if bar:
                bar.update(step + 1, [("loss", float(loss))])
        metrics = evaluate(task, steps, data.dev_inputs, data.dev_targets)
        history.append({"epoch": epoch, **metrics})
        if progress:
            print(f"epoch {epoch}: dev {main_metric} {metrics[main_metric]:.4f}, "
                  f"mean iterations {metrics['iterations']['all']:.2f}")
        if best is None or metrics[main_metric] > best[main_metric]:
            best = {"epoch": epoch, **metrics}
            _save_weights(model, best_path)
    model.load_weights(best_path)
    return history, best


def _save_weights(model, path):
    """model.save_weights, whole (`outputs.write_with`: the previous best stays if this fails), after
    checking the disk has room: HDF5 crashes the interpreter at exit when a write fills the disk."""
    needed = sum(int(np.prod(v.shape)) * np.dtype(v.dtype).itemsize for v in model.weights) + 2**20
    outputs.check_free_space(path, needed)
    outputs.write_with(path, model.save_weights)


def grid_search(task_name, data_dir, init, output_dir, seeds=(12345,), grid=PAPER_GRID, **kwargs):
    """Every combination of the grid and seeds; the best dev score's export/ is copied to <output_dir>/export."""
    runs = []
    for lr, batch, epochs, seed in itertools.product(grid["learning_rate"], grid["batch_size"], grid["epochs"], seeds):
        run_dir = os.path.join(output_dir, artifacts.GRID, f"lr{lr}_bs{batch}_ep{epochs}_seed{seed}")
        runs.append(finetune(task_name, data_dir, init, run_dir, lr, batch, epochs, seed, **kwargs))
    best = max(runs, key=lambda r: r["best"][r["metric"]])
    export_root = os.path.join(output_dir, artifacts.EXPORT)
    if os.path.exists(export_root):
        shutil.rmtree(export_root)
    shutil.copytree(os.path.dirname(best["export"]), export_root)
    summary = {"best": {**best, "export": os.path.join(export_root, os.path.basename(best["export"]))}, "runs": runs}
    artifacts.write_json(os.path.join(output_dir, artifacts.RESULTS), summary)
    return summary


def format_results(result):
    """A readable table of one run's dev metrics per epoch, with mean iterations."""
    metric_names = [k for k in result["best"] if k not in ("epoch", "iterations")]
    lines = ["| epoch | " + " | ".join(metric_names) + " | iterations (all / [CLS]) |",
             "|---" * (len(metric_names) + 2) + "|"]
    for row in [{"epoch": "initial", **result["initial"]}] + result["history"]:
        cells = " | ".join(f"{row[m]:.4f}" for m in metric_names)
        lines.append(f"| {row['epoch']} | {cells} | {row['iterations']['all']:.2f} / {row['iterations']['[CLS]']:.2f} |")
    lines.append(f"\nbest: epoch {result['best']['epoch']}, {result['metric']} {result['best'][result['metric']]:.4f}")
    return "\n".join(lines)


