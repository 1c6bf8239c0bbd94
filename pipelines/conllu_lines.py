"""Checks of a CoNLL-U file's lines beyond their tree (`probing.read_conllu` reads it): a line that is not a token's
named (a bracketed tree, a line separator in a column, CoNLL-U Plus's or CoNLL-2003's columns, a merge conflict),
FORM and LEMMA swapped, and relation names of another scheme than UD v2's (UD v1's, spaCy's, upper case)."""

import re

from albert_act.base import mending, prose, text_files


def not_a_token_line(path, number, line, fields, plus):
    """ValueError naming what a line of other than 10 fields is (a bracketed tree, spaces, a line separator
    inside a column, CoNLL-U Plus's columns (`plus`), CoNLL-2003's); True for a comment's part, to be skipped."""
    if mending.CONFLICT.match(line):
        raise ValueError(f"{path} line {number}: a git merge conflict's marker ({line.strip()[:20]!r}): both sides of "
                         "the conflict are in the file; resolve it first (git mergetool, or edit the file)")
    if line.lstrip().startswith("("):  # Penn Treebank's .mrg: constituents, no heads
        raise ValueError(f"{path} line {number}: a bracketed tree ({line.strip()[:30]!r}, as Penn Treebank's "
                         ".mrg), which is not read: give dependency trees, in CoNLL-U (converted from them; "
                         "`analyze --parsed` also reads .dp files)")
    if not line.strip():  # (spaces alone, where a blank line ends the sentence)
        raise ValueError(f"{path} line {number}: spaces alone ({line!r}), where CoNLL-U ends a sentence with an "
                         f"empty line: empty it (sed -i 's/^[[:space:]]*$//' {path})")
    if cut := separator_in(path, number):
        if cut[1] == 0:  # (in a comment, '# text = ...', which is not read)
            return True
        raise ValueError(f"{path} line {number}: {cut[0]} inside column {cut[1]} ({COLUMNS[cut[1] - 1]}), which, "
                         "ending a line of text, cuts the line's fields in two: remove it")
    if plus and [c.upper() for c in plus[:10]] == list(COLUMNS) and len(fields) == len(plus):
        raise ValueError(f"{path} line {number}: CoNLL-U Plus, its {len(plus)} columns named by its "
                         f"'# global.columns' line; the first 10 are CoNLL-U's: keep them (cut -f1-10 {path} > "
                         "plain.conllu)")
    if line.startswith("-DOCSTART-") or len(fields) == 4 and re.fullmatch(r"O|[BIES]-[A-Za-z]+", fields[3].strip()):
        raise ValueError(f"{path} line {number}: CoNLL-2003 columns (word, POS, chunk, named-entity tag: "
                         f"{line.strip()[:40]!r}), which hold no dependency tree; give CoNLL-U")
    if len(fields) == 1 and prose.reads_as_sentence(line):
        raise ValueError(f"{path} line {number}: a sentence of plain text ({line.strip()[:40]!r}), not a parsed file: "
                         "this reads CoNLL-U (or .dp) trees; plain sentences, one a line, are read by analyze sentences "
                         "--text")
    dp = " (a .dp file's are word, POS and head: 3)" if len(fields) in (3, 4) else ""
    raise ValueError(f"{path} line {number}: CoNLL-U needs 10 TAB-separated fields, got {len(fields)}{dp}")


def separator_in(path, number):
    """(the line separator (U+2028, NEL, a lone CR...) inside line `number` of the local file `path`, named; the
    column (from 1) that holds it, 0 in a comment line), or None."""
    try:
        with open(path, "rb") as f:
            raw = next((line for n, line in enumerate(f, 1) if n == number), b"").decode("utf-8", "replace")
    except OSError:
        return None
    found = text_files.LINE_ENDS.search(raw := raw.rstrip("\r\n"))
    if not found:
        return None
    return f"U+{ord(found.group()):04X}", 0 if raw.startswith("#") else raw[:found.start()].count("\t") + 1


COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


_INFLECTED = {"VBD", "VBN", "VBG", "VBZ", "NNS", "NNPS", "JJR", "JJS"}  # Penn Treebank's tags of inflected words


class Columns:
    """Whether a file's FORM and LEMMA columns are swapped (words as their lemmas, the inflected forms in LEMMA):
    of the words with an inflected tag whose FORM and LEMMA differ, how many have a LEMMA that extends the FORM
    ('nominate' and 'nominated', swapped) and how many a FORM that extends the LEMMA ('nominated', 'nominate'); a
    warning when the first are 20 or more and three times the second."""

    def __init__(self, path):
        self.path, self.swapped, self.kept, self.first = path, 0, 0, None

    def feed(self, number, fields):
        form, lemma = fields[1].lower(), fields[2].lower()
        if fields[4] in _INFLECTED and form != lemma and lemma != "_" and min(len(form), len(lemma)) > 2:
            if lemma.startswith(form[:-1]) and len(lemma) > len(form):
                self.swapped += 1
                self.first = self.first or (number, fields[1], fields[2], fields[4])
            elif form.startswith(lemma[:-1]) and len(form) > len(lemma):
                self.kept += 1

    def warn(self):
        if self.swapped >= 20 and self.swapped >= 3 * self.kept:
            number, form, lemma, tag = self.first
            prose.warn_once(f"warning: {self.path}: FORM and LEMMA (columns 2 and 3) look swapped: {self.swapped:,} "
                            f"words tagged as inflected hold their lemma as FORM (line {number}: FORM {form!r}, "
                            f"LEMMA {lemma!r}, {tag}), and {self.kept:,} their inflected form; the sentences are read "
                            "from FORM: swap the columns back (awk 'BEGIN {FS = OFS = \"\\t\"} $1 ~ /^[0-9]+$/ {t = $2; "
                            f"$2 = $3; $3 = t}} 1' {self.path} > fixed.conllu)")


_SPACY = {"dobj", "pobj", "prep", "attr", "ROOT", "nsubjpass", "dative", "acomp", "npadvmod", "relcl", "poss"}  # (ClearNLP's)


def check_relations(path, relations):
    """Warns of relation names (column 8's, without subtypes) of another scheme than UD v2's, which the probing
    tasks read (nsubj, obj, cop): upper case (read in lower case), spaCy's English labels (ClearNLP's: pobj, prep,
    attr, ROOT), UD v1's (dobj, nsubjpass)."""
    upper = sorted(r for r in relations if r != r.lower() and r.lower() in _UD)
    if upper and not relations & _UD:
        print(f"note: {path}: its relation names are in upper case ({', '.join(upper[:4])}): read as UD writes them, "
              "in lower case", flush=True)
    elif {"pobj", "prep", "attr"} & relations:
        named = ", ".join(sorted(_SPACY & relations)[:6])
        print(f"warning: {path}: spaCy's relation names ({named}: ClearNLP's English scheme), where the tasks read UD "
              "v2's (nsubj, obj, cop): obj_number finds no object and copular sentences no tense; parse the text "
              "with a Universal Dependencies model (spaCy's UD pipelines, Stanza, UDPipe) instead", flush=True)
    elif {"dobj", "nsubjpass"} & relations and "obj" not in relations:  # (UD v1's names: v2's obj is dobj)
        print(f"warning: {path}: UD v1's relation names (dobj, nsubjpass), where the tasks read UD v2's (obj, "
              "nsubj:pass): obj_number finds no object, and passive subjects are no subject; convert the file "
              "to UD v2 (dobj to obj, nsubjpass to nsubj:pass)", flush=True)


_UD = {"nsubj", "obj", "iobj", "cop", "root", "det", "case", "nmod", "amod", "advmod", "aux", "mark", "obl", "punct"}
