"""Does depth vary per token, and follow difficulty? One row per pre-training run ("probe").

    .venv/bin/python -m benchmarks.depth_probes --reference REFERENCE --records 'HELD_OUT/*.tfrecord' \\
        --sentences_from TEXT [--output_dir runs/probes/table] NAME=RUN_DIR [NAME=RUN_DIR ...]

For each run (its final held-out evaluation, `<run>/evaluation.json`, and its weights):
- held-out MLM accuracy with its 95% interval, and the mean iterations N of all tokens;
- the share of ordinary (unmasked) pieces at each depth, and their std of N;
- [CLS] - unmasked and [MASK]->[MASK] - unmasked (N, with intervals);
- Spearman's rho(N, surprisal) for unmasked pieces with its interval, surprisal under --reference
  (`analyze difficulty`), and how much E rises from the easiest fifth of surprisal to the hardest;
- served lone sentences (`analyze sentences`: `[CLS] sentence [SEP]`, one word masked): the mean
  and std of N over their ordinary pieces;
- the cost of an update (seconds, the median over the run's TensorBoard points, and the machine; "-" for a run
  without them, a JAX run's).
The sentences are --sentences FILE (one per line), or --count lines of --sentences_from (plain
text, one sentence per line) of 6 to 40 words, each with its longest word (the content word)
replaced by [MASK], as a user asks `fill_mask`. Writes probes.md and probes.json to --output_dir,
with (given --reference) each probe's difficulty analysis in a folder of its name: all of it in one step at
the end, so that a stop or a failure leaves the earlier table whole.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/depth_probes.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.depth_probes")

import argparse
import json
import os
import platform
import re
import subprocess
import sys

from albert_act.base import cli, entry, prose
from benchmarks import arguments

cli.quiet_start()

import numpy as np  # noqa: E402


def served_sentences(path, count, min_words=6, max_words=40):
    """The first `count` lines of `path` with min..max words, each with its longest word masked, or as it is where
    it holds a [MASK] of its own (a file that is not UTF-8 text is named, with its line)."""
    from albert_act.base import plain_text

    chosen = []
    for _, line in plain_text.read_text_lines(path, skip_flag=False):
        words = line.split()
        if not min_words <= len(words) <= max_words:
            continue
        if prose.masks_in(line):  # (its own masks: one more would not be "one word masked")
            chosen.append(line.strip())
            if len(chosen) == count:
                break
            continue
        longest = max(range(len(words)), key=lambda i: 0 if re.search(r"://|^www\.|@|/", words[i]) else len(
            re.sub(r"\W", "", words[i])))  # (a word, not an address or a path: a URL is no word to ask for)
        stripped = re.match(r"^(\W*)(.*?)(\W*)$", words[longest])
        words[longest] = f"{stripped.group(1)}[MASK]{stripped.group(3)}"
        chosen.append(" ".join(words))
        if len(chosen) == count:
            break
    if not chosen:
        raise ValueError(f"--sentences_from {path}: no line of {min_words} to {max_words} words (one sentence per "
                         "line)")
    return chosen


def parse_probes(items):
    """{NAME: RUN_DIR} of the NAME=RUN_DIR arguments; ValueError for one without its '=', an empty or
    repeated name, a name that is no folder name (it names the probe's analysis folder), a run given twice, or a
    dir that is not a finished pre-training run (config.json and the final evaluation.json)."""
    from benchmarks.arguments import named

    probes = named(items, "a pre-training run dir", "demo=runs/demo")
    seen = {}
    for name, run in probes.items():
        if os.path.realpath(run) in seen:  # (one run as two probes: its row twice, as if two)
            raise ValueError(f"{seen[os.path.realpath(run)]} and {name}={run} are the same run "
                             f"({os.path.realpath(run)}): give each run once")
        seen[os.path.realpath(run)] = f"{name}={run}"
        item = f"{name}={run}"
        missing = [f for f in ("config.json", "evaluation.json") if not os.path.isfile(os.path.join(run, f))]
        if missing:
            what = "no such folder" if not os.path.exists(run) else f"no {' or '.join(missing)}"
            if folders := [f for f in missing if os.path.isdir(os.path.join(run, f))]:  # (an entry, but a folder)
                what = f"its {' and '.join(folders)} {'is a folder' if len(folders) == 1 else 'are folders'}"
            raise ValueError(f"{item}: {run} is not a finished pre-training run dir ({what}; a probe is the run dir "
                             "its final held-out evaluation, evaluation.json, was written to: not an export or a "
                             "fine-tuning dir)")
    return probes


def check_same_held_out(probes):
    """Refuses probes evaluated on different held-out records (their baselines differ: another --eval_files,
    --eval_batches or backend): their MLM and SOP columns would not compare."""
    rows = {name: (run, evaluation_row(run)) for name, run in probes.items()}
    (first, (first_run, row)), *others = rows.items()
    for name, (run, other) in others:
        for key in ("mlm_baseline", "sop_baseline"):
            if abs(other[key] - row[key]) > 1e-6:
                raise ValueError(f"{first}={first_run} and {name}={run} were evaluated on different held-out records "
                                 f"({key} {row[key]:.4f} against {other[key]:.4f})"
                                 f"{arguments.held_out_settings(first_run, run)}: their accuracies do not compare; give "
                                 "runs evaluated alike (the same --eval_files, --eval_batches and backend)")


def evaluation_row(run):
    """What the run's final held-out evaluation says of its depth."""
    from albert_act.base import artifacts, text_files

    path = os.path.join(run, artifacts.EVALUATION)
    result = artifacts.read_json(path)  # a damaged one: named
    written = result.get("model_dir")  # (the run it was written by: another one's copied in, if that one is there
    if isinstance(written, str) and not artifacts.same_path(written, run) and _other_settings(written, run):  # and
        raise ValueError(f"{path} is the evaluation of another run ({written}, per its model_dir, whose settings "  # not
                         f"differ: {_other_settings(written, run)}), copied in: its numbers are not of {run}'s weights; "
                         f"run {run}'s command again (it evaluates at its end), or give {written} itself")  # a copy)
    try:
        unmasked = result["iterations"]["unmasked"]
        counts = np.asarray(unmasked["histogram"][1:], np.float64)
        row = {"step": result["step"], "mlm": result["mlm_accuracy"], "mlm_interval": result["mlm_accuracy_interval"],
                "sop": result["sop_accuracy"], "mean_n": result["iterations"]["all"]["mean"],
                "mlm_baseline": result["mlm_unigram_baseline"], "sop_baseline": result["sop_majority_baseline"],
                "shares": (counts / counts.sum()).tolist(), "std_n": unmasked["std"], "cls": result["differences"][
                    "[CLS] - unmasked"], "mask": result["differences"]["[MASK]->[MASK] - unmasked"]}
    except (KeyError, TypeError, IndexError, ValueError) as error:  # (edited, or another tool's file of that name)
        raise ValueError(f"{path}: no {error} where a run's held-out evaluation has it (edited, or another tool's "
                         "file?): run the run's command again, which evaluates at its end") from None
    if isinstance(row["step"], bool) or not isinstance(row["step"], int):
        raise ValueError(f"{path}: step is {row['step']!r}, where a run's held-out evaluation writes an update's "
                         "number (edited, or another tool's file?): run the run's command again, which evaluates at "
                         "its end")
    for key, name, most in (("mlm", "mlm_accuracy", 1), ("sop", "sop_accuracy", 1), ("mean_n", "iterations.all.mean",
                                                                                     None), ("std_n", "iterations.unmasked.std", None),
                            ("mlm_baseline", "mlm_unigram_baseline", 1), ("sop_baseline", "sop_majority_baseline", 1)):
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= (most or np.inf):
            raise ValueError(f"{path}: {name} is {value!r}, where a run's held-out evaluation writes "
                             f"{'an accuracy in [0, 1]' if most else 'a number >= 0'} (edited, or another tool's file?): "
                             "run the run's command again, which evaluates at its end")
    try:
        steps = artifacts.read_json(os.path.join(run, artifacts.CONFIG)).get("steps")
    except (OSError, ValueError):
        steps = None
    if isinstance(steps, int) and row["step"] != steps:  # (written at the run's end: of its last update)
        raise ValueError(f"{path}: of update {row['step']}, where the run's last is {steps} (its config.json's steps: "
                         "the file edited, or another's?): run the run's command again, which evaluates at its end")
    curve = os.path.join(run, artifacts.HELD_OUT_CURVE)  # (its line of that update: the same evaluation)
    text = text_files.read_bytes(curve).decode("utf-8", "replace") if os.path.isfile(curve) else ""
    for line in text.splitlines():
        try:
            point = json.loads(line)
        except ValueError:
            continue
        if isinstance(point, dict):
            arguments.check_curve_agrees(curve, point, result)
    return row


def _other_settings(one, other):
    """The settings (those a resumption must keep: `changed_settings`) in which two run dirs' config.json differ,
    e.g. "halting 'none' against 'act'"; "" where they are alike (a run and its copy) or one is not there."""
    from albert_act.base import artifacts
    from albert_act.train.resumption import changed_settings

    try:
        configs = [artifacts.read_json(os.path.join(run, artifacts.CONFIG)) for run in (one, other)]
    except (OSError, ValueError):
        return ""
    kept = [{k: v for k, v in c.items() if k not in (artifacts.TRAIN_SHARDS, artifacts.EVAL_SHARDS)} for c in configs]
    return ", ".join(f"{key} {there!r} against {now!r}" for key, there, now in changed_settings(*kept))[:200]


def difficulty_row(run, reference, records, output_dir):
    from albert_act.analysis.report import run_analyses

    run_analyses("difficulty", run, output_dir, records=records, reference=reference)
    with open(os.path.join(output_dir, "difficulty.json")) as f:
        found = json.load(f)
    unmasked = found["types"]["unmasked"]
    bins = unmasked["bins"]
    caveat = " ".join(note for note in (
        "The reference holds the probe's own weights: its rho sets depth against itself, not against an independent "
        "difficulty." if found.get("reference_is_the_model") else "", found.get("reference_note") or "") if note) or None
    return {"rho": unmasked["spearman_iterations"], "e_rise": bins[-1]["mean_expected"][0] - bins[0]["mean_expected"][0],
            "n_rise": bins[-1]["mean_iterations"][0] - bins[0]["mean_iterations"][0], "caveat": caveat}


def served_row(run, sentences, evaluated):
    from albert_act.analysis import depth
    from albert_act.base import artifacts
    from albert_act.io.source import Source
    from pipelines.tokenizer import CLS_ID, MASK_ID, SEP_ID

    source = Source.open(run)
    backbone, _ = source.backbone(dropout=0.0)
    update = source.run_checkpoint[0]
    if update != evaluated:  # (`evaluated`: the update of its evaluation.json; its last checkpoint damaged)
        raise ValueError(f"{run}: its served depth would be of update {update:,} (its newest checkpoint that reads) "
                         f"and its held-out row of update {evaluated:,} ({artifacts.EVALUATION}): the row would mix "
                         "two models; give the run's own command again, which trains on from that checkpoint")
    tokenizer = source.tokenizer()
    rows = depth.sentence_depths(backbone, tokenizer, sentences)
    ordinary, masks = [], []
    for row in rows:
        ids = [tokenizer.processor.piece_to_id(piece) for piece in row["tokens"]]
        for piece, n in zip(ids, row["iterations"]):
            if piece == MASK_ID:
                masks.append(n)
            elif piece not in (CLS_ID, SEP_ID):
                ordinary.append(n)
    ordinary = np.asarray(ordinary)
    cut = [row for row in rows if row["truncated"]]
    if cut:  # a served sentence longer than the model: said, and whether its [MASK] went with the cut
        unmasked = sum("[MASK]" not in row["tokens"] and prose.masks_in(sentence)  # (one it held)
                       for row, sentence in zip(rows, sentences) if row["truncated"])
        print(f"note: {len(cut)} of {len(rows)} served sentences are longer than the model's "
              f"{backbone.max_sequence_length} positions and were cut"
              + (f"; {unmasked} of them lost their [MASK]" if unmasked else ""), flush=True)
    return {"sentences": len(rows), "cut": len(cut), "pieces": int(len(ordinary)), "mean_n": float(ordinary.mean()),
            "std_n": float(ordinary.std()), "mask_n": float(np.mean(masks)) if masks else float("nan"),
            "shares": [float((ordinary == n).mean()) for n in range(1, backbone.max_iterations + 1)]}


def seconds_per_update(run):
    """The median over the run's TensorBoard points of global batch / examples per second."""
    import tensorflow as tf

    from albert_act.base import artifacts

    batch = artifacts.read_json(os.path.join(run, "config.json"))["global_batch_size"]
    rates = []
    for name in tf.io.gfile.glob(os.path.join(run, "train", "events.*")):
        for event in tf.compat.v1.train.summary_iterator(name):
            for value in event.summary.value:
                if value.tag == "examples_per_second":
                    rates.append(float(tf.make_ndarray(value.tensor)))
    return batch / float(np.median(rates[1:] or rates)) if rates else float("nan")  # the first holds the tracing


def markdown(rows, n_max):
    depths = " | ".join(f"N={n}" for n in range(1, n_max + 1))
    lines = [f"| probe | updates | held-out MLM [95% CI] | mean N | {depths} | std N | rho(N, surprisal) [95% CI] | "
             "E rise, easiest to hardest fifth | [CLS] - unmasked | [MASK] - unmasked | served std N (mean) | "
             "s / update |",
             "|" + "---|" * (11 + n_max)]
    for name, row in rows.items():
        e, d, s = row["evaluation"], row.get("difficulty"), row["served"]
        rho = "-" if not d else "- (no variation)" if d["rho"][0] != d["rho"][0] else (  # (nan: N or surprisal flat)
            f"{d['rho'][0]:+.3f} [{d['rho'][1]:+.3f}, {d['rho'][2]:+.3f}]")
        rise = f"{d['e_rise']:+.2f}" if d else "-"
        shares = " | ".join(f"{share:.0%}" for share in e["shares"])
        diff = lambda x: f"{x['mean']:+.2f} [{x['interval'][0]:+.2f}, {x['interval'][1]:+.2f}]"  # noqa: E731
        lines.append(f"| {name} | {e['step']} | {e['mlm']:.3f} [{e['mlm_interval'][0]:.3f}, {e['mlm_interval'][1]:.3f}] "
                     f"| {e['mean_n']:.2f} | {shares} | {e['std_n']:.2f} | {rho} | {rise} | {diff(e['cls'])} | "
                     f"{diff(e['mask'])} | {s['std_n']:.2f} ({s['mean_n']:.2f}) | {_cost(row['seconds_per_update'])} |")
    return "\n".join(lines)


def _cost(seconds):
    """The cell of one update's seconds: "-" for a run that wrote no TensorBoard point of its speed (a JAX run's)."""
    return "-" if np.isnan(seconds) else f"{seconds:.2f}"


def machine():
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        model = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Model name"))
    except (OSError, subprocess.CalledProcessError, StopIteration):
        model = platform.processor() or "unknown CPU"
    return f"{model}, {os.cpu_count()} cores"


OUTPUT_FILES = {"probes.md", "probes.json"}


def main(argv=None):
    cli.tensorflow_only("python -m benchmarks.depth_probes")
    parser = argparse.ArgumentParser(prog="python -m benchmarks.depth_probes", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("probes", nargs="+", metavar="NAME=RUN_DIR")
    parser.add_argument("--reference", help="the model whose surprisal depth is set against (a fixed-depth run)")
    parser.add_argument("--records", required=True, help="held-out pre-training TFRecords (a glob)")
    parser.add_argument("--sentences", help="served sentences, one per line")
    parser.add_argument("--sentences_from", help="plain text to draw the served sentences from")
    parser.add_argument("--count", type=int, default=200, help="served sentences drawn from --sentences_from")
    parser.add_argument("--output_dir", default=os.path.join("runs", "probes", "table"))
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier table in --output_dir")
    args = cli.parse_checked(parser, argv, {"count": "int>=1", **dict.fromkeys(
        ("reference", "records", "sentences", "sentences_from", "output_dir"), "path")})
    if bool(args.sentences) == bool(args.sentences_from):
        sys.exit("error: give --sentences or --sentences_from")
    arguments.run(_measure, args, output=args.output_dir, kept="the probes measured so far are printed above",
                  stopped=arguments.said_when_stopped(args.output_dir, "probes.json"))


def _measure(args):
    from albert_act.analysis.report import check_output_dir, read_sentences
    from albert_act.base import outputs
    from pipelines.pretraining_dataset import record_files

    probes = parse_probes(args.probes)
    check_same_held_out(probes)
    check_output_dir(args.output_dir, args.overwrite, OUTPUT_FILES | set(probes) | _earlier_probes(args.output_dir),
                     "the benchmark", "an earlier depth_probes table")
    record_files(args.records, "held-out TFRecord")
    sentences = read_sentences(args.sentences) if args.sentences else served_sentences(args.sentences_from, args.count)
    other = [m.group() for s in sentences if not prose.masks_in(s) for m in [_OTHER_MASK.search(s)] if m]
    if other and not any(prose.masks_in(s) for s in sentences):  # ('<MASK>', '[ MASK ]': read as letters)
        raise ValueError(f"--sentences {args.sentences}: {len(other)} lines hold {other[0]!r}, which this model reads as "
                         "letters, and none its mask: write [MASK]")
    with arguments.staged_result(args.output_dir) as staged:  # the table and each probe's analyses, or the
        rows = {name: probe_row(name, run, sentences, args, staged) for name, run in probes.items()}  # earlier ones
        n_max = len(next(iter(rows.values()))["evaluation"]["shares"])
        table = markdown(rows, n_max)
        cut = max(row["served"]["cut"] for row in rows.values())
        masks = [prose.masks_in(sentence) for sentence in sentences]  # (as the model reads them: '\uff3bMASK\uff3d' too)
        said = "one word masked each" if set(masks) == {1} else (
            f"{sum(m > 0 for m in masks)} of them with a [MASK] ({sum(masks)} in all)")
        note = (f"\nMachine: {machine()}. Served: {len(sentences)} lone sentences, {said}"
                f"{f' ({cut} cut to the model length)' if cut else ''}. "
                + (f"rho: surprisal under {args.reference}; records {args.records}." if args.reference else
                   f"No --reference: no difficulty column, and --records {args.records} not read."))
        note += "".join(f"\nWarning ({name}): {row['difficulty']['caveat']}" for name, row in rows.items()
                        if (row.get("difficulty") or {}).get("caveat"))  # (a reference at chance, or the probe itself)
        print(table + note)
        outputs.write_file(os.path.join(staged, "probes.md"), (table + note + "\n").encode("utf-8"))
        outputs.write_file(os.path.join(staged, "probes.json"), json.dumps(rows, indent=2).encode("utf-8"))


_OTHER_MASK = re.compile(r"<\s*mask\s*>|\[\s+mask\s*\]|\[\s*mask\s+\]|\{\s*mask\s*\}|_{3,}|[<\[(]\s*(?:blank|gap)\s*[>\])]|"
                         r"\[\s*(?:\.\.\.|\u2026)\s*\]", re.IGNORECASE)  # (and a cloze's blank: '_____', '[BLANK]',
# '(gap)', '[...]')


def _earlier_probes(output_dir):
    """The probe folders an earlier table in `output_dir` wrote (its probes.json's names): replaced with it."""
    try:
        with open(os.path.join(output_dir, "probes.json")) as f:
            earlier = json.load(f)
    except (OSError, ValueError):
        return set()
    return set(earlier) if isinstance(earlier, dict) else set()


def probe_row(name, run, sentences, args, staged):
    """One probe's row: its held-out evaluation, served depth and speed, and (with --reference) its difficulty
    analysis, written into `staged`/NAME."""
    print(f"{name}: {run}", flush=True)
    evaluation = evaluation_row(run)
    row = {"run": run, "evaluation": evaluation, "served": served_row(run, sentences, evaluation["step"]),
           "seconds_per_update": seconds_per_update(run)}
    if args.reference:
        row["difficulty"] = difficulty_row(run, args.reference, args.records, os.path.join(staged, name))
    return row

if __name__ == "__main__":
    entry.run(main)
