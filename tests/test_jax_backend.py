"""The model on Keras 3's JAX backend, in a process where TensorFlow cannot be imported
(tests/jax_side.py): the same weights give the TensorFlow backend's outputs, iterations, loss and
gradients, and LAMB's updates lower the loss there."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_act import AlbertActBackbone, AlbertActPretrainingModel
from albert_act.train.losses import Objective, geometric_prior
from conftest import TINY, random_inputs, spread_halting

pytest.importorskip("jax", reason="jax is in requirements.txt; this venv lacks it")

JAX_SIDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_side.py")


def _case(tmp_path, objective, execution="static", jax_executions=("static",)):
    """Writes the weights and inputs for the JAX side; returns (spec, arrays, the TF side's results)."""
    keras.utils.set_random_seed(0)
    backbone = AlbertActBackbone(**TINY, execution=execution, return_details=objective.iteration_outputs)
    spread_halting(backbone)
    model = AlbertActPretrainingModel(backbone, iteration_outputs=objective.iteration_outputs)
    inputs = random_inputs([12, 7, 12], padded_length=12, seed=3)
    inputs["masked_positions"] = np.array([[1, 4, 8], [2, 5, 6], [3, 7, 10]], "int32")
    rng = np.random.default_rng(1)
    labels = {"masked_lm_ids": rng.integers(5, 60, (3, 3)).astype("int32"),
              "masked_lm_weights": np.array([[1, 1, 1], [1, 1, 0], [1, 1, 1]], "float32"),
              "sentence_order_label": np.array([0, 1, 1], "int32")}
    weights = str(tmp_path / "model.weights.h5")
    model.save_weights(weights)
    tau = 0.01

    @tf.function
    def run():
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            sums = objective.sums(outputs, labels)
            loss = objective.losses(sums, sums["mlm_weight"], sums["examples"], tau)["loss"]
        return loss, outputs, tape.gradient(loss, model.trainable_variables)

    loss, outputs, gradients = run()
    tf_side = {"loss": float(loss), "outputs": {k: v.numpy() for k, v in outputs.items()},
               "gradients": {v.path: tf.convert_to_tensor(g).numpy() for v, g in zip(model.trainable_variables, gradients)}}
    spec = {"backbone": {**TINY, "execution": execution}, "weights": weights, "tau": tau, "learning_rate": 0.01,
            "updates": 5, "mlm_objective": objective.mlm_objective, "kl_weight": objective.kl_weight,
            "prior": list(objective.prior) if objective.prior else None, "jax_executions": list(jax_executions)}
    source = tmp_path / "in.npz"
    np.savez(source, spec=json.dumps(spec), **inputs, **labels)
    return source, tf_side


def _jax(tmp_path, source):
    destination = tmp_path / "out.npz"
    run = subprocess.run([sys.executable, JAX_SIDE, str(source), str(destination)], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "KERAS_BACKEND": "jax"})
    assert run.returncode == 0, run.stderr[-3000:]
    return dict(np.load(destination))


def _relative(a, b, floor=1e-6):
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), floor))


@pytest.mark.parametrize("objective", [
    Objective(),
    pytest.param(Objective("per_iteration", 0.3, tuple(geometric_prior(2.5, TINY["max_iterations"]))),
                 marks=pytest.mark.slow),
], ids=["act", "per-iteration + KL"])
def test_the_same_weights_give_the_same_numbers_on_jax_without_tensorflow(tmp_path, objective):
    # TensorFlow's static loop against JAX's static loop and JAX's bucket (switched_halting: the running
    # tokens only, at static widths under keras.ops.switch), in one process where TensorFlow is blocked.
    executions = ("static", "bucket")
    source, expected = _case(tmp_path, objective, jax_executions=executions)
    result = _jax(tmp_path, source)
    assert str(result["backend"]) == "jax" and not bool(result["tensorflow_loaded"])
    real = np.load(source)["padding_mask"] == 1
    iterations = expected["outputs"]["iterations"]
    assert len(np.unique(iterations[real])) >= 3  # depths vary: the halting arithmetic is exercised
    largest = max(float(np.abs(g).max()) for g in expected["gradients"].values())
    for execution in executions:
        actual = {k.split("/", 1)[1]: v for k, v in result.items() if k.startswith(f"{execution}/")}
        np.testing.assert_array_equal(actual["output/iterations"], iterations)
        for key, value in expected["outputs"].items():
            assert _relative(actual[f"output/{key}"], value) <= 1e-5, (execution, key)
        assert abs(float(actual["loss"]) - expected["loss"]) <= 1e-5 * abs(expected["loss"]), execution
        assert set(expected["gradients"]) == {k.removeprefix("gradient/") for k in actual if k.startswith("gradient/")}
        for path, gradient in expected["gradients"].items():
            # relative to the gradient's own size, or to 1e-3 of the largest for one that is ~0 (float noise)
            assert _relative(actual[f"gradient/{path}"], gradient, 1e-3 * largest) <= 1e-4, (execution, path)
        # LAMB's updates on JAX lower the loss of the batch they fit.
        losses = actual["losses"]
        assert losses[-1] < losses[0] - 0.05, (execution, losses)


# --- pre-training on JAX (albert_act/train/jax_pretraining.py), TensorFlow blocked -----------------------

JAX_RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_run.py")


def _jax_config(records, model_dir, **overrides):
    from conftest import TINY_RUN

    return {"train_files": [records[0]], "eval_files": [records[1]], "model_dir": str(model_dir),
            "backbone_overrides": dict(TINY_RUN), "steps": 4, "warmup_steps": 1, "global_batch_size": 8,
            "micro_batch_size": 4, "checkpoint_every": 2, "log_every": 1, "eval_batches": 2, "execution": "static",
            "jit_compile": False, "ponder_cost_weight": 0.01, "ponder_warmup_start": 0, "ponder_warmup_steps": 0,
            **overrides}


def _jax_run(tmp_path, config, *args, env=None):
    path = tmp_path / f"config-{len(list(tmp_path.glob('config-*')))}.json"
    path.write_text(json.dumps(config))
    run = subprocess.run([sys.executable, JAX_RUN, str(path), *args], capture_output=True, text=True, timeout=900,
                         env={**os.environ, "KERAS_BACKEND": "jax", **(env or {})})
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1]) if not args else dict(np.load(args[0]))


@pytest.mark.slow  # (two JAX runs: ~45 s; the JAX step's numbers are tested by default against TensorFlow's)
def test_pretraining_on_jax_resumes_exactly_and_its_weights_export(records, tmp_path):
    # Four updates straight; then the same command again on a copy stopped after its checkpoint 2 (the
    # later one removed): it resumes there and ends with the same weights, bit for bit.
    import shutil

    straight = _jax_run(tmp_path, _jax_config(records, tmp_path / "straight"))
    shutil.copytree(tmp_path / "straight", tmp_path / "resumed")
    (tmp_path / "resumed" / "checkpoints" / "jax-4.npz").unlink()
    (tmp_path / "resumed" / "evaluation.json").unlink()
    # ... with newer checkpoints beside it that are passed over for jax-2: one of another model (a kernel of
    # another shape), one whose update is not its name's, one with non-finite weights
    with np.load(tmp_path / "resumed" / "checkpoints" / "jax-2.npz") as kept:
        good = {name: kept[name] for name in kept.files}
    kernel = next(name for name in good if name.startswith("trainable/") and good[name].ndim == 2)
    for update, change in ((5, {kernel: good[kernel][:-1]}), (4, {"update": np.int64(99)}),
                           (3, {kernel: np.full_like(good[kernel], np.nan)})):
        np.savez(tmp_path / "resumed" / "checkpoints" / f"jax-{update}.npz",
                 **{**good, "update": np.int64(update), **change})
    resumed = _jax_run(tmp_path, _jax_config(records, tmp_path / "resumed"))
    assert straight["step"] == resumed["step"] == 4 and np.isfinite(straight["loss"])
    a, b = (np.load(tmp_path / name / "checkpoints" / "jax-4.npz") for name in ("straight", "resumed"))
    assert sorted(a.files) == sorted(b.files)
    for name in a.files:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    assert straight["mlm_accuracy"] == resumed["mlm_accuracy"]
    from albert_act.train import jax_pretraining  # (the run's first checks, in this process: no model built)
    from albert_act.train.pretraining_config import PretrainConfig

    with pytest.raises(ValueError, match="holds a run with another config .steps: 4 there, 6 now"):
        jax_pretraining._check_resumable(PretrainConfig(**_jax_config(records, tmp_path / "resumed", steps=6)).resolved())
    with pytest.raises(ValueError, match=r"resumed was evaluated on 2 held-out batches, and this command asks 3 "
                                         r"held-out batches: .* would mix two held-out sets and its evaluation.json "
                                         r"be replaced; give --eval_batches 2"):  # (evaluation.json kept)
        jax_pretraining._check_resumable(PretrainConfig(**_jax_config(records, tmp_path / "resumed",
                                                                      eval_batches=3)).resolved())
    # The same run on other documents is refused: test_a_jax_run_resumed_on_another_corpus_is_refused (-m slow).
    lines = [json.loads(line) for line in (tmp_path / "straight" / "held_out.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [4] and "depth_spread" in lines[0]
    # The run's weights, read by the TensorFlow side (Source, as export and analyze read a run).
    from albert_act.io.source import Source

    source = Source.open(str(tmp_path / "straight"))
    assert source.kind == "pretraining-run" and source.run_checkpoint[0] == 4
    model, _ = source.pretraining_model()
    kernel = next(v for v in model.variables if v.path.endswith("halting_unit/dense/kernel"))
    np.testing.assert_array_equal(kernel.numpy(), a["trainable/encoder/halting_unit/dense/kernel"])
    assert source.trained_tau() == (pytest.approx(0.01), 4)
    # The TensorFlow backend does not train over a JAX run (it would find no checkpoint of its own).
    from albert_act.train.pretraining_preflight import preflight

    config = PretrainConfig(**_jax_config(records, tmp_path / "straight")).resolved()
    with pytest.raises(ValueError, match=r"straight holds a JAX run's checkpoints; resume it with KERAS_BACKEND=jax"):
        preflight(config, replicas=1)
    # Nor does either train toward a checkpoints folder that is a file: refused before any work.
    (tmp_path / "filed").mkdir()
    (tmp_path / "filed" / "checkpoints").write_text("not a folder")
    config = PretrainConfig(**_jax_config(records, tmp_path / "filed")).resolved()
    with pytest.raises(ValueError, match=r"filed/checkpoints is a file, where the run keeps its checkpoints folder"):
        preflight(config, replicas=1)


@pytest.mark.slow  # (two JAX processes: ~25 s)
def test_a_jax_run_resumed_on_another_corpus_is_refused(records, tmp_path):
    """The same run on other documents is refused (its files may move: a copy of its corpus is the same one)."""
    _jax_run(tmp_path, _jax_config(records, tmp_path / "resumed"))
    (tmp_path / "resumed" / "checkpoints" / "jax-4.npz").unlink()  # (stopped after its checkpoint 2)
    (tmp_path / "resumed" / "evaluation.json").unlink()
    with np.load(Path(records[0]).parent / "tokens-train.npz") as data:
        fields = dict(data)
    last = int(fields["document_ends"][-2])  # all but the last document
    np.savez(tmp_path / "tokens-train.npz", **{**fields, "ids": fields["ids"][:int(fields["sentence_ends"][last - 1])],
                                               "sentence_ends": fields["sentence_ends"][:last],
                                               "document_ends": fields["document_ends"][:-1],
                                               "documents": fields["documents"][:-1]})
    with pytest.raises(AssertionError, match=r"resumed was trained on another corpus than .*tokens-train.npz \(its "
                                             r"checkpoint's [0-9a-f]{16}, this one's [0-9a-f]{16}\)"):
        _jax_run(tmp_path, _jax_config(records, tmp_path / "resumed", train_files=[str(tmp_path / "tokens-train.npz")]))


@pytest.mark.slow  # three JAX processes (~1 minute)
def test_accumulation_and_devices_give_the_large_batch_update_on_jax(records, tmp_path):
    # One update of 8 sequences: as 1 micro-batch of 8, as 2 of 4, and as 2 of 4 split over two host
    # devices: global denominators, so the same sums and the same weights after it.
    whole = _jax_run(tmp_path, _jax_config(records, tmp_path / "a", micro_batch_size=8), str(tmp_path / "a.npz"))
    split = _jax_run(tmp_path, _jax_config(records, tmp_path / "b", micro_batch_size=4), str(tmp_path / "b.npz"))
    devices = _jax_run(tmp_path, _jax_config(records, tmp_path / "c", micro_batch_size=2), str(tmp_path / "c.npz"),
                       env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2"})
    assert int(devices["devices"]) == 2 and int(whole["devices"]) == 1
    for other in (split, devices):
        for key in ("sum/mlm_loss_sum", "sum/mlm_weight", "sum/sop_loss_sum", "sum/ponder_cost_sum", "sum/examples"):
            assert _relative(other[key], whole[key]) <= 1e-5, key
        for key in (k for k in whole if k.startswith("weight/")):
            assert _relative(other[key], whole[key], 1e-6) <= 1e-4, key
    assert float(whole["sum/examples"]) == 8.0


@pytest.mark.slow  # ~2 minutes: the whole accelerator script, tiny, on this CPU
def test_the_accelerator_script_runs_its_four_parts_on_jax_cpu(records, tmp_path):
    import shutil

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prepared = tmp_path / "prepared"
    subprocess.run([sys.executable, "-m", "benchmarks.backend_parity", "--write", str(prepared / "parity")],
                   cwd=repo, check=True, capture_output=True, timeout=600)
    folder = os.path.dirname(records[0])
    for part, name in (("train", "tokens-train.npz"), ("valid", "tokens-eval.npz")):
        (prepared / "english" / part).mkdir(parents=True)
        shutil.copy(os.path.join(folder, name), prepared / "english" / part / "tokens-train.npz")
    shutil.copy(os.path.join(os.path.dirname(folder), "vocab.model"), prepared / "english" / "vocab.model")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "PREPARED": str(prepared), "OUT": str(out), "WIDTHS": "32",
           "PRECISIONS": "float32", "THROUGHPUT_BATCH": "8", "LEG_WIDTH": "32", "LEG_STEPS": "4",
           "LEG_FLAGS": "--global_batch_size 8 --micro_batch_size 8 --eval_batches 2 --override vocabulary_size=400 "
                        "--override max_sequence_length=64"}
    run = subprocess.run(["bash", os.path.join(repo, "benchmarks", "accelerator_run.sh")], env=env, cwd=repo,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    parity = json.loads((out / "parity.json").read_text())
    assert parity["iterations_identical"] and parity["outputs"] <= 1e-5 and parity["gradients"] <= 1e-4
    table = (out / "throughput.md").read_text()
    assert "| 32 | float32 | fixed 6 | 6.00 |" in table and "| 32 | float32 | ACT, bucket | 3.00 |" in table
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert files == ["log.txt", "parity.json", "run/checkpoints/jax-4.npz", "run/config.json", "run/evaluation.json",
                     "run/held_out.jsonl", "run/vocab.model", "throughput.md"]
    with np.load(out / "run" / "checkpoints" / "jax-4.npz") as kept:
        assert not any(name.startswith("optimizer/") for name in kept.files) and int(kept["update"]) == 4


def test_the_jax_run_checks_its_corpora_and_model_dir_before_training(records, tmp_path):
    """What the TensorFlow preflight refuses of its records, the JAX run refuses of its token corpora
    (checked in this process: pure functions of the files, no model built)."""
    from albert_act.train import jax_pretraining
    from albert_act.train.pretraining_config import PretrainConfig
    from pipelines import token_corpus

    def refused(match, **overrides):
        config = PretrainConfig(**_jax_config(records, tmp_path / "run", **overrides)).resolved()
        with pytest.raises(ValueError, match=match):
            jax_pretraining._check_corpora(config, token_corpus.token_files(config.train_files),
                                           token_corpus.token_files(config.eval_files))
            jax_pretraining._check_resumable(config)

    folder = Path(records[0]).parent
    refused(r"tokens-train.npz holds the documents of the training corpus \S+tokens-train.npz: held-out numbers need "
            r"documents the model is not trained on", eval_files=[records[0]])
    copy = tmp_path / "copy" / "tokens-eval.npz"  # a copy of the training corpus under the held-out one's name
    copy.parent.mkdir()
    shutil.copy(folder / "tokens-train.npz", copy)
    refused(r"copy/tokens-eval.npz was written with the shards train-\S+, train-\S+, not eval-\* ones: the other "
            r"token corpus under this one's name", eval_files=[str(copy)])
    refused(r"tokens-train.npz: made with a 400-piece vocabulary, but the model's vocabulary_size is 500",
            backbone_overrides={**_jax_config(records, tmp_path)["backbone_overrides"], "vocabulary_size": 500})
    refused(r"vocab.model has 400 pieces but the model's vocabulary_size is 500; make the data with a 500-piece",
            vocab=str(folder.parent / "vocab.model"),
            backbone_overrides={**_jax_config(records, tmp_path)["backbone_overrides"], "vocabulary_size": 500})
    refused(r"tokens-train.npz: makes sequences of 64 pieces, longer than the model's max_sequence_length 32",
            backbone_overrides={**_jax_config(records, tmp_path)["backbone_overrides"], "max_sequence_length": 32})
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "saved_model.pb").write_bytes(b"an export")
    refused(r"--model_dir .*run holds other files \(saved_model.pb\) and no run", vocab=str(folder.parent / "vocab.model"))
    (tmp_path / "run" / "saved_model.pb").unlink()  # a Hugging Face model's config.json: no run's, not replaced
    (tmp_path / "run" / "config.json").write_text('{"model_type": "albert", "hidden_size": 768}')
    refused(r"--model_dir .*run holds other files \(config.json\) and no run \(a run's config.json\)",
            vocab=str(folder.parent / "vocab.model"))
    # the token corpus holds every shard: patterns must cover them all (two that do give one corpus)
    with pytest.raises(ValueError, match=r"matches 1 of the 2 shards in .*, but the JAX backend reads their token "
                                         r"corpus .*tokens-train.npz, which holds all of them"):
        token_corpus.token_files([str(folder / "train-00000-of-00002.tfrecord")])
    with pytest.raises(ValueError, match=r"train-00000-of-00002.tfrecord: given twice in .* \(by two patterns, or a "
                                         r"link\): give each shard once"):  # (the TensorFlow backend refuses it too)
        token_corpus.token_files([str(folder / "train-00000-*.tfrecord"), str(folder / "train-*.tfrecord")])
    with pytest.raises(ValueError, match=r"\*eval\* matches the token corpus \S+tokens-eval.npz beside shards: give the "
                                         r"shards alone \(\S+/eval-\*.tfrecord\), or the corpus alone"):
        token_corpus.token_files([str(folder / "*eval*")])
    assert token_corpus.token_files([str(folder / "train-00000-*.tfrecord"), str(folder / "train-00001-*")]) == \
        str(folder / "tokens-train.npz")
    for patterns, match in (([str(folder / "*.tfrecord")], r"matches eval-00000-of-00001.tfrecord, which is not one of "
                                                           r"the train shards"),
                            ([str(folder)], r"is a folder: give its shards"),
                            ([str(folder / "nothing-*.tfrecord")], r"nothing-\*.tfrecord matches no file"),
                            ([str(folder / "tokens-*.npz")], r"tokens-\*.npz matches 2 token corpora"),
                            ([str(folder.parent / "vocab.model")], r"vocab.model: neither the data tool's TFRecord "
                                                                   r"shards nor its token corpus")):
        with pytest.raises(ValueError, match=match):
            token_corpus.token_files(patterns)
    half = tmp_path / "half"  # one of the two shards copied with the corpus that holds both
    half.mkdir()
    for name in ("train-00000-of-00002.tfrecord", "tokens-train.npz"):
        shutil.copy(folder / name, half)
    with pytest.raises(ValueError, match=r"half holds 1 of the 2 train shards \(their names say -of-00002\) that its "
                                         r"token corpus \S+half/tokens-train.npz holds, and the JAX backend reads that "
                                         r"corpus: it would train on all 2"):
        token_corpus.token_files([str(half / "train-*.tfrecord")])
    swapped = tmp_path / "swapped"  # tokens-train.npz and tokens-eval.npz swapped
    shutil.copytree(folder, swapped)
    (swapped / "tokens-train.npz").write_bytes((folder / "tokens-eval.npz").read_bytes())
    with pytest.raises(ValueError, match=r"swapped/tokens-train.npz was written with the shards "
                                         r"eval-00000-of-00001.tfrecord, not train-\* ones: the other token corpus"):
        token_corpus.token_files([str(swapped / "train-*.tfrecord")])
    other = tmp_path / "other_run"  # the corpus beside shards of another data run (one shard cut: another size)
    shutil.copytree(folder, other)
    shard = other / "train-00001-of-00002.tfrecord"
    shard.write_bytes(shard.read_bytes()[:-100])
    with pytest.raises(ValueError, match=r"other_run/tokens-train.npz was written with the shards .*\(train-00001-of-"
                                         r"00002.tfrecord: [\d,]+ bytes\), but \S+other_run's train-00001-of-00002"
                                         r".tfrecord is [\d,]+ bytes: train-00001-of-00002.tfrecord cut short \(a copy "
                                         r"that stopped: copy it again\), or the token corpus of other records"):
        token_corpus.token_files([str(other / "train-*.tfrecord")])
    shard.write_bytes((folder / shard.name).read_bytes() * 2)  # the shard joined with itself (cat a a > a)
    with pytest.raises(ValueError, match=r"but \S+other_run's train-00001-of-00002.tfrecord is [\d,]+ bytes: "
                                         r"train-00001-of-00002.tfrecord joined with a copy of itself \(exactly 2 times "
                                         r"its size: cat of the shard with itself\?"):
        token_corpus.token_files([str(other / "train-*.tfrecord")])
    shard.write_bytes(bytes(len((folder / shard.name).read_bytes())))  # NULs of its size: a failed copy
    with pytest.raises(ValueError, match=r"other_run/train-00001-of-00002.tfrecord: not a TFRecord shard \(its first "
                                         r"record's frame does not read: zeroed or overwritten, though of its size\)"):
        token_corpus.token_files([str(other / "train-*.tfrecord")])
    swapped_names = tmp_path / "swapped_names"  # the two shards renamed into each other
    shutil.copytree(folder, swapped_names)
    first, second = (swapped_names / f"train-0000{i}-of-00002.tfrecord" for i in (0, 1))
    first.rename(tmp_path / "aside.tfrecord")
    second.rename(first)
    (tmp_path / "aside.tfrecord").rename(second)
    assert first.stat().st_size != second.stat().st_size  # (else nothing tells them apart, nor needs to)
    with pytest.raises(ValueError, match=r"swapped_names's shards train-00000-of-00002.tfrecord, train-00001-of-00002"
                                         r".tfrecord have each other's sizes .*renamed into each other\?"):
        token_corpus.token_files([str(swapped_names / "train-*.tfrecord")])
    links = tmp_path / "links"  # links to the shards under other names: the corpus beside their targets is read
    links.mkdir()
    for i in (0, 1):
        (links / f"wiki-{i}.tfrecord").symlink_to(folder / f"train-0000{i}-of-00002.tfrecord")
    assert token_corpus.token_files([str(links / "wiki-*.tfrecord")]) == str(folder / "tokens-train.npz")
    renamed = tmp_path / "renamed"  # one shard under another name, beside the corpus of both
    renamed.mkdir()
    shutil.copy(folder / "train-00000-of-00002.tfrecord", renamed / "part-0.tfrecord")
    shutil.copy(folder / "tokens-train.npz", renamed)
    with pytest.raises(ValueError, match=r"part-\* matches part-0.tfrecord, none of the shards \S+tokens-train.npz was "
                                         r"written with \(train-00000-of-00002.tfrecord, train-00001-of-00002.tfrecord\)"):
        token_corpus.token_files([str(renamed / "part-*")])
    for i in (0, 1):  # both shards renamed -of-00003 beside their corpus: not "2 of the 3 shards"
        shutil.copy(folder / f"train-0000{i}-of-00002.tfrecord", renamed / f"train-0000{i}-of-00003.tfrecord")
    (renamed / "part-0.tfrecord").unlink()
    with pytest.raises(ValueError, match=r"matches train-00000-of-00003.tfrecord, none of the shards \S+tokens-train.npz "
                                         r"was written with \(train-00000-of-00002.tfrecord, "):
        token_corpus.token_files([str(renamed / "train-*.tfrecord")])
    renamed_eval = tmp_path / "renamed_eval"  # the held-out shard renamed, given as --eval_files (round 42 A108)
    renamed_eval.mkdir()
    shutil.copy(next(folder.glob("eval-*.tfrecord")), renamed_eval / "heldout.tfrecord")
    shutil.copy(folder / "tokens-eval.npz", renamed_eval)
    with pytest.raises(ValueError, match=r"matches heldout.tfrecord, none of the shards \S+tokens-eval.npz was written "
                                         r"with \(eval-00000-of-00001.tfrecord\)"):
        token_corpus.token_files([str(renamed_eval / "heldout.tfrecord")], held_out=True)
    alone = tmp_path / "held_out_alone"  # held-out shards without their corpus, matched as '*.tfrecord'
    alone.mkdir()
    shutil.copy(next(folder.glob("eval-*.tfrecord")), alone)
    with pytest.raises(ValueError, match=r"held_out_alone/tokens-eval.npz: no token corpus"):
        token_corpus.token_files([str(alone / "*.tfrecord")])
    # a held-out corpus of another vocabulary than the training one, or one that makes no instance
    with np.load(folder / "tokens-eval.npz") as data:
        fields = dict(data)
    np.savez(tmp_path / "tokens-other.npz", **{**fields, "vocabulary": "0" * 64})
    np.savez(tmp_path / "tokens-empty.npz", **{**fields, "ids": fields["ids"][:0], "sentence_ends": fields["sentence_ends"][:0],
                                              "document_ends": fields["document_ends"][:0], "documents": fields["documents"][:0]})
    refused(r"tokens-other.npz was made with another vocabulary than .*tokens-train.npz",
            eval_files=[str(tmp_path / "tokens-other.npz")])
    refused(r"tokens-empty.npz: makes no held-out instance \(0 documents\)", eval_files=[str(tmp_path / "tokens-empty.npz")])
    (tmp_path / "run2").mkdir()
    (tmp_path / "run2" / "checkpoints").write_text("not a folder")
    config = PretrainConfig(**_jax_config(records, tmp_path / "run2")).resolved()
    with pytest.raises(ValueError, match=r"run2/checkpoints is a file, where the run keeps its checkpoints folder"):
        jax_pretraining._check_resumable(config)


def test_a_token_corpus_that_is_a_pipe_or_a_folder_is_named_not_waited_on(records, tmp_path):
    """Round 46 A89: tokens-train.npz a named pipe with no writer beside the shards: np.load waited without a word."""
    from pipelines import token_corpus

    shard = sorted(Path(records[0]).parent.glob(Path(records[0]).name))[0]
    for name, make in (("fifo", os.mkfifo), ("folder", os.mkdir)):
        (tmp_path / name).mkdir()
        shutil.copy(shard, tmp_path / name / "train-00000-of-00001.tfrecord")
        make(tmp_path / name / "tokens-train.npz")
        with pytest.raises(ValueError, match=rf"{name}/tokens-train.npz: {'a named pipe' if name == 'fifo' else 'a folder'}"
                                             r".*, where the JAX backend reads the data tool's token corpus"):
            token_corpus.token_files([str(tmp_path / name / "train-*.tfrecord")])


def test_tensorflows_run_flags_are_refused_on_jax_not_ignored():
    from albert_act import pretrain

    for flags, named in ((["--strategy", "tpu"], "--strategy tpu"), (["--input_streams", "2"], "--input_streams 2"),
                         (["--export_dir", "out/1"], "--export_dir out/1"), (["--overwrite"], "--overwrite")):
        message = pretrain.jax_ignored_flags(pretrain.parse_args(["--model_dir", "run", *flags]))
        assert message.startswith(f"{named}: TensorFlow's, which the JAX backend does not read"), message
    assert pretrain.jax_ignored_flags(pretrain.parse_args(["--model_dir", "run", "--strategy", "auto"])) is None
    message = pretrain.jax_ignored_flags(pretrain.parse_args(["--model_dir", "run", "--override", "capacity=32"]))
    assert message.startswith("--override capacity=32: a cap on the tokens an iteration computes is TensorFlow's")


def test_ctrl_c_while_jax_compiles_gives_one_line_not_a_crash(records, tmp_path):
    """SIGINT while XLA compiles the first update (its compiler threads still running): one "stopped"
    line and status 130, where tearing the interpreter down beside those threads had crashed it (139).
    Run as on the GPU host: the command line, KERAS_BACKEND=jax, TensorFlow not importable."""
    from conftest import TINY_RUN

    overrides = [a for k, v in TINY_RUN.items() for a in ("--override", f"{k}={v}")]
    code = ("import sys, runpy; sys.modules['tensorflow'] = None; "
            "runpy.run_module('albert_act.pretrain', run_name='__main__', alter_sys=True)")
    command = [sys.executable, "-c", code, "--train_files", records[0], "--eval_files", records[1], "--model_dir",
               str(tmp_path / "run"), "--steps", "50", "--global_batch_size", "8", "--micro_batch_size", "8",
               "--eval_batches", "1", "--no_export", "--execution", "static", *overrides]
    process = subprocess.Popen(command, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                               env={**os.environ, "KERAS_BACKEND": "jax", "PYTHONUNBUFFERED": "1"},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for line in process.stdout:
            if line.startswith("pre-training "):  # the header: the first update's compilation starts
                break
        time.sleep(3.0)  # into the compilation (or the first updates; no checkpoint before the 50th)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=240)
    finally:
        process.kill()
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 130 and lines[-1:] == [
        f"stopped: before the first checkpoint: no checkpoint of this run was saved in {tmp_path / 'run'}; re-run the "
        "same command to start again"] and "Traceback" not in err, (process.returncode, err[-3000:])


def test_readers_of_a_run_pass_over_a_checkpoint_with_non_finite_weights(tmp_path):
    """export, analyze and finetune read a run's weights through newest_weights: a checkpoint with NaN
    weights is named and the one before it read, as the run's own resume does."""
    from albert_act.io.run_checkpoints import newest_weights

    folder = tmp_path / "run" / "checkpoints"
    folder.mkdir(parents=True)
    good = {"trainable/encoder/kernel": np.ones((2, 2), np.float32), "update": np.int64(1)}
    np.savez(folder / "jax-1.npz", **good)
    np.savez(folder / "jax-2.npz", **{**good, "trainable/encoder/kernel": np.full((2, 2), np.nan, np.float32)})
    update, path, weights = newest_weights(str(tmp_path / "run"))
    assert update == 1 and path.endswith("jax-1.npz") and weights["encoder/kernel"].sum() == 4


def test_the_parity_reference_is_moved_into_place_whole(tmp_path):
    """--write wrote its two files straight into DIR: a stop between them left half a reference. Staged beside
    DIR and moved in whole, an earlier reference is replaced in one step and nothing else is left."""
    from benchmarks import backend_parity

    backend_parity.write(str(tmp_path / "parity"))
    first = dict(np.load(tmp_path / "parity" / "reference.npz"))
    (tmp_path / "parity" / "reference.npz").write_bytes(b"an earlier reference")
    backend_parity.write(str(tmp_path / "parity"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["parity"]  # no staging dir left
    assert sorted(p.name for p in (tmp_path / "parity").iterdir()) == ["model.weights.h5", "reference.npz"]
    again = dict(np.load(tmp_path / "parity" / "reference.npz"))
    assert float(again["loss"]) == float(first["loss"]) and again.keys() == first.keys()


@pytest.mark.parametrize("data", [b"", b"PK\x03\x04 cut"], ids=["empty", "cut"])
def test_a_damaged_parity_reference_is_named(tmp_path, monkeypatch, data):
    """An empty or cut reference.npz reached the user as NumPy's EOFError or zipfile's BadZipFile traceback."""
    import argparse
    import os

    from benchmarks import backend_parity

    (tmp_path / "reference.npz").write_bytes(data)
    monkeypatch.setattr(backend_parity, "check", lambda d: dict(np.load(os.path.join(d, "reference.npz"))))
    with pytest.raises(ValueError, match=r"--check \S+: its reference does not read whole \((EOFError|BadZipFile): "):
        backend_parity._write_or_check(argparse.Namespace(write=None, check=str(tmp_path)))
