"""Text written in another form than its own (`albert_act.base.text_marks`): URL-encoding, quoted-printable bytes,
overstrike, box frames, underscores for spaces, control characters, links; other models' special tokens; served
text's repeats and own markers. Each is named with a line, and the command its warning gives gives the text back."""

import os
import re
import shutil
import subprocess
import urllib.parse

import pytest

from albert_act.base import plain_text, prose

SMALL = "\u1d00\u0299\u1d04\u1d05\u1d07\ua730\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d\u0274\u1d0f\u1d18\u01eb\u0280\ua731\u1d1b\u1d1c\u1d20\u1d21\u028f\u1d22"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SENTENCES = [f"The river ran past the old mill number {i}, and the town grew." for i in range(12)]
_COMMAND = re.compile(r"\(((?:sed|python3|tr|col) .*? > text\.txt)")


def _overstruck(line):
    return "".join(f"{c}\b{c}" if c.isalpha() else c for c in line)


@pytest.mark.parametrize("dirty, said", [
    ([urllib.parse.quote(s) for s in SENTENCES], "12 of its first 12 lines are URL-encoded ('%20' on line 1"),
    ([urllib.parse.quote_plus(s) for s in SENTENCES], "12 of its first 12 lines are URL-encoded ('The+river+ran+"),
    ([s.replace("old", "old (1979=E2=80=9384)") if i % 3 == 0 else s for i, s in enumerate(SENTENCES)],
     "4 of its first 12 lines hold quoted-printable bytes ('=E2=80=93' on line 1"),
    ([_overstruck(s) for s in SENTENCES], "12 of its first 12 lines hold backspaces (line 1"),
    ([f"\u2502 {s} \u2502" for s in SENTENCES], "12 of its first 12 lines are framed in box-drawing characters (line 1"),
    ([s.replace(" ", "_") for s in SENTENCES], "12 of its first 12 lines are words joined by '_' (line 1"),
    (SENTENCES + ["\x1a"], "1 of its first 13 lines hold a control character (U+001A on line 13: Ctrl-Z"),
    ([s.replace("river", "[river](https://en.wikipedia.org/wiki/River)") for s in SENTENCES],
     "12 of its first 12 lines hold links ('[river](https://en.wikipedia.org/wiki/Ri' on line 1"),
    ([s.replace("river", "[[River|river]]").replace("mill", "[[mill]]") for s in SENTENCES],
     "12 of its first 12 lines hold links ('[[River|river]]' on line 1"),
    ([s + ("      " + str(i + 1) if (i + 1) % 4 == 0 else "") for i, s in enumerate(SENTENCES)],
     "3 of its first 12 lines end in a number set apart by spaces (line 4: '"),
    ([s.replace("old", "old (1979=e2=80=9384)") if i % 3 == 0 else s for i, s in enumerate(SENTENCES)],
     "4 of its first 12 lines hold quoted-printable bytes ('=e2=80=93' on line 1"),
    ([line for i, s in enumerate(SENTENCES) for line in ([f"| {s} |"] + (["+" + "-" * 20 + "+"] if i % 4 == 3 else []))],
     "15 of its first 15 lines are framed in '|' (line 1"),
    ([s.replace(" ", "-") for s in SENTENCES], "12 of its first 12 lines are words joined by '-' (line 1"),
    ([s.replace("river", "[b]river[/b]").replace("town", "[url=https://x.org]town[/url]") for s in SENTENCES],
     "12 of its first 12 lines hold BBCode tags ('[/b]' on line 1"),
    ([line for i, s in enumerate(SENTENCES) for line in (s.replace("mill", f"[mill][{i}]"), f"[{i}]: https://x.org/{i}")],
     "24 of its first 24 lines hold links ('[mill][0]' on line 1"),
    ([f"{s} ![figure](images/fig{i}.png)" if i % 2 else s for i, s in enumerate(SENTENCES)],
     "6 of its first 12 lines hold links (' ![figure](images/fig1.png)' on line 2"),
    ([s.replace("river", "[[https://en.wikipedia.org/wiki/River][river]]") for s in SENTENCES],
     "12 of its first 12 lines hold links ('[[https://en.wikipedia.org/wiki/River][r' on line 1"),
    ([s.replace("river", "`river <https://en.wikipedia.org/wiki/River>`_") for s in SENTENCES],
     "12 of its first 12 lines hold links ('`river <https://en.wikipedia.org/wiki/Ri' on line 1"),
    ([" ".join(w + "</w>" for w in s.split()) if i % 2 else s for i, s in enumerate(SENTENCES)],
     "6 of its first 12 lines hold BPE's end-of-word marks ('The</w> river</w> ran</w> past' on line 2"),
    ([s.translate(str.maketrans("abcdefghijklmnopqrstuvwyz", SMALL)) if i % 2 else s for i, s in enumerate(SENTENCES)],
     "6 of its first 12 lines hold small capitals ('\u0280\u026a\u1d20' on line 2"),
    ([("User: " if i % 2 else "Assistant: ") + s for i, s in enumerate(SENTENCES)],
     "12 of its first 12 lines begin with a chatbot's roles ('Assistant: The river ran past ' on line 1"),
    ([s.replace("river", "'''river'''") for s in SENTENCES], "12 of its first 12 lines hold MediaWiki's bold quotes "
                                                             "(\"'''river'''\" on line 1"),
    (["\x1b(B" + s if i % 2 else s for i, s in enumerate(SENTENCES)],
     "6 of its first 12 lines hold ISO 2022's escapes (ESC '(B' on line 2"),
], ids=["percent", "plus", "quoted-printable", "overstrike", "box", "underscores", "ctrl-z", "markdown", "mediawiki",
        "margin-numbers", "quoted-printable-lower-case", "ascii-frame", "hyphens", "bbcode", "markdown-references",
        "markdown-images", "org-links", "rest-links", "end-of-word-marks", "small-caps", "chat-roles", "bold",
        "iso-2022-escapes"])
def test_text_in_another_form_is_named_and_its_command_gives_the_text_back(tmp_path, capsys, dirty, said):
    """Round 45 A01, A05, A08, A11, A16, A24, A26, A65, A66, round 43 A113 (line numbers in a margin) and round 46
    A01, A03, A05, A08 to A12, A18, A98, A100, A122, A135 (lower-case quoted-printable, ASCII frames, hyphens for spaces, BBCode, Markdown's
    references and images, Org's and reST's links, ISO 2022's escapes, BPE's '</w>', bold quotes, a chatbot's roles,
    small capitals): each was read as letters with no word, or with the wrong
    cause (UTF-7 for form data's '+', a hard wrap for a frame)."""
    if "backspaces" in said and not shutil.which("col"):
        pytest.skip("col (bsdextrautils) is not installed")
    prose._WARNED.clear()
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in dirty), encoding="utf-8")
    list(plain_text.read_text_lines(str(path)))
    err = capsys.readouterr().err.replace(f"warning: {path}: ", "")
    assert said in err and "UTF-7" not in err and "stop mid-sentence" not in err, err
    command = _COMMAND.search(err[err.index(said):]).group(1)
    subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True, env={**os.environ, "LC_ALL": "C.UTF-8",
                                                                         "PYTHONPATH": REPO})
    kept = [line for line in (tmp_path / "text.txt").read_text(encoding="utf-8").splitlines() if line]
    assert kept == [re.sub("=[Ee]2=80=93", "\u2013", line) for line in dirty] if "quoted" in said else SENTENCES


@pytest.mark.parametrize("mark, said", [
    ("<bos>", "hold <bos> (line 1), another model's special token"),
    ("<start_of_turn>user", "hold <start_of_turn> (line 1), another model's special token"),
    ("<pad> <pad>", "hold <pad> (line 1), another model's special token"),
    ("<blank>", "hold <blank> (line 1), another model's special token"),
    ("[INST]", "hold [INST] (line 1), another model's special token"),
    ("<<SYS>>", "hold <<SYS>> (line 1), another model's special token")])
def test_other_models_tokens_are_named(tmp_path, capsys, mark, said):
    """Round 45 A29, A92 to A94, round 46 A13, A52, A60, A61: LLaMA's <bos>, Gemma's turns, <pad> on a third of the
    lines, a cloze's <blank> (told this model's mask is [MASK]), Mistral's [INST]."""
    prose._WARNED.clear()
    path = tmp_path / "in.txt"
    path.write_text("".join(f"{mark} {s}\n" if i % 3 == 0 else f"{s}\n" for i, s in enumerate(SENTENCES)))
    list(plain_text.read_text_lines(str(path)))
    assert said in capsys.readouterr().err


def test_served_text_names_its_repeats_and_the_models_markers_from_one_line(tmp_path, capsys):
    """Round 45 A31, A32 and B23: 30 copies of one sentence were served and tabled as 30; '[CLS] ... [SEP]' typed
    in one served line was only '33% <unk>'. Training text keeps its thresholds (a run of one line: Wikipedia's
    lists)."""
    prose._WARNED.clear()
    path = tmp_path / "served.txt"
    path.write_text(f"{SENTENCES[0]}\n" * 30)
    assert len(list(plain_text.read_text_lines(str(path), skip_flag=False))) == 30
    assert ("29 of its first 30 lines repeat one before them (line 2 is line 1 again): each is served and counted "
            "again") in capsys.readouterr().err
    subprocess.run(["bash", "-c", f"awk '!seen[$0]++' {path} > text.txt"], cwd=tmp_path, check=True)
    assert (tmp_path / "text.txt").read_text() == f"{SENTENCES[0]}\n"
    list(plain_text.read_text_lines(str(path)))  # (training text: no such warning)
    assert "repeat one before them" not in capsys.readouterr().err
    path.write_text(f"[CLS] {SENTENCES[0]} [SEP]\n{SENTENCES[1]}\n")
    list(plain_text.read_text_lines(str(path), skip_flag=False))
    assert "1 of its first 2 lines hold [CLS] (line 1), the model's own marker" in capsys.readouterr().err
    path.write_text(f"{SENTENCES[0].replace('mill', '<unk>')}\n{SENTENCES[1].replace(' ', '_')}\n{SENTENCES[2]}\n")
    list(plain_text.read_text_lines(str(path), skip_flag=False))  # (round 46 A116, A118: one line each)
    err = capsys.readouterr().err
    assert "1 of its first 3 lines hold <unk> (line 1)" in err and "1 of its first 3 lines are words joined by '_'" in err
    path.write_text(f"The http protocol is old.\n{SENTENCES[1]}\n")  # (a lone 'http' served: a word, not TweetEval's mark)
    list(plain_text.read_text_lines(str(path), skip_flag=False))
    assert capsys.readouterr().err == ""


def test_wikipedia_text_raises_none_of_these_warnings(capsys):
    """The held-out Wikipedia text, read in chunks of 12 lines, holds none of the new traits (false alarms)."""
    from albert_act.base import text_marks

    path = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "wikipedia_en_sample",
                        "wiki_en_valid.txt")
    if not os.path.exists(path):
        pytest.fail("../shared/data is missing") if os.environ.get("CI") else pytest.skip("../shared/data is absent")
    lines = [line for line in open(path, encoding="utf-8") if line.strip()]
    for start in range(0, len(lines), 12):
        chunk = lines[start:start + 12]
        for trait, (holds, least, _) in text_marks.TRAITS.items():
            held = [line for line in chunk if holds(line)]
            assert len(held) < least(len(chunk)), (trait, held[:2])


@pytest.mark.parametrize("lines, said", [
    ([f"=head1 Mill {i}" if i % 3 == 0 else s.replace("river", "B<river>") for i, s in enumerate(SENTENCES)],
     "12 of its first 12 lines hold Perl POD markup ('=head1' on line 1), read as text: make plain text of it first "
     "(pod2text "),
    ([f"@chapter Mill {i}" if i % 3 == 0 else s.replace("river", "@code{river}") for i, s in enumerate(SENTENCES)],
     "lines hold Texinfo markup ('@chapter' on line 1), read as text: make plain text of it first (makeinfo --plaintext "),
    ([f"h2. Mill {i}" if i % 3 == 0 else s.replace("river", '"river":https://x.org/r') for i, s in enumerate(SENTENCES)],
     "lines hold Textile markup ('h2.' on line 1), read as text: make plain text of it first (pandoc -f textile "),
    ([f"== Mill {i}" if i % 3 == 0 else s.replace("river", "link:https://x.org/r[river]") for i, s in enumerate(SENTENCES)],
     "lines hold AsciiDoc markup ('== Mill 0' on line 1)"),
    ([f"#+TITLE: Mill {i}" if i % 3 == 0 else s for i, s in enumerate(SENTENCES)],
     "4 of its first 12 lines hold Org-mode markup ('#+TITLE:' on line 1)"),
    (["{| class=\"wikitable\"", "|-", "| The mill || 1890", "|}"] * 3 + SENTENCES,
     "lines hold MediaWiki tables' markup ('{|' on line 1), read as text: make plain text of it first (leave the "
     "tables out of the text)"),
    ([s + " <!-- check the date -->" if i % 2 else s for i, s in enumerate(SENTENCES)],
     "6 of its first 12 lines hold HTML comments' markup ("),
    ([s + " :smile: :+1:" for s in SENTENCES], "12 of its first 12 lines hold emoji shortcodes' markup ("),
    (["\u0287\u0265\u01dd \u0279\u0131\u028c\u01dd\u0279 \u0279\u0250u \u0279\u01dd\u028c\u0131\u0279"] * 6 + SENTENCES[:6],
     "6 of its first 12 lines are written upside down (line 1"),
    ([("### Instruction:" if i % 2 else "### Response:") for i in range(6)] + SENTENCES[:6],
     "6 of its first 12 lines begin with a chatbot's roles ('### Response:' on line 1"),
    ([s.replace("river", "{++river++}") for s in SENTENCES], "12 of its first 12 lines hold CriticMarkup markup ("),
    ([s + ' {{< figure src="a.png" >}}' for s in SENTENCES], "12 of its first 12 lines hold Hugo's or Liquid's template "
                                                            "markup ("),
    ([s.replace("number", "number %d") for s in SENTENCES], "12 of its first 12 lines hold printf's placeholders' markup"),
    ([s.replace("river", "~~river~~") for s in SENTENCES], "12 of its first 12 lines hold Markdown emphasis markup ("),
    ([f"- [{'x' if i % 2 else ' '}] {s}" for i, s in enumerate(SENTENCES)], "12 of its first 12 lines hold Markdown task "
                                                                              "list markup ("),
    (["Jump to navigation", "From Wikipedia, the free encyclopedia"] * 3 + SENTENCES[:6], "6 of its first 12 lines hold a "
                                                                                        "copied web page's boilerplate"),
    ([s.replace(" ", "\u00b7") for s in SENTENCES], "12 of its first 12 lines hold an editor's visible whitespace markup"),
    ([s.replace("river", "ri\u00b7v\u00b7er") for s in SENTENCES], "12 of its first 12 lines hold syllable dots' markup"),
    (["\u266a (upbeat music) \u266a"] * 4 + SENTENCES[:8], "4 of its first 12 lines hold subtitles' music notes markup"),
], ids=["pod", "texinfo", "textile", "asciidoc", "org", "wikitable", "html-comments", "emoji-shortcodes", "upside-down",
        "alpaca", "criticmarkup", "hugo", "printf", "strike", "task-list", "boilerplate", "visible-whitespace",
        "syllable-dots", "music-notes"])
def test_markup_of_other_kinds_is_named_with_what_makes_plain_text_of_it(tmp_path, capsys, lines, said):
    """Round 47 A01 to A03, A17, A18, A20, A21, A23, A30, A34, A44, A60, A61, A64, A65, A73, A80, A81, A86, A93, A94:
    each was read as text without a word or with another cause (a hard wrap, lines begun alike, another script,
    footnote marks, UTF-7)."""
    prose._WARNED.clear()
    path = tmp_path / "in.txt"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    list(plain_text.read_text_lines(str(path)))
    assert said in capsys.readouterr().err, said
