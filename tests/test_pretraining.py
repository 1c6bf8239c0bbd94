"""Pre-training: the loss, token types, accumulation, strategies, resume, TensorBoard, bad input."""

import dataclasses
import glob
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

from albert_act.analysis import token_types
from albert_act.train.pretrainer import Pretrainer
from albert_act.train.pretraining_run import PretrainConfig, run_pretraining
from albert_act.train.losses import loss_sums, pretraining_loss

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from conftest import STATIC, TINY_RUN  # noqa: E402


def _config(records, model_dir, **overrides):
    train, evaluation = records
    settings = dict(train_files=[train], eval_files=[evaluation], model_dir=str(model_dir),
                    backbone_overrides=dict(TINY_RUN), steps=4, warmup_steps=1, global_batch_size=8,
                    micro_batch_size=4, checkpoint_every=2, log_every=1, eval_batches=2, execution=STATIC,
                    jit_compile=False)  # XLA compiles for ~10 s; tests/test_xla.py covers it
    settings.update(overrides)
    return PretrainConfig(**settings)


def test_loss_matches_numpy():
    rng = np.random.default_rng(0)
    outputs = {"mlm_logits": rng.normal(size=(2, 3, 5)).astype("float32"),
               "sop_logits": rng.normal(size=(2, 2)).astype("float32"),
               "ponder_cost": np.array([10.5, 7.25], "float32")}
    labels = {"masked_lm_ids": np.array([[1, 4, 0], [2, 0, 0]]),
              "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]], "float32"),
              "sentence_order_label": np.array([0, 1])}
    log_softmax = lambda x: x - np.log(np.exp(x).sum(-1, keepdims=True))  # noqa: E731
    mlm = -np.take_along_axis(log_softmax(outputs["mlm_logits"]), labels["masked_lm_ids"][..., None], -1)[..., 0]
    sop = -np.take_along_axis(log_softmax(outputs["sop_logits"]), labels["sentence_order_label"][:, None], -1)[:, 0]
    expected_mlm = (mlm * labels["masked_lm_weights"]).sum() / 3
    sums = loss_sums(outputs, labels)
    losses = {k: float(v) for k, v in pretraining_loss(sums, sums["mlm_weight"], sums["examples"], 0.01).items()}
    np.testing.assert_allclose(losses["mlm_loss"], expected_mlm, rtol=1e-5)
    np.testing.assert_allclose(losses["sop_loss"], sop.mean(), rtol=1e-5)
    np.testing.assert_allclose(losses["ponder_cost"], 8.875)
    np.testing.assert_allclose(losses["ponder_loss"], 0.08875, rtol=1e-6)
    np.testing.assert_allclose(losses["loss"], expected_mlm + sop.mean() + 0.08875, rtol=1e-5)


def _fixed_batch(records, size=8):
    from pipelines.pretraining_dataset import make_pretraining_dataset

    return next(iter(make_pretraining_dataset(records[0], size, training=False)))


def _one_update(config, strategy, batch):
    config = dataclasses.replace(config, warmup_steps=0)  # with warmup, update 0 has learning rate 0
    trainer = Pretrainer(config.resolved(), strategy, "cpu")
    step = trainer.make_train_step()
    step(iter(tf.data.Dataset.from_tensors(batch).repeat()))
    return [v.numpy() for v in trainer.model.trainable_variables]


def test_accumulation_equals_one_big_batch(records, tmp_path):
    batch = _fixed_batch(records)
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    big = _one_update(_config(records, tmp_path, micro_batch_size=8), strategy, batch)
    accumulated = _one_update(_config(records, tmp_path, micro_batch_size=2), strategy, batch)  # 4 x 2
    initial = Pretrainer(_config(records, tmp_path).resolved(), strategy, "cpu").model.trainable_variables
    moved = max(np.abs(a - i.numpy()).max() for a, i in zip(big, initial))
    assert moved > 1e-4  # the update did something
    # Tolerance: float32 sums in another order; LAMB's per-variable update is ~lr, 1.76e-4 at step 1.
    assert max(np.abs(a - b).max() for a, b in zip(big, accumulated)) < 1e-6


@pytest.mark.slow  # ~45 s; test_accumulation_equals_one_big_batch covers accumulation in the default run
def test_accumulation_under_mirrored_strategy_on_two_cpus(records, tmp_path):
    script = textwrap.dedent(f"""
        import numpy as np, tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        import sys; sys.path.insert(0, {os.path.join(REPO, "tests")!r})
        from test_pretraining import _config, _fixed_batch, _one_update
        records = ({records[0]!r}, {records[1]!r})
        batch = _fixed_batch(records)
        mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        single = tf.distribute.OneDeviceStrategy("/cpu:0")
        a = _one_update(_config(records, {str(tmp_path)!r}, micro_batch_size=2), mirrored, batch)  # 2 x 2 x 2
        b = _one_update(_config(records, {str(tmp_path)!r}, micro_batch_size=8), single, batch)
        print("MAXDIFF", max(np.abs(x - y).max() for x, y in zip(a, b)))
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [line for line in result.stdout.splitlines() if line.startswith("MAXDIFF")]
    assert lines, result.stderr[-3000:]
    assert float(lines[0].split()[1]) < 1e-6


def test_tensorboard_tags_and_resolved_config(records, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = run_pretraining(_config(records, tmp_path), progress=False)
    assert result["step"] == 4 and np.isfinite(result["loss"])
    assert set(result["iterations"]) == set(token_types.TOKEN_TYPES)
    assert set(result["differences"]) == {"[CLS] - unmasked", "[MASK]->[MASK] - unmasked"}
    assert "| [MASK]->random |" in result["table"] and "ordering" in result["table"]
    train = EventAccumulator(str(tmp_path / "train")).Reload().Tags()["tensors"]
    expected = {"loss", "mlm_loss", "sop_loss", "ponder_loss", "ponder_cost", "mlm_accuracy", "sop_accuracy",
                "learning_rate", "gradient_norm", "examples_per_second", "iterations/all", "iterations/CLS",
                "iterations/SEP", "iterations/unmasked", "iterations/MASK_to_MASK", "expected_iterations/all",
                "expected_iterations/CLS", "ponder_cost_weight"}
    assert expected <= set(train), expected - set(train)
    # The demo's ponder warm-up, scaled to 4 updates: tau = 0 for updates 1-2, then "auto" calibrates it.
    tau = [float(tf.make_ndarray(e.tensor_proto))
           for e in EventAccumulator(str(tmp_path / "train")).Reload().Tensors("ponder_cost_weight")]
    assert tau[:2] == [0.0, 0.0] and tau[2] > 0 and tau[3] == pytest.approx(tau[2])
    evaluation = EventAccumulator(str(tmp_path / "eval")).Reload().Tags()["tensors"]
    assert {"loss", "mlm_accuracy", "iterations/histogram", "iterations/all", "iterations/token_types"} <= set(evaluation)
    saved = (tmp_path / "config.json").read_text()
    assert '"ponder_cost_weight": "auto"' in saved and '"max_iterations": 3' in saved


def test_target_iterations_steers_tau_by_the_depth_each_update_ran(records, tmp_path):
    # tau from 0.05 at update 2 (ponder cost on from update 2, no ramp); target 1: every update that
    # ran deeper raises log tau by TARGET_RATE x (mean N - 1), and the next update uses it.
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from albert_act.train import ponder as pretrainer

    result = run_pretraining(_config(records, tmp_path, steps=5, ponder_cost_weight=0.05, ponder_warmup_start=1,
                                     ponder_warmup_steps=0, target_iterations=1.0, log_every=1), progress=False)
    events = EventAccumulator(str(tmp_path / "train")).Reload()
    read = lambda tag: [float(tf.make_ndarray(e.tensor_proto)) for e in events.Tensors(tag)]  # noqa: E731
    tau, depth = read("ponder_cost_weight"), read("iterations/all")
    assert tau[0] == 0.0 and tau[1] == pytest.approx(0.05)
    for k in range(1, 4):  # updates 2..4 steer the tau of updates 3..5
        assert depth[k] > 1.0
        assert tau[k + 1] == pytest.approx(tau[k] * np.exp(pretrainer.TARGET_RATE * (depth[k] - 1.0)), rel=1e-5)
    assert json.loads((tmp_path / "config.json").read_text())["target_iterations"] == 1.0
    assert np.isfinite(result["loss"])


@pytest.mark.slow  # two runs (~60 s); the default run is over its 8 minutes on the slower 2-core CPU
def test_eval_every_writes_the_held_out_curve_as_the_run_goes(records, tmp_path):
    # Held out at updates 2 and 4 (the end); the same command again (a resumed run) rewrites its steps.
    first = run_pretraining(_config(records, tmp_path, eval_every=2), progress=False)
    lines = [json.loads(line) for line in (tmp_path / "held_out.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [2, 4]
    assert lines[-1]["mlm_accuracy"] == pytest.approx(first["mlm_accuracy"])
    assert lines[-1]["mlm_accuracy_interval"] == pytest.approx(first["mlm_accuracy_interval"])
    for line in lines:
        low, high = line["mlm_accuracy_interval"]
        assert low <= line["mlm_accuracy"] <= high and 0 < line["mlm_unigram_baseline"] < 1
        assert 1.0 <= line["mean_iterations"] <= 3.0 and line["expected_iterations"] <= line["mean_iterations"] + 1e-6
    run_pretraining(_config(records, tmp_path, eval_every=2), progress=False)
    assert [json.loads(line)["step"] for line in (tmp_path / "held_out.jsonl").read_text().splitlines()] == [2, 4]


@pytest.mark.parametrize("overrides, message", [
    (dict(target_iterations=0.5), r"target_iterations must be a number in \[1, max_iterations=3\], got 0.5"),
    (dict(target_iterations=4), r"target_iterations must be a number in \[1, max_iterations=3\], got 4"),
    (dict(target_iterations=2, halting="none"), r"target_iterations 2 steers the ponder cost of ACT halting"),
])
def test_target_iterations_out_of_range_is_refused(records, tmp_path, overrides, message):
    with pytest.raises(ValueError, match=message):
        run_pretraining(_config(records, tmp_path, **overrides), progress=False)
    assert not (tmp_path / "config.json").exists()


@pytest.mark.slow  # ~13 s: a whole run; fixed depth and unshared blocks are unit-tested in test_backbone
def test_halting_none_and_unshared_baselines_run(records, tmp_path):
    # A ponder cost asked for from the first update is not applied at fixed depth: it would be a constant.
    result = run_pretraining(_config(records, tmp_path / "bert", halting="none", share_weights=False, steps=2,
                                     warmup_steps=0, ponder_cost_weight=0.5, ponder_warmup_start=0,
                                     ponder_warmup_steps=0), progress=False)
    assert result["iterations"]["all"]["mean"] == 3.0 and result["iterations"]["all"]["std"] == 0.0
    assert result["loss"] == pytest.approx(result["mlm_loss"] + result["sop_loss"], rel=1e-6)
    assert result["ponder_cost"] > 0  # reported, not added
    assert json.loads((tmp_path / "bert" / "config.json").read_text())["backbone"]["share_weights"] is False


def test_non_finite_loss_stops_and_keeps_the_last_good_checkpoint(records, tmp_path, monkeypatch):
    from albert_act.base import checks

    monkeypatch.setattr(checks, "MOST_LEARNING_RATE", 1e38)  # (a rate above 10 is refused: lifted, to diverge at once)
    config = _config(records, tmp_path, learning_rate=1e30, steps=6, checkpoint_every=1)
    with pytest.raises(FloatingPointError, match=r"non-finite loss at step \d .*Last good checkpoint: .*ckpt-\d"):
        run_pretraining(config, progress=False)
    saved = sorted(p.name for p in (tmp_path / "checkpoints").glob("ckpt-*.index"))
    reader = tf.train.load_checkpoint(str(tmp_path / "checkpoints"))
    assert saved and all(np.isfinite(reader.get_tensor(n)).all() for n in reader.get_variable_to_shape_map()
                         if n.startswith("model/") and reader.get_variable_to_dtype_map()[n].is_floating)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(train_files=["/nowhere/*.tfrecord"]), r"no training file matches \['/nowhere/\*.tfrecord'\]"),
        (dict(train_files=[None, "/nowhere/*.tfrecord"]),  # None: the records' own shards (filled in below)
         r"no training file matches '/nowhere/\*.tfrecord', one of \[.*\]: fix it, or leave it out"),
        (dict(global_batch_size=10, micro_batch_size=4), r"global batch 10 is not divisible by micro-batch 4 x 1"),
        (dict(backbone_overrides={**TINY_RUN, "vocabulary_size": 50}),
         r"train-0000\d-of-00002.tfrecord: input_ids holds token id \d+, outside the model's vocabulary of 50"),
        (dict(warmup_steps=9), r"warmup_steps must be in \[0, steps=4\], got 9"),
    ],
)
def test_bad_input_fails_before_compute(records, tmp_path, overrides, message):
    if None in overrides.get("train_files", ()):  # one pattern of several matches nothing: not read without a word
        overrides = {"train_files": [records[0], *overrides["train_files"][1:]]}
    with pytest.raises(ValueError, match=message):
        run_pretraining(_config(records, tmp_path, **overrides), progress=False)
    assert not (tmp_path / "checkpoints").exists()


def test_model_dir_with_an_incompatible_run_is_refused(records, tmp_path, monkeypatch):
    import keras

    from albert_act.train.pretraining_config import config_record
    from albert_act.train.resumption import another_run

    # What a run leaves (its resolved config.json and a checkpoint), without training one.
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    (tmp_path / "config.json").write_text(json.dumps(config_record(_config(records, tmp_path, steps=2, warmup_steps=0)
                                                                   .resolved())))
    with pytest.raises(ValueError, match=r"holds a run with another config \(ponder_cost_weight: 'auto' there, 0.5 now\)"):
        run_pretraining(_config(records, tmp_path, steps=2, warmup_steps=0, ponder_cost_weight=0.5), progress=False)
    differing = [("backbone.hidden_dim", 128, 768), ("backbone.num_heads", 4, 12), ("preset", "demo", "small"),
                 ("steps", 1000, 112500), ("warmup_steps", 50, 3125)]  # another preset: said first, the rest cut
    assert str(another_run("r", differing)) == (
        "r holds a run with another config (preset: 'demo' there, 'small' now, backbone.hidden_dim: 128 there, 768 now, "
        "backbone.num_heads: 4 there, 12 now, steps: 1000 there, 112500 now, and 1 more settings); use a new "
        "--model_dir, or --preset demo (and the run's other settings) to resume")
    derived = [(f"backbone_overrides.{k}", None, 64) for k in ("a", "b", "c", "d", "e", "f")]  # (--init_from's sizes)
    assert str(another_run("r", derived + [("init_from", None, "other_run")])).startswith(
        "r holds a run with another config (init_from: unset (the default) there, 'other_run' now, "
        "backbone_overrides.a: unset (the default) there, 64 now, backbone_overrides.b: unset (the default) there, 64 "
        "now, backbone_overrides.c: unset (the default) there, 64 now, and 3 more settings)")
    assert str(another_run("r", [("backbone.halting_epsilon", None, 0.01), ("backbone_overrides.halting_epsilon", None,
                                                                          0.01)])).endswith(  # (round 46 B43)
        "; halting_epsilon=0.01, as given now, is the default the run was trained with: drop it (--override, --set) "
        "and it resumes")
    assert "as given now" not in str(another_run("r", [("backbone_overrides.halting_epsilon", None, 0.02)]))
    assert str(another_run("r", [("steps", 1000, 2000)])).endswith(
        "or the same settings to resume; to train it on for other --steps, start a new run from its weights: "
        "--init_from r --model_dir <a new dir> (the settings that follow --steps by default, its warm-ups and ponder "
        "ramp, change with it)")
    from benchmarks import warm_start  # its runs' refusal in its own flags (round 30 E228)

    monkeypatch.setattr(warm_start, "run_pretraining", lambda config, progress: (_ for _ in ()).throw(
        another_run(config.model_dir, [("steps", 5, 8)])))
    with pytest.raises(ValueError, match=r"^o/fixed holds a run of this benchmark made with other settings \(steps: 5 "
                                         r"there, 8 now\): give another --output_dir, or the --fixed_steps and --steps"):
        warm_start._pretrain(dataclasses.replace(_config(records, "o/fixed", steps=8)))
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")  # (where --init_from is not yet: said so)
    assert str(another_run("r", [("steps", 1000, 2000)])).endswith("change with it; on the TensorFlow backend: "
                                                                    "KERAS_BACKEND unset)")


def test_a_model_dir_keeps_its_config_only_while_it_holds_checkpoints(records, tmp_path, capsys):
    """A run that failed before its first checkpoint pins nothing: the corrected command starts afresh.
    Checkpoints without their config.json are refused, not restored into the default model."""
    from albert_act.train.pretraining_config import config_record
    from albert_act.train.pretraining_preflight import _check_model_dir

    config = _config(records, tmp_path).resolved()
    earlier = dataclasses.replace(config, learning_rate=5.0)
    (tmp_path / "config.json").write_text(json.dumps(config_record(earlier)))
    _check_model_dir(config)
    assert re.search(r"its earlier run saved no checkpoint; starting afresh with these settings \(learning_rate: "
                     r"5.0 there, [\d.e-]+ now\)", capsys.readouterr().err)
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    with pytest.raises(ValueError, match=r"holds a run with another config \(learning_rate: 5.0 there"):
        _check_model_dir(config)
    (tmp_path / "vocab.model").write_bytes(b"the run's own")  # resuming with another vocabulary of the same size
    (tmp_path / "other.model").write_bytes(b"another one")
    with pytest.raises(ValueError, match=r"--vocab .*other.model is not the vocabulary .* was trained with "
                                         r"\(.*vocab.model\); resume with that one"):
        _check_model_dir(dataclasses.replace(config, vocab=str(tmp_path / "other.model")))
    (tmp_path / "config.json").unlink()
    with pytest.raises(ValueError, match=r"holds checkpoints but no config.json, so the settings they were trained "
                                         r"with are unknown"):
        _check_model_dir(config)


def test_a_run_resumes_only_on_the_records_it_was_trained_on(records, tmp_path, capsys):
    """config.json records what the training and held-out shards hold: a moved copy resumes, other records
    are refused naming a shard (a finished run re-run on another corpus rewrote its evaluation and
    config.json without a word), a damaged record of them is named, and a dir whose run saved no
    checkpoint starts afresh saying so, without the earlier run's curves."""
    import shutil

    from albert_act.base import artifacts
    from albert_act.train.pretraining_config import config_record
    from albert_act.train.pretraining_preflight import _check_model_dir

    config = _config(records, tmp_path).resolved()
    train, held_out = glob.glob(records[0]), glob.glob(records[1])
    record = {**config_record(config), "train_shards": artifacts.shard_fingerprints(train),
              "eval_shards": artifacts.shard_fingerprints(held_out)}
    (tmp_path / "config.json").write_text(json.dumps(record))
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    (tmp_path / "moved").mkdir()
    moved = [shutil.copy(path, tmp_path / "moved") for path in train]
    _check_model_dir(dataclasses.replace(config, train_files=[str(tmp_path / "moved" / "*")]), moved, held_out)
    with pytest.raises(ValueError, match=rf"was trained on other records than --train_files \S*eval\S* \(\S*config.json "
                                         rf"records the content of {len(train)} shards; \S*eval\S* is not one of them\): "
                                         r"resume with the records it was trained on"):
        _check_model_dir(dataclasses.replace(config, train_files=[records[1]]), held_out, held_out)
    with pytest.raises(ValueError, match=r"was evaluated on other records than --eval_files .*its held-out curve would "
                                         r"mix two held-out sets"):
        _check_model_dir(dataclasses.replace(config, eval_files=[records[0]]), train, train)
    (tmp_path / "config.json").write_text(json.dumps(config_record(config)))  # saved before shards were recorded:
    with pytest.raises(ValueError, match=r"was evaluated on other records than --eval_files"):  # its files, still there
        _check_model_dir(dataclasses.replace(config, eval_files=[records[0]]), train, train)
    (tmp_path / "config.json").write_text(json.dumps({**record, "train_shards": "abc"}))
    with pytest.raises(ValueError, match=r"config.json: its train_shards is damaged \(not a list of \[length, SHA-256\]"):
        _check_model_dir(config, train, held_out)
    shutil.rmtree(tmp_path / "checkpoints")  # no checkpoint: afresh, said, the earlier curves gone
    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "events.out.tfevents.1.host").write_bytes(b"")
    (tmp_path / "held_out.jsonl").write_text("{}\n")
    _check_model_dir(config, train, held_out)
    assert "its earlier run saved no checkpoint; starting afresh; its 2 TensorBoard and held-out files removed" in \
        capsys.readouterr().err
    assert not (tmp_path / "held_out.jsonl").exists() and not list((tmp_path / "train").iterdir())


def test_a_run_saved_before_input_streams_resumes_as_one_stream(records, tmp_path):
    """config.json written before the setting existed means one stream; two streams do not resume as one."""
    from albert_act.train.pretraining_config import config_record
    from albert_act.train.pretraining_preflight import _check_model_dir

    config = _config(records, tmp_path).resolved()
    assert config.input_streams == 1
    old = config_record(config)
    del old["input_streams"]
    (tmp_path / "config.json").write_text(json.dumps(old))
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    _check_model_dir(config)  # resumes
    (tmp_path / "config.json").write_text(json.dumps(config_record(dataclasses.replace(config, input_streams=2))))
    with pytest.raises(ValueError, match=r"holds a run with another config \(input_streams: 2 there, 1 now\)"):
        _check_model_dir(config)


@pytest.mark.slow  # ~25 s end to end; bf16 steps are XLA-compiled in the default run (tests/test_xla.py)
def test_mixed_bfloat16_training_and_savedmodel_export(records, tmp_path):
    from albert_act.io.source import Source
    config = _config(records, tmp_path, precision="mixed_bfloat16", steps=2, warmup_steps=0,
                     vocab=str(Path(records[0]).parent.parent / "vocab.model"), export_dir=str(tmp_path / "export" / "1"))
    trainer = Pretrainer(config.resolved(), tf.distribute.OneDeviceStrategy("/cpu:0"), "cpu")
    assert trainer.backbone.encoder.blocks[0].compute_dtype == "bfloat16"
    result = run_pretraining(config, progress=False)
    assert np.isfinite(result["loss"]) and json.loads((tmp_path / "evaluation.json").read_text())["step"] == 2
    export = result["export"]["dir"]
    assert result["export"]["fill_mask"]["top_k_tokens"]  # loaded back and asked
    outputs = tf.saved_model.load(export).signatures["encoder"](text=tf.constant(["a b c", ""]))
    assert outputs["sequence_output"].dtype == tf.float32  # the export computes in float32
    np.testing.assert_array_equal(outputs["iterations"].numpy()[1, 2:], 0)  # padding
    assert (outputs["iterations"].numpy()[0] >= 1).all() and (outputs["iterations"].numpy()[1, :2] >= 1).all()
    assert Source.open(export).info["backbone"]["max_iterations"] == 3


@pytest.mark.slow  # ~12 s; kept out of the default run's 8 minutes (the SIGKILL resume test stays in it)
def test_a_truncated_checkpoint_is_named_and_the_one_before_resumes(records, tmp_path, capsys):
    run_pretraining(_config(records, tmp_path), progress=False)  # ckpt-2 and ckpt-4
    data = tmp_path / "checkpoints" / "ckpt-4.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])  # as a crash mid-write leaves it
    capsys.readouterr()
    result = run_pretraining(_config(records, tmp_path), progress=True)
    out = capsys.readouterr().out
    assert "ckpt-4: unreadable" in out and "resumed from" in out and out.index("ckpt-4: unreadable") < out.index("ckpt-2")
    assert result["step"] == 4 and np.isfinite(result["loss"])  # the two lost updates were trained again


def test_a_failed_checkpoint_write_is_named_and_cleaned_up(records, tmp_path, monkeypatch):
    save = tf.train.CheckpointManager.save

    def disk_full_at_4(manager, checkpoint_number=None, **kwargs):
        if checkpoint_number == 4:
            os.makedirs(os.path.join(manager.directory, "ckpt-4_temp"))  # what a write cut short leaves
            raise tf.errors.ResourceExhaustedError(None, None, "No space left on device")
        return save(manager, checkpoint_number=checkpoint_number, **kwargs)

    monkeypatch.setattr(tf.train.CheckpointManager, "save", disk_full_at_4)
    with pytest.raises(ValueError, match=r"could not write ckpt-4 \(No space left on device\).*newest checkpoint is .*ckpt-2"):
        run_pretraining(_config(records, tmp_path), progress=False)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir() if "ckpt-4" in p.name) == []


def test_a_checkpoint_write_refused_for_its_folders_permissions_says_to_make_it_writable(tmp_path):
    """A read-only checkpoints/ folder (its run copied from a read-only place): the advice is to make it writable,
    not to free space."""
    from albert_act.io.run_checkpoints import save_checkpoint

    class Refused:
        directory, latest_checkpoint = str(tmp_path), str(tmp_path / "ckpt-5")

        def save(self, checkpoint_number):
            raise PermissionError(13, "Permission denied", str(tmp_path / f"ckpt-{checkpoint_number}_temp"))

    with pytest.raises(ValueError, match=r"could not write ckpt-10 \(Permission denied .*\); the newest checkpoint is "
                                         r".*ckpt-5: make the folder writable and re-run the same command"):
        save_checkpoint(Refused(), 10)


def test_the_export_records_the_tau_used_and_no_directory_of_the_machine(tiny_run):
    from albert_act.base import artifacts
    from albert_act.io.source import Source
    from albert_act.train.pretraining_preflight import check_export_dir

    run, export = tiny_run
    record = json.loads((Path(export) / "assets" / "albert_act_export.json").read_text())["pretraining"]
    paths = [p for key in artifacts.RUN_PATHS for p in np.atleast_1d(record.get(key) or []).tolist()]
    assert len(paths) >= 4 and not any(os.path.isabs(p) for p in paths), paths
    assert record["model_dir"] == os.path.relpath(run, export)
    # The demo preset's "auto", calibrated at update 2 of 3: the number the model was trained with.
    assert record["ponder_cost_weight_given"] == "auto" and record["ponder_cost_weight"] > 0
    assert record["ponder_cost_weight_update"] == record["steps"] == 3  # as `export --checkpoint <run>` records it
    assert artifacts.same_path(Source.open(export).info["pretraining"]["model_dir"], run)  # read back resolved
    config = PretrainConfig(**{k: v for k, v in json.loads((Path(run) / "config.json").read_text()).items()
                               if k in {f.name for f in dataclasses.fields(PretrainConfig)}})
    check_export_dir(dataclasses.replace(config, export_dir=export))  # still this run's own export: re-run re-exports


@pytest.mark.slow  # ~40 s: two runs; `pytest -m slow`
def test_a_run_started_with_relative_paths_resumes_from_another_folder(records, tmp_path, monkeypatch, capsys):
    """The saved input position names the record files; given relative, they are kept absolute, so
    the run resumes wherever the command is run from (it was refused as 'no intact checkpoint')."""
    started, elsewhere = tmp_path / "started", tmp_path / "elsewhere"
    for folder in (started, elsewhere):
        folder.mkdir()
    (started / "data").symlink_to(Path(records[0]).parent)
    relative = os.path.join("data", Path(records[0]).name), os.path.join("data", Path(records[1]).name)
    monkeypatch.chdir(started)
    run_pretraining(_config(relative, tmp_path / "run", steps=2), progress=False)
    monkeypatch.chdir(elsewhere)
    capsys.readouterr()
    result = run_pretraining(_config(records, tmp_path / "run", steps=2), progress=True)  # restores, trains no more
    out = capsys.readouterr().out
    assert "resumed from" in out and "ckpt-2" in out and "unreadable" not in out, out[-2000:]
    assert result["step"] == 2
    assert "is the run's last update (2): nothing is left to train, so the updates' settings (--eval_every, " in out


def test_a_curve_line_its_re_evaluation_contradicts_is_noted_as_replaced(tiny_run, capsys):
    """A finished run run again replaced its curve's edited line of the last update without a word (round 44 B115);
    the same numbers again say nothing."""
    from albert_act.train.pretraining_summaries import held_out_curve

    evaluation = json.loads(open(f"{tiny_run[0]}/evaluation.json").read())
    text, line = held_out_curve("run/held_out.jsonl", b"", 3, evaluation, 0.1)
    assert held_out_curve("run/held_out.jsonl", text, 3, evaluation, 0.1)[0] == text
    assert capsys.readouterr().out == ""
    edited = json.dumps({**json.loads(text), "mlm_accuracy": 0.5}) + "\n"
    assert held_out_curve("run/held_out.jsonl", edited, 3, evaluation, 0.1)[0] == text
    assert capsys.readouterr().out == (
        f"note: run/held_out.jsonl line 1, of update 3, said MLM 0.500, SOP {line['sop_accuracy']:.3f}, where this "
        f"evaluation of the run's weights of that update gives MLM {line['mlm_accuracy']:.3f}, SOP "
        f"{line['sop_accuracy']:.3f} (the line edited, another run's copied in, or other held-out batches): replaced\n")


def test_a_warm_start_from_a_model_that_halted_otherwise_is_noted():
    """--init_from a run trained with --override halting_epsilon=0.5 ran at the preset's 0.01 without a word (round 45
    B66); the same settings say nothing."""
    from types import SimpleNamespace

    from albert_act.train.pretraining_run import halting_changes

    encoder = SimpleNamespace(halting_epsilon=0.01, max_iterations=6)
    assert halting_changes("run", {"halting_epsilon": 0.5, "max_iterations": 6}, encoder) == (
        "note: run was trained with other halting settings (halting_epsilon 0.5 there, 0.01 here): this run halts by "
        "its own (--override KEY=VALUE keeps the other's)")
    assert halting_changes("run", {"halting_epsilon": None, "max_iterations": 6}, encoder) is None


def test_a_damaged_held_out_curve_line_is_named_and_overrides_of_flags_refused():
    from albert_act.train.pretraining_config import PretrainConfig
    from albert_act.train.pretraining_summaries import held_out_curve

    with pytest.raises(ValueError, match=r"run/held_out.jsonl line 2: not a held-out evaluation's JSON line \(cut short"):
        held_out_curve("run/held_out.jsonl", '{"step": 2}\n{"step": 4, "ml', 6, {}, 0.1)
    with pytest.raises(ValueError, match=r"run/held_out.jsonl: not a held-out curve \(not UTF-8 text at byte 0\)"):
        held_out_curve("run/held_out.jsonl", b"\xff\xfe\x00binary", 6, {}, 0.1)
    for key, value, flag in (("halting", "none", "--halting act or --halting none"),
                             ("share_weights", True, "--unshared for distinct layers, nothing for shared ones"),
                             ("execution", "static", "--execution NAME")):
        with pytest.raises(ValueError, match=rf"--override {key}={value}: {key} is set by its own flag, not by "
                                             rf"--override: drop the override and use {flag}"):
            PretrainConfig(train_files=["t"], eval_files=["e"], model_dir="m", backbone_overrides={key: value})
