"""How a command's `main()` runs from its command line (`if __name__ == "__main__": entry.run(main)`):
with a standard output that can fail without failing the work.

A standard output that cannot be written (`> /dev/full`, a log file on a full disk, a pipe whose
reader has ended: `| head -1`) does not stop the work, nor is it blamed on the work's own files
(`Guarded`): the first failed write is kept, descriptor 1 goes to /dev/null, and the work goes on
to its end (Ctrl-C still stops it, with its own line). Then one line says what was lost, and the
exit status is 1 where the work would have ended with 0. Stopping at a failed print would leave
the work half done, at a moment no message about its files could describe.
"""

import os
import sys

NAME = "the standard output"
_LOST = []  # the first failed write of the standard output not yet said: [OSError]


class Guarded:
    """`stream` (sys.stdout), whose failed writes and flushes are kept in `_LOST` instead of raised, after
    which its descriptor points at /dev/null (what is buffered or printed later goes nowhere, and
    Python's own flush at exit succeeds)."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except OSError as error:
            self._failed(error)
            return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        try:
            self.stream.flush()
        except OSError as error:
            self._failed(error)

    def __getattr__(self, name):  # isatty, fileno, encoding, buffer, ...: the stream's own
        return getattr(self.stream, name)

    def _failed(self, error):
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self.stream.fileno())
        finally:
            os.close(devnull)
        if not _LOST:
            _LOST.append(error)


def lost_line(finished=True):
    """The line for a failed write of the standard output not yet said (None: none), and it said;
    finished: whether the work ran to its end (else its own error or stop line says how it ended)."""
    if not _LOST:
        return None
    error = _LOST.pop()
    return (f"error: could not write {NAME}: {error.strerror or error}; what the command printed from then on is "
            f"lost{', and its work went on to its end' if finished else ''}")


def _ignore_stops_once_torn_down():
    """The last exit handler: from here the interpreter tears itself down (TensorFlow's modules, a second or
    more) with Python's signal handlers gone, so Ctrl-C would kill it by default, without a word and with
    status 130, after the command had printed its result and ended. Ignored instead: the process ends as
    the command did. (Before this, during the command's own exit handlers, a stop says its line.)"""
    import signal

    for number in (signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])):
        signal.signal(number, signal.SIG_IGN)


def run(main):
    """`main()` with sys.stdout `Guarded` (unless it is closed, `>&-`: None); then, where a write to it
    failed, `lost_line()` on stderr, and exit status 1 where `main` ended with 0. A file's or a remote
    path's error (`write_failures.write_errors()`) raised before the command's `cli.failures` is its one
    line; any other exception that ends `main` goes on up as it is."""
    import atexit

    from albert_act.base import cli, write_failures

    atexit.register(_ignore_stops_once_torn_down)  # registered first: run last, as the teardown starts
    cli.hold_closed_descriptors()
    if sys.stdout is not None and not isinstance(sys.stdout, Guarded):
        sys.stdout = Guarded(sys.stdout)
    status = "raised"  # main's exit status; an exception other than SystemExit goes on up as it is
    try:
        main()
        status = 0
    except SystemExit as exit_:
        status = exit_.code
        raise
    except write_failures.write_errors() as error:  # raised before the command's `cli.failures` (a remote --init)
        status = 1
        sys.exit(f"error: {write_failures.io_failure(error, 'its output', 'nothing was written')}")
    finally:
        if sys.stdout is not None:
            sys.stdout.flush()  # what is still buffered: a short output fails only here
        line = lost_line(finished=status in (0, None))
        if line is not None:
            if sys.stderr is not None:  # print(file=None) would write to sys.stdout
                print(line, file=sys.stderr)
            if status in (0, None):
                sys.exit(1)
