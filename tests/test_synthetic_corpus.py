"""The embedded corpus: deterministic, well-formed trees, gold labels that agree with the words."""

import collections
import os

import pytest

from pipelines import synthetic_corpus as sc
from pipelines.create_pretraining_data import create_pretraining_data, read_documents
from pipelines.instances import InstanceConfig
from pipelines.tokenizer import Tokenizer, train_sentencepiece

PLURAL_NOUNS = {pl for _, pl, _ in sc.NOUNS}
SINGULAR_NOUNS = {sg for sg, _, _ in sc.NOUNS}
PAST_FORMS = {past for *_, past in sc.TRANSITIVE + sc.INTRANSITIVE}
PRESENT_SINGULAR = {sg for sg, _, _ in sc.TRANSITIVE + sc.INTRANSITIVE}
PRESENT_PLURAL = {pl for _, pl, _ in sc.TRANSITIVE + sc.INTRANSITIVE}


@pytest.fixture(scope="module")
def sentences():
    return [s for doc in sc.generate_documents(1500, seed=3) for s in doc]


def test_deterministic_by_seed_and_document_index():
    texts = lambda n, seed: [[s.text() for s in d] for d in sc.generate_documents(n, seed)]  # noqa: E731
    assert texts(30, 1) == texts(30, 1)
    assert texts(30, 1) != texts(30, 2)
    assert texts(10, 1) == texts(30, 1)[:10]  # document d depends only on (seed, d)


def test_every_sentence_is_a_tree(sentences):
    for s in sentences:
        n = len(s.words)
        assert len(s.upos) == len(s.heads) == len(s.relations) == n
        assert s.heads.count(0) == 1 and s.relations[s.heads.index(0)] == "root"
        assert all(0 <= h <= n and r for h, r in zip(s.heads, s.relations))
        for i in range(1, n + 1):  # every word reaches the root without a cycle
            seen, node = set(), i
            while node:
                assert node not in seen, s.conllu("cycle")
                seen.add(node)
                node = s.heads[node - 1]
        assert s.words[-1] == "." and s.relations[-1] == "punct"


def test_gold_labels_agree_with_the_words(sentences):
    for s in sentences:
        root = s.heads.index(0)
        verb = s.words[root]
        children = collections.defaultdict(list)
        for i, h in enumerate(s.heads):
            children[h - 1].append(i)
        subject = next(i for i in children[root] if s.relations[i] == "nsubj")
        plural_subject = s.words[subject] in PLURAL_NOUNS or s.words[subject] == "they"
        assert s.subject_number == ("NNS" if plural_subject else "NN")
        if s.tense == "PAST":
            assert verb in PAST_FORMS
        else:
            assert verb in (PRESENT_PLURAL if plural_subject else PRESENT_SINGULAR)
        objects = [i for i in children[root] if s.relations[i] == "obj"]
        if s.object_number is None:
            assert objects == []
        else:
            (obj,) = objects
            assert s.words[obj] in (PLURAL_NOUNS if s.object_number == "NNS" else SINGULAR_NOUNS)
        first = s.upos[0]
        expected_first = {"ADVP_NP_VP_.": "ADV", "PP_NP_VP_.": "ADP", "SBAR_NP_VP_.": "SCONJ", "CC_NP_VP_.": "CCONJ"}
        if s.top_constituents in expected_first:
            assert first == expected_first[s.top_constituents]
        assert (s.top_constituents == "S_CC_S_.") == any(s.relations[i] == "conj" for i in children[root])


def test_label_balance_and_relation_inventory(sentences):
    tenses = collections.Counter(s.tense for s in sentences)
    assert 0.5 < tenses["PAST"] / len(sentences) < 0.7
    assert set(collections.Counter(s.top_constituents for s in sentences)) == set(sc.TOP_CONSTITUENTS)
    relations = {r for s in sentences for r in s.relations}
    assert {"nsubj", "obj", "det", "amod", "nummod", "nmod", "nmod:poss", "case", "obl", "advmod",
            "mark", "advcl", "cc", "conj", "flat", "punct", "root"} <= relations


def test_discourse_order_signal():
    # "finally" only opens the last sentence of a document; the first sentence is indefinite NP VP.
    for document in sc.generate_documents(300, seed=5):
        for i, s in enumerate(document):
            if s.words[0] == "finally":
                assert i == len(document) - 1
        assert document[0].top_constituents == "NP_VP_."


def test_conllu_and_text_outputs(tmp_path):
    count = sc.write_corpus(tmp_path / "c.txt", 20, seed=1, conllu_path=tmp_path / "c.conllu")
    documents = list(read_documents([str(tmp_path / "c.txt")]))
    assert len(documents) == 20 and sum(len(d) for d in documents) == count
    blocks = (tmp_path / "c.conllu").read_text().strip().split("\n\n")
    assert len(blocks) == count
    rows = [line.split("\t") for line in blocks[0].splitlines() if not line.startswith("#")]
    assert all(len(r) == 10 for r in rows)
    assert documents[0][0] == blocks[0].splitlines()[1].removeprefix("# text = ")


def test_feeds_the_pretraining_pipeline(tmp_path):
    sc.write_corpus(tmp_path / "c.txt", 400, seed=2)
    proto = train_sentencepiece([str(tmp_path / "c.txt")], vocab_size=500)
    (tmp_path / "v.model").write_bytes(proto)
    config = InstanceConfig(vocabulary_size=Tokenizer(proto).vocabulary_size, dupe_factor=2)
    report = create_pretraining_data([str(tmp_path / "c.txt")], str(tmp_path / "v.model"), str(tmp_path / "out"),
                                     config, num_shards=2, workers=1, progress=False)
    assert report["documents"]["total"] == 400
    assert report["instances"]["total"] > 400
    assert abs(report["masked_fraction"] - 0.2) < 0.02


def test_the_command_writes_two_new_files_or_replaces_them_with_overwrite(tmp_path, capsys):
    """--output (and --conllu) are refused where they would replace a user's file without --overwrite, name the
    same file twice, or are a folder or a pipe; a link to a file still to be made is written where it points."""
    from pipelines import synthetic_corpus as command

    mine = tmp_path / "mine.txt"
    mine.write_text("my own corpus\n")
    for argv, message in [
        (["--output", str(mine)], rf"--output {mine} exists; pass --overwrite to replace it"),
        (["--output", str(tmp_path / "a.txt"), "--conllu", str(mine)], rf"--conllu {mine} exists; pass --overwrite"),
        (["--output", str(tmp_path / "a.txt"), "--conllu", str(tmp_path / "a.txt")], r"--conllu \S*a.txt is --output "
                                                                                     r"\S*a.txt: give two files"),
        (["--output", str(tmp_path)], rf"--output {tmp_path} is a folder: give a file name"),
        (["--output", str(mine / "x.txt")], rf"^error: {mine} is a file, not a directory$"),
        (["--output", ""], r"--output must be a path, got '': an empty path names no file"),
        (["--output", str(tmp_path / "a.txt"), "--conllu", str(tmp_path / "a.txt" / "gold.conllu")],
         r"--conllu \S*a.txt/gold.conllu lies under --output \S*a.txt, which is written as a file: give two files side "
         r"by side, e.g. \S*/gold.conllu"),
        (["--output", str(tmp_path / ("n" * 250))], r"File name too long: --output \S*nnnn leaves no room for the "
                                                    r"hidden files written beside it; give it a name of at most 230 "
                                                    r"characters"),
    ]:
        with pytest.raises(SystemExit, match=message):
            command.main(argv + ["--documents", "2"])
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(SystemExit, match=r"pipe is not a regular file \(a pipe or a device\)"):
        command.main(["--output", str(tmp_path / "pipe"), "--documents", "2"])
    assert mine.read_text() == "my own corpus\n" and not (tmp_path / "a.txt").exists()
    command.main(["--output", str(mine), "--documents", "2", "--overwrite"])
    assert mine.read_text() != "my own corpus\n" and "wrote 2 documents" in capsys.readouterr().out
    (tmp_path / "link.txt").symlink_to(tmp_path / "later" / "corpus.txt")
    command.main(["--output", str(tmp_path / "link.txt"), "--documents", "2"])
    assert (tmp_path / "later" / "corpus.txt").read_text() == mine.read_text() and (tmp_path / "link.txt").is_symlink()
