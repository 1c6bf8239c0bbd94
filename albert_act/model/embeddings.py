"""ALBERT's factorized embeddings: small (E) token/position/segment tables, projected to H."""

import keras
from keras import ops

from albert_act.base import checks


@keras.saving.register_keras_serializable(package="albert_act")
class FactorizedEmbedding(keras.layers.Layer):
    """Token + position + segment embeddings of size E, LayerNorm, dropout, projection E -> H.

    ALBERT factorizes the vocabulary matrix (V x H) into V x E and E x H with
    E << H. The token table is a `keras.layers.ReversibleEmbedding`, so the MLM
    head can reuse it as its (tied) output decoder.

    Args:
        vocabulary_size: int, number of token ids.
        embedding_dim: int, E.
        hidden_dim: int, H (size of the projection output).
        max_sequence_length: int, number of learned positions.
        num_segments: int, number of segment ids (2 for `[CLS] A [SEP] B [SEP]`).
        layer_norm_epsilon: float, LayerNorm epsilon (ALBERT: 1e-12).
        dropout: float, dropout rate after the LayerNorm.
        initializer_range: float, stddev of the truncated-normal initializers.

    Call arguments:
        token_ids: int tensor (B, T), T <= max_sequence_length.
        segment_ids: int tensor (B, T).

    Returns:
        float tensor (B, T, H).

    Example:
    >>> layer = FactorizedEmbedding(100, 8, 16, max_sequence_length=12)
    >>> layer(ops.ones((2, 5), "int32"), ops.zeros((2, 5), "int32")).shape
    TensorShape([2, 5, 16])
    """

    def __init__(
        self,
        vocabulary_size,
        embedding_dim,
        hidden_dim,
        max_sequence_length=512,
        num_segments=2,
        layer_norm_epsilon=1e-12,
        dropout=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocabulary_size = checks.positive_int("vocabulary_size", vocabulary_size)
        self.embedding_dim = checks.positive_int("embedding_dim", embedding_dim)
        self.hidden_dim = checks.positive_int("hidden_dim", hidden_dim)
        self.max_sequence_length = checks.positive_int("max_sequence_length", max_sequence_length, checks.MAX_SEQUENCE_LENGTH)
        self.num_segments = checks.positive_int("num_segments", num_segments)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.dropout = checks.probability("dropout", dropout)
        self.initializer_range = initializer_range

        init = lambda: keras.initializers.TruncatedNormal(stddev=initializer_range)  # noqa: E731
        self.token_embedding = keras.layers.ReversibleEmbedding(
            vocabulary_size, embedding_dim, embeddings_initializer=init(),
            dtype=self.dtype_policy, name="token_embedding",
        )
        self.segment_embedding = keras.layers.Embedding(
            num_segments, embedding_dim, embeddings_initializer=init(),
            dtype=self.dtype_policy, name="segment_embedding",
        )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy)
        self.projection = keras.layers.Dense(
            hidden_dim, kernel_initializer=init(), dtype=self.dtype_policy, name="projection"
        )

    def build(self, token_ids_shape, segment_ids_shape=None):
        self.token_embedding.build(token_ids_shape)
        self.segment_embedding.build(token_ids_shape)
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_sequence_length, self.embedding_dim),
            initializer=keras.initializers.TruncatedNormal(stddev=self.initializer_range),
        )
        self.layer_norm.build((None, None, self.embedding_dim))
        self.projection.build((None, None, self.embedding_dim))

    def call(self, token_ids, segment_ids, training=None):
        length = token_ids.shape[1]
        if length is not None and length > self.max_sequence_length:
            raise ValueError(
                f"sequence length {length} exceeds max_sequence_length "
                f"{self.max_sequence_length}"
            )
        positions = self.position_embeddings[: ops.shape(token_ids)[1]]  # (T, E)
        x = (
            self.token_embedding(token_ids)
            + ops.cast(positions, self.compute_dtype)[None]
            + self.segment_embedding(segment_ids)
        )  # (B, T, E)
        x = self.dropout_layer(self.layer_norm(x), training=training)
        return self.projection(x)  # (B, T, H)

    def compute_output_shape(self, token_ids_shape, segment_ids_shape=None):
        return (*token_ids_shape, self.hidden_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            vocabulary_size=self.vocabulary_size,
            embedding_dim=self.embedding_dim,
            hidden_dim=self.hidden_dim,
            max_sequence_length=self.max_sequence_length,
            num_segments=self.num_segments,
            layer_norm_epsilon=self.layer_norm_epsilon,
            dropout=self.dropout,
            initializer_range=self.initializer_range,
        )
        return config
