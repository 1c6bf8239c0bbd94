"""Runs `albert_act.train.jax_pretraining` where TensorFlow cannot be imported (for tests/test_jax_backend.py):

    python tests/jax_run.py CONFIG.json [FIRST_BATCH.npz]

CONFIG holds `PretrainConfig`'s fields; the run's result is printed as one JSON line (the held-out
evaluation without its table). With FIRST_BATCH, instead of a run: the first update of a fresh
model on the first global batch of the training corpus, its sums and every weight after it.
"""

import json
import os
import sys

os.environ["KERAS_BACKEND"] = "jax"
sys.modules["tensorflow"] = None  # `import tensorflow` anywhere below raises ImportError
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from albert_act.train import jax_pretraining  # noqa: E402
from albert_act.train.pretraining_config import PretrainConfig  # noqa: E402
from pipelines import token_corpus  # noqa: E402


def main(config_path, first_batch=None):
    with open(config_path) as f:
        config = PretrainConfig(**json.load(f))
    if first_batch is None:
        result = jax_pretraining.run_jax_pretraining(config, progress=False)
        print(json.dumps({k: v for k, v in result.items() if k != "table"}))
        return
    config = config.resolved()
    trainer = jax_pretraining.JaxPretrainer(config)
    corpus = token_corpus.TokenCorpus(token_corpus.token_files(config.train_files))
    sums = trainer.update(token_corpus.InstanceStream(corpus, seed=config.seed).batch(config.global_batch_size), 0)
    np.savez(first_batch, devices=len(trainer.devices), **{f"sum/{k}": v for k, v in sums.items()},
             **{f"weight/{v.path}": np.asarray(a) for v, a in zip(trainer.model.trainable_variables,
                                                                 trainer.state["trainable"])})


if __name__ == "__main__":
    main(*sys.argv[1:3])
