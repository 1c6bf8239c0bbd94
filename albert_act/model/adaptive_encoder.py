"""The encoder stack: one shared (or N_max unshared) transformer block, iterated by ACT."""

import functools

import keras
from keras import ops

from albert_act.base import checks
from albert_act.model.halting import EXECUTIONS, HaltingUnit, IteratedLayer, halting_loop
from albert_act.model.transformer_block import TransformerBlock

HALTING_MODES = ("act", "none")


@keras.saving.register_keras_serializable(package="albert_act")
class AdaptiveDepthEncoder(keras.layers.Layer):
    """Applies a transformer block to each token an adaptive number of times.

    `halting="act"` learns per-token depth (docs/design.md); `halting="none"` gives
    fixed depth N_max. `share_weights=False` uses N_max distinct blocks
    (BERT-style), so the paper's ALBERT and BERT baselines come from this class.

    Args:
        num_heads, intermediate_dim, dropout, layer_norm_epsilon, initializer_range, gelu_approximate:
            passed to `TransformerBlock`.
        max_iterations: int, N_max.
        halting: "act" or "none".
        share_weights: bool, one block for all iterations (ALBERT) or N_max (BERT).
        halting_epsilon: float in (0, 1), eps of the threshold 1 - eps.
        halting_bias_initializer: float, initial bias of the halting unit.
        execution: "static", "while", "sparse", "gather" or "bucket" (see `halting.halting_loop`).
        capacity: int or None, "bucket" only: the most tokens per row a later iteration
            computes (None: the sequence length; see `halting.halting_loop`).
        return_details: add per-iteration `halting_probabilities`,
            `update_weights` and `iteration_states` to the outputs.

    Call arguments:
        hidden_states: float (B, T, H).
        padding_mask: bool/int (B, T).
        iteration_cap: optional int scalar: every token halts by min(cap, N_max) iterations
            (`halting.halting_loop`; a serving knob).

    Returns:
        dict: `sequence_output` (B, T, H), `iterations` (B, T), `remainders`
        (B, T), `ponder_cost` (B,), plus the details when asked for; all float32.
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        max_iterations,
        halting="act",
        share_weights=True,
        halting_epsilon=0.01,
        halting_bias_initializer=0.0,
        execution="static",
        capacity=None,
        return_details=False,
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        gelu_approximate=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.gelu_approximate = gelu_approximate
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.max_iterations = checks.positive_int("max_iterations", max_iterations, checks.MAX_ITERATIONS)
        self.halting = checks.one_of("halting", halting, HALTING_MODES)
        self.share_weights = checks.one_of("share_weights", share_weights, (True, False))
        self.halting_epsilon = checks.probability("halting_epsilon", halting_epsilon, inclusive_low=False)
        checks.rule_check("halting_bias_initializer", halting_bias_initializer, "finite")  # (1e39: TensorFlow's raw
        self.halting_bias_initializer = float(halting_bias_initializer)  # "out of range for a double-precision float")
        self.execution = checks.one_of("execution", execution, EXECUTIONS)
        self.capacity = None if capacity is None else checks.positive_int("capacity", capacity)
        self.return_details = bool(return_details)
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

        num_blocks = 1 if share_weights else max_iterations
        self.blocks = [
            TransformerBlock(
                num_heads=num_heads,
                intermediate_dim=intermediate_dim,
                dropout=dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                initializer_range=initializer_range,
                gelu_approximate=gelu_approximate,
                dtype=self.dtype_policy,
                name=f"transformer_block_{i}",
            )
            for i in range(num_blocks)
        ]
        self.halting_unit = None
        if halting == "act":
            self.halting_unit = HaltingUnit(
                bias_initializer=halting_bias_initializer,
                initializer_range=initializer_range,
                name="halting_unit",
            )

    def build(self, hidden_states_shape, padding_mask_shape=None):
        for block in self.blocks:
            block.build(hidden_states_shape)
        if self.halting_unit is not None:
            self.halting_unit.build(hidden_states_shape)

    def _per_block(self, i, fn, *args):
        """fn(block, *args) with the block of iteration i (the shared one, or block i)."""
        if len(self.blocks) == 1:
            return fn(self.blocks[0], *args)
        if isinstance(i, int):  # static loop: pick the block directly
            return fn(self.blocks[i], *args)
        return ops.switch(i, [functools.partial(fn, block) for block in self.blocks], *args)

    def call(self, hidden_states, padding_mask, training=None, iteration_cap=None):
        # sparse, gather: the query/key/value kernels concatenated once, not at every iteration. Not for
        # bucket, whose iterations must read the weights themselves (gathered_halting.differentiable_switch).
        concatenated = self.execution in ("sparse", "gather")
        qkv_weights = {block.name: block.qkv_weights() if concatenated else None for block in self.blocks}

        def apply_block(block, states):
            return block(states, padding_mask=padding_mask, training=training)

        def project_block(block, states):
            return block.project(states, qkv_weights[block.name])

        def attend_block(block, query_states, query, keys):
            return block.attend(query_states, query, keys, training=training)

        def apply_fn(states, i):
            return self._per_block(i, apply_block, ops.cast(states, self.compute_dtype))

        def project_fn(states, i):
            return self._per_block(i, project_block, ops.cast(states, self.compute_dtype))

        def attend_fn(query_states, query, keys, i):
            return self._per_block(i, attend_block, ops.cast(query_states, self.compute_dtype), query, keys)

        layer = IteratedLayer(apply_fn, project_fn=project_fn, attend_fn=attend_fn, reuse_keys=self.share_weights,
                              weights=self.trainable_weights)
        halting_fn = None if self.halting_unit is None else self._halting_probability
        return halting_loop(
            hidden_states,
            padding_mask,
            layer,
            halting_fn,
            max_iterations=self.max_iterations,
            epsilon=self.halting_epsilon,
            execution=self.execution,
            return_details=self.return_details,
            capacity=self.capacity,
            iteration_cap=iteration_cap,
        )

    def _halting_probability(self, y, i):
        """p (B, T) of the layer output y at iteration i (the halting unit reads y alone)."""
        return self.halting_unit(y)

    def first_halting_logits(self, hidden_states, padding_mask):
        """float32 (B, T): w . y_t^1 + b, the halting unit's logit at each token's first iteration,
        which every real token runs in every execution (None at fixed depth). Its spread over
        tokens says whether the unit tells tokens apart at all."""
        if self.halting_unit is None:
            return None
        y = self.blocks[0](ops.cast(hidden_states, self.compute_dtype), padding_mask=padding_mask, training=False)
        return self.halting_unit.dense(ops.cast(y, "float32"))[..., 0]

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            intermediate_dim=self.intermediate_dim,
            max_iterations=self.max_iterations,
            halting=self.halting,
            share_weights=self.share_weights,
            halting_epsilon=self.halting_epsilon,
            halting_bias_initializer=self.halting_bias_initializer,
            execution=self.execution,
            capacity=self.capacity,
            return_details=self.return_details,
            dropout=self.dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            gelu_approximate=self.gelu_approximate,
        )
        return config
