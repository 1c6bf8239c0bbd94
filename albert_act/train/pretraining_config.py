"""Pre-training settings: `PretrainConfig` (saved as config.json in the run dir), its defaults that
depend on each other (`resolved`), and `check_inputs`, which refuses what a user can fix before any
compute: flag values, the records against the model, the export and model dirs."""

import dataclasses
import json
import os
import sys

import tensorflow as tf

from albert_act.base import artifacts
from albert_act import distribution
from albert_act.model.source import Source
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model.halting import TRAINING_EXECUTIONS
from albert_act.model.presets import get_preset
from albert_act.base import checks, text_files
from pipelines.pretraining_dataset import check_records, check_records_vocabulary, count_records, record_files
from pipelines.tokenizer import Tokenizer

# Preset update counts that scale with --steps when only --steps is given.
SCALED_WITH_STEPS = ("warmup_steps", "ponder_warmup_start", "ponder_warmup_steps")


AUTO = "auto"  # --tau auto: tau x ponder cost = AUTO_SHARE x (MLM + SOP) when the ponder cost switches on


# What --init_from takes from its checkpoint: the sizes (the weights' shapes) and the layers' constants.
# The depth cap, the halting and tau stay the preset's (a fixed-depth ALBERT gets ACT: docs/design.md).
INIT_SETTINGS = ("vocabulary_size", "embedding_dim", "hidden_dim", "num_heads", "intermediate_dim",
                 "max_sequence_length", "num_segments", "layer_norm_epsilon", "initializer_range", "gelu_approximate")


# Settings that may change between a run and its resumption; anything else must match.
RESUMABLE_CHANGES = {"train_files", "eval_files", "checkpoint_every", "keep_checkpoints", "log_every",
                     "eval_batches", "eval_every", "strategy", "export_dir", "overwrite_export", "vocab",
                     "model_dir"}  # the same run, copied, moved or written with a trailing slash
# Settings added after runs were saved without them, and what such a run used.
ADDED_SETTINGS = {"input_streams": 1, "target_iterations": None, "eval_every": None}


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
    # A target mean depth: once the ponder cost is on, tau is steered after every update so that the
    # mean number of iterations comes to this (`Pretrainer.steer_tau`); None: tau stays as set.
    target_iterations: float | None = None
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
    # Input streams (`serialized_batches`): None is the job's worker count, so each worker of a
    # multi-worker job reads only its stream; one process given the same number reads the same batches.
    input_streams: int | None = None
    checkpoint_every: int = 100
    keep_checkpoints: int = 5
    log_every: int = 10
    eval_batches: int | None = None  # None: the whole eval shard
    eval_every: int | None = None  # held-out evaluation every this many updates too (None: at the end only)
    export_dir: str | None = None
    # Replace a SavedModel at export_dir that another run wrote (this run's own earlier export is
    # always replaced: a re-run of the same command re-exports).
    overwrite_export: bool = False
    vocab: str | None = None  # SentencePiece model of the data; copied to <model_dir>/vocab.model
    # Warm start: a pre-training run, an export or a public ALBERT checkpoint whose weights the model
    # starts from (sizes from it, see INIT_SETTINGS); not read again when the run resumes.
    init_from: str | None = None

    def resolved(self, source=None):
        """`source`: the opened `init_from`, where the caller has it."""
        preset = get_preset(self.preset)
        _check_overrides(self.backbone_overrides, preset.backbone)
        config = dataclasses.replace(self)
        if config.init_from:
            source = source or Source.open(config.init_from)
            sizes = {k: source.info["backbone"][k] for k in INIT_SETTINGS if k in source.info["backbone"]}
            clash = sorted(k for k in self.backbone_overrides if k in sizes and self.backbone_overrides[k] != sizes[k])
            if clash:
                raise ValueError(f"--override {clash[0]}={self.backbone_overrides[clash[0]]}: {self.init_from} has "
                                 f"{clash[0]}={sizes[clash[0]]}, which the weights fix")
            config.backbone_overrides = {**sizes, **self.backbone_overrides}
            _check_same_vocab(config, source)
            config.vocab = config.vocab or source.vocab
        if config.ponder_cost_weight is None:
            config.ponder_cost_weight = preset.ponder_cost_weight
        if config.input_streams is None:
            config.input_streams = distribution.cluster_task()[0]
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


def _check_same_vocab(config, source):
    """The data's vocabulary (--vocab) must be the one `source` was trained with, where it has one."""
    if config.vocab and source.vocab and text_files.read_bytes(source.vocab) != text_files.read_bytes(config.vocab):
        raise ValueError(f"the data's vocabulary {config.vocab} is not {source.vocab}, the one {config.init_from} "
                         "was trained with: make the TFRecords with it (python -m pipelines.create_pretraining_data "
                         f"--vocab {source.vocab}) and pass --train_files/--eval_files")


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
    for name in ("eval_every",):
        if getattr(config, name) is not None and getattr(config, name) < 1:
            raise ValueError(f"{name} must be >= 1, got {getattr(config, name)}")
    if not 0 <= config.warmup_steps <= config.steps:
        raise ValueError(f"warmup_steps must be in [0, steps={config.steps}], got {config.warmup_steps}")
    tau = config.ponder_cost_weight
    if tau != AUTO and not (isinstance(tau, (int, float)) and tau >= 0):
        raise ValueError(f"ponder_cost_weight (--tau) must be a number >= 0 or {AUTO!r}, got {tau!r}")
    _check_ponder_settings(config)
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
    _check_streams(config)
    train_files, eval_files = record_files(config.train_files, "training"), record_files(config.eval_files, "evaluation")
    shared = artifacts.same_files(eval_files, train_files)
    if shared:
        named = "; ".join(f"{e} is {t}" if e == t else f"{e} is the training file {t}" for e, t in shared[:3])
        raise ValueError(f"evaluation files are also training files ({len(shared)}): {named}: held-out numbers "
                         "would measure what the model was trained on")
    backbone = config.backbone_config()
    vocabulary, length = backbone["vocabulary_size"], backbone["max_sequence_length"]
    shapes = {}
    proto = tf.io.gfile.GFile(config.vocab, "rb").read() if config.vocab else None
    for path in train_files + eval_files:
        shapes[path] = check_records(path, vocabulary, length, sample_records)
        if proto is not None:
            check_records_vocabulary(path, proto, os.path.basename(config.vocab))
    if len(set(shapes.values())) > 1:
        raise ValueError(f"files differ in (sequence length, predictions): {shapes}")
    _check_batch_fits(config, train_files)
    _check_model_dir(config)
    return train_files, eval_files


def _check_batch_fits(config, train_files):
    """A global batch larger than the training data would repeat instances within every update."""
    available = count_records(train_files, config.global_batch_size)
    if available < config.global_batch_size:
        raise ValueError(f"global batch {config.global_batch_size} is larger than the {available} training instances "
                         f"of {len(train_files)} file(s) ({train_files[0]} ...): every update would read each one "
                         f"{config.global_batch_size / available:.0f} times; pass a --global_batch_size of at most "
                         f"{available}, or make more data")


def _check_ponder_settings(config):
    for name in ("ponder_warmup_start", "ponder_warmup_steps"):
        if getattr(config, name) < 0:
            raise ValueError(f"{name} must be >= 0, got {getattr(config, name)}")
    never = config.ponder_warmup_start > config.steps and config.ponder_cost_weight not in (0, 0.0)
    if config.halting == "act" and never:
        raise ValueError(f"ponder_warmup_start {config.ponder_warmup_start} is after steps={config.steps}: the "
                         "ponder cost would never switch on; lower it, or pass --tau 0 for no ponder cost")
    target = config.target_iterations
    if target is not None:
        n_max = config.backbone_config()["max_iterations"]
        if config.halting == "none":
            raise ValueError("target_iterations steers the ponder cost of ACT halting; --halting none runs every "
                             "token to N_max (drop --target_iterations)")
        if not (isinstance(target, (int, float)) and 1 <= target <= n_max):
            raise ValueError(f"target_iterations must be a number in [1, max_iterations={n_max}], got {target!r}")


def _check_streams(config):
    """Each worker of a multi-worker job reads one input stream of the global batch's rows."""
    workers, streams = distribution.cluster_task()[0], config.input_streams
    if streams < 1 or config.global_batch_size % streams:
        raise ValueError(f"input_streams must be >= 1 and divide the global batch {config.global_batch_size}, "
                         f"got {streams}")
    if workers > 1 and streams != workers:
        raise ValueError(f"input_streams {streams}: a job of {workers} workers reads {workers} streams, one each")


def _check_export_dir(config):
    """Before any update: the export at the end may replace only this run's own earlier export
    (a re-run of the same command), anything else only with `overwrite_export`; never a run,
    a fine-tuning dir or a dir holding other files (`artifacts.check_export_target`)."""
    info = os.path.join(config.export_dir, artifacts.ASSETS, artifacts.EXPORT_INFO)
    earlier = None
    if tf.io.gfile.exists(info):
        try:
            record = artifacts.read_json(info).get("pretraining") or {}
            earlier = artifacts.absolute_paths(record, config.export_dir).get("model_dir")
        except (ValueError, AttributeError):
            earlier = "an unreadable record"
    ours = earlier is not None and artifacts.same_path(earlier, config.model_dir)
    if earlier is not None and not ours and not config.overwrite_export:
        raise ValueError(f"--export_dir {config.export_dir} holds the export of another run ({earlier}); pass "
                         "--overwrite to replace it, or give another --export_dir (e.g. a new version number)")
    artifacts.check_export_target(config.export_dir, overwrite=True if ours else config.overwrite_export,
                                  source=config.model_dir, flag="--export_dir")


def _check_model_dir(config):
    """A model dir resumes only the run it holds: checkpoints need the config.json they were
    trained with, and the same settings (but `RESUMABLE_CHANGES`). A dir whose earlier run saved
    no checkpoint (it failed or was stopped before the first) starts afresh with the new settings."""
    path = os.path.join(config.model_dir, artifacts.CONFIG)
    checkpoints = tf.io.gfile.glob(os.path.join(config.model_dir, artifacts.CHECKPOINTS, "ckpt-*.index"))
    if not tf.io.gfile.exists(path):
        if checkpoints:
            raise ValueError(f"{config.model_dir} holds checkpoints but no {artifacts.CONFIG}, so the settings they "
                             f"were trained with are unknown; put its {artifacts.CONFIG} back, or use a new --model_dir")
        others = text_files.visible_entries(config.model_dir)
        if others:  # an export, a fine-tuning dir, data, someone's files: a run would be written among them
            raise ValueError(f"--model_dir {config.model_dir} holds other files ({', '.join(others[:5])}) and no run "
                             f"({artifacts.CONFIG}); pre-train into a new or empty dir, or a run dir to resume it")
        return
    own_vocab = os.path.join(config.model_dir, artifacts.VOCAB)
    if checkpoints and config.vocab and tf.io.gfile.exists(own_vocab) and \
            tf.io.gfile.GFile(own_vocab, "rb").read() != tf.io.gfile.GFile(config.vocab, "rb").read():
        raise ValueError(f"--vocab {config.vocab} is not the vocabulary {config.model_dir} was trained with "
                         f"({own_vocab}); resume with that one, or use a new --model_dir")
    previous = artifacts.read_json(path)
    current = config_record(config)
    previous = {**ADDED_SETTINGS, **previous}
    differing = _differences({k: v for k, v in previous.items() if k not in RESUMABLE_CHANGES},
                             {k: v for k, v in current.items() if k not in RESUMABLE_CHANGES})
    if differing:
        details = ", ".join(f"{k}: {there!r} there, {now!r} now" for k, there, now in differing)
        if not checkpoints:
            print(f"note: {config.model_dir}: its earlier run saved no checkpoint; starting afresh with "
                  f"these settings ({details})", file=sys.stderr)
            return
        raise ValueError(f"{config.model_dir} holds a run with another config ({details}); "
                         "use a new --model_dir, or the same settings to resume")


def _differences(previous, current, prefix=""):
    """[(key, previous value, current value)] where two config records differ; in settings that are
    dicts on both sides (backbone, backbone_overrides) only the keys that differ, as "backbone.key"."""
    found = []
    for key in sorted(set(previous) | set(current)):
        there, now = previous.get(key), current.get(key)
        if isinstance(there, dict) and isinstance(now, dict):
            found += _differences(there, now, f"{prefix}{key}.")
        elif there != now:
            found.append((prefix + key, there, now))
    return found


def config_record(config):
    record = dataclasses.asdict(config)
    record["backbone"] = config.backbone_config()
    return json.loads(json.dumps(record))
