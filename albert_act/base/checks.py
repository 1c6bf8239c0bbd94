"""Argument checks shared by every layer and model constructor.

Each check raises `ValueError` naming the argument, the value it got and what
was expected, e.g. `ValueError("max_iterations must be an integer >= 1, got 0")`.
"""


import argparse
import json
import os
import re
import struct

# The largest settings the model and the command lines accept: beyond them a run would not end in
# any useful time (a while loop of 100,000 iterations, a sequence of 10^8 positions).
MAX_ITERATIONS = 64  # N_max (the paper's deepest: 24)
MAX_SEQUENCE_LENGTH = 8192


def positive_int(name, value, most=None):
    """Checks `value` is an int >= 1 (bools are rejected), and at most `most` if given; returns it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or (most is not None and value > most):
        words = "an integer >= 1" if most is None else f"an integer in [1, {most}]"
        raise ValueError(f"{name} must be {words}, got {value!r}")
    return value


def probability(name, value, *, inclusive_low=True, inclusive_high=False):
    """Checks `value` is a number in [0, 1) (bounds configurable) and returns it."""
    low_ok = value >= 0.0 if inclusive_low else value > 0.0
    high_ok = value <= 1.0 if inclusive_high else value < 1.0
    interval = f"{'[' if inclusive_low else '('}0, 1{']' if inclusive_high else ')'}"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (low_ok and high_ok):
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
    if not _not_subnormal(value):  # (1e-50: 0 in float32, yet a dropout layer is built and draws its numbers)
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}{subnormal_note(value, inclusive_low)}")
    if not inclusive_high and struct.unpack("f", struct.pack("f", value))[0] >= 1.0:  # (0.99999999999: 1 there)
        raise ValueError(f"{name} must be a number in {interval}, got {value!r} (1.0 in float32, where the model "
                         "computes)")
    return float(value)


def one_of(name, value, choices):
    """Checks `value` is one of `choices` and returns it."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value


def divisible(name, value, divisor_name, divisor):
    """Checks `value % divisor == 0`."""
    if value % divisor:
        raise ValueError(
            f"{name} ({value}) must be divisible by {divisor_name} ({divisor})"
        )
    return value


# What a command-line flag may hold: the words of the message, and the test. NaN fails every test, and
# infinity every test but the integers' (argparse gives them no infinity).
FLOAT32_MAX = 3.4028234663852886e38  # a setting beyond it is inf once the model computes in float32


# The smallest normal float32: TensorFlow on a CPU flushes the subnormals below it to 0 (1e-40 x 1 is 0 there)
FLOAT32_TINY = 1.1754943508222875e-38

# The smallest learning rate: below it, float32 rounds a step away. An update moves a weight by about the rate
# times its size (LAMB) or by about the rate (Adam), and 1 + 5e-8 is 1 in float32 (its spacing at 1 is 1.2e-7).
LEAST_LEARNING_RATE = 1e-8
MOST_LEARNING_RATE = 10.0  # (ALBERT's LAMB: 0.00176 at batch 4096; fine-tuning: 1e-5 to 1e-4)


def _finite(v):
    return v - v == 0 and abs(v) <= FLOAT32_MAX


def _not_subnormal(v):
    return not 0 < abs(v) < FLOAT32_TINY


def shown_value(value, test=None):
    """`value` as a refusal shows it, and why beyond its range: a JSON string, a boolean, float32's 0 for a number
    (where the range `test` takes 0 or float32's smallest normal: not '0.001 at least')."""
    if isinstance(value, (str, bool)):
        return json.dumps(value) + (", a string: write the number without quotes" * json_number(value) if isinstance(
            value, str) else ", a boolean (true or false), not a number")
    near_zero = test is None or test(0) or test(FLOAT32_TINY)
    return f"{value!r}{subnormal_note(value, test is None or test(0)) if near_zero else ''}"


def json_number(text):
    """Whether `text` reads as a JSON number ("1e-3", not "inf"): a quoted one was typed as a JSON string."""
    try:
        return isinstance(json.loads(text), (int, float))
    except ValueError:
        return False


def subnormal_note(value, zero_allowed=True):
    """What is said of a number refused for being above 0 but below float32's smallest normal (1e-50: 0 where the
    model computes, yet not 0 to the code that reads it), or ""; `zero_allowed`: whether 0 is advised."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or _not_subnormal(value):
        return ""
    return f" (0 in float32, where the model computes{f': give 0, or at least {FLOAT32_TINY:.5g}' * zero_allowed})"


FLAG_RULES = {
    "int>=1": ("an integer >= 1", lambda v: v >= 1),
    "int>=0": ("an integer >= 0", lambda v: v >= 0),
    "int:seed": ("an integer in [0, 4294967295] (a seed of NumPy's and Keras's generators)",
                 lambda v: 0 <= v < 2 ** 32),
    # finite in float32, as the model computes, and > 0 there: 1e-40 is 0 there (a run that would not learn)
    ">0": (f"a number in [{FLOAT32_TINY:.5g}, {FLOAT32_MAX:.5g}] (> 0 and finite in float32, as the model computes)",
           lambda v: v >= FLOAT32_TINY and _finite(v)),
    ">=0": (f"a number in [0, {FLOAT32_MAX:.5g}] (finite in float32, as the model computes)",
            lambda v: v >= 0 and _finite(v) and _not_subnormal(v)),
    "finite": (f"a number in [-{FLOAT32_MAX:.5g}, {FLOAT32_MAX:.5g}] (finite in float32, as the model computes)",
               _finite),
    "learning_rate": (f"a learning rate in [{LEAST_LEARNING_RATE:g}, {MOST_LEARNING_RATE:g}] (a smaller one's steps are "
                      "rounded away in float32 weights; a larger one throws them far in one step)",
                      lambda v: LEAST_LEARNING_RATE <= v <= MOST_LEARNING_RATE),
    "(0,1)": ("a number in (0, 1)", lambda v: 0 < v < 1),
    "[0,1)": ("a number in [0, 1)", lambda v: 0 <= v < 1),
    "[0,1]": ("a number in [0, 1]", lambda v: 0 <= v <= 1),  # (the data tool's rates: NumPy's float64)
}


PATH = "path"  # a flag or setting that names a file or folder: never empty (`path`)


def path(name, value):
    """Checks `value` (a path, or a list of them) names something: an empty string is no path, where
    the tools would read it as the current folder or as no file at all. Returns it."""
    for item in value if isinstance(value, (list, tuple)) else (value,):
        if isinstance(item, str) and not item.strip():
            raise ValueError(f"{name} must be a path, got {item!r}: an empty path names no file (the current "
                             "folder is '.')")
        if isinstance(item, str):
            utf8_name(item, name)
    return value


def pattern_free(path, flag=None):
    """ValueError for a local model path (a run, an export, a fine-tuning) holding [ ] * or ?: TensorFlow finds a
    model's files (its checkpoints, a SavedModel's variables) by pattern, where "run[1]" matches run1, not itself."""
    if path and "://" not in str(path) and any(c in str(path) for c in "[]*?"):
        raise ValueError(f"{flag + ' ' if flag else ''}{path}: TensorFlow reads the files of a model by pattern, where "
                         "[ ] * and ? in its path match other names (run[1] is run1): its checkpoints or SavedModel "
                         "would not be found; rename the folder without them")


def utf8_name(path, flag=None):
    """ValueError for a path whose name is not UTF-8 (bytes a Latin-1 system wrote, kept by Python as surrogates):
    TensorFlow's file functions, JSON and the outputs' records take UTF-8 names only."""
    path = str(path)
    bad = next((c for c in path if "\udc80" <= c <= "\udcff"), None)
    if bad is not None:
        shown = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise ValueError(f"{flag + ' ' if flag else ''}{shown}: its name is not UTF-8 (byte 0x{ord(bad) - 0xdc00:02x}, "
                         "as a Latin-1 system writes names): rename it (e.g. convmv -f latin1 -t utf8 --notest FILE)")


def flag_rule(rule):
    """(words, test) of a `FLAG_RULES` key, or of a range: "int[8,8192]" (an integer in [8, 8192]),
    "[0,0.5]" (a number in [0, 0.5])."""
    if rule in FLAG_RULES:
        return FLAG_RULES[rule]
    integer = re.fullmatch(r"int\[(\d+),(\d+)\]", rule)
    if integer:
        low, high = int(integer[1]), int(integer[2])
        return f"an integer in [{low}, {high}]", lambda v: low <= v <= high
    number = re.fullmatch(r"\[([\d.]+),([\d.]+)\]", rule)
    if number:
        low, high = float(number[1]), float(number[2])
        return f"a number in [{number[1]}, {number[2]}]", lambda v: low <= v <= high
    raise KeyError(rule)


def flags(args, rules):
    """Checks parsed command-line flags before any work is done; a flag left at None (a default
    resolved later) passes. rules: {dest: a FLAG_RULES key, `PATH`, or (key, flag) for a flag named otherwise}.
    Raises ValueError naming the flag and the value, e.g. "--batch_size must be an integer >= 1, got 0"."""
    for name, rule in rules.items():
        rule, flag = rule if isinstance(rule, tuple) else (rule, name)  # (rule, flag) where the flag is not the dest
        value = getattr(args, name)
        if rule == PATH:
            path(f"--{flag}", value)
            continue
        rule_check(f"--{flag}", value, rule)


def rule_check(name, value, rule):
    """Checks `value` (or each value of a list, each once) against a `flag_rule` rule (None passes): ValueError
    "NAME must be WORDS, got VALUE"."""
    words, test = flag_rule(rule)
    for item in value if isinstance(value, (list, tuple)) else (value,):  # a flag of several values: each
        if item is not None and not test(item):
            raise ValueError(f"{name} must be {words}, got {shown_value(item, test)}")
    if isinstance(value, (list, tuple)):  # each value is a row or a run of its own: twice is the same work again
        twice = next((item for number, item in enumerate(value) if item in value[:number]), None)
        if twice is not None:
            raise ValueError(f"{name} gives {twice} twice: each value is measured once; give it once")


# A negative number as argparse should read it: `--halting_bias -1e39` and `--tau -inf` are values (so that the
# flag's own check names them), not flags that argparse would say left the option without its argument.
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


def negative_numbers_are_values(parser):
    """`parser` (returned), and its subcommands' parsers, reading "-1e39", "-2.5e-3", "-inf" and "-nan" as
    numbers: before Python 3.13, argparse took a negative number written with an exponent for a flag."""
    parser._negative_number_matcher = _NEGATIVE_NUMBER
    for action in parser._actions:
        for sub in (getattr(action, "choices", None) or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            negative_numbers_are_values(sub)
    return parser


def check_free_space(path, needed):
    """OSError (ENOSPC, as the write would raise) when the local disk of `path` has less than
    `needed` bytes free: for writers that fail badly on a full disk (HDF5)."""
    import errno
    import shutil

    folder = os.path.dirname(os.path.abspath(path))
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise OSError(errno.ENOSPC, f"No space left on device (it needs about {needed / 2**20:.1f} MiB, "
                                    f"{free / 2**20:.1f} MiB are free)", path)


def _mount_points():
    """The mount points in /proc/self/mountinfo (Linux; else none): a bind mount of a folder on the same file system
    is one, which `os.path.ismount` cannot tell (the same device on both sides)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
            fields = [line.split(" ")[4] for line in table if line.count(" ") > 4]
    except OSError:
        return set()  # (the table spells a space, a tab, a newline and a backslash in octal: \040)
    return {re.sub(r"\\([0-7]{3})", lambda code: chr(int(code.group(1), 8)), field) for field in fields}


def refuse_mount_point(path, flag, inside):
    """ValueError for an output replaced whole (renamed into place) that is a mount point, which no rename replaces."""
    if "://" not in str(path) and (os.path.ismount(path) or os.path.realpath(path) in _mount_points()):
        raise ValueError(f"{flag} {path} is a mount point: the output is moved into place whole by a rename, which a "
                         f"mount point refuses; write into a folder inside it, e.g. {os.path.join(path, inside)}")


def refuse_unwritable(folder, named):
    """ValueError where the local `folder` an output is written into, or made in, is not writable (a read-only disk,
    another user's folder): said before the work, not when its result is written."""
    if not os.access(folder, os.W_OK | os.X_OK):
        how = "on a read-only disk" if os.statvfs(folder).f_flag & os.ST_RDONLY else "not writable to you"
        raise ValueError(f"{named}: {folder} is {how}; give a folder you can write (or make it writable)")


def refuse_mounts_within(path, flag, a_file=False):
    """ValueError for an output whose files are renamed into place, where one of them, or a folder inside it, is a
    mount point (a container's `-v notes.txt:/out/notes.txt`): the rename fails after the work ("Device or resource
    busy"). a_file: `path` is a file, or the prefix of files (a vocabulary's .model and .vocab)."""
    real = os.path.realpath(path)
    mounted = sorted(point for point in _mount_points() if point.startswith(real + os.sep) or (
        a_file and (point == real or point.startswith(real + "."))))
    if mounted:
        raise ValueError(f"{flag} {path}: {mounted[0]} is a mount point (a file or folder mounted there), and an "
                         "output is written beside its place and renamed into it, which a mount point refuses; "
                         "write the output elsewhere, then copy it there (cp)")


def keras_backend():
    """(the backend Keras runs on here, where that is said): KERAS_BACKEND, or else the "backend" of keras.json in
    KERAS_HOME (default ~/.keras), as Keras reads them; ("", "") where neither says (Keras's TensorFlow)."""
    import json

    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"], "KERAS_BACKEND"
    path = os.path.join(os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras"), "keras.json")
    try:
        with open(path, encoding="utf-8") as f:
            backend = json.load(f).get("backend")
    except (OSError, ValueError, AttributeError):
        return "", ""
    return (backend, path) if isinstance(backend, str) and backend else ("", "")
