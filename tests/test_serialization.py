"""Every public layer: get_config() round trip and `.keras` save/load with the same outputs."""

import keras
import numpy as np
import pytest

from albert_act import AdaptiveDepthEncoder, FactorizedEmbedding, HaltingUnit, MaskedLMHead, TransformerBlock
from conftest import assert_config_round_trip


def _hidden(length=6, hidden=16):
    return keras.Input(shape=(length, hidden), name="hidden")


def _mask(length=6):
    return keras.Input(shape=(length,), dtype="int32", name="padding_mask")


def _ids(name, length=6):
    return keras.Input(shape=(length,), dtype="int32", name=name)


def _wrap_embedding():
    layer = FactorizedEmbedding(vocabulary_size=40, embedding_dim=8, hidden_dim=16, max_sequence_length=6)
    tokens, segments = _ids("token_ids"), _ids("segment_ids")
    return layer, keras.Model([tokens, segments], layer(tokens, segments))


def _wrap_block():
    layer = TransformerBlock(num_heads=2, intermediate_dim=24)
    hidden, mask = _hidden(), _mask()
    return layer, keras.Model([hidden, mask], layer(hidden, padding_mask=mask))


def _wrap_halting_unit():
    layer = HaltingUnit(bias_initializer=0.7)
    hidden = _hidden()
    return layer, keras.Model(hidden, layer(hidden))


def _wrap_encoder():
    layer = AdaptiveDepthEncoder(num_heads=2, intermediate_dim=24, max_iterations=4, return_details=True)
    hidden, mask = _hidden(), _mask()
    return layer, keras.Model([hidden, mask], layer(hidden, mask))


def _wrap_head():
    layer = MaskedLMHead(vocabulary_size=40, embedding_dim=8)
    hidden, positions = _hidden(), _ids("masked_positions", 2)
    return layer, keras.Model([hidden, positions], layer(hidden, positions))


def _inputs_for(model):
    rng = np.random.default_rng(0)
    values = []
    for spec in model.inputs:
        shape = (3, *spec.shape[1:])
        if spec.dtype.startswith("int"):
            high = 2 if spec.name != "token_ids" else 40
            value = rng.integers(0, high, shape).astype("int32")
            if spec.name == "padding_mask":
                value[:, 0] = 1
            values.append(value)
        else:
            values.append(rng.normal(size=shape).astype("float32"))
    return values if len(values) > 1 else values[0]


@pytest.mark.parametrize("wrap", [_wrap_embedding, _wrap_block, _wrap_halting_unit, _wrap_encoder, _wrap_head])
def test_layer_round_trips(wrap, tmp_path):
    layer, model = wrap()
    assert_config_round_trip(layer)
    inputs = _inputs_for(model)
    expected = model(inputs)
    restored = keras.saving.load_model(_save(model, tmp_path))
    for a, b in zip(keras.tree.flatten(expected), keras.tree.flatten(restored(inputs))):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), atol=1e-6)


def _save(model, tmp_path):
    path = str(tmp_path / "layer.keras")
    model.save(path)
    return path


def test_encoder_config_echoes_every_argument():
    config = AdaptiveDepthEncoder(num_heads=2, intermediate_dim=8, max_iterations=3, halting="none",
                                  share_weights=False, halting_epsilon=0.05, execution="while").get_config()
    assert {k: config[k] for k in ("halting", "share_weights", "halting_epsilon", "execution", "max_iterations")} == dict(
        halting="none", share_weights=False, halting_epsilon=0.05, execution="while", max_iterations=3)


