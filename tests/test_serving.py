"""Raw-text SavedModels: in-graph packing = Python packing; a fresh process without albert_act and
`saved_model_cli run` give the Keras model's numbers; thousands of hostile strings do not crash."""

import dataclasses
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from albert_act import export
from albert_act.io.exports import find_export
from albert_act.io.source import Source
from albert_act.model.classifier import AlbertActClassifier
from albert_act.serve import savedmodel
from albert_act.train import finetuning_data
from conftest import spread_halting
from pipelines.packing import TextEncoder
from pipelines.glue import Example
from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID

MAX_SEQ_LENGTH = 24
LABELS = ("entailment", "neutral", "contradiction")
FILL_MASK_TEXTS = ["The [MASK] sat on the mat.", "[MASK]", "", "no mask at all", "Über [MASK] [MASK]!",
                   "word " * 40 + "[MASK]"]  # the last one's [MASK] is cut off by truncation
PAIRS = [("A man is playing a guitar.", "A man plays."), ("", ""), ("naïve café", "x " * 50),
         ("Совсем другой текст 漢字", "[MASK] stays text here")]


@pytest.fixture(scope="module")
def tokenizer(tiny_run):
    return Source.open(tiny_run[0]).tokenizer()


@pytest.fixture(scope="module")
def exports(tiny_run, tmp_path_factory):
    """A pre-training model and a 3-class pair classifier on its backbone, halting spread over depths, exported."""
    root = tmp_path_factory.mktemp("serving")
    source = Source.open(tiny_run[0])
    (model, _), tokenizer = source.pretraining_model(), source.tokenizer()
    spread_halting(model.backbone, seed=3, scale=2.0, bias=-0.5)
    classifier = AlbertActClassifier(model.backbone, num_classes=3, dropout=0.0)
    regression = AlbertActClassifier(model.backbone, num_classes=1, dropout=0.0)
    proto = tokenizer.model_proto
    dirs = {
        "pretraining": savedmodel.export_pretraining(model, str(root / "pre" / "1"), proto, MAX_SEQ_LENGTH, top_k=4),
        "classifier": savedmodel.export_classifier(classifier, str(root / "mnli" / "1"), proto, "mnli", LABELS, True,
                                                MAX_SEQ_LENGTH),
        "regression": savedmodel.export_classifier(regression, str(root / "stsb" / "1"), proto, "sts-b", (), False,
                                                MAX_SEQ_LENGTH),
    }
    return {"dirs": dirs, "model": model, "classifier": classifier, "regression": regression, "root": root}


def python_pack(tokenizer, segments, max_seq_length=MAX_SEQ_LENGTH):
    """Python statement of the packing rule: `[CLS] A [SEP] (B [SEP])` from the Python tokenizer's
    ids; while too long, the last piece of the longer segment (A on a tie) goes. Padded to
    max_seq_length; returns (inputs, truncated flags)."""
    rows = list(zip(*[tokenizer.encode(list(texts)) for texts in segments]))
    inputs = {k: np.zeros((len(rows), max_seq_length), "int32") for k in ("token_ids", "segment_ids", "padding_mask")}
    truncated = []
    for i, row in enumerate(rows):
        parts = [list(ids) for ids in row]
        budget = max_seq_length - 1 - len(parts)
        truncated.append(sum(map(len, parts)) > budget)
        while sum(map(len, parts)) > budget:
            max(parts, key=len).pop()  # max() keeps the first of equal lengths: A
        tokens, segment_ids = [CLS_ID], [0]
        for s_index, ids in enumerate(parts):
            tokens += ids + [SEP_ID]
            segment_ids += [s_index] * (len(ids) + 1)
        inputs["token_ids"][i, : len(tokens)] = tokens
        inputs["segment_ids"][i, : len(tokens)] = segment_ids
        inputs["padding_mask"][i, : len(tokens)] = 1
    return inputs, np.array(truncated)


def _packed(tokenizer, segments):
    """What fine-tuning feeds the model for lists of texts (one or two segments)."""
    examples = [Example(str(i), a, b, None) for i, (a, b) in
                enumerate(zip(segments[0], segments[1] if len(segments) > 1 else [None] * len(segments[0])))]
    inputs, _ = finetuning_data.encode(tokenizer, examples, MAX_SEQ_LENGTH)
    return inputs


def test_the_one_packer_follows_the_packing_rule(tokenizer):
    rng = np.random.default_rng(0)
    words = ["a", "dog", "runs", "über", "漢字", "the", "river", ",", "."]
    texts = [" ".join(rng.choice(words, rng.integers(0, 30))) for _ in range(200)]
    pairs = [" ".join(rng.choice(words, rng.integers(0, 30))) for _ in range(200)]
    encoder = TextEncoder(tokenizer.model_proto, MAX_SEQ_LENGTH)
    for segments in ([texts], [texts, pairs]):
        graph, truncated = encoder.pack([encoder.tokenize(tf.constant(s)) for s in segments])  # what exports run
        expected, expected_truncated = python_pack(tokenizer, segments)
        width = graph["token_ids"].shape[1]
        assert width == expected["padding_mask"].sum(1).max()  # padded to the longest row, not to the maximum
        for key in expected:
            np.testing.assert_array_equal(graph[key].numpy(), expected[key][:, :width], err_msg=key)
            np.testing.assert_array_equal(_packed(tokenizer, segments)[key], expected[key], err_msg=key)  # fine-tuning
        np.testing.assert_array_equal(truncated.numpy(), expected_truncated)
        assert 0 < expected_truncated.sum() < len(texts)


def test_mask_markers_are_split_out_before_normalization(tokenizer):
    encoder = TextEncoder(tokenizer.model_proto, MAX_SEQ_LENGTH)
    texts = FILL_MASK_TEXTS + ["a[MASK]b", "[mask] is a mask, as [MASK] and [Mask] are", "the [MASK]. [MASK]\x00x [MASK]\u3000y"]
    graph = encoder.tokenize_with_masks(tf.constant(texts)).to_list()
    assert graph == [tokenizer.encode_with_masks(t) for t in texts]
    assert graph[1] == [MASK_ID] and graph[2] == [] and graph[-2].count(MASK_ID) == 3 and graph[-1].count(MASK_ID) == 3
    assert tokenizer.encode_with_masks("the [mask] sat") == tokenizer.encode_with_masks("the [MASK] sat")  # any case


FRESH_PROCESS = textwrap.dedent("""
    import importlib.util, json, sys
    import numpy as np
    import tensorflow as tf
    import tensorflow_text  # registers the SentencePiece and normalization ops
    assert importlib.util.find_spec("albert_act") is None, "albert_act must not be importable here"
    dirs, texts, pairs = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
    results = {}
    pre = tf.saved_model.load(dirs["pretraining"])
    for name, out in (("fill_mask", pre.signatures["fill_mask"](text=tf.constant(texts))),
                      ("encoder", pre.signatures["encoder"](text=tf.constant([a for a, _ in pairs]))),
                      ("classifier", tf.saved_model.load(dirs["classifier"]).signatures["serving_default"](
                          text=tf.constant([a for a, _ in pairs]), text_pair=tf.constant([b for _, b in pairs]))),
                      ("regression", tf.saved_model.load(dirs["regression"]).signatures["serving_default"](
                          text=tf.constant([a for a, _ in pairs])))):
        results.update({f"{name}/{k}": v.numpy().astype("S") if v.dtype == tf.string else v.numpy()
                        for k, v in out.items()})
    np.savez(sys.argv[4], **results)
""")


@pytest.fixture(scope="module")
def fresh(exports, tmp_path_factory):
    """The exports' answers computed in a fresh interpreter that cannot import albert_act."""
    work = tmp_path_factory.mktemp("fresh")
    script = work / "serve.py"
    script.write_text(FRESH_PROCESS)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-I", str(script), json.dumps(exports["dirs"]), json.dumps(FILL_MASK_TEXTS),
         json.dumps(PAIRS), str(work / "out.npz")],
        cwd=work, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return dict(np.load(work / "out.npz"))


@pytest.mark.slow  # a fresh interpreter loads the exports: ~45 s on the 2-core CPU
def test_fill_mask_in_a_fresh_process_equals_keras(fresh, exports, tokenizer):
    model = exports["model"]
    positions = fresh["fill_mask/mask_positions"]
    assert positions.shape == (6, 2) and positions[1].tolist() == [1, -1] and positions[2].tolist() == [-1, -1]
    assert fresh["fill_mask/truncated"].tolist() == [False, False, False, False, False, True]
    for row, text in enumerate(FILL_MASK_TEXTS):
        ids = tokenizer.encode_with_masks(text)[: MAX_SEQ_LENGTH - 2]
        ids = [2, *ids, 3]
        assert fresh["fill_mask/token_ids"][row, : len(ids)].tolist() == ids
        tokens = fresh["fill_mask/tokens"][row]
        assert tokens[0] == b"[CLS]" and tokens[len(ids) - 1] == b"[SEP]" and (tokens[len(ids):] == b"").all()
        real = [p for p in positions[row] if p >= 0]
        assert real == [i for i, t in enumerate(ids) if t == MASK_ID]
        inputs = {"token_ids": np.array([ids], "int32"), "segment_ids": np.zeros((1, len(ids)), "int32"),
                  "padding_mask": np.ones((1, len(ids)), "int32"), "masked_positions": np.array([real or [0]], "int32")}
        outputs = model(inputs, training=False)
        np.testing.assert_array_equal(fresh["fill_mask/iterations"][row, : len(ids)], outputs["iterations"].numpy()[0])
        assert (fresh["fill_mask/iterations"][row, len(ids):] == 0).all()
        probabilities = tf.nn.softmax(outputs["mlm_logits"]).numpy()[0]
        for m in range(len(real)):
            served_ids = fresh["fill_mask/top_k_ids"][row, m]
            np.testing.assert_allclose(fresh["fill_mask/top_k_probabilities"][row, m], probabilities[m][served_ids],
                                       atol=1e-5)
            assert np.sort(probabilities[m])[-4] <= probabilities[m][served_ids].min() + 1e-5  # they are the top 4
            assert [t.decode() for t in fresh["fill_mask/top_k_tokens"][row, m]] == tokenizer.id_to_piece(served_ids)
        assert (fresh["fill_mask/top_k_ids"][row, len(real):] == -1).all()
    assert len(np.unique(fresh["fill_mask/iterations"][fresh["fill_mask/padding_mask"] > 0])) >= 3  # depths differ


@pytest.mark.slow  # a fresh interpreter loads the exports: ~45 s on the 2-core CPU
def test_encoder_and_classifiers_in_a_fresh_process_equal_keras(fresh, exports, tokenizer):
    inputs = _packed(tokenizer, [[a for a, _ in PAIRS], [b for _, b in PAIRS]])
    expected = exports["classifier"](inputs, training=False)
    width = fresh["classifier/token_ids"].shape[1]
    np.testing.assert_array_equal(fresh["classifier/token_ids"], inputs["token_ids"][:, :width])
    np.testing.assert_allclose(fresh["classifier/logits"], expected["logits"].numpy(), atol=1e-5)
    np.testing.assert_allclose(fresh["classifier/probabilities"], tf.nn.softmax(expected["logits"]).numpy(), atol=1e-5)
    np.testing.assert_array_equal(fresh["classifier/iterations"], expected["iterations"].numpy()[:, :width])
    labels = [LABELS[i] for i in expected["logits"].numpy().argmax(-1)]
    assert [x.decode() for x in fresh["classifier/label_names"]] == labels
    lengths = [len(a) + len(b) for a, b in zip(*(tokenizer.encode(list(s)) for s in zip(*PAIRS)))]
    assert fresh["classifier/truncated"].tolist() == [n > MAX_SEQ_LENGTH - 3 for n in lengths]
    assert fresh["classifier/truncated"][1] == False and fresh["classifier/truncated"][2] == True  # noqa: E712
    real = inputs["padding_mask"][:, :width] > 0
    mean = (expected["iterations"].numpy()[:, :width] * real).sum(1) / real.sum(1)
    np.testing.assert_allclose(fresh["classifier/mean_iterations"], mean, rtol=1e-6)
    assert fresh["classifier/tokens"][3].tolist()[:2] == [b"[CLS]", tokenizer.id_to_piece([inputs["token_ids"][3, 1]])[0].encode()]

    single = _packed(tokenizer, [[a for a, _ in PAIRS]])
    width = fresh["encoder/token_ids"].shape[1]
    backbone = exports["model"].backbone(single, training=False)
    for key in ("sequence_output", "pooled_output"):
        reference = backbone[key].numpy()[:, :width] if key == "sequence_output" else backbone[key].numpy()
        got = fresh[f"encoder/{key}"]
        if key == "sequence_output":  # padding positions are not outputs of interest
            got, reference = got[single["padding_mask"][:, :width] > 0], reference[single["padding_mask"][:, :width] > 0]
        np.testing.assert_allclose(got, reference, atol=1e-5, err_msg=key)
    score = exports["regression"](single, training=False)["logits"].numpy()[:, 0]
    np.testing.assert_allclose(fresh["regression/score"], score, atol=1e-5)
    assert "regression/label_names" not in fresh and "classifier/score" not in fresh


def _saved_model_cli(*args):
    """saved_model_cli, with tensorflow-text's ops registered first (as the README says)."""
    code = ("import sys, tensorflow_text; from tensorflow.python.tools.saved_model_cli import main; "
            "sys.argv[0] = 'saved_model_cli'; sys.exit(main())")
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # ~15 s: saved_model_cli in subprocesses; `pytest -m slow`
def test_saved_model_cli_shows_the_signatures_and_runs_them(exports, tokenizer, tmp_path):
    shown = _saved_model_cli("show", "--dir", exports["dirs"]["pretraining"], "--tag_set", "serve")
    assert shown.returncode == 0, shown.stderr[-2000:]
    for name in ("serving_default", "encoder", "fill_mask", "encoder_ids"):
        assert f'SignatureDef key: "{name}"' in shown.stdout
    shown = _saved_model_cli("show", "--dir", exports["dirs"]["classifier"], "--tag_set", "serve",
                             "--signature_def", "serving_default")
    assert "inputs['text'] tensor_info:" in shown.stdout and "inputs['text_pair'] tensor_info:" in shown.stdout
    assert "outputs['iterations'] tensor_info:" in shown.stdout and "DT_STRING" in shown.stdout

    ran = _saved_model_cli("run", "--dir", exports["dirs"]["classifier"], "--tag_set", "serve", "--signature_def",
                           "serving_default", "--input_exprs", 'text=["A man is playing a guitar."];text_pair=["A man plays."]',
                           "--outdir", str(tmp_path))
    assert ran.returncode == 0, ran.stderr[-3000:]
    expected = exports["classifier"](_packed(tokenizer, [[PAIRS[0][0]], [PAIRS[0][1]]]), training=False)
    np.testing.assert_allclose(np.load(tmp_path / "probabilities.npy"), tf.nn.softmax(expected["logits"]).numpy(),
                               atol=1e-5)
    iterations = np.load(tmp_path / "iterations.npy")
    np.testing.assert_array_equal(iterations, expected["iterations"].numpy()[:, : iterations.shape[1]])


def _hostile_strings(count, seed=0):
    """Empty, whitespace, very long, mixed scripts, combining marks, control and bidi characters, emoji."""
    rng = np.random.default_rng(seed)
    pools = ["abcdefghij ", "абвгдежз ", "漢字仮名交じり文", "مرحبا بالعالم ", "🙂👍🏽🇫🇷", "e\u0301a\u0308o\u0303 ",
             "".join(map(chr, range(0, 32))) + "\x7f", "\u202e\u200b\ufeff\u00a0\u3000\u2028", "[MASK][CLS][SEP]<pad> "]
    strings = ["", " ", "\t\n", "a" * 20000, "word " * 3000]
    while len(strings) < count:
        parts = rng.choice(len(pools), rng.integers(1, 4))
        strings.append("".join("".join(rng.choice(list(pools[p]), rng.integers(0, 60))) for p in parts))
    return strings[:count]


def test_thousands_of_hostile_strings_do_not_crash_and_tokenize_as_python(exports, tokenizer):
    serve = tf.saved_model.load(exports["dirs"]["classifier"]).signatures["serving_default"]
    strings = _hostile_strings(3000)
    python_ids = tokenizer.encode(strings)
    rng = np.random.default_rng(1)
    for start in range(0, len(strings), 500):
        batch = strings[start : start + 500]
        second = list(rng.permutation(batch))
        out = serve(text=tf.constant(batch), text_pair=tf.constant(second))
        probabilities = out["probabilities"].numpy()
        assert np.isfinite(probabilities).all() and np.allclose(probabilities.sum(1), 1.0, atol=1e-5)
        real = out["padding_mask"].numpy() > 0
        iterations = out["iterations"].numpy()
        assert (iterations[real] >= 1).all() and (iterations[real] <= 3).all() and (iterations[~real] == 0).all()
        assert real.sum(1).max() <= MAX_SEQ_LENGTH
        # The graph tokenizes exactly as Python does (the pair's lengths follow from the same rule).
        singles = TextEncoder(tokenizer.model_proto, 10**6).tokenize(tf.constant(batch))
        assert singles.to_list() == python_ids[start : start + 500]
    # Bytes that are not UTF-8 are refused by name (they would reach SentencePiece as silent <unk>s).
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"text_pair: a string is not valid UTF-8"):
        serve(text=tf.constant([b"fine"]), text_pair=tf.constant([b"\xff\xfe broken \xc3"]))
    empty = serve(text=tf.constant([], tf.string), text_pair=tf.constant([], tf.string))
    assert empty["probabilities"].shape == (0, 3) and empty["iterations"].shape[0] == 0


def test_a_pair_classifier_export_leaves_room_for_both_sentences(exports, tokenizer, tmp_path):
    with pytest.raises(ValueError, match=r"max_seq_length 4 leaves no piece for one of a pair's sentences \(\[CLS\] A "
                                         r"\[SEP\] B \[SEP\] takes 3 pieces of its own\): give 5 or more"):
        savedmodel.export_classifier(exports["classifier"], str(tmp_path / "x" / "1"), tokenizer.model_proto, "mnli",
                                     LABELS, True, 4)
    assert not (tmp_path / "x").exists()


def test_a_mixed_batch_answers_as_each_string_alone(exports):
    serve = tf.saved_model.load(exports["dirs"]["regression"]).signatures["serving_default"]
    texts = ["short", "a somewhat longer sentence about the river and the dog", "", "mid length text here"]
    together = serve(text=tf.constant(texts))
    for i, text in enumerate(texts):
        alone = serve(text=tf.constant([text]))
        width = alone["iterations"].shape[1]
        np.testing.assert_allclose(together["score"].numpy()[i], alone["score"].numpy()[0], atol=1e-5)
        np.testing.assert_array_equal(together["iterations"].numpy()[i, :width], alone["iterations"].numpy()[0])


@pytest.mark.slow  # ~18 s: the export CLI end to end (the README test runs it too); `pytest -m slow`
def test_export_cli_from_a_pretraining_run(tiny_run, tmp_path, capsys):
    export.main(["--checkpoint", tiny_run[0], "--kind", "pretraining", "--output", str(tmp_path / "demo" / "1"),
                 "--top_k", "3"])
    printed = capsys.readouterr().out
    assert "fill_mask: {" in printed and '"iterations": [' in printed and "tensorflow/serving" in printed
    info = Source.open(str(tmp_path / "demo" / "1")).info
    assert info["kind"] == "pretraining" and info["top_k"] == 3 and info["pretraining"]["steps"] == 3
    assert find_export(str(tmp_path / "demo")) == str(tmp_path / "demo" / "1")
    # The export round-trips as a backbone source, with the run's weights.
    a, _ = Source.open(tiny_run[0]).backbone()
    b, _ = Source.open(str(tmp_path / "demo" / "1")).backbone()
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=x.path)
    with pytest.raises(SystemExit, match="holds a pretraining model, not --kind classifier"):
        export.main(["--checkpoint", tiny_run[0], "--kind", "classifier", "--output", str(tmp_path / "c" / "1")])


def test_shapes_a_client_can_send_are_answered_or_refused_by_name(exports):
    """Empty batches get empty answers; a sentence without [MASK] gets -1 pads; unequal pairs and
    bad id inputs are refused with a message that names the input, never a bare graph error."""
    pre = tf.saved_model.load(exports["dirs"]["pretraining"]).signatures
    pair = tf.saved_model.load(exports["dirs"]["classifier"]).signatures["serving_default"]
    empty = tf.constant([], tf.string)
    answer = pre["fill_mask"](text=empty)
    assert answer["mask_positions"].shape[0] == 0 and answer["top_k_ids"].shape[0] == 0
    assert pre["encoder"](text=empty)["pooled_output"].shape == (0, exports["model"].backbone.hidden_dim)
    assert pair(text=empty, text_pair=empty)["label_ids"].shape == (0,)
    plain = pre["fill_mask"](text=tf.constant(["no mask here", "one [MASK] here"]))
    positions = plain["mask_positions"].numpy()
    assert positions[0].max() == -1 and positions[1].max() > 0
    assert (plain["top_k_ids"].numpy()[0] == -1).all() and (plain["top_k_ids"].numpy()[1, 0] >= 0).all()
    with pytest.raises(tf.errors.InvalidArgumentError, match="text and text_pair must hold as many strings"):
        pair(text=tf.constant(["a", "b"]), text_pair=tf.constant(["c"]))
    for signature, inputs, name in ((pre["fill_mask"], {"text": [["a [MASK]"], ["b"]]}, "text"),
                                    (pre["encoder"], {"text": [["a"]]}, "text"),
                                    (pair, {"text": ["a"], "text_pair": [["b"]]}, "text_pair")):
        # Refused by name: by the signature's own input check where TensorFlow makes one (a TypeError
        # naming the input's spec), else in the graph by the export's EnsureShape on that input.
        with pytest.raises((tf.errors.InvalidArgumentError, TypeError),
                           match=rf"{name}_must_be_a_list_of_strings|Can not cast TensorSpec\(shape=\(\d, 1\), "
                                 rf"dtype=tf.string, name='{name}'\)"):
            signature(**{k: tf.constant(v) for k, v in inputs.items()})
    ids = pre["encoder_ids"]
    vocabulary, length = exports["model"].backbone.vocabulary_size, exports["model"].backbone.max_sequence_length

    def call(token_ids, segment_ids=None, padding_mask=None):
        token_ids = tf.constant(token_ids, tf.int32)
        zeros, ones = tf.zeros_like(token_ids), tf.ones_like(token_ids)
        return ids(token_ids=token_ids, segment_ids=zeros if segment_ids is None else tf.constant(segment_ids, tf.int32),
                   padding_mask=ones if padding_mask is None else tf.constant(padding_mask, tf.int32))

    assert call(np.zeros((0, 3)))["pooled_output"].shape[0] == 0
    for inputs, message in (
            (([[2, vocabulary, 3]],), f"token_ids holds an id outside the vocabulary of {vocabulary}"),
            (([[2, -1, 3]],), "token_ids holds a negative id"),
            (([[5] * (length + 1)],), f"token_ids is longer than the {length} positions the model takes"),
            (([[2, 5, 3]], [[0, 0, 0, 0]]), "segment_ids must have the shape of token_ids"),
            (([[2, 5, 3]], [[0, 2, 0]]), "segment_ids must hold only 0 and 1"),
            (([[2, 5, 3]], None, [[1, 1]]), "padding_mask must have the shape of token_ids"),
            ((np.zeros((1, 0)),), "token_ids has no positions (length 0)"),
            (([[2, 5, 3], [2, 6, 3]], None, [[1, 1, 1], [0, 0, 0]]), "a row of padding_mask is all 0")):
        with pytest.raises(tf.errors.InvalidArgumentError, match=f"encoder_ids: {re.escape(message)}"):
            call(*inputs)


def test_the_printed_serve_command_is_quoted_and_needs_a_version_folder():
    from albert_act.io.exports import serve_command

    assert serve_command("/tmp/my models/demo/1") == (
        "serve: docker run -p 8501:8501 -v '/tmp/my models/demo:/models/demo' -e MODEL_NAME=demo tensorflow/serving")
    assert serve_command("/tmp/runs/export") == (
        "serve: TensorFlow Serving loads <base>/<version number>/, and /tmp/runs/export is not named by a number: "
        "export with --output /tmp/runs/export/1 to serve it")


@pytest.mark.slow  # (~16 s: exports; the export's record is read back by the bad-input catalogue's export cases)
def test_the_export_config_checks_itself_and_an_export_records_it(tiny_run, tmp_path, monkeypatch):
    from albert_act.serve.export_config import ExportConfig

    for bad, message in [(dict(kind="classifier", top_k=3), r"top_k 3 \(--top_k, or a --config file's\) is fill_mask's, which only --kind pretraining"),
                         (dict(kind="pretraining", top_k=0), r"top_k must be an integer in \[1, 1000\], got 0"),
                         (dict(kind="classifier", format="huggingface"), r"--format huggingface writes a pre-training"),
                         (dict(kind="pretraining", execution="fast"), r"execution must be one of \[")]:
        with pytest.raises(ValueError, match=message):
            ExportConfig(checkpoint="run", output="out/1", **bad)
    assert ExportConfig(checkpoint="run", kind="pretraining", output="out/1").resolved().top_k == 5
    # The export records the config it was written with; --config reads it back from the export.
    export.main(["--checkpoint", tiny_run[0], "--kind", "pretraining", "--output", str(tmp_path / "a" / "1"),
                 "--top_k", "3", "--execution", "static"])
    info = json.loads((tmp_path / "a" / "1" / "assets" / "albert_act_export.json").read_text())
    # The tau the run had reached, read from its checkpoint, beside the one it was given.
    prefix = tf.train.latest_checkpoint(os.path.join(tiny_run[0], "checkpoints"))
    saved_tau = float(tf.train.load_checkpoint(prefix).get_tensor("ponder_cost_weight/.ATTRIBUTES/VARIABLE_VALUE"))
    run_config = json.loads((Path(tiny_run[0]) / "config.json").read_text())
    recorded = info["pretraining"]
    assert recorded["ponder_cost_weight"] == max(saved_tau, 0.0) and isinstance(recorded["ponder_cost_weight"], float)
    assert recorded["ponder_cost_weight_given"] == run_config["ponder_cost_weight"]
    assert recorded["ponder_cost_weight_update"] == int(prefix.rsplit("-", 1)[1]) == run_config["steps"]
    # Its paths relative to the export (no directory of the machine), resolved when read from it.
    assert (info["export"]["checkpoint"], info["export"]["output"]) == (os.path.relpath(tiny_run[0], tmp_path / "a" / "1"), ".")
    recorded_file = tmp_path / "a" / "1" / "assets" / "albert_act_export.json"
    config = ExportConfig.from_record(info, path=str(recorded_file))
    assert (config.checkpoint, config.top_k, config.execution, config.max_seq_length) == (tiny_run[0], 3, "static", None)
    assert config.output == str(tmp_path / "a" / "1")
    # A copy away from its export is refused (its paths are relative to an export it no longer lies in); a
    # record whose paths are as typed (not relative) keeps them; a recorded --overwrite is not replayed.
    with pytest.raises(ValueError, match=r"an export's record, whose paths .* are relative to the export it was "
                                         r"written in; this file lies outside that export's assets/ folder"):
        ExportConfig.from_record(info, path=str(tmp_path / "copy.json"))
    with pytest.raises(ValueError, match=r"a fine-tuning run's settings, not an export's: export the run with python -m "
                                         r"albert_act.export --checkpoint runs/ft --kind classifier"):
        ExportConfig.from_record({"task": "rte", "init": "runs/t1"}, path="runs/ft/finetune_config.json")
    typed = {**info, "export": {**info["export"], "checkpoint": "runs/x", "output": "out/1", "overwrite": True}}
    old = ExportConfig.from_record(typed, path=str(recorded_file))
    assert (old.checkpoint, old.output, old.overwrite) == ("runs/x", "out/1", False)
    from albert_act.base import settings

    monkeypatch.chdir(tmp_path / "a")  # --config from another folder, by a relative path: the same run dir
    args = export.parse_args(["--config", os.path.join("1", "assets", "albert_act_export.json"),
                              "--output", str(tmp_path / "b" / "1")])
    assert settings.config_from(ExportConfig, args) == ExportConfig(**{**dataclasses.asdict(config),
                                                                        "output": str(tmp_path / "b" / "1")})


def test_the_served_depth_knob_caps_every_token_and_equals_keras(exports):
    # fill_mask_capped(text, K): every token halts by K iterations; K >= N_max answers as fill_mask.
    model = tf.saved_model.load(exports["dirs"]["pretraining"])
    texts = tf.constant(["The [MASK] sat on the mat.", "a b c d e f [MASK]"])
    full = model.signatures["fill_mask"](text=texts)
    n_max = exports["model"].backbone.max_iterations
    assert full["iterations"].numpy().max() > 1  # the halting spread: some token runs deeper than 1
    same = model.signatures["fill_mask_capped"](text=texts, max_iterations=tf.constant(n_max + 5))
    np.testing.assert_array_equal(same["iterations"].numpy(), full["iterations"].numpy())
    np.testing.assert_allclose(same["top_k_probabilities"].numpy(), full["top_k_probabilities"].numpy(), atol=1e-6)
    capped = model.signatures["fill_mask_capped"](text=texts, max_iterations=tf.constant(1))
    real = capped["padding_mask"].numpy() == 1
    assert set(np.unique(capped["iterations"].numpy()[real])) == {1}
    encoded = model.signatures["encoder_capped"](text=texts, max_iterations=tf.constant(2))
    real = encoded["padding_mask"].numpy() == 1
    assert encoded["iterations"].numpy()[real].max() == 2
    # What the cap changes, the Keras model's capped forward pass changes alike.
    states = model.signatures["encoder"](text=texts)["sequence_output"].numpy()
    backbone = exports["model"].backbone
    expected = backbone.capped({k: tf.constant(encoded[k].numpy()) for k in ("token_ids", "padding_mask")} |
                               {"segment_ids": tf.zeros_like(encoded["token_ids"])}, 2)["sequence_output"].numpy()
    scale = np.abs(states).max()
    assert np.abs(encoded["sequence_output"].numpy() - states)[real].max() > 1e-3 * scale
    assert np.abs(encoded["sequence_output"].numpy() - expected)[real].max() <= 1e-5 * scale
    with pytest.raises(tf.errors.InvalidArgumentError, match="max_iterations must be at least 1"):
        model.signatures["fill_mask_capped"](text=texts, max_iterations=tf.constant(0))


def test_the_depth_knob_benchmark_refuses_what_analyze_refuses(tiny_run, records, tmp_path):
    """benchmarks.depth_knob: caps outside [1, N_max], N_max itself (the last row) or twice, and training records,
    before anything is measured."""
    from benchmarks import depth_knob

    with pytest.raises(SystemExit, match=r"--caps must be iterations in \[1, N_max=3\], got 0"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--caps", "2", "0"])
    with pytest.raises(SystemExit, match=r"--caps gives 1 twice: each value is measured once"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--caps", "1", "1"])
    with pytest.raises(SystemExit, match=r"--caps 3 is N_max, the model as trained, which the table's last row"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--caps", "1", "3"])
    with pytest.raises(SystemExit, match=r"is a training file of .*held-out numbers need records it was not trained on"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[0], "--caps", "1"])
    # its flags' ranges and its output dir, before anything is measured (as analyze's)
    with pytest.raises(SystemExit, match=r"--max_batches must be an integer >= 1, got 0"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--max_batches", "0"])
    with pytest.raises(SystemExit, match=r"--repeats must be an integer in \[1, 100\], got 0"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--repeats", "0"])
    data = os.path.dirname(records[1])
    with pytest.raises(SystemExit, match=rf"--records {data} is a folder: give its held-out shards"):
        depth_knob.main(["--init", tiny_run[0], "--records", data])
    with pytest.raises(SystemExit, match=rf"--output_dir {data} holds other files .*the benchmark replaces its dir"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--output_dir", data])
    earlier = tmp_path / "knob"
    earlier.mkdir()
    (earlier / "depth_knob.md").write_text("another model's table")
    with pytest.raises(SystemExit, match=r"holds an earlier depth_knob result \(depth_knob.md\); pass --overwrite"):
        depth_knob.main(["--init", tiny_run[0], "--records", records[1], "--output_dir", str(earlier)])
    import glob
    import shutil

    cut = tmp_path / "cut"  # a held-out shard cut short: named, not TensorFlow's DataLossError traceback
    cut.mkdir()
    for path in glob.glob(records[1]):
        shutil.copy(path, cut)
    shard = sorted(cut.iterdir())[0]
    shard.write_bytes(shard.read_bytes()[: shard.stat().st_size // 2])
    with pytest.raises(SystemExit, match=rf"error: {shard}: a corrupt record \(.*\); make the shard again"):
        depth_knob.main(["--init", tiny_run[0], "--records", str(cut / "*"), "--caps", "1", "--repeats", "1",
                         "--output_dir", str(tmp_path / "k2")])
    assert not (tmp_path / "k2").exists()


@pytest.mark.slow  # (~15 s: an export; the stop just after a move-in is tested in seconds for probing's task files)
def test_a_stop_after_the_export_is_in_place_says_it_is_whole(tiny_run, tmp_path, monkeypatch, capsys):
    """Ctrl-C during the example query that follows the export: the export is whole, and the stop line says so
    (not "nothing was written", which a re-run would then contradict with "exists"). The lock a killed export left
    is taken over, and the export says whose it was."""
    from albert_act import export
    from albert_act.serve import savedmodel as exporting

    def interrupted(export_dir):
        raise KeyboardInterrupt

    monkeypatch.setattr(exporting, "example_query", interrupted)
    output = tmp_path / "pre" / "1"
    output.parent.mkdir()
    (output.parent / ".1.lock").write_text('{"pid": 4242, "host": "laptop", "command": "export.py", "started": "x"}')
    with pytest.raises(SystemExit) as stop:
        export.main(["--checkpoint", tiny_run[0], "--kind", "pretraining", "--output", str(output)])
    assert stop.value.code == 130
    said = capsys.readouterr()
    assert f"{output}: the process that held it (pid 4242 on laptop" in said.out and "taking it over" in said.out
    assert said.err.endswith(f"stopped: {output} is written whole; only its example query was cut "
                                            "short\n")
    assert (output / "saved_model.pb").is_file() and (output / "variables" / "variables.index").is_file()


def test_an_export_whose_variables_are_another_exports_is_named(tmp_path):
    """variables/ copied from another export (weights of other shapes) was 'saved_model.pb: damaged export' in
    TensorFlow's words."""
    import shutil

    import tensorflow as tf

    from albert_act.io.exports import load_export

    for name, shape in (("one", 2), ("other", 3)):
        module = tf.Module()
        module.weight = tf.Variable(tf.zeros([shape]))
        module.read = tf.function(lambda: module.weight + 1.0, input_signature=[])
        tf.saved_model.save(module, str(tmp_path / name))
    shutil.rmtree(tmp_path / "one" / "variables")
    shutil.copytree(tmp_path / "other" / "variables", tmp_path / "one" / "variables")
    with pytest.raises(ValueError, match=r"one: its variables/ are another model's \(weights of other shapes than its "
                                         r"saved_model.pb's: .*copied from another export\?\)"):
        load_export(str(tmp_path / "one"))
