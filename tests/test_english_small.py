"""benchmarks.english_small: its flags and pretrain's checked before the data is built, Ctrl-C while it is."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks import english_small

REPO = Path(__file__).resolve().parent.parent


def _wikipedia(root, documents=3):
    """A folder with the three text files the recipe reads (synthetic text)."""
    from pipelines.synthetic_corpus import write_corpus

    for name in (*english_small.TRAIN_TEXT, english_small.VALID_TEXT):
        write_corpus(root / name, documents, seed=len(name))
    return root


@pytest.mark.parametrize("flags, message", [
    (["--stesp", "5"], r"go to python -m albert_act.pretrain, which refused the one above"),
    (["--steps", "0"], r"--steps must be an integer in \[1, 100000000\], got 0"),
    (["--dupe_factor", "0"], r"--dupe_factor must be an integer in \[1, 100\], got 0"),
    (["--data_dir", "{file}"], r"--data_dir .*notes.txt is a file, not a directory"),
], ids=["typo", "steps-0", "dupe-0", "data-dir-a-file"])
def test_bad_flags_end_it_before_the_data_is_built(flags, message, tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    flags = [f.format(file=tmp_path / "notes.txt") for f in flags]
    data_dir = ["--data_dir", str(tmp_path / "data")] if "--data_dir" not in flags else []
    with pytest.raises(SystemExit) as stop:
        english_small.main(["--wikipedia", str(_wikipedia(tmp_path / "wiki")), "--model_dir", str(tmp_path / "run"),
                            *data_dir, *flags])
    assert stop.value.code != 0
    assert re.search(message, str(stop.value)), stop.value
    assert not (tmp_path / "data").exists() and not (tmp_path / "run").exists()


def test_ctrl_c_while_the_data_is_built_stops_with_one_line(tmp_path):
    """Started in the background (SIGINT ignored, as a shell's `&` leaves it), it still stops at Ctrl-C
    while the records are written: it had gone on for minutes, building every record."""
    from pipelines.tokenizer import train_sentencepiece

    wiki = _wikipedia(tmp_path / "wiki", documents=6000)  # records for ~4 s on 2 cores
    (tmp_path / "data").mkdir()  # the vocabulary already built: the signal lands in the records step
    (tmp_path / "data" / "vocab.model").write_bytes(train_sentencepiece(
        [str(wiki / english_small.VALID_TEXT)], vocab_size=400, model_type="bpe"))
    command = [sys.executable, "-m", "benchmarks.english_small", "--wikipedia", str(wiki), "--data_dir",
               str(tmp_path / "data"), "--model_dir", str(tmp_path / "run"), "--steps", "2"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        for line in process.stdout:  # "vocabulary: ... (already built)": the records step begins
            if line.startswith("vocabulary:"):
                break
        time.sleep(0.3)
        assert process.poll() is None, process.communicate()[1][-2000:]
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        process.kill()
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 130 and "Traceback" not in err, err[-3000:]
    assert len(lines) == 1 and lines[0].startswith("stopped: "), err[-2000:]
    assert not (tmp_path / "data" / "train" / "stats.json").exists()
