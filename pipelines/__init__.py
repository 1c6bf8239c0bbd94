"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.

The model is built on these; they use only the ground floor of albert_act/ (`albert_act.base`: the command
line, flag checks, output locks and whole-file writes), none of which loads TensorFlow.
"""

import os
import sys

import _signal  # the interpreter's own, loaded as it starts (`signal` takes milliseconds to import)

STOPPED_WHILE_STARTING = b"stopped: before any work: nothing was written\n"
if sys.argv[:1] == ["-m"]:  # `python -m pipelines.<command>`: a stop before the command's own handler is in place
    for _number in (_signal.SIGINT, _signal.SIGTERM):  # is one line (as albert_act/__init__.py says; it comes later)
        _signal.signal(_number, lambda *_: (os.write(2, STOPPED_WHILE_STARTING), os._exit(130)))
