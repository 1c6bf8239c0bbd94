"""Where the steps run: the tf.distribute strategy (a Colab TPU VM, GPUs, or the CPU), the
precision, and per-replica functions compiled by XLA as TPUStrategy compiles them.

Every stage that runs a model under a strategy (pre-training, fine-tuning, the analyses) takes
the same three choices through `resolve`, and hands its per-replica function to `compiled`.
"""

import argparse
import json
import os

import numpy as np
import tensorflow as tf

from albert_act import checks

STRATEGIES = ("auto", "tpu", "gpu", "cpu")
PRECISIONS = ("auto", "float32", "mixed_bfloat16")  # auto: mixed_bfloat16 on TPU, float32 elsewhere


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


def resolve(strategy="auto", precision="auto", jit_compile=None):
    """(strategy, kind, precision, jit_compile) under the rules every stage shares.

    precision "auto" is mixed_bfloat16 on a TPU and float32 elsewhere; it becomes Keras' global
    dtype policy, so build models after this call (and inside `strategy.scope()`). jit_compile
    None or False: XLA on a TPU only (TPUStrategy compiles every per-replica function anyway);
    True: also on a CPU or GPU. Several CPU replicas share one XLA device: refused.
    """
    strategy, kind = make_strategy(strategy)
    precision = resolve_precision(precision, kind)
    jit_compile = resolve_jit(jit_compile, kind, strategy.num_replicas_in_sync)
    return strategy, kind, precision, jit_compile


def resolve_precision(precision, kind):
    """The dtype policy for "auto"/"float32"/"mixed_bfloat16" on `kind`; set as Keras' global policy."""
    import keras  # here, not at the top: choosing a strategy needs no Keras

    checks.one_of("precision", precision, PRECISIONS)
    precision = precision if precision != "auto" else ("mixed_bfloat16" if kind == "tpu" else "float32")
    keras.config.set_dtype_policy(precision)
    return precision


def resolve_jit(jit_compile, kind, replicas):
    """Whether per-replica functions are XLA-compiled: always on a TPU, else as asked."""
    jit_compile = bool(jit_compile) or kind == "tpu"
    if jit_compile and kind == "cpu" and replicas > 1:
        raise ValueError(f"jit_compile: XLA cannot compile per-replica steps over {replicas} CPU replicas "
                         "(logical devices share one XLA CPU device); use --no-jit_compile")
    return jit_compile


def compiled(replica_fn, jit_compile):
    """`replica_fn` as given to strategy.run: XLA-compiled when jit_compile (as TPUStrategy does)."""
    return tf.function(replica_fn, jit_compile=True) if jit_compile else replica_fn


def replica_rows(tensors):
    """This replica's share of a global batch that every replica receives: rows
    [id * B / replicas, (id + 1) * B / replicas) of each tensor (B divisible by the replicas)."""
    context = tf.distribute.get_replica_context()
    first = tf.nest.flatten(tensors)[0]
    rows = first.shape[0] if first.shape[0] is not None else tf.shape(first)[0]  # static when known (XLA)
    share = rows // context.num_replicas_in_sync
    start = context.replica_id_in_sync_group * share
    return tf.nest.map_structure(lambda t: t[start:start + share], tensors)


def row_runner(fn, strategy, jit_compile):
    """A function (dict of numpy (B, ...)) -> dict of numpy (B, ...): `fn` on every row, each
    replica computing its share (`replica_rows`, XLA-compiled when jit_compile), gathered in order.

    B need not divide among the replicas: the batch is padded with copies of its first row, whose
    outputs are dropped. The padded batch keeps one shape per B, so XLA compiles once per B.
    """
    replicas = strategy.num_replicas_in_sync
    replica_fn = compiled(lambda batch: fn(replica_rows(batch)), jit_compile)

    @tf.function
    def step(batch):
        outputs = strategy.run(replica_fn, args=(batch,))
        return {k: strategy.gather(v, axis=0) for k, v in outputs.items()}

    def run(batch):
        batch = {k: np.asarray(v) for k, v in batch.items()}
        rows = len(next(iter(batch.values())))
        padded = -(-rows // replicas) * replicas
        if padded > rows:
            batch = {k: np.concatenate([v, np.repeat(v[:1], padded - rows, axis=0)]) for k, v in batch.items()}
        return {k: v.numpy()[:rows] for k, v in step(batch).items()}

    return run


def add_arguments(parser, jit_help="XLA-compile the per-replica functions; always on for TPU"):
    """--strategy, --precision and --jit_compile, the same for every CLI that runs a model."""
    parser.add_argument("--strategy", default="auto", choices=STRATEGIES,
                        help="auto: a Colab TPU VM if reachable, else every local GPU, else the CPU")
    parser.add_argument("--precision", default="auto", choices=PRECISIONS,
                        help="auto: mixed_bfloat16 on TPU, float32 elsewhere")
    parser.add_argument("--jit_compile", action=argparse.BooleanOptionalAction, default=None, help=jit_help)
