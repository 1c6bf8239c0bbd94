"""Per-token Adaptive Computation Time (Graves 2016), as DESIGN.md states it.

For token t at iteration n = 1..N_max, with layer output y_t^n = f(h^{n-1})_t:

    p_t^n   = sigmoid(w . y_t^n + b)                            (HaltingUnit)
    N_t     = min{n : sum_{k<=n} p_t^k >= 1 - eps}, capped at N_max
    R_t     = 1 - sum_{k<N_t} p_t^k
    lam_t^n = p_t^n if n < N_t;  R_t if n = N_t;  0 if n > N_t
    h_t^n   = lam_t^n * y_t^n + (1 - lam_t^n) * h_t^{n-1}
    ponder  = sum over real tokens of (N_t + R_t)               (per sequence)
    E_t     = sum_n n * lam_t^n                                 (expected iterations)

lam_t^1..N_t is the halting distribution of token t: it sums to 1, and E_t, its
mean, is a continuous depth (E_t <= N_t) that moves with the halting
probabilities even while N_t, a whole number, stays put. With fixed depth
E_t = N_max.

Decisions: the remainder is forced at the cap (every token's weights sum to 1);
halting is tracked with a boolean mask, never by comparing a float sum with 1;
padding is halted before the first iteration (N = R = 0); halted tokens keep
their state, which stays visible as keys/values to running tokens; N_t carries
no gradient, the ponder gradient flows through R_t. All ACT state is float32,
whatever the compute dtype of the layer.

`halting_loop` runs the iterations either as a static loop of N_max steps
(`execution="static"`, XLA/TPU friendly), as a while loop that exits once
every token has halted (`execution="while"`), or as that while loop computing
the layer and the halting unit for running tokens only (`execution="sparse"`,
for inference on CPU/GPU: the cost follows sum N_t, not T x N_max; dynamic
shapes, so not for TPU). All three apply the same ACT update (`_act_step`), to
(B, T) tokens in the dense loops and to the running tokens' slots in the sparse one.
"""

import keras
from keras import ops

from albert_act import checks

EXECUTIONS = ("static", "while", "sparse")


@keras.saving.register_keras_serializable(package="albert_act")
class HaltingUnit(keras.layers.Layer):
    """p = sigmoid(w . y + b): the per-token halting probability, always in float32.

    Args:
        bias_initializer: float, initial b. 0 (the authors' choice) gives p = 0.5
            at the start, so tokens begin by halting after about two iterations.
        initializer_range: float, stddev of the truncated-normal initializer of w.

    Call arguments:
        layer_output: float (B, T, H).

    Returns:
        float32 (B, T) in (0, 1).
    """

    def __init__(self, bias_initializer=0.0, initializer_range=0.02, **kwargs):
        kwargs["dtype"] = "float32"  # ACT state and its inputs stay float32
        super().__init__(**kwargs)
        self.bias_initializer = float(bias_initializer)
        self.initializer_range = initializer_range
        self.dense = keras.layers.Dense(
            1,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            bias_initializer=keras.initializers.Constant(self.bias_initializer),
            dtype="float32",
            name="dense",
        )

    def build(self, layer_output_shape):
        self.dense.build(layer_output_shape)

    def call(self, layer_output):
        return ops.sigmoid(self.dense(layer_output)[..., 0])  # (B, T)

    def compute_output_shape(self, layer_output_shape):
        return layer_output_shape[:-1]

    def get_config(self):
        config = super().get_config()
        config.pop("dtype", None)
        config.update(
            bias_initializer=self.bias_initializer,
            initializer_range=self.initializer_range,
        )
        return config


def halting_loop(
    hidden_states,
    padding_mask,
    layer_fn,
    halting_fn,
    max_iterations,
    epsilon=0.01,
    execution="static",
    return_details=False,
    sparse_layer=None,
):
    """Applies `layer_fn` to each token an adaptive number of times.

    Args:
        hidden_states: float (B, T, H), the initial states h^0.
        padding_mask: bool/int (B, T), 1 for real tokens.
        layer_fn: `layer_fn(h, i) -> y`, the layer output (B, T, H) for states h
            (float32) at 0-based iteration i (a Python int in the static loop, a
            scalar tensor in the while loop). Unused by `execution="sparse"`.
        halting_fn: `halting_fn(y, i) -> p`, float (B, T) halting probabilities;
            `None` gives fixed depth (plain ALBERT/BERT): every real token takes
            lam = 1 at every iteration and halts at N_max with R = 0.
        max_iterations: int, N_max.
        epsilon: float, halting threshold is 1 - epsilon.
        execution: "static" (N_max masked steps), "while" (exits when all halted)
            or "sparse" (while, computing only running tokens; inference).
        sparse_layer: for `execution="sparse"`, a `SparseLayer` (the layer split
            into projections and attention, so frozen tokens' keys/values are reused).
        return_details: also return per-iteration `halting_probabilities`
            (p_t^n while t runs, else 0), `update_weights` (lam_t^n), both
            (B, T, N_max), and `iteration_states` h^n (B, N_max, T, H); after a
            token halts its state is repeated.

    Returns:
        dict of float32 tensors: `sequence_output` (B, T, H) = h^{N_max},
        `iterations` N_t (B, T), `remainders` R_t (B, T), `expected_iterations`
        E_t (B, T), `ponder_cost` (B,), and the details when asked for.
        Padding has N = R = E = 0.
    """
    checks.positive_int("max_iterations", max_iterations)
    checks.probability("epsilon", epsilon, inclusive_low=False)
    checks.one_of("execution", execution, EXECUTIONS)
    if execution == "sparse" and sparse_layer is None:
        raise ValueError('execution="sparse" needs sparse_layer (the layer as projections + attention)')

    is_real = ops.cast(padding_mask, "bool")  # (B, T)
    hidden_states = ops.cast(hidden_states, "float32")
    if execution == "sparse":
        return _sparse_loop(hidden_states, is_real, sparse_layer, halting_fn, max_iterations, epsilon,
                            return_details)

    zeros = ops.zeros_like(ops.cast(is_real, "float32"))  # (B, T)
    state = {
        "h": hidden_states,  # h^{n-1}                         (B, T, H)
        "halted": ops.logical_not(is_real),  # padding pre-halted (B, T)
        "accumulated": zeros,  # sum_{k<n} p_t^k                (B, T)
        "iterations": zeros,  # N_t once halted, else 0          (B, T)
        "remainders": zeros,  # R_t once halted, else 0          (B, T)
        "expected": zeros,  # sum_{k<n} k lam_t^k                (B, T)
    }
    if return_details:
        state.update(_empty_details(max_iterations, hidden_states))

    def step(i, state):
        running = ops.logical_not(state["halted"])  # (B, T)
        y = ops.cast(layer_fn(state["h"], i), "float32")  # (B, T, H)
        raw_probability = None if halting_fn is None else halting_fn(y, i)
        new_state, halts_now, probability, weight = _act_step(
            state, y, raw_probability, running, i, max_iterations, epsilon)
        new_state["halted"] = ops.logical_or(state["halted"], halts_now)
        if return_details:
            new_state.update(_record_details(state, i, probability, weight, new_state["h"]))
        return new_state

    if execution == "static":
        for i in range(max_iterations):
            state = step(i, state)
        steps_run = max_iterations
    else:
        def cond(i, state):
            return ops.logical_not(ops.all(state["halted"]))

        def body(i, state):
            return i + 1, step(i, state)

        steps_run, state = ops.while_loop(
            cond, body, (ops.convert_to_tensor(0, "int32"), state), maximum_iterations=max_iterations
        )
    return _outputs(state, steps_run, max_iterations, return_details)


def _act_step(state, y, raw_probability, running, i, max_iterations, epsilon):
    """One ACT update, elementwise over any token layout ((B, T) dense, (B, W) running slots).

    state holds `h` (..., H) and `accumulated`, `iterations`, `remainders`, `expected` (...);
    y (..., H) is the layer output, raw_probability (...) p_t^n or None (fixed depth).
    Returns (new state without `halted`, halts_now, probability, weight lam_t^n).
    """
    at_cap = ops.equal(i + 1, max_iterations)
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
    }
    return new_state, halts_now, probability, weight


def _empty_details(max_iterations, hidden_states):
    shape = ops.shape(hidden_states)
    return {
        "probabilities": ops.zeros((max_iterations, shape[0], shape[1])),  # (N, B, T)
        "weights": ops.zeros((max_iterations, shape[0], shape[1])),  # (N, B, T)
        "states": ops.zeros((max_iterations, *shape)),  # (N, B, T, H)
    }


def _record_details(state, i, probability, weight, h):
    """The details arrays with iteration i's p (B, T), lam (B, T) and h (B, T, H) written in."""
    recorded = {}
    for key, value in (("probabilities", probability), ("weights", weight), ("states", h)):
        start = [i] + [0] * len(value.shape)
        recorded[key] = ops.slice_update(state[key], start, value[None])
    return recorded


def _outputs(state, steps_run, max_iterations, return_details):
    outputs = {
        "sequence_output": state["h"],
        "iterations": state["iterations"],
        "remainders": state["remainders"],
        "expected_iterations": state["expected"],
        "ponder_cost": ops.sum(state["iterations"] + state["remainders"], axis=-1),  # padding: 0
    }
    if return_details:
        # Iterations the while loop skipped leave every token frozen: repeat h.
        skipped = ops.arange(max_iterations) >= steps_run  # (N,)
        states = ops.where(skipped[:, None, None, None], state["h"][None], state["states"])
        outputs["halting_probabilities"] = ops.transpose(state["probabilities"], (1, 2, 0))
        outputs["update_weights"] = ops.transpose(state["weights"], (1, 2, 0))
        outputs["iteration_states"] = ops.transpose(states, (1, 0, 2, 3))
    return outputs


class SparseLayer:
    """A layer as the sparse loop needs it: projections and attention, apart.

    project_fn(states, i) -> (query, key, value), each (B, heads, S, head_dim) for
        states (B, S, H) at 0-based iteration i.
    attend_fn(query_states, query, keys, i) -> y (B, Q, H): the layer output for Q
        tokens, whose queries attend to `keys`, a list of groups (key, value, mask),
        key/value (B, heads, S, head_dim), mask (B, 1, 1, S) bool, one softmax over all.
    reuse_keys: keys/values of frozen tokens stay valid from one iteration to the next
        (True for a shared layer; False when each iteration has its own weights, then
        every position is projected again at every iteration).
    """

    def __init__(self, project_fn, attend_fn, reuse_keys=True):
        self.project_fn, self.attend_fn, self.reuse_keys = project_fn, attend_fn, reuse_keys


def _sparse_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details):
    """The ACT loop computing, at each iteration, only the tokens still running.

    The state lives in slot space: `slots` (B, W) are token positions and `h`,
    `running`, `accumulated`, ... their values. Slots start as every position
    (W = T, in order); whenever every row has fewer running tokens than W, the slots
    are narrowed to each row's running tokens (stable order, so [CLS] stays first;
    shorter rows are filled with some of their own halted tokens, which are computed
    but never change). Halted tokens leave the slots only then, after their state,
    N_t, R_t and keys/values are written back to the (B, T, ...) tensors; so an
    iteration that narrows nothing gathers and scatters nothing.

    Keys/values: after each update the slots are projected once, which gives their
    queries for the next iteration and their fresh keys/values. While the slots are
    every position, those are all the keys. Once narrowed, queries attend to two
    groups: the cache (B, heads, T, head_dim) of tokens that left the slots, with the
    slots' own (stale) positions masked, and the slots' fresh keys/values. So the
    cache is written only when slots narrow, never rewritten per iteration. The loop
    ends when nothing runs.
    """
    import tensorflow as tf  # dynamic shapes: the TensorFlow backend only

    batch_size, length = tf.shape(is_real)[0], tf.shape(is_real)[1]
    PER_TOKEN = ("h", "iterations", "remainders", "expected")  # slot values also kept at full (B, T, ...) size
    # Slot tensors and the axis their slots run along (queries/keys/values: (B, heads, W, head_dim)).
    slot_axis = dict(slots=1, h=1, running=1, accumulated=1, iterations=1, remainders=1, expected=1,
                     query=2, key=2, value=2)
    real_keys = is_real[:, None, None, :]  # (B, 1, 1, T)

    def is_every_position(state):  # slots were never narrowed: slot w is position w
        return tf.equal(tf.shape(state["slots"])[1], length)

    def to_positions(state, values, base, axis=1):
        """Slot values (B, W, ...) (slot axis `axis`) written over `base` (B, T, ...) at their positions."""
        def scatter():
            if axis == 1:
                rows = tf.broadcast_to(tf.range(batch_size)[:, None], tf.shape(state["slots"]))
                return tf.tensor_scatter_nd_update(base, tf.stack([rows, state["slots"]], axis=-1), values)
            shape = tf.shape(values)[:3]  # (B, heads, W): keys/values
            index = tf.stack([tf.broadcast_to(tf.range(batch_size)[:, None, None], shape),
                              tf.broadcast_to(tf.range(shape[1])[None, :, None], shape),
                              tf.broadcast_to(state["slots"][:, None, :], shape)], axis=-1)  # (row, head, t)
            return tf.tensor_scatter_nd_update(base, index, values)

        return tf.cond(is_every_position(state), lambda: values, scatter)

    def write_back(state):
        written = {f"full_{k}": to_positions(state, state[k], state[f"full_{k}"]) for k in PER_TOKEN}
        if layer.reuse_keys:
            written.update({f"cache_{k}": to_positions(state, state[k], state[f"cache_{k}"], axis=2)
                            for k in ("key", "value")})
        return written

    def narrow(state):
        """Slots cut to each row's running tokens, everything about the leavers written back first."""
        state = {**state, **write_back(state)}
        width = tf.reduce_max(tf.reduce_sum(tf.cast(state["running"], tf.int32), axis=1))
        order = tf.argsort(tf.cast(tf.logical_not(state["running"]), tf.int32), axis=1, stable=True)[:, :width]
        for k, axis in slot_axis.items():
            if k in state:
                state[k] = tf.gather(state[k], order, axis=axis, batch_dims=1)
        if layer.reuse_keys:  # the cache stands for every token but the slots
            not_in_slots = to_positions(state, tf.zeros(tf.shape(state["slots"]), tf.bool), is_real)
            state["cache_mask"] = not_in_slots[:, None, None, :]
        return state

    zeros = tf.zeros([batch_size, length])
    state = {
        "slots": tf.broadcast_to(tf.range(length)[None], [batch_size, length]),  # (B, W)
        "h": hidden_states,  # (B, W, H)
        "running": is_real,  # (B, W)
        "accumulated": zeros,
        "iterations": zeros,
        "remainders": zeros,
        "expected": zeros,
        "full_h": hidden_states,  # (B, T, H), written back when slots narrow
        "full_iterations": zeros,  # (B, T)
        "full_remainders": zeros,
        "full_expected": zeros,
    }
    if layer.reuse_keys:
        query, key, value = layer.project_fn(hidden_states, 0)  # (B, heads, W, head_dim), the slots'
        state.update(query=query, key=key, value=value, cache_key=tf.zeros_like(key),
                     cache_value=tf.zeros_like(value), cache_mask=tf.zeros_like(real_keys))
    if return_details:
        state.update(_empty_details(max_iterations, hidden_states))

    # Shapes through the loop: slots narrow (axis 1; axis 2 of queries/keys/values), nothing else.
    invariants = {k: tf.TensorShape(v.shape) for k, v in state.items()}
    for k, axis in slot_axis.items():
        if k in invariants:
            shape = invariants[k].as_list()
            shape[axis] = None
            invariants[k] = tf.TensorShape(shape)

    def with_shapes(state):  # tf.cond forgets static sizes that both branches share
        for k, v in state.items():
            v.set_shape(invariants[k])
        return state

    def attend(state, i):
        """Layer output (B, W, H) of the slots: attending to every current key/value."""
        if not layer.reuse_keys:  # this iteration's weights: every position's keys/values anew
            query, key, value = layer.project_fn(state["full_h"], i)
            query = tf.gather(query, state["slots"], axis=2, batch_dims=1)
            return layer.attend_fn(state["h"], query, [(key, value, real_keys)], i)
        fresh = (state["key"], state["value"])
        return tf.cond(
            is_every_position(state),
            lambda: layer.attend_fn(state["h"], state["query"], [(*fresh, real_keys)], i),
            lambda: layer.attend_fn(state["h"], state["query"], [
                (state["cache_key"], state["cache_value"], state["cache_mask"]),
                (*fresh, tf.gather(is_real, state["slots"], batch_dims=1)[:, None, None, :])], i))

    def body(i, state):
        running_width = tf.reduce_max(tf.reduce_sum(tf.cast(state["running"], tf.int32), axis=1))
        state = with_shapes(tf.cond(running_width < tf.shape(state["slots"])[1],
                                    lambda: narrow(state), lambda: dict(state)))
        if not layer.reuse_keys:
            state.update(write_back(state))

        slot = {k: state[k] for k in ("accumulated",) + PER_TOKEN}
        y = tf.cast(attend(state, i), tf.float32)  # (B, W, H)
        raw_probability = None if halting_fn is None else halting_fn(y, i)
        updated, halts_now, probability, weight = _act_step(
            slot, y, raw_probability, state["running"], i, max_iterations, epsilon)
        state.update(updated, running=tf.logical_and(state["running"], tf.logical_not(halts_now)))
        if layer.reuse_keys:  # the slots' new queries/keys/values (none after the last iteration)
            names = ("query", "key", "value")
            state.update(zip(names, tf.cond(tf.reduce_any(state["running"]),
                                            lambda: layer.project_fn(updated["h"], i + 1),
                                            lambda: tuple(state[k] for k in names))))
        if return_details:
            full_h = to_positions(state, updated["h"], state["full_h"])
            state.update(_record_details(
                state, i, to_positions(state, probability, zeros), to_positions(state, weight, zeros), full_h))
        return i + 1, with_shapes(state)

    def cond(i, state):
        return tf.reduce_any(state["running"])

    steps_run, state = tf.while_loop(
        cond, body, (tf.constant(0, tf.int32), state), maximum_iterations=max_iterations,
        shape_invariants=(tf.TensorShape([]), invariants))
    full = {k: to_positions(state, state[k], state[f"full_{k}"]) for k in PER_TOKEN}
    for k, v in full.items():
        v.set_shape(invariants[f"full_{k}"])
    if return_details:
        full.update({k: state[k] for k in ("probabilities", "weights", "states")})
    return _outputs(full, steps_run, max_iterations, return_details)
