"""PretrainConfig, the one declared config of a pre-training run: it checks its own values when
built, `pretrain`'s flags are made from its fields, and a run's saved config.json repeats it."""

import dataclasses
import json
import re

import pytest

from albert_act.base import settings
from albert_act.model.presets import PRESETS
from albert_act.train.pretraining_config import PretrainConfig, config_record

FILES = dict(train_files=["train.tfrecord"], eval_files=["eval.tfrecord"], model_dir="run")


def parse(argv):
    from albert_act.pretrain import parse_args

    return parse_args(argv)


def test_every_field_is_a_flag_with_its_default_and_range():
    args = parse([])
    flags = {f.name for f in dataclasses.fields(PretrainConfig)}
    assert flags <= set(vars(args))  # one flag per setting, the field's name as dest
    assert (args.preset, args.seed, args.checkpoint_every, args.share_weights, args.steps) == ("demo", 12345, 500, True, None)
    args = parse(["--tau", "0.5", "--unshared", "--override", "hidden_dim=64", "--override", "dropout=0.1",
                  "--steps", "7", "--no-jit_compile", "--overwrite", "--weight_decay_rate", "0"])
    values = settings.values(PretrainConfig, args)
    assert (values["ponder_cost_weight"], values["share_weights"], values["backbone_overrides"], values["steps"],
            values["jit_compile"], values["overwrite_export"], values["weight_decay_rate"]) == \
        (0.5, False, {"hidden_dim": 64, "dropout": 0.1}, 7, False, True, 0.0)


def test_values_are_checked_when_the_config_is_built():
    for given, message in [
        (dict(steps=0), r"steps must be an integer in \[1, 100000000\], got 0"),
        (dict(learning_rate=float("nan")), r"learning_rate must be a learning rate in \[1e-08, .*, got nan"),
        (dict(seed=1.5), r"seed must be an integer in \[0, 4294967295\] .*, got 1.5"),
        (dict(halting="sometimes"), r"halting must be one of \['act', 'none'\], got 'sometimes'"),
        (dict(preset="huge"), r"preset must be one of \['base', 'demo', 'english', 'small', 'tiny'\], got 'huge'"),
        (dict(steps=4, warmup_steps=9), r"warmup_steps must be in \[0, steps=4\], got 9"),
        (dict(ponder_cost_weight=-1.0), r"ponder_cost_weight \(--tau\) must be a number in \[0, 3.4028e\+38\] .* or 'auto', got -1.0"),
        (dict(backbone_overrides={"depth": 3}), r"--override depth: not a backbone setting"),
        (dict(backbone_overrides={"hidden_dim": "128"}), r'--override hidden_dim="128" \(or backbone_overrides in a '
                                                         r"--config file\): expected an integer, got a string \(the "
                                                         r"preset has \d+\)"),
        (dict(global_batch_size=10, micro_batch_size=4), r"global batch 10 is not divisible by micro-batch 4"),
    ]:
        with pytest.raises(ValueError, match=message):
            PretrainConfig(**FILES, **given)
    config = PretrainConfig(**FILES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.steps = 3  # a config is changed by dataclasses.replace, which checks it again
    with pytest.raises(ValueError, match=r"steps must be an integer"):
        dataclasses.replace(config, steps=-1)


def test_the_preset_decides_where_nothing_is_given_and_its_settings_are_fields():
    fields = {f.name for f in dataclasses.fields(PretrainConfig)}
    for name, preset in PRESETS.items():
        assert set(preset.training) <= fields, name  # a preset is a partial config
        resolved = PretrainConfig(**FILES, preset=name).resolved()  # and checks as one
        assert None not in (resolved.steps, resolved.execution, resolved.ponder_cost_weight), name
    english = PretrainConfig(**FILES, preset="english", steps=4000).resolved()
    assert (english.execution, english.jit_compile, english.warmup_steps) == ("bucket", True, 400)


def test_a_setting_that_needs_a_depth_target_takes_the_presets():
    """The english preset's recipe holds target_iterations 3: the settings that need a target accept it
    before it is filled in (they asked for --target_iterations), and the demo preset, which has none,
    still asks for one."""
    for given in (dict(kl_weight=0.1), dict(target_control="signed"), dict(target_pieces="unmasked")):
        resolved = PretrainConfig(**FILES, preset="english", **given).resolved()
        assert resolved.target_iterations == 3 and all(getattr(resolved, k) == v for k, v in given.items()), given
        with pytest.raises(ValueError, match="give --target_iterations"):
            PretrainConfig(**FILES, preset="demo", **given)
    with pytest.raises(ValueError, match=r"got 3 \(the english preset's\) \(N_max = 2: --override max_iterations=2"):
        PretrainConfig(**FILES, preset="english", backbone_overrides={"max_iterations": 2})


def test_set_reaches_any_setting_and_names_the_known_ones(capsys):
    args = parse([*_file_flags(), "--set", "weight_decay_rate=0", "--set", "clip_norm = 5"])  # (spaces: not the key's)
    config = settings.config_from(PretrainConfig, args)
    assert (config.weight_decay_rate, config.clip_norm) == (0, 5) and {"weight_decay_rate", "clip_norm"} <= args.given
    refusals = [(["--set", "depth=3"], r"--set depth: not a setting of PretrainConfig; known: train_files, eval_files, "
                                       r"model_dir, preset"),
                (["--set", "tau=0.1"], r"--set tau: not a setting of PretrainConfig; --tau is the flag of the setting "
                                       r"ponder_cost_weight: --set ponder_cost_weight=0.1$"),
                (["--set", "unshared=true"], r"--unshared is the flag of the setting share_weights: --set "
                                             r"share_weights=false$"),
                (["--steps", "3", "--set", "steps=2"], r"steps is given twice, as --steps 3 and as --set steps=2: give one"),
                (["--set", "seed=1", "--set", "seed=2"], r"--set seed is given twice: give it once"),
                (["--override", "hidden_dim=48", "--set", 'backbone_overrides={"dropout": 0.1}'],
                 r"backbone_overrides is given twice, as --override hidden_dim=48 and as --set backbone_overrides="),
                (["--set", "backbone_overrides=5"], r"--set backbone_overrides must be a JSON object of key: value pairs "
                                                    r"\(e.g. --override KEY=VALUE\), got 5"),
                (["--set", 'learning_rate="1e-3"'], r'--set learning_rate="1e-3" is a JSON string, and learning_rate '
                                                    r"takes a number: write it without quotes \(--set learning_rate=1e-3\)"),
                (["--set", 'steps="4"'], r'--set steps="4" is a JSON string, and steps takes an integer'),
                (["--set", 'ponder_cost_weight="0.1"'], r'--set ponder_cost_weight="0.1" is a JSON string, and '
                                                        r"ponder_cost_weight takes a number"),
                (["--override", "hidden_dim=64", "--override", "hidden_dim=32"],  # not the last one, silently
                 r"--override hidden_dim is given twice \(hidden_dim=64, hidden_dim=32\): give it once"),
                (["--set", 'backbone_overrides={"hidden_dim": 64, "hidden_dim": 32}'],  # as a --config file's
                 r"--set backbone_overrides: 'hidden_dim' is given twice in one object \(JSON keeps the last without a "
                 r"word\): give it once")]
    for argv, message in refusals:
        with pytest.raises(SystemExit):
            parse([*_file_flags(), *argv])
        assert re.search(message, capsys.readouterr().err)
    with pytest.raises(ValueError, match=r"model_dir must be a string, got 5"):
        PretrainConfig(**{**FILES, "model_dir": 5})
    with pytest.raises(ValueError, match=r"train_files must be a list, got \"t.tfrecord\""):
        PretrainConfig(**{**FILES, "train_files": "t.tfrecord"})


def _file_flags():
    return ["--train_files", *FILES["train_files"], "--eval_files", *FILES["eval_files"], "--model_dir", FILES["model_dir"]]


def test_a_saved_config_repeats_the_run(tmp_path):
    config = PretrainConfig(**FILES, preset="demo", steps=300, backbone_overrides={"hidden_dim": 64},
                            ponder_cost_weight=0.01).resolved()
    record = config_record(config)
    assert PretrainConfig.from_record(record) == config  # the record holds the whole config
    path = tmp_path / "config.json"
    path.write_text(json.dumps(record))
    args = parse(["--config", str(path), "--model_dir", str(tmp_path / "again"), "--override", "dropout=0.1"])
    repeated = PretrainConfig(**settings.values(PretrainConfig, args))
    assert repeated == dataclasses.replace(config, model_dir=str(tmp_path / "again"),
                                           backbone_overrides={"hidden_dim": 64, "dropout": 0.1})
    older = {k: v for k, v in record.items() if k not in ("input_streams", "eval_every")}  # saved before they existed
    assert PretrainConfig.from_record(older).input_streams == 1
    with pytest.raises(ValueError, match="not settings of a pre-training run: speed"):
        PretrainConfig.from_record({**record, "speed": 2})
    # A JAX run's config.json names its backend beside the settings: it repeats the run as well.
    path.write_text(json.dumps({**record, "backend": "jax"}))
    args = parse(["--config", str(path), "--model_dir", str(tmp_path / "again")])
    assert PretrainConfig(**settings.values(PretrainConfig, args)) == dataclasses.replace(
        config, model_dir=str(tmp_path / "again"))
    # A run made with --overwrite: its replay replaces another run's SavedModel only where --overwrite is typed.
    path.write_text(json.dumps({**record, "overwrite_export": True}))
    args = parse(["--config", str(path), "--model_dir", str(tmp_path / "again")])
    assert PretrainConfig(**settings.values(PretrainConfig, args)).overwrite_export is False
    args = parse(["--config", str(path), "--model_dir", str(tmp_path / "again"), "--overwrite"])
    assert PretrainConfig(**settings.values(PretrainConfig, args)).overwrite_export is True


def test_the_class_docstring_lists_every_field_with_its_help():
    doc = PretrainConfig.__doc__
    for field in dataclasses.fields(PretrainConfig):
        assert f"    {field.name}: {field.metadata['help']}" in doc


def test_a_partial_config_file_leaves_the_rest_to_the_flags(tmp_path):
    path = tmp_path / "partial.json"
    path.write_text(json.dumps({"seed": 7, "steps": 5}))
    args = parse(["--config", str(path), *_file_flags(), "--steps", "6"])
    config = settings.config_from(PretrainConfig, args)
    assert (config.seed, config.steps, config.train_files, config.model_dir) == (7, 6, FILES["train_files"], "run")


def test_given_twice_names_only_what_was_typed(tmp_path, capsys):
    path = tmp_path / "saved.json"
    path.write_text(json.dumps({"backbone_overrides": {"dropout": 0.1}}))
    with pytest.raises(SystemExit):
        parse(["--config", str(path), *_file_flags(), "--override", "hidden_dim=48", "--set", 'backbone_overrides={}'])
    error = capsys.readouterr().err
    assert "as --override hidden_dim=48 and as --set backbone_overrides={}" in error and "dropout" not in error


def test_set_reads_a_number_as_python_writes_it():
    """--set learning_rate=.001, 1.e-4 and top_k=05 are numbers, though not JSON's: they were kept as text and refused
    as out of range (round 42 B02, B118, B119). Text that is no number stays text."""
    from albert_act.base import settings

    parse = settings.key_value("--set")
    assert [parse(text) for text in ("learning_rate=.001", "learning_rate=1.e-4", "top_k=05", "a=-.5", "a=1.2.3",
                                     "vocab=v.model")] == [
        ("learning_rate", 0.001), ("learning_rate", 1e-4), ("top_k", 5), ("a", -0.5), ("a", "1.2.3"), ("vocab", "v.model")]
