"""In-graph tokenization (tensorflow-text): the same ids as `pipelines.tokenizer.Tokenizer.encode`."""

import tensorflow as tf
import tensorflow_text as tf_text

from albert_act.base import cli
from pipelines import normalization


class GraphTokenizer(tf.Module):
    """ALBERT normalization + SentencePiece in the graph; trackable, so it exports in a SavedModel.

    Args:
        model_proto: bytes of the SentencePiece model (`pipelines.tokenizer.without_dummy_prefix` of it
            encodes each string as the rest of a word: no "▁" before its first piece).

        name: the name of its SentencePiece resource. Two tokenizers in one SavedModel need two
            names: loaded under the same name, both use the model loaded first (tensorflow-text's
            kernel shares its resource by node name), with no sign of it.

    Call: a string tensor of any shape -> int32 RaggedTensor of ids (no specials added).
    """

    def __init__(self, model_proto, name="sentencepiece"):
        super().__init__()
        with cli.quiet_stderr():  # SentencePiece's C++ logs an INFO line as it loads the model
            self.sentencepiece = tf_text.SentencepieceTokenizer(model=model_proto, out_type=tf.int32, name=name)

    def __call__(self, strings):
        return self.sentencepiece.tokenize(normalization.normalize_tensor(strings))
