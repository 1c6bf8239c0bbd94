"""The call path a model path takes through the project, from a command's argument to a loaded model.

`trace(path, command, run)` runs `run()` (the command's main) under a profiler and records, in
call order, the project module of every call that receives the path: as an argument, a string
beginning with it (a file inside it), a command line holding it (parsed or not), or the `Source`
opened from it. Not recorded: parsing and checking the command line (`albert_act.base.cli`,
`albert_act.base.checks`), and the loaded objects' own construction (Keras layers, the tokenizer from
its file). Recording starts in the command's module and stops when a recorded call returns a
Keras model (or a tuple holding one), or returns after receiving one (a warm start into a built
model): the model is loaded.

Two counts of turning back up the stages (`test_layout.stage_of`):
- upward calls (`trace`): a call from a module of a lower stage into one of a higher stage;
- returns up (`summary`): a step of the recorded sequence to a module of a higher stage than the
  one before it, i.e. control coming back up from a lower module to ask the next question.
"""

import argparse
import sys

import keras

from test_layout import stage_of

PROJECT = ("albert_act", "pipelines")
COMMAND_LINE = ("albert_act.base.cli", "albert_act.base.checks", "albert_act.base.settings")  # parsing and checking flags: not the path


def _carries(value, path):
    if isinstance(value, str):
        return value.startswith(path)
    if isinstance(value, (list, tuple)):  # a command line
        return any(_carries(v, path) for v in value)
    if isinstance(value, argparse.Namespace):
        return any(_carries(v, path) for v in vars(value).values())
    return type(value).__name__ == "Source" and getattr(value, "path", None) == path


def _is_model(value):
    return isinstance(value, keras.Model) or (isinstance(value, tuple) and any(_is_model(v) for v in value))


def trace(path, command, run):
    """(the project modules, in call order with repeats, that `path` passes through from the
    command's module `command` until a model is loaded; calls from a module of a lower stage
    to one of a higher stage among them)."""
    path, modules, recorded, building, state = str(path), [], set(), [], {"done": False, "upward": 0}

    def profile(frame, event, arg):
        if state["done"]:
            return
        module = frame.f_globals.get("__name__", "")
        if event == "call":
            if building:
                return
            if (frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), keras.layers.Layer)) \
                    or (module == "pipelines.tokenizer"):
                building.append(frame)  # the loaded objects' own construction
                return
            if not modules and module != command:
                return  # the path starts in the command (its argument parsing is not on the path)
            if module in COMMAND_LINE:
                return
            if module.startswith(PROJECT) and any(_carries(v, path) for v in frame.f_locals.values()):
                caller = frame.f_back
                while caller is not None and caller not in recorded:
                    caller = caller.f_back
                state["upward"] += caller is not None and stage_of(module)[0] > stage_of(caller.f_globals["__name__"])[0]
                modules.append(module)
                recorded.add(frame)
        elif event == "return":
            if building and frame is building[-1]:
                building.pop()
            elif frame in recorded:
                recorded.discard(frame)
                received = any(_is_model(v) for v in frame.f_locals.values())
                if _is_model(arg) or received:
                    state["done"] = True

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    assert state["done"], f"no model was loaded from {path}"
    return modules, state["upward"]


def summary(modules, command):
    """(modules entered other than `command`'s own, returns up the stages to ask again, the sequence
    with repeats collapsed). A return from the base (`albert_act.base`: on-disk names, JSON and
    file reading, which every stage calls as a library) is not a return up: the question was
    asked by the module it returns to."""
    collapsed = [m for i, m in enumerate(modules) if i == 0 or m != modules[i - 1]]
    entered = sorted(set(collapsed) - {command})
    turns = sum(stage_of(b)[0] > stage_of(a)[0] and not a.startswith("albert_act.base.")
                for a, b in zip(collapsed, collapsed[1:]))
    return entered, turns, collapsed
