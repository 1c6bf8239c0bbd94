"""The embedded default's data: synthetic corpus -> vocabulary -> TFRecords, cached between runs."""

import json
import os

from albert_act.base import artifacts, text_files
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
    if _reusable(cache_dir):
        if progress:
            print(f"reusing demo data in {cache_dir}")
        return train, evaluation, vocab
    check_cache_dir(cache_dir)
    text_files.makedirs(cache_dir)
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


def _reusable(cache_dir):
    """Whether `cache_dir` holds the demo data of this recipe, whole (the token corpus included)."""
    records = os.path.join(cache_dir, artifacts.DEMO_RECORDS)
    try:
        with open(os.path.join(cache_dir, artifacts.DEMO_RECIPE)) as f:
            recipe = json.load(f)
    except (OSError, ValueError):
        return False
    return recipe == DEMO_DATA and all(os.path.exists(os.path.join(records, name)) for name in
                                       (artifacts.STATS_JSON, artifacts.TOKENS_TRAIN, artifacts.TOKENS_EVAL))


def check_own_vocab(cache_dir):
    """ValueError where the demo data's vocab.model is not the one its records were made with (replaced by another):
    named, not rebuilt over (the file there may be the user's)."""
    from pipelines.create_pretraining_data import vocab_fingerprint
    from pipelines.record_vocabulary import recorded_vocabulary

    vocab, records = os.path.join(cache_dir, artifacts.VOCAB), os.path.join(cache_dir, artifacts.DEMO_RECORDS)
    recorded = recorded_vocabulary(os.path.join(records, artifacts.STATS_JSON))  # (the report beside the shards)
    try:
        with open(vocab, "rb") as f:
            found = vocab_fingerprint(f.read())
    except OSError:
        return  # (a missing vocabulary: the records' own checks name it)
    if recorded and found != recorded:
        raise ValueError(f"{vocab} is not the vocabulary the demo records in {records} were made with (replaced by "
                         f"another?): put the demo's own back, or give a new --demo_data_dir (or delete {cache_dir}) "
                         "to build the demo data again")


def check_cache_dir(cache_dir):
    """ValueError unless `cache_dir` may be (re)built: the cache is rebuilt only where it holds nothing but
    the demo's own files (an older recipe, or a build cut short); a folder of the user's, or records of
    theirs, are refused, not replaced."""
    if _reusable(cache_dir):
        return check_own_vocab(cache_dir)
    own = {artifacts.DEMO_RECIPE, artifacts.DEMO_CORPUS, artifacts.DEMO_RECORDS, artifacts.VOCAB,
           artifacts.VOCAB.replace(".model", ".vocab")}
    records = os.path.join(cache_dir, artifacts.DEMO_RECORDS)
    others = [name for name in (sorted(os.listdir(cache_dir)) if os.path.isdir(cache_dir) else [])
              if name not in own and not name.startswith(".")]
    if os.path.isdir(records):
        others += [os.path.join(artifacts.DEMO_RECORDS, name) for name in sorted(os.listdir(records))
                   if not _written_by_the_data_tool(name)]
    if others:
        raise ValueError(f"--demo_data_dir {cache_dir} holds files that are not the demo's ({', '.join(others[:5])}) "
                         "and would be replaced by its data: give a new or empty folder")


def _written_by_the_data_tool(name):
    return (name.endswith(".tfrecord") and name.startswith(("train-", "eval-")) and "-of-" in name) or name in (
        artifacts.STATS_JSON, artifacts.STATS_MD, artifacts.TOKENS_TRAIN, artifacts.TOKENS_EVAL, artifacts.INCOMPLETE)
