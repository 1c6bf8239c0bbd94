"""What every command line shares: a quiet start, `--verbose`, and `--help` with defaults.

Quiet by default: TensorFlow's start-up noise is off unless `--verbose`. On a CPU machine
TensorFlow's C++ prints, while it loads, absl's pre-initialisation warning, "Could not find cuda
drivers", a `cuInit` error and CPU-feature banners, whatever TF_CPP_MIN_LOG_LEVEL says. So every
command's `main()` calls `quiet_start(argv)` first, which loads TensorFlow with file descriptor 2
pointed at /dev/null (`load_tensorflow`), and sets TF_CPP_MIN_LOG_LEVEL=3 and the Python loggers
to errors for what comes later. Commands that need no TensorFlow pass `tensorflow=False`; the
one place they might load it (a gs:// path in `text_files`) goes through `load_tensorflow` too.
ALBERT_ACT_QUIET=1 marks a quiet command and is inherited by worker processes. Real errors still
reach the user: Python exceptions, and everything the command prints.
"""

import argparse
import contextlib
import importlib.util
import os
import sys

from albert_act.base import checks, write_failures

VERBOSE_FLAG = "--verbose"


@contextlib.contextmanager
def _stderr_to_devnull():
    if sys.stderr is None:  # descriptor 2 closed (`2>&-`): nothing to quiet
        yield
        return
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    _REAL_STDERR.append(saved)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        _REAL_STDERR.remove(saved)
        os.close(devnull)
        os.close(saved)


_REAL_STDERR = []  # the user's stderr while descriptor 2 points at /dev/null (`_stderr_to_devnull`)


def hold_closed_descriptors():
    """/dev/null on each of descriptors 0-2 that is closed (`>&-`): the next file opened would take its
    number, and what a library or a child writes to "the standard error" would land in that file."""
    for descriptor in (0, 1, 2):
        try:
            os.fstat(descriptor)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one, as those below are open


def quiet_stderr():
    """Descriptor 2 to /dev/null for a block, in a quiet command (ALBERT_ACT_QUIET=1) only: for
    C++ libraries that log whatever the level (SentencePiece's INFO line as it loads a model)."""
    return _stderr_to_devnull() if os.environ.get("ALBERT_ACT_QUIET") == "1" else contextlib.nullcontext()


def jax_backend():
    """Whether Keras runs on JAX here (KERAS_BACKEND=jax, or keras.json's): pre-training then needs no TensorFlow."""
    return checks.keras_backend()[0] == "jax"


def tensorflow_only(command):
    """Ends `command` with one line when Keras runs on JAX here: it builds TensorFlow graphs (fine-tuning,
    the analyses, SavedModels), which a JAX backend's tensors cannot enter (a traceback deep in Keras)."""
    if jax_backend():
        sys.exit(f"error: {command} runs on Keras's TensorFlow backend, and {checks.keras_backend()[1]} says jax here: "
                 "run it with KERAS_BACKEND=tensorflow (pre-training, python -m albert_act.pretrain, runs on both; its "
                 "checkpoints are read here alike)")


def quiet_start(argv=None, tensorflow=True):
    """The first call of a command's `main(argv)`: quiet unless `--verbose` is in `argv` (default:
    sys.argv[1:]); run from its command line (argv None), stopped by Ctrl-C or SIGTERM with one line at
    any moment (`stop_on_interrupt`, `stop_on_sigterm`). With `tensorflow` (a command that builds the
    model): a KERAS_BACKEND other than tensorflow or jax refused in one line (Keras's refusal is a
    traceback), and TensorFlow loaded now (`load_tensorflow`), on JAX where installed (Keras imports it)."""
    if argv is None:
        hold_closed_descriptors()
        stop_on_interrupt()
        stop_on_sigterm()
    backend, said = checks.keras_backend()
    if tensorflow and backend not in ("", "tensorflow", "jax"):  # Keras takes an empty one as unset
        sys.exit(f"error: {said} says the backend is {backend!r} here: albert-act runs on Keras's tensorflow backend, "
                 "and pre-training also on jax (KERAS_BACKEND=jax); set KERAS_BACKEND to one of those")
    if VERBOSE_FLAG in (sys.argv[1:] if argv is None else argv):
        os.environ.pop("ALBERT_ACT_QUIET", None)
    else:
        os.environ["ALBERT_ACT_QUIET"] = "1"
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    if tensorflow and (not jax_backend() or importlib.util.find_spec("tensorflow") is not None):
        load_tensorflow()


def load_tensorflow():
    """`import tensorflow` (returned), in a quiet command with descriptor 2 pointed at /dev/null
    while it loads and probes the devices, then its Python loggers at errors only."""
    if "tensorflow" not in sys.modules:
        with quiet_stderr():
            import tensorflow as tf

            tf.config.list_physical_devices()  # device probing (the cuInit error) happens here
    import tensorflow as tf

    if os.environ.get("ALBERT_ACT_QUIET") == "1":
        import absl.logging

        tf.get_logger().setLevel("ERROR")  # retracing warnings and the like
        absl.logging.set_verbosity(absl.logging.ERROR)
    return tf


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The module docstring as written, and every option's default: argparse's "(default: X)", unless the
    help already says what the default is, or there is none to show (None, a switch that is off)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return super()._get_help_string(action)


def parser(verb, doc, package="albert_act"):
    """The ArgumentParser of `python -m <package>.<verb>`, with --verbose."""
    result = argparse.ArgumentParser(prog=f"python -m {package}.{verb}", description=doc, formatter_class=HelpFormatter)
    result.add_argument(VERBOSE_FLAG, action="store_true",
                        help="show TensorFlow's start-up messages and warnings (hidden by default)")
    from albert_act.base import checks

    return checks.negative_numbers_are_values(result)


# Ctrl-C at any moment: inside a `failures` block (the work), KeyboardInterrupt, which the block turns into its
# "stopped: <what was kept>" line; outside one (start-up, parsing, the final printing) in a command run from its
# command line, a line at once. [open blocks, whether a block has ended, whether this is a command line's process].
_WORK = [0, False, False]
# The signal raised as KeyboardInterrupt and not yet turned into a "stopped" line (None: none). Where an exception
# would be printed and dropped (a gc callback, such as JAX's, or a __del__) or garbled (TensorFlow's Python, called
# from its C++), the signal is sent again from outside; a block that ends with one pending says "stopped" all the same.
_PENDING = [None]
# What a stop says in each open `failures` block (innermost last), for `_watchdog`; when `_interrupt` last ran,
# and when it first put off a stop (in TensorFlow's tracing or loading: `_in_ignored_context`).
_STOP_MESSAGES = []
_HANDLED_AT = [None, None]
# How long a signal may wait for the interpreter before `_watchdog` ends the process itself (seconds).
STOP_GRACE = 5.0
_STOPS = ("SIGINT", "SIGTERM", "SIGHUP")  # the signals a command stops on (SIGHUP: its terminal closed)


def _interrupt(signum, frame):
    import time

    _HANDLED_AT[0] = time.monotonic()
    if _WORK[0] or not _WORK[2]:  # the work, or a notebook's call of main(): what `failures` or the caller says
        _PENDING[0] = signum
        if _in_ignored_context(frame):
            import threading

            first = _HANDLED_AT[1] = _HANDLED_AT[1] or _HANDLED_AT[0]
            if _WORK[2] and _HANDLED_AT[0] - first > STOP_GRACE:  # a slow tracing (a loaded machine) puts it off
                _stop_now(_stop_line())  # that long: the command ends as `_watchdog` ends a long native call
            threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()  # lands in the next bytecode outside
            return
        _HANDLED_AT[1] = None
        raise KeyboardInterrupt(f"signal {signum}")
    # Outside the work, an exception could land in an import (TensorFlow's, half done: the exit may crash): the line
    _stop_now()


def _stop_now(said=None):
    """The "stopped" line (by default what is true outside any work) on the user's stderr; status 130, no teardown."""
    if said is None:
        said = ("what was written is whole (every output is replaced whole)" if _WORK[1] else
                "before any work: nothing was written")
    with contextlib.suppress(OSError, ValueError, AttributeError):  # a closed or broken stream, or none
        sys.stdout.flush()
    os.write(_REAL_STDERR[0] if _REAL_STDERR else 2, f"stopped: {said}\n".encode())
    os._exit(130)


def _watchdog(descriptor):
    """Python runs a signal's handler only between bytecodes of the main thread: while that thread is inside one
    long native call (XLA compiling a step, one training step of a large model) Ctrl-C would wait for it, a minute
    or more. Python's C-level handler writes each signal's number to `descriptor` (`signal.set_wakeup_fd`) at once;
    when the handler has not run `STOP_GRACE` seconds later, this thread says the stop's line and ends the process,
    as a SIGKILL would but with the line. That is safe where a SIGKILL is: every output is written whole and renamed
    into place, and a lock left by a dead process is taken over."""
    import signal
    import time

    while True:
        try:
            numbers = os.read(descriptor, 64)
        except OSError:
            return
        if not numbers:
            return
        read = time.monotonic()
        if not any(signal.Signals(n).name in _STOPS and signal.getsignal(n) is _interrupt for n in numbers):
            continue  # another signal that has a Python handler (someone else's)
        time.sleep(STOP_GRACE)
        # The handler may run before this thread reads the number (the main thread was in Python): it ran "for
        # this signal" when it ran at most a second before the read, or since
        if (_HANDLED_AT[0] is not None and _HANDLED_AT[0] >= read - 1.0) or not _WORK[2]:
            continue
        _stop_now(_stop_line())


def _stop_line():
    """What the innermost open work says when stopped, or None outside any (`_stop_now`'s own line then)."""
    return _said(_STOP_MESSAGES[-1]) if _STOP_MESSAGES else None


def _said(message):
    """`message`, or what the function `message` returns (what a run has kept by then)."""
    try:
        return message() if callable(message) else message
    except Exception:  # noqa: BLE001 (what is on disk cannot be read now: a full disk, a lost bucket)
        return "what was written before is on disk as it was"


_WATCHING = [False]


def _start_watchdog():
    """`_watchdog` on a wakeup descriptor of its own, once per process, and only where nothing else
    (an event loop: a notebook's kernel) already uses Python's wakeup descriptor."""
    import signal
    import threading

    if _WATCHING[0]:
        return
    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        os.close(read)
        os.close(write)
        return
    if previous != -1:  # someone else's: given back, and no watchdog
        signal.set_wakeup_fd(previous)
        os.close(read)
        os.close(write)
        return
    _WATCHING[0] = True
    threading.Thread(target=_watchdog, args=(read,), name="albert-act-stop", daemon=True).start()


def _in_ignored_context(frame):
    """Whether `frame` runs a gc callback, a finalizer or a weak reference's callback (JAX's caches, the import
    system's module locks), where a raised exception is printed and dropped; or TensorFlow's own Python while it
    loads a SavedModel, or any Python it traces into a graph (its C++ calls both), where it becomes a RuntimeError's
    traceback, or a crash. Elsewhere the stop is raised: deferred, it never landed."""
    import gc

    code, tf = getattr(frame, "f_code", None), getattr(sys.modules.get("tensorflow"), "__file__", None)
    name = code.co_filename if code is not None else ""
    return code is not None and (code.co_name == "__del__" or name.endswith(("weakref.py", "_weakrefset.py")) or
                                 (name == "<frozen importlib._bootstrap>" and code.co_name in (  # (raised there, a
                                     "cb", "acquire", "release", "_lock_unlock_module")) or  # lock is left: KeyError)
                                 (tf is not None and _called_by_tensorflow(frame, os.path.dirname(tf), name)) or
                                 any(code is getattr(callback, "__code__", None) for callback in gc.callbacks))


def _called_by_tensorflow(frame, tf, name):  # tf.saved_model.load below a frame of TF's own, or a tracing below any
    in_tf = name.startswith(tf + os.sep)
    while frame is not None:
        code = frame.f_code
        if (in_tf and code.co_name in ("load", "load_partial") and code.co_filename.startswith(
                os.path.join(tf, "python", "saved_model") + os.sep)) or code.co_name == "func_graph_from_py_func":
            return True
        frame = frame.f_back
    return False


def stop_on_interrupt():
    """Ctrl-C (SIGINT) ends the command with one line and status 130 at any moment, never a traceback:
    during the work (a `failures` block) through its KeyboardInterrupt, which says what was kept;
    before it (TensorFlow loading, the flags being read) or after it, at once."""
    import signal

    _WORK[2] = True
    try:
        signal.signal(signal.SIGINT, _interrupt)
    except ValueError:  # not the main thread (e.g. called from a notebook's worker): nothing to do
        return
    _start_watchdog()


def stop_on_sigterm():
    """SIGTERM (a `kill`, a scheduler's stop, Colab's runtime reset), and SIGHUP (its terminal closed; not under
    nohup), stop the command as Ctrl-C does (`stop_on_interrupt`): one `except KeyboardInterrupt` says what was
    saved, and `finally` blocks release the run's lock and remove staging dirs."""
    import signal

    with contextlib.suppress(ValueError):  # not the main thread (e.g. called from a notebook's worker): nothing to do
        signal.signal(signal.SIGTERM, _interrupt)
        if hasattr(signal, "SIGHUP") and signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:  # (not under nohup)
            signal.signal(signal.SIGHUP, _interrupt)


def parse_checked(parser, argv, rules):
    """`parser.parse_args(argv)`, then `check_flags(args, rules)`; each flag of `rules` shows its range
    in --help ("... (default: 8); an integer in [1, 100000]"), a path flag (rule `checks.PATH`) given
    an empty string is refused (it would name the current folder, or no file), and a path value
    starting with `~` is expanded (`--output_dir=~/x`, which the shell leaves as it is)."""
    from albert_act.base import checks

    for action in parser._actions:
        rule = rules.get(action.dest)
        if rule is not None and (rule[0] if isinstance(rule, tuple) else rule) != checks.PATH and \
                action.help != argparse.SUPPRESS:  # a hidden flag stays hidden
            words = checks.flag_rule(rule[0] if isinstance(rule, tuple) else rule)[0]
            shown = action.help if action.help and "default" in action.help else (
                f"{action.help + ' ' if action.help else ''}(default: {action.default})")
            action.help = f"{shown}; {words}" if action.default is not None else f"{action.help or ''}; {words}"
    for action in parser._actions:  # a list flag given twice: argparse keeps the last list, the first one dropped
        if action.nargs in ("+", "*") and type(action) is argparse._StoreAction:
            action.__class__ = _ListGivenOnce
    args = checks.negative_numbers_are_values(parser).parse_args(argv)
    for name in [name for name in vars(args) if name.startswith(_ListGivenOnce.MARK)]:
        delattr(args, name)
    for action in parser._actions:  # a list of choices (--precisions float32 float32): each measured once
        values = getattr(args, action.dest, None) if action.choices and action.nargs in ("+", "*") else None
        if values and len(set(values)) < len(values):
            twice = next(v for i, v in enumerate(values) if v in values[:i])
            parser.error(f"{action.option_strings[0]} gives {twice} twice: each value is measured once; give it once")
    check_flags(args, rules)
    for name, value in vars(args).items():  # `--output_dir=~/x` reaches us unexpanded (the shell expands `~` only
        if isinstance(value, str) and value.startswith("~"):  # at a word's start): not a folder named "~"
            setattr(args, name, os.path.expanduser(value))
        elif isinstance(value, list) and any(isinstance(v, str) and v.startswith("~") for v in value):
            setattr(args, name, [os.path.expanduser(v) if isinstance(v, str) else v for v in value])
    return args


class _ListGivenOnce(argparse._StoreAction):
    """A flag that takes a list (--input A B), refused when given twice (--input A --input B): argparse would keep
    B alone, and A would be dropped without a word."""
    MARK = "_given_once_"

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.MARK + self.dest, False):
            parser.error(f"{option_string} is given twice: the second list would replace the first; give all its "
                         f"values after one {option_string} ({option_string} A B C)")
        setattr(namespace, self.MARK + self.dest, True)
        super().__call__(parser, namespace, values, option_string)


def check_flags(args, rules):
    """`checks.flags` on parsed arguments, before any work: a bad value ends the command with one
    "error: --flag must be ..., got value" line (exit status 1)."""
    from albert_act.base import checks

    try:
        checks.flags(args, rules)
    except ValueError as error:
        sys.exit(f"error: {error}")


@contextlib.contextmanager
def failures(output, kept, stopped_message, refusals=(ValueError,), explain=None):
    """Every command's one error tail, around the work of its `main()`: never a traceback.

    - a refusal (`refusals`: a bad input, a lock held by another run) -> "error: <message>", exit 1;
    - a write the system refused or a file that does not read whole (`write_errors()`) -> the line of
      `io_failure(error, output, kept)`, exit 1;
    - Ctrl-C, SIGTERM or SIGHUP (`stop_on_sigterm`) -> `stopped(stopped_message)`, exit 130.
    `kept` and `stopped_message` may be functions, asked when the failure comes (what a long run has kept by
    then, e.g. its newest checkpoint). explain: message -> message, for a refusal (where a path of a --config
    file came from: `settings.explained`)."""
    if not _WORK[0]:
        _PENDING[0] = None  # one that a notebook's caller was given before this work
    _WORK[0] += 1
    _STOP_MESSAGES.append(stopped_message)
    try:
        yield
        if _PENDING[0] is not None:  # a stop that something swallowed: the work ended, the stop still holds
            raise KeyboardInterrupt(f"signal {_PENDING[0]}")
    except refusals as error:
        if _PENDING[0] is None:  # (else a stop that a library turned into its own error, as Keras building a model)
            sys.exit(f"error: {explain(str(error)) if explain else error}")
        _ignore_interrupts()
        _PENDING[0] = None
        stopped(_said(stopped_message))
    except write_failures.write_errors() as error:
        sys.exit(f"error: {write_failures.io_failure(error, output, _said(kept))}")
    except KeyboardInterrupt:
        _ignore_interrupts()  # a second Ctrl-C while the line is composed: the same one line
        _PENDING[0] = None
        stopped(_said(stopped_message))
    finally:
        _STOP_MESSAGES.pop()
        _WORK[0] -= 1
        _WORK[1] = True
        if not _WORK[0]:  # the command's output locks (`outputs.hold`) go with its work
            importlib.import_module("albert_act.base.outputs").release_held()


def _ignore_interrupts():
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        for number in (getattr(signal, name) for name in _STOPS if hasattr(signal, name)):
            if signal.getsignal(number) is _interrupt:  # a command line's (not a notebook's or a test's)
                signal.signal(number, signal.SIG_IGN)


@contextlib.contextmanager
def exit_at_once_when_stopped():
    """A stop (`stopped`'s exit 130) inside ends the process at once, streams flushed, without the
    interpreter's teardown: on the JAX backend, Ctrl-C during a compilation leaves XLA's compiler
    threads running, and tearing the interpreter down beside them crashes it (a segmentation fault
    after the "stopped" line); on TensorFlow, a large run's teardown (its input pipelines' buffers)
    took minutes after the line. Whatever the run wrote is already whole (checkpoints, held-out
    lines, TensorBoard events: each writer flushes its own) and its lock released."""
    try:
        yield
    except SystemExit as stop:
        if stop.code != 130:
            raise
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):  # a closed or broken stream, or none
                stream.flush()
        os._exit(130)


def stopped(message):
    """Ends a stopped command: one line on stderr, what was kept and how to go on; status 130 (SIGINT's)."""
    sys.stderr.write(f"stopped: {message}\n")
    sys.exit(130)


def _run_as_a_command():
    """Whether the process runs one of the project's commands (`python -m pipelines.train_tokenizer`): runpy
    names the module in `__main__` before it runs the module's imports."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    return spec is not None and spec.name.partition(".")[0] in ("albert_act", "pipelines", "benchmarks")


if _run_as_a_command():  # a stop during the command's own imports (numpy, sentencepiece: a second) says its line
    stop_on_interrupt()
    stop_on_sigterm()
