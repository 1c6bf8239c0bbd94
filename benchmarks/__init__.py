"""Benchmarks: each prints a table (speed, memory, ratios against a baseline measured in the same run).
Run one as `python -m benchmarks.<name>`."""

# albert_act's start-up handler: under `python -m benchmarks.<name>`, a stop before the command's own
# handler is in place is one line, not a traceback
import albert_act.base  # noqa: F401
