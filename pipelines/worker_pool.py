"""A process pool for the data tool: results in order, bounded memory, and a worker that dies
ending the run with a message (pipelines/create_pretraining_data.py)."""

import collections
import contextlib
import multiprocessing
import os


def batches(documents, size):
    """(index, document) pairs of `documents`, in lists of `size`."""
    batch = []
    for index, document in enumerate(documents):
        batch.append((index, document))
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _start_worker(initializer, initargs):
    """Workers leave Ctrl-C to the main process (which stops them, removes the staging dir and
    says so), instead of each printing its own KeyboardInterrupt traceback; and on Linux they die
    with it (a SIGKILL of the command leaves no orphan printing BrokenPipe tracebacks). They start
    with SIGINT blocked (`_spawning`): a Ctrl-C while they import waits, and is dropped here."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux
        pass
    if os.getppid() == 1:  # the parent died before prctl
        os._exit(0)
    initializer(*initargs)


@contextlib.contextmanager
def _spawning():
    """SIGINT blocked while the workers are spawned: they inherit the mask, so a terminal's Ctrl-C
    (sent to the whole process group) cannot interrupt their imports, before `_start_worker` ignores
    it. Here it waits the few milliseconds of the spawn, then stops the command as usual."""
    import signal

    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _result(future):
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool as error:
        what = ("a worker process failed to start" if "initializer" in str(error) else
                "a worker process died (killed, or out of memory: try fewer --workers)")
        raise ValueError(f"{what}; nothing was kept: re-run") from None


def ordered_map(fn, items, workers, initializer, initargs):
    """Like Pool.imap, but never more than 4 tasks per worker in flight (bounded memory), and a
    worker that dies (killed, out of memory) ends the run with a message instead of a hang."""
    if workers == 1:
        initializer(*initargs)
        yield from map(fn, items)
        return
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("spawn")  # workers import no TensorFlow
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker, initargs=(initializer, initargs))
    finished = False
    try:
        pending = collections.deque()
        for item in items:
            with _spawning():  # a submit may spawn a worker (one each, up to `workers`)
                pending.append(pool.submit(fn, item))
            if len(pending) >= 4 * workers:
                yield _result(pending.popleft())
        while pending:
            yield _result(pending.popleft())
        finished = True
    finally:
        pool.shutdown(wait=finished, cancel_futures=True)
