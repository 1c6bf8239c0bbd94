"""The model learns: a short pre-training run beats the baselines of its own held-out data.

Guards the whole path (data -> model -> loss -> LAMB -> evaluation) against changes that
leave every unit test green but stop learning. MLM has a plateau at the unigram level
before attention becomes selective (about 250 updates for the demo), so the run is a few
hundred updates of a small model, ~70 s alone on a 2-core AMD EPYC (AVX2) with XLA. The run is
--deterministic: with tf.data's parallel reads the input order followed the machine's load, and
some orders left SOP at its majority after 800 updates.
"""

from albert_act.train.pretraining_run import PretrainConfig, run_pretraining
from pipelines import synthetic_corpus
from pipelines.create_pretraining_data import create_pretraining_data
from pipelines.instances import InstanceConfig
from pipelines.tokenizer import train_sentencepiece


def test_a_short_run_beats_the_unigram_and_majority_baselines(tmp_path):
    synthetic_corpus.write_corpus(tmp_path / "corpus.txt", 2000, seed=4)
    (tmp_path / "vocab.model").write_bytes(train_sentencepiece([str(tmp_path / "corpus.txt")], 600, model_type="bpe"))
    create_pretraining_data([str(tmp_path / "corpus.txt")], str(tmp_path / "vocab.model"), str(tmp_path / "data"),
                            InstanceConfig(vocabulary_size=600, max_seq_length=32, dupe_factor=1), num_shards=2,
                            workers=1, eval_fraction=0.1, progress=False)
    config = PretrainConfig(
        train_files=[str(tmp_path / "data" / "train-*.tfrecord")], eval_files=[str(tmp_path / "data" / "eval-*.tfrecord")],
        model_dir=str(tmp_path / "run"), steps=800, learning_rate=2e-2, global_batch_size=32, micro_batch_size=32,
        jit_compile=True, execution="static", deterministic=True,  # the same input order however loaded the machine is
        backbone_overrides=dict(vocabulary_size=600, max_sequence_length=32, max_iterations=2,
                                hidden_dim=64, intermediate_dim=256, embedding_dim=32))
    result = run_pretraining(config, progress=False)
    assert 0.07 < result["mlm_unigram_baseline"] < 0.11  # "the" among the masked tokens
    low, _ = result["mlm_accuracy_interval"]
    assert low > result["mlm_unigram_baseline"] + 0.03, result["mlm_accuracy_interval"]  # at 0.085 it learned nothing
    assert result["sop_accuracy"] > result["sop_majority_baseline"] + 0.05
    assert result["mlm_loss"] < result["mlm_unigram_loss"]  # below the best loss that ignores context
