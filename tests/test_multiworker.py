"""Multi-worker training: TF_CONFIG read the way TensorFlow reads it, and two real
worker processes on loopback ports training the weights a single process trains."""

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from albert_act import distribution
from albert_act.train.pretraining_config import PretrainConfig
from albert_act.base import outputs
from conftest import STATIC, STATIC_FLAGS, TINY_RUN

REPO = Path(__file__).resolve().parents[1]


def _tf_config(workers, task_type="worker", index=0, chief=None):
    cluster = {"worker": [f"127.0.0.1:{2000 + i}" for i in range(workers)]}
    if chief:
        cluster["chief"] = ["127.0.0.1:1999"]
    return {"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": task_type, "index": index}})}


def test_the_chief_and_the_worker_count_come_from_tf_config():
    assert distribution.cluster_task({}) == (1, None, 0, True)
    assert distribution.cluster_task(_tf_config(2, "worker", 0)) == (2, "worker", 0, True)
    assert distribution.cluster_task(_tf_config(2, "worker", 1)) == (2, "worker", 1, False)
    assert distribution.cluster_task(_tf_config(2, "worker", 0, chief=True)) == (3, "worker", 0, False)
    assert distribution.cluster_task(_tf_config(2, "chief", 0, chief=True)) == (3, "chief", 0, True)
    with pytest.raises(ValueError, match="TF_CONFIG is not a cluster spec"):
        distribution.cluster_task({"TF_CONFIG": "{not json"})


def _records_of(files):
    return [r.numpy() for r in tf.data.TFRecordDataset(files)]


@pytest.mark.parametrize("shards", [2, 1])
def test_each_input_stream_reads_only_its_share_of_the_records(records, tmp_path, shards):
    """Two streams: with two files each reads one of them; with one file each keeps every other record."""
    from pipelines.pretraining_dataset import record_files, serialized_batches

    assert distribution.worker_position({}) == (0, 1)
    assert distribution.worker_position(_tf_config(2, "worker", 1)) == (1, 2)
    assert distribution.worker_position(_tf_config(2, "chief", 0, chief=True)) == (0, 3)
    assert distribution.worker_position(_tf_config(2, "worker", 1, chief=True)) == (2, 3)
    files = record_files(records[0])
    assert len(files) == 2
    if shards == 1:  # one file holding both shards' records, in order
        with tf.io.TFRecordWriter(str(tmp_path / "one.tfrecord")) as writer:
            for record in _records_of(files):
                writer.write(record)
        files = [str(tmp_path / "one.tfrecord")]
    everything = _records_of(files)
    read = []
    for stream in range(2):
        share = _records_of(files[stream]) if shards == 2 else everything[stream::2]
        batches = serialized_batches(files, 8, seed=3, deterministic=True, shuffle_buffer=1, streams=2, stream=stream)
        rows = [r for batch in batches.take(-(-len(share) // 4)) for r in batch.numpy()][:len(share)]
        assert all(len(batch) == 4 for batch in batches.take(3))  # batches of 8 / 2 rows
        assert sorted(rows) == sorted(share), f"stream {stream} read other records"  # one pass: its share, once
        read.append(set(rows))
    assert not read[0] & read[1] and read[0] | read[1] == set(everything)
    with pytest.raises(ValueError, match="global batch 9 must divide into 2 streams"):
        serialized_batches(files, 9, streams=2, stream=0)


def test_input_positions_resume_every_stream_and_a_missing_one_is_named(records, tmp_path):
    from albert_act.train.input_streams import InputStreams

    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path / "run"),
                            global_batch_size=8, seed=5, deterministic=True, input_streams=2, keep_checkpoints=2)
    streams = InputStreams(config, [records[0]])  # one process reads both streams
    for _ in range(3):
        [next(i) for i in streams.iterators]
    assert streams.missing(3) == f"no input position of stream 0 at update 3 ({tmp_path}/run/input/stream-0/ckpt-3)"
    for update in (1, 2, 3):
        streams.save(update)
    expected = [next(i).numpy() for i in streams.iterators]
    assert streams.missing(3) is None and sorted(p.name for p in (tmp_path / "run/input/stream-1").iterdir()) == [
        "ckpt-2.data-00000-of-00001", "ckpt-2.index", "ckpt-3.data-00000-of-00001", "ckpt-3.index"]  # 2 kept
    worker = InputStreams(config, [records[0]], worker=(1, 2))  # worker 1 of two: its stream only
    worker.restore(3)
    np.testing.assert_array_equal(next(worker.iterators[0]).numpy(), expected[1])
    (tmp_path / "run/input/stream-1/ckpt-3.index").unlink()
    assert "no input position of stream 1 at update 3" in worker.missing(3)


@pytest.mark.slow  # ~35 s; resume stays in the default run through test_pretraining's SIGKILL test
def test_a_run_of_two_streams_resumes_from_the_newest_update_every_stream_has(records, tmp_path, capsys):
    """A worker killed after the chief's checkpoint but before its own input position: the job
    resumes from the checkpoint before, and ends on the uninterrupted run's weights."""
    import shutil

    from albert_act.train.pretraining_run import run_pretraining

    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path / "straight"),
                            backbone_overrides=dict(TINY_RUN), steps=4, warmup_steps=1, global_batch_size=8,
                            micro_batch_size=4, checkpoint_every=2, eval_batches=1, jit_compile=False,
                            deterministic=True, input_streams=2, execution=STATIC)
    run_pretraining(config, progress=False)
    shutil.copytree(tmp_path / "straight", tmp_path / "cut")
    for leftover in (tmp_path / "cut/input/stream-1").glob("ckpt-4.*"):
        leftover.unlink()
    capsys.readouterr()
    run_pretraining(dataclasses.replace(config, model_dir=str(tmp_path / "cut")), progress=True)
    out = capsys.readouterr().out
    assert "ckpt-4: no input position of stream 1 at update 4" in out and "resumed from" in out, out
    assert "input in 2 streams (reading all 2)" in out, out
    straight, cut = _weights(tmp_path / "straight"), _weights(tmp_path / "cut")
    for name, value in straight.items():
        np.testing.assert_allclose(cut[name], value, rtol=1e-5, atol=1e-7, err_msg=name)


def test_input_streams_must_divide_the_batch_and_match_the_workers(records, tmp_path, monkeypatch):
    from albert_act.train.pretraining_preflight import preflight

    def config(**settings):
        return PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(tmp_path / "run"),
                              backbone_overrides=dict(TINY_RUN), **settings).resolved()

    assert config(global_batch_size=8, micro_batch_size=4).input_streams == 1
    with pytest.raises(ValueError, match="input_streams must be >= 1 and divide the global batch 8, got 3"):
        preflight(config(global_batch_size=8, micro_batch_size=4, input_streams=3), 1)
    monkeypatch.setenv("TF_CONFIG", _tf_config(2)["TF_CONFIG"])
    assert config(global_batch_size=8, micro_batch_size=2).input_streams == 2
    with pytest.raises(ValueError, match="input_streams 4: a job of 2 workers reads 2 streams, one each"):
        preflight(config(global_batch_size=8, micro_batch_size=2, input_streams=4), 2)


def test_multiworker_without_a_cluster_is_refused(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", _tf_config(1)["TF_CONFIG"])
    with pytest.raises(ValueError, match="--strategy multiworker: TF_CONFIG must list at least two workers"):
        distribution.make_strategy("multiworker")
    monkeypatch.delenv("TF_CONFIG")  # none at all: said so, not counted as a cluster of one
    with pytest.raises(ValueError, match=r"at least two workers .*\}\); TF_CONFIG is not set$"):
        distribution.make_strategy("multiworker")


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def _command(records, model_dir, micro_batch, extra=()):
    overrides = [a for k, v in TINY_RUN.items() for a in ("--override", f"{k}={v}")]
    return [sys.executable, "-m", "albert_act.pretrain", "--train_files", records[0], "--eval_files", records[1],
            "--model_dir", str(model_dir), "--steps", "4", "--global_batch_size", "8", "--micro_batch_size",
            str(micro_batch), "--checkpoint_every", "2", "--no-jit_compile", "--no_export", "--eval_batches", "1",
            "--deterministic", *STATIC_FLAGS, *overrides, *extra]


def _weights(model_dir):
    reader = tf.train.load_checkpoint(str(model_dir / "checkpoints"))
    names = [n for n in reader.get_variable_to_shape_map() if n.startswith("model/") and "OPTIMIZER" not in n]
    return {n: reader.get_tensor(n) for n in names}


@pytest.mark.slow
def test_two_workers_train_the_weights_of_one_process_and_only_the_chief_writes(records, tmp_path):
    base = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    base["PYTHONPATH"] = str(REPO)
    single = subprocess.run(_command(records, tmp_path / "single", 4, ["--input_streams", "2"]), cwd=REPO, env=base, capture_output=True,
                            text=True, timeout=600)
    assert single.returncode == 0, single.stderr[-3000:]

    ports = _free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    processes = []
    try:
        for index in range(2):
            env = {**base, "TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}),
                   "TMPDIR": str(tmp_path / f"tmp{index}")}
            (tmp_path / f"tmp{index}").mkdir()
            processes.append(subprocess.Popen(_command(records, tmp_path / "multi", 2, ["--strategy", "multiworker"]),
                                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              text=True))
        results = [p.communicate(timeout=600) for p in processes]
    finally:
        for p in processes:
            p.kill()
    for p, (out, err) in zip(processes, results):
        assert p.returncode == 0, err[-3000:]
    assert "on cpu x2" in results[0][0], results[0][0][-2000:]
    single_weights, multi_weights = _weights(tmp_path / "single"), _weights(tmp_path / "multi")
    assert single_weights.keys() == multi_weights.keys() and len(single_weights) > 5
    for name, value in single_weights.items():
        np.testing.assert_allclose(multi_weights[name], value, rtol=2e-4, atol=2e-6, err_msg=name)
    # Only the chief wrote the run; the other worker's scratch dir is gone.
    assert sorted(p.name for p in (tmp_path / "multi" / "checkpoints").iterdir() if p.name.startswith("ckpt-4"))
    # ... but each worker its own input stream's positions, beside the checkpoints.
    for stream in range(2):
        assert (tmp_path / "multi" / "input" / f"stream-{stream}" / "ckpt-4.index").exists()
    assert "input in 2 streams (reading stream 0)" in results[0][0], results[0][0][-2000:]
    assert list((tmp_path / "tmp1").iterdir()) == []
    assert not Path(outputs.lock_path(tmp_path / "multi")).exists()


@pytest.mark.slow
def test_a_killed_worker_stops_the_other_with_a_message_and_the_job_resumes_to_the_same_weights(records, tmp_path):
    base = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    base["PYTHONPATH"] = str(REPO)
    steps = ["--steps", "12"]
    single = subprocess.run(_command(records, tmp_path / "single", 4, [*steps, "--input_streams", "2"]), cwd=REPO, env=base,
                            capture_output=True, text=True, timeout=600)
    assert single.returncode == 0, single.stderr[-3000:]

    def start(ports):
        cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
        return [subprocess.Popen(_command(records, tmp_path / "multi", 2, [*steps, "--strategy", "multiworker"]),
                                 cwd=REPO, env={**base, "TF_CONFIG": json.dumps(
                                     {"cluster": cluster, "task": {"type": "worker", "index": index}})},
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for index in range(2)]

    processes = start(_free_ports(2))
    try:
        start_time = time.time()
        while not list((tmp_path / "multi" / "checkpoints").glob("ckpt-*.index")):
            assert processes[0].poll() is None, processes[0].communicate()[1][-3000:]
            assert time.time() - start_time < 300, "no checkpoint written"
            time.sleep(0.05)
        processes[1].send_signal(signal.SIGKILL)
        _, err = processes[0].communicate(timeout=120)  # a hang fails here
    finally:
        for p in processes:
            p.kill()
    if processes[0].returncode == 0:
        pytest.skip("the job finished before the kill reached it")
    assert processes[0].returncode == 1 and "Traceback" not in err, err[-3000:]
    assert "error: another worker of the job stopped at update" in err and "start every worker again" in err, err[-3000:]

    processes = start(_free_ports(2))
    try:
        results = [p.communicate(timeout=600) for p in processes]
    finally:
        for p in processes:
            p.kill()
    assert all(p.returncode == 0 for p in processes), results[0][1][-3000:] + results[1][1][-3000:]
    assert "resumed from" in results[0][0], results[0][0][-2000:]
    single_weights, multi_weights = _weights(tmp_path / "single"), _weights(tmp_path / "multi")
    for name, value in single_weights.items():
        np.testing.assert_allclose(multi_weights[name], value, rtol=2e-4, atol=2e-6, err_msg=name)
