"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.
"""

import os as _os
import sys as _sys

# Quiet (albert_act/cli.py) in a worker of a quiet command, and in `python -m pipelines.<tool>`
# (while Python imports this package to find the tool, sys.argv[0] is still "-m").
if _os.environ.get("ALBERT_ACT_QUIET") == "1" or _sys.argv[:1] == ["-m"]:
    from albert_act import cli as _cli

    worker = _os.environ.get("ALBERT_ACT_QUIET") == "1"
    _cli.silence(verbose=False if worker else None)  # None: as `--verbose` in the tool's arguments says
