"""`AlbertActBackbone`: embeddings -> adaptive-depth encoder -> pooled [CLS]."""

import keras

from albert_act.model.adaptive_encoder import AdaptiveDepthEncoder
from albert_act.model.embeddings import FactorizedEmbedding

INPUTS = ("token_ids", "segment_ids", "padding_mask")
# The constructor's arguments that are the model's config (all but dtype, name and trainable), in
# its order: set as attributes and echoed by `get_config`, one name each (keras-hub's form).
SETTINGS = ("vocabulary_size", "num_heads", "embedding_dim", "hidden_dim", "intermediate_dim", "max_iterations",
            "halting", "share_weights", "halting_epsilon", "halting_bias_initializer", "execution", "capacity",
            "return_details", "dropout", "max_sequence_length", "num_segments", "layer_norm_epsilon",
            "initializer_range", "gelu_approximate")
# Which of them each layer takes (the pooler: hidden_dim and initializer_range).
EMBEDDING_SETTINGS = ("vocabulary_size", "embedding_dim", "hidden_dim", "max_sequence_length", "num_segments",
                      "layer_norm_epsilon", "dropout", "initializer_range")
ENCODER_SETTINGS = ("num_heads", "intermediate_dim", "max_iterations", "halting", "share_weights", "halting_epsilon",
                    "halting_bias_initializer", "execution", "capacity", "return_details", "dropout",
                    "layer_norm_epsilon", "initializer_range", "gelu_approximate")


@keras.saving.register_keras_serializable(package="albert_act")
class AlbertActBackbone(keras.Model):
    """ALBERT encoder whose shared layer runs a learned number of times per token.

    Constructor arguments are the config; `get_config()` echoes every one.

    Args:
        vocabulary_size: int, V.
        num_heads: int, attention heads.
        embedding_dim: int, E (factorized embedding size).
        hidden_dim: int, H.
        intermediate_dim: int, FFN inner size.
        max_iterations: int, N_max (the depth cap; the fixed depth when `halting="none"`).
        halting: "act" (per-token ACT) or "none" (plain ALBERT, N_max iterations).
        share_weights: True (ALBERT) or False (N_max distinct blocks, BERT-style).
        halting_epsilon: float, eps in the threshold 1 - eps (0.01).
        halting_bias_initializer: float, initial halting-unit bias (0, the authors').
        execution: "static" (masked loop of N_max steps; XLA/TPU, the training
            default), "while" (exits as soon as every token has halted) or
            "sparse" (inference on CPU/GPU: each iteration computes only the
            tokens still running; dynamic shapes), "gather" (training on CPU/GPU:
            N_max iterations, each computing only the running tokens; dynamic
            shapes) or "bucket" (the same at static widths: training under XLA,
            TPU). Same numbers and gradients.
        capacity: int or None, "bucket" only: the most tokens per row an iteration
            after the first computes (None: all; tokens past it halt early and are
            counted in `overflows`).
        return_details: also output `halting_probabilities` and `update_weights`
            (B, T, N_max) and `iteration_states` (B, N_max, T, H).
        dropout: float, dropout everywhere (0 in pre-training, as the paper).
        max_sequence_length: int, learned positions.
        num_segments: int, segment ids.
        layer_norm_epsilon: float (1e-12).
        initializer_range: float, truncated-normal stddev (0.02).
        gelu_approximate: bool, GELU in its tanh form (True: ALBERT's own, Hugging Face's
            "gelu_new") or exact (False: Hugging Face's "gelu", e.g. albert-base-v1); the
            FFN's and the MLM head's.
        dtype: dtype or policy, e.g. "mixed_bfloat16"; ACT state stays float32.

    Inputs (dict): `token_ids` int (B, T), `segment_ids` int (B, T),
    `padding_mask` int/bool (B, T), 1 on real tokens.

    Outputs (dict): `sequence_output` (B, T, H) float32, `pooled_output` (B, H)
    (tanh dense on position 0, [CLS]), `iterations` N_t (B, T) float32 (0 on
    padding), `remainders` R_t (B, T), `ponder_cost` (B,) = sum over real
    tokens of N_t + R_t, `overflows` (B,) tokens a capacity made halt early (0 unless
    execution "bucket" with a capacity); plus the details when `return_details=True`.

    Example:
    >>> import numpy as np
    >>> backbone = AlbertActBackbone(vocabulary_size=100, num_heads=2, embedding_dim=8,
    ...     hidden_dim=16, intermediate_dim=32, max_iterations=4, max_sequence_length=16)
    >>> out = backbone({"token_ids": np.ones((2, 5), "int32"),
    ...                 "segment_ids": np.zeros((2, 5), "int32"),
    ...                 "padding_mask": np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])})
    >>> out["iterations"].shape, out["ponder_cost"].shape
    (TensorShape([2, 5]), TensorShape([2]))
    """

    # Not Keras's default serving function: tf.saved_model.save traces one for every model in an export's
    # object tree (seconds each) and our exports declare their own signatures (albert_act/serve/savedmodel.py).
    _default_save_signature = None

    def __init__(
        self,
        vocabulary_size,
        num_heads,
        embedding_dim,
        hidden_dim,
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
        max_sequence_length=512,
        num_segments=2,
        layer_norm_epsilon=1e-12,
        initializer_range=0.02,
        gelu_approximate=True,
        dtype=None,
        **kwargs,
    ):
        settings = locals()  # the arguments, before anything else is defined: the config (`SETTINGS`)
        unknown = sorted(set(kwargs) - {"name", "trainable"})  # Keras's Model would drop them silently
        if unknown:
            raise TypeError(f"AlbertActBackbone got unexpected arguments: {', '.join(unknown)}")
        # Layers first (they validate their arguments), then the functional graph.
        self.embeddings = FactorizedEmbedding(**{k: settings[k] for k in EMBEDDING_SETTINGS}, dtype=dtype,
                                              name="embeddings")
        self.encoder = AdaptiveDepthEncoder(**{k: settings[k] for k in ENCODER_SETTINGS}, dtype=dtype, name="encoder")
        self.pooler = keras.layers.Dense(
            hidden_dim,
            activation="tanh",
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype=dtype,
            name="pooler",
        )

        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUTS}  # (B, T) each
        super().__init__(inputs=inputs, outputs=self._encode(inputs), dtype=dtype, **kwargs)
        for name in SETTINGS:  # echoed by get_config
            setattr(self, name, settings[name])

    def _encode(self, inputs, **encoder_arguments):
        """The named outputs of `inputs` (the model's): embeddings -> encoder -> pooled [CLS]."""
        hidden = self.embeddings(inputs["token_ids"], inputs["segment_ids"])  # (B, T, H)
        outputs = dict(self.encoder(hidden, inputs["padding_mask"], **encoder_arguments))
        outputs["pooled_output"] = self.pooler(outputs["sequence_output"][:, 0, :])  # (B, H)
        return outputs

    def capped(self, inputs, iteration_cap):
        """The model's outputs with every token halting by `iteration_cap` iterations (an int or an
        int scalar tensor; N_max and above change nothing): the same weights, shallower and faster,
        as a served signature's depth knob runs them. inputs: as the model's."""
        return self._encode(inputs, training=False, iteration_cap=iteration_cap)

    def first_halting_logits(self, inputs):
        """float32 (B, T): the halting unit's logit at each token's first iteration (None at fixed
        depth; `AdaptiveDepthEncoder.first_halting_logits`). inputs: as the model's."""
        hidden = self.embeddings(inputs["token_ids"], inputs["segment_ids"])
        return self.encoder.first_halting_logits(hidden, inputs["padding_mask"])

    @property
    def token_embedding(self):
        """The (reversible) token table, shared with the MLM decoder."""
        return self.embeddings.token_embedding

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
            **{name: getattr(self, name) for name in SETTINGS},
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        return cls(**config)
