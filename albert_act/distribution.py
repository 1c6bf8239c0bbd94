"""Where the steps run: the tf.distribute strategy (a Colab TPU VM, GPUs, or the CPU), the
precision, and per-replica functions compiled by XLA as TPUStrategy compiles them.

Every stage that runs a model under a strategy (pre-training, fine-tuning, the analyses) takes
the same three choices through `resolve`, and hands its per-replica function to `compiled`.
"""

import argparse
import json
import os

import numpy as np

from albert_act.base import checks


class _TensorFlow:
    """TensorFlow, imported on first use: the settings and `cluster_task` serve the JAX backend too,
    where TensorFlow is absent."""

    def __getattr__(self, name):
        import tensorflow

        return getattr(tensorflow, name)


tf = _TensorFlow()

STRATEGIES = ("auto", "tpu", "gpu", "cpu", "multiworker")
PRECISIONS = ("auto", "float32", "mixed_bfloat16")  # auto: mixed_bfloat16 on TPU, float32 elsewhere


TPU_INSTALL = ("pip install -r requirements-tpu.txt && pip install --no-deps tensorflow-text==2.20.1 "
               "(tensorflow-tpu 2.20 with the libtpu of https://storage.googleapis.com/libtpu-tf-releases/index.html)")


def tensorflow_build():
    """Which TensorFlow distribution is installed, in words: "tensorflow-tpu 2.20.0, libtpu 0.0.x"
    or "tensorflow 2.21.0 (PyPI's build: it does not reach a TPU)"."""
    from importlib import metadata

    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    if version("tensorflow-tpu"):
        return f"tensorflow-tpu {version('tensorflow-tpu')}, libtpu {version('libtpu') or 'not installed'}"
    for name in ("tensorflow", "tensorflow-cpu"):
        if version(name):
            return f"{name} {version(name)} (PyPI's build: it does not reach a TPU)"
    return f"TensorFlow {tf.__version__} (a runtime's own build)"


def tpu_address(environ=None):
    """What TPUClusterResolver is given: "local" (the TPU of this TPU VM, as on Colab), or the
    TPU name or grpc:// address in ALBERT_ACT_TPU (a pod slice is addressed by its name)."""
    return (os.environ if environ is None else environ).get("ALBERT_ACT_TPU") or "local"


def _tpu_strategy():
    resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu_address())
    tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def cluster_task(environ=None):
    """(workers, task type, task index, is_chief) from TF_CONFIG; (1, None, 0, True) without one.

    The chief is the "chief" task, or worker 0 when the cluster lists no chief (TensorFlow's rule).
    """
    raw = (os.environ if environ is None else environ).get("TF_CONFIG")
    if not raw:
        return 1, None, 0, True
    try:
        config = json.loads(raw)
        cluster, task = config.get("cluster", {}), config.get("task", {})
        workers = len(cluster.get("worker", [])) + len(cluster.get("chief", []))
        task_type, index = task.get("type"), int(task.get("index", 0))
    except (ValueError, AttributeError, TypeError) as error:
        raise ValueError(f"TF_CONFIG is not a cluster spec with a task ({error}): {raw[:200]}") from None
    chief = task_type == "chief" or (task_type == "worker" and index == 0 and not cluster.get("chief"))
    return workers, task_type, index, chief


def input_worker(strategy):
    """(index, count): which share of every global batch this process parses: under
    MultiWorkerMirroredStrategy its `worker_position`, otherwise (0, 1)."""
    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return worker_position()
    return 0, 1


def worker_position(environ=None):
    """(index, workers) from TF_CONFIG: this task's position among the job's workers in
    TensorFlow's order (the "chief" task first, then the workers by index), the order in which
    the job numbers its replicas; (0, 1) without a TF_CONFIG."""
    workers, task_type, index, _ = cluster_task(environ)
    if workers == 1:
        return 0, 1
    cluster = json.loads((os.environ if environ is None else environ)["TF_CONFIG"])["cluster"]
    return (0 if task_type == "chief" else index + len(cluster.get("chief", []))), workers


def _gpu_strategy():
    gpus = tf.config.list_logical_devices("GPU")
    if not gpus:
        raise ValueError("--strategy gpu: no GPU visible to TensorFlow")
    return tf.distribute.MirroredStrategy([g.name for g in gpus])


def make_strategy(name="auto"):
    """Returns (strategy, kind) with kind in {"tpu", "gpu", "cpu"}.

    auto: MultiWorkerMirroredStrategy when TF_CONFIG lists several workers (each worker's GPUs,
    or its CPU), else a TPU reachable as TPUClusterResolver(tpu=`tpu_address()`), else every local GPU,
    else the CPU. "multiworker" asks for the first and refuses a TF_CONFIG of one worker;
    "gpu" and "cpu" also become multi-worker under such a TF_CONFIG. Create the strategy before
    any other TensorFlow work in the process (collective ops are configured at startup).
    """
    if name not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}, got {name!r}")
    workers = cluster_task()[0]
    if name == "multiworker" and workers < 2:
        raise ValueError("--strategy multiworker: TF_CONFIG must list at least two workers "
                         '(e.g. {"cluster": {"worker": ["host1:12345", "host2:12345"]}, "task": {"type": '
                         '"worker", "index": 0}}); ' + (f"it lists {workers}" if os.environ.get("TF_CONFIG")
                                                        else "TF_CONFIG is not set"))
    if workers > 1 and name != "tpu":
        kind = "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
        return tf.distribute.MultiWorkerMirroredStrategy(), kind
    if name in ("auto", "tpu"):
        try:
            return _tpu_strategy(), "tpu"
        except (ValueError, RuntimeError, tf.errors.OpError) as error:
            if name == "tpu":
                raise ValueError(f"--strategy tpu: no TPU found at {tpu_address()!r} ({str(error).splitlines()[0][:300]}); installed: "
                                 f"{tensorflow_build()}. On a TPU VM: {TPU_INSTALL}, then restart Python") from None
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
    if cluster_task()[0] > 1:
        raise ValueError("TF_CONFIG lists several workers: only pre-training runs as a multi-worker job; "
                         "run this command without TF_CONFIG")
    strategy, kind = make_strategy(strategy)
    precision = resolve_precision(precision, kind)
    jit_compile = resolve_jit(jit_compile, kind, strategy.num_replicas_in_sync)
    return strategy, kind, precision, jit_compile


def resolve_precision(precision, kind):
    """The dtype policy for "auto"/"float32"/"mixed_bfloat16" on `kind`; set as Keras' global policy."""
    import keras  # here, not at the top: choosing a strategy needs no Keras

    checks.one_of("precision", precision, PRECISIONS)
    precision = precision if precision != "auto" else ("mixed_bfloat16" if kind == "tpu" else "float32")
    if keras.config.floatx() != "float32":  # (keras.json's "floatx": variables and constants made in it)
        print(f"note: Keras' floatx is {keras.config.floatx()} (keras.json in KERAS_HOME, or ~/.keras); this command's "
              f"precision is {precision}, set by --precision, so floatx is set back to float32 here")
        keras.config.set_floatx("float32")
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


def distribute_rows(strategy, tensors, workers=1):
    """This worker's batch as per-replica values for `strategy.run`: of the L replicas on this
    worker (replicas / workers), local replica r receives rows [r * B / L, (r + 1) * B / L) and
    nothing else, so each device is sent only its rows (B divisible by L)."""
    local = strategy.num_replicas_in_sync // workers
    first = tf.nest.flatten(tensors)[0]
    rows = first.shape[0] if first.shape[0] is not None else tf.shape(first)[0]
    share = rows // local

    def replica_share(context):
        start = (context.replica_id_in_sync_group % local) * share
        return tf.nest.map_structure(lambda t: t[start:start + share], tensors)

    return strategy.experimental_distribute_values_from_function(replica_share)


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


def add_arguments(parser, jit_help="XLA-compile the per-replica functions; always on for TPU", multiworker=False):
    """--strategy, --precision and --jit_compile, the same for every CLI that runs a model
    ("multiworker" only where the command supports it: pre-training)."""
    parser.add_argument("--strategy", default="auto",
                        choices=STRATEGIES if multiworker else tuple(s for s in STRATEGIES if s != "multiworker"),
                        help="auto: the workers TF_CONFIG lists (pre-training), else a Colab TPU VM if "
                             "reachable, else every local GPU, else the CPU")
    parser.add_argument("--precision", default="auto", choices=PRECISIONS,
                        help="auto: mixed_bfloat16 on TPU, float32 elsewhere")
    parser.add_argument("--jit_compile", action=argparse.BooleanOptionalAction, default=None, help=jit_help)
