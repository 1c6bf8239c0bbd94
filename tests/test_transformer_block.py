"""`TransformerBlock` and `FactorizedEmbedding`: NumPy reference, query subsets, padding."""

import keras
import numpy as np
import pytest

import numpy_reference
from albert_act.model.embeddings import FactorizedEmbedding
from albert_act.model.transformer_block import TransformerBlock
from conftest import assert_config_round_trip


def _block_and_inputs():
    block = TransformerBlock(num_heads=4, intermediate_dim=24)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 10, 16)).astype("float32")
    real = np.arange(10)[None] < np.array([10, 6, 2])[:, None]
    block(x, padding_mask=real)  # build
    return block, x, real


def test_block_matches_numpy_reference():
    block, x, real = _block_and_inputs()
    expected = numpy_reference.transformer_block(numpy_reference.numpy_weights(block), x.astype("float64"), real)
    actual = block(x, padding_mask=real).numpy()
    np.testing.assert_allclose(actual[real], expected[real], atol=1e-5)


def test_query_subset_equals_gathered_full_output():
    block, x, real = _block_and_inputs()
    full = block(x, padding_mask=real).numpy()
    indices = np.array([[0, 9, 4], [5, 1, 1], [1, 0, 0]])
    subset = block(x, padding_mask=real, query_indices=indices).numpy()
    assert subset.shape == (3, 3, 16)
    np.testing.assert_allclose(subset, np.take_along_axis(full, indices[..., None], axis=1), atol=1e-6)


def test_attending_to_key_groups_equals_one_softmax_over_all_keys():
    # Sparse inference splits the keys into the cache and the running tokens' fresh
    # keys/values; any split, in any order, with masks, must give plain attention.
    block, x, real = _block_and_inputs()
    query, key, value = (t.numpy() for t in block.project(x))  # (B, heads, T, head_dim)
    mask = real[:, None, None, :]
    whole = block.attend(x, query, [(key, value, mask)]).numpy()
    order = np.array([7, 2, 9, 0, 4, 1, 8, 3, 6, 5])  # groups in a shuffled order
    groups = [(key[:, :, order[a:b]], value[:, :, order[a:b]], mask[..., order[a:b]]) for a, b in ((0, 6), (6, 10))]
    np.testing.assert_allclose(block.attend(x, query, groups).numpy(), whole, atol=1e-6)
    np.testing.assert_allclose(whole[real], block(x, padding_mask=real).numpy()[real], atol=1e-6)


def test_padding_keys_are_ignored():
    block, x, real = _block_and_inputs()
    changed = x.copy()
    changed[~real] = 100.0  # garbage in padded positions must not reach real tokens
    a, b = block(x, padding_mask=real).numpy(), block(changed, padding_mask=real).numpy()
    np.testing.assert_allclose(a[real], b[real], atol=1e-6)


def test_block_config_round_trip_and_errors():
    block, x, real = _block_and_inputs()
    assert assert_config_round_trip(block).get_config()["layer_norm_epsilon"] == 1e-12
    with pytest.raises(ValueError, match=r"hidden size \(10\) must be divisible by num_heads \(4\)"):
        TransformerBlock(num_heads=4, intermediate_dim=8)(np.zeros((1, 2, 10), "float32"))
    with pytest.raises(ValueError, match="dropout must be a number in \\[0, 1\\), got 1.0"):
        TransformerBlock(num_heads=4, intermediate_dim=8, dropout=1.0)


def test_embeddings_match_numpy_reference_and_round_trip():
    layer = FactorizedEmbedding(vocabulary_size=30, embedding_dim=6, hidden_dim=12, max_sequence_length=9)
    rng = np.random.default_rng(1)
    tokens, segments = rng.integers(0, 30, (2, 7)), rng.integers(0, 2, (2, 7))
    actual = layer(tokens, segments).numpy()
    expected = numpy_reference.embeddings(numpy_reference.numpy_weights(layer), tokens, segments)
    np.testing.assert_allclose(actual, expected, atol=1e-5)
    assert_config_round_trip(layer)
    with pytest.raises(ValueError, match="sequence length 12 exceeds max_sequence_length 9"):
        layer(np.zeros((1, 12), "int32"), np.zeros((1, 12), "int32"))
    with pytest.raises(ValueError, match="embedding_dim must be an integer >= 1, got 0"):
        FactorizedEmbedding(vocabulary_size=30, embedding_dim=0, hidden_dim=12)


def test_block_runs_in_bfloat16_with_float32_softmax():
    keras.config.set_dtype_policy("mixed_bfloat16")
    block = TransformerBlock(num_heads=2, intermediate_dim=8)
    out = block(np.ones((1, 3, 4), "float32"), padding_mask=np.array([[1, 1, 0]]))
    assert out.dtype == "bfloat16"
    assert np.isfinite(out.numpy().astype("float32")).all()
