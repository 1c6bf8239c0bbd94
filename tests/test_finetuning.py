"""Fine-tuning: loading a pre-trained backbone, a smoke run on real MRPC data, the export, bad input."""

import dataclasses
import json
import re
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from albert_act.base import artifacts
from albert_act.io.source import Source
from albert_act.train import finetuning_data, finetuning_run, finetuning_steps
from albert_act.train.finetuning_config import FinetuneConfig
from pipelines.glue import Example


def test_backbone_from_run_dir_equals_backbone_from_savedmodel(tiny_run):
    run_dir, export_dir = tiny_run
    source = Source.open(run_dir)
    (a, _), tokenizer = source.backbone(), source.tokenizer()
    b, _ = Source.open(export_dir).backbone()
    assert tokenizer.vocabulary_size == 400 and a.dropout == 0.1
    for x, y in zip(a.weights, b.weights):
        np.testing.assert_array_equal(x.numpy(), y.numpy(), err_msg=x.path)
    # ... and they are the trained values that the run's last checkpoint holds, not a fresh init.
    import tensorflow as tf

    reader = tf.train.load_checkpoint(str(Path(run_dir) / artifacts.CHECKPOINTS))
    saved = reader.get_tensor("model/embeddings.Stoken_embedding.Sembeddings/.ATTRIBUTES/VARIABLE_VALUE")
    np.testing.assert_array_equal(a.embeddings.token_embedding.embeddings.numpy(), saved)


def test_encode_pairs_and_truncation(tiny_run):
    tokenizer = Source.open(tiny_run[0]).tokenizer()
    examples = [Example("0", "a dog .", "it .", "1"),
                Example("1", "word " * 40, "other " * 40, "0")]
    inputs, truncated = finetuning_data.encode(tokenizer, examples, 16)
    tokens = inputs["token_ids"]
    assert truncated == 1 and tokens[:, 0].tolist() == [2, 2]
    assert (tokens[1] == 3).sum() == 2 and inputs["padding_mask"][1].all()  # full: [CLS] a [SEP] b [SEP]
    first_sep = list(tokens[0]).index(3)
    assert inputs["segment_ids"][0, : first_sep + 1].sum() == 0 and inputs["segment_ids"][0, first_sep + 1] == 1


@pytest.mark.slow  # ~70 s on the 2-core CPU: fine-tuning on the real RTE files
def test_finetuning_on_real_rte_improves_dev_accuracy(shared_data, tiny_run, tmp_path, tmp_path_factory, capsys):
    # What this shows: the loop trains, selects and exports on real data. A 32-wide model
    # pre-trained for 3 updates learns the prior within an epoch: it ends on the majority class
    # (146 of 277 RTE dev pairs, 52.7%) whichever class its random head started on; it does not
    # learn entailment, and is not asked to.
    config = FinetuneConfig(task="rte", data_dir=str(shared_data / "glue" / "RTE"), init=tiny_run[0],
                            output_dir=str(tmp_path), learning_rate=1e-3, batch_size=16, epochs=1, max_seq_length=64)
    result = finetuning_run.finetune(config, progress=False)
    assert result["dev_examples"] == 277 and result["train_examples"] == 2490
    assert result["best"]["accuracy"] >= 146 / 277 - 1e-9 and result["history"][0]["accuracy"] >= 146 / 277 - 1e-9
    assert set(result["best"]) >= {"accuracy", "iterations"} and result["best"]["iterations"]["all"] >= 1
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["best"]["epoch"] == 1 and "| initial |" in finetuning_run.format_results(saved)
    assert FinetuneConfig.from_record(json.loads((tmp_path / "finetune_config.json").read_text())) == config
    assert result["majority"]["accuracy"] == pytest.approx(146 / 277)
    low, high = result["best"]["accuracy_interval"]
    assert low < result["best"]["accuracy"] < high and high - low < 0.15  # 277 pairs: about +-0.06
    info = Source.open(result["export"]).info
    assert result["export"] == str(tmp_path / "export" / "1") and (tmp_path / "export" / "1" / "assets" / "vocab.model").exists()
    assert info["kind"] == "classifier" and info["labels"] == ["entailment", "not_entailment"] and info["pair"]

    # The fine-tuning dir re-exports through the CLI (as a TPU would serve it), with the same answers.
    from albert_act import export

    export.main(["--checkpoint", str(tmp_path), "--kind", "classifier", "--output", str(tmp_path / "tpu" / "1"),
                 "--execution", "static"])
    assert Source.open(str(tmp_path / "tpu" / "1")).info["backbone"]["execution"] == "static"
    import tensorflow as tf

    texts = {"text": tf.constant(["A man is playing a guitar.", ""]), "text_pair": tf.constant(["A man plays.", "x"])}
    sparse = tf.saved_model.load(result["export"]).signatures["serving_default"](**texts)
    static = tf.saved_model.load(str(tmp_path / "tpu" / "1")).signatures["serving_default"](**texts)
    np.testing.assert_allclose(sparse["probabilities"].numpy(), static["probabilities"].numpy(), atol=1e-5)
    np.testing.assert_array_equal(sparse["iterations"].numpy(), static["iterations"].numpy())
    # ... and an export re-exports too (weights read back from the SavedModel by path).
    export.main(["--checkpoint", str(tmp_path / "tpu" / "1"), "--kind", "classifier", "--output",
                 str(tmp_path / "again" / "1")])
    again = tf.saved_model.load(str(tmp_path / "again" / "1")).signatures["serving_default"](**texts)
    np.testing.assert_allclose(again["probabilities"].numpy(), sparse["probabilities"].numpy(), atol=1e-5)
    np.testing.assert_array_equal(again["iterations"].numpy(), sparse["iterations"].numpy())
    source = Source.open(str(tmp_path))
    model, tokenizer = source.classifier(), source.tokenizer()
    inputs, _ = finetuning_data.encode(tokenizer, [Example("0", "A man is playing a guitar.", "A man plays.", None)], 64)
    keras_logits = model(inputs, training=False)["logits"].numpy()[0]
    np.testing.assert_allclose(sparse["logits"].numpy()[0], keras_logits, atol=1e-5)
    # the fine-tuning, its export and a re-export carry the fingerprints of its pre-training's training shards: its
    # training records are refused as held-out records wherever the fine-tuning was copied
    from albert_act.analysis.report import check_not_trained_on

    trained = json.loads(open(os.path.join(tiny_run[0], artifacts.CONFIG)).read())
    train_file = sorted(Path().glob(trained["train_files"][0]) if not os.path.isabs(trained["train_files"][0]) else
                        Path("/").glob(trained["train_files"][0].lstrip("/")))[0]
    for model in (tmp_path, tmp_path / "export" / "1", tmp_path / "again" / "1"):
        assert Source.open(str(model)).train_shards == trained[artifacts.TRAIN_SHARDS]
        with pytest.raises(ValueError, match=r"is a training file of .*: held-out numbers need records it was not "):
            check_not_trained_on(Source.open(str(model)), [str(train_file)])
    with pytest.raises(SystemExit, match="holds a classifier model, not --kind pretraining"):
        export.main(["--checkpoint", str(tmp_path), "--kind", "pretraining", "--output", str(tmp_path / "x" / "1")])
    with pytest.raises(SystemExit, match="exists; choose a new version number"):
        export.main(["--checkpoint", str(tmp_path), "--kind", "classifier", "--output", str(tmp_path / "tpu" / "1")])
    # a grid keeps a finished point only when its files read whole (damaged_file)
    assert finetuning_run.damaged_file(str(tmp_path), result) is None
    weights = tmp_path / "classifier.weights.h5"
    whole = weights.read_bytes()
    weights.write_bytes(whole[:1000])
    assert finetuning_run.damaged_file(str(tmp_path), result) == f"{weights} does not read whole"
    weights.write_bytes(whole)
    (tmp_path / "export" / "1" / "variables" / "variables.index").unlink()
    assert finetuning_run.damaged_file(str(tmp_path), result) == (
        f"{tmp_path / 'export' / '1' / 'variables' / 'variables.index'} (the export's weight index) missing")
    # A fine-tuning as --init: its encoder is taken, and its classifier head is said not to be
    capsys.readouterr()
    finetuning_run.finetune(dataclasses.replace(config, init=str(tmp_path), output_dir=str(tmp_path_factory.mktemp(
        "from_ft")), max_train_examples=32), progress=True)
    assert (f"note: {tmp_path} is a fine-tuning for rte: its encoder is taken, fine-tuned as it is; its classifier "
            "head is not (a new one is trained for rte)") in capsys.readouterr().out
    (tmp_path / "results.json").rename(tmp_path / "results.kept")  # stopped before its end: read, and said
    Source.open(str(tmp_path)).classifier()
    assert capsys.readouterr().err == (f"note: {tmp_path} is a fine-tuning that did not finish (no results.json): its "
                                       "weights are its best epoch's so far (to finish it, run its command again)\n")


def test_bad_input(shared_data, tiny_run, tmp_path):
    with pytest.raises(ValueError, match=r"unknown task 'paraphrase'; expected a GLUE task \[.*'rte'.*\] or a probing task"):
        finetuning_data.load_task("paraphrase", str(tmp_path))
    with pytest.raises(ValueError, match=r"dev.tsv: missing \(RTE dev split"):
        (tmp_path / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentailment\n")
        finetuning_data.load_task("rte", str(tmp_path))
    (tmp_path / "dev.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tnot_entailment\n")
    with pytest.raises(ValueError, match=r"train.tsv: every training label is 'entailment': the model would learn that "
                                         r"answer and nothing else"):
        finetuning_data.load_task("rte", str(tmp_path))
    mrpc = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n" + "".join(f"{y}\t{i}\t{i}\tA man plays.\tA man sings.\n"
                                                                    for i, y in enumerate("0101"))
    (tmp_path / "train.tsv").write_text(mrpc)
    (tmp_path / "dev.tsv").write_text(mrpc.replace("1\t", "0\t"))
    with pytest.raises(ValueError, match=r"dev.tsv: no gold label is '1' \(the positive class\): the task's F1, by which "
                                         r"the best epoch is chosen, is 0 whatever the model predicts"):
        finetuning_data.load_task("mrpc", str(tmp_path))
    cola = finetuning_data.load_task("cola", str(shared_data / "glue" / "CoLA"))  # short sentences, said twice
    assert (cola.dev_in_train(), len(cola.dev)) == (16, 1043)
    assert cola.dev_in_train(cola.train[:60]) == 0  # --max_train_examples 60 trains on none of them
    import unicodedata  # a dev sentence saved in another Unicode form (NFD, as macOS writes) is the same sentence

    accented = finetuning_data.TaskData("tense", ("PAST", "PRES"), [Example("0", "Le café était fermé .", None, "PAST")],
                                        [Example("1", unicodedata.normalize("NFD", "Le café  était fermé ."), None,
                                                 "PAST")], "tense")
    assert accented.dev_in_train() == 1
    with pytest.raises(ValueError, match=r"not a pre-training run dir \(config.json \+ checkpoints/\), a fine-tuning dir"):
        Source.open(str(tmp_path))
    wiki_like = tmp_path / "other.model"
    from pipelines.tokenizer import train_sentencepiece

    wiki_like.write_bytes(train_sentencepiece([str(shared_data / "wikipedia_en_sample" / "bert_sample_text.txt")],
                                              vocab_size=300))
    with pytest.raises(ValueError, match=r"other.model has 300 pieces, the model 400"):
        Source.open(tiny_run[0]).tokenizer(vocab=str(wiki_like))
    task = finetuning_data.TaskData("rte", ("entailment", "not_entailment"), [], [], "rte")
    with pytest.raises(ValueError, match=r"rte: labels \['maybe'\] outside the task's set"):
        finetuning_data.targets(task, [Example("0", "a", "b", "maybe")])


def test_a_training_subset_of_one_label_is_refused(shared_data):
    task = finetuning_data.load_task("sst-2", str(shared_data / "glue" / "SST-2"))
    task.train = sorted(task.train, key=lambda e: e.label)  # a file in label order
    with pytest.raises(ValueError, match=r"the first 16 training examples \(--max_train_examples 16\) all have the "
                                         r"label '0': the model would learn that answer and nothing else"):
        finetuning_run.training_subset(task, 16)
    with pytest.raises(ValueError, match=r"--max_train_examples 1 keeps one training example: .*give 2 or more"):
        finetuning_run.training_subset(task, 1)
    assert len(finetuning_run.training_subset(task, None)) == len(task.train)


def test_an_earlier_run_is_cleared_before_its_settings_are_replaced(tmp_path):
    """--overwrite of a finished fine-tuning, stopped before the new run's first epoch: the folder held
    the old weights and results beside the new settings, and the stop line called them this run's."""
    for name in ("results.json", "classifier.weights.h5", "finetune_config.json", "vocab.model"):
        (tmp_path / name).write_text("old")
    (tmp_path / "export" / "1").mkdir(parents=True)
    finetuning_run.clear_earlier_run(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["finetune_config.json", "vocab.model"]
    replayed = FinetuneConfig.from_record({"task": "rte", "data_dir": "d", "init": "i", "output_dir": "o",
                                           "overwrite": True})  # as a grid point records it
    assert replayed.overwrite is False  # a replay names --overwrite if it must


def test_the_updates_per_epoch_are_said_as_they_run():
    assert finetuning_run.updates_per_epoch(20, 8) == "2 updates of 8"  # 4 sit out each epoch, drawn anew each time
    assert finetuning_run.updates_per_epoch(1, 8) == "1 update of all 1 (fewer than --batch_size 8)"


def test_a_diverged_run_stops_without_a_result(shared_data, tiny_run, tmp_path, monkeypatch):
    """A learning rate that float32 holds but training does not survive: the loss goes non-finite and the
    run stops, naming the rate (it kept an epoch of NaN weights as its best, and exported it). (A rate above 10 is
    refused; the bound is lifted here to make the loss go non-finite at once.)"""
    from albert_act.base import checks

    monkeypatch.setattr(checks, "MOST_LEARNING_RATE", 1e38)
    config = FinetuneConfig(task="rte", data_dir=str(shared_data / "glue" / "RTE"), init=tiny_run[0],
                            output_dir=str(tmp_path / "ft"), learning_rate=1e30, batch_size=8, epochs=1,
                            max_train_examples=32, max_seq_length=64)
    with pytest.raises(FloatingPointError, match=r"non-finite loss at update \d+ of epoch 1 \(learning rate 1e\+30\)"):
        finetuning_run.finetune(config, progress=False)
    assert not (tmp_path / "ft" / "export").exists() and not (tmp_path / "ft" / "results.json").exists()


def _gather_run(tiny_run, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    settings = json.loads((run / "config.json").read_text())
    settings["backbone"]["execution"] = settings["backbone_overrides"]["execution"] = "gather"
    (run / "config.json").write_text(json.dumps(settings))
    assert Source.open(str(run)).info["backbone"]["execution"] == "gather"
    return run


def test_a_gather_model_runs_the_static_loop_under_xla(tiny_run, tmp_path):
    """Gather's dynamic shapes make XLA abort the process: under --jit_compile (as a TPU always is) a model
    pre-trained with it (the demo preset's) is built with the static loop, which gives the same numbers."""
    source = Source.open(str(_gather_run(tiny_run, tmp_path)))
    assert source.xla_settings(jit_compile=True) == {"execution": "static"} and source.xla_settings(False) == {}


@pytest.mark.slow  # (a fine-tuning compiled by XLA: ~25 s)
def test_a_gather_model_fine_tunes_under_xla(shared_data, tiny_run, tmp_path):
    """A model pre-trained with the gather execution, fine-tuned with XLA: it runs, by the static loop."""
    run = _gather_run(tiny_run, tmp_path)
    config = FinetuneConfig(task="rte", data_dir=str(shared_data / "glue" / "RTE"), init=str(run),
                            output_dir=str(tmp_path / "ft"), batch_size=8, epochs=1, max_train_examples=16,
                            max_seq_length=32, jit_compile=True, strategy="cpu")
    result = finetuning_run.finetune(config, progress=False)
    assert 0.0 <= result["best"]["accuracy"] <= 1.0 and result["jit_compile"] is True


def test_sizes_that_do_not_fit_are_named(tiny_run, tmp_path):
    import shutil

    export = tmp_path / "export"
    shutil.copytree(tiny_run[1], export)
    info = export / "assets" / "albert_act_export.json"
    config = json.loads(info.read_text())
    config["backbone"]["intermediate_dim"] = 128  # the weights say 64
    info.write_text(json.dumps(config))
    with pytest.raises(ValueError, match=r"export/variables: encoder/transformer_block_0/intermediate/kernel has shape "
                                         r"\(32, 64\), the model \(built from \S*export/assets/albert_act_export.json\) "
                                         r"needs \(32, 128\): the weights are another model's; .* Restore the two together"):
        Source.open(str(export)).backbone()
    run = tmp_path / "run"  # a run whose config.json was edited: the checkpoint file is named, and the config
    shutil.copytree(tiny_run[0], run)
    settings = json.loads((run / "config.json").read_text())
    settings["backbone_overrides"]["intermediate_dim"] = settings["backbone"]["intermediate_dim"] = 128
    (run / "config.json").write_text(json.dumps(settings))
    with pytest.raises(ValueError, match=r"run/checkpoints/ckpt-3: encoder/transformer_block_0/intermediate/kernel has "
                                         r"shape \(32, 64\), the model \(built from \S*run/config.json\) needs"):
        Source.open(str(run)).backbone()
    with pytest.raises(ValueError, match=r"typo'd_run: no such file or folder \(a model"):
        Source.open(str(tmp_path / "typo'd_run"))
    settings["backbone"]["x"] = 1  # a key the backbone does not take, and a size that is no number: the file named
    (run / "config.json").write_text(json.dumps(settings))
    with pytest.raises(ValueError, match=r"run/config.json: the backbone settings hold 'x', which the model does not"):
        Source.open(str(run))
    del settings["backbone"]["x"]
    settings["backbone"]["hidden_dim"] = float("nan")
    (run / "config.json").write_text(json.dumps(settings))
    with pytest.raises(ValueError, match=r"run/config.json: the backbone's hidden_dim is nan, not a whole number >= 1"):
        Source.open(str(run))


def test_a_truncated_weights_file_is_named(tiny_run, tmp_path):
    """A fine-tuning dir whose classifier.weights.h5 was cut short: export, analyze and finetune --init
    named no file ('could not write' after the full-disk change); now the file and HDF5's reason."""
    from albert_act.model.classifier import AlbertActClassifier

    classifier = AlbertActClassifier(Source.open(tiny_run[0]).backbone()[0], num_classes=2)
    folder = tmp_path / "ft"
    folder.mkdir()
    artifacts.write_json(str(folder / artifacts.FINETUNED_INFO), {
        "kind": "classifier", "task": "rte", "labels": ["entailment", "not_entailment"], "pair": True,
        "max_seq_length": 64, "num_classes": classifier.num_classes, "dropout": 0.0,
        "backbone": classifier.backbone.get_config()})
    (folder / artifacts.VOCAB).write_bytes((Path(tiny_run[0]) / artifacts.VOCAB).read_bytes())
    classifier.save_weights(str(folder / artifacts.WEIGHTS))
    assert Source.open(str(folder)).classifier(dropout=0.0).num_classes == classifier.num_classes  # whole: reads
    whole = (folder / artifacts.WEIGHTS).read_bytes()
    assert finetuning_run.damaged_file(str(folder), {"export": tiny_run[1]}) is None  # a grid point kept
    (folder / artifacts.WEIGHTS).write_bytes(whole[:1000])
    with pytest.raises(ValueError, match=r"ft/classifier.weights.h5: not a readable Keras weights file \(.*truncated "
                                         r"file: eof = 1000"):
        Source.open(str(folder)).classifier(dropout=0.0)
    assert finetuning_run.damaged_file(str(folder), {"export": tiny_run[1]}) == (  # a grid point run again
        f"{folder / artifacts.WEIGHTS} does not read whole")
    export = tmp_path / "export"
    shutil.copytree(tiny_run[1], export)
    (folder / artifacts.WEIGHTS).write_bytes(whole)
    (export / "saved_model.pb").write_bytes((export / "saved_model.pb").read_bytes()[:500])
    assert finetuning_run.damaged_file(str(folder), {"export": str(export)}) == (
        f"{export / 'saved_model.pb'} not readable")


def test_fixed_depth_finetuning_adds_no_ponder_cost(tiny_run):
    # At fixed depth every token runs N_max: the ponder cost is a constant with no gradient, and
    # tau x it would only shift the reported loss. Asked for tau 0.5, the loss is the task's alone.
    import keras
    import tensorflow as tf

    from albert_act.model.classifier import AlbertActClassifier

    source = Source.open(tiny_run[0])
    inputs, _ = finetuning_data.encode(source.tokenizer(), [Example("0", "a dog .", "it .", "1")] * 4, 16)
    targets = np.array([1, 0, 1, 0])
    losses = {}
    for tau in (0.0, 0.5):
        backbone, _ = source.backbone(halting="none")
        keras.utils.set_random_seed(1)  # the same head for both (dropout draws still differ a little)
        model = AlbertActClassifier(backbone, num_classes=2)
        assert np.all(model(inputs, training=False)["ponder_cost"].numpy() >= 3)  # what tau would have added
        steps = finetuning_steps.ClassifierSteps(model, keras.optimizers.SGD(0.0), tf.distribute.get_strategy(),
                                               False, tau)
        assert steps.ponder_cost_weight == 0.0
        losses[tau] = float(steps.train_step(inputs, targets))
    # tau 0.5 x a ponder cost >= 3 would add >= 1.5; dropout alone moves a loss of ~0.69 by < 0.01
    assert 0.1 < losses[0.0] < 2 and losses[0.5] == pytest.approx(losses[0.0], abs=0.1)


def test_the_config_checks_itself_and_the_grid_is_the_config_at_other_values(tmp_path):
    given = dict(task="rte", data_dir="glue/RTE", init="runs/demo", output_dir=str(tmp_path))
    for bad, message in [(dict(batch_size=0), r"batch_size must be an integer in \[1, 65536\], got 0"),
                         (dict(ponder_cost_weight=-1.0), r"ponder_cost_weight must be a number in \[0, 3.4028e\+38\] .*, got -1.0"),
                         (dict(seeds=3), r"--seeds 3 goes with --grid"),
                         (dict(halting="maybe"), r"halting must be one of \['act', 'none'\], got 'maybe'")]:
        with pytest.raises(ValueError, match=message):
            FinetuneConfig(**given, **bad)
    config = FinetuneConfig(**given, grid=True, seeds=2, seed=7)
    points = config.grid_points()
    assert len(points) == 3 * 2 * 3 * 2 and len({p.output_dir for p in points}) == len(points)
    assert {(p.learning_rate, p.batch_size, p.epochs, p.seed) for p in points} >= {(5e-5, 16, 2, 7), (2e-5, 32, 4, 8)}
    assert all(not p.grid and p.seeds == 1 and p.output_dir.startswith(str(tmp_path / "grid")) for p in points)


def test_a_grid_stopped_part_way_goes_on_from_its_finished_points(tmp_path, monkeypatch, capsys):
    """Ctrl-C in the 3rd of 4 points: run again, the grid runs the 3rd and 4th only (the 2 finished are kept, as
    they were); with --overwrite, all 4 again. A finished point run with other settings is not taken."""
    ran = []

    def fake_finetune(point, progress=True):  # what finetune leaves: its config, its export, then results.json
        ran.append(point.output_dir)
        if len(ran) == 3 and stop:
            raise KeyboardInterrupt
        os.makedirs(os.path.join(point.output_dir, "export", "1"), exist_ok=True)
        (Path(point.output_dir) / artifacts.FINETUNE_CONFIG).write_text(json.dumps(dataclasses.asdict(point)))
        result = {"metric": "accuracy", "best": {"accuracy": point.learning_rate}, "export":
                  os.path.join(point.output_dir, "export", "1"), "run": len(ran), "data": finetuning_run.data_key(task)}
        (Path(point.output_dir) / artifacts.RESULTS).write_text(json.dumps(result))
        return result

    task = finetuning_data.TaskData("rte", ("entailment", "not_entailment"), [Example("0", "A b.", "C d.", "entailment")],
                                    [Example("1", "E f.", "G h.", "not_entailment")], "rte")
    monkeypatch.setattr(finetuning_run, "load_task", lambda name, data_dir: task)  # the data the points trained on
    monkeypatch.setattr(finetuning_run, "finetune", fake_finetune)
    monkeypatch.setattr(finetuning_run, "damaged_file", lambda output_dir, result: None)  # whole (its test: above)
    config = FinetuneConfig(task="rte", data_dir="glue/RTE", init="runs/demo", output_dir=str(tmp_path), grid=True)
    grid = {"learning_rate": [1e-5, 2e-5], "batch_size": [8], "epochs": [1, 2]}
    stop = True
    with pytest.raises(KeyboardInterrupt):
        finetuning_run.grid_search(config, grid)
    stop, first = False, list(ran)
    summary = finetuning_run.grid_search(config, grid)
    assert ran[3:] == first[2:] + [config.grid_points(grid)[3].output_dir]  # the stopped one, then the last
    assert [run["run"] for run in summary["runs"]] == [1, 2, 4, 5] and summary["best"]["best"]["accuracy"] == 2e-5
    said = capsys.readouterr().out
    assert f"grid point 2 of 4: learning rate 1e-05, batch size 8, 2 epochs, seed {config.seed} ({first[1]}): " \
           "finished earlier, kept" in said and said.count("finished earlier, kept") == 2
    ran.clear()
    monkeypatch.setattr(finetuning_run, "damaged_file", lambda output_dir, result: f"{output_dir}/x does not read whole"
                        if output_dir.endswith("lr1e-05_bs8_ep1_seed12345") else None)
    finetuning_run.grid_search(config, grid)
    assert ran == [first[0]] and f"({first[0]}): finished earlier, but {first[0]}/x does not read whole: run again" in \
        capsys.readouterr().out
    monkeypatch.setattr(finetuning_run, "damaged_file", lambda output_dir, result: None)
    shutil.rmtree(tmp_path / "export")  # a finished grid whose export is gone: its points kept, the best one again
    ran.clear()
    finetuning_run.grid_search(config, grid)
    assert ran == [] and (tmp_path / "export" / "1").is_dir() and f"note: {tmp_path}/results.json names the grid's " \
        f"export {tmp_path}/export/1, which is missing: the finished points are kept, and the best one is exported " \
        "again" in capsys.readouterr().out
    other = dataclasses.replace(config, max_train_examples=60)  # another experiment: refused, before any work
    with pytest.raises(ValueError, match=r"--output_dir \S* holds 18 grid point\(s\) finished with other settings "
                                         r"\(max_train_examples None, now 60, in \S*grid/lr5e-05_bs16_ep2_seed\d+\), which "
                                         r"this grid would replace: pass --overwrite to run the grid anew"):
        for point in config.grid_points():  # the paper's grid, finished with max_train_examples None
            fake_finetune(point)
        finetuning_run.check_grid_settings(other)
    finetuning_run.check_grid_settings(config)  # its own settings: it goes on from them
    task.dev.append(Example("2", "I j.", "K l.", "entailment"))  # the data changed since: its points are no longer
    with pytest.raises(ValueError, match=r"holds 18 grid point\(s\) finished with other settings \(the task's "
                                         r"examples in glue/RTE, which changed since, in \S*\), which this grid would "
                                         r"replace: pass --overwrite"):
        finetuning_run.check_grid_settings(config)
    assert finetuning_run.finished_point(config.grid_points()[0], finetuning_run.data_key(task)) is None
    task.dev.pop()
    ran.clear()
    (tmp_path / artifacts.RESULTS).write_text("{}")  # a grid that finished, run anew: stopped, it is no finished grid
    stop = True
    with pytest.raises(KeyboardInterrupt):
        finetuning_run.grid_search(dataclasses.replace(config, overwrite=True), grid)
    assert not (tmp_path / artifacts.RESULTS).exists()
    stop = False
    ran.clear()
    finetuning_run.grid_search(dataclasses.replace(config, overwrite=True), grid)
    assert len(ran) == 4
    assert finetuning_run.finished_point(config.grid_points(grid)[0]) is not None
    from albert_act.io.source import kind_of

    with pytest.raises(ValueError, match=rf"{tmp_path} is a fine-tuning --grid dir: give its best point's export, "
                                         rf"{tmp_path / 'export' / '1'} \(there once the grid has finished\), or one "
                                         rf"point's dir under {tmp_path / 'grid'}/"):
        kind_of(str(tmp_path))  # export --checkpoint, finetune --init, analyze --init the grid's own dir
    assert finetuning_run.finished_point(dataclasses.replace(config.grid_points(grid)[0], ponder_cost_weight=0.5)) is None


def test_the_flags_are_the_config_fields_and_a_saved_config_repeats_the_run(tmp_path, capsys):
    from albert_act import finetune
    from albert_act.base import cli, settings

    with pytest.raises(SystemExit) as refused:
        finetune.main(["--epochs", "1"])
    assert refused.value.code == 2 and "the following arguments are required: --task, --data_dir, --init" in \
        capsys.readouterr().err
    with pytest.raises(SystemExit):
        finetune.main(["--help"])
    shown = capsys.readouterr().out
    for flag in ("--learning_rate LEARNING_RATE  peak AdamW", "(default: 3e-05)", "--halting_bias HALTING_BIAS",
                 "--tau TAU", "(default: 32); an integer in [1, 65536]", "--config CONFIG_JSON", "--set KEY=VALUE"):
        assert " ".join(flag.split()) in " ".join(shown.split()), flag
    saved = tmp_path / "finetune_config.json"
    config = FinetuneConfig(task="rte", data_dir="glue/RTE", init="runs/demo", output_dir=str(tmp_path), epochs=5)
    saved.write_text(json.dumps(dataclasses.asdict(config)))
    args = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(saved), "--seed", "3"])
    assert settings.config_from(FinetuneConfig, args) == dataclasses.replace(config, seed=3)
    # its relative data_dir is read from the current folder, as the run read it from its own: an error says so
    assert settings.explained(args)("glue/RTE/train.tsv: missing") == (
        f'glue/RTE/train.tsv: missing (data_dir comes from --config {saved}, where it is "glue/RTE", relative to the '
        f'current folder {os.getcwd()}: run the command from the folder the run started in, or give --data_dir)')
    # typed at the file's own value, it was typed: an error about it is not said to come from the file (K113)
    typed = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig,
                                 ["--config", str(saved), "--data_dir", "glue/RTE"])
    assert settings.explained(typed)("glue/RTE/train.tsv: missing") == "glue/RTE/train.tsv: missing"
    # a choice the file gave (not typed), named in an error, is said to come from the file (a TPU run's config)
    (tmp_path / "tpu.json").write_text(json.dumps({**dataclasses.asdict(config), "strategy": "tpu"}))
    args = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(tmp_path / "tpu.json")])
    assert settings.explained(args)("--strategy tpu: no TPU found") == (
        f"--strategy tpu: no TPU found (--strategy tpu comes from --config {tmp_path / 'tpu.json'}; give --strategy to "
        "change it)")
    # a file's value that a typed flag (or --set) replaces is not checked; the typed one is, and named as typed
    (tmp_path / "wild.json").write_text(json.dumps({**dataclasses.asdict(config), "learning_rate": 100}))
    for typed in (["--learning_rate", "2e-5"], ["--set", "learning_rate=2e-5"]):
        args = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(tmp_path / "wild.json"),
                                                                                 *typed])
        assert settings.config_from(FinetuneConfig, args).learning_rate == 2e-5
    with pytest.raises(SystemExit, match=r"^error: --learning_rate must be a learning rate in \[1e-08, 10\] .*got 100"):
        settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(tmp_path / "wild.json"),
                                                                          "--learning_rate", "100"])
    # --grid beside a grid setting typed at its default's value (--ep abbreviates --epochs): set aside, so refused
    with pytest.raises(SystemExit, match=r"^error: --grid runs every learning_rate x batch_size x epochs of the paper's "
                                         r"grid, so --batch_size 32, --epochs 3 would be set aside: drop them"):
        finetune.main(["--task", "rte", "--data_dir", "glue/RTE", "--init", "runs/demo", "--grid", "--batch_size", "32",
                       "--ep=3", "--output_dir", str(tmp_path / "grid")])
    with pytest.raises(SystemExit, match=r"^error: --grid runs every .* grid, so --epochs 3 would be set aside"):
        finetune.main(["--task", "rte", "--data_dir", "glue/RTE", "--init", "runs/demo", "--grid", "--set", "epochs=3",
                       "--output_dir", str(tmp_path / "grid")])  # --set names a setting as a flag does
    with pytest.raises(SystemExit, match=r"^error: --grid runs every .* of the paper's grid, so --config \S*"
                                         r"finetune_config.json's epochs 5 would be set aside: drop --grid for that "
                                         r"file's one run, or leave them out of the file"):
        finetune.main(["--config", str(saved), "--grid"])
    (tmp_path / "grid_config.json").write_text(json.dumps(dataclasses.asdict(dataclasses.replace(  # a grid run's
        config, epochs=FinetuneConfig.__dataclass_fields__["epochs"].default, grid=True))))
    with pytest.raises(SystemExit, match=r"^error: --config \S*grid_config.json sets grid: true, which runs every .* "
                                         r"grid, so --epochs 1 would be set aside: drop it, or add --set grid=false"):
        finetune.main(["--config", str(tmp_path / "grid_config.json"), "--epochs", "1"])
    args = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(tmp_path / "grid_config.json"),
                                                                              "--epochs", "1", "--set", "grid=false"])
    assert settings.config_from(FinetuneConfig, args).grid is False  # the way forward it gives
    args = settings.parse_flags(cli.parser("finetune", ""), FinetuneConfig, ["--config", str(saved), "--grid",
                                                                              "--halting_bias", "-1e-3"])
    assert args.typed == {"config", "grid", "halting_bias_initializer"}  # a --config file's settings are not typed


def test_the_results_table_gives_the_interval_and_the_majority_class():
    task = finetuning_data.TaskData("rte", ("entailment", "not_entailment"), [], [], "rte")
    assert finetuning_steps.majority(task, np.array([1, 1, 0, 1])) == {"label": "not_entailment", "accuracy": 0.75}
    row = {"accuracy": 0.8, "accuracy_interval": [0.7, 0.9], "iterations": {"all": 2.0, "[CLS]": 3.0}}
    table = finetuning_run.format_results({"best": {"epoch": 1, **row}, "initial": row, "history": [{"epoch": 1, **row}],
                                           "metric": "accuracy", "majority": {"label": "not_entailment", "accuracy": 0.75}})
    assert "| 1 | 0.8000 [0.700, 0.900] | 2.00 / 3.00 |" in table
    assert table.endswith("best: epoch 1, accuracy 0.8000 [0.700, 0.900]\nmajority class (always 'not_entailment'): "
                          "accuracy 0.7500")


def test_a_finished_fine_tuning_whose_export_is_gone_is_said_so(tmp_path, capsys, monkeypatch):
    """A finished fine-tuning (results.json) whose export was deleted was called "finished", and the one way offered,
    --overwrite, trains a whole grid again. A grid now goes on: its points are kept and the best one exported again,
    which a note says (`grid_repair`: also for a damaged export or results.json); a single fine-tuning is refused
    naming the missing export; a whole one, grid or not, as before."""
    import types

    from albert_act.io import exports

    grid = tmp_path / "grid_run"
    (grid / "grid").mkdir(parents=True)
    (grid / "finetune_config.json").write_text("{}")
    (grid / "results.json").write_text(json.dumps({"best": {"export": str(grid / "export" / "1")}, "runs": []}))
    artifacts.check_finetuning_target(str(grid), overwrite=False, grid=True)  # goes on (`grid_search` says why)
    with pytest.raises(ValueError, match=r"holds a finished fine-tuning \(results.json\) whose export .* missing; pass "
                                         r"--overwrite"):  # one fine-tuning onto it replaces it: only with --overwrite
        artifacts.check_finetuning_target(str(grid), overwrite=False)
    assert artifacts.missing_export(str(grid)) == f"{grid}/export/1" and capsys.readouterr().out == ""
    single = tmp_path / "single"
    (single / "export" / "1").mkdir(parents=True)
    (single / "finetune_config.json").write_text("{}")
    (single / "results.json").write_text(json.dumps({"export": str(single / "export" / "1"), "best": {"epoch": 2}}))
    with pytest.raises(ValueError, match=rf"^--output_dir {single} holds a finished fine-tuning \(results.json\) whose "
                                         rf"export {single}/export/1 is missing; pass --overwrite to replace it"):
        artifacts.check_finetuning_target(str(single), overwrite=False)
    (single / "export" / "1" / "saved_model.pb").write_bytes(b"")
    with pytest.raises(ValueError, match=r"holds a finished fine-tuning \(results.json\); pass --overwrite"):
        artifacts.check_finetuning_target(str(single), overwrite=False)
    assert finetuning_run.grid_repair(str(grid)) == (
        f"{grid}/results.json names the grid's export {grid}/export/1, which is missing")
    (grid / "export" / "1").mkdir(parents=True)
    (grid / "export" / "1" / "saved_model.pb").write_bytes(b"")  # no weights: damaged, exported again
    assert re.match(rf"^the grid's export {grid}/export/1: {grid}/export/1/\S+ .*missing", finetuning_run.grid_repair(
        str(grid))), finetuning_run.grid_repair(str(grid))
    monkeypatch.setattr(exports, "damaged_file", lambda path: None)  # a whole export: the grid is refused
    with pytest.raises(ValueError, match=r"holds a finished fine-tuning \(results.json\); pass --overwrite"):
        finetuning_run.check_grid_settings(types.SimpleNamespace(output_dir=str(grid)))
    (grid / "results.json").write_text('{"best": ')  # cut short: rebuilt from the points
    assert finetuning_run.grid_repair(str(grid)).startswith(f"{grid}/results.json does not read (")
    (grid / "results.json").unlink()
    (grid / "results.json").mkdir()
    with pytest.raises(ValueError, match=rf"^--output_dir {grid} holds a folder named results.json, where the "
                                         r"fine-tuning's results go: move it away"):
        artifacts.check_finetuning_target(str(grid), overwrite=False, grid=True)
    (grid / "results.json").rmdir()
    shutil.rmtree(grid / "export")
    (grid / "export").write_text("mine")  # a file where the export goes: refused, not removed
    with pytest.raises(ValueError, match=rf"^--output_dir {grid} holds a file named export, where the fine-tuning's "
                                         r"export goes: move it away"):
        artifacts.check_finetuning_target(str(grid), overwrite=False, grid=True)
    assert (grid / "export").read_text() == "mine"


def test_a_grid_point_moved_with_its_grid_is_the_same_point(tmp_path):
    """A grid folder moved (or renamed) with its points was 'finished with other settings (output_dir ...)', and the
    one way offered retrained all of them: a point read in its new place is the point, its export there."""
    import types

    old, new = tmp_path / "before" / "lr1_bs1", tmp_path / "after" / "lr1_bs1"
    new.mkdir(parents=True)
    (new / "finetune_config.json").write_text(json.dumps({"output_dir": str(old), "learning_rate": 1.0}))
    (new / "results.json").write_text(json.dumps({"export": str(old / "export" / "1"), "best": {"epoch": 1}}))
    saved, result = finetuning_run._finished(types.SimpleNamespace(output_dir=str(new)))
    assert saved == {"output_dir": str(new), "learning_rate": 1.0} and result["export"] == str(new / "export" / "1")
    other = tmp_path / "after" / "lr2_bs1"  # another point's name: not this one moved
    other.mkdir()
    for name in ("finetune_config.json", "results.json"):
        shutil.copy(new / name, other / name)
    assert finetuning_run._finished(types.SimpleNamespace(output_dir=str(other)))[0]["output_dir"] == str(old)


def test_a_part_that_will_not_move_aside_leaves_the_earlier_fine_tuning_whole(tmp_path, monkeypatch):
    """Setting a finished fine-tuning aside stops at a part that will not move (a read-only export/: its ".."
    would be rewritten): what moved goes back, and the error is raised; the folder is as it was."""
    from albert_act.base import artifacts, text_files
    from albert_act.train.earlier_run import EARLIER, EarlierRun

    for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.FINETUNE_CONFIG, artifacts.FINETUNED_INFO):
        (tmp_path / name).write_text(f"old {name}")
    (tmp_path / artifacts.EXPORT / "1").mkdir(parents=True)
    (tmp_path / artifacts.EXPORT / "1" / "saved_model.pb").write_text("old export")
    before = {str(p.relative_to(tmp_path)): p.read_text() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    rename = text_files.rename

    def refuse_export(source, target):
        if source.endswith(os.sep + artifacts.EXPORT) and EARLIER in target:
            raise PermissionError(13, "Permission denied", source)
        rename(source, target)

    monkeypatch.setattr(text_files, "rename", refuse_export)
    with pytest.raises(PermissionError):
        with EarlierRun(str(tmp_path)):
            raise AssertionError("the fine-tuning began")
    after = {str(p.relative_to(tmp_path)): p.read_text() for p in sorted(tmp_path.rglob("*")) if p.is_file()}
    assert after == before and not (tmp_path / EARLIER).exists()


def test_overwrite_sets_the_earlier_fine_tuning_aside_until_the_new_one_finishes(tmp_path):
    """--overwrite onto a finished fine-tuning: a stop (or failure) before the new one has finished puts the
    earlier one back, whole; a finished one drops it; one left aside by a killed process is put back first."""
    from albert_act.base import artifacts
    from albert_act.train.earlier_run import EARLIER, EarlierRun

    def finished(tag):
        for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.FINETUNE_CONFIG, artifacts.FINETUNED_INFO,
                     artifacts.VOCAB):
            (tmp_path / name).write_text(f"{tag} {name}")
        (tmp_path / artifacts.EXPORT / "1").mkdir(parents=True, exist_ok=True)
        (tmp_path / artifacts.EXPORT / "1" / "saved_model.pb").write_text(f"{tag} export")

    def contents():
        return {str(p.relative_to(tmp_path)): p.read_text() for p in sorted(tmp_path.rglob("*")) if p.is_file()}

    finished("old")
    before = contents()
    with pytest.raises(KeyboardInterrupt):
        with EarlierRun(str(tmp_path)) as earlier:
            assert not (tmp_path / artifacts.RESULTS).exists() and (tmp_path / EARLIER / artifacts.RESULTS).exists()
            (tmp_path / artifacts.FINETUNE_CONFIG).write_text("new config")  # this run's setup, then a weight
            (tmp_path / artifacts.WEIGHTS).write_text("new epoch 1")
            raise KeyboardInterrupt
    assert earlier.restored and contents() == before and not (tmp_path / EARLIER).exists()
    with EarlierRun(str(tmp_path)) as earlier:
        finished("new")
    assert not earlier.restored and contents()[artifacts.RESULTS] == f"new {artifacts.RESULTS}"
    assert not (tmp_path / EARLIER).exists()
    (tmp_path / EARLIER).mkdir()  # a process killed outright after setting "new" aside, before its results
    for name in (artifacts.RESULTS, artifacts.WEIGHTS):
        (tmp_path / name).rename(tmp_path / EARLIER / name)
    earlier = EarlierRun(str(tmp_path))
    earlier.recover()  # (finetune does this under its lock, then judges the dir: without --overwrite, refused)
    assert contents()[artifacts.WEIGHTS] == f"new {artifacts.WEIGHTS}" and not (tmp_path / EARLIER).exists()
    with EarlierRun(str(tmp_path)) as earlier:
        earlier.put_back()  # a stop inside a long native call: put back by the stop line, before the process ends
        assert earlier.restored and contents()[artifacts.RESULTS] == f"new {artifacts.RESULTS}"
    assert not (tmp_path / EARLIER).exists()


def test_overwrite_sets_an_earlier_grid_aside_and_a_new_grid_is_this_runs_part(tmp_path):
    """--overwrite --grid onto a finished one-run fine-tuning, stopped after a point: the new grid's points are this
    run's part, dropped, and the earlier run is back whole; an earlier grid's points go aside with its results."""
    from albert_act.base import artifacts
    from albert_act.train.earlier_run import EARLIER, EarlierRun

    for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.FINETUNE_CONFIG, artifacts.VOCAB):
        (tmp_path / name).write_text(f"one run's {name}")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(KeyboardInterrupt):
        with EarlierRun(str(tmp_path)):
            (tmp_path / artifacts.GRID / "point-1").mkdir(parents=True)
            (tmp_path / artifacts.GRID / "point-1" / artifacts.RESULTS).write_text("new point 1")
            raise KeyboardInterrupt
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / artifacts.RESULTS).read_text() == f"one run's {artifacts.RESULTS}"
    (tmp_path / artifacts.GRID / "point-1").mkdir(parents=True)  # now a finished grid, replaced by one run
    (tmp_path / artifacts.GRID / "point-1" / artifacts.RESULTS).write_text("earlier point 1")
    with EarlierRun(str(tmp_path)):
        assert not (tmp_path / artifacts.GRID).exists() and (tmp_path / EARLIER / artifacts.GRID / "point-1").is_dir()
        earlier = EarlierRun(str(tmp_path))
        earlier.put_back()
    assert (tmp_path / artifacts.GRID / "point-1" / artifacts.RESULTS).read_text() == "earlier point 1"
    assert earlier.restored and not (tmp_path / EARLIER).exists()


@pytest.mark.parametrize("cut_at", [1, 2, 3, 5])
def test_setting_aside_and_putting_back_may_be_cut_off_and_done_again(tmp_path, monkeypatch, cut_at):
    """A stop or kill in the middle of setting the earlier fine-tuning aside, or of putting it back (a second Ctrl-C,
    SIGTERM then SIGKILL), loses nothing: the next put-back (or start) leaves the earlier one whole."""
    from albert_act.base import artifacts, text_files
    from albert_act.train import earlier_run
    from albert_act.train.earlier_run import EARLIER, EarlierRun

    for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.FINETUNE_CONFIG, artifacts.FINETUNED_INFO,
                 artifacts.VOCAB):
        (tmp_path / name).write_text(f"old {name}")
    (tmp_path / artifacts.EXPORT / "1").mkdir(parents=True)
    (tmp_path / artifacts.EXPORT / "1" / "saved_model.pb").write_text("old export")

    def contents():
        return {str(p.relative_to(tmp_path)): p.read_text() for p in sorted(tmp_path.rglob("*")) if p.is_file()}

    before, rename, moves = contents(), text_files.rename, [0]

    def cut(source, destination):  # the stop lands before the `cut_at`-th move
        moves[0] += 1
        if moves[0] == cut_at:
            raise KeyboardInterrupt
        rename(source, destination)

    monkeypatch.setattr(text_files, "rename", cut)
    with pytest.raises(KeyboardInterrupt):  # setting aside, cut off: a kill there leaves it for the next start
        EarlierRun(str(tmp_path)).__enter__()
    monkeypatch.setattr(text_files, "rename", rename)
    EarlierRun(str(tmp_path)).recover()
    assert contents() == before and not (tmp_path / EARLIER).exists()
    earlier = EarlierRun(str(tmp_path)).__enter__()
    (tmp_path / artifacts.WEIGHTS).write_text("new epoch 1")  # the new run's part
    (tmp_path / artifacts.GRID / "point").mkdir(parents=True)
    moves[0] = 0
    monkeypatch.setattr(text_files, "rename", cut)
    with pytest.raises(KeyboardInterrupt):  # putting back, cut off: then done again (the stop line, the next start)
        earlier.put_back()
    monkeypatch.setattr(text_files, "rename", rename)
    earlier.put_back()
    assert contents() == before and not (tmp_path / EARLIER).exists() and earlier.restored
    assert earlier_run.MANIFEST not in contents()


def test_a_set_aside_whose_results_never_left_goes_back_and_readers_name_it(tmp_path):
    """Files set aside while the earlier results stayed on top (a kill before they moved): no run began, so they
    go back beside them, nothing removed; until then a reader of the dir says where they are and what to do."""
    from albert_act.base import artifacts
    from albert_act.io.source import kind_of
    from albert_act.train.earlier_run import EARLIER, EarlierRun

    for name in (artifacts.RESULTS, artifacts.WEIGHTS, artifacts.FINETUNED_INFO):
        (tmp_path / name).write_text(f"old {name}")
    (tmp_path / EARLIER).mkdir()
    (tmp_path / artifacts.WEIGHTS).rename(tmp_path / EARLIER / artifacts.WEIGHTS)
    with pytest.raises(ValueError, match=rf"^{tmp_path}: its finished fine-tuning is set aside in {tmp_path}/"
                                         r"\.earlier_run by a `finetune --overwrite` that is running or was killed"):
        kind_of(str(tmp_path))
    with pytest.raises(ValueError, match=rf"^{tmp_path}/export/1: not there now, as {tmp_path}'s finished fine-tuning "
                                         rf"is set aside in {tmp_path}/\.earlier_run"):  # (its export, given)
        kind_of(str(tmp_path / "export" / "1"))
    assert EarlierRun(str(tmp_path)).recover()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([artifacts.RESULTS, artifacts.WEIGHTS,
                                                                artifacts.FINETUNED_INFO])
    assert (tmp_path / artifacts.WEIGHTS).read_text() == f"old {artifacts.WEIGHTS}" and kind_of(str(tmp_path))
    (tmp_path / EARLIER).mkdir()  # an older version's put-back cut off: the weights back, the rest aside, no manifest
    for name in (artifacts.RESULTS, artifacts.FINETUNED_INFO):
        (tmp_path / name).rename(tmp_path / EARLIER / name)
    with pytest.raises(ValueError, match=rf"^{tmp_path}: its finished fine-tuning is set aside"):  # weights alone: a part
        kind_of(str(tmp_path))
    EarlierRun(str(tmp_path)).recover()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([artifacts.RESULTS, artifacts.WEIGHTS,
                                                                artifacts.FINETUNED_INFO])


def test_a_probing_files_repeated_va_lines_are_noted(tmp_path, capsys):
    """A SentEval file's va lines that repeat earlier ones count twice in its dev numbers: noted, as GLUE's are."""
    from albert_act.train.finetuning_data import load_task

    rows = [f"tr\t{('PAST', 'PRES')[i % 2]}\tTraining sentence number {i} ." for i in range(20)]
    rows += [f"va\t{('PAST', 'PRES')[i % 2]}\tHeld-out sentence number {i} ." for i in range(10)]
    (tmp_path / "past_present.txt").write_text("\n".join(rows + rows[-2:]) + "\n")
    task = load_task("tense", str(tmp_path))
    assert len(task.dev) == 12 and capsys.readouterr().out == (
        f"note: {tmp_path}/past_present.txt's va lines: 2 of its 12 rows repeat an earlier row (the first at va line "
        "11): each counts once more in the dev numbers\n")


def test_repeated_rows_and_dev_rows_in_train_are_told_as_the_model_reads_them(capsys):
    """Training rows that repeat earlier ones with other spacing are repeats; dev examples are training ones
    whatever their case, spacing or punctuation, and a pair given the other way round (MRPC's) too."""
    from albert_act.train.finetuning_data import _check_repeats
    from pipelines.glue import Example

    train = [Example(f"train-{i}", f"Sentence number {i} is here.", f"And its pair {i}.", "1") for i in range(40)]
    train += [Example(f"train-{40 + i}", f"Sentence  number {i} is here. ", f"And its pair {i}.", "1") for i in range(3)]
    dev = [Example(f"dev-{i}", f"AND ITS PAIR {i}", f"sentence number {i} is here", "0") for i in range(21)]
    dev += [Example(f"dev-{21 + i}", f"Another sentence {i}.", f"Its pair {i}.", "0") for i in range(19)]
    with pytest.raises(ValueError, match=r"^dev.tsv: 21 of its 40 examples are also in train.tsv \(the same sentences, "
                                         r"as the model reads them\)"):
        _check_repeats(train, dev, "train.tsv", "dev.tsv")
    assert capsys.readouterr().out == ("note: train.tsv: 3 of its 43 rows repeat an earlier row (the first at line 40): "
                                       "each counts once more in training\n")
    dev = dev[21:] + dev[21:24]  # dev rows repeated: each counts twice in its numbers
    _check_repeats(train[:40], dev, "train.tsv", "dev.tsv")
    assert capsys.readouterr().out == ("note: dev.tsv: 3 of its 22 rows repeat an earlier row (the first at line 21): "
                                       "each counts once more in the dev numbers\n")
    flipped = [Example(f"dev-{40 + i}", e.text_a, e.text_b, "1") for i, e in enumerate(dev[:3])]  # another label
    _check_repeats(train[:40], dev[:19] + flipped, "train.tsv", "dev.tsv")
    assert capsys.readouterr().out == ("note: dev.tsv: 3 of its 22 rows repeat an earlier row's sentences with another "
                                       "label (the first at line 40): the same text has two answers in the dev "
                                       "numbers\n")
