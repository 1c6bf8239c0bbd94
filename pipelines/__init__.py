"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.

The model is built on these; they use only the ground floor of albert_act/ (`albert_act.base`: the command
line, flag checks, output locks and whole-file writes), none of which loads TensorFlow.
"""

import albert_act.base  # noqa: F401  (first: under `python -m pipelines.<command>`, a stop while starting is one line)
