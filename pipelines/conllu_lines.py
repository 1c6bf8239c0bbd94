"""Checks of a CoNLL-U file's lines beyond their tree (`probing.read_conllu` reads it): a line that is not a token's
named (a bracketed tree, a line separator in a column, CoNLL-U Plus's or CoNLL-2003's columns, a merge conflict,
columns separated by spaces), FORM and LEMMA or DEPREL and DEPS swapped, and relation names of another scheme than UD
v2's (UD v1's, spaCy's, Prague's, numbers; upper case is read as UD's)."""

import collections
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
    if len(fields) == 1 and re.match(r"\s*\d+(?:[-.]\d+)?(?: +\S+){5} +(?:\d+|_)(?: +\S+){3}\s*$", line):
        raise ValueError(f"{path} line {number}: CoNLL-U's 10 columns separated by spaces, not TABs "
                         f"({line.strip()[:40]!r}): make them TABs (sed -E 's/ +/\\t/g' {path} > fixed.conllu, where no "
                         "FORM or LEMMA holds a space)")
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
    """What a file's columns say beyond each tree: FORM and LEMMA swapped (words as their lemmas: of the words with
    an inflected tag whose FORM and LEMMA differ, 20 or more, and three times those the other way, have a LEMMA that
    extends the FORM: 'nominate' and 'nominated'), FORM and UPOS swapped (half its FORMs or more UPOS tags), DEPREL and
    DEPS swapped (DEPREL '3:case'), and its relation names (`check_relations`), each warned of once the file is read
    (`warn`)."""

    def __init__(self, path):
        self.path, self.swapped, self.kept, self.first = path, 0, 0, None
        self.relations, self.deps, self.tokens = collections.Counter(), None, 0  # (DEPREL's, without subtypes)
        self.tags, self.tag = 0, None  # (FORMs that are UPOS tags where UPOS is not: FORM and UPOS swapped)

    def feed(self, number, fields):
        form, lemma = fields[1].lower(), fields[2].lower()
        self.tokens += 1
        self.relations[fields[7].split(":")[0]] += 1
        if fields[1] in _UPOS and fields[3] not in _UPOS:
            self.tags += 1
            self.tag = self.tag or (number, fields[1], fields[3])
        if self.deps is None and re.match(r"\d+(?:\.\d+)?:\w", fields[7]):
            self.deps = (number, fields[7])
        if fields[4] in _INFLECTED and form != lemma and lemma != "_" and min(len(form), len(lemma)) > 2:
            if lemma.startswith(form[:-1]) and len(lemma) > len(form):
                self.swapped += 1
                self.first = self.first or (number, fields[1], fields[2], fields[4])
            elif form.startswith(lemma[:-1]) and len(form) > len(lemma):
                self.kept += 1

    def warn(self, relations=True):
        """The warnings, of the relation names too where `relations` (not for a file read for its words alone)."""
        if self.swapped >= 20 and self.swapped >= 3 * self.kept:
            number, form, lemma, tag = self.first
            prose.warn_once(f"warning: {self.path}: FORM and LEMMA (columns 2 and 3) look swapped: {self.swapped:,} "
                            f"words tagged as inflected hold their lemma as FORM (line {number}: FORM {form!r}, "
                            f"LEMMA {lemma!r}, {tag}), and {self.kept:,} their inflected form; the sentences are read "
                            "from FORM: swap the columns back (awk 'BEGIN {FS = OFS = \"\\t\"} $1 ~ /^[0-9]+$/ {t = $2; "
                            f"$2 = $3; $3 = t}} 1' {self.path} > fixed.conllu)")
        if self.tags >= max(5, self.tokens / 2):
            number, form, upos = self.tag
            prose.warn_once(f"warning: {self.path}: FORM (column 2) holds UPOS tags in {self.tags:,} of {self.tokens:,} "
                            f"words (line {number}: FORM {form!r}, UPOS {upos!r}): columns 2 and 4 swapped? The "
                            "sentences read would be tags; swap them back (awk 'BEGIN {FS = OFS = \"\\t\"} $1 ~ /^[0-9]+$/ "
                            f"{{t = $2; $2 = $4; $4 = t}} 1' {self.path} > fixed.conllu)")
        if relations and self.deps and self.relations.get("_", 0) < self.tokens / 2:
            prose.warn_once(f"warning: {self.path}: DEPREL (column 8) holds DEPS' head:relation pairs (line "
                            f"{self.deps[0]}: {self.deps[1]!r}): columns 8 and 9 swapped? The relations read would be "
                            "heads' numbers; swap them back (awk 'BEGIN {FS = OFS = \"\\t\"} $1 ~ /^[0-9]+$/ {t = $8; "
                            f"$8 = $9; $9 = t}} 1' {self.path} > fixed.conllu)")
        elif relations and self.tokens:
            check_relations(self.path, self.relations)


_UPOS = {"ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON", "PROPN", "PUNCT", "SCONJ",
         "SYM", "VERB", "X"}  # UD's universal tags
_SPACY = {"dobj", "pobj", "prep", "attr", "ROOT", "nsubjpass", "dative", "acomp", "npadvmod", "relcl", "poss"}  # (ClearNLP's)
_PRAGUE = {"Sb", "Pred", "Atr", "AuxP", "Obj", "Adv", "AuxK", "AuxV", "Coord", "AuxC"}  # analytical functions
_CONLL2007 = {"SBJ", "PMOD", "VC", "OPRD", "COORD", "PRD", "IM", "LOC", "TMP"}  # (its own: not UD's in upper case)
_UD = {"nsubj", "obj", "iobj", "cop", "root", "det", "case", "nmod", "amod", "advmod", "aux", "mark", "obl", "punct"}


def check_relations(path, relations):
    """Warns of relation names (`relations`: column 8's, without subtypes, counted) of another scheme than UD v2's,
    which the probing tasks and per-relation analyses read (nsubj, obj, cop): upper case (read in lower case),
    spaCy's English labels (ClearNLP's: pobj, prep, attr, ROOT), UD v1's (dobj, nsubjpass), the Prague Dependency
    Treebank's (Sb, Pred, Atr), numbers, or any other set with none of UD's."""
    names = set(relations) - {"_", ""}
    common = ", ".join(name for name, _ in relations.most_common(6) if name not in ("_", ""))
    upper = sorted(r for r in names if r.isupper() and r.lower() in _UD)
    if len(_CONLL2007 & names) >= 2 and not names & _UD:  # (before upper case: its OBJ is no UD obj)
        prose.warn_once(f"warning: {path}: its relation names are CoNLL-2007's (Penn2Malt's: {common}), where UD v2's "
                        "are read (nsubj, obj, cop, root): the tasks and per-relation tables find none of theirs; give "
                        "the file parsed with UD v2's relations (Stanza, UDPipe, spaCy's UD pipelines)")
    elif upper and not names & _UD and len(_PRAGUE & names) < 3:
        prose.warn_once(f"note: {path}: its relation names are in upper case ({', '.join(upper[:4])}): read as UD "
                        "writes them, in lower case")
    elif {"pobj", "prep", "attr"} & names:
        prose.warn_once(f"warning: {path}: spaCy's relation names ({', '.join(sorted(_SPACY & names)[:6])}: ClearNLP's "
                        "English scheme), where UD v2's are read (nsubj, obj, cop): obj_number finds no object and "
                        "copular sentences no tense; parse the text with a Universal Dependencies model (spaCy's UD "
                        "pipelines, Stanza, UDPipe) instead")
    elif {"dobj", "nsubjpass"} & names and "obj" not in names:  # (UD v1's names: v2's obj is dobj)
        prose.warn_once(f"warning: {path}: UD v1's relation names (dobj, nsubjpass), where UD v2's are read (obj, "
                        "nsubj:pass): obj_number finds no object, and passive subjects are no subject; convert the "
                        "file to UD v2 (dobj to obj, nsubjpass to nsubj:pass)")
    elif names and not names & _UD:
        scheme = ("the Prague Dependency Treebank's analytical functions" if len(_PRAGUE & names) >= 3 else
                  "numbers (a parser's label ids?)" if all(name.isdigit() for name in names) else "none of UD's")
        prose.warn_once(f"warning: {path}: its relation names are {scheme} ({common}), where UD v2's are read (nsubj, "
                        "obj, cop, root): the tasks and per-relation tables find none of theirs; give the file parsed "
                        "with UD v2's relations (Stanza, UDPipe, spaCy's UD pipelines)")
