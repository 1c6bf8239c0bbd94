"""Named pipes (FIFOs) read as files: told apart, and opened once a program writes them, with a note where none
does (a reader that waits in silence on a pipe named by mistake looks hung). No TensorFlow."""

import os
import stat
import sys


def is_fifo(path):
    """Whether the local `path` is a named pipe (FIFO), or an unnamed one (/dev/stdin, a process substitution)."""
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def opened(path, mode):
    """The named pipe `path` opened for reading once a program writes it, with a note where none has for a second (a
    reader that waits in silence on a pipe named by mistake looks hung)."""
    import fcntl
    import select

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # (a blocking open would wait for a writer without a word)
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    if not poll.poll(1000):
        print(f"note: {path} is a named pipe (FIFO) that nothing has written to yet: waiting for a program to write it "
              "(Ctrl-C to stop)", file=sys.stderr, flush=True)
        poll.poll()
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return os.fdopen(fd, mode)
