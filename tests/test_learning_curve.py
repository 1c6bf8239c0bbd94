"""The learning curve re-evaluates a run's kept checkpoints exactly as the run's own final evaluation."""

import json
from pathlib import Path

import pytest

from conftest import png_ink

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # ~40 s: rebuilds and re-evaluates the run; `pytest -m slow`
def test_the_last_point_is_the_runs_own_final_evaluation(tiny_run, tmp_path):
    from albert_act.analysis.plots import plot_learning_curve
    from albert_act.train.learning_curve import learning_curve, markdown

    run = Path(tiny_run[0])
    final = json.loads((run / "evaluation.json").read_text())
    points = learning_curve(str(run), eval_batches=1)
    assert [p["step"] for p in points] == [final["step"]] == [3]
    assert points[-1]["mlm_accuracy"] == pytest.approx(final["mlm_accuracy"], abs=1e-6)
    assert points[-1]["sop_accuracy"] == pytest.approx(final["sop_accuracy"], abs=1e-6)
    assert points[-1]["mean_iterations"] == pytest.approx(final["iterations"]["all"]["mean"], abs=1e-5)
    low, high = points[-1]["mlm_accuracy_interval"]
    assert low <= points[-1]["mlm_accuracy"] <= high
    table = markdown(points)
    assert f"| 3 | {final['mlm_accuracy']:.3f} [" in table and "(most frequent token)" in table
    plot_learning_curve(points, tmp_path / "curve.png")
    height, width, ink, _ = png_ink(tmp_path / "curve.png")
    assert width > height and 0.01 < ink < 0.5


def test_a_run_without_checkpoints_is_named(tiny_run, tmp_path):
    import shutil

    from albert_act.train.learning_curve import learning_curve

    copy = tmp_path / "run"
    shutil.copytree(tiny_run[0], copy)
    shutil.rmtree(copy / "checkpoints")
    with pytest.raises(ValueError, match=r"run: no checkpoints in .*checkpoints"):
        learning_curve(str(copy), eval_batches=1)


def _point(step, mlm, sop=0.6, baseline=0.045, depth=None):
    point = {"step": step, "mlm_accuracy": mlm, "mlm_accuracy_interval": [mlm - 0.01, mlm + 0.01],
             "mlm_unigram_baseline": baseline, "mlm_loss": 7 - 10 * mlm, "mlm_unigram_loss": 6.8,
             "sop_accuracy": sop, "sop_accuracy_interval": [sop - 0.02, sop + 0.02], "sop_majority_baseline": 0.51}
    return point if depth is None else {**point, "mean_iterations": depth}


def _write(path, points):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(p) + "\n" for p in points))
    return path


def test_a_continuation_counted_on_already_is_not_offset_again_and_one_started_back_is_noted(tmp_path, capsys):
    """A part whose updates start past the last of the part before is taken as counted on (no invented gap); a part
    that starts nearer where the one before started than where it ended is noted (the wrong order?)."""
    from benchmarks.learning_curves import joined

    first = _write(tmp_path / "first.jsonl", [_point(500, 0.1), _point(1000, 0.3)])
    counted = _write(tmp_path / "counted.jsonl", [_point(1500, 0.32), _point(2000, 0.34)])
    assert [p["step"] for p in joined("A", [str(first), str(counted)])] == [500, 1000, 1500, 2000]
    assert "counted.jsonl starts at update 1,500, past the last of" in capsys.readouterr().out
    back = _write(tmp_path / "back.jsonl", [_point(500, 0.12), _point(1000, 0.31)])
    assert [p["step"] for p in joined("A", [str(first), str(back)])] == [500, 1000, 1500, 2000]
    assert "back.jsonl starts at held-out MLM accuracy 0.120, nearer where" in capsys.readouterr().out


def test_learning_curves_join_a_run_and_its_continuation_and_compare_at_shared_updates(tmp_path, capsys):
    from benchmarks import learning_curves

    act = _write(tmp_path / "act" / "held_out.jsonl", [_point(s, 0.1 + s / 1e5, depth=3.0) for s in (500, 1000)])
    act_end = _write(tmp_path / "act_end.jsonl", [_point(500, 0.2, depth=2.9)])  # 500 updates after act's 1,000
    albert = _write(tmp_path / "albert.jsonl", [_point(s, 0.11 + s / 1e5, depth=6.0) for s in (500, 1000, 1500)])
    curves = learning_curves.main([f"ACT={act.parent}+{act_end}", f"ALBERT={albert}", "--output_dir", str(tmp_path / "out")])
    assert [p["step"] for p in curves["ACT"]] == [500, 1000, 1500] and curves["ACT"][-1]["mlm_accuracy"] == 0.2
    table = (tmp_path / "out" / "learning_curves.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| 1")]
    assert rows == ["| 1,000 | 0.110 [0.100, 0.120] | 5.900 | 0.600 [0.580, 0.620] | 3.00 | 0.120 [0.110, 0.130] | "
                    "5.800 | 0.600 [0.580, 0.620] | 6.00 |",
                    "| 1,500 | 0.200 [0.190, 0.210] | 5.000 | 0.600 [0.580, 0.620] | 2.90 | 0.125 [0.115, 0.135] | "
                    "5.750 | 0.600 [0.580, 0.620] | 6.00 |"]
    assert "MLM 0.045 (most frequent piece" in capsys.readouterr().out
    height, width, ink, colour = png_ink(tmp_path / "out" / "learning_curves.png")
    assert width > height and 0.01 < ink < 0.5 and colour > 0.001
    (tmp_path / "copy").mkdir()  # the same run under a second name: a note, as its rows are one
    (tmp_path / "copy" / "held_out.jsonl").write_bytes(albert.read_bytes())
    learning_curves.main([f"ALBERT={albert}", f"AGAIN={tmp_path / 'copy'}", "--output_dir", str(tmp_path / "out2")])
    assert "note: ALBERT and AGAIN have the same evaluations (the same run, or a copy of it)" in capsys.readouterr().out
    # a continuation evaluated at none of the first's updates (2 updates, from act's 1,000) joins all the same; a
    # run dir that records another --init_from is said to be no continuation of the part before it
    short = _write(tmp_path / "short" / "held_out.jsonl", [_point(2, 0.15, depth=2.8)])
    (tmp_path / "short" / "config.json").write_text(json.dumps({"init_from": str(tmp_path / "copy")}))
    curves = learning_curves.main([f"ACT={act.parent}+{short.parent}", "--output_dir", str(tmp_path / "out3")])
    assert [p["step"] for p in curves["ACT"]] == [500, 1000, 1002]
    assert (f"note: {short.parent} was started from {tmp_path / 'copy'}, not from {act.parent}: joined as its "
            "continuation all the same") in capsys.readouterr().out
    (tmp_path / "short" / "config.json").write_text(json.dumps({"init_from": str(act.parent)}))
    learning_curves.main([f"ACT={act.parent}+{short.parent}", "--output_dir", str(tmp_path / "out4")])
    assert "note:" not in capsys.readouterr().out


@pytest.mark.parametrize("runs, message", [
    (["ACT={act}", "ALBERT={other}"], r"ACT and ALBERT were evaluated on different held-out records \(mlm_unigram_baseline "
                                      r"0.0450 against 0.0480\)"),
    (["ACT={bad}"], r"bad.jsonl line 2: not JSON"),
    (["ACT={foreign}"], r"foreign.jsonl line 1: no mlm_accuracy_interval, .*\(not a held-out evaluation"),
    (["ACT={tmp}"], r"holds no held_out.jsonl: give a pre-training run dir \(it holds one after its first "
                    r"--eval_every evaluation\)"),
    (["{act}"], r"give NAME=VALUE, a name and a run dir or held_out.jsonl"),
    (["{sweep}"], r"lr=3e-4' \(a path, whose '=' ends no name\): give NAME=VALUE"),
    (["ACT={act}+"], r"an empty part"),
    (["ACT={act}+{other}"], r"act.jsonl and .*other.jsonl were evaluated on different held-out records"),
    (["ACT={act}", "ALBERT={later}"], r"no update that every run has been evaluated at \(ACT: 500; ALBERT: 1000\)"),
    (["ACT={text}"], r"text.jsonl line 1: step, accuracies, baselines and loss must be numbers"),
    (["ACT={act}", "ACT={act}"], r"the name 'ACT' is given twice"),
    (["ACT={act}+{back}"], r"back.jsonl line 1: step -500 is no update \(a whole number from 1\)"),
    (["ACT={twice}"], r"twice.jsonl line 2: a second evaluation of update 500, other than line 1's \(two runs' curves "
                      r"in one file\?\): keep one"),
    (["ACT={reversed}"], r"reversed.jsonl line 1: mlm_accuracy_interval \[0.9, 0.1\] is no interval \[low, high\]"),
    (["ACT={shallow}"], r"shallow.jsonl line 1: mean_iterations -2.0 is no mean depth \(1 iteration at least\)"),
    (["ACT={act}+{percent}"], r"percent.jsonl line 1: mlm_accuracy 25.0 is no share in \[0, 1\] \(a percentage\?\)"),
    (["ACT={act}+{longer}"], r"longer.jsonl holds every evaluation of .*act.jsonl \(a copy of its start\)"),
])
def test_learning_curves_refuse_what_does_not_compare(tmp_path, runs, message):
    from benchmarks import learning_curves

    places = {"act": _write(tmp_path / "act.jsonl", [_point(500, 0.1)]),
              "other": _write(tmp_path / "other.jsonl", [_point(500, 0.1, baseline=0.048)]),
              "bad": tmp_path / "bad.jsonl", "foreign": _write(tmp_path / "foreign.jsonl", [{"step": 1, "mlm_accuracy": 0.1}]),
              "tmp": tmp_path, "later": _write(tmp_path / "later.jsonl", [_point(1000, 0.1)]),
              "text": _write(tmp_path / "text.jsonl", [{**_point(500, 0.1), "mlm_accuracy": "0.1"}]),
              "sweep": _write(tmp_path / "lr=3e-4" / "held_out.jsonl", [_point(500, 0.1)]).parent,
              "twice": _write(tmp_path / "twice.jsonl", [_point(500, 0.1), _point(500, 0.3)]),
              "reversed": _write(tmp_path / "reversed.jsonl", [{**_point(500, 0.1), "mlm_accuracy_interval": [0.9, 0.1]}]),
              "shallow": _write(tmp_path / "shallow.jsonl", [_point(500, 0.1, depth=-2.0)]),
              "back": _write(tmp_path / "back.jsonl", [_point(-500, 0.1)]),
              "percent": _write(tmp_path / "percent.jsonl", [{**_point(500, 0.1), "mlm_accuracy": 25.0}]),
              "longer": _write(tmp_path / "longer.jsonl", [_point(500, 0.1), _point(1000, 0.2)])}
    places["bad"].write_text(json.dumps(_point(500, 0.1)) + "\n{not json\n")
    with pytest.raises(SystemExit, match=message) as stopped:
        learning_curves.main([r.format(**places) for r in runs] + ["--output_dir", str(tmp_path / "out")])
    assert str(stopped.value.code).startswith("error: ") and not (tmp_path / "out").exists()


def test_the_english_pages_table_2_is_the_benchmarks_output_for_the_committed_curves(tmp_path):
    """docs/english-model.md's Table 2 is pasted from `benchmarks.learning_curves` on the curves in
    docs/curves: a hand edit, or a curve committed without its table (or the other way), fails here."""
    from benchmarks import learning_curves

    curves_dir = REPO / "docs" / "curves"
    learning_curves.main([f"ACT={curves_dir / 'english_long.jsonl'}+{curves_dir / 'english_anneal.jsonl'}",
                          f"ALBERT={curves_dir / 'english_albert_long.jsonl'}+{curves_dir / 'english_albert_end.jsonl'}",
                          "--output_dir", str(tmp_path)])
    page = (REPO / "docs" / "english-model.md").read_text(encoding="utf-8")
    table = (tmp_path / "learning_curves.md").read_text(encoding="utf-8").rstrip("\n")  # what the command wrote
    assert table in page, "docs/english-model.md's Table 2 is not what benchmarks.learning_curves gives"
    assert table.count("\n| ") == 24 and "\n| 12,000 | 0.261 [0.256, 0.265] |" in table  # 500 to 12,000, both runs whole


def test_an_output_folder_the_system_will_not_write_is_one_line(tmp_path, monkeypatch):
    """A benchmark's --output_dir on a read-only disk: the lock beside it cannot be made, before any work. The
    checks before the work caught refusals (ValueError) only, and this OSError was a 27-line traceback; it is the
    one line that names the output (the same `arguments.refusal` in each benchmark that checks its --output_dir)."""
    import errno

    from albert_act.base import outputs
    from benchmarks import learning_curves

    act = _write(tmp_path / "act" / "held_out.jsonl", [_point(500, 0.1)])

    def read_only(self, name):
        raise OSError(errno.EROFS, f"Read-only file system; {self._guarded()} cannot be written there", self.path)

    monkeypatch.setattr(outputs.DirectoryLock, "_open_lock_file", read_only)
    with pytest.raises(SystemExit) as refused:
        learning_curves.main([f"ACT={act}", "--output_dir", str(tmp_path / "ro" / "out")])
    assert refused.value.code == (f"error: could not write {tmp_path}/ro/out: Read-only file system; --output_dir "
                                  f"{tmp_path}/ro/out cannot be written there ({tmp_path}/ro/out); nothing was written")


def test_a_plus_that_joins_files_and_names_one_too_is_refused(tmp_path, monkeypatch):
    """'x+y' where x, y and a file named 'x+y' all exist: two readings, neither taken without a word."""
    from benchmarks.learning_curves import split_parts

    monkeypatch.chdir(tmp_path)
    for name in ("x.jsonl", "y.jsonl", "anneal+v2.jsonl"):
        _write(tmp_path / name, [_point(500, 0.1)])
    assert split_parts("x.jsonl+anneal+v2.jsonl") == ["x.jsonl", "anneal+v2.jsonl"]
    _write(tmp_path / "x.jsonl+y.jsonl", [_point(500, 0.1)])
    with pytest.raises(ValueError, match=r"^x.jsonl\+y.jsonl names a file, and so does each of x.jsonl, y.jsonl"):
        split_parts("x.jsonl+y.jsonl")
