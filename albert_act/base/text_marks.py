"""More of `prose`'s traits: text written in another form than its own, each with what is said of it and the command
that mends it: URL-encoding, UTF-7, quoted-printable bytes in part of a file, a manual page's overstrike, box-drawing
frames (and ASCII's '| ... |'), underscores or hyphens for spaces, control characters (DOS's Ctrl-Z, ISO 2022's
escapes), BPE's end-of-word marks, small capitals, upside-down text, a chatbot's roles, line numbers in a margin,
links (Markdown's, its images and references, MediaWiki's, Org's, reST's), BBCode, and the markup of other formats
(`MARKUPS`: POD, Texinfo, Textile, AsciiDoc, Org, wikitables, Markdown's emphasis, templates...). No TensorFlow."""

import re

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_PERCENT_TEXT = re.compile(r"%(?:2[0-9A-Fa-f]|3[AaBbFf]|[89A-Fa-f][0-9A-Fa-f])")  # a space, punctuation, UTF-8's bytes
_FORM_WORDS = re.compile(r"[^\W\d_]\+[^\W\d_]")  # form data's 'hide+new+secretions'
QP_BYTES = re.compile(r"(?:=[89A-Fa-f][0-9A-Fa-f]){2,}")  # quoted-printable's UTF-8 bytes: '=E2=80=93', '=e2=80=99'
_BOX = "\u2500-\u257f"  # box-drawing characters: '\u2502', '\u251c\u2500\u2500\u2524'
BOX = re.compile(f"^\\s*[{_BOX}]|[{_BOX}]\\s*$|^\\s*\\|\\s.*\\s\\|\\s*$|^\\s*\\+-{{3,}}\\+\\s*$")  # (ASCII's '| text |', '+---+')
_JOINED = re.compile(r"[^\W_]+([_-])[^\W_]+\1[^\W_]+\1[^\W_]+")  # 'Victor_Chaim_Lavy_is', 'Victor-Chaim-Lavy-is'
CONTROL = re.compile("[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f]|\x1b(?![\\[$])")  # (not a tab, a line's ends, a backspace;
# ESC but for a colour code's and ISO-2022-JP's: ISO 2022's 'ESC ( B')
EMPHASIS = re.compile(r"~~[^~\s][^~]*~~|>![^!]+!<|\*\*[^*\s][^*]*\*\*|(?<![\w*])\*[^*\s][^*]*[^*\s]\*(?![\w*])|"
                      r"(?<![\w_])_[^_\s][^_]*[^_\s]_(?![\w_])")  # Markdown's ~~strike~~, **bold**, *italic*, _italic_; Reddit's >!spoiler!<
BBCODE = re.compile(r"\[/(?:b|i|u|s|url|img|quote|code|color|size|list|center)\]", re.IGNORECASE)  # a closing tag
_UTF7 = re.compile(r"\+[A-Za-z0-9/][A-Za-z0-9+/]{2,}(?:-|(?![A-Za-z0-9+/]))")  # a run of UTF-7: "+AOk-" for "\u00e9"
SMALL_CAPS = "\u1d00\u0299\u1d04\u1d05\u1d07\ua730\u0262\u029c\u026a\u1d0a\u1d0b\u029f\u1d0d\u0274\u1d0f\u1d18\u01eb\u0280\ua731\u1d1b\u1d1c\u1d20\u1d21\u028f\u1d22"
_SMALL_CAPS = re.compile(f"[{SMALL_CAPS}]{{3}}")  # small capitals, a to z but x ('\u1d20\u026a\u1d04\u1d1b\u1d0f\u0280'): a 'font' pasted from a site
CHAT_ROLE = re.compile(r"\s*(?:#{1,4}\s*)?(?:User|Assistant|Human|AI|System|Bot|ChatGPT|GPT|Model|Gemini|Claude|"
                       r"Instruction|Response|Input|Context|Q|A|Question|Answer)\s*:(?:\s|$)")  # a chatbot's, Alpaca's '### Instruction:'
END_OF_WORD = re.compile(r"[^\s<>]</w>(?=\s|$)")  # BPE's end-of-word mark (CLIP's, subword-nmt's): 'Lavy</w>'
MARGIN_NUMBER = re.compile(r"(?<=\S)[ \t]{3,}\d{1,4}[ \t]*$")  # a legal text's or a poem's line numbers: '...   10'
LINK = re.compile(r"\[\[(?:File|Image|Category|Media):(?:[^\[\]]|\[\[[^\[\]]*\]\])*\]\]()|__[A-Z]{3,}__()|"
                  r"\[\[[^\[\]]+\]\[([^\[\]]+)\]\]|\[\[(?:[^\[\]|]*\|)?([^\[\]]+)\]\]| ?!\[[^\[\]]*\]\([^()\s]*\)()|\[([^\[\]]*)\]\("
                  r"(?:[a-z][a-z0-9+.-]*:|[/#.])?[^()\s]*[/.:#][^()\s]*\)|\[((?=[^\[\]]*[^\W\d_])[^\[\]]{2,})\]\[[^\[\]\s]*\]|`([^`<]+?) <[^<>\s]+>`__?"
                  r"|^ {0,3}\[[^\[\]]+\]:[ \t]+\S+.*\n?()")
# Org's '[[https://...][text]]', MediaWiki's '[[Page|text]]', Markdown's '[text](url)', '![alt](img.png)', '[text][1]' and
# its '[1]: https://...' lines, reST's '`text <url>`_': (the text shown, of one of them; none of an image, '![alt](a.png)', or a
# reference's line)


def url_encoded(line):
    """The first escape or form-data word of `line` when it reads as URL-encoded ('%20' or '%C3%A9' twice; or no space
    and three '+' between words, as a form's data writes spaces), or None."""
    text = re.sub(r"\S*://\S*", "", line.strip())  # (an address's own escapes: '/wiki/Fran%C3%A7ois' in a sentence)
    if len(_PERCENT.findall(text)) >= 2 and _PERCENT_TEXT.search(text):
        return _PERCENT_TEXT.search(text).group()
    if " " not in text and text.count("+") >= 3 and _FORM_WORDS.search(text):
        return text[:30]
    return None


def unframed(line):
    """`line` as its words read, without a frame ('| text |') and with each link made its text (`shown_link`)."""
    return shown_link(re.sub(r"^\s*\|\s(.*)\s\|\s*$", r"\1", line) if "|" in line else line)


def shown_link(line):
    """`line` with each link made its text ('[[Page|text]]' and '[text](url)' read 'text')."""
    return LINK.sub(lambda m: next(filter(None, m.groups()), ""), line) if _may_link(line) else line


def _may_link(line):
    """Whether `line` holds what every link of `LINK` begins with (its regex is not tried on lines without)."""
    return "[" in line or "`" in line or "__" in line


def utf7(line):
    """(the run, what it stands for) of the first run of UTF-7 in `line` ("caf+AOk-" for "café": a '+', base64 of
    UTF-16, a '-') that stands for letters beyond ASCII, or None."""
    for run in _UTF7.findall(line) if "+" in line and not url_encoded(line) and "{++" not in line else ():  # (not
        # form data, nor CriticMarkup's '{++added++}')
        if not any(c.isalpha() for c in run):  # (a number, "+100", though it decodes, is no UTF-7)
            continue
        try:
            text = run.encode("ascii").decode("utf-7")
        except UnicodeDecodeError:
            continue
        if text and not text.isascii() and all(c.isprintable() for c in text):
            return run, text
    return None


def _url(path, number, line):
    return (f"are URL-encoded ({url_encoded(line)!r} on line {number}: '%20' or '+' for a space, '%C3%A9' for '\u00e9', "
            "as a web form or a URL writes text), read as written: decode them first (python3 -c \"import sys, "
            "urllib.parse; sys.stdout.writelines(urllib.parse.unquote_plus(line) for line in sys.stdin)\" < "
            f"{path} > text.txt)")


def _quoted_printable(path, number, line):
    return (f"hold quoted-printable bytes ({QP_BYTES.search(line).group()!r} on line {number}: a character's UTF-8 "
            "bytes, as an e-mail writes them), read as letters: decode them first (python3 -c \"import re, sys; "
            "sys.stdout.buffer.write(re.sub(rb'(?:=[89A-Fa-f][0-9A-Fa-f])+', lambda m: bytes.fromhex(m[0].decode()."
            f"replace('=', '')), sys.stdin.buffer.read()))\" < {path} > text.txt)")


def _overstrike(path, number, line):
    return (f"hold backspaces (line {number}: {line.strip()[:20]!r}), the overstrike nroff writes for a manual page's "
            "bold and underline ('c\\bc', '_\\bc'), read as unknown pieces between letters: write the text without "
            f"them (col -b < {path} > text.txt; or man's output with MANPAGER=cat and col -b)")


def _boxed(path, number, line):
    if not re.search(f"[{_BOX}]", line):  # (ASCII's: '| text |' lines, '+-----+' rules)
        return (f"are framed in '|' (line {number}: {line.strip()[:30]!r}), as a text table's cells or a terminal's "
                "box: each '|' is read as a word, its '+---+' rules as sentences; remove them first (sed -E "
                f"'s/^[[:space:]]*\\|[[:space:]]?//; s/[[:space:]]?\\|[[:space:]]*$//; s/^[[:space:]]*\\+-+\\+[[:space:]]*$//' "
                f"{path} > text.txt: a rule's line left blank ends a document)")
    return (f"are framed in box-drawing characters (line {number}: {line.strip()[:30]!r}), as a terminal's table or "
            "a tree view draws them: each is an unknown piece, its rules' lines read as sentences; remove them first "
            f"(python3 -c \"import re, sys; sys.stdout.writelines(re.sub('[{_BOX.encode('unicode_escape').decode()}]',"
            f" '', line).strip() + chr(10) for line in sys.stdin)\" < {path} > text.txt: a rule's line left blank ends "
            "a document)")


def _joined(path, number, line):
    mark = _JOINED.search(line).group(1)
    return (f"are words joined by '{mark}' (line {number}: {line.strip()[:30]!r}), as titles, slugs and some datasets "
            f"write spaces: each line is read as one long word; make them spaces first (tr '{mark}' ' ' < {path} > "
            "text.txt)")


def _control(path, number, line):
    char = CONTROL.search(line).group()
    if char == "\x1b":  # (ESC ( B, ESC ) 0: a character set's switch)
        return (f"hold ISO 2022's escapes (ESC {line[line.index(char) + 1:line.index(char) + 3]!r} on line {number}: a "
                "terminal's or old mail's switch of character set), read as unknown pieces and letters: remove them "
                f"first (sed -E 's/\\x1b[()*+][A-Za-z0-9@]//g' {path} > text.txt)")
    named = {"\x1a": ": Ctrl-Z, DOS's end-of-file mark", "\x00": ": NUL", "\x7f": ": DEL"}.get(char, "")
    return (f"hold a control character (U+{ord(char):04X} on line {number}{named}), read as an unknown piece: remove "
            f"them first (tr -d '\\000-\\007\\016-\\032\\034-\\037\\177' < {path} > text.txt)")


def _end_of_word(path, number, line):
    return (f"hold BPE's end-of-word marks ({line.strip()[:30]!r} on line {number}: text as a BPE tokenizer, CLIP's or "
            "subword-nmt's, writes it), read with the marks as words: join the pieces first (sed -E "
            f"'/<\\/w>/ {{s/ +//g; s#</w># #g; s/ +$//}}' {path} > text.txt)")


def _small_caps(path, number, line):
    return (f"hold small capitals ({_SMALL_CAPS.search(line).group()!r} on line {number}: phonetic letters a 'font' "
            "generator pastes for a to z), read as another script's letters: make them plain letters first (python3 -c "
            f"\"import sys; sys.stdout.write(sys.stdin.read().translate(str.maketrans('{SMALL_CAPS}', "
            f"'abcdefghijklmnopqrstuvwyz')))\" < {path} > text.txt)")


def _chat(path, number, line):
    return (f"begin with a chatbot's roles ({line.strip()[:30]!r} on line {number}: a conversation's export), read as "
            "words of the text: give the text alone (sed -E '/^[[:space:]]*#+[[:space:]]*[A-Za-z]+[[:space:]]*:[[:space:]]*$/d; "
            "s/^[[:space:]]*(#+[[:space:]]*)?(User|Assistant|Human|AI|System|Bot|ChatGPT|GPT|Model|Gemini|Claude|"
            f"Instruction|Response|Input|Context|Q|A|Question|Answer)[[:space:]]*:[[:space:]]*//' {path} > text.txt)")


MARKUPS = (  # (the markup, what its lines hold, the command that makes plain text of a file of it)
    ("Perl POD", re.compile(r"=(?:head[1-6]|over|item|back|pod|cut|begin|end|for)\b|.*\b[BICLF]<[^<>\s][^<>]*>"),
     "pod2text {path} > text.txt"),
    ("Texinfo", re.compile(r"@(?:chapter|section|subsection|node|menu|end|top|setfilename|cindex)\b|.*@(?:code|emph|"
                           r"strong|xref|pxref|ref|samp|var|file|kbd|url|uref)\{"), "makeinfo --plaintext {path} > text.txt"),
    ("Textile", re.compile(r"(?:h[1-6]|bq|fn\d+)\.\s|.*\"[^\"]+\":(?:https?://|/)\S+"), "pandoc -f textile -t plain {path} > text.txt"),
    ("AsciiDoc", re.compile(r".*\blink:\S+\[[^\]]*\]|.*https?://\S+\[[^\]]+\]|:[a-z-]+:(?:\s|$)|={1,5} \S(?:.*[^=\s])?\s*$"),
     "asciidoctor -b docbook -o - {path} | pandoc -f docbook -t plain > text.txt"),
    ("Org-mode", re.compile(r"#\+[A-Za-z_]+:|#\+(?:BEGIN|END)_\w+"), "pandoc -f org -t plain {path} > text.txt"),
    ("MediaWiki tables'", re.compile(r"\s*(?:\{\||\|-(?!-)|\|\}|\|\+)"), "leave the tables out of the text"),
    ("HTML comments'", re.compile(r".*<!--"), "sed -E 's/<!--.*-->//g' {path} > text.txt"),
    ("Markdown emphasis", re.compile(f".*(?:{EMPHASIS.pattern})"), "sed -E 's/~~|\\*\\*|>!|!<//g; s/(^|[^[:alnum:]*])\\*([^*]+)"
     "\\*/\\1\\2/g; s/(^|[^[:alnum:]_])_([^_]+)_/\\1\\2/g' {path} > text.txt"),
    ("CriticMarkup", re.compile(r".*\{(?:\+\+|--|~~|>>|==)"), "accept or reject its changes first (an editor's "
     "CriticMarkup export)"),
    ("Hugo's or Liquid's template", re.compile(r".*(?:\{\{[<%].*[%>]\}\}|\{%.*%\})"), "sed -E 's/\\{{\\{{[<%][^}}]*[%>]"
     "\\}}\\}}//g; s/\\{{%[^}}]*%\\}}//g' {path} > text.txt"),
    ("printf's placeholders'", re.compile(r".*(?<![\w%])%(?:[sdif]|\d*\.\d+f|\(\w+\)[sd])(?!\w)"), "fill them in: the text "
     "as shown, not its template"),
    ("Markdown task list", re.compile(r"\s*[-*+] \[[ xX]\] "), "sed -E 's/^[[:space:]]*[-*+] \\[[ xX]\\] //' {path} > text.txt"),
    ("MkDocs admonitions'", re.compile(r"\s*(?:!!!|\?\?\?\+?) \w+|\s*:::+\s*\w*\s*$"), "leave the admonitions' marks out"),
    ("subtitles' music notes", re.compile("\\s*\u266a"), "sed -E '/^[[:space:]]*\u266a[^a-zA-Z]*\u266a?[[:space:]]*$/d; "
     "s/\u266a//g' {path} > text.txt"),
    ("a copied web page's boilerplate", re.compile(r"\s*(?:From Wikipedia, the free encyclopedia|Jump to (?:navigation|"
                                                     r"search)|Retrieved from \S|This page was last edited on|Text is "
                                                     r"available under the Creative Commons)"),
     "grep -v -E '^(From Wikipedia, the free encyclopedia|Jump to (navigation|search)|Retrieved from |This page was "
     "last edited on|Text is available under the Creative Commons)' {path} > text.txt"),
    ("an editor's visible whitespace", re.compile(r"\S+(?:\u00b7\S+){3,}\s*$|\s*\u2192|.*\S\u2192\S"), "sed -E 's/\u00b7/ /g; "
     "s/\u2192/\\t/g; s/\u00b6$//' {path} > text.txt"),
    ("syllable dots'", re.compile(r".*[^\W\d_]\u00b7[^\W\d_]+\u00b7[^\W\d_]"), "sed 's/\u00b7//g' {path} > text.txt"),
    ("emoji shortcodes'", re.compile(r".*(?<![\w:]):[a-z0-9_+-]{2,}:(?![\w:])"), "sed -E 's/:[a-z0-9_+-]+://g' {path} > text.txt"),
)
_TURNED = "[\u0250\u0254\u01dd\u025f\u0183\u0265\u0131\u027e\u029e\u026f\u0279\u0287\u028c\u028d\u028e]"  # a, c, e, f, g... upside down
UPSIDE_DOWN = re.compile(f"{_TURNED}{{3}}|(?:{_TURNED}\\w){{3}}")


def markup(line):
    """(the markup's name, its mark, its command) of the first of `MARKUPS` that `line` holds, or None."""
    for kind, pattern, command in MARKUPS:
        if found := pattern.match(line):
            return kind, found.group().strip()[-30:], command
    return None


def _markup(path, number, line):
    kind, mark, command = markup(line)
    return (f"hold {kind} markup ({mark!r} on line {number}), read as text: make plain text of it first "
            f"({command.format(path=path)})")


def _upside_down(path, number, line):
    return (f"are written upside down (line {number}: {line.strip()[:30]!r}: letters turned and their order reversed, "
            "as a 'flip text' site writes them), read as another script's letters: give the text as written")


def _bbcode(path, number, line):
    return (f"hold BBCode tags ({BBCODE.search(line).group()!r} on line {number}: a forum's [b]...[/b], "
            "[url=...]...[/url]), read as text: remove them first (sed -E "
            f"'s/\\[\\/?(b|i|u|s|url|img|quote|code|color|size|list|center)(=[^]]*)?\\]//gI' {path} > text.txt)")


def _margin(path, number, line):
    return (f"end in a number set apart by spaces (line {number}: {line.rstrip()[-30:]!r}), as line numbers in the "
            "margin of a legal text or a poem: read as the line's last word (and put inside sentences where wrapped "
            f"lines are joined): remove them first (sed -E 's/[[:space:]]{{3,}}[0-9]+[[:space:]]*$//' {path} > "
            "text.txt)")


def _linked(path, number, line):
    link = LINK.search(line).group()
    return (f"hold links ({link[:40]!r} on line {number}: Markdown's [text](address), MediaWiki's [[Page|text]], "
            "Org's, reST's), read with their brackets and addresses as words: keep each link's text first (python3 -c "
            "\"import re, sys; from albert_act.base import text_marks; sys.stdout.writelines(l for l in map(text_marks."
            f"shown_link, sys.stdin) if l.strip() or l == chr(10))\" < {path} > text.txt, run in albert-act's folder)")


def _utf7(path, number, line):
    run, text = utf7(line)
    return (f"hold UTF-7 ({run!r} on line {number} is {text!r}), as some mail and old Windows tools write text: read "
            f"as its letters and signs; convert the file first (iconv -f UTF-7 -t UTF-8 {path} > converted.txt)")


TRAITS = {  # (whether a line holds it, from how many lines of n on it is warned of, what is said): as `prose._TRAITS`
    "utf7": (utf7, lambda n: max(3, 0.02 * n), _utf7),
    "url_encoded": (url_encoded, lambda n: max(3, 0.05 * n), _url),
    "quoted_printable": (lambda line: "=" in line and QP_BYTES.search(line), lambda n: max(3, 0.02 * n),
                         _quoted_printable),
    "overstruck": (lambda line: "\b" in line, lambda n: max(3, 0.02 * n), _overstrike),
    "boxed": (lambda line: BOX.search(line), lambda n: max(3, 0.05 * n), _boxed),
    "joined_words": (lambda line: " " not in line.strip() and _JOINED.search(line), lambda n: max(5, 0.2 * n), _joined),
    "controls": (lambda line: CONTROL.search(line), lambda n: 1, _control),
    "margin_numbers": (lambda line: MARGIN_NUMBER.search(line), lambda n: max(3, 0.05 * n), _margin),
    "end_of_word": (lambda line: "</w>" in line and END_OF_WORD.search(line), lambda n: max(3, 0.05 * n), _end_of_word),
    "markup": (markup, lambda n: max(3, 0.05 * n), _markup),
    "upside_down": (lambda line: UPSIDE_DOWN.search(line), lambda n: max(3, 0.05 * n), _upside_down),
    "small_caps": (lambda line: _SMALL_CAPS.search(line), lambda n: max(3, 0.05 * n), _small_caps),
    "chat_roles": (lambda line: CHAT_ROLE.match(line), lambda n: max(5, 0.3 * n), _chat),
    "bbcode": (lambda line: "[/" in line and BBCODE.search(line), lambda n: max(3, 0.05 * n), _bbcode),
    "linked": (lambda line: _may_link(line) and LINK.search(line), lambda n: max(3, 0.05 * n), _linked),
}
