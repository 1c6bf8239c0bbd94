"""GLUE readers on the real files: official row counts, label sets, quirks, bad input."""

import collections

import pytest

from pipelines.glue import TASKS, get_task, read_glue

# Official GLUE numbers (../shared/data/glue/SOURCE.md): rows per split, and label counts where public.
EXPECTED = {
    "cola": ({"train": 8551, "dev": 1043, "test": 1063}, {"train": {"1": 6023, "0": 2528}, "dev": {"1": 721, "0": 322}}),
    "sst-2": ({"train": 67349, "dev": 872, "test": 1821}, {"train": {"1": 37569, "0": 29780}, "dev": {"1": 444, "0": 428}}),
    "mrpc": ({"train": 3668, "dev": 408, "test": 1725}, {"train": {"1": 2474, "0": 1194}, "dev": {"1": 279, "0": 129}}),
    "sts-b": ({"train": 5749, "dev": 1500, "test": 1379}, {}),
    "rte": ({"train": 2490, "dev": 277, "test": 3000},
            {"train": {"entailment": 1249, "not_entailment": 1241}, "dev": {"entailment": 146, "not_entailment": 131}}),
    "wnli": ({"train": 635, "dev": 71, "test": 146}, {"train": {"0": 323, "1": 312}, "dev": {"0": 40, "1": 31}}),
}


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_real_files_match_official_counts(shared_data, task):
    rows, label_counts = EXPECTED[task]
    directory = shared_data / "glue" / TASKS[task].directory
    for split, count in rows.items():
        examples, report = read_glue(task, str(directory), split)
        assert len(examples) == count and report["malformed_rows_skipped"] == 0, (task, split)
        assert all(e.text_a for e in examples)
        if TASKS[task].text_b is not None:
            assert all(e.text_b is not None for e in examples)
        if split in label_counts:
            assert dict(collections.Counter(e.label for e in examples)) == label_counts[split]
        if split == "test":
            assert [e.guid for e in examples] == [str(i) for i in range(count)]
            assert all(e.label is None for e in examples)


def test_quirks(shared_data):
    glue = shared_data / "glue"
    mrpc, _ = read_glue("mrpc", str(glue / "MRPC"), "train")
    assert not mrpc[0].text_a.startswith("\ufeff") and mrpc[0].label in ("0", "1")
    stsb, _ = read_glue("sts-b", str(glue / "STS-B"), "dev")
    assert all(isinstance(e.label, float) and 0 <= e.label <= 5 for e in stsb)
    rte, _ = read_glue("rte", str(glue / "RTE"), "train")
    assert sum('"' in e.text_a + e.text_b for e in rte) > 400  # unbalanced quotes did not merge rows
    cola, _ = read_glue("cola", str(glue / "CoLA"), "dev")  # no header, no trailing newline
    assert cola[-1].text_a and len(cola) == 1043


def test_malformed_rows_are_skipped_and_counted(tmp_path):
    (tmp_path / "train.tsv").write_text(
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        "0\t1\t2\tHow?\tWhy?\t0\n"
        "1\t3\t4\tbroken row\n"
        "2\t5\t6\tA \"quoted\tB\t1\n"
    )
    examples, report = read_glue("qqp", str(tmp_path), "train")
    assert [e.label for e in examples] == ["0", "1"] and examples[1].text_a == 'A "quoted'
    assert report["malformed_rows_skipped"] == 1 and report["skipped_lines"] == [3]



def test_rows_with_a_blank_sentence_are_skipped_and_counted(tmp_path):
    """A sentence of spaces was trained on as an example of empty text, without a word."""
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n   \t1\na fine film\t1\n\t0\n\u200b \u2060\t0\n")
    examples, report = read_glue("sst-2", str(tmp_path), "train")  # the last: zero-width characters only
    assert [e.text_a for e in examples] == ["a fine film"] and report["skipped_lines"] == [2, 4, 5]
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n  \t1\n \t0\n")
    with pytest.raises(ValueError, match=r"train.tsv: no SST-2 examples: 2 rows, every one with a blank sentence"):
        read_glue("sst-2", str(tmp_path), "train")
    # A test split keeps them (the submission answers every index), and counts them for a note
    (tmp_path / "test.tsv").write_text("index\tsentence\n0\ta fine film\n1\t  \n2\tdull\n")
    examples, report = read_glue("sst-2", str(tmp_path), "test")
    assert [e.guid for e in examples] == ["0", "1", "2"] and report["blank_rows_kept"] == 1
    assert report["blank_lines"] == [3]
    (tmp_path / "test.tsv").write_text("index\tsentence\n0\ta fine film\n\n\n")  # blank lines after the rows
    assert [e.guid for e in read_glue("sst-2", str(tmp_path), "test")[0]] == ["0"]


def test_mnli_takes_the_last_column_for_12_and_16_column_layouts(tmp_path):
    head = "\t".join([f"c{i}" for i in range(8)] + ["sentence1", "sentence2"])
    (tmp_path / "train.tsv").write_text(head + "\tlabel1\tgold_label\n" + "\t".join(["x"] * 8 + ["p", "h", "neutral", "neutral"]) + "\n")
    (tmp_path / "dev_matched.tsv").write_text(head + "\tl1\tl2\tl3\tl4\tl5\tgold_label\n"
                                              + "\t".join(["x"] * 8 + ["p", "h"] + ["entailment"] * 5 + ["contradiction"]) + "\n")
    assert read_glue("mnli", str(tmp_path), "train")[0][0].label == "neutral"
    assert read_glue("mnli", str(tmp_path), "dev_matched")[0][0].label == "contradiction"


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match=r"unknown GLUE task 'rtee'; expected one of \['ax', 'cola', "):
        get_task("rtee")
    with pytest.raises(ValueError, match=r"RTE/dev.tsv: missing \(RTE dev split"):
        read_glue("rte", str(tmp_path / "RTE"), "dev")
    (tmp_path / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tentails\n")
    with pytest.raises(ValueError, match=r"train.tsv line 2: label 'entails' not in \['entailment', 'not_entailment'\]"):
        read_glue("rte", str(tmp_path), "train")
    (tmp_path / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n0\ta\tb\tnot_entailment\n")
    with pytest.raises(ValueError, match=r"train.tsv line 2: label 'not_entailment' not in \['0', '1'\] \(a label of QNLI, "
                                         r"RTE: is this the WNLI folder\?\)"):
        read_glue("wnli", str(tmp_path), "train")
    with pytest.raises(ValueError, match=r"RTE has no split 'validation'"):
        read_glue("rte", str(tmp_path), "validation")
    (tmp_path / "test.tsv").write_text("index\tsentence1\tsentence2\n0\ta\tb\n1\tc\td\n0\ta\tb\n")  # a row pasted twice
    with pytest.raises(ValueError, match=r"test.tsv line 4: index 0 again \(first on line 2\); a test split holds each "
                                         r"index once"):
        read_glue("rte", str(tmp_path), "test")
    # UTF-16 without its byte-order mark (as `iconv -t UTF-16LE` writes), and a gzip file: named as such from line 1
    rows = "index\tsentence1\tsentence2\tlabel\n0\tCafé au lait.\tA drink.\tentailment\n"
    (tmp_path / "train.tsv").write_bytes(rows.encode("utf-16-le"))
    with pytest.raises(ValueError, match=r"train.tsv: UTF-16LE text, not UTF-8 .* convert it first: iconv -f "
                                         r"UTF-16LE -t UTF-8"):
        read_glue("rte", str(tmp_path), "train")
    import gzip

    (tmp_path / "train.tsv").write_bytes(gzip.compress(rows.encode()))
    with pytest.raises(ValueError, match=r"train.tsv: a gzip-compressed file, not text; decompress it first"):
        read_glue("rte", str(tmp_path), "train")


def test_columns_are_read_by_the_headers_names(tmp_path):
    """A file whose columns are in another order (saved by a spreadsheet, or pandas) is read by name;
    a header without the task's columns is refused, naming the file and the column."""
    (tmp_path / "train.tsv").write_text("label\tsentence2\tindex\tsentence1\nentailment\tA man plays.\t0\tA man plays a guitar.\n")
    (example,), _ = read_glue("rte", str(tmp_path), "train")
    assert (example.text_a, example.text_b, example.label) == ("A man plays a guitar.", "A man plays.", "entailment")
    (tmp_path / "test.tsv").write_text("index\tsentence2\tsentence1\n7\tB.\tA.\n")
    (test,), _ = read_glue("rte", str(tmp_path), "test")
    assert (test.guid, test.text_a, test.text_b) == ("7", "A.", "B.")
    (tmp_path / "dev.tsv").write_text("index\tpremise\thypothesis\tlabel\n0\ta\tb\tentailment\n")
    with pytest.raises(ValueError, match=r"dev.tsv line 1: the header has no column 'sentence1' \(it has \['index', "
                                         r"'premise', 'hypothesis', 'label'\]\); is this the RTE dev file\?"):
        read_glue("rte", str(tmp_path), "dev")


def test_rows_skipped_for_a_trailing_tab_and_texts_in_csv_quoting_are_noted(tmp_path, capsys):
    """Half the rows ending in a tab were skipped as 'malformed' with no cause; texts quoted as pandas' to_csv
    quotes a field holding a quote were trained on with their quotes, without a word."""
    rows = [f"a fine film number {i} , truly\t{i % 2}" for i in range(10)]
    (tmp_path / "tabs").mkdir()
    (tmp_path / "tabs" / "train.tsv").write_text("sentence\tlabel\n" + "".join(
        row + ("\t" if i % 2 else "") + "\n" for i, row in enumerate(rows)))
    examples, report = read_glue("sst-2", str(tmp_path / "tabs"), "train")
    assert len(examples) == 5 and report["malformed_rows_skipped"] == 5
    assert "5 of the rows skipped end in a tab (a field more, empty; line 3 first): strip it" in capsys.readouterr().out
    (tmp_path / "quoted").mkdir()
    (tmp_path / "quoted" / "train.tsv").write_text("sentence\tlabel\n" + "\n".join(rows[:8]) +
                                                   '\n"it is ""really"" good"\t1\n"a ""fine"" one"\t0\n')
    examples, _ = read_glue("sst-2", str(tmp_path / "quoted"), "train")
    assert len(examples) == 10 and "2 texts are in CSV's quoting" in capsys.readouterr().out
    (tmp_path / "quoted" / "train.tsv").write_text('sentence\tlabel\nhe said " no " and left\t1\n"fine" , she said\t0\n')
    read_glue("sst-2", str(tmp_path / "quoted"), "train")  # quotes in a text, as GLUE's own rows hold them
    assert capsys.readouterr().out == ""


def test_rows_split_by_another_line_end_are_named(tmp_path):
    """Rows ended by U+2028 (a JavaScript export) were read as one row: 'the header has no column label'."""
    (tmp_path / "train.tsv").write_text("\u2028".join(["sentence\tlabel"] + [f"a fine film {i}\t1" for i in range(5)]))
    with pytest.raises(ValueError, match=r"train.tsv: rows end in U\+2028 more often than in a newline; convert them"):
        read_glue("sst-2", str(tmp_path), "train")


@pytest.mark.parametrize("header, said", [
    ("sep=\t\nsentence\tlabel\n", r"train.tsv line 1: 'sep=\\t', Excel's line naming the separator, before the header: "
                                  r"delete it \(sed -i 1d \S+train.tsv\)"),
    ("Sentence\tLabel\n", r"train.tsv line 1: the header's 'Sentence' is SST-2's 'sentence' but for its case or spaces"),
    ("sentence;label\n", r"train.tsv line 1: the header is semicolon-separated \('sentence;label'\): a CSV file \(as a "
     r"European Excel saves one\)"),
    ("sentence    label\n", r"train.tsv line 1: the header's columns are separated by spaces \('sentence    label'\), "
     r"where GLUE's files have tabs"),
], ids=["excel-sep-line", "capitalised", "semicolons", "spaces-for-tabs"])
def test_a_header_a_spreadsheet_changed_is_named(header, said, tmp_path):
    """(round 42 A70, A80: a semicolon CSV and spaces for tabs were asked 'is this the SST-2 train file?')"""
    (tmp_path / "train.tsv").write_text(header + "a fine film\t1\n")
    with pytest.raises(ValueError, match=said):
        read_glue("sst-2", str(tmp_path), "train")


def test_pandas_index_and_a_trailing_tab_together_are_named(tmp_path):
    """Each was named alone; together they were '4 fields where SST-2 has 2; is this the SST-2 folder?' (A71)."""
    (tmp_path / "train.tsv").write_text("\tsentence\tlabel\t\n" + "".join(f"{i}\ta fine film\t1\t\n" for i in range(3)))
    with pytest.raises(ValueError, match=r"3 rows, every one beginning with a row number \(pandas' index\) and ending "
                                         r"in a tab \(an empty last field\): 4 fields where SST-2 has 2"):
        read_glue("sst-2", str(tmp_path), "train")


def test_rows_ending_in_several_tabs_are_named_and_the_sed_given_strips_them(tmp_path):
    """Every row (the header too) ending in two tabs was '4 fields where SST-2 has 2; is this the SST-2 folder?'
    (round 46 A71); one tab was named."""
    import re
    import subprocess

    text = "sentence\tlabel\n" + "".join(f"a fine film number {i}\t{i % 2}\n" for i in range(20))
    (tmp_path / "train.tsv").write_text(text.replace("\n", "\t\t\n"))
    with pytest.raises(ValueError, match=r"20 rows, every one ending in tabs \(empty last fields: 4 fields where SST-2 "
                                         r"has 2\); strip the trailing tabs \((sed .*)\)") as refused:
        read_glue("sst-2", str(tmp_path), "train")
    subprocess.run(["bash", "-c", re.search(r"\((sed .*)\)", str(refused.value)).group(1)], cwd=tmp_path, check=True)
    assert (tmp_path / "train.tsv").read_text() == text


def test_rows_cut_in_two_by_a_line_end_are_named_and_the_awk_given_joins_them(tmp_path, capsys):
    """SST-2 with every fourth sentence hard-wrapped over two rows: '57 malformed rows skipped', each second half
    trained as a sentence of its own (round 46 A119)."""
    import re
    import subprocess

    rows = [f"a fine film number {i} with a long plot\t{i % 2}" for i in range(40)]
    text = "sentence\tlabel\n" + "".join(row + "\n" for row in rows)
    cut = "sentence\tlabel\n" + "".join(row.replace(" with ", "\nwith ", 1) + "\n" if i % 4 == 0 else row + "\n"
                                        for i, row in enumerate(rows))
    (tmp_path / "train.tsv").write_text(cut)
    read_glue("sst-2", str(tmp_path), "train")
    out = capsys.readouterr().out
    assert "train.tsv: 10 of the rows skipped are one field each, followed by a row that ends them (line 2, then 3)" in out
    subprocess.run(["bash", "-c", re.search(r"join the halves first \((awk .*)\)", out).group(1)], cwd=tmp_path,
                   check=True)
    assert (tmp_path / "fixed.tsv").read_text() == text


def test_rows_of_a_prompt_template_are_named(tmp_path, capsys):
    """SST-2 written as 'Review: ... Sentiment:' rows fine-tuned without a word (round 47 A47)."""
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "".join(
        f"Review: a fine film number {i} Sentiment:\t{i % 2}\n" for i in range(20)))
    read_glue("sst-2", str(tmp_path), "train")
    assert "20 of its first 20 lines begin alike ('Review:', as line 2 does" in capsys.readouterr().err


def test_a_task_file_zero_filled_at_its_end_keeps_its_rows_by_the_command_given(tmp_path):
    """train.tsv followed by 8,192 NUL bytes (a crash's zero-filled end) was called a binary file, a model or an image
    (round 44 A62, A63): the rows before are named, with the head that keeps them."""
    import re
    import subprocess

    text = "sentence\tlabel\n" + "".join(f"a fine film number {i}\t{i % 2}\n" for i in range(20))
    (tmp_path / "train.tsv").write_bytes(text.encode() + b"\0" * 8192)
    with pytest.raises(ValueError, match=r"train.tsv line 22: NUL bytes to the file's end, as a file zero-filled after a "
                                         r"crash \(or a copy cut short\) holds them, after 21 lines of text; keep those "
                                         r"\(head -n 21 \S+train.tsv > fixed.txt\)") as refused:
        read_glue("sst-2", str(tmp_path), "train")
    subprocess.run(["bash", "-c", re.search(r"\((head .*?)\)", str(refused.value)).group(1)], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.txt").read_text() == text


def test_a_utf16_row_and_a_headerless_csv_are_named(tmp_path):
    """One UTF-16 row in a UTF-8 train.tsv was refused for its label ('\\x001\\x00'); CoLA written by csv.writer (no
    header, commas) was 'every one with 1 fields: is this the CoLA folder?'."""
    import csv

    rows = [f"a fine film number {i}\t{i % 2}" for i in range(30)]
    (tmp_path / "train.tsv").write_bytes("\n".join(["sentence\tlabel"] + rows[:20]).encode() + b"\n" +
                                         rows[20].encode("utf-16-le") + "\n".join([""] + rows[21:]).encode())
    with pytest.raises(ValueError, match=r"train.tsv line 22: UTF-16LE text \(NUL bytes beside its letters\) in a file "
                                         r"read as UTF-8 .*convert that part alone \(iconv -f UTF-16LE -t UTF-8\)"):
        read_glue("sst-2", str(tmp_path), "train")
    with open(tmp_path / "train.tsv", "w", newline="") as f:
        csv.writer(f).writerows([("gj04", str(i % 2), "", f"The dog, number {i}, barked.") for i in range(30)])
    with pytest.raises(ValueError, match=r"no CoLA examples: 30 rows, every one with 1 field where CoLA has 4, but 4 "
                                         r"when split on commas: a CSV file under the task's .tsv name; save it with tabs "
                                         r"\(pandas: to_csv\(..., sep='\\t', index=False, header=False, quoting=3\)\)"):
        read_glue("cola", str(tmp_path), "train")


def test_a_task_file_that_is_a_dangling_link_or_in_a_folder_not_readable_is_named(tmp_path, monkeypatch):
    """A git-annex train.tsv (a link to content not fetched) and a --data_dir not readable were each 'missing', though
    ls shows the file; a CESU-8 emoji was 'save it as UTF-8' where the text readers name CESU-8."""
    import os

    (tmp_path / "annex").mkdir()
    (tmp_path / "annex" / "train.tsv").symlink_to(tmp_path / ".git" / "annex" / "objects" / "ab" / "train.tsv")
    with pytest.raises(ValueError, match=r"annex/train.tsv: a link to \S+objects/ab/train.tsv, which is not there "
                                         r"\(content not fetched, as git-annex leaves it"):
        read_glue("sst-2", str(tmp_path / "annex"), "train")
    (tmp_path / "locked").mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(tmp_path / "locked") and real_access(path, mode))
    with pytest.raises(ValueError, match=r"--data_dir \S+locked: cannot be read \(permission denied\): make it readable"):
        read_glue("sst-2", str(tmp_path / "locked"), "train")
    (tmp_path / "cesu").mkdir()
    (tmp_path / "cesu" / "train.tsv").write_bytes(b"sentence\tlabel\na fine film\t1\nso fun \xed\xa0\xbd\xed\xb8\x80\t1\n")
    with pytest.raises(ValueError, match=r"cesu/train.tsv line 3: not valid UTF-8 .*a character past U\+FFFF written as "
                                         r"two UTF-16 surrogates \(CESU-8"):
        read_glue("sst-2", str(tmp_path / "cesu"), "train")
    import io
    import tarfile

    (tmp_path / "tar").mkdir()  # a tar of the task file under its name: extracted into that name, not the current folder
    with tarfile.open(tmp_path / "tar" / "train.tsv", "w") as archive:
        data = b"sentence\tlabel\na fine film\t1\n"
        info = tarfile.TarInfo("train.tsv")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    with pytest.raises(ValueError, match=r"a tar archive: extract its files first \(tar -xOf \S+tar/train.tsv > "
                                         r"\S+tar/train.tsv.text && mv \S+tar/train.tsv.text \S+tar/train.tsv\)"):
        read_glue("sst-2", str(tmp_path / "tar"), "train")


def test_a_task_file_not_readable_is_named_before_the_work(tmp_path, monkeypatch):
    """A dev.tsv of mode 000 was named after the training, with 'free space and re-run' in its tail."""
    import os

    (tmp_path / "train.tsv").write_text("sentence\tlabel\na fine film\t1\n")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(tmp_path / "train.tsv") and real_access(path, mode))
    with pytest.raises(ValueError, match=r"train.tsv: cannot be read \(permission denied\): make it readable \(chmod u\+r"):
        read_glue("sst-2", str(tmp_path), "train")


def test_rows_skipped_for_a_tab_or_a_line_break_in_a_quoted_text_are_noted(tmp_path, capsys):
    """pandas' to_csv(sep='\\t') quotes a text that holds a tab or a line break: those rows were skipped as malformed
    (a third of QQP's dev lost) with no word of why."""
    rows = ["id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate"] + [
        f"{i}\t{2 * i}\t{2 * i + 1}\tHow do I learn {i}?\tWhat is {i}?\t{i % 2}" for i in range(20)]
    rows[3] = '2\t4\t5\t"How do I\nlearn 2?"\tWhat is 2?\t0'  # a line break inside a quoted question
    rows[5] = '4\t8\t9\t"How do I\tlearn 4?"\tWhat is 4?\t0'  # a tab inside one
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    examples, report = read_glue("qqp", str(tmp_path), "train")
    assert len(examples) == 18 and report["malformed_rows_skipped"] == 3
    assert "of the rows skipped hold a tab or a line break inside a quoted text (CSV's quoting" in capsys.readouterr().out


def test_texts_that_are_pandas_missing_values_are_noted(tmp_path, capsys):
    """'nan' (a missing text as pandas' astype(str) writes it) was trained on as a sentence without a word."""
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "".join(f"a fine film {i}\t1\n" for i in range(5)) +
                                        "nan\t0\nNone\t1\n")
    examples, _ = read_glue("sst-2", str(tmp_path), "train")
    assert len(examples) == 7
    assert "train.tsv: 2 texts are 'nan' or 'None' alone (train-7 first), as pandas writes a missing text" in \
        capsys.readouterr().out
    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "".join(f"a fine film {i}\t1\n" for i in range(5)) +
                                        "\\N\t0\n")  # (a SQL dump's NULL)
    read_glue("sst-2", str(tmp_path), "train")
    assert "train.tsv: 1 texts are 'nan' or 'None' alone (train-7 first)" in capsys.readouterr().out


SENTENCES = [f"the film number {i} was a fine piece of work , and everyone liked it ." for i in range(40)]


@pytest.mark.parametrize("edit, said", [
    (lambda s: s.replace("everyone", "<unk>"), r"40 of its first 40 rows hold <unk> \(line 2\), a corpus's mark"),
    (lambda s: s.replace(" , and", " [SEP]"), r"40 of its first 40 rows hold .*\[SEP\]"),
    (lambda s: s.replace(" , and", " <br /><br />"), r"40 of its first 40 rows hold HTML's line breaks"),
    (lambda s: s.replace("everyone", "every ##one"), r"40 of its first 40 rows hold WordPiece's pieces \('##one' on "
     r"line 2"),
    (lambda s: s.replace(" , and", "\x85 and"), r"40 of its first 40 rows hold U\+0085 \(NEL, on line 2"),
    (lambda s: s.replace("everyone", "every\u00adone"), r"40 of its first 40 rows hold an invisible character "
     r"\(U\+00AD on line 2"),
    (lambda s: " ".join("\u2581" + w for w in s.split()), r"40 of its first 40 rows hold SentencePiece's pieces "
     r"\('\u2581the' on line 2"),
    (lambda s: s.replace(" , and", " @,@ and"), r"40 of its first 40 rows hold WikiText's markup \('@,@' on line 2"),
    (lambda s: s.replace("everyone", "[REDACTED]"), r"40 of its first 40 rows hold \[REDACTED\] \(line 2\)"),
], ids=["unk", "sep", "br", "wordpiece", "nel", "soft-hyphen", "sentencepiece", "wikitext", "redacted"])
def test_texts_holding_what_text_is_warned_of_are_warned_of_in_a_task_file(tmp_path, capsys, edit, said):
    """A task file's texts are weighed as text is (round 42 A78, A82, A85, A109 to A111): <unk>, [SEP], <br />,
    WordPiece's ##, NEL and soft hyphens were fine-tuned on without a word, and SentencePiece's pieces, WikiText's
    @,@ and [REDACTED] (round 44 A31, A91); the real GLUE files hold none of them."""
    import re

    (tmp_path / "train.tsv").write_text("sentence\tlabel\n" + "".join(f"{edit(s)}\t{i % 2}\n" for i, s in
                                                                       enumerate(SENTENCES)))
    assert len(read_glue("sst-2", str(tmp_path), "train")[0]) == 40
    assert re.search(rf"warning: \S+train.tsv: {said}", capsys.readouterr().err), said


def test_a_byte_order_mark_inside_the_header_is_named_and_its_command_removes_it(tmp_path):
    """SST-2's train.tsv read without utf-8-sig and written again by pandas: its index column first, the mark before
    'sentence'. The mark is named with a sed that removes it; then the index column is named."""
    import re
    import subprocess

    (tmp_path / "train.tsv").write_text("\t\ufeffsentence\tlabel\n0\tit is a fine film .\t1\n1\tdull .\t0\n")
    with pytest.raises(ValueError, match=r"train.tsv line 1: the header's '\\ufeffsentence' is SST-2's 'sentence' with "
                                         r"a byte-order mark") as refused:
        read_glue("sst-2", str(tmp_path), "train")
    subprocess.run(["bash", "-c", re.search(r"\((sed .*?), GNU", str(refused.value)).group(1)], check=True)
    assert (tmp_path / "train.tsv").read_text().splitlines()[0] == "\tsentence\tlabel"
    with pytest.raises(ValueError, match=r"every one beginning with a row number .*pandas' index"):
        read_glue("sst-2", str(tmp_path), "train")


@pytest.mark.parametrize("end", ["\u2028", "\x85"], ids=["u2028", "nel"])
def test_rows_ending_in_a_line_separator_before_the_newline_are_read(tmp_path, end):
    """Every line ending U+2028 (or NEL, round 44 A69) then LF (round 42 A75: the header's 'label\u2028' was blamed on a
    spreadsheet's edit): the separator before the newline ends the same line."""
    (tmp_path / "train.tsv").write_text(f"sentence\tlabel{end}\n" + "".join(f"a fine film {i}\t1{end}\r\n" for i in range(5)))
    examples, _ = read_glue("sst-2", str(tmp_path), "train")
    assert [(e.text_a, e.label) for e in examples] == [(f"a fine film {i}", "1") for i in range(5)]


def test_pairs_of_one_sentence_twice_are_noted(tmp_path, capsys):
    """RTE whose sentence2 is a copy of sentence1 in every row was fine-tuned on without a word (round 43 A58)."""
    (tmp_path / "train.tsv").write_text("index\tsentence1\tsentence2\tlabel\n" + "".join(
        f"{i}\tA man plays guitar {i}.\tA man plays guitar {i}.\tentailment\n" for i in range(5)))
    read_glue("rte", str(tmp_path), "train")
    assert "train.tsv: 5 of its 5 pairs are one sentence twice (train-2 first)" in capsys.readouterr().out
