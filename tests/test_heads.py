"""Pre-training model (MLM + SOP heads) and the sequence classifier."""

import numpy as np
import pytest

import numpy_reference
from albert_act import AlbertActBackbone, AlbertActClassifier, AlbertActPretrainingModel, MaskedLMHead
from conftest import TINY, assert_config_round_trip, assert_keras_file_round_trip, random_inputs, to_numpy


def _pretraining_inputs():
    inputs = random_inputs([10, 7], padded_length=10)
    inputs["masked_positions"] = np.array([[1, 4, 8], [2, 3, 0]], "int32")
    return inputs


def test_mlm_logits_use_the_tied_token_embedding():
    backbone = AlbertActBackbone(**TINY)
    model = AlbertActPretrainingModel(backbone)
    inputs = _pretraining_inputs()
    out = to_numpy(model(inputs))
    assert tuple(out["mlm_logits"].shape) == (2, 3, TINY["vocabulary_size"]) and tuple(out["sop_logits"].shape) == (2, 2)
    assert {"iterations", "remainders", "ponder_cost"} <= set(out)

    # NumPy: gather -> dense E -> GELU(tanh) -> LayerNorm -> x @ token_table^T + bias.
    sequence = to_numpy(backbone({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}))["sequence_output"]
    head = numpy_reference.numpy_weights(model.masked_lm_head)
    table = backbone.token_embedding.embeddings.numpy()
    x = np.take_along_axis(sequence, inputs["masked_positions"][..., None], axis=1)
    x = numpy_reference.gelu_tanh(x @ head["dense/kernel"] + head["dense/bias"])
    x = numpy_reference.layer_norm(x, head["layer_norm/gamma"], head["layer_norm/beta"])
    np.testing.assert_allclose(out["mlm_logits"], x @ table.T + head["output_bias"], atol=1e-5)

    # Tied: the table is one variable, counted once.
    paths = [v.path for v in model.weights]
    assert len(paths) == len(set(paths))
    assert sum("token_embedding" in p for p in paths) == 1


def test_pretraining_model_round_trips(tmp_path):
    model = AlbertActPretrainingModel(AlbertActBackbone(**TINY, halting_bias_initializer=-1.0))
    rebuilt = assert_config_round_trip(model)
    assert rebuilt.backbone.halting_bias_initializer == -1.0
    restored = assert_keras_file_round_trip(model, _pretraining_inputs(), tmp_path)
    # Still tied after loading.
    assert restored.masked_lm_head.token_embedding is restored.backbone.token_embedding


def test_untied_head_round_trips():
    head = MaskedLMHead(vocabulary_size=20, embedding_dim=4)
    out = head(np.ones((2, 5, 8), "float32"), np.array([[0, 1], [4, 4]]))
    assert tuple(out.shape) == (2, 2, 20)
    assert_config_round_trip(head)


def test_classifier_logits_and_regression(tmp_path):
    backbone = AlbertActBackbone(**TINY)
    classifier = AlbertActClassifier(backbone, num_classes=3)
    inputs = random_inputs([8, 5, 2], padded_length=8)
    out = to_numpy(classifier(inputs))
    pooled = to_numpy(backbone(inputs))["pooled_output"]
    weights = numpy_reference.numpy_weights(classifier.output_dense)
    np.testing.assert_allclose(out["logits"], pooled @ weights["kernel"] + weights["bias"], atol=1e-5)
    assert {"iterations", "remainders", "ponder_cost"} <= set(out)
    regressor = AlbertActClassifier(AlbertActBackbone(**TINY), num_classes=1)
    assert tuple(regressor(inputs)["logits"].shape) == (3, 1)
    assert_config_round_trip(classifier)
    assert_keras_file_round_trip(classifier, inputs, tmp_path)
    with pytest.raises(ValueError, match="num_classes must be an integer >= 1, got 0"):
        AlbertActClassifier(backbone, num_classes=0)
