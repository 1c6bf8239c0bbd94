"""Argument checks shared by every layer and model constructor.

Each check raises `ValueError` naming the argument, the value it got and what
was expected, e.g. `ValueError("max_iterations must be an integer >= 1, got 0")`.
"""


def positive_int(name, value):
    """Checks `value` is an int >= 1 (bools are rejected) and returns it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return value


def probability(name, value, *, inclusive_low=True, inclusive_high=False):
    """Checks `value` is a number in [0, 1) (bounds configurable) and returns it."""
    low_ok = value >= 0.0 if inclusive_low else value > 0.0
    high_ok = value <= 1.0 if inclusive_high else value < 1.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (low_ok and high_ok):
        interval = f"{'[' if inclusive_low else '('}0, 1{']' if inclusive_high else ')'}"
        raise ValueError(f"{name} must be a number in {interval}, got {value!r}")
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
FLAG_RULES = {
    "int>=1": ("an integer >= 1", lambda v: v >= 1),
    "int>=0": ("an integer >= 0", lambda v: v >= 0),
    ">0": ("a finite number > 0", lambda v: v > 0 and v - v == 0),
    ">=0": ("a finite number >= 0", lambda v: v >= 0 and v - v == 0),
    "finite": ("a finite number", lambda v: v - v == 0),
    "(0,1)": ("a number in (0, 1)", lambda v: 0 < v < 1),
    "[0,1)": ("a number in [0, 1)", lambda v: 0 <= v < 1),
    "[0,1]": ("a number in [0, 1]", lambda v: 0 <= v <= 1),
}


def flags(args, rules):
    """Checks parsed command-line flags before any work is done; a flag left at None (a default
    resolved later) passes. rules: {dest: a FLAG_RULES key}. Raises ValueError naming the flag
    and the value, e.g. "--batch_size must be an integer >= 1, got 0"."""
    for name, rule in rules.items():
        value = getattr(args, name)
        words, test = FLAG_RULES[rule]
        if value is not None and not test(value):
            raise ValueError(f"--{name} must be {words}, got {value}")
