"""Shared test helpers: quiet TensorFlow, tiny configs, random inputs, round-trip checks."""

import os
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

# The one tiny model of the tests: small enough for many tests per second on a 2-core CPU.
TINY = dict(
    vocabulary_size=400,
    num_heads=2,
    embedding_dim=16,
    hidden_dim=32,
    intermediate_dim=64,
    max_iterations=5,
    max_sequence_length=128,
)
# The same model for training runs on `records`: their sequence length, and 3 iterations to keep runs short.
TINY_RUN = {**TINY, "max_iterations": 3, "max_sequence_length": 64}
# Runs whose execution is not what they test use the static loop: on a 2-core CPU its first update
# traces in ~7 s, the demo preset's gather in ~18 s. gather trains to the same numbers (test_gathered_halting).
STATIC = "static"
STATIC_FLAGS = ["--execution", STATIC]


@pytest.fixture(scope="session", autouse=True)
def temporary_files_under_pytest(tmp_path_factory):
    """Everything written to "the temporary directory" (TensorFlow's autograph files, staging
    dirs, notebook kernels' files), here and in subprocesses, lands under pytest's own."""
    import tempfile

    folder = str(tmp_path_factory.mktemp("tmp"))
    saved = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir, os.environ["TMPDIR"] = folder, folder
    yield folder
    tempfile.tempdir = saved[0]
    if saved[1] is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved[1]


def random_inputs(lengths, padded_length, vocabulary_size=64, seed=0):
    """Backbone inputs for sequences of the given real lengths, padded with id 0."""
    rng = np.random.default_rng(seed)
    batch = len(lengths)
    real = np.arange(padded_length)[None, :] < np.asarray(lengths)[:, None]
    token_ids = rng.integers(5, vocabulary_size, (batch, padded_length))
    segment_ids = (np.arange(padded_length)[None, :] >= np.asarray(lengths)[:, None] // 2).astype("int32")
    return {
        "token_ids": np.where(real, token_ids, 0).astype("int32"),
        "segment_ids": np.where(real, segment_ids, 0).astype("int32"),
        "padding_mask": real.astype("int32"),
    }


def spread_halting(backbone, seed=0, scale=0.5, bias=-0.3):
    """Gives the halting unit weights that make tokens halt at varied depths."""
    rng = np.random.default_rng(seed)
    dense = backbone.encoder.halting_unit.dense
    dense.kernel.assign(rng.normal(0.0, scale, dense.kernel.shape).astype("float32"))
    dense.bias.assign(np.full(dense.bias.shape, bias, "float32"))


def to_numpy(outputs):
    return {k: keras.ops.convert_to_numpy(v) for k, v in outputs.items()}


def assert_config_round_trip(obj):
    """from_config(get_config()) rebuilds an object with the identical config."""
    config = obj.get_config()
    rebuilt = type(obj).from_config(config)
    assert rebuilt.get_config() == config
    return rebuilt


def assert_keras_file_round_trip(model, inputs, tmp_path, atol=1e-6):
    """`.keras` save -> load gives the same class and the same outputs."""
    path = str(tmp_path / "model.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert type(restored) is type(model)
    expected, actual = to_numpy(model(inputs)), to_numpy(restored(inputs))
    assert expected.keys() == actual.keys()
    for key in expected:
        np.testing.assert_allclose(actual[key], expected[key], atol=atol, err_msg=key)
    return restored


@pytest.fixture(autouse=True)
def _seeded_and_float32():
    """Every test starts from the same seed and the float32 policy."""
    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")


SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data():
    """../shared/data (real public data). Skipped in a user's clone without it; a failure under CI."""
    if not SHARED_DATA.is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{SHARED_DATA} is missing; CI runs with ../shared/data beside the repository")
        pytest.skip(f"{SHARED_DATA} not found: these tests read the real data there")
    return SHARED_DATA


def built_once(tmp_path_factory, worker_id, name, build):
    """`build(folder)` (JSON-ready result) run once per test session, not once per xdist worker: the
    first worker to ask builds it in the session's shared temporary folder, under a lock; the others
    wait for it and read the same files. Only for what tests read and never change."""
    import fcntl
    import json
    import shutil

    if worker_id == "master":  # not under xdist
        return build(tmp_path_factory.mktemp(name))
    folder = tmp_path_factory.getbasetemp().parent / f"built_once_{name}"
    with open(f"{folder}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder.with_suffix(".json")
        if done.exists():
            return json.loads(done.read_text())
        shutil.rmtree(folder, ignore_errors=True)  # a worker that failed while building
        folder.mkdir()
        result = build(folder)
        done.write_text(json.dumps(result))
        return result


@pytest.fixture(scope="session")
def wiki_vocab(shared_data, tmp_path_factory, worker_id):
    """Path of an 8,000-piece vocabulary trained (by the CLI) on the Wikipedia sample."""
    from pipelines import train_tokenizer

    def build(folder):
        train_tokenizer.main(["--input", str(shared_data / "wikipedia_en_sample" / "wiki_en_train.txt"),
                              "--output", str(folder / "wiki"), "--vocab_size", "8000"])
        return str(folder / "wiki.model")
    return built_once(tmp_path_factory, worker_id, "wiki_vocab", build)


@pytest.fixture(scope="session")
def wiki_tokenizer(wiki_vocab):
    from pipelines.tokenizer import Tokenizer

    return Tokenizer.from_file(wiki_vocab)


def create_shards(vocab, inputs, output_dir, num_shards=4, workers=2, eval_fraction=0.02, instance=None, **kwargs):
    """Runs the pre-training data tool quietly: 8,000-piece vocab, dupe factor 1 unless `instance` says
    otherwise; kwargs go to `create_pretraining_data` (e.g. skip_invalid_utf8)."""
    from pipelines import create_pretraining_data as cpd
    from pipelines.instances import InstanceConfig

    config = InstanceConfig(**{"vocabulary_size": 8000, "dupe_factor": 1, **(instance or {})})
    return cpd.create_pretraining_data([str(p) for p in inputs], vocab, str(output_dir), config, num_shards=num_shards,
                                       workers=workers, eval_fraction=eval_fraction, progress=False, **kwargs)


@pytest.fixture(scope="session")
def records(tmp_path_factory):
    """Small pre-training shards (seq 64) from the embedded corpus: (train glob, eval glob); vocab beside."""
    from pipelines import synthetic_corpus
    from pipelines.create_pretraining_data import create_pretraining_data
    from pipelines.instances import InstanceConfig
    from pipelines.tokenizer import train_sentencepiece

    root = tmp_path_factory.mktemp("pretraining")
    synthetic_corpus.write_corpus(root / "corpus.txt", 300, seed=4)
    (root / "vocab.model").write_bytes(train_sentencepiece([str(root / "corpus.txt")], vocab_size=400))
    config = InstanceConfig(vocabulary_size=400, max_seq_length=64, dupe_factor=2)
    create_pretraining_data([str(root / "corpus.txt")], str(root / "vocab.model"), str(root / "data"), config,
                            num_shards=2, workers=1, eval_fraction=0.05, progress=False)
    return str(root / "data" / "train-*.tfrecord"), str(root / "data" / "eval-*.tfrecord")


@pytest.fixture(scope="session")
def tiny_run(records, tmp_path_factory, worker_id):
    """A finished tiny pre-training run dir (checkpoint, config.json, vocab.model) and its raw-text
    SavedModel: [run dir, export dir], built once for the session (tests copy it before changing it)."""
    return built_once(tmp_path_factory, worker_id, "tiny_run", lambda root: _tiny_run(records, root))


def _tiny_run(records, root):
    from albert_act.train.pretraining_run import PretrainConfig, run_pretraining

    vocab = Path(records[0]).parent.parent / "vocab.model"
    config = PretrainConfig(train_files=[records[0]], eval_files=[records[1]], model_dir=str(root / "run"),
                            backbone_overrides=dict(TINY_RUN), steps=3, warmup_steps=0, global_batch_size=8,
                            micro_batch_size=8, eval_batches=1, vocab=str(vocab), jit_compile=False, execution=STATIC,
                            learning_rate=1.76e-3, export_dir=str(root / "saved_models" / "tiny" / "1"))
    result = run_pretraining(config, progress=False)
    keras.config.set_dtype_policy("float32")
    return [str(root / "run"), result["export"]["dir"]]


def png_ink(path):
    """(height, width, ink, colour) of a PNG: ink = fraction of pixels unlike the background (the
    corner pixel); colour = fraction of saturated pixels (data marks: axes and text are grey)."""
    import matplotlib.image

    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pixels = matplotlib.image.imread(path)[..., :3]
    ink = np.abs(pixels - pixels[0, 0]).max(-1) > 0.1
    colour = (pixels.max(-1) - pixels.min(-1)) > 0.25
    return pixels.shape[0], pixels.shape[1], float(ink.mean()), float(colour.mean())


def assert_drawn_png(path, min_colour=0.01):
    """A readable figure with data on it: at least 400 x 150 pixels, some but not all ink, and coloured
    marks on at least `min_colour` of it (a figure with only axes, text and a reference line has < 0.004)."""
    height, width, ink, colour = png_ink(path)
    assert width >= 400 and height >= 150, f"{path}: {width}x{height} pixels"
    assert 0.02 < ink < 0.9, f"{path}: ink {ink:.3f} (blank or solid)"
    assert colour >= min_colour, f"{path}: {colour:.4f} of the pixels coloured (no data drawn?)"


def compile_per_replica(replica_fn, *args, strategy=None):
    """Runs `replica_fn(*args)` as TPUStrategy would: XLA-compiled (jit_compile=True, which fails
    rather than falls back), given to `strategy.run` (default: the default strategy) inside a
    tf.function. Returns its outputs as numpy. The one check every per-replica step gets."""
    import tensorflow as tf

    strategy = strategy or tf.distribute.get_strategy()
    compiled = tf.function(replica_fn, jit_compile=True)

    @tf.function
    def step(*inputs):
        return strategy.run(compiled, args=inputs)

    outputs = step(*args)
    return to_numpy(outputs) if isinstance(outputs, dict) else keras.ops.convert_to_numpy(outputs)


def stop_at_rename(monkeypatch, call, after=False):
    """text_files.rename stopped (KeyboardInterrupt, as Ctrl-C) at its `call`-th call: before it renames, or `after`
    it; returns the list of the destinations it was called with (the undoing renames too)."""
    from albert_act.base import text_files

    destinations, rename = [], text_files.rename

    def stopped(source, destination):
        destinations.append(destination)
        if len(destinations) == call and not after:
            raise KeyboardInterrupt("signal 2")
        rename(source, destination)
        if len(destinations) == call:
            raise KeyboardInterrupt("signal 2")

    monkeypatch.setattr(text_files, "rename", stopped)
    return destinations
