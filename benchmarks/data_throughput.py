"""Pre-training data throughput and peak memory, 1 worker vs all workers, in one run.

    .venv/bin/python -m benchmarks.data_throughput [--vocab wiki.model] [--input FILE]

Default input: ../shared/data/wikipedia_en_sample/wiki_en_train.txt (9 MB), sequence
length 128, dupe factor 1. Without --vocab a 30,000-piece vocabulary is trained
first (not timed). Each row runs `python -m pipelines.create_pretraining_data` in
a fresh process; wall time includes start-up (TensorFlow import, worker spawn),
the instances/s column uses the tool's own timing of the work. Peak memory is the
largest sum of RSS over the process tree (main + workers), sampled every 20 ms.
The "3x corpus" row feeds three copies of the file (each line's words turned, so that the data tool takes them as
other texts): memory must not grow with it.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/data_throughput.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.data_throughput")

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from albert_act.base import entry

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_INPUT = os.path.join(REPO, "..", "shared", "data", "wikipedia_en_sample", "wiki_en_train.txt")
VOCAB_SIZE = 30000  # pieces of the vocabulary trained on --input without --vocab
SHARDS = 8  # the data tool's output files, its default


def _tree_rss_mb(root_pid):
    """Sum of VmRSS (MB) of root_pid and all its descendants."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    parents[int(name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    tree, frontier = {root_pid}, [root_pid]
    while frontier:
        pid = frontier.pop()
        children = [c for c, p in parents.items() if p == pid]
        tree.update(children)
        frontier.extend(children)
    total = 0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def run(inputs, vocab, workers, output_dir):
    command = [sys.executable, "-m", "pipelines.create_pretraining_data", "--input", *inputs, "--vocab", vocab,
               "--output_dir", output_dir, "--dupe_factor", "1", "--max_seq_length", "128",
               "--workers", str(workers), "--eval_fraction", "0", "--num_shards", str(SHARDS)]
    start = time.perf_counter()
    with open(output_dir.rstrip(os.sep) + ".err", "w+b") as errors:
        process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=errors,
                                   env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        peak = 0.0
        try:
            while process.poll() is None:
                peak = max(peak, _tree_rss_mb(process.pid))
                time.sleep(0.02)
        except BaseException:  # a stop (Ctrl-C, SIGTERM): the data tool stops too, before the stop line is said
            process.terminate()
            process.wait()
            raise
        wall = time.perf_counter() - start
        if process.returncode:
            failure = _failure(command, process.returncode, errors)
            if "shards would be empty" in failure:  # its advice names the data tool's --num_shards, which we set
                instances = failure.split(" but ", 1)[-1].split(":", 1)[0]
                raise ValueError(f"--input {inputs[0]}: too little text to measure: {instances}, fewer than the "
                                 f"data tool's {SHARDS} shards; give more sentences (one per line, a blank line "
                                 "between documents)")
            raise ValueError(failure)
    with open(os.path.join(output_dir, "stats.json")) as f:
        report = json.load(f)
    return report["instances"]["total"], report["instances_per_second"], wall, peak


def _failure(command, status, errors):
    """The line for a child tool that failed: the command and the last of what it said (its error line)."""
    errors.seek(0)
    said = [line for line in errors.read().decode("utf-8", "replace").splitlines() if line.strip()]
    shown = " ".join(command[1:3])
    return f"{shown} failed (exit status {status})" + (f": {said[-1]}" if said else "")


def main(argv=None):
    from albert_act.base import cli
    from benchmarks import arguments

    parser = argparse.ArgumentParser(prog="python -m benchmarks.data_throughput", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", default=DEFAULT_INPUT)
    parser.add_argument("--vocab", help="SentencePiece model; default: train --vocab_size pieces on --input first")
    parser.add_argument("--vocab_size", type=int, default=None,
                        help=f"pieces of the vocabulary trained without --vocab (default {VOCAB_SIZE})")
    args = cli.parse_checked(parser, argv, {"input": "path", "vocab": "path", "vocab_size": "int[8,1000000]"})
    if os.path.isdir(args.input):
        raise SystemExit(f"error: --input {args.input} is a folder: give a text file (one sentence per line, a blank "
                         "line between documents)")
    if os.path.exists(args.input) and not os.path.isfile(args.input):  # a pipe, a device: it is read 4 times
        raise SystemExit(f"error: --input {args.input} is not a regular file: give a text file (it is read several "
                         "times)")
    if not os.path.isfile(args.input):
        raise SystemExit(f"error: --input {args.input}: no such file" + (
            " (the default needs ../shared/data beside the repository)" if args.input == DEFAULT_INPUT else ""))
    if args.vocab is not None and args.vocab_size is not None:
        raise SystemExit(f"error: --vocab_size {args.vocab_size} sizes the vocabulary trained without --vocab: give "
                         "one or the other")
    if args.vocab is not None and not os.path.isfile(args.vocab):
        raise SystemExit(f"error: --vocab {args.vocab}: " + ("a folder, not a SentencePiece model"
                                                              if os.path.isdir(args.vocab) else "no such file"))
    arguments.run(_measure, args)


def _check_text(path):
    """ValueError naming `path`'s line that is not UTF-8 text: the data tools' own refusals name their flags
    (--skip_invalid_utf8), which this benchmark does not have."""
    from albert_act.base import text_files

    try:
        for _ in text_files.read_lines(path, skip_flag=False):
            pass
    except ValueError as error:
        raise ValueError(f"--input {error}") from None


def _measure(args):
    _check_text(args.input)  # inside the run: Ctrl-C during seconds of reading a large text stops it with one line
    with tempfile.TemporaryDirectory() as tmp:
        vocab = args.vocab
        if vocab is None:
            command = [sys.executable, "-m", "pipelines.train_tokenizer", "--input", args.input,
                       "--output", os.path.join(tmp, "vocab"), "--vocab_size", str(args.vocab_size or VOCAB_SIZE)]
            with open(os.path.join(tmp, "tokenizer.err"), "w+b") as errors:
                done = subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=errors)
                if done.returncode:
                    raise ValueError(_failure(command, done.returncode, errors))
            vocab = os.path.join(tmp, "vocab.model")
        cores = os.cpu_count()
        # the data tool takes each text once, told by its sentences: copy i has each line's words turned i + 1 places
        # (the same words, pieces and lengths; other sentences)
        copies = [os.path.join(tmp, f"copy{i}.txt") for i in range(3)]
        for i, copy in enumerate(copies):
            with open(copy, "wb") as out, open(args.input, "rb") as text:
                for line in text:
                    words = line.split()
                    turn = (i + 1) % len(words) if words else 0
                    out.write(b" ".join(words[turn:] + words[:turn]) + b"\n")
        rows = [("1 worker", [args.input], 1), (f"{cores} workers", [args.input], cores),
                (f"{cores} workers, 3x corpus", copies, cores)]
        results = {}
        for name, inputs, workers in rows:
            results[name] = run(inputs, vocab, workers, os.path.join(tmp, name.replace(" ", "_").replace(",", "")))
    base_rate = results["1 worker"][1]
    print(f"\ninput={os.path.relpath(args.input)} seq=128 dupe=1 cpus={os.cpu_count()}\n")
    print("| run | instances | instances/s | wall s (with start-up) | peak RSS MB (all processes) | speed vs 1 worker |")
    print("|---|---|---|---|---|---|")
    for name, (count, rate, wall, peak) in results.items():
        print(f"| {name} | {count} | {rate:.0f} | {wall:.1f} | {peak:.0f} | {rate / base_rate:.2f} |")
    if os.path.abspath(args.input) == os.path.abspath(DEFAULT_INPUT):
        print("\nReference (reported for this file, not measured here): google-research/albert create_pretraining_data.py "
              "on this file: 18,250 instances in ~35 s (~550/s), peak ~830 MB.")


if __name__ == "__main__":
    entry.run(main)
