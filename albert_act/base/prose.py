"""Whether a file read as plain text reads as prose: the share of its first lines that read as sentences, lines
that begin alike (a log's times, a chat's senders, a list's numbers, YAML's keys), and traits few texts' lines hold
(`_TRAITS`: escapes, tabs, letters spaced apart, quoted strings, corpora's marks such as <unk>, tags or scores at
the end, hard wraps, page breaks, headings; and `text_marks`': text in another form, links); each warned of once a
process (`warn_once`), as `plain_text.read_text_lines` reads a file. No TensorFlow."""

import collections
import re
import unicodedata

from albert_act.base import mending, text_marks


def masks_in(text):
    """How many [MASK]s `text` holds as the model's normalisation reads it (NFKC, accents dropped, any case): '[mask]',
    a CJK keyboard's fullwidth '\uff3bMASK\uff3d' and '[M\u00c1SK]' are each its mask."""
    from albert_act.base import overlap

    if "[" not in text and "\uff3b" not in text:
        return 0
    return overlap.plain(text).lower().count("[mask]")


def warn_once(message):
    """A warning on stderr, once a process: a file read twice (the overlap check, then the work) says it once."""
    if message not in _WARNED:
        import sys

        _WARNED.add(message)
        print(message, file=sys.stderr, flush=True)


_WARNED = set()


_MARK = re.compile(r"(?:[@#>*\u2022\u00b7\u25aa\u25ba\u2192\u2013\u2014-]|[^\w\s\"'(\[{<\u201c\u2018])\S*$")  # (not a bracket)
PROSE_LINES, PROSE_SHARE = 1000, 0.6  # a file's first lines weighed as sentences; the share below which it is warned of
_WORD = re.compile(r"[\"'\u201c\u2018(\[\u00bf\u00a1\u00a7\u00b6]*(?:[^\W_]+(?:['\u2019.-][^\W_]+)*\.?|\d+(?:[.,:/-]\d+)*%?|"
                   r"[&\u2014\u2013-])"
                   r"[\"'\u201d\u2019)\].,;:!?\u2026\u0964\u0965\u0589\u06d4\u061f\u060c]*$")  # a word or number, with
# its quotes and punctuation (a danda, Armenian's and Arabic's full stops)


def reads_as_sentence(line):
    """Whether a line (not blank) reads as a sentence: two words or more, the first a word ("R2D2", a number) and 70% of
    them words with their punctuation (`_WORD`), not markup, keys, tags or ids; or, without spaces, mostly letters
    (Chinese, Japanese). Format characters (a soft hyphen, a zero-width space) are dropped first."""
    tokens = "".join(c for c in line if unicodedata.category(c) not in ("Cf", "Mn", "Mc")).split()  # (Hindi's vowel
    # signs: no \w)
    if len(tokens) > 2 and _MARK.match(tokens[0]):  # a list's bullet, a quote's ">", "@alice", "#1", an emoji
        tokens = tokens[1:]
    if len(tokens) == 2 and any(token.isdigit() for token in tokens):  # "the 1234", "  1234 the": a count's line
        return False
    if len(tokens) == 1:
        return len(tokens[0]) > 8 and not tokens[0].isascii() and sum(map(str.isalpha, tokens[0])) > 0.7 * len(tokens[0])
    words = [bool(_WORD.match(token)) for token in tokens]
    return bool(words) and words[0] and sum(words) >= 0.7 * len(words)


class Prose:
    """How many of a file's first `PROSE_LINES` lines (not blank) read as sentences (`reads_as_sentence`), how many
    begin alike (`_prefixes`), and how many hold each of `_TRAITS` (escapes, a tab, spaced letters, mojibake, colour
    codes, quotes, a corpus's marks, a tag or number at the end, a hard wrap...); of 5 lines or more, under
    `PROSE_SHARE` of sentences, `ALIKE_SHARE` or more begun alike (`KEY_SHARE` by a key; 10 lines at least), or a
    trait's share, a warning (once they are read, or at the file's end) says how many, and names a line."""

    def __init__(self, path, served=False, traits=None):
        self.path, self.lines, self.sentences, self.other, self.unit = path, 0, 0, None, "lines"
        self.at_once, self.served, self.copies = SERVED_AT_ONCE if served else (), {} if served else None, []  # (served
        # text: {line: its first number}, and the lines that repeat one before them: each served and counted again)
        self.checked = {k: v for k, v in _TRAITS.items() if not (served and k in TRAINING_TEXT)  # (served: [MASK]s)
                        and (k in traits if traits is not None else k not in ROW_TRAITS)}
        self.prefixes, self.traits = collections.Counter(), {}  # {prefix: lines}, {trait: [(number, line)]}
        self.shown = {}  # {prefix: (number, line)}: its first line
        self.front = []  # the lines that open YAML front matter (a key after '---')
        self.before, self.again, self.repeats = None, False, []  # the line before (not blank), whether it repeated its
        # own, and the lines that repeat theirs (the first of a run)
        self.open, self.halved = None, []  # the line before, where it stops mid-sentence; those the next goes on from
        self.headers = {}  # {shape, its numbers 0: [(number, line)]} of lines that stop mid-sentence and hold a number

    def feed(self, number, line):
        if self.lines < PROSE_LINES and line.strip():
            self.lines += 1
            again = line.strip() == self.before  # (each sentence written twice: a doubled file, a join gone wrong;
            if again and not self.again:  # a run of one line counted once: Wikipedia's lists repeat a line in a run)
                self.repeats.append((number, line))
            if self.before == "---" and _KEY.match(line):  # (YAML front matter: '---', then 'title: ...')
                self.front.append((number, line))
            self.before, self.again = line.strip(), again
            if self.served is not None and self.served.setdefault(line.strip(), number) != number:
                self.copies.append((number, self.served[line.strip()]))
            sentence = reads_as_sentence(line)
            if sentence:
                self.sentences += 1
            else:
                self.other = self.other or (number, line)
            for prefix in _prefixes(line):
                self.prefixes[prefix] += 1
                self.shown.setdefault(prefix, (number, line))
            held = [trait for trait, (holds, _, _) in self.checked.items() if holds(line)]
            for trait in held:
                self.traits.setdefault(trait, []).append((number, line))
            if self.open and line.lstrip()[:1].islower():  # (a sentence cut in two: it goes on in lower case)
                self.halved.append((*self.open, self.open[0] == number))  # (one number: a line end inside the line)
            self.open = (number, line) if "wrapped" in held else None
            if self.open and sentence and any(map(str.isdigit, line)) and not _PAGE.match(line) and not _KEY.match(
                    line):  # (a page's running header, its number aside; not a subtitle's timing, YAML's "date: 2021")
                self.headers.setdefault(re.sub(r"\d+", "0", line.strip()), []).append((number, line))
            if self.lines == PROSE_LINES:
                self.warn()

    def feed_words(self, numbers, words, unit="sentences"):
        """A parsed sentence's words (or a table row's texts, `unit` "rows"), each read from its line of `numbers`:
        one of the units counted, with the first word that holds each trait (a parsed file's words hold no prose's
        shape: only its traits are weighed)."""
        self.unit = unit
        if self.lines < PROSE_LINES:
            self.lines += 1
            key = (words[0].split(None, 1) or [""])[0] if words else ""
            if len(key) > 1 and key.endswith(":"):  # (a template's 'Review:' before every row's text)
                self.prefixes[key] += 1
                self.shown.setdefault(key, (numbers[0], words[0]))
            for trait, (holds, _, _) in self.checked.items():
                if held := next(((n, word) for n, word in zip(numbers, words) if holds(word)), None):
                    self.traits.setdefault(trait, []).append(held)
            if self.lines == PROSE_LINES:
                self.warn()

    def warn(self):
        if self.lines >= 5 and self.sentences < PROSE_SHARE * self.lines and self.other:
            number, line = self.other
            warn_once(f"warning: {self.path}: {self.sentences / self.lines:.0%} of its first {self.lines:,} lines read "
                      f"as sentences (words with their punctuation; line {number}, {line.strip()[:40]!r}, does not): "
                      "is it text? A file of another kind (a tagger's output, a table, a log, code) is read as its "
                      "words, markup and all")
        prefix, alike = max(((p, n) for p, n in self.prefixes.items()  # (a speaker's "ALICE:": most lines, not half)
                             if n >= max(10, (ALIKE_SHARE if _UNLIKE_A_SENTENCE.search(p) else KEY_SHARE) * self.lines)),
                            key=lambda kv: (kv[1], len(kv[0])), default=(None, 0))
        if self.lines >= 5 and prefix is not None:
            number, line = self.shown[prefix]
            quoted = line.lstrip().startswith(">")  # (an e-mail's quoted text: '> ' before each line)
            warn_once(f"warning: {self.path}: {alike:,} of its first {self.lines:,} lines begin alike ({prefix!r}, as "
                      f"line {number} does: {line.strip()[:40]!r}): " + (
                          f"an e-mail's quoted text; the marks are read as words: remove them first (sed -E 's/^( *>)+ "
                          f"?//' {self.path} > text.txt)" if quoted else "a time, a line's number, a sender or a key, as "
                          "a log, a chat's export or YAML begins each line? It is read as words of the text: give the "
                          "text alone"))
        if self.lines >= 5 and len(self.repeats) >= max(5, 0.2 * self.lines):
            number, line = self.repeats[0]
            warn_once(f"warning: {self.path}: {len(self.repeats):,} of its first {self.lines:,} lines repeat the line "
                      f"before them (line {number}: {line.strip()[:40]!r}), each sentence twice (a file written twice "
                      "over, a join that doubled its lines?): each is read twice; remove the repeats first (sed "
                      f"'s/[[:space:]]*$//' {self.path} | uniq > text.txt)")
        if len(self.copies) >= max(2, 0.1 * self.lines):
            warn_once(f"warning: {self.path}: {len(self.copies):,} of its first {self.lines:,} lines repeat one before "
                      f"them (line {self.copies[0][0]} is line {self.copies[0][1]} again): each is served and counted "
                      f"again, as if another sentence; leave the repeats out (awk '!seen[$0]++' {self.path} > text.txt)")
        if self.lines >= 5 and len(self.front) >= 2:
            number, line = self.front[0]
            self.traits.pop("ruled", None)  # (its '---' lines: said here)
            warn_once(f"warning: {self.path}: {len(self.front):,} of its documents begin with YAML front matter (line "
                      f"{number}: {line.strip()[:40]!r} after '---'), as a static site's pages do: its keys and '---' "
                      "lines are read as sentences; leave it out (awk '/^---[[:space:]]*$/ {f = !f; next} !f' "
                      f"{self.path} > text.txt)")
        wrapped = len(self.traits.get("wrapped", [])) >= _TRAITS["wrapped"][1](self.lines)  # (said of all its lines)
        if self.lines >= 5 and len(self.halved) >= max(10, HALVED_SHARE * self.lines) and not wrapped:
            warn_once(f"warning: {self.path}: {len(self.halved):,} of its first {self.lines:,} lines "
                      f"{mending.halved(self.path, *self.halved[0])}")
        header = max(self.headers.values(), key=len, default=[])
        if self.lines >= 5 and len(header) >= max(3, 0.01 * self.lines) and not wrapped:
            warn_once(f"warning: {self.path}: {len(header):,} of its first {self.lines:,} lines "
                      f"{mending.running_header(self.path, *header[0])}")
        for trait, (_, least, said) in self.checked.items():
            held = self.traits.get(trait, [])
            once = trait in self.at_once and (trait != "unknown" or any(  # (a lone 'http' or '@user': a word, as served)
                _UNKNOWN.search(line).group() not in ("http", "@user") for _, line in held))
            if held and (once or self.lines >= 5 and len(held) >= least(self.lines)):
                shown = held[0]
                if trait == "wrapped":  # (typeset text: a line ending in a split word shown, whose join undoes it)
                    split = [h for h in held if mending.SPLIT_WORD.search(h[1].rstrip())]
                    shown = split[0] if len(split) >= 0.05 * len(held) else shown
                warn_once(f"warning: {self.path}: {len(held):,} of its first {self.lines:,} {self.unit} "
                          f"{said(self.path, *shown)}")
        self.other, self.prefixes, self.traits, self.repeats, self.front, self.copies = (None, collections.Counter(),
                                                                                         {}, [], [], [])
        self.halved, self.headers = [], {}


ALIKE_SHARE, KEY_SHARE = 0.5, 0.8  # of a file's first lines begun alike (by a key, as "text:")
HALVED_SHARE = 0.25  # of a file's first lines that stop mid-sentence where the next line goes on in lower case
_QUOTED_LINE = re.compile(r'\s*b?(?:"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')\s*,?\s*$')  # jq's strings, Python's reprs
_TRAITS = {  # what few of a text's lines hold: (whether a line does, from how many lines of n on warned of, what is said)
    "escaped": (lambda line: "&" in line and _ESCAPE.search(line), lambda n: max(10, 0.1 * n),  # (Wikipedia: 1%)
                lambda path, number, line: f"hold HTML's or Moses' escapes ({_ESCAPE.search(line).group()} on line "
                                           f"{number}), read as they are written, not as the characters they stand for: "
                                           "unescape the text first (Python's html.unescape; Moses' "
                                           "deescape-special-chars.perl)"),
    "tabbed": (lambda line: "\t" in line.strip() and " " in line.strip(), lambda n: ALIKE_SHARE * n,  # (no space:
               # words split by tabs alone, each read as a space, rightly)
               lambda path, number, line: f"hold a tab (line {number}: {line.strip()[:40]!r}): columns (sentence pairs, "
                                          f"a table?) are read as one text, a tab as a space; give one column alone "
                                          f"(e.g. cut -f{longest_column(line)} {path}, its longest)"),
    "spaced": (lambda line: len(words := line.split()) >= 8 and sum(len(w) == 1 for w in words) >= 0.8 * len(words),
               lambda n: max(10, ALIKE_SHARE * n),
               lambda path, number, line: f"are letters spaced apart (line {number}: {line.strip()[:40]!r}), as a PDF's "
                                          "extraction or a character tokenizer leaves them: each letter is read as a "
                                          "word; give the text as written"),
    "mojibake": (lambda line: _MOJIBAKE.search(line), lambda n: max(5, 0.1 * n),
                 lambda path, number, line: f"hold UTF-8 read as Windows-1252 and saved again (line {number}: "
                                            f"{_MOJIBAKE.search(line).group()!r}, mojibake for one character), read as "
                                            "such letters: decode it back first (ftfy, which mends mojibake line by "
                                            "line: pip install ftfy; ftfy FILE > fixed.txt)"),
    "misread": (lambda line: (n := sum("\u00c0" <= c <= "\u00ff" for c in line)) >= 8 and n >= 0.5 * sum(
        map(str.isalpha, line)), lambda n: max(5, 0.2 * n), mending.misread),  # (most letters Latin-1's accented)
    "replaced": (lambda line: "\ufffd" in line, lambda n: max(3, 0.02 * n),
                 lambda path, number, line: f"hold U+FFFD, the replacement character (line {number}: "
                                            f"{line.strip()[:40]!r}), left where a decoder met bytes it could not read: "
                                            "the characters there are lost; decode the source with its own encoding "
                                            "(iconv -f ENCODING -t UTF-8)"),
    "c1": (lambda line: _C1.search(line), lambda n: max(3, 0.02 * n),
           lambda path, number, line: mending.c1(path, number, line, _C1.search(line).group())),
    "nel": (lambda line: "\x85" in line, lambda n: max(3, 0.02 * n),
            lambda path, number, line: f"hold U+0085 (NEL, on line {number}: Windows-1252's '\u2026' decoded as "
                                       "Latin-1), read as an unknown piece: decode the file's C1 characters as "
                                       f"Windows-1252 first ({mending.as_cp1252(path)})"),
    "pieces": (lambda line: _PIECES.search(line), lambda n: max(3, 0.02 * n),
               lambda path, number, line: f"hold WordPiece's pieces ({_PIECES.search(line).group().strip()!r} on line "
                                          f"{number}: text as BERT's tokenizer splits it), each read as a word with its "
                                          "'##': give the text as written" if "#" in _PIECES.search(line).group() else
                                          f"hold SentencePiece's pieces ({_PIECES.search(line).group()!r} on line "
                                          f"{number}: text as ALBERT's tokenizer splits it), each read as a word with its "
                                          "'\u2581': give the text as written (decoded)"),
    "missing": (lambda line: line.strip() in MISSING_TEXTS, lambda n: max(3, 0.01 * n),
                lambda path, number, line: f"are {line.strip()!r} alone (line {number}), as pandas writes a missing "
                                           "text (astype(str), to_csv of None): each is read as a sentence; leave "
                                           f"them out (df.dropna() before writing, or grep -vxE 'nan|None|NaN|null' "
                                           f"{path} > text.txt)"),
    "pilcrows": (lambda line: "\u00b6" in line, lambda n: max(3, 0.02 * n),
                 lambda path, number, line: f"hold pilcrows (\u00b6 on line {number}: a word processor's formatting "
                                            f"marks, copied with the text), read as text: remove them (sed 's/\u00b6//g' "
                                            f"{path} > text.txt)"),
    "coloured": (lambda line: "\x1b[" in line, lambda n: 3,
                 lambda path, number, line: f"hold a terminal's colour codes (line {number}: ESC[...m), read as "
                                            "text: write the text without them (a program's --color=never, or sed "
                                            "'s/\\x1b\\[[0-9;]*m//g')"),
    "quoted": (_QUOTED_LINE.match, lambda n: max(20, 0.8 * n),  # (Wikipedia's '"AIK won 6-2 on aggregate."'; a novel's
               # dialogue, a speech a line, has lines of narration between: under 80%)
               lambda path, number, line: mending.quoted(path, number, line)),
    "unknown": (lambda line: _UNKNOWN.search(line), lambda n: max(3, 0.02 * n),
                lambda path, number, line: mending.unknown(path, number, _UNKNOWN.search(line).group())),
    "own_mask": (lambda line: masks_in(line) > 0, lambda n: max(3, 0.02 * n),
                 lambda path, number, line: f"hold [MASK] (line {number}" + ("" if "[MASK]" in line else
                                            f", written {line.strip()[:40]!r}") + "), this model's mask: training "
                                            "text reads it as its characters, served text as the mask, so the two "
                                            "would mean other things; give the original words"),
    "own_marks": (lambda line: _OWN_MARK.search(line), lambda n: max(3, 0.02 * n),
                  lambda path, number, line: f"hold {_OWN_MARK.search(line).group()} (line {number}), the model's own "
                                             "marker, which it adds itself between and around sentences: read as its "
                                             "characters, it would mean another thing; give the sentences alone (one a "
                                             "line: a blank line ends a document)"),
    "broken": (lambda line: _BREAK.search(line.rstrip()[:-6]), lambda n: max(3, 0.02 * n),
               lambda path, number, line: f"hold HTML's line breaks ({_BREAK.search(line).group()!r} inside line "
                                          f"{number}, as IMDb's and other scraped reviews keep them), read as text: "
                                          f"make them line ends first (sed -E 's#<br */?>#\\n#g' {path} > text.txt)"),
    "escaped_bytes": (lambda line: _BYTE_ESCAPE.search(line), lambda n: max(5, 0.05 * n),
                      lambda path, number, line: f"hold escaped bytes ({_BYTE_ESCAPE.search(line).group()!r} on line "
                                                 f"{number}: UTF-8 written as \\xNN or octal \\NNN escapes), read as they "
                                                 "are written: decode them first (python3 -c \"import sys; sys.stdout."
                                                 "write(sys.stdin.read().encode('latin-1', 'backslashreplace').decode("
                                                 "'unicode_escape').encode('latin-1').decode('utf-8'))\" < "
                                                 f"{path} > text.txt)"),
    "iso2022": (lambda line: "\x1b$" in line, lambda n: 1,  # (ESC $: a two-byte set; ESC ( alone ends colour codes too)
                lambda path, number, line: f"hold ISO-2022's escapes (ESC $ on line {number}: Japanese, Korean or "
                                           "Chinese in a 7-bit encoding, as old mail writes it), read as letters: "
                                           f"convert the file first (iconv -f ISO-2022-JP -t UTF-8 {path} > "
                                           "converted.txt; ISO-2022-KR, ISO-2022-CN for the others)"),
    "paginated": (lambda line: _PAGE.match(line), lambda n: max(3, 0.01 * n),
                  lambda path, number, line: f"are page numbers ({line.strip()[:20]!r} on line {number}), as text "
                                             "copied from a PDF or a book keeps them with its running heads: each is "
                                             "read as a sentence of its document; give the text without them"),
    "other_mask": (lambda line: _OTHER_MASK.search(line), lambda n: max(3, 0.02 * n),
                   lambda path, number, line: f"hold {_OTHER_MASK.search(line).group()} (line {number}), another "
                                              "model's special token (RoBERTa's <mask>, T5's, GPT-2's <|endoftext|>, "
                                              "LLaMA's <bos>, Gemma's <start_of_turn> turns, Mistral's [INST]), "
                                              "read as its characters: this model's mask is [MASK], and a blank line "
                                              "ends a document"),
    "wikitext": (lambda line: _WIKITEXT.search(line), lambda n: max(3, 0.02 * n),
                 lambda path, number, line: mending.wikitext(path, number, line, _WIKITEXT.search(line).group())),
    "mixed_scripts": (lambda line: mending.HOMOGLYPH.search(line), lambda n: max(3, 0.02 * n), mending.homoglyphs),
    "conflicted": (lambda line: mending.CONFLICT.match(line), lambda n: 2, mending.conflict),
    "tagged": (lambda line: mending.INLINE_TAG.search(line), lambda n: max(3, 0.05 * n), mending.inline_tags),
    "treebank": (lambda line: _TREEBANK.search(line), lambda n: max(3, 0.02 * n),
                 lambda path, number, line: f"hold Penn Treebank's tokens ({_TREEBANK.search(line).group()!r} on line "
                                            f"{number}: brackets and quotes written as words), read as words: "
                                            "detokenize first (-LRB- to '(', `` to '\"')"),
    "split": (lambda line: _SPLIT.search(line), lambda n: max(5, 0.1 * n),
              lambda path, number, line: f"hold words split as Penn Treebank's tokenizer splits them "
                                         f"({_SPLIT.search(line).group().strip()!r} on line {number}: clitics and "
                                         "punctuation set apart), read as such: give the text as written (detokenized: "
                                         "sacremoses' MosesDetokenizer, or the original text)"),
    "latex": (lambda line: _LATEX.search(line), lambda n: max(3, 0.05 * n),
              lambda path, number, line: f"hold LaTeX commands ('{_LATEX.search(line).group()}' on line {number}), "
                                         f"read as text: give the text without its markup (detex {path} > text.txt, "
                                         "or pandoc -t plain)"),
    "highlights": (lambda line: line.strip() == "@highlight", lambda n: max(3, 0.02 * n),
                   lambda path, number, line: f"are CNN/Daily Mail's '@highlight' marks (line {number}), each read as "
                                              "a sentence, as is the summary line after it: leave both out (awk "
                                              "'/^@highlight$/ {h = 1; next} h && NF {h = 0; next} 1' "
                                              f"{path} > text.txt)"),
    "paged": (lambda line: "\f" in line, lambda n: max(2, 0.01 * n),
              lambda path, number, line: f"hold a form feed (line {number}), a page break as pdftotext leaves it, with "
                                         "each page's running header and number read as sentences: extract without "
                                         "them (pdftotext -nopgbrk, and cut the headers)"),
    "ruled": (lambda line: _RULE.match(line), lambda n: max(2, 0.01 * n),
              lambda path, number, line: f"are rules ({line.strip()[:10]!r} on line {number}), as documents are "
                                         "separated in some files: read as sentences, and they separate nothing "
                                         "here; a blank line ends a document"),
    "invisible": (lambda line: _INVISIBLE.search(line), lambda n: max(5, 0.1 * n),
                  lambda path, number, line: f"hold an invisible character (U+"
                                             f"{ord(_INVISIBLE.search(line).group()):04X} on line {number}: a soft "
                                             "hyphen, a zero-width space or a direction mark, as web and PDF text keep "
                                             "them), each an unknown piece that splits its word: remove them first "
                                             f"({mending.without(_INVISIBLE_CHARS, path)})"),
    "private": (lambda line: _PRIVATE.search(line), lambda n: max(5, 0.1 * n),
                lambda path, number, line: f"hold private-use characters (U+{ord(_PRIVATE.search(line).group()):04X} "
                                           f"on line {number}: an icon font's glyphs, copied from a web page), each an "
                                           f"unknown piece: remove them first ({mending.without(_PRIVATE_CHARS, path)})"),
    "bulleted": (lambda line: line.lstrip()[:1] in _BULLETS, lambda n: max(5, 0.5 * n),
                 lambda path, number, line: f"begin with a bullet ({line.lstrip()[0]!r}, line {number}: a list copied "
                                            "from a page), read as an unknown piece before each: remove the bullets "
                                            f"(sed -E 's/^[[:space:]]*({'|'.join(_BULLETS)}) *//' {path} > text.txt)"),
    "fenced": (lambda line: line.lstrip().startswith("```"), lambda n: max(2, 0.01 * n),
               lambda path, number, line: f"are Markdown code fences ({line.strip()[:20]!r} on line {number}): the code "
                                          "between them is read as text; give the text without its code blocks"),
    "footnoted": (lambda line: _FOOTNOTE.search(line) and not text_marks.BBCODE.search(line) and not (
        text_marks.EMPHASIS.search(line)), lambda n: max(10, 0.3 * n),  # (a page of Wikipedia: 5 of 12)
                  lambda path, number, line: mending.footnotes(path, number, _FOOTNOTE.search(line).group())),
    "edit_links": (lambda line: line.rstrip().endswith("[edit]"), lambda n: max(3, 0.02 * n),
                   lambda path, number, line: f"are a copied Wikipedia page's section headings ({line.strip()[:40]!r} "
                                              f"on line {number}, with its [edit] link), each read as a sentence: leave "
                                              f"them out (grep -v '\\[edit\\]$' {path} > text.txt)"),
    "cited": (lambda line: line.startswith("^ "), lambda n: max(3, 0.02 * n),
              lambda path, number, line: f"are a copied Wikipedia page's references ({line.strip()[:40]!r} on line "
                                         f"{number}), each read as a sentence: leave them out (grep -v '^\\^ ' {path} > "
                                         "text.txt; and the 'References' headings)"),
    "continued": (lambda line: line.rstrip("\r\n").endswith(" \\"), lambda n: max(5, 0.3 * n),
                  lambda path, number, line: f"end in ' \\' (line {number}: '{line.strip()[-30:]}'), a shell's or a "
                                             "macro's line continuation, read as text: remove it first (sed 's/ *\\\\$//' "
                                             f"{path} > text.txt)"),
    "headed": (lambda line: _HEADING.match(line), lambda n: max(3, 0.05 * n),
               lambda path, number, line: f"are Markdown headings (line {number}: {line.strip()[:40]!r}), read with "
                                          "their '#' as sentences: give the text without its markup"),
    "json_escaped": (lambda line: _JSON_ESCAPE.search(line), lambda n: max(5, 0.1 * n),
                     lambda path, number, line: f"hold JSON's escapes ({_JSON_ESCAPE.search(line).group()} on line "
                                                f"{number}), read as they are written, not as what they stand for: "
                                                "decode the text first (a JSON reader's strings, jq -r)"),
    "ended": (lambda line: _ENDING.search(line), lambda n: max(10, ALIKE_SHARE * n),
              lambda path, number, line: f"end in a tag or a bare number ({_ENDING.search(line).group().strip()!r} on "
                                         f"line {number}), as a language model's <eos> or a label's score: read as "
                                         "the text's last word; give the text alone"),
    "wrapped": (lambda line: 10 <= len(end := _TRAILING.sub("", line.rstrip())) <= 200 and end[-1] not in _ENDS
                and not "\u0e00" <= end[-1] <= "\u0eff",  # (Thai and Lao end a sentence with no mark)
                lambda n: max(10, 0.6 * n),
                mending.unended),
} | text_marks.TRAITS  # (and text written in another form: URL-encoding, overstrike, box frames, links...)
ROW_TRAITS = ("nel", "pieces")  # weighed in a table's texts alone (plain text ends a line at U+0085; the data tool
# refuses a line of pieces)
TEXT_TRAITS = ("escaped", "mojibake", "replaced", "c1", "nel", "unknown", "other_mask", "own_marks", "broken",
               "invisible", "pieces", "coloured", "private", "bulleted", "wikitext", "mixed_scripts", "tagged",
               "url_encoded", "quoted_printable", "controls", "overstruck")  # a task file's texts (GLUE's) are weighed for
WORD_TRAITS = ("escaped", "mojibake", "replaced", "c1", "unknown", "other_mask", "treebank", "invisible", "coloured",
               "private", "wikitext", "mixed_scripts", "controls", "overstruck")  # those a parsed file's words (CoNLL-U's FORMs) are
SERVED_AT_ONCE = ("own_marks", "other_mask", "coloured", "controls", "conflicted", "unknown", "joined_words")  # served
# text's, warned of from one line on (a few sentences typed or pasted): none is a sentence's
TRAINING_TEXT = ("own_mask",)  # traits warned of in training text only: served text holds [MASK] on purpose
# What may follow a sentence's end on a line that is not wrapped: tags (<eos>, <|endoftext|>), footnote marks
_TRAILING = re.compile(r"(?:\s*(?:<\|?/?[\w.-]*\|?>|<sup>[^<]*</sup>|(?<=\s)http|\[\d+\]|[\u00b9\u00b2\u00b3\u2070-\u2079\u2020\u2021\u00b6]+|<ref[^>]*>.*?</ref>"
                       r"|<ref[^>]*/>|\{\{[^{}]*\}\}|[\u2500-\u257f]+|(?<=\s)\||[\U0001f000-\U0001faff\u2600-\u27bf\ufe0f\u200d]+))+$")  # (MediaWiki's <ref>{{cite ...}}</ref>; a frame)
_JSON_ESCAPE = re.compile(r'\\u[0-9a-fA-F]{4}|\\"|\\n')  # "Jos\u00e9", '\"', '\n': JSON's, outside a JSON string
_ENDING = re.compile(r"(?:\s<[/\w]+>|<br\s*/?>|\s\[[A-Z]+\]|\s__\w+__|\s(?:EOS|EOT)|\s[-+]?\d+(?:\.\d+)?|\s[\u2605\u2606]+)$")  # <eos>, 0.87
_UNKNOWN = re.compile(r"(?i:<unk>|\[unk\]|<oov>|<num>|<number>)|\bUNK\b|@@UNKNOWN@@|_{3,}|__NUM__|@card@|@ord@|"
                      r"\[(?:deleted|removed)\]|<(?:PERSON|PER|LOC|ORG|NAME|EMAIL|URL|PHONE|ADDRESS)>|"
                      r"\[(?:NAME|PERSON|EMAIL|URL|PHONE|ADDRESS|laughter|laughs|applause|music|inaudible|crosstalk|"
                      r"REDACTED|[Rr]edacted)\]|\u2588{2,}|<0x[0-9A-F]{2}>|(?<!\S)@user(?!\S)|(?<![\w/.])http(?![\w:/.])")
# PTB's, BERT's, AllenNLP's; Reddit's [deleted], an anonymizer's <PERSON>, a transcript's [laughter], redactions' \u2588\u2588,
# byte pieces left by a decode, TweetEval's @user and http; a cloze blank; numbers replaced (TreeTagger's @card@)
_WIKITEXT = re.compile(r"(?<!\S)@[-.,]@(?!\S)|^ ?(?:=+ )+[^=]+(?: =+)+ ?$|'''[^'\n]+'''")  # (' = = Career = = ', bold)
_SPLIT = re.compile(r"(?<=\w) n't(?!\S)|(?<=\w) '(?:s|re|ve|ll|d|m)(?!\S)|(?<=\w) [,;:](?= \w)")  # "is n't", "a , b"
_LATEX = re.compile(r"\\(?:section|subsection|chapter|cite[pt]?|ref|label|begin|end|emph|textbf|textit|item|footnote)"
                    r"(?![a-zA-Z])")
_TREEBANK = re.compile(r"-[LR][RSC]B-|(?<!`)``(?!`)|(?<!\S)\*(?:T|U|PRO|EXP|ICH|RNR|\?)\*(?:-\d+)?(?!\S)|(?<!\S)\*-\d+(?!\S)")
# (and its empty elements, as a treebank's leaves hold them: traces *T*-2, *-1, *U*, *PRO*)
_HEADING = re.compile(r"#{1,6} \S")
_PRIVATE_CHARS = r"\ue000-\uf8ff"  # (an icon font's: Font Awesome's U+F0C1)
_PRIVATE = re.compile(f"[{_PRIVATE_CHARS}]")
_BULLETS = ("\u2022", "\u25e6", "\u25aa", "\u25cf", "\u2023", "\u2043", "\u25a0")  # \u2022 \u25e6 \u25aa ...
_PIECES = re.compile(r"(?<!\S)(?:##|\u2581)[^\W_]+")  # "prot ##agonist", "\u2581prot agon ist"
_KEY = re.compile(r"\s*[A-Za-z_][\w-]*:(?:\s|$)")  # YAML's "title: ...", "tags:"
_INVISIBLE_CHARS = r"\xad\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\U000e0000-\U000e007f"  # (and tag characters)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")  # soft hyphen, zero-width space, joiners,
# the left-to-right mark (copied from web pages)
_FOOTNOTE = re.compile(r"\{\{(?:citation needed|cn|fact|clarify|clarification needed|sfnp?|efn|harvnb|rp|refn)[^{}]*\}\}|"
                       r"<ref[^>]*>[^<]*</ref>|<ref[^>]*/>|\^\[[^\]]*\]|\[@[\w:.-]+[^\]]*\]|"
                       r"(?<!\])(?<![-*+] )\[(?:\d+|[a-z]|note \d+|nb \d+|citation needed|clarification needed)\](?![\[(])|(?<=[.,;:])(?:[\u00b9\u00b2\u00b3\u2070-\u2079\u2020\u2021]+|\*+(?=\s|$))"
                       r"|(?<=[^\W\d_])[*\u2020\u2021]+(?=[\s.,;:]|$)|<sup>\s*\[?\w{1,3}\]?\s*</sup>|(?<=[.,;:])\(\d{1,3}\)|"
                       r"\[\^[^\]\s]+\]|\[(?:#\w*|\d+)\]_")  # a copied page's "[46]", or its mark as a superscript after
# the punctuation ("(LUB).\u00b9"), a dagger or an asterisk after a word ("Paris\u2020 was"), HTML's <sup>1</sup>, "(3)"
# after a full stop, Markdown's [^1], reStructuredText's [#]_, MediaWiki's <ref>...</ref> and {{sfn|...}}
_RULE = re.compile(r"\s*([-=*_~#])(?: ?\1){2,}\s*$")  # ("---", a novel's "* * *")
_OTHER_MASK = re.compile(r"(?i:<mask>|<blank>|\[blank\])|<extra_id_\d+>|<\|\w+\|>|<(?:bos|pad|start_of_turn|end_of_turn)>|\[/?INST\]|<</?SYS>>")  # RoBERTa's, T5's,
# GPT-2's <|endoftext|>, LLaMA's and Gemma's, Mistral's [INST] ... [/INST]; a cloze's <blank>
_ENDS = (".!?:;\"')]\u2026\u00bb\u201d\u2019\u3002\uff01\uff1f\uff0e\uff61"  # where a sentence, or a line of one,
         "\u0964\u0965\u0589\u06d4\u061f\u1362\u104b\u17d4\u0f0d\u037e")  # ends (a danda, Armenian's, Arabic's, Ethiopic's...)
_ESCAPE = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{2,5}|#x[0-9a-fA-F]{2,4});")  # "it &apos;s", "a &#124; b", "&rsquo;"
_MOJIBAKE = re.compile(r"[\u00c2\u00c3][\u0080-\u00bf]|\u00e2\u20ac[\u0080-\u00bf\u2018-\u201e\u2122\u0153\u02dc]")  # "Ã©", "â€™"
MISSING_TEXTS = {"nan", "NaN", "None", "null", "<NA>", "NULL", "\\N"}  # (a missing text as pandas or a database,
# or a SQL dump, writes it)
_C1 = re.compile("[\x80-\x84\x86-\x9f]")  # (U+0085 is warned of where it is read, as a line end)
_OWN_MARK = re.compile(r"\[(?:SEP|CLS)\]")
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)  # (one that ends a line: "ended")
_BYTE_ESCAPE = re.compile(r"(?:\\x[89a-f][0-9a-f]){2,}|(?:\\[23][0-7]{2}){2,}")  # "Ba\xc3\xa1squetbol": a character's UTF-8 bytes
_PAGE = re.compile(r"\s*(?:-\s*\d+\s*-|(?:Page|p\.|Seite|page)\s*\d+(?:\s*(?:of|/)\s*\d+)?)\s*$")
_LETTERS = re.compile(r"[^\W\d_]+")



def longest_column(line):
    """The number (from 1) of the tab-separated column of `line` that holds the most characters: its text, most likely."""
    columns = line.rstrip("\n").split("\t")
    return max(range(len(columns)), key=lambda i: len(columns[i])) + 1


def _prefixes(line):
    """The shapes of a line's first one, two and three words, their letters' runs written a and their digits' runs 0
    ("[12/03/2024, 10:15]" is "[0/0/0, 0:0]", "Nov 29 12:00:01" "a 0 0:0:0"), those that hold a mark no sentence
    begins with ("[", "<", "|", "@", "=", "/"), a time's or a date's digits ("0:0", "0/0", "0-0") or begin with a
    list's number ("0.", "0)"); and a first word that ends in ":" as it is ("text:", "ALICE:"): not a sentence's
    "In 1990, the", "- An item"."""
    words = text_marks.unframed(line).split(None, 3)[:3]  # (a link's text: '[[Paris]] is'; a frame's: '| The')
    shapes = [_LETTERS.sub("a", re.sub(r"\d+", "0", " ".join(words[:n]))) for n in range(1, len(words) + 1)]
    key = [words[0]] if words and len(words[0]) > 1 and words[0].endswith(":") else []  # "text:", as YAML's lines
    return [shape for shape in shapes if _UNLIKE_A_SENTENCE.search(shape)] + key


_UNLIKE_A_SENTENCE = re.compile(r"[\[\]<>|@=/\\]|0[:/.-]0|^0[.):]")
