"""In-graph tokenization (tensorflow-text): the same ids as `pipelines.tokenizer.Tokenizer.encode`."""

import tensorflow as tf
import tensorflow_text as tf_text

from pipelines import cli, normalization
from pipelines.tokenizer import without_dummy_prefix


class GraphTokenizer(tf.Module):
    """ALBERT normalization + SentencePiece in the graph; trackable, so it exports in a SavedModel.

    Args:
        model_proto: bytes of the SentencePiece model.
        word_start: False encodes each string as the rest of a word (no "▁" before its first piece).

    Call: a string tensor of any shape -> int32 RaggedTensor of ids (no specials added).
    """

    def __init__(self, model_proto, word_start=True):
        super().__init__()
        model_proto = model_proto if word_start else without_dummy_prefix(model_proto)
        with cli.quiet_stderr():  # SentencePiece's C++ logs an INFO line as it loads the model
            self.sentencepiece = tf_text.SentencepieceTokenizer(model=model_proto, out_type=tf.int32)

    def __call__(self, strings):
        return self.sentencepiece.tokenize(normalization.normalize_tensor(strings))
