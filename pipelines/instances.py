"""Pre-training instances from tokenized documents: SOP pairs and whole-word n-gram masking.

ALBERT's recipe (google-research/albert `create_pretraining_data.py`), made
reproducible and parallel:

* Every random choice for document d, duplicate k comes from its own generator
  seeded with (seed, d, k), so the output does not depend on how documents are
  split among workers.
* Segments: sentences are gathered into a chunk until it reaches the target
  length (max_seq_length - 3, or with probability short_seq_prob a random length
  in [2, max]); the chunk is cut at a random sentence boundary into A and B.
* Sentence-order prediction: with probability 0.5 A and B are swapped, label 1.
* Single-segment chunks (one sentence only, e.g. one very long sentence, or the
  last sentence of a document): ALBERT silently pairs them with a random segment
  of another document, which makes a "random next sentence" example inside the
  SOP task (google-research/albert issue 234). We instead cut that sentence at a
  random word start into two consecutive segments, which keeps the SOP meaning
  (two consecutive pieces of one document, maybe swapped). A one-word chunk
  cannot be cut and is dropped. Both cases are counted in the stats.
* Single segments (`single_segment_prob`, default 0: ALBERT has none): with that
  probability a chunk of a random target length in [2, max_seq_length - 2] becomes
  `[CLS] A [SEP]`, whole sentences (the first cut at its back to fit), SOP label 0:
  what a served sentence looks like. Its SOP answer is trivial (no second segment),
  so held-out records for SOP accuracy are made without them.
* Truncation: the longer segment loses a token at its front or back (coin flip)
  until the pair fits, as ALBERT.
* Masking: whole words (a word = a piece starting with "▁" or a punctuation
  piece, plus its continuation pieces) in n-grams of 1..max_ngram words with
  weight 1/n; [CLS] and [SEP] are never masked. The budget is
  round(masked_lm_prob * maskable tokens). Repeatedly: draw n, then a random
  start where n words are still unmasked (n is not redrawn when a place is
  taken: redrawing, or ALBERT's shortening, favours short spans). A span that
  overflows the budget is kept with probability 1/2 (if max_predictions_per_seq
  allows) and masking stops: the masked count is unbiased around the budget and
  span lengths follow 1/n within about a point (stats report both).
  Each masked token independently becomes [MASK] (80%), stays itself (10%) or
  becomes a random non-special token (10%).
"""

import collections
import dataclasses
import math
import random

from pipelines import normalization, tf_example
from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID, SPECIAL_TOKENS, UNK_ID, WORD_START


@dataclasses.dataclass(frozen=True)
class InstanceConfig:
    """How instances are made. Validated on construction (ValueError naming the field)."""

    vocabulary_size: int
    max_seq_length: int = 128
    masked_lm_prob: float = 0.20
    max_predictions_per_seq: int | None = None  # default: 1.2x the budget of a full sequence, at most length - 2
    max_ngram: int = 3
    short_seq_prob: float = 0.1
    single_segment_prob: float = 0.0
    dupe_factor: int = 10
    seed: int = 12345

    def __post_init__(self):
        if self.max_seq_length < 5:
            raise ValueError(f"max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP]), got {self.max_seq_length}")
        if not 0.0 < self.masked_lm_prob < 1.0:
            raise ValueError(f"masked_lm_prob must be in (0, 1), got {self.masked_lm_prob}")
        for name in ("short_seq_prob", "single_segment_prob"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        for name in ("max_ngram", "dupe_factor", "vocabulary_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        needed = self.full_budget
        if self.max_predictions_per_seq is None:  # room for the overflowing last span, within a sequence
            object.__setattr__(self, "max_predictions_per_seq", min(math.ceil(1.2 * needed), self.max_seq_length - 2))
        elif self.max_predictions_per_seq < needed:
            raise ValueError(
                f"max_predictions_per_seq={self.max_predictions_per_seq} is too small for "
                f"masked_lm_prob={self.masked_lm_prob}: a full sequence has "
                f"{self.max_seq_length - 3} maskable tokens and needs {needed} predictions"
            )
        elif self.max_predictions_per_seq > self.max_seq_length - 2:  # [CLS] and a [SEP] in every sequence
            raise ValueError(
                f"max_predictions_per_seq={self.max_predictions_per_seq} is more than a sequence of "
                f"max_seq_length={self.max_seq_length} can mask (at most {self.max_seq_length - 2} pieces: [CLS] and "
                "[SEP] are never masked): every record would carry that many prediction slots, mostly padding"
            )

    @property
    def full_budget(self):
        return max(1, round(self.masked_lm_prob * (self.max_seq_length - 3)))


def word_starts(tokens, word_start, bare_space=-1):
    """Per position, 1 where the piece begins a word: its `word_start` entry (by id), except after
    the bare "▁" piece (id `bare_space`), which SentencePiece emits before a word it has no "▁x" piece
    for ("▁" "(" ...): that piece continues the word the "▁" began. Masking them apart would leave a
    "▁" no served text has (a served "[MASK](" drops its space)."""
    starts = [word_start[t] for t in tokens]
    for position in range(1, len(tokens)):
        if tokens[position - 1] == bare_space and tokens[position] >= len(SPECIAL_TOKENS):
            starts[position] = 0
    return starts


def _make_segments(sentences, rng, config, word_start, stats, bare_space=-1):
    """Yields (tokens_a, tokens_b, label) for one document, ALBERT-style chunking (tokens_b empty:
    a single segment)."""
    max_tokens = config.max_seq_length - 3
    target = max_tokens
    if rng.random() < config.short_seq_prob:
        target = rng.randint(2, max_tokens)
        stats["short_targets"] += 1
    pair_target = target

    def next_single():  # drawn only when asked for: without it the random stream (every record) is as before
        return config.single_segment_prob > 0 and rng.random() < config.single_segment_prob

    single = next_single()
    target = rng.randint(2, max_tokens + 1) if single else pair_target
    chunk, length = [], 0
    for i, sentence in enumerate(sentences):
        chunk.append(sentence)
        length += len(sentence)
        if i < len(sentences) - 1 and length < target:
            continue
        if single:
            tokens = [t for s in chunk for t in s]
            tokens_a = tokens[: max_tokens + 1]  # [CLS] A [SEP]: one more fits
            stats["single_segments"] += 1
            if len(tokens) > len(tokens_a):
                stats["truncated_instances"] += 1
                stats["truncated_tokens"] += len(tokens) - len(tokens_a)
            yield tokens_a, [], 0
            chunk, length = [], 0
            single = next_single()
            target = rng.randint(2, max_tokens + 1) if single else pair_target
            continue
        if len(chunk) >= 2:
            a_end = rng.randint(1, len(chunk) - 1)
            tokens_a = [t for s in chunk[:a_end] for t in s]
            tokens_b = [t for s in chunk[a_end:] for t in s]
        else:
            (sentence,) = chunk
            starts = word_starts(sentence, word_start, bare_space)
            cuts = [j for j in range(1, len(sentence)) if starts[j]]
            if not cuts:
                stats["single_segment_dropped"] += 1
                chunk, length = [], 0
                continue
            cut = rng.choice(cuts)
            tokens_a, tokens_b = sentence[:cut], sentence[cut:]
            stats["single_segment_split"] += 1
        label = 0
        if rng.random() < 0.5:
            tokens_a, tokens_b, label = tokens_b, tokens_a, 1
        removed = _truncate_pair(tokens_a, tokens_b, max_tokens, rng)
        if removed:
            stats["truncated_instances"] += 1
            stats["truncated_tokens"] += removed
        yield tokens_a, tokens_b, label
        chunk, length = [], 0
        single = next_single()
        target = rng.randint(2, max_tokens + 1) if single else pair_target


def _truncate_pair(tokens_a, tokens_b, max_tokens, rng):
    """Trims the longer list at a random end until both fit; returns tokens removed. ALBERT's loop,
    one draw per token removed, counted first and cut once (a 2 MB one-line document in linear time)."""
    lengths, front, back = [len(tokens_a), len(tokens_b)], [0, 0], [0, 0]
    while lengths[0] + lengths[1] > max_tokens:
        longer = 0 if lengths[0] > lengths[1] else 1
        if rng.random() < 0.5:
            front[longer] += 1
        else:
            back[longer] += 1
        lengths[longer] -= 1
    for k, tokens in enumerate((tokens_a, tokens_b)):
        tokens[:] = tokens[front[k] : len(tokens) - back[k]]
    return sum(front) + sum(back)


_PLACEMENT_TRIES = 50


def _mask(tokens, rng, config, starts, stats):
    """Whole-word n-gram masking in place (`starts`: `word_starts` of the tokens); returns
    (positions, original ids), sorted."""
    words = []  # lists of positions
    after_special = True
    for position, token in enumerate(tokens):
        if token == CLS_ID or token == SEP_ID:
            after_special = True
            continue
        if after_special or starts[position]:
            words.append([position])
        else:
            words[-1].append(position)
        after_special = False
    maskable = len(tokens) - 3
    budget = min(config.max_predictions_per_seq, max(1, round(config.masked_lm_prob * maskable)))
    ngrams = range(1, config.max_ngram + 1)
    weights = [1.0 / n for n in ngrams]

    masked_words = set()
    positions = []
    while len(positions) < budget:
        longest = min(config.max_ngram, len(words))
        if longest == 0:
            break
        n = rng.choices(ngrams[:longest], weights[:longest])[0]
        for _ in range(_PLACEMENT_TRIES):  # a free place for this n; n is not redrawn
            start = rng.randrange(len(words) - n + 1)
            if not any(w in masked_words for w in range(start, start + n)):
                break
        else:
            break  # no free place found: the sequence is as masked as it gets
        span_positions = [p for w in range(start, start + n) for p in words[w]]
        if len(positions) + len(span_positions) > budget:
            # Keep the overflowing span half the time: the masked count is then unbiased
            # around the budget, and long spans are not under-represented.
            if rng.random() >= 0.5 or len(positions) + len(span_positions) > config.max_predictions_per_seq:
                break
            budget = 0  # stop after this span
        masked_words.update(range(start, start + n))
        positions.extend(span_positions)
        stats[f"ngram_{n}"] += 1

    positions.sort()
    originals = [tokens[p] for p in positions]
    first_regular = len(SPECIAL_TOKENS)
    for p in positions:
        r = rng.random()
        if r < 0.8:
            tokens[p] = MASK_ID
            stats["replaced_mask"] += 1
        elif r < 0.9:
            stats["replaced_keep"] += 1
        else:
            tokens[p] = rng.randrange(first_regular, config.vocabulary_size)
            stats["replaced_random"] += 1
    stats["maskable_tokens"] += maskable
    stats["masked_tokens"] += len(positions)
    stats["unmasked_instances"] += not positions  # (the first span overflowed a short sequence's budget, and was dropped)
    return positions, originals


def document_instances(sentences, doc_index, duplicate, config, word_start, stats, bare_space=-1):
    """Serialized `tf.train.Example`s for one document (a list of token-id lists), one duplicate
    (`document_features`, each feature an Int64List, the weights a FloatList)."""
    records = []
    for features in document_features(sentences, doc_index, duplicate, config, word_start, stats, bare_space):
        records.append(tf_example.serialize_example({
            name: (tf_example.float_feature if name == "masked_lm_weights" else tf_example.int64_feature)(values)
            for name, values in features.items()}))
    return records


def document_features(sentences, doc_index, duplicate, config, word_start, stats, bare_space=-1):
    """The instances of one document (a list of token-id lists), one duplicate: a list of dicts of
    the records' features (input_ids ... next_sentence_labels), each a list, padded to the config's lengths. Every random
    choice comes from a generator seeded with (seed, doc_index, duplicate).

    `word_start` is indexable by id, 1 where a piece begins a word (a list, for speed); `bare_space`
    is the id of the bare "▁" piece (`word_starts`).
    `stats` (a Counter) is updated with what happened.
    """
    rng = random.Random(f"{config.seed}/{doc_index}/{duplicate}")
    made = []
    seq, preds = config.max_seq_length, config.max_predictions_per_seq
    for tokens_a, tokens_b, label in _make_segments(sentences, rng, config, word_start, stats, bare_space):
        tokens = [CLS_ID, *tokens_a, SEP_ID, *tokens_b, SEP_ID] if tokens_b else [CLS_ID, *tokens_a, SEP_ID]
        segment_ids = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1) if tokens_b else [0] * len(tokens)
        boundary = word_starts(tokens, word_start, bare_space)
        positions, originals = _mask(tokens, rng, config, boundary, stats)
        pad, pad_predictions = seq - len(tokens), preds - len(positions)
        made.append({
            "input_ids": tokens + [0] * pad,
            "input_mask": [1] * len(tokens) + [0] * pad,
            "segment_ids": segment_ids + [0] * pad,
            "token_boundary": boundary + [0] * pad,
            "masked_lm_positions": positions + [0] * pad_predictions,
            "masked_lm_ids": originals + [0] * pad_predictions,
            "masked_lm_weights": [1.0] * len(positions) + [0.0] * pad_predictions,
            "next_sentence_labels": [label],
        })
        stats["instances"] += 1
        stats["tokens"] += len(tokens)
        stats["unknown_tokens"] += tokens.count(UNK_ID)
        stats["sop_swapped"] += label
    return made


# --- worker side: state set once per process by `init_worker` -------------------------------

_WORKER = {}


def word_start_table(tokenizer):
    """(word_start, bare_space) of a `pipelines.tokenizer.Tokenizer`: a list of 0/1 ints indexed by id (not
    a numpy array: indexed per token in hot loops), and the bare "▁" piece's id (-1 where there is none)."""
    bare_space = tokenizer.processor.piece_to_id(WORD_START)  # <unk>'s id where the vocabulary has none
    return [int(x) for x in tokenizer.word_start_table()], -1 if bare_space == UNK_ID else bare_space


def init_worker(tokenizer_proto, config, eval_fraction):
    from pipelines.tokenizer import Tokenizer

    tokenizer = Tokenizer(tokenizer_proto)
    word_start, bare_space = word_start_table(tokenizer)
    _WORKER.update(tokenizer=tokenizer, word_start=word_start, bare_space=bare_space, config=config,
                   eval_fraction=eval_fraction, known=known_characters(tokenizer))


def known_characters(tokenizer):
    """The characters of the vocabulary's pieces (its normal and user-defined pieces: not <unk>, the specials or
    byte pieces), for `unreadable`."""
    processor = tokenizer.processor
    return {c for i in range(tokenizer.vocabulary_size)
            if not (processor.is_unknown(i) or processor.is_control(i) or processor.is_byte(i))
            for c in processor.id_to_piece(i)}


def unreadable(sentence, known):
    """Whether most of a sentence's characters (normalized as the tokenizer reads them, spaces aside) are in no
    piece of the vocabulary (the characters `known` of its pieces): another script, which SentencePiece reads as
    one <unk> for each run of such characters."""
    characters = [c for c in normalization.normalize(sentence) if not c.isspace()]
    return sum(c not in known for c in characters) * 2 > len(characters)


def is_eval_document(doc_index, seed, eval_fraction):
    """Documents, not instances, are held out, so no text is shared between train and eval."""
    return eval_fraction > 0 and random.Random(f"{seed}/eval/{doc_index}").random() < eval_fraction


def process_documents(batch):
    """[(doc_index, [sentence strings])] -> (train records, eval records, stats Counter, tokenized
    documents [(doc_index, held out, [sentence ids])], for `pipelines.token_corpus`)."""
    tokenizer, word_start, config = _WORKER["tokenizer"], _WORKER["word_start"], _WORKER["config"]
    stats = collections.Counter()
    texts = [s for _, sentences in batch for s in sentences]
    encoded = tokenizer.encode(texts)
    stats["unreadable_sentences"] += sum(UNK_ID in ids and unreadable(text, _WORKER["known"])
                                         for text, ids in zip(texts, encoded))
    train, evaluation, tokenized = [], [], []
    offset = 0
    for doc_index, sentences in batch:
        ids = [s for s in encoded[offset : offset + len(sentences)] if s]
        stats["empty_sentences"] += len(sentences) - len(ids)
        offset += len(sentences)
        stats["documents"] += 1
        stats["sentences"] += len(ids)
        held_out = is_eval_document(doc_index, config.seed, _WORKER["eval_fraction"])
        target = evaluation if held_out else train
        stats["eval_documents" if held_out else "train_documents"] += 1
        tokenized.append((doc_index, held_out, ids))
        # Held-out documents measure SOP: pairs only (a single segment's SOP answer is trivial).
        making = dataclasses.replace(config, single_segment_prob=0.0) if held_out else config
        for duplicate in range(1 if held_out else config.dupe_factor):
            target.extend(document_instances(ids, doc_index, duplicate, making, word_start, stats,
                                             _WORKER["bare_space"]))
    stats["eval_instances"] += len(evaluation)
    return train, evaluation, stats, tokenized
