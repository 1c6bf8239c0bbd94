"""Normalization and the SentencePiece vocabulary: Python and in-graph agree on real text."""

import re

import numpy as np
import pytest
import sentencepiece as spm
import tensorflow as tf

from pipelines import normalization, train_tokenizer
from pipelines.tokenizer import MASK_ID, SPECIAL_TOKENS, UNK_ID, WORD_START, Tokenizer, train_sentencepiece

UNICODE_CASES = [
    "Crème Brûlée  Ⅻ ﬁ", "İstanbul ΟΔΟΣ", "a\u00a0b\u2003c\u3000d", "  x  ", "ß Æ ø Ł",
    "\u0301abc", "日本語のテキスト", "x\x85y\x1cz", "", "tab\there\nnewline", "Ａｂｃ１２３",
    "the key\x00 he remembered", "\x00", "a\x00\x00b\x07c\x1bd",  # NUL ends C strings in graph ops
]


@pytest.fixture(scope="module")
def wiki_lines(shared_data):
    folder = shared_data / "wikipedia_en_sample"
    return [line.rstrip("\n") for name in ("wiki_en_train.txt", "wiki_en_valid.txt")
            for line in open(folder / name, encoding="utf-8")]


def test_normalization_examples():
    assert normalization.normalize("  Crème\u00a0BRÛLÉE\t\tÀ la  carte ") == "creme brulee a la carte"
    assert normalization.normalize("ﬁ Ⅻ Ａ") == "fi xii a"  # NFKD compatibility forms
    assert normalization.normalize("\u2003\u3000") == ""


def test_the_overlap_checks_sentences_are_the_same_however_the_lines_are_cut():
    """The overlap check's units (`overlap.Sentences`): the lines' words as one stream, a sentence ending after . ! ?
    (and a closing quote), at a blank line, or every CHUNK words; a one-word sentence (an abbreviation) goes with
    the next. Lines joined, split mid-sentence or hard-wrapped give the same sentences."""
    from albert_act.base import overlap

    def sentences(lines):
        stream = overlap.Sentences()
        return [s for line in lines for s in stream.feed(line)] + stream.end()

    text = 'He said "no." Then he left. Mr. Smith came! Yes? ok'
    expected = ['He said "no."', "Then he left.", "Mr. Smith came!", "Yes? ok"]
    assert sentences([text]) == expected == sentences(["He said", '"no." Then he left. Mr.', "Smith", "came! Yes? ok"])
    assert sentences(["3.5 is a number, e.g. this", "", "References"]) == ["3.5 is a number, e.g.", "this", "References"]
    assert sentences([" ".join(["word"] * 90)]) == [" ".join(["word"] * 40)] * 2 + [" ".join(["word"] * 10)]
    assert overlap.sentence_keys(["Thank you."]) == overlap.sentence_keys(["Yes? ok"]) == []  # (under MIN_WORDS)
    assert overlap.sentence_keys(["Thank you. See you at noon."]) == [overlap.unit_key("See you at noon.")]


def test_two_dialogues_that_share_stock_replies_are_no_copy(tmp_path):
    """Two different scenes of 20 and 30 lines sharing 11 replies ("Yes.", "Thank you.") were refused as copies:
    sentences of fewer than `overlap.MIN_WORDS` words are any text's, and not compared."""
    from albert_act.base import overlap

    stock = ["Yes.", "No.", "Thank you.", "Okay.", "What?", "Sure.", "Really?", "Good night.", "Come in.", "Why?", "Hi."]
    one = stock + [f"The first scene says line {i} of its own." for i in range(9)]
    two = stock + [f"In the second scene someone says line {i}." for i in range(19)]
    units = {name: overlap.sentence_keys(lines) for name, lines in (("one", one), ("two", two))}
    assert overlap.check_units_once(units, "sentences", "WHY") == []


def test_whitespace_table_is_pythons_isspace():
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    assert normalization._PY_WHITESPACE.fullmatch(spaces)
    assert all(normalization._PY_WHITESPACE.fullmatch(c) for c in spaces)
    assert sum(b - a + 1 for a, b in normalization.WHITESPACE_RANGES) == len(spaces)


def test_python_and_graph_normalization_agree(wiki_lines):
    lines = wiki_lines + UNICODE_CASES
    graph = [s.decode("utf-8") for s in normalization.normalize_tensor(tf.constant(lines)).numpy()]
    mismatches = [(a, b) for a, b in zip((normalization.normalize(s) for s in lines), graph) if a != b]
    assert mismatches == []


def test_python_and_tensorflow_text_ids_agree_on_wikipedia(wiki_tokenizer, wiki_lines):
    lines = wiki_lines + UNICODE_CASES
    python_ids = wiki_tokenizer.encode(lines)
    graph_ids = wiki_tokenizer.graph_tokenizer()(tf.constant(lines)).to_list()
    mismatched = [line for line, a, b in zip(lines, python_ids, graph_ids) if a != b]
    assert len(lines) > 85000 and mismatched == []


def test_a_nul_byte_is_a_space_in_python_and_in_the_graph(wiki_tokenizer):
    text = "the key\x00 he remembered"
    assert normalization.normalize(text) == "the key he remembered"
    python_ids = wiki_tokenizer.encode([text])[0]
    assert wiki_tokenizer.graph_tokenizer()(tf.constant([text])).to_list()[0] == python_ids
    assert python_ids == wiki_tokenizer.encode(["the key he remembered"])[0]  # nothing cut at the NUL


def test_graph_tokenizer_inside_dataset_map(wiki_tokenizer):
    texts = ["The Quick brown fox.", "Élan vital", "x"]
    graph = wiki_tokenizer.graph_tokenizer()
    dataset = tf.data.Dataset.from_tensor_slices(texts).map(graph)
    assert [t.numpy().tolist() for t in dataset] == wiki_tokenizer.encode(texts)


def _ud_texts(shared_data, split="test"):
    path = shared_data / "ud_english_ewt" / f"en_ewt-ud-{split}.conllu"
    return [line[len("# text = "):].strip() for line in open(path, encoding="utf-8") if line.startswith("# text = ")]


def test_the_vocabulary_covers_english(shared_data, wiki_tokenizer):
    # The CLI's defaults: byte fallback, and ASCII punctuation kept as pieces however rare in Wikipedia.
    texts = _ud_texts(shared_data)
    exclaimed = [t for t in texts if t.endswith(("?", "!"))]
    for group in (texts, exclaimed):
        ids = [i for row in wiki_tokenizer.encode(group) for i in row]
        assert len(ids) > 3000 and ids.count(UNK_ID) / len(ids) <= 0.001
    for character in "?!@#$%&*+=<>[]{}|~^`\\€£…’“”":
        ids = wiki_tokenizer.encode([f"x{character}y"])[0]
        assert UNK_ID not in ids, character
    assert wiki_tokenizer.id_to_piece(wiki_tokenizer.encode(["why?"])[0])[-1] == "?"  # a piece, not its byte
    assert [wiki_tokenizer.processor.is_byte(i) for i in wiki_tokenizer.encode(["漢"])[0]].count(True) == 3


def test_a_served_text_has_the_pieces_of_its_record(shared_data, wiki_tokenizer, tmp_path):
    # A record masks a piece of the whole text's encoding; the served text with "[MASK]" for that word
    # must give the same ids, punctuation right after the mask included ("the [MASK]." is not "▁ ."),
    # in this process and from a SavedModel loaded back (where its two SentencePiece models once
    # became one: the one loaded first).
    from pipelines.instances import word_starts
    from pipelines.packing import TextEncoder

    table, processor = wiki_tokenizer.word_start_table(), wiki_tokenizer.processor
    texts, expected, glued = [], [], 0
    for sentence in _ud_texts(shared_data)[:600]:
        ids = wiki_tokenizer.encode([sentence])[0]
        if any(processor.is_byte(i) for i in ids):
            continue
        pieces, starts = wiki_tokenizer.id_to_piece(ids), word_starts(ids, table, processor.piece_to_id(WORD_START)) + [1]
        whole = [k for k in range(len(ids)) if starts[k] and starts[k + 1]]  # one-piece words, punctuation
        for k in whole[:: max(1, len(whole) // 3)]:
            surface = [(" [MASK]" if p.startswith(WORD_START) else "[MASK]") if j == k else p.replace(WORD_START, " ")
                       for j, p in enumerate(pieces)]
            texts.append("".join(surface).strip())
            expected.append([MASK_ID if j == k else i for j, i in enumerate(ids)])
            glued += k + 1 < len(ids) and not pieces[k + 1].startswith(WORD_START)
    encoder = TextEncoder(wiki_tokenizer.model_proto, 512)
    served = encoder.tokenize_with_masks(tf.constant(texts)).to_list()
    wrong = [(t, wiki_tokenizer.id_to_piece(s)) for t, s, e in zip(texts, served, expected)
             if s != e and not _viterbi_tie(processor, s, e)]
    ties = sum(s != e for s, e in zip(served, expected))
    assert len(texts) > 1000 and glued > 300 and wrong == [] and ties < len(texts) / 50
    assert [wiki_tokenizer.encode_with_masks(t) for t in texts] == served
    module = tf.Module()
    module.encoder = encoder
    module.tokenize = tf.function(lambda text: encoder.tokenize_with_masks(text).to_tensor(-1),
                                  input_signature=[tf.TensorSpec([None], tf.string)])
    tf.saved_model.save(module, str(tmp_path / "encoder"))
    loaded = tf.saved_model.load(str(tmp_path / "encoder")).tokenize(tf.constant(texts)).numpy()
    assert [[i for i in row if i >= 0] for row in loaded.tolist()] == served


def _viterbi_tie(processor, a, b):
    """Ids `a` and `b` differ only where one text has two segmentations of the same score (unigram
    Viterbi ties, broken by position: "iii" is "i ii" in one context and "ii i" in another)."""
    start = next(k for k, (x, y) in enumerate(zip(a + [-1], b + [-2])) if x != y)
    end = next(k for k, (x, y) in enumerate(zip(a[::-1] + [-1], b[::-1] + [-2])) if x != y)
    span_a, span_b = a[start:len(a) - end], b[start:len(b) - end]
    text = lambda ids: "".join(processor.id_to_piece(i) for i in ids)  # noqa: E731
    score = lambda ids: sum(processor.get_score(i) for i in ids)  # noqa: E731
    return text(span_a) == text(span_b) and abs(score(span_a) - score(span_b)) < 1e-4


def test_special_ids_and_word_starts(wiki_tokenizer):
    assert [wiki_tokenizer.processor.id_to_piece(i) for i in range(5)] == list(SPECIAL_TOKENS)
    assert wiki_tokenizer.vocabulary_size == 8000
    table = wiki_tokenizer.word_start_table()
    pieces = wiki_tokenizer.id_to_piece(wiki_tokenizer.encode(["the unbelievably, tall"])[0])
    starts = [bool(table[wiki_tokenizer.processor.piece_to_id(p)]) for p in pieces]
    assert starts[0] and pieces[0] == "\u2581the"
    assert starts == [p.startswith("\u2581") or p == "," for p in pieces]
    assert not all(starts)  # "unbelievably" splits into several pieces


def test_vocabulary_training_is_deterministic(shared_data, tmp_path):
    path = [str(shared_data / "wikipedia_en_sample" / "wiki_en_valid.txt")]
    first = train_sentencepiece(path, vocab_size=2000, max_sentences=3000, seed=7)
    second = train_sentencepiece(path, vocab_size=2000, max_sentences=3000, seed=7)
    other_seed = train_sentencepiece(path, vocab_size=2000, max_sentences=3000, seed=8)
    assert first == second and first != other_seed


def test_vocabulary_without_special_tokens_is_rejected(shared_data, tmp_path):
    import io

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        input=str(shared_data / "wikipedia_en_sample" / "bert_sample_text.txt"), model_writer=model,
        vocab_size=200, minloglevel=2)  # SentencePiece defaults: <unk>=0 <s>=1 </s>=2
    with pytest.raises(ValueError, match=r"plain\.model: vocabulary must have <pad> at id 0, found '<unk>'"):
        Tokenizer(model.getvalue(), source="plain.model")


def test_train_tokenizer_cli_errors(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    with pytest.raises(SystemExit, match="error: no text to train a vocabulary on"):
        train_tokenizer.main(["--input", str(empty), "--output", str(tmp_path / "v")])
    with pytest.raises(SystemExit, match="error: no file matches '.*missing.txt'"):
        train_tokenizer.main(["--input", str(tmp_path / "missing.txt"), "--output", str(tmp_path / "v")])
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nanother\nbroken \xff\xfe line\n")
    with pytest.raises(SystemExit, match=r"bad.txt line 3: not valid UTF-8"):
        train_tokenizer.main(["--input", str(bad), "--output", str(tmp_path / "v")])
    cr = tmp_path / "cr.txt"  # classic Mac line ends: one line for every reader, which would merge them all
    cr.write_bytes(b"a first sentence\ra second one\r")
    with pytest.raises(SystemExit, match=r"cr.txt: lines end in a lone CR \(classic Mac line ends\); convert them"):
        train_tokenizer.main(["--input", str(cr), "--output", str(tmp_path / "v")])
    with pytest.raises(SystemExit):  # argparse kept the second list: the first file was dropped without a word
        train_tokenizer.main(["--input", str(bad), "--input", str(cr), "--output", str(tmp_path / "v")])
    assert re.search(r"error: --input is given twice: the second list would replace the first; give all its values "
                     r"after one --input \(--input A B C\)", capsys.readouterr().err)
    corpus = tmp_path / "notes.vocab"  # a corpus named as the vocabulary's own file: read, then replaced
    corpus.write_text("A corpus of mine.\nIt has two lines.\n")
    with pytest.raises(SystemExit, match=rf"error: --input {corpus} is {corpus}, which this command writes: the input "
                                         r"would be replaced by the output"):
        train_tokenizer.main(["--input", str(corpus), "--output", str(tmp_path / "notes"), "--overwrite"])
    assert corpus.read_text() == "A corpus of mine.\nIt has two lines.\n"


def test_a_lone_cr_inside_a_text_ends_a_line(tmp_path):
    """Some lines ended by a lone CR among LF ones (classic Mac text pasted in): each is a line, as for
    Python's text files, numbered by the LF line it lies in; the same text with LF reads the same."""
    from albert_act.base import text_files

    mixed, plain = tmp_path / "mixed.txt", tmp_path / "plain.txt"
    mixed.write_bytes(b"\xef\xbb\xbfone\rtwo\nthree\r\n\rfour\r\r\nfive")
    plain.write_bytes(b"one\ntwo\nthree\n\nfour\nfive")
    assert list(text_files.read_lines(mixed)) == [(1, "one"), (1, "two"), (2, "three"), (3, ""), (3, "four"),
                                                  (4, "five")]
    assert [line for _, line in text_files.read_lines(plain)] == [line for _, line in text_files.read_lines(mixed)]
    unicode_ends = tmp_path / "unicode_ends.txt"  # U+2028, U+2029, NEL (JavaScript's, EBCDIC's line ends), and a
    unicode_ends.write_text("one\u2028two\nthree\u2029four\x85five\vsix\n", encoding="utf-8")  # vertical tab (Word's)
    assert list(text_files.read_lines(unicode_ends)) == [(1, "one"), (1, "two"), (2, "three"), (2, "four"), (2, "five"),
                                                         (2, "six")]
    with pytest.raises(ValueError, match=r"tmp.*: a folder, where a text file was expected"):
        list(text_files.read_lines(tmp_path))


def test_lines_sentencepiece_leaves_out_are_said(tmp_path, capsys):
    """SentencePiece drops lines over its length limit from training without a word: the share is said."""
    from pipelines.synthetic_corpus import write_corpus
    from pipelines.tokenizer import MAX_LINE_BYTES, train_sentencepiece

    write_corpus(tmp_path / "text.txt", 40, seed=3)
    with open(tmp_path / "text.txt", "a") as f:
        f.write("word " * (MAX_LINE_BYTES // 4) + "\n")
    train_sentencepiece([str(tmp_path / "text.txt")], vocab_size=300, model_type="bpe")
    assert re.search(rf"note: 1 line\(s\) longer than {MAX_LINE_BYTES} bytes, \d+% of the text, are left out of the "
                     r"vocabulary's training", capsys.readouterr().err)


def test_graph_tokenizer_is_a_tf_module_with_the_model(wiki_tokenizer):
    graph = wiki_tokenizer.graph_tokenizer()
    assert isinstance(graph, tf.Module)
    ids = graph(tf.constant([["A b"], ["c"]]))  # any shape of strings
    assert ids.shape[:2] == (2, 1)
    assert np.array_equal(graph(tf.constant(["hello"])).to_list()[0], wiki_tokenizer.encode(["hello"])[0])


def test_bpe_vocabulary_of_the_embedded_corpus(tmp_path):
    """The demo's vocabulary: BPE keeps the grammar's words whole where unigram splits the most frequent
    into letters (google/sentencepiece issue 967), and Python and in-graph encodings stay identical."""
    from pipelines import synthetic_corpus

    corpus = tmp_path / "corpus.txt"
    synthetic_corpus.write_corpus(corpus, 3000, seed=0)
    lines = [line for line in corpus.read_text().splitlines() if line]
    words = "near the a she their afterwards".split()
    pieces = {}
    for model_type in ("unigram", "bpe"):
        tokenizer = Tokenizer(train_sentencepiece([str(corpus)], 1000, model_type=model_type))
        pieces[model_type] = [tokenizer.id_to_piece(ids) for ids in tokenizer.encode(words)]
        if model_type == "bpe":
            assert tokenizer.graph_tokenizer()(tf.constant(lines + UNICODE_CASES)).to_list() == \
                tokenizer.encode(lines + UNICODE_CASES)
    assert pieces["bpe"] == [["\u2581" + w] for w in words]
    assert sum(len(p) > 1 for p in pieces["unigram"]) >= 3  # the upstream behaviour the demo avoids
    with pytest.raises(ValueError, match="model_type must be one of"):
        train_sentencepiece([str(corpus)], 1000, model_type="wordpiece")


def test_a_mask_typed_in_another_form_is_a_mask(wiki_tokenizer):
    # After the model's own normalization (NFKD, accents stripped, lowercase) these are "[mask]".
    plain = wiki_tokenizer.encode_with_masks("The cat [MASK] on the mat.")
    for typed in ("The cat ［ＭＡＳＫ］ on the mat.", "The cat [MÁSK] on the mat.", "The cat [mask] on the mat."):
        assert wiki_tokenizer.encode_with_masks(typed) == plain, typed
    from pipelines.packing import TextEncoder
    import tensorflow as tf

    encoder = TextEncoder(wiki_tokenizer.model_proto, 32)
    graph = encoder.tokenize_with_masks(tf.constant(["The cat ［ＭＡＳＫ］ on the mat.", "The cat [MÁSK] on the mat."]))
    assert graph.to_list() == [plain, plain]


def test_bpe_trains_on_text_without_every_required_character(tmp_path):
    """The CLI's default --required_chars (ASCII punctuation) on a text that lacks some of them: SentencePiece's
    BPE trainer aborts the process on a required character of frequency 0, so only the text's own are passed."""
    text = tmp_path / "plain.txt"
    text.write_text("".join(f"the cat number {i} sat on the mat and looked at the dog\n" for i in range(200)))
    train_tokenizer.main(["--input", str(text), "--output", str(tmp_path / "bpe"), "--vocab_size", "300",
                          "--model_type", "bpe"])
    pieces = spm.SentencePieceProcessor(model_file=str(tmp_path / "bpe.model")).encode("the cat sat", out_type=str)
    assert pieces and "".join(pieces).replace("\u2581", " ").strip() == "the cat sat"
    # unigram keeps every required character as a piece, present in the text or not
    train_tokenizer.main(["--input", str(text), "--output", str(tmp_path / "unigram"), "--vocab_size", "120",
                          "--no-byte_fallback"])
    unigram = spm.SentencePieceProcessor(model_file=str(tmp_path / "unigram.model"))
    assert "@" not in text.read_text() and unigram.piece_to_id("@") != unigram.unk_id()


def _alive(pid):
    """Whether the process `pid` runs (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return "zombie" not in f.read().lower()
    except FileNotFoundError:
        return False


def _children(pid):
    """The pids of a process's children (Linux's /proc)."""
    import glob

    found = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        with open(path) as f:
            found += [int(child) for child in f.read().split()]
    return found


@pytest.mark.parametrize("stop", ["SIGINT"] + [pytest.param(s, marks=pytest.mark.slow) for s in ("SIGTERM", "SIGHUP",
                                                                                                   "SIGKILL")])
def test_a_stop_while_sentencepiece_trains_is_at_once(stop, shared_data, tmp_path):
    """SentencePiece's trainer holds the interpreter until it has finished (15 s on this text): it runs
    in a child process, so Ctrl-C, SIGTERM or SIGHUP during training stops the command at once, with its one
    line, and takes the child with it; a SIGKILL of the command ends the child too. No vocabulary is
    written."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    command = [sys.executable, "-m", "pipelines.train_tokenizer", "--input",
               str(shared_data / "wikipedia_en_sample" / "wiki_en_train.txt"), "--output", str(tmp_path / "vocab"),
               "--vocab_size", "8000"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,  # (SIGHUP as a terminal
                               preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL))  # leaves it: not nohup's)
    try:
        deadline = time.monotonic() + 120
        while not _children(process.pid) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        trainers = _children(process.pid)
        assert trainers, "no trainer process started"
        time.sleep(1.0)  # the trainer has its sentences: SentencePiece is training
        signalled = time.monotonic()
        os.killpg(process.pid, getattr(signal, stop))  # as a terminal's Ctrl-C: the command's group, not the trainer's
        _, err = process.communicate(timeout=60)
        waited = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    if stop == "SIGKILL":
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130, err
        assert err.strip().splitlines()[-1] == "stopped: the vocabulary was not trained; re-run the same command"
    assert waited < 10, waited  # the training alone takes longer
    for _ in range(50):  # a killed parent's child gets its SIGKILL from the kernel a moment later
        if not any(map(_alive, trainers)):
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the trainer {trainers} outlived the command")
    assert not list(tmp_path.glob("vocab*"))


def test_a_full_disk_while_writing_the_pair_leaves_the_earlier_pair_whole(tmp_path, monkeypatch):
    """The .model and .vocab are both written beside their places before either is renamed in: a full disk while
    writing the .vocab left a new .model beside the old .vocab (and, in a new folder, a .model without its .vocab)."""
    import errno
    from pathlib import Path

    from albert_act.base import outputs
    from pipelines.tokenizer import Tokenizer

    shipped = (Path(__file__).resolve().parents[1] / "saved_models" / "albert_act_english" / "1" / "assets" /
               "vocab.model").read_bytes()
    (tmp_path / "sp.model").write_bytes(b"old model")
    (tmp_path / "sp.vocab").write_bytes(b"old vocab")
    write_file = outputs.write_file

    def full(path, data):
        if path.endswith(".vocab"):
            raise OSError(errno.ENOSPC, "No space left on device", path)
        write_file(path, data)

    monkeypatch.setattr(outputs, "write_file", full)
    with pytest.raises(OSError):
        train_tokenizer.write_vocabulary(shipped, str(tmp_path / "sp"))
    assert (tmp_path / "sp.model").read_bytes() == b"old model" and (tmp_path / "sp.vocab").read_bytes() == b"old vocab"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sp.model", "sp.vocab"]
    monkeypatch.setattr(outputs, "write_file", write_file)
    assert train_tokenizer.write_vocabulary(shipped, str(tmp_path / "sp")).vocabulary_size == 8000
    assert Tokenizer.from_file(str(tmp_path / "sp.model")).vocabulary_size == 8000
    assert len((tmp_path / "sp.vocab").read_text().splitlines()) == 8000


@pytest.mark.parametrize("chars, said", [("\udcff", "holds the byte 0xff, which is not UTF-8"),
                                         ("ab\t", "holds '\\t', whitespace, which the normalization makes a space"),
                                         *[(chars, f"holds '{chars}', read as its characters one by one, not as the "
                                                   "escape or class it writes") for chars in (
                                             "U+00E9", "&eacute;", "%C3%A9%C3%B1", "{a..z}")],
                                         ("\U0001f600-\U0001f64f", "holds '\U0001f600-\U0001f64f', which is read as "
                                          "the three characters \U0001f600, - and \U0001f64f, not as a range: write "
                                          "the characters out (\"$(python3 -c 'print(\"\".join(map(chr, range(0x1F600, "
                                          "0x1F64F + 1))))')\", 80 of them)"),
                                         ("\u00e9-\u00eb", "holds '\u00e9-\u00eb', which is read as the three "
                                          "characters \u00e9, - and \u00eb, not as a range: write the characters out "
                                          "(\u00e9\u00ea\u00eb)")])
def test_required_chars_that_no_piece_can_hold_are_refused(tmp_path, capsys, chars, said):
    """A byte that is not UTF-8 (a Latin-1 terminal's) or whitespace in --required_chars: refused before training.
    So are a code point, an HTML entity, URL escapes and bash's {a..z} (round 46 A24 to A27), and a range of any
    characters (A28, A29: an emoji's block, a script's), written as the characters they stand for."""
    from pipelines import train_tokenizer

    (tmp_path / "text.txt").write_text("The river ran past the mill.\n")
    with pytest.raises(SystemExit) as stop:
        train_tokenizer.main(["--input", str(tmp_path / "text.txt"), "--output", str(tmp_path / "v"),
                              f"--required_chars={chars}"])
    assert stop.value.code == 2 and f"argument --required_chars: {said}" in capsys.readouterr().err
    assert not (tmp_path / "v.model").exists()


def test_required_chars_of_an_emoji_sequence_keep_its_joiners():
    """A zero-width joiner inside an emoji's sequence is the sequence's own (round 42 A122: refused as pasted); one at
    either end, or a byte-order mark, is refused."""
    import argparse

    from pipelines import train_tokenizer

    family = "\U0001F468\u200d\U0001F469\u200d\U0001F467"
    assert train_tokenizer._required_chars(family) == family
    for pasted in ("\u200dab", "ab\u200d", "\ufeffab"):
        with pytest.raises(argparse.ArgumentTypeError, match=r"an invisible character"):
            train_tokenizer._required_chars(pasted)


def test_japanese_sentences_repeated_are_noted(tmp_path, capsys):
    """A Japanese sentence, one run of letters with no space, ends at '。' and counts a word each two characters
    (round 42 A33: a file of 3 sentences written 50 times gave no note)."""
    from pipelines import train_tokenizer

    (tmp_path / "ja.txt").write_text("東京は日本の首都です。\n大阪は大きな都市です。\n京都には古い寺がたくさんあります。\n" * 50)
    train_tokenizer.main(["--input", str(tmp_path / "ja.txt"), "--output", str(tmp_path / "v"), "--vocab_size", "300",
                          "--model_type", "bpe"])
    assert "note: 147 of the 150 sentences of " in capsys.readouterr().out
