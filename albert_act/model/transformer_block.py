"""The post-LN transformer block that ALBERT shares across depth."""

import math

import keras
from keras import ops

from albert_act.base import checks


@keras.saving.register_keras_serializable(package="albert_act")
class TransformerBlock(keras.layers.Layer):
    """Post-LN encoder block: self-attention + residual + LN, GELU FFN + residual + LN.

    The block can compute its output for a *subset* of query positions while
    attending to all positions (`query_indices`), and is split into `project`
    (queries, keys, values) and `attend`, so keys/values of frozen tokens can be
    reused; sparse inference uses both to skip tokens that have already halted.
    The projections keep the kernel shapes of `keras.layers.MultiHeadAttention`
    (weights copy over one to one) but run as plain 2-D matmuls, which are faster
    than einsum for the few rows of late sparse iterations. Softmax runs in
    float32 even under mixed precision.

    Args:
        num_heads: int, attention heads; must divide the hidden size.
        intermediate_dim: int, FFN inner size.
        dropout: float, dropout on attention probabilities and on both residual branches.
        layer_norm_epsilon: float (ALBERT: 1e-12).
        initializer_range: float, stddev of the truncated-normal kernel initializer.
        gelu_approximate: bool, the FFN's GELU in its tanh form (ALBERT's, Hugging Face's
            "gelu_new") or exact (erf; Hugging Face's "gelu").

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
        gelu_approximate=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.gelu_approximate = checks.one_of("gelu_approximate", gelu_approximate, (True, False))
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

    def qkv_weights(self):
        """(kernel (H, 3 H), bias (3 H,)): the query, key and value kernels side by side.

        Computed once per call of a loop (not per iteration) by sparse inference.
        """
        layers = (self.query_dense, self.key_dense, self.value_dense)
        kernel = ops.concatenate([ops.reshape(self._cast(d.kernel), (ops.shape(d.kernel)[0], -1))
                                  for d in layers], axis=1)
        bias = ops.concatenate([ops.reshape(self._cast(d.bias), (-1,)) for d in layers], axis=0)
        return kernel, bias

    def project(self, states, qkv_weights=None):
        """Queries, keys and values of `states` (B, S, H), each (B, heads, S, head_dim).

        One matmul against `qkv_weights` (default: `self.qkv_weights()`). Keys/values
        of a token depend on its state only, so sparse inference keeps those of frozen tokens.
        """
        kernel, bias = self.qkv_weights() if qkv_weights is None else qkv_weights
        qkv = _dense(states, kernel, bias)  # (B, S, 3 H)
        batch_size, length = ops.shape(states)[0], ops.shape(states)[1]
        qkv = ops.reshape(qkv, (batch_size, length, 3, self.num_heads, self.query_dense.kernel.shape[-1]))
        qkv = ops.transpose(qkv, (2, 0, 3, 1, 4))  # (3, B, heads, S, head_dim)
        return qkv[0], qkv[1], qkv[2]

    def attend(self, query_states, query, keys, training=None):
        """The block's output (B, Q, H) for `query_states` (B, Q, H) with their `query` (B, heads, Q, head_dim).

        `keys`: one or more groups `(key, value, mask)` that the queries attend to, one
        softmax over all of them: key/value (B, heads, S, head_dim), mask (B, 1, 1, S) bool
        or None (see `key_mask`). One group is plain self-attention; sparse inference adds
        the running tokens' fresh keys/values beside the cache of frozen ones.
        """
        query = query * ops.cast(self._scale, query.dtype)
        scores = []
        for key, _, mask in keys:
            group = ops.cast(ops.matmul(query, ops.swapaxes(key, -1, -2)), "float32")  # (B, heads, Q, S)
            if mask is not None:
                # Masked keys get a large negative score: exp() underflows to exactly 0. A select,
                # not an added bias: oneDNN's fused batch-matmul + broadcast add (TF 2.21) returned
                # empty tensors from inside the sparse while loop.
                group = ops.where(mask, group, -1e9)
            scores.append(group)
        scores = scores[0] if len(scores) == 1 else ops.concatenate(scores, axis=-1)
        probs = ops.cast(ops.softmax(scores, axis=-1), self.compute_dtype)
        probs = self.dropout_layer(probs, training=training)
        if len(keys) == 1:
            context = ops.matmul(probs, keys[0][1])  # (B, heads, Q, head_dim)
        else:  # each group's share of the probabilities against its own values, summed
            context, start = None, 0
            for key, value, _ in keys:
                end = start + ops.shape(key)[2]
                part = ops.matmul(probs[..., start:end], value)
                context, start = part if context is None else context + part, end
        context = ops.transpose(context, (0, 2, 1, 3))  # (B, Q, heads, head_dim)
        context = ops.reshape(context, ops.shape(query_states))  # (B, Q, H)
        attention = self.dropout_layer(self._apply(self.attention_output_dense, context), training=training)
        x = self.attention_layer_norm(query_states + attention)  # (B, Q, H)

        ffn = ops.gelu(self._apply(self.intermediate_dense, x), approximate=self.gelu_approximate)  # (B, Q, F)
        ffn = self.dropout_layer(self._apply(self.output_dense, ffn), training=training)
        return self.output_layer_norm(x + ffn)  # (B, Q, H)

    def call(self, hidden_states, padding_mask=None, query_indices=None, training=None):
        query, key, value = self.project(hidden_states)
        query_states = hidden_states  # (B, Q=T, H)
        if query_indices is not None:
            query_indices = ops.cast(query_indices, "int32")  # (B, Q)
            query_states = ops.take_along_axis(hidden_states, query_indices[:, :, None], axis=1)
            query = ops.take_along_axis(query, query_indices[:, None, :, None], axis=2)
        mask = None if padding_mask is None else key_mask(padding_mask)
        return self.attend(query_states, query, [(key, value, mask)], training)

    def _cast(self, variable):
        return ops.cast(variable, self.compute_dtype)

    def _apply(self, layer, x):
        """An EinsumDense sub-layer's kernel/bias applied as one 2-D matmul (fast at any shape)."""
        kernel = self._cast(layer.kernel)
        return _dense(x, ops.reshape(kernel, (-1, ops.shape(kernel)[-1])), self._cast(layer.bias))

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
            gelu_approximate=self.gelu_approximate,
        )
        return config


def key_mask(padding_mask):
    """bool (B, 1, 1, T) from a padding mask (B, T): the keys every query may attend to."""
    return ops.cast(padding_mask, "bool")[:, None, None, :]


def _dense(x, kernel, bias):
    """x (..., D) @ kernel (D, F) + bias (F,) as one 2-D matmul, whatever the leading shape."""
    flat = ops.matmul(ops.reshape(x, (-1, ops.shape(kernel)[0])), kernel) + bias
    return ops.reshape(flat, (*ops.shape(x)[:-1], ops.shape(kernel)[1]))
