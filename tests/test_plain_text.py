"""Files read as plain text: what only looks like text to a line reader is refused at its first lines, naming the
line and what it is; prose that shares a trait with one of them (a tab, brackets, quotes, a time) is read."""

import os

import pytest

from albert_act.base import plain_text, prose

PROSE = "Jarred Shaw is an American basketball player.\nHe signed for Dorados in August 2019.\n"


@pytest.mark.parametrize("text, line, said", [
    ("# sent_id = 1\n1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\tNN\t_\t0\troot\t_\t_\n", 3,
     "a parsed file's token line"),
    ("Vinken\tNNP\t8\n,\t,\t2\n", 2, "a parsed file's token line"),
    ("\n( (S \n    (NP-SBJ \n      (NP (NNP Pierre) (NNP Vinken) )\n", 3, "a bracketed tree"),
    ("index\tsentence1\tsentence2\tlabel\n0\tA man.\tA person.\tentailment\n", 2,
     "a table's row (4 tab-separated columns, as from line 1: 'index', 'sentence1', 'sentence2', 'label')"),
    ("sentence\tlabel\n\n\nit is good .\t1\n", 4, "a table's row (2 tab-separated columns, as from line 1"),
    ('id,sentence,label\n1,"A text, with a comma.",0\n', 2, "a CSV row"),
    ('"id","text","label"\n"0","A text.","1"\n', 2, "a CSV row"),
    ('{"text": "A first line."}\n{"text": "A second one."}\n', 2, "a JSON line"),
    ('[\n  {\n    "text": "A first line."\n', 1, "a JSON document"),
    ('\n{"preset": "demo", "steps": 3, "tau": 0.001}\n', 2, "a JSON document"),  # a config of one line, alone
    ("1\n00:00:00,000 --> 00:00:03,000\nA first line.\n", 2, "a subtitle file (a timing line)"),
    ("WEBVTT\n\n00:00.000 --> 00:03.000\nA first line.\n", 1, "a subtitle file (WebVTT)"),
    ("WEBVTT - Some title\n\n00:00.000 --> 00:03.000\nA first line.\n", 1, "a subtitle file (WebVTT)"),
    ("0:00:00.000,0:00:03.000\nA first line.\n", 1, "a subtitle file (a timing line)"),
    ("[Script Info]\nTitle: x\n", 1, "a subtitle file (ASS/SSA)"),
    ("-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\n", 1, "CoNLL-2003 columns"),
    ("-DOCSTART- -X- O O\nThe river ran past the mill.\n-DOCSTART- -X- O O\nThe boat sailed.\n", 1,
     "CoNLL-2003 columns (a token a line) ('-DOCSTART- -X- O O'), where plain text is read; give the text itself (its "
     "sentences alone, a line each); if the lines after it are text, its -DOCSTART- lines mark documents"),
    ("-DOCSTART-\nThe river ran past the mill.\nIt was cold.\n-DOCSTART-\nThe boat sailed.\n", 1,
     "'-DOCSTART-', CoNLL-2003's mark of a document's start, where plain text is read; give the text with a blank line"),
    ("EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n", 2, "a token a line with its tags"),
    ("Pierre/NNP Vinken/NNP ,/, 61/CD\nMr./NNP Vinken/NNP is/VBZ chairman/NN\n", 2, "words with their tags"),
    ("| sentence | n |\n|---|---|\n| A first line. | 1 |\n", 2, "a text table's row"),
    ('- text: "A first line."\n- text: "A second one."\n', 2, "a YAML item"),
    ("__label__1 a first line\n__label__0 a second one\n", 2, "a fastText line"),
    ('<doc id="1">\n<s>\nA\tDT\ta\n', 2, "markup (a line that is one tag"),
    ("{\\rtf1\\ansi\n\\f0 A first line.\\par\n", 1, "an RTF document"),
    ('<?xml version="1.0"?>\n<corpus>\n', 1, "an XML document"),
    ("sentence,label\nit is a good film,1\n", 2, "a CSV row"),
    ("it is a good film,1\nit is a bad film,0\n", 2, "a CSV row"),
    ("doc001\tA first line.\ndoc002\tA second one.\n", 2, "a table's row (2 tab-separated columns"),
    ("<!DOCTYPE html>\n<html>\n", 1, "an HTML or XML document"),
    ("\\documentclass{article}\n\\begin{document}\n", 1, "a LaTeX document"),
    ('msgid ""\nmsgstr ""\n', 1, "a gettext catalogue (.po)"),
    ("-- MySQL dump\nCREATE TABLE s (id INT, text TEXT);\n", 1, "a SQL dump"),
    ("CREATE TABLE s (id INT, text TEXT);\nINSERT INTO s VALUES (0, 'A first line.');\n", 2, "a SQL dump's statement"),
    ("[ti:Notes]\n[00:12.00]A first line.\n", 2, "an LRC lyrics line"),
    ("1963 1 13 1967 15 1963 1 1968\n1963 1 1968 1969 1982 19 91 138\n", 2, "a line of numbers"),
    ("\u2581 J ar r ed \u2581 S h a w \u2581is\n\u2581 O n \u2581 O ct o b er \u2581the\n", 2, "a line of pieces"),
    ("Jar@@ red Sha@@ w is tall@@ er\nOn Oct@@ ober 31 , Sha@@ w\n", 2, "a line of BPE subwords"),
    ("sentence;label\nit is a good film;1\n", 2, "a CSV row"),
    ("3008,2888,7865,15550,29993,14109,27745,16255\n2844,11998,23671,7736,24364,2743,10571,14236\n", 2, "a line of numbers"),
    ('---\nkey_0: "A first line."\nkey_1: "A second one."\n', 3, "a YAML item"),
    ("Vic ##tor is an Isr ##aeli eco ##nomist\nHis res ##earch int ##erests\n", 2, "a line of pieces"),
    ("Victor \u0120Chaim \u0120Lavy \u0120is\nHis \u0120research \u0120interests\n", 2, "a line of BPE subwords"),
    ("Victor|NN|victor Chaim|NN|chaim Lavy|NN|lavy is|VB|be\nHis|PR|his research|NN|research of|IN|of\n", 2,
     "a line of factored words"),
    ("<00:00.00> Victor <00:00.01> Chaim\n<00:01.00> His <00:01.01> research\n", 2, "an LRC lyrics line"),
    ("[3008, 2888, 7865, 15550, 29993]\n[2844, 11998, 23671, 7736, 24364]\n", 2, "a list of ids or words"),
    ("['Victor', 'Chaim', 'Lavy', 'is']\n['His', 'research', 'interests', 'include']\n", 2, "a list of ids or words"),
    ('[section0]\nname = "Victor Chaim"\n', 2, "a configuration file's section or key"),
    ("A first line. __label__pos\nA second one. __label__neg\n", 2, "a fastText line"),
    ('<div class="c"><span>A first line.</span><br/></div>\n<div><span>A second one.</span></div>\n', 2, "markup"),
    ("Victor O\nChaim O\n", 2, "a token a line with its tags"),
    ("{0}{40}A first line.\n{41}{80}A second one.\n", 2, "a subtitle file (MicroDVD)"),
    ("-1 |text a first line\n1 |text a second one\n", 2, "a Vowpal Wabbit line"),
    ("1 17:0.532 204:0.118 305:1\n0 3:0.2 99:0.7\n", 2, "a LIBSVM line"),
    ("@Begin\n@Languages:\teng\n*CHI:\ta first line .\n", 1, "a CHILDES CHAT transcript"),
    ("<|im_start|>user\nA first line.\n<|im_end|>\n", 1, "a chat template's turns"),
    ("/data/wiki/part1.txt\n/data/wiki/part2.txt\n", 2, "a list of files or addresses"),
    ("https://en.wikipedia.org/wiki/A\nhttps://en.wikipedia.org/wiki/B\n", 2, "a list of files or addresses"),
    ("00000000: 5669 6374 6f72 2043 6861  Victor Cha\n00000010: 7920 6973 2061 6e20 4973  y is an Is\n", 2,
     "a hex dump's line"),
    ("Name | Text\n--- | ---\n0 | A first line.\n", 2, "a text table's row"),
    ("COPY public.articles (id, title, body) FROM stdin;\n0\tTitle\tA first line.\n", 1, "a SQL dump (PostgreSQL's COPY)"),
    ("Pierre NNP 2\nVinken NNP 8\n", 2, "a parsed file's token line with spaces between its columns"),
    ("# text = From the AP\n1 From from ADP IN _ 3 case 3:case _\n2 the the DET DT _ 3 det 3:det _\n", 3,
     "a parsed file's token line with spaces between its columns"),
    ("+----+---------------+\n| id | text          |\n+----+---------------+\n", 2, "a text table's row"),
    (" id |     text\n----+---------------\n  0 | A first line.\n", 2, "a text table's row"),
    ("#version: 0.2\n\u0120 t\n\u0120 a\nh e\n", 1, "a BPE merges file"),
    ("\u0120 t\n\u0120 a\nh e\ni n\n", 2, "a BPE merges file's pair"),
    ("[PAD]\n[unused0]\n[unused1]\n", 1, "a vocabulary"),
    ("<unk>\t0\n<s>\t0\n</s>\t0\n\u2581the\t-3.2\n", 1, "a vocabulary"),
    ("Victor Chaim Lavy is an Israeli economist and professor at the Univers=\nity of Warwick and the Hebrew University of Jerusalem. He wa=\n",
     2, "quoted-printable text"),
    ("The caf=C3=A9 was open. It was caf=C3=A9 au lait.\nIt was n=E2=80=99t open.\n", 2, "quoted-printable text"),
    ("VmljdG9yIENoYWltIExhdnkgaXMgYW4gSXNyYWVsaSBlY29ub21pc3Qu\nSGlzIHJlc2VhcmNoIGludGVyZXN0cyBpbmNsdWRlIGVjb25vbWV0cmljcy4=\n",
     2, "base64"),
    ("Das ist gut . ||| This is good .\nEr ist da . ||| He is here .\n", 2, "a parallel corpus's line"),
    ("{{Short description|Israeli economist}}\n'''Victor Chaim Lavy''' is an [[Israel]]i [[economist]].\n", 2,
     "MediaWiki markup"),
    ('{"text": "an example"}\n{"text": "another"}\n{"text": "a third"}\nProse.\nMore prose here.\n', 2, "a JSON line"),
    ('["The film was good.", 1]\n["I would not watch it again.", 0]\n', 2, "a JSON line"),
    ("The DT\nfilm NN\nwas VBD\n", 2, "a token a line with its tags"),
    ("sentence\tlabel\nit is a good film\tpositive\n", 2, "a table's row"),
    ("neg\tit is a bad film\npos\tit is a good film\n", 2, "a table's row"),
    ("@article{smith2001,\n  title = {A study of rivers},\n", 1, "a BibTeX bibliography"),
    ("TY  - JOUR\nAU  - Smith, John\n", 1, "a RIS bibliography"),
    ("BEGIN:VCALENDAR\nVERSION:2.0\n", 1, "an iCalendar or vCard file"),
    ("WARC/1.0\nWARC-Type: conversion\n", 1, "a web archive"),
    ("diff --git a/notes.txt b/notes.txt\nindex 83db48f..bf269f4 100644\n", 1, "a diff"),
    ("--- notes.txt\n+++ notes2.txt\n@@ -1,3 +1,3 @@\n", 1, "a diff"),
    ("begin 644 notes.txt\nM5&AE(')I=F5R(')A;B!P87-T\n", 1, "a uuencoded file"),
    ("Return-Path: <alice@example.com>\nFrom: alice@example.com\n", 1, "an e-mail"),
    ("From: Alice <alice@example.com>\nSubject: Hi\nMIME-Version: 1.0\nContent-Type: text/html\n", 2,
     "an e-mail's headers"),
    ("From: <Saved by Blink>\nSnapshot-Content-Location: https://a.org/\n", 1, "a web page saved as MHTML"),
    ("From: alice@example.com\nTo: bob@example.com\n", 2, "an e-mail's headers"),
    ("[INFORMATION]\n[TITLE]Film\n", 1, "a subtitle file (SubViewer)"),
    ('.TH LS 1 "March 2023"\n.SH NAME\n', 1, "a manual page"),
])
def test_what_only_looks_like_text_is_refused_at_its_first_lines(tmp_path, text, line, said):
    path = tmp_path / "input.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as refused:
        list(plain_text.read_text_lines(str(path)))
    assert str(refused.value).startswith(f"{path} line {line}: {said}"), str(refused.value)
    assert "where plain text is read; give" in str(refused.value)


@pytest.mark.parametrize("text", [
    PROSE, "\t" + PROSE.replace("\n", "\n\t", 1),  # indented by tabs
    "(Music)\n(Applause)\n", "(a) first item here\n(b) second item\n", "(see below) a line.\n(see above) another.\n",
    "HAMLET\tTo be or not to be.\nOPHELIA\tMy lord.\n", "Roses are red,\tviolets are blue,\nSugar is sweet,\tand so.\n",
    '"Hi there",\n"Bye now",\n', '"Yes," she said.\n"No," he said, "never."\n',
    "Meeting notes\n10:00:00.000 --> start of call\n", "     1\tThe first line.\n     2\tThe second line.\n",
    "He said and/or she said.\nIt was A/B tested.\n", "| a pipe at the start only.\nAnother line.\n",
    "WEBVTT is the format that browsers read for captions.\nIt has cues.\n",
    "Chapter one was long 2\nChapter two was short 3\n", "1 Three men went to the market to buy bread.\n"
    "2 Two women went to the fair to sell cheese.\n", "It rose in 1990 and fell in 1991 , then rose once more .\n"
    "It fell in 1992 and rose in 1993 , then fell once more .\n",
    'ALICE: "Hello there."\nBOB: "Hi, Alice."\n', "Note: 'this' is quoted.\n",
    "<b>Bold</b> words lead this line.\n<i>Italic</i> ones this.\n", "It cost 3,50\nor so, he said, 4,00.\n",
    "Act I\tThe castle.\nAct II\tThe heath.\n", "__init__ is a method.\n__main__ is a module.\n",
    "[12:30:45] alice: hello there\n[12:31:02] bob: hi, alice\n", "-- a dash leads this line.\nAnd this one.\n",
    "Mail me at a@@b.org today.\nOr call me.\n", "Set in 1990 and 1991.\nIt ran 3 4 5 6 times.\n",
    "--Where are you going? asked he.\n--To the village, said she.\n", "SET UP THE TENT BEFORE DARK.\nSET OUT THE FOOD.\n",
    "/* Notes on the draft */\n/* Second thoughts */\n", "Monday, March 4, 2024\nIt rained all day, 12\n",
    "Smith J. The cell. Nature, 412\nJones K. The gene. Science, 287\n", "Roses are red, 1\nViolets are blue, 2\n",
    "1.\tBuy bread on the way home.\n2.\tCall the doctor.\n", "08:00\tWoke up late.\n09:30\tMissed the bus.\n",
    "1 1 2 3 5 8 13 21\n34 55 89 144 233\n", 'alice: "are you there?"\nbob: "yes, just got in"\n',
    "[edit: fixed a typo] I went there.\n[update: it was closed] So I went home.\n",
    "E = mc2 is famous.\nF = ma is older.\n", "1 | 2 is a fraction bar.\nIt is not a table.\n", "0| A first line.\n1| A second one.\n", "7 | A first line.\n8 | A second one.\n", "{Note} the braces here.\n{And} here.\n", "See and/or read.\nUse km/h here.\n", "Visit example.org today.\nOr mail a/b.\n", "<b>Note</b> the first line.\n<i>And</i> the second.\n",
    "He is A|B|C tested twice.\nIt is not.\n", "I O U a letter.\nYou owe me.\n",
    '{"text": "an example line"}\n{"text": "another one"}\nEach line of the file is one such record.\n'
    "The reader takes its text field.\nNothing else is read from it.\n",
    "= Valkyria Chronicles III =\n\nSenj\u014d no Valkyria 3 is a game .\n\n= = Gameplay = =\n\nIt is a tactical game .\n",
    "I am here.\nA cat sat.\n", "The score was 3=2 after extra time.\nThen 4=2.\n", "E=mc2 and F=ma.\nBoth are famous.\n",
    "She said: this ||| is odd.\nIt is.\n", "The dashes ---+ here.\nAnd there.\n",
    "Run 2 used k=20 and n=50 on the test set.\nRun 3 used k=10 and n=40 instead.\n",
    "In C1 type =A1+B1 and press Enter.\nIn C2 type =A2+B2 to add the next row.\n",
    "See [[Project Alpha]] for the plan.\nThen [[Meeting notes]] from Monday.\n",
    '- Twain: "The secret of getting ahead is getting started."\n- Austen: "There is no charm equal to tenderness."\n',
    'K2SO: "I have a bad feeling about this."\nR2D2: "Beep."\n', "Tickets sold in the first week: 3,450\n"
    "Tickets sold in the second week: 2,100\n", "Hwaet! We Gardena\tin geardagum,\tbeodcyninga\n"
    "thrym gefrunon,\thu tha aethelingas\tellen fremedon.\n", "Edward VI 1547\nMary I 1553\nElizabeth I 1558\n",
    "Monday we drive on I-80\nTuesday we take I-95\n", "[Music]\n[Applause]\nThank you all for coming tonight.\n",
    "(door opens)\n(phone rings)\n", "Call IBM\nBuy AAPL\n", "Flight BA 117\nFlight LH 902\n", "x = 3\ny = 4\n",
    "Read chapters 1,2,3\nThen chapters 4,5,6\n", "From: the editor\nThe deadline is Friday.\n", "What is 3+5=\nWhat is 2+2=\n", "Pneumonoultramicroscopicsilicovolcanoconiosis\nAntidisestablishmentarianismism\n",
    "Write '''Return the sum.''' under the def.\nThen he said, 'I heard ''yes'''.\n",
    "{{date}} is replaced by today's date.\n{{name}} by the user's name.\n", "Act II\nScene IV\nThe heath. A storm is raging.\n"
    "Enter Lear and the Fool.\nLear speaks.\n", "From the notes of the day:\nTo the reader, greetings.\n",
])
def test_prose_is_read(tmp_path, text):
    path = tmp_path / "input.txt"
    path.write_text(text)
    assert [line for _, line in plain_text.read_text_lines(str(path))] == text.splitlines()


def test_another_kind_joined_after_the_text_is_warned_of(tmp_path, capsys):
    """A file of another kind joined after prose (`cat notes.txt film.srt`) is read, and its lines past
    `LATER_LINES` are warned of, naming the first; prose with a few such lines (a table's two rows) is not."""
    prose = "".join(f"Sentence {i} of the prose is here.\n" for i in range(30))
    srt = "".join(f"{i + 1}\n00:00:{i:02},000 --> 00:00:{i + 1:02},000\nA cue of the film.\n\n" for i in range(12))
    path = tmp_path / "joined.txt"
    path.write_text(prose + "\n" + srt)
    assert len(list(plain_text.read_text_lines(str(path)))) == (prose + "\n" + srt).count("\n")
    assert capsys.readouterr().err == (f"warning: {path}: 12 lines from line 33 on ('00:00:00,000 --> 00:00:01,000') "
                                       "are subtitle timings, read as text (a file of another kind joined to this "
                                       "one, or tables kept in the text?); give the text alone\n")
    path.write_text(prose + "".join(f"Line {i} of prose.\nMore prose.\n{{\"text\": \"a record {i}\"}}\n" for i in range(10)))
    assert len(list(plain_text.read_text_lines(str(path)))) == 60  # JSON lines among the text: each counts alone
    assert capsys.readouterr().err.startswith(f"warning: {path}: 10 lines from line 33 on ('{{\"text\": \"a record 0\"}}') "
                                              "are JSON lines, read as text")
    path.write_text(prose + "Year\tWins\n1990\t12\n1991\t14\n" + prose)
    assert len(list(plain_text.read_text_lines(str(path)))) == 63 and capsys.readouterr().err == ""


@pytest.mark.parametrize("line, mark", [
    ("The river ran (LUB).\u00b9 It rose.\u00b2\u00b3 Then fell,\u2020 and more.* Cited[12] here[citation needed].",
     "footnote marks"), ("The river\u2020 ran (LUB). It rose*. Then fell\u2021, and more.\u2020 Cited here.",
                         "footnote marks"),
    ("The river ran (LUB).<sup>1</sup> It rose.(2) Then fell,[^3] and more. [#]_ Cited here [4]_.", "footnote marks"),
    ("The river ran (LUB).<ref name=\"a\">Smith, John (2001). The Book, p. 4.</ref> It rose.{{sfn|Smith|2001|p=4}} Then "
     "fell,<ref name=\"a\" /> and more. Cited here.", "footnote marks"),  # (round 46 A96, A97: MediaWiki's)
    ("The river ran (LUB).^[A note here.] It rose. Then fell, and more [@smith12, p. 33]. Cited here.",
     "footnote marks"),  # (round 47 A91, A92: pandoc's inline notes and citations) ("History[edit]", "section headings"), ("^ Smith, John (2001). A Book.", "references"),
    ("The river ran past the mill. \\", "line continuation"),
    ("\u2022 The river ran (LUB). It rose. Then fell, and more. Cited here.", "bullet"),
    ("\uf0c1The river ran (LUB). It rose. Then fell, and more. Cited here.", "private-use"),
    ("\u202eThe river ran (LUB). It rose. Then fell, and more. Cited\u00ad here.", "invisible"),
    ("The river ran (LUB).\U000e0001\U000e0068\U000e007f It rose. Then fell, and more. Cited here.", "invisible"),
    ("The r\u0456ver r\u0430n (LUB). It r\u043ese. Then fell, \u0430nd more. Cited here.", "Latin and Cyrillic")])
def test_the_command_advised_for_a_copied_pages_marks_removes_them(tmp_path, capsys, line, mark):
    """Footnote marks as superscripts stayed after the sed advised for them (round 42 A46), and daggers or asterisks
    after words were not named (round 43 A111); [edit] headings,
    references and line continuations (A15, A114, A30) are named with a command that leaves them out."""
    import re
    import subprocess

    prose._WARNED.clear()
    sentence = "The river ran (LUB). It rose. Then fell, and more. Cited here."
    text = "".join(f"{line}\n{sentence}\n" for _ in range(12))
    (tmp_path / "in.txt").write_text(text)
    list(plain_text.read_text_lines(str(tmp_path / "in.txt")))
    err = capsys.readouterr().err
    assert mark in err, err
    command = re.search(r"\(((?:sed|grep|python3) .*? > text.txt)", err).group(1)
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True, env={**os.environ, "LC_ALL": "C"})
    kept = (tmp_path / "text.txt").read_text().splitlines()
    if mark == "line continuation":
        assert kept[::2] == ["The river ran past the mill."] * 12
    else:  # (the marks' lines, cleaned, are the sentence; the others left out)
        assert kept == [sentence] * (24 if mark in ("footnote marks", "bullet", "private-use", "invisible",
                                                     "Latin and Cyrillic") else 12)


def test_yaml_front_matter_is_named_and_its_command_leaves_it_out(tmp_path, capsys):
    """Posts of a static site, each begun by '---', 'title: ...' lines and '---': named as front matter (not as
    rules alone), and the awk advised keeps the text and its blank lines, nothing of the front matter."""
    import re
    import subprocess

    posts = ["".join(f"Sentence {i} of post {p} is here.\n" for i in range(4)) for p in range(6)]
    path = tmp_path / "posts.txt"
    path.write_text("\n".join(f"---\ntitle: Post {p}\ntags: [a, b]\n---\n{post}" for p, post in enumerate(posts)))
    list(plain_text.read_text_lines(str(path)))
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {path}: 6 of its documents begin with YAML front matter (line 2: 'title: Post 0' "
                          "after '---'), as a static site's pages do") and "rules" not in err, err
    subprocess.run(["bash", "-c", re.search(r"leave it out \((.*)\)$", err.strip()).group(1)], cwd=tmp_path, check=True)
    assert (tmp_path / "text.txt").read_text() == "\n".join(posts)


@pytest.mark.parametrize("text, share, line", [
    ("".join(f"{w}_DT river_NN ran_VBD ._.\n" for w in ("The", "A", "One", "This", "That")), "0% of its first 5 lines",
     "line 1, 'The_DT"),
    ("".join(f"message.line{i}=The river ran.\n" for i in range(5)), "0% of its first 5", "line 1, 'message.line0="),
    ("The\nriver\nran\npast\nthe\nmill\n.\n", "0% of its first 7 lines", "line 1, 'The'"),
    ("".join(f"{n} {w}\n" for n, w in ((1234, "the"), (987, "of"), (560, "and"), (402, "to"), (330, "in"))),
     "0% of its first 5 lines", "line 1, '1234 the'"),
    ("id,sentence\n" + "".join(f"{i},The river ran past the mill\n" for i in range(4)), "0% of its first 5",
     "line 1, 'id,sentence'"),
])
def test_a_file_whose_lines_do_not_read_as_sentences_is_warned_of(tmp_path, capsys, text, share, line):
    """A file few of whose first lines read as sentences (a tagger's output, keys, a word a line, a CSV) is read, and
    a warning names the share and a line; prose (Wikipedia's, a script's, a soft-hyphenated copy) is read silently."""
    path = tmp_path / "input.txt"
    path.write_text(text)
    assert len(list(plain_text.read_text_lines(str(path)))) == text.count("\n")
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {path}: {share}") and f"({line}" in err.replace("(words with their punctuation; ", "("), err
    for text in (PROSE * 3, 'C3PO: "Oh my, we are doomed."\nR2D2: "Beep boop."\nC3PO: "I do not know."\n',
                 "".join(f"{mark} The river ran past the mill today.\n" for mark in ("@alice", "\u2022", "*", ">", "#1",
                                                                                      "\U0001f600")),
                 "\u00a71 The river ran.\n\u00a72 The boat sailed.\n\u00a73 It rained all day.\n",
                 "Victor is an Isra\u00adeli econ\u00adomist.\nHis re\u00adsearch is on la\u00adbour.\nHe is 60.\n"):
        path.write_text(text)
        list(plain_text.read_text_lines(str(path)))
        assert capsys.readouterr().err == "", text


@pytest.mark.parametrize("text, said", [
    ("".join(f"[12/03/2024, 10:{i:02}] Alice: We meet at the station tomorrow at noon.\n" for i in range(12)),
     "12 of its first 12 lines begin alike ('[0/0/0, 0:0] a:', as line 1 does: '[12/03/2024, 10:00] Alice:"),
    ("".join(f"[10:{i:02}] <alice> has anyone tried the new release yet?\n" for i in range(12)),
     "12 of its first 12 lines begin alike ('[0:0] <a> a', as line 1 does"),
    ("".join(f"Nov 29 12:00:{i:02} host sshd[123]: Accepted publickey for a user\n" for i in range(12)),
     "12 of its first 12 lines begin alike ('a 0 0:0:0', as line 1 does: 'Nov 29 12:00:00 host"),
    ("".join(f"text: The river ran past mill number {i} today.\n" for i in range(12)),
     "12 of its first 12 lines begin alike ('text:', as line 1 does"),
    ("".join(f"The cat sat on the mat.\tLe chat \u00e9tait sur le tapis {i}.\n" for i in range(6)),
     "6 of its first 6 lines hold a tab (line 1: 'The cat sat on the mat.\\tLe chat \u00e9tait su'): columns (sentence "
     "pairs, a table?) are read as one text"),
    ("".join(f'"The river ran past mill number {i} today."\n' for i in range(24)),
     "24 of its first 24 lines are each a quoted string (line 1: '\"The river ran past mill number 0 today.'), as jq"),
    (" ".join("The river ran past the mill.") + "\n" + (" ".join("The boat sailed on.") + "\n") * 11,
     "12 of its first 12 lines are letters spaced apart (line 1: 'T h e   r i v e r   r a n   p a s t   t '), as a PDF's"),
    ("The caf\u00c3\u00a9 was open all day.\n" * 6,
     "6 of its first 6 lines hold UTF-8 read as Windows-1252 and saved again (line 1: '\u00c3\u00a9', mojibake"),
    ("\x1b[1;31mERROR\x1b[0m the server stopped at noon.\n" * 5,
     "5 of its first 5 lines hold a terminal's colour codes (line 1: ESC[...m), read as text"),
    ("".join(f"the <unk> company said its profit rose {i} N in the <unk> quarter\n" for i in range(6)),
     "6 of its first 6 lines hold <unk> (line 1), a corpus's mark for a word it left out or replaced (as Penn Treebank's"),
    ("".join(f"Jos\\u00e9 visited the caf\\u00e9 number {i} on Sunday.\n" for i in range(6)),
     "6 of its first 6 lines hold JSON's escapes (\\u00e9 on line 1), read as they are written"),
    ("".join(f"the river ran past the mill number {i} today <eos>\n" for i in range(12)),
     "12 of its first 12 lines end in a tag or a bare number ('<eos>' on line 1), as a language model's <eos>"),
    ("".join(f"The film was a quiet and moving portrait of a town {i}.\t0.87\n".replace(".\t", " ")
             for i in range(12)), "12 of its first 12 lines end in a tag or a bare number ('0.87' on line 1)"),
    ("It was the best of times, it was the worst of times, it was the age of\n"
     "wisdom, it was the age of foolishness, it was the epoch of belief, it\n" * 6,
     "12 of its first 12 lines stop mid-sentence (line 1: 'st of times, it was the age of'), as hard-wrapped"),
    ("".join(f"The river ran past the <mask> number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold <mask> (line 1), another model's special token (RoBERTa's <mask>, T5's"),
    ("".join(f"The company -LRB- founded in {1900 + i} -RRB- said `` yes '' today .\n" for i in range(6)),
     "6 of its first 6 lines hold Penn Treebank's tokens ('-LRB-' on line 1"),
    ("".join(f"The river ran past mill number {i} today.\n" + ("\fRiver Report 2024\n" if i % 3 == 2 else "")
             for i in range(9)), "3 of its first 12 lines hold a form feed (line 4), a page break as pdftotext"),
    ("".join(f"The river ran past mill number {i} today.\nThe boat sailed on.\n---\n" for i in range(4)),
     "4 of its first 12 lines are rules ('---' on line 3), as documents are separated in some files"),
    ("".join(f"The sail\u00adors car\u00adried number {i} home today.\n" for i in range(6)),
     "6 of its first 6 lines hold an invisible character (U+00AD on line 1: a soft hyphen"),
    ("".join(f"## Part {i}\nThe river ran past mill number {i} today.\n" for i in range(6)),
     "6 of its first 12 lines are Markdown headings (line 1: '## Part 0'), read with their '#'"),
    ("".join(f"The room was clean and the staff kind, visit {i} \u2605\u2605\u2605\u2605\u2606\n" for i in range(12)),
     "12 of its first 12 lines end in a tag or a bare number ('\u2605\u2605\u2605\u2605\u2606' on line 1)"),
    ("".join(f"The river ran past mill number {i} today.[{i + 40}]\n" for i in range(12)),
     "12 of its first 12 lines hold footnote marks ('[40]' on line 1)"),
    ("".join(f"the ___ company said its profit rose {i} percent\n" for i in range(6)),
     "6 of its first 6 lines hold ___ (line 1), a corpus's mark for a word it left out"),
    ("".join(f"the UNK company said its profit rose {i} percent\n" for i in range(6)),
     "6 of its first 6 lines hold UNK (line 1), a corpus's mark for a word it left out"),
    ("".join(f"how are you doing today my friend number {i} EOS\n" for i in range(12)),
     "12 of its first 12 lines end in a tag or a bare number ('EOS' on line 1)"),
    ("".join(f"the [UNK] company said its profit rose {i} percent\n" for i in range(6)),
     "6 of its first 6 lines hold [UNK] (line 1), a corpus's mark for a word it left out"),
    ("".join(f" The road is 4 @,@ 000 km long and well @-@ known as route {i} .\n" for i in range(6)),
     "6 of its first 6 lines hold WikiText's markup ('@,@' on line 1: its ' = Title = ' headings, and @-@ for"),
    ("".join(f"== History {i} ==\nThe [[river]] ran past the mill number {i} today.<ref>{{{{cite web|url=http://x.org|"
             f"title=T}}}}</ref>\n\n" for i in range(6)), "6 of its first 12 lines hold wiki section headings ('== History "
     "0 ==' on line 1: MediaWiki's '== History ==', WikiText's ' = Title = '), each read as a sentence: leave them out"),
    ("".join(f"how are you doing today my friend number {i} __eou__\n" for i in range(12)),
     "12 of its first 12 lines end in a tag or a bare number ('__eou__' on line 1)"),
    ("".join(f"The river ran past the mill number {i} today.<br>\n" for i in range(12)),
     "12 of its first 12 lines end in a tag or a bare number ('<br>' on line 1)"),
    ("".join(f"b'The caf\\xc3\\xa9 number {i} was open all day.'\n" for i in range(24)),
     "24 of its first 24 lines are each Python's repr of bytes (line 1: \"b'The caf\\\\xc3\\\\xa9 number 0"),
    ("The old man walked slowly\ndown the long road to the\nvillage where he was born\n" * 4,
     "12 of its first 12 lines stop mid-sentence (line 1: 'The old man walked slowly')"),
    ("".join(f"it &apos;s a &quot; test &quot; of the system , isn &apos;t it ? {i}\n" for i in range(12)),
     "12 of its first 12 lines hold HTML's or Moses' escapes (&apos; on line 1), read as they are written"),
    ("".join(f"The river ran past the [MASK] number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold [MASK] (line 1), this model's mask: training text reads it as its characters"),
    ("".join(f"The river ran <num> miles past the mill on day <num> ({i}).\n" for i in range(6)),
     "6 of its first 6 lines hold <num> (line 1), a corpus's mark for a word it left out or replaced"),
    ("".join(f"The river ran @card@ miles past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold @card@ (line 1), a corpus's mark"),
    ("".join(f"The river ran __NUM__ miles past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold __NUM__ (line 1), a corpus's mark"),
    ("".join(f"The caf\ufffd number {i} was open all day.\n" for i in range(6)),
     "6 of its first 6 lines hold U+FFFD, the replacement character (line 1: 'The caf\ufffd number 0 was open all day.')"),
    ("".join(f"The river ran past the mill number {i} today.\u00b9\n" for i in range(12)),
     "12 of its first 12 lines hold footnote marks ('\u00b9' on line 1)"),
    ("".join(f"The river ran past the mill number {i} today. [SEP] It was cold.\n" for i in range(6)),
     "6 of its first 6 lines hold [SEP] (line 1), the model's own marker"),
    ("".join(f"The river ran past the mill number {i} today.*\n" for i in range(12)),
     "12 of its first 12 lines hold footnote marks ('*' on line 1)"),
    ("".join(f"The river ran past the mill number {i} today.[note 3]\n" for i in range(12)),
     "12 of its first 12 lines hold footnote marks ('[note 3]' on line 1)"),
    ("".join(f"History[edit]\nThe river ran past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 12 lines are a copied Wikipedia page's section headings ('History[edit]' on line 1, with its "
     "[edit] link)"),
    ("".join(f"The river ran past the mill number {i} today.\n^ Smith, John ({1990 + i}). A Book.\n" for i in range(6)),
     "6 of its first 12 lines are a copied Wikipedia page's references ('^ Smith, John (1990). A Book.' on line 2)"),
    ("".join(f"The river ran past the mill number {i} today. \\\n" for i in range(6)),
     "6 of its first 6 lines end in ' \\' (line 1: 'ast the mill number 0 today. \\'), a shell's or a macro's line "
     "continuation"),
    *[("".join(f"The river ran past the mill number {i} today, {mark} said.\n" for i in range(6)),
       f"6 of its first 6 lines hold {mark} (line 1), a corpus's mark") for mark in (
        "[deleted]", "<PERSON>", "\u2588\u2588\u2588\u2588", "<0x0A>", "[REDACTED]", "@user")],
    ("".join(f"The river ran past the mill number {i} today, [laughter] said.\n" for i in range(6)),
     "6 of its first 6 lines hold [laughter] (line 1), a transcript's note of a sound or a gap"),  # (round 47 A79)
    ("".join(f"@user The river ran past the mill number {i} today. http\n" for i in range(6)),
     "6 of its first 6 lines hold @user (line 1), a corpus's mark"),
    ("".join(f"The river ran past the mill number {i} today.{{{{citation needed}}}}\n" for i in range(12)),
     "12 of its first 12 lines hold footnote marks ('{{citation needed}}' on line 1)"),
    ("".join(f"\u202eThe river ran past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold an invisible character (U+202E on line 1"),
    ("".join(f"The m\u0456ll {i} \u0440ast the r\u0456ver ran.\n" for i in range(6)),
     "6 of its first 6 lines hold words that mix Latin and Cyrillic letters ('m\u0456ll' on line 1"),
    ("The river ran.\n<<<<<<< HEAD\nThe mill stood.\n=======\nThe mill fell.\n>>>>>>> origin/main\nIt rained.\n",
     "3 of its first 7 lines are a git merge conflict's markers (line 2: '<<<<<<< HEAD')"),
    ("".join(f"The <i>river</i> ran past <b>mill</b> {i}.\n" for i in range(6)),
     "6 of its first 6 lines hold HTML tags ('<i>' on line 1), read as text"),
    ("".join(f"The river ran past mill {i}.\U000e0001\U000e0068\U000e0069\U000e007f\n" for i in range(6)),
     "6 of its first 6 lines hold an invisible character (U+E0001 on line 1"),
    ("".join(f"The mill {i} is n't far , and Shaw 's dog ran .\n" for i in range(6)),
     "6 of its first 6 lines hold words split as Penn Treebank's tokenizer splits them (\"n't\" on line 1"),
    ("".join(f"\\section{{Mill {i}}} The river ran past the mill \\cite{{smith}}.\n" for i in range(6)),
     "6 of its first 6 lines hold LaTeX commands ('\\section' on line 1), read as text"),
    ("".join(f"The river ran past the mill number {i} today.\n\n@highlight\n\nA mill by a river\n\n" for i in range(6)),
     "6 of its first 18 lines are CNN/Daily Mail's '@highlight' marks (line 3)"),
    ("".join(f"\uf0c1 The river ran past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold private-use characters (U+F0C1 on line 1: an icon font's glyphs"),
    ("".join(f"\u2022 The river ran past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines begin with a bullet ('\u2022', line 1"),
    ("The river ran past the mill.\n```python\nprint(1)\n```\nIt was cold.\nThe end came.\n",
     "2 of its first 6 lines are Markdown code fences ('```python' on line 2)"),
    ("".join(f"The river ran past the mill.<br /><br />It was cold on day {i}.\n" for i in range(6)),
     "6 of its first 6 lines hold HTML's line breaks ('<br />' inside line 1"),
    ("".join(f"The man who *T*-1 ran past the mill number {i} said 0 it was cold.\n" for i in range(6)),
     "6 of its first 6 lines hold Penn Treebank's tokens ('*T*-1' on line 1"),
    ("".join(f"The river ran past the mill number {i} today.\n\n* * *\n\n" for i in range(4)),
     "are rules ('* * *' on line 3)"),
    ("".join(f"The river ran past the mill number {i} today.\nIt was cold.\nPage {i + 1}\n" for i in range(6)),
     "6 of its first 18 lines are page numbers ('Page 1' on line 3)"),
    ("".join(f"The Liga Uruguaya de Ba\\xc3\\xa1squetbol number {i} met today.\n" for i in range(6)),
     "6 of its first 6 lines hold escaped bytes ('\\\\xc3\\\\xa1' on line 1: UTF-8 written as \\xNN or octal"),
    ("".join(f"The river ran 1979\\342\\200\\22384 past the mill number {i} today.\n" for i in range(6)),
     "6 of its first 6 lines hold escaped bytes ('\\\\342\\\\200\\\\223' on line 1: UTF-8 written as \\xNN or octal"),
    ("The river ran past the mill today.\n" * 4 + "\x1b$B$3$s$K$A$O\x1b(B\n",
     "1 of its first 5 lines hold ISO-2022's escapes (ESC $ on line 5"),
    ("".join(f"the company said its profit rose N percent in the {w} quarter\n" for w in ["first", "last"] * 6),
     "12 of its first 12 lines hold no punctuation and no capital (line 1: 'the company said its profit rose N"),
    ("".join(f"The river\u0092s mill number {i} ran \u0093all\u0094 day.\n" for i in range(6)),
     "6 of its first 6 lines hold C1 control characters (U+0092 on line 1: Windows-1252's quotes and dashes decoded as "
     "Latin-1)"),
    ("".join(f"The river ran past the mill number {i} today.\u00b6\n" for i in range(12)),
     "12 of its first 12 lines hold pilcrows (\u00b6 on line 1: a word processor's formatting marks"),
    ("".join(f"The \u200eriver \u200eran \u200epast \u200ethe \u200emill {i}.\n" for i in range(6)),
     "6 of its first 6 lines hold an invisible character (U+200E on line 1"),
    ("".join(f"> The river ran past the mill number {i} today.\n" for i in range(12)),
     "12 of its first 12 lines begin alike ('> a a', as line 1 does: '> The river ran past the mill number 0 t'): an "
     "e-mail's quoted text; the marks are read as words: remove them first (sed -E 's/^( *>)+ ?//'"),
    ("The river ran past the mill.\nnan\nThe boat sailed on.\nNone\nIt rained.\nnan\n",
     "3 of its first 6 lines are 'nan' alone (line 2), as pandas writes a missing text"),
    ("".join(f"The river ran past the mill number {i} today.\n" * 2 for i in range(6)),
     "6 of its first 12 lines repeat the line before them (line 2: 'The river ran past the mill number 0 tod'), "
     "each sentence twice"),
    ("".join(f"The caf\u00e9 number {i} was open all day \u2013 and all night.\n" for i in range(6)).encode("utf-7")
     .decode("ascii"), "6 of its first 6 lines hold UTF-7 ('+AOk' on line 1 is '\u00e9'), as some mail and old "
                       "Windows tools write text"),
])
def test_lines_begun_alike_or_escaped_are_warned_of(tmp_path, capsys, text, said):
    """A chat's export, an IRC log, a syslog or YAML (each line begun by a time, a sender, a key), Moses' escaped text
    tab-separated pairs, letters spaced apart, mojibake, colour codes and jq's quoted strings are read with a warning that names the prefix (its shape: letters a, digits 0), the escape
    or the tab, and a line; a timeline's years,
    a dialogue's speakers, a list's bullets, Portuguese and Wikipedia's few escapes are not."""
    prose._WARNED.clear()  # (a warning is printed once a process)
    path = tmp_path / "input.txt"
    path.write_text(text)
    assert len(list(plain_text.read_text_lines(str(path)))) == text.count("\n")
    assert said in capsys.readouterr().err.replace(f"warning: {path}: ", "")
    for text in ("A m\u00e3e e o p\u00e3o s\u00e3o \u00f3timos, disse Jo\u00e3o.\n" * 12,
                 "".join(f"In {1900 + i}, the town grew and a new church was built.\n" for i in range(8)),
                 "ALICE: Hello there, how are you?\nBOB: I am fine, thanks.\n" * 4,
                 "- The cat sat on the mat.\n" * 8, PROSE * 3 + "Tom &amp; Jerry ran.\n" * 9,
                 "".join(f"The river ran past mill {i} today.</s>\n" for i in range(12)),  # (ended, not wrapped)
                 "".join(f"The area of lake {i} is 5 km\u00b2 in all.\n" for i in range(12)),  # (no footnote)
                 "\u092f\u0939 \u090f\u0915 \u0905\u091a\u094d\u091b\u0940 \u0915\u093f\u0924\u093e\u092c "
                 "\u0939\u0948\u0964\n" * 12,  # (Hindi, its sentences ended by a danda)
                 "\u0531\u0575\u057d \u0563\u056b\u0580\u0584\u0568 \u056c\u0561\u057e \u0567\u0589\n" * 12,  # (Armenian)
                 "\u0e19\u0e35\u0e48\u0e04\u0e37\u0e2d \u0e2b\u0e19\u0e31\u0e07\u0e2a\u0e37\u0e2d\u0e17\u0e35\u0e48"
                 "\u0e14\u0e35 \u0e21\u0e32\u0e01\n" * 12,  # (Thai: no sentence mark)
                 "The first match was played on 27 October.\n" * 9 + PROSE,  # (a run of one line, as Wikipedia's lists)
                 "".join(f'"I will come back on day {i}."\n"Do not be late."\nHe left her at the gate.\n'
                         for i in range(12)),  # (a novel's dialogue: a speech a line, narration between)
                 "".join("\t".join(f"The cat number {i} sat on the mat today .".split()[:4 + i]) + "\n"
                         for i in range(6))):
        path.write_text(text)
        list(plain_text.read_text_lines(str(path)))
        assert capsys.readouterr().err == "", text
    path.write_text("".join(f"The river ran past the [MASK] number {i} today.\n" for i in range(6)))
    list(plain_text.read_text_lines(str(path), skip_flag=False))  # served text: its [MASK]s are masks
    assert capsys.readouterr().err == ""


def test_a_byte_order_mark_at_any_line_start_is_no_character(tmp_path):
    """Files joined with cat, each saved with its byte-order mark: the marks at their lines' starts are dropped, as
    the one at the file's start is, not read as a character of the text."""
    path = tmp_path / "joined.txt"
    path.write_bytes(b"\xef\xbb\xbfThe river ran.\n\n\xef\xbb\xbfThe boat sailed on.\nIt rained.\n")
    assert [line for _, line in plain_text.read_text_lines(str(path))] == ["The river ran.", "", "The boat sailed on.",
                                                                            "It rained."]
    path.write_bytes(b"The river ran.\n\rThe boat sailed on.\n\r\n\rIt rained.\n\r")  # LF CR ends (RISC OS): a blank
    assert [line for _, line in plain_text.read_text_lines(str(path))] == ["The river ran.", "The boat sailed on.",  # line
                                                                            "", "It rained.", ""]  # after each, it was


@pytest.mark.parametrize("head, said", [
    (b"\x1f\x9d\x90The text, compressed", r"a compress \(.Z\)-compressed file, not text; decompress it first \(gzip -dc "),
    (b"PAR1\x15\x04\x15\xa0\x1f\x15\xd8\x12L\x15\x02", r"a Parquet table \(write its text column out as plain text"),
    (b"version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 9213448\n", r"a Git LFS pointer \(a few "
     r"lines naming the file\), not the file itself, whose content was not downloaded: fetch it first \(git lfs pull"),
    (b"-----BEGIN PGP MESSAGE-----\n\nhQEMA5nK\n", r"an encrypted message \(ASCII-armoured\), not text; decrypt it "
     r"first \(e.g. gpg -d"),
    (b"!<arch>\nbase.txt/       0           0     0     644     49988     `\nThe river ran.\n", r"an ar archive \(.a, "
     r".deb\): extract its files first \(ar x\), not text"),
    (b"/annex/objects/SHA256E-s9213448--4d7a214614ab2935c943f9e0ff69d22e.txt\n", r"a git-annex pointer \(the path of "
     r"its content\), not the file itself, whose content was not fetched: fetch it first \(git annex get"),
], ids=["unix-compress", "parquet", "git-lfs-pointer", "pgp-message", "ar-archive", "git-annex-pointer"])
def test_more_binary_files_are_named(head, said, tmp_path):
    from albert_act.base import encodings

    path = tmp_path / "data.txt"
    path.write_bytes(head + bytes(range(128, 256)) * 4)
    with pytest.raises(ValueError, match=said):
        encodings.refuse_other_encodings(path, path.read_bytes().split(b"\n")[0])
    path.write_bytes(b"PAR1 is the first part of the code.\nMZ is a band.\n")  # text that begins as they do: read
    encodings.refuse_other_encodings(path, b"PAR1 is the first part of the code.\n")


@pytest.mark.parametrize("text, encoding", [
    ("Москва — столица России, город федерального значения.\nОна расположена на реке Москве.\n" * 3, "utf-16-le"),
    ("北京是中华人民共和国的首都。\n它是全国的政治中心和文化中心。\n" * 3, "utf-16-le"),
    ("北京是中华人民共和国的首都。\n它是全国的政治中心和文化中心。\n" * 3, "utf-16-be"),
], ids=["cyrillic-le", "chinese-le", "chinese-be"])
def test_utf16_of_scripts_without_nul_bytes_is_named(text, encoding, tmp_path):
    """UTF-16 without its mark was told by the NUL beside each Latin letter; Cyrillic or Chinese letters have none
    (a Russian text was called binary, a Chinese one told to convert from Windows-1252)."""
    from albert_act.base import text_files

    path = tmp_path / "text.txt"
    path.write_bytes(text.encode(encoding))
    order = encoding[-2:].upper()
    with pytest.raises(ValueError, match=rf"UTF-16{order} text, not UTF-8 .*iconv -f UTF-16{order} -t UTF-8"):
        list(text_files.read_lines(str(path)))
    path.write_bytes("caf\u00e9 au lait, na\u00efve r\u00e9sum\u00e9\n".encode("latin-1") * 4)  # not UTF-16
    with pytest.raises(ValueError, match=r"line 1: not valid UTF-8"):
        list(text_files.read_lines(str(path)))


def test_lines_of_another_encoding_inside_a_utf8_file_are_named(tmp_path):
    """A UTF-16 part joined on (or one line pasted in) was read as letters spaced by NULs, or blamed on Latin-1; Java's
    modified UTF-8 (NUL as C0 80) was told to convert from Windows-1252."""
    from albert_act.base import text_files

    text = "".join(f"The river ran past the mill number {i} today.\n" for i in range(12))
    path = tmp_path / "joined.txt"
    path.write_bytes("th\u00e9 \n".encode() + text.encode() + text.encode("utf-16-le"))
    with pytest.raises(ValueError, match=r"joined.txt line 14: UTF-16LE text \(NUL bytes beside its letters\) in a file "
                                         r"read as UTF-8 \(a file of another encoding joined on, or a line pasted in\?\): "
                                         r"convert that part alone \(iconv -f UTF-16LE -t UTF-8\), or pass "
                                         r"--skip_invalid_utf8"):
        list(text_files.read_lines(str(path)))
    invalid = []  # --skip_invalid_utf8: those lines skipped and counted, the UTF-8 ones read
    kept = [line for _, line in text_files.read_lines(str(path), True, invalid)]
    assert kept[:13] == ["th\u00e9 "] + text.splitlines() and invalid[0] == (str(path), 14)
    path.write_bytes(text.encode().replace(b". ", b".\xc0\x80 ") + b"A last line.\xc0\x80 Yes.\n")
    with pytest.raises(ValueError, match=r"line 13: not valid UTF-8 .*its bytes hold C0 80, a NUL written as Java's "
                                         r"modified UTF-8"):
        list(text_files.read_lines(str(path)))


def test_a_file_utf16_then_utf8_is_not_told_to_be_converted_whole(tmp_path):
    """iconv -f UTF-16 of a file whose second part is UTF-8 turns that part into CJK mojibake, which reads as text."""
    from albert_act.base import text_files

    text = "".join(f"The river ran past the mill number {i} today.\n" for i in range(40))
    path = tmp_path / "joined.txt"
    path.write_bytes(text.encode("utf-16") + text.encode())
    with pytest.raises(ValueError, match=r"joined.txt: UTF-16 text at its start .*but UTF-8 at its end: two files of "
                                         r"different encodings joined\? Convert the UTF-16 part alone"):
        list(text_files.read_lines(str(path)))
    path.write_bytes(text.encode("utf-16"))
    with pytest.raises(ValueError, match=r"joined.txt: UTF-16 text, not UTF-8 .*convert it first: iconv -f UTF-16"):
        list(text_files.read_lines(str(path)))


TEXT = "".join(f"The river ran past the mill number {i} today, and nobody saw caf\u00e9 signs.\n" for i in range(40))


@pytest.mark.parametrize("second, other, mark", [(b"\xfe\xff" + TEXT.encode("utf-16-be"), "UTF-16", "FE FF"),
                                                 (TEXT.encode("utf-32"), "UTF-32", "FF FE 00 00")])
def test_utf16_joined_to_another_part_is_told_to_convert_each_part_and_the_commands_do(tmp_path, second, other, mark):
    """A UTF-16LE file (FF FE) joined to a UTF-16BE one (FE FF) or a UTF-32 one (FF FE 00 00): iconv -f UTF-16 of the
    whole garbles the second (CJK mojibake, NULs). The second part is named, and the two commands advised give both
    parts' text back."""
    import re
    import subprocess

    from albert_act.base import text_files

    path = tmp_path / "in.txt"
    path.write_bytes(TEXT.encode("utf-16") + second)
    turn = len(TEXT.encode("utf-16"))
    with pytest.raises(ValueError, match=rf"in.txt: UTF-16 text \(a FF FE mark at its start\) whose second part, from "
                                         rf"byte {turn:,}, is {other} \({mark} there: two files joined\?\)") as refused:
        list(text_files.read_lines(str(path)))
    subprocess.run(["bash", "-c", re.search(r"then join them \((.*)\)$", str(refused.value)).group(1)], cwd=tmp_path,
                   check=True)
    for part in ("part1.txt", "part2.txt"):
        assert [line for _, line in text_files.read_lines(str(tmp_path / part))] == TEXT.splitlines()


def _deflated(data):
    import zlib

    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush()


@pytest.mark.parametrize("data, said, parts", [
    (TEXT.encode("utf-32") + TEXT.encode("utf-16"), r"UTF-32 text \(a FF FE 00 00 mark at its start\) whose second part, "
     r"from byte [\d,]+, is UTF-16 \(FF FE there: two files joined\?\): convert each part alone, then join them \((.*)\)$",
     ("part1.txt", "part2.txt")),  # (round 46 A81: 'cut short')
    (TEXT.encode("cp1252") + TEXT.encode("utf-16"), r"line 1: not valid UTF-8 .*; and from byte [\d,]+ on it holds UTF-16 "
     r"text \(a FF FE byte-order mark: a file appended to one of another encoding\?\): convert each part alone, then join "
     r"them \((.*), or the first part's own encoding; (.*)\), or pass", ("part1.txt", "part2.txt")),  # (A83: cp1252 for all)
    (_deflated(TEXT.encode()), r"a raw DEFLATE stream \(no gzip or zlib header\), which inflates to text "
     r"\('The river ran past the mill nu'\): decompress it first \((.*)\)$", ("text.txt",)),  # (A77: 'iconv -f cp1252')
    (__import__("lzma").compress(TEXT.encode(), format=__import__("lzma").FORMAT_ALONE), r"a legacy LZMA-compressed file, "
     r"not text; decompress it first \((.*)\)$", ("in.decompressed.txt",)),  # (A76: 'a binary file')
], ids=["utf32-then-utf16", "cp1252-then-utf16", "raw-deflate", "legacy-lzma"])
def test_files_of_two_encodings_or_bare_compression_are_named_and_the_commands_work(tmp_path, data, said, parts):
    """Round 46 A76, A77, A81, A83: each was named as something else, with advice that garbled it."""
    import re
    import subprocess

    from albert_act.base import text_files

    path = tmp_path / "in.txt"
    path.write_bytes(data)
    with pytest.raises(ValueError) as refused:
        list(text_files.read_lines(str(path)))
    found = re.search(said, str(refused.value))
    assert found, str(refused.value)
    subprocess.run(["bash", "-c", "; ".join(found.groups())], cwd=tmp_path, check=True)
    assert "".join((tmp_path / part).read_text() for part in parts) == TEXT * len(parts)


@pytest.mark.parametrize("separator, named", [("\f", "form feeds"), ("\x1e", "record separators"),
                                              ("\x1f", "unit separators")])
def test_lines_separated_by_other_controls_are_named_and_the_tr_given_splits_them(tmp_path, separator, named):
    """Round 46 A104, A105: a file of lines separated by form feeds or 0x1F alone was read as one instance."""
    import re
    import subprocess

    from albert_act.base import text_files

    (tmp_path / "in.txt").write_text(separator.join(TEXT.splitlines()))
    with pytest.raises(ValueError, match=rf"in.txt: text whose lines are separated by {named} \(U\+00\w\w\), not line "
                                         r"ends: convert them first \((tr .*)\)$") as refused:
        list(text_files.read_lines(str(tmp_path / "in.txt")))
    subprocess.run(["bash", "-c", re.search(r"\((tr .*)\)$", str(refused.value)).group(1)], cwd=tmp_path, check=True)
    assert (tmp_path / "lines.txt").read_text().splitlines() == TEXT.splitlines()


@pytest.mark.parametrize("encoding", ["utf-32", "utf-16"])
def test_utf8_joined_to_a_file_with_a_byte_order_mark_is_told_to_convert_that_part_and_the_commands_do(tmp_path,
                                                                                                     encoding):
    """UTF-8 text with UTF-32 (or UTF-16) appended by iconv, its mark at a line's start (round 45 A76: a Latin-1
    line was blamed): the part is named, and the commands advised give the whole text back."""
    import re
    import subprocess

    from albert_act.base import text_files

    path = tmp_path / "in.txt"
    path.write_bytes(TEXT.encode() + TEXT.encode(encoding))
    with pytest.raises(ValueError, match=rf"in.txt line 41: {encoding.upper()} text \(a FF FE[ 0]* byte-order mark, "
                                         r"then NUL bytes beside its letters\)") as refused:
        list(text_files.read_lines(str(path)))
    subprocess.run(["bash", "-c", re.search(r"then join them \((.*)\)$", str(refused.value)).group(1)], cwd=tmp_path,
                   check=True)
    assert (tmp_path / "text.txt").read_text() == TEXT * 2


@pytest.mark.parametrize("data, said", [
    (TEXT.encode("utf-16")[:-1], r"UTF-16 text, not UTF-8 .*cut short: its 5\d+ bytes are no whole number of UTF-16 "
     r"characters"),
    (b"\xff\xfe" + TEXT.encode(), r"a UTF-16 byte-order mark \(FF FE\) before UTF-8 text .*remove its first 2 bytes"),
    (b"\xff\xfe\x00\x00" + TEXT.encode(), r"a UTF-32 byte-order mark \(FF FE 00 00\) before UTF-8 text .*remove its "
     r"first 4 bytes"),
    (TEXT.replace("\n", "\0").encode(), r"text whose lines are separated by NUL bytes \(as find -print0"),
    (b"\xef\xbb\xbf" + TEXT.encode("cp1252"), r"line 1: not valid UTF-8 .*yet the file begins with a UTF-8 byte-order "
     r"mark: the mark is wrong"),
    (b"".join(line.encode("utf-8" if i == 20 else "cp1252") for i, line in enumerate(TEXT.splitlines(True))),
     r"line 1: not valid UTF-8 .*the file mixes encodings \(line 21 is UTF-8 beyond ASCII; this line is not: UTF-8 "
     r"lines pasted into a file of another encoding\?\): .*; convert what is not UTF-8 alone"),
    (b"".join(line.encode("cp1252" if i == 5 else "utf-8") for i, line in enumerate(TEXT.splitlines(True))),
     r"line 6: not valid UTF-8 .*the file mixes encodings \(line 1 is UTF-8 beyond ASCII; this line is not: e.g. "
     r"Latin-1 pasted in\): .*; fix line 6 alone, or convert what is not UTF-8 alone"),
], ids=["utf16-cut-a-byte-short", "utf16-mark-before-utf8", "utf32-mark-before-utf8", "nul-separated-lines",
         "utf8-mark-before-cp1252",
        "cp1252-with-a-utf8-line", "utf8-with-a-cp1252-line"])
def test_the_advised_command_makes_the_text_readable(tmp_path, data, said):
    """A UTF-16 file cut a byte short (iconv stops at its end), a stray UTF-16 mark before UTF-8 text (converted, CJK
    mojibake), lines separated by NULs (called binary), a UTF-8 mark before Windows-1252 text (converted, the mark
    became three letters), Windows-1252 text with a UTF-8 line (converted whole, that line garbled), or the reverse:
    each is named, and its command, run, gives the text back."""
    import re
    import subprocess

    from albert_act.base import text_files

    path = tmp_path / "in.txt"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=said) as refused:
        list(text_files.read_lines(str(path)))
    command = re.search(r"\b((?:tail|head|tr|python3) .*?(?:fixed|converted|lines)\.txt)", str(refused.value)).group(1)
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    output = next(tmp_path.glob("[fcl]*.txt"))
    assert [line for _, line in text_files.read_lines(str(output))] == TEXT.splitlines()


@pytest.mark.parametrize("text, joined", [
    ("The old man walked slowly\ndown the long road to the\nvillage where he was born. He\nslept.\n\n" * 8,
     "The old man walked slowly down the long road to the village where he was born.\nHe slept.\n"),
    ("The old man walked slowly down the long ro-\nad to the small and quiet vil-\nlage where he was \"born.\" He\n"
     "slept.\n\n" * 8, "The old man walked slowly down the long road to the small and quiet village where he was "
                       "\"born.\"\nHe slept.\n"),
    ("The old man walked slowly\r\ndown the long road to the\r\nvillage where he was born. He\r\nslept.\r\n\r\n" * 8,
     "The old man walked slowly down the long road to the village where he was born.\nHe slept.\n"),
    ("The old man walked slowly\ndown the long ro-\nad to the small and quiet vil-\nlage where he was born. He\n"
     "slept.\n\n" * 8, "The old man walked slowly down the long road to the small and quiet village where he was born."
                      "\nHe slept.\n"),
    ("The old man walked slowly down the long ro\u2010\nad to the small and quiet vil\u2010\nlage where he was born. He\n"
     "slept.\n\n" * 8, "The old man walked slowly down the long road to the small and quiet village where he was born."
                      "\nHe slept.\n"),
], ids=["wrapped", "wrapped-and-hyphenated", "wrapped-with-crlf", "hyphenated-after-its-first-line", "u2010-hyphen"])
def test_hard_wrapped_text_is_told_a_command_that_joins_it(tmp_path, capsys, text, joined):
    """The advice was fmt -w 100000, which GNU fmt refuses (its widest is 2,500) and which leaves words hyphenated
    across lines split ('Ame- rican'); the command now given, run, gives each paragraph on one line."""
    import re
    import subprocess

    prose._WARNED.clear()
    (tmp_path / "wrapped.txt").write_text(text)
    list(plain_text.read_text_lines(str(tmp_path / "wrapped.txt")))
    warning = capsys.readouterr().err
    assert "stop mid-sentence" in warning
    command = re.search(r"join each paragraph's lines first \((tr .*? > \S+wrapped.joined.txt)", warning).group(1)
    assert "a sentence a line" in warning
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "wrapped.joined.txt").read_text() == (joined + "\n") * 8


@pytest.mark.parametrize("cut", ["\v", "\u2028", "\r", "\n"], ids=["vertical-tab", "u2028", "lone-cr", "newline"])
def test_sentences_cut_in_two_lines_are_warned_of_with_the_command_that_mends_them(tmp_path, capsys, cut):
    """Half of the lines ending mid-sentence (each long sentence cut at its middle, as Word's manual line break does)
    was under the hard wrap's share and said nothing (round 43 A116 to A119); the command given, run, gives the text
    back (the line ends inside lines made spaces, or the paragraphs joined)."""
    import re
    import subprocess

    prose._WARNED.clear()
    sentences = [f"The old man number {i} walked slowly down the long road to the village." for i in range(20)]
    text = "".join(f"{s}\nIt rained.\n\n" for s in sentences)
    (tmp_path / "cut.txt").write_bytes(text.replace(" down the", cut + "down the").encode("utf-8"))
    list(plain_text.read_text_lines(str(tmp_path / "cut.txt")))
    warning = capsys.readouterr().err
    assert warning.startswith(f"warning: {tmp_path}/cut.txt: 20 of its first 60 lines stop mid-sentence where the next "
                              "goes on in lower case (line 1: 'old man number 0 walked slowly'): sentences cut in "
                              "two, each half read as a sentence of its own; ")
    assert "as hard-wrapped text" not in warning  # (said once)
    command = re.search(r"(?:make each a space|join each paragraph's lines) first \((.*)\)", warning).group(1)
    subprocess.run(["bash", "-c", command.split(", a sentence a line")[0]], cwd=tmp_path, check=True)
    mended = (tmp_path / ("cut.joined.txt" if cut == "\n" else "text.txt")).read_text()
    assert mended == text
    prose._WARNED.clear()
    list(plain_text.read_text_lines(str(tmp_path / "cut.txt").replace("cut.txt", "cut.joined.txt" if cut == "\n" else
                                                                          "text.txt")))
    assert capsys.readouterr().err == ""


def test_a_running_page_header_is_named_and_its_command_leaves_it_out(tmp_path, capsys):
    """A page's header, one line but for its number, between blank lines every 20 lines was read as one-line
    documents (most of the held-out ones) without a word (round 43 A112); the grep given, run, leaves them out."""
    import subprocess

    prose._WARNED.clear()
    pages = [" ".join(f"The river ran past mill {page * 20 + i} today." for i in range(2)) for page in range(6)]
    header = "THE RIVERS (VOL. II) \u2014 \u2018NOTES\u2019   "
    text = "".join(f"{header}{11 + page}\n\n" + "\n".join(
        [pages[page]] * 20) + "\n\n" for page in range(6))
    (tmp_path / "paged.txt").write_text(text)
    list(plain_text.read_text_lines(str(tmp_path / "paged.txt")))
    warning = capsys.readouterr().err
    assert warning.startswith(f"warning: {tmp_path}/paged.txt: 6 of its first 126 lines are one line, its numbers "
                              "aside (line 1: 'THE RIVERS (VOL. II) \u2014 \u2018NOTES\u2019   11'), as a page's "
                              "running header or footer, or a numbered heading: each is read as a sentence of its own; "
                              "leave them out (grep -v -E '^")
    subprocess.run(["bash", "-c", warning.split("leave them out (")[1].rstrip().rstrip(")")], cwd=tmp_path, check=True)
    assert (tmp_path / "text.txt").read_text() == "".join("\n" + "\n".join([pages[page]] * 20) + "\n\n"
                                                          for page in range(6))


@pytest.mark.parametrize("end", ["<ref>{{cite web|url=http://x.org|title=T}}</ref>", "<sup>2</sup>", " http"])
def test_lines_ended_by_a_wiki_reference_are_not_called_wrapped(tmp_path, capsys, end):
    """Raw MediaWiki's sentences end in '<ref>{{cite web|...}}</ref>': they were called hard-wrapped (with fmt); so
    were lines ending in HTML's footnote mark or TweetEval's http (round 44 A64, A103)."""
    prose._WARNED.clear()
    (tmp_path / "wiki.txt").write_text("".join(f"The river ran past the mill number {i} today.{end}\n" for i in range(24)))
    list(plain_text.read_text_lines(str(tmp_path / "wiki.txt")))
    assert "stop mid-sentence" not in capsys.readouterr().err


def test_a_nel_inside_a_line_of_a_file_of_newlines_is_warned_of(tmp_path, capsys):
    """U+0085 is Windows-1252's ellipsis decoded as Latin-1 far more often than an EBCDIC line end: each cut its
    sentence in two without a word; the sed given, run, gives the ellipsis back."""
    import subprocess

    from albert_act.base import text_files

    path = tmp_path / "in.txt"
    path.write_text("He waited\u0085 and then he left.\nShe stayed.\nHe came back\u0085 later.\n")
    assert [line for _, line in text_files.read_lines(str(path))] == ["He waited", " and then he left.", "She stayed.",
                                                                     "He came back", " later."]
    warning = capsys.readouterr().err
    assert warning.count("warning:") == 1 and "in.txt line 1: U+0085 (NEL) inside a line, read as a line end" in warning
    command = warning.split("replace it first (")[1].rsplit(")", 1)[0]
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.txt").read_text() == "He waited\u2026 and then he left.\nShe stayed.\nHe came back\u2026 later.\n"
    path.write_text("one\u0085two\u0085three")  # NEL the file's only line end (an EBCDIC export): no warning
    assert [line for _, line in text_files.read_lines(str(path))] == ["one", "two", "three"]
    path.write_text("one\u0085\ntwo\u0085\r\nthree\u0085\n")  # NEL before each newline (round 44 A06): one line end
    assert [line for _, line in text_files.read_lines(str(path))] == ["one", "two", "three"]
    assert capsys.readouterr().err == ""


def test_a_glob_in_a_folder_not_readable_says_so(tmp_path, monkeypatch):
    """'no file matches locked/*.txt' of a folder that holds a.txt but cannot be listed: the cause is said."""
    import os

    from albert_act.base import text_files

    (tmp_path / "locked").mkdir()
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: str(path) != str(tmp_path / "locked") and real_access(path, mode))
    monkeypatch.setattr(text_files, "glob", lambda pattern: [])  # (as glob finds nothing in a folder it cannot list)
    with pytest.raises(ValueError, match=r"no file matches '\S+locked/\*.txt': \S+locked cannot be read \(permission "
                                         r"denied\), so its files cannot be listed; make it readable \(chmod u\+rx"):
        text_files.expand_patterns([str(tmp_path / "locked" / "*.txt")])


def test_an_advised_command_quotes_a_path_with_spaces(tmp_path):
    """'gunzip -c /x/sp dir/my corpus.txt > ...', pasted, failed and made a stray file: the path is quoted."""
    import gzip
    import subprocess

    from albert_act.base import text_files

    (tmp_path / "sp dir").mkdir()
    path = tmp_path / "sp dir" / "my corpus.txt"
    path.write_bytes(gzip.compress(TEXT.encode()))
    with pytest.raises(ValueError, match=r"decompress it first \(gunzip -c '\S+sp dir/my corpus.txt' > '\S+sp "
                                         r"dir/my corpus.decompressed.txt'\)") as refused:
        list(text_files.read_lines(str(path)))
    subprocess.run(["bash", "-c", str(refused.value).split("decompress it first (")[1][:-1]], check=True)
    assert (tmp_path / "sp dir" / "my corpus.decompressed.txt").read_text() == TEXT


@pytest.mark.parametrize("encoding, said", [("mac_roman", "Mac Roman"), ("cp1252", "Latin-1 or Windows-1252"),
                                             ("latin-1", "Latin-1 or Windows-1252")])
def test_a_classic_mac_file_in_an_8_bit_encoding_is_told_both_conversions(tmp_path, encoding, said):
    """CR line ends were named, and then Windows-1252 advised for its letters, which garbled them (Mac Roman); then
    Mac Roman advised for Latin-1 and Windows-1252 text with CR line ends, which garbled theirs (round 42 A03, A04)."""
    import subprocess

    from albert_act.base import text_files

    line = "Le g\u00e9n\u00e9ral \u00e9tait tr\u00e8s \u00e2g\u00e9" + (", \u201cdit-il\u201d." if encoding == "cp1252" else ".")
    path = tmp_path / "mac.txt"
    path.write_bytes(f"{line}\r".encode(encoding) * 20)
    with pytest.raises(ValueError, match=rf"lone CR \(classic Mac line ends\), its text not UTF-8 \({said}\?\)") as refused:
        list(text_files.read_lines(str(path)))
    subprocess.run(["bash", "-c", str(refused.value).split("convert them first: ")[1]], cwd=tmp_path, check=True)
    assert [line for _, line in text_files.read_lines(str(tmp_path / "converted.txt"))] == [line] * 20


def test_the_mask_is_counted_as_the_model_reads_it():
    """'\uff3bMASK\uff3d' (a CJK keyboard's), '[M\u00c1SK]' and '[mask]' are each the mask once normalised: served
    text counted none of them (round 42 A49), and training text holding them was not warned of (A126)."""
    assert [prose.masks_in(s) for s in ("a \uff3bMASK\uff3d b", "[M\u00c1SK] and [mask]", "[ MASK ]", "<mask>",
                                        "a mask")] == [1, 2, 0, 0, 0]


def test_a_socket_matched_by_a_glob_is_named(tmp_path):
    """A Unix socket among the files a glob matches was 'cannot be read (No such device or address)' (round 43 A78)."""
    import socket

    from albert_act.base import text_files

    (tmp_path / "a.txt").write_text("The river ran past the mill.\n")
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(tmp_path / "b.txt"))
        with pytest.raises(ValueError, match=r"b.txt is a socket, not a text file: give a file"):
            text_files.expand_patterns([str(tmp_path / "*.txt")])
    finally:
        server.close()


@pytest.mark.parametrize("data, said", [
    (__import__("gzip").compress(b"The river ran past the mill.\n"), r"a gzip-compressed file, not text; decompress it "
     r"first \(in the pipe that feeds it: \.\.\. \| gunzip -c \| <this command, reading /dev/fd/\d+>\)"),
    ("The river ran past the mill.\n".encode("utf-16"), r"UTF-16 text, not UTF-8 .*convert it in the pipe that feeds "
     r"it: \.\.\. \| iconv -f UTF-16 -t UTF-8 \| <this command")], ids=["gzip", "utf16"])
def test_a_pipe_is_told_to_convert_in_the_pipe(data, said):
    """Compressed or UTF-16 text on standard input was told to decompress /dev/stdin into /dev/stdin.decompressed,
    or to convert /dev/fd/63, gone once the command ends (round 43 A100, A101, A103 to A105)."""
    from albert_act.base import text_files

    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    try:
        with pytest.raises(ValueError, match=said):
            list(text_files.read_lines(f"/dev/fd/{read}"))
    finally:
        os.close(read)


@pytest.mark.parametrize("encoding, named, language", [("cp1251", "CP1251", "Russian"), ("koi8_r", "KOI8-R", "Russian"),
                                                       ("gb18030", "GB18030", "Chinese")])
def test_text_of_another_encoding_is_told_the_iconv_that_converts_it(tmp_path, encoding, named, language):
    """Cyrillic and Chinese files were told 'iconv -f cp1252' (which turns them into mojibake, then accepted) and that
    'file -i' names their encoding, which calls each ISO-8859-1 (round 44 A51 to A53); charset-normalizer's guess is
    named, and its iconv, run, gives the text back."""
    import subprocess

    from albert_act.base import text_files

    text = {"Russian": "Москва - столица России. Здесь живут миллионы людей, и город очень большой.\n",
            "Chinese": "北京是中国的首都。它是世界上人口最多的城市之一。长城是中国古代的军事防御工程。\n"}[language] * 20
    (tmp_path / "in.txt").write_bytes(text.encode(encoding))
    with pytest.raises(ValueError, match=rf"in.txt line 1: not valid UTF-8 .*; its bytes read as {language} text "
                                         rf"\({named}, by charset-normalizer's guess\): convert it \((iconv -f {named} "
                                         r"-t UTF-8 \S+in.txt > converted.txt)\)") as refused:
        list(text_files.read_lines(str(tmp_path / "in.txt")))
    command = str(refused.value).split("convert it (")[1].split(")")[0]
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "converted.txt").read_text(encoding="utf-8") == text


@pytest.mark.parametrize("encoding, read_as, language", [("cp1251", "cp1252", "Russian"), ("gb18030", "latin-1", "Chinese")])
def test_another_scripts_text_converted_from_the_wrong_encoding_is_undone_by_the_command_given(
        tmp_path, capsys, encoding, read_as, language):
    """Cyrillic converted with 'iconv -f cp1252' ('\u00cc\u00ee\u00f1\u00ea\u00e2\u00e0') and Chinese with Latin-1 were accepted, or warned of as
    pilcrows and hard wraps (round 44 A56, A57): named, with the two iconv that undo the conversion."""
    import subprocess

    text = {"Russian": "Москва - столица России. Здесь живут миллионы людей, и город очень большой.\n",
            "Chinese": "北京是中国的首都。它是世界上人口最多的城市之一。长城是中国古代的军事防御工程。\n"}[language] * 20
    (tmp_path / "in.txt").write_text(text.encode(encoding).decode(read_as), encoding="utf-8")
    prose._WARNED.clear()
    list(plain_text.read_text_lines(str(tmp_path / "in.txt")))
    warning = next(line for line in capsys.readouterr().err.splitlines() if "accented" in line)
    assert warning.startswith(f"warning: {tmp_path}/in.txt: 20 of its first 20 lines are mostly Latin-1's accented "
                              "letters (line 1: ")
    assert warning.endswith(f"> fixed.txt: {language}, by charset-normalizer's guess)")
    subprocess.run(["bash", "-c", warning.split("undo it (")[1].split(": " + language)[0]], cwd=tmp_path, check=True)
    assert (tmp_path / "fixed.txt").read_text(encoding="utf-8") == text


def test_a_named_pipe_nothing_writes_to_is_noted_and_read_once_written(tmp_path, capsys):
    """A FIFO named outright with no writer made the data tool, analyze and probing wait without a word (round 45
    A67): a note says what they wait for, and the text is read once a program writes it."""
    import threading
    import time

    from albert_act.base import text_files

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: (time.sleep(1.5), fifo.write_text("One line.\nTwo lines.\n")))
    writer.start()
    assert [line for _, line in text_files.read_lines(str(fifo))] == ["One line.", "Two lines."]
    writer.join()
    assert capsys.readouterr().err == (f"note: {fifo} is a named pipe (FIFO) that nothing has written to yet: waiting "
                                       "for a program to write it (Ctrl-C to stop)\n")
