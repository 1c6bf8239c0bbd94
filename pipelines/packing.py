"""Packing text for the model: `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`, in the graph.

The one packer. Fine-tuning encodes its examples with it (`pack_texts`), and every raw-text
SavedModel runs it inside the export (`TextEncoder`), so training and serving see the same
ids for every string: ALBERT's normalization and SentencePiece via tensorflow-text (the ids
of `pipelines.tokenizer.Tokenizer.encode`), then, when the pair is too long, a piece
removed from the end of the longer segment until it fits (tf-text's ShrinkLongestTrimmer).
"""

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from pipelines import normalization
from pipelines.graph_tokenizer import GraphTokenizer
from pipelines.tokenizer import CLS_ID, MASK_ID, MASK_PATTERN, SEP_ID, without_dummy_prefix

MASK_TEXT = "[MASK]"
_STARTS_WITH_SPACE = "(?s)(" + normalization.RE2_WHITESPACE_CHARACTER + "|\\x00).*"  # a space (or NUL, which becomes one)


class TextEncoder(tf.Module):
    """Strings -> the backbone's inputs, in the graph.

    Args:
        model_proto: bytes of the SentencePiece model.
        max_seq_length: int, the longest packed sequence (specials included).
    """

    def __init__(self, model_proto, max_seq_length):
        super().__init__()
        if max_seq_length < 3:
            raise ValueError(f"max_seq_length must be at least 3 ([CLS] A [SEP] B [SEP] needs room), got {max_seq_length}")
        self.tokenizer = GraphTokenizer(model_proto)
        self.word_rest = GraphTokenizer(without_dummy_prefix(model_proto), name="word_rests")  # its own name: see GraphTokenizer
        self.max_seq_length = max_seq_length

    def tokenize(self, text):
        """(B,) strings -> int32 ragged (B, (n)) ids, no specials."""
        return self.tokenizer(text)

    def tokenize_with_masks(self, text):
        """Like `tokenize`, with each "[MASK]" becoming the [MASK] id: in any case, and in any form that
        the model's normalization reads as "[mask]" ("［ＭＡＳＫ］" typed on a CJK keyboard, "[MÁSK]").

        The text is split on "[MASK]" before normalization (which would lowercase it) and each
        part is encoded on its own: as a new word where it starts the text or with a space,
        else as the rest of the masked word ("the [MASK]." -> ▁the [MASK] ., not ▁the [MASK] ▁ .),
        so a served text has the pieces of a pre-training record whose word was masked.
        """
        # Normalized first (each part is again, idempotently): a mask that normalizes to "[mask]" is one.
        text = normalization.normalize_tensor(text)
        parts = tf.strings.split(tf.strings.regex_replace(text, MASK_PATTERN, MASK_TEXT), MASK_TEXT)  # (B, (P)); "" -> [""]
        flat = parts.flat_values
        after_mask = tf.range(tf.shape(flat)[0], dtype=parts.row_splits.dtype) != tf.gather(
            parts.row_splits[:-1], parts.value_rowids())  # not the first part of its text
        rest_of_word = after_mask & ~tf.strings.regex_full_match(flat, _STARTS_WITH_SPACE)
        new_words, word_rests = self.tokenizer(flat), self.word_rest(flat)  # (N, (n)) each
        keep = lambda ids, rows: tf.ragged.boolean_mask(ids, tf.logical_and(tf.ones_like(ids, tf.bool), rows[:, None]))
        ids = tf.concat([keep(new_words, ~rest_of_word), keep(word_rests, rest_of_word)], axis=1)
        marker = tf.RaggedTensor.from_tensor(tf.fill([tf.shape(flat)[0], 1], MASK_ID))
        per_part = tf.concat([ids, marker], axis=1)  # every part followed by [MASK] ...
        per_text = tf.RaggedTensor.from_row_splits(per_part, parts.row_splits).merge_dims(1, 2)
        return per_text[:, :-1]  # ... but the last

    def pack(self, segments):
        """[CLS] A [SEP] (B [SEP]) from 1 or 2 ragged id segments; longest segment trimmed first.

        Returns (inputs dict of int32 (B, T), truncated bool (B,)), T = the longest packed row.
        """
        budget = self.max_seq_length - 1 - len(segments)
        if len(segments) == 1:  # (ShrinkLongestTrimmer fails to trace one segment in TF 2.21)
            trimmed = [segments[0][:, :budget]]
        else:
            trimmed = tf_text.ShrinkLongestTrimmer(budget, axis=-1).trim(segments)
        truncated = tf.reduce_any(
            tf.stack([t.row_lengths() < s.row_lengths() for t, s in zip(trimmed, segments)]), axis=0)
        ids, segment_ids = tf_text.combine_segments(trimmed, start_of_sequence_id=CLS_ID, end_of_segment_id=SEP_ID)
        token_ids, segment_ids = (tf.cast(x.to_tensor(0), tf.int32) for x in (ids, segment_ids))
        short = tf.maximum(0, 2 - tf.shape(token_ids)[1])  # an empty batch still has [CLS] [SEP] columns
        token_ids, segment_ids = (tf.pad(x, [[0, 0], [0, short]]) for x in (token_ids, segment_ids))
        inputs = {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "padding_mask": tf.sequence_mask(ids.row_lengths(), tf.shape(token_ids)[1], tf.int32),
        }
        return inputs, truncated

    def pieces(self, token_ids, padding_mask):
        """SentencePiece pieces of the ids, "" on padding."""
        return tf.where(padding_mask > 0, self.tokenizer.sentencepiece.id_to_string(token_ids), "")


def pack_texts(encoder, texts_a, texts_b=None, batch_size=1024):
    """Python strings -> (inputs: dict of int32 numpy (N, max_seq_length), truncated: bool (N,)).

    `encoder` is a `TextEncoder`; rows are padded with 0 to its max_seq_length.
    """
    length = encoder.max_seq_length
    inputs = {k: np.zeros((len(texts_a), length), "int32") for k in ("token_ids", "segment_ids", "padding_mask")}
    truncated = np.zeros(len(texts_a), bool)
    for start in range(0, len(texts_a), batch_size):
        stop = start + batch_size
        segments = [encoder.tokenize(tf.constant(texts_a[start:stop], tf.string))]
        if texts_b is not None:
            segments.append(encoder.tokenize(tf.constant(texts_b[start:stop], tf.string)))
        packed, cut = encoder.pack(segments)
        for key, value in packed.items():
            value = value.numpy()
            inputs[key][start:stop, : value.shape[1]] = value
        truncated[start:stop] = cut.numpy()
    return inputs, truncated
