"""Fine-tune on a GLUE task or a probing task, from a pre-training run, an exported SavedModel or a
public ALBERT checkpoint (a Hugging Face dir, a google-research/albert TF1 checkpoint, a keras-hub preset).

    python -m albert_act.finetune --task rte --data_dir ../shared/data/glue/RTE --init runs/demo
    python -m albert_act.finetune --task tense --data_dir probing/ --init saved_models/albert_act_demo/1 --grid
    python -m albert_act.finetune --task rte --data_dir ../shared/data/glue/RTE --init albert-base-v2 --halting act

Classification (regression for STS-B) on the pooled output; GLUE's metrics on dev
(Matthews for CoLA, F1 + accuracy for MRPC/QQP, Pearson + Spearman for STS-B,
accuracy otherwise); the best dev epoch is kept (<output_dir>/classifier.weights.h5,
classifier.json, vocab.model) and exported as a raw-text SavedModel in
<output_dir>/export/1 (strings in, labels and per-token iterations out; ready for
TensorFlow Serving and `python -m albert_act.glue_submission`). --grid runs the paper's grid: learning
rate {5e-5, 3e-5, 2e-5} x batch {16, 32} x epochs {2, 3, 4} x --seeds.
"""

import json
import os
import sys

from albert_act.base import checks, cli, outputs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv=None):
    cli.quiet_start(argv)  # first: loads TensorFlow, quietly unless --verbose
    from albert_act import distribution

    parser = cli.parser("finetune", __doc__)
    _add_flags(parser)
    distribution.add_arguments(parser)
    args = cli.parse_checked(parser, argv, {
        "learning_rate": ">0", "batch_size": "int[1,65536]", "epochs": "int[1,10000]", "seed": "int>=0",
        "seeds": "int[1,1000]", "tau": ">=0", "max_iterations": f"int[1,{checks.MAX_ITERATIONS}]",
        "max_train_examples": "int>=1", "halting_bias": "finite", "max_seq_length": f"int[8,{checks.MAX_SEQUENCE_LENGTH}]"})
    if args.seeds != 1 and not args.grid:
        sys.exit(f"error: --seeds {args.seeds} goes with --grid (seeds per grid point); one run takes --seed")
    from albert_act.base import artifacts
    from albert_act.train import finetuning_run

    output_dir = args.output_dir or os.path.join(REPO, "runs", "finetune", args.task.lower())
    with cli.failures(output_dir, "nothing was written", "nothing was written; re-run the same command"):
        artifacts.check_finetuning_target(output_dir, args.overwrite)
    common = dict(ponder_cost_weight=args.tau, max_seq_length=args.max_seq_length, vocab=args.vocab,
                  max_train_examples=args.max_train_examples, strategy=args.strategy, precision=args.precision,
                  jit_compile=args.jit_compile, halting=args.halting, max_iterations=args.max_iterations,
                  halting_bias_initializer=args.halting_bias)
    cli.stop_on_sigterm()
    with cli.failures(output_dir, "files written whole before are intact: free space and re-run the same command",
                      f"{output_dir} keeps the best epoch saved so far; a fine-tuning run restarts from its --init: "
                      "re-run the same command"):
        with outputs.DirectoryLock(output_dir, "fine-tuning"):
            if args.grid:
                summary = finetuning_run.grid_search(args.task, args.data_dir, args.init, output_dir,
                                                     seeds=tuple(args.seed + i for i in range(args.seeds)), **common)
                result = summary["best"]
                print(f"grid: {len(summary['runs'])} runs; best below")
            else:
                result = finetuning_run.finetune(args.task, args.data_dir, args.init, output_dir, args.learning_rate,
                                                 args.batch_size, args.epochs, args.seed, **common)
    print(f"\n{result['task']} dev, {result['train_examples']} training examples:\n")
    print(finetuning_run.format_results(result))
    print(f"\nresults: {os.path.join(output_dir, artifacts.RESULTS)}\nSavedModel: {result['export']}")
    print(json.dumps({"best": result["best"]}))


def _add_flags(parser):
    """Fine-tuning's own flags (the strategy's come from albert_act.distribution)."""
    parser.add_argument("--task", required=True, help="cola, sst-2, mrpc, sts-b, qqp, mnli, qnli, rte, wnli, "
                                                       "or a probing task: tense, subj_number, obj_number, top_constituents")
    parser.add_argument("--data_dir", required=True, help="the task's glue_data folder, or the probing files' folder")
    parser.add_argument("--init", required=True, help="pre-training run dir (e.g. runs/demo), exported SavedModel, "
                        "Hugging Face ALBERT dir (config.json + model.safetensors + spiece.model), TF1 ALBERT "
                        "checkpoint (albert_config.json + model.ckpt-*) or keras-hub preset")
    parser.add_argument("--halting", default=None, choices=["act", "none"],
                        help="act: learned per-token depth (a new halting unit over a fixed-depth model); none: fixed "
                             "depth (default: --init's own; a public ALBERT's is none)")
    parser.add_argument("--max_iterations", type=int, default=None,
                        help="depth cap N_max for act, the depth for none (default: --init's; ALBERT-base's 12)")
    parser.add_argument("--halting_bias", type=float, default=None,
                        help="initial bias of a new halting unit (default 0, the authors')")
    parser.add_argument("--output_dir", default=None, help="default: runs/finetune/<task>")
    parser.add_argument("--vocab", default=None, help="default: vocab.model inside --init")
    parser.add_argument("--overwrite", action="store_true", help="replace a finished fine-tuning in --output_dir")
    parser.add_argument("--learning_rate", type=float, default=3e-5, help="peak AdamW learning rate")
    parser.add_argument("--batch_size", type=int, default=32, help="sequences per update (all replicas together)")
    parser.add_argument("--epochs", type=int, default=3, help="passes over the training set; the best dev epoch is kept")
    parser.add_argument("--seed", type=int, default=12345, help="initialisation and data order")
    parser.add_argument("--grid", action="store_true", help="the paper's grid instead of one run")
    parser.add_argument("--seeds", type=int, default=1, help="with --grid: seeds per grid point")
    parser.add_argument("--tau", type=float, default=0.0, help="ponder-cost weight during fine-tuning (none at fixed depth, --halting none: its ponder cost is a constant)")
    parser.add_argument("--max_seq_length", type=int, default=None,
                        help="default: 128, or the model's maximum if shorter (the demo's: 64)")
    parser.add_argument("--max_train_examples", type=int, default=None, help="a subset, for a quick run")


if __name__ == "__main__":
    main()
