"""Per-token Adaptive Computation Time (Graves 2016), as DESIGN.md states it.

For token t at iteration n = 1..N_max, with layer output y_t^n = f(h^{n-1})_t:

    p_t^n   = sigmoid(w . y_t^n + b)                            (HaltingUnit)
    N_t     = min{n : sum_{k<=n} p_t^k >= 1 - eps}, capped at N_max
    R_t     = 1 - sum_{k<N_t} p_t^k
    lam_t^n = p_t^n if n < N_t;  R_t if n = N_t;  0 if n > N_t
    h_t^n   = lam_t^n * y_t^n + (1 - lam_t^n) * h_t^{n-1}
    ponder  = sum over real tokens of (N_t + R_t)               (per sequence)

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
shapes, so not for TPU). All three run the same step function.
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
            into keys/values and attention, so frozen tokens' keys are reused).
        return_details: also return per-iteration `halting_probabilities`
            (p_t^n while t runs, else 0), `update_weights` (lam_t^n), both
            (B, T, N_max), and `iteration_states` h^n (B, N_max, T, H); after a
            token halts its state is repeated.

    Returns:
        dict of float32 tensors: `sequence_output` (B, T, H) = h^{N_max},
        `iterations` N_t (B, T), `remainders` R_t (B, T), `ponder_cost` (B,),
        and the details when asked for.
    """
    checks.positive_int("max_iterations", max_iterations)
    checks.probability("epsilon", epsilon, inclusive_low=False)
    checks.one_of("execution", execution, EXECUTIONS)
    if execution == "sparse" and sparse_layer is None:
        raise ValueError('execution="sparse" needs sparse_layer (the layer as keys/values + attention)')

    is_real = ops.cast(padding_mask, "bool")  # (B, T)
    hidden_states = ops.cast(hidden_states, "float32")
    zeros = ops.zeros_like(ops.cast(is_real, "float32"))  # (B, T)
    state = {
        "h": hidden_states,  # h^{n-1}                         (B, T, H)
        "halted": ops.logical_not(is_real),  # padding pre-halted (B, T)
        "accumulated": zeros,  # sum_{k<n} p_t^k                (B, T)
        "iterations": zeros,  # N_t once halted, else 0          (B, T)
        "remainders": zeros,  # R_t once halted, else 0          (B, T)
    }
    if return_details:
        state["probabilities"] = ops.zeros((max_iterations, *ops.shape(zeros)))  # (N, B, T)
        state["weights"] = ops.zeros((max_iterations, *ops.shape(zeros)))  # (N, B, T)
        state["states"] = ops.zeros((max_iterations, *ops.shape(hidden_states)))  # (N, B, T, H)

    def dense_outputs(state, i, running):
        y = ops.cast(layer_fn(state["h"], i), "float32")  # (B, T, H)
        return y, None if halting_fn is None else halting_fn(y, i), {}

    if execution == "sparse":
        compute = _sparse_outputs(sparse_layer, halting_fn)
        state.update(sparse_layer.initial_cache(hidden_states))
    else:
        compute = dense_outputs

    def step(i, state):
        running = ops.logical_not(state["halted"])  # (B, T)
        y, raw_probability, cache = compute(state, i, running)  # y: (B, T, H), p: (B, T)
        at_cap = ops.equal(i + 1, max_iterations)
        if halting_fn is None:
            weight = ops.cast(running, "float32")
            halts_now = ops.logical_and(running, at_cap)
            probability = zeros
            remainders = state["remainders"]
            accumulated = state["accumulated"]
        else:
            probability = ops.where(running, ops.cast(raw_probability, "float32"), 0.0)
            reaches = ops.greater_equal(state["accumulated"] + probability, 1.0 - epsilon)
            halts_now = ops.logical_and(running, ops.logical_or(reaches, at_cap))
            remainder = 1.0 - state["accumulated"]  # R_t = 1 - sum_{k<N_t} p_t^k
            weight = ops.where(halts_now, remainder, probability)  # lam_t^n
            remainders = ops.where(halts_now, remainder, state["remainders"])
            accumulated = ops.where(halts_now, state["accumulated"], state["accumulated"] + probability)
        if halting_fn is None:  # lam is 1 or 0: select, no arithmetic
            h = ops.where(running[..., None], y, state["h"])
        else:
            # lam y + (1 - lam) h, written as h + lam (y - h): one op fewer on (B, T, H),
            # and halted/padding tokens (lam = 0) keep h exactly, no select needed.
            h = state["h"] + weight[..., None] * (y - state["h"])
        new_state = {
            "h": h,
            "halted": ops.logical_or(state["halted"], halts_now),
            "accumulated": accumulated,
            "iterations": ops.where(halts_now, ops.cast(i + 1, "float32"), state["iterations"]),
            "remainders": remainders,
            **cache,
        }
        if return_details:
            for key, value in (("probabilities", probability), ("weights", weight), ("states", h)):
                start = [i] + [0] * len(value.shape)
                new_state[key] = ops.slice_update(state[key], start, value[None])
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

    outputs = {
        "sequence_output": state["h"],
        "iterations": state["iterations"],
        "remainders": state["remainders"],
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
    """A layer as the sparse loop needs it: keys/values and attention, apart.

    key_value_fn(states, i) -> (key, value), each (B, S, ...) for states (B, S, H);
    attend_fn(query_states, key, value, i) -> y (B, Q, H), attending to all T keys.
    reuse_keys: keys of frozen tokens stay valid from one iteration to the next
    (True for a shared layer; False when each iteration has its own weights).
    """

    def __init__(self, key_value_fn, attend_fn, reuse_keys=True):
        self.key_value_fn, self.attend_fn, self.reuse_keys = key_value_fn, attend_fn, reuse_keys

    def initial_cache(self, hidden_states):
        """Keys/values of h^0 for every position; nothing changed since."""
        import tensorflow as tf

        key, value = self.key_value_fn(tf.cast(hidden_states, tf.float32), 0)
        return {"key": key, "value": value, "changed": tf.zeros(tf.shape(hidden_states)[:2], tf.bool)}


def _gather_rows(mask):
    """Indices (B, W) of each row's True positions first (stable), and the (row, slot) pairs that are real."""
    import tensorflow as tf

    counts = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)  # (B,)
    width = tf.reduce_max(counts)
    order = tf.argsort(tf.cast(tf.logical_not(mask), tf.int32), axis=1, stable=True)[:, :width]  # (B, W)
    slots = tf.where(tf.range(width)[None, :] < counts[:, None])  # (M, 2): (row, slot)
    positions = tf.stack([slots[:, 0], tf.cast(tf.gather_nd(order, slots), tf.int64)], axis=-1)  # (M, 2): (row, t)
    return order, slots, positions


def _sparse_outputs(layer, halting_fn):
    """Layer output and halting probability computed at running positions only, scattered to (B, T, ...).

    Keys/values are cached in the loop state and recomputed only for tokens whose
    state changed at the previous iteration (all of them when `layer.reuse_keys` is
    False). Running tokens are gathered per sequence (stable order), padded to the
    largest running count; padded slots are computed but never scattered. Non-running
    positions get y = 0 and p = 0, which the step leaves unused (their weight is 0).
    """
    import tensorflow as tf  # dynamic shapes: the TensorFlow backend only

    def compute(state, i, running):
        h = state["h"]
        changed = state["changed"] if layer.reuse_keys else tf.ones_like(state["changed"])
        order, slots, positions = _gather_rows(changed)
        fresh_key, fresh_value = layer.key_value_fn(tf.gather(h, order, batch_dims=1), i)  # (B, W, ...)
        key = tf.tensor_scatter_nd_update(state["key"], positions, tf.gather_nd(fresh_key, slots))
        value = tf.tensor_scatter_nd_update(state["value"], positions, tf.gather_nd(fresh_value, slots))

        order, slots, positions = _gather_rows(running)
        y_query = tf.cast(layer.attend_fn(tf.gather(h, order, batch_dims=1), key, value, i), tf.float32)  # (B, Q, H)
        shape = tf.shape(h, out_type=tf.int64)
        y = tf.scatter_nd(positions, tf.gather_nd(y_query, slots), shape)
        cache = {"key": key, "value": value, "changed": running}  # running tokens change this iteration
        if halting_fn is None:
            return y, None, cache
        p_query = tf.cast(halting_fn(y_query, i), tf.float32)  # (B, Q)
        return y, tf.scatter_nd(positions, tf.gather_nd(p_query, slots), shape[:2]), cache

    return compute
