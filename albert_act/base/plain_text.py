"""Files read as plain text (sentences, documents): `read_text_lines` refuses, at their first lines, the
files that only look like text to a line reader — parsed trees (CoNLL-U, CoNLL-X, .dp, Penn Treebank's
bracketed .mrg), tables (tab-separated rows with a label or id: a GLUE .tsv; CSV rows whose text is a quoted
field), JSON lines and subtitles (SRT, WebVTT) — rather than read their columns, brackets, fields or timings as text.
"""

import re

from albert_act.base import text_files

# A parsed file's token line: CoNLL-U/CoNLL-X ("1<TAB>Words<TAB>..."; "1-2", "1.1") or a .dp one ("Words<TAB>NNS<TAB>2")
_TOKEN_LINE = re.compile(r"\d+(?:[-.]\d+)?\t[^\t]*\t[^\t]*\t|[^\t ]+\t[^\t ]+\t\d+\r?$")
# A bracketed tree's line, made of brackets, labels and leaves only: "( (S", "    (NP-SBJ", "(NP (NNP Pierre) )",
# "(, ,)"; not "(see above) and so on.", "(Applause)"
_TREE_LINE = re.compile(r"(?:\([^\s()]+ [^\s()]+\)|\([^\s()]*(?=[\s(]|$)|\)|\s)+$")
_NUMBERED = re.compile(r"\s*\d+\t[^\t]*$")  # "     1<TAB>text", as cat -n numbers lines
# A CSV row whose text is its one quoted field, the others bare (ids, labels): '7,"The text, as it is.",1'; or a header
_CSV_LINE = re.compile(r'\s*(?:(?:[^\s,"]+,)+"(?:[^"]|"")*"(?:,[^\s,"]+)*|"(?:[^"]|"")*"(?:,[^\s,"]+)+)\s*$')
_CSV_HEADER = re.compile(r"\s*\w+(?:,\w+)+\s*$")  # "id,sentence,label"
_JSON_LINE = re.compile(r"\s*\{\s*\".*\}\s*$")  # {"text": "..."}
_TIMING = re.compile(r"\s*(?:\d+:)?\d\d:\d\d[,.]\d{3}\s+-->\s+(?:\d+:)?\d\d:\d\d[,.]\d{3}")  # SRT, WebVTT:
# "00:00:03,000 --> 00:00:06,000"
_NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d+)?\s*$")  # a label or an id, as a two-column table has one


def _kind(line, first):
    """The kind two lines, `first` and `line`, share, if any: "token", "tree", "json", or "table" (as many tabs)."""
    for kind, pattern in (("token", _TOKEN_LINE), ("tree", _TREE_LINE), ("json", _JSON_LINE)):
        if pattern.match(line) and pattern.match(first):
            return kind
    if _CSV_LINE.match(line) and (_CSV_LINE.match(first) or _CSV_HEADER.match(first)):
        return "csv"
    numbered = _NUMBERED.match(line) and _NUMBERED.match(first)  # cat -n's lines: text (`overlap` drops the numbers)
    tabs = line.strip().count("\t")  # (tabs that indent a line, or end it, make no column)
    labelled = tabs > 1 or any(_NUMBER.match(column) for column in line.strip().split("\t"))  # not "HAMLET<TAB>To be"
    return "table" if tabs == first.strip().count("\t") > 0 and labelled and not numbered else None


def _refusal(path, kind, number, line, first, first_number):
    shown = line[:40]
    if kind == "token":
        where = (f"a CoNLL-U file's '# text = ' lines hold it: sed -n 's/^# text = //p' {path}"
                 if line[0].isdigit() else "a .dp file's first column holds its words")
        return (f"{path} line {number}: a parsed file's token line ({shown!r}: tab-separated columns, as CoNLL-U or "
                f".dp), where plain text is read; give the text itself ({where})")
    if kind == "tree":
        return (f"{path} line {number}: a bracketed tree ({shown!r}, as Penn Treebank's .mrg), where plain text is "
                "read; give the text itself (the trees' leaves, a sentence a line)")
    if kind == "json":
        return (f"{path} line {number}: a JSON line ({shown!r}), where plain text is read; give the text itself "
                f"(its text field, a line each: e.g. jq -r .text {path})")
    if kind == "csv":
        return (f"{path} line {number}: a CSV row ({shown!r}: its text a quoted field), where plain text is read; give "
                "the text itself (that field alone, a line each)")
    columns = first.split("\t")
    return (f"{path} line {number}: a table's row ({len(columns)} tab-separated columns, as from line "
            f"{first_number}: {', '.join(repr(c[:20]) for c in columns[:4])}{', ...' if len(columns) > 4 else ''}), "
            f"where plain text is read; give its text column alone (e.g. cut -f{_longest(line)} {path}, without "
            f"line {first_number} if it names the columns)")


def _longest(row):
    """The number (from 1) of a row's longest column: its text, most likely."""
    columns = row.split("\t")
    return max(range(len(columns)), key=lambda i: len(columns[i])) + 1


def read_text_lines(path, skip_invalid_utf8=False, invalid_lines=None, skip_flag=True):
    """`text_files.read_lines` of a file read as plain text: a file whose first two lines that are not blank (or
    a "#" comment) are of one other kind (parsed token lines, bracketed trees, JSON lines, table rows of as many
    tabs, CSV rows) is refused at the second, and one with a subtitle timing line among its first three (or a
    WEBVTT header); ValueError naming the line and where its text is."""
    first, first_number, seen = None, None, 0  # the first line not blank (or a comment), its number; seen: how many
    for number, line in text_files.read_lines(path, skip_invalid_utf8, invalid_lines, skip_flag):
        if seen < 3 and line.strip() and not line.startswith("#"):
            seen += 1
            if _TIMING.match(line) or (seen == 1 and line.startswith("WEBVTT")):
                raise ValueError(f"{path} line {number}: a subtitle file's line ({line.strip()[:40]!r}: SRT or "
                                 "WebVTT), where plain text is read; give its text lines alone (without the cue "
                                 "numbers and timings)")
            first, first_number = (line, number) if seen == 1 else (first, first_number)
            kind = _kind(line, first) if seen == 2 else None
            if kind:
                raise ValueError(_refusal(path, kind, number, line, first, first_number))
        yield number, line
