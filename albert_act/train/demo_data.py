"""The embedded default's data: synthetic corpus -> vocabulary -> TFRecords, cached between runs."""

import json
import os

from albert_act.base import artifacts
from pipelines import synthetic_corpus, train_tokenizer
from pipelines.create_pretraining_data import create_pretraining_data
from pipelines.instances import InstanceConfig
from pipelines.tokenizer import train_sentencepiece

# What the demo data is made of; a change here makes a new cache.
# - BPE, not unigram: on this small-lexicon corpus SentencePiece's unigram trainer splits the most
#   frequent words into letters ("near" -> "▁nea r", "a" -> "▁ a"; google/sentencepiece issue 967).
# - 2,000 pieces: every word of the grammar is one piece; names split into syllable-like pieces.
# - Sequences of 64: documents are 57 pieces on average (90% under 87), so at 128 about half of
#   every batch was padding.
DEMO_DATA = dict(documents=20000, corpus_seed=0, vocab_size=2000, vocab_model_type="bpe", dupe_factor=2,
                 max_seq_length=64, masked_lm_prob=0.2, seed=12345, num_shards=4, eval_fraction=0.02)


def prepare_demo_data(cache_dir, progress=True):
    """Returns (train glob, eval glob, vocab path); builds them once under `cache_dir`."""
    recipe_path = os.path.join(cache_dir, artifacts.DEMO_RECIPE)
    records = os.path.join(cache_dir, artifacts.DEMO_RECORDS)
    train, evaluation = os.path.join(records, "train-*.tfrecord"), os.path.join(records, "eval-*.tfrecord")
    vocab = os.path.join(cache_dir, artifacts.VOCAB)
    if os.path.exists(recipe_path):
        with open(recipe_path) as f:
            if json.load(f) == DEMO_DATA and os.path.exists(os.path.join(records, artifacts.STATS_JSON)):
                if progress:
                    print(f"reusing demo data in {cache_dir}")
                return train, evaluation, vocab
    os.makedirs(cache_dir, exist_ok=True)
    if os.path.exists(records):
        import shutil

        shutil.rmtree(records)  # another recipe, or an unfinished build
    corpus = os.path.join(cache_dir, artifacts.DEMO_CORPUS)
    sentences = synthetic_corpus.write_corpus(corpus, DEMO_DATA["documents"], DEMO_DATA["corpus_seed"])
    train_tokenizer.write_vocabulary(train_sentencepiece([corpus], DEMO_DATA["vocab_size"], model_type=DEMO_DATA["vocab_model_type"]), vocab[: -len(".model")])
    if progress:
        print(f"demo corpus: {DEMO_DATA['documents']} documents, {sentences} sentences; vocabulary: {vocab}")
    config = InstanceConfig(vocabulary_size=DEMO_DATA["vocab_size"], max_seq_length=DEMO_DATA["max_seq_length"],
                            masked_lm_prob=DEMO_DATA["masked_lm_prob"], dupe_factor=DEMO_DATA["dupe_factor"],
                            seed=DEMO_DATA["seed"])
    report = create_pretraining_data([corpus], vocab, records, config, num_shards=DEMO_DATA["num_shards"],
                                     eval_fraction=DEMO_DATA["eval_fraction"], progress=progress)
    if progress:
        print(f"demo records: {report['instances']['train']} train, {report['instances']['eval']} eval")
    with open(recipe_path, "w") as f:
        json.dump(DEMO_DATA, f)  # written last: the cache counts only once complete
    return train, evaluation, vocab
