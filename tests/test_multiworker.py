"""Multi-worker training (issue 27): TF_CONFIG read the way TensorFlow reads it, and two real
worker processes on loopback ports training the weights a single process trains."""

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
from pipelines import outputs
from conftest import TINY_RUN

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


def test_each_worker_parses_its_share_of_the_global_batch_in_replica_order(records):
    from pipelines.pretraining_dataset import parse_examples, parse_share, record_files, record_shapes

    assert distribution.worker_position({}) == (0, 1)
    assert distribution.worker_position(_tf_config(2, "worker", 1)) == (1, 2)
    assert distribution.worker_position(_tf_config(2, "chief", 0, chief=True)) == (0, 3)
    assert distribution.worker_position(_tf_config(2, "worker", 1, chief=True)) == (2, 3)
    files = record_files(records[0])
    serialized, shapes = next(iter(tf.data.TFRecordDataset(files).batch(8))), record_shapes(files[0])
    whole = parse_examples(serialized, *shapes)
    shares = [parse_share(serialized, *shapes, index, 2) for index in range(2)]
    assert shares[0][0]["token_ids"].shape[0] == 4  # a worker parses half of the records
    for part, name in ((0, "token_ids"), (0, "masked_positions"), (1, "masked_lm_ids"), (1, "sentence_order_label")):
        joined = np.concatenate([share[part][name] for share in shares])
        np.testing.assert_array_equal(joined, whole[part][name], err_msg=name)


def test_multiworker_without_a_cluster_is_refused(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", _tf_config(1)["TF_CONFIG"])
    with pytest.raises(ValueError, match="--strategy multiworker: TF_CONFIG must list at least two workers"):
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
            "--deterministic", *overrides, *extra]


def _weights(model_dir):
    reader = tf.train.load_checkpoint(str(model_dir / "checkpoints"))
    names = [n for n in reader.get_variable_to_shape_map() if n.startswith("model/") and "OPTIMIZER" not in n]
    return {n: reader.get_tensor(n) for n in names}


@pytest.mark.slow
def test_two_workers_train_the_weights_of_one_process_and_only_the_chief_writes(records, tmp_path):
    base = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    base["PYTHONPATH"] = str(REPO)
    single = subprocess.run(_command(records, tmp_path / "single", 4), cwd=REPO, env=base, capture_output=True,
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
    assert list((tmp_path / "tmp1").iterdir()) == []
    assert not Path(outputs.lock_path(tmp_path / "multi")).exists()


@pytest.mark.slow
def test_a_killed_worker_stops_the_other_with_a_message_and_the_job_resumes_to_the_same_weights(records, tmp_path):
    base = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    base["PYTHONPATH"] = str(REPO)
    steps = ["--steps", "12"]
    single = subprocess.run(_command(records, tmp_path / "single", 4, steps), cwd=REPO, env=base,
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
