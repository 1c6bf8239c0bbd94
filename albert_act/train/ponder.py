"""The ponder-cost weight tau over a run, in plain Python and `keras.ops` (every backend): its warm-up
ramp, --tau auto's share, and the depth target's controller (`steered_tau`)."""

import numpy as np
from keras import ops

AUTO_SHARE = 0.1

# --target_iterations: after every update with the ponder cost on, log tau moves by TARGET_RATE per
# iteration of (mean N - target): dual ascent on the depth constraint, in log space so that one rate
# serves the 1e-4..1e-2 range of tau (a gap of 1 iteration doubles or halves tau in ~35 updates).
# TAU_RANGE bounds it (tau near the floor is no ponder cost at all).
TARGET_RATE = 0.02
TAU_RANGE = (1e-7, 1.0)
# --target_control signed: tau = an integral part, which moves by SIGNED_RATE x (mean N - target) after every
# update, + a proportional part, SIGNED_GAIN x (mean N - target) of the last update, both in units of the tau
# that --tau auto would set on that update (AUTO_SHARE x (MLM + SOP) / ponder cost). The proportional part
# turns the push around as soon as the depth crosses the target: LAMB moves the halting bias by about the
# learning rate per update whatever the size of its gradient, so an integral part alone swings the depth
# from one end to the other (1 to 6 iterations and back, every ~200 updates, on the demo).
SIGNED_RATE = 0.002
SIGNED_GAIN = 1.0


def held_depth(result, pieces):
    """The mean depth --target_iterations holds, from an update's summarized outputs: of every piece
    ("all") or of the unmasked ones ("unmasked", `token_types`' ordinary pieces)."""
    return result["iterations"]["all" if pieces in (None, "all") else "unmasked"]["mean"]


def steered_tau(tau, gap, control, auto_tau):
    """(tau, its proportional part) after one update whose mean depth was `gap` iterations above the
    target; the weight in force is their sum. control "tau": tau * exp(TARGET_RATE * gap) within
    TAU_RANGE (a tau below 0, auto's not yet calibrated, stays), no proportional part; "signed":
    the integral part tau + SIGNED_RATE * gap * auto_tau and the proportional part SIGNED_GAIN * gap *
    auto_tau (`auto_tau`: the tau --tau auto would set on that update), each within +-TAU_RANGE[1]."""
    if control == "signed":
        bound = TAU_RANGE[1]
        return (float(np.clip(tau + SIGNED_RATE * gap * auto_tau, -bound, bound)),
                float(np.clip(SIGNED_GAIN * gap * auto_tau, -bound, bound)))
    if tau < 0:
        return tau, 0.0
    return float(np.clip(max(tau, TAU_RANGE[0]) * np.exp(TARGET_RATE * gap), *TAU_RANGE)), 0.0


def ponder_ramp(update, start, steps):
    """Share of tau at 0-based update `update`: 0 before `start`, then linear up to 1 over `steps` updates."""
    update = ops.cast(update, "float32")
    if steps <= 0:
        return ops.cast(update >= start, "float32")
    return ops.clip((update - start + 1.0) / steps, 0.0, 1.0)
