"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.

The lowest layer of the project: it imports nothing from albert_act/, which builds on it. It also
holds what every command line shares (`cli`: the quiet start, --help; `checks`: flag values;
`outputs`: run locks and whole-file or whole-dir writes), none of which loads TensorFlow.
"""
