"""`AlbertActClassifier`: sequence classification or regression on the pooled output."""

import keras

from albert_act.base import checks
from albert_act.model.task_model import DEPTH_OUTPUTS, backbone_from_config, backbone_inputs


@keras.saving.register_keras_serializable(package="albert_act")
class AlbertActClassifier(keras.Model):
    """Dropout + dense on `pooled_output`: logits for classes, or a score for regression.

    Args:
        backbone: `AlbertActBackbone`.
        num_classes: int; 1 means regression (e.g. STS-B), the output is a score.
        dropout: float, dropout before the output layer (ALBERT fine-tuning: 0.1).
        initializer_range: float.

    Inputs (dict): the backbone's `token_ids`, `segment_ids`, `padding_mask`.

    Outputs (dict): `logits` (B, num_classes) float32, and the backbone's
    `iterations`, `remainders`, `ponder_cost` (for an optional ponder loss and
    for per-token depth reports).
    """

    # Not Keras's default serving function: tf.saved_model.save traces one for every model in an export's
    # object tree (seconds each) and our exports declare their own signatures (albert_act/serve/savedmodel.py).
    _default_save_signature = None

    def __init__(self, backbone, num_classes, dropout=0.1, initializer_range=0.02, **kwargs):
        self.backbone = backbone
        self.num_classes = checks.positive_int("num_classes", num_classes)
        self.dropout = checks.probability("dropout", dropout)
        self.initializer_range = initializer_range
        self.output_dropout = keras.layers.Dropout(dropout, name="output_dropout")
        self.output_dense = keras.layers.Dense(
            num_classes,
            kernel_initializer=keras.initializers.TruncatedNormal(stddev=initializer_range),
            dtype="float32",
            name="logits",
        )
        inputs = backbone_inputs()
        features = self.backbone(inputs)
        outputs = {"logits": self.output_dense(self.output_dropout(features["pooled_output"]))}
        outputs.update({name: features[name] for name in DEPTH_OUTPUTS})
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "num_classes": self.num_classes,
            "dropout": self.dropout,
            "initializer_range": self.initializer_range,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**backbone_from_config(config))
