"""Dense vs sparse inference: wall time against the share of iterations actually needed.

    .venv/bin/python -m benchmarks.adaptive_inference [--runs 11] [--checkpoint runs/demo]

Settings:
* synthetic: demo-sized random weights (max length 512), the real shared block, and a
  scripted halting unit: [CLS] (position 0) gets p = 0.001 and runs to the cap
  N_max = 6, every other token p = 0.5 and halts at 2, so mean N_t / N_max ~ 1/3 and
  the batch can never stop early. Runs `halting_loop` itself, dense (static) vs sparse.
* checkpoint: the trained demo backbone on its held-out pre-training records, at their
  sequence length (--lengths sets the synthetic rows only), static vs sparse execution of
  the whole backbone.
Each cell: median of --runs calls of a tf.function after warm-up, dense and sparse calls
interleaved (a third as many for the largest batches). The time ratio is
sparse / dense; mean N / N_max is the share of iterations that ACT actually needs.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/adaptive_inference.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.adaptive_inference")

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from albert_act.base import cli, entry  # noqa: E402
from benchmarks import arguments  # noqa: E402

cli.quiet_start()

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from albert_act.model.halting import IteratedLayer, halting_loop  # noqa: E402
from albert_act.io.source import Source  # noqa: E402
from albert_act.model.presets import backbone_from_preset  # noqa: E402
from pipelines.pretraining_dataset import make_pretraining_dataset  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_seconds(fns, inputs, runs):
    """Median wall seconds of each fn(inputs), calls interleaved so that drift hits all alike."""
    for fn in fns:
        fn(inputs)["iterations"].numpy()  # trace and warm up
    times = [[] for _ in fns]
    for _ in range(runs):
        for fn, spent in zip(fns, times):
            start = time.perf_counter()
            fn(inputs)["iterations"].numpy()
            spent.append(time.perf_counter() - start)
    return [statistics.median(spent) for spent in times]


def synthetic_loop(backbone, execution):
    """halting_loop over the backbone's real embeddings and block, halting scripted by position."""
    block, n_max = backbone.encoder.blocks[0], backbone.max_iterations
    stash = {}

    def layer_fn(h, i):  # dense: every position is a query
        return block(h, padding_mask=stash["mask"])

    def halting_fn(y, i):
        # y (B, W, H): every position (dense), or the sparse loop's slots. Slots keep
        # running tokens in position order, and [CLS] (position 0) runs to the cap, so
        # slot 0 is position 0 in both.
        return tf.where(tf.range(tf.shape(y)[1])[None] == 0, 0.001, 0.5) * tf.ones(tf.shape(y)[:2])

    def project_fn(states, i):
        return block.project(states, stash["qkv_weights"])

    def sparse_attend(query_states, query, keys, i):  # sparse: running positions only
        return block.attend(query_states, query, keys)

    layer = IteratedLayer(layer_fn, project_fn, sparse_attend)

    @tf.function
    def run(inputs):
        stash["mask"], stash["qkv_weights"] = inputs["padding_mask"], block.qkv_weights()
        hidden = backbone.embeddings(inputs["token_ids"], inputs["segment_ids"])
        return halting_loop(hidden, inputs["padding_mask"], layer, halting_fn, n_max, execution=execution)

    return run


def synthetic_inputs(batch, length, vocabulary, seed=0):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(5, vocabulary, (batch, length)).astype("int32")
    tokens[:, 0] = 2
    return {"token_ids": tf.constant(tokens), "segment_ids": tf.zeros((batch, length), tf.int32),
            "padding_mask": tf.ones((batch, length), tf.int32)}


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.adaptive_inference")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.adaptive_inference", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--batch_sizes", type=int, nargs="+", default=[1, 8, 64])
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512],
                        help="the synthetic rows' sequence lengths (the trained rows take their records')")
    parser.add_argument("--checkpoint", default=os.path.join(REPO, "runs", "demo"),
                        help="trained pre-training run dir (its rows are left out where there is none)")
    args = cli.parse_checked(parser, argv, {"runs": "int[1,1000]", "batch_sizes": "int[1,4096]",
                                            "lengths": "int[2,4096]", "checkpoint": "path"})
    source = None
    if os.path.exists(args.checkpoint):  # a damaged or foreign one is refused before the minutes of timing
        try:
            source = Source.open(args.checkpoint)
        except ValueError as error:
            raise SystemExit(f"error: --checkpoint {args.checkpoint}: {error}") from None
        if source.kind != "pretraining-run":
            raise SystemExit(f"error: --checkpoint {args.checkpoint} is not a pre-training run dir (found: "
                             f"{source.kind}): the trained rows read the held-out records its config.json names")
        import glob

        eval_files = source.info["pretraining"]["eval_files"]
        patterns = [eval_files] if isinstance(eval_files, str) else list(eval_files)
        if not [path for pattern in patterns for path in glob.glob(pattern)]:
            raise SystemExit(f"error: --checkpoint {args.checkpoint}: its held-out records ({eval_files}, per its "
                             "config.json) are not there: make them again, or move them back")
    arguments.run(_measure, args, source)


def _measure(args, source):
    rows = []

    backbone = backbone_from_preset("demo", max_sequence_length=max(args.lengths))
    dense, sparse = synthetic_loop(backbone, "static"), synthetic_loop(backbone, "sparse")
    for length in args.lengths:
        for batch in args.batch_sizes:
            inputs = synthetic_inputs(batch, length, backbone.vocabulary_size)
            share = float(tf.reduce_mean(dense(inputs)["iterations"])) / backbone.max_iterations
            runs = args.runs if batch * length <= 8 * 512 else max(3, args.runs // 3)
            t_dense, t_sparse = median_seconds((dense, sparse), inputs, runs)
            rows.append(("synthetic, [CLS] at cap", batch, length, share, t_dense, t_sparse))

    if source is not None:
        eval_files = source.info["pretraining"]["eval_files"]
        trained = {e: source.backbone(dropout=0.0, execution=e)[0] for e in ("static", "sparse")}
        for batch in args.batch_sizes:
            inputs, _ = next(iter(make_pretraining_dataset(eval_files, batch, training=False)))
            inputs = {k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}
            fns = {e: tf.function(lambda x, m=m: m(x, training=False)) for e, m in trained.items()}
            out = fns["static"](inputs)
            real = tf.cast(inputs["padding_mask"], tf.bool)
            share = float(tf.reduce_mean(tf.boolean_mask(out["iterations"], real))) / trained["static"].max_iterations
            t_dense, t_sparse = median_seconds((fns["static"], fns["sparse"]), inputs, args.runs)
            length = int(inputs["token_ids"].shape[1])  # the records' own (--lengths sets the synthetic rows')
            rows.append((f"trained {os.path.basename(args.checkpoint.rstrip('/'))}", batch, length, share, t_dense,
                         t_sparse))
    else:
        print(f"(no trained checkpoint at {args.checkpoint}: run `python -m albert_act.pretrain` for those rows)")

    print(f"\nCPU threads {os.cpu_count()}, TF {tf.__version__}, medians of up to {args.runs} calls\n")
    print("| setting | batch | length | mean N / N_max | dense ms | sparse ms | time ratio | ratio / (N / N_max) |")
    print("|---|---|---|---|---|---|---|---|")
    for setting, batch, length, share, t_dense, t_sparse in rows:
        ratio = t_sparse / t_dense
        print(f"| {setting} | {batch} | {length} | {share:.3f} | {t_dense * 1e3:.1f} | {t_sparse * 1e3:.1f} | "
              f"{ratio:.2f} | {ratio / share:.2f} |")


if __name__ == "__main__":
    entry.run(main)
