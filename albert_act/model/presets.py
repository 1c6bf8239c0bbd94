"""The presets, as data: each a model size and the pre-training run that goes with it.

`tiny`, `small` and `base` are the paper's (Simoulin & Crabbé 2021, Table 1): ALBERT-base sizes
with a depth cap N_max and a ponder-cost weight tau. `demo` is sized for a 2-core CPU so the whole
pipeline runs in minutes; `english` is the shipped English model's. A preset's `training` is a
partial `PretrainConfig` (albert_act/train/pretraining_config.py), plain data, so the model needs
nothing from train/; the measurements behind the values are in the doc pages the comments name.

    python -c "from albert_act import PRESETS; print(PRESETS['demo'].description)"
"""

import dataclasses

from albert_act.model.backbone import AlbertActBackbone


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named model configuration and the pre-training run that goes with it.

    description: what it is for, the result to expect, what it costs, and the command.
    backbone: keyword arguments of `AlbertActBackbone`.
    training: a partial `PretrainConfig`: the settings a run takes unless given others,
        tau (`ponder_cost_weight`: "auto" is calibrated) among them.
    """

    description: str
    backbone: dict
    training: dict

    @property
    def ponder_cost_weight(self):
        return self.training["ponder_cost_weight"]


# ALBERT-base: E=128, H=768, 12 heads, FFN 3072, vocabulary 30k, sequence 128.
# GELU (tanh approximation: gelu_approximate=True) and LayerNorm eps 1e-12 are the backbone's
# defaults, post-LN is fixed in the layers; dropout is 0 in pre-training, as in the paper.
_ALBERT_BASE = dict(
    vocabulary_size=30000,
    embedding_dim=128,
    hidden_dim=768,
    num_heads=12,
    intermediate_dim=3072,
    max_sequence_length=128,
    dropout=0.0,
)


# The paper's pre-training run (ALBERT's): LAMB at 1.76e-3 for 112,500 updates of 4,096
# sequences, 3,125 warm-up updates, constant tau, the static ACT loop (TPU).
_PAPER_TRAINING = dict(
    steps=112500,
    warmup_steps=3125,
    learning_rate=1.76e-3,
    global_batch_size=4096,
    micro_batch_size=64,  # per replica: 8 accumulation steps x 64 x 8 TPU cores
    ponder_warmup_start=0,
    ponder_warmup_steps=0,
    execution="static",
    jit_compile=False,  # TPUStrategy compiles with XLA anyway
)


PRESETS = {
    "tiny": Preset(
        description="The paper's `tiny`: ALBERT-base sizes, at most 6 iterations, the strongest depth penalty "
                    "(tau 1e-3), pre-trained as ALBERT was. The paper reports its results; no TPU has run it here. "
                    "About 61 hours of a TPU v2-8 (docs/benchmarks.md \"The paper's compute\"). "
                    "`python -m albert_act.pretrain --preset tiny --train_files ... --eval_files ...`, or "
                    "colab/pretrain_tpu.ipynb with PRESET = \"tiny\".",
        backbone=dict(_ALBERT_BASE, max_iterations=6),
        training=dict(_PAPER_TRAINING, ponder_cost_weight=1e-3),
    ),
    "small": Preset(
        description="The paper's `small`: ALBERT-base sizes, at most 12 iterations (ALBERT-base's depth), tau "
                    "5e-4, pre-trained as ALBERT was. The paper reports its results; no TPU has run it here. About "
                    "120 hours of a TPU v2-8 (docs/benchmarks.md \"The paper's compute\"). "
                    "`python -m albert_act.pretrain --preset small --train_files ... --eval_files ...`, or "
                    "colab/pretrain_tpu.ipynb with PRESET = \"small\".",
        backbone=dict(_ALBERT_BASE, max_iterations=12),
        training=dict(_PAPER_TRAINING, ponder_cost_weight=5e-4),
    ),
    "base": Preset(
        description="The paper's `base`: ALBERT-base sizes, at most 24 iterations, the weakest depth penalty "
                    "(tau 2.5e-4), pre-trained as ALBERT was. The paper reports its results; no TPU has run it here. "
                    "About 239 hours of a TPU v2-8 (docs/benchmarks.md \"The paper's compute\"). "
                    "`python -m albert_act.pretrain --preset base --train_files ... --eval_files ...`, or "
                    "colab/pretrain_tpu.ipynb with PRESET = \"base\".",
        backbone=dict(_ALBERT_BASE, max_iterations=24),
        training=dict(_PAPER_TRAINING, ponder_cost_weight=2.5e-4),
    ),
    "demo": Preset(
        description="The quick start's model, sized to learn the embedded corpus on a laptop: "
                    "`python -m albert_act.pretrain` (the default preset). Held-out MLM accuracy ~0.196 and SOP "
                    "~0.838 after 1,000 updates, with [CLS] and [MASK] running deeper than other tokens; about "
                    "3 minutes on 2 CPU cores (README \"Quick start\").",
        backbone=dict(
            vocabulary_size=2000,  # a BPE vocabulary of the embedded corpus (albert_act.train.demo_data)
            embedding_dim=64,
            hidden_dim=128,
            num_heads=4,
            intermediate_dim=512,
            max_iterations=6,
            max_sequence_length=64,  # most of the corpus's documents fit in one or two sequences
            # p = 0.5: 2 iterations from the first update; -1 starts at about 4 and settles at 2 within
            # ~150 updates anyway (docs/pretraining.md "The demo preset's settings")
            halting_bias_initializer=0.0,
            dropout=0.0,
        ),
        training=dict(
            ponder_cost_weight="auto",
            # 1,400 updates reach MLM 0.203 against 0.194, in 7:02 against 5:08 for the whole quick start
            # (docs/pretraining.md "The demo preset's settings")
            steps=1000,
            warmup_steps=50,
            learning_rate=1e-2,  # LAMB's trust ratio: ~1% relative change per update
            global_batch_size=32,
            micro_batch_size=32,
            ponder_warmup_start=500,  # learn first, then pay for depth: with tau from update 1 every token halts at 1
            ponder_warmup_steps=250,
            # A fixed input order and deterministic ops, 2% slower over 300 updates: with the order left to the
            # machine's load, one of two runs ends with every token at 1 iteration and SOP at the majority class
            # (docs/pretraining.md "The demo preset's settings").
            deterministic=True,
            # Only the running tokens are computed (albert_act/model/gathered_halting.py): at the trained
            # demo's depth (mean N 1.79 of 6) 0.62x the time of fixed depth under XLA, compiled in seconds
            # (docs/benchmarks.md "Training update against depth, demo sizes").
            execution="gather",
            jit_compile=False,  # gather's shapes are dynamic
        ),
    ),
    "english": Preset(
        description="The shipped English model's sizes and depth recipe: English Wikipedia at 128 pieces, sized for "
                    "2 CPU cores. `python -m benchmarks.english_small` runs text -> vocabulary -> records -> this "
                    "preset's 2,000 updates (about an hour on 2 CPU cores) -> SavedModel. Depth is held at a mean of "
                    "3 iterations on the ordinary pieces (signed control), with the halting unit out of LAMB's trust "
                    "ratio and an MLM signal on its halting distribution: the recipe that made the shipped model's "
                    "depth differ per token (docs/adaptive-depth.md). The shipped model continued a 12,000-update "
                    "run with it (docs/english-model.md \"How it was trained\" gives every command).",
        backbone=dict(
            vocabulary_size=8000,  # SentencePiece unigram on the training text (benchmarks/english_small.py)
            embedding_dim=128,
            hidden_dim=128,  # 256 is 3-4x slower per update (docs/english-model.md "How the sizes were chosen")
            num_heads=4,
            intermediate_dim=512,
            max_iterations=6,
            max_sequence_length=128,  # the paper's length
            halting_bias_initializer=-1.0,
            dropout=0.0,
        ),
        training=dict(
            # docs/adaptive-depth.md: tau steered from 1e-3 in both directions toward a mean depth of 3 on the
            # ordinary pieces ([MASK] and [CLS] then run deeper without pulling the others below it)
            ponder_cost_weight=1e-3,
            target_iterations=3,
            target_control="signed",
            target_pieces="unmasked",
            mlm_objective="final_and_halting",  # the MLM loss of the halting distribution's mixture, weighted
            halting_signal_weight=0.05,
            halting_trust_ratio=False,  # LAMB's trust ratio held the halting kernel at its initial size
            halting_learning_rate_scale=0.1,
            steps=2000,
            warmup_steps=200,
            learning_rate=1e-2,
            # At 64, MLM sits at the unigram level for 1,700 updates and the ponder cost then halts every
            # token at 1 (docs/english-model.md "How the sizes were chosen").
            global_batch_size=128,
            # Micro-batches of 16 (8 per update, the same gradient): 0.76x the time of 64 at fixed depth,
            # 0.88x for bucket at a mean depth of 3 (docs/benchmarks.md "The English update, profiled").
            micro_batch_size=16,
            ponder_warmup_start=1500,
            ponder_warmup_steps=200,
            # Running tokens only, at static widths under XLA: 2.21 s per update at a mean depth of 3 against
            # gather's 3.35 s; the ~2.5-minute compile of the first update pays back within ~150 updates
            # (docs/benchmarks.md "The English update, profiled").
            execution="bucket",
            jit_compile=True,
        ),
    ),
}


def get_preset(name):
    """Returns the `Preset` called `name`; ValueError naming the choices otherwise."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; expected one of {sorted(PRESETS)}")
    return PRESETS[name]


def backbone_from_preset(name, **overrides):
    """Builds an `AlbertActBackbone` from preset `name`, with keyword overrides."""
    return AlbertActBackbone(**{**get_preset(name).backbone, **overrides})
