"""What the benchmarks' command lines share: NAME=VALUE arguments, each NAME a row of a table and a
folder of --output_dir."""

import re

from albert_act.base import cli


def named(items, what, example):
    """{NAME: VALUE} of NAME=VALUE arguments, in their order; ValueError for one without its '=', an
    empty name or value, a name that is no folder name, or a name given twice. what: what VALUE is
    ("a pre-training run dir"); example: one whole argument ("demo=runs/demo")."""
    values = {}
    for item in items:
        name, equals, value = item.partition("=")
        if not equals or not name or not value:
            raise ValueError(f"{item!r}: give NAME=VALUE, a name and {what} (e.g. {example})")
        if not re.fullmatch(r"[\w.+-]+", name) or name in (".", ".."):
            raise ValueError(f"{item!r}: the name {name!r} must be letters, digits, '_', '-', '+' or '.' (it names "
                             "a row of the table and a folder in --output_dir)")
        if name in values:
            raise ValueError(f"the name {name!r} is given twice ({values[name]} and {value}): one row per name")
        values[name] = value
    return values


def fine_tunings(output_dir, work, *args):
    """`work(*args)` as a benchmark that fine-tunes into `output_dir` runs it: Ctrl-C or SIGTERM stops it
    with one line (at once, without TensorFlow's teardown), which says how to go on."""
    cli.stop_on_interrupt()
    cli.stop_on_sigterm()
    stopped = ("its results.json was not written; the fine-tunings done so far are in --output_dir: re-run the same "
               "command with --overwrite")
    with cli.exit_at_once_when_stopped(), cli.failures(output_dir, stopped, stopped):
        return work(*args)
