"""Public ALBERT checkpoints: Hugging Face safetensors, TF1 and keras-hub presets.

The checkpoints are written here, with random weights at small sizes, under the names the other
projects use (spelled out below from transformers' modeling_albert.py, keras-hub's convert_albert.py
and google-research/albert's modeling.py, independently of albert_act's own table). References:
keras-hub's own Hugging Face converter, and a NumPy re-statement of Hugging Face's MLM head.
"""

import json
import re
import shutil
from pathlib import Path

import keras
import keras_hub
import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from albert_act.io.source import Source
from albert_act.serve.huggingface import write_huggingface
from conftest import STATIC

V, E, H, HEADS, F, P, LAYERS = 400, 8, 16, 2, 32, 64, 3
HF_CONFIG = {"architectures": ["AlbertForPreTraining"], "model_type": "albert", "vocab_size": V, "embedding_size": E,
             "hidden_size": H, "num_attention_heads": HEADS, "intermediate_size": F, "num_hidden_layers": LAYERS,
             "num_hidden_groups": 1, "inner_group_num": 1, "hidden_act": "gelu_new", "max_position_embeddings": P,
             "type_vocab_size": 2, "layer_norm_eps": 1e-12, "initializer_range": 0.02,
             "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


def hf_tensors(seed=0):
    """Random AlbertForPreTraining weights under transformers' names; torch Linear kernels are (out, in)."""
    rng = np.random.default_rng(seed)

    def w(*shape, scale=0.3):
        return (rng.standard_normal(shape) * scale).astype("float32")

    def norm(n):
        return 1.0 + w(n, scale=0.1), w(n, scale=0.1)

    t = {"albert.embeddings.word_embeddings.weight": w(V, E), "albert.embeddings.position_embeddings.weight": w(P, E),
         "albert.embeddings.token_type_embeddings.weight": w(2, E),
         "albert.encoder.embedding_hidden_mapping_in.weight": w(H, E),
         "albert.encoder.embedding_hidden_mapping_in.bias": w(H),
         "albert.pooler.weight": w(H, H), "albert.pooler.bias": w(H),
         "predictions.dense.weight": w(E, H), "predictions.dense.bias": w(E), "predictions.bias": w(V),
         "sop_classifier.classifier.weight": w(2, H), "sop_classifier.classifier.bias": w(2)}
    t["albert.embeddings.LayerNorm.weight"], t["albert.embeddings.LayerNorm.bias"] = norm(E)
    t["predictions.LayerNorm.weight"], t["predictions.LayerNorm.bias"] = norm(E)
    layer = "albert.encoder.albert_layer_groups.0.albert_layers.0."
    for name in ("query", "key", "value", "dense"):
        t[f"{layer}attention.{name}.weight"], t[f"{layer}attention.{name}.bias"] = w(H, H), w(H)
    t[f"{layer}attention.LayerNorm.weight"], t[f"{layer}attention.LayerNorm.bias"] = norm(H)
    t[f"{layer}ffn.weight"], t[f"{layer}ffn.bias"] = w(F, H), w(F)
    t[f"{layer}ffn_output.weight"], t[f"{layer}ffn_output.bias"] = w(H, F), w(H)
    t[f"{layer}full_layer_layer_norm.weight"], t[f"{layer}full_layer_layer_norm.bias"] = norm(H)
    return t


def write_hf(directory, vocab, tensors=None, **config):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    save_file(hf_tensors() if tensors is None else tensors, str(directory / "model.safetensors"))
    (directory / "config.json").write_text(json.dumps({**HF_CONFIG, **config}))
    if vocab:
        shutil.copy(vocab, directory / "spiece.model")
    return str(directory)


# google-research/albert's variable names for the same weights (kernels (in, out); SOP (2, H)).
TF1_NAMES = {
    "albert.embeddings.word_embeddings.weight": "bert/embeddings/word_embeddings",
    "albert.embeddings.position_embeddings.weight": "bert/embeddings/position_embeddings",
    "albert.embeddings.token_type_embeddings.weight": "bert/embeddings/token_type_embeddings",
    "albert.embeddings.LayerNorm.weight": "bert/embeddings/LayerNorm/gamma",
    "albert.embeddings.LayerNorm.bias": "bert/embeddings/LayerNorm/beta",
    "albert.encoder.embedding_hidden_mapping_in.weight": "bert/encoder/embedding_hidden_mapping_in/kernel",
    "albert.encoder.embedding_hidden_mapping_in.bias": "bert/encoder/embedding_hidden_mapping_in/bias",
    "albert.pooler.weight": "bert/pooler/dense/kernel", "albert.pooler.bias": "bert/pooler/dense/bias",
    "predictions.dense.weight": "cls/predictions/transform/dense/kernel",
    "predictions.dense.bias": "cls/predictions/transform/dense/bias",
    "predictions.LayerNorm.weight": "cls/predictions/transform/LayerNorm/gamma",
    "predictions.LayerNorm.bias": "cls/predictions/transform/LayerNorm/beta",
    "predictions.bias": "cls/predictions/output_bias",
    "sop_classifier.classifier.weight": "cls/seq_relationship/output_weights",
    "sop_classifier.classifier.bias": "cls/seq_relationship/output_bias",
}
_TF1_LAYER = "bert/encoder/transformer/group_0/inner_group_0/"
for _hf, _tf1 in {"attention.query": "attention_1/self/query", "attention.key": "attention_1/self/key",
                  "attention.value": "attention_1/self/value", "attention.dense": "attention_1/output/dense",
                  "ffn": "ffn_1/intermediate/dense", "ffn_output": "ffn_1/intermediate/output/dense"}.items():
    TF1_NAMES[f"albert.encoder.albert_layer_groups.0.albert_layers.0.{_hf}.weight"] = f"{_TF1_LAYER}{_tf1}/kernel"
    TF1_NAMES[f"albert.encoder.albert_layer_groups.0.albert_layers.0.{_hf}.bias"] = f"{_TF1_LAYER}{_tf1}/bias"
for _hf, _tf1 in {"attention.LayerNorm": "LayerNorm", "full_layer_layer_norm": "LayerNorm_1"}.items():
    TF1_NAMES[f"albert.encoder.albert_layer_groups.0.albert_layers.0.{_hf}.weight"] = f"{_TF1_LAYER}{_tf1}/gamma"
    TF1_NAMES[f"albert.encoder.albert_layer_groups.0.albert_layers.0.{_hf}.bias"] = f"{_TF1_LAYER}{_tf1}/beta"


def write_tf1(directory, vocab, tensors=None, extra=None):
    """A name-based TF1 checkpoint (SaveV2, as tf.compat.v1.train.Saver writes) + albert_config.json + 30k-clean.model."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    values = {}
    for hf_name, value in (hf_tensors() if tensors is None else tensors).items():
        linear = hf_name.endswith(".weight") and value.ndim == 2 and "embeddings" not in hf_name and "sop" not in hf_name
        values[TF1_NAMES[hf_name]] = value.T if linear else value
    values["global_step"] = np.array(1000, "int64")
    values.update(extra or {})
    names = sorted(values)
    prefix = str(directory / "model.ckpt-best")
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tf.constant(values[n]) for n in names])
    config = {k: v for k, v in HF_CONFIG.items() if k not in ("architectures", "model_type", "layer_norm_eps")}
    (directory / "albert_config.json").write_text(json.dumps({**config, "hidden_act": "gelu", "net_structure_type": 0,
                                                               "layers_to_keep": []}))
    shutil.copy(vocab, directory / "30k-clean.model")
    return str(directory)


@pytest.fixture(scope="module")
def vocab(records):
    return str(Path(records[0]).parent.parent / "vocab.model")


@pytest.fixture(scope="module")
def hf_dir(vocab, tmp_path_factory):
    return write_hf(tmp_path_factory.mktemp("hf") / "albert-tiny", vocab)


def _inputs():
    rng = np.random.default_rng(1)
    ids = rng.integers(5, V, (3, 12)).astype("int32")
    ids[:, 0], ids[:, 5] = 2, 4  # [CLS] and a [MASK]
    mask = np.ones((3, 12), "int32")
    mask[1, 8:], mask[2, 4:] = 0, 0
    ids[mask == 0] = 0
    segments = np.zeros((3, 12), "int32")
    segments[:, 6:] = 1
    return {"token_ids": ids, "segment_ids": segments * mask, "padding_mask": mask}


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def _layer_norm(x, gamma, beta, eps=1e-12):
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def test_huggingface_matches_keras_hubs_converter(hf_dir):
    """Ours (halting none, depth 3) against keras-hub's transformers converter on the same directory."""
    hub = keras_hub.models.AlbertBackbone.from_preset(hf_dir)
    source = Source.open(hf_dir)
    (ours, _), tokenizer = source.backbone(dropout=0.0), source.tokenizer()
    assert ours.halting == "none" and ours.max_iterations == LAYERS and ours.gelu_approximate
    assert tokenizer.vocabulary_size == V
    inputs = _inputs()
    expected = hub(inputs)
    actual = ours(inputs)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(actual["sequence_output"].numpy()[real], expected["sequence_output"].numpy()[real],
                               atol=1e-5)
    np.testing.assert_allclose(actual["pooled_output"].numpy(), expected["pooled_output"].numpy(), atol=1e-5)
    assert np.abs(expected["sequence_output"].numpy()[real]).max() > 0.5  # not a trivially small output
    np.testing.assert_array_equal(actual["iterations"].numpy()[real], LAYERS)


def test_fill_mask_probabilities_match_hugging_faces_head(hf_dir):
    """The MLM head read from the directory against a NumPy statement of transformers' AlbertMLMHead,
    applied to keras-hub's sequence output: softmax(LN(gelu_new(x W_d^T + b_d)) E^T + b)."""
    model, info = Source.open(hf_dir).pretraining_model()
    assert info["fresh"] == []  # every weight read, the SOP head included
    hub = keras_hub.models.AlbertBackbone.from_preset(hf_dir)
    inputs = _inputs()
    positions = np.array([[5, 1], [5, 7], [1, 3]], "int32")
    ours = model({**inputs, "masked_positions": positions})
    t = hf_tensors()
    x = np.take_along_axis(hub(inputs)["sequence_output"].numpy(), positions[:, :, None], axis=1)
    x = _layer_norm(_gelu_tanh(x @ t["predictions.dense.weight"].T + t["predictions.dense.bias"]),
                    t["predictions.LayerNorm.weight"], t["predictions.LayerNorm.bias"])
    logits = x @ t["albert.embeddings.word_embeddings.weight"].T + t["predictions.bias"]
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(keras.ops.softmax(ours["mlm_logits"]).numpy(), expected, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(ours["mlm_logits"].numpy(), logits, atol=1e-5)
    assert logits.std(-1).min() > 0.5  # probabilities spread over 0.0005-0.02: a wrong weight would show
    pooled = np.tanh(hub(inputs)["sequence_output"].numpy()[:, 0] @ t["albert.pooler.weight"].T + t["albert.pooler.bias"])
    sop = pooled @ t["sop_classifier.classifier.weight"].T + t["sop_classifier.classifier.bias"]
    np.testing.assert_allclose(ours["sop_logits"].numpy(), sop, atol=1e-5)


def test_tf1_checkpoint_reads_the_same_numbers_as_hugging_face(hf_dir, vocab, tmp_path):
    tf1 = write_tf1(tmp_path / "albert_base", vocab, extra={"bert/embeddings/word_embeddings/adam_m": np.zeros((V, E), "float32")})
    a, b = Source.open(hf_dir).checkpoint, Source.open(tf1).checkpoint
    assert (a.format, b.format) == ("huggingface", "tf1-checkpoint")
    assert b.backbone == {**a.backbone, "gelu_approximate": True}  # TF1's "gelu" is the tanh form
    assert sorted(a.weights) == sorted(b.weights) and a.heads == b.heads == ("mlm", "sop")
    for path in a.weights:
        np.testing.assert_array_equal(a.weights[path], b.weights[path], err_msg=path)
    assert Source.open(tf1).vocab.endswith("30k-clean.model") and b.ignored == []
    # The config alone (no weights read) says the same, for the dir and for the prefix.
    for path, checkpoint in ((hf_dir, a), (tf1, b), (str(Path(tf1) / "model.ckpt-best"), b)):
        info = Source.open(path).info
        assert (info["kind"], info["backbone"], info["source_format"]) == ("pretraining", checkpoint.backbone,
                                                                          checkpoint.format)
    # The prefix itself is accepted too, and the loaded model computes what the HF one does.
    model_a, _ = Source.open(hf_dir).pretraining_model()
    model_b, _ = Source.open(str(Path(tf1) / "model.ckpt-best")).pretraining_model()
    inputs = {**_inputs(), "masked_positions": np.array([[5], [5], [1]], "int32")}
    np.testing.assert_allclose(model_b(inputs)["mlm_logits"].numpy(), model_a(inputs)["mlm_logits"].numpy(), atol=1e-6)


def test_keras_hub_preset_and_hugging_face_writer_round_trip(hf_dir, tmp_path):
    """keras-hub's backbone saved as a preset reads back the same; our HF writer's directory is read by
    keras-hub and by us with the same numbers."""
    hub = keras_hub.models.AlbertBackbone.from_preset(hf_dir)
    preset = str(tmp_path / "preset")
    hub.save_to_preset(preset)
    checkpoint = Source.open(preset).checkpoint
    assert checkpoint.format == "keras-hub-preset" and checkpoint.backbone["max_iterations"] == LAYERS
    assert Source.open(preset).info["backbone"] == checkpoint.backbone == {**Source.open(hf_dir).checkpoint.backbone,
                                                                              "initializer_range": 0.02}
    reference = Source.open(hf_dir).checkpoint
    for path, value in checkpoint.weights.items():
        np.testing.assert_allclose(value, reference.weights[path], atol=1e-7, err_msg=path)
    # An AlbertMaskedLM task preset: its MLM head is read too (keras-hub's head normalizes with
    # epsilon 1e-5, ALBERT's with 1e-12: the weights are equal, the logits differ slightly).
    masked_lm = keras_hub.models.AlbertMaskedLM(backbone=hub, preprocessor=None)
    head, t = masked_lm.masked_lm_head, hf_tensors()
    for variable, value in ((head._intermediate_dense.kernel, t["predictions.dense.weight"].T),
                            (head._intermediate_dense.bias, t["predictions.dense.bias"]),
                            (head._intermediate_layer_norm.gamma, t["predictions.LayerNorm.weight"]),
                            (head._intermediate_layer_norm.beta, t["predictions.LayerNorm.bias"]),
                            (head._bias, t["predictions.bias"])):
        variable.assign(value)
    masked_lm.save_to_preset(str(tmp_path / "task"))
    task = Source.open(str(tmp_path / "task")).checkpoint
    assert task.heads == ("mlm",) and len(task.weights) == len(checkpoint.weights) + 5
    for path in (p for p in reference.weights if not p.startswith("sop_head/")):
        np.testing.assert_allclose(task.weights[path], reference.weights[path], atol=1e-7, err_msg=path)

    source = Source.open(hf_dir)
    (model, _), tokenizer = source.pretraining_model(), source.tokenizer()
    written = write_huggingface({v.path: v.numpy() for v in model.weights}, model.backbone.get_config(),
                                str(tmp_path / "written"), tokenizer.model_proto)
    again = Source.open(written).checkpoint
    assert again.backbone == reference.backbone and again.heads == ("mlm", "sop")
    for path, value in reference.weights.items():
        np.testing.assert_array_equal(again.weights[path], value, err_msg=path)
    inputs = _inputs()
    np.testing.assert_allclose(keras_hub.models.AlbertBackbone.from_preset(written)(inputs)["pooled_output"].numpy(),
                               hub(inputs)["pooled_output"].numpy(), atol=1e-6)


def test_act_over_a_fixed_depth_checkpoint_gets_a_new_halting_unit(hf_dir):
    backbone, _ = Source.open(hf_dir).backbone(dropout=0.0, halting="act", max_iterations=6,
                                                   halting_bias_initializer=-2.0)
    assert backbone.halting == "act" and backbone.max_iterations == 6
    np.testing.assert_allclose(backbone.encoder.halting_unit.weights[1].numpy(), [-2.0])
    fixed, _ = Source.open(hf_dir).backbone(dropout=0.0)
    np.testing.assert_array_equal(backbone.pooler.kernel.numpy(), fixed.pooler.kernel.numpy())
    iterations = backbone(_inputs())["iterations"].numpy()[_inputs()["padding_mask"].astype(bool)]
    assert 1 < iterations.mean() <= 6


@pytest.mark.parametrize("change, message", [
    ({"num_hidden_groups": 2}, "num_hidden_groups = 2"),
    ({"inner_group_num": 2}, "inner_group_num = 2"),
    ({"hidden_act": "relu"}, "hidden_act = 'relu'"),
    ({"position_embedding_type": "relative_key"}, "position_embedding_type = 'relative_key'"),
    ({"hidden_size": 24}, "encoder.embedding_hidden_mapping_in.weight does not match the config: (8, 16) where its "
                          "sizes give (8, 24)"),
])
def test_unsupported_configs_are_refused(change, message, vocab, tmp_path):
    path = write_hf(tmp_path / "hf", vocab, **change)
    with pytest.raises(ValueError, match=re.escape(message)):
        Source.open(path).backbone()


def test_unsupported_weights_are_refused(vocab, tmp_path):
    second_group = {**hf_tensors(), "albert.encoder.albert_layer_groups.1.albert_layers.0.ffn.bias": np.zeros(F, "float32")}
    with pytest.raises(ValueError, match=r"albert_layer_groups\.1\.albert_layers\.0\.ffn\.bias"):
        Source.open(write_hf(tmp_path / "groups", vocab, second_group)).checkpoint
    untied = {**hf_tensors(), "predictions.decoder.weight": np.ones((V, E), "float32")}
    with pytest.raises(ValueError, match="predictions.decoder.weight differs"):
        Source.open(write_hf(tmp_path / "untied", vocab, untied)).checkpoint
    missing = {k: v for k, v in hf_tensors().items() if "ffn_output.bias" not in k}
    with pytest.raises(ValueError, match="no weight encoder.albert_layer_groups.0.albert_layers.0.ffn_output.bias"):
        Source.open(write_hf(tmp_path / "missing", vocab, missing)).checkpoint
    tf1 = write_tf1(tmp_path / "tf1", vocab, extra={f"{_TF1_LAYER.replace('inner_group_0', 'inner_group_1')}LayerNorm/beta":
                                                    np.zeros(H, "float32")})
    with pytest.raises(ValueError, match="inner_group_1/LayerNorm/beta"):
        Source.open(tf1).checkpoint


def test_albert_vocabulary_ids_and_a_wrong_vocabulary(vocab, tmp_path):
    """ALBERT's special ids are ours: the vocabulary loads; one with other ids is refused, naming them."""
    import sentencepiece as spm

    from pipelines.tokenizer import Tokenizer

    tokenizer = Tokenizer.from_file(vocab)
    assert tokenizer.id_to_piece(range(5)) == ["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"]
    corpus = tmp_path / "text.txt"
    corpus.write_text("the cat sat on the mat\nthe dog sat on the log\n" * 50)
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "other"), vocab_size=16,
                                   minloglevel=2)  # SentencePiece's defaults: <unk>=0, <s>=1, </s>=2
    with pytest.raises(ValueError, match=r"<pad> at id 0.*found '<unk>'.*\[CLS\] at id 2, found '</s>'"):
        Tokenizer.from_file(str(tmp_path / "other.model"))


@pytest.mark.slow  # ~15 s; a Hugging Face dir is read in the default run by test_source_path
def test_pretraining_continues_from_a_hugging_face_dir(hf_dir, records, tmp_path):
    """--init_from: sizes and vocabulary from the checkpoint, the preset's ACT on top, a new halting unit."""
    from albert_act.train.pretraining_run import PretrainConfig, run_pretraining

    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path / "run"),
                            init_from=hf_dir, backbone_overrides={"max_iterations": 4, "halting_bias_initializer": -1.0},
                            steps=1, warmup_steps=0, learning_rate=1e-8, global_batch_size=8, micro_batch_size=8,
                            eval_batches=1, jit_compile=False, execution=STATIC)
    result = run_pretraining(config, progress=False)
    model, info = Source.open(str(tmp_path / "run")).pretraining_model()
    assert (info["backbone"]["hidden_dim"], info["backbone"]["max_iterations"], info["backbone"]["halting"]) == (H, 4, "act")
    t = hf_tensors()
    np.testing.assert_allclose(model.backbone.pooler.kernel.numpy(), t["albert.pooler.weight"].T, atol=1e-6)
    np.testing.assert_allclose(model.sop_head.kernel.numpy(), t["sop_classifier.classifier.weight"].T, atol=1e-6)
    np.testing.assert_allclose(model.backbone.encoder.halting_unit.weights[1].numpy(), [-1.0], atol=1e-6)
    assert (tmp_path / "run" / "vocab.model").read_bytes() == (Path(hf_dir) / "spiece.model").read_bytes()
    assert 1.0 < result["iterations"]["all"]["mean"] <= 4.0


@pytest.mark.slow  # ~15 s; the README test runs the same command from a clean clone
def test_finetune_cli_reads_a_hugging_face_dir(hf_dir, shared_data, tmp_path, capsys):
    """The README's command on a locally written directory: RTE with ACT added over fixed-depth weights."""
    from albert_act import finetune

    finetune.main(["--task", "rte", "--data_dir", str(shared_data / "glue" / "RTE"), "--init", hf_dir,
                   "--halting", "act", "--max_iterations", "4", "--max_train_examples", "32", "--epochs", "1",
                   "--batch_size", "16", "--max_seq_length", "32", "--output_dir", str(tmp_path / "rte")])
    out = capsys.readouterr().out
    assert "act, at most 4 iterations of a shared layer" in out
    results = json.loads((tmp_path / "rte" / "results.json").read_text())
    assert (results["halting"], results["max_iterations"], results["train_examples"]) == ("act", 4, 32)
    assert 0.0 <= results["best"]["accuracy"] <= 1.0 and 1.0 <= results["best"]["iterations"]["all"] <= 4.0


@pytest.mark.slow  # ~12 s; the README test runs the same command
def test_export_cli_reads_a_hugging_face_dir(hf_dir, tmp_path, capsys):
    from albert_act import export

    export.main(["--checkpoint", hf_dir, "--kind", "pretraining", "--output", str(tmp_path / "export" / "1")])
    answer = capsys.readouterr().out
    assert "fill_mask" in answer and '"iterations": [3, 3' in answer  # fixed depth 3: ALBERT as written
    export.main(["--checkpoint", hf_dir, "--kind", "pretraining", "--format", "huggingface",
                 "--output", str(tmp_path / "hf_again")])
    again, original = Source.open(str(tmp_path / "hf_again")).checkpoint, Source.open(hf_dir).checkpoint
    assert again.backbone == original.backbone
    for path, value in original.weights.items():
        np.testing.assert_array_equal(again.weights[path], value, err_msg=path)
    with pytest.raises(SystemExit, match="exists and is not empty"):
        export.main(["--checkpoint", hf_dir, "--kind", "pretraining", "--format", "huggingface",
                     "--output", str(tmp_path / "export")])


def test_an_act_model_is_not_written_as_a_hugging_face_albert(tiny_run, tmp_path):
    model, info = Source.open(tiny_run[0]).pretraining_model()
    with pytest.raises(ValueError, match="halting='act'.*pre-train with --halting none"):
        write_huggingface({v.path: v.numpy() for v in model.weights}, info["backbone"], str(tmp_path / "hf"))
    assert not (tmp_path / "hf").exists()


def test_halting_none_over_an_act_run_drops_its_halting_unit(tiny_run):
    act, _ = Source.open(tiny_run[0]).backbone(dropout=0.0)
    fixed, _ = Source.open(tiny_run[0]).backbone(dropout=0.0, halting="none")
    assert act.halting == "act" and fixed.halting == "none" and fixed.encoder.halting_unit is None
    np.testing.assert_array_equal(fixed.pooler.kernel.numpy(), act.pooler.kernel.numpy())
    inputs = {k: v[:, :10] for k, v in _inputs().items()}
    np.testing.assert_array_equal(fixed(inputs)["iterations"].numpy()[inputs["padding_mask"].astype(bool)],
                                  act.max_iterations)


def test_warm_start_refuses_another_vocabulary_and_other_sizes(hf_dir, records, tmp_path):
    from albert_act.train.pretraining_run import PretrainConfig, run_pretraining
    from pipelines.tokenizer import train_sentencepiece

    corpus = tmp_path / "text.txt"
    corpus.write_text("".join(f"sentence number {i} about things\n" for i in range(200)))
    other = tmp_path / "other.model"
    other.write_bytes(train_sentencepiece([str(corpus)], vocab_size=40))
    common = dict(train_files=[records[0]], eval_files=[records[1]], init_from=hf_dir, steps=1, global_batch_size=8,
                  micro_batch_size=8, jit_compile=False)
    with pytest.raises(ValueError, match=r"other\.model is not .*spiece\.model, the one .* was trained with"):
        run_pretraining(PretrainConfig(model_dir=str(tmp_path / "a"), vocab=str(other), **common), progress=False)
    with pytest.raises(ValueError, match=r"--override hidden_dim=32: .* has hidden_dim=16, which the weights fix"):
        run_pretraining(PretrainConfig(model_dir=str(tmp_path / "b"), backbone_overrides={"hidden_dim": 32}, **common),
                        progress=False)


def test_exact_gelu_of_albert_base_v1_is_kept(hf_dir, vocab, tmp_path):
    """Hugging Face's "gelu" (albert-base-v1) is the exact, erf GELU: the FFN and the MLM head use it."""
    exact_dir = write_hf(tmp_path / "v1", vocab, hidden_act="gelu")
    exact, _ = Source.open(exact_dir).pretraining_model()
    tanh, _ = Source.open(hf_dir).pretraining_model()
    assert not exact.backbone.gelu_approximate and not exact.masked_lm_head.gelu_approximate
    assert all(not b.gelu_approximate for b in exact.backbone.encoder.blocks)
    inputs = {**_inputs(), "masked_positions": np.array([[5], [5], [1]], "int32")}
    difference = np.abs(exact(inputs)["mlm_logits"].numpy() - tanh(inputs)["mlm_logits"].numpy()).max()
    assert 1e-5 < difference < 0.1  # the two GELUs differ by at most ~1e-3 per unit


def test_a_masked_lm_save_without_a_pooler_loads_with_a_new_pooler(hf_dir, vocab, tmp_path):
    """transformers builds AlbertForMaskedLM without a pooling layer: its save has no albert.pooler.*
    (nor a SOP head). It loads; the pooler starts at its initializer and is reported as new."""
    tensors = {k: v for k, v in hf_tensors().items() if not k.startswith(("albert.pooler.", "sop_classifier."))}
    path = write_hf(tmp_path / "mlm", vocab, tensors, architectures=["AlbertForMaskedLM"])
    checkpoint = Source.open(path).checkpoint
    assert checkpoint.heads == ("mlm",) and checkpoint.new == ("pooler/",)
    model, info = Source.open(path).pretraining_model()
    assert sorted(info["fresh"]) == ["pooler/bias", "pooler/kernel", "sop_head/bias", "sop_head/kernel"]
    full, _ = Source.open(hf_dir).pretraining_model()
    inputs = {**_inputs(), "masked_positions": np.array([[5, 1], [5, 7], [1, 3]], "int32")}
    # The MLM head does not read the pooler: its logits are those of the whole checkpoint.
    np.testing.assert_allclose(model(inputs)["mlm_logits"].numpy(), full(inputs)["mlm_logits"].numpy(), atol=1e-6)
    backbone, new = Source.open(path).backbone(dropout=0.0)
    assert sorted(new) == ["pooler/bias", "pooler/kernel"]
    assert not np.allclose(backbone.pooler.kernel.numpy(), hf_tensors()["albert.pooler.weight"].T)
    # Written back, it is a whole AlbertForPreTraining again (with the new pooler).
    write_huggingface({v.path: v.numpy() for v in model.weights}, info["backbone"], str(tmp_path / "again"),
                      (Path(vocab)).read_bytes())
    assert Source.open(str(tmp_path / "again")).checkpoint.new == ()
