"""Model presets, as plain Python. `python -c "from albert_act import PRESETS; print(PRESETS)"`.

`tiny`, `small` and `base` are the paper's (Simoulin & Crabbé 2021, Table 1):
ALBERT-base sizes with a depth cap N_max and a ponder-cost weight tau. `demo` is
sized for a 2-core CPU so the whole pipeline runs in minutes.
"""

import dataclasses

from albert_act.model.backbone import AlbertActBackbone

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


@dataclasses.dataclass(frozen=True)
class Preset:
    """A named model configuration and the pre-training run that goes with it.

    backbone: keyword arguments of `AlbertActBackbone`.
    ponder_cost_weight: tau in loss = MLM + SOP + tau * mean ponder cost ("auto": calibrated).
    training: `PretrainConfig` settings (steps, warmup_steps, learning_rate,
        global_batch_size, micro_batch_size, ponder_warmup_start, ponder_warmup_steps,
        execution, jit_compile) that a run takes unless given others.
    """

    backbone: dict
    ponder_cost_weight: float | str
    training: dict = dataclasses.field(default_factory=lambda: dict(_PAPER_TRAINING))


PRESETS = {
    # Paper's "tiny": at most 6 iterations, strongest depth penalty.
    "tiny": Preset(backbone=dict(_ALBERT_BASE, max_iterations=6), ponder_cost_weight=1e-3),
    # Paper's "small": at most 12 iterations (ALBERT-base's depth).
    "small": Preset(backbone=dict(_ALBERT_BASE, max_iterations=12), ponder_cost_weight=5e-4),
    # Paper's "base": at most 24 iterations, weakest penalty.
    "base": Preset(backbone=dict(_ALBERT_BASE, max_iterations=24), ponder_cost_weight=2.5e-4),
    # CPU demo: the quick start's model, sized and trained to learn the embedded corpus within
    # minutes on 2 CPU cores (README "Quick start" gives how each setting was measured).
    "demo": Preset(
        backbone=dict(
            vocabulary_size=2000,  # a BPE vocabulary of the embedded corpus (albert_act.train.demo_data)
            embedding_dim=64,
            hidden_dim=128,
            num_heads=4,
            intermediate_dim=512,
            max_iterations=6,
            max_sequence_length=64,  # most of the corpus's documents fit in one or two sequences
            # p = 0.5 at the start: 2 iterations, the depth the runs settled at before the ponder cost
            # started with -1.0 (p ~ 0.27), without paying for ~4 iterations over the first ~150 updates
            halting_bias_initializer=0.0,
            dropout=0.0,
        ),
        ponder_cost_weight="auto",
        training=dict(
            # 1,400 (MLM 0.203, SOP 0.864) took 7:02 and 2,000 (0.205) 7:11 on the slower 2-core CPU;
            # 1,000 gave MLM 0.194, SOP 0.822 in 5:22 there (README "Quick start")
            steps=1000,
            warmup_steps=50,
            learning_rate=1e-2,  # LAMB's trust ratio: ~1% relative change per update
            global_batch_size=32,
            micro_batch_size=32,
            ponder_warmup_start=500,  # learn first, then pay for depth
            ponder_warmup_steps=250,
            # Only the running tokens are computed (albert_act/model/gathered_halting.py): at the demo's
            # depth (~1.6 of 6) about 0.6x the time of the static loop under XLA, which fuses more
            # but computes all 6 iterations (README "Training that skips halted tokens").
            execution="gather",
            jit_compile=False,  # gather's shapes are dynamic
        ),
    ),
    # The shipped English model (saved_models/albert_act_english): English Wikipedia, 128 pieces,
    # sized and trained for about an hour on 2 CPU cores (`python -m benchmarks.english_small`;
    # its model card, saved_models/albert_act_english/README.md, gives how each size was chosen).
    "english": Preset(
        backbone=dict(
            vocabulary_size=8000,  # SentencePiece unigram on the training text (benchmarks/english_small.py)
            embedding_dim=128,
            hidden_dim=128,  # 256 measured 3-4x slower per update: too few updates in an hour
            num_heads=4,
            intermediate_dim=512,
            max_iterations=6,
            max_sequence_length=128,  # the paper's length
            halting_bias_initializer=-1.0,
            dropout=0.0,
        ),
        ponder_cost_weight="auto",
        training=dict(
            # 2,000 x 128: run 1 (4,000 x 64, ponder cost from update 1,600) sat at the unigram level
            # (MLM loss 6.3 against 6.4 without context) for 1,700 updates, and the ponder cost then
            # halted every token at 1 (no gradient reaches the halting unit there). A larger batch
            # gives the gradient out of that plateau more signal; the ponder cost waits longer.
            steps=2000,
            warmup_steps=200,
            learning_rate=1e-2,
            global_batch_size=128,
            # Micro-batches of 16 (8 per update, the same gradient): 0.76x the time of 64 at fixed depth,
            # 0.88x for bucket at a mean depth of 3 (docs/pretraining.md "The English update, profiled").
            micro_batch_size=16,
            ponder_warmup_start=1500,
            ponder_warmup_steps=200,
            # Running tokens only, at static widths under XLA: at a mean depth of 3 of 6 varying per token
            # (a tail at the cap), 2.21 s per update against gather's 3.35 s (micro-batches of 64, the
            # preset until 2026-11-25); bucket's first update compiles for ~2.5 minutes, paid back
            # within ~150 updates.
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
