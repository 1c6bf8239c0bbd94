"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.

The model is built on these; they use only the ground floor of albert_act/ (`albert_act.base`: the command
line, flag checks, output locks and whole-file writes), none of which loads TensorFlow.
"""

# albert_act's start-up handler: under `python -m pipelines.<command>`, a stop before the command's own
# handler is in place is one line, not a traceback
import albert_act.base  # noqa: F401
