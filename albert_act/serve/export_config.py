"""Export settings, in one place: `ExportConfig` (a frozen dataclass: every setting with its default,
one line of help, its flag and its range; it checks its own values when built, and `export`'s
flags are made from it). An export records the config it was written with in its
assets/albert_act_export.json ("export"); `python -m albert_act.export --config FILE` reads one."""

import dataclasses
import json
import os

from albert_act.base import artifacts, checks, settings
from albert_act.base.settings import PATH, setting
from albert_act.model.halting import CAPPED_EXECUTIONS, EXECUTIONS

TOP_K = 5  # fill_mask's predictions per [MASK] when none is asked for


@settings.document
@dataclasses.dataclass(frozen=True)
class ExportConfig:
    """Everything an export depends on; the values are checked when the config is built."""

    # What `export --config` reads (its --help says so): the record an export by this command keeps.
    CONFIG_FILES = ("an export's assets/albert_act_export.json, as python -m albert_act.export writes it (an "
                    "export that pretrain or finetune wrote records its run's settings instead)")

    checkpoint: str = setting(dataclasses.MISSING, "run dir, fine-tuning dir, earlier export, or Hugging Face / TF1 / "
                                                   "keras-hub ALBERT", kind=PATH)
    kind: str = setting(dataclasses.MISSING, "pretraining (fill_mask, encoder) or classifier (serving_default)",
                        choices=["pretraining", "classifier"])
    output: str = setting(dataclasses.MISSING, "saved_models/<name>/<version>", kind=PATH)
    vocab: str | None = setting(None, "SentencePiece model (default: the one stored with --checkpoint)",
                                    kind=PATH)
    execution: str = setting("sparse", "sparse: compute only running tokens (CPU/GPU serving); static: TPU",
                             choices=list(EXECUTIONS))
    max_seq_length: int | None = setting(
        None, "longer inputs are truncated (default: the fine-tuning length / the model's maximum)",
        rule=f"int[3,{checks.MAX_SEQUENCE_LENGTH}]")
    top_k: int | None = setting(None, f"fill_mask predictions per [MASK] (default: {TOP_K}; --kind pretraining only)",
                                rule="int[1,1000]")
    overwrite: bool = setting(False, "replace an existing --output")
    format: str = setting("savedmodel", "savedmodel: raw text in, for TensorFlow Serving; huggingface: config.json + "
                                        "model.safetensors + spiece.model of a fixed-depth model",
                          choices=["savedmodel", "huggingface"])

    def __post_init__(self):
        settings.check_values(self)
        if self.kind is None:  # a partial --config file: the flags give the kind, and the checks run then
            return
        if self.top_k is not None and self.kind != "pretraining":
            raise ValueError(f"top_k {self.top_k} (--top_k, or a --config file's) is fill_mask's, which only --kind "
                             f"pretraining exports have (not --kind {self.kind}); drop --top_k (a --config file's: "
                             "--set top_k=null)")
        if self.kind == "pretraining" and self.execution not in CAPPED_EXECUTIONS:
            raise ValueError(f"--execution {self.execution} is a training execution: a pre-training export's "
                             f"signatures take a cap on iterations, which {', '.join(CAPPED_EXECUTIONS)} run (sparse "
                             "for CPU/GPU serving, static for a TPU)")
        if self.format == "huggingface" and self.kind != "pretraining":
            raise ValueError("--format huggingface writes a pre-training model (AlbertForPreTraining): use --kind "
                             "pretraining")
        ignored = [f"--{name} {value}" for name, value, default in (
            ("execution", self.execution, "sparse"), ("max_seq_length", self.max_seq_length, None),
            ("top_k", self.top_k, None)) if value != default]
        if self.format == "huggingface" and ignored:  # settings of the serving graph, which this format has not
            raise ValueError(f"{', '.join(ignored)}: --format huggingface writes the weights, config and vocabulary, "
                             "with no serving graph for these to shape; drop them (or export --format savedmodel)")

    @classmethod
    def from_record(cls, record, partial=False, path=None):
        """The config an export recorded (its assets/albert_act_export.json's "export"), its paths
        (recorded relative to the export) resolved against the export that holds `path`, the file it was
        read from (a copy elsewhere is refused: they cannot be resolved; without a file: as recorded), and
        its overwrite off (a replay names its
        own --output, and --overwrite if it must); partial: a --config file, which may leave settings
        to the flags. The exports that pretrain and finetune
        write at the end of a run record that run's settings, not an export's: refused, saying how to
        write one again."""
        if isinstance(record, dict) and "export" not in record and ("pretraining" in record or "task" in record):
            run, kind = (("pretrain at the end of a run", "--checkpoint <the run dir: \"pretraining\" -> "
                          "\"model_dir\" in this file> --kind pretraining") if "pretraining" in record else
                         ("finetune", "--checkpoint <the fine-tuning dir> --kind classifier"))
            if path is not None and os.path.basename(path) != artifacts.EXPORT_INFO:  # the run's own settings file
                kind = kind.replace("<the fine-tuning dir>", os.path.dirname(path) or ".")
                raise ValueError(f"a {'pre-training' if 'pretraining' in record else 'fine-tuning'} run's settings, "
                                 f"not an export's: export the run with python -m albert_act.export {kind} --output "
                                 f"<base>/<version>; --config takes an export's {artifacts.ASSETS}/{artifacts.EXPORT_INFO}")
            raise ValueError(f"an export written by {run} records that run's settings, not an export's; write it "
                             f"again with python -m albert_act.export {kind} --output <base>/<next version>")
        if isinstance(record, dict) and isinstance(record.get("export"), dict):
            # An export is replaced only when a command says so, never by replaying its record.
            record = {**record, "export": {**record["export"], "overwrite": False}}
            folder = None if path is None else os.path.dirname(path if "://" in path else os.path.abspath(path))
            # Paths relative to the export (its own "output" is then "."; a record with another "output"
            # holds them as typed), read from the export's own assets folder: resolved against the export.
            if record["export"].get("output") == "." and folder and os.path.basename(folder) == artifacts.ASSETS:
                record = {**record, "export": artifacts.absolute_paths(record["export"], os.path.dirname(folder),
                                                                       artifacts.EXPORT_PATHS)}
            elif record["export"].get("output") == "." and path is not None:  # a copy: relative to what?
                relative = {k: v for k, v in record["export"].items() if k in artifacts.EXPORT_PATHS and v}
                raise ValueError(f"an export's record, whose paths ({json.dumps(relative)}) are relative to the export "
                                 f"it was written in; this file lies outside that export's {artifacts.ASSETS}/ folder, "
                                 f"so they cannot be resolved: give <export>/{artifacts.ASSETS}/{artifacts.EXPORT_INFO} "
                                 "itself")
        return settings.from_record(cls, record.get("export", record) if isinstance(record, dict) else record,
                                    "an export", partial=partial)

    def resolved(self):
        """The config with its defaults filled in: fill_mask's top_k for a pre-training export."""
        savedmodel = self.kind == "pretraining" and self.format == "savedmodel"
        return dataclasses.replace(self, top_k=self.top_k or (TOP_K if savedmodel else None))
