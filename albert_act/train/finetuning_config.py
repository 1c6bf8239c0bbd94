"""Fine-tuning settings, in one place: `FinetuneConfig` (a frozen dataclass: every setting with its
default, one line of help, its flag and its range; it checks its own values when built, and
`finetune`'s flags are made from it) and the paper's grid, whose points are the config with
other values (`grid_points`). A fine-tuning dir saves its config (`artifacts.FINETUNE_CONFIG`);
`python -m albert_act.finetune --config <dir>/finetune_config.json` repeats it."""

import dataclasses
import itertools
import os

from albert_act import distribution
from albert_act.base import artifacts, checks, settings
from albert_act.base.settings import PATH, setting

# The paper's fine-tuning grid (Simoulin & Crabbé 2021, after ALBERT's): every combination, per seed.
PAPER_GRID = {"learning_rate": (5e-5, 3e-5, 2e-5), "batch_size": (16, 32), "epochs": (2, 3, 4)}


@settings.document
@dataclasses.dataclass(frozen=True)
class FinetuneConfig:
    """Everything a fine-tuning run depends on; the values are checked when the config is built."""

    # What `finetune --config` reads (its --help says so): a fine-tuning dir's finetune_config.json.
    CONFIG_FILES = "a fine-tuning dir's finetune_config.json (<output_dir>/finetune_config.json)"

    task: str = setting(dataclasses.MISSING, "cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, rte, wnli, or a probing "
                                             "task: tense, subj_number, obj_number, top_constituents")
    data_dir: str = setting(dataclasses.MISSING, "the task's glue_data folder, or the probing files' folder",
                            kind=PATH)
    init: str = setting(dataclasses.MISSING, "pre-training run dir (e.g. runs/demo), exported SavedModel, Hugging "
                                             "Face ALBERT dir (config.json + model.safetensors + spiece.model), TF1 "
                                             "ALBERT checkpoint (albert_config.json + model.ckpt-*) or keras-hub preset", kind=PATH)
    output_dir: str = setting(dataclasses.MISSING, "where the fine-tuned model goes (default: runs/finetune/<task>)",
                              kind=PATH)
    halting: str | None = setting(None, "act: learned per-token depth (a new halting unit over a fixed-depth "
                                        "model); none: fixed depth (default: --init's own; a public ALBERT's is none)",
                                  choices=["act", "none"])
    max_iterations: int | None = setting(None, "depth cap N_max for act, the depth for none (default: --init's; "
                                               "ALBERT-base's 12)", rule=f"int[1,{checks.MAX_ITERATIONS}]")
    halting_bias_initializer: float | None = setting(
        None, "initial bias of a new halting unit (default 0, the authors')", flag="halting_bias", rule="finite")
    vocab: str | None = setting(None, "the SentencePiece model (default: vocab.model inside --init)", kind=PATH)
    overwrite: bool = setting(False, "replace a finished fine-tuning in --output_dir (kept aside until "
                                       "the new one finishes: a stop before puts it back)")
    learning_rate: float = setting(3e-5, "peak AdamW learning rate (warm-up over the first 10%, then linear decay)",
                                   rule="learning_rate")
    batch_size: int = setting(32, "sequences per update (all replicas together)", rule="int[1,65536]")
    epochs: int = setting(3, "passes over the training set; the best dev epoch is kept", rule="int[1,10000]")
    seed: int = setting(12345, "initialisation and data order", rule="int:seed")
    grid: bool = setting(False, "the paper's grid (learning rate x batch x epochs) instead of one run")
    seeds: int = setting(1, "with --grid: seeds per grid point, from --seed on", rule="int[1,1000]")
    ponder_cost_weight: float = setting(
        0.0, "tau during fine-tuning (none at fixed depth, --halting none: its ponder cost is a constant)",
        flag="tau", rule=">=0")
    max_seq_length: int | None = setting(None, "default: 128, or the model's maximum if shorter (the demo's: 64)",
                                         rule=f"int[8,{checks.MAX_SEQUENCE_LENGTH}]")
    max_train_examples: int | None = setting(None, "a subset of the training set, for a quick run", rule="int>=1")
    strategy: str = setting("auto", "auto: a Colab TPU VM if reachable, else every local GPU, else the CPU",
                            choices=[s for s in distribution.STRATEGIES if s != "multiworker"])
    precision: str = setting("auto", "auto: mixed_bfloat16 on TPU, float32 elsewhere",
                             choices=list(distribution.PRECISIONS))
    jit_compile: bool | None = setting(None, "XLA-compile the per-replica functions; always on for TPU")

    def __post_init__(self):
        settings.check_values(self)
        if self.seeds != 1 and not self.grid:
            raise ValueError(f"--seeds {self.seeds} goes with --grid (seeds per grid point); one run takes --seed")
        defaults = {field.name: field.default for field in dataclasses.fields(self)}
        gridded = {name: getattr(self, name) for name in PAPER_GRID if getattr(self, name) != defaults[name]}
        if self.grid and gridded:
            raise ValueError(grid_sets_aside(gridded))
        if self.halting == "none" and self.ponder_cost_weight:
            raise ValueError(f"--tau {self.ponder_cost_weight} weighs the ponder cost of ACT halting; --halting none runs "
                             "every token to N_max, where it is a constant (drop --tau)")

    @classmethod
    def from_record(cls, record, partial=False, path=None):  # noqa: ARG003 (path: an export's, not a run's)
        """The config a fine-tuning dir saved (`artifacts.FINETUNE_CONFIG`); partial: a --config file,
        which may leave settings to the flags. Its paths are as they were given (path: unused). Its
        overwrite is off: a replay names --overwrite if it must (a grid point records overwrite on,
        and a replay of it replaced a finished fine-tuning without a word)."""
        if isinstance(record, dict) and "overwrite" in record:
            record = {**record, "overwrite": False}
        return settings.from_record(cls, record, "a fine-tuning run", partial=partial)

    def grid_points(self, grid=PAPER_GRID):
        """One config per point of `grid` and seed, each in its own folder under output_dir/grid/."""
        points = itertools.product(grid["learning_rate"], grid["batch_size"], grid["epochs"],
                                   range(self.seed, self.seed + self.seeds))
        return [dataclasses.replace(self, learning_rate=lr, batch_size=batch, epochs=epochs, seed=seed, grid=False,
                                    seeds=1, overwrite=True,
                                    output_dir=os.path.join(self.output_dir, artifacts.GRID,
                                                            f"lr{lr}_bs{batch}_ep{epochs}_seed{seed}"))
                for lr, batch, epochs, seed in points]


def grid_sets_aside(given, config_file=None, grid_from=None):
    """The refusal of the grid's settings {name: value} given beside --grid, which it would set aside
    (at their default's value too, when typed: finetune's main checks the flags typed); config_file:
    the --config file that gave them; grid_from: the --config file that set grid (not --grid typed)."""
    if grid_from and not config_file:
        return (f"--config {grid_from} sets grid: true, which runs every {' x '.join(PAPER_GRID)} of the paper's "
                f"grid, so {', '.join(f'--{n} {v}' for n, v in given.items())} would be set aside: drop "
                f"{'them' if len(given) > 1 else 'it'}, or add --set grid=false for one run")
    if config_file:
        return (f"--grid runs every {' x '.join(PAPER_GRID)} of the paper's grid, so --config {config_file}'s "
                f"{', '.join(f'{n} {v}' for n, v in given.items())} would be set aside: drop --grid for that file's "
                "one run, or leave them out of the file")
    return (f"--grid runs every {' x '.join(PAPER_GRID)} of the paper's grid, so "
            f"{', '.join(f'--{n} {v}' for n, v in given.items())} would be set aside: "
            f"drop {'them' if len(given) > 1 else 'it'}, or drop --grid for one run")
