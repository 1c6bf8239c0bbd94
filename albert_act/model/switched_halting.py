"""`execution="bucket"` in `keras.ops` alone: the running tokens only, at static widths, on any
backend that differentiates `keras.ops.switch` (the JAX backend; TensorFlow's bucket is
`albert_act.model.gathered_halting`, whose own gradient XLA on TensorFlow needs).

Same numbers and gradients as the static loop (tests/test_jax_backend.py), by the same ACT
update (`albert_act.model.act_state.act_update`). An iteration after the first:

    W        = the smallest of `bucket_widths(T)` that holds every row's running tokens,
               chosen by keras.ops.switch (every branch is compiled; one runs)
    slots    = each row's running tokens first (argsort of "not running"), the first W   (B, W)
    gather   = one_hot(slots, T) (B, W, T), applied by einsum: exact, and differentiable
    y_slots  = block(h[slots]) with the slots' queries, attending to every real token's
               keys/values (caches (B, heads, T, head_dim))                            (B, W, H)
    y, p     = scattered back by the same one-hot (0 elsewhere); act_update masks all but the
               running tokens, so a slot that holds a halted token changes nothing
    caches   = the slots' new queries/keys/values, projected from their updated states

Each branch runs under `keras.remat`: its backward pass recomputes it instead of keeping its
intermediates, which every branch of a switch would otherwise hold.
"""

import math

import keras
from keras import ops

from albert_act.model.act_state import (act_update, initial_state, key_mask, most_running, outputs_of, record_details,
                                        running_first)

SMALLEST_BUCKET = 4  # below this, a bucket saves less than its branch costs to compile
FINE_STEP = 16  # widths above this also come in its multiples (`bucket_widths`)


def bucket_widths(length, capacity=None):
    """Ascending static widths for `length` tokens: 0, the halvings of the capacity (default
    `length`, always the largest) down to SMALLEST_BUCKET, and its multiples of FINE_STEP (at
    least top / 8) in between. E.g. 128 -> 0 4 8 16 32 48 64 80 96 112 128; 16 -> 0 4 8 16.

    The multiples keep a mostly running batch from paying for the next power of two: a
    depth that varies per token leaves 60-110 of 128 tokens running at middle iterations."""
    top = length if capacity is None else max(1, min(int(capacity), length))
    widths, width = {0, top}, top
    while width > SMALLEST_BUCKET:
        width = math.ceil(width / 2)
        widths.add(width)
    step = max(FINE_STEP, math.ceil(top / 8))
    widths.update(range(step, top, step))
    return sorted(widths)


def switched_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details, widths):
    """The loop; arguments and outputs as `halting.halting_loop` (is_real bool (B, T), h float32; the
    layer an `IteratedLayer` with project_fn and attend_fn; widths ascending, the sequence length last)."""
    length = widths[-1]
    state = initial_state(hidden_states, is_real, max_iterations, return_details, layer)
    for i in range(max_iterations):
        if i == 0:  # every real token runs the first iteration
            state = _iteration(state, i, length, layer, halting_fn, is_real, max_iterations, epsilon, return_details)
            continue
        needed = most_running(state["running"])
        choice = ops.minimum(ops.sum(ops.cast(ops.convert_to_tensor(widths) < needed, "int32")), len(widths) - 1)
        branches = [keras.remat(lambda s, w=w, i=i: _iteration(s, i, w, layer, halting_fn, is_real, max_iterations,
                                                                  epsilon, return_details)) for w in widths]
        state = ops.switch(choice, branches, state)
    return outputs_of(state, max_iterations, max_iterations, return_details)


def _iteration(state, i, width, layer, halting_fn, is_real, max_iterations, epsilon, return_details):
    """Iteration i computing `width` slots per row (the sequence length: every token; 0: none)."""
    state = dict(state)
    if width == 0:  # nothing runs: the state stays exactly (details record iteration i's zeros)
        return state
    running, length = state["running"], state["h"].shape[1]
    if width == length:
        gather = None
        slot_h = state["h"]
    else:
        slots = running_first(running, width)  # (B, W)
        gather = ops.one_hot(slots, length, dtype="float32")  # (B, W, T)
        slot_h = ops.einsum("bwt,bth->bwh", gather, state["h"])
    if layer.reuse_keys:
        query, key, value = state["query"], state["key"], state["value"]
    else:  # this iteration's own weights: every token's queries/keys/values anew
        query, key, value = layer.project_fn(state["h"], i)
    if gather is not None:
        query = ops.einsum("bwt,bntd->bnwd", ops.cast(gather, query.dtype), query)
    y = ops.cast(layer.attend_fn(slot_h, query, [(key, value, key_mask(is_real))], i), "float32")  # (B, W, H)
    probability = None if halting_fn is None else ops.cast(halting_fn(y, i), "float32")  # (B, W)
    if gather is not None:
        y = ops.einsum("bwt,bwh->bth", gather, y)
        probability = None if probability is None else ops.einsum("bwt,bw->bt", gather, probability)
    updated, halts_now, p, weight = act_update(state, y, probability, running, i, max_iterations, epsilon)
    new_state = {**state, **updated}
    if layer.reuse_keys and i + 1 < max_iterations:  # the computed tokens' projections of their new states
        new_h = updated["h"] if gather is None else ops.einsum("bwt,bth->bwh", gather, updated["h"])
        projected = layer.project_fn(new_h, i + 1)
        for name, value in zip(("query", "key", "value"), projected):
            if gather is None:
                new_state[name] = value
            else:  # written over the slots' positions; a position is in one slot at most, so the sum is exact
                scattered = ops.einsum("bwt,bnwd->bntd", ops.cast(gather, value.dtype), value)
                in_slots = ops.sum(gather, axis=1) > 0  # (B, T)
                new_state[name] = ops.where(in_slots[:, None, :, None], scattered, state[name])
    if return_details:
        new_state.update(record_details(state, i, p, weight, updated["h"]))
    return new_state
