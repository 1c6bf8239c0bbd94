"""From a command's model-path argument to a loaded model, every command and every kind of path goes
through one `Source`: the path enters at most 4 places besides the command's own module (5 for
pretrain), a place being a project module or `albert_act.io` as a whole
(the one package that reads what a path holds: the source, a run's checkpoints, exports, public
checkpoints), no lower stage calls a higher one, and control comes back up the stages at most twice
(see `call_path`; each command runs for real, stopped once its model is loaded)."""

import pytest

from call_path import summary, trace
from test_public_checkpoints import write_hf


class Loaded(Exception):
    """Raised by a command stubbed to stop once its model is loaded (the rest is not on the path)."""


@pytest.fixture(scope="module")
def hf(records, tmp_path_factory):
    from pathlib import Path

    return write_hf(tmp_path_factory.mktemp("hf_path") / "albert", str(Path(records[0]).parent.parent / "vocab.model"))


@pytest.fixture(scope="module")
def rte(tmp_path_factory):
    data = tmp_path_factory.mktemp("rte")
    for split, who in (("train", "A man plays a guitar"), ("dev", "A woman plays a drum")):  # (dev apart from train)
        rows = "".join(f"{i}\t{who} {i}.\tA man plays.\t{'entailment' if i % 2 else 'not_entailment'}\n" for i in range(8))
        (data / f"{split}.tsv").write_text("index\tsentence1\tsentence2\tlabel\n" + rows)
    return str(data)


def _stop_after(monkeypatch, module, name):
    """The command stops with `Loaded` where it would first use the loaded model."""
    def stop(*args, **kwargs):
        raise Loaded
    monkeypatch.setattr(module, name, stop)


def _commands(kind_path, records, rte, out, monkeypatch):
    from albert_act import analyze, export, finetune, pretrain
    from albert_act.analysis import report
    from albert_act.serve import savedmodel
    from albert_act.train import finetuning_run, pretraining_run

    _stop_after(monkeypatch, savedmodel, "export_pretraining")
    _stop_after(monkeypatch, finetuning_run, "EncodedTask")
    _stop_after(monkeypatch, report, "held_out_records")
    _stop_after(monkeypatch, pretraining_run, "_train")
    return {
        "export --checkpoint": lambda: export.main(["--checkpoint", kind_path, "--kind", "pretraining",
                                                    "--output", str(out / "export" / "1")]),
        "finetune --init": lambda: finetune.main(["--task", "rte", "--data_dir", rte, "--init", kind_path,
                                                  "--output_dir", str(out / "finetune"), "--epochs", "1"]),
        "analyze --init": lambda: analyze.main(["token-types", "--init", kind_path,
                                                "--output_dir", str(out / "analysis")]),
        "pretrain --init_from": lambda: pretrain.main(["--init_from", kind_path, "--train_files", records[0],
                                                       "--eval_files", records[1], "--model_dir", str(out / "run"),
                                                       "--steps", "1", "--global_batch_size", "8",
                                                       "--micro_batch_size", "8", "--no_export"]),
    }


@pytest.mark.parametrize("kind", [  # the longest path by default; the others (~30 s each) with -m slow
    pytest.param("pretraining-run", marks=pytest.mark.slow), pytest.param("export", marks=pytest.mark.slow),
    "huggingface"])
def test_a_model_path_reaches_a_loaded_model_through_one_source(kind, tiny_run, hf, records, rte, tmp_path,
                                                                 monkeypatch, capsys):
    path = {"pretraining-run": tiny_run[0], "export": tiny_run[1], "huggingface": hf}[kind]
    for command, run in _commands(path, records, rte, tmp_path, monkeypatch).items():
        def until_loaded():
            with pytest.raises(Loaded):
                run()
        module = "albert_act." + command.split()[0]
        modules, upward = trace(path, module, until_loaded)
        entered, turns, sequence = summary(modules, module)
        places = sorted({m.rsplit(".", 1)[0] if m.startswith(("albert_act.io.", "albert_act.base.")) else m
                         for m in entered})  # (the io and base packages each one place: their files split by concern)
        print(f"{command} {kind}: {len(places)} places, {upward} upward calls, {turns} returns up: {' > '.join(sequence)}")
        assert "albert_act.io.source" in entered, (command, sequence)
        # pretrain: the config (its sizes from the source) and the run loop (the warm start) are two
        # modules, as the split by concern wants.
        limit = 5 if command.startswith("pretrain") else 4
        assert len(places) <= limit and upward <= 1 and turns <= 2, (command, kind, sequence)
