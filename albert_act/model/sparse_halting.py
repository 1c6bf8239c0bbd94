"""The ACT loop computing, at each iteration, only the tokens still running (`execution="sparse"`).

Same numbers as the dense loops of `albert_act.model.halting` (the same `albert_act.model.act_state.act_update`), at a
cost that follows sum N_t instead of T x N_max. Inference on CPU/GPU: the shapes change
as tokens halt, which XLA on TPU does not compile.

The state lives in *slot* space. `slots` (B, W) are token positions and `h`, `running`,
`accumulated`, `iterations`, `remainders`, `expected` their values. Slots start as every
position (W = T, in order). Whenever every row has fewer running tokens than W, the slots
are narrowed to each row's running tokens (stable order, so [CLS] stays first; shorter rows
are filled with some of their own halted tokens, which are computed but never change).
Halted tokens leave the slots only then, after their state, N_t, R_t and E_t are written
back to the full (B, T, ...) tensors (`full_*`); so an iteration that narrows nothing
gathers and scatters nothing.

Keys/values (a shared layer, `reuse_keys`): after each update the slots are projected once,
which gives their queries for the next iteration and their fresh keys/values. While the
slots are every position, those are all the keys. Once narrowed, queries attend to two
groups: the cache (B, heads, T, head_dim) of tokens that left the slots, with the slots'
own (stale) positions masked, and the slots' fresh keys/values. The cache is written only
when slots narrow, never rewritten per iteration. Unshared layers project every position
at every iteration instead. The loop ends when nothing runs.
"""

import collections

import tensorflow as tf  # dynamic shapes: the TensorFlow backend only

from albert_act.model.act_state import (act_update, gather_slots, initial_state, key_mask, most_running, outputs_of,
                                        record_details, running_first, scatter_slots)

# Per-token values kept in slots and, at full size, in `full_<name>` (B, T, ...).
PER_TOKEN = ("h", "iterations", "remainders", "expected")
# Slot tensors and the axis their slots run along (queries/keys/values: (B, heads, W, head_dim)).
SLOT_AXIS = dict(slots=1, h=1, running=1, accumulated=1, iterations=1, remainders=1, expected=1,
                 query=2, key=2, value=2)

# What the loop's functions share and never change: the layer, the padding, the sizes.
# cap: the iteration at which every token halts (N_max, or a served iteration cap).
Loop = collections.namedtuple("Loop", "layer halting_fn is_real batch_size length max_iterations epsilon cap")


def sparse_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details, cap=None):
    """The loop; arguments and outputs as `halting.halting_loop` (is_real bool (B, T), h float32;
    cap: its iteration_cap, clipped, or None)."""
    batch_size, length = tf.shape(is_real)[0], tf.shape(is_real)[1]
    loop = Loop(layer, halting_fn, is_real, batch_size, length, max_iterations, epsilon,
                max_iterations if cap is None else cap)
    state = slot_state(loop, hidden_states, return_details)
    invariants = shape_invariants(state)

    def body(i, state):
        return i + 1, with_shapes(step(loop, i, state, return_details), invariants)

    steps_run, state = tf.while_loop(
        lambda i, state: tf.reduce_any(state["running"]), body, (tf.constant(0, tf.int32), state),
        maximum_iterations=max_iterations, shape_invariants=(tf.TensorShape([]), invariants))
    full = {k: to_positions(loop, state, state[k], state[f"full_{k}"]) for k in PER_TOKEN}
    for k, v in full.items():
        v.set_shape(invariants[f"full_{k}"])
    if return_details:
        full.update({k: state[k] for k in ("probabilities", "weights", "states")})
    return outputs_of(full, steps_run, max_iterations, return_details)


def slot_state(loop, hidden_states, return_details):
    """Every loop's `initial_state` in slot space: slots = every position, and the full (B, T, ...)
    tensors they are written back to; with a shared layer, the cache of keys/values (empty)."""
    state = initial_state(hidden_states, loop.is_real, loop.max_iterations, return_details, loop.layer)
    state["slots"] = tf.broadcast_to(tf.range(loop.length)[None], [loop.batch_size, loop.length])  # (B, W)
    state.update({f"full_{k}": state[k] for k in PER_TOKEN})  # (B, T, ...), written back when slots narrow
    if loop.layer.reuse_keys:  # query/key/value: (B, heads, W, head_dim), the slots'
        state.update(cache_key=tf.zeros_like(state["key"]), cache_value=tf.zeros_like(state["value"]),
                     cache_mask=tf.zeros_like(key_mask(loop.is_real)))
    return state


def shape_invariants(state):
    """The loop's shapes: slots narrow (their SLOT_AXIS), nothing else changes."""
    invariants = {k: tf.TensorShape(v.shape) for k, v in state.items()}
    for k, axis in SLOT_AXIS.items():
        if k in invariants:
            shape = invariants[k].as_list()
            shape[axis] = None
            invariants[k] = tf.TensorShape(shape)
    return invariants


def with_shapes(state, invariants):
    """tf.cond forgets static sizes that both branches share: set them again."""
    for k, v in state.items():
        v.set_shape(invariants[k])
    return state


def is_every_position(loop, state):
    """Slots were never narrowed: slot w is position w."""
    return tf.equal(tf.shape(state["slots"])[1], loop.length)


def to_positions(loop, state, values, base, axis=1):
    """Slot values (B, W, ...) (slot axis `axis`) written over `base` (B, T, ...) at their positions."""
    return tf.cond(is_every_position(loop, state), lambda: values,
                   lambda: scatter_slots(base, state["slots"], values, axis=axis))


def write_back(loop, state):
    """The full tensors (and, with a shared layer, the key/value cache) with the slots' values written in."""
    written = {f"full_{k}": to_positions(loop, state, state[k], state[f"full_{k}"]) for k in PER_TOKEN}
    if loop.layer.reuse_keys:
        written.update({f"cache_{k}": to_positions(loop, state, state[k], state[f"cache_{k}"], axis=2)
                        for k in ("key", "value")})
    return written


def narrow(loop, state):
    """Slots cut to each row's running tokens, everything about the leavers written back first."""
    state = {**state, **write_back(loop, state)}
    order = running_first(state["running"], most_running(state["running"]))
    for k, axis in SLOT_AXIS.items():
        if k in state:
            state[k] = gather_slots(state[k], order, axis=axis)
    if loop.layer.reuse_keys:  # the cache stands for every token but the slots
        not_in_slots = to_positions(loop, state, tf.zeros(tf.shape(state["slots"]), tf.bool), loop.is_real)
        state["cache_mask"] = not_in_slots[:, None, None, :]
    return state


def attend(loop, state, i):
    """Layer output (B, W, H) of the slots: attending to every current key/value."""
    layer, real_keys = loop.layer, key_mask(loop.is_real)  # (B, 1, 1, T)
    if not layer.reuse_keys:  # this iteration's weights: every position's keys/values anew
        query, key, value = layer.project_fn(state["full_h"], i)
        query = gather_slots(query, state["slots"], axis=2)
        return layer.attend_fn(state["h"], query, [(key, value, real_keys)], i)
    fresh = (state["key"], state["value"])
    return tf.cond(
        is_every_position(loop, state),
        lambda: layer.attend_fn(state["h"], state["query"], [(*fresh, real_keys)], i),
        lambda: layer.attend_fn(state["h"], state["query"], [
            (state["cache_key"], state["cache_value"], state["cache_mask"]),
            (*fresh, key_mask(gather_slots(loop.is_real, state["slots"])))], i))


def step(loop, i, state, return_details):
    """Iteration i: narrow if every row can, compute the slots, apply the ACT update, project anew."""
    running_width = most_running(state["running"])
    invariants = shape_invariants(state)
    state = with_shapes(tf.cond(running_width < tf.shape(state["slots"])[1],
                                lambda: narrow(loop, state), lambda: dict(state)), invariants)
    if not loop.layer.reuse_keys:
        state.update(write_back(loop, state))

    slot = {k: state[k] for k in ("accumulated",) + PER_TOKEN}
    y = tf.cast(attend(loop, state, i), tf.float32)  # (B, W, H)
    raw_probability = None if loop.halting_fn is None else loop.halting_fn(y, i)
    updated, _, probability, weight = act_update(
        slot, y, raw_probability, state["running"], i, loop.cap, loop.epsilon)
    state.update(updated)
    if loop.layer.reuse_keys:  # the slots' new queries/keys/values (none after the last iteration)
        names = ("query", "key", "value")
        state.update(zip(names, tf.cond(tf.reduce_any(state["running"]),
                                        lambda: loop.layer.project_fn(updated["h"], i + 1),
                                        lambda: tuple(state[k] for k in names))))
    if return_details:
        zeros = tf.zeros([loop.batch_size, loop.length])
        full_h = to_positions(loop, state, updated["h"], state["full_h"])
        state.update(record_details(state, i, to_positions(loop, state, probability, zeros),
                                    to_positions(loop, state, weight, zeros), full_h))
    return state
