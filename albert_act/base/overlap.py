"""The overlap check between input files given together: a file whose units (sentences, documents), as its reader
takes them, are mostly in other files given is a copy, whatever its line ends, indentation, order or columns
not read; its units would count twice (or be both trained on and held out). No TensorFlow."""

import collections
import re
import unicodedata

# a word that ends a sentence: "it.", "it?\"", "(it.)", "**it.**", 'it.",' (a list of quoted sentences)
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f](?:[^\w\s,;:]*|[^\w\s,;:]+[,;])$")
ABBREVIATION = 8  # characters: a one-word sentence as long or shorter ("Mr.", "e.g.", "No.") goes with the next
CHUNK = 40  # words: a longer run without a sentence's end (a list, a text without stops) is cut every 40 words
MIN_WORDS = 3  # a shorter sentence ("Yes.", "Thank you.", "See also") is any text's: no sign of a copy
# a line's number, label or time: "     1<TAB>" (cat -n, nl), "1. ", "12) ", "7| ", "7 | ", "7|", "00012 ", "7: ", "L7 ",
# "#7 ", "(7) ", "a) ", "(b) ", "xii. ", "No. 7 ", "Art. 7 ", "notes.txt:7:" (grep -n's), a number with marks around it
# ("7 - ", "7 :: ", "<7> ", "[^7]: ", "\u00b67 ", "7:The"), "1.0.1 ", "\u2461 ", "[00:01:02] ", "00:01,250 ",
# "2023-01-05 12:07:07 " (a log's); not a number that begins a sentence ("1990 was ...")
_LINE_NUMBER = re.compile(r"^\s*(?:\d{1,7}(?:\t|\s?[.)|:](?:\s|$)|\|)|0\d{1,6}\s|[L#]\d{1,7}[.)|:]?(?:\s|$)|\(\d{1,7}\)\s|\(?[A-Za-z]\)\s|"
                          r"(?:No|Nr|Art|Sec|Para|Item)\.?\s?\d{1,7}[.):]?\s|(?=[^\s:]{0,200}[A-Za-z])[^\s:]{1,200}:\d{1,7}[:-]|"
                          r"(?:[^\w\s]{1,3}\d{1,7}[^\w\s]{0,3}|\d{1,7}\s?[^\w\s]{1,3}|\d{1,3}(?:\.\d{1,3}){2,3}|[\u2460-\u24ff\u2776-\u2793])"
                          r"(?:\s|(?=[^\W\d_]))|"
                          r"(?:[ivxlc]{1,7}|[IVXLC]{1,7})[.)]\s|\[?\d{1,2}(?::\d{2}){1,2}(?:[.,]\d{1,3})?\]?\s|"
                          r"\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?\]?\s)")
# a page's number at a line's end, after a sentence's end or two spaces ("... Draft.  12"); footnotes' superscript
# digits ("player\u00b3")
_PAGE_NUMBER = re.compile(r"(?:(?<=[.!?\"')\]])\s+|\s{2,})\d{1,4}\s*$")
_SUPERSCRIPTS = str.maketrans("", "", "\u00b9\u00b2\u00b3\u2070\u2074\u2075\u2076\u2077\u2078\u2079")
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,80}>")  # HTML or XML markup: <p>, </b>, <span class="x">
# a footnote's mark or a citation: "[1]", "[citation needed]", "[Smith et al., 2001]" (a number in it); not a link
_CITATION = re.compile(r"\[(?:\d{1,3}|[a-z][a-z ?'-]{1,30}|[^\[\]]{0,100}\d[^\[\]]{0,100})\](?!\()")
# what parentheses hold, with a number or an address: "(p. 12)", "(Smith, 2001)", a link's "(https://...)"; not "(LUB)"
_ASIDE = re.compile(r"\([^()]{0,200}\)")
_NUMBER_OR_ADDRESS = re.compile(r"\d|://")
_LATEX = re.compile(r"\\[A-Za-z]+\*?")  # a LaTeX command: \textbf{...}, \emph{...}
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]{0,200}\|)?([^\]|]{0,200})\]\]")  # [[page (film)|shown]]: what it shows
# a speaker's label ("ALICE:", "Q:", "Dr. Smith:"): up to 3 words, the first capitalised, the last ending in ":"
_LABEL = re.compile(r"^[^\w\s]*[A-Z\u00c0-\u00de][^\s:]*(?:\s+[^\s:]+){0,2}?:\s+(?=\S)")
# what a copy may add at each line's end: hashtags ("... Draft. #NBA #history"), an attribution after a sentence's end
# ("... Draft. — Wikipedia")
_TRAILER = re.compile(r"(?:\s+#[^\W\d_][\w-]*)+\s*$|(?<=[.!?\"')\]])\s+(?:(?:\u2014|\u2013|--)\s*[^.!?]{1,60}|"
                      r"\([A-Z][\w .&'-]{0,40}\))\s*$")  # (... "(Reuters)": a source after the sentence's end)
# a news story's dateline at a line's start: "LONDON (Reuters) - ", "PARIS, May 3 (AFP) -- "
_DATELINE = re.compile(r"\s*[A-Z][A-Z .'-]{1,40}(?:,[\w .]{1,20})?\s*\([A-Z][\w .&'-]{0,40}\)\s*(?:-{1,2}|\u2014|\u2013)\s+")
# a word letter-spaced, as a PDF's small capitals: "S e p t e m b e r" (3 letters or more, each alone)
_SPACED = re.compile(r"(?<!\S)(?:[^\W\d_] ){2,}[^\W\d_](?!\S)")
_SPACED_HINT = re.compile(r" [^\W\d_] [^\W\d_] ")  # (a quicker search first: on every line of a corpus)
# letters that look like Latin ones (Cyrillic, Greek): a copy typed with them reads the same
_LOOKALIKES = str.maketrans("аеорсхуіјѕАВЕКМНОРСТХУІЈЅοαΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "aeopcxyijsABEKMHOPCTXYIJSoaABEZHIKMNOPTYX")


class Sentences:
    """The sentences of lines of text read as one stream of words, for the overlap check: wherever the lines are
    cut (joined, split, hard-wrapped, a sentence a line), the same words give the same sentences. A sentence ends
    after a word that ends in . ! or ? (and a closing quote or bracket), at a blank line (a paragraph's, a
    document's end), and every `CHUNK` words without one; a one-word sentence of `ABBREVIATION` characters or fewer
    ("Mr.", "e.g.") goes with the next. A
    line that begins with a speaker's label (`_LABEL`: "ALICE:", "Dr. Smith:") begins a sentence, without the label:
    a dialogue and its copy without the speakers' names give the same sentences; a line's number or time
    (`_LINE_NUMBER`), HTML markup and footnote marks (`_markup_free`) are no part of its words."""

    def __init__(self):
        self.held, self.words = [], []

    def feed(self, line):
        """The sentences that `line` (of the stream) ends."""
        line = _LINE_NUMBER.sub("", _markup_free(line if line.isascii() else line.translate(_SUPERSCRIPTS)), count=1)
        if line.strip().isdigit():  # a line that is a number alone: a page's, or a label put above its line
            return []
        if line[-1:].isdigit() and _PAGE_NUMBER.search(line):
            line = _PAGE_NUMBER.sub("", line)
        if ("#" in line or "\u2014" in line or "\u2013" in line or "--" in line or line.rstrip()[-1:] == ")") and (
                _TRAILER.search(line)):
            line = _TRAILER.sub("", line)
        if "(" in line[:70] and _DATELINE.match(line):
            line = _DATELINE.sub("", line, count=1)
        if (_SPACED_HINT.search(line) or line[1:2] == " ") and _SPACED.search(line):
            line = _SPACED.sub(lambda spaced: spaced.group().replace(" ", ""), line)
        if not line.split():
            return self.end()
        ended = []
        if ":" in line and (label := _LABEL.match(line.lstrip())) is not None:
            ended, line = self.end(), line.lstrip()[label.end():]
        for word in line.split():
            self.words.append(word)
            if _SENTENCE_END.search(word) and len(self.words) == 1 and not self.held and len(word) <= ABBREVIATION:
                self.held, self.words = self.words, []
            elif _SENTENCE_END.search(word) or len(self.words) == CHUNK:
                ended.append(" ".join(self.held + self.words))
                self.held, self.words = [], []
        return ended

    def end(self):
        """The sentence that the stream's end (or a blank line) ends, if any."""
        pending, self.held, self.words = self.held + self.words, [], []
        return [" ".join(pending)] if pending else []


def sentence_keys(lines):
    """The overlap check's units of lines of text: their sentences (`Sentences`), as `keys_of` takes them."""
    stream = Sentences()
    return keys_of([sentence for line in lines for sentence in stream.feed(line)] + stream.end())


def tree_keys(trees):
    """The overlap check's units of parsed sentences (each its words, a treebank's trees): the sentences of their
    words read as one stream, each tree ending one, so that two trees merged into one (or one cut in two) and
    re-headed still give the sentences of the trees it was made from."""
    stream, sentences = Sentences(), []
    for words in trees:
        sentences += stream.feed(" ".join(words)) + stream.end()
    return keys_of(sentences)


def keys_of(sentences):
    """The keys (64-bit digests, as `unit_key`'s) of the sentences of `MIN_WORDS` words (runs of letters or digits)
    or more, as `_key` reads them, each without a speaker's label at its start (`_LABEL`: a dialogue written
    on one line)."""
    keys = []
    for sentence in sentences:
        letters, words = _key(_LABEL.sub("", sentence, count=1) if ":" in sentence else sentence)
        if words >= MIN_WORDS:
            keys.append(_digest([letters]))
    return keys


def _key(sentence):
    """A sentence's words for the overlap check, joined, and how many: its `_words`, with letters that look like
    Latin ones read as those."""
    if not sentence.isascii():
        sentence = sentence.translate(_LOOKALIKES)
    words = _words(sentence)  # (a script written without spaces, as Japanese: a word each two characters)
    return "".join(words), len(words) if sentence.isascii() else sum(
        max(1, len(w) // 2) if _UNSPACED.match(w) else 1 for w in words)


_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u9fff\u0e00-\u0e7f\u1000-\u109f]")  # kana, CJK, Thai, Burmese


def unit_key(text):
    """A unit (a sentence) as a reader takes it, for `check_units_once`: its runs of letters and digits, each in
    NFKC without accents and case-folded (as ALBERT's vocabularies take them), in their order, as a 64-bit digest.
    Its punctuation and spaces are no part of it: a copy with its sentences quoted, its "." made "...", or its words
    tokenized ("( LUB ) .", "do n't") gives the same units."""
    return _digest(_words(_markup_free(text)))


_WORD = re.compile(r"[^\W_]+")  # a run of letters or digits


def _words(text):
    return _WORD.findall(plain(text).casefold())


def _markup_free(text):
    """`text` without what marks it up and is no word of it: HTML entities read (&amp; is &, &nbsp; a space),
    tags, LaTeX commands and footnote marks ("[1]") dropped, a wiki link's shown text kept; and without what
    parentheses hold where it has a number or an address (a page, a citation, a link's: added to a copy or not)."""
    if "%20" in text:  # a URL-encoded copy
        import urllib.parse

        text = urllib.parse.unquote(text)
    if "&" in text:
        import html

        text = html.unescape(text)
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "\\" in text:
        text = _LATEX.sub(" ", text)
    if "[" in text:
        text = _CITATION.sub("", _WIKI_LINK.sub(r"\1", text) if "[[" in text else text)
    return _ASIDE.sub(_aside, text) if "(" in text else text


def _aside(match):
    return " " if _NUMBER_OR_ADDRESS.search(match.group()) else match.group()


def _digest(words):
    import hashlib

    return int.from_bytes(hashlib.blake2b("".join(words).encode("utf-8", "surrogatepass"), digest_size=8).digest(),
                          "big")


def plain(text):
    """`text` in NFKC without its accents (combining marks), as the model's normalization reads it: café is cafe."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", "".join(c for c in unicodedata.normalize("NFKD", text)
                                                 if unicodedata.category(c) != "Mn"))


REPEATS_NOTED = 0.1  # of a file's units repeating earlier ones in it: noted (Wikipedia's and EWT's: 3% at most)
SHARED_FLOOR = 10  # units: fewer shared, however large a part of a small file (a stub's "References"), is no copy


def check_units_once(units, what, why, flag="--input"):
    """Files given together that hold the same units (`what`: "documents", "sentences") as the reader takes them
    (`units` {path: [`unit_key`, ...]}, in the order given). A file more than half of whose distinct units (and
    `SHARED_FLOOR` at least) are in other files is a copy, or a part of one, whatever else differs (line ends,
    indentation, a column not read, a sentence cut, the order): ValueError naming it (the smallest such file) and
    those files, `why` saying what twice would do. Returns a note for each file that shares fewer with earlier ones,
    naming every file it shares with."""
    import numpy as np  # 8 bytes a unit: a set of Python ints took ten times that, for a corpus of many millions

    order = list(units)
    distinct = [_unique(np.asarray(units[path], dtype=np.uint64)) for path in order]
    keys = np.concatenate([np.empty(0, np.uint64), *distinct])
    files = np.concatenate([np.empty(0, np.int64), *(np.full(len(d), i) for i, d in enumerate(distinct))])
    sort = np.argsort(keys, kind="stable")  # a unit's files side by side, in the order given
    keys, files = keys[sort], files[sort]
    again = keys[1:] == keys[:-1]
    held = np.zeros(len(keys), bool)  # a unit that another file holds too
    held[1:] |= again
    held[:-1] |= again
    shared = np.bincount(files[held], minlength=len(order))
    pairs, step = collections.Counter(), 1  # (file, file): the units both hold
    while step < len(keys) and (same := keys[step:] == keys[:-step]).any():
        pairs.update(zip(files[:-step][same].tolist(), files[step:][same].tolist()))
        step += 1
    neighbours = collections.defaultdict(set)
    for a, b in pairs:
        neighbours[a].add(b)
        neighbours[b].add(a)
    with_ = {i: sorted(neighbours[i], key=lambda o: (-pairs[min(i, o), max(i, o)], o))  # most shared first
             for i in range(len(order))}
    notes = []
    for i, path in enumerate(order):  # a file that holds its own units more than once (its text twice)
        total = len(units[path])
        repeats = total - len(distinct[i])
        if repeats >= SHARED_FLOOR and repeats > REPEATS_NOTED * total:  # (a made-up corpus may repeat: a note)
            twice = " (its text twice, or more?)" if 2 * repeats >= total else ""
            notes.append(f"note: {repeats:,} of the {total:,} {what} of {path} repeat earlier ones in it{twice}: they "
                         "count once for each time")
    for i in sorted((i for i in range(len(order)) if shared[i]), key=lambda i: (len(distinct[i]), -i)):
        if 2 * shared[i] > len(distinct[i]) and shared[i] >= SHARED_FLOOR:
            total = len(units[order[i]])
            templated = all(len(units[order[f]]) - len(distinct[f]) > REPEATS_NOTED * len(units[order[f]])
                            for f in [i, *with_[i]])  # each repeats itself, as no copy of a natural text does
            few = (f" (or each made of the same {what} again and again: {total - len(distinct[i]):,} of its {total:,} "
                   "repeat earlier ones in it, as a template's would)" if templated else "")
            raise ValueError(f"{flag} {order[i]}: {shared[i]:,} of its {len(distinct[i]):,} distinct {what} are also "
                             f"in {_listed(order, with_[i], pairs, i)} (the same words, as they are read): a copy, or "
                             f"a part of one{few}; {why}; give each of the {what} once (cut them from one of the files)")
    return notes + [f"note: {shared[i]:,} of the {len(distinct[i]):,} distinct {what} of {order[i]} are also in "
            f"{_listed(order, with_[i], pairs, i)}: they count once for each file that holds them"
            for i in range(len(order)) if any(o < i for o in with_[i])]  # (once an earlier file shares them)


def _listed(order, others, pairs, i):
    """The files that share units with file `i`, with how many each where they are more than one."""
    if len(others) == 1:
        return order[others[0]]
    return ", ".join(f"{order[o]} ({pairs[min(i, o), max(i, o)]:,})" for o in others)


def _unique(keys):
    """The sorted distinct values of a uint64 array (np.unique hashes them in NumPy 2.4: 40 times slower here)."""
    import numpy as np

    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if len(keys) else keys
