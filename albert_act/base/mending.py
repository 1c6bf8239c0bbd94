"""The commands a warning about a text gives to mend it (`prose`'s traits): decode C1 characters as Windows-1252,
remove a class of characters, join hard-wrapped lines into sentences. No TensorFlow."""

import os
import re

_PUNCTUATED = re.compile(r"[.,;:!?\u3001\u3002\u0964\u060c]")
HOMOGLYPH = re.compile(r"[a-zA-Z][\u0400-\u04ff]|[\u0400-\u04ff][a-zA-Z]")  # a word of both scripts: look-alikes
CONFLICT = re.compile(r"(?:<{7}|>{7}) \S|={7}\s*$")  # git's merge conflict markers
INLINE_TAG = re.compile(r"</?(?:i|b|em|strong|u|span|a|font|small|big|code)(?:\s[^<>]*)?>", re.IGNORECASE)
SPLIT_WORD = re.compile(r"[^\W\d_][-\u2010]$")  # a line that ends in a word's part: 'Ame-' (typeset text splits long
# words; a PDF's with U+2010, the hyphen)


def as_cp1252(path):
    """The command that decodes the C1 characters (U+0080 to U+009F) of `path` as the Windows-1252 bytes they were."""
    return ("python3 -c \"import re, sys; sys.stdout.write(re.sub('[\\x80-\\x9f]', lambda m: bytes([ord(m[0])])."
            f"decode('cp1252', 'replace'), sys.stdin.read()))\" < {path} > fixed.txt")


def c1(path, number, line, char):
    """What is said of lines that hold C1 control characters (`char`, the first): Windows-1252's quotes and dashes
    decoded as Latin-1, or, after a lead byte's letter ('\u00c3\u0089'), UTF-8 decoded as Latin-1 (ftfy mends it)."""
    if lead := re.search("[\u00c2-\u00df\u00e2][\u0080-\u00bf]", line):  # ('Ã' then U+0089: UTF-8's bytes, each a character)
        return (f"hold UTF-8 read as Latin-1 and saved again (line {number}: U+{ord(char):04X} after "
                f"{lead.group()[0]!r}, mojibake for one character), "
                "read as such letters: decode it back first (ftfy, which mends mojibake line by line: pip install ftfy; "
                "ftfy FILE > fixed.txt)")
    return (f"hold C1 control characters (U+{ord(char):04X} on line {number}: Windows-1252's quotes and dashes decoded "
            f"as Latin-1), read as unknown pieces: decode them as Windows-1252 first ({as_cp1252(path)})")


def quoted(path, number, line):
    """What is said of lines that are each a quoted string: jq's output without -r, or Python's repr of bytes."""
    if line.lstrip().startswith(("b'", 'b"')):  # (print(line_bytes) in Python: b'caf\xc3\xa9')
        return (f"are each Python's repr of bytes (line {number}: {line.strip()[:40]!r}): the b'', quotes and escapes "
                "are read as text; decode them first (python3 -c \"import ast, sys; sys.stdout.writelines(ast.literal_"
                f"eval(line).decode('utf-8') + chr(10) for line in sys.stdin if line.strip())\" < {path} > text.txt)")
    return (f"are each a quoted string (line {number}: {line.strip()[:40]!r}), as jq prints JSON's strings without -r: "
            "the quotes and escapes (\\n, \\u00e9) are read as text; give the text itself (jq -r)")


_SOUNDS = ("laughter", "laughs", "applause", "music", "inaudible", "crosstalk")  # a transcript's annotations


def unknown(path, number, mark):
    """What is said of lines that hold a corpus's mark (`mark`): a word left out or replaced, or a transcript's
    annotation of a sound or a gap, with the sed that leaves those out."""
    if mark.strip("[]").lower() in _SOUNDS:
        return (f"hold {mark} (line {number}), a transcript's note of a sound or a gap, read as words of the text: "
                f"leave them out (sed -E 's/ ?\\[({'|'.join(_SOUNDS)})\\]//gI' {path} > text.txt)")
    return (f"hold {mark} (line {number}), a corpus's mark for a word it left out or replaced (as Penn Treebank's "
            "language-modelling text has), read as its characters, not as the vocabulary's unknown piece: give the "
            "original text")


def without(characters, path):
    """The command that writes `path` without the characters of the class `characters` (as a regex writes them,
    escaped: '\\ue000-\\uf8ff') into text.txt."""
    return (f"python3 -c \"import re, sys; sys.stdout.write(re.sub('[{characters}]', '', sys.stdin.read()))\" < {path} > "
            "text.txt")


def unended(path, number, line):
    """What is said of lines that stop mid-sentence (`line`, the first): hard-wrapped text, with the command that joins
    it; or, where the line holds no punctuation and no capital (N aside), text stripped of them."""
    cased = re.sub(r"(?<!\S)N(?!\S)", "", line)  # (Penn Treebank's language-modelling text writes numbers N)
    if _PUNCTUATED.search(line) or cased != cased.lower() or SPLIT_WORD.search(line.rstrip()):  # (a word split: typeset)
        return (f"stop mid-sentence (line {number}: {line.strip()[-30:]!r}), as hard-wrapped text (e-mail, Project "
                "Gutenberg) does: each line is read as a sentence of its own; join each paragraph's lines first "
                f"({joined(path, line)})")
    return (f"hold no punctuation and no capital (line {number}: {line.strip()[:40]!r}), as text stripped of them does "
            "(Penn Treebank's language-modelling text, lower-cased, numbers as N; a speech transcript): the model "
            "learns text as written; give the original text")


def joined(path, line):
    """The command that joins each paragraph (lines up to a blank one) of `path`, then puts each sentence on a line
    of its own (cut after . ! ?), and words hyphenated across lines (as `line`, wrapped, ends: 'Ame-') back into one."""
    hyphenated = SPLIT_WORD.search(line.rstrip())
    unhyphen = 'gsub(/(-|\u2010)\\n/, ""); ' if hyphenated else ""
    output = f"{os.path.splitext(path)[0]}.joined.txt"  # (beside the input, never its name: > would empty it first)
    return (f"tr -d '\\r' < {path} | awk 'BEGIN {{RS = \"\"; ORS = \"\\n\\n\"}} {{{unhyphen}gsub(/\\n/, \" \"); "
            f"gsub(/[.!?][\"\\047)]* +/, \"&\\n\"); gsub(/ +\\n/, \"\\n\"); print}}' > {output}, a sentence a line after "
            "each . ! or ?"
            + ("; it joins the words hyphenated across lines too" if hyphenated else ""))


def without_lines(line, path):
    """The command that writes `path` without the lines like `line` but for their numbers (a running header: grep -v
    with an extended regex, each run of digits any number, each run of spaces any spaces) into text.txt."""
    pattern = "".join("[0-9]+" if part[0].isdigit() else "[[:space:]]+" if part[0].isspace() else "." if part == "'"
                      else re.sub(r"([.\[\]()*+?{}|^$\\])", r"\\\1", part) for part in re.findall(r"\d+|\s+|.", line.strip()))
    return f"grep -v -E '^[[:space:]]*{pattern}[[:space:]]*$' {path} > text.txt"


def halved(path, number, line, inner):
    """What is said of lines that stop mid-sentence where the next goes on in lower case (`line`, the first, of line
    `number`): sentences cut in two, by line ends inside the file's lines (`inner`: a vertical tab, U+2028, a lone CR,
    as Word's manual line break) or by newlines, with the command that mends them."""
    said = (f"stop mid-sentence where the next goes on in lower case (line {number}: {line.strip()[-30:]!r}): sentences "
            "cut in two, each half read as a sentence of its own; ")
    if inner:
        return said + ("the line ends inside the file's lines cut them (a vertical tab, U+2028 or a lone CR, as Word's "
                       "manual line break): make each a space first (python3 -c \"import re, sys; sys.stdout.write(re."
                       "sub('[\\v\\u2028\\u2029\\x85]|\\r(?!\\n)', ' ', sys.stdin.buffer.read().decode('utf-8')))\" < "
                       f"{path} > text.txt)")
    return said + f"join each paragraph's lines first ({joined(path, line)})"


def misread(path, number, line):
    """What is said of lines most of whose letters are Latin-1's accented ones ('\u00cc\u00ee\u00f1\u00ea\u00e2\u00e0'): another script's text
    converted from the wrong encoding (Cyrillic as Windows-1252), with the iconv that undoes it where the line's bytes
    read back as one (`encodings.guessed_encoding`)."""
    from albert_act.base import encodings

    said = (f"are mostly Latin-1's accented letters (line {number}: {line.strip()[:30]!r}), as another script's text "
            "converted from the wrong encoding reads (Cyrillic or Greek taken for Windows-1252, Chinese for Latin-1): ")
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            sample = f.read(1 << 16)
    except OSError:  # (a pipe's, read already: its line)
        sample = line * 4
    wrong = "ISO-8859-1" if re.search("[\x80-\x9f]", sample) else "CP1252"  # (C1 characters: Latin-1's decode)
    guess = encodings.guessed_encoding(sample.encode("latin-1" if wrong == "ISO-8859-1" else "cp1252", "ignore"))
    if guess and guess[0] != "CP1252":
        return said + (f"undo it (iconv -f UTF-8 -t {wrong} {path} | iconv -f {guess[0]} -t UTF-8 > fixed.txt: "
                       f"{guess[1]}, by charset-normalizer's guess)")
    return said + "convert the original file from its own encoding"


def footnotes(path, number, mark):
    """What is said of lines that hold footnote marks (`mark`, the first, on line `number`: Wikipedia's [12], a
    superscript, a dagger, HTML's <sup>, Markdown's [^1], reStructuredText's [#]_, MediaWiki's <ref> and {{sfn}}),
    with the sed that removes them."""
    return (f"hold footnote marks ({mark!r} on "
            f"line {number}), read as words of the text: give the text without them "
            "(sed -E '/^(\\[\\^[^]]*\\]:|\\.\\. \\[[^]]*\\] )/d; s/<sup>[^<]*<\\/sup>//g; "
            "s/<ref[^>]*\\/>//g; s/<ref[^>]*>[^<]*<\\/ref>//g; s/\\^\\[[^]]*\\]//g; s/ ?\\[@[^]]*\\]//g; "
            "s/\\[\\^[^]]*\\]//g; s/ ?\\[(#[^]]*|[0-9]+)\\]_//g; s/([.,;:])\\([0-9]+\\)/\\1/g; "
            "s/\\{\\{(citation needed|cn|fact|clarify|clarification needed|sfnp?|efn|harvnb|rp|refn)[^}]*\\}\\}//g; "
            "s/\\[([0-9]+|[a-z]|note [0-9]+|nb [0-9]+|citation needed|"
            "clarification needed)\\]//g; s/([.,;:])(\u00b9|\u00b2|\u00b3|\u2074|"
            "\u2075|\u2076|\u2077|\u2078|\u2079|\u2070|\u2020|\u2021|\\*)+/\\1/g; "
            "s/([[:alpha:]])(\u2020|\u2021|\\*)+([[:space:].,;:]|$)/\\1\\3/g' "
            f"{path} > text.txt)")


def running_header(path, number, line):
    """What is said of lines that repeat one line but for its numbers (`line`, the first, of line `number`)."""
    return (f"are one line, its numbers aside (line {number}: {line.strip()[:40]!r}), as a page's running header or "
            f"footer, or a numbered heading: each is read as a sentence of its own; leave them out "
            f"({without_lines(line, path)})")


def wikitext(path, number, line, mark):
    """What is said of lines that hold WikiText's markup (`mark`: its @-@, or a ' = Title = ' heading)."""
    if mark.startswith("'''"):
        return (f"hold MediaWiki's bold quotes ({mark[:30]!r} on line {number}: raw wikitext), read as text: remove "
                f"them first (sed -E \"s/'{{2,5}}//g\" {path} > text.txt)")
    if "@" in mark:
        return (f"hold WikiText's markup ({mark.strip()!r} on line {number}: its ' = Title = ' headings, and @-@ for a "
                "hyphen cut apart), read as text: detokenize first (' @-@ ' to '-', ' @,@ ' to ',', ' @.@ ' to '.'; "
                "headings left out)")
    return (f"hold wiki section headings ({line.strip()[:40]!r} on line {number}: MediaWiki's '== History ==', "
            f"WikiText's ' = Title = '), each read as a sentence: leave them out (grep -v '^ *=.*= *$' {path} > text.txt)")


def homoglyphs(path, number, line):
    """What is said of words that mix Latin and Cyrillic letters (look-alikes typed for each other)."""
    word = next(w for w in line.split() if HOMOGLYPH.search(w))
    return (f"hold words that mix Latin and Cyrillic letters ({word!r} on line {number}: look-alikes, Cyrillic "
            f"{' '.join(_CYRILLIC[:9])} for Latin {' '.join(_LATIN[:9])}), each read as another script's letters: "
            "replace them (python3 -c \"import sys; sys.stdout.write(sys.stdin.read().translate(str.maketrans("
            f"'{_CYRILLIC}', '{_LATIN}')))\" < {path} > text.txt)")


_CYRILLIC, _LATIN = ("\u0430\u0435\u043e\u0440\u0441\u0445\u0456\u0458\u0455\u0410\u0412\u0415\u041a\u041c\u041d\u041e"
                     "\u0420\u0421\u0422\u0425\u0406\u0408\u0405", "aeopcxijsABEKMHOPCTXIJS")  # look-alike letters


def conflict(path, number, line):
    """What is said of git's merge conflict markers."""
    return (f"are a git merge conflict's markers (line {number}: {line.strip()[:20]!r}): both sides of the conflict are "
            "read, and the markers as sentences: resolve the conflict first (git mergetool, or edit the file)")


def inline_tags(path, number, line):
    """What is said of lines that hold HTML's inline tags."""
    return (f"hold HTML tags ({INLINE_TAG.search(line).group()!r} on line {number}), read as text: give the text "
            f"without its markup (sed -E 's/<[^<>]+>//g' {path} > text.txt)")
