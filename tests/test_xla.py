"""Every per-replica function compiles with XLA, in float32 and mixed_bfloat16, on the CPU.

TPUStrategy compiles each function given to `strategy.run` with XLA; a TPU is not reachable here,
so `compile_per_replica` does the same on the CPU: pre-training's train and eval steps, fine-tuning's
train and predict, and the analyses' inference. An op XLA cannot compile (a boolean_mask, a
bincount, a shape known only at run time) fails here, not at a TPU run's first evaluation.
"""

import os
import subprocess
import sys
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

from conftest import TINY_RUN, compile_per_replica

PRECISIONS = ("float32", "mixed_bfloat16")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def precision(request):
    keras.config.set_dtype_policy(request.param)
    yield request.param
    keras.config.set_dtype_policy("float32")


def _batch(records):
    from pipelines.pretraining_dataset import make_pretraining_dataset

    return next(iter(make_pretraining_dataset(records[0], 8, training=False)))


# mixed_bfloat16's compile (~23 s) runs with -m slow, beside bf16 training and its export; float32
# compiles the same step in the default run.
@pytest.mark.parametrize("precision", ["float32", pytest.param("mixed_bfloat16", marks=pytest.mark.slow)],
                         indirect=True)
def test_pretraining_train_and_eval_steps(records, tmp_path, precision):
    from albert_act.train.pretrainer import Pretrainer
    from albert_act.train.pretraining_run import PretrainConfig

    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path),
                            backbone_overrides=dict(TINY_RUN), steps=2, warmup_steps=0, global_batch_size=8,
                            micro_batch_size=4, precision=precision, jit_compile=True, execution="static").resolved()
    trainer = Pretrainer(config, tf.distribute.get_strategy(), "cpu")
    assert trainer.precision == precision and trainer.backbone.compute_dtype == precision[-8:].replace("mixed_", "")
    inputs, labels = _batch(records)
    before = [v.numpy() for v in trainer.model.trainable_variables]
    sums = compile_per_replica(trainer.replica_step, inputs, labels)
    assert np.isfinite(sums["mlm_loss_sum"]) and sums["mlm_weight"] > 0 and sums["gradient_norm"] > 0
    assert any((a != b.numpy()).any() for a, b in zip(before, trainer.model.trainable_variables))  # it updated
    sums = compile_per_replica(trainer.replica_eval, inputs, labels)
    from albert_act.analysis.token_types import TOKEN_TYPES

    assert sums["histogram"].shape == (len(TOKEN_TYPES), TINY_RUN["max_iterations"] + 1) and sums["depth"].shape[0] == 8
    assert sums["histogram"][0].sum() == inputs["padding_mask"].numpy().sum()  # "all": every real token once


@pytest.mark.slow  # ~25 s per precision: XLA compiles a branch per width, forward and backward
@pytest.mark.parametrize("precision", PRECISIONS, indirect=True)
def test_pretraining_step_with_bucket_execution(records, tmp_path, precision):
    # Training that computes only running tokens at static widths (TPU's form), with a capacity
    # that overflows: one update compiles and runs under XLA, and the overflows are counted.
    from albert_act.train.pretrainer import Pretrainer
    from albert_act.train.pretraining_run import PretrainConfig

    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path),
                            backbone_overrides={**TINY_RUN, "max_iterations": 2, "capacity": 8}, execution="bucket",
                            steps=2, warmup_steps=0, global_batch_size=4, micro_batch_size=4, precision=precision,
                            jit_compile=True, ponder_cost_weight=0.01).resolved()
    trainer = Pretrainer(config, tf.distribute.get_strategy(), "cpu")
    inputs, labels = _batch(records)
    inputs, labels = ({k: v[:4] for k, v in d.items()} for d in (inputs, labels))
    before = [v.numpy() for v in trainer.model.trainable_variables]
    sums = compile_per_replica(trainer.replica_step, inputs, labels)
    assert np.isfinite(sums["mlm_loss_sum"]) and sums["gradient_norm"] > 0
    assert all((a != b.numpy()).any() for a, b in zip(before, trainer.model.trainable_variables)
               if "halting" in b.path or "query" in b.path)  # the block and the halting unit learn
    assert sums["overflows"] > 0  # rows of up to 64 tokens, 8 slots after the first iteration


@pytest.mark.parametrize("precision", ["float32", pytest.param("mixed_bfloat16", marks=pytest.mark.slow)],
                         indirect=True)  # bf16 fine-tuning ~20 s: `pytest -m slow`
def test_finetuning_train_and_predict(precision):
    from albert_act import AlbertActBackbone, AlbertActClassifier
    from albert_act.train.finetuning_steps import ClassifierSteps
    from conftest import random_inputs

    model = AlbertActClassifier(AlbertActBackbone(**TINY_RUN), num_classes=3)
    steps = ClassifierSteps(model, keras.optimizers.AdamW(1e-3), tf.distribute.get_strategy(), regression=False,
                            ponder_cost_weight=0.01)
    inputs = random_inputs([9, 4, 6, 2], padded_length=9)
    loss = compile_per_replica(steps.replica_train, inputs, np.array([0, 2, 1, 0], "int32"))
    assert np.isfinite(loss) and loss > 0
    outputs = compile_per_replica(steps.replica_predict, inputs)
    assert outputs["logits"].shape == (4, 3) and outputs["logits"].dtype == np.float32
    np.testing.assert_array_equal(outputs["iterations"][1, 4:], 0.0)  # padding


@pytest.mark.parametrize("precision", PRECISIONS, indirect=True)
def test_analysis_inference(precision):
    from albert_act import AlbertActBackbone
    from albert_act.analysis.depth import inference
    from conftest import random_inputs

    backbone = AlbertActBackbone(**TINY_RUN, return_details=True)
    inputs = random_inputs([9, 4, 6], padded_length=9)
    eager = {k: v.numpy() for k, v in backbone(inputs, training=False).items()}
    outputs = inference(backbone, jit_compile=True)(inputs)
    assert set(outputs) == {"iterations", "expected_iterations", "iteration_states"}
    np.testing.assert_array_equal(outputs["iterations"], eager["iterations"])
    np.testing.assert_allclose(outputs["expected_iterations"], eager["expected_iterations"], atol=0.05)


def test_the_helper_fails_on_what_xla_cannot_compile():
    # Statistics written the plain way: boolean_mask then bincount has no static shape.
    def histogram(iterations, mask):
        return tf.math.bincount(tf.cast(tf.boolean_mask(iterations, mask), tf.int32), minlength=4)

    with pytest.raises(Exception, match="compile-time constant|Bincount|XLA|jit"):
        compile_per_replica(histogram, tf.constant([[1.0, 2.0]]), tf.constant([[True, False]]))


@pytest.mark.slow  # ~8 s: a second process with two CPU replicas; `pytest -m slow`
def test_row_runner_splits_rows_among_replicas_and_pads():
    # Two logical CPU replicas (a fresh process: devices are fixed at start): each computes its
    # rows, in order; 5 rows are padded to 6 and the padding dropped.
    script = textwrap.dedent("""
        import numpy as np, tensorflow as tf
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
        from albert_act import distribution
        strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        def replica_fn(batch):
            replica = tf.distribute.get_replica_context().replica_id_in_sync_group
            return {"x": batch["x"] * 10 + tf.cast(replica, tf.float32)}
        out = distribution.row_runner(replica_fn, strategy, jit_compile=False)({"x": np.arange(5, dtype="float32")})
        print("ROWS", out["x"].tolist())
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    rows = [line for line in result.stdout.splitlines() if line.startswith("ROWS")]
    assert rows == ["ROWS [0.0, 10.0, 20.0, 31.0, 41.0]"], result.stderr[-2000:]


def test_a_gather_model_is_analysed_under_xla_by_the_static_loop(tiny_run, tmp_path):
    """XLA aborts the process compiling gather's dynamic widths for a batch of 16,384 pieces (its constant
    inference sets a dynamic size past the shape). Under --jit_compile the analyses and fine-tuning load a model
    trained with gather in the static loop (`Source.xla_settings`), which gives the same iterations."""
    import json
    import shutil

    from albert_act.analysis.depth import inference
    from albert_act.io.source import Source

    shutil.copytree(tiny_run[0], tmp_path / "run")
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    config["execution"] = config["backbone"]["execution"] = "gather"
    (tmp_path / "run" / "config.json").write_text(json.dumps(config))
    source = Source.open(str(tmp_path / "run"))
    assert source.xla_settings(True) == {"execution": "static"} and source.xla_settings(False) == {}
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(5, 400, (256, 64)).astype("int32"),
              "segment_ids": np.zeros((256, 64), "int32"), "padding_mask": np.ones((256, 64), "int32")}
    gathered = source.backbone(dropout=0.0)[0]
    assert gathered.get_config()["execution"] == "gather"
    compiled = inference(source.backbone(dropout=0.0, **source.xla_settings(True))[0], jit_compile=True)(inputs)
    np.testing.assert_array_equal(compiled["iterations"], gathered(inputs, training=False)["iterations"].numpy())


def test_an_exports_sparse_model_runs_under_xla_by_the_static_loop():
    """An export's backbone runs the sparse loop (ragged ops, no XLA kernels: fine-tuning from it with --jit_compile
    failed after its first epoch); under XLA it is loaded in the static loop, which gives the same iterations."""
    from pathlib import Path

    from albert_act.analysis.depth import inference
    from albert_act.io.source import Source

    source = Source.open(str(Path(__file__).resolve().parents[1] / "saved_models" / "albert_act_english" / "1"))
    assert source.info["backbone"]["execution"] == "sparse" and source.xla_settings(True) == {"execution": "static"}
    rng = np.random.default_rng(0)
    inputs = {"token_ids": rng.integers(5, 400, (4, 16)).astype("int32"),
              "segment_ids": np.zeros((4, 16), "int32"), "padding_mask": np.ones((4, 16), "int32")}
    sparse = source.backbone(dropout=0.0)[0]
    compiled = inference(source.backbone(dropout=0.0, **source.xla_settings(True))[0], jit_compile=True)(inputs)
    np.testing.assert_array_equal(compiled["iterations"], sparse(inputs, training=False)["iterations"].numpy())
