"""tf.data / TFRecord pipelines: tokenizer training, pre-training instances, GLUE and probing readers.

Data flows one way: text -> tokenizer -> instances (TFRecords) -> tf.data -> model.
"""
