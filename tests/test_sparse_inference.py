"""Sparse inference (only running tokens computed) gives the dense outputs, on random and trained weights."""

import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone
from albert_act.io.source import Source
from conftest import TINY, random_inputs, spread_halting, to_numpy
from pipelines.pretraining_dataset import make_pretraining_dataset


def _pair(**overrides):
    dense = AlbertActBackbone(**{**TINY, **overrides}, return_details=True)
    sparse = AlbertActBackbone(**{**TINY, **overrides}, return_details=True, execution="sparse")
    if dense.encoder.halting_unit is not None:
        spread_halting(dense)
    sparse.set_weights(dense.get_weights())
    return dense, sparse


def _assert_same(dense, sparse, inputs, atol=1e-5):
    expected = to_numpy(dense(inputs))
    actual = to_numpy(tf.function(sparse)(inputs))
    assert expected.keys() == actual.keys()
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], atol=atol, err_msg=key)
    return expected


@pytest.mark.parametrize("lengths", [[7], [12, 9, 4, 1], [16, 3, 16, 8, 1, 11, 5, 14]])
def test_same_outputs_as_dense_at_every_batch_size_with_padding(lengths):
    dense, sparse = _pair()
    out = _assert_same(dense, sparse, random_inputs(lengths, padded_length=max(lengths), seed=len(lengths)))
    real = out["iterations"][out["iterations"] > 0]
    # Tokens really halt at different depths, within the first row (so slots narrow) and across rows.
    first = out["iterations"][0, : lengths[0]]
    assert len(np.unique(first)) >= 2 and len(np.unique(real)) >= 3


@pytest.mark.parametrize("overrides", [dict(share_weights=False), dict(halting="none")])
def test_unshared_and_fixed_depth(overrides):
    dense, sparse = _pair(**overrides)
    _assert_same(dense, sparse, random_inputs([10, 6, 2], padded_length=10))


def test_same_outputs_on_trained_weights(tiny_run, records):
    dense, _ = Source.open(tiny_run[0]).backbone(dropout=0.0, return_details=True)
    sparse, _ = Source.open(tiny_run[0]).backbone(dropout=0.0, return_details=True, execution="sparse")
    inputs, _ = next(iter(make_pretraining_dataset(records[1], 16, training=False)))
    _assert_same(dense, sparse, {k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")})


def test_exports_serve_sparse_with_the_same_numbers(tiny_run):
    from albert_act.io.source import Source

    backbone, _ = Source.open(tiny_run[0]).backbone(dropout=0.0)
    assert Source.open(tiny_run[1]).info["backbone"]["execution"] == "sparse"
    inputs = random_inputs([20, 7], padded_length=20, vocabulary_size=400)
    served = tf.saved_model.load(tiny_run[1]).signatures["encoder_ids"](
        **{k: tf.constant(v) for k, v in inputs.items()})
    expected = to_numpy(backbone(inputs))
    for key in ("sequence_output", "iterations", "pooled_output", "ponder_cost"):
        np.testing.assert_allclose(served[key].numpy(), expected[key], atol=1e-5, err_msg=key)
