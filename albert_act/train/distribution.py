"""Choosing the tf.distribute strategy: a Colab TPU VM, GPUs, or the CPU."""

import json
import os

import tensorflow as tf

STRATEGIES = ("auto", "tpu", "gpu", "cpu")


def _tpu_strategy():
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")  # Colab TPU VM
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def _gpu_strategy():
    if "TF_CONFIG" in os.environ and len(json.loads(os.environ["TF_CONFIG"]).get("cluster", {}).get("worker", [])) > 1:
        return tf.distribute.MultiWorkerMirroredStrategy()
    gpus = tf.config.list_logical_devices("GPU")
    if not gpus:
        raise ValueError("--strategy gpu: no GPU visible to TensorFlow")
    return tf.distribute.MirroredStrategy([g.name for g in gpus])


def make_strategy(name="auto"):
    """Returns (strategy, kind) with kind in {"tpu", "gpu", "cpu"}.

    auto: a TPU reachable as TPUClusterResolver(tpu="local"), else every local GPU
    (MultiWorkerMirroredStrategy when TF_CONFIG lists several workers), else the CPU.
    """
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}, got {name!r}")
    if name in ("auto", "tpu"):
        try:
            return _tpu_strategy(), "tpu"
        except (ValueError, RuntimeError, tf.errors.OpError) as error:
            if name == "tpu":
                raise ValueError(f"--strategy tpu: no TPU found ({error})") from None
    if name in ("auto", "gpu") and (name == "gpu" or tf.config.list_physical_devices("GPU")):
        return _gpu_strategy(), "gpu"
    return tf.distribute.OneDeviceStrategy("/cpu:0"), "cpu"
