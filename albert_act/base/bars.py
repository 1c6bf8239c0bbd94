"""Progress of a long loop: Keras' bar on a terminal, plain lines in a log file."""

import sys


class LogLines:
    """Progress for a log file: a plain line every `every` steps and at the end, no escapes."""

    def __init__(self, total, every):
        self.total, self.every = total, max(1, every)

    def update(self, step, values=()):
        if step % self.every == 0 or step == self.total:
            shown = " - ".join(f"{name}: {value:.4g}" for name, value in values)
            print(f"{step}/{self.total}" + (f" - {shown}" if shown else ""), flush=True)


def progress_bar(total, stateful_metrics=()):
    """Keras' progress bar on a terminal; in a log file (stdout not a terminal), `LogLines` about
    every tenth of the way, since the bar's redrawing writes escapes into files."""
    if sys.stdout is not None and sys.stdout.isatty():  # None: descriptor 1 closed (`>&-`)
        import keras

        return keras.utils.Progbar(total, stateful_metrics=list(stateful_metrics))
    return LogLines(total, -(-total // 10))
