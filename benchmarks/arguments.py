"""What the benchmarks' command lines share: NAME=VALUE arguments, each NAME a row of a table and a
folder of --output_dir, and the one tail that runs a benchmark's work."""

import contextlib
import json
import os
import re
import sys

from albert_act.base import artifacts, cli


def named(items, what, example):
    """{NAME: VALUE} of NAME=VALUE arguments, in their order; ValueError for one without its '=', an
    empty name or value, a name that is no folder name, or a name given twice. what: what VALUE is
    ("a pre-training run dir"); example: one whole argument ("demo=runs/demo")."""
    values = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name or not value or os.path.exists(item) and (
                "/" in name or not os.path.exists(value)):  # ("runs/lr=3e-4": a path with an '=', no name)
            path = " (a path, whose '=' ends no name)" if os.path.exists(item) else ""
            raise ValueError(f"{item!r}{path}: give NAME=VALUE, a name and {what} (e.g. {example})")
        if not re.fullmatch(r"[\w.+-]+", name) or name in (".", ".."):
            dots = " and not '.' or '..' alone, which name a folder's own and its parent" if name in (".", "..") else ""
            raise ValueError(f"{item!r}: the name {name!r} must be letters, digits, '_', '-', '+' or '.'{dots} (it "
                             "names a row of the table and a folder in --output_dir)")
        if name in values:
            raise ValueError(f"the name {name!r} is given twice ({values[name]} and {value}): one row per name")
        values[name] = value
    return values


NOTHING_WRITTEN = "nothing was written"


def refusal(error, output):
    """The "error:" line of a check made before a benchmark's work: a refusal (ValueError) in its own words; a folder
    the system will not write (read-only, no room for the lock: an OSError) named as `output` (`io_failure`)."""
    from albert_act.base import write_failures

    if isinstance(error, ValueError):
        return f"error: {error}"
    return f"error: {write_failures.io_failure(error, output, NOTHING_WRITTEN)}"


def run(work, *args, output=None, kept=NOTHING_WRITTEN, stopped=None):
    """`work(*args)` as a benchmark's `main()` runs it, after its flags are checked: Ctrl-C or SIGTERM
    stops it with one line (`stopped`, default `kept`) and exits at once, without TensorFlow's or XLA's
    teardown (`cli.exit_at_once_when_stopped`); a refusal or a failed write gives one line that names
    `output` (default: the standard output, where the table goes) and says what is `kept` (`cli.failures`)."""
    if sys.stdout is None:  # started with descriptor 1 closed (>&-): print() would drop the table without a word
        sys.exit("error: the standard output is closed: the benchmark prints its table there")
    cli.stop_on_interrupt()
    cli.stop_on_sigterm()
    output = "the standard output" if output is None else output
    with cli.exit_at_once_when_stopped(), cli.failures(output, kept, kept if stopped is None else stopped):
        return work(*args)


def fine_tunings(output_dir, work, *args):
    """`run` for a benchmark that fine-tunes into `output_dir`: its stop line says how to go on."""
    kept = ("its results.json was not written; the fine-tunings done so far are in --output_dir: re-run the same "
            "command with --overwrite")
    return run(work, *args, output=output_dir, kept=kept)


def write_whole(output_dir, writers):
    """Writes a benchmark's result files into `output_dir` in one step: `writers` {file name: write(path)} write
    them into a staging dir beside it, which then replaces `output_dir` whole (`staged_result`)."""
    import os

    with staged_result(output_dir) as staged:
        for name, write in writers.items():
            write(os.path.join(staged, name))


@contextlib.contextmanager
def staged_result(output_dir):
    """A new folder, beside `output_dir`, for a benchmark's results; when the block ends without an error, it
    replaces `output_dir` whole (`outputs.replace_dir`): a stop or a full disk leaves the earlier result, never a
    mix of the two."""
    import os

    from albert_act.base import outputs

    target = outputs.followed(output_dir)
    with outputs.staging_dir(os.path.dirname(target)) as staging:
        staged = os.path.join(staging, "result")
        os.makedirs(staged)
        yield staged
        outputs.release_held(inside=staged)  # an analysis written in it: its lock, beside it, is not moved too
        outputs.replace_dir(staged, target, staging)


def said_when_stopped(output_dir, file_name):
    """The stop line (`run`'s `stopped`) of a benchmark that writes `output_dir` whole (`staged_result`), one of
    whose files is `file_name`: whether the new result was moved into place just before the stop, or not."""
    import os

    from albert_act.base import text_files

    written = text_files.replaced_since(os.path.join(output_dir, file_name))
    return lambda: (f"the new result is in {output_dir}, written whole just before the stop" if written() else
                    f"{NOTHING_WRITTEN} (an earlier result in {output_dir}, if any, is intact)")


HELD_OUT_SETTINGS = ("eval_files", "eval_batches", "global_batch_size", "backend")  # what picks a run's held-out batches


def _eval_shards(config):
    """The fingerprints of a run's held-out shards: its config.json's, or (a JAX run records none) those of the files
    its eval_files match here."""
    if config.get(artifacts.EVAL_SHARDS):
        return config[artifacts.EVAL_SHARDS]
    files = config.get("eval_files")
    files = [files] if isinstance(files, str) else files if isinstance(files, list) else []
    return artifacts.shard_fingerprints([f for f in files if isinstance(f, str)])


def held_out_settings(one, other):
    """'; their config.json differ in ...' where both are run dirs whose held-out settings differ; else ''."""
    configs = []
    for part in (one, other):
        try:
            with open(os.path.join(part, artifacts.CONFIG), encoding="utf-8") as f:
                configs.append(json.load(f))
        except (OSError, ValueError):
            return ""
    values = [[config.get(key, "tensorflow" if key == "backend" else None) for key in HELD_OUT_SETTINGS]
              for config in configs]  # (a run of the TensorFlow backend records none)
    shards = [_eval_shards(config) for config in configs]
    same_shards = shards[0] and shards[0] == shards[1]  # a glob and the one shard it matches are one setting
    differ = [f"{key} {a!r} against {b!r}" for key, a, b in zip(HELD_OUT_SETTINGS, *values)
              if a != b and not (key == "eval_files" and same_shards)]
    return f"; their runs' config.json differ in {', '.join(differ)}" if differ else ""


def check_curve_agrees(file, point, final):
    """ValueError where a run's curve line `point` (read from `file`) is of its final evaluation's update (`final`,
    evaluation.json's) with other accuracies: one of the two copied from another run, or edited."""
    if final.get("step") == point.get("step") and any(
            isinstance(final.get(k), (int, float)) and isinstance(point.get(k), (int, float)) and abs(
                final[k] - point[k]) > 1e-6 for k in ("mlm_accuracy", "sop_accuracy")):
        raise ValueError(f"{file}: its evaluation of update {point['step']:,} (MLM {point['mlm_accuracy']:.3f}, SOP "
                         f"{point['sop_accuracy']:.3f}) is not the run's own of that update in {artifacts.EVALUATION} "
                         f"(MLM {final['mlm_accuracy']:.3f}, SOP {final['sop_accuracy']:.3f}): one of the two is "
                         "another run's, copied in, or edited; give a run whose curve and evaluation agree")
