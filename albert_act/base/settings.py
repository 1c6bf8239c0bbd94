"""Declared settings: a job's config is a frozen dataclass whose fields say everything about
themselves once, in `setting(...)`: the default, one line of help, the flag (the field's name
unless given), the range (a `checks.flag_rule`) and the choices. From that one place come

- the command line (`add_flags`): name, type, default, help and range of every flag;
- the checks on construction (`check_values`, called by each config's `__post_init__`), with
  the same words as the flag's ("steps must be an integer in [1, 100000000], got 0");
- `--set key=value` for any field by name (`parse_flags`), and the class's field list in its
  docstring (`document`).

No TensorFlow here: the commands build their parsers before loading it.
"""

import argparse
import copy
import dataclasses
import json
import os
import re
import sys
import types
import typing

from albert_act.base import checks, cli

NEGATED = "negated"  # a boolean field whose flag turns it off (`--unshared` for share_weights)
PATH = checks.PATH  # a field that names a file or folder (or a list of them): never empty, on the flag or in a file


def setting(default=None, help="", *, flag=None, rule=None, choices=None, parse=None, factory=None, kind=None):
    """A config field. flag: the command-line name when it is not the field's; rule: the range,
    a `checks.flag_rule` key ("int>=1", "int[1,65536]", ">0"); choices: the allowed values;
    parse: the flag's type (text -> value) where the annotation does not say it; kind: NEGATED
    for a boolean whose flag turns it off, PATH for a path (an empty one is refused). factory: a default built per instance (lists, dicts)."""
    metadata = {"help": help, "flag": flag, "rule": rule, "choices": choices, "parse": parse, "kind": kind}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def types_of(field):
    """The field's value types, None left out: `int | None` -> (int,)."""
    kinds = typing.get_args(field.type) if isinstance(field.type, types.UnionType) else (field.type,)
    return tuple(k for k in kinds if k is not type(None))


def default_of(field):
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None  # a required field: on the command line, left to the command (e.g. the demo's data)


def flag_name(field):
    return "--" + (field.metadata.get("flag") or field.name)


def key_value(flag):
    """The type of a KEY=VALUE flag: `key=value` -> (key, value), the value read as JSON (numbers, true/false, lists;
    and numbers as Python writes them), else as text; spaces around are not theirs; anything else is refused."""
    def parse(text):
        key, equals, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if not key or not equals:
            raise argparse.ArgumentTypeError(f"{flag} expects key=value, got {text!r}")
        from albert_act.base import json_files

        try:
            return key, json.loads(value, object_pairs_hook=json_files.no_duplicate_keys)
        except json_files.DuplicateKey as duplicate:
            raise argparse.ArgumentTypeError(f"{flag} {key}: {duplicate.key!r} is given twice in one object (JSON "
                                             "keeps the last without a word): give it once") from None
        except json.JSONDecodeError:  # (.001, 1.e-4, 05: a number as Python writes it, not JSON)
            if re.fullmatch(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", value):
                return key, int(value) if value.lstrip("+-").isdigit() else float(value)
            return key, value  # (text: a path, a preset's name)
    return parse


def add_flags(parser, config_class):
    """One flag per field of `config_class`; returns {dest: rule} for `cli.parse_checked`, which
    adds each range to --help and checks it on parsing."""
    rules = {}
    for field in dataclasses.fields(config_class):
        if not field.metadata:
            continue
        meta, kinds, default = field.metadata, types_of(field), default_of(field)
        options = dict(dest=field.name, help=meta["help"].replace("%", "%%") or None)  # argparse formats help with %
        if meta["kind"] == NEGATED:
            options.update(action="store_false", default=default)
        elif kinds == (bool,):
            options.update(action="store_true" if default is False else argparse.BooleanOptionalAction, default=default)
        elif dict in kinds:
            options.update(action="append", type=meta["parse"] or key_value(flag_name(field)), default=None,
                           metavar="KEY=VALUE")
        else:
            options.update(default=default, type=meta["parse"] or _parser_type(kinds),
                           nargs="+" if list in kinds else None, metavar=meta["flag"] and meta["flag"].upper())
            if meta["choices"] is not None:
                options["choices"] = meta["choices"]
        parser.add_argument(flag_name(field), **{k: v for k, v in options.items() if v is not None or k == "default"})
        rule = PATH if meta["kind"] == PATH else meta["rule"]
        if rule:
            rules[field.name] = (rule, meta["flag"]) if meta["flag"] else rule
    return rules


def _parser_type(kinds):
    for kind in (int, float):
        if kinds == (kind,):
            return kind
    return str


def parse_flags(parser, config_class, argv=None, required=(), paths=()):
    """A job's command line: a flag per field of `config_class` (`add_flags`), and two more:
    --config FILE (a saved config, e.g. a run's config.json: its settings become the defaults, the
    flags given change them) and --set KEY=VALUE (any field by name). Parsed and range-checked
    (`cli.parse_checked`); the `required` fields must have a value (given, or from --config), as
    argparse says of a required flag. --set's values are in `args` like the flags' (a setting given
    both ways, or twice, is refused); `args.given` names the settings given, by flag or --set.
    paths: the command's own flags (beside the config's) that name a file or folder: never empty."""
    rules = {**add_flags(parser, config_class), **dict.fromkeys(paths, PATH), "config": PATH}
    parser.add_argument("--config", default=None, metavar="CONFIG_JSON",
                        help=f"{config_class.CONFIG_FILES}: its settings are the defaults, and flags given change "
                             "them (repeats a run); a file (or a pipe, /dev/stdin) read once")
    parser.add_argument("--set", type=key_value("--set"), action="append", default=[], metavar="KEY=VALUE",
                        help=f"any setting of {config_class.__name__} by its name, the value as JSON (e.g. --set "
                             "seed=7); for settings without a flag of their own (default: none)")
    try:  # (typed: a file's value it replaces is not checked)
        probe = vars(_probe(parser).parse_known_args(argv)[0])
    except _Unparsed:  # (said by the parse below)
        probe = {}
    dicts = [f.name for f in dataclasses.fields(config_class) if dict in types_of(f)]  # (typed pairs add to the file's)
    saved, written = _saved(config_class, argv, {*probe, *(key for key, _ in probe.get("set", []))} - set(dicts))
    parser.set_defaults(**{k: v for k, v in saved.items() if k not in dicts})
    args = cli.parse_checked(parser, argv, rules)
    args.given = {name for name, value in vars(args).items() if value != parser.get_default(name)}
    args.typed = _typed(parser, argv)
    typed = {name: getattr(args, name) or [] for name in dicts}
    for name, pairs in typed.items():  # --override hidden_dim=64 --override hidden_dim=32: not the last one, silently
        keys = [key for key, _ in pairs]
        twice = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
        if twice is not None:
            flag = flag_name(next(f for f in dataclasses.fields(config_class) if f.name == name))
            parser.error(f"{flag} {twice} is given twice ({', '.join(f'{k}={v}' for k, v in pairs if k == twice)}): "
                         "give it once")
    for name in dicts:  # KEY=VALUE pairs given add to the saved ones
        setattr(args, name, [*saved.get(name, {}).items(), *typed[name]])
    _apply_set(parser, config_class, args, typed)
    # The paths the --config file gave (not a flag): {name: as written there}, for `explained`.
    untyped = {name: value for name, value in written.items() if name not in args.given and name not in args.typed}
    paths = {f.name for f in dataclasses.fields(config_class) if f.metadata.get("kind") == PATH}
    args.from_file = {name: value for name, value in untyped.items() if name in paths}  # (typed at its value: typed)
    args.file_words = {flag_name(f): untyped[f.name] for f in dataclasses.fields(config_class)  # a choice's, a text's
                       if f.name in untyped and f.name not in paths}
    _check_started_in(args, written, config_class)
    missing = [flag_name(f) for f in dataclasses.fields(config_class)
               if f.name in required and getattr(args, f.name) is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    return args


def _check_started_in(args, written, config_class):
    """Exits with an error where --config is a run's own file (config.json, finetune_config.json) in its output
    folder, read from another folder than the one the run started in, and gives relative paths: they name files
    from there (the run read them so), and from here would name others, or none, without a word. The folder it
    started in: the file's folder less the relative output folder it records (model_dir, output_dir)."""
    from albert_act.base import artifacts

    if not args.config or "://" in args.config or os.path.basename(args.config) not in (artifacts.CONFIG,
                                                                                          artifacts.FINETUNE_CONFIG):
        return
    key = next((k for k in ("model_dir", "output_dir") if isinstance(written.get(k), str)), None)
    output = key and os.path.normpath(os.path.expanduser(written[key]))
    folder = os.path.dirname(os.path.abspath(os.path.expanduser(args.config)))
    if not output or os.path.isabs(output) or output.split(os.sep)[0] in (".", "..") or not (
            folder.endswith(os.sep + output)):
        return  # (the file moved or copied, or its run wrote where it started: where it started is not known)
    started = folder[:-len(output) - 1] or os.sep
    relative = [(name, v) for name, value in args.from_file.items()
                for v in (value if isinstance(value, list) else [value])
                if isinstance(v, str) and "://" not in v and not os.path.isabs(os.path.expanduser(v))
                and os.path.exists(os.path.join(started, v))]  # (where it is not, the run has moved: not known)
    if relative and not artifacts.same_path(started, os.getcwd()):
        name, value = relative[0]
        flag = flag_name(next(f for f in dataclasses.fields(config_class) if f.name == name))
        sys.exit(f"error: --config {args.config}: its run started in {started} (its {key} {written[key]!r} is the "
                 f"folder the file lies in), and its relative paths name files from there; from {os.getcwd()}, "
                 f"{name} {value!r} would be {os.path.abspath(value)}, not {os.path.join(started, value)}: run the "
                 f"command from {started}, or give {flag}{' and the other paths' if len(relative) > 1 else ''}")


def _typed(parser, argv):
    """The flags typed on the command line, at their default's value too (`given` compares values)."""
    return {name for name in vars(_probe(parser).parse_known_args(argv)[0]) if not name.startswith("_")}


def _probe(parser):
    """A copy of the parser with no defaults (nor a --config file's): it parses the flags typed alone. It prints no
    help, and an error raises `_Unparsed` (the parser itself says it)."""
    probe = copy.deepcopy(parser)
    probe._defaults = {}  # noqa: SLF001 (set_defaults' values: argparse puts them in the namespace as they are)
    for action in probe._actions:  # noqa: SLF001
        action.default = argparse.SUPPRESS
        if isinstance(action, argparse._HelpAction):  # noqa: SLF001
            action.__class__ = _Unheard
    probe.error = _unparsed
    return probe


class _Unparsed(Exception):
    pass


def _unparsed(message):
    raise _Unparsed(message)


class _Unheard(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        pass


def _apply_set(parser, config_class, args, typed):
    """--set KEY=VALUE put into `args` (so that every later check sees it), each key once and not
    also given by its flag; `args.given` and `args.typed` gain the keys. typed: the KEY=VALUE pairs of each dict
    setting's own flag, as given (for the message)."""
    fields = {f.name: f for f in dataclasses.fields(config_class)}
    seen = set()
    for key, value in args.set:
        if key not in fields:
            named = [f for f in fields.values() if flag_name(f) == f"--{key}"]  # a flag's name (--tau): its setting
            negated = bool(named) and named[0].metadata.get("kind") == NEGATED  # (--unshared: share_weights=false)
            bare = key.removeprefix("backbone.")  # (a backbone setting: hidden_dim, or the whole backbone)
            backbone = key == "backbone" or bare in getattr(config_class, "BACKBONE_SETTINGS", ())
            override = "" if named or "backbone_overrides" not in fields or not backbone else (
                "; the backbone's settings go by --override (--set backbone_overrides={...}): --override "
                + (f"{bare}={json.dumps(value)}" if key != "backbone" else "KEY=VALUE for each"))
            shown = "false" if negated else value if isinstance(value, str) and checks.json_number(value) else json.dumps(
                value)  # (a number in quotes, '"0.1"': advised without them)
            parser.error(f"--set {key}: not a setting of {config_class.__name__}" + (
                f"; --{key} is the flag of the setting {named[0].name}: --set {named[0].name}={shown}" if named else
                f"{override}; known: {', '.join(fields)}"))
        if key in seen:
            parser.error(f"--set {key} is given twice: give it once")
        if key in args.given or key in args.typed:  # (typed at its default's value too: --preset demo)
            flag = flag_name(fields[key])
            shown = " ".join(f"{k}={v}" for k, v in typed[key]) if key in typed else getattr(args, key)
            parser.error(f"{key} is given twice, as {flag} {shown} and as --set {key}={json.dumps(value)}: give one")
        seen.add(key)
        if fields[key].metadata.get("kind") == PATH and types_of(fields[key]) == (str,) and type(value) in (bool, list, dict):
            parser.error(f"--set {key}={json.dumps(value)}: {key} takes a path, and {json.dumps(value)} is JSON's "
                         f"{type(value).__name__}, no path (it would be a file named '{json.dumps(value)}'); give the "
                         f"path, or leave {key} out for its default")
        if dict in types_of(fields[key]):
            if not isinstance(value, dict):
                parser.error(f"--set {key} must be a JSON object of key: value pairs (e.g. {flag_name(fields[key])} "
                             f"KEY=VALUE), got {json.dumps(value)}")
            value = [*getattr(args, key), *value.items()]
        elif types_of(fields[key]) == (str,) and not isinstance(value, str):
            if value is None and fields[key].metadata.get("kind") == PATH:  # not a folder named "null"
                parser.error(f"--set {key}=null: {key} takes a path, and null is none (it would be a folder named "
                             f"'null'); give the path, or leave {key} out for its default")
            value = json.dumps(value)  # a text setting takes the text as typed (--set model_dir=2024)
        elif isinstance(value, str) and set(types_of(fields[key])) & {int, float} and checks.json_number(value):  # 'lr="1e-3"'
            kind = "an integer" if types_of(fields[key]) == (int,) else "a number"
            parser.error(f"--set {key}={json.dumps(value)} is a JSON string, and {key} takes {kind}: write it "
                         f"without quotes (--set {key}={value})")
        if fields[key].metadata.get("kind") == PATH:
            try:
                checks.path(f"--set {key}", value)
            except ValueError as error:
                sys.exit(f"error: {error}")
        setattr(args, key, value)
    args.given |= seen
    args.typed |= seen  # typed on the command line as much as a flag (--grid's refusal of a setting it sets aside)


def _saved(config_class, argv, typed=()):
    """The settings in --config's file ({} without --config); a file that is not one exits with its error. A value
    refused whose setting is `typed` (a flag or --set given) is left out: the typed one replaces it, and is checked."""
    early = argparse.ArgumentParser(add_help=False)
    early.add_argument("--config", action="append", default=[])
    paths = early.parse_known_args(argv)[0].config
    if len(paths) > 1:
        sys.exit(f"error: --config is given {len(paths)} times ({', '.join(paths)}): give one file (a later one would "
                 "replace the earlier, whose settings would be lost without a word)")
    if not paths:
        return {}, {}
    path = paths[0]
    try:
        checks.path("--config", path)
    except ValueError as error:
        sys.exit(f"error: {error}")
    from albert_act.base import artifacts

    path = os.path.expanduser(path)
    if "://" not in path and not os.path.exists(path):
        sys.exit(f"error: --config {path}: no such file")
    with cli.failures(None, "nothing was written", "nothing was written"):
        lines = {}  # the line of each key, for a value's refusal
        try:
            record = artifacts.read_json(path, lines)
            while True:
                try:
                    config = config_class.from_record(record, partial=True, path=path)
                    break
                except ValueError as error:
                    if not (isinstance(record, dict) and (named := str(error).split(" ", 1)[0]) in typed
                            and named in record):
                        raise
                    record = {k: v for k, v in record.items() if k != named}
        except ValueError as error:
            takes = f"; this command's --config takes {config_class.CONFIG_FILES}" if "not settings of" in str(error) \
                else ""
            named = str(error).split(" ", 1)[0]  # "seed must be ...": the setting refused, and its line (an export's
            named = f"export.{named}" if f"export.{named}" in lines else named  # record: inside its "export")
            line = f" line {lines[named]}" if lines.get(named) else ""
            raise ValueError(f"--config {path}{line}: {error}{takes}") from None
    required = _required(config_class)  # those the file left out are None here: the flags give them
    values = {k: v for k, v in dataclasses.asdict(config).items() if not (k in required and v is None)}
    recorded = record.get("export", record) if isinstance(record.get("export"), dict) else record
    written = {f.name: recorded[f.name] for f in dataclasses.fields(config_class)
               if recorded.get(f.name) is not None and (f.metadata.get("kind") == PATH or isinstance(recorded[f.name],
                                                                                                    (str, int, float)))}
    return values, written


def explained(args):
    """For `cli.failures(explain=...)`: a message that names a path the --config file gave gets where
    it came from, and how it was resolved: "... (checkpoint comes from --config FILE, where it is
    '../../run', relative to the export the file lies in); a relative path a run's file gave is named as read
    from the current folder. Without --config: the message as it is."""
    def explain(message):
        notes = []
        for name, written in getattr(args, "from_file", {}).items():
            value = getattr(args, name, None)
            shown = [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str) and v in message]
            if not shown and not any(isinstance(w, str) and w in message
                                     for w in (written if isinstance(written, list) else [written])):
                continue
            relative = [w for w in (written if isinstance(written, list) else [written])
                        if isinstance(w, str) and not os.path.isabs(os.path.expanduser(w))]
            resolved = ", relative to the export the file lies in" if written != value else (
                f", relative to the current folder {os.getcwd()}: run the command from the folder the run started "
                f"in, or give --{name}" if relative else "")
            notes.append(f"{name} comes from --config {args.config}, where it is {json.dumps(written)}{resolved}")
        for flag, value in getattr(args, "file_words", {}).items():  # "--strategy tpu: no TPU found", from the file
            name, said = re.escape(flag.lstrip("-")), re.escape(str(value))  # ("warmup_steps ..., got 50" too)
            if re.search(rf"(?:{re.escape(flag)}|\b{name})[ =]{said}\b", message) or (
                    re.search(rf"\b{name}\b", message) and re.search(rf"\bgot {said}\b", message)):
                change = "" if f"drop {flag}" in message else f"; give {flag} to change it"  # (not both ways)
                notes.append(f"{flag} {value} comes from --config {args.config}{change}")
        return f"{message} ({'; '.join(notes)})" if notes else message
    return explain


def _required(config_class):
    return {f.name for f in dataclasses.fields(config_class)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}


def config_from(config_class, args, **changes):
    """The config the parsed `args` give (`changes` last); a refusal of its values ends the command
    with "error: ..." before any work."""
    with cli.failures(None, "nothing was written", "nothing was written", explain=explained(args)):
        return config_class(**{**values(config_class, args), **changes})


def values(config_class, args):
    """The fields of `config_class` that `args` (parsed by `add_flags`' parser) holds (KEY=VALUE pairs: a dict)."""
    return {field.name: dict(getattr(args, field.name) or ()) if dict in types_of(field) else getattr(args, field.name)
            for field in dataclasses.fields(config_class) if hasattr(args, field.name)}


def from_record(config_class, record, what, added=None, extra=(), partial=False):
    """`config_class` from a saved record (a run's JSON): settings saved before a field existed take
    `added`'s values (what such runs used); keys in `extra` (derived values saved beside the
    settings) are skipped; any other unknown key is refused, naming it. partial: a --config file
    may leave out settings that have no default (the flags give them): None meanwhile."""
    if not isinstance(record, dict):
        raise ValueError(f"not settings of {what}: a JSON object of settings by name is needed, got "
                         f"{type(record).__name__}")
    names = {f.name for f in dataclasses.fields(config_class)}
    unknown = sorted(set(record) - names - set(extra))
    if unknown:
        raise ValueError(f"not settings of {what}: {', '.join(unknown[:5])}" + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    absent = {name: None for name in _required(config_class) if name not in record} if partial else {}
    return config_class(**{**(added or {}), **absent, **{k: v for k, v in record.items() if k in names}})


def check_values(config):
    """Each field's rule and choices, on its value (None, a default resolved later, passes where the default is None).
    ValueError in the flag's words: "steps must be an integer in [1, 100000000], got 0"; "seed must be ..., got null"
    (a --config file's null, where the setting has a value); 'got "0.01", a string' (a number in quotes)."""
    for field in dataclasses.fields(config):
        value, meta = getattr(config, field.name), field.metadata
        if value is None and meta and field.default not in (None, dataclasses.MISSING):
            kinds = types_of(field)
            words = (checks.flag_rule(meta["rule"])[0] if meta["rule"] else
                     _TYPE_WORDS.get(kinds[0], f"a {kinds[0].__name__}") if len(kinds) == 1 else f"a value, e.g. {field.default!r}")
            raise ValueError(f"{field.name} must be {words}, got null (leave it out for its default, {field.default!r})")
        if value is None or not meta:
            continue
        _check_type(field, value)
        if meta["kind"] == PATH:
            checks.path(field.name, value)
        if meta["rule"]:
            words, test = checks.flag_rule(meta["rule"])
            number = isinstance(value, int) if meta["rule"].startswith("int") else isinstance(value, (int, float))
            if isinstance(value, bool) or not number or not test(value):  # (JSON's "0.01": in range, as text)
                raise ValueError(f"{field.name} must be {words}, got {checks.shown_value(value, test)}")
        if meta["choices"] is not None:
            checks.one_of(field.name, value, meta["choices"])


_TYPE_WORDS = {dict: "a JSON object of key: value pairs", list: "a list", str: "a string", bool: "true or false"}


def _check_type(field, value):
    """A field of one kind (a dict, list, string or boolean) must hold one: a --config file or --set
    may give anything JSON holds."""
    kinds = types_of(field)
    if len(kinds) != 1 or kinds[0] not in _TYPE_WORDS:
        return
    accepted = {str: (str, os.PathLike), list: (list, tuple)}.get(kinds[0], kinds[0])
    if not isinstance(value, accepted) or (kinds[0] is not bool and isinstance(value, bool)):
        raise ValueError(f"{field.name} must be {_TYPE_WORDS[kinds[0]]}, got {json.dumps(value, default=repr)}")


def document(config_class):
    """Appends one line per field ("name: help") to the class's docstring; returns the class."""
    lines = [f"    {f.name}: {f.metadata['help']}" for f in dataclasses.fields(config_class) if f.metadata]
    config_class.__doc__ = (config_class.__doc__ or "").rstrip() + "\n\n    Fields:\n" + "\n".join(lines) + "\n"
    return config_class
