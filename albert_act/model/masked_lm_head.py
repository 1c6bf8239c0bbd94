"""ALBERT's masked-language-model head, decoder tied to the token embedding."""

import keras
from keras import ops

from albert_act.base import checks


@keras.saving.register_keras_serializable(package="albert_act")
class MaskedLMHead(keras.layers.Layer):
    """Gathers masked positions, dense E + GELU + LayerNorm, tied decoder + output bias.

    Args:
        vocabulary_size: int, V.
        embedding_dim: int, E.
        token_embedding: optional `keras.layers.ReversibleEmbedding` (V, E) used
            as the decoder (tied weights, as ALBERT). Not part of the config:
            models that tie it pass it again when they are rebuilt. Without it
            the head owns an untied (E, V) decoder.
        layer_norm_epsilon, initializer_range, gelu_approximate: as the backbone.

    Call arguments:
        sequence_output: float (B, T, H).
        masked_positions: int (B, P), positions to predict.

    Returns:
        float32 logits (B, P, V).
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        token_embedding=None,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        gelu_approximate=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.gelu_approximate = checks.one_of("gelu_approximate", gelu_approximate, (True, False))
        self.vocabulary_size = checks.positive_int("vocabulary_size", vocabulary_size)
        self.embedding_dim = checks.positive_int("embedding_dim", embedding_dim)
        self.token_embedding = token_embedding
        self.layer_norm_epsilon = layer_norm_epsilon
        self.initializer_range = initializer_range
        init = keras.initializers.TruncatedNormal(stddev=initializer_range)
        self.dense = keras.layers.Dense(
            embedding_dim, kernel_initializer=init, dtype=self.dtype_policy, name="dense"
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        if token_embedding is None:
            self.decoder = keras.layers.Dense(
                vocabulary_size, use_bias=False, kernel_initializer=init,
                dtype=self.dtype_policy, name="decoder",
            )

    def build(self, sequence_output_shape, masked_positions_shape=None):
        self.dense.build(sequence_output_shape)
        self.layer_norm.build((None, None, self.embedding_dim))
        if self.token_embedding is None:
            self.decoder.build((None, None, self.embedding_dim))
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.vocabulary_size,), initializer="zeros"
        )

    def call(self, sequence_output, masked_positions):
        x = ops.take_along_axis(
            sequence_output, ops.cast(masked_positions, "int32")[:, :, None], axis=1
        )  # (B, P, H)
        x = self.layer_norm(ops.gelu(self.dense(x), approximate=self.gelu_approximate))  # (B, P, E)
        if self.token_embedding is None:
            logits = self.decoder(x)
        else:
            logits = self.token_embedding(x, reverse=True)  # x @ table^T: (B, P, V)
        return ops.cast(logits, "float32") + ops.cast(self.output_bias, "float32")

    def compute_output_shape(self, sequence_output_shape, masked_positions_shape):
        return (*masked_positions_shape, self.vocabulary_size)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocabulary_size=self.vocabulary_size,
            embedding_dim=self.embedding_dim,
            layer_norm_epsilon=self.layer_norm_epsilon,
            initializer_range=self.initializer_range,
            gelu_approximate=self.gelu_approximate,
        )
        return config
