"""Fine-tuning on GLUE and probing tasks, the job: `finetune(config)` checks (`preflight`), trains
with AdamW (the loss of `albert_act.train.losses`), keeps the best dev epoch, exports a raw-text
SavedModel and saves its config; `grid_search(config)` runs the paper's grid, one `finetune` per
point (`FinetuneConfig.grid_points`). The parts live beside it: `finetuning_config` (settings),
`finetuning_data` (task, encoding), `finetuning_steps` (the model and its steps). What a
fine-tuning dir holds: `albert_act.base.artifacts`.
"""

import dataclasses
import json
import os
import shutil

import numpy as np

from albert_act import distribution
from albert_act.base import artifacts, bars, checks, outputs, text_files
from albert_act.io.source import HALTING_UNIT, Source
from albert_act.serve import savedmodel
from albert_act.train import glue_metrics
from albert_act.train.finetuning_config import FinetuneConfig  # noqa: F401  (the API)
from albert_act.train.finetuning_data import EncodedTask, load_task
from albert_act.train.finetuning_steps import build_classifier, evaluate, majority


def preflight(config):
    """The checks that read files, before any compute: the output dir may be written, the task's
    files read, and --init holds a model. Returns (task, source)."""
    artifacts.check_finetuning_target(config.output_dir, config.overwrite, config.grid)
    task = load_task(config.task, config.data_dir)
    return task, Source.open(config.init)


def finetune(config, progress=True):
    """Fine-tunes, keeps the best dev epoch, exports a SavedModel; returns the results dict (also
    results.json; the config is in finetune_config.json beside it).

    `config.init`: a pre-training run, an export, or a public ALBERT checkpoint (Hugging Face, TF1,
    keras-hub). halting, max_iterations: default `init`'s own (a public checkpoint's: "none" at its
    depth); ACT over a fixed-depth model starts a new halting unit, its bias at
    `halting_bias_initializer` (default: the backbone's, 0). batch_size is the global batch,
    divided among the replicas.
    """
    task, source = preflight(config)
    strategy, kind, precision, jit_compile = distribution.resolve(config.strategy, config.precision, config.jit_compile)
    checks.divisible("batch_size", config.batch_size, "replicas", strategy.num_replicas_in_sync)
    bias = {} if config.halting_bias_initializer is None else {"halting_bias_initializer": config.halting_bias_initializer}
    tokenizer = source.tokenizer(config.vocab)
    static = source.xla_settings(jit_compile)
    with strategy.scope():  # new_weights: a new halting unit; the pooler of a checkpoint without one
        backbone, new_weights = source.backbone(halting=config.halting, max_iterations=config.max_iterations,
                                                **bias, **static)
    _check_halting_bias(bias, new_weights, config.init)
    max_seq_length = config.max_seq_length or min(128, backbone.max_sequence_length)
    if max_seq_length > backbone.max_sequence_length:
        raise ValueError(f"max_seq_length {max_seq_length} exceeds the model's {backbone.max_sequence_length}")
    train = training_subset(task, config.max_train_examples)
    data = EncodedTask(task, train, tokenizer, max_seq_length)
    steps_per_epoch = max(1, len(data.train) // config.batch_size)
    model, steps = build_classifier(backbone, task, strategy, config.seed, config.learning_rate,
                                    steps_per_epoch * config.epochs, config.ponder_cost_weight, jit_compile)
    shards = {artifacts.TRAIN_SHARDS: source.train_shards} if source.train_shards else {}  # (its records: not held out)
    _write_setup(config, task, data, model, tokenizer, shards)
    main_metric = next(iter(glue_metrics.TASK_METRICS.get(task.metric_task, ("accuracy",))))
    initial = evaluate(task, steps, data.dev_inputs, data.dev_targets)
    if progress:
        _print_start(config, backbone, new_weights, task, data, f"{kind} x{strategy.num_replicas_in_sync}, {precision}"
                     f"{', XLA' if jit_compile else ''}", f"before training: dev {main_metric} {initial[main_metric]:.4f}",
                     source.info.get("task", "another task") if source.info.get("kind") == "classifier" else None)
    history, best = _train_epochs(steps, model, task, data, config, main_metric,
                                  os.path.join(config.output_dir, artifacts.WEIGHTS), progress)
    export_dir = savedmodel.export_classifier(model, os.path.join(config.output_dir, artifacts.EXPORT, "1"),
                                              tokenizer.model_proto, task.name, task.labels, data.pair,
                                              max_seq_length, overwrite=True, record=shards)
    result = {"task": task.name, "init": config.init, "learning_rate": config.learning_rate,
              "batch_size": config.batch_size, "strategy": f"{kind} x{strategy.num_replicas_in_sync}",
              "precision": precision, "jit_compile": jit_compile, "epochs": config.epochs, "seed": config.seed,
              "ponder_cost_weight": steps.ponder_cost_weight, "halting": backbone.halting,
              "max_iterations": backbone.max_iterations, "train_examples": len(data.train),
              "dev_examples": len(task.dev), "truncated_train_examples": data.truncated,
              "metric": main_metric, "majority": majority(task, data.dev_targets), "initial": initial,
              "history": history, "best": best, "export": export_dir, "data": data_key(task)}
    artifacts.write_json(os.path.join(config.output_dir, artifacts.RESULTS), result)
    return result


def _check_halting_bias(bias, new_weights, init):
    if bias and not any(p.startswith(HALTING_UNIT) for p in new_weights):
        raise ValueError(f"--halting_bias sets a new halting unit's start, and {init} has its own halting unit "
                         f"(or --halting none has none): drop --halting_bias")


def _write_setup(config, task, data, model, tokenizer, shards):
    """classifier.json (with `shards`, the fingerprints of the pre-training's training shards) and the vocabulary
    (what loads the fine-tuned model back), and the config (what repeats the run), after `clear_earlier_run`."""
    text_files.makedirs(config.output_dir)
    clear_earlier_run(config.output_dir)
    artifacts.write_json(os.path.join(config.output_dir, artifacts.FINETUNE_CONFIG), dataclasses.asdict(config))
    artifacts.write_json(os.path.join(config.output_dir, artifacts.FINETUNED_INFO), {
        "kind": "classifier", "task": task.name, "labels": list(task.labels), "pair": data.pair,
        "max_seq_length": data.max_seq_length, "num_classes": model.num_classes, "dropout": model.dropout,
        "backbone": model.backbone.get_config(), **shards})
    outputs.write_file(os.path.join(config.output_dir, artifacts.VOCAB), tokenizer.model_proto)


def clear_earlier_run(output_dir):
    """An earlier run's results, weights, export and a stopped grid's points in `output_dir` (checked replaceable)
    are removed, results first (the folder stops saying it finished): a stop before this run's first epoch would
    pair them with this run's settings, and its stop line call them this run's."""
    for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.EXPORT, artifacts.GRID):
        text_files.remove_any(os.path.join(output_dir, name))


def _print_start(config, backbone, new_weights, task, data, where, initial, tuned_for=None):
    init, batch_size = config.init, config.batch_size
    print(f"{init}: {backbone.halting}, {'at most ' if backbone.halting == 'act' else ''}{backbone.max_iterations} "
          f"iterations of {'a shared layer' if backbone.share_weights else 'unshared layers'}")
    if tuned_for:  # (tuned_for: the task of an --init that is a fine-tuning, whose classifier head is not taken)
        print(f"note: {init} is a fine-tuning for {tuned_for}: its encoder is taken, fine-tuned as it is; its classifier "
              f"head is not (a new one is trained for {task.name})")
    if new_weights:
        print(f"new (at their initializer, not in {init}): {', '.join(sorted({p.rsplit('/', 1)[0] for p in new_weights}))}")
    print(f"{task.name}: {len(data.train)} training examples, {len(task.dev)} dev; "
          f"{updates_per_epoch(len(data.train), batch_size)} per epoch on {where}")
    _print_notes(task, data)
    print(initial)


def training_subset(task, max_train_examples):
    """The task's first `max_train_examples` training examples (all without it); ValueError where
    they hold one label only, of a task that has more (a file sorted by label): the model would learn
    that answer and nothing else."""
    train = task.train[:max_train_examples] if max_train_examples else task.train
    labels = {e.label for e in train}
    if len(train) == 1 and len({e.label for e in task.train}) > 1:
        raise ValueError(f"--max_train_examples 1 keeps one training example: the model would learn its label "
                         f"{train[0].label!r} and nothing else; give 2 or more (the task has "
                         f"{len({e.label for e in task.train})} labels)")
    if len(labels) == 1 and len({e.label for e in task.train}) > 1:
        raise ValueError(f"the first {len(train)} training examples (--max_train_examples {max_train_examples}) all have "
                         f"the label {train[0].label!r}: the model would learn that answer and nothing else; the "
                         "training file is in label order there: give a larger --max_train_examples")
    return train


def updates_per_epoch(examples, batch_size):
    """'N updates of B', or the one update of all examples where they are fewer than a batch."""
    if examples < batch_size:
        return f"1 update of all {examples} (fewer than --batch_size {batch_size})"
    return f"{examples // batch_size} updates of {batch_size}"


def print_skipped(task):
    """A note for each of the task's files with rows that were skipped (malformed or blank), with their lines."""
    for path, lines, count in task.skipped:
        print(f"note: {path}: {count} malformed or blank row(s) skipped (lines {', '.join(map(str, lines))}"
              f"{', ...' if count > len(lines) else ''})")


def _print_notes(task, data):
    print_skipped(task)
    memorised = task.dev_in_train(data.train)  # of the examples trained on (--max_train_examples cuts them)
    if memorised:
        print(f"note: {memorised} of {len(task.dev)} dev examples are also training examples (the same text): "
              "the dev numbers on them measure memory")
    if data.truncated:
        print(f"note: {data.truncated} of {len(data.train)} training examples ({data.truncated / len(data.train):.0%}) "
              f"are longer than {data.max_seq_length} pieces and were cut (longest segment first)")


def _train_epochs(steps, model, task, data, config, main_metric, best_path, progress):
    """(history, best): the dev metrics after each epoch; the best epoch's weights are saved at
    `best_path` and left in `model`."""
    epochs, batch_size = config.epochs, config.batch_size
    rng, history, best = np.random.default_rng(config.seed), [], None
    steps_per_epoch = max(1, len(data.train) // batch_size)
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(data.train))
        if progress:
            print(f"epoch {epoch}/{epochs}")
        bar = bars.progress_bar(steps_per_epoch, ["loss"]) if progress else None
        for step in range(steps_per_epoch):
            index = order[step * batch_size : (step + 1) * batch_size]
            loss = steps.train_step({k: v[index] for k, v in data.train_inputs.items()}, data.train_targets[index])
            if not np.isfinite(float(loss)):  # a diverged model is no result (a best epoch of NaN weights)
                raise FloatingPointError(f"non-finite loss at update {step + 1} of epoch {epoch} (learning rate "
                                         f"{config.learning_rate}); stopped without saving this epoch: lower "
                                         "--learning_rate")
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
    checks.check_free_space(path, needed)
    outputs.write_with(path, model.save_weights)


def grid_search(config, grid=None, progress=True):
    """`finetune` at every point of the grid (default: the paper's) and seed; the best dev score's
    export/ is copied to <output_dir>/export. A point finished earlier with the same settings (a grid
    stopped part way, run again) is kept, not run again, unless `config.overwrite`."""
    points = config.grid_points() if grid is None else config.grid_points(grid)
    runs, data = [], data_key(load_task(config.task, config.data_dir))
    # Run anew, the dir no longer says a grid finished there: stopped, the command without --overwrite goes on
    results = os.path.join(config.output_dir, artifacts.RESULTS)
    repair = None if config.overwrite else grid_repair(config.output_dir)  # finished, its export or results damaged
    if config.overwrite and os.path.exists(results):
        os.remove(results)
    elif progress and repair:
        print(f"note: {repair}: the finished points are kept, and the best one is exported again")
    for number, point in enumerate(points, 1):
        earlier = None if config.overwrite else finished_point(point, data)
        damaged = earlier and damaged_file(point.output_dir, earlier)
        if progress:
            print(f"\ngrid point {number} of {len(points)}: learning rate {point.learning_rate}, batch size "
                  f"{point.batch_size}, {point.epochs} epochs, seed {point.seed} ({point.output_dir})"
                  + (f": finished earlier, but {damaged}: run again" if damaged else
                     ": finished earlier, kept" if earlier else ""))
        runs.append(earlier if earlier and not damaged else finetune(point, progress))
    best = max(runs, key=lambda r: r["best"][r["metric"]])
    export_root = os.path.join(config.output_dir, artifacts.EXPORT)
    if os.path.exists(export_root):
        shutil.rmtree(export_root)
    shutil.copytree(os.path.dirname(best["export"]), export_root)
    summary = {"best": {**best, "export": os.path.join(export_root, os.path.basename(best["export"]))}, "runs": runs}
    artifacts.write_json(os.path.join(config.output_dir, artifacts.FINETUNE_CONFIG), dataclasses.asdict(config))
    artifacts.write_json(os.path.join(config.output_dir, artifacts.RESULTS), summary)  # last: the grid has finished
    return summary


def grid_repair(output_dir):
    """Why the finished grid in `output_dir` is not whole, for `grid_search` to make it whole from its points: its
    results.json does not read, or the export it names is missing or damaged; None where it is whole (or none)."""
    results = os.path.join(output_dir, artifacts.RESULTS)
    if not os.path.exists(results):
        return None
    try:
        best = artifacts.read_json(results).get("best")
    except (ValueError, OSError, AttributeError) as error:  # (AttributeError: JSON that is no object)
        return f"{results} does not read ({error})"
    missing = artifacts.missing_export(output_dir)
    if missing:
        return f"{results} names the grid's export {missing}, which is missing"
    from albert_act.io import exports

    damaged = isinstance(best, dict) and isinstance(best.get("export"), str) and exports.damaged_file(best["export"])
    return f"the grid's export {best['export']}: {damaged}" if damaged else None


def finished_point(point, data=None):
    """The results of a grid point that finished earlier with `point`'s settings (its results.json, beside a
    finetune_config.json equal to `point` and its export) and, given, on the data of `data_key` `data`; or None."""
    earlier = _finished(point)
    if earlier is None or _differences(point, *earlier, data):
        return None
    return earlier[1] if os.path.isdir(str(earlier[1].get("export"))) else None


def damaged_file(output_dir, result):
    """The file of a finished fine-tuning in `output_dir` (`result`: its results) that does not read whole, said
    with its state, or None: its best epoch's weights, its export's weights and graph."""
    import h5py

    from albert_act.io import exports

    def read(name, item):  # each array read through: a cut file fails here, or as it opens
        if isinstance(item, h5py.Dataset):
            item[()]

    weights = os.path.join(output_dir, artifacts.WEIGHTS)
    try:
        with h5py.File(weights, "r") as f:
            f.visititems(read)
    except FileNotFoundError:
        return f"{weights} is missing"
    except Exception:  # noqa: BLE001 (h5py raises OSError, KeyError, RuntimeError on a cut file)
        return f"{weights} does not read whole"
    return exports.damaged_file(result["export"])


def check_grid_settings(config):
    """ValueError for a grid (without `config.overwrite`) whose folder holds a whole finished grid, or points
    finished with other settings (another --max_seq_length, say): running it would replace them; the same
    settings go on from them."""
    if os.path.exists(os.path.join(config.output_dir, artifacts.RESULTS)) and grid_repair(config.output_dir) is None:
        raise ValueError(f"--output_dir {config.output_dir} holds a finished fine-tuning ({artifacts.RESULTS}); pass "
                         "--overwrite to replace it, or choose another --output_dir")
    data = data_key(load_task(config.task, config.data_dir))
    changed = [(point, how) for point in config.grid_points() for how in [settings_changed(point, data)] if how]
    if changed:
        point, how = changed[0]
        raise ValueError(f"--output_dir {config.output_dir} holds {len(changed)} grid point(s) finished with other "
                         f"settings ({how}, in {point.output_dir}), which this grid would replace: pass --overwrite to "
                         "run the grid anew, or choose another --output_dir")


def settings_changed(point, data=None):
    """How the settings of a grid point that finished earlier in `point`'s folder differ from `point`'s
    ("max_train_examples 60, now 100"), or its data from `data` (`data_key`); None: none finished there, or with
    the same settings and data."""
    earlier = _finished(point)
    return ("; ".join(_differences(point, *earlier, data)) or None) if earlier else None


def _finished(point):
    """(its finetune_config.json, its results.json) of a grid point finished in `point`'s folder, or None: not
    there, or cut by a stop. A point whose grid folder was moved is read as if written there."""
    try:
        saved = artifacts.read_json(os.path.join(point.output_dir, artifacts.FINETUNE_CONFIG))
        result = artifacts.read_json(os.path.join(point.output_dir, artifacts.RESULTS))
    except (OSError, ValueError):
        return None
    old = saved.get("output_dir")  # the grid's folder moved (or renamed) with its points: the same point
    if isinstance(old, str) and old != point.output_dir and os.path.basename(old) == os.path.basename(point.output_dir):
        export = result.get("export")
        if isinstance(export, str) and export.startswith(os.path.join(old, "")):
            result = {**result, "export": os.path.join(point.output_dir, export[len(os.path.join(old, "")):])}
        saved = {**saved, "output_dir": point.output_dir}
    return saved, result


def _differences(point, saved, result, data=None):
    """[what differs]: `point`'s settings from those `saved`, and (given) the task's `data` from the results'."""
    now = json.loads(json.dumps(dataclasses.asdict(point)))
    changed = [f"{name} {saved.get(name)!r}, now {value!r}" for name, value in now.items() if saved.get(name) != value]
    changed += [f"{name} {saved[name]!r}, now no such setting" for name in saved if name not in now]
    if data is not None and "data" not in result:  # finished by an earlier albert-act: what it trained on is unknown
        changed.append(f"its results hold no fingerprint of the task's examples in {point.data_dir} (an earlier "
                       "albert-act's), so they cannot be told the same")
    elif data is not None and result["data"] != data:
        changed.append(f"the task's examples in {point.data_dir}, which changed since")
    return changed


def data_key(task):
    """SHA-256 of a task's training and dev examples (texts and labels), kept in a run's results: a grid point
    finished on other data is no point of the grid run now."""
    import hashlib

    rows = [[e.text_a, e.text_b, e.label] for e in task.train + task.dev]
    return hashlib.sha256(json.dumps(rows).encode("utf-8")).hexdigest()


def format_results(result):
    """A readable table of one run's dev metrics per epoch (accuracy with its 95% interval), with
    mean iterations, and the majority class's accuracy beside it."""
    metric_names = [k for k in result["best"] if k not in ("epoch", "iterations") and not k.endswith("_interval")]
    lines = ["| epoch | " + " | ".join(metric_names) + " | iterations (all / [CLS]) |",
             "|---" * (len(metric_names) + 2) + "|"]
    for row in [{"epoch": "initial", **result["initial"]}] + result["history"]:
        cells = " | ".join(_cell(row, m) for m in metric_names)
        lines.append(f"| {row['epoch']} | {cells} | {row['iterations']['all']:.2f} / {row['iterations']['[CLS]']:.2f} |")
    best = result["best"]
    lines.append(f"\nbest: epoch {best['epoch']}, {result['metric']} {_cell(best, result['metric'])}")
    if result.get("majority"):
        lines.append(f"majority class (always {result['majority']['label']!r}): accuracy "
                     f"{result['majority']['accuracy']:.4f}")
    return "\n".join(lines)


def _cell(row, metric):
    interval = row.get(f"{metric}_interval")
    return f"{row[metric]:.4f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
