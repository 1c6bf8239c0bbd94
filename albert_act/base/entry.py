"""How a command's `main()` runs from its command line (`if __name__ == "__main__": entry.run(main)`):
with a standard output that can fail without failing the work.

A standard output that cannot be written (`> /dev/full`, a log file on a full disk) made Python's
`print` raise OSError wherever the command printed: a pre-training run whose progress line could not
be written was abandoned, and the error blamed the run's own folder, which had room; a command that
printed its summary after its files were written ended in a traceback. Here (`Guarded`) the first
failed write is kept, descriptor 1 goes to /dev/null, and the work goes on; at its end one line says
what was lost, and the exit status is 1 where the work would have ended with 0. A pipe whose reader
has ended (`| head`) stops the work instead, as a pipe's writer stops: OSError naming `NAME`, which
the work's error tail (`cli.failures`) turns into its one line.
"""

import errno
import os
import sys

NAME = "the standard output"
_LOST = []  # the first failed write of the standard output not yet said: [OSError]


class Guarded:
    """`stream` (sys.stdout), whose failed writes and flushes are kept in `_LOST` instead of raised, after
    which its descriptor points at /dev/null (what is buffered or printed later goes nowhere, and
    Python's own flush at exit succeeds). A broken pipe inside the work (`working()`) is raised as
    BrokenPipeError naming `NAME`."""

    def __init__(self, stream, working=lambda: False):
        self.stream = stream
        self.working = working

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
        if error.errno == errno.EPIPE and self.working():
            raise BrokenPipeError(errno.EPIPE, error.strerror, NAME)
        if not _LOST:
            _LOST.append(error)


def lost_line():
    """The line for a failed write of the standard output not yet said (None: none), and it said."""
    if not _LOST:
        return None
    error = _LOST.pop()
    return (f"error: could not write {NAME}: {error.strerror or error}; what the command printed from then on is "
            "lost, and its work went on to its end")


def run(main):
    """`main()` with sys.stdout `Guarded` (unless it is closed, `>&-`: None); then, where a write to it
    failed, `lost_line()` on stderr, and exit status 1 where `main` ended with 0."""
    from albert_act.base import cli

    cli.hold_closed_descriptors()
    if sys.stdout is not None and not isinstance(sys.stdout, Guarded):
        sys.stdout = Guarded(sys.stdout, working=cli.working)
    status = 0
    try:
        main()
    except SystemExit as exit_:
        status = exit_.code
        raise
    finally:
        if sys.stdout is not None:
            sys.stdout.flush()  # what is still buffered: a short output fails only here
        line = lost_line()
        if line is not None:
            if sys.stderr is not None:  # print(file=None) would write to sys.stdout
                print(line, file=sys.stderr)
            if status in (0, None):
                sys.exit(1)
