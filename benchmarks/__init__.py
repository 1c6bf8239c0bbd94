"""Benchmarks: each prints a table (speed, memory, ratios against a baseline measured in the same run).
Run one as `python -m benchmarks.<name>`."""

import os
import sys

import _signal  # the interpreter's own, loaded as it starts (`signal` takes milliseconds to import)

STOPPED_WHILE_STARTING = b"stopped: before any work: nothing was written\n"
if sys.argv[:1] == ["-m"]:  # `python -m benchmarks.<name>`: a stop before the command's own handler is in place
    for _number in (_signal.SIGINT, _signal.SIGTERM):  # is one line (as albert_act/__init__.py says; it comes later)
        _signal.signal(_number, lambda *_: (os.write(2, STOPPED_WHILE_STARTING), os._exit(130)))
