"""Per-token Adaptive Computation Time (Graves 2016), as docs/design.md states it.

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

`halting_loop` runs the iterations in one of five executions, all with the same numbers:
- `"static"`: a loop of N_max steps over every token (XLA/TPU friendly);
- `"while"`: a while loop that exits once every token has halted;
- `"sparse"`: that while loop computing the layer and the halting unit for running tokens
  only (`albert_act.model.sparse_halting`; inference on CPU/GPU: the cost follows sum N_t,
  not T x N_max; dynamic shapes, not differentiable);
- `"gather"`: N_max steps, each computing only the running tokens, gathered into as many
  slots as the fullest row needs (`albert_act.model.gathered_halting`; training on CPU/GPU:
  differentiable, dynamic shapes);
- `"bucket"`: the same with static slot widths (capacity buckets), so it compiles under
  XLA (training on TPU, and on a CPU with `jit_compile`).
All apply the same ACT update (`albert_act.model.act_state.act_update`); in all, `running`
marks the tokens that still take updates (padding never runs).
"""

import keras
from keras import ops

from albert_act.base import checks
from albert_act.model.act_state import act_update, initial_state, outputs_of, record_details

EXECUTIONS = ("static", "while", "sparse", "gather", "bucket")  # the one list; CLIs take their choices from it
TRAINING_EXECUTIONS = ("static", "while", "gather", "bucket")  # sparse is for inference: not differentiable
CAPPED_EXECUTIONS = ("static", "while", "sparse")  # those that take a served cap on iterations (iteration_cap)
SLOTTED_EXECUTIONS = ("sparse", "gather", "bucket")  # compute running tokens only: need project_fn/attend_fn


def ponder_weight_in_force(stored, halting, signed=False):
    """The ponder-cost weight tau a model trains under, from the value stored with it (a float or a
    tensor): 0 at fixed depth (`halting == "none"`: every token runs N_max, so the ponder cost is a
    constant with no gradient and would only shift the reported loss), and never below 0 (--tau
    auto stores -1 until it is calibrated; no ponder cost meanwhile) unless `signed` (a depth target
    held by a signed multiplier, --target_control signed: below 0 the ponder cost rewards depth)."""
    if halting == "none":
        return keras.ops.convert_to_tensor(0.0)
    if signed:
        return keras.ops.convert_to_tensor(stored)
    return keras.ops.maximum(keras.ops.convert_to_tensor(stored), 0.0)


class IteratedLayer:
    """The layer the loop iterates, in the forms the executions need.

    apply_fn(h, i) -> y: the layer output (B, T, H) for states h (float32) at 0-based
        iteration i (a Python int in the static loop, a scalar tensor in the while loops).
    project_fn(states, i) -> (query, key, value), each (B, heads, S, head_dim) for states
        (B, S, H); attend_fn(query_states, query, keys, i) -> y (B, Q, H), the output for Q
        tokens whose queries attend to `keys`, a list of groups (key, value, mask), key/value
        (B, heads, S, head_dim), mask (B, 1, 1, S) bool, one softmax over all groups.
        Needed by `execution="sparse"` only, which computes the layer for running tokens.
    reuse_keys: keys/values of frozen tokens stay valid from one iteration to the next
        (True for a shared layer; False when each iteration has its own weights).
    weights: the Keras variables the layer and the halting function read; `execution="bucket"`
        takes their gradients itself (`albert_act.model.gathered_halting.differentiable_switch`).
    """

    def __init__(self, apply_fn, project_fn=None, attend_fn=None, reuse_keys=True, weights=()):
        self.apply_fn, self.project_fn, self.attend_fn, self.reuse_keys = apply_fn, project_fn, attend_fn, reuse_keys
        self.weights = tuple(weights)

    @property
    def has_attention_parts(self):
        """True when the layer comes as projections + attention (what the sparse loop needs)."""
        return self.project_fn is not None and self.attend_fn is not None


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
    layer,
    halting_fn,
    max_iterations,
    epsilon=0.01,
    execution="static",
    return_details=False,
    capacity=None,
    iteration_cap=None,
):
    """Applies `layer` to each token an adaptive number of times.

    Args:
        hidden_states: float (B, T, H), the initial states h^0.
        padding_mask: bool/int (B, T), 1 for real tokens.
        layer: an `IteratedLayer`, or a function `apply_fn(h, i) -> y` (dense executions only).
        halting_fn: `halting_fn(y, i) -> p`, float (B, T) halting probabilities;
            `None` gives fixed depth (plain ALBERT/BERT): every real token takes
            lam = 1 at every iteration and halts at N_max with R = 0.
        max_iterations: int, N_max.
        epsilon: float, halting threshold is 1 - epsilon.
        execution: "static" (N_max masked steps), "while" (exits when all halted),
            "sparse" (while, computing only running tokens; inference), "gather"
            (N_max steps computing only running tokens; training, dynamic shapes) or
            "bucket" (the same at static widths; XLA). The last three need `layer`
            with project_fn and attend_fn.
        capacity: "bucket" only: the most tokens per row an iteration computes (default:
            the sequence length, never exceeded). Running tokens past it halt at that
            iteration with their remainder, and are counted in `overflows`.
        iteration_cap: None, or an int scalar (a tensor, e.g. a served signature's input):
            every token halts by min(iteration_cap, N_max) iterations, the remainder taking the
            rest of its halting mass as at N_max, so the same weights run shallower (a serving
            knob that trades accuracy for time; "static", "while" and "sparse" only).
        return_details: also return per-iteration `halting_probabilities`
            (p_t^n while t runs, else 0), `update_weights` (lam_t^n), both
            (B, T, N_max), and `iteration_states` h^n (B, N_max, T, H); after a
            token halts its state is repeated.

    Returns:
        dict of float32 tensors: `sequence_output` (B, T, H) = h^{N_max},
        `iterations` N_t (B, T), `remainders` R_t (B, T), `expected_iterations`
        E_t (B, T), `ponder_cost` (B,), `overflows` (B,) (tokens a capacity made halt;
        always 0 but with "bucket" and a capacity), and the details when asked for.
        Padding has N = R = E = 0.
    """
    layer, cap = _layer_and_cap(layer, max_iterations, epsilon, execution, capacity, iteration_cap)
    is_real = ops.cast(padding_mask, "bool")  # (B, T)
    hidden_states = ops.cast(hidden_states, "float32")
    if execution == "sparse":
        from albert_act.model.sparse_halting import sparse_loop  # TensorFlow only: imported where it runs

        return sparse_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details, cap)
    if execution in ("gather", "bucket"):
        return _gathered(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details,
                         execution, capacity)
    return dense_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, execution == "while",
                      return_details, cap)


def _layer_and_cap(layer, max_iterations, epsilon, execution, capacity, iteration_cap):
    """(`layer` as an `IteratedLayer`, the iteration at which every token halts: N_max or the
    iteration_cap clipped to [1, N_max]); a ValueError names the first of `halting_loop`'s
    arguments that is not valid."""
    checks.positive_int("max_iterations", max_iterations, checks.MAX_ITERATIONS)
    checks.probability("epsilon", epsilon, inclusive_low=False)
    checks.one_of("execution", execution, EXECUTIONS)
    if capacity is not None:
        checks.positive_int("capacity", capacity)
    layer = layer if isinstance(layer, IteratedLayer) else IteratedLayer(layer)
    if execution in SLOTTED_EXECUTIONS and not layer.has_attention_parts:
        raise ValueError(f'execution="{execution}" needs an IteratedLayer with project_fn and attend_fn '
                         "(the layer as projections + attention)")
    if iteration_cap is None:
        return layer, max_iterations
    if execution not in CAPPED_EXECUTIONS:
        raise ValueError(f'iteration_cap is a serving knob of the "static", "while" and "sparse" executions, '
                         f'not "{execution}"')
    return layer, ops.clip(ops.cast(iteration_cap, "int32"), 1, max_iterations)


def _gathered(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details, execution, capacity):
    """The "gather" and "bucket" executions: `albert_act.model.gathered_halting` on TensorFlow; elsewhere
    (JAX) `albert_act.model.switched_halting`, static widths under keras.ops.switch, for both."""
    if keras.backend.backend() != "tensorflow":
        from albert_act.model.switched_halting import bucket_widths, switched_loop

        length = hidden_states.shape[1]
        if capacity is not None:
            raise ValueError(f'execution="{execution}" with a capacity is TensorFlow\'s (gathered_halting); the '
                             f"{keras.backend.backend()} backend computes every running token")
        if not isinstance(length, int):  # a symbolic build (an unknown length): the static loop's shapes
            return dense_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, False, return_details)
        return switched_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details,
                             bucket_widths(length))
    from albert_act.model.gathered_halting import bucket_widths, gathered_loop

    # Bucket widths need a static sequence length; without one (Keras' symbolic build, a
    # signature of unknown length) the widths are dynamic, as in "gather".
    length = hidden_states.shape[1]
    buckets = bucket_widths(length, capacity) if execution == "bucket" and length is not None else None
    return gathered_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, return_details, buckets)


def dense_loop(hidden_states, is_real, layer, halting_fn, max_iterations, epsilon, early_exit, return_details,
               cap=None):
    """The "static" and "while" executions of `halting_loop`: every token's layer output is computed
    at every iteration and the halted ones are masked out. `early_exit` (while) stops once no token
    runs; without it (static) the N_max steps are unrolled, a shape XLA compiles as it is. `cap`:
    the iteration at which every token halts (N_max, or `halting_loop`'s iteration_cap)."""
    cap = max_iterations if cap is None else cap
    state = initial_state(hidden_states, is_real, max_iterations, return_details)

    def step(i, state):
        y = ops.cast(layer.apply_fn(state["h"], i), "float32")  # (B, T, H)
        raw_probability = None if halting_fn is None else halting_fn(y, i)
        new_state, _, probability, weight = act_update(state, y, raw_probability, state["running"], i, cap, epsilon)
        if return_details:
            new_state.update(record_details(state, i, probability, weight, new_state["h"]))
        return new_state

    if not early_exit:
        for i in range(max_iterations):
            state = step(i, state)
        return outputs_of(state, max_iterations, max_iterations, return_details)

    def cond(i, state):
        return ops.any(state["running"])

    def body(i, state):
        return i + 1, step(i, state)

    steps_run, state = ops.while_loop(
        cond, body, (ops.convert_to_tensor(0, "int32"), state), maximum_iterations=max_iterations
    )
    return outputs_of(state, steps_run, max_iterations, return_details)
