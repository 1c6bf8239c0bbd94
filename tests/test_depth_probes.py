"""benchmarks.depth_probes: one row per pre-training run; its inputs checked before any model loads."""

import json
import re
import shutil

import numpy as np
import pytest

from benchmarks import depth_probes


def test_served_sentences_mask_the_longest_word_of_lines_in_range(tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("too short a line\n"
                    "The committee approved the extraordinary budget on Monday.\n"
                    "\n"
                    "Another sentence, with (parentheses) around a longer word!\n")
    assert depth_probes.served_sentences(str(text), 5) == [
        "The committee approved the [MASK] budget on Monday.",
        "Another sentence, with ([MASK]) around a longer word!"]  # the punctuation kept around it
    assert len(depth_probes.served_sentences(str(text), 1)) == 1
    with pytest.raises(ValueError, match=r"--sentences_from .*text.txt: no line of 20 to 40 words"):
        depth_probes.served_sentences(str(text), 5, min_words=20)


def test_probe_arguments_name_finished_runs(tiny_run, tmp_path):
    run = tiny_run[0]
    shutil.copytree(run, tmp_path / "copy")
    assert depth_probes.parse_probes([f"a={run}", f"b-2={tmp_path / 'copy'}"]) == {"a": run, "b-2": str(tmp_path / 'copy')}
    with pytest.raises(ValueError, match=rf"a={run} and b={run}/ are the same run \({run}\): give each run once"):
        depth_probes.parse_probes([f"a={run}", f"b={run}/"])  # (one run as two probes: its row twice)
    form = "give NAME=VALUE, a name and a pre-training run dir"
    bad = {f"{run}": form, f"={run}": form, "a=": form,
           f"x/y={run}": "must be letters, digits", f"..={run}": "must be letters, digits",
           f"a={tmp_path / 'nope'}": r"nope is not a finished pre-training run dir \(no such folder",
           f"a={tiny_run[1]}": r"is not a finished pre-training run dir \(no config.json or evaluation.json"}
    for item, message in bad.items():
        with pytest.raises(ValueError, match=message):
            depth_probes.parse_probes([item])
    with pytest.raises(ValueError, match=r"the name .a. is given twice"):
        depth_probes.parse_probes([f"a={run}", f"a={run}"])


@pytest.mark.parametrize("flags, message", [
    (["--count", "0"], r"--count must be an integer >= 1, got 0"),
    (["--output_dir", ""], r"--output_dir must be a path, got ''"),
    (["--output_dir", "{notes}"], r"notes.txt is a file"),
    (["--sentences", "{empty}"], r"empty.txt: no sentences"),
    (["--sentences", "{utf16}"], r"utf16.txt: UTF-16"),
    (["--records", "{tmp}/nowhere/*.tfrecord"], r"no held-out TFRecord file matches"),
    (["--reference", "{tmp}/nowhere"], r"nowhere"),
    (["--sentences", "{angled}"], r"angled.txt: 2 lines hold '<MASK>', which this model reads as letters, and none its "
                                  r"mask: write \[MASK\]"),
    *[(["--sentences", "{" + name + "}"], rf"{name}.txt: 2 lines hold '{re.escape(blank)}', which this model reads as "
       r"letters, and none its mask: write \[MASK\]") for name, blank in (
        ("bracketed", "[BLANK]"), ("elided", "[...]"), ("gap", "(gap)"))],  # (round 46 A60 to A63: a cloze's blanks)
], ids=["count-0", "output-empty", "output-a-file", "sentences-empty", "sentences-utf16", "records-none", "reference-missing",
        "sentences-masked-another-way", "sentences-blank-bracketed", "sentences-blank-elided", "sentences-blank-gap"])
def test_bad_inputs_are_one_line(flags, message, tiny_run, records, tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "empty.txt").write_text("\n  \n")
    (tmp_path / "utf16.txt").write_bytes("a sentence of quite a few words here".encode("utf-16"))
    (tmp_path / "s.txt").write_text("the [MASK] sat on the mat\n")
    (tmp_path / "angled.txt").write_text("the <MASK> sat on the mat\nthe dog <MASK> at me\n")  # (another model's)
    names = dict(notes=tmp_path / "notes.txt", empty=tmp_path / "empty.txt", utf16=tmp_path / "utf16.txt", tmp=tmp_path,
                 angled=tmp_path / "angled.txt")
    for name, blank in (("bracketed", "[BLANK]"), ("elided", "[...]"), ("gap", "(gap)")):
        names[name] = tmp_path / f"{name}.txt"
        names[name].write_text(f"the {blank} sat on the mat\nthe dog {blank} at me\n")
    given = {"--records": records[1], "--sentences": str(tmp_path / "s.txt"), "--output_dir": str(tmp_path / "out")}
    for flag, value in zip(flags[::2], flags[1::2]):
        given[flag] = value.format(**names)
    with pytest.raises(SystemExit) as stop:
        depth_probes.main([f"t={tiny_run[0]}"] + [a for pair in given.items() for a in pair])
    assert str(stop.value).startswith("error: ") and re.search(message, str(stop.value)), stop.value
    assert not (tmp_path / "out").exists()


def test_a_row_per_probe(tiny_run, records, tmp_path, capsys):
    sentences = tmp_path / "s.txt"
    sentences.write_text("the [MASK] sat on the mat\nsome more words to serve\n" + "word " * 100 + "[MASK]\n")
    depth_probes.main([f"tiny={tiny_run[0]}", "--records", records[1], "--sentences", str(sentences),
                       "--output_dir", str(tmp_path / "table")])
    rows = json.loads((tmp_path / "table" / "probes.json").read_text())
    evaluation = rows["tiny"]["evaluation"]
    final = json.loads(open(f"{tiny_run[0]}/evaluation.json").read())
    assert evaluation["mlm"] == final["mlm_accuracy"] and evaluation["step"] == final["step"]
    served = rows["tiny"]["served"]
    assert served["sentences"] == 3 and served["cut"] == 1 and abs(sum(served["shares"]) - 1) < 1e-9
    depths = np.arange(1, len(served["shares"]) + 1)
    assert served["mean_n"] == pytest.approx(float(np.dot(depths, served["shares"])))
    out = capsys.readouterr().out
    assert "| tiny | " in out and (tmp_path / "table" / "probes.md").exists()
    assert "note: 1 of 3 served sentences are longer than the model's 64 positions and were cut; 1 of them lost " \
           "their [MASK]" in out and "Served: 3 lone sentences, 2 of them with a [MASK] (2 in all) (1 cut to the model length)" in out


def test_the_table_and_each_probes_analysis_replace_an_earlier_table_together(tiny_run, records, tmp_path,
                                                                              monkeypatch, capsys):
    """The table, its JSON and each probe's difficulty analysis are written into a folder beside --output_dir,
    which replaces it whole at the end: a run that fails after a probe's analysis leaves the earlier table and
    analyses as they were, and no lock or staging folder of its own."""
    import errno
    import os

    sentences = tmp_path / "s.txt"
    sentences.write_text("the [MASK] sat on the mat\n")
    table = tmp_path / "table"
    flags = [f"tiny={tiny_run[0]}", "--records", records[1], "--sentences", str(sentences), "--output_dir", str(table),
             "--reference", tiny_run[0]]
    depth_probes.main(flags)
    rows = json.loads((table / "probes.json").read_text())
    assert sorted(os.listdir(table)) == ["probes.json", "probes.md", "tiny"] and "rho" in rows["tiny"]["difficulty"]
    assert not [n for n in os.listdir(table / "tiny") if n.endswith(".lock")]  # the analysis's lock went with it
    earlier = {path: path.read_bytes() for path in table.rglob("*") if path.is_file()}
    assert table / "tiny" / "difficulty.json" in earlier

    def analysed_then_full(name, run, sentences, args, staged):
        os.makedirs(os.path.join(staged, name))
        open(os.path.join(staged, name, "difficulty.json"), "w").write("{}")
        raise OSError(errno.ENOSPC, "No space left on device", os.path.join(staged, name))

    assert depth_probes._earlier_probes(str(table)) == {"tiny"}  # (its own probe folder: replaced with it, not
    # refused as another's file by a run of other probes)
    monkeypatch.setattr(depth_probes, "probe_row", analysed_then_full)
    with pytest.raises(SystemExit) as failed:
        depth_probes.main([*flags, "--overwrite"])
    assert str(failed.value.code).startswith(f"error: could not write {table}: No space left on device")
    assert {path: path.read_bytes() for path in table.rglob("*") if path.is_file()} == earlier
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".")], os.listdir(tmp_path)  # no lock, no staging
    capsys.readouterr()


def test_a_run_without_speed_points_has_no_cost_cell():
    """A JAX run writes no TensorBoard point of its speed: its "s / update" cell is "-", not nan."""
    assert depth_probes._cost(float("nan")) == "-" and depth_probes._cost(1.234) == "1.23"


def test_a_probe_whose_depth_does_not_vary_has_no_rho_but_says_why():
    """Spearman's rho is nan where N (or surprisal) is the same for every piece: the cell says so, not "+nan"."""
    nan, diff = float("nan"), {"mean": 0.0, "interval": [0.0, 0.0]}
    row = {"evaluation": {"step": 8, "mlm": 0.1, "mlm_interval": [0.05, 0.15], "mean_n": 2.0, "shares": [0.0, 1.0],
                          "std_n": 0.0, "cls": diff, "mask": diff},
           "difficulty": {"rho": [nan, nan, nan], "e_rise": 0.0}, "served": {"std_n": 0.0, "mean_n": 2.0},
           "seconds_per_update": 1.0}
    table = depth_probes.markdown({"flat": row}, 2)
    assert "| 0.00 | - (no variation) | +0.00 |" in table and "nan" not in table


def test_a_run_whose_evaluation_is_emptied_is_named(tiny_run, records, tmp_path):
    """A run's evaluation.json that holds no evaluation (edited to {}): its file named, no KeyError."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    (run / "evaluation.json").write_text("{}")
    (tmp_path / "s.txt").write_text("the [MASK] sat on the mat\n")
    with pytest.raises(SystemExit, match=r"error: \S+run/evaluation.json: no 'iterations' where a run's held-out "
                                         r"evaluation has it \(edited, or another tool's file\?\)"):
        depth_probes.main([f"t={run}", "--records", records[1], "--sentences", str(tmp_path / "s.txt"),
                           "--output_dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("key, value, said", [
    ("mlm_accuracy", "0.5", r"mlm_accuracy is '0.5', where a run's held-out evaluation writes an accuracy in \[0, 1\]"),
    ("mlm_accuracy", 7.5, r"mlm_accuracy is 7.5, where a run's held-out evaluation writes an accuracy in \[0, 1\]"),
    ("sop_accuracy", True, r"sop_accuracy is True, where"),
], ids=["a-string", "above-1", "a-bool"])
def test_an_edited_evaluation_is_named_with_its_field(key, value, said, tiny_run, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    evaluation = json.loads(open(f"{tiny_run[0]}/evaluation.json").read())
    (run / "evaluation.json").write_text(json.dumps({**evaluation, key: value}))
    with pytest.raises(ValueError, match=said + r".*edited, or another tool's file\?"):
        depth_probes.evaluation_row(str(run))


def test_an_evaluation_its_runs_curve_contradicts_is_refused(tiny_run, tmp_path):
    """evaluation.json edited to MLM 0.9 was tabled for a run at chance, whose held_out.jsonl line of that update said
    otherwise (round 44 B98), as learning_curves refuses; a run whose two agree is read."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    depth_probes.evaluation_row(str(run))
    evaluation = json.loads((run / "evaluation.json").read_text())
    (run / "evaluation.json").write_text(json.dumps({**evaluation, "mlm_accuracy": 0.9}))
    with pytest.raises(ValueError, match=r"held_out.jsonl: its evaluation of update 3 \(MLM [\d.]+, SOP [\d.]+\) is not "
                                         r"the run's own of that update in evaluation.json \(MLM 0.900, "):
        depth_probes.evaluation_row(str(run))


def test_probes_evaluated_on_different_held_out_records_are_refused(tiny_run, records, tmp_path):
    """A JAX run (its token corpus, --eval_batches 1) beside a TensorFlow run (the records, --eval_batches 2) was
    tabled side by side without a word; learning_curves refused the same pair. The JAX run names its one held-out
    shard where the other gave the glob matching it: the same records, not named as a difference (round 43 B86)."""
    import glob

    runs = {}
    for name, baseline, backend in (("a", None, None), ("b", 0.1234, "jax")):
        runs[name] = tmp_path / name
        runs[name].mkdir()
        evaluation = json.loads(open(f"{tiny_run[0]}/evaluation.json").read())
        config = json.loads(open(f"{tiny_run[0]}/config.json").read())
        (runs[name] / "evaluation.json").write_text(json.dumps(
            {**evaluation, "mlm_unigram_baseline": baseline or evaluation["mlm_unigram_baseline"],
             "model_dir": str(runs[name])}))
        if backend:  # (a JAX run's config.json holds no eval_shards)
            config = {**{k: v for k, v in config.items() if k != "eval_shards"}, "backend": backend,
                      "eval_files": sorted(glob.glob(records[1]))}
        (runs[name] / "config.json").write_text(json.dumps(config))
    depth_probes.check_same_held_out({"a": str(runs["a"]), "c": str(tiny_run[0])})
    with pytest.raises(ValueError, match=r"a=\S+a and b=\S+b were evaluated on different held-out records "
                                         r"\(mlm_baseline [\d.]+ against 0.1234\); their runs' config.json differ in "
                                         r"backend 'tensorflow' against 'jax': their accuracies do not compare"):
        depth_probes.check_same_held_out({"a": str(runs["a"]), "b": str(runs["b"])})


def test_an_evaluation_copied_from_another_run_is_refused(tiny_run, tmp_path):
    """A run's evaluation.json replaced by a fixed-depth run's made one row of two models: its depth from the other
    run's file, its served depth from this run's weights. A moved run (the run it names gone) is read."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    other = tmp_path / "other"
    shutil.copytree(tiny_run[0], other)
    evaluation = json.loads((run / "evaluation.json").read_text())
    (run / "evaluation.json").write_text(json.dumps({**evaluation, "model_dir": str(other)}))
    assert depth_probes.evaluation_row(str(run))["step"] == evaluation["step"]  # (a copy of the run: read)
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "halting": "none"}))  # (a fixed-depth run's evaluation)
    with pytest.raises(ValueError, match=r"run/evaluation.json is the evaluation of another run \(\S+other, per its "
                                         r"model_dir, whose settings differ: halting 'none' against 'act'\), copied in"):
        depth_probes.evaluation_row(str(run))
    shutil.rmtree(other)  # (the run it names gone: this one moved from there)
    assert depth_probes.evaluation_row(str(run))["step"] == evaluation["step"]


def test_an_evaluation_of_another_update_is_refused(tiny_run, tmp_path):
    """An evaluation.json saying update 2 of a run that finished at 3 was tabled beside update 3's served depth."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(tiny_run[0], run)
    evaluation = json.loads((run / "evaluation.json").read_text())
    (run / "evaluation.json").write_text(json.dumps({**evaluation, "step": evaluation["step"] - 1}))
    with pytest.raises(ValueError, match=rf"evaluation.json: of update {evaluation['step'] - 1}, where the run's last "
                                         rf"is {evaluation['step']} \(its config.json's steps"):
        depth_probes.evaluation_row(str(run))
