"""What the task models (pre-training, classifier) share: a backbone inside a functional model."""

import keras

# Backbone outputs that every task model passes through, so losses (ponder
# cost) and depth statistics see them without reaching into the backbone.
DEPTH_OUTPUTS = ("iterations", "remainders", "expected_iterations", "ponder_cost", "overflows")


def backbone_from_config(config):
    """Rebuilds the `backbone` entry of a task model's config in place."""
    config = dict(config)
    if isinstance(config["backbone"], dict):
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
    return config


def backbone_inputs():
    """Fresh symbolic inputs with the backbone's names, shapes and dtypes."""
    return {
        name: keras.Input(shape=(None,), dtype="int32", name=name)
        for name in ("token_ids", "segment_ids", "padding_mask")
    }
