"""GLUE submission from tiny exported models: files parsed back and validated; incomplete zips refused."""

import zipfile

import pytest

from albert_act.io.source import Source
from albert_act.serve import savedmodel, submission
from albert_act.model.classifier import AlbertActClassifier
from pipelines import glue


@pytest.fixture(scope="module")
def models(tiny_run, tmp_path_factory):
    """Untrained tiny classifiers exported for rte, sts-b and wnli (what the submission reads),
    in TensorFlow Serving's layout: <models>/<task>/<version>; the highest version is used."""
    root = tmp_path_factory.mktemp("models")
    for task in ("rte", "sts-b", "wnli"):
        source = Source.open(tiny_run[0])
        (backbone, _), tokenizer = source.backbone(), source.tokenizer()
        spec = glue.TASKS[task]
        model = AlbertActClassifier(backbone, num_classes=len(spec.labels) or 1)
        savedmodel.export_classifier(model, str(root / task / "2"), tokenizer.model_proto, spec.name, spec.labels,
                                  True, 64)
    (root / "rte" / "1").mkdir()  # an older, empty version: not picked
    return root


@pytest.mark.slow  # the tests on exported models (~75 s with their 3 exports): `pytest -m slow`
def test_partial_submission_is_written_validated_and_labelled(shared_data, models, tmp_path):
    output = str(tmp_path / "submission.zip")
    result = submission.build_submission(str(models), str(shared_data / "glue"), output, allow_partial=True,
                                              progress=False)
    assert sorted(result["written"]) == ["RTE.tsv", "STS-B.tsv", "WNLI.tsv"]
    assert set(result["missing"]) == set(submission.SUBMISSION) - {"RTE.tsv", "STS-B.tsv", "WNLI.tsv"}
    with zipfile.ZipFile(output) as archive:
        assert sorted(archive.namelist()) == ["RTE.tsv", "STS-B.tsv", "WNLI.tsv"]
        assert archive.comment.decode().startswith("PARTIAL submission, missing: CoLA.tsv")
        rte = archive.read("RTE.tsv").decode().splitlines()
        stsb = archive.read("STS-B.tsv").decode().splitlines()
    assert rte[0] == "index\tprediction" and len(rte) == 3001
    assert [line.split("\t")[0] for line in rte[1:]] == [str(i) for i in range(3000)]
    assert {line.split("\t")[1] for line in rte[1:]} <= {"entailment", "not_entailment"}
    assert len(stsb) == 1380 and all(0.0 <= float(line.split("\t")[1]) <= 5.0 for line in stsb[1:])


@pytest.mark.slow  # ~10 s; `pytest -m slow`
@pytest.mark.slow
def test_incomplete_submission_is_refused(shared_data, models, tmp_path):
    with pytest.raises(ValueError, match=r"incomplete submission, not written; missing: CoLA.tsv \(no cola model"):
        submission.build_submission(str(models), str(shared_data / "glue"), str(tmp_path / "s.zip"), progress=False)
    assert not (tmp_path / "s.zip").exists()


def test_a_task_folder_without_a_model_says_what_it_lacks(shared_data, tmp_path):
    (tmp_path / "sst-2").mkdir()
    (tmp_path / "mrpc").mkdir()
    (tmp_path / "mrpc" / "classifier.json").write_text("{}")
    (tmp_path / "mrpc" / "classifier.weights.h5").write_bytes(b"")  # a finished epoch's weights
    (tmp_path / "sts-b").mkdir()
    (tmp_path / "sts-b" / "classifier.json").write_text("{}")  # stopped before its first epoch ended
    (tmp_path / "rte").write_text("not a folder")
    (tmp_path / "cola").symlink_to("cola")  # a loop
    found, missing = submission._inputs(str(tmp_path), str(shared_data / "glue"))
    assert missing["RTE.tsv"] == (f"{tmp_path}/rte is a file, not a folder: a task's entry is a folder holding a "
                                  "fine-tuning dir or an export")
    assert found == {} and missing["CoLA.tsv"] == f"{tmp_path}/cola is a symbolic link that names no place (a loop, or a missing target)"
    assert missing["QNLI.tsv"] == f"no qnli model in {tmp_path}"
    assert missing["SST-2.tsv"] == (f"{tmp_path}/sst-2 holds no export: an export's versions are numbered folders "
                                    f"({tmp_path}/sst-2/1/), and a fine-tuning dir holds classifier.json and export/")
    assert missing["MRPC.tsv"] == (f"{tmp_path}/mrpc is a fine-tuning dir without its export/: make it with python -m "
                                   f"albert_act.export --checkpoint {tmp_path}/mrpc --kind classifier --output "
                                   f"{tmp_path}/mrpc/export/1")
    assert missing["STS-B.tsv"] == (f"{tmp_path}/sts-b is a fine-tuning dir that finished no epoch (no "
                                    f"classifier.weights.h5): run its fine-tuning again (python -m albert_act.finetune "
                                    f"--config {tmp_path}/sts-b/finetune_config.json --output_dir {tmp_path}/sts-b), "
                                    "which exports it")


def test_validation_catches_bad_files(shared_data, tmp_path):
    examples, _ = glue.read_glue("rte", str(shared_data / "glue" / "RTE"), "test")
    path = tmp_path / "RTE.tsv"
    rows = [f"{e.guid}\tentailment" for e in examples]
    rows[5] = "5\tentails"  # wrong spelling
    rows[7] = rows[6]  # index 6 twice, 7 missing
    path.write_text("index\tprediction\n" + "\n".join(rows) + "\n")
    problems = submission.validate(str(path), "rte", examples)
    assert "RTE.tsv line 7: label 'entails' not in ['entailment', 'not_entailment']" in problems
    assert "RTE.tsv: 1 test indices missing, 1 repeated, 0 unknown (expected 3000 rows)" in problems
    path.write_text("id\tlabel\n")
    assert submission.validate(str(path), "rte", examples) == ["RTE.tsv: header must be 'index<TAB>prediction'"]


@pytest.mark.slow
def test_a_model_in_the_wrong_folder_is_refused(shared_data, models, tmp_path):
    import shutil

    shutil.copytree(models / "wnli", tmp_path / "models" / "rte")
    with pytest.raises(ValueError, match=r"was fine-tuned on wnli, not rte"):
        submission.build_submission(str(tmp_path / "models"), str(shared_data / "glue"),
                                         str(tmp_path / "s.zip"), allow_partial=True, progress=False)


@pytest.mark.slow
def test_task_folders_spelled_as_glue_data_spells_them_are_found(shared_data, models, tmp_path):
    import shutil

    shutil.copytree(models / "wnli", tmp_path / "models" / "WNLI")  # glue_data's spelling
    (tmp_path / "models" / "notes").mkdir()
    assert submission.task_folder(str(tmp_path / "models"), "wnli") == str(tmp_path / "models" / "WNLI")
    assert submission.task_folder(str(tmp_path / "models"), "rte") is None
    result = submission.build_submission(str(tmp_path / "models"), str(shared_data / "glue"),
                                         str(tmp_path / "s.zip"), allow_partial=True, progress=False)
    assert result["written"] == ["WNLI.tsv"]
    with zipfile.ZipFile(tmp_path / "s.zip") as archive:
        assert len(archive.read("WNLI.tsv").decode().splitlines()) == 147  # header + WNLI's 146 test rows
    (tmp_path / "models" / "wnli").mkdir()
    with pytest.raises(ValueError, match=r"holds WNLI and wnli: one folder per task"):
        submission.task_folder(str(tmp_path / "models"), "wnli")


def test_no_task_model_at_all_writes_nothing_even_when_partial_is_allowed(shared_data, tmp_path):
    (tmp_path / "models" / "recognizing_entailment").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"no task's model found in --models .*models \(it holds "
                                         r"\['recognizing_entailment'\]\); expected folders named after the tasks "
                                         r"\(cola, .*\), each holding .*; nothing written"):
        submission.build_submission(str(tmp_path / "models"), str(shared_data / "glue"), str(tmp_path / "s.zip"),
                                    allow_partial=True, progress=False)
    assert not (tmp_path / "s.zip").exists()


def test_a_task_folder_given_as_data_dir_is_named(shared_data, tmp_path):
    """--data_dir RTE/ (a task's folder): the refusal blamed --models, which did hold the rte model."""
    assets = tmp_path / "models" / "rte" / "1" / "assets"
    assets.mkdir(parents=True)
    (assets / "albert_act_export.json").write_text("{}")  # found from the folders alone, before any model runs
    with pytest.raises(ValueError, match=r"--data_dir \S*RTE: no test data at \S*RTE/RTE/test.tsv; --data_dir is "
                                         r"the GLUE folder holding a folder per task"):
        submission.build_submission(str(tmp_path / "models"), str(shared_data / "glue" / "RTE"),
                                    str(tmp_path / "s.zip"), allow_partial=True, progress=False)
    assert not (tmp_path / "s.zip").exists()


def test_a_stop_just_after_the_zip_is_in_place_says_it_was_written(tmp_path):
    """Ctrl-C that lands after the zip's rename (the last step) said "no zip was written" beside the new,
    whole zip; a stop before it keeps saying so."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "models").mkdir()
    (tmp_path / "glue").mkdir()
    for written in (True, False):
        script = ("from albert_act import glue_submission\nfrom albert_act.serve import submission\n"
                  "def build(models, data_dir, output, allow_partial):\n"
                  f"    if {written}:\n        open(output, 'wb').write(b'PK')\n"
                  "    raise KeyboardInterrupt\n"
                  "submission.build_submission = build\n"
                  f"glue_submission.main(['--models', {str(tmp_path / 'models')!r}, '--data_dir', "
                  f"{str(tmp_path / 'glue')!r}, '--output', {str(tmp_path / 's.zip')!r}, '--overwrite'])\n")
        ended = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[1],
                               capture_output=True, text=True, timeout=120)
        said = ended.stderr.strip().splitlines()[-1]
        assert ended.returncode == 130 and "Traceback" not in ended.stderr, ended.stderr[-2000:]
        assert said == (f"stopped: {tmp_path / 's.zip'} was written whole, all its files validated, just before the "
                        "stop" if written else f"stopped: no zip was written ({tmp_path / 's.zip'}, if it exists, is "
                        "the previous one); re-run the same command")
