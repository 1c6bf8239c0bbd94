"""Pre-training: data -> forward -> loss -> accumulated step -> checkpoint, under any tf.distribute strategy.

Read top to bottom: `PretrainConfig` (every setting, saved as config.json in the
model dir), `check_inputs` (bad input fails before any compute), `Pretrainer`
(model, LAMB, the accumulating train step, evaluation, checkpoints, TensorBoard)
and `run_pretraining` (the whole job).
"""

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from albert_act import artifacts, distribution
from pipelines import checks, cli, outputs
from albert_act.analysis import confidence, token_types
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model import loading
from albert_act.model.halting import TRAINING_EXECUTIONS
from albert_act.model.presets import get_preset
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from albert_act.train.lamb import Lamb
from albert_act.train.learning_rate import WarmupLinearDecay
from albert_act.train.losses import loss_sums, pretraining_loss
from pipelines import text_files
from pipelines.pretraining_dataset import (check_records, make_pretraining_dataset, parse_share, record_files,
                                          record_shapes, serialized_batches)
from pipelines.tokenizer import Tokenizer

# Preset update counts that scale with --steps when only --steps is given.
SCALED_WITH_STEPS = ("warmup_steps", "ponder_warmup_start", "ponder_warmup_steps")
PER_SEQUENCE = ("depth", "accuracy")  # evaluation outputs kept per held-out sequence (gathered, not summed)
AUTO = "auto"  # --tau auto: tau x ponder cost = AUTO_SHARE x (MLM + SOP) when the ponder cost switches on
AUTO_SHARE = 0.1
# Scalar sums of a step (see pretraining_loss.loss_sums); "depth" (token_types.depth_sums) comes beside them.
SUM_KEYS = ("mlm_loss_sum", "mlm_correct", "mlm_weight", "sop_loss_sum", "sop_correct", "ponder_cost_sum", "examples",
            "overflows")
# What --init_from takes from its checkpoint: the sizes (the weights' shapes) and the layers' constants.
# The depth cap, the halting and tau stay the preset's (a fixed-depth ALBERT gets ACT: docs/design.md).
INIT_SETTINGS = ("vocabulary_size", "embedding_dim", "hidden_dim", "num_heads", "intermediate_dim",
                 "max_sequence_length", "num_segments", "layer_norm_epsilon", "initializer_range", "gelu_approximate")
# Weights a warm start may lack: the new halting unit, and heads the checkpoint does not have.
INIT_FRESH = (loading.HALTING_UNIT, "pooler/", "sop_head/", "masked_lm_head/")
# Settings that may change between a run and its resumption; anything else must match.
RESUMABLE_CHANGES = {"train_files", "eval_files", "checkpoint_every", "keep_checkpoints", "log_every",
                     "eval_batches", "strategy", "export_dir", "overwrite_export", "vocab",
                     "model_dir"}  # the same run, copied, moved or written with a trailing slash


@dataclasses.dataclass
class PretrainConfig:
    """Everything a pre-training run depends on. `resolved()` fills the defaults that depend on others."""

    train_files: list
    eval_files: list
    model_dir: str
    preset: str = "demo"
    backbone_overrides: dict = dataclasses.field(default_factory=dict)
    halting: str = "act"
    share_weights: bool = True
    ponder_cost_weight: float | str | None = None  # None: the preset's tau; "auto": calibrated, see below
    # Ponder-cost warm-up: tau is 0 before update `ponder_warmup_start`, then ramps linearly to
    # its full value over `ponder_warmup_steps` updates (0, 0: the paper's constant tau).
    # Settings left at None take the preset's value (`Preset.training`).
    ponder_warmup_start: int | None = None
    ponder_warmup_steps: int | None = None
    execution: str | None = None  # the ACT loop in training: "static", "while", "gather" or "bucket" (halting.py)
    jit_compile: bool | None = None  # XLA-compile every per-replica step (always on TPU; ~1.8x faster on a CPU)
    steps: int | None = None
    warmup_steps: int | None = None
    learning_rate: float | None = None
    weight_decay_rate: float = 0.01
    clip_norm: float = 1.0
    global_batch_size: int | None = None
    micro_batch_size: int | None = None  # per replica
    strategy: str = "auto"
    precision: str = "auto"  # bf16 on TPU, float32 elsewhere
    seed: int = 12345
    deterministic: bool = False
    checkpoint_every: int = 100
    keep_checkpoints: int = 5
    log_every: int = 10
    eval_batches: int | None = None  # None: the whole eval shard
    export_dir: str | None = None
    # Replace a SavedModel at export_dir that another run wrote (this run's own earlier export is
    # always replaced: a re-run of the same command re-exports).
    overwrite_export: bool = False
    vocab: str | None = None  # SentencePiece model of the data; copied to <model_dir>/vocab.model
    # Warm start: a pre-training run, an export or a public ALBERT checkpoint whose weights the model
    # starts from (sizes from it, see INIT_SETTINGS); not read again when the run resumes.
    init_from: str | None = None

    def resolved(self):
        preset = get_preset(self.preset)
        _check_overrides(self.backbone_overrides, preset.backbone)
        config = dataclasses.replace(self)
        if config.init_from:
            source = loading.source_info(config.init_from)["backbone"]
            sizes = {k: source[k] for k in INIT_SETTINGS if k in source}
            clash = sorted(k for k in self.backbone_overrides if k in sizes and self.backbone_overrides[k] != sizes[k])
            if clash:
                raise ValueError(f"--override {clash[0]}={self.backbone_overrides[clash[0]]}: {self.init_from} has "
                                 f"{clash[0]}={sizes[clash[0]]}, which the weights fix")
            config.backbone_overrides = {**sizes, **self.backbone_overrides}
            if config.vocab is None:
                config.vocab = artifacts.find_vocab(config.init_from)
        if config.ponder_cost_weight is None:
            config.ponder_cost_weight = preset.ponder_cost_weight
        given_steps = config.steps
        for name, value in preset.training.items():
            if getattr(config, name) is None:
                setattr(config, name, value)
        if self.execution is None and config.execution == "gather" and config.jit_compile:
            config.execution = "static"  # XLA asked for: the preset's gather has dynamic shapes
        if given_steps is not None:  # the preset's update counts scale with the updates asked for
            scale = given_steps / preset.training["steps"]
            for name in SCALED_WITH_STEPS:
                if getattr(self, name) is None:
                    setattr(config, name, int(round(preset.training[name] * scale)))
        return config

    def backbone_config(self):
        return {**get_preset(self.preset).backbone, **self.backbone_overrides,
                "halting": self.halting, "share_weights": self.share_weights, "execution": self.execution}


def _check_overrides(overrides, preset_backbone):
    """--override keys must be backbone settings, with values of the preset's type."""
    import inspect

    known = sorted(set(inspect.signature(AlbertActBackbone.__init__).parameters) - {"self", "kwargs", "dtype"})
    for key, value in overrides.items():
        if key not in known:
            raise ValueError(f"--override {key}: not a backbone setting; known: {', '.join(known)}")
        like = preset_backbone.get(key)
        if like is None:
            continue
        kinds = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}.get(type(like), (type(like),))
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            name = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(type(like), type(like).__name__)
            raise ValueError(f"--override {key}={value}: expected {name} (the preset has {like!r})")


def check_inputs(config, replicas, sample_records=2000):
    """Raises ValueError, before any compute, for the problems a user can fix."""
    for name in ("steps", "global_batch_size", "micro_batch_size", "checkpoint_every", "log_every"):
        if getattr(config, name) < 1:
            raise ValueError(f"{name} must be >= 1, got {getattr(config, name)}")
    if not 0 <= config.warmup_steps <= config.steps:
        raise ValueError(f"warmup_steps must be in [0, steps={config.steps}], got {config.warmup_steps}")
    tau = config.ponder_cost_weight
    if tau != AUTO and not (isinstance(tau, (int, float)) and tau >= 0):
        raise ValueError(f"ponder_cost_weight (--tau) must be a number >= 0 or {AUTO!r}, got {tau!r}")
    for name in ("ponder_warmup_start", "ponder_warmup_steps"):
        if getattr(config, name) < 0:
            raise ValueError(f"{name} must be >= 0, got {getattr(config, name)}")
    if config.init_from and config.vocab:
        theirs = artifacts.find_vocab(config.init_from)
        if theirs and text_files.read_bytes(theirs) != text_files.read_bytes(config.vocab):
            raise ValueError(f"the data's vocabulary {config.vocab} is not {theirs}, the one {config.init_from} was "
                             "trained with: make the TFRecords with it (python -m pipelines.create_pretraining_data "
                             f"--vocab {theirs}) and pass --train_files/--eval_files")
    if config.vocab:
        pieces = Tokenizer.from_file(config.vocab).vocabulary_size
        rows = config.backbone_config()["vocabulary_size"]
        if pieces != rows:
            raise ValueError(f"{config.vocab} has {pieces} pieces but the model's vocabulary_size is {rows}; "
                             f"make the data with a {rows}-piece vocabulary, or pass --override vocabulary_size={pieces}")
    if config.export_dir and not config.vocab:
        raise ValueError("export_dir needs vocab (the SentencePiece model of the data): the export tokenizes raw "
                         "text; pass --vocab, or --no_export")
    if config.export_dir:
        _check_export_dir(config)
    if config.execution not in TRAINING_EXECUTIONS:
        raise ValueError(f"execution must be one of {list(TRAINING_EXECUTIONS)} in training, got {config.execution!r}")
    if config.execution == "gather" and config.jit_compile:
        raise ValueError("--execution gather has dynamic shapes, which XLA does not compile: pass --no-jit_compile, "
                         "or --execution bucket (static widths) for XLA")
    checks.one_of("precision", config.precision, distribution.PRECISIONS)
    per_update = config.micro_batch_size * replicas
    if config.global_batch_size % per_update:
        raise ValueError(
            f"global batch {config.global_batch_size} is not divisible by micro-batch "
            f"{config.micro_batch_size} x {replicas} replica(s) = {per_update}"
        )
    train_files, eval_files = record_files(config.train_files, "training"), record_files(config.eval_files, "evaluation")
    if set(train_files) & set(eval_files):
        raise ValueError(f"evaluation files are also training files: {sorted(set(train_files) & set(eval_files))}")
    backbone = config.backbone_config()
    vocabulary, length = backbone["vocabulary_size"], backbone["max_sequence_length"]
    shapes = {}
    for path in train_files + eval_files:
        shapes[path] = check_records(path, vocabulary, length, sample_records)
    if len(set(shapes.values())) > 1:
        raise ValueError(f"files differ in (sequence length, predictions): {shapes}")
    _check_model_dir(config)
    return train_files, eval_files


def save_checkpoint(manager, step):
    """`manager.save`; when it fails (a full disk, a lost bucket) the half-written files are removed
    and a ValueError says which checkpoint the run can resume from."""
    def remove_partial():
        for leftover in tf.io.gfile.glob(os.path.join(manager.directory, f"ckpt-{step}_temp*")):
            tf.io.gfile.rmtree(leftover) if tf.io.gfile.isdir(leftover) else tf.io.gfile.remove(leftover)

    try:
        manager.save(checkpoint_number=step)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while saving: the previous checkpoint stays the newest
        remove_partial()
        raise
    except (OSError, tf.errors.OpError) as error:
        remove_partial()
        message = getattr(error, "message", None) or str(error)
        raise ValueError(f"{manager.directory}: could not write ckpt-{step} ({message.splitlines()[0][:200]}); "
                         f"the newest checkpoint is {manager.latest_checkpoint or 'none'}: free space and re-run "
                         "the same command to resume from it") from None


def _checkpoint_paths(manager):
    """The manager's checkpoints, oldest first, and any ckpt-N on disk that its state file does not
    list: a run killed (SIGKILL, power loss) after writing ckpt-N but before updating the state
    file still resumes from ckpt-N."""
    paths = {}
    for index in tf.io.gfile.glob(os.path.join(manager.directory, "ckpt-*.index")):
        number = index[: -len(".index")].rsplit("-", 1)[1]
        if number.isdigit():
            paths[int(number)] = index[: -len(".index")]
    for path in manager.checkpoints:
        paths[int(path.rsplit("-", 1)[1])] = path
    return [paths[number] for number in sorted(paths)]


def restore_latest_intact(checkpoint, manager):
    """Restores the newest checkpoint that reads whole; an unreadable one (a truncated .data file,
    a crash mid-write) is named, and the one before it is tried. Returns the path restored, or None."""
    failures = []
    for path in reversed(_checkpoint_paths(manager)):
        try:
            checkpoint.restore(path).assert_existing_objects_matched()
        except Exception as error:  # noqa: BLE001 (TensorFlow raises OpError, IndexError, ValueError...)
            failures.append(f"{path}: unreadable ({type(error).__name__}: {str(error).splitlines()[0][:200]})")
            print(f"warning: {failures[-1]}; trying the checkpoint before it")
            continue
        if failures:
            print(f"resumed from {path}, the newest intact checkpoint")
        return path
    if failures:
        raise ValueError(f"no intact checkpoint in {manager.directory}: " + "; ".join(failures))
    return None


def corrupt_file(files):
    """The first of `files` that does not read through to its end (which shard a DataLossError came from)."""
    for path in files:
        try:
            for _ in tf.data.TFRecordDataset(path):
                pass
        except tf.errors.DataLossError:
            return path
    return f"one of {files}"


def _check_export_dir(config):
    """Before any update: the export at the end may replace only this run's own earlier export
    (a re-run of the same command), anything else only with `overwrite_export`; never a run,
    a fine-tuning dir or a dir holding other files (`artifacts.check_export_target`)."""
    info = os.path.join(config.export_dir, artifacts.ASSETS, artifacts.EXPORT_INFO)
    earlier = None
    if tf.io.gfile.exists(info):
        try:
            earlier = (artifacts.read_json(info).get("pretraining") or {}).get("model_dir")
        except (ValueError, AttributeError):
            earlier = "an unreadable record"
    ours = earlier is not None and artifacts.same_path(earlier, config.model_dir)
    if earlier is not None and not ours and not config.overwrite_export:
        raise ValueError(f"--export_dir {config.export_dir} holds the export of another run ({earlier}); pass "
                         "--overwrite to replace it, or give another --export_dir (e.g. a new version number)")
    artifacts.check_export_target(config.export_dir, overwrite=True if ours else config.overwrite_export,
                                  source=config.model_dir)


def _check_model_dir(config):
    path = os.path.join(config.model_dir, artifacts.CONFIG)
    if not tf.io.gfile.exists(path):
        return
    previous = artifacts.read_json(path)
    current = _config_record(config)
    differing = sorted(k for k in set(previous) | set(current)
                       if k not in RESUMABLE_CHANGES and previous.get(k) != current.get(k))
    if differing:
        details = ", ".join(f"{k}: {previous.get(k)!r} there, {current.get(k)!r} now" for k in differing)
        raise ValueError(f"{config.model_dir} holds a run with another config ({details}); "
                         "use a new --model_dir, or the same settings to resume")


def warm_start(model, init_from):
    """Assigns the weights of `init_from` to the pre-training model; returns those left at their
    initializer (a new halting unit, heads the checkpoint lacks). A halting unit the model has no
    place for (halting none over an ACT run) is dropped."""
    info, values = loading.read_source(init_from)
    _, values, _ = loading.rehalt(info["backbone"], values, init_from, halting=model.backbone.halting)
    return loading.assign_weights(model, values, init_from, fresh=INIT_FRESH)


def _config_record(config):
    record = dataclasses.asdict(config)
    record["backbone"] = config.backbone_config()
    return json.loads(json.dumps(record))


def checkpoint_contents(model, optimizer=None):
    """What a checkpoint holds, keyed by variable path ("model/<path>", "optimizer/<path>").

    Explicit, so that any program can restore the model's weights by name (Keras 3
    does not expose every sub-layer as a checkpoint child).
    """
    contents = {"model": {v.path: v for v in model.variables}}
    if optimizer is not None:
        contents["optimizer"] = {v.path: v for v in optimizer.variables}
    if len(contents["model"]) != len(model.variables):
        raise ValueError("duplicate variable paths in the model")
    return contents


def _tag(token_type):
    return token_type.replace("[", "").replace("]", "").replace("->", "_to_")


class Pretrainer:
    """Model, optimizer and the compiled steps for one resolved `PretrainConfig`."""

    def __init__(self, config, strategy, kind):
        self.config, self.strategy, self.kind = config, strategy, kind
        replicas = strategy.num_replicas_in_sync
        self.accumulation = config.global_batch_size // (config.micro_batch_size * replicas)
        self.precision = distribution.resolve_precision(config.precision, kind)
        self.jit_compile = distribution.resolve_jit(config.jit_compile, kind, replicas)
        with strategy.scope():
            keras.utils.set_random_seed(config.seed)
            self.backbone = AlbertActBackbone(**config.backbone_config())
            self.model = AlbertActPretrainingModel(self.backbone)
            self.schedule = WarmupLinearDecay(config.learning_rate, config.warmup_steps, config.steps)
            self.optimizer = Lamb(self.schedule, weight_decay_rate=config.weight_decay_rate)
            self.optimizer.build(self.model.trainable_variables)
            # Full tau, checkpointed: "auto" starts at -1 (not calibrated yet; no ponder cost meanwhile).
            auto = config.ponder_cost_weight == AUTO
            self.tau = tf.Variable(-1.0 if auto else float(config.ponder_cost_weight), trainable=False,
                                   name="ponder_cost_weight")

    # --- the ponder-cost weight ------------------------------------------------------------------

    def tau_at(self, update):
        """tau applied at 0-based optimizer update `update` (a tensor in the step, a number outside)."""
        config = self.config
        ramp = ponder_ramp(update, config.ponder_warmup_start, config.ponder_warmup_steps)
        return ops.maximum(ops.convert_to_tensor(self.tau), 0.0) * ramp

    def calibrate_tau(self, mlm_loss, sop_loss, ponder_cost):
        """--tau auto: sets tau so that tau x ponder cost = AUTO_SHARE x (MLM + SOP); returns it."""
        tau = AUTO_SHARE * (mlm_loss + sop_loss) / max(ponder_cost, 1e-6)
        self.tau.assign(tau)
        return tau

    @property
    def needs_calibration(self):
        return float(self.tau.numpy()) < 0

    # --- the training step -------------------------------------------------------------------

    def replica_step(self, inputs, labels):
        """One optimizer update from this replica's rows of the global batch (`distribute_rows`), in micro-batches."""
        config, context = self.config, tf.distribute.get_replica_context()
        variables = self.model.trainable_variables
        # Global denominators: the accumulated gradient is exactly the global-batch gradient.
        mlm_weight = context.all_reduce("sum", tf.reduce_sum(labels["masked_lm_weights"]))
        examples = float(config.global_batch_size)
        split = lambda t: tf.reshape(t, [self.accumulation, -1, *t.shape[1:]])  # noqa: E731
        inputs, labels = tf.nest.map_structure(split, inputs), tf.nest.map_structure(split, labels)
        tau = self.tau_at(self.optimizer.iterations)  # the same for every micro-batch of the update

        def micro_step(i, gradients, sums):
            micro_inputs = {k: v[i] for k, v in inputs.items()}
            micro_labels = {k: v[i] for k, v in labels.items()}
            with tf.GradientTape() as tape:
                outputs = self.model(micro_inputs, training=True)
                batch_sums = loss_sums(outputs, micro_labels)
                loss = pretraining_loss(batch_sums, mlm_weight, examples, tau)["loss"]
            grads = tape.gradient(loss, variables)
            gradients = [a + tf.convert_to_tensor(g) for a, g in zip(gradients, grads)]
            batch_sums["depth"] = tf.reduce_sum(_depth_sums(outputs, micro_inputs, micro_labels), axis=0)
            batch_sums["overflows"] = tf.reduce_sum(outputs["overflows"])  # tokens a capacity made halt early
            return i + 1, gradients, {k: sums[k] + batch_sums[k] for k in sums}

        zero_sums = {k: tf.constant(0.0) for k in SUM_KEYS}
        zero_sums["depth"] = tf.zeros([len(token_types.TOKEN_TYPES), len(token_types.PARTS)])
        gradients = [tf.zeros_like(v) for v in variables]
        _, gradients, sums = tf.while_loop(
            lambda i, *_: i < self.accumulation, micro_step, (tf.constant(0), gradients, zero_sums)
        )
        gradients = context.all_reduce("sum", gradients)
        gradients, norm = tf.clip_by_global_norm(gradients, config.clip_norm)
        # Keras' optimizer sums gradients over replicas once more: hand it each replica's share.
        replicas = float(self.strategy.num_replicas_in_sync)
        self.optimizer.apply_gradients(zip([g / replicas for g in gradients], variables))
        sums["gradient_norm"] = norm / replicas  # summed over replicas below
        return sums

    def make_train_step(self, parse=None):
        """A tf.function of an iterator: one update from its next global batch, parsed (inputs,
        labels), or serialized records that `parse` turns into this worker's parsed rows."""
        workers = distribution.input_worker(self.strategy)[1]

        @tf.function
        def train_step(iterator):
            batch = next(iterator)
            inputs, labels = parse(batch) if parse else batch
            inputs, labels = distribution.distribute_rows(self.strategy, (inputs, labels), workers)
            per_replica = self.strategy.run(replica_step, args=(inputs, labels))
            return {k: self.strategy.reduce("sum", v, axis=None) for k, v in per_replica.items()}

        replica_step = self.compiled(self.replica_step)
        return train_step

    def compiled(self, replica_fn):
        return distribution.compiled(replica_fn, self.jit_compile)

    # --- evaluation ----------------------------------------------------------------------------

    def replica_eval(self, inputs, labels):
        """Sums (and per-sequence rows) of one replica's evaluation batch; static shapes, so XLA compiles it."""
        n_max, vocabulary = self.backbone.max_iterations, self.backbone.vocabulary_size
        outputs = self.model(inputs, training=False)
        sums = loss_sums(outputs, labels)
        masks = token_types.token_type_masks(inputs, labels)
        sums["histogram"] = token_types.iteration_histogram(outputs["iterations"], masks, n_max)  # (K, N+1)
        sums["depth"] = _depth_sums(outputs, inputs, labels)  # (B, K, 5): per sequence, for intervals
        sums["accuracy"] = _accuracy_per_sequence(outputs, labels)  # (B, 3): per sequence, for intervals
        # Baselines: how often each token is a masked target; how many pairs were swapped.
        sums["target_counts"] = tf.math.unsorted_segment_sum(
            tf.reshape(labels["masked_lm_weights"], [-1]), tf.reshape(labels["masked_lm_ids"], [-1]), vocabulary)
        sums["sop_swapped"] = tf.reduce_sum(tf.cast(labels["sentence_order_label"], tf.float32))
        return sums

    def make_eval_step(self):
        replica_eval = self.compiled(self.replica_eval)

        @tf.function
        def eval_step(batch):
            per_replica = self.strategy.run(replica_eval, args=batch)
            return {k: self.strategy.gather(v, axis=0) if k in PER_SEQUENCE
                    else self.strategy.reduce("sum", v, axis=None) for k, v in per_replica.items()}

        return eval_step

    def evaluate(self, eval_files):
        config = self.config
        batch = config.micro_batch_size * self.strategy.num_replicas_in_sync
        dataset = self.strategy.distribute_datasets_from_function(
            lambda context: make_pretraining_dataset(eval_files, batch, training=False, input_context=context)
        )
        eval_step, totals = self.make_eval_step(), None
        for i, element in enumerate(dataset):
            if config.eval_batches is not None and i >= config.eval_batches:
                break
            sums = {k: v.numpy() for k, v in eval_step(element).items()}
            totals = sums if totals is None else {
                k: np.concatenate([totals[k], sums[k]]) if k in PER_SEQUENCE else totals[k] + sums[k] for k in totals}
        if totals is None:
            raise ValueError(f"no evaluation records in {eval_files}")
        return summarize(totals, float(self.tau_at(self.optimizer.iterations.numpy() - 1)))


def ponder_ramp(update, start, steps):
    """Share of tau at 0-based update `update`: 0 before `start`, then linear up to 1 over `steps` updates."""
    update = ops.cast(update, "float32")
    if steps <= 0:
        return ops.cast(update >= start, "float32")
    return ops.clip((update - start + 1.0) / steps, 0.0, 1.0)


def _depth_sums(outputs, inputs, labels):
    """(B, K, 5) per-sequence depth sums per token type (Table 1) for one batch."""
    masks = token_types.token_type_masks(inputs, labels)
    return token_types.depth_sums(outputs["iterations"], outputs["expected_iterations"], masks)


def summarize(sums, ponder_cost_weight):
    """Losses, accuracies and the iteration table from summed step outputs (numpy).

    `sums["depth"]` is (K, 5) totals while training, (S, K, 5) per held-out sequence at
    evaluation (then the table has 95% intervals).
    """
    losses = pretraining_loss(sums, sums["mlm_weight"], sums["examples"], ponder_cost_weight)
    result = {k: float(v) for k, v in losses.items()}
    result["mlm_accuracy"] = float(sums["mlm_correct"] / max(sums["mlm_weight"], 1.0))
    result["sop_accuracy"] = float(sums["sop_correct"] / sums["examples"])
    result["examples"] = int(sums["examples"])
    if "overflows" in sums:
        result["overflows"] = int(sums["overflows"])
    result["iterations"] = token_types.summarize(sums["depth"], sums.get("histogram"))
    if np.ndim(sums["depth"]) == 3:  # per held-out sequence: the paper's ordering, with intervals
        result["differences"] = token_types.differences(sums["depth"])
    if "histogram" in sums:
        result["iteration_histogram"] = result["iterations"]["all"]["histogram"]
    if "gradient_norm" in sums:
        result["gradient_norm"] = float(sums["gradient_norm"])
    if "accuracy" in sums:  # evaluation: intervals over sequences, and the baselines to beat
        per_sequence = np.asarray(sums["accuracy"], np.float64)
        counts = confidence.resample_counts(len(per_sequence))
        result["mlm_accuracy_interval"] = [float(v) for v in confidence.percentile_interval(
            confidence.resampled_ratios(per_sequence[:, 0], per_sequence[:, 1], counts))]
        result["sop_accuracy_interval"] = [float(v) for v in confidence.percentile_interval(
            confidence.resampled_ratios(per_sequence[:, 2], np.ones(len(per_sequence)), counts))]
        targets = np.asarray(sums["target_counts"], np.float64)
        result["mlm_unigram_baseline"] = float(targets.max() / max(targets.sum(), 1.0))
        share = targets[targets > 0] / targets.sum()
        result["mlm_unigram_loss"] = float(-(share * np.log(share)).sum())  # the best loss without context
        swapped = float(sums["sop_swapped"]) / max(float(sums["examples"]), 1.0)
        result["sop_majority_baseline"] = max(swapped, 1.0 - swapped)
    return result


def _accuracy_per_sequence(outputs, labels):
    """float32 (B, 3): correct MLM predictions (weighted), MLM weight, SOP correct, per sequence."""
    weights = tf.cast(labels["masked_lm_weights"], tf.float32)
    predicted = tf.argmax(outputs["mlm_logits"], axis=-1, output_type=tf.int32)
    mlm_hit = tf.cast(tf.equal(predicted, tf.cast(labels["masked_lm_ids"], tf.int32)), tf.float32) * weights
    sop_hit = tf.equal(tf.argmax(outputs["sop_logits"], axis=-1, output_type=tf.int32),
                       tf.cast(labels["sentence_order_label"], tf.int32))
    return tf.stack([tf.reduce_sum(mlm_hit, axis=1), tf.reduce_sum(weights, axis=1), tf.cast(sop_hit, tf.float32)], axis=1)


def _write_summaries(writer, step, result, extra=None):
    with writer.as_default(step=step):
        for key in ("loss", "mlm_loss", "sop_loss", "ponder_loss", "ponder_cost", "mlm_accuracy", "sop_accuracy",
                    "gradient_norm", "overflows"):
            if key in result:
                tf.summary.scalar(key, result[key])
        for name in token_types.TOKEN_TYPES:
            row = result["iterations"][name]
            if row["count"]:
                tf.summary.scalar(f"iterations/{_tag(name)}", row["mean"])
                tf.summary.scalar(f"expected_iterations/{_tag(name)}", row["expected_mean"])
        if "iteration_histogram" in result:
            counts = np.asarray(result["iteration_histogram"])
            tf.summary.histogram("iterations/histogram", np.repeat(np.arange(len(counts)), counts).astype("float32"))
        for key, value in (extra or {}).items():
            tf.summary.scalar(key, value)
    writer.flush()


def _write_token_type_image(writer, step, iterations, max_iterations):
    """The iterations-per-token-type bar chart (as in `albert_act.analyze`) as a TensorBoard image."""
    from albert_act.analysis.plots import token_types_png

    image = tf.image.decode_png(token_types_png(iterations, max_iterations), channels=4)
    with writer.as_default(step=step):
        tf.summary.image("iterations/token_types", image[None])
    writer.flush()


def run_pretraining(config, progress=True):
    """The whole job: checks, strategy, (resumed) training, checkpoints, TensorBoard, evaluation,
    and the SavedModel when `config.export_dir` is set (it needs `config.vocab`).

    Returns the final held-out evaluation (JSON-ready; also <model_dir>/evaluation.json):
    losses, accuracies with intervals and baselines, `iterations` (Table 1), `differences`,
    `table` (Markdown), `step`, `model_dir`, and `export` when one was written. The trained
    model is in the run dir: `albert_act.model.loading.load_pretraining_model(model_dir)`.
    """
    workers, task_type, index, chief = distribution.cluster_task()
    if not chief:  # another worker of a multi-worker job: it reads the chief's run, writes to scratch
        scratch = tempfile.mkdtemp(prefix=f"albert_act_{task_type}{index}_")
        try:
            with outputs.DirectoryLock(scratch, "pre-training worker"):
                return _run_pretraining(config, progress, scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    with outputs.DirectoryLock(config.model_dir, "pre-training run") as lock:
        if lock.took_over and progress:
            print(f"{config.model_dir}: the run that held it ({lock.took_over}) is gone; taking it over")
        return _run_pretraining(config, progress, config.model_dir)


def _run_pretraining(config, progress, write_dir):
    """The job; `write_dir` is the model dir, or a scratch dir for a multi-worker job's non-chief
    workers (which take part in every step and checkpoint save, and restore from the chief's)."""
    config = config.resolved()
    strategy, kind = distribution.make_strategy(config.strategy)
    chief = write_dir == config.model_dir
    train_files, eval_files = check_inputs(config, strategy.num_replicas_in_sync)
    if config.deterministic:
        tf.config.experimental.enable_op_determinism()
    trainer = Pretrainer(config, strategy, kind)
    tf.io.gfile.makedirs(write_dir)
    artifacts.write_json(os.path.join(write_dir, artifacts.CONFIG), _config_record(config))
    if config.vocab:  # the run dir is self-contained: fine-tuning finds the vocabulary there
        tf.io.gfile.copy(config.vocab, os.path.join(write_dir, artifacts.VOCAB), overwrite=True)

    # A plain tf.data iterator of global batches of serialized records: it is saved in the
    # checkpoint (shuffle buffer included), so a resumed run continues with exactly the next batch,
    # reading nothing twice. Every worker of a job iterates the same stream and parses only its
    # rows, and each replica is sent only its own (`distribute_rows`).
    dataset = serialized_batches(train_files, config.global_batch_size, seed=config.seed,
                                 deterministic=config.deterministic)
    iterator = iter(dataset)
    shapes, (index, workers) = record_shapes(train_files[0]), distribution.input_worker(strategy)
    checkpoint = tf.train.Checkpoint(**checkpoint_contents(trainer.model, trainer.optimizer), iterator=iterator,
                                     ponder_cost_weight=trainer.tau)
    manager = tf.train.CheckpointManager(checkpoint, os.path.join(write_dir, artifacts.CHECKPOINTS),
                                         max_to_keep=config.keep_checkpoints)
    chiefs = manager if chief else tf.train.CheckpointManager(  # read only: a worker resumes where the chief does
        checkpoint, os.path.join(config.model_dir, artifacts.CHECKPOINTS), max_to_keep=config.keep_checkpoints)
    restored = restore_latest_intact(checkpoint, chiefs)
    step = int(trainer.optimizer.iterations.numpy())
    if config.init_from and not restored:
        fresh = warm_start(trainer.model, config.init_from)
        if progress:
            new = [prefix.rstrip("/") for prefix in INIT_FRESH if any(p.startswith(prefix) for p in fresh)]
            bias = f" (halting bias {trainer.backbone.halting_bias_initializer:g})" if loading.HALTING_UNIT[:-1] in new else ""
            print(f"started from {config.init_from}; new: {', '.join(new) or 'none'}{bias}")
    if progress:
        resumed = f", resumed from {restored}" if step else ""
        print(f"pre-training {config.preset} ({config.halting}, {'shared' if config.share_weights else 'unshared'}) "
              f"on {kind} x{strategy.num_replicas_in_sync}, {trainer.precision}, global batch "
              f"{config.global_batch_size} = {trainer.accumulation} x {config.micro_batch_size} x "
              f"{strategy.num_replicas_in_sync}{resumed}")

    train_writer = tf.summary.create_file_writer(os.path.join(write_dir, artifacts.TRAIN_EVENTS))
    eval_writer = tf.summary.create_file_writer(os.path.join(write_dir, artifacts.EVAL_EVENTS))
    train_step = trainer.make_train_step(parse=lambda serialized: parse_share(serialized, *shapes, index, workers))
    shown = ["loss", "mlm_acc", "sop_acc", "iterations"] + (["overflows"] if config.execution == "bucket" else [])
    bar = cli.progress_bar(config.steps, shown) if progress else None
    window, window_start = None, time.perf_counter()
    while step < config.steps:
        try:
            sums = {k: v.numpy() for k, v in train_step(iterator).items()}
        except tf.errors.DataLossError as error:
            raise ValueError(f"{corrupt_file(train_files)}: a corrupt record at update {step + 1} "
                             f"({str(error).splitlines()[0]}); the checkpoints written so far are intact: "
                             "replace the shard and re-run to resume") from None
        except (tf.errors.UnavailableError, tf.errors.CancelledError, tf.errors.AbortedError) as error:
            if distribution.cluster_task()[0] > 1:  # a collective op lost its peer
                cause = next((line for line in str(error).splitlines() if "aborted" in line.lower()), type(error).__name__)
                raise ValueError(f"another worker of the job stopped at update {step + 1} ({cause.strip()}); the "
                                 f"checkpoints so far are intact ({manager.latest_checkpoint or 'none yet'}): "
                                 "start every worker again with the same command to resume") from None
            raise
        tau = float(trainer.tau_at(step))  # what this update used
        step += 1
        result = summarize(sums, tau)
        if trainer.needs_calibration and step >= max(config.ponder_warmup_start, 1):
            # From this one update's global batch: the same number whether or not the run was resumed.
            calibrated = trainer.calibrate_tau(result["mlm_loss"], result["sop_loss"], result["ponder_cost"])
            if progress:
                print(f"\n--tau auto at update {step}: tau = {AUTO_SHARE} x (MLM {result['mlm_loss']:.3f} + SOP "
                      f"{result['sop_loss']:.3f}) / ponder cost {result['ponder_cost']:.1f} = {calibrated:.3g}")
        if not math.isfinite(result["loss"]):
            raise FloatingPointError(
                f"non-finite loss at step {step} (mlm {result['mlm_loss']}, sop {result['sop_loss']}, "
                f"ponder {result['ponder_cost']}); stopped without saving. Last good checkpoint: "
                f"{manager.latest_checkpoint}"
            )
        window = sums if window is None else {k: window[k] + sums[k] for k in window}
        if bar is not None:
            values = [("loss", result["loss"]), ("mlm_acc", result["mlm_accuracy"]),
                      ("sop_acc", result["sop_accuracy"]), ("iterations", result["iterations"]["all"]["mean"]),
                      ("overflows", result["overflows"])]
            bar.update(step, [(k, v) for k, v in values if k in shown])
        if step % config.log_every == 0 or step == config.steps:
            elapsed = time.perf_counter() - window_start
            logged = summarize(window, tau)
            logged["gradient_norm"] = window["gradient_norm"] / (window["examples"] / config.global_batch_size)
            _write_summaries(train_writer, step, logged, {
                "learning_rate": float(trainer.schedule(step - 1)),
                "ponder_cost_weight": tau,
                "examples_per_second": window["examples"] / elapsed,
            })
            window, window_start = None, time.perf_counter()
        if step % config.checkpoint_every == 0 or step == config.steps:
            save_checkpoint(manager, step)

    evaluation = trainer.evaluate(eval_files)
    _write_summaries(eval_writer, step, evaluation)
    _write_token_type_image(eval_writer, step, evaluation["iterations"], trainer.backbone.max_iterations)
    evaluation["step"] = step
    evaluation["model_dir"] = config.model_dir
    evaluation["table"] = token_types.markdown_table(evaluation["iterations"], trainer.backbone.max_iterations,
                                                     evaluation["differences"])
    if config.export_dir and chief:  # the raw-text SavedModel the config names, loaded back and asked one query
        from albert_act.serve.savedmodel import example_query, export_pretraining

        export_pretraining(trainer.model, config.export_dir, text_files.read_bytes(config.vocab),
                           pretraining_config=_config_record(config), overwrite=True)
        evaluation["export"] = {"dir": config.export_dir, "fill_mask": example_query(config.export_dir)["fill_mask"]}
    artifacts.write_json(os.path.join(write_dir, artifacts.EVALUATION), evaluation)
    return evaluation
