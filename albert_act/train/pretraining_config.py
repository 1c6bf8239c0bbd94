"""Pre-training settings, in one place: `PretrainConfig` (a frozen dataclass: every setting with its
default, one line of help, its flag and its range; it checks its own values when built, and
`pretrain`'s flags are made from it), `resolved()` (the defaults that come from the preset,
albert_act/model/presets.py, and depend on each other) and `config_record` (what a run saves as
config.json, from which `PretrainConfig.from_record` repeats it). The checks that read files
(records, vocabulary, model and export dirs) are `pretraining_preflight.preflight`.

    python -c "from albert_act.train.pretraining_config import PretrainConfig; help(PretrainConfig)"
"""

import argparse
import dataclasses
import json
import math
import sys

import keras

from albert_act import distribution
from albert_act.base import checks, settings
from albert_act.base.artifacts import EVAL_SHARDS, TRAIN_SHARDS
from albert_act.base.settings import NEGATED, PATH, setting
from albert_act.model.backbone import SETTINGS as BACKBONE_SETTINGS, AlbertActBackbone
from albert_act.model.halting import TRAINING_EXECUTIONS
from albert_act.model.presets import PRESETS, get_preset
from albert_act.train.losses import MLM_OBJECTIVES
from albert_act.train.ponder import TAU_RANGE

SCALED_WITH_STEPS = ("warmup_steps", "ponder_warmup_start", "ponder_warmup_steps")  # scaled with --steps alone
AUTO = "auto"  # --tau auto: tau x ponder cost = AUTO_SHARE x (MLM + SOP) when the ponder cost switches on

# What --init_from takes from its checkpoint: the sizes (the weights' shapes) and the layers' constants.
# The depth cap, the halting and tau stay the preset's (a fixed-depth ALBERT gets ACT: docs/design.md).
INIT_SETTINGS = ("vocabulary_size", "embedding_dim", "hidden_dim", "num_heads", "intermediate_dim",
                 "max_sequence_length", "num_segments", "layer_norm_epsilon", "initializer_range", "gelu_approximate")

# The settings of the halting unit's training (the ponder cost, the objectives that shape the halting
# distribution, the unit's optimizer): nothing to weigh, steer or shape at fixed depth (--halting none).
PONDER_SETTINGS = ("ponder_cost_weight", "target_iterations", "target_control", "target_pieces", "ponder_warmup_start",
                   "ponder_warmup_steps", "mlm_objective", "halting_signal_weight", "kl_weight", "halting_trust_ratio",
                   "halting_learning_rate_scale")
# The settings of a preset's depth recipe (the english preset's), which a fixed-depth run (--halting none) drops
DEPTH_RECIPE = ("target_iterations", "target_control", "target_pieces", "mlm_objective", "halting_signal_weight",
                "halting_trust_ratio", "halting_learning_rate_scale")
# What a setting left at None takes when the preset does not set it either.
TRAINING_DEFAULTS = {"deterministic": False, "target_control": "tau", "target_pieces": "all", "mlm_objective": "final",
                     "halting_signal_weight": 1.0, "kl_weight": 0.0, "halting_trust_ratio": True,
                     "halting_learning_rate_scale": 1.0}
# Settings added after runs were saved without them, and what such a run used.
ADDED_SETTINGS = {"input_streams": 1, "target_iterations": None, "eval_every": None, "target_control": "tau",
                  "target_pieces": "all", "mlm_objective": "final", "halting_signal_weight": 1.0, "kl_weight": 0.0,
                  "halting_trust_ratio": True, "halting_learning_rate_scale": 1.0}


def _tau(text):
    if text == AUTO:
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--tau expects a number or {AUTO!r}, got {text!r}") from None


PRESET = "(default: the preset's)"


@settings.document
@dataclasses.dataclass(frozen=True)
class PretrainConfig:
    """Everything a pre-training run depends on. Settings left at None take the preset's value
    (`resolved()`); the values are checked when the config is built."""

    BACKBONE_SETTINGS = tuple(BACKBONE_SETTINGS)  # (--set of one of them: told it goes by --override)

    # What `pretrain --config` reads (its --help says so): a run's config.json.
    CONFIG_FILES = "a pre-training run's config.json (<model_dir>/config.json)"

    train_files: list = setting(dataclasses.MISSING, "TFRecord globs (default: the embedded demo data)", kind=PATH)
    eval_files: list = setting(dataclasses.MISSING, "held-out TFRecord globs", kind=PATH)
    model_dir: str = setting(dataclasses.MISSING, "run directory (default: runs/<preset>)", kind=PATH)
    preset: str = setting("demo", "model and run settings: the paper's tiny/small/base, the CPU demo, or english",
                          choices=sorted(PRESETS))
    backbone_overrides: dict = setting(
        help="change one backbone setting of the preset, e.g. --override hidden_dim=256 (repeatable; the keys "
             "are AlbertActBackbone's arguments)", flag="override", factory=dict)
    halting: str = setting("act", "act: learned per-token depth; none: fixed depth N_max (the ALBERT baseline)",
                           choices=["act", "none"])
    share_weights: bool = setting(
        True, "one layer applied up to N_max times, as ALBERT; --unshared: N_max distinct layers (the BERT "
              "baseline; default: shared)", flag="unshared", kind=NEGATED)
    ponder_cost_weight: float | str | None = setting(
        None, f"tau, the ponder cost's weight: a number, or 'auto' (tau x ponder cost = 10% of MLM + SOP when "
              f"the ponder cost switches on) {PRESET}", flag="tau", parse=_tau)
    ponder_warmup_start: int | None = setting(
        None, f"updates trained with tau = 0 before the ponder cost switches on {PRESET}", rule="int>=0")
    ponder_warmup_steps: int | None = setting(
        None, f"updates over which tau then ramps linearly from 0 to its value {PRESET}", rule="int>=0")
    target_iterations: float | None = setting(
        None, "a mean depth to keep: once the ponder cost is on, tau is adjusted after every update (dual ascent "
              "on log tau) until the mean iterations per token come to this; --tau is then where tau starts "
              "(default: off, tau stays fixed)", rule=">0")
    target_control: str | None = setting(
        None, "how --target_iterations holds the depth: tau (tau >= 0 moves in log space: the ponder cost can only "
              "push depth down, so a task that prefers fewer iterations takes the depth below the target) or signed "
              "(tau is the signed multiplier of the constraint mean N = target, moved additively after every update; "
              f"below 0 it rewards depth; needs a number for --tau, where it starts) {PRESET}",
        choices=["tau", "signed"])
    target_pieces: str | None = setting(
        None, "whose mean depth --target_iterations holds: all (every piece of the batch) or unmasked (the "
              "ordinary pieces, which a served sentence is made of: [MASK] and [CLS] may then run deeper without "
              f"pulling the others below the target) {PRESET}", choices=["all", "unmasked"])
    mlm_objective: str | None = setting(
        None, "the MLM term: final (the cross-entropy of each masked token's final state: ACT's loss of the "
              "mixture), per_iteration (PonderNet's mixture of losses: every iteration's cross-entropy weighted by "
              "the token's halting distribution, so each token is pushed to halt where its predictions stop "
              "improving; the head fits the weighted states, which favours early halting) or final_and_halting "
              "(final, plus that mixture with the cross-entropies held constant: it moves the halting distribution "
              f"alone) {PRESET}", choices=list(MLM_OBJECTIVES))
    halting_signal_weight: float | None = setting(
        None, f"final_and_halting's weight of the held per-iteration mixture against the final MLM loss {PRESET}",
        rule=">=0")
    kl_weight: float | None = setting(
        None, "beta, the weight of KL(each token's halting distribution || the truncated geometric distribution "
              f"whose mean is --target_iterations), PonderNet's regulariser; 0: none {PRESET}", rule=">=0")
    halting_trust_ratio: bool | None = setting(
        None, "--no-halting_trust_ratio: update the halting unit's kernel without LAMB's trust ratio and weight "
              "decay, as its bias is (the ratio keeps a kernel near its initial size, the unit's 0.02 x sqrt(H)) "
              f"{PRESET}")
    halting_learning_rate_scale: float | None = setting(
        None, f"the halting unit's learning rate as a multiple of the schedule's {PRESET}", rule=">0")
    execution: str | None = setting(
        None, "ACT loop in training: static (N_max steps over every token; XLA/TPU), while (stops once every "
              "token of the batch has halted), gather (each iteration computes only the running tokens; dynamic "
              "shapes, CPU/GPU, not under XLA) or bucket (the same at static widths; XLA/TPU; --override "
              f"capacity=K caps them). Same numbers and gradients {PRESET}", choices=list(TRAINING_EXECUTIONS))
    jit_compile: bool | None = setting(
        None, f"XLA-compile the per-replica steps; always on for TPU; not with --execution gather {PRESET}")
    steps: int | None = setting(
        None, f"optimizer updates; the preset's warm-up counts scale with it {PRESET}", rule="int[1,100000000]")
    warmup_steps: int | None = setting(None, f"learning-rate warm-up updates {PRESET}", rule="int>=0")
    learning_rate: float | None = setting(None, f"peak LAMB learning rate {PRESET}", rule="learning_rate")
    weight_decay_rate: float = setting(0.01, "LAMB's decoupled weight decay", rule=">=0")
    clip_norm: float = setting(1.0, "the global gradient norm is clipped to this", rule=">0")
    global_batch_size: int | None = setting(None, f"sequences per optimizer update {PRESET}", rule="int[1,65536]")
    micro_batch_size: int | None = setting(
        None, f"per replica; accumulation = global / (micro x replicas) {PRESET}", rule="int[1,65536]")
    strategy: str = setting("auto", "auto: the workers TF_CONFIG lists, else a Colab TPU VM if reachable, else "
                                    "every local GPU, else the CPU", choices=list(distribution.STRATEGIES))
    precision: str = setting("auto", "auto: mixed_bfloat16 on TPU, float32 elsewhere",
                             choices=list(distribution.PRECISIONS))
    seed: int = setting(12345, "seed of the weights, the input order and dropout", rule="int:seed")
    deterministic: bool | None = setting(
        None, "deterministic ops and a fixed input order: the same run gives the same numbers on the same machine "
              "(default: the preset's; on for the demo, off for the others)")
    input_streams: int | None = setting(
        None, "input streams the global batch is read as, each from its share of the train files (default: the "
              "job's workers, one each; one process given N reads what N workers read)", rule="int[1,1024]")
    checkpoint_every: int = setting(500, "updates between checkpoints", rule="int>=1")
    keep_checkpoints: int = setting(5, "newest checkpoints kept", rule="int[1,100000]")
    log_every: int = setting(50, "updates averaged into each TensorBoard point", rule="int>=1")
    eval_batches: int | None = setting(None, "held-out batches evaluated (default: the whole eval shard)",
                                       rule="int[1,1000000]")
    eval_every: int | None = setting(
        None, "evaluate on the held-out records every this many updates too (TensorBoard's eval folder and one "
              "line each in <model_dir>/held_out.jsonl; default: at the end only)", rule="int>=1")
    export_dir: str | None = setting(
        None, "raw-text SavedModel written at the end, needs --vocab (default for the demo: "
              "saved_models/albert_act_demo/1)", kind=PATH)
    overwrite_export: bool = setting(
        False, "replace a SavedModel at --export_dir that another run wrote (this run's own earlier export is "
               "replaced without it); checked before the first update", flag="overwrite")
    vocab: str | None = setting(
        None, "SentencePiece model of the data, copied to <model_dir>/vocab.model for fine-tuning (demo: its own)", kind=PATH)
    init_from: str | None = setting(
        None, "start from these weights: a pre-training run, an export, or a public ALBERT checkpoint (Hugging "
              "Face dir, TF1 checkpoint, keras-hub preset); its sizes and vocabulary are used, the preset's "
              "halting and depth cap added (a new halting unit: --override halting_bias_initializer=B); not read "
              "again when the run resumes", kind=PATH)

    def __post_init__(self):
        settings.check_values(self)
        _check_overrides(self.backbone_overrides, get_preset(self.preset).backbone)
        _check_together(self)

    @classmethod
    def from_record(cls, record, partial=False, path=None):
        """The config a run saved (config.json, `config_record`): repeats or resumes that run, its paths as given; one
        saved before a setting existed gets the value it ran with (`ADDED_SETTINGS`). partial: a --config file (`path`)
        that may leave settings to the flags; its "backbone" (derived from the preset and backbone_overrides) must be
        as derived, an edit refused; its overwrite_export is off, noted where not (a replay names --overwrite)."""
        if partial and isinstance(record, dict) and "overwrite_export" in record:
            if record["overwrite_export"] not in (False, None):
                print(f"note: --config {path}: its overwrite_export ({json.dumps(record['overwrite_export'])}) is not "
                      "read (a run's file replayed would replace an export unasked): pass --overwrite to replace one",
                      file=sys.stderr)
            record = {**record, "overwrite_export": False}
        saved = record.get("backbone") if isinstance(record, dict) else None
        added = ADDED_SETTINGS if saved is not None or not partial else None  # a run's record, not a hand-written file
        # "backbone", "backend" (which backend wrote a run: a JAX run's record says "jax"), "train_shards" and
        # "eval_shards" (what its records hold) are derived, not settings
        config = settings.from_record(cls, record, "a pre-training run", added, partial=partial,
                                      extra=("backbone", "backend", TRAIN_SHARDS, EVAL_SHARDS))
        if partial and isinstance(saved, dict):
            derived = config.backbone_config()
            differ = sorted(k for k in saved if k not in derived or saved[k] != derived[k])
            if differ:
                key, flag = differ[0], OWN_FLAGS.get(differ[0], f"--override {differ[0]}={json.dumps(saved[differ[0]])}")
                raise ValueError(f"backbone.{key} is {saved[key]!r} there, but the preset {config.preset!r} with its "
                                 f"backbone_overrides gives {derived.get(key)!r} now (the file was edited, or the "
                                 f"preset changed since): \"backbone\" is derived, not read; to have that value, "
                                 f"pass {flag}")
        return config

    def resolved(self, source=None):
        """The config with every default filled in: the preset's settings where none was given (its
        update counts scaled to --steps), the sizes and vocabulary of `init_from` (`source`: the
        opened `init_from`, where the caller has it)."""
        preset = get_preset(self.preset)
        changes = _init_changes(self, source) if self.init_from else {}
        if self.input_streams is None:
            changes["input_streams"] = distribution.cluster_task()[0]
        for name, value in {**TRAINING_DEFAULTS, **preset.training}.items():
            if getattr(self, name) is None:
                changes[name] = value
        # A preset's setting that means something only beside another one the flags replaced takes its default:
        # --mlm_objective final drops the english preset's halting_signal_weight, --tau auto its signed control
        if self.mlm_objective not in (None, "final_and_halting") and self.halting_signal_weight is None:
            changes["halting_signal_weight"] = TRAINING_DEFAULTS["halting_signal_weight"]
        if self.ponder_cost_weight == AUTO and self.target_control is None:
            changes["target_control"] = TRAINING_DEFAULTS["target_control"]
        if self.halting == "none":  # fixed depth: a preset's depth recipe has nothing to steer
            changes.update({name: TRAINING_DEFAULTS.get(name) for name in DEPTH_RECIPE if getattr(self, name) is None})
        if self.steps is not None:  # the preset's update counts scale with the updates asked for
            scale = self.steps / preset.training["steps"]
            changes.update({name: int(round(preset.training[name] * scale))
                            for name in SCALED_WITH_STEPS if getattr(self, name) is None})
        return dataclasses.replace(self, **changes)

    def backbone_config(self):
        return {**get_preset(self.preset).backbone, **self.backbone_overrides,
                "halting": self.halting, "share_weights": self.share_weights, "execution": self.execution}


def run_parts(config, execution=None):
    """(objective, backbone, model, schedule, optimizer) of a resolved config, as the TensorFlow and JAX
    runs build them (the TensorFlow one in its strategy's scope); `execution` replaces the config's.
    The weights are seeded with the config's seed; LAMB is built for the model's variables."""
    from albert_act.model.pretraining_model import AlbertActPretrainingModel
    from albert_act.train.lamb import run_optimizer
    from albert_act.train.learning_rate import WarmupLinearDecay
    from albert_act.train.losses import Objective

    backbone_config = {**config.backbone_config(), **({"execution": execution} if execution else {})}
    objective = Objective.of(config, backbone_config["max_iterations"])
    keras.utils.set_random_seed(config.seed)
    backbone = AlbertActBackbone(**backbone_config, return_details=objective.iteration_outputs)
    model = AlbertActPretrainingModel(backbone, iteration_outputs=objective.iteration_outputs)
    schedule = WarmupLinearDecay(config.learning_rate, config.warmup_steps, config.steps)
    optimizer = run_optimizer(config, schedule)
    optimizer.build(model.trainable_variables)
    return objective, backbone, model, schedule, optimizer


def config_record(config):
    """What a run saves as config.json: every setting, and the backbone's resolved settings."""
    record = dataclasses.asdict(config)
    record["backbone"] = config.backbone_config()
    return json.loads(json.dumps(record))


def _init_changes(config, source):
    """The settings `init_from` fixes: its sizes (the weights' shapes), and its vocabulary where no
    --vocab is given (the data's, if given, must be the same)."""
    from albert_act.base import text_files
    from albert_act.io.source import Source

    source = source or Source.open(config.init_from)
    sizes = {k: source.info["backbone"][k] for k in INIT_SETTINGS if k in source.info["backbone"]}
    clash = sorted(k for k in config.backbone_overrides if k in sizes and config.backbone_overrides[k] != sizes[k])
    if clash:
        raise ValueError(f"--override {clash[0]}={config.backbone_overrides[clash[0]]}: {config.init_from} has "
                         f"{clash[0]}={sizes[clash[0]]}, which the weights fix")
    if config.vocab and source.vocab and text_files.read_bytes(source.vocab) != text_files.read_bytes(config.vocab):
        raise ValueError(f"the data's vocabulary {config.vocab} is not {source.vocab}, the one {config.init_from} "
                         "was trained with: make the TFRecords with it (python -m pipelines.create_pretraining_data "
                         f"--vocab {source.vocab}) and pass --train_files/--eval_files")
    return {"backbone_overrides": {**sizes, **config.backbone_overrides}, "vocab": config.vocab or source.vocab}


# Backbone settings that are the run's own settings (flags), not --override's, and how to set them.
OWN_FLAGS = {"halting": "--halting", "share_weights": "--unshared", "execution": "--execution"}
_OWN_USE = {"halting": "--halting act or --halting none", "execution": "--execution NAME",
            "share_weights": "--unshared for distinct layers, nothing for shared ones (the default)"}
_BOUNDS = {"num_segments": (2, "an integer >= 2: pre-training's sentence pairs are segments 0 and 1"),  # (at least)
           "initializer_range": (1e-12, "a standard deviation > 0"), "layer_norm_epsilon": (1e-30, "a number > 0")}


def _check_overrides(overrides, preset_backbone):
    """--override keys must be backbone settings, with values of the preset's type."""
    if not isinstance(overrides, dict):  # (a --config file's "backbone_overrides": null)
        raise ValueError(f"backbone_overrides must be an object of backbone settings ({{}} for none), got "
                         f"{json.dumps(overrides)}")
    known = sorted(BACKBONE_SETTINGS)
    for key, value in overrides.items():
        if key in OWN_FLAGS:  # backbone_config() sets them from their flags: an override would be dropped
            raise ValueError(f"--override {key}={value}: {key} is set by its own flag, not by --override: drop the "
                             f"override and use {_OWN_USE[key]}")
        if key == "return_details":  # (what the model returns, asked by each caller: no setting of a run)
            raise ValueError(f"--override {key}={json.dumps(value)}: what the model returns is asked by each command "
                             "(the analyses ask for its per-iteration details), not set for a run: drop the override")
        run = [settings.flag_name(f) for f in dataclasses.fields(PretrainConfig)
               if key in (f.name, f.metadata.get("flag"))]  # (--override tau=0.1: the run's own setting)
        if key not in known:
            raise ValueError(f"--override {key}={json.dumps(value)}: a setting of the run, not of the backbone: use "
                             f"{run[0]} {json.dumps(value)}" if run else f"--override {key}: not a backbone setting; "
                             f"known: {', '.join(k for k in known if k not in OWN_FLAGS)}")
        if isinstance(value, float) and not math.isfinite(value) or str(value).strip().lower().lstrip("+-") in (
                "inf", "infinity", "nan"):  # (a nan bias: a nan loss at the first update; "inf" is no JSON number)
            raise ValueError(f"--override {key}={value}: not a finite number; give one")
        if key in _BOUNDS and (isinstance(value, bool) or not isinstance(value, int if key == "num_segments" else (
                int, float)) or value < _BOUNDS[key][0]):
            raise ValueError(f"--override {key}={json.dumps(value)}: {key} must be {_BOUNDS[key][1]}")
        like = preset_backbone.get(key)
        if like is None:
            continue
        kinds = {bool: (bool,), int: (int,), float: (int, float), str: (str,)}.get(type(like), (type(like),))
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            words = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
            got = words.get(type(value), f"a {type(value).__name__}")
            raise ValueError(f"--override {key}={json.dumps(value)} (or backbone_overrides in a --config file): "
                             f"expected {words.get(type(like), type(like).__name__)}, got {got} (the preset has "
                             f"{json.dumps(like)})")


def fixed_depth_conflict(values, given=(), flag=lambda name: name):
    """Why ponder settings cannot go with a fixed-depth run (halting "none": every token runs N_max,
    so nothing weighs, steers or shapes the halting), or None. The one rule, for the config's values
    and for typed flags: `values` holds the settings as attributes (a config, or the parsed flags);
    a setting whose value would shape the halting (the MLM objective, the KL weight, a depth target)
    is refused from any source, and every PONDER_SETTINGS name in `given` (the flags typed, named by
    `flag`) whatever its value, since nothing would read it. A saved run's file is not typed."""
    if values.halting != "none":
        return None
    typed = [flag(name) for name in PONDER_SETTINGS if name in given and getattr(values, name) is not None]
    if typed:
        return (f"{', '.join(typed)}: --halting none runs every token to N_max, so there is no ponder cost to "
                "weigh or steer; drop them")
    shaping = [(name, getattr(values, name)) for name, off in (("mlm_objective", "final"), ("kl_weight", 0),
                                                                 ("target_iterations", None), ("target_pieces", "all"),
                                                                 ("target_control", "tau"))
               if getattr(values, name) not in (None, off)]
    if shaping:
        name, value = shaping[0]
        what = "steers the ponder cost of ACT halting" if name.startswith("target_") else \
            "shapes the halting distribution of ACT"
        return f"{name} {value} {what}; --halting none runs every token to N_max (drop it)"
    return None


def _check_together(config):
    """The rules between settings, on the values given (None: the preset's, checked once resolved)."""
    steps, tau, target = config.steps, config.ponder_cost_weight, config.target_iterations
    given_target = target is not None
    if not given_target and config.halting != "none":  # the preset's depth target (the english preset's 3)
        target = get_preset(config.preset).training.get("target_iterations")
    if steps is not None and config.warmup_steps is not None and config.warmup_steps > steps:
        raise ValueError(f"warmup_steps must be in [0, steps={steps}], got {config.warmup_steps}")
    words, nonnegative = checks.flag_rule(">=0")
    if tau is not None and tau != AUTO and (isinstance(tau, bool) or not isinstance(tau, (int, float)) or
                                            not nonnegative(tau)):
        raise ValueError(f"ponder_cost_weight (--tau) must be {words} or {AUTO!r}, got {checks.shown_value(tau)}")
    start = config.ponder_warmup_start
    if config.halting == "act" and None not in (steps, start) and start > steps and tau not in (0, 0.0):
        raise ValueError(f"ponder_warmup_start {start} is after steps={steps}: the ponder cost would never switch "
                         "on; lower it, or pass --tau 0 for no ponder cost")
    conflict = fixed_depth_conflict(config)
    if conflict:
        raise ValueError(conflict)
    _check_depth_target(config, target, given_target)
    rate, scale = config.learning_rate, config.halting_learning_rate_scale
    words, a_learning_rate = checks.flag_rule("learning_rate")
    if None not in (rate, scale) and not a_learning_rate(rate * scale):
        raise ValueError(f"halting_learning_rate_scale {scale:.12g} gives the halting unit a learning rate of "
                         f"{rate * scale:.12g} (x learning_rate {rate:.12g}): it must be {words}")
    weight = config.halting_signal_weight
    if weight not in (None, 1.0) and config.mlm_objective not in (None, "final_and_halting"):
        raise ValueError(f"halting_signal_weight {weight} weighs final_and_halting's held mixture; --mlm_objective "
                         f"{config.mlm_objective} has none (drop it, or pass --mlm_objective final_and_halting)")
    if config.execution == "gather" and config.jit_compile:  # the one answer, whoever chose gather
        raise ValueError("--execution gather has dynamic shapes, which XLA does not compile (the demo preset's "
                         "execution is gather): with --jit_compile pass --execution static or bucket (static "
                         "widths), or drop --jit_compile")
    batch = config.global_batch_size
    if None not in (batch, config.micro_batch_size):
        accumulation(config, replicas=1)  # the replicas are known in `preflight`, which checks again
    if None not in (batch, config.input_streams) and batch % config.input_streams:
        raise ValueError(f"input_streams must be >= 1 and divide the global batch {batch}, got {config.input_streams}")


def _check_depth_target(config, target, given_target):
    """The rules of --target_iterations (`target`: given, or the preset's) and the settings that steer toward it."""
    tau = config.ponder_cost_weight
    if config.target_control == "signed" and (target is None or tau == AUTO):
        raise ValueError("--target_control signed steers tau, the multiplier of the depth target, from a given start: "
                         "give --target_iterations and a number for --tau (e.g. 0)"
                         + (f", not {AUTO!r}" if tau == AUTO else ""))
    if config.target_pieces == "unmasked" and target is None:
        raise ValueError("--target_pieces unmasked says whose mean depth --target_iterations holds: give "
                         "--target_iterations")
    floored = tau not in (None, AUTO) and tau < TAU_RANGE[0]  # (0, or 1.2e-38: at the floor alike)
    if given_target and floored and config.target_control == "tau" and config.halting == "act":
        raise ValueError(f"--tau {tau:g} with --target_iterations: --target_control tau moves tau in log space from "
                         f"its start, which {tau:g} puts at the floor {TAU_RANGE[0]:g} (hundreds of updates from any "
                         "effect): give a start (--tau auto, or e.g. 0.001), or --target_control signed, whose tau may "
                         "start at 0")
    if config.kl_weight and target is None:
        raise ValueError(f"kl_weight {config.kl_weight} pulls each token's halting distribution toward a geometric "
                         "prior whose mean is --target_iterations: give --target_iterations")
    if target is not None:
        n_max = config.backbone_config()["max_iterations"]
        if not 1 <= target <= n_max:
            source = (f"--override max_iterations={n_max} (backbone_overrides)" if "max_iterations" in
                      config.backbone_overrides else f"the {config.preset} preset's")
            whose = "" if given_target else f" (the {config.preset} preset's)"
            raise ValueError(f"target_iterations must be a number in [1, max_iterations={n_max}], got {target!r}"
                             f"{whose} (N_max = {n_max}: {source})")


def accumulation(config, replicas, workers=1):
    """Micro-batches per update on each replica (global / (micro x replicas)); the global batch must be
    whole micro-batches on every replica, and a job of several workers reads one input stream each."""
    per_update = config.micro_batch_size * replicas
    if config.global_batch_size % per_update:
        raise ValueError(f"global batch {config.global_batch_size} is not divisible by micro-batch "
                         f"{config.micro_batch_size} x {replicas} replica(s) = {per_update}")
    if workers > 1 and config.input_streams != workers:
        raise ValueError(f"input_streams {config.input_streams}: a job of {workers} workers reads {workers} streams, "
                         "one each")
    return config.global_batch_size // per_update


def check_batch_fits(config, train_files, count_records):
    """A global batch larger than the training instances (`count_records(files, at_most)`) would repeat
    instances within every update."""
    available = count_records(train_files, config.global_batch_size)
    if available < config.global_batch_size:
        raise ValueError(f"global batch {config.global_batch_size} is larger than the {available} training instances "
                         f"of {len(train_files)} file(s) ({train_files[0]} ...): every update would read each one "
                         f"{config.global_batch_size / available:.0f} times; pass a --global_batch_size of at most "
                         f"{available}, or make more data")
