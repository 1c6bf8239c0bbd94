"""The package's shape: the import graph has no cycle and no import running back up the data's path.

Stages, lowest first: shared names (`albert_act.checks`, `albert_act.outputs`, `albert_act.artifacts`,
`albert_act.distribution`, `albert_act.cli`) -> `pipelines`
(text to records) -> `albert_act.model` -> `albert_act.serve` and `albert_act.analysis` (side by
side, neither imports the other) -> `albert_act.train` -> the CLIs (`python -m albert_act.<verb>`).
A module imports its own sub-package and lower stages only. Lazy imports inside functions count.
"""

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STAGES = {
    "albert_act.checks": 0,
    "albert_act.outputs": 0,  # locks and whole-dir replacement, no TensorFlow: the data tool uses it
    "albert_act.artifacts": 1,
    "albert_act.distribution": 1,
    "albert_act.cli": 1,  # what every command line shares: quiet start, --verbose, --help
    "pipelines": 2,
    "albert_act": 3,  # the package's __init__ re-exports the model
    "albert_act.model": 3,
    "albert_act.serve": 4,
    "albert_act.analysis": 4,
    "albert_act.train": 5,
}
CLI = 6


def _modules():
    found = {}
    for path in sorted(REPO.glob("albert_act/**/*.py")) + sorted(REPO.glob("pipelines/**/*.py")):
        parts = path.relative_to(REPO).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph():
    """{module: set of project modules it imports}; `from package import module` counts the module."""
    modules, graph = _modules(), {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    targets.add(full if full in modules else node.module)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def stage_of(module):
    """(stage, group): group is the sub-package (or the module, for the shared names)."""
    if module in STAGES:
        return STAGES[module], module
    package = module.rsplit(".", 1)[0]
    if package == "albert_act":
        return CLI, module  # albert_act.<verb>: a CLI
    assert package in STAGES, f"{module}: in no stage of {sorted(STAGES)}"
    return STAGES[package], package


def cycles(graph):
    """Every import cycle found by a depth-first walk, as a list of modules."""
    found, state = [], {}

    def visit(node, trail):
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                found.append(trail[trail.index(target):] + [target])
            elif target not in state:
                visit(target, trail + [target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    return found


def test_no_import_cycle():
    graph = import_graph()
    assert len(graph) > 40 and graph["albert_act.model.sparse_halting"] == {"albert_act.model.act_state"}
    assert cycles(graph) == []


def upward_imports(graph):
    """Each import of a higher stage, or of another group of the same stage, as a line."""
    wrong = []
    for module, targets in sorted(graph.items()):
        stage, group = stage_of(module)
        for target in sorted(targets):
            target_stage, target_group = stage_of(target)
            if not (target_stage < stage or target_group == group or (module == "albert_act" and target_stage == STAGES["albert_act"])):
                wrong.append(f"{module} (stage {stage}) imports {target} (stage {target_stage})")
    return wrong


def test_no_import_runs_back_up():
    assert upward_imports(import_graph()) == []


def test_the_checks_find_what_they_are_for():
    # A cycle and an upward import, planted: both found.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
    planted = {"albert_act.model.halting": {"albert_act.train.lamb"},
               "albert_act.serve.savedmodel": {"albert_act.analysis.plots", "pipelines.packing"}}
    assert upward_imports(planted) == [
        "albert_act.model.halting (stage 3) imports albert_act.train.lamb (stage 5)",
        "albert_act.serve.savedmodel (stage 4) imports albert_act.analysis.plots (stage 4)"]
    assert stage_of("albert_act.model.halting") == (3, "albert_act.model")
    assert stage_of("albert_act.pretrain") == (CLI, "albert_act.pretrain")
    assert stage_of("albert_act.serve.savedmodel")[0] > stage_of("pipelines.packing")[0]


def test_every_repository_path_the_docs_name_exists():
    """README.md, docs/ and the model card cite only files in the repository, and those exist."""
    import re

    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("saved_models/*/MODEL_CARD.md"))]
    pattern = re.compile(r"(?<![\w./-])((?:albert_act|pipelines|tests|benchmarks|colab|docs)/[\w./-]*\w"
                         r"|requirements(?:-tpu)?\.txt)")
    missing = []
    for page in pages:
        text = page.read_text()
        assert "DESIGN.md" not in text and "../shared" not in text.replace("../shared/data", ""), page
        for path in set(pattern.findall(text)):
            if not (REPO / path).exists() and not list(REPO.glob(path)):
                missing.append(f"{page.name}: {path}")
    assert not missing, missing
