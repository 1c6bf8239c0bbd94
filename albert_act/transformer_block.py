"""The post-LN transformer block that ALBERT shares across depth."""

import math

import keras
from keras import ops

from albert_act import checks


@keras.saving.register_keras_serializable(package="albert_act")
class TransformerBlock(keras.layers.Layer):
    """Post-LN encoder block: self-attention + residual + LN, GELU FFN + residual + LN.

    The block can compute its output for a *subset* of query positions while
    attending to all positions (`query_indices`), and is split into `key_value`
    and `attend` so keys/values of frozen tokens can be reused; sparse inference
    uses both to skip tokens that have already halted. Softmax runs in float32
    even under mixed precision.

    Args:
        num_heads: int, attention heads; must divide the hidden size.
        intermediate_dim: int, FFN inner size.
        dropout: float, dropout on attention probabilities and on both residual branches.
        layer_norm_epsilon: float (ALBERT: 1e-12).
        initializer_range: float, stddev of the truncated-normal kernel initializer.

    Call arguments:
        hidden_states: float (B, T, H); keys and values are computed from all of it.
        padding_mask: optional bool/int (B, T); 0 marks padding, never attended to.
        query_indices: optional int (B, Q); positions whose output is computed.
            Default: all T positions.

    Returns:
        float (B, T, H), or (B, Q, H) when `query_indices` is given.

    Example:
    >>> block = TransformerBlock(num_heads=2, intermediate_dim=32)
    >>> x = keras.random.normal((2, 6, 16))
    >>> block(x, padding_mask=ops.ones((2, 6))).shape
    TensorShape([2, 6, 16])
    >>> block(x, query_indices=ops.array([[0, 3], [1, 5]])).shape
    TensorShape([2, 2, 16])
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.0,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.num_heads = checks.positive_int("num_heads", num_heads)
        self.intermediate_dim = checks.positive_int("intermediate_dim", intermediate_dim)
        self.dropout = checks.probability("dropout", dropout)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range

    def build(self, hidden_states_shape):
        hidden_dim = hidden_states_shape[-1]
        checks.divisible("hidden size", hidden_dim, "num_heads", self.num_heads)
        head_dim = hidden_dim // self.num_heads
        self._scale = 1.0 / math.sqrt(head_dim)

        def dense(equation, output_shape, bias_axes, name):
            return keras.layers.EinsumDense(
                equation,
                output_shape=output_shape,
                bias_axes=bias_axes,
                kernel_initializer=keras.initializers.TruncatedNormal(
                    stddev=self.initializer_range
                ),
                dtype=self.dtype_policy,
                name=name,
            )

        # (B, T, H) -> (B, T, heads, head_dim) and back; same kernel shapes as
        # keras.layers.MultiHeadAttention, so weights copy over one to one.
        self.query_dense = dense("btd,dnh->btnh", (None, self.num_heads, head_dim), "nh", "query")
        self.key_dense = dense("btd,dnh->btnh", (None, self.num_heads, head_dim), "nh", "key")
        self.value_dense = dense("btd,dnh->btnh", (None, self.num_heads, head_dim), "nh", "value")
        self.attention_output_dense = dense("btnh,nhd->btd", (None, hidden_dim), "d", "attention_output")
        self.intermediate_dense = dense("btd,df->btf", (None, self.intermediate_dim), "f", "intermediate")
        self.output_dense = dense("btf,fd->btd", (None, hidden_dim), "d", "output")
        for layer in (self.query_dense, self.key_dense, self.value_dense):
            layer.build(hidden_states_shape)
        self.attention_output_dense.build((None, None, self.num_heads, head_dim))
        self.intermediate_dense.build(hidden_states_shape)
        self.output_dense.build((None, None, self.intermediate_dim))

        def layer_norm(name):
            norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name
            )
            norm.build(hidden_states_shape)
            return norm

        self.attention_layer_norm = layer_norm("attention_layer_norm")
        self.output_layer_norm = layer_norm("output_layer_norm")
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def key_value(self, states):
        """Keys and values (B, T, heads, head_dim) of `states` (B, T, H): reusable while states are frozen."""
        return self.key_dense(states), self.value_dense(states)

    def attend(self, query_states, key, value, padding_mask=None, training=None):
        """The block's output for `query_states` (B, Q, H) attending to precomputed keys/values."""
        query = self.query_dense(query_states) * ops.cast(self._scale, self.compute_dtype)
        scores = ops.cast(ops.einsum("bqnh,btnh->bnqt", query, key), "float32")
        if padding_mask is not None:
            # Padding keys get a large negative score: exp() underflows to exactly 0.
            is_padding = 1.0 - ops.cast(padding_mask, "float32")  # (B, T)
            scores = scores - 1e9 * is_padding[:, None, None, :]
        probs = ops.cast(ops.softmax(scores, axis=-1), self.compute_dtype)  # (B, heads, Q, T)
        probs = self.dropout_layer(probs, training=training)
        context = ops.einsum("bnqt,btnh->bqnh", probs, value)  # (B, Q, heads, head_dim)
        attention = self.dropout_layer(self.attention_output_dense(context), training=training)
        x = self.attention_layer_norm(query_states + attention)  # (B, Q, H)

        ffn = ops.gelu(self.intermediate_dense(x), approximate=True)  # (B, Q, F)
        ffn = self.dropout_layer(self.output_dense(ffn), training=training)
        return self.output_layer_norm(x + ffn)  # (B, Q, H)

    def call(self, hidden_states, padding_mask=None, query_indices=None, training=None):
        if query_indices is None:
            query_states = hidden_states  # (B, Q=T, H)
        else:
            query_states = ops.take_along_axis(
                hidden_states, ops.cast(query_indices, "int32")[:, :, None], axis=1
            )  # (B, Q, H)
        key, value = self.key_value(hidden_states)
        return self.attend(query_states, key, value, padding_mask, training)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape=None, query_indices_shape=None):
        if query_indices_shape is None:
            return hidden_states_shape
        return (*query_indices_shape, hidden_states_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            num_heads=self.num_heads,
            intermediate_dim=self.intermediate_dim,
            dropout=self.dropout,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
        )
        return config
