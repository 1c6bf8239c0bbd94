"""GLUE readers for the standard `glue_data/` layout, with each file's quirks handled.

    examples, report = read_glue("rte", "glue_data/RTE", "train")

Every file is split on TAB with no CSV quoting (RTE, MNLI, MRPC... contain
unbalanced quotes). Quirks: CoLA train/dev have no header; MRPC files start with
a byte-order mark; QQP has malformed rows (fewer fields: skipped and counted);
MNLI train has 12 columns and dev 16 (label = last column); test files have an
`index` column and no label; AX (diagnostic) is predicted with the MNLI model.
"""

import csv
import dataclasses
import io
import os
import re

from albert_act.base import encodings, prose, text_files


@dataclasses.dataclass(frozen=True)
class GlueTask:
    """Where a task's files are and which columns hold what (0-based; negative from the end)."""

    name: str  # as the GLUE server spells it in the submission
    directory: str
    splits: dict  # split -> file name
    text_a: int
    text_b: int | None
    label: int | None  # train/dev label column
    labels: tuple  # label set as spelled in the data; () for regression
    header: bool = True
    test_text_a: int = 1
    test_text_b: int | None = 2
    columns: int | None = None  # rows with another field count are malformed (skipped)
    test_columns: int | None = None
    submission: tuple = ()  # (file name in the zip, test split)
    predicted_by: str | None = None  # the task whose fine-tuned model writes its submission (default: itself)
    metrics: tuple = ("accuracy",)  # dev metrics (albert_act/train/glue_metrics.py); the first selects models
    # The header's names of (text_a, text_b, label) in train/dev, and of (text_a, text_b) in test:
    # columns are found by these names wherever a header gives them, so swapped columns are read
    # right and a header without them is refused. None: no such column.
    names: tuple = ("sentence1", "sentence2", "label")
    test_names: tuple | None = None  # default: names without the label

    @property
    def is_regression(self):
        return not self.labels


TASKS = {
    "cola": GlueTask("CoLA", "CoLA", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                     text_a=3, text_b=None, label=1, labels=("0", "1"), header=False,
                     test_text_b=None, columns=4, submission=(("CoLA.tsv", "test"),), metrics=("matthews_correlation",),
                     names=(None, None, None), test_names=("sentence", None)),
    "sst-2": GlueTask("SST-2", "SST-2", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                      text_a=0, text_b=None, label=1, labels=("0", "1"), test_text_b=None, columns=2,
                      submission=(("SST-2.tsv", "test"),), names=("sentence", None, "label")),
    "mrpc": GlueTask("MRPC", "MRPC", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                     text_a=3, text_b=4, label=0, labels=("0", "1"), test_text_a=3, test_text_b=4, columns=5,
                     submission=(("MRPC.tsv", "test"),), names=("#1 String", "#2 String", "Quality"),
                     metrics=("f1", "accuracy")),
    "sts-b": GlueTask("STS-B", "STS-B", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                      text_a=7, text_b=8, label=-1, labels=(), test_text_a=7, test_text_b=8, columns=10,
                      test_columns=9, submission=(("STS-B.tsv", "test"),), names=("sentence1", "sentence2", "score"),
                      metrics=("pearson", "spearman")),
    "qqp": GlueTask("QQP", "QQP", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                    text_a=3, text_b=4, label=5, labels=("0", "1"), columns=6, test_columns=3,
                    submission=(("QQP.tsv", "test"),), names=("question1", "question2", "is_duplicate"),
                    metrics=("f1", "accuracy")),
    "mnli": GlueTask("MNLI", "MNLI", {"train": "train.tsv", "dev_matched": "dev_matched.tsv",
                                      "dev_mismatched": "dev_mismatched.tsv", "test_matched": "test_matched.tsv",
                                      "test_mismatched": "test_mismatched.tsv"},
                     text_a=8, text_b=9, label=-1, labels=("contradiction", "entailment", "neutral"),
                     test_text_a=8, test_text_b=9,
                     submission=(("MNLI-m.tsv", "test_matched"), ("MNLI-mm.tsv", "test_mismatched")),
                     names=("sentence1", "sentence2", "gold_label")),
    "qnli": GlueTask("QNLI", "QNLI", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                     text_a=1, text_b=2, label=-1, labels=("entailment", "not_entailment"),
                     submission=(("QNLI.tsv", "test"),), names=("question", "sentence", "label")),
    "rte": GlueTask("RTE", "RTE", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                    text_a=1, text_b=2, label=-1, labels=("entailment", "not_entailment"),
                    submission=(("RTE.tsv", "test"),)),
    "wnli": GlueTask("WNLI", "WNLI", {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
                     text_a=1, text_b=2, label=-1, labels=("0", "1"), submission=(("WNLI.tsv", "test"),)),
    # The diagnostic set: test only, predicted by the MNLI model with MNLI's labels.
    "ax": GlueTask("AX", "diagnostic", {"test": "diagnostic.tsv"}, text_a=1, text_b=2, label=None,
                   labels=("contradiction", "entailment", "neutral"), submission=(("AX.tsv", "test"),),
                   predicted_by="mnli"),
}
DEV_SPLIT = {"mnli": "dev_matched"}  # the dev split used for model selection


@dataclasses.dataclass(frozen=True)
class Example:
    guid: str  # the test `index` for test splits, else "<split>-<row>"
    text_a: str
    text_b: str | None
    label: str | float | None


def get_task(name):
    key = name.lower()
    if key not in TASKS:
        raise ValueError(f"unknown GLUE task {name!r}; expected one of {sorted(TASKS)}")
    return TASKS[key]


def task_file(task, data_dir, split):
    if split not in task.splits:
        raise ValueError(f"{task.name} has no split {split!r}; it has {sorted(task.splits)}")
    if os.path.isfile(data_dir):
        raise ValueError(f"--data_dir {data_dir} is a file, not a folder (the task's glue_data folder)")
    path = os.path.join(data_dir, task.splits[split])
    if "://" not in path and os.path.isdir(data_dir) and not os.access(data_dir, os.R_OK | os.X_OK):
        raise ValueError(f"--data_dir {data_dir}: cannot be read (permission denied): make it readable (chmod u+rx "
                         f"{data_dir})")
    if "://" not in path and os.path.islink(path) and not os.path.exists(path):  # (git-annex's, content not fetched)
        raise ValueError(f"{path}: a link to {os.readlink(path)}, which is not there (content not fetched, as git-annex "
                         "leaves it, or the file moved): put the file there")
    if "://" not in path and os.path.isfile(path) and not os.access(path, os.R_OK):
        raise ValueError(f"{path}: cannot be read (permission denied): make it readable (chmod u+r {path})")
    if not text_files.exists(path):  # a remote one that cannot be reached: an OSError naming it
        inside = os.path.join(data_dir, task.directory, task.splits[split])
        if text_files.exists(inside):  # the glue_data root given: the task's folder is one below
            raise ValueError(f"{path}: missing: --data_dir is the task's own folder, and {data_dir} holds it: give "
                             f"--data_dir {os.path.join(data_dir, task.directory)}")
        packed = next((path + end for end in (".gz", ".bz2", ".xz", ".zip") if text_files.exists(path + end)), None)
        if packed:  # (downloaded compressed: the command its kind takes)
            raise ValueError(f"{path}: missing, but {packed} is there{encodings.compression_hint(packed)}")
        raise ValueError(f"{path}: missing ({task.name} {split} split; expected the standard glue_data layout)")
    return path


def _read_tsv_lines(path):
    """The lines of a UTF-8 TSV (MRPC's byte-order mark dropped); ValueError naming the file and
    line for another encoding (UTF-16 or a compressed file says so) and for lines ended by a lone CR."""
    if os.path.isdir(path):
        raise ValueError(f"{path}: a folder, where the task's tab-separated file was expected")
    text_files.refuse_device(path, "the task's tab-separated file", pipes=False)  # (read whole: memory filled)
    text_files.refuse_fifo(path, "where the task's tab-separated file is read", "put the file there")
    with open(path, "rb") as f:
        data = f.read()
    encodings.refuse_other_encodings(path, data.split(b"\n", 1)[0], in_place=True)  # UTF-16 with or without its mark, say
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:  # (the advice its bytes call for: CESU-8, Java's C0 80, mixed encodings...)
        line, start = data[:error.start].count(b"\n") + 1, data.rfind(b"\n", 0, error.start) + 1
        raw = data[start:data.find(b"\n", error.start) % (len(data) + 1)]
        accented = next((n for n, row in enumerate(data[:start].split(b"\n"), 1) if not row.isascii()), None)
        raise encodings.not_utf8(path, line, raw, UnicodeDecodeError("utf-8", raw, error.start - start,
                                                                       error.end - start, error.reason), False,
                                 accented) from None
    if "\r" in text and "\n" not in text:
        raise ValueError(f"{path}: lines end in a lone CR (classic Mac line ends); convert them to LF or CRLF")
    other = next((end for end in ("\u2028", "\u2029", "\x85", "\v") if text.count(end) > text.count("\n")), None)
    if other:  # (rows split by another line end: the file is read as one row)
        raise ValueError(f"{path}: rows end in U+{ord(other):04X} more often than in a newline; convert them to newlines "
                         f"(python3 -c \"import sys; sys.stdout.write(sys.stdin.read().replace('\\u{ord(other):04x}', "
                         f"'\\n'))\" < {path} > {path}.text && mv {path}.text {path})")
    lines = [_LINE_END_BEFORE.sub(r"\1", line) for line in text.split("\n")]  # (U+2028 then LF: one line end)
    if (nul := next((n for n, line in enumerate(lines, 1) if "\x00" in line), None)) is not None:  # (a UTF-16 row)
        raise encodings.nul_line(path, nul, lines[nul - 1].encode(), False)
    while lines and not lines[-1].strip():  # blank lines after the last row (an editor's): no rows
        lines.pop()
    return lines


def read_glue(name, data_dir, split):
    """Returns (examples, report); report counts rows read and malformed rows skipped.

    Rows are checked against the task's field count (QQP's and CoLA's known malformed rows are
    skipped and counted) or, for tasks whose count varies by file (MNLI, QNLI, RTE, WNLI), against
    the header's: there a row with another count is an error, since its columns would shift.
    Raises ValueError naming the file and line for such a row, for a label outside the task's set
    (or a score outside [0, 5] for STS-B), for a missing file, and for a file with no examples.
    """
    task = get_task(name)
    path = task_file(task, data_dir, split)
    is_test = split.startswith("test")
    lines = _read_tsv_lines(path)
    if lines and lines[-1] == "":
        lines.pop()
    start = 1 if (task.header or is_test) else 0
    expected = task.test_columns if is_test else task.columns
    from_header = expected is None and start == 1 and bool(lines)
    if from_header:
        expected = len(lines[0].rstrip("\r").split("\t"))
    text_a, text_b, label_column = ((task.test_text_a, task.test_text_b, None) if is_test
                                    else (task.text_a, task.text_b, task.label))
    names = (task.test_names or task.names[:2]) if is_test else task.names
    if start == 1 and lines and any(names):
        text_a, text_b, label_column = _columns_by_name(lines[0], names, (text_a, text_b, label_column), path, task,
                                                        split)
    examples, skipped, counts, indices, blank, blank_kept = [], [], set(), {}, 0, []
    for number, line in enumerate(lines[start:], start=start + 1):
        fields = line.rstrip("\r").split("\t")
        counts.add(len(fields))
        if expected is not None and len(fields) != expected:
            if from_header:
                raise ValueError(f"{path} line {number}: {len(fields)} fields where the header has {expected} "
                                 "(a TAB inside a sentence, or a missing column?)")
            skipped.append(number)
            continue
        if is_test:  # the index is the submission's key: each once
            if fields[0] in indices:
                raise ValueError(f"{path} line {number}: index {fields[0]} again (first on line {indices[fields[0]]}); "
                                 "a test split holds each index once")
            indices[fields[0]] = number
            blank_kept += [number] if _blank(fields, text_a, text_b) else []  # kept: the server scores every index
            examples.append(Example(fields[0], fields[text_a], None if text_b is None else fields[text_b], None))
            continue
        if _blank(fields, text_a, text_b):
            skipped.append(number)  # a blank sentence: nothing to learn or score (counted, as a malformed row)
            blank += 1
            continue
        label = _checked_label(fields[label_column], task, path, number)
        examples.append(Example(f"{split}-{number}", fields[text_a], None if text_b is None else fields[text_b], label))
    if not examples:
        why = _none_read(path, task, lines[start:], counts, expected, blank)
        raise ValueError(f"{path}: no {task.name} examples: {why}")
    report = {"file": path, "rows": len(lines) - start, "examples": len(examples), "malformed_rows_skipped": len(skipped),
              "skipped_lines": skipped[:20], "blank_rows_kept": len(blank_kept), "blank_lines": blank_kept[:20]}
    _note_quirks(path, lines, skipped, expected, examples)
    return examples, report


_LINE_END_BEFORE = re.compile(f"[{text_files.ENDS_BEFORE_NEWLINE}]+(\r?)$")
_CSV_QUOTED = re.compile(r'"(?:[^"]|"")*""(?:[^"]|"")*"')  # a field as a CSV writer quotes one holding a quote


def _note_quirks(path, lines, skipped, expected, examples):
    """Notes for rows skipped for a trailing tab (a field more, empty), and for texts in CSV's quoting (pandas'
    to_csv quotes a field that holds a quote, doubling it): read with the quotes, as the files are split on TAB."""
    tabbed = [n for n in skipped if (f := lines[n - 1].rstrip("\r").split("\t")) and len(f) == (expected or 0) + 1
              and not f[-1]]
    if tabbed:
        print(f"note: {path}: {len(tabbed)} of the rows skipped end in a tab (a field more, empty; line {tabbed[0]} "
              f"first): strip it to read them (sed -i 's/\\t\\(\\r\\?\\)$/\\1/' {path})")
    cut = [n for n in skipped if expected and n < len(lines) and "\t" not in lines[n - 1].strip() and lines[n - 1].strip()
           and len(lines[n].rstrip("\r").split("\t")) == expected]  # (a text cut by a line end: the rest is a row)
    if len(cut) >= max(2, 0.1 * len(skipped)):
        print(f"note: {path}: {len(cut)} of the rows skipped are one field each, followed by a row that ends them "
              f"(line {cut[0]}, then {cut[0] + 1}): texts cut in two by a line end inside them (hard-wrapped?); each "
              "second half was read as a row of its own: join the halves first (awk -F'\\t' 'NF == 1 && $0 != \"\" "
              f"{{printf \"%s \", $0; next}} 1' {path} > fixed.tsv)")
    inside = [n for n in skipped if expected and '"' in lines[n - 1] and _quoted_row(lines[n - 1:n + 1], expected)]
    if inside:  # (a text quoted for its tab or line break: split there, the row skipped, or two)
        print(f"note: {path}: {len(inside)} of the rows skipped hold a tab or a line break inside a quoted text (CSV's "
              f"quoting, as pandas' to_csv writes a text that holds one; line {inside[0]} first), which this file's "
              "format has no way to hold: replace them in the texts (e.g. with a space) before writing the file")
    missing = [e for e in examples if any((t or "").strip() in prose.MISSING_TEXTS for t in (e.text_a, e.text_b))]
    if missing:  # (pandas' missing text, written by astype(str) or to_csv: read as a sentence)
        print(f"note: {path}: {len(missing)} texts are 'nan' or 'None' alone ({missing[0].guid} first), as pandas writes "
              "a missing text; they are read as sentences: drop those rows (df.dropna()) before writing the file")
    same = [e for e in examples if e.text_b is not None and e.text_a.strip() == e.text_b.strip()]
    if len(same) >= max(3, 0.1 * len(examples)):  # (a column copied over the other)
        print(f"note: {path}: {len(same):,} of its {len(examples):,} pairs are one sentence twice ({same[0].guid} "
              "first): the second column a copy of the first? A pair of one sentence says nothing of how two relate")
    weighed = prose.Prose(path, traits=prose.TEXT_TRAITS)  # (<unk>, [SEP], <br />, soft hyphens: as in text)
    for example in (e for e in examples if "-" in e.guid):  # (a test split's guid is its index: not weighed)
        number = int(example.guid.rsplit("-", 1)[1])
        weighed.feed_words([number, number], [t for t in (example.text_a, example.text_b) if t is not None], "rows")
    weighed.warn()
    quoted = [e for e in examples if any(_CSV_QUOTED.fullmatch(t or "") for t in (e.text_a, e.text_b))]
    if quoted:
        print(f"note: {path}: {len(quoted)} texts are in CSV's quoting (\"...\"\"...\"\"...\", as pandas' to_csv writes a "
              f"field that holds a quote; {quoted[0].text_a[:40]!r} first), read with their quotes: write the file "
              "with quoting=csv.QUOTE_NONE (pandas: to_csv(..., sep='\\t', quoting=3))")


def _quoted_row(lines, expected):
    """Whether the first of `lines`, alone or joined with the next, reads in CSV's quoting as one row of `expected`
    fields: a text quoted for the tab or line break it holds."""
    for k in (1, 2):
        try:
            row = next(csv.reader(io.StringIO("\n".join(lines[:k])), delimiter="\t"), [])
        except csv.Error:
            continue
        if len(row) == expected and any("\t" in field or "\n" in field for field in row):
            return True
    return False


def _none_read(path, task, rows, counts, expected, blank):
    """Why no example was read of the data `rows` of a file: none, all blank, a trailing tab on each, or field
    counts (`counts`) other than the task's `expected`."""
    if not rows:
        return "the file has no rows"
    if blank == len(rows):
        return f"{len(rows)} rows, every one with a blank sentence"
    if expected and counts == {expected + 1} and all(line.split("\t", 1)[0].isdigit() for line in rows):
        return (f"{len(rows)} rows, every one beginning with a row number ({expected + 1} fields where {task.name} has "
                f"{expected}): pandas' index, which to_csv(..., index=False) leaves out")
    if expected and counts == {expected + 2} and all(line.split("\t", 1)[0].isdigit() and line.rstrip("\r").endswith(
            "\t") for line in rows):
        return (f"{len(rows)} rows, every one beginning with a row number (pandas' index) and ending in a tab (an empty "
                f"last field): {expected + 2} fields where {task.name} has {expected}; write the file with to_csv(..., "
                f"sep='\\t', index=False) and no trailing tab (sed -i 's/\\t\\(\\r\\?\\)$/\\1/' {path})")
    if expected and min(counts) > expected and all(not any(line.rstrip("\r").split("\t")[expected:]) for line in rows):
        one = counts == {expected + 1}  # (a tab after each row, or several)
        strip = "sed -i 's/\\t\\(\\r\\?\\)$/\\1/'" if one else "sed -i -E 's/\\t+(\\r?)$/\\1/'"
        return (f"{len(rows)} rows, every one ending in {'a tab (an empty last field' if one else 'tabs (empty last fields'}: "
                f"{' or '.join(map(str, sorted(counts)))} fields where {task.name} has {expected}); strip the trailing "
                f"tabs ({strip} {path})")
    if expected and counts == {1} and sum(len(next(csv.reader([line]))) == expected for line in rows) > len(rows) / 2:
        return (f"{len(rows)} rows, every one with 1 field where {task.name} has {expected}, but {expected} when split "
                f"on commas: a CSV file under the task's .tsv name; save it with tabs (pandas: to_csv(..., sep='\\t', "
                f"index=False{', header=False' if not task.header else ''}, quoting=3))")
    return (f"{len(rows)} rows, every one with {' or '.join(map(str, sorted(counts)))} fields where {task.name} has "
            f"{expected}; is this the {task.name} folder?")


def _blank(fields, text_a, text_b):
    """Whether a row's sentence (or one of its pair) is blank, invisible characters (zero-width
    spaces: Unicode Cf) aside."""
    return text_files.is_blank(fields[text_a]) or (text_b is not None and text_files.is_blank(fields[text_b]))


def _columns_by_name(header_line, names, columns, path, task, split):
    """The (text_a, text_b, label) column indices: each named one found in the header line, the
    others (name None) as given; a name the header lacks is an error naming the file."""
    line = header_line.rstrip("\r")
    header = line.split("\t")
    found = []
    for name, column in zip(names, columns):
        if name is None:
            found.append(column)
        elif name in header:
            found.append(header.index(name))
        elif len(header) == 1 and (sep := next((s for s in (",", ";") if name in header[0].split(s)), None)):
            raise ValueError(f"{path} line 1: the header is {'comma' if sep == ',' else 'semicolon'}-separated "
                             f"({header[0][:40]!r}): a CSV file{' (as a European Excel saves one)' * (sep == ';')}, "
                             "where GLUE's files are tab-separated; save it with tabs between the columns")
        elif len(header) == 1 and name in re.split(r" {2,}", header[0]):  # (an editor's expandtab)
            raise ValueError(f"{path} line 1: the header's columns are separated by spaces ({header[0][:40]!r}), "
                             "where GLUE's files have tabs (an editor that writes spaces for a tab?): put the tabs back")
        elif header_line.startswith("sep="):  # (Excel's first line, naming the separator)
            raise ValueError(f"{path} line 1: {line[:12]!r}, Excel's line naming the separator, before "
                             f"the header: delete it (sed -i 1d {path})")
        elif name in [h.replace("\ufeff", "") for h in header]:  # (a file read without utf-8-sig, then written again)
            said = header[[h.replace("\ufeff", "") for h in header].index(name)]
            raise ValueError(f"{path} line 1: the header's {said!r} is {task.name}'s {name!r} with a byte-order mark "
                             "(U+FEFF) before it, as a file read without utf-8-sig and written again keeps its mark "
                             f"inside: remove it (sed -i '1s/\\xef\\xbb\\xbf//g' {path}, GNU sed's bytes)")
        elif name.lower() in [h.strip().lower() for h in header]:  # ("Sentence", "Label": renamed by a spreadsheet)
            said = header[[h.strip().lower() for h in header].index(name.lower())]
            raise ValueError(f"{path} line 1: the header's {said!r} is {task.name}'s {name!r} but for its case or "
                             f"spaces (a spreadsheet's edit?): name the column {name!r}")
        elif f'"{name}"' in header:  # (csv's QUOTE_ALL, pandas' quoting=1: every field in quotes)
            raise ValueError(f"{path} line 1: the header's names are in quotes ({header[:4]}), as a CSV writer quoting "
                             "every field leaves them, and so are the rows' texts: save the file without quotes "
                             "(csv.QUOTE_NONE, pandas' to_csv(..., quoting=3))")
        else:
            raise ValueError(f"{path} line 1: the header has no column {name!r} (it has {header[:12]}); "
                             f"is this the {task.name} {split} file?")
    return tuple(found + [None] * (3 - len(found)))


def _checked_label(label, task, path, number):
    """A row's label: one of the task's labels, or for STS-B a score in [0, 5] (a float)."""
    if not task.is_regression:
        if label not in task.labels:
            others = sorted({t.name for t in TASKS.values() if label in t.labels} - {task.name})
            hint = f" (a label of {', '.join(others)}: is this the {task.name} folder?)" if others else (
                f" (line 1 names columns, as another task's header does; {task.name}'s files have no header: is this "
                f"the {task.name} folder?)" if number == 1 and not task.header and label.isidentifier() else "")
            raise ValueError(f"{path} line {number}: label {label!r} not in {list(task.labels)}{hint}")
        return label
    try:
        score = float(label)
    except ValueError:
        raise ValueError(f"{path} line {number}: score {label!r} is not a number") from None
    if not 0.0 <= score <= 5.0:
        raise ValueError(f"{path} line {number}: score {score} outside [0, 5]")
    return score
