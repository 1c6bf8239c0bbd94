"""`preflight(config, replicas)`: the checks of a pre-training run that read files or need the
machine, run before any compute: the vocabulary against the model, the records (shapes, ids,
vocabulary, training files also held out, enough of them for one batch), the batch against the
replicas and workers, the export dir and the model dir (a run resumes only with its own
settings). The values themselves were checked when the `PretrainConfig` was built."""

import collections
import os
import re
import sys

import tensorflow as tf

from albert_act import distribution
from albert_act.base import artifacts, checks, outputs, text_files
from albert_act.train.pretraining_config import ADDED_SETTINGS, accumulation, check_batch_fits, config_record
from albert_act.io.run_checkpoints import check_own_updates, indexless, indexless_refusal
from albert_act.train.resumption import another_run, changed_settings, check_results_kept, check_run_entries, run_record
from pipelines.pretraining_dataset import check_masked, check_records, count_records, record_files
from pipelines.record_vocabulary import check_records_vocabulary, recorded_vocabulary
from pipelines import record_overlap
from pipelines.tokenizer import Tokenizer


def preflight(config, replicas, sample_records=2000):
    """Raises ValueError, before any compute, for the problems a user can fix; returns the
    (training, evaluation) record files. `config` is resolved. A run dir to resume is compared before the
    vocabulary's size: a run resumed with another --preset is told that, not to make other data."""
    if config.init_from and artifacts.same_path(config.init_from, config.model_dir):
        raise ValueError(f"--init_from {config.init_from} is the --model_dir itself: a run resumes from its own "
                         "checkpoints without --init_from (re-run without it); to start a new run from its weights, "
                         "give a new --model_dir")
    checks.pattern_free(config.model_dir, "--model_dir")  # (--export_dir: by check_export_dir's export target check)
    backbone = config.backbone_config()
    if backbone.get("capacity") is not None and backbone["execution"] != "bucket":
        raise ValueError(f"capacity {backbone['capacity']} (--override capacity) caps an iteration's tokens under "
                         f"--execution bucket alone; --execution {backbone['execution']} has no cap, and would train "
                         "as if it were not given: drop it, or pass --execution bucket")
    if (backbone.get("capacity") or 0) >= backbone["max_sequence_length"]:
        raise ValueError(f"capacity {backbone['capacity']} (--override capacity) caps an iteration at as many tokens a "
                         f"row, and rows hold at most max_sequence_length {backbone['max_sequence_length']}: it caps "
                         f"nothing; give a capacity below {backbone['max_sequence_length']}, or leave it out")
    tokenizer = Tokenizer.from_file(config.vocab) if config.vocab else None  # its size against the model's: last
    if config.export_dir and not config.vocab:
        raise ValueError("export_dir needs vocab (the SentencePiece model of the data): the export tokenizes raw "
                         "text; pass --vocab, or --no_export")
    if config.export_dir:
        check_export_dir(config)
    accumulation(config, replicas, workers=distribution.cluster_task()[0])
    if tokenizer is not None and "vocabulary_size" in config.backbone_overrides and not tf.io.gfile.exists(
            os.path.join(config.model_dir, artifacts.CONFIG)):  # (a new run's override below the records' ids: the
        tokenizer.sized_for(config.backbone_config()["vocabulary_size"])  # override named, not the records)
    train_files, eval_files = _check_records(config, sample_records)
    check_batch_fits(config, train_files, count_records)
    _check_model_dir(config, train_files, eval_files, replicas)
    if tokenizer is not None:
        tokenizer.sized_for(config.backbone_config()["vocabulary_size"])
    return train_files, eval_files


def _check_records(config, sample_records):
    """Training and held-out records that exist, are not each other, fit the model, share one shape, and do not
    share their text (`record_overlap`)."""
    train_files, eval_files = record_files(config.train_files, "training"), record_files(config.eval_files, "evaluation")
    for folder in sorted({os.path.dirname(path) for path in train_files + eval_files}):  # (SIGKILL on the data tool)
        if tf.io.gfile.exists(os.path.join(folder, artifacts.INCOMPLETE)):
            raise ValueError(f"{folder} holds {artifacts.INCOMPLETE}/ beside its shards: a data tool killed while it "
                             "moved its shards into place, a part of its output; make the records again")
    shared = artifacts.same_files(eval_files, train_files)
    if shared:
        named = "; ".join(f"{e} is {t}" if e == t else f"{e} is the training file {t}" for e, t in shared[:3])
        raise ValueError(f"evaluation files are also training files ({len(shared)}): {named}: held-out numbers "
                         "would measure what the model was trained on")
    _note_some_shards(train_files)
    backbone = config.backbone_config()
    vocabulary, length = backbone["vocabulary_size"], backbone["max_sequence_length"]
    shapes = {}
    proto = tf.io.gfile.GFile(config.vocab, "rb").read() if config.vocab else None
    for path in train_files + eval_files:
        shapes[path] = check_records(path, vocabulary, length, sample_records)
        if proto is not None:
            check_records_vocabulary(path, proto, config.vocab)
    first = train_files[0]
    odd = next((path for path, shape in shapes.items() if shape != shapes[first]), None)
    if odd:
        raise ValueError(f"{odd}: records of {shapes[odd][0]} pieces with {shapes[odd][1]} predictions each, where "
                         f"{first}'s are of {shapes[first][0]} with {shapes[first][1]} (records of two data runs, made "
                         "with another --max_seq_length or --max_predictions_per_seq?): give records of one shape")
    check_masked(eval_files, "the held-out MLM accuracy would be of nothing", "held-out record", sample_records)
    check_masked(train_files, "the MLM loss would train nothing (sentence order alone)", "training record", sample_records)
    share, (trained, held) = record_overlap.trained_share(train_files, eval_files, *shapes[eval_files[0]])
    if share > record_overlap.REFUSED:  # (another data run's split of the same text: its held-out, trained on)
        raise ValueError(f"{share:.0%} of {held:,} held-out records ({eval_files[0]}, ...) hold the text of training "
                         f"records ({train_files[0]}, ...; {trained:,} read): runs of {record_overlap.WINDOW} pieces "
                         "in both. Made by two data runs of the same text (another --seed or --eval_fraction?), the "
                         "held-out numbers would measure what the model was trained on: give the training and "
                         "held-out records of one data run")
    if proto is None:  # no vocabulary to check each against: the two sets against each other, as reported
        _check_recorded_size(train_files[0], vocabulary, shapes[train_files[0]][0], sample_records)
        train_vocab, eval_vocab = (recorded_vocabulary(files[0]) for files in (train_files, eval_files))
        if train_vocab and eval_vocab and train_vocab != eval_vocab:
            raise ValueError(f"{eval_files[0]} was made with another vocabulary than {train_files[0]} (per the data "
                             "tool's stats.json beside each): its ids would mean other pieces; make the held-out "
                             "records with the training records' vocabulary")
    return train_files, eval_files


def _note_some_shards(train_files):
    """A note where the training files are some of a data run's shards (their names say -of-N): a choice, said."""
    runs = collections.defaultdict(set)
    for path in train_files:
        if match := re.search(r"-(\d+)-of-(\d+)\.tfrecord$", path):
            runs[(os.path.dirname(path), int(match.group(2)))].add(int(match.group(1)))
    for (folder, total), given in sorted(runs.items()):
        if len(given) < total:
            print(f"note: --train_files: {len(given)} of the {total} training shards of {folder} (their names say "
                  f"-of-{total:05d}): training on those", flush=True)


def _check_recorded_size(path, vocabulary, seq, sample_records):
    """With no --vocab: ValueError when the data tool's report beside `path` gives its vocabulary another size than
    the model's (a preset's vocabulary_size: a larger one trains rows no id reaches, and no export takes the
    records' vocabulary). With no report either, a note where the ids of its first `sample_records` records (of
    `seq` pieces) stay below 90% of the model's vocabulary."""
    size = recorded_vocabulary(path, "size")
    if size is None:
        spec = {"input_ids": tf.io.FixedLenFeature([seq], tf.int64)}
        batch = next(iter(tf.data.TFRecordDataset(path).take(sample_records).batch(sample_records)))
        top = int(tf.reduce_max(tf.io.parse_example(batch, spec)["input_ids"]))
        if top + 1 < 0.9 * vocabulary:
            print(f"note: {path}: no data tool report (stats.json) beside it and no --vocab, so its vocabulary is "
                  f"unknown; its ids reach {top} (of {len(batch):,} records), where the model's vocabulary_size is "
                  f"{vocabulary:,}: made with a smaller vocabulary? Pass --vocab (its size is checked), or --override "
                  "vocabulary_size=<its pieces>", flush=True)
    if isinstance(size, int) and size != vocabulary:
        made_with = recorded_vocabulary(path, "vocab")
        raise ValueError(f"{path}: made with a vocabulary of {size:,} pieces ({made_with}, per the data tool's "
                         f"report beside it), where the model's vocabulary_size is {vocabulary:,}: pass --override "
                         f"vocabulary_size={size} (and --vocab {made_with}, which the export needs)")


def check_export_dir(config, at_end=False):
    """Before any update, and again at the end (`at_end`: another run may have written it meanwhile):
    the export may replace only this run's own earlier export (a re-run of the same command),
    anything else only with `overwrite_export`; never the --init_from it starts from, a run, a fine-tuning dir
    or a dir holding other files (`artifacts.check_export_target`)."""
    for flag, path in (("--init_from", config.init_from), ("--model_dir", config.model_dir)):
        if path and "://" not in path + config.export_dir and artifacts.within(path, config.export_dir):
            raise ValueError(f"--export_dir {config.export_dir} holds the {flag} {path} of this run: the export would "
                             "replace it (--overwrite too); give another --export_dir")
    artifacts.check_not_in_a_run(config.export_dir, "--export_dir", run=config.model_dir)  # (before its config.json)
    info = os.path.join(config.export_dir, artifacts.ASSETS, artifacts.EXPORT_INFO)
    earlier = None
    if tf.io.gfile.exists(info):
        try:
            record = artifacts.read_json(info).get("pretraining") or {}
            earlier = artifacts.absolute_paths(record, config.export_dir).get("model_dir")
        except (ValueError, AttributeError):
            earlier = "an unreadable record"
    ours = earlier is not None and artifacts.same_path(earlier, config.model_dir)
    if earlier is not None and not ours and not config.overwrite_export and at_end:
        raise ValueError(f"--export_dir {config.export_dir} was written by another run ({earlier}, per {info}) while "
                         f"this one trained, and is left as it is; this run's weights are in its checkpoints: export "
                         f"them with python -m albert_act.export --checkpoint {config.model_dir} --kind pretraining "
                         "--output <another dir>")
    if not at_end:  # (another command writing it now, an export: refused now, not after the training)
        outputs.DirectoryLock(config.export_dir, "run's export", "--export_dir").acquire().release()
    if earlier is not None and not ours and not config.overwrite_export:
        gone = earlier != "an unreadable record" and not tf.io.gfile.exists(os.path.join(earlier, artifacts.CONFIG))
        raise ValueError(f"--export_dir {config.export_dir} holds the export of another run ({earlier}, per {info}"
                         + ("; no run is there now: if this run was moved from there, the export is its own" * gone)
                         + "); pass --overwrite to replace it, or give another --export_dir (e.g. a new version number)")
    artifacts.check_export_target(config.export_dir, overwrite=True if ours else config.overwrite_export,
                                  source=config.model_dir, flag="--export_dir")


def _check_model_dir(config, train_files=(), eval_files=(), replicas=1):
    """A model dir resumes only the run it holds: checkpoints need the config.json they were
    trained with, the same settings (but `RESUMABLE_CHANGES`), and the same training and held-out
    records (moved or renamed, told by their content: `_check_same_records`). A dir whose earlier
    run saved no checkpoint (it failed or was stopped before the first) starts afresh (`_start_afresh`)."""
    check_run_entries(config.model_dir, tf.io.gfile.exists, tf.io.gfile.isdir)
    path = os.path.join(config.model_dir, artifacts.CONFIG)
    checkpoints = tf.io.gfile.glob(os.path.join(config.model_dir, artifacts.CHECKPOINTS, "ckpt-*.index"))
    cut = [] if checkpoints else indexless(os.path.join(config.model_dir, artifacts.CHECKPOINTS))
    if cut:  # (a run's checkpoint, unreadable: not a run that saved none, whose files a fresh start would replace)
        raise indexless_refusal(cut[-1], f"nothing was changed: copy the whole checkpoint back to resume, or move "
                                         f"{artifacts.CHECKPOINTS}/ away to start the run anew")
    if "://" not in config.model_dir and artifacts.jax_checkpoints_on_disk(
            os.path.join(config.model_dir, artifacts.CHECKPOINTS)):
        raise ValueError(f"{config.model_dir} holds a JAX run's checkpoints; resume it with KERAS_BACKEND=jax, "
                         f"or start a new run from its weights here: --init_from {config.model_dir} --model_dir <a new "
                         "dir>")
    if not tf.io.gfile.exists(path):
        if checkpoints:
            raise artifacts.settings_lost(config.model_dir)
        others = text_files.visible_entries(config.model_dir)
        if others:  # an export, a fine-tuning dir, data, someone's files: a run would be written among them
            raise ValueError(f"--model_dir {config.model_dir} holds other files ({', '.join(others[:5])}) and no run "
                             f"({artifacts.CONFIG}); pre-train into a new or empty dir, or a run dir to resume it")
        return
    previous = run_record(path, checkpoints)
    if not artifacts.is_run_record(previous):  # a Hugging Face model's, another tool's
        raise ValueError(f"--model_dir {config.model_dir} holds a {artifacts.CONFIG} that is no pre-training run's (it "
                         "names no preset: a Hugging Face model's, another tool's?), which a run would replace; "
                         f"pre-train into a new or empty dir (to start from that model: --init_from {config.model_dir})")
    _check_own_vocabulary(config, previous, checkpoints)
    recorded = {key: previous.pop(key, None) for key in (artifacts.TRAIN_SHARDS, artifacts.EVAL_SHARDS)}
    for key, name in ((artifacts.TRAIN_SHARDS, "train_files"), (artifacts.EVAL_SHARDS, "eval_files")):
        if recorded[key] is None and previous.get(name):  # a run saved before they were recorded: its files,
            recorded[key] = artifacts.shard_fingerprints(previous[name]) or None  # where they are still there
    if checkpoints:
        _check_same_records(config, path, recorded, train_files, eval_files)
    current = config_record(config)
    previous = {**ADDED_SETTINGS, **previous}
    differing = changed_settings(previous, current)
    if not checkpoints:  # (deleted from a finished run: its results are kept, not replaced by a fresh start's)
        check_results_kept(config.model_dir, previous.get("checkpoint_every", config.checkpoint_every))
    if differing:
        if not checkpoints:
            details = ", ".join(f"{k}: {there!r} there, {now!r} now" for k, there, now in differing)
            return _start_afresh(config.model_dir, f" with these settings ({details})")
        raise another_run(config.model_dir, differing)
    if not checkpoints:
        _start_afresh(config.model_dir)
    else:
        check_own_updates(os.path.join(config.model_dir, artifacts.CHECKPOINTS), config.steps)
        _check_eval_batches(config, previous.get("eval_batches"), eval_files, replicas)


def _check_eval_batches(config, before, eval_files, replicas):
    """A run evaluated before on other held-out batches than `config.eval_batches` asks is refused
    (`artifacts.other_eval_batches`); batches past the eval shard's end are none (1,000 of a 71-batch shard: the whole)."""
    now = config.eval_batches
    if before == now or not evaluated(config.model_dir):
        return
    batch = config.micro_batch_size * replicas
    records = count_records(eval_files, max(b for b in (before, now) if b is not None) * batch + 1) if eval_files else 0
    if not all(b is None or b * batch >= records for b in (before, now)):
        raise ValueError(artifacts.other_eval_batches(config.model_dir, before, now))


def _check_own_vocabulary(config, previous, checkpoints):
    """ValueError where --vocab is not the run's own copy (its vocab.model); where that copy is the one at fault
    (another size than the run's model, or damaged) and --vocab is of the model's size, the copy is named."""
    own_vocab = os.path.join(config.model_dir, artifacts.VOCAB)
    if checkpoints and config.vocab and tf.io.gfile.exists(own_vocab) and \
            tf.io.gfile.GFile(own_vocab, "rb").read() != tf.io.gfile.GFile(config.vocab, "rb").read():
        backbone, own, given = previous.get("backbone"), _pieces(own_vocab), _pieces(config.vocab)
        size = backbone.get("vocabulary_size") if isinstance(backbone, dict) else None
        if size and own != size and given == size:  # (the run's copy replaced or damaged since, not the --vocab)
            raise ValueError(f"{own_vocab}, the run's copy of its vocabulary, is " + (
                f"of {own:,} pieces, where the run's model has {size:,}" if own else "not a readable vocabulary") +
                f": replaced or damaged since the run saved it; put the run's own vocabulary back (--vocab "
                f"{config.vocab} has its {size:,} pieces: cp {config.vocab} {own_vocab}, if it is that one)")
        raise ValueError(f"--vocab {config.vocab} is not the vocabulary {config.model_dir} was trained with "
                         f"({own_vocab}); resume with that one, or use a new --model_dir")


def _pieces(path):
    """How many pieces the SentencePiece model in `path` holds; 0 where it does not read as one."""
    from pipelines.tokenizer import Tokenizer

    try:
        return Tokenizer.from_file(path).vocabulary_size
    except (ValueError, OSError):
        return 0


def evaluated(model_dir):
    """Whether a run dir holds a held-out evaluation (its curve, or its end's)."""
    return any(tf.io.gfile.exists(os.path.join(model_dir, name)) for name in (artifacts.HELD_OUT_CURVE,
                                                                               artifacts.EVALUATION))


def _start_afresh(model_dir, how=""):
    """A run dir whose earlier run saved no checkpoint: said, and that run's TensorBoard events and
    held-out curve removed (they belong to no weights, and would mix two runs' curves)."""
    stale = [name for folder in (artifacts.TRAIN_EVENTS, artifacts.EVAL_EVENTS)
             for name in tf.io.gfile.glob(os.path.join(model_dir, folder, "events.out.tfevents.*"))]
    curve = os.path.join(model_dir, artifacts.HELD_OUT_CURVE)
    if tf.io.gfile.exists(curve):
        stale.append(curve)
    for name in stale:
        tf.io.gfile.remove(name)
    removed = f"; its {len(stale)} TensorBoard and held-out files removed" if stale else ""
    print(f"note: {model_dir}: its earlier run saved no checkpoint; starting afresh{how}{removed}", file=sys.stderr)


def _check_same_records(config, path, recorded, train_files, eval_files):
    """A resumed run reads the records it was trained and evaluated on, told by their content (a moved
    or renamed copy is the same): `recorded` holds config.json's fingerprints of each (None: not recorded)."""
    for key, files, flag, patterns in ((artifacts.TRAIN_SHARDS, train_files, "--train_files", config.train_files),
                                       (artifacts.EVAL_SHARDS, eval_files, "--eval_files", config.eval_files)):
        known = recorded[key]
        if known is None or not files:
            continue
        if not isinstance(known, list) or not all(isinstance(k, list) and len(k) == 2 and isinstance(k[0], int)
                                                  and isinstance(k[1], str) for k in known):
            raise ValueError(f"{path}: its {key} is damaged (not a list of [length, SHA-256] pairs): restore the file, "
                             "or use a new --model_dir")
        known = {tuple(k) for k in known}
        matched = dict(artifacts.trained_on(files, known))  # each file's content read once
        other = [f for f in files if f not in matched]
        lacking = len(known - set(matched.values()))
        if not other and not lacking:
            continue
        found = (f"{other[0]}{f' (and {len(other) - 1} more)' if len(other) > 1 else ''} is not one of them" if other
                 else f"{lacking} of them are not among these files")
        what, advice = (("trained on", "resume with the records it was trained on") if key == artifacts.TRAIN_SHARDS
                        else ("evaluated on", "its held-out curve would mix two held-out sets: resume with the records "
                              "it was evaluated on (evaluate others with python -m albert_act.analyze held-out --init "
                              f"{config.model_dir} --records ...)"))
        raise ValueError(f"{config.model_dir} was {what} other records than {flag} {', '.join(patterns)} ({path} "
                         f"records the content of {len(known)} shards; {found}): {advice}, or use a new --model_dir")
