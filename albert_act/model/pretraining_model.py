"""`AlbertActPretrainingModel`: backbone + MLM head + sentence-order-prediction head."""

import keras

from albert_act.model.masked_lm_head import MaskedLMHead
from albert_act.model.task_model import DEPTH_OUTPUTS, backbone_from_config, backbone_inputs


@keras.saving.register_keras_serializable(package="albert_act")
class AlbertActPretrainingModel(keras.Model):
    """Pre-training model: MLM logits at masked positions and SOP logits on [CLS].

    The loss (MLM + SOP + tau * ponder) is computed by the training loop from
    these outputs; the model itself holds no loss.

    Args:
        backbone: `AlbertActBackbone`.
        initializer_range: float, stddev for the head kernels.
        iteration_outputs: also output what the per-iteration objectives read (the backbone must
            be built with `return_details=True`): `mlm_iteration_logits` (B, N_max, P, V), the MLM
            head on every iteration's states h^n; `mlm_iteration_weights` (B, P, N_max), the
            halting weights lam_t^n of the masked positions; `halting_weights` (B, T, N_max).

    Inputs (dict): the backbone's three inputs plus `masked_positions` int (B, P).

    Outputs (dict): `mlm_logits` (B, P, V) float32, `sop_logits` (B, 2) float32,
    and the backbone's `iterations`, `remainders`, `ponder_cost`.
    """

    # Not Keras's default serving function: tf.saved_model.save traces one for every model in an export's
    # object tree (seconds each) and our exports declare their own signatures (albert_act/serve/savedmodel.py).
    _default_save_signature = None

    def __init__(self, backbone, initializer_range=0.02, iteration_outputs=False, **kwargs):
        if iteration_outputs and not backbone.return_details:
            raise ValueError("iteration_outputs needs a backbone built with return_details=True")
        self.backbone = backbone
        self.masked_lm_head = MaskedLMHead(
            vocabulary_size=backbone.vocabulary_size,
            embedding_dim=backbone.embedding_dim,
            token_embedding=backbone.token_embedding,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            gelu_approximate=backbone.gelu_approximate,
            initializer_range=initializer_range,
            dtype=backbone.dtype_policy,
            name="masked_lm_head",
        )
        self.sop_head = keras.layers.Dense(
            2,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype="float32",
            name="sop_head",
        )
        inputs = backbone_inputs()
        inputs["masked_positions"] = keras.Input(shape=(None,), dtype="int32", name="masked_positions")
        features = self.backbone({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")})
        outputs = {
            "mlm_logits": self.masked_lm_head(features["sequence_output"], inputs["masked_positions"]),
            "sop_logits": self.sop_head(features["pooled_output"]),
        }
        outputs.update({name: features[name] for name in DEPTH_OUTPUTS})
        if iteration_outputs:
            states = features["iteration_states"]  # (B, N, T, H): h^n, repeated once a token halted
            outputs["mlm_iteration_logits"] = keras.ops.stack(  # (B, N, P, V), one shared head
                [self.masked_lm_head(states[:, n], inputs["masked_positions"])
                 for n in range(backbone.max_iterations)], axis=1)
            positions = keras.ops.cast(inputs["masked_positions"], "int32")[:, :, None]  # (B, P, 1)
            outputs["mlm_iteration_weights"] = keras.ops.take_along_axis(
                features["update_weights"], positions, axis=1)  # (B, P, N)
            outputs["halting_weights"] = features["update_weights"]  # (B, T, N)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.initializer_range = initializer_range
        self.iteration_outputs = bool(iteration_outputs)

    def capped(self, inputs, iteration_cap):
        """`mlm_logits`, `sop_logits` and the depth outputs with every token halting by `iteration_cap`
        iterations (`AlbertActBackbone.capped`). inputs: as the model's."""
        features = self.backbone.capped(inputs, iteration_cap)
        outputs = {"mlm_logits": self.masked_lm_head(features["sequence_output"], inputs["masked_positions"]),
                   "sop_logits": self.sop_head(features["pooled_output"])}
        outputs.update({name: features[name] for name in DEPTH_OUTPUTS})
        return outputs

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "initializer_range": self.initializer_range,
            "iteration_outputs": self.iteration_outputs,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**backbone_from_config(config))
