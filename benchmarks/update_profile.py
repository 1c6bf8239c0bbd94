"""Where one pre-training update's time goes, part by part, at a preset's sizes and a scripted depth.

    .venv/bin/python -m benchmarks.update_profile [--preset english] [--executions fixed@64 gather@64 bucket@16] \\
        [--depths 1/6 1/2] [--runs 5]

Each part of the model is timed on its own, on its own inputs computed beforehand from one
micro-batch, compiled as the real step is (XLA for `static` and `bucket`, none for `gather`):
its forward, and its forward + backward; medians of --runs calls after a warm-up.

    input        parsing the global batch's serialized records (the step's first op; no XLA)
    embedding    the factorized embedding, forward
    iterations   the ACT loop over the shared layer (and the halting unit), forward
    MLM head     the masked-LM head at the masked positions (dense, GELU, LayerNorm, tied decoder), forward
    SOP head     the pooler and the SOP head, forward
    loss         MLM, SOP and ponder losses from the logits
    gradients    the backward passes of all of the above (each part's forward + backward less its forward)
    optimizer    LAMB's update of every variable from given gradients
    bookkeeping  the real update's time less all of the above: micro-batch accumulation, depth sums,
                 clipping, and what the parts gain or lose by being compiled together

The forward and backward parts are per micro-batch times the micro-batches of an update;
"update" is the real step (`Pretrainer.make_train_step`), measured whole. Depth is scripted
per token (`benchmarks.pretrain_speed.ScriptedDepth`, the `tail` pattern). Each (execution, depth) runs in its own process.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/update_profile.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.update_profile")

import argparse
import json
import os
import sys
import time

from albert_act.base import entry

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from benchmarks.pretrain_speed import (TAIL_MEANS, XLA, ScriptedDepth, child_result, cpu_model, layer_flops,  # noqa: E402
                                       matmul_peak, model_flop_utilisation, random_records, tail_depths, timed,
                                       trainer_for)

PARTS = ("input", "embedding", "iterations", "MLM head", "SOP head", "loss", "gradients", "optimizer", "bookkeeping")


def median_time(fn, runs):
    """Median seconds of `runs` calls of fn after a warm-up call."""
    return timed(fn, runs)[1]


def part_functions(trainer, micro, mlm_weight, jit_compile):
    """Each part of the model as two compiled functions of its own inputs (computed once
    beforehand): its forward, and its forward + backward (the gradient of its outputs' sum with
    respect to its float inputs and its variables). Returns ({part: (forward, forward_backward,
    args)}, optimizer): the optimizer applies given gradients to every trainable variable."""
    import tensorflow as tf

    from albert_act.train.losses import loss_sums, pretraining_loss

    model, backbone = trainer.model, trainer.backbone
    inputs, labels = micro
    examples = float(trainer.config.global_batch_size)

    def embedding(token_ids, segment_ids):
        return backbone.embeddings(token_ids, segment_ids, training=True)

    def iterations(hidden):
        features = backbone.encoder(hidden, inputs["padding_mask"], training=True)
        return features["sequence_output"], features["ponder_cost"]

    def mlm_head(sequence_output):
        return model.masked_lm_head(sequence_output, inputs["masked_positions"])

    def sop_head(sequence_output):
        return model.sop_head(backbone.pooler(sequence_output[:, 0, :]))

    def loss(mlm_logits, sop_logits, ponder_cost):
        sums = loss_sums({"mlm_logits": mlm_logits, "sop_logits": sop_logits, "ponder_cost": ponder_cost}, labels)
        return pretraining_loss(sums, mlm_weight, examples, 1e-3)["loss"]

    def total(outputs):
        return tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in tf.nest.flatten(outputs)])

    hidden = embedding(inputs["token_ids"], inputs["segment_ids"])
    sequence_output, ponder_cost = iterations(hidden)
    parts = {
        "embedding": (embedding, (inputs["token_ids"], inputs["segment_ids"]), [backbone.embeddings]),
        "iterations": (iterations, (hidden,), [backbone.encoder]),
        "MLM head": (mlm_head, (sequence_output,), [model.masked_lm_head]),
        "SOP head": (sop_head, (sequence_output,), [backbone.pooler, model.sop_head]),
        "loss": (loss, (mlm_head(sequence_output), sop_head(sequence_output), ponder_cost), []),
    }
    functions = {}
    for name, (fn, args, layers) in parts.items():
        variables = [v for layer in layers for v in layer.trainable_variables]

        def forward_backward(*args, fn=fn, variables=variables):
            floats = [a for a in args if a.dtype.is_floating]
            with tf.GradientTape() as tape:
                tape.watch(floats)
                value = total(fn(*args))
            grads = [g for g in tape.gradient(value, floats + variables) if g is not None]
            return value + sum(tf.reduce_sum(tf.convert_to_tensor(g)) for g in grads)

        functions[name] = (tf.function(lambda *args, fn=fn: total(fn(*args)), jit_compile=jit_compile),
                           tf.function(forward_backward, jit_compile=jit_compile), args)
    variables = model.trainable_variables
    given = [tf.ones_like(v) * 1e-3 for v in variables]

    def optimizer():
        trainer.optimizer.apply_gradients(zip(given, variables))
        return tf.constant(0.0)

    return functions, tf.function(optimizer, jit_compile=jit_compile)


def measure(args):
    import tensorflow as tf

    from pipelines.pretraining_dataset import parse_examples

    halting = "none" if args.execution == "fixed" else "act"
    execution = "static" if args.execution == "fixed" else args.execution
    trainer = trainer_for(args.preset, args.length, halting, execution, args.batch, args.micro_batch)
    jit_compile = XLA[execution]
    n_max = trainer.backbone.max_iterations
    records, shapes = random_records(args.batch, args.length, trainer.backbone.vocabulary_size)
    serialized = tf.constant(records)
    script = None
    if halting == "act":
        script = ScriptedDepth((args.micro_batch, args.length), n_max)
        script.set(tail_depths((args.micro_batch, args.length), TAIL_MEANS[args.depth], n_max))
    accumulation = args.batch // args.micro_batch
    try:
        parse = tf.function(lambda s: parse_examples(s, *shapes))
        inputs, labels = parse(serialized)
        micro = {k: v[:args.micro_batch] for k, v in inputs.items()}, {k: v[:args.micro_batch] for k, v in labels.items()}
        mlm_weight = tf.reduce_sum(labels["masked_lm_weights"])
        step = trainer.make_train_step(parse=lambda s: parse_examples(s, *shapes))
        iterator = iter(tf.data.Dataset.from_tensors(serialized).repeat())
        start = time.perf_counter()
        depth = step(iterator)["depth"].numpy()  # the first call: traced and compiled
        first = time.perf_counter() - start
        functions, optimizer = part_functions(trainer, micro, mlm_weight, jit_compile)
        parts = {"input": median_time(lambda: [t.numpy() for t in tf.nest.flatten(parse(serialized))], args.runs)}
        backward = 0.0
        for name, (forward, forward_backward, part_args) in functions.items():
            parts[name] = accumulation * median_time(lambda: forward(*part_args).numpy(), args.runs)
            both = accumulation * median_time(lambda: forward_backward(*part_args).numpy(), args.runs)
            backward += both - parts[name]
        parts["gradients"] = backward
        parts["optimizer"] = median_time(lambda: optimizer().numpy(), args.runs)
        update = median_time(lambda: step(iterator)["examples"].numpy(), args.runs)
    finally:
        if script is not None:
            script.undo()
    parts["bookkeeping"] = update - sum(parts.values())
    print(json.dumps({"parts": parts, "update": update, "first": first,
                      "iterations": float(depth[0, 1] / depth[0, 0]), "tokens": float(depth[0, 0]),
                      "layer_flops": 3 * layer_flops(trainer.backbone.hidden_dim, trainer.backbone.intermediate_dim,
                                                     args.length)}))


def main(argv=None):
    from albert_act.base import cli
    from benchmarks import arguments

    cli.quiet_start(argv)  # first: Ctrl-C stops with one line from here on, and TensorFlow loads quietly
    cli.tensorflow_only("python -m benchmarks.update_profile")
    from albert_act.model.presets import get_preset

    parser = argparse.ArgumentParser(prog="python -m benchmarks.update_profile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="english", choices=["demo", "english"])
    parser.add_argument("--length", type=int, default=None, help="sequence length (default: the preset's)")
    parser.add_argument("--executions", nargs="+", default=None,
                        help="fixed (fixed depth, static loop under XLA), static, gather or bucket, each with an "
                             "optional micro-batch (gather@64; default: the preset's); default for english: the "
                             "preset's before (gather, micro-batches of 64) and now (bucket, 16), with fixed depth "
                             "at both; for demo: fixed gather bucket")
    parser.add_argument("--depths", nargs="+", default=["1/6", "1/2"], choices=list(TAIL_MEANS),
                        help="depth shares of the tail pattern (means 1.05, 2, 3 of 6)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--execution", help=argparse.SUPPRESS)
    parser.add_argument("--micro_batch", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--depth", help=argparse.SUPPRESS)
    args = cli.parse_checked(parser, argv, {"length": "int[2,4096]", "runs": "int[1,1000]", "micro_batch": "int>=1"})
    preset = get_preset(args.preset)
    args.batch = preset.training["global_batch_size"]
    args.micro_batch = args.micro_batch or preset.training["micro_batch_size"]
    args.length = args.length or preset.backbone["max_sequence_length"]
    hidden = [flag for flag, value in (("--execution", args.execution), ("--depth", args.depth)) if value is not None]
    if hidden and not args.child:
        parser.error(f"{hidden[0]} belongs to the benchmark's own profiling processes: choose executions and depths "
                     "with --executions and --depths")
    if args.child:
        if None in (args.execution, args.depth):
            parser.error("--child is how the benchmark starts its own profiling processes (with --execution and "
                         "--depth): run it without --child")
        return arguments.run(measure, args)
    args.executions = args.executions or (["fixed@64", "fixed@16", "gather@64", "bucket@16"] if args.preset == "english"
                                          else ["fixed", "gather", "bucket"])
    for execution in args.executions:
        name, _, micro_batch = execution.partition("@")
        if name not in ("fixed", "static", "gather", "bucket") or (
                micro_batch and (not micro_batch.isdigit() or int(micro_batch) < 1 or args.batch % int(micro_batch))):
            parser.error(f"--executions {execution}: expected fixed, static, gather or bucket, optionally with "
                         f"@ a micro-batch that divides {args.batch}")

    arguments.run(_tables, args)


def _tables(args):
    import tensorflow as tf

    peak = matmul_peak()
    print(f"\n{cpu_model()}; TF {tf.__version__}; {args.preset} sizes, length {args.length}, {args.batch} sequences "
          f"per update; medians of {args.runs}; float32 matmul peak "
          f"{peak / 1e9:.0f} GFLOP/s\n")
    print("| execution | mean N | " + " | ".join(PARTS) + " | update s | MFU | first call s |")
    print("|---|---|" + "---|" * len(PARTS) + "---|---|---|")
    for spec in args.executions:
        execution, _, micro_batch = spec.partition("@")
        for depth in (["6"] if execution == "fixed" else args.depths):
            command = [sys.executable, "-m", "benchmarks.update_profile", "--child", "--preset", args.preset,
                       "--length", str(args.length), "--execution", execution, "--depth", depth,
                       "--runs", str(args.runs), "--micro_batch", micro_batch or str(args.micro_batch)]
            print(f"(profiling {execution} at depth {depth} ...)", file=sys.stderr, flush=True)
            row = child_result(command)
            mfu = model_flop_utilisation(row["layer_flops"], row["tokens"], row["iterations"], row["update"], peak)
            cells = " | ".join(f"{1000 * row['parts'][p]:.0f} ms" for p in PARTS)
            print(f"| {execution}, micro-batch {micro_batch or args.micro_batch} | {row['iterations']:.2f} | {cells} | {row['update']:.3f} | {mfu:.2f} | "
                  f"{row['first']:.0f} |", flush=True)


if __name__ == "__main__":
    entry.run(main)
