"""SentEval probing: the reader on the real sample, labels derived from parses, the builder."""

import collections
import re

import pytest

from conftest import stop_at_rename
from pipelines import probing, synthetic_corpus


def test_reads_the_senteval_sample(shared_data):
    data = probing.read_senteval(str(shared_data / "senteval_probing" / "past_present.sample.txt"))
    assert len(data["tr"]) == 25 and len(data["va"]) == 25 and data["te"] == []
    assert {label for split in data.values() for label, _ in split} <= {"PRES", "PAST"}
    assert data["tr"][2] == ("PRES", '" Ugh ... " he mumbled .')


def test_malformed_senteval_line_names_file_and_line(tmp_path):
    path = tmp_path / "tense.txt"
    path.write_text("tr\tPAST\tI went .\ntrain\tPRES\tI go .\n")
    with pytest.raises(ValueError, match=r"tense.txt line 2: expected 'split<TAB>label<TAB>sentence'"):
        probing.read_senteval(str(path))
    path.write_text("tr\tNP_VP_.\tI went .\ntr\tNP_VP_. \tI go .\n")  # an open label set: "x " is no new label
    with pytest.raises(ValueError, match=r"tense.txt line 2: label 'NP_VP_. ' is empty or has spaces around it"):
        probing.read_senteval(str(path))
    path.write_text("tr\tNP_VP_.\tI went .\ntr\tADVP_NP_VP_.\tThen I went .\ntr\tnp_vp_.\tI go .\n")
    with pytest.raises(ValueError, match=r"tense.txt line 3: label 'np_vp_.' differs from 'NP_VP_.' \(line 1\) only in "
                                         r"case or invisible characters"):
        probing.read_senteval(str(path))
    path.write_text("tr\tNP_VP_.\tI went .\ntr\tNP_VP_.\u200b\tI go .\n")  # a zero-width space
    with pytest.raises(ValueError, match=r"line 2: label 'NP_VP_.\\u200b' differs from 'NP_VP_.' \(line 1\)"):
        probing.read_senteval(str(path))
    path.write_text("tr\tPAST\tI went .\ntr\tPRES\t\u200b\u200d\n")
    with pytest.raises(ValueError, match=r"tense.txt line 2: the sentence \(its third field\) is empty but for invisible"):
        probing.read_senteval(str(path))
    path.write_text("tr\tPAST\tI went .\ntr\tPRES\tI\x00 go .\n")
    with pytest.raises(ValueError, match=r"tense.txt line 2: a NUL byte in the sentence"):
        probing.read_senteval(str(path))
    path.write_text("tr\t\tI went .\n")
    with pytest.raises(ValueError, match=r"tense.txt line 1: label '' is empty or has spaces around it"):
        probing.read_senteval(str(path))


def test_labels_from_dependencies_by_hand():
    # "The dogs chased a cat ." : root chased/VBD, nsubj dogs/NNS, obj cat/NN
    tokens = [("The", "DT", 2, "det"), ("dogs", "NNS", 3, "nsubj"), ("chased", "VBD", 0, "root"),
              ("a", "DT", 5, "det"), ("cat", "NN", 3, "obj"), (".", ".", 3, "punct")]
    assert probing.labels_from_dependencies(tokens) == {"tense": "PAST", "subj_number": "NNS", "obj_number": "NN"}
    # "She is happy ." : root happy/JJ with cop is/VBZ; pronoun subject gives no SubjNum
    copula = [("She", "PRP", 3, "nsubj"), ("is", "VBZ", 3, "cop"), ("happy", "JJ", 0, "root"), (".", ".", 3, "punct")]
    assert probing.labels_from_dependencies(copula) == {"tense": "PRES"}
    # "has gone": VBN root, no tense label
    assert "tense" not in probing.labels_from_dependencies([("He", "PRP", 3, "nsubj"), ("has", "VBZ", 3, "aux"),
                                                             ("gone", "VBN", 0, "root")])


def test_builder_on_ud_and_the_embedded_corpus(shared_data, tmp_path):
    counts = probing.build_probing_tasks(str(tmp_path), [str(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")],
                                         synthetic_documents=300)
    for task, file_name in probing.TASK_FILES.items():
        data = probing.read_senteval(str(tmp_path / file_name))
        total = sum(len(v) for v in data.values())
        assert total == sum(counts[task].values()) > 100, task
        assert 0.7 < len(data["tr"]) / total < 0.9 and data["va"] and data["te"]
    tense = probing.read_senteval(str(tmp_path / "past_present.txt"))
    assert {label for label, _ in tense["tr"]} == {"PAST", "PRES"}
    constituents = probing.read_senteval(str(tmp_path / "top_constituents.txt"))
    assert {label for split in constituents.values() for label, _ in split} == set(synthetic_corpus.TOP_CONSTITUENTS)
    subjects = collections.Counter(label for split in probing.read_senteval(str(tmp_path / "subj_number.txt")).values()
                                   for label, _ in split)
    assert set(subjects) == {"NN", "NNS"}
    dev = str(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    (tmp_path / "linked.conllu").symlink_to(dev)
    with pytest.raises(ValueError, match=r"--conllu matches \S*linked.conllu twice \(also as .*en_ewt-ud-dev.conllu\): "
                                         r"its sentences would count twice"):
        probing.build_probing_tasks(str(tmp_path / "o"), [dev, str(tmp_path / "linked.conllu")])
    (tmp_path / "copy.conllu").write_bytes(b"\xef\xbb\xbf" + open(dev, "rb").read())  # a copy under another name
    with pytest.raises(ValueError, match=r"--conllu \S*copy.conllu holds the same text as \S*en_ewt-ud-dev.conllu \(a "
                                         r"copy: line ends, .* aside\): its sentences would count twice"):
        probing.build_probing_tasks(str(tmp_path / "o"), [dev, str(tmp_path / "copy.conllu")])
    (tmp_path / "empty.conllu").write_text("")
    with pytest.raises(ValueError, match=r"empty.conllu: no sentence \(an empty CoNLL-U file\?\)"):
        probing.build_probing_tasks(str(tmp_path / "o"), [str(tmp_path / "empty.conllu")])
    untagged = "".join("\t".join(line.split("\t")[:4] + ["_"] + line.split("\t")[5:]) if line.count("\t") == 9 else line
                       for line in open(dev, encoding="utf-8").read().split("\n\n")[0].splitlines(keepends=True))
    (tmp_path / "untagged.conllu").write_text(untagged)
    with pytest.raises(ValueError, match=r"untagged.conllu: no XPOS tag \(column 5 is '_' in all \d+ sentences\)"):
        probing.build_probing_tasks(str(tmp_path / "o"), [str(tmp_path / "untagged.conllu")])
    unparsed = "".join("\t".join(line.split("\t")[:7] + ["_"] + line.split("\t")[8:]) if line.count("\t") == 9 else line
                       for line in open(dev, encoding="utf-8").read().split("\n\n")[0].splitlines(keepends=True))
    (tmp_path / "unparsed.conllu").write_text(unparsed)
    with pytest.raises(ValueError, match=r"unparsed.conllu: no dependency relation \(column 8 is '_' in all 1 "
                                         r"sentences\): the tasks' labels are read from the root's nsubj, obj and cop"):
        probing.build_probing_tasks(str(tmp_path / "o"), [str(tmp_path / "unparsed.conllu")])
    assert not (tmp_path / "o").exists()


def test_synthetic_labels_leave_out_pronoun_and_name_subjects():
    for document in synthetic_corpus.generate_documents(50, seed=1):
        for sentence in document:
            labels = probing.labels_from_synthetic(sentence)
            root = sentence.heads.index(0) + 1
            subject = next(i for i, (h, r) in enumerate(zip(sentence.heads, sentence.relations)) if h == root and r == "nsubj")
            assert ("subj_number" in labels) == (sentence.upos[subject] == "NOUN")
            assert labels["tense"] == sentence.tense


def test_the_builder_replaces_task_files_only_with_overwrite(shared_data, tmp_path, capsys):
    """A folder holding a SentEval file of the user's (or an earlier build): refused without --overwrite, the file
    kept; with it, the task files are replaced and the user's other files stay."""
    sample = shared_data / "senteval_probing" / "past_present.sample.txt"
    (tmp_path / "past_present.txt").write_bytes(sample.read_bytes())
    (tmp_path / "notes.txt").write_text("my notes")
    treebank = tmp_path / "tree" / "past_present.txt"  # a user's CoNLL-U, where a task file goes: read, then replaced
    treebank.parent.mkdir()
    treebank.write_bytes((shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_bytes()[:20000])
    with pytest.raises(SystemExit, match=rf"error: --conllu {treebank} is {treebank}, which this command writes: the "
                                         r"input would be replaced by the output \(--overwrite is for an earlier "
                                         r"output\); give two different files"):
        probing.main(["--conllu", str(treebank), "--output_dir", str(treebank.parent), "--overwrite"])
    with pytest.raises(SystemExit, match=rf"--output_dir {tmp_path} holds past_present.txt \(task files: yours, or an "
                                         r"earlier build's\), which the builder would replace: pass --overwrite"):
        probing.main(["--synthetic_documents", "30", "--output_dir", str(tmp_path)])
    assert (tmp_path / "past_present.txt").read_bytes() == sample.read_bytes()
    probing.main(["--synthetic_documents", "30", "--output_dir", str(tmp_path), "--overwrite"])
    assert (tmp_path / "past_present.txt").read_bytes() != sample.read_bytes()
    assert (tmp_path / "notes.txt").read_text() == "my notes" and "past_present.txt: {" in capsys.readouterr().out


def test_a_sentence_whose_heads_make_no_tree_is_named(tmp_path):
    """HEADs that make a cycle beside the root (words 2 and 3 each other's head) are refused with the first such word's line, as are
    two roots and a word ID out of order; a tree reads."""
    row = "{i}\tw{i}\tw\tX\tX\t_\t{h}\tdep\t_\t_"
    path = tmp_path / "cycle.conllu"
    path.write_text("\n".join(row.format(i=i, h=h) for i, h in ((1, 0), (2, 3), (3, 2))) + "\n\n")
    with pytest.raises(ValueError, match=r"cycle.conllu line 2: the word's HEADs go round in a cycle"):
        list(probing.read_conllu(str(path)))
    path.write_text("\n".join(row.format(i=i, h=h) for i, h in ((1, 0), (3, 1))) + "\n\n")
    with pytest.raises(ValueError, match=r"line 2: word ID '3' where 2 comes next$"):
        list(probing.read_conllu(str(path)))
    path.write_text("\n".join(row.format(i=i, h=h) for i, h in ((1, 0), (2, 3), (3, 1))) + "\n\n")
    assert [head for _, _, head, *_ in next(probing.read_conllu(str(path)))] == [0, 3, 1]


def test_a_stop_while_the_task_files_move_in_keeps_the_earlier_set(shared_data, tmp_path, monkeypatch):
    """--overwrite stopped while the four files were renamed in left a mix of new and earlier ones (round 30
    E211, E212): now they move in together, all or none."""
    dev = str(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    for name in probing.TASK_FILES.values():
        (tmp_path / name).write_text(f"tr\tX\tan earlier {name}\n")
    stop_at_rename(monkeypatch, 4)
    with pytest.raises(KeyboardInterrupt):
        probing.build_probing_tasks(str(tmp_path), [dev])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(probing.TASK_FILES.values())
    assert all((tmp_path / n).read_text() == f"tr\tX\tan earlier {n}\n" for n in probing.TASK_FILES.values())


def test_a_stop_once_the_task_files_moved_in_says_they_are_there(shared_data, tmp_path, monkeypatch, capsys):
    """A stop that lands after the four files moved in asked for a re-run (round 31 F098): it says they are there."""
    dev = str(shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    built = probing.build_probing_tasks

    def then_stopped(*args, **kwargs):
        built(*args, **kwargs)
        raise KeyboardInterrupt("signal 15")

    monkeypatch.setattr(probing, "build_probing_tasks", then_stopped)
    with pytest.raises(SystemExit) as stopped:
        probing.main(["--conllu", dev, "--output_dir", str(tmp_path / "o")])
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip().endswith(f"stopped: this run's task files are in {tmp_path / 'o'}, whole: "
                                                    "nothing to re-run")


def test_a_parsed_file_is_told_by_its_lines_and_a_blind_one_read_for_its_words(shared_data, tmp_path):
    """A .dp file (word<TAB>POS<TAB>head) is read as one whatever its name (heads.txt, .DP); a CoNLL-U file not
    parsed (HEAD "_", a tokenizer's) is refused where trees are read, and read for its words where only they are."""
    dp = (shared_data / "ptb_wsj_sample_nltk" / "wsj_sample_heads.dp").read_text()
    expected = list(probing.read_head_only(str(shared_data / "ptb_wsj_sample_nltk" / "wsj_sample_heads.dp")))
    for name in ("heads.txt", "heads.DP"):
        (tmp_path / name).write_text(dp)
        assert list(probing.read_parsed(str(tmp_path / name))) == expected
    withheld = tmp_path / "withheld.conllu"  # a treebank distributed without its words
    withheld.write_text("".join(f"{i}\t_\t_\tNOUN\tNN\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t_\n"
                                for i in range(1, 5)) + "\n")
    with pytest.raises(ValueError, match=r"withheld.conllu line 1: every word of the sentence is '_' \(FORM withheld"):
        list(probing.read_parsed(str(withheld), words_only=True))
    spaced = tmp_path / "spaced.conllu"  # a sentence ended by a line of one space
    spaced.write_text("1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\tNN\t_\t0\troot\t_\t_\n \n")
    with pytest.raises(ValueError, match=r"spaced.conllu line 3: spaces alone \(' '\), where CoNLL-U ends a sentence"):
        list(probing.read_parsed(str(spaced)))
    (tmp_path / "zero_based.dp").write_text("The\tDT\t1\ncat\tNN\t2\nsat\tVBD\t-1\n\n")  # (0-based, root -1)
    with pytest.raises(ValueError, match=r"zero_based.dp line 3: head -1 .*heads count words from 1, with 0 for the root"):
        list(probing.read_parsed(str(tmp_path / "zero_based.dp")))
    blind = tmp_path / "blind.conllu"
    blind.write_text("# text = The cat sat.\n1\tThe\t_\t_\t_\t_\t_\t_\t_\t_\n2\tcat\t_\t_\t_\t_\t_\t_\t_\t_\n"
                     "3\tsat\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n4\t.\t_\t_\t_\t_\t_\t_\t_\t_\n\n")
    with pytest.raises(ValueError, match=r"blind.conllu line 2: HEAD must be an integer, got '_'"):
        list(probing.read_parsed(str(blind)))
    words = list(probing.read_parsed(str(blind), words_only=True))
    assert [probing.sentence_text(sentence) for sentence in words] == ["The cat sat."]


def test_a_line_separator_inside_a_form_is_named(tmp_path):
    """A U+2028 inside a FORM ends the line for the text readers: 'needs 10 TAB-separated fields, got 2' pointed at a
    line that shows 10."""
    from pipelines.probing import read_conllu

    rows = ["1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_", "2\tdo\u2028g\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_",
            "3\tbarked\tbark\tVERB\tVBD\t_\t0\troot\t_\t_"]
    (tmp_path / "s.conllu").write_text("\n".join(rows) + "\n\n")
    with pytest.raises(ValueError, match=r"s.conllu line 2: U\+2028 inside column 2 \(FORM\), which, ending a line of "
                                         r"text, cuts the line's fields in two: remove it"):
        list(read_conllu(str(tmp_path / "s.conllu")))
    rows[1] = "2\tdog\tdo\x85g\tNOUN\tNN\t_\t3\tnsubj\t_\t_"  # (round 42 A55: in the LEMMA, not the form)
    (tmp_path / "s.conllu").write_text("\n".join(rows) + "\n\n")
    with pytest.raises(ValueError, match=r"s.conllu line 2: U\+0085 inside column 3 \(LEMMA\)"):
        list(read_conllu(str(tmp_path / "s.conllu")))
    rows[1] = "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_"  # a comment's (A56: never read) and at each line's end (A127)
    (tmp_path / "s.conllu").write_text("# text = The do\u2028g barked\n" + "\u2028\n".join(rows) + "\u2028\n\n")
    assert [word[0] for word in next(read_conllu(str(tmp_path / "s.conllu")))] == ["The", "dog", "barked"]


def test_senteval_sentences_holding_soft_hyphens_are_warned_of(tmp_path, capsys):
    """A SentEval file's sentences are weighed as text is (round 42 A125: soft hyphens fine-tuned on without a
    word); the sample shipped with SentEval holds none."""
    path = tmp_path / "past_present.txt"
    path.write_text("".join(f"{('tr', 'va', 'te')[i % 3]}\t{('PAST', 'PRES')[i % 2]}\tThe com\u00admittee met on "
                            f"day {i} .\n" for i in range(30)))
    assert sum(map(len, probing.read_senteval(str(path)).values())) == 30
    assert "past_present.txt: 30 of its first 30 lines hold an invisible character (U+00AD on line 1" in \
        capsys.readouterr().err


def test_conllu_plus_and_conll_2003_are_named(tmp_path):
    """CoNLL-U Plus (12 columns named by '# global.columns') was 'needs 10 fields, got 12'; a CoNLL-2003 file was
    given a hint about .dp files (round 42 A60, A118). The cut advised for CoNLL-U Plus gives a file that reads."""
    import subprocess

    path = tmp_path / "plus.conllu"
    path.write_text("# global.columns = ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC PARSEME:MWE SEM\n"
                    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\t*\t_\n2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\t*\t_\n\n")
    with pytest.raises(ValueError, match=r"plus.conllu line 2: CoNLL-U Plus, its 12 columns .*\(cut -f1-10 ") as refused:
        list(probing.read_conllu(str(path)))
    subprocess.run(["bash", "-c", str(refused.value).rsplit("(", 1)[1].rstrip(")")], cwd=tmp_path, check=True)
    assert [word[0] for word in next(probing.read_conllu(str(tmp_path / "plain.conllu")))] == ["The", "dog"]
    for text in ("-DOCSTART- -X- -X- O\n\nEU\tNNP\tB-NP\tB-ORG\n", "EU\tNNP\tB-NP\tB-ORG\nrejects\tVBZ\tB-VP\tO\n"):
        (tmp_path / "ner.conllu").write_text(text)
        with pytest.raises(ValueError, match=r"ner.conllu line 1: CoNLL-2003 columns \(word, POS, chunk, named-entity "
                                             r"tag: .*\), which hold no dependency tree; give CoNLL-U"):
            list(probing.read_conllu(str(tmp_path / "ner.conllu")))


def test_ud_v1_relation_names_are_warned_of(shared_data, tmp_path, capsys):
    """UD v1's dobj and nsubjpass (round 42 A61: obj_number left empty, 'more sentences of its kind' blamed); UD v2's
    EWT gives no such warning."""
    import re

    dev = (shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:200]
    (tmp_path / "v1.conllu").write_text(re.sub(r"\tobj\t", "\tdobj\t", "\n\n".join(dev) + "\n\n"))
    probing.build_probing_tasks(str(tmp_path / "o"), [str(tmp_path / "v1.conllu")])
    assert "v1.conllu: UD v1's relation names (dobj, nsubjpass), where UD v2's are read" in capsys.readouterr().err
    (tmp_path / "v2.conllu").write_text("\n\n".join(dev) + "\n\n")
    probing.build_probing_tasks(str(tmp_path / "o2"), [str(tmp_path / "v2.conllu")])
    assert "UD v1" not in capsys.readouterr().err


def _relabelled(lines, column, change):
    return "\n".join("\t".join(change(f) if i == column else f for i, f in enumerate(line.split("\t")))
                     if re.match(r"\d+\t", line) else line for line in lines.split("\n"))


def test_relation_names_of_other_schemes_and_swapped_columns_are_named(shared_data, tmp_path, capsys):
    """Round 45 A33, A34, A36 and round 46 A39 to A42: spaCy's labels were called UD v1's; upper-case relation names,
    Prague's, numbers and DEPS in DEPREL emptied subj_number and obj_number with 'more sentences of its kind' blamed;
    FORM and LEMMA swapped made task files of lemmas, without a word; spaces for TABs were 'a sentence of text'.
    Upper case is read as UD's lower case (the same task files); the others are named, a swap with the awk that
    undoes it."""
    import subprocess

    text = "\n\n".join((shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:300])
    (tmp_path / "ud.conllu").write_text(text + "\n\n")
    probing.build_probing_tasks(str(tmp_path / "ud"), [str(tmp_path / "ud.conllu")])
    assert "warning" not in capsys.readouterr().err
    (tmp_path / "upper.conllu").write_text(_relabelled(text, 7, str.upper) + "\n\n")
    probing.build_probing_tasks(str(tmp_path / "upper"), [str(tmp_path / "upper.conllu")])
    assert "upper.conllu: its relation names are in upper case (" in capsys.readouterr().err
    for name in probing.TASK_FILES.values():
        assert (tmp_path / "upper" / name).read_text() == (tmp_path / "ud" / name).read_text()
    spacy = {"obj": "dobj", "root": "ROOT", "case": "prep", "nsubj:pass": "nsubjpass"}
    prague = {"nsubj": "Sb", "root": "Pred", "obj": "Obj", "amod": "Atr", "case": "AuxP", "punct": "AuxK"}
    numbers = {}
    conll2007 = {"nsubj": "SBJ", "obj": "OBJ", "root": "ROOT", "det": "NMOD", "amod": "NMOD", "case": "PMOD", "punct": "P"}
    for name, change, said in (
            ("spacy", lambda r: spacy.get(r, r), "spaCy's relation names (ROOT, dobj, nsubjpass, prep: ClearNLP's "
                                                  "English scheme)"),  # (round 45 A33: called UD v1's)
            ("prague", lambda r: prague.get(r.split(":")[0], "Adv"), "its relation names are the Prague Dependency "
                                                                     "Treebank's analytical functions ("),  # (46 A40)
            ("numbers", lambda r: str(numbers.setdefault(r, len(numbers))), "its relation names are numbers (a "
                                                                              "parser's label ids?) ("),  # (A41)
            ("conll2007", lambda r: conll2007.get(r.split(":")[0], "DEP"), "its relation names are CoNLL-2007's "
                                                                             "(Penn2Malt's: "),  # (round 47 A95)
            ("deps", None, "DEPREL (column 8) holds DEPS' head:relation pairs (line 5: '")):  # (A39: DEPS swapped in)
        relabelled = "\n".join("\t".join([*f[:7], f[8], f[7], f[9]]) if re.match(r"\d+\t", line) else line
                               for line in text.split("\n") for f in [line.split("\t")]) if change is None else (
            _relabelled(text, 7, change))
        (tmp_path / f"{name}.conllu").write_text(relabelled + "\n\n")
        probing.build_probing_tasks(str(tmp_path / name), [str(tmp_path / f"{name}.conllu")])
        err = capsys.readouterr().err
        assert f"{name}.conllu: {said}" in err and "UD v1" not in err and "upper case" not in err, err
    subprocess.run(["bash", "-c", err.split("swap them back (")[1].strip()[:-1]], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.conllu").read_text() == text + "\n\n"
    tagged = "\n".join("\t".join([f[0], f[3], f[2], f[1], *f[4:]]) if re.match(r"\d+\t", line) else line
                       for line in text.split("\n") for f in [line.split("\t")])  # (round 46 A110: FORM and UPOS)
    (tmp_path / "tagged.conllu").write_text(tagged + "\n\n")
    list(probing.read_conllu(str(tmp_path / "tagged.conllu"), words_only=True))
    err = capsys.readouterr().err
    assert re.search(r"tagged.conllu: FORM \(column 2\) holds UPOS tags in [\d,]+ of [\d,]+ words \(line 5: FORM 'ADP', "
                     r"UPOS 'From'\): columns 2 and 4 swapped\?", err), err
    subprocess.run(["bash", "-c", err.split("swap them back (")[1].strip()[:-1]], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.conllu").read_text() == text + "\n\n"
    struck = _relabelled(text, 1, lambda form: "".join(f"{c}\b{c}" for c in form) if form.isalpha() else form)
    (tmp_path / "struck.conllu").write_text(struck + "\n\n")  # (A138: nroff's overstrike in the FORMs)
    list(probing.read_conllu(str(tmp_path / "struck.conllu"), words_only=True))
    assert "struck.conllu: " in (err := capsys.readouterr().err) and "hold backspaces" in err, err
    spaced = "\n".join(line.replace("\t", " ") for line in text.split("\n"))  # (round 46 A42: 'a sentence of text')
    (tmp_path / "spaced.conllu").write_text(spaced + "\n\n")
    with pytest.raises(ValueError, match=r"spaced.conllu line 5: CoNLL-U's 10 columns separated by spaces, not TABs "
                                         r"\('1 From from ADP IN _ 3 case 3:case _'\): make them TABs"):
        list(probing.read_conllu(str(tmp_path / "spaced.conllu")))
    lines = text.split("\n")
    swapped = "\n".join("\t".join([f[0], f[2], f[1], *f[3:]]) if re.match(r"\d+\t", line) else line
                        for line in lines for f in [line.split("\t")])
    (tmp_path / "swapped.conllu").write_text(swapped + "\n\n")
    list(probing.read_conllu(str(tmp_path / "swapped.conllu")))
    err = capsys.readouterr().err
    assert re.search(r"swapped.conllu: FORM and LEMMA \(columns 2 and 3\) look swapped: [\d,]+ words tagged as "
                     r"inflected hold their lemma as FORM \(line \d+: FORM '\w+', LEMMA '\w+', V", err), err
    subprocess.run(["bash", "-c", err.split("swap the columns back (")[1].strip()[:-1]], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.conllu").read_text() == text + "\n\n"
    (tmp_path / "merged.conllu").write_text(f"<<<<<<< HEAD\n{text}\n=======\n>>>>>>> main\n")
    with pytest.raises(ValueError, match=r"merged.conllu line 1: a git merge conflict's marker \('<<<<<<< HEAD'\): "
                                         "both sides of the conflict are in the file; resolve it first"):
        list(probing.read_conllu(str(tmp_path / "merged.conllu")))


def test_forms_holding_wikitexts_marks_are_warned_of(shared_data, tmp_path, capsys):
    """WikiText's @-@ and @,@ as FORMs went into the task files without a word (round 44 A32, A38); EWT holds none."""
    import re

    from pipelines.probing import read_conllu

    dev = "\n\n".join((shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:200])
    (tmp_path / "marks.conllu").write_text(dev.replace("\t-\t-\t", "\t@-@\t-\t").replace("\t,\t,\t", "\t@,@\t,\t") + "\n\n")
    assert len(list(read_conllu(str(tmp_path / "marks.conllu")))) == 200
    assert re.search(r"marks.conllu: \d+ of its first 200 sentences hold WikiText's markup \('@[-,]@' on line \d+",
                     capsys.readouterr().err)
    (tmp_path / "ewt.conllu").write_text(dev + "\n\n")
    assert len(list(read_conllu(str(tmp_path / "ewt.conllu")))) == 200 and capsys.readouterr().err == ""


@pytest.mark.parametrize("tags, said", [(lambda tag: tag.replace("VB", "VV").replace("NNS", "NN2").replace("MD", "VM"), "such as CLAWS's"),
                                        (str.lower, "Penn Treebank's in lower case; upper-case column 5")])
def test_xpos_in_another_tag_set_or_case_is_named(shared_data, tmp_path, tags, said):
    """CLAWS's tags or Penn Treebank's in lower case left every task file empty, blamed on too few sentences (round 43
    A48, A49)."""
    rows = []
    for line in (shared_data / "ud_english_ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")[:100]:
        rows.append("\n".join("\t".join(f[:4] + [tags(f[4])] + f[5:])
                              if len(f := row.split("\t")) == 10 else row for row in line.split("\n")))
    (tmp_path / "tags.conllu").write_text("\n\n".join(rows) + "\n\n")
    with pytest.raises(ValueError, match=rf"no Penn Treebank verb tag .*{said}"):
        probing.build_probing_tasks(str(tmp_path / "o"), [str(tmp_path / "tags.conllu")])


def test_plain_sentences_given_as_a_parsed_file_are_named(tmp_path):
    """'CoNLL-U needs 10 fields, got 1' said nothing of plain text, nor where it is read (round 43 B77)."""
    (tmp_path / "s.conllu").write_text("The river ran past the mill today.\nIt was cold.\n")
    with pytest.raises(ValueError, match=r"s.conllu line 1: a sentence of plain text .*analyze sentences --text"):
        list(probing.read_parsed(str(tmp_path / "s.conllu")))
