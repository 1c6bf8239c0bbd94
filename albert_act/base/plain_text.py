"""Files read as plain text (sentences, documents): `read_text_lines` refuses, at their first lines, the
files that only look like text to a line reader — parsed trees (CoNLL-U, CoNLL-X, .dp, Penn Treebank's
bracketed .mrg), tables (tab-separated rows with a label or id: a GLUE .tsv; CSV rows whose text is a quoted
field or ends with a label; Markdown), JSON (lines, or a document), YAML lists, fastText's labelled lines, subtitles
(SRT, WebVTT, .sbv, ASS/SSA, LRC), a tagger's output (word/TAG), CoNLL-2003 columns, markup a tag a line (a corpus's
vertical .vrt, XML), HTML, LaTeX and RTF documents, SQL dumps, gettext catalogues and text already cut into ids,
SentencePiece pieces or BPE subwords — rather than read their columns, brackets, fields, tags, keys or timings as
text.
"""

import json
import re

from albert_act.base import prose, text_files

_PTB_TAG = r"(?:NNP?S?|VB[DGNPZ]?|DT|IN|JJ[RS]?|RB[RS]?|PRP\$?|CC|CD|MD|TO|WDT|WP\$?|WRB|EX|FW|LS|PDT|POS|RP|SYM|UH)"
# A parsed file's token line: CoNLL-U/CoNLL-X ("1<TAB>Words<TAB>..."; "1-2", "1.1") or a .dp one ("Words<TAB>NNS<TAB>2")
_TOKEN_LINE = re.compile(r"\d+(?:[-.]\d+)?\t[^\t]*\t[^\t]*\t|[^\t ]+\t[^\t ]+\t\d+\r?$")
# A parsed file's token line with spaces for its tabs: "Pierre NNP 2" (.dp), "1 From from ADP IN _ 3 case 3:case _"
_SPACED_TOKEN_LINE = re.compile(r"\s*(?:\S+ (?:" + _PTB_TAG + r"|[.,:`'()#-]+) \d{1,3}|\d+(?: \S+){5} \d+ [a-z:]+(?: \S+){2})\s*$")
# A bracketed tree's line, made of brackets, labels and leaves only: "( (S", "    (NP-SBJ", "(NP (NNP Pierre) )",
# "(, ,)"; not "(see above) and so on.", "(Applause)", "(door opens)"
_TREE_LINE = re.compile(r"(?:\([A-Z$.,:`'#-][^\s()]* [^\s()]+\)|\([^\s()]*(?=[\s(]|$)|\)|\s)+$")
_TABLE_RULE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")  # a Markdown table's "--- | ---"
_NUMBERED = re.compile(r"\s*\d+\t[^\t]*$")  # "     1<TAB>text", as cat -n numbers lines
# A CSV row whose text is its one quoted field, the others bare (ids, labels): '7,"The text, as it is.",1'; or a header
_CSV_LINE = re.compile(r'\s*(?:(?:[^\s,"]+,)+"(?:[^"]|"")*"(?:,[^\s,"]+)*|"(?:[^"]|"")*"(?:,[^\s,"]+)+)\s*$')
_CSV_HEADER = re.compile(r"\s*\w+(?:([,;])\w+)(?:\1\w+)*\s*$")  # "id,sentence,label", "sentence;label"
# a row ending with its label, no space after its separator: "it is a good film,1"; not "Roses are red, 1"
_LABELLED_CSV = re.compile(r".*[^\d\s,;][,;](?:\d+[,;])*[-+]?\d{1,3}(?:\.\d+)?\s*$")  # "film.,1", "Club A,10,30"; not "1,2,3"
_QUOTED_CSV = re.compile(r'\s*"(?:[^"]|"")*"(?:,"(?:[^"]|"")*")+\s*$')  # '"7","The text.","1"'
_JSON_LINE = re.compile(r"\s*(?:\{\s*\".*\}|\[\s*\".*\])\s*$")  # {"text": "..."}, ["text", 1]
# A YAML list's item or a mapping's key, in lower case (a mapping's with '_' or a digit): '- text: "The text."',
# 'key_0: "The text."'; not a script's 'alice: "Hello."', 'K2SO: "Hello."', nor quotations' '- Twain: "The text."'
_YAML_ITEM = re.compile(r"""\s*(?:-\s+[a-z_][a-z\d_-]*|[a-z][a-z\d_-]*[_\d][a-z\d_-]*):\s+(?:"[^"]*"|'[^']*')\s*$""")
_FASTTEXT = re.compile(r"\s*__label__\S+\s")  # "__label__1 The text."
_TAG_LINE = re.compile(r"\s*</?[A-Za-z][^<>]*>\s*$")  # a line that is one tag: "<doc id=\"1\">", "<s>", "</p>"
# Lines that are some tool's output, not text: a SQL dump's statements, LRC lyrics' tags and times, SentencePiece's
# ids or pieces (spm_encode), subword-nmt's BPE ("Jar@@ red"), a gettext catalogue's entries
_SQL = re.compile(r"\s*(?:(?:CREATE|DROP|ALTER)\s+TABLE\s.*[(;]|INSERT\s+INTO\s+\S+.*\bVALUES\b|LOCK\s+TABLES\s+\S+\s+WRITE;|"
                  r"SET\s+(?:NAMES\s|@|SQL_|FOREIGN_KEY_CHECKS|character_set|time_zone)|BEGIN\s+TRANSACTION;|PRAGMA\s+\w+)")
# LRC's "[00:12.00]" and its tags ("[ti:Title]", "[ar:...]"); not a log's "[12:30:45]", nor "[edit: a typo]"
_LRC = re.compile(r"\s*\[(?:\d+:\d\d\.\d+|(?:ti|ar|al|au|by|offset|re|ve|length|la|id):[^\]]*)\]")
_IDS = re.compile(r"\s*\d+(?:(?:\s+|\s*,\s*)\d+){7,}\s*,?\s*$")  # "1963 1 13 1967 15 1963 1 1968 ...": 8 or more
_PIECES = re.compile(r"(?:.*(?:^|\s)\u2581){3}")  # "▁ J ar r ed ▁ S h a w ▁is"
_BPE = re.compile(r"(?:.*\S@@ ){2}")  # "Jar@@ red Sha@@ w"
_GETTEXT = re.compile(r'\s*(?:msgid|msgstr|msgctxt|msgid_plural)\s+"|\s*"[^"]*\\n"\s*$')
# More tools' output: WordPiece ("Vic ##tor"), GPT-2's byte-level BPE ("Chaim \u0120Lavy"), word-factors
# ("Victor|NN|victor"), enhanced LRC's word times ("<00:01.00> word"), lists of ids or words ("[3008, 2888, ...]",
# "['Victor', 'Chaim', ...]"), an INI/TOML file's sections and keys, a fastText label at the line's end
_WORDPIECE = re.compile(r"(?:.*\s##\w){2}")
_GPT2 = re.compile(r"(?:.*\u0120\w){2}")
_FACTORED = re.compile(r"(?:\S+\|\S+\|\S+(?:\s+|$)){3}")
_WORD_TIMES = re.compile(r"(?:.*<\d+:\d\d\.\d+>){2}")
_LIST = re.compile(r"""\s*\[(?:\d+|'[^']*'|"[^"]*")(?:,\s*(?:\d+|'[^']*'|"[^"]*")){3,}""")
_INI = re.compile(r"""\s*(?:\[[\w .-]+\]|[\w.-]{2,}\s*=\s*(?:"[^"]*"|'[^']*'|[-+]?\d+(?:\.\d+)?|true|false))\s*$""")
_SQL_COPY = re.compile(r"\s*COPY\s+\S+.*\bFROM\s+stdin;")  # PostgreSQL's dump of a table's rows
_FASTTEXT_END = re.compile(r".*\s__label__\S+\s*$")
_MICRODVD = re.compile(r"\s*\{\d+\}\{\d+\}")  # MicroDVD subtitles: "{0}{40}The text."
# Vowpal Wabbit: "-1 |text a b" (a namespace right after the bar); not a numbered line's "7| ", "7 | "
_VOWPAL = re.compile(r"\s*[-+]?\d+(?:\.\d+)?(?:\s+[-+]?\d+(?:\.\d+)?)?(?:\s+'\S+)?\s+\|\S")
_LIBSVM = re.compile(r"\s*[-+]?\d+(?:\.\d+)?(?:\s+\d+:[-+.\deE]+){2,}\s*$")  # LIBSVM: "1 17:0.532 204:0.118"
_PATH = re.compile(r"\s*(?:[a-z][a-z0-9+.-]*://\S+|~?/?(?:[\w.~-]+/)+[\w.-]+)\s*$")  # "/data/wiki.txt", "https://..."
_HEX_DUMP = re.compile(r"\s*[0-9a-f]{6,8}:?(?:\s+[0-9a-f]{2,4}){4}")  # xxd's "00000000: 5669 6374 ...", od -x's
# A line of HTML that opens and closes with tags: '<div class="c"><span>The text.</span><br/></div>'
_HTML_LINE = re.compile(r"\s*<[A-Za-z][^<>]*>.*<[^<>]+>\s*$")
_ID = re.compile(r"(?=[\w.:-]*[A-Za-z])[\w.:-]*\d[\w.:-]*$")  # a row's id: "doc00001", "s7", "en-12"; not "1.", "08:00"
# A tagger's output, words with their tags: "Pierre/NNP Vinken/NNP ,/,"
_TAGGED = re.compile(r"\s*[^\s/]+/[A-Z$.,:`'()#-]+(?:\s+[^\s/]+/[A-Z$.,:`'()#-]+){2,}\s*$")
# A token a line with its tags: "EU NNP I-NP B-ORG" (CoNLL-2003), "The DT" (a word and its part of speech)
_TOKEN_TAGS = re.compile(r"\s*(?:\S+(?: \S+){0,4} (?:O|[BIES]-[A-Z][\w-]*)|\S+ (?:" + _PTB_TAG + r"|[.,:`'()#]{1,2}))\s*$")
# What a first line says a file is, the whole line ("[": a JSON document; "WEBVTT", not "WEBVTT is ...": prose) or
# its start ("[Script Info]": ASS/SSA subtitles; CoNLL-2003's header)
_OPENING_LINES = {"[": "a JSON document", "{": "a JSON document", "WEBVTT": "a subtitle file (WebVTT)",
                  "<DOC>": "an SGML corpus (TREC's <DOC>)"}
_OPENING_STARTS = (("[{", "a JSON document"), ("[Script Info]", "a subtitle file (ASS/SSA)"),
                   ("WEBVTT -", "a subtitle file (WebVTT)"), ("WEBVTT\t", "a subtitle file (WebVTT)"),
                   ("-DOCSTART-", "CoNLL-2003 columns (a token a line)"), ("{\\rtf", "an RTF document"),
                   ("<?xml", "an XML document"), ("<!DOCTYPE", "an HTML or XML document"),
                   ("<html", "an HTML document"), ("\\documentclass", "a LaTeX document"),
                   ("msgid ", "a gettext catalogue (.po)"), ("-- MySQL dump", "a SQL dump"),
                   ("-- PostgreSQL database dump", "a SQL dump"), ("PRAGMA foreign_keys", "a SQL dump"),
                   ("BEGIN TRANSACTION;", "a SQL dump"), ("@Begin", "a CHILDES CHAT transcript"),
                   ("<|im_start|>", "a chat template's turns (ChatML)"), ("<|system|>", "a chat template's turns"),
                   ("<|user|>", "a chat template's turns"))
_OPENING_PATTERNS = ((re.compile(r"@[A-Za-z]+\s*\{[^\s,]*,\s*$"), "a BibTeX bibliography"),
                     (re.compile(r"TY  - "), "a RIS bibliography"),
                     (re.compile(r"BEGIN:V(?:CALENDAR|CARD|EVENT)\s*$"), "an iCalendar or vCard file"),
                     (re.compile(r"WARC/\d"), "a web archive (WARC, WET)"),
                     (re.compile(r"diff (?:--git|-u) |--- a/|--- \S+(?:\t.*)?$"), "a diff (a patch)"),
                     (re.compile(r"begin [0-7]{3,4} \S+\s*$"), "a uuencoded file (decode it first: uudecode)"),
                     (re.compile(r"From: <Saved by "), "a web page saved as MHTML (an e-mail's headers, then its "
                      "HTML in quoted-printable)"),
                     (re.compile(r"(?:Return-Path|Received|Delivered-To|MIME-Version|Message-ID|X-[\w-]+):\s|"
                                 r"From \S+@\S+ "), "an e-mail (its headers)"),
                     (re.compile(r"\[INFORMATION\]\s*$"), "a subtitle file (SubViewer)"),
                     (re.compile(r"\.TH\s"), "a manual page (troff)"))  # a first line's patterns: what it opens
# A subtitle's timing: "00:00:03,000 --> 00:00:06,000" (SRT, WebVTT), "0:00:03.000,0:00:06.000" (YouTube's .sbv)
_TIMING = re.compile(r"\s*(?:(?:\d+:)?\d\d:\d\d[,.]\d{3}\s+-->\s+(?:\d+:)?\d\d:\d\d[,.]\d{3}|"
                     r"\d+:\d\d:\d\d\.\d{3},\d+:\d\d:\d\d\.\d{3}\s*$)")
_NUMBER = re.compile(r"\s*[-+]?\d+(?:\.\d+)?\s*$")  # a label or an id, as a two-column table has one
_LABEL = re.compile(r"\s*[A-Za-z_][\w-]*\s*$")  # a label: "entailment", "PRES", "tr"
# More formats: a text table's rule ("+----+------+" a box's, "----+-----" psql's), a BPE merges file's pair
# ("\u0120 t", "h e"), quoted-printable ("caf=C3=A9", a soft break "="), base64, a parallel corpus's
# "source ||| target", MediaWiki's markup ("'''Lavy''' is an [[Israel]]i", "{{Infobox", "| name = Lavy")
_TEXT_RULE = re.compile(r"\s*[-+]*-{3,}\+[-+]*\s*$")
_MERGES = re.compile(r"\s*(?:\u0120\S* \S+|\S+ \u0120\S*)\s*$")
_QUOTED_PRINTABLE = re.compile(r"(?:.{50,}[^=\s]=\s*$|.*=[0-9A-F]{2}=[0-9A-F]{2})")  # (a character's bytes: not "k=20")
_BASE64 = re.compile(r"\s*(?=\S*[0-9+/])(?=\S*[a-z])(?=\S*[A-Z])[A-Za-z0-9+/]{40,}={0,2}\s*$")
_PARALLEL = re.compile(r".*\S\s+\|\|\|\s+\S")
_HEADERS = re.compile(r"\s*(?:From|To|Cc|Bcc|Subject|Date|Sent|Reply-To):\s+\S.*@|\s*(?:Subject|Date):\s+\S|"
                      r"\s*(?:MIME-Version|Content-Type|Content-Transfer-Encoding|Message-ID):\s+\S")  # e-mail's
_WIKITEXT = re.compile(r"\s*(?:'''[^']+'''|\{\{[^{}]*(?:\|.*|\}\}\s*$|$)|\|\s*\w[\w ]*=|\}\})")  # (not [[links]] alone: notes have them)
# A vocabulary's first line, alone or with its score: BERT's vocab.txt ("[PAD]"), SentencePiece's .vocab ("<unk>\t0")
_VOCABULARY = re.compile(r"\s*(?:\[PAD\]|<(?:pad|unk|s)>\t[-+.\deE]+)\s*$")


_PATTERNS = (("token", _TOKEN_LINE), ("tree", _TREE_LINE), ("json", _JSON_LINE), ("tagged", _TAGGED),
             ("columns", _TOKEN_TAGS), ("spaced", _SPACED_TOKEN_LINE), ("yaml", _YAML_ITEM),
             ("fasttext", _FASTTEXT), ("markup", _TAG_LINE), ("sql", _SQL), ("lrc", _LRC),
             ("ids", _IDS), ("pieces", _PIECES), ("bpe", _BPE), ("gettext", _GETTEXT),
             ("pieces", _WORDPIECE), ("bpe", _GPT2), ("factored", _FACTORED), ("lrc", _WORD_TIMES),
             ("list", _LIST), ("ini", _INI), ("fasttext", _FASTTEXT_END), ("markup", _HTML_LINE),
             ("paths", _PATH), ("hex", _HEX_DUMP), ("microdvd", _MICRODVD), ("vw", _VOWPAL),
             ("libsvm", _LIBSVM), ("merges", _MERGES), ("qp", _QUOTED_PRINTABLE),
             ("base64", _BASE64), ("parallel", _PARALLEL), ("wikitext", _WIKITEXT),
             ("headers", _HEADERS))  # (kind, the pattern its lines match)


def _kind(line, first):
    """The kind two lines, `first` and `line`, share, if any: one of `_PATTERNS`' kinds, "markdown", "csv", or
    "table" (as many tabs, with a label or id)."""
    for kind, pattern in _PATTERNS:
        if pattern.match(line) and pattern.match(first) and not (kind == "ini" and "=" not in line + first):
            return kind  # (two "[sections]" alone: a transcript's "[Music]", "[Applause]")
    if all(row.strip()[:1] == row.strip()[-1:] == "|" and row.count("|") > 2 for row in (line, first)) or (
            "|" in first and (_TABLE_RULE.match(line) or _TEXT_RULE.match(line))) or (
            _TEXT_RULE.match(first) and (line.strip()[:1] == "|" or _TEXT_RULE.match(line))):
        return "markdown"  # "| The text. | 1 |", "|---|---|"; "Name | Text" then "--- | ---"; "+---+" then "| x |"
    if ((_CSV_LINE.match(line) or _LABELLED_CSV.match(line)) and (_CSV_LINE.match(first) or _CSV_HEADER.match(first))
            or _QUOTED_CSV.match(line) and _QUOTED_CSV.match(first)
            or _LABELLED_CSV.match(line) and _LABELLED_CSV.match(first)):
        return "csv"
    numbered = _NUMBERED.match(line) and _NUMBERED.match(first)  # cat -n's lines: text (`overlap` drops the numbers)
    tabs = line.strip().count("\t")  # (tabs that indent a line, or end it, make no column)
    columns, heads = line.strip().split("\t"), first.strip().split("\t")
    labelled = any(_NUMBER.match(column) for column in columns) or all(  # not "HAMLET<TAB>To be"; 3 columns with two
        _ID.match(row.strip().split("\t")[0]) for row in (line, first)) or tabs > 1 and sum(  # labels: "tr<TAB>PRES<TAB>..."
        bool(_LABEL.match(column)) for column in columns) > 1 or (  # (not verse's half-lines: "We Gardena<TAB>in ...")
        " " in columns[0] and _LABEL.match(columns[-1]) and _LABEL.match(heads[-1])) or (  # "it is good<TAB>positive"
        " " in columns[-1] and columns[0].islower() and _LABEL.match(columns[0]) and _LABEL.match(heads[0]))  # "neg<TAB>it is"
    return "table" if tabs == first.strip().count("\t") > 0 and labelled and not numbered else None


_SAID = {"tagged": "words with their tags (word/TAG, a tagger's output)",
         "merges": "a BPE merges file's pair (merges.txt)", "qp": "quoted-printable text (an e-mail's 'caf=C3=A9')",
         "base64": "base64 (encoded bytes, not text)", "parallel": "a parallel corpus's line ('source ||| target')",
         "headers": "an e-mail's headers (From:, To:, Subject:)",
         "wikitext": "MediaWiki markup (raw wikitext: {{templates}}, infobox lines, bold's triple quotes)",
         "spaced": "a parsed file's token line with spaces between its columns (CoNLL-U or .dp)",
         "columns": "a token a line with its tags (CoNLL-2003 columns)", "markdown": "a text table's row (Markdown, psql, a +---+ box)",
         "yaml": "a YAML item (a key and its quoted value)", "fasttext": "a fastText line (its text with its label)",
         "markup": "markup (a line that is one tag, or opens and closes with tags: XML, HTML, a corpus's .vrt)",
         "sql": "a SQL dump's statement", "lrc": "an LRC lyrics line (its time or tag in brackets)",
         "ids": "a line of numbers (ids, as spm_encode --output_format=id writes)",
         "pieces": "a line of pieces (SentencePiece's '\u2581word', WordPiece's '##piece')",
         "bpe": "a line of BPE subwords (subword-nmt's 'Jar@@ red', GPT-2's '\u0120word')",
         "gettext": "a gettext catalogue's entry (.po)", "factored": "a line of factored words ('word|TAG|lemma')",
         "hex": "a hex dump's line", "microdvd": "a subtitle file (MicroDVD)", "vw": "a Vowpal Wabbit line",
         "libsvm": "a LIBSVM line (a label and features)", "list": "a list of ids or words (a program's output)", "ini": "a configuration file's section or key (INI, TOML)"}


def _conllu_text(path):
    """The command that writes a CoNLL-U file's text lines into text.txt, a blank line before each document that a
    '# newdoc' line begins (its documents kept apart)."""
    return f"awk '/^# newdoc/ && NR > 1 {{print \"\"}} sub(/^# text = /, \"\")' {path} > text.txt"


def _refusal(path, kind, number, line, first, first_number):
    shown = line[:40]
    if kind == "token":
        where = (f"a CoNLL-U file's '# text = ' lines hold it: {_conllu_text(path)}"
                 if line[0].isdigit() else "a .dp file's first column holds its words")
        return (f"{path} line {number}: a parsed file's token line ({shown!r}: tab-separated columns, as CoNLL-U or "
                f".dp), where plain text is read; give the text itself ({where})")
    if kind == "tree":
        return (f"{path} line {number}: a bracketed tree ({shown!r}, as Penn Treebank's .mrg), where plain text is "
                "read; give the text itself (the trees' leaves, a sentence a line)")
    if kind == "json":
        array = line.lstrip().startswith("[")  # (a list of words a line: joined; an object's text field: its own)
        return (f"{path} line {number}: a JSON line ({shown!r}), where plain text is read; give the text itself "
                + (f"(its words joined, a line each: jq -r 'join(\" \")' {path})" if array else
                   f"(its text field, a line each: e.g. jq -r .text {path})"))
    if kind == "paths":
        return (f"{path} line {number}: a list of files or addresses ({shown!r}), where plain text is read; give the "
                f"files themselves (e.g. --input $(cat {path})), local copies of what the addresses hold")
    if kind == "parallel":
        return (f"{path} line {number}: {_SAID[kind]} ({shown!r}), where plain text is read; give one side alone "
                f"(e.g. sed 's/ *|||.*//' {path}, the source side)")
    if kind == "fasttext":
        return (f"{path} line {number}: {_SAID[kind]} ({shown!r}), where plain text is read; give the text itself "
                f"(e.g. sed 's/ *__label__[^ ]* *//g' {path})")
    if kind in _SAID:
        return (f"{path} line {number}: {_SAID[kind]} ({shown!r}), where plain text is read; give the text itself "
                "(its words alone, a sentence a line)")
    if kind == "csv":
        return (f"{path} line {number}: a CSV row ({shown!r}: its text a quoted field, or a label after it), where plain "
                "text is read; give "
                "the text itself (its text column alone, a line each)")
    columns = first.split("\t")
    return (f"{path} line {number}: a table's row ({len(columns)} tab-separated columns, as from line "
            f"{first_number}: {', '.join(repr(c[:20]) for c in columns[:4])}{', ...' if len(columns) > 4 else ''}), "
            f"where plain text is read; give its text column alone (e.g. cut -f{prose.longest_column(line)} {path}, without "
            f"line {first_number} if it names the columns)")


def read_text_lines(path, skip_invalid_utf8=False, invalid_lines=None, skip_flag=True):
    """`text_files.read_lines` of a file read as plain text: a file whose first two lines that are not blank (or
    a "#" comment) are of one other kind (`_kind`) is refused at the second, unless the `CONFIRM` lines after them
    are all prose (examples of a format at a text's head); one whose first such line opens another format
    (`_OPENING_LINES`, `_OPENING_STARTS`, a vocabulary, a merges file) at it, and one with a subtitle timing line
    among its first three; ValueError naming the line and what it is. Past them, where `LATER_LINES` lines or
    more are of another kind (a file joined after the text: `cat *.txt`), a warning names the first and how many;
    where few of its first lines read as sentences, or they begin alike or hold escapes (`prose.Prose`), a warning
    says so, and names one. skip_flag: a training text's reader (the data tool's, the tokenizer's: they have
    --skip_invalid_utf8), whose text is also warned of [MASK]s; served text (False) holds them on purpose."""
    lines = text_files.read_lines(path, skip_invalid_utf8, invalid_lines, skip_flag)
    head, shown, texts = [], [], []  # the file's first lines, (number, line); those not blank (nor comments); "# text"s
    for number, line in lines:
        head.append((number, line))
        if not shown and re.match(r"#version: 0\.2\s*$", line):  # (a comment elsewhere)
            _refuse_opening(path, number, line, "a BPE merges file (merges.txt)")
        if not shown and line.startswith("# text = "):  # (a comment in a CoNLL-U file, above its token lines)
            texts.append((number, line))
            if len(texts) == 2:  # a CoNLL-U file's text lines alone, as grep '^# text' gives them
                raise ValueError(f"{path} line {number}: a CoNLL-U file's text line ({line[:40]!r}), where plain text "
                                 f"is read; give the text itself ({_conllu_text(path)})")
        if line.strip() and not line.startswith("#") and line.strip() != "---":  # (YAML's start)
            shown.append((number, line))
            _check_opening(path, number, line, len(shown))
            if len(shown) == 2 + CONFIRM:
                break
    _check_kind(path, shown)
    later, shape = _Later(path), prose.Prose(path, served=not skip_flag)
    try:
        for number, line in head:
            if shown[2:] and number > shown[2][0]:
                later.feed(number, line)
            shape.feed(number, line)
            yield number, line
        for number, line in lines:
            later.feed(number, line)
            shape.feed(number, line)
            yield number, line
    except GeneratorExit:  # a reader that took what it needed (served sentences): the warnings of what it read
        shape.warn()
        raise
    shape.warn()
    later.warn()


CONFIRM = 3  # lines past a file's first two that confirm their kind: where all are prose, the two were examples


def _check_opening(path, number, line, seen):
    """Refuses (ValueError) the `seen`th line not blank of a file where it opens another format, or is a timing."""
    opening = None if seen > 1 else _OPENING_LINES.get(line.strip()) or next(
        (said for start, said in _OPENING_STARTS if line.startswith(start) or line.strip() == start), None) or (
        "a SQL dump (PostgreSQL's COPY)" if _SQL_COPY.match(line) else None) or (
        "a vocabulary (BERT's vocab.txt, SentencePiece's .vocab: a piece a line)" if _VOCABULARY.match(line) else None) or (
        next((said for pattern, said in _OPENING_PATTERNS if pattern.match(line)), None))
    if opening and line.startswith("-DOCSTART-") and line.strip() != "-DOCSTART-":  # (a text's documents may be
        raise ValueError(f"{path} line {number}: {opening} ({line.strip()[:40]!r}), where plain text is read; give the "  # marked
                         "text itself (its sentences alone, a line each); if the lines after it are text, its "  # so too)
                         f"-DOCSTART- lines mark documents: make each a blank line (sed 's/^-DOCSTART-.*$//' {path} > "
                         "text.txt)")
    if opening and line.strip() == "-DOCSTART-":  # (alone, no columns: documents of text marked as CoNLL-2003's are)
        raise ValueError(f"{path} line {number}: '-DOCSTART-', CoNLL-2003's mark of a document's start, where plain text "
                         "is read; give the text with a blank line, which ends a document here, for each mark "
                         f"(sed -E 's/^-DOCSTART-\\r?$//' {path} > text.txt)")
    if opening or (seen <= 3 and _TIMING.match(line)):
        _refuse_opening(path, number, line, opening or "a subtitle file (a timing line)")


def _refuse_opening(path, number, line, said):
    raise ValueError(f"{path} line {number}: {said} ({line.strip()[:40]!r}), where plain text is read; give the text "
                     "itself (its sentences alone, a line each)")


def _check_kind(path, shown):
    """Refuses (ValueError) a file whose first two lines not blank, of `shown`, are of one other kind, unless the
    `CONFIRM` lines after them are each prose: a sentence (`reads_as_sentence`), neither of that kind alone nor of
    a kind with the line before. A file of one line that is a JSON object or array (a config) is refused too."""
    if len(shown) == 1 and _JSON_LINE.match(shown[0][1]) and _parses_as_json(shown[0][1]):
        _refuse_opening(path, shown[0][0], shown[0][1], "a JSON document")
    if len(shown) < 2:
        return
    (first_number, first), (number, line) = shown[:2]
    kind = _kind(line, first)
    alone = [pattern for named, pattern in _PATTERNS if named == kind]
    if kind and len(shown) == 2 + CONFIRM and all(
            prose.reads_as_sentence(after) and not _TIMING.match(after) and not _kind(after, before) and not (
                any(pattern.match(after) for pattern in alone) if alone else {
                    "markdown": "|" in after or _TEXT_RULE.match(after),
                    "csv": _CSV_LINE.match(after) or _LABELLED_CSV.match(after) or _QUOTED_CSV.match(after),
                    "table": "\t" in after.strip()}[kind])
            for (_, before), (_, after) in zip(shown[1:], shown[2:])):
        return
    if kind:
        raise ValueError(_refusal(path, kind, number, line, first, first_number))


def _parses_as_json(line):
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


LATER_LINES = 10  # lines of another kind past a file's first lines: warned of (prose may hold a few)
_LATER_HINT = re.compile(r"[({<|]|__label__|-\s|[A-Za-z][\w-]*:\s|\d[\d.]*[,;]")  # how the later lines of another kind begin (or they hold a tab, -->)


class _Later:
    """The lines of another kind past a file's first lines: each line that begins as one may (`_LATER_HINT`, a tab,
    a timing's -->) and is of one kind with the line before it (`_kind`), or is alone a subtitle's timing, a JSON line
    or a YAML item."""

    def __init__(self, path):
        self.path, self.previous, self.count, self.first = path, None, 0, None

    def feed(self, number, line):
        if not line.strip():
            return
        if "\t" in line or "-->" in line or _LATER_HINT.match(line):
            kind = "timing" if _TIMING.match(line) else "json" if _JSON_LINE.match(line) else "yaml" if (
                _YAML_ITEM.match(line)) else (
                self.previous is not None and _kind(line, self.previous))  # (a timing, a JSON line, a YAML item: alone)
            if kind:
                self.count += 1
                self.first = self.first or (number, line, kind)
        self.previous = line

    def warn(self):
        if self.count >= LATER_LINES:
            number, line, kind = self.first
            said = {"timing": "subtitle timings", "table": "a table's rows", "token": "a parsed file's token lines",
                    "tree": "bracketed trees", "json": "JSON lines", "csv": "CSV rows"}.get(kind, _SAID.get(kind, kind))
            prose.warn_once(f"warning: {self.path}: {self.count:,} lines from line {number} on ({line.strip()[:40]!r}) "
                            f"are {said}, read as text (a file of another kind joined to this one, or tables kept in "
                            "the text?); give the text alone")
