"""Files read as plain text (sentences, documents): `read_text_lines` refuses, at their first lines, the
files that only look like text to a line reader — parsed trees (CoNLL-U, CoNLL-X, .dp, Penn Treebank's
bracketed .mrg), tables (tab-separated rows with a label or id: a GLUE .tsv; CSV rows whose text is a quoted
field; Markdown), JSON (lines, or a document), subtitles (SRT, WebVTT, .sbv, ASS/SSA), a tagger's output (word/TAG)
and CoNLL-2003 columns — rather than read their columns, brackets, fields, tags or timings as text.
"""

import re

from albert_act.base import text_files

# A parsed file's token line: CoNLL-U/CoNLL-X ("1<TAB>Words<TAB>..."; "1-2", "1.1") or a .dp one ("Words<TAB>NNS<TAB>2")
_TOKEN_LINE = re.compile(r"\d+(?:[-.]\d+)?\t[^\t]*\t[^\t]*\t|[^\t ]+\t[^\t ]+\t\d+\r?$")
# A parsed file's token line with spaces for its tabs: "Pierre NNP 2" (.dp), "1 From from ADP IN _ 3 case 3:case _"
_SPACED_TOKEN_LINE = re.compile(r"\s*(?:\S+ [A-Z$.,:`'()#-]+ \d+|\d+(?: \S+){5} \d+ [a-z:]+(?: \S+){2})\s*$")
# A bracketed tree's line, made of brackets, labels and leaves only: "( (S", "    (NP-SBJ", "(NP (NNP Pierre) )",
# "(, ,)"; not "(see above) and so on.", "(Applause)"
_TREE_LINE = re.compile(r"(?:\([^\s()]+ [^\s()]+\)|\([^\s()]*(?=[\s(]|$)|\)|\s)+$")
_NUMBERED = re.compile(r"\s*\d+\t[^\t]*$")  # "     1<TAB>text", as cat -n numbers lines
# A CSV row whose text is its one quoted field, the others bare (ids, labels): '7,"The text, as it is.",1'; or a header
_CSV_LINE = re.compile(r'\s*(?:(?:[^\s,"]+,)+"(?:[^"]|"")*"(?:,[^\s,"]+)*|"(?:[^"]|"")*"(?:,[^\s,"]+)+)\s*$')
_CSV_HEADER = re.compile(r"\s*\w+(?:,\w+)+\s*$")  # "id,sentence,label"
_QUOTED_CSV = re.compile(r'\s*"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")+\s*$')  # '"7","The text.","1"'
_JSON_LINE = re.compile(r"\s*\{\s*\".*\}\s*$")  # {"text": "..."}
# A tagger's output, words with their tags: "Pierre/NNP Vinken/NNP ,/,"
_TAGGED = re.compile(r"\s*[^\s/]+/[A-Z$.,:`'()#-]+(?:\s+[^\s/]+/[A-Z$.,:`'()#-]+){2,}\s*$")
_TOKEN_TAGS = re.compile(r"\s*\S+(?: \S+){1,4} (?:O|[BIES]-[\w-]+)\s*$")  # "EU NNP I-NP B-ORG": a token a line, tags
# What a first line says a file is, the whole line ("[": a JSON document; "WEBVTT", not "WEBVTT is ...": prose) or
# its start ("[Script Info]": ASS/SSA subtitles; CoNLL-2003's header)
_OPENING_LINES = {"[": "a JSON document", "{": "a JSON document", "WEBVTT": "a subtitle file (WebVTT)"}
_OPENING_STARTS = (("[{", "a JSON document"), ("[Script Info]", "a subtitle file (ASS/SSA)"),
                   ("WEBVTT -", "a subtitle file (WebVTT)"), ("WEBVTT\t", "a subtitle file (WebVTT)"),
                   ("-DOCSTART-", "CoNLL-2003 columns (a token a line)"))
# A subtitle's timing: "00:00:03,000 --> 00:00:06,000" (SRT, WebVTT), "0:00:03.000,0:00:06.000" (YouTube's .sbv)
_TIMING = re.compile(r"\s*(?:(?:\d+:)?\d\d:\d\d[,.]\d{3}\s+-->\s+(?:\d+:)?\d\d:\d\d[,.]\d{3}|"
                     r"\d+:\d\d:\d\d\.\d{3},\d+:\d\d:\d\d\.\d{3}\s*$)")
_NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d+)?\s*$")  # a label or an id, as a two-column table has one


def _kind(line, first):
    """The kind two lines, `first` and `line`, share, if any: "token", "tree", "json", "tagged", "columns",
    "spaced", "markdown", "csv", or "table" (as many tabs, with a label or id)."""
    for kind, pattern in (("token", _TOKEN_LINE), ("tree", _TREE_LINE), ("json", _JSON_LINE), ("tagged", _TAGGED),
                          ("columns", _TOKEN_TAGS), ("spaced", _SPACED_TOKEN_LINE)):
        if pattern.match(line) and pattern.match(first):
            return kind
    if all(row.strip()[:1] == row.strip()[-1:] == "|" and row.count("|") > 2 for row in (line, first)):
        return "markdown"  # "| The text. | 1 |", "|---|---|"
    if (_CSV_LINE.match(line) and (_CSV_LINE.match(first) or _CSV_HEADER.match(first))
            or _QUOTED_CSV.match(line) and _QUOTED_CSV.match(first)):
        return "csv"
    numbered = _NUMBERED.match(line) and _NUMBERED.match(first)  # cat -n's lines: text (`overlap` drops the numbers)
    tabs = line.strip().count("\t")  # (tabs that indent a line, or end it, make no column)
    labelled = tabs > 1 or any(_NUMBER.match(column) for column in line.strip().split("\t"))  # not "HAMLET<TAB>To be"
    return "table" if tabs == first.strip().count("\t") > 0 and labelled and not numbered else None


_SAID = {"tagged": "words with their tags (word/TAG, a tagger's output)",
         "spaced": "a parsed file's token line with spaces between its columns (CoNLL-U or .dp)",
         "columns": "a token a line with its tags (CoNLL-2003 columns)", "markdown": "a Markdown table's row"}


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
    if kind in _SAID:
        return (f"{path} line {number}: {_SAID[kind]} ({shown!r}), where plain text is read; give the text itself "
                "(its words alone, a sentence a line)")
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
    a "#" comment) are of one other kind (`_kind`) is refused at the second, one whose first such line opens
    another format (`_OPENING_LINES`, `_OPENING_STARTS`) at it, and one with a subtitle timing line among its
    first three; ValueError naming the line and what it is."""
    first, first_number, seen = None, None, 0  # the first line not blank (or a comment), its number; seen: how many
    for number, line in text_files.read_lines(path, skip_invalid_utf8, invalid_lines, skip_flag):
        if seen < 3 and line.strip() and not line.startswith("#"):
            seen += 1
            opening = None if seen > 1 else _OPENING_LINES.get(line.strip()) or next(
                (said for start, said in _OPENING_STARTS if line.startswith(start) or line.strip() == start), None)
            if opening or _TIMING.match(line):
                raise ValueError(f"{path} line {number}: {opening or 'a subtitle file (a timing line)'} "
                                 f"({line.strip()[:40]!r}), where plain text is read; give the text itself (its "
                                 "sentences alone, a line each)")
            if seen == 1:
                first, first_number = line, number
            kind = _kind(line, first) if seen == 2 else None
            if kind:
                raise ValueError(_refusal(path, kind, number, line, first, first_number))
        yield number, line
