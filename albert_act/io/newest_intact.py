"""The one answer to "which checkpoint of this run do we read?": the newest that reads whole.

Every reader of a run's checkpoints asks it: `Source` for the weights of a TensorFlow or JAX run
(`run_checkpoints.newest_weights`), pre-training's resume (`run_checkpoints.restore_latest_intact`)
and the JAX run's resume (`train/jax_pretraining.py`). No TensorFlow here: the JAX backend imports it.
"""

import zipfile

import numpy as np

from albert_act.base.artifacts import first_line  # noqa: F401 (its readers' one line for an error)

# What NumPy raises on a damaged .npz: a cut one is a zip without its directory (BadZipFile).
NPZ_READ_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


class Unusable(Exception):
    """A checkpoint that may be whole but cannot serve (its message says why): the one before it is tried."""


class Refused(ValueError):
    """No checkpoint of the run can serve from here (its message says why): the search stops."""


def newest_intact(found, read, directory, errors, owner=None, say=print, read_as="read"):
    """(update, path, read(update, path)) for the newest of `found` ({update: path}) that reads whole;
    None when `found` is empty.

    A checkpoint whose `read` raises one of `errors` (a corrupt .index, a truncated .data or .npz
    file) or `Unusable` is named in a warning (`say`) and the one before it is read; the one then
    read is named too ("<read_as> <path>, the newest intact checkpoint"). A ValueError names every failure when none reads ("<owner>: no intact
    checkpoint in <directory>: ..."); `Refused` from `read` ends the search at once.
    """
    failures = []
    for update in sorted(found, reverse=True):
        path = found[update]
        try:
            value = read(update, path)
        except Refused:
            raise
        except Unusable as why:
            failures.append(f"{path}: {why}")
        except errors as error:
            failures.append(f"{path}: unreadable ({first_line(error)})")
        else:
            if failures:
                say(f"{read_as} {path}, the newest intact checkpoint{f' of {owner}' if owner else ''}")
            return update, path, value
        say(f"warning: {failures[-1]}; reading the checkpoint before it")
    if failures:
        raise ValueError(f"{f'{owner}: ' if owner else ''}no intact checkpoint in {directory}: " + "; ".join(failures)
                         + ". None reads whole: move them away (pre-training then starts the run anew), or use "
                           "another run")
    return None


def finite(name, value):
    """`value` (an array of a checkpoint), or a ValueError naming it when it holds non-finite values: a
    damaged checkpoint (a run stops at a non-finite loss without saving), which its readers pass over."""
    array = np.asarray(value)
    if np.issubdtype(array.dtype, np.floating) and not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite values")
    return value
