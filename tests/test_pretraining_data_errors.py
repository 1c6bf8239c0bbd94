"""Bad input to the pre-training data tool: clear errors, and nothing half-written left behind."""

import dataclasses
import re
import unicodedata
from pathlib import Path

import pytest

from conftest import create_shards, stop_at_rename
from pipelines import create_pretraining_data as cpd
from pipelines.instances import InstanceConfig


def _run(vocab, inputs, output_dir, **kwargs):
    return create_shards(vocab, inputs, output_dir, num_shards=2, **kwargs)


def _documents(count):
    return "".join(f"Document {d} starts here with words.\nIt has a second sentence too.\n\n" for d in range(count))


def _assert_nothing_written(output_dir):
    leftovers = sorted(p.name for p in output_dir.rglob("*")) if output_dir.exists() else []
    assert leftovers == []


def test_a_device_is_no_text_file():
    """/dev/zero as --input: one line without end, read until memory ran out; refused by name (a pipe is read)."""
    from albert_act.base import text_files

    with pytest.raises(ValueError, match=r"^/dev/zero is a device, not a text file: give a file \(or a pipe\)$"):
        text_files.expand_patterns(["/dev/zero"])


def test_missing_file_and_empty_pattern(wiki_vocab, tmp_path):
    with pytest.raises(ValueError, match=r"no file matches '.*nowhere/\*\.txt'"):
        _run(wiki_vocab, [tmp_path / "nowhere" / "*.txt"], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")
    (tmp_path / "texts").mkdir()  # a link left pointing nowhere among the files a glob matches
    (tmp_path / "texts" / "a.txt").write_text(_documents(3))
    (tmp_path / "texts" / "b.txt").symlink_to(tmp_path / "gone.txt")
    with pytest.raises(ValueError, match=r"texts/b.txt: a symbolic link to \S+gone.txt, which does not exist \(matched "
                                         r"by '\S+texts/\*.txt'\); remove the link, or point it at the file"):
        _run(wiki_vocab, [str(tmp_path / "texts" / "*.txt")], tmp_path / "out")
    (tmp_path / "texts" / "b.txt").unlink()  # two links to each other: a loop, not a missing file (round 44 A109)
    (tmp_path / "texts" / "b.txt").symlink_to("c.txt")
    (tmp_path / "texts" / "c.txt").symlink_to("b.txt")
    with pytest.raises(ValueError, match=r"texts/b.txt: a symbolic link in a loop \(b.txt -> c.txt -> b.txt\) \(matched "
                                         r"by '\S+texts/\*.txt'\), which leads to no file; remove the link, or point it "
                                         r"at the file$"):
        _run(wiki_vocab, [str(tmp_path / "texts" / "*.txt")], tmp_path / "out")
    (tmp_path / "texts" / "c.txt").unlink()
    (tmp_path / "texts" / "b.txt").unlink()  # git-annex's link, its content not fetched (round 42 A120)
    (tmp_path / "texts" / "b.txt").symlink_to("../.git/annex/objects/Xz/Qq/SHA256E-s92--abc.txt/SHA256E-s92--abc.txt")
    with pytest.raises(ValueError, match=r"texts/b.txt: a git-annex link to \S+, whose content was not fetched \(matched "
                                         r"by '\S+'\): fetch it \(git annex get \S+texts/b.txt\)"):
        _run(wiki_vocab, [str(tmp_path / "texts" / "*.txt")], tmp_path / "out")


def test_empty_corpus(wiki_vocab, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n   \n\n")
    with pytest.raises(ValueError, match=r"empty corpus: no non-blank line in \[.*empty.txt'\]"):
        _run(wiki_vocab, [empty], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")
    one_word = tmp_path / "one_word.txt"  # 20,000 letters: long, but one word, which no pair can cut in two
    one_word.write_text("a" * 20000 + "\n")
    with pytest.raises(ValueError, match=r"no training instance from 1 documents .*: \d+ chunk\(s\) of one word each, "
                                         r"which a sentence-order pair cannot cut in two, were dropped"):
        _run(wiki_vocab, [one_word], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_invalid_utf8_fails_naming_file_and_line_and_leaves_nothing(wiki_vocab, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(_documents(500).encode() + b"caf\xe9 in latin-1\n" + _documents(3).encode())
    bad_line = _documents(500).count("\n") + 1
    with pytest.raises(ValueError, match=rf"corpus.txt line {bad_line}: not valid UTF-8 .*--skip_invalid_utf8"):
        _run(wiki_vocab, [corpus], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_skip_invalid_utf8_counts_the_lines(wiki_vocab, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"Good first line here.\n\xff\xfe broken\nGood last line here.\n\nAnother doc.\nYes it is.\n")
    report = _run(wiki_vocab, [corpus], tmp_path / "out", skip_invalid_utf8=True)
    assert report["invalid_utf8_lines_skipped"] == [f"{corpus} line 2"]
    assert report["documents"]["total"] == 2 and report["instances"]["total"] >= 2
    latin1 = tmp_path / "latin1.txt"  # every line skipped: said so, not "empty corpus"
    latin1.write_bytes("".join(f"Caf\u00e9 num\u00e9ro {i} au bord de la rivi\u00e8re.\n" for i in range(30)).encode("latin-1"))
    with pytest.raises(ValueError, match=r"no line left to read in \[.*latin1.txt'\]: --skip_invalid_utf8 skipped all 30 "
                                         r"lines as not UTF-8 \(.*latin1.txt line 1 first\): a binary file, or text in "
                                         r"another encoding\?"):
        _run(wiki_vocab, [latin1], tmp_path / "out_latin1", skip_invalid_utf8=True)


def test_a_copy_saved_with_other_line_ends_is_the_same_text(wiki_vocab, tmp_path):
    """A corpus and its copy with CRLF line ends and a byte-order mark: each document would be in twice, one
    copy perhaps held out while its twin trains; refused as a byte-identical copy is. Two empty files are none."""
    corpus, copy = tmp_path / "corpus.txt", tmp_path / "windows.txt"
    corpus.write_text(_documents(5))
    copy.write_bytes(b"\xef\xbb\xbf" + _documents(5).replace("\n", "\r\n").encode())
    with pytest.raises(ValueError, match=r"windows.txt holds the same text as \S*corpus.txt \(a copy: line ends, blank "
                                         r"lines, a byte-order mark and the Unicode form aside\): its sentences would be "
                                         r"both trained on and held out"):
        _run(wiki_vocab, [corpus, copy], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_copies_saved_otherwise_and_texts_that_share_their_start_are_refused(tmp_path):
    """A copy is the same text as its reader sees it: without its final newline, with blank lines added, in
    another Unicode form (NFD, as macOS writes names). Two texts that begin alike (a corpus and its first part,
    or a corpus grown from another) share their documents: refused, said as such. Unlike texts pass."""
    from albert_act.base import text_files

    lines = [f"Caf\u00e9 number {i} serves cr\u00e8me br\u00fbl\u00e9e to {i % 7} guests." for i in range(4000)]
    text = "\n".join(lines) + "\n"  # ~230,000 characters: more than SHARED_START
    files = {"corpus.txt": text, "no_end.txt": text.rstrip("\n"), "blank.txt": "\n\n" + text.replace("\n", "\n\n"),
             "nfd.txt": unicodedata.normalize("NFD", text), "part.txt": "\n".join(lines[:2000]) + "\n",
             "grown.txt": text + "A sentence only this file has.\n", "other.txt": text.replace("Caf", "Bar"),
             "short.txt": "One short line.\n", "short_nfd.txt": "One short line."}
    for name, content in files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    path = {name: str(tmp_path / name) for name in files}
    for copy in ("no_end.txt", "blank.txt", "nfd.txt"):
        with pytest.raises(ValueError, match=rf"--input \S*{copy} holds the same text as \S*corpus.txt \(a copy"):
            text_files.check_each_file_once([path["corpus.txt"], path[copy]], "its documents would be twice")
    for part in ("part.txt", "grown.txt"):
        with pytest.raises(ValueError, match=rf"--input \S*{part} and \S*corpus.txt begin with the same text \(their "
                                             r"first 65,536 characters at least\), then differ: one holds a part of the "
                                             r"other. For the text they share, its documents would be twice; give each "
                                             r"text once \(cut the shared part from one of them\)"):
            text_files.check_each_file_once([path["corpus.txt"], path[part]], "its documents would be twice")
    with pytest.raises(ValueError, match=r"short_nfd.txt holds the same text as \S*short.txt"):
        text_files.check_each_file_once([path["short.txt"], path["short_nfd.txt"]], "twice")
    text_files.check_each_file_once([path["corpus.txt"], path["other.txt"], path["short.txt"]], "twice")
    assert text_files.text_key(path["corpus.txt"]) != text_files.text_key(path["grown.txt"])
    # a short text (under SHARED_START characters) that another begins with: its documents are in both
    (tmp_path / "grown_short.txt").write_text("\n".join(lines[:20]) + "\nAnd then a line of its own.\n")
    path["first_20.txt"] = str(tmp_path / "first_20.txt")
    (tmp_path / "first_20.txt").write_text("\n".join(lines[:20]) + "\n")
    for files in ([path["first_20.txt"], str(tmp_path / "grown_short.txt")], [path["first_20.txt"], path["corpus.txt"]]):
        with pytest.raises(ValueError, match=rf"--input {files[1]} begins with all the text of {files[0]}, then goes "
                                             r"on: for that text, twice; give each text once \(cut it from one of them\)"):
            text_files.check_each_file_once(files, "twice")
    text_files.check_each_file_once([str(tmp_path / "grown_short.txt"), path["short.txt"], path["other.txt"]], "twice")
    # CoNLL-U: a copy whose comment lines (sentence ids) differ holds the same sentences
    sentence = "1\tWords\tword\tNOUN\tNNS\t_\t0\troot\t_\t_\n\n"
    (tmp_path / "a.conllu").write_text("# sent_id = a-1\n" + sentence)
    (tmp_path / "b.conllu").write_text("# sent_id = b-1\n# text = Words\n" + sentence)
    with pytest.raises(ValueError, match=r"--conllu \S*b.conllu holds the same text as \S*a.conllu"):
        text_files.check_each_file_once([str(tmp_path / "a.conllu"), str(tmp_path / "b.conllu")], "twice", "--conllu",
                                        comments="#")
    (tmp_path / "blank_only.txt").write_text("\n \n\t\n")
    assert text_files.text_key(str(tmp_path / "blank_only.txt")) is None


def test_a_short_text_repeated_among_many_files_is_the_corpus_own(tmp_path, capsys):
    """A corpus of one short document per file (reviews, posts) repeats a few of them, or a short one opens a
    longer one: among 100 files and more, that is noted and read; among a few, it is a copy given twice."""
    from albert_act.base import text_files

    paths = []
    for i in range(120):
        paths.append(tmp_path / f"doc{i:03d}.txt")
        paths[-1].write_text(f"Review {i} says the room number {i} was clean and quiet.\n")
    paths[7].write_text(paths[3].read_text())  # the same one-sentence review twice
    paths[9].write_text(paths[4].read_text() + "And breakfast was good.\n")  # a short one opening a longer one
    text_files.check_each_file_once([str(p) for p in paths], "twice")
    assert re.search(r"note: 2 of the 120 files of --input repeat the short text \(under 500 characters\) of "
                     r"another, or begin with it \(e.g. \S+doc007.txt: \S+doc003.txt\): read as they are",
                     capsys.readouterr().out)
    with pytest.raises(ValueError, match=r"doc007.txt holds the same text as \S+doc003.txt"):
        text_files.check_each_file_once([str(p) for p in paths[:10]], "twice")


def test_a_pipe_is_read_once(wiki_vocab, tmp_path):
    """--input a FIFO (or /dev/stdin fed by a pipe): the check for a file given twice read its start, so the work
    found the corpus empty, or waited for ever on a FIFO whose writer had gone. A pipe is read once, by the work."""
    import os
    import threading

    fifo = tmp_path / "corpus.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(_documents(40)), daemon=True)
    writer.start()
    report = _run(wiki_vocab, [fifo], tmp_path / "out")
    writer.join(timeout=60)
    assert report["documents"]["total"] == 40 and not writer.is_alive()


def test_output_directory_with_shards_is_refused(wiki_vocab, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_documents(5))
    _run(wiki_vocab, [corpus], tmp_path / "out")
    before = sorted(p.name for p in (tmp_path / "out").iterdir())
    with pytest.raises(ValueError, match=r"out already holds 3 shard\(s\) .*choose a new directory"):
        _run(wiki_vocab, [corpus], tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == before


def test_vocabulary_mismatch_and_missing_vocabulary(wiki_vocab, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_documents(2))
    with pytest.raises(ValueError, match=r"vocab.model: no such file"):
        _run(str(tmp_path / "vocab.model"), [corpus], tmp_path / "out")
    config = InstanceConfig(vocabulary_size=30000)
    with pytest.raises(ValueError, match=r"config.vocabulary_size=30000 but .*wiki.model has 8000 pieces"):
        cpd.create_pretraining_data([str(corpus)], wiki_vocab, str(tmp_path / "o"), config, progress=False)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_predictions_per_seq=20), r"max_predictions_per_seq=20 is too small for masked_lm_prob=0.2: "
                                           r"a full sequence has 125 maskable tokens and needs 25 predictions"),
        (dict(max_predictions_per_seq=127), r"max_predictions_per_seq=127 is more than a sequence of "
                                            r"max_seq_length=128 can mask \(at most 126 pieces"),
        (dict(masked_lm_prob=0.0), r"masked_lm_prob must be in \(0, 1\), got 0.0"),
        (dict(max_seq_length=4), r"max_seq_length must be >= 5 \(\[CLS\] A \[SEP\] B \[SEP\]\), got 4"),
        (dict(max_ngram=0), "max_ngram must be >= 1, got 0"),
    ],
)
def test_bad_config_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        InstanceConfig(vocabulary_size=100, **kwargs)


def test_default_max_predictions_leave_room_for_the_last_span():
    assert InstanceConfig(vocabulary_size=100).max_predictions_per_seq == 30  # ceil(1.2 * 25)
    assert InstanceConfig(vocabulary_size=100, max_predictions_per_seq=25).max_predictions_per_seq == 25
    # 1.2 x 124 would pass the 126 pieces a sequence can mask: the default stops there, and a copy
    # of the config (the held-out documents' is one) keeps it
    config = InstanceConfig(vocabulary_size=100, masked_lm_prob=0.999)
    assert (config.max_predictions_per_seq, dataclasses.replace(config, single_segment_prob=0.0).max_predictions_per_seq) == (
        126, 126)


def test_cli_reports_errors_without_a_traceback(wiki_vocab, tmp_path):
    with pytest.raises(SystemExit, match=r"^error: no file matches"):
        cpd.main(["--input", str(tmp_path / "none.txt"), "--vocab", wiki_vocab, "--output_dir", str(tmp_path / "o")])


def test_a_full_disk_is_a_message_and_leaves_nothing(wiki_vocab, tmp_path, monkeypatch):
    import errno

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_documents(3))

    def full_disk(files, tokenizer, config, staging, *args):
        (Path(staging) / "train-00000-of-00002.tfrecord").write_bytes(b"half a shard")
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(staging) / "train-00000-of-00002.tfrecord"))

    monkeypatch.setattr(cpd, "_write_shards", full_disk)
    with pytest.raises(ValueError, match=r"writing shards to .*out failed: No space left on device \(.*train-00000"):
        _run(wiki_vocab, [corpus], tmp_path / "out")
    _assert_nothing_written(tmp_path / "out")


def test_a_stop_while_the_shards_move_in_leaves_the_folder_as_it_was(wiki_vocab, tmp_path, monkeypatch):
    """Ctrl-C while the shards moved out of _incomplete/ one by one left a part of them (round 30 E214: 16 of
    1,000, 'nothing was written'): now they move in together, all or none, with the report; an earlier report stays."""
    corpus, out = tmp_path / "corpus.txt", tmp_path / "out"
    corpus.write_text(_documents(3))
    out.mkdir()
    (out / "stats.json").write_text("an earlier report")
    with monkeypatch.context() as patched:
        renames = stop_at_rename(patched, 3)
        with pytest.raises(KeyboardInterrupt):
            _run(wiki_vocab, [corpus], out)
    assert sorted(p.name for p in out.iterdir()) == ["stats.json"] and (out / "stats.json").read_text() == (
        "an earlier report") and len(renames) > 3  # (and the renames made were undone)
    _run(wiki_vocab, [corpus], out)
    assert sorted(p.name for p in out.glob("*.tfrecord")) == ["eval-00000-of-00001.tfrecord",
                                                               "train-00000-of-00002.tfrecord",
                                                               "train-00001-of-00002.tfrecord"]
    assert (out / "stats.json").read_text().startswith("{")


@pytest.mark.parametrize("name, value, words", [("eval_fraction", 0.6, r"a number in \[0, 0.5\]"),
                                                ("num_shards", 0, r"an integer in \[1, 100000\]")])
def test_the_function_and_its_flags_hold_one_rule(tmp_path, name, value, words):
    """create_pretraining_data and its command line check the writing's settings by the same rule
    (RUN_RULES), before reading any file."""
    with pytest.raises(ValueError, match=rf"^{name} must be {words}, got {value}$"):
        cpd.create_pretraining_data([str(tmp_path / "none.txt")], str(tmp_path / "none.model"), str(tmp_path / "out"),
                                    InstanceConfig(vocabulary_size=400), **{name: value}, progress=False)
    assert cpd.FLAG_RULES[name] == cpd.RUN_RULES[name]
    _assert_nothing_written(tmp_path / "out")


def test_too_many_shards_for_the_open_files_limit_and_a_text_too_short_say_what_helps(wiki_vocab, tmp_path, monkeypatch):
    import errno

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(_documents(3))

    def too_many(*args):
        raise OSError(errno.EMFILE, "Too many open files", str(tmp_path / "out" / "train-01021-of-100000.tfrecord"))

    with monkeypatch.context() as patched:
        patched.setattr(cpd, "_write_shards", too_many)
        with pytest.raises(ValueError, match=r"Too many open files .*: --num_shards 2 files open at once is more than "
                                             r"this system allows \(ulimit -n\): fewer shards, and re-run"):
            _run(wiki_vocab, [corpus], tmp_path / "out")
    one_word = tmp_path / "one_word.txt"
    one_word.write_text("word\n")
    with pytest.raises(ValueError, match=r"no training instance from 1 documents \(1 for training\): 1 chunk\(s\) of "
                                         r"one word each, .* were dropped \(a text of one word, or without spaces\?\)"):
        _run(wiki_vocab, [one_word], tmp_path / "out2")


def test_files_that_hold_the_same_units_are_refused_and_a_few_shared_ones_noted():
    """`check_units_once` on hand-made keys: a file more than half of whose distinct units other files hold (10 at
    least) is refused, naming it (the smaller) and them, with its exact count, whichever earlier files hold them; a
    smaller overlap, or a small file's, gives one note per later file; the key is the words as read (NFKC, no
    accents, case folded, without punctuation or spaces), so an indented, NFD, upper-cased or quoted line is the same
    unit, another word is not; a speaker's label ("Ann:") begins a sentence and is no part of it, nor is a line's
    number."""
    from albert_act.base import overlap

    key = overlap.unit_key
    assert key("Café  au lait.") == key(" CAFE\u0301 au\tlait. ") == key('"cafe au lait..."') == key("( Café ) au lait")
    assert key("Café au lait.") != key("Café au thé.")  # another word is another unit
    spoken = ["ALICE: Where are you going", "today?", "Dr. Bo: To the market. Q: Why go there?"]  # a dialogue's
    said = ["Where are you going today?", "To the market.", "Why go there?"]  # speakers' labels are no part of it
    assert overlap.sentence_keys(spoken) == overlap.sentence_keys(said) == overlap.keys_of(said)
    assert overlap.sentence_keys(["Ann: we came", "Bob: and we went"]) == overlap.keys_of(["we came", "and we went"])
    assert overlap.keys_of(["Note that the following: it is so."]) != overlap.keys_of(["it is so."])  # 4 words: text
    assert overlap.keys_of(["at 12:30 we left home."]) == [key("at 12 30 we left home")]
    numbered = ["     1\tWhere are you going", "     2\t", "     3\ttoday, my friend?", "1. Go to the shop now.",
                "2) And buy bread."]  # a copy numbered by cat -n (blank lines too), or as a list: the same sentences
    assert overlap.sentence_keys(numbered) == overlap.keys_of(["Where are you going", "today, my friend?",
                                                               "Go to the shop now.", "And buy bread."])
    numbered = ["     1\tWhere are you going", "     2\t", "     3\ttoday, my friend?", "1. Go to the shop now.",
                "2) And buy bread."]  # a copy numbered by cat -n (blank lines too), or as a list: the same sentences
    assert overlap.sentence_keys(numbered) == overlap.keys_of(["Where are you going", "today, my friend?",
                                                               "Go to the shop now.", "And buy bread."])
    assert overlap.sentence_keys(["1990 was a good year."]) == [key("1990 was a good year")]  # a number that is text
    assert overlap.sentence_keys(["  born in 1990) it was so."]) == [key("born in 1990 it was so")]  # mid-line: text
    assert overlap.keys_of(["In 2015 the team won 12 games."]) != overlap.keys_of(["In 2016 the team won 14 games."])
    # a line's label of another form, a number above its line or a page's at its end, letters that look Latin,
    # footnotes' superscripts, letter-spaced words, hashtags, a source, a copy without its spaces, a list of quoted
    # sentences: the same sentences
    told = ["It was late in 1990.", "They went home on the 18th day.", "We met there 2 times, in all."]
    assert overlap.sentence_keys(["\u00b67 It was late in 1990.", "7 - They went home on the 18th day.", "<9> We met "
                                  "there 2 times, in all.  4"]) == overlap.keys_of(told)
    assert overlap.sentence_keys(["[^1]: It was late in 1990.", "2", "They went home on the 18th day.", "\u2462 We met "
                                  "there 2 times, in all."]) == overlap.keys_of(told)
    assert overlap.sentence_keys(["It was l\u0430te in 1990.\u00b3", "They went h o m e on the 18th day.",
                                  "Wemetthere,2times,inall."]) == overlap.keys_of(told)
    assert overlap.sentence_keys(["It was late in 1990. #news #old", "They went home on the 18th day. \u2014 Wikipedia",
                                  "We met there 2 times, in all."]) == overlap.keys_of(told)  # hashtags, a source
    assert overlap.sentence_keys(["LONDON (Reuters) - It was late in 1990.", "They went home on the 18th day. (Reuters)",
                                  "We met there 2 times, in all [Smith et al., 2001]."]) == overlap.keys_of(told)
    assert overlap.sentence_keys(["It was late (in the year).", "They went [home] on the 18th day."]) != (
        overlap.keys_of(["It was late.", "They went on the 18th day."]))  # words in brackets without a number: text
    assert overlap.sentence_keys(['    "It was late in 1990.",', '    "They went home on the 18th day.",']) == (
        overlap.keys_of(told[:2]))
    marked = ["<p>The&nbsp;cat sat&nbsp;down.[1][citation needed]</p>", "[00:01:02] **It was&amp;is late.**", "00:01,250 And so on here."]
    assert overlap.sentence_keys(marked) == overlap.keys_of(["The cat sat down.", "It was & is late.", "And so on here."])
    labelled = ["#7 The cat sat down.", "(8) It was late.", "b) And so on here.", "xii. They went home.",
                "2023-01-05 12:07:07 <alice> We met there."]
    assert overlap.sentence_keys(labelled) == overlap.keys_of(["The cat sat down.", "It was late.", "And so on here.",
                                                               "They went home.", "We met there."])
    referenced = ["The cat (p. 12) sat down.", "It was \\textbf{late} (Smith, 2001).",
                  "See [the page](https://example.org/page) now.", "We saw [[Paris (city)|Paris]] again."]
    assert overlap.sentence_keys(referenced) == overlap.keys_of(["The cat sat down.", "It was late.",
                                                                 "See the page now.", "We saw Paris again."])
    assert overlap.unit_key("It was in (LUB) then.") != overlap.unit_key("It was in then.")  # words in parentheses
    a = list(range(100, 130))
    assert overlap.check_units_once({"twice": a + a}, "sentences", "WHY") == [  # its text twice: half repeats
        "note: 30 of the 60 sentences of twice repeat earlier ones in it (its text twice, or more?): they count once "
        "for each time"]
    assert overlap.check_units_once({"some": a + a[:12]}, "sentences", "WHY") == [
        "note: 12 of the 42 sentences of some repeat earlier ones in it: they count once for each time"]
    assert overlap.check_units_once({"few": a + a[:3]}, "sentences", "WHY") == []  # (under SHARED_FLOOR)
    a, b = list(range(100, 130)), list(range(200, 230))
    units = {"a": a, "b": b, "c": a[:15] + b[:15] + [1, 2, 3]}  # 30 of c's 33 in a and b, 15 in each
    with pytest.raises(ValueError, match=r"^--input c: 30 of its 33 distinct documents are also in a \(15\), b \(15\) "
                                         r"\(the same words, as they are read\): a copy, or a part of one; WHY; give "
                                         r"each of the documents once"):
        overlap.check_units_once(units, "documents", "WHY")
    with pytest.raises(ValueError, match=r"^--input b: 30 of its 30 distinct sentences are also in a .*: a copy, or a "
                                         r"part of one \(or each made of the same sentences again and again: 60 of its 90 "
                                         r"repeat earlier ones in it, as a template's would\); WHY"):  # two draws
        overlap.check_units_once({"a": a * 4, "b": a[::-1] * 3}, "sentences", "WHY")  # from the same 30 forms
    with pytest.raises(ValueError, match=r"^--input b: 30 of its 30 distinct sentences are also in a .*: a copy, or a "
                                         r"part of one; WHY"):  # (b repeats its own, a does not: no template)
        overlap.check_units_once({"a": a, "b": a * 3}, "sentences", "WHY")
    units["c"] = a[:14] + list(range(300, 320))  # 14 of 34: a note for c only, not for a (the earlier)
    assert overlap.check_units_once(units, "documents", "WHY") == [
        "note: 14 of the 34 distinct documents of c are also in a: they count once for each file that holds them"]
    units = {"small": [1, 2, 3, 3], "stub": [1, 2, 4]}  # 2 of 3: a small file's "References", noted, not refused
    assert overlap.check_units_once(units, "lines", "WHY") == [
        "note: 2 of the 3 distinct lines of stub are also in small: they count once for each file that holds them"]
    units = {"big": list(range(40)), "part": list(range(10, 20))}  # all of part in big: part is named
    with pytest.raises(ValueError, match=r"^--input part: 10 of its 10 distinct lines are also in big"):
        overlap.check_units_once(units, "lines", "WHY")


def test_the_overlap_checks_counts_match_a_plain_restatement():
    """`check_units_once` counts with sorted uint64 arrays; restated here with Python sets on random files: each
    file's shared units (in another file too), and how many it shares with each other file, named in its note
    (given once an earlier file shares some), most first; before them, each file's repeats of its own units."""
    import random

    from albert_act.base import overlap

    assert overlap.check_units_once({"empty": []}, "units", "WHY") == []  # (a CoNLL-U file of comments only)
    rng = random.Random(7)
    for _ in range(300):
        units = {f"f{i}": [rng.randrange(rng.choice((12, 40, 300))) for _ in range(rng.randrange(70))]
                 for i in range(rng.randint(1, 4))}
        distinct = {path: set(keys) for path, keys in units.items()}
        both = {(p, o): len(distinct[p] & distinct[o]) for p in units for o in units if o != p}
        shared = {p: sum(any(k in distinct[o] for o in units if o != p) for k in distinct[p]) for p in units}
        copies = [p for p in units if 2 * shared[p] > len(distinct[p]) and shared[p] >= overlap.SHARED_FLOOR]
        order = list(units)
        with_ = {p: sorted((o for o in units if o != p and both[p, o]), key=lambda o: (-both[p, o], order.index(o)))
                 for p in units}
        named = {p: with_[p][0] if len(with_[p]) == 1 else ", ".join(f"{o} ({both[p, o]})" for o in with_[p])
                 for p in units}
        try:
            notes = overlap.check_units_once(units, "units", "WHY")
        except ValueError as error:
            named = str(error).split(": ")[0].removeprefix("--input ")
            assert named in copies and f"{shared[named]} of its {len(distinct[named])} " in str(error)
            continue
        repeats = {p: len(units[p]) - len(distinct[p]) for p in units}  # within a file: noted past a tenth
        assert not copies and notes == [
            f"note: {repeats[p]} of the {len(units[p])} units of {p} repeat earlier ones in it"
            f"{' (its text twice, or more?)' if 2 * repeats[p] >= len(units[p]) else ''}: they count once for each "
            "time" for p in units if repeats[p] >= overlap.SHARED_FLOOR and repeats[p] > overlap.REPEATS_NOTED *
            len(units[p])] + [f"note: {shared[p]} of the {len(distinct[p])} distinct units of {p} are also "
                              f"in {named[p]}: they count once for each file that holds them" for p in units
                              if any(order.index(o) < order.index(p) for o in with_[p])]


def test_a_line_of_invisible_characters_ends_a_document(tmp_path):
    """A blank line that holds a zero-width space (a web page's copy) ends its document like an empty one: 100
    documents were read as one, and the data tool made no held-out instance."""
    from pipelines.create_pretraining_data import read_documents

    path = tmp_path / "zw.txt"
    path.write_text("First line.\nSecond line.\n\u200b\nNext document.\n \ufeff \nLast one.\n", encoding="utf-8")
    assert list(read_documents([str(path)])) == [["First line.", "Second line."], ["Next document."], ["Last one."]]


def test_moving_in_together_undoes_a_rename_stopped_right_after_it(tmp_path, monkeypatch):
    """A stop that landed between a rename and its note left that file in place (round 31 F141, F146: one shard of
    1,000 under "nothing was written"): each rename is noted before it is made, and undone where it was made."""
    from albert_act.base import text_files

    staged, out = tmp_path / "staged", tmp_path / "out"
    staged.mkdir(), out.mkdir()
    for name in "abc":
        (staged / name).write_text(name)
    (out / "b").write_text("an earlier b")
    stop_at_rename(monkeypatch, 2, after=True)
    with pytest.raises(KeyboardInterrupt):
        text_files.move_in_together([(str(staged / n), str(out / n)) for n in "abc"], str(staged))
    assert [p.name for p in out.iterdir()] == ["b"] and (out / "b").read_text() == "an earlier b"
    assert sorted(p.name for p in staged.iterdir()) == ["a", "b", "c"]


def test_a_globstar_reaches_every_depth_of_folders(tmp_path):
    """`**` in an --input glob is any depth of folders, as a shell's globstar: no file below the first level dropped."""
    from albert_act.base import text_files

    for name in ("a/top.txt", "a/b/mid.txt", "a/b/c/deep.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("A line.\n")
    assert text_files.expand_patterns([str(tmp_path / "a" / "**" / "*.txt")]) == [
        str(tmp_path / name) for name in ("a/b/c/deep.txt", "a/b/mid.txt", "a/top.txt")]


def test_one_line_documents_are_blamed_on_their_cause():
    """Documents of one line each come from double-spaced text, or from files of one line (a file is a document)."""
    from pipelines.record_warnings import one_line_documents_warning

    spaced = one_line_documents_warning({"documents": {"total": 150}, "sentences": 152, "inputs": ["corpus.txt"]})
    assert "a blank line after each line: double-spaced text?" in spaced
    files = one_line_documents_warning({"documents": {"total": 150}, "sentences": 150,
                                        "inputs": [f"many/{i}.txt" for i in range(150)]})
    assert files.startswith("150 sentences in 150 documents, from 150 files: nearly every file is one line, and a "
                            "file is a document of its own")
    assert one_line_documents_warning({"documents": {"total": 150}, "sentences": 900, "inputs": ["corpus.txt"]}) is None


def test_a_named_pipe_matched_by_a_glob_is_refused_not_waited_on(tmp_path):
    """A FIFO that a glob happens to match would block the reader until some program writes it: refused at once;
    named by itself, it is read (test_a_pipe_is_read_once)."""
    import os

    from albert_act.base import text_files

    (tmp_path / "a.txt").write_text("The river ran.\n")
    os.mkfifo(tmp_path / "b.txt")
    with pytest.raises(ValueError, match=r"b.txt: a named pipe \(FIFO\) matched by '\S+\*.txt': reading it waits for "
                                         r"a program to write it"):
        text_files.expand_patterns([str(tmp_path / "*.txt")])
    assert text_files.expand_patterns([str(tmp_path / "b.txt")]) == [str(tmp_path / "b.txt")]
