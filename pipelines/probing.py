"""SentEval probing tasks: reading them, and building them from a parsed corpus (no download).

    python -m pipelines.probing --conllu ud/en_ewt-ud-*.conllu --synthetic_documents 5000 --output_dir probing/

File format (SentEval's): `split<TAB>label<TAB>sentence`, split in tr/va/te,
sentence tokens separated by spaces. The builder writes the four tasks of the paper:

* past_present.txt (Tense): PAST if the main verb is VBD, PRES if VBP or VBZ. The main
  verb is the root; when the root is not a verb (UD copula), its `cop` child. Other
  tags (e.g. a VBN root with an auxiliary) give no example.
* subj_number.txt (SubjNum): NN or NNS, the tag of the root's `nsubj` when it is a
  common noun (pronouns and proper nouns give no example).
* obj_number.txt (ObjNum): NN or NNS, the tag of the root's `obj`, a common noun.
* top_constituents.txt (TopConst): the sequence of constituents under the root
  (e.g. ADVP_NP_VP_.). It needs a constituency analysis, which CoNLL-U lacks: it
  comes from the embedded corpus's gold annotations only.

From CoNLL-U the tags are the XPOS column (PTB tags in UD English). From the
embedded corpus they are its gold labels; there, nouns are NOUN and pronoun or
name subjects are left out of SubjNum as above. Each sentence goes to tr/va/te
(80/10/10) by a hash of its text, so the split does not depend on file order.
(SentEval additionally keeps target word forms apart across splits; we do not.)
"""

if not __package__:  # run as a file, where its imports of the package fail
    raise SystemExit("error: pipelines/probing.py is part of albert-act: run it from the repository root as "
                     "python -m pipelines.probing")

import collections
import hashlib
import os
import sys
import time

from albert_act.base import artifacts, cli, entry, outputs, overlap, prose, text_files
from pipelines import conllu_lines, synthetic_corpus

SPLITS = ("tr", "va", "te")
TASK_FILES = {"tense": "past_present.txt", "subj_number": "subj_number.txt",
              "obj_number": "obj_number.txt", "top_constituents": "top_constituents.txt"}
PRESENT, PAST, NOUN_TAGS = ("VBP", "VBZ"), ("VBD",), ("NN", "NNS")


# The closed label sets of the paper's probing tasks (by file name; top_constituents is open).
TASK_LABELS = {"past_present": ("PAST", "PRES"), "subj_number": NOUN_TAGS, "obj_number": NOUN_TAGS}
_PTB_VERBS = {"VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "MD"}  # Penn Treebank's verb tags, which the tasks read


def read_senteval(path):
    """{split: [(label, sentence)]}; ValueError naming the file and line for a malformed line (other
    than 3 fields; a sentence empty but for invisible characters, or holding a NUL; a label empty, with
    spaces around it, or differing from another only in case or invisible characters), a label
    outside its task's set (`TASK_LABELS`, by the file's name: past_present.sample.txt is Tense), or
    a va/te label that no tr line has (a classifier could never predict it)."""
    data, lines, weighed = {split: [] for split in SPLITS}, {}, prose.Prose(path, traits=prose.TEXT_TRAITS)
    known = TASK_LABELS.get(os.path.basename(str(path)).split(".")[0])
    for number, line in text_files.read_lines(path, skip_flag=False, in_place=True):
        if not line:
            continue
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] not in SPLITS:
            raise ValueError(f"{path} line {number}: expected 'split<TAB>label<TAB>sentence' with split in "
                             f"{list(SPLITS)}, got {line[:80]!r}")
        if len(parts) > 3:  # SentEval's reader keeps the last field: the words before a TAB would be dropped
            raise ValueError(f"{path} line {number}: {len(parts)} TAB-separated fields, where SentEval's format has 3 "
                             "(split, label, sentence): a TAB inside the sentence? replace it by a space")
        if text_files.is_blank(parts[2]):
            raise ValueError(f"{path} line {number}: the sentence (its third field) is empty"
                             + (" but for invisible characters" if parts[2].strip() else ""))
        if "\x00" in parts[2]:
            raise ValueError(f"{path} line {number}: a NUL byte in the sentence (binary data in a text file?)")
        if not parts[1] or parts[1] != parts[1].strip():
            raise ValueError(f"{path} line {number}: label {parts[1]!r} is empty or has spaces around it")
        if known and parts[1] not in known:
            raise ValueError(f"{path} line {number}: label {parts[1]!r} is not one of this task's {list(known)}")
        data[parts[0]].append((parts[1], parts[2]))
        lines.setdefault((parts[0], parts[1]), number)
        weighed.feed_words([number], [parts[2]], "lines")
    weighed.warn()
    _refuse_look_alike_labels(lines, path)
    trained = {label for label, _ in data["tr"]}
    unseen = sorted((number, split, label) for (split, label), number in lines.items()
                    if split != "tr" and label not in trained)
    if data["tr"] and unseen:
        number, split, label = unseen[0]
        raise ValueError(f"{path} line {number}: label {label!r} ({split}) is in no tr line, so no classifier "
                         f"trained on tr can predict it; tr has {sorted(trained)}")
    return data


def _refuse_look_alike_labels(lines, path):
    """Two labels that differ only in case or invisible characters (a zero-width space) are a typo,
    not two classes: refused, naming the first line of each."""
    first = {}
    for (_, label), number in sorted(lines.items(), key=lambda item: item[1]):
        key = text_files.visible(label).casefold()
        other = first.setdefault(key, (label, number))
        if other[0] != label:
            raise ValueError(f"{path} line {number}: label {label!r} differs from {other[0]!r} (line {other[1]}) only "
                             "in case or invisible characters: one class written two ways? write it one way")


def read_conllu(path, words_only=False):
    """Yields sentences as lists of (form, xpos, head, relation, space_after) from CoNLL-U or CoNLL-X
    (same columns for these fields); multiword-token ranges (1-2) and empty nodes (1.1) are skipped.
    Relations keep their subtypes (nmod:poss). space_after is False where MISC has SpaceAfter=No, and
    inside a multiword token ("don't" = do + n't: False after "do"; its last word takes the token's).
    Word IDs out of order (a blank line lost), a HEAD outside 0..words, no root or two, and a cycle are refused,
    naming the line. words_only: the words are all that is read (a served sentence's), so a file not parsed (HEAD
    "_", as a tokenizer writes CoNLL-U) is read too, its heads None."""
    sentence, lines, token = [], [], None  # token: (first word id, last word id, SpaceAfter=No) of a range
    weighed = prose.Prose(path, traits=prose.WORD_TRAITS)  # (-LRB- for "(", soft hyphens: warned of as in text)
    columns = conllu_lines.Columns(path)  # (columns swapped, relations of another scheme)
    plus = None  # CoNLL-U Plus's columns, as its "# global.columns =" line names them
    for number, line in text_files.read_lines(path, skip_flag=False):
        if not line:
            if sentence:
                yield _ended(sentence, lines, path, weighed, words_only)
            sentence, lines, token = [], [], None
            continue
        if line.startswith("#"):
            plus = line[len("# global.columns ="):].split() if line.startswith("# global.columns =") else plus
            continue
        fields = line.split("\t")
        if len(fields) != 10 and conllu_lines.not_a_token_line(path, number, line, fields, plus):
            continue  # (a comment's part, cut off by a line separator)
        glued = "SpaceAfter=No" in fields[9].split("|")
        if "-" in fields[0]:
            first, _, last = fields[0].partition("-")
            token = (int(first), int(last), glued) if first.isdigit() and last.isdigit() else None
            continue
        if "." in fields[0]:
            continue
        if not fields[1].strip():
            raise ValueError(f"{path} line {number}: empty FORM (column 2) for token {fields[0]!r}")
        try:
            head = int(fields[6])
        except ValueError:
            if not words_only:
                raise ValueError(f"{path} line {number}: HEAD must be an integer, got {fields[6]!r}") from None
            head = None
        if fields[0] != str(len(sentence) + 1):  # words 1, 2, ... in order: "1" again is a sentence run on
            raise ValueError(f"{path} line {number}: word ID {fields[0]!r} where {len(sentence) + 1} comes next"
                             + (" (a new sentence without the blank line that ends each one)" if fields[0] == "1" else
                                ""))
        if token and token[0] <= int(fields[0]) <= token[1]:
            glued = glued or int(fields[0]) < token[1] or token[2]
        sentence.append((fields[1], fields[4], head, fields[7], not glued))
        lines.append(number)
        columns.feed(number, fields)
    if sentence:
        yield _ended(sentence, lines, path, weighed, words_only)
    weighed.warn()
    columns.warn(relations=not words_only)


def _ended(sentence, lines, path, weighed, words_only):
    """A sentence read whole (its words from `lines`): its FORMs checked and weighed (`weighed`, a prose.Prose of the
    file), its HEADs checked unless `words_only`."""
    _check_forms(sentence, lines, path)
    weighed.feed_words(lines, [word[0] for word in sentence])
    return sentence if words_only else _check_heads(sentence, lines, path)


def sentence_text(words):
    """The text of a parsed sentence, its words joined as written (no space where space_after is False)."""
    return "".join(word[0] + (" " if len(word) < 5 or word[4] else "") for word in words).rstrip(" ")


def glued_words(words):
    """Per word, whether it follows the word before it with no space between them (SpaceAfter=No)."""
    return [index > 0 and len(words[index - 1]) > 4 and not words[index - 1][4] for index in range(len(words))]


def _check_forms(sentence, lines, path):
    """ValueError for a sentence of 3 words or more whose every FORM is "_": a treebank distributed without its text
    (the words withheld), whose analyses would be of underscores."""
    if len(sentence) >= 3 and all(word[0] == "_" for word in sentence):
        raise ValueError(f"{path} line {lines[0]}: every word of the sentence is '_' (FORM withheld, as treebanks whose "
                         "text is licensed apart are distributed): put the words back (the treebank's own script "
                         "merges them from the source text)")


def _check_heads(sentence, lines, path):
    """The sentence, where its HEADs make one tree: each within the sentence, one root (HEAD 0), no cycle."""
    heads = [head for _, _, head, *_ in sentence]
    for head, number in zip(heads, lines):
        if not 0 <= head <= len(sentence):
            raise ValueError(f"{path} line {number}: HEAD {head} is outside its sentence of {len(sentence)} words")
    selves = [number for word, (head, number) in enumerate(zip(heads, lines), 1) if head == word]
    if selves:  # (before the roots: heads counted from 0 make a root of each word headed by the first)
        raise ValueError(f"{path} line {selves[0]}: the word is its own HEAD ({len(selves)} such in the sentence); "
                         "heads count words from 1, with 0 for the root (counted from 0? add 1 to each but the root's)")
    roots = [number for head, number in zip(heads, lines) if head == 0]
    if len(roots) != 1:
        raise ValueError(f"{path} line {lines[0]}: the sentence has {len(roots)} roots (HEAD 0"
                         + (f", lines {', '.join(map(str, roots))}" if roots else "") + "); a dependency tree has one")
    for word, number in zip(range(1, len(heads) + 1), lines):
        for _ in heads:  # up the tree: the root within as many steps as there are words
            word = heads[word - 1] if word else 0
        if word:
            raise ValueError(f"{path} line {number}: the word's HEADs go round in a cycle and never reach the root")
    return sentence


def read_head_only(path):
    """PTB `.dp` files (word<TAB>POS<TAB>head, no relation labels): yields lists of
    (form, POS, head, relation, space_after) with the POS tag standing in for the missing relation
    (space_after always True: the format does not say). Its HEADs are checked as CoNLL-U's are (`_check_heads`)."""
    sentence, lines = [], []
    for number, line in text_files.read_lines(path, skip_flag=False):
        if not line.strip():
            if sentence:
                yield _check_heads(sentence, lines, path)
            sentence, lines = [], []
            continue
        fields = line.split("\t")
        if len(fields) == 3 and fields[2].lstrip("-").isdigit() and not fields[2].isdigit():
            raise ValueError(f"{path} line {number}: head {fields[2]} ({line[:60]!r}): heads count words from 1, with 0 "
                             "for the root (0-based heads, the root at -1? add 1 to each)")
        if len(fields) != 3 or not fields[2].isdigit():
            raise ValueError(f"{path} line {number}: expected word<TAB>POS<TAB>head, got {line[:60]!r}")
        sentence.append((fields[0], fields[1], int(fields[2]), fields[1], True))
        lines.append(number)
    if sentence:
        yield _check_heads(sentence, lines, path)


def read_parsed(path, words_only=False):
    """Sentences of a CoNLL-U / CoNLL-X (.conllu, .conll) or PTB head-only (.dp) file, told by its first line (a .dp
    file's is word<TAB>POS<TAB>head, whatever the file's name; a pipe, read once, by its name). words_only: as `read_conllu`'s."""
    head_only = path.lower().endswith(".dp")
    for _, line in text_files.read_lines(path, skip_flag=False) if os.path.isfile(path) else ():  # (a pipe: read once)
        if line.strip() and not line.startswith("#"):
            fields = line.split("\t")
            head_only = len(fields) == 3 and fields[2].strip().isdigit()
            break
    return read_head_only(path) if head_only else read_conllu(path, words_only)


def labels_from_dependencies(tokens):
    """{task: label} derivable from one dependency-parsed sentence [(form, xpos, head, relation)]."""
    roots = [i for i, t in enumerate(tokens, 1) if t[2] == 0]
    if len(roots) != 1:
        return {}
    root = roots[0]
    children = {rel.split(":")[0].lower(): i for i, (_, _, head, rel, *_) in enumerate(tokens, 1) if head == root}
    labels = {}
    verb_tag = tokens[root - 1][1]
    if not verb_tag.startswith("VB") and "cop" in children:
        verb_tag = tokens[children["cop"] - 1][1]
    if verb_tag in PAST:
        labels["tense"] = "PAST"
    elif verb_tag in PRESENT:
        labels["tense"] = "PRES"
    for task, relation in (("subj_number", "nsubj"), ("obj_number", "obj")):
        if relation in children and tokens[children[relation] - 1][1] in NOUN_TAGS:
            labels[task] = tokens[children[relation] - 1][1]
    return labels


def labels_from_synthetic(sentence):
    """{task: label} from the embedded corpus's gold annotations."""
    labels = {"tense": sentence.tense, "top_constituents": sentence.top_constituents}
    root = sentence.heads.index(0) + 1
    subject = next(i for i, (head, relation) in enumerate(zip(sentence.heads, sentence.relations))
                   if head == root and relation == "nsubj")
    if sentence.upos[subject] == "NOUN":
        labels["subj_number"] = sentence.subject_number
    if sentence.object_number is not None:
        labels["obj_number"] = sentence.object_number
    return labels


def split_of(sentence):
    bucket = int(hashlib.md5(sentence.encode("utf-8")).hexdigest(), 16) % 10
    return "tr" if bucket < 8 else ("va" if bucket == 8 else "te")


def build_probing_tasks(output_dir, conllu_paths=(), synthetic_documents=0, seed=0):
    """Writes the four task files; returns {task: {split: count}}."""
    rows = collections.defaultdict(list)
    why = "its sentences would count twice"
    text_files.check_each_file_once(conllu_paths, why, "--conllu", comments="#")
    parsed = {path: list(read_conllu(path)) for path in conllu_paths}
    for note in overlap.check_units_once({path: overlap.tree_keys([t[0] for t in tokens] for tokens in read)
                                             for path, read in parsed.items()}, "sentences", why, "--conllu"):
        print(note)
    for path, read in parsed.items():
        sentences, tagged, related, ptb = 0, False, False, False
        for sentences, tokens in enumerate(read, start=1):
            text = " ".join(t[0] for t in tokens)
            tagged = tagged or any(t[1] not in ("_", "") for t in tokens)
            ptb = ptb or any(t[1] in _PTB_VERBS for t in tokens)
            related = related or any(t[3] not in ("_", "") for t in tokens)
            for task, label in labels_from_dependencies(tokens).items():
                rows[task].append((split_of(text), label, text))
        if not sentences:
            raise ValueError(f"{path}: no sentence (an empty CoNLL-U file?)")
        if not tagged:
            raise ValueError(f"{path}: no XPOS tag (column 5 is '_' in all {sentences} sentences): the tasks' labels "
                             "are read from the XPOS tags (VBD, NN, ...); tag the file first")
        if not ptb:  # (UPOS, CLAWS's VVD and NN1, or Penn Treebank's in lower case: no label found)
            common = ", ".join(tag for tag, _ in collections.Counter(t[1] for tokens in read for t in tokens).most_common(5))
            lower = any(t[1].upper() in _PTB_VERBS and t[1] != t[1].upper() for tokens in read for t in tokens)
            raise ValueError(f"{path}: no Penn Treebank verb tag (VBD, VBZ, ...) among its XPOS tags (column 5: {common}, "
                             + ("...: Penn Treebank's in lower case; upper-case column 5" if lower else "...: UPOS or "
                                "another tag set, such as CLAWS's?") + "): the tasks' labels are read from Penn Treebank "
                             "tags; give a file tagged with them (UD English's XPOS)")
        if not related:
            raise ValueError(f"{path}: no dependency relation (column 8 is '_' in all {sentences} sentences): the "
                             "tasks' labels are read from the root's nsubj, obj and cop; parse the file first")
    for document in synthetic_corpus.generate_documents(synthetic_documents, seed):
        for sentence in document:
            text = " ".join(sentence.words)
            for task, label in labels_from_synthetic(sentence).items():
                rows[task].append((split_of(text), label, text))
    counts = {}
    with outputs.staging_dir(output_dir) as staging:  # the four files moved in together: all or none
        for task, file_name in TASK_FILES.items():
            ordered = sorted(rows[task], key=lambda r: SPLITS.index(r[0]))  # SentEval: tr, then va, then te
            outputs.write_file(os.path.join(staging, file_name),
                               "".join(f"{split}\t{label}\t{text}\n" for split, label, text in ordered).encode("utf-8"))
            counts[task] = dict(collections.Counter(r[0] for r in ordered))
            if len({r[1] for r in ordered}) == 1:  # (a file of one kind of sentence: nothing to tell apart)
                print(f"note: {file_name}: every line has the label {ordered[0][1]}, so a classifier fine-tuned on it "
                      "learns nothing (finetune refuses it); give sentences of each kind")
        text_files.move_in_together([(os.path.join(staging, name), os.path.join(output_dir, name))
                                     for name in TASK_FILES.values()], staging)
    return counts


def check_output_dir(output_dir, overwrite):
    """ValueError for an --output_dir that is a file, or that holds a task file (a SentEval file of the user's, an
    earlier build) without `overwrite`; other files there stay. Holds its lock (`outputs.hold`) from then on."""
    if text_files.is_remote(output_dir):  # the task files are written beside their place and renamed in
        raise ValueError(f"--output_dir {output_dir} {outputs.REMOTE_REFUSED}")
    outputs.check_dir_target(output_dir, "--output_dir")
    artifacts.check_not_in_a_run(output_dir, "--output_dir")
    outputs.hold(output_dir)
    there = [name for name in TASK_FILES.values() if os.path.lexists(os.path.join(output_dir, name))]
    if there and not overwrite:
        raise ValueError(f"--output_dir {output_dir} holds {', '.join(there)} (task files: yours, or an earlier "
                         "build's), which the builder would replace: pass --overwrite to replace them, or choose "
                         "another --output_dir")


def main(argv=None):
    cli.quiet_start(argv, tensorflow=False)  # first; TensorFlow, if a gs:// path needs it, loads quietly
    parser = cli.parser("probing", __doc__, package="pipelines")
    parser.add_argument("--conllu", nargs="*", default=[], help="CoNLL-U files or globs")
    parser.add_argument("--synthetic_documents", type=int, default=0, help="documents of the embedded corpus")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--overwrite", action="store_true", help="replace task files in --output_dir (" +
                        ", ".join(TASK_FILES.values()) + ")")
    args = cli.parse_checked(parser, argv, {"synthetic_documents": "int[0,1000000]", "seed": "int:seed",
                                            "conllu": "path", "output_dir": "path"})
    if not args.conllu and args.synthetic_documents < 1:
        parser.error("give --conllu files and/or --synthetic_documents N")
    if args.seed != parser.get_default("seed") and args.synthetic_documents < 1:
        sys.exit(f"error: --seed {args.seed} draws the embedded corpus's documents, and --synthetic_documents is 0: "
                 "the CoNLL-U files are read as they are; drop --seed")
    started = time.time()

    def kept():  # asked when the stop comes: the task files written by then
        there = [name for name in TASK_FILES.values() if os.path.exists(os.path.join(args.output_dir, name))]
        if len(there) == len(TASK_FILES) and all(os.path.getmtime(os.path.join(args.output_dir, name)) >= started
                                                 for name in there):  # (the stop came once they were moved in)
            return f"this run's task files are in {args.output_dir}, whole: nothing to re-run"
        return (f"{', '.join(there)} in {args.output_dir} {'is' if len(there) == 1 else 'are'} one whole set (the "
                "task files are moved in together, all or none); re-run the same command with --overwrite" if there
                else f"no task file was written to {args.output_dir}; re-run the same command")

    with cli.failures(args.output_dir, "the task files are moved in together, all or none (those there before are "
                      "intact): free space and re-run the same command", kept):
        check_output_dir(args.output_dir, args.overwrite)
        files = text_files.expand_patterns(args.conllu) if args.conllu else []
        text_files.check_inputs_are_not_outputs(files, [os.path.join(args.output_dir, n) for n in TASK_FILES.values()],
                                             "--conllu")
        built = build_probing_tasks(args.output_dir, files, args.synthetic_documents, args.seed)
        for task, counts in built.items():
            empty = not (counts.get("tr") and counts.get("va"))
            why = ("a constituency analysis, which CoNLL-U lacks: use --synthetic_documents" if
                   task == "top_constituents" and not args.synthetic_documents else "more sentences of its kind")
            print(f"{TASK_FILES[task]}: {counts}" + (f" (no tr or no va lines: fine-tuning on it needs {why})"
                                                   if empty else ""))


if __name__ == "__main__":
    entry.run(main)
