"""The ACT loop for training that computes, at each iteration, only the tokens still running.

Same numbers and the same gradients as the static loop of `albert_act.model.halting` (the
same `albert_act.model.act_state.act_update`, applied to (B, T) tokens), at a cost that
follows the running tokens instead of T x N_max. Two forms:

* `execution="gather"` (CPU/GPU): at iteration n, each row's running tokens are gathered
  into W slots, W the most running tokens of any row (a dynamic shape: no XLA); when some
  row still runs whole, the iteration runs dense, without gathers or scatters; when no token
  runs, the iteration is skipped (the state would stay exactly as it is).
* `execution="bucket"` (XLA/TPU): W is the smallest of a few static widths ("capacity
  buckets", `bucket_widths`: T, T/2, T/4, ... and 0) that holds every row's running tokens;
  `tf.switch_case` runs that width's branch, so every shape is static. With a `capacity`
  below T the largest bucket can overflow: the running tokens past it (the last positions
  of a row) halt the ACT way at that iteration, their remainder taking the rest of the
  halting mass on their current state (y = h, so h stays), and are counted in `overflows`.

An iteration (n >= 2; the first runs every real token, as dense as the static loop):

    slots    = each row's running tokens, in position order, then non-running ones   (B, W)
    y_slots  = block(h[slots]) attending to the keys/values of every real token      (B, W, H)
    y, p     = y_slots, p_slots scattered to their positions (0 elsewhere)            (B, T, ...)
    state    = act_update(state, y, p)        (non-running tokens: lam = 0, h kept exactly)

Keys/values (a shared block, `reuse_keys`): queries, keys and values of every token live in
caches (B, heads, T, head_dim), projected once from h^0; after each update only the slots
are projected anew and written over their positions. A halted token's keys/values stay in
the cache, and the gradient reaches its frozen state through them. Unshared blocks project
every position with the iteration's own weights instead. Slots are distinct positions (a
stable sort), so the scatters never write one position twice and each gather's gradient is
the exact sum of its uses.
"""


import keras
import tensorflow as tf  # gathers/scatters with batch dims: the TensorFlow backend only
from keras.src.backend import AutocastScope  # no public name; keras is pinned (requirements.txt)
from tensorflow.compiler.tf2xla.ops import gen_xla_ops  # XlaOptimizationBarrier: no public name either

from albert_act.model.act_state import (act_update, gather_slots, initial_state, key_mask, most_running, outputs_of,
                                        record_details, running_first, scatter_slots, slot_index)
from albert_act.model.switched_halting import bucket_widths  # noqa: F401 (the widths, shared with the JAX form)


def gathered_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details,
                  buckets=None):
    """The loop; arguments and outputs as `halting.halting_loop` (is_real bool (B, T), h float32).

    buckets: None for the dynamic form, else ascending static widths (`bucket_widths`).
    """
    shape = tf.shape(is_real)
    length = is_real.shape[1] if is_real.shape[1] is not None else shape[1]
    state = initial_state(hidden_states, is_real, max_iterations, return_details, layer)
    state["overflows"] = tf.zeros_like(state["iterations"])  # (B, T): tokens a capacity made halt
    real_keys = key_mask(is_real)  # (B, 1, 1, T)
    # Only a capacity below the length can leave running tokens out of the slots; gather's W
    # always holds them all, so it skips the overflow bookkeeping (a scatter and a (B, T, H) select).
    can_overflow = buckets is not None and buckets[-1] < length

    def block(slot_h, query, key, value, i):
        """The layer and the halting unit for the slots: (B, W, H) and (B, W) (None at fixed depth)."""
        y = tf.cast(layer.attend_fn(slot_h, query, [(key, value, real_keys)], i), tf.float32)
        return y, None if halting_fn is None else tf.cast(halting_fn(y, i), tf.float32)

    def iteration(i, state, width):
        """Iteration i (0-based) computing `width` slots per row (an int, or a tensor for "gather")."""
        running = state["running"]
        dense = isinstance(width, int) and width == length
        if dense:
            slots, slot_h = None, state["h"]
        else:
            slots = running_first(running, width)  # (B, W)
            slot_h = gather_slots(state["h"], slots)  # (B, W, H)
        if layer.reuse_keys:
            query, key, value = state["query"], state["key"], state["value"]
        else:  # this iteration's weights: every position's queries/keys/values anew
            query, key, value = layer.project_fn(state["h"], i)
        if not dense:
            query = gather_slots(query, slots, axis=2)
        y, probability = block(slot_h, query, key, value, i)  # (B, W, H), (B, W) or None
        forced = None
        if not dense:
            y, probability, forced = _scattered_back(y, probability, slots, state["h"], running, can_overflow)
        updated, halts_now, p, weight = act_update(
            state, y, probability, running, i, max_iterations, epsilon, forced=forced)
        new_state = {**state, **updated}
        if forced is not None:
            new_state["overflows"] = state["overflows"] + tf.cast(forced, tf.float32)
        if layer.reuse_keys and i + 1 < max_iterations:  # the computed tokens' new projections
            if dense:
                projected = layer.project_fn(updated["h"], i + 1)
            else:
                projected = layer.project_fn(gather_slots(updated["h"], slots), i + 1)
            for name, value in zip(("query", "key", "value"), projected):
                new_state[name] = value if dense else scatter_slots(state[name], slots, value, axis=2)
        if return_details:
            new_state.update(record_details(state, i, p, weight, updated["h"]))
        return new_state

    state = _schedule(iteration, state, length, buckets, max_iterations, return_details, layer.weights)
    return outputs_of(state, max_iterations, max_iterations, return_details)


def _scattered_back(y, probability, slots, h, running, can_overflow):
    """The slots' layer outputs (B, W, H) and halting probabilities (B, W) (or None) scattered back
    to their positions, (B, T, H) and (B, T), and the tokens a capacity left out (`forced`, None
    when none can be): they keep their state (y = h), so their remainder changes nothing of h."""
    index = slot_index(slots)
    shape = tf.shape(running)
    y, forced = tf.scatter_nd(index, y, tf.shape(h)), None
    if can_overflow:
        computed = tf.scatter_nd(index, tf.ones_like(slots, tf.bool), shape)  # (B, T)
        forced = tf.logical_and(running, tf.logical_not(computed))  # overflow: past the capacity
        y = tf.where(forced[..., None], h, y)
    if probability is not None:
        probability = tf.scatter_nd(index, probability, shape)
    return y, probability, forced


def _schedule(iteration, state, length, buckets, max_iterations, return_details, weights):
    """The N_max iterations, each at the width it needs: `iteration(i, state, width)`.

    The first runs every position. After it, "gather" computes the most running tokens of any
    row (a full row runs dense, without gathers or scatters; none running skips the iteration),
    and "bucket" the smallest of `buckets` that holds them, under `differentiable_switch`."""
    for i in range(max_iterations):
        needed = most_running(state["running"])
        if i == 0:
            state = iteration(0, state, length if isinstance(length, int) else needed)
        elif buckets is None:
            if isinstance(length, int):
                step = lambda s=state, i=i: tf.cond(  # noqa: E731
                    needed < length, lambda: iteration(i, s, needed), lambda: iteration(i, s, length))
                # Nothing running: the state (keys/values included) stays exactly; skip the
                # iteration's sort, gathers and ACT update, forward and backward. The details
                # record every iteration, so with them it runs.
                state = step() if return_details else tf.cond(needed > 0, step, lambda s=state: dict(s))
            else:
                state = iteration(i, state, needed)
        else:
            choice = tf.minimum(tf.reduce_sum(tf.cast(tf.constant(buckets) < needed, tf.int32)), len(buckets) - 1)
            state = differentiable_switch(lambda s, w, i=i: iteration(i, s, w) if w else dict(s), state, choice, buckets, weights)
    return state


def differentiable_switch(iteration, state, choice, widths, weights=()):
    """`iteration(state, widths[choice])` under `tf.switch_case`, differentiable under XLA.

    The backward pass runs the same switch, each branch recomputing its own forward and
    taking its gradient there: a plain switch's gradient hands every branch's intermediates
    (of each width's shapes) out of the Case op, which XLA on the CPU (TF 2.21) crashes on.
    The price is one more forward of the chosen width in the backward pass.

    Every tensor a switch reads passes an XLA optimization barrier first (`_behind_barrier`).

    weights: the Keras variables the iteration reads (`IteratedLayer.weights`). They enter
    as tensors, read once outside the switch (`keras.StatelessScope` hands them to the
    layers), so their gradients are this function's own. Nothing else the iteration reads
    may carry a gradient: a tensor computed outside and captured (e.g. kernels concatenated
    once) would get none. `running` is not differentiable:
    it is passed through, and the new one read from the new `iterations`.
    """
    names = sorted(k for k in state if k != "running")
    running, weights = state["running"], list(weights)
    with AutocastScope(None):  # the variables' own dtype (float32), whatever the layers compute in
        weight_values = [tf.convert_to_tensor(w.value) for w in weights]

    def forward(values, weight_values, running, width):
        with keras.StatelessScope(state_mapping=list(zip(weights, weight_values))):
            new_state = iteration({**dict(zip(names, values)), "running": running}, width)
        return [new_state[k] for k in names]

    def branches(fn):
        return [lambda w=w: fn(w) for w in widths]

    @tf.custom_gradient
    def run(*args):
        index, running_now, *inputs = _behind_barrier([choice, running, *args])
        values, weight_values = inputs[:len(names)], inputs[len(names):]

        def gradient(*upstream, variables=()):
            upstream = [tf.zeros_like(v) if g is None else g for g, v in zip(upstream, values)]
            index, running_now, *inputs = _behind_barrier([choice, running, *args, *upstream])
            inputs, upstream = inputs[:len(args)], inputs[len(args):]

            def branch_gradient(width):
                with tf.GradientTape() as tape:
                    tape.watch(inputs)
                    outputs = forward(inputs[:len(names)], inputs[len(names):], running_now, width)
                grads = tape.gradient(outputs, [*inputs, *variables], output_gradients=upstream,
                                      unconnected_gradients=tf.UnconnectedGradients.ZERO)
                return [tf.convert_to_tensor(g) for g in grads]

            grads = tf.switch_case(index, branches(branch_gradient))
            return grads[:len(args)], grads[len(args):]

        return tf.switch_case(index, branches(lambda w: forward(values, weight_values, running_now, w))), gradient

    new_state = dict(zip(names, run(*[state[k] for k in names], *weight_values)))
    for k in names:
        new_state[k].set_shape(state[k].shape)
    # A token halted at this iteration has its N set; one still running has N = 0.
    new_state["running"] = tf.logical_and(running, tf.equal(new_state["iterations"], 0.0))
    return new_state


def _behind_barrier(tensors):
    """The tensors, unchanged, behind one XLA optimization barrier (outside XLA the op passes its
    inputs through), for `differentiable_switch`'s Case ops.

    For each input of a Case op, TensorFlow's XLA bridge asks whether it is a compile-time
    constant, and its value inference walks back through everything the input depends on,
    earlier switches' branches included. Without the barrier that walk took most of the compile:
    at the tests' tiny sizes the forward compiled in 12 s with one switched iteration and 55 s
    with two (the static loop: 2 s), against 6 and 8 s with it; the barrier stops the walk at once."""
    return gen_xla_ops.xla_optimization_barrier(list(tensors))
