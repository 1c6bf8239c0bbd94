"""Held-out learning curves of several pre-training runs side by side: Table 2 as the runs go.

    .venv/bin/python -m benchmarks.learning_curves \\
        ACT=docs/curves/english_long.jsonl+docs/curves/english_anneal.jsonl \\
        ALBERT=runs/english_albert_long+runs/english_albert_end [--output_dir runs/learning_curves]

Each NAME=PART[+PART...] is one model: PART is a pre-training run dir (its held_out.jsonl, one
line per --eval_every evaluation, written while the run goes, so a second terminal can compare
runs still training) or such a file. Parts joined by '+' are a run and its continuation (a run
started with --init_from the first's last checkpoint): the continuation's updates are counted on
from the first part's last evaluation, so stop the first run at one (as the English recipe stops
at checkpoint 10,000, its last evaluation). All runs, and all parts, must have been evaluated on
the same held-out records (the same baselines), or they are refused.

Prints a Markdown table of the updates every run has reached (held-out MLM and SOP accuracy with
their 95% intervals, MLM loss, mean iterations N) and writes it to <output_dir>/learning_curves.md,
the joined curves to learning_curves.json and every run's curves on one plot (MLM and SOP side by
side) to learning_curves.png.
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: benchmarks/learning_curves.py is part of albert-act: run it from the repository root as "
                     "python -m benchmarks.learning_curves")

import argparse
import json
import os

from albert_act.base import artifacts, cli, encodings, entry, json_files, text_files
from albert_act.base.artifacts import check_output_dir
from benchmarks import arguments

KEPT = ("step", *artifacts.HELD_OUT_KEPT)  # what every line of a run's held_out.jsonl has


def read_points(path):
    """The evaluations of a run dir or a held_out.jsonl file, oldest first; a line that is not one
    names the file and line."""
    file = os.path.join(path, artifacts.HELD_OUT_CURVE) if os.path.isdir(path) else path
    if os.path.isdir(file):  # (a run dir whose held_out.jsonl is a folder)
        raise ValueError(f"{file} is a folder, where a run keeps its {artifacts.HELD_OUT_CURVE} file: give the run "
                         "whose file it is, or move the folder away")
    if os.path.isdir(path) and not os.path.isfile(file):
        raise ValueError(f"{path} holds no {artifacts.HELD_OUT_CURVE}: give a pre-training run dir (it holds one "
                         "after its first --eval_every evaluation) or the file itself")
    if not os.path.exists(file):  # (a pipe, <(...), is read as a file)
        raise ValueError(f"{path}: no such file")
    text_files.refuse_device(file)  # (/dev/zero: one line without end)
    if os.path.isfile(file):  # (compressed, UTF-16 as PowerShell's > writes: named, with the command converting it)
        with open(file, "rb") as f:
            encodings.refuse_other_encodings(file, f.readline())
    points, seen = [], {}  # seen: {step: (line number, point)}
    with open(file, encoding="utf-8-sig", errors="replace") as f:  # (a byte-order mark, as Notepad saves, is none)
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                point = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{file}: one JSON document over several lines (a run's {artifacts.EVALUATION}?), "
                                 f"not a held-out curve of one evaluation a line; give the run dir, or its "
                                 f"{artifacts.HELD_OUT_CURVE}" if _whole_json(file) else
                                 f"{file} line {number}: not JSON ({error.msg}){encodings.compression_hint(file)}"
                                 + ("" if line.endswith("\n") else f": its last line, cut short (a copy or a write "
                                    f"that stopped); remove it (sed -i '$d' {file})")) from None
            if isinstance(point, dict) and isinstance(point.get("iterations"), dict) and "model_dir" in point:
                raise ValueError(f"{file} line {number}: a run's {artifacts.EVALUATION} (its whole last evaluation, "
                                 f"on one line), not a held-out curve; give the run dir, or its "
                                 f"{artifacts.HELD_OUT_CURVE}")
            missing = [k for k in KEPT if not isinstance(point, dict) or k not in point]
            if missing:
                raise ValueError(f"{file} line {number}: no {', '.join(missing)} (not a held-out evaluation of "
                                 "albert_act.pretrain)")
            if not _well_formed(point):
                raise ValueError(f"{file} line {number}: step, accuracies, baselines and loss must be numbers and "
                                 "the intervals [low, high] pairs of numbers")
            if (wrong := _out_of_range(point)) is not None:
                raise ValueError(f"{file} line {number}: {wrong} (not a held-out evaluation of albert_act.pretrain)")
            if point["step"] in seen and seen[point["step"]][1] != point:  # (pretrain writes one line an update)
                raise ValueError(f"{file} line {number}: a second evaluation of update {point['step']:,}, other than "
                                 f"line {seen[point['step']][0]}'s (two runs' curves in one file?): keep one")
            seen.setdefault(point["step"], (number, point))
            if points and (changed := _other_baseline(points[0], point)):
                raise ValueError(f"{file} line {number}: {changed} (held-out records other than the first line's: "
                                 "two runs' curves in one file?): its accuracies do not compare; keep one run's lines")
            points.append(point)
    if not points:
        final = os.path.join(os.path.dirname(file), artifacts.EVALUATION)
        raise ValueError(f"{file}: no evaluation yet" + (
            f"; the run's final one is in {final} (its curve's lines lost: a curve needs them)" if os.path.isfile(final)
            else ""))
    points = sorted(points, key=lambda p: p["step"])
    if os.path.isdir(path):
        _check_own(path, file, points)
    return points


def _check_own(run, file, points):
    """ValueError where the run's curve `points` (read from `file`) ends at the update of its final evaluation
    (evaluation.json) with other accuracies: another run's curve copied in. A note where the run finished with fewer
    points than its config's eval_every makes (the file deleted, and the run evaluated again: its last point alone)."""
    try:
        final = json_files.read_json(os.path.join(run, artifacts.EVALUATION))
        config = json_files.read_json(os.path.join(run, artifacts.CONFIG))
    except (ValueError, OSError):
        return  # (an unfinished run, or a curve copied alone: nothing to compare it to)
    last = points[-1]
    every, steps = config.get("eval_every"), config.get("steps")
    beyond = [p["step"] for p in points if isinstance(steps, int) and p["step"] > steps]
    if beyond:  # (a line copied from a longer run, or edited)
        raise ValueError(f"{file}: an evaluation of update {beyond[0]:,}, past the run's last ({steps:,}, per its "
                         f"{artifacts.CONFIG}): a line of another run's, copied in, or edited; give a run whose curve is "
                         "its own")
    arguments.check_curve_agrees(file, last, final)
    if final.get("step") == steps == last["step"] and isinstance(every, int) and every > 0 and isinstance(steps, int):
        made = steps // every + (steps % every > 0)
        if len(points) < made:
            print(f"note: {file} holds {len(points):,} of the {made:,} evaluations its run made (eval_every {every:,}, "
                  f"steps {steps:,}): the others are gone (the file deleted, then the run evaluated again?); its "
                  "TensorBoard events under eval/ keep them")


def _other_baseline(first, point):
    """'mlm_unigram_baseline 0.0880 against 0.0912 on line 1' where a point's baseline is not the first's, else None:
    one run's evaluations are all on the same held-out records."""
    for key in ("mlm_unigram_baseline", "sop_majority_baseline"):
        if abs(point[key] - first[key]) > 1e-6:
            return f"{key} {point[key]:.4f}, against {first[key]:.4f} before it"
    return None


def _whole_json(file):
    """Whether the file is one JSON document (a run's evaluation.json, say)."""
    try:
        with open(file, encoding="utf-8") as f:
            json.load(f)
    except (ValueError, OSError):
        return False
    return True


def _well_formed(point):
    number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    pair = lambda v: isinstance(v, list) and len(v) == 2 and all(number(x) for x in v)  # noqa: E731
    return all(pair(point[k]) if k.endswith("_interval") else number(point[k]) for k in KEPT)


def _out_of_range(point):
    """What in a well-formed point no evaluation of albert_act.pretrain holds, if anything: an update that is not a
    whole number from 1, a share (accuracy, baseline, interval) outside [0, 1], an interval whose low is above its
    high or that misses its accuracy, a loss that is negative or not finite, a mean depth below 1."""
    if point["step"] != int(point["step"]) or point["step"] < 1:
        return f"step {point['step']} is no update (a whole number from 1)"
    for key in KEPT[1:]:
        values = point[key] if key.endswith("_interval") else [point[key]]
        if key.endswith("_loss"):
            if not all(0 <= v < float("inf") for v in values):
                return f"{key} {point[key]} is no loss (a number from 0)"
        elif not all(0 <= v <= 1 for v in values):
            percent = " (a percentage?)" if 1 < max(values) <= 100 and min(values) >= 0 else ""
            return f"{key} {point[key]} is no share in [0, 1]{percent}"
        elif key.endswith("_interval") and values[0] > values[1]:
            return f"{key} {point[key]} is no interval [low, high]"
        elif key.endswith("_interval") and not values[0] - 0.01 <= point[(of := key.removesuffix("_interval"))] \
                <= values[1] + 0.01:  # (a bootstrap interval holds its estimate, up to the resampling's noise)
            return f"{key} {point[key]} does not hold its {of} {point[of]}"
    depth = point.get("mean_iterations")
    if isinstance(depth, (int, float)) and not isinstance(depth, bool) and not depth >= 1:
        return f"mean_iterations {depth} is no mean depth (1 iteration at least)"
    return None


def joined(spec, parts):
    """One curve from a run and its continuations (their updates counted on from the last point)."""
    curve, read = [], {}
    for index, part in enumerate(parts):
        if not part:
            raise ValueError(f"{spec!r}: an empty part; give NAME=PART[+PART...]")
        points = read_points(part)
        same = next((earlier for earlier, seen in read.items()
                     if all(p in seen for p in points) or all(p in points for p in seen)), None)
        if same is not None:  # the same dir twice, a copy or a part of one: its updates would be counted twice
            how = ("the same evaluations as {} (the same run, or a copy)" if read[same] == points else
                   "only evaluations also in {} (the same run, or a copy of its start)" if all(
                       p in read[same] for p in points) else
                   "every evaluation of {} (a copy of its start)").format(same)
            raise ValueError(f"{spec!r}: {part} holds {how}: a "
                             "continuation is a run started from the first's weights (--init_from); give each once")
        read[part] = points
        if curve:  # (a continuation's updates count from 0: they are offset, not matched with the first's)
            check_same_records({parts[0]: curve, part: points}, same_updates=False)  # (named by their paths)
            _note_started_from(part, parts[index - 1])
            _note_starts_back(part, points, parts[index - 1], read[parts[index - 1]])
        offset = curve[-1]["step"] if curve else 0
        if curve and points[0]["step"] > offset:  # counted on already (a hand-joined file, a run that resumed)
            print(f"note: {part} starts at update {points[0]['step']:,}, past the last of {parts[index - 1]} "
                  f"({offset:,}): its updates are taken as counted on from it already, not offset again")
            offset = 0
        curve += [{**p, "step": p["step"] + offset} for p in points]
    return curve


def _note_starts_back(part, points, previous, before):
    """A note where continuation `part` starts with a held-out MLM accuracy nearer where `previous` started than
    where it ended (it does not go on from its weights: parts in the wrong order, say), or with a mean depth an
    iteration or more away from where it ended (another model: a fixed-depth one after an adaptive one, say)."""
    start, first, last = points[0]["mlm_accuracy"], before[0]["mlm_accuracy"], before[-1]["mlm_accuracy"]
    if last > first and start < (first + last) / 2:
        print(f"note: {part} starts at held-out MLM accuracy {start:.3f}, nearer where {previous} started ({first:.3f}) "
              f"than where it ended ({last:.3f}): no continuation of it (the parts in the wrong order?); joined "
              "as one all the same")
    depth, ended = points[0].get("mean_iterations"), before[-1].get("mean_iterations")
    if depth is not None and ended is not None and abs(depth - ended) >= 1:
        print(f"note: {part} starts at a mean of {depth:.2f} iterations, where {previous} ended at {ended:.2f}: "
              "another model's run (another --halting or --max_iterations?); joined as one all the same")


def split_parts(parts):
    """The parts of PART[+PART...]: split at each '+', except where the text around it names a file or dir that
    exists ("anneal+v2.jsonl"), the longest first; ValueError where both readings name files."""
    pieces, found = parts.split("+"), []
    while pieces:
        take = next((n for n in range(len(pieces), 1, -1) if os.path.exists("+".join(pieces[:n]))), 1)
        if take > 1 and all(piece and os.path.exists(piece) for piece in pieces[:take]):
            raise ValueError(f"{'+'.join(pieces[:take])} names a file, and so does each of {', '.join(pieces[:take])} "
                             "that '+' would join: rename the file whose name holds '+', or give the parts apart")
        found.append("+".join(pieces[:take]))
        pieces = pieces[take:]
    return found


def _check_given_once(split):
    """ValueError where two runs' parts ({name: [part, ...]}) name one file or run dir (by any path): its curve would
    be drawn twice, as two runs."""
    seen = {}  # {the file read: name}
    for name, parts in split.items():
        for part in parts:
            file = os.path.realpath(os.path.join(part, artifacts.HELD_OUT_CURVE) if os.path.isdir(part) else part)
            if seen.get(file, name) != name:
                raise ValueError(f"{seen[file]} and {name} both read {file}: one run under two names would be drawn "
                                 "as two; give each run once")
            seen[file] = name


def _note_started_from(part, previous):
    """A note where `part`, a run dir, records that it was started from another run than `previous` (or from
    none): then it is no continuation of it, whatever its curve."""
    config = os.path.join(part, artifacts.CONFIG)
    if not os.path.isdir(part) or not os.path.isfile(config):
        return
    try:
        with open(config, encoding="utf-8") as f:
            started = json.load(f).get("init_from")
    except (ValueError, OSError):
        return
    if started is None or not os.path.exists(started) or not os.path.samefile(started, previous):
        print(f"note: {part} was started from {started or 'no run (no --init_from)'}, not from {previous}: joined "
              "as its continuation all the same")


def check_same_records(curves, same_updates=True, places=None):
    """Refuses runs evaluated on different held-out records: their baselines differ (with the held-out settings
    that differ in their run dirs' config.json, `places` {name: run dir or file}); and, side by side
    (`same_updates`), runs with no update evaluated in all of them."""
    (first, points), *others = curves.items()
    places = places or {}
    for name, other in others:
        for key in ("mlm_unigram_baseline", "sop_majority_baseline"):
            if abs(other[0][key] - points[0][key]) > 1e-6:
                why = arguments.held_out_settings(places.get(first, first), places.get(name, name))
                raise ValueError(f"{first} and {name} were evaluated on different held-out records ({key} "
                                 f"{points[0][key]:.4f} against {other[0][key]:.4f}){why}: their accuracies do not "
                                 "compare")
    shared = set.intersection(*({p["step"] for p in c} for c in curves.values()))
    if same_updates and len(curves) > 1 and not shared:
        steps = "; ".join(f"{n}: {', '.join(str(p['step']) for p in c[:6])}{' ...' if len(c) > 6 else ''}"
                          for n, c in curves.items())
        raise ValueError(f"no update that every run has been evaluated at ({steps}): use the same --eval_every")


def markdown(curves):
    """The table at the updates every run has reached."""
    names = list(curves)
    by_step = [{p["step"]: p for p in points} for points in curves.values()]
    shared = sorted(set.intersection(*(set(s) for s in by_step)))
    head = ["updates"] + [f"{n} {what}" for n in names for what in ("MLM [95% CI]", "MLM loss", "SOP [95% CI]", "N")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for step in shared:
        cells = [f"{step:,}"]
        for points in by_step:
            p = points[step]
            (ml, mh), (sl, sh) = p["mlm_accuracy_interval"], p["sop_accuracy_interval"]
            depth = p.get("mean_iterations")
            cells += [f"{p['mlm_accuracy']:.3f} [{ml:.3f}, {mh:.3f}]", f"{p['mlm_loss']:.3f}",
                      f"{p['sop_accuracy']:.3f} [{sl:.3f}, {sh:.3f}]", "" if depth is None else f"{depth:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    first = next(iter(curves.values()))[0]
    lines.append(f"\nBaselines: MLM {first['mlm_unigram_baseline']:.3f} (most frequent piece; loss "
                 f"{first['mlm_unigram_loss']:.3f} without context), SOP "
                 f"{first['sop_majority_baseline']:.3f} (majority).")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m benchmarks.learning_curves", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="NAME=PART[+PART...]",
                        help="a run dir or held_out.jsonl per model; '+' joins a run and its continuation")
    parser.add_argument("--output_dir", default="runs/learning_curves",
                        help="where learning_curves.md, .json and .png go")
    parser.add_argument("--overwrite", action="store_true", help="replace an earlier result in --output_dir")
    args = cli.parse_checked(parser, argv, {"output_dir": "path"})
    try:
        check_output_dir(args.output_dir, args.overwrite, OUTPUT_FILES, "the benchmark",
                         "an earlier learning_curves result")
        named = arguments.named(args.runs, "a run dir or held_out.jsonl ('+' between a run and its continuation)",
                                "ACT=runs/english")
        split = {name: split_parts(parts) for name, parts in named.items()}
        _check_given_once(split)
        own = next((part for parts in split.values() for part in parts if os.path.basename(part) in OUTPUT_FILES and
                    os.path.realpath(os.path.dirname(part)) == os.path.realpath(args.output_dir)), None)
        if own:  # (read as a curve, it is the result this run replaces)
            raise ValueError(f"{own} is this benchmark's own earlier result in --output_dir {args.output_dir}, not a "
                             "held-out curve (which it would replace); give a run dir, or its held_out.jsonl")
        curves = {name: joined(f"{name}={named[name]}", parts) for name, parts in split.items()}
        check_same_records(curves, places={name: parts[0] for name, parts in split.items()})
    except (ValueError, OSError) as error:  # OSError: a read-only folder, where the lock goes
        raise SystemExit(arguments.refusal(error, args.output_dir)) from None
    names = list(curves)
    for i, name in enumerate(names):  # a run under two names (or its copy): two rows that are one
        for other in names[i + 1:]:
            if curves[name] == curves[other]:
                print(f"note: {name} and {other} have the same evaluations (the same run, or a copy of it)")
    arguments.run(_write, args.output_dir, curves, output=args.output_dir,
                  stopped=arguments.said_when_stopped(args.output_dir, "learning_curves.json"))
    return curves


OUTPUT_FILES = ("learning_curves.md", "learning_curves.json", "learning_curves.png")


def _write(output_dir, curves):
    from albert_act.analysis import plots
    from albert_act.base import outputs

    table = markdown(curves)
    print(table)
    arguments.write_whole(output_dir, {  # the three files, or the earlier result: never a mix
        "learning_curves.md": lambda path: outputs.write_file(path, (table + "\n").encode("utf-8")),
        "learning_curves.json": lambda path: outputs.write_file(path, json.dumps(curves, indent=1).encode("utf-8")),
        "learning_curves.png": lambda path: plots.plot_learning_curve(curves, path)})
    print(f"\nplot: {os.path.join(output_dir, 'learning_curves.png')}")


if __name__ == "__main__":
    entry.run(main)
