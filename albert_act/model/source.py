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
public checkpoints' weights are read by `albert_act.model.albert_checkpoints`.

Weights are matched by variable path, so a backbone loads from any source, and a whole model
(pre-training or classifier) from a source that holds its heads. The halting can differ from the
source's (`halting=`): ACT over a fixed-depth checkpoint gets a new halting unit (its initializer,
`halting_bias_initializer`), a fixed-depth model over an ACT one drops it.
"""

import dataclasses
import functools
import os

import tensorflow as tf

from albert_act.base import artifacts, cli
from albert_act.base.artifacts import (ASSETS, CHECKPOINTS, CONFIG, EXPORT, EXPORT_INFO, FINETUNED_INFO, HF_CONFIG,
                                  HF_VOCAB, HF_WEIGHTS, KERAS_HUB_CONFIG, KERAS_HUB_VOCAB, KERAS_HUB_WEIGHTS,
                                  SAVED_MODEL, TF1_CONFIG, TF1_VOCAB, VOCAB, WEIGHTS)
from albert_act.model.albert_checkpoints import read_albert_checkpoint, read_albert_config
from albert_act.model.backbone import AlbertActBackbone
from albert_act.model.classifier import AlbertActClassifier
from albert_act.model.halting import ponder_weight_in_force
from albert_act.model.pretraining_model import AlbertActPretrainingModel
from pipelines.tokenizer import Tokenizer

PUBLIC_KINDS = ("huggingface", "tf1-checkpoint", "keras-hub-preset")
KINDS = ("pretraining-run", "finetuned", "export") + PUBLIC_KINDS
HALTING_UNIT = "encoder/halting_unit/"


def kind_of(path):
    """One of `KINDS`; a ValueError names what each needs otherwise. The one kind check."""
    def has(*names):
        return all(tf.io.gfile.exists(os.path.join(path, name)) for name in names)

    if has(CONFIG, CHECKPOINTS):
        return "pretraining-run"
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
    inside = _run_holding(path)
    if inside:
        raise ValueError(f"{path} is inside the pre-training run {inside}: give the run dir itself (its newest "
                         "intact checkpoint is read)")
    raise ValueError(f"{path}: not a pre-training run dir ({CONFIG} + {CHECKPOINTS}/), a fine-tuning dir "
                     f"({FINETUNED_INFO}), an albert-act SavedModel ({ASSETS}/{EXPORT_INFO}), or a public ALBERT "
                     f"checkpoint: Hugging Face ({HF_CONFIG} + {HF_WEIGHTS}), TF1 ({TF1_CONFIG} + model.ckpt*.index) "
                     f"or keras-hub ({KERAS_HUB_CONFIG} + {KERAS_HUB_WEIGHTS})")


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


def find_export(path):
    """The export dir at `path`: `path` itself, its highest numeric version (TensorFlow Serving's
    <model_base_path>/<version>), or that inside <path>/export (a fine-tuning dir); None if none."""
    for base in (path, os.path.join(path, EXPORT)):
        if tf.io.gfile.exists(os.path.join(base, ASSETS, EXPORT_INFO)):
            return base
        if tf.io.gfile.isdir(base):
            versions = [int(v.rstrip("/")) for v in tf.io.gfile.listdir(base) if v.rstrip("/").isdigit()]
            for version in sorted(versions, reverse=True):
                candidate = os.path.join(base, str(version))
                if tf.io.gfile.exists(os.path.join(candidate, ASSETS, EXPORT_INFO)):
                    return candidate
    return None


def _read_info(path, kind):
    """{"kind": "pretraining" | "classifier", "backbone": config, ...} of a source of `kind`."""
    if kind in PUBLIC_KINDS:  # a fixed-depth pre-training model, from its config file alone
        return {"kind": "pretraining", "backbone": read_albert_config(path, kind), "source_format": kind}
    if kind == "pretraining-run":
        run = artifacts.read_json(os.path.join(path, CONFIG))
        return {"kind": "pretraining", "backbone": run["backbone"], "pretraining": run}
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
        kind = kind_of(path)
        candidates = _vocab_candidates(path, kind)
        vocab = next((c for c in candidates if tf.io.gfile.exists(c)), None)
        return cls(path, kind, _read_info(path, kind), vocab, candidates)

    @functools.cached_property
    def checkpoint(self):
        """The `albert_checkpoints.AlbertCheckpoint` of a public checkpoint (its weights, the heads
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

    @functools.cached_property
    def run_checkpoint(self):
        """(update, prefix, model weights) of a pre-training run's newest intact checkpoint (`newest_intact`)."""
        return newest_intact(self.path)

    def trained_tau(self):
        """(tau, update): the ponder-cost weight a pre-training run had reached at the checkpoint its weights
        come from (--tau auto's calibration and --target_iterations' steering included; the warm-up ramp,
        over by then in a long run, not applied; 0 at fixed depth, and before auto's calibration), or
        None for other sources and for checkpoints without it."""
        if self.kind != "pretraining-run":
            return None
        update, prefix, _ = self.run_checkpoint
        settings = self.info.get("pretraining") or {}
        signed = settings.get("target_control") == "signed"
        if prefix.endswith(".npz"):  # a JAX run's
            import numpy as np

            with np.load(prefix) as data:
                stored = float(data["tau"]) + (float(data["tau_proportional"]) if signed else 0.0)
            return float(ponder_weight_in_force(stored, settings.get("halting"), signed)), update
        reader = tf.train.load_checkpoint(prefix)
        key = "ponder_cost_weight/.ATTRIBUTES/VARIABLE_VALUE"
        if key not in reader.get_variable_to_shape_map():
            return None
        stored = reader.get_tensor(key)
        proportional = "ponder_cost_weight_proportional/.ATTRIBUTES/VARIABLE_VALUE"
        if signed and proportional in reader.get_variable_to_shape_map():
            stored = stored + reader.get_tensor(proportional)
        return float(ponder_weight_in_force(stored, settings.get("halting"), signed)), update

    def tokenizer(self, vocab=None):
        """The vocabulary given (a file), or the source's own; its size must be the model's, and a file
        given where the source has its own must be that one (same size, other pieces: other ids)."""
        if vocab and not tf.io.gfile.exists(vocab):
            raise ValueError(f"--vocab {vocab}: no such file (the SentencePiece model of pre-training)")
        found = vocab or self.vocab
        if found is None:
            raise ValueError(f"no vocabulary at {' or '.join(self.vocab_searched)}; pass --vocab (the SentencePiece "
                             "model of pre-training)")
        tokenizer = Tokenizer.from_file(found)
        rows = self.info["backbone"]["vocabulary_size"]
        if tokenizer.vocabulary_size != rows:
            raise ValueError(f"{found} has {tokenizer.vocabulary_size} pieces, the model {rows}")
        if vocab and self.vocab and _read(vocab) != _read(self.vocab):
            raise ValueError(f"--vocab {vocab} is not the vocabulary {self.path} was trained with ({self.vocab}): its "
                             "ids would mean other pieces; leave --vocab out to use the model's own")
        return tokenizer

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

    def backbone(self, dropout=0.1, halting=None, max_iterations=None, **overrides):
        """(backbone, paths left at their initializer). Every backbone weight must be found, with its
        shape (see `backbone_values` for the halting unit; the pooler when the source has none, e.g.
        Hugging Face's AlbertForMaskedLM). `overrides` change settings that do not touch weights (e.g.
        return_details=True, execution="while", halting_bias_initializer=-2.0 for a new halting unit)."""
        config, values, fresh = self.backbone_values(halting, max_iterations)
        backbone = AlbertActBackbone(**{**config, "dropout": dropout, **overrides})
        return backbone, assign_weights(backbone, values, self.path, fresh)

    def pretraining_model(self, halting=None, max_iterations=None, new_heads=False, **overrides):
        """(AlbertActPretrainingModel with its MLM and SOP heads, info). info["fresh"] lists the weights
        left at their initializer: a new halting unit, the SOP head and pooler of a checkpoint without
        them (e.g. Hugging Face's AlbertForMaskedLM) and, with `new_heads`, the heads a checkpoint
        lacks altogether (e.g. an AlbertModel)."""
        if self.info["kind"] != "pretraining":
            raise ValueError(f"{self.path} holds a {self.info['kind']} model, not a pre-training one (no MLM head)")
        config, values, fresh = self.backbone_values(halting, max_iterations)
        if self.checkpoint is not None:  # a public checkpoint: its heads may be missing
            if "mlm" not in self.checkpoint.heads and not new_heads:
                raise ValueError(f"{self.path}: holds no MLM head (only the encoder, e.g. a Hugging Face AlbertModel); "
                                 "it can be fine-tuned (--init), not used for fill-mask")
            fresh += ("sop_head/",) + (("masked_lm_head/",) if new_heads else ())
        backbone = AlbertActBackbone(**{**config, "dropout": 0.0, **overrides})
        model = AlbertActPretrainingModel(backbone)
        info = {**self.info, "backbone": backbone.get_config(), "fresh": assign_weights(model, values, self.path, fresh)}
        return model, info

    def load_into(self, model, fresh=()):
        """Assigns the source's weights to a built `model` (a warm start); returns the paths left at their
        initializer, which must start with one of `fresh`. A halting unit the model has no place for
        (halting none over an ACT source) is dropped."""
        _, values, _ = self.backbone_values(halting=model.backbone.halting)
        return assign_weights(model, values, self.path, fresh)

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
            assign_weights(model, self.weights, self.path)
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


READ_ERRORS = (tf.errors.OpError, IndexError, ValueError, OSError)  # what TensorFlow raises on a damaged file


def _first_line(error):
    return f"{type(error).__name__}: {(str(error).splitlines() or [''])[0][:200]}"


def _checkpoint_weights(prefix):
    """{variable path: value} of the model weights in one checkpoint of a run; reads every tensor,
    so a damaged .index or .data file raises here (`READ_ERRORS`)."""
    reader = tf.train.load_checkpoint(prefix)
    head, tail = "model/", "/.ATTRIBUTES/VARIABLE_VALUE"
    return {name[len(head) : -len(tail)].replace(".S", "/"): reader.get_tensor(name)
            for name in reader.get_variable_to_shape_map()
            if name.startswith(head)}  # not the optimizer's or the input pipeline's state


def newest_intact(run):
    """(update, prefix, model weights) of a pre-training run's newest intact checkpoint. A damaged one (a
    corrupt .index, a truncated .data file) is named in a warning and the one before it is read, as
    pre-training's resume does; a ValueError names every damaged file when none reads."""
    directory = os.path.join(run, CHECKPOINTS)
    found = artifacts.checkpoints_on_disk(directory)
    if not found and artifacts.jax_checkpoints_on_disk(directory):
        return _newest_jax_checkpoint(run, directory)
    if not found:
        raise ValueError(f"{run}: no checkpoint in {directory}")
    state = tf.train.get_checkpoint_state(directory)
    named = state.model_checkpoint_path if state else None
    if named and not tf.io.gfile.exists(named + ".index"):
        print(f"warning: {os.path.join(directory, 'checkpoint')} names {named}, which is not there; reading the "
              "newest checkpoint on disk")
    failures = []
    for update in sorted(found, reverse=True):
        try:
            weights = _checkpoint_weights(found[update])
        except READ_ERRORS as error:
            failures.append(f"{found[update]}: unreadable ({_first_line(error)})")
            print(f"warning: {failures[-1]}; reading the checkpoint before it")
            continue
        if failures:
            print(f"read {found[update]}, the newest intact checkpoint of {run}")
        return update, found[update], weights
    raise ValueError(f"{run}: no intact checkpoint in {directory}: " + "; ".join(failures))


def _newest_jax_checkpoint(run, directory):
    """`newest_intact` of a run trained on the JAX backend (checkpoints/jax-<update>.npz)."""
    import numpy as np

    failures = []
    for update, path in sorted(artifacts.jax_checkpoints_on_disk(directory).items(), reverse=True):
        try:
            with np.load(path) as data:
                weights = {name.split("/", 1)[1]: data[name] for name in data.files
                           if name.startswith(("trainable/", "non_trainable/"))}
        except (OSError, ValueError, KeyError, EOFError) as error:
            failures.append(f"{path}: unreadable ({_first_line(error)})")
            print(f"warning: {failures[-1]}; reading the checkpoint before it")
            continue
        return update, path, weights
    raise ValueError(f"{run}: no intact checkpoint in {directory}: " + "; ".join(failures))


def load_export(path):
    """`tf.saved_model.load(path)` of an albert-act export, quietly; a damaged export (its
    variables or saved_model.pb corrupt or truncated) is a ValueError naming the file."""
    import tensorflow_text  # noqa: F401  (registers the tokenizer ops the export's graph holds)

    try:
        with cli.quiet_stderr():  # loading runs SentencePiece, which logs an INFO line
            return tf.saved_model.load(str(path))
    except READ_ERRORS as error:
        raise ValueError(f"{_damaged_part(str(path))}: damaged export, not readable ({_first_line(error)}); "
                         "export the model again from its run or fine-tuning dir") from None


def _damaged_part(path):
    """Which file of the export at `path` does not read whole: its variables (each tensor read
    through), else its saved_model.pb."""
    prefix = os.path.join(path, "variables", "variables")
    try:
        reader = tf.train.load_checkpoint(prefix)
        for name in reader.get_variable_to_shape_map():
            reader.get_tensor(name)
    except Exception:  # noqa: BLE001 (TensorFlow raises OpError, IndexError, ValueError...)
        data = sorted(tf.io.gfile.glob(prefix + ".data-*"))
        return f"{data[0] if len(data) == 1 else prefix + '.*'} (the export's weights)"
    return os.path.join(path, SAVED_MODEL)


def assign_weights(model, values, source, fresh=()):
    """Sets every weight of `model` from `values` by path; ValueError names a missing or misshapen one,
    and a stored weight of the model's own layers that the model has no place for (a config that
    does not match the checkpoint, e.g. halting=none over an ACT checkpoint).

    fresh: path prefixes that may be missing from `values`; those weights keep their initializer.
    Returns the paths left at their initializer."""
    paths = {variable.path for variable in model.weights}
    layers = {path.split("/")[0] for path in paths}
    unused = sorted(k for k in values  # (dropout's RNG state is numbered per process: not a weight)
                    if k.split("/")[0] in layers and k not in paths and "seed_generator" not in k)
    if unused:
        raise ValueError(f"{source}: holds {unused[0]} (and {len(unused) - 1} more), which the model built from "
                         "its config has no place for: does the config match the checkpoint?")
    kept = []
    for variable in model.weights:
        value = values.get(variable.path)
        if value is None and variable.path.startswith(tuple(fresh)):
            kept.append(variable.path)
            continue
        if value is None:
            raise ValueError(f"{source}: no weight for {variable.path}")
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(f"{source}: {variable.path} has shape {value.shape}, the model needs {variable.shape}")
        variable.assign(value)
    return kept
