"""Benchmarks: each prints a table (speed, memory, ratios against a baseline measured in the same run).
Run one as `python -m benchmarks.<name>`."""

import albert_act.base  # noqa: F401  (first: under `python -m benchmarks.<name>`, a stop while starting is one line)
