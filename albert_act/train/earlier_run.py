"""A finished fine-tuning that `finetune --overwrite` replaces is set aside, not removed, until the new one has
finished (`EarlierRun`): a stop, a failure or a kill before then leaves the earlier result whole, not half of
the new one."""

import os

from albert_act.base import artifacts, text_files

EARLIER = artifacts.EARLIER_RUN  # a finished fine-tuning that --overwrite replaces, set aside until the new one ends
EARLIER_FILES = (artifacts.WEIGHTS, artifacts.EXPORT, artifacts.GRID, artifacts.FINETUNE_CONFIG,
                 artifacts.FINETUNED_INFO, artifacts.VOCAB, artifacts.RESULTS)  # put back results last: the folder
# says finished only whole; a grid's points (grid/) go with it, and a new grid's points are this run's part
MANIFEST = "earlier.json"  # in EARLIER: the names the earlier one held, written before any is moved


class EarlierRun:
    """`with EarlierRun(output_dir):` around a fine-tuning or grid that replaces a finished one (--overwrite): the
    earlier one's files are set aside in `EARLIER` (results first: the folder stops saying finished), dropped when
    the new one has finished, or put back when it stops or fails first (`restored`). Each step may be cut off and
    done again (a second Ctrl-C, SIGKILL): `MANIFEST` names the earlier one's files, and one left aside is put back
    (or dropped, where a newer one finished or none was moved yet) at the next start."""

    def __init__(self, output_dir):
        self.output_dir, self.aside, self.restored = output_dir, os.path.join(output_dir, EARLIER), False

    def recover(self):
        """One left aside by a process that ended at once (SIGKILL, a stop inside a long native call): put back,
        before the dir is judged (without --overwrite: refused), unless results are in place. Returns whether one was."""
        if text_files.isdir(self.aside + ".drop"):  # one dropped part way
            text_files.rmtree(self.aside + ".drop")
        left = text_files.isdir(self.aside)
        if left:  # a newer one finished (its results and the earlier ones'), or the earlier one goes back
            finished = all(text_files.exists(os.path.join(d, artifacts.RESULTS)) for d in (self.output_dir, self.aside))
            self._drop() if finished else self._put_back()
            self.restored = False
        return left

    def put_back(self):
        """At a stop: the earlier one back in place, if it is aside (also where the process then ends at once)."""
        if text_files.isdir(self.aside):
            self._put_back()

    def __enter__(self):
        self.recover()
        if text_files.exists(os.path.join(self.output_dir, artifacts.RESULTS)):
            names = [name for name in EARLIER_FILES if text_files.exists(os.path.join(self.output_dir, name))]
            text_files.makedirs(self.aside)
            artifacts.write_json(os.path.join(self.aside, MANIFEST), {"names": names})
            try:
                for name in reversed(names):  # results first
                    text_files.rename(os.path.join(self.output_dir, name), os.path.join(self.aside, name))
            except OSError:  # one that will not move (a read-only folder: its ".." is rewritten): all back, whole
                self._put_back()
                raise
        return self

    def __exit__(self, kind, error, trace):
        if kind is not None:
            self.put_back()
        elif text_files.isdir(self.aside):
            self._drop()
        return False

    def _drop(self):
        text_files.rename(self.aside, self.aside + ".drop")  # at once: a stop during the removal leaves no half
        text_files.rmtree(self.aside + ".drop")

    def _put_back(self):
        if not text_files.exists(os.path.join(self.aside, artifacts.RESULTS)):  # never left (or came back, last): no
            for name in EARLIER_FILES:  # run began; what is aside goes back where the folder lacks it
                if text_files.exists(os.path.join(self.aside, name)) and not text_files.exists(
                        os.path.join(self.output_dir, name)):
                    text_files.rename(os.path.join(self.aside, name), os.path.join(self.output_dir, name))
            self.restored = True
            return self._drop()
        try:
            names, listed = artifacts.read_json(os.path.join(self.aside, MANIFEST))["names"], True
        except (ValueError, OSError, KeyError):  # none (an older version's): what is aside, and nothing else removed
            names, listed = [name for name in EARLIER_FILES if text_files.exists(os.path.join(self.aside, name))], False
        if not names:
            return self._drop()
        for name in EARLIER_FILES:  # results last; a name no longer aside is back already (a put-back cut off)
            part, earlier = os.path.join(self.output_dir, name), os.path.join(self.aside, name)
            if (name in names or not listed) and not text_files.exists(earlier):
                continue
            text_files.remove_any(part)  # this run's part: its settings, weights, export, grid points
            if name in names:
                text_files.rename(earlier, part)
        self._drop()
        self.restored = True
