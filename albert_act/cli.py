"""What every command line shares: a quiet start, `--verbose`, and `--help` with defaults.

Quiet by default: TensorFlow's start-up noise is off unless `--verbose`.

On a CPU machine TensorFlow prints, while it loads, a CUDA `cuInit` error, oneDNN and CPU-feature
banners: C++ writes to file descriptor 2 before any log level applies, once per process (the
data tool's workers too). `silence` loads TensorFlow with descriptor 2 pointed at /dev/null,
then keeps only errors from TensorFlow's loggers (retracing warnings included). It sets
ALBERT_ACT_QUIET=1, which worker processes inherit: `pipelines/__init__.py` silences them too.
Real errors still reach the user: Python exceptions, and everything printed after the load.
"""

import argparse
import contextlib
import importlib.abc
import importlib.util
import os
import sys

VERBOSE_FLAG = "--verbose"


@contextlib.contextmanager
def _stderr_to_devnull():
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)


def quiet_stderr():
    """Descriptor 2 to /dev/null for a block, in a quiet command (ALBERT_ACT_QUIET=1) only."""
    return _stderr_to_devnull() if os.environ.get("ALBERT_ACT_QUIET") == "1" else contextlib.nullcontext()


def silence(verbose=None):
    """TensorFlow loads quietly from now on, unless verbose (default: `--verbose` in sys.argv).

    Nothing is imported here: the first `import tensorflow` (now, or never) runs with descriptor 2
    pointed at /dev/null, through `_QuietImport`; a process that never needs TensorFlow (the data
    tool's workers) never loads it.
    """
    verbose = VERBOSE_FLAG in sys.argv[1:] if verbose is None else verbose
    if verbose:
        os.environ.pop("ALBERT_ACT_QUIET", None)
        return
    os.environ["ALBERT_ACT_QUIET"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if "tensorflow" in sys.modules:
        _quiet_loggers()
    elif not any(isinstance(finder, _QuietImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _QuietImport())


def _quiet_loggers():
    import absl.logging
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")  # retracing warnings and the like
    absl.logging.set_verbosity(absl.logging.ERROR)


class _QuietImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `tensorflow` once: imports it with stderr silenced, then hands that module over."""

    def find_spec(self, name, path=None, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)
        with _stderr_to_devnull():
            module = importlib.import_module("tensorflow")
            module.config.list_physical_devices()  # device probing (the cuInit error) happens here
        _quiet_loggers()
        self.module, self.spec = module, module.__spec__
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__, module.__loader__ = self.spec, self.spec.loader  # TensorFlow's own, as imported


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The module docstring as written, and every option's default."""


def parser(verb, doc, package="albert_act"):
    """The ArgumentParser of `python -m <package>.<verb>`, with --verbose."""
    result = argparse.ArgumentParser(prog=f"python -m {package}.{verb}", description=doc, formatter_class=HelpFormatter)
    result.add_argument(VERBOSE_FLAG, action="store_true",
                        help="show TensorFlow's start-up messages and warnings (hidden by default)")
    return result


class LogLines:
    """Progress for a log file: a plain line every `every` steps and at the end, no escapes."""

    def __init__(self, total, every):
        self.total, self.every = total, max(1, every)

    def update(self, step, values=()):
        if step % self.every == 0 or step == self.total:
            shown = " - ".join(f"{name}: {value:.4g}" for name, value in values)
            print(f"{step}/{self.total}" + (f" - {shown}" if shown else ""), flush=True)


def progress_bar(total, stateful_metrics=()):
    """Keras' progress bar on a terminal; in a log file (stdout not a terminal), `LogLines` about
    every tenth of the way, since the bar's redrawing writes escapes into files."""
    if sys.stdout.isatty():
        import keras

        return keras.utils.Progbar(total, stateful_metrics=list(stateful_metrics))
    return LogLines(total, -(-total // 10))


def stop_on_sigterm():
    """SIGTERM (a `kill`, a scheduler's stop, Colab's runtime reset) raises KeyboardInterrupt like
    Ctrl-C, so one `except KeyboardInterrupt` says what was saved, and `finally` blocks release
    the run's lock and remove staging dirs."""
    import signal

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    try:
        signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (e.g. called from a notebook's worker): nothing to do
        pass


def check_flags(args, rules):
    """`checks.flags` on parsed arguments, before any work: a bad value ends the command with one
    "error: --flag must be ..., got value" line (exit status 1)."""
    from albert_act import checks

    try:
        checks.flags(args, rules)
    except ValueError as error:
        sys.exit(f"error: {error}")


def stopped(message):
    """Ends a command stopped by Ctrl-C or SIGTERM: one line on stderr saying what was kept and
    how to go on, and exit status 130 (the shell's for SIGINT), never a traceback."""
    sys.stderr.write(f"stopped: {message}\n")
    sys.exit(130)
