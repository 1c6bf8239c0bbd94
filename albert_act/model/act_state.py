"""What every ACT loop shares: the loop state, the ACT update, the details and the outputs, and
the slot plumbing of the loops that compute running tokens only. One update rule, one meaning of
`running`, for the dense loops (`albert_act.model.halting`), the gathered and bucketed training
loops (`gathered_halting`, `switched_halting`) and the sparse inference loop (`sparse_halting`).

The maths is the one `albert_act.model.halting` states. State keys: `h` (..., H) h^{n-1};
`accumulated` sum_{k<n} p_t^k; `iterations` N_t and `remainders` R_t once halted, else 0;
`expected` sum_{k<n} k lam_t^k; `running`, the tokens still taking updates (padding never runs);
with a layer that reuses keys, `query`, `key`, `value` (B, heads, T, head_dim), its projections.

Slots: a loop over running tokens computes, per row, W slots (B, W) holding token positions,
each row's running tokens first (`running_first`), W at least `most_running`; values move
between slots and positions with `gather_slots` and `scatter_slots` (the TensorFlow loops).
"""

import keras
from keras import ops


def act_update(state, y, raw_probability, running, i, max_iterations, epsilon, forced=None):
    """One ACT update, elementwise over any token layout ((B, T) dense, (B, W) running slots).

    state holds `h` (..., H) and `accumulated`, `iterations`, `remainders`, `expected` (...);
    y (..., H) is the layer output, raw_probability (...) p_t^n or None (fixed depth).
    forced: optional bool (...), tokens that must halt now, as at the cap (the remainder
    takes the rest of the halting mass): a capacity's overflow (`gathered_halting`).
    Returns (new state, halts_now, probability, weight lam_t^n); the new state's `running` is
    `running` without the tokens that halt now.
    """
    at_cap = ops.greater_equal(i + 1, max_iterations)  # N_max, or a smaller served cap (a tensor)
    if forced is not None:
        at_cap = ops.logical_or(at_cap, forced)
    if raw_probability is None:  # fixed depth: lam is 1 while running, halting at the cap
        weight = ops.cast(running, "float32")
        halts_now = ops.logical_and(running, at_cap)
        probability = ops.zeros_like(weight)
        remainders, accumulated = state["remainders"], state["accumulated"]
        h = ops.where(running[..., None], y, state["h"])  # lam is 1 or 0: select, no arithmetic
        expected = ops.where(halts_now, ops.cast(i + 1, "float32"), state["expected"])  # all weight at N_max
    else:
        probability = ops.where(running, ops.cast(raw_probability, "float32"), 0.0)
        reaches = ops.greater_equal(state["accumulated"] + probability, 1.0 - epsilon)
        halts_now = ops.logical_and(running, ops.logical_or(reaches, at_cap))
        remainder = 1.0 - state["accumulated"]  # R_t = 1 - sum_{k<N_t} p_t^k
        weight = ops.where(halts_now, remainder, probability)  # lam_t^n
        remainders = ops.where(halts_now, remainder, state["remainders"])
        accumulated = ops.where(halts_now, state["accumulated"], state["accumulated"] + probability)
        # lam y + (1 - lam) h, written as h + lam (y - h): one op fewer on (..., H),
        # and halted/padding tokens (lam = 0) keep h exactly, no select needed.
        h = state["h"] + weight[..., None] * (y - state["h"])
        expected = state["expected"] + ops.cast(i + 1, "float32") * weight
    new_state = {
        "h": h,
        "accumulated": accumulated,
        "iterations": ops.where(halts_now, ops.cast(i + 1, "float32"), state["iterations"]),
        "remainders": remainders,
        "expected": expected,
        "running": ops.logical_and(running, ops.logical_not(halts_now)),
    }
    return new_state, halts_now, probability, weight


def initial_state(hidden_states, is_real, max_iterations, return_details, layer=None):
    """The loop's state before the first iteration, as every execution starts it: h^0, which tokens
    run (padding never does), and the per-token sums at 0; the details' buffers when asked for; and
    when `layer` (an `IteratedLayer`) reuses keys, every token's first queries/keys/values."""
    zeros = ops.zeros_like(ops.cast(is_real, "float32"))  # (B, T)
    state = {
        "h": hidden_states,  # h^{n-1}                         (B, T, H)
        "running": is_real,  # still taking updates; padding never runs (B, T)
        "accumulated": zeros,  # sum_{k<n} p_t^k                (B, T)
        "iterations": zeros,  # N_t once halted, else 0          (B, T)
        "remainders": zeros,  # R_t once halted, else 0          (B, T)
        "expected": zeros,  # sum_{k<n} k lam_t^k                (B, T)
    }
    if return_details:
        state.update(empty_details(max_iterations, hidden_states))
    if layer is not None and layer.reuse_keys:
        state["query"], state["key"], state["value"] = layer.project_fn(hidden_states, 0)
    return state


def empty_details(max_iterations, hidden_states):
    shape = ops.shape(hidden_states)
    return {
        "probabilities": ops.zeros((max_iterations, shape[0], shape[1])),  # (N, B, T)
        "weights": ops.zeros((max_iterations, shape[0], shape[1])),  # (N, B, T)
        "states": ops.zeros((max_iterations, *shape)),  # (N, B, T, H)
    }


def record_details(state, i, probability, weight, h):
    """The details arrays with iteration i's p (B, T), lam (B, T) and h (B, T, H) written in.

    Written as buffer + one_hot(i) x value, not a slice update: every slot is written once over
    zeros, so the values are exact, and the gradient reaches the values on every backend
    (TensorFlow has no gradient for XLA's dynamic update slice), which the per-iteration
    objectives need (`albert_act.train.losses`)."""
    recorded = {}
    for key, value in (("probabilities", probability), ("weights", weight), ("states", h)):
        buffer = state[key]  # (N, ...)
        slot = ops.one_hot(ops.convert_to_tensor(i, "int32"), buffer.shape[0], dtype=buffer.dtype)  # (N,)
        recorded[key] = buffer + ops.reshape(slot, (-1,) + (1,) * len(value.shape)) * value[None]
    return recorded


def outputs_of(state, steps_run, max_iterations, return_details):
    outputs = {
        "sequence_output": state["h"],
        "iterations": state["iterations"],
        "remainders": state["remainders"],
        "expected_iterations": state["expected"],
        "ponder_cost": ops.sum(state["iterations"] + state["remainders"], axis=-1),  # padding: 0
        # Tokens a capacity made halt early (execution="bucket" with a capacity below T), per sequence.
        "overflows": ops.sum(state["overflows"], axis=-1) if "overflows" in state
        else ops.zeros_like(state["remainders"][..., 0]),
    }
    if return_details:
        # Iterations the while loop skipped leave every token frozen: repeat h.
        skipped = ops.arange(max_iterations) >= steps_run  # (N,)
        states = ops.where(skipped[:, None, None, None], state["h"][None], state["states"])
        outputs["halting_probabilities"] = ops.transpose(state["probabilities"], (1, 2, 0))
        outputs["update_weights"] = ops.transpose(state["weights"], (1, 2, 0))
        outputs["iteration_states"] = ops.transpose(states, (1, 0, 2, 3))
    return outputs


# --- slots: the loops that compute running tokens only -------------------------------------------


def key_mask(is_real):
    """(B, 1, 1, T): which keys attention may read (the real tokens), from is_real (B, T)."""
    return is_real[:, None, None, :]


def most_running(running):
    """The most running tokens of any row of `running` (B, T): the slots an iteration needs."""
    return ops.max(ops.sum(ops.cast(running, "int32"), axis=1))


def running_first(running, width):
    """(B, width) slots: each row's positions, its running tokens first, in position order (a stable
    sort, so [CLS] stays first and no position is in two slots), then its other tokens."""
    not_running = ops.cast(ops.logical_not(running), "int32")
    if keras.backend.backend() == "tensorflow":  # keras' argsort there is not stable
        import tensorflow as tf

        return tf.argsort(not_running, axis=1, stable=True)[:, :width]
    return ops.argsort(not_running, axis=1)[:, :width]  # JAX's sort is stable


def gather_slots(values, slots, axis=1):
    """values (B, T, ...) (positions along `axis`: 2 for queries/keys/values (B, heads, T, d)) at the
    slots' positions: (B, W, ...). TensorFlow's loops (gathered_halting, sparse_halting)."""
    import tensorflow as tf

    return tf.gather(values, slots, axis=axis, batch_dims=1)


def slot_index(slots):
    """(B, W, 2): the (row, position) of every slot of `slots` (B, W), a scatter index into (B, T, ...).
    TensorFlow's loops."""
    import tensorflow as tf

    rows = tf.broadcast_to(tf.range(tf.shape(slots)[0])[:, None], tf.shape(slots))
    return tf.stack([rows, slots], axis=-1)


def scatter_slots(base, slots, values, axis=1):
    """`base` (B, T, ...) with the slots' `values` (B, W, ...) written at their positions (`axis` as
    in `gather_slots`: 2 for queries/keys/values). TensorFlow's loops."""
    import tensorflow as tf

    if axis == 1:
        return tf.tensor_scatter_nd_update(base, slot_index(slots), values)
    shape = tf.shape(values)[:3]  # (B, heads, W)
    index = tf.stack([tf.broadcast_to(tf.range(shape[0])[:, None, None], shape),
                      tf.broadcast_to(tf.range(shape[1])[None, :, None], shape),
                      tf.broadcast_to(slots[:, None, :], shape)], axis=-1)  # (row, head, position)
    return tf.tensor_scatter_nd_update(base, index, values)
