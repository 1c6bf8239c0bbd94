"""The package's shape: the import graph has no cycle and no import running back up the data's path.

Stages, lowest first: `albert_act.base` (what every command shares: `cli`, `checks`, `outputs`,
`text_files`, `bars`, and `artifacts`, the one owner of on-disk names) -> `pipelines` (the data stage: text
to records; it imports nothing from albert_act but the base) and `albert_act.distribution` (side
by side) -> `albert_act.model` (layers, loops, heads: no file I/O) -> `albert_act.io` (what a path on
disk holds: sources, checkpoints, exports) -> `albert_act.serve` and `albert_act.analysis` (side by
side, neither imports the other) -> `albert_act.train` -> the CLIs (`python -m albert_act.<verb>`).
A module imports its own sub-package and lower stages only. Lazy imports inside functions count.
"""

import ast
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

STAGES = {
    "albert_act.base": 0,  # no TensorFlow at import: the data tool's --help and refusals stay quick
    "pipelines": 1,
    "albert_act.distribution": 1,
    "albert_act": 3,  # the package's __init__ re-exports the model
    "albert_act.model": 3,
    "albert_act.io": 4,
    "albert_act.serve": 5,
    "albert_act.analysis": 5,
    "albert_act.train": 6,
}
CLI = 7


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
               "albert_act.serve.savedmodel": {"albert_act.analysis.plots", "pipelines.packing"},
               "albert_act.base.cli": {"pipelines.packing"}}
    assert upward_imports(planted) == [
        "albert_act.base.cli (stage 0) imports pipelines.packing (stage 1)",
        "albert_act.model.halting (stage 3) imports albert_act.train.lamb (stage 6)",
        "albert_act.serve.savedmodel (stage 5) imports albert_act.analysis.plots (stage 5)"]
    assert stage_of("albert_act.model.halting") == (3, "albert_act.model")
    assert stage_of("albert_act.pretrain") == (CLI, "albert_act.pretrain")
    assert stage_of("albert_act.serve.savedmodel")[0] > stage_of("pipelines.packing")[0]


def test_every_repository_path_the_docs_name_exists():
    """README.md, docs/ and the model card cite only files in the repository, and those exist."""
    import re

    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted(REPO.glob("saved_models/*/README.md"))]
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


def test_pipelines_import_nothing_but_the_base_and_read_no_argv_at_import():
    graph = import_graph()
    assert [f"{m} imports {t}" for m, targets in sorted(graph.items()) if m.startswith("pipelines")
            for t in sorted(targets) if not t.startswith(("pipelines", "albert_act.base"))] == []
    assert not any(t.startswith("albert_act.") and not t.startswith("albert_act.base")
                   for m, targets in graph.items() if m.startswith("albert_act.base") for t in targets)
    at_import = []  # sys.argv read outside any function, or an import hook installed anywhere
    for path in sorted(REPO.glob("albert_act/**/*.py")) + sorted(REPO.glob("pipelines/**/*.py")):
        tree = ast.parse(path.read_text())
        functions = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.Lambda)) for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "argv" and id(node) not in functions \
                    and path.name != "__init__.py":  # a package's, which reads only whether runpy runs it
                at_import.append(f"{path.name}:{node.lineno} sys.argv")
            if isinstance(node, ast.Attribute) and node.attr == "meta_path":
                at_import.append(f"{path.name}:{node.lineno} sys.meta_path")
    assert at_import == []


def test_every_command_starts_quietly_in_its_main(tmp_path):
    """Each command's main() begins with the quiet start; run as a user runs it (no
    TF_CPP_MIN_LOG_LEVEL), a command that loads TensorFlow prints none of its start-up lines."""
    commands = sorted(REPO.glob("albert_act/*.py")) + sorted(REPO.glob("pipelines/*.py"))
    mains = {}
    for path in commands:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name == "main":
                first = node.body[0].value if isinstance(node.body[0], ast.Expr) else None
                mains[path.name] = isinstance(first, ast.Call) and getattr(first.func, "attr", "") == "quiet_start"
    assert len(mains) == 9 and all(mains.values()), mains
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "ALBERT_ACT_QUIET")}
    result = subprocess.run([sys.executable, "-m", "albert_act.export", "--checkpoint", str(tmp_path / "no-such-dir"),
                             "--kind", "pretraining", "--output", str(tmp_path / "no-such-dir" / "1")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr.startswith("error: "), result.stderr[-2000:]
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr[-2000:]  # the error, and nothing else
    assert not (tmp_path / "no-such-dir").exists()  # a refused command leaves no folder behind (the lock's)


def test_a_stop_in_the_first_moments_of_a_command_is_one_line(tmp_path):
    """SIGINT from the first hundredths of a second on, in each kind of command (albert_act, pipelines,
    benchmarks): from the package's first import on, one "stopped:" line and status 130, never a traceback.
    Before it, the interpreter is starting (runpy, the standard library, the packages' first lines that put the
    handler in place): a traceback there shows no other file of the project, as it ran none (a signal sooner still
    ends the process: status -2, nothing printed)."""
    commands = (["albert_act.export", "--help"], ["pipelines.probing", "--synthetic_documents", "5", "--output_dir"],
                ["benchmarks.depth_knob", "--help"])
    lines = 0
    for command in commands:
        for delay in (0.01, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1):
            output = [str(tmp_path / f"p{delay}")] if command[-1] == "--output_dir" else []
            process = subprocess.Popen([sys.executable, "-m", *command, *output], cwd=REPO, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=120)
            ours = [str(REPO / package) for package in ("albert_act", "pipelines", "benchmarks")]
            frames = re.findall(r'File "([^"]+)", line \d+', err)  # before the handler: the packages' own first lines
            starting = [str(REPO / package / "__init__.py") for package in ("albert_act", "pipelines", "benchmarks")]
            interpreter = "Traceback" in err and all(f in starting or not any(f.startswith(o) for o in ours)
                                                     for f in frames)  # still starting: status 1 or -2
            assert process.returncode in (-signal.SIGINT, 130, 0) or interpreter and process.returncode == 1, \
                (command, delay, err)
            assert "Traceback" not in err or interpreter, (command, delay, err)
            if process.returncode == 130:
                assert err.strip().splitlines() == [err.strip()] and err.startswith("stopped: "), (command, err)
                lines += 1
    assert lines >= 3, lines


NAME_OWNERS = ("albert_act/base/artifacts.py",)


def known_names():
    """The on-disk names the owners define: upper-case string constants naming a file (with a
    dot) or the checkpoints folder."""
    names = set()
    for owner in NAME_OWNERS:
        for node in ast.parse((REPO / owner).read_text()).body:
            if isinstance(node, ast.Assign):
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                targets = [n for t in node.targets for n in (t.elts if isinstance(t, ast.Tuple) else [t])]
                names.update(v.value for t, v in zip(targets, values) if isinstance(t, ast.Name) and t.id.isupper()
                             and isinstance(v, ast.Constant) and isinstance(v.value, str)
                             and ("." in v.value or v.value == "checkpoints"))
    return names


def name_literals(source, names):
    """Lines of `source` spelling one of `names` as a string literal (whole, or as a path's end)."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)
                   and any(node.value == n or node.value.endswith("/" + n) for n in names)})


def test_on_disk_names_are_spelled_only_where_they_are_defined():
    names = known_names()
    assert {"config.json", "evaluation.json", "checkpoints", "stats.json", "recipe.json"} <= names
    assert name_literals('path = os.path.join(run, "evaluation.json")\nother = "a/vocab.model"', names) == [1, 2]
    found = []
    for path in sorted(REPO.glob("albert_act/**/*.py")) + sorted(REPO.glob("pipelines/**/*.py")):
        if str(path.relative_to(REPO)) not in NAME_OWNERS:
            found += [f"{path.relative_to(REPO)}:{line}" for line in name_literals(path.read_text(), names)]
    assert found == []


def test_functions_fit_on_a_screen():
    """albert_act/ and pipelines/: no function over 60 lines, so each reads top to bottom (the run
    loop, fine-tuning, halting_loop, gathered_loop, the backbone's constructor and the bucket's
    switch were 103, 98, 101, 87, 95 and 64)."""
    long = [f"{path.relative_to(REPO)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for pattern in ("albert_act/**/*.py", "pipelines/*.py")
            for path in sorted(REPO.glob(pattern))
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60]
    assert long == []


def test_modules_do_one_job():
    """No module of albert_act/ or pipelines/ over 450 lines: past that it is usually two jobs."""
    lengths = {str(path.relative_to(REPO)): len(path.read_text().splitlines())
               for path in sorted([*REPO.glob("albert_act/**/*.py"), *REPO.glob("pipelines/*.py")])}
    assert len(lengths) > 60
    assert {path: n for path, n in lengths.items() if n > 450} == {}


# What the model stage may not touch: the stages above it, and files (model/ keeps layers, loops
# and heads; what a path holds is albert_act.io's).
FILE_MODULES = ("os", "io", "json", "pathlib", "shutil", "glob", "tempfile", "pickle", "h5py", "safetensors")
FILE_CALLS = ("open", "gfile", "saved_model", "load_checkpoint", "Checkpoint", "CheckpointManager",
              "TFRecordDataset", "load", "save", "savez", "load_weights", "save_weights", "read_file", "write_file")


def file_io(source):
    """Lines of `source` that import a file module or the stages above the model, or call a
    file-reading or -writing function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name.split(".")[0] in FILE_MODULES or name.startswith(("albert_act.io", "albert_act.train",
                                                                      "albert_act.serve", "albert_act.analysis",
                                                                      "tensorflow.io", "keras.saving.save")):
                found.append(f"{node.lineno}: imports {name}")
        if isinstance(node, ast.Call):
            called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if called in FILE_CALLS:
                found.append(f"{node.lineno}: calls {called}")
        if isinstance(node, ast.Attribute) and node.attr in ("gfile", "saved_model"):
            found.append(f"{node.lineno}: uses {node.attr}")
    return sorted(set(found))


def test_the_model_has_no_file_io():
    """model/ imports nothing of io/, train/ (or serve/, analysis/) and no file module, and calls no
    function that reads or writes a file (the check finds each, planted)."""
    planted = file_io("import os\nfrom albert_act.io.source import Source\nopen('x')\ntf.io.gfile.exists('y')\n"
                      "np.load('z')\nfrom keras import ops\n")
    assert planted == ["1: imports os", "2: imports albert_act.io.source", "2: imports albert_act.io.source.Source",
                       "3: calls open", "4: uses gfile", "5: calls load"]
    modules = sorted(REPO.glob("albert_act/model/*.py"))
    assert len(modules) >= 12
    assert {str(path.relative_to(REPO)): found for path in modules if (found := file_io(path.read_text()))} == {}


def test_every_command_has_the_one_error_tail():
    """The refusal / failed write / Ctrl-C tail is written once (albert_act.base.cli.failures), not in each
    command: no `except KeyboardInterrupt` or `except cli.write_errors()` in a module with a main()
    (a library function may still clean up and re-raise)."""
    own = [f"{path.relative_to(REPO)}:{number}" for pattern in ("albert_act/**/*.py", "pipelines/*.py")
           for path in sorted(REPO.glob(pattern)) if path.name != "cli.py" and "\ndef main(" in path.read_text()
           for number, line in enumerate(path.read_text().splitlines(), 1)
           if re.search(r"except .*(KeyboardInterrupt|write_errors\(\))", line)]
    assert own == []


def test_every_command_runs_its_main_through_the_entry():
    """Each `python -m` command runs `entry.run(main)`: a standard output that cannot be written (a full
    disk) does not abandon its work, nor blame its output folder."""
    commands = sorted(path for pattern in ("albert_act/**/*.py", "pipelines/*.py", "benchmarks/*.py")
                      for path in REPO.glob(pattern) if '\nif __name__ == "__main__":' in path.read_text())
    assert len(commands) >= 28
    own = [str(path.relative_to(REPO)) for path in commands
           if not path.read_text().endswith('\nif __name__ == "__main__":\n    entry.run(main)\n')]
    assert own == []


def test_every_benchmark_runs_its_work_through_the_one_tail():
    """Each benchmark's work goes through `benchmarks.arguments.run` (or `fine_tunings`, which calls it): a
    stop ends the process at once, where the interpreter's teardown beside XLA's threads crashed (a
    segmentation fault after the stop line, on JAX). english_small hands its work to albert_act.pretrain's main."""
    benchmarks = sorted(path for path in (REPO / "benchmarks").glob("*.py")
                        if "\ndef main(" in path.read_text() and path.name != "english_small.py")
    assert len(benchmarks) >= 18
    own = [path.name for path in benchmarks if not re.search(r"arguments\.(run|fine_tunings)\(", path.read_text())
           or re.search(r"cli\.(failures|exit_at_once_when_stopped)\(", path.read_text())]
    assert own == []


def test_every_benchmark_can_be_stopped_before_its_heavy_imports():
    """A benchmark that imports TensorFlow, Keras, JAX or the model at its top calls `cli.quiet_start()`
    first: Ctrl-C while they load (seconds) gives the one stop line, not a traceback from inside them."""
    heavy = re.compile(r"(tensorflow|keras|keras_hub|jax|pipelines|albert_act(?!\.base\b))(\.|$)")
    late = []
    for path in sorted((REPO / "benchmarks").glob("*.py")):
        started = False
        body = ast.parse(path.read_text()).body
        mains = [node.body for node in body if isinstance(node, ast.FunctionDef) and node.name == "main"]
        for node in [*body, *(mains[0] if mains else [])]:  # the module's top, then its main()'s
            if isinstance(node, ast.Expr) and "quiet_start(" in ast.unparse(node):
                started = True
            modules = [node.module] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            late += [f"{path.name}:{node.lineno} {module}" for module in modules if heavy.match(module) and not started]
    assert late == []


def top_level_names(path):
    """The names a module defines at its top level (functions, classes, assignments, imports, and
    the package's lazy re-exports: the keys of albert_act's `_EXPORTS`)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and isinstance(node.value, ast.Dict):
                names.update(k.value for k in node.value.keys if isinstance(k, ast.Constant))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def test_every_name_imported_from_the_project_exists():
    """`from albert_act.x import name` anywhere (benchmarks and tests included) names something x
    defines: a script that is not run by the suite cannot keep importing a function since removed."""
    modules = _modules()
    missing = []
    files = [p for folder in ("albert_act", "pipelines", "benchmarks", "tests") for p in sorted(REPO.glob(f"{folder}/**/*.py"))]
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
                defined = top_level_names(modules[node.module])
                missing += [f"{path.relative_to(REPO)}:{node.lineno} {node.module}.{a.name}" for a in node.names
                            if a.name not in defined and f"{node.module}.{a.name}" not in modules]
    assert missing == []
