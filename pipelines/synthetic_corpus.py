"""The embedded corpus: documents from a small probabilistic English grammar, with gold annotations.

    python -m pipelines.synthetic_corpus --output corpus.txt --documents 20000 --seed 0 [--conllu gold.conllu]

The project runs with no download: this generator writes text in the pre-training
format (one sentence per line, a blank line between documents), deterministic by
seed, and knows for every sentence what a treebank would say:

* UD-style dependencies (heads, relations such as nsubj, obj, det, amod, nummod,
  nmod, nmod:poss, case, obl, advmod, mark, advcl, cc, conj, flat, punct, root);
* SentEval-style labels: tense of the main verb (PAST / PRES), number of the
  main subject and object (NN / NNS; no object label for intransitive clauses),
  and top constituents (the sequence under the root: NP_VP_., ADVP_NP_VP_.,
  PP_NP_VP_., SBAR_NP_VP_., CC_NP_VP_., S_CC_S_.).

Documents follow one protagonist: introduced with an indefinite article, then
named again with "the ..." or a pronoun, with ordered discourse adverbs ("then",
"later", "finally" only in the last sentence), so sentence order carries signal
for the SOP task. Proper names are built from syllables, which gives SentencePiece
a realistic open vocabulary. Document d depends only on (seed, d).
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: pipelines/synthetic_corpus.py is part of albert-act: run it from the repository root as "
                     "python -m pipelines.synthetic_corpus")

import dataclasses
import itertools
import os
import random

from albert_act.base import cli, entry

NOUNS = [  # singular, plural, animate
    ("farmer", "farmers", True), ("baker", "bakers", True), ("teacher", "teachers", True),
    ("soldier", "soldiers", True), ("merchant", "merchants", True), ("sailor", "sailors", True),
    ("painter", "painters", True), ("doctor", "doctors", True), ("child", "children", True),
    ("woman", "women", True), ("man", "men", True), ("king", "kings", True), ("queen", "queens", True),
    ("fisherman", "fishermen", True), ("student", "students", True), ("priest", "priests", True),
    ("horse", "horses", True), ("dog", "dogs", True), ("cat", "cats", True), ("bird", "birds", True),
    ("letter", "letters", False), ("book", "books", False), ("house", "houses", False),
    ("ship", "ships", False), ("song", "songs", False), ("map", "maps", False), ("coin", "coins", False),
    ("bridge", "bridges", False), ("garden", "gardens", False), ("window", "windows", False),
    ("table", "tables", False), ("loaf", "loaves", False), ("apple", "apples", False),
    ("stone", "stones", False), ("key", "keys", False), ("ring", "rings", False), ("lamp", "lamps", False),
    ("boat", "boats", False), ("wagon", "wagons", False), ("sword", "swords", False),
    ("basket", "baskets", False), ("knife", "knives", False), ("box", "boxes", False),
    ("church", "churches", False), ("wall", "walls", False), ("painting", "paintings", False),
]
PLACES = ["village", "city", "market", "castle", "forest", "harbour", "valley", "river", "mountain",
          "school", "tower", "field", "island", "kitchen", "library", "station"]
ADJECTIVES = ["old", "young", "small", "large", "quiet", "brave", "tired", "clever", "heavy", "bright",
              "dark", "green", "red", "wooden", "strange", "famous", "poor", "rich", "honest", "careful",
              "beautiful", "broken", "ancient", "hungry", "silent", "golden"]
TRANSITIVE = [  # 3rd singular present, plural present, past
    ("sells", "sell", "sold"), ("buys", "buy", "bought"), ("finds", "find", "found"),
    ("builds", "build", "built"), ("paints", "paint", "painted"), ("carries", "carry", "carried"),
    ("writes", "write", "wrote"), ("sees", "see", "saw"), ("opens", "open", "opened"),
    ("repairs", "repair", "repaired"), ("loses", "lose", "lost"), ("visits", "visit", "visited"),
    ("watches", "watch", "watched"), ("follows", "follow", "followed"), ("helps", "help", "helped"),
    ("meets", "meet", "met"), ("remembers", "remember", "remembered"), ("hides", "hide", "hid"),
    ("keeps", "keep", "kept"), ("steals", "steal", "stole"), ("draws", "draw", "drew"),
]
INTRANSITIVE = [
    ("sleeps", "sleep", "slept"), ("arrives", "arrive", "arrived"), ("waits", "wait", "waited"),
    ("works", "work", "worked"), ("laughs", "laugh", "laughed"), ("travels", "travel", "travelled"),
    ("sings", "sing", "sang"), ("returns", "return", "returned"), ("stays", "stay", "stayed"),
    ("walks", "walk", "walked"), ("rests", "rest", "rested"), ("dances", "dance", "danced"),
]
LOCATIVE = ["in", "near", "behind", "beside", "across", "under", "outside"]
ATTRIBUTIVE = ["of", "from", "near"]
MIDDLE_ADVERBS = ["then", "later", "soon", "afterwards", "meanwhile"]
SUBORDINATORS = ["when", "because", "after", "before", "while", "although"]
COORDINATORS = ["and", "but", "yet"]
NUMBERS = ["two", "three", "four", "five", "six", "seven"]
SYLLABLES = ["ta", "lo", "mir", "be", "si", "ka", "ran", "do", "vel", "ma", "ri", "tos", "an", "ne",
             "gor", "li", "sa", "ve", "ton", "ur", "ba", "len", "qui", "zor", "phe", "dan", "mo", "rin",
             "el", "kas", "wen", "fi", "dra", "hul", "os", "tre", "ny", "gal", "sen", "bor"]
PLACE_SUFFIXES = ["ford", "heim", "ovo", "ton", "burg", "dale", "mouth", "ville"]
TOP_CONSTITUENTS = ("NP_VP_.", "ADVP_NP_VP_.", "PP_NP_VP_.", "SBAR_NP_VP_.", "CC_NP_VP_.", "S_CC_S_.")


@dataclasses.dataclass
class Sentence:
    """One sentence with gold annotations. Heads are 1-based, 0 is the root."""

    words: list
    upos: list
    heads: list
    relations: list
    tense: str  # "PAST" or "PRES" (main verb)
    subject_number: str  # "NN" or "NNS" (main subject)
    object_number: str | None  # "NN", "NNS", or None (intransitive main clause)
    top_constituents: str

    def text(self):
        """Words joined with spaces, punctuation attached, first letter capitalized."""
        out = ""
        for word in self.words:
            out += word if (word in ",." or not out) else " " + word
        return out[:1].upper() + out[1:]

    def conllu(self, sent_id):
        lines = [f"# sent_id = {sent_id}", f"# text = {self.text()}",
                 f"# tense = {self.tense}", f"# subject_number = {self.subject_number}",
                 f"# object_number = {self.object_number or '_'}", f"# top_constituents = {self.top_constituents}"]
        for i, (word, upos, head, rel) in enumerate(zip(self.words, self.upos, self.heads, self.relations), 1):
            lines.append(f"{i}\t{word}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t_")
        return "\n".join(lines) + "\n"


class _Builder:
    """Collects words; heads and relations are filled in once the head word exists."""

    def __init__(self):
        self.words, self.upos, self.heads, self.relations = [], [], [], []

    def add(self, word, upos, relation=None, head=None):
        self.words.append(word)
        self.upos.append(upos)
        self.relations.append(relation)
        self.heads.append(head)
        return len(self.words)  # 1-based index

    def attach(self, index, head, relation):
        self.heads[index - 1] = head
        self.relations[index - 1] = relation


@dataclasses.dataclass
class _Referent:
    noun: tuple | None  # (singular, plural, animate) or None for a proper name
    name: list | None
    plural: bool
    pronoun: tuple  # (subject, object)


def _name(rng, capitalize=True):
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
    return word.capitalize() if capitalize else word


def _noun_phrase(b, rng, referent=None, definite=True, allow_pronoun=False, role="subject"):
    """Adds an NP; returns (head index, plural?)."""
    if referent is not None:
        if allow_pronoun and rng.random() < 0.4:
            word = referent.pronoun[0 if role == "subject" else 1]
            return b.add(word, "PRON"), referent.plural
        if referent.name is not None:
            head = b.add(referent.name[0], "PROPN")
            for part in referent.name[1:]:
                b.add(part, "PROPN", "flat", head)
            return head, False
        noun = referent.noun
        plural = referent.plural
        if definite:
            determiner = b.add("the", "DET")
        else:
            determiner = b.add("some" if plural else ("an" if noun[0][0] in "aeiou" else "a"), "DET")
        head = b.add(noun[1] if plural else noun[0], "NOUN")
        b.attach(determiner, head, "det")
        return head, plural
    sg, pl, _ = rng.choice(NOUNS)
    plural = rng.random() < 0.45
    pre = []
    roll = rng.random()
    if plural and roll < 0.3:
        pre.append((b.add(rng.choice(NUMBERS), "NUM"), "nummod"))
    elif roll < 0.45:
        pre.append((b.add(rng.choice(["his", "her", "their"]), "PRON"), "nmod:poss"))
    else:
        pre.append((b.add(rng.choice(["these", "those", "some"] if plural else ["the", "a", "this", "that"]), "DET"), "det"))
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        pre.append((b.add(rng.choice(ADJECTIVES), "ADJ"), "amod"))
    head = b.add(pl if plural else sg, "NOUN")
    for index, relation in pre:
        b.attach(index, head, relation)
    if rng.random() < 0.15:  # "... of the village"
        case = b.add(rng.choice(ATTRIBUTIVE), "ADP")
        det = b.add("the", "DET")
        place = b.add(rng.choice(PLACES), "NOUN", "nmod", head)
        b.attach(case, place, "case")
        b.attach(det, place, "det")
    return head, plural


def _locative(b, rng):
    """A PP "in the valley" / "near Velmaford" / "in 1874"; returns its head noun index."""
    case = b.add(rng.choice(LOCATIVE), "ADP")
    roll = rng.random()
    if roll < 0.2:
        b.words[case - 1] = "in"
        head = b.add(str(rng.randint(1700, 2020)), "NUM")
    elif roll < 0.5:
        head = b.add(_name(rng) + rng.choice(PLACE_SUFFIXES), "PROPN")
    else:
        det = b.add("the", "DET")
        head = b.add(rng.choice(PLACES), "NOUN")
        b.attach(det, head, "det")
    b.attach(case, head, "case")
    return head


def _clause(b, rng, tense, referent, first):
    """NP VP: returns (verb index, subject plural?, object plural? or None)."""
    subject, subject_plural = _noun_phrase(b, rng, referent, definite=not first, allow_pronoun=not first)
    transitive = rng.random() < 0.65
    forms = rng.choice(TRANSITIVE if transitive else INTRANSITIVE)
    word = forms[2] if tense == "PAST" else (forms[1] if subject_plural else forms[0])
    verb = b.add(word, "VERB")
    b.attach(subject, verb, "nsubj")
    object_plural = None
    if transitive:
        obj, object_plural = _noun_phrase(b, rng, role="object")
        b.attach(obj, verb, "obj")
    if rng.random() < 0.4:
        b.attach(_locative(b, rng), verb, "obl")
    return verb, subject_plural, object_plural


def make_sentence(rng, referent, position, length):
    """One sentence of a document about `referent`, the `position`-th of `length`."""
    b = _Builder()
    tense = "PAST" if rng.random() < 0.6 else "PRES"
    first, last = position == 0, position == length - 1
    pattern = "NP_VP_." if first else rng.choice(TOP_CONSTITUENTS)
    lead = []  # (index, relation) attached to the main verb once it exists
    if pattern == "ADVP_NP_VP_.":
        adverb = "finally" if last else rng.choice(MIDDLE_ADVERBS)
        lead.append((b.add(adverb, "ADV"), "advmod"))
    elif pattern == "PP_NP_VP_.":
        lead.append((_locative(b, rng), "obl"))
        lead.append((b.add(",", "PUNCT"), "punct"))
    elif pattern == "SBAR_NP_VP_.":
        mark = b.add(rng.choice(SUBORDINATORS), "SCONJ")
        inner, _, _ = _clause(b, rng, tense, None, first=False)
        b.attach(mark, inner, "mark")
        lead.append((inner, "advcl"))
        lead.append((b.add(",", "PUNCT"), "punct"))
    elif pattern == "CC_NP_VP_.":
        lead.append((b.add(rng.choice(COORDINATORS[1:]), "CCONJ"), "cc"))
    verb, subject_plural, object_plural = _clause(b, rng, tense, referent, first)
    b.attach(verb, 0, "root")
    for index, relation in lead:
        b.attach(index, verb, relation)
    if pattern == "S_CC_S_.":
        cc = b.add(rng.choice(COORDINATORS), "CCONJ")
        second, _, _ = _clause(b, rng, "PAST" if rng.random() < 0.6 else "PRES", None, first=False)
        b.attach(cc, second, "cc")
        b.attach(second, verb, "conj")
    b.add(".", "PUNCT", "punct", verb)
    return Sentence(b.words, b.upos, b.heads, b.relations, tense,
                    "NNS" if subject_plural else "NN",
                    None if object_plural is None else ("NNS" if object_plural else "NN"), pattern)


def make_document(seed, index):
    """The `index`-th document for `seed`: a list of `Sentence`s (3 to 8)."""
    rng = random.Random(f"{seed}/synthetic/{index}")
    if rng.random() < 0.35:
        name = [_name(rng)] + ([_name(rng)] if rng.random() < 0.5 else [])
        pronoun = rng.choice([("he", "him"), ("she", "her")])
        referent = _Referent(None, name, False, pronoun)
    else:
        noun = rng.choice([n for n in NOUNS if n[2]])
        plural = rng.random() < 0.3
        pronoun = ("they", "them") if plural else rng.choice([("he", "him"), ("she", "her")])
        referent = _Referent(noun, None, plural, pronoun)
    length = rng.randint(3, 8)
    return [make_sentence(rng, referent, i, length) for i in range(length)]


def generate_documents(num_documents, seed=0):
    """Yields `num_documents` documents (lists of `Sentence`), streaming."""
    for index in range(num_documents):
        yield make_document(seed, index)


def write_corpus(path, num_documents, seed=0, conllu_path=None):
    """Writes the pre-training text (and optionally gold CoNLL-U), each file whole (`outputs.write_with`:
    Ctrl-C or a kill leaves no half-written file); returns the sentence count."""
    from albert_act.base import outputs

    for target in (path, conllu_path):
        if target:  # its folder; a link's target's, for a link to a file still to be made
            os.makedirs(os.path.dirname(outputs.followed(str(target))), exist_ok=True)
    counted = []

    def text(text_partial):
        def both(conllu_partial):
            counted.append(_write_documents(text_partial, conllu_partial, num_documents, seed))

        if conllu_path:
            outputs.write_with(conllu_path, both)
        else:
            both(None)

    outputs.write_with(path, text)
    return counted[0]


def _write_documents(path, conllu_path, num_documents, seed):
    count = 0
    with open(path, "w", encoding="utf-8") as text:
        conllu = open(conllu_path, "w", encoding="utf-8") if conllu_path else None
        try:
            for d, document in enumerate(generate_documents(num_documents, seed)):
                if d:
                    text.write("\n")
                for s, sentence in enumerate(document):
                    text.write(sentence.text() + "\n")
                    if conllu:
                        conllu.write(sentence.conllu(f"doc{d}-s{s}") + "\n")
                    count += 1
        finally:
            if conllu:
                conllu.close()
    return count


def main(argv=None):
    cli.quiet_start(argv, tensorflow=False)  # first; TensorFlow, if a gs:// path needs it, loads quietly
    parser = cli.parser("synthetic_corpus", __doc__, package="pipelines")
    parser.add_argument("--output", required=True, help="text file to write (pre-training format)")
    parser.add_argument("--documents", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--conllu", help="also write the gold annotations as CoNLL-U here")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --output (and --conllu)")
    args = cli.parse_checked(parser, argv, {"documents": "int[1,100000000]", "seed": "int:seed",
                                            "output": "path", "conllu": "path"})
    written = args.output + (f" and {args.conllu}" if args.conllu else "")  # a failed write names its own file
    with cli.failures(written, "a file there before is intact", "nothing was written (each file is written "
                      "whole, then moved into place; a file there before is intact); re-run the same command"):
        check_outputs(args)
        count = write_corpus(args.output, args.documents, args.seed, args.conllu)
    print(f"wrote {args.documents} documents, {count} sentences to {args.output}"
          + (f" and their gold parses to {args.conllu}" if args.conllu else ""))


def check_outputs(args):
    """Before any writing: --output and --conllu are two files (not folders, pipes or devices: each is written
    whole beside its place, then renamed into it), new, or replaced with --overwrite; each is locked."""
    from albert_act.base import outputs

    given = [("--output", args.output)] + ([("--conllu", args.conllu)] if args.conllu else [])
    for flag, path in given:
        if "://" in path:  # written beside it and renamed in: the name would make a local folder "gs:"
            raise ValueError(f"{flag} {path} {outputs.REMOTE_REFUSED}")
    if args.conllu and outputs.followed(args.conllu) == outputs.followed(args.output):
        raise ValueError(f"--conllu {args.conllu} is --output {args.output}: give two files")
    for (flag, path), (other, file) in itertools.permutations(given, 2):  # a file cannot also be a folder
        if outputs.followed(path).startswith(outputs.followed(file) + os.sep):
            raise ValueError(f"{flag} {path} lies under {other} {file}, which is written as a file: give two files "
                             "side by side, e.g. " + os.path.join(os.path.dirname(file), os.path.basename(path)))
    for flag, path in given:
        target = outputs.followed(path)
        if path.endswith(os.sep) or os.path.isdir(target):
            raise ValueError(f"{flag} {path} is a folder: give a file name, e.g. {os.path.join(path, 'synthetic.txt')}")
        outputs.check_dir_target(os.path.dirname(target), holds_a_file=True)  # (names the folder: not the flag's value)
        outputs.hold(path, flag, a_file=True)  # then whether it exists: no second process writes it meanwhile
        if os.path.exists(path) and not os.path.isfile(path):  # (/dev/stdout: a link to a pipe)
            raise ValueError(f"{flag} {path} is not a regular file (a pipe or a device): the corpus is written "
                             "whole beside its place, then renamed into it; give a file name")
        if os.path.exists(path) and not args.overwrite:
            raise ValueError(f"{flag} {path} exists; pass --overwrite to replace it, or choose another name")


if __name__ == "__main__":
    entry.run(main)
