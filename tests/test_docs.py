"""The README and docs/ name only what exists: every `python -m` module, every flag of the
commands they show, every relative link and its anchor. (tests/test_readme.py runs the commands;
tests/test_layout.py checks the repository paths they cite.)"""

import re

from test_readme import REPO, documented_pages, readme_commands

FLAG_SOURCES = [REPO / "albert_act" / "distribution.py", REPO / "albert_act" / "base" / "cli.py"]  # flags every command shares
CONFIGS = sorted(REPO.glob("albert_act/**/*_config.py"))  # declared configs, whose fields are flags
PASSED_ON = {"benchmarks.english_small": "albert_act.pretrain"}  # flags it does not know go to that command


def declares_flag(source, name):
    """Whether `source` defines --name: spelled as a flag, or a field of a declared config (its name,
    or `flag="name"`) where the command makes its flags from one (`settings.parse_flags`)."""
    if f'"--{name}"' in source:
        return True
    if "settings.parse_flags(" not in source:
        return False
    configs = "".join(path.read_text() for path in CONFIGS)
    return bool(re.search(rf"^    {name}: ", configs, re.M)) or f'flag="{name}"' in configs


def module_file(module):
    """The file of a project module named in `python -m <module>`, or None."""
    path = REPO.joinpath(*module.split("."))
    return next((p for p in (path.with_suffix(".py"), path / "__main__.py") if p.exists()), None)


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page):
    return {slug(line.lstrip("#")) for line in page.read_text().splitlines() if line.startswith("#")}


def unknown_modules_and_flags(text):
    """`python -m` modules of the project that do not exist, and flags of a shown command that its
    module (or the shared arguments) never defines."""
    wrong = []
    for module in set(re.findall(r"python3? -m ((?:albert_act|pipelines|benchmarks)[\w.]*)", text)):
        if module.endswith(".") or module in ("albert_act", "pipelines", "benchmarks"):
            continue  # a placeholder: `python -m albert_act.<verb>`
        if module_file(module) is None:
            wrong.append(f"no module {module}")
    for command in readme_commands(text):
        found = re.search(r"-m ((?:albert_act|pipelines|benchmarks)[\w.]*)", command)
        if not found or module_file(found.group(1)) is None:
            continue
        source = module_file(found.group(1)).read_text() + "".join(p.read_text() for p in FLAG_SOURCES)
        if found.group(1) in PASSED_ON:
            source += module_file(PASSED_ON[found.group(1)]).read_text()
        for flag in set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", command)):
            name = flag[2:].split("=")[0]
            if not declares_flag(source, name) and not (name.startswith("no") and declares_flag(source, name[3:])):
                wrong.append(f"{found.group(1)}: no flag --{name}")
    return wrong


def broken_links(page):
    """Relative links of `page` whose file, or anchor in that file, does not exist."""
    wrong = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            wrong.append(f"{page.name}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            wrong.append(f"{page.name}: {target} (no such heading)")
    return wrong


def test_the_checks_find_what_they_are_for(tmp_path):
    text = ("    .venv/bin/python -m albert_act.pretrain --steps 3 --no-jit_compile --strategy cpu --stepz 2\n"
            "and `python -m albert_act.pretrian` in prose.\n")
    assert sorted(unknown_modules_and_flags(text)) == ["albert_act.pretrain: no flag --stepz", "no module albert_act.pretrian"]
    passed_on = "    .venv/bin/python -m benchmarks.english_small --data_dir d --init_from m --steps 2 --stepz 2\n"
    assert unknown_modules_and_flags(passed_on) == ["benchmarks.english_small: no flag --stepz"]
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n[ok](#a-page) [gone](#nowhere) [file](missing.md) [web](https://example.org)\n")
    assert broken_links(page) == ["page.md: #nowhere (no such heading)", "page.md: missing.md (no such file)"]


def test_every_module_flag_and_link_the_docs_name_exists():
    pages = documented_pages()
    assert len(pages) > 10
    wrong = [f"{page.name}: {problem}" for page in pages for problem in unknown_modules_and_flags(page.read_text())]
    wrong += [problem for page in pages for problem in broken_links(page)]
    assert wrong == [], wrong
