"""What a path on disk holds, worked out once: `Source.open(path)`.

A source is one of six kinds of directory (local or gs://):

    pretraining-run    a `python -m albert_act.pretrain` run dir (config.json + checkpoints/)
    finetuned          a `python -m albert_act.finetune` output dir (classifier.json)
    export             an albert-act SavedModel (assets/albert_act_export.json)
    huggingface        a Hugging Face ALBERT dir (config.json + model.safetensors)
    tf1-checkpoint     google-research/albert's release (albert_config.json + model.ckpt*), or its prefix
    keras-hub-preset   a keras-hub AlbertBackbone or AlbertMaskedLM preset (config.json + model.weights.h5)

`Source.open` checks the kind, reads the config and finds the vocabulary, each once and only
here; the weights are read (once) when a model is built from it. Every command that takes a
model path goes through it: `albert_act.export --checkpoint`, `pretrain --init_from`, `finetune
--init`, `analyze --init`, and the GLUE submission's exports. The file names are `albert_act.base.artifacts`'s;
the weights are read by the package's other modules: a run's newest intact checkpoint by
`run_checkpoints`, a public checkpoint by `public_checkpoints`, an export by `exports`.

Weights are matched by variable path, so a backbone loads from any source, and a whole model
(pre-training or classifier) from a source that holds its heads. The halting can differ from the
source's (`halting=`): ACT over a fixed-depth checkpoint gets a new halting unit (its initializer,
`halting_bias_initializer`), a fixed-depth model over an ACT one drops it.
"""

import dataclasses
import functools
import os
import sys

import tensorflow as tf

from albert_act.base import artifacts, checks, outputs
from albert_act.base.artifacts import (ASSETS, CHECKPOINTS, CONFIG, EXPORT, EXPORT_INFO, FINETUNED_INFO, GRID,
                                       HF_CONFIG, HF_VOCAB, HF_WEIGHTS, KERAS_HUB_CONFIG, KERAS_HUB_VOCAB,
                                       KERAS_HUB_WEIGHTS, TF1_CONFIG, TF1_VOCAB, VOCAB, WEIGHTS)
from albert_act.io.exports import find_export, load_export
from albert_act.io.public_checkpoints import read_albert_checkpoint, read_albert_config
from albert_act.io.run_checkpoints import earlier_update_read, inside_run, newest_weights, stored_tau
from albert_act.model.backbone import SETTINGS as BACKBONE_SETTINGS, AlbertActBackbone
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.halting import ponder_weight_in_force
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from pipelines.tokenizer import Tokenizer

PUBLIC_KINDS = ("huggingface", "tf1-checkpoint", "keras-hub-preset")
KINDS = ("pretraining-run", "finetuned", "export") + PUBLIC_KINDS
HALTING_UNIT = "encoder/halting_unit/"
# Weights a warm start (`Source.load_into`) may lack: a new halting unit, and heads the source does not have.
INIT_FRESH = (HALTING_UNIT, "pooler/", "sop_head/", "masked_lm_head/")


def kind_of(path):
    """One of `KINDS`; a ValueError names what each needs otherwise. The one kind check."""
    def has(*names):
        return all(tf.io.gfile.exists(os.path.join(path, name)) for name in names)

    if not tf.io.gfile.exists(path) and not tf.io.gfile.exists(path + ".index"):  # (a TF1 prefix is no file)
        if aside := artifacts.set_aside_above(path):  # (the export of a fine-tuning dir set aside)
            raise ValueError(f"{path}: not there now, as {aside}")
        raise ValueError(f"{path}: no such file or folder (a model: a pre-training run dir, a fine-tuning dir, an "
                         "export or a public ALBERT checkpoint)")
    if has(CONFIG, CHECKPOINTS):
        return "pretraining-run"
    if (aside := artifacts.set_aside(path)) and not has(artifacts.WEIGHTS, FINETUNED_INFO):  # (a part: not whole)
        raise ValueError(f"{path}: {aside}")
    if has(FINETUNED_INFO):
        return "finetuned"
    if has(os.path.join(ASSETS, EXPORT_INFO)):
        return "export"
    if has(TF1_CONFIG) or (tf.io.gfile.exists(path + ".index")  # a TF1 checkpoint prefix
                           and tf.io.gfile.exists(os.path.join(os.path.dirname(path), TF1_CONFIG))):
        return "tf1-checkpoint"
    if has(HF_CONFIG, HF_WEIGHTS):
        return "huggingface"
    if has(KERAS_HUB_CONFIG, KERAS_HUB_WEIGHTS):
        return "keras-hub-preset"
    if has(GRID):  # a --grid dir: each point is a fine-tuning dir, and the best one's export is copied beside
        raise ValueError(f"{path} is a fine-tuning --grid dir: give its best point's export, "
                         f"{os.path.join(path, EXPORT, '1')} (there once the grid has finished), or one point's dir "
                         f"under {os.path.join(path, GRID)}/")
    version = find_export(path)  # a TensorFlow Serving base path: its numbered versions
    if version:
        raise ValueError(f"{path} holds albert-act SavedModel versions (a TensorFlow Serving base path): give one, "
                         f"e.g. the newest, {version}")
    if has(CONFIG) and _run_config(os.path.join(path, CONFIG)):  # a pre-training run before its first checkpoint
        raise ValueError(f"{path} is a pre-training run with no checkpoint yet ({CONFIG}, no {CHECKPOINTS}/: still "
                         "starting, or stopped before its first): give it the time to write one, or another model")
    inside = _run_holding(path)
    if inside:
        raise ValueError(inside_run(path, inside))
    above = [os.path.dirname(os.path.normpath(path)), os.path.dirname(os.path.dirname(os.path.normpath(path)))]
    export = next((f for f in above if f and tf.io.gfile.exists(os.path.join(f, ASSETS, EXPORT_INFO))), None)
    if export:  # its saved_model.pb, variables/ (or a file in it), assets/
        raise ValueError(f"{path} is inside the SavedModel {export}: give that")
    raise ValueError(f"{path}: not a pre-training run dir ({CONFIG} + {CHECKPOINTS}/), a fine-tuning dir "
                     f"({FINETUNED_INFO}), an albert-act SavedModel ({ASSETS}/{EXPORT_INFO}), or a public ALBERT "
                     f"checkpoint: Hugging Face ({HF_CONFIG} + {HF_WEIGHTS}), TF1 ({TF1_CONFIG} + model.ckpt*.index) "
                     f"or keras-hub ({KERAS_HUB_CONFIG} + {KERAS_HUB_WEIGHTS})")


def _run_config(path):
    """Whether the config.json at `path` is a pre-training run's (not a Hugging Face or keras-hub model's)."""
    try:
        return artifacts.is_run_record(artifacts.read_json(path))
    except (ValueError, OSError):
        return False


def _read(path):
    with tf.io.gfile.GFile(path, "rb") as f:
        return f.read()


def _run_holding(path):
    """The pre-training run whose checkpoints/ folder is `path` or holds it (one checkpoint), or None."""
    folder = str(path).rstrip("/")
    for _ in range(2):  # <run>/checkpoints, or <run>/checkpoints/ckpt-N
        run = os.path.dirname(folder)
        if os.path.basename(folder) == CHECKPOINTS and tf.io.gfile.exists(os.path.join(run, CONFIG)):
            return run
        folder = run
    return None


def _read_info(path, kind):
    """{"kind": "pretraining" | "classifier", "backbone": config, ...} of a source of `kind`."""
    if kind in PUBLIC_KINDS:  # a fixed-depth pre-training model, from its config file alone
        return {"kind": "pretraining", "backbone": read_albert_config(path, kind), "source_format": kind}
    if kind == "pretraining-run":
        run = artifacts.read_json(os.path.join(path, CONFIG))
        return {"kind": "pretraining", "backbone": run.get("backbone") if isinstance(run, dict) else None,
                "pretraining": run}  # (no backbone: `_check_backbone` names the file)
    if kind == "finetuned":
        return artifacts.read_json(os.path.join(path, FINETUNED_INFO))
    info = artifacts.read_json(os.path.join(path, ASSETS, EXPORT_INFO))
    if isinstance(info.get("pretraining"), dict):  # its paths are written relative to the export
        info["pretraining"] = artifacts.absolute_paths(info["pretraining"], path)
    return info


def _vocab_candidates(path, kind):
    """Where the vocabulary of a source of `kind` lies, in the order to try."""
    if kind == "tf1-checkpoint":
        directory = path if tf.io.gfile.isdir(path) else os.path.dirname(path)
        return [os.path.join(directory, TF1_VOCAB), os.path.join(directory, HF_VOCAB)]
    names = {"huggingface": [HF_VOCAB], "keras-hub-preset": [KERAS_HUB_VOCAB]}.get(kind, [VOCAB, f"{ASSETS}/{VOCAB}"])
    return [os.path.join(path, name) for name in names]


SIZES = ("vocabulary_size", "num_heads", "embedding_dim", "hidden_dim", "intermediate_dim", "max_iterations",
         "max_sequence_length")


def _check_backbone(config, where):
    """A model's recorded backbone settings, before anything is built from them: a setting the backbone
    does not take, or a size that is no whole number > 0 (a hand-edited file), is named with its file."""
    if not isinstance(config, dict):
        raise ValueError(f"{where}: no backbone settings (a dict) where the model's are recorded; was the file "
                         "edited? Restore it")
    taken = set(BACKBONE_SETTINGS) | {"name", "trainable", "dtype"}
    unknown = sorted(set(config) - taken)
    if unknown:
        raise ValueError(f"{where}: the backbone settings hold {unknown[0]!r}, which the model does not take; was "
                         "the file edited? Restore it")
    bad = next((k for k in SIZES if k in config and (isinstance(config[k], bool) or not isinstance(config[k], int)
                                                      or config[k] < 1)), None)
    if bad:
        raise ValueError(f"{where}: the backbone's {bad} is {config[bad]!r}, not a whole number >= 1; was the file "
                         "edited? Restore it")


def _backbone_kwargs(config):
    return {k: v for k, v in config.items() if k not in ("name", "trainable", "dtype")}


@dataclasses.dataclass
class Source:
    """A model on disk. path; kind (one of `KINDS`); info: {"kind": "pretraining" | "classifier",
    "backbone": its config, ...} (a run adds "pretraining": its config; a fine-tuning dir or an
    export its task, labels and settings); vocab: its SentencePiece model, or None."""

    path: str
    kind: str
    info: dict
    vocab: str | None
    vocab_searched: list

    @classmethod
    def open(cls, path):
        path = str(path)
        checks.pattern_free(path)
        kind = kind_of(path)
        candidates = _vocab_candidates(path, kind)
        vocab = next((c for c in candidates if tf.io.gfile.exists(c)), None)
        source = cls(path, kind, _read_info(path, kind), vocab, candidates)
        _check_backbone(source.info.get("backbone"), source.config_file or path)
        return source

    @functools.cached_property
    def checkpoint(self):
        """The `public_checkpoints.AlbertCheckpoint` of a public checkpoint (its weights, the heads
        found, the names ignored, the weights it lacks), else None."""
        if self.kind not in PUBLIC_KINDS:
            return None
        return read_albert_checkpoint(self.path, self.kind, self.info["backbone"])

    @functools.cached_property
    def weights(self):
        """{variable path: numpy value} of every model weight stored."""
        if self.checkpoint is not None:
            return self.checkpoint.weights
        if self.kind == "pretraining-run":
            return self.run_checkpoint[2]
        if self.kind == "finetuned":
            return {v.path: v.numpy() for v in self.classifier().variables}
        return {v.name.removesuffix(":0"): v.numpy() for v in load_export(self.path).variables}

    @property
    def weights_file(self):
        """The file the weights are read from, as errors about them name it: a run's newest intact
        checkpoint, an export's variables/, or the source itself."""
        if self.kind == "pretraining-run" and self.checkpoint is None:
            return self.run_checkpoint[1]
        if self.kind == "export":
            return os.path.join(self.path, "variables")
        return self.path

    @property
    def config_file(self):
        """The file that describes the model the weights are assigned to (None for public checkpoints)."""
        return {"pretraining-run": os.path.join(self.path, CONFIG), "finetuned": os.path.join(self.path, FINETUNED_INFO),
                "export": os.path.join(self.path, ASSETS, EXPORT_INFO)}.get(self.kind)

    def _assign(self, model, values, fresh=()):
        return assign_weights(model, values, self.weights_file, fresh, described_by=self.config_file)

    @property
    def train_shards(self):
        """The fingerprints of the training shards of the pre-training the model comes from, as its export, its
        run's config.json or a fine-tuning of it carries them; None where not known."""
        return self.info.get(artifacts.TRAIN_SHARDS) or (self.info.get("pretraining") or {}).get(artifacts.TRAIN_SHARDS)

    @functools.cached_property
    def run_checkpoint(self):
        """(update, path, model weights) of a pre-training run's newest intact checkpoint; of a run still training
        (another process holds its lock), or stopped before its --steps, a note says which update is read."""
        steps = (self.info.get("pretraining") or {}).get("steps")
        found = newest_weights(self.path, steps)
        holder = outputs.held_elsewhere(outputs.lock_path(self.path)) if "://" not in self.path else None
        if holder is not None:
            print(f"note: {self.path} is still training{holder}: its newest checkpoint now, of update {found[0]:,}, "
                  "is read", file=sys.stderr, flush=True)
        elif isinstance(steps, int) and found[0] < steps:  # (stopped, or killed: its command resumes it; or damaged)
            print(f"note: {earlier_update_read(self.path, found[0], steps)}", file=sys.stderr, flush=True)
        return found

    def trained_tau(self):
        """(tau, update): the ponder-cost weight a pre-training run had reached at the checkpoint its weights
        come from (--tau auto's calibration and --target_iterations' steering included; the warm-up ramp,
        over by then in a long run, not applied; 0 at fixed depth, and before auto's calibration), or
        None for other sources and for checkpoints without it."""
        if self.kind != "pretraining-run":
            return None
        update, path, _ = self.run_checkpoint
        settings = self.info.get("pretraining") or {}
        signed = settings.get("target_control") == "signed"
        stored = stored_tau(path, signed)
        if stored is None:
            return None
        return float(ponder_weight_in_force(stored, settings.get("halting"), signed)), update

    def tokenizer(self, vocab=None):
        """The vocabulary given (a file), or the source's own; its size must be the model's, and a file
        given where the source has its own must be that one (same size, other pieces: other ids)."""
        if vocab and not tf.io.gfile.exists(vocab):
            raise ValueError(f"--vocab {vocab}: no such file (the SentencePiece model of pre-training)")
        found = vocab or self.vocab
        if found is None:
            raise ValueError(f"no vocabulary at {' or '.join(self.vocab_searched)}; put the SentencePiece model of "
                             "pre-training there, or pass --vocab where the command takes one (export, analyze, "
                             "finetune)")
        tokenizer = Tokenizer.from_file(found)
        rows = self.info["backbone"]["vocabulary_size"]
        if tokenizer.vocabulary_size != rows:
            raise ValueError(f"{found} has {tokenizer.vocabulary_size} pieces, the model {rows}")
        if vocab and self.vocab and _read(vocab) != _read(self.vocab):
            raise ValueError(f"--vocab {vocab} is not the vocabulary {self.path} was trained with ({self.vocab}): its "
                             "ids would mean other pieces; leave --vocab out to use the model's own")
        if self.kind == "pretraining-run" and found == self.vocab:
            self._check_own_vocab(tokenizer)
        return tokenizer

    def _check_own_vocab(self, tokenizer):
        """A run's vocab.model against its own training records, where they are still there (a replaced vocab.model
        would tokenize every served text into other ids, and its records be blamed)."""
        from pipelines.record_vocabulary import check_records_vocabulary

        settings = self.info.get("pretraining") or {}
        patterns = settings.get("train_files") or []
        found = next((path for pattern in patterns for path in sorted(tf.io.gfile.glob(pattern))[:1]), None)
        try:
            if found:
                check_records_vocabulary(found, tokenizer.model_proto, os.path.basename(self.vocab))
        except ValueError as error:
            if "another vocabulary" not in str(error):
                return  # (records unreadable now: their own checks name them where they are read)
            given = f" (the run was given {settings['vocab']})" if settings.get("vocab") else ""
            raise ValueError(f"{self.vocab} is not the vocabulary {self.path}'s training records ({found}) were made "
                             f"with: its ids would mean other pieces. Was it replaced? Put the data's vocabulary "
                             f"back{given}") from None

    def backbone_values(self, halting=None, max_iterations=None):
        """(backbone config, weights, fresh prefixes) with the halting and depth cap asked for.

        halting "act" over a fixed-depth source: the halting unit is new (fresh). "none" over an ACT
        source: its halting unit is dropped. max_iterations: the depth cap (for halting="none", the
        depth); a checkpoint of unshared blocks keeps its own, one block per iteration.
        """
        config, values, fresh = _backbone_kwargs(self.info["backbone"]), self.weights, ()
        if halting is not None and halting != config.get("halting", "act"):
            config["halting"] = halting
            if halting == "act":
                fresh = (HALTING_UNIT,)
            else:
                values = {k: v for k, v in values.items() if not k.startswith(HALTING_UNIT)}
        if max_iterations is not None and max_iterations != config["max_iterations"]:
            if not config.get("share_weights", True):
                raise ValueError(f"{self.path}: a model of {config['max_iterations']} unshared blocks has that "
                                 f"depth; max_iterations={max_iterations} needs shared weights")
            config["max_iterations"] = max_iterations
        missing = tuple(self.checkpoint.new) if self.checkpoint is not None else ()  # e.g. no pooler
        return config, values, fresh + missing

    def xla_settings(self, jit_compile):
        """The `backbone`/`pretraining_model` overrides under which the model compiles under XLA (--jit_compile,
        a TPU): gather's widths change with the running tokens, which XLA does not compile (it aborts the process),
        and an export's sparse loop (TensorFlow's ragged ops) has no XLA kernels, so such a model runs the static
        loop, which gives the same numbers; none otherwise."""
        running_only = self.info["backbone"].get("execution") in ("gather", "sparse")
        return {"execution": "static"} if jit_compile and running_only else {}

    def backbone(self, dropout=0.1, halting=None, max_iterations=None, **overrides):
        """(backbone, paths left at their initializer). Every backbone weight must be found, with its
        shape (see `backbone_values` for the halting unit; the pooler when the source has none, e.g.
        Hugging Face's AlbertForMaskedLM). `overrides` change settings that do not touch weights (e.g.
        return_details=True, execution="while", halting_bias_initializer=-2.0 for a new halting unit)."""
        config, values, fresh = self.backbone_values(halting, max_iterations)
        backbone = AlbertActBackbone(**{**config, "dropout": dropout, **overrides})
        return backbone, self._assign(backbone, values, fresh)

    def pretraining_model(self, halting=None, max_iterations=None, new_heads=False, **overrides):
        """(AlbertActPretrainingModel with its MLM and SOP heads, info). info["fresh"] lists the weights
        left at their initializer: a new halting unit, the SOP head and pooler of a checkpoint without
        them (e.g. Hugging Face's AlbertForMaskedLM) and, with `new_heads`, the heads a checkpoint
        lacks altogether (e.g. an AlbertModel)."""
        if self.info["kind"] != "pretraining":
            if self.kind == "export" and any("masked_lm_head" in name for name in self.weights):  # (its record edited)
                raise ValueError(f"{self.config_file} says the export holds a {self.info['kind']} model, yet its "
                                 "weights hold an MLM head (a pre-training model's): was the file edited? Restore it "
                                 "(export the run again)")
            raise ValueError(f"{self.path} holds a {self.info['kind']} model, not a pre-training one (no MLM head)")
        config, values, fresh = self.backbone_values(halting, max_iterations)
        if self.checkpoint is not None:  # a public checkpoint: its heads may be missing
            if "mlm" not in self.checkpoint.heads and not new_heads:
                raise ValueError(f"{self.path}: holds no MLM head (only the encoder, e.g. a Hugging Face AlbertModel); "
                                 "it can be fine-tuned (--init), not used for fill-mask")
            fresh += ("sop_head/",) + (("masked_lm_head/",) if new_heads else ())
        backbone = AlbertActBackbone(**{**config, "dropout": 0.0, **overrides})
        model = AlbertActPretrainingModel(backbone)
        info = {**self.info, "backbone": backbone.get_config(), "fresh": self._assign(model, values, fresh)}
        return model, info

    def load_into(self, model, fresh=()):
        """Assigns the source's weights to a built `model` (a warm start); returns the paths left at their
        initializer, which must start with one of `fresh`. A halting unit the model has no place for
        (halting none over an ACT source) is dropped."""
        _, values, _ = self.backbone_values(halting=model.backbone.halting)
        return self._assign(model, values, fresh)

    def classifier(self, dropout=None):
        """The `AlbertActClassifier` of a fine-tuning dir (its best dev epoch) or a classifier export."""
        if self.info["kind"] != "classifier":
            raise ValueError(f"{self.path} holds a {self.info['kind']} model, not a classifier")
        backbone = self.info["backbone"]
        self._check_classifier_info(backbone)
        model = AlbertActClassifier(AlbertActBackbone(**_backbone_kwargs(backbone), name=backbone["name"]),
                                    num_classes=self.info["num_classes"],
                                    dropout=self.info.get("dropout", 0.0) if dropout is None else dropout)
        if self.kind != "finetuned":
            self._assign(model, self.weights)
            return model
        weights = os.path.join(self.path, WEIGHTS)
        if not tf.io.gfile.exists(weights):
            raise ValueError(f"{self.path}: no {WEIGHTS} (fine-tuning did not finish an epoch)")
        try:
            model.load_weights(weights)
        except (OSError, RuntimeError, KeyError, ValueError) as error:  # HDF5: a truncated, corrupt or foreign file
            raise ValueError(f"{weights}: not a readable Keras weights file ({type(error).__name__}: "
                             f"{str(error).splitlines()[0][:200] if str(error) else 'damaged'}); fine-tune again, or "
                             "restore the file") from None
        if not tf.io.gfile.exists(os.path.join(self.path, artifacts.RESULTS)):  # (stopped, killed: its best epoch so far)
            print(f"note: {self.path} is a fine-tuning that did not finish (no {artifacts.RESULTS}): its weights are its "
                  "best epoch's so far (to finish it, run its command again)", file=sys.stderr, flush=True)
        return model

    def _check_classifier_info(self, backbone):
        """A classifier's recorded labels and length must fit its model (a hand-edited classifier.json or
        export record would otherwise fail later, without naming the file)."""
        where = os.path.join(self.path, FINETUNED_INFO if self.kind == "finetuned" else f"{ASSETS}/{EXPORT_INFO}")
        classes, labels = self.info.get("num_classes"), self.info.get("labels") or []
        if isinstance(classes, int) and len(labels) != (classes if classes > 1 else 0):
            raise ValueError(f"{where}: {len(labels)} labels ({', '.join(map(str, labels[:5]))}) for a model with "
                             f"{classes} outputs (num_classes); was the file edited? Fine-tune again, or restore it")
        length, most = self.info.get("max_seq_length"), backbone.get("max_sequence_length")
        if isinstance(length, int) and isinstance(most, int) and length > most:
            raise ValueError(f"{where}: max_seq_length {length} exceeds the model's {most} (max_sequence_length); "
                             "was the file edited? Fine-tune again, or restore it")


def assign_weights(model, values, source, fresh=(), described_by=None):
    """Sets every weight of `model` from `values` by path; ValueError names a missing or misshapen one,
    and a stored weight of the model's own layers that the model has no place for (a config that
    does not match the checkpoint, e.g. halting=none over an ACT checkpoint).

    fresh: path prefixes that may be missing from `values`; those weights keep their initializer.
    described_by: the file the model was built from (a run's config.json), named when a shape differs.
    Returns the paths left at their initializer."""
    paths = {variable.path for variable in model.weights}
    layers = {path.split("/")[0] for path in paths}
    unused = sorted(k for k in values  # (dropout's RNG state is numbered per process: not a weight)
                    if k.split("/")[0] in layers and k not in paths and "seed_generator" not in k)
    if unused:
        raise ValueError(f"{source}: holds {unused[0]} (and {len(unused) - 1} more), which the model built from "
                         f"{described_by or 'its config'} has no place for: does the config match the checkpoint?")
    kept = []
    for variable in model.weights:
        value = values.get(variable.path)
        if value is None and variable.path.startswith(tuple(fresh)):
            kept.append(variable.path)
            continue
        if value is None:
            raise ValueError(f"{source}: no weight for {variable.path}")
        if tuple(value.shape) != tuple(variable.shape):
            built = f" (built from {described_by})" if described_by else ""
            raise ValueError(f"{source}: {variable.path} has shape {tuple(value.shape)}, the model{built} needs "
                             f"{tuple(variable.shape)}: the weights are another model's"
                             + (f"; was the file copied from another run, or {described_by} edited? Restore the two "
                                "together" if described_by else ""))
        variable.assign(value)
    return kept
