"""The progress bar of ``fit`` and its log formatting (Keras 3's ``keras.src.utils.progbar``)."""

import sys
import time

from tqdm import tqdm

from .io_utils import is_interactive_logging_enabled, print_msg

clock = time.perf_counter
BAR_WIDTH = 20


def format_logs(logs):
    """``"loss: 0.1234 - acc: 0.9000"``: Keras's 4 decimals, scientific below 1e-3."""
    return " - ".join(f"{name}: {_format_value(value)}" for name, value in (logs or {}).items())


def _format_value(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{number:.4f}" if abs(number) > 1e-3 else f"{number:.4e}"


def _format_step_time(seconds):
    """Keras's time per step: whole seconds, milliseconds or microseconds."""
    if seconds >= 1 or seconds == 0:
        return f"{seconds:.0f}s/step"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.0f}ms/step"
    return f"{seconds * 1e6:.0f}us/step"


def _format_eta(seconds):
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    if seconds >= 60:
        return f"{seconds // 60}:{seconds % 60:02d}"
    return f"{seconds}s"


def _format_rate(samples_per_second):
    if samples_per_second >= 10:
        return f"{samples_per_second:.0f} samples/s"
    return f"{samples_per_second:.2f} samples/s"


def _is_interactive(file):
    isatty = getattr(file, "isatty", None)
    return bool(isatty and isatty()) or "ipykernel" in sys.modules


def _bar_chars(file):
    """tqdm's bar characters: Keras's heavy line where the stream can encode it."""
    try:
        "━".encode(getattr(file, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return " ="
    return " ━"


class _InfoBar(tqdm):
    """A tqdm bar whose ``bar_format`` may use ``{info}``: text ferrotape composes itself."""

    info = ""

    @property
    def format_dict(self):
        fields = super().format_dict
        fields["info"] = self.info
        return fields


class ProgressBar:
    """The progress of one epoch (or evaluation) in Keras's style, drawn with tqdm.

    ``update(steps_done, logs, samples_seen)`` takes the cumulative number of steps, a dict of
    numbers shown as ``loss: 0.1234 - acc: 0.9000`` and, optionally, the cumulative number of
    samples, shown as a throughput. ``close(logs)`` writes the epoch's final line with its time::

        Epoch 1/5: 469/469 ━━━━━━━━━━━━━━━━━━━━ 3s 6ms/step - loss: 0.4312 - 21250 samples/s

    ``verbose=1`` draws a live bar on an interactive stream (on a file or pipe only the final
    line, so logs stay readable); ``verbose=2`` writes only a final line without the bar
    (``469/469 - 3s - 6ms/step - ...``), as Keras; ``verbose=0`` writes nothing. ``total=None``
    means the number of steps is unknown. Output goes to ``file`` (default: standard error).

    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressBar(4, description="Epoch 1/1", verbose=2, file=out)
    >>> bar.update(4, {"loss": 0.25}, samples_seen=128)
    >>> bar.close()
    >>> out.getvalue().startswith("Epoch 1/1: 4/4 - 0s - ")
    True
    """

    def __init__(self, total, description="", verbose=1, file=None):
        if verbose == "auto":
            verbose = 1
        if verbose not in (0, 1, 2):
            raise ValueError(
                f"ProgressBar: verbose must be 0, 1, 2 or 'auto', received {verbose!r}"
            )
        if total is not None and (not isinstance(total, int) or total < 0):
            raise ValueError(
                f"ProgressBar: total must be a non-negative int or None, received {total!r}"
            )
        self.total = total
        self.description = description
        self.verbose = verbose
        self.file = file if file is not None else sys.stderr
        self.steps_done = 0
        self.samples_seen = None
        self.logs = {}
        self._start = clock()
        self._closed = False
        self._bar = None
        self._chars = _bar_chars(self.file)
        if verbose == 1 and _is_interactive(self.file) and is_interactive_logging_enabled():
            self._bar = _InfoBar(
                total=total,
                file=self.file,
                bar_format=self._bar_format(),
                ascii=self._chars,
                desc=self._prefix(),
                leave=True,
                mininterval=0.1,
                dynamic_ncols=False,
            )

    def update(self, steps_done, logs=None, samples_seen=None):
        """Records progress: ``steps_done`` and ``samples_seen`` are counts since the start."""
        self.steps_done = steps_done
        if logs is not None:
            self.logs = dict(logs)
        if samples_seen is not None:
            self.samples_seen = samples_seen
        if self._bar is not None:
            self._bar.info = self._info(final=False)
            self._bar.update(steps_done - self._bar.n)

    def close(self, logs=None):
        """Writes the final line (with ``logs`` if given, else the last update's)."""
        if self._closed:
            return
        self._closed = True
        if logs is not None:
            self.logs = dict(logs)
        if self.total is None:
            self.total = self.steps_done
        if self._bar is not None:
            self._bar.info = self._info(final=True)
            self._bar.n = self.total
            self._bar.total = self.total
            self._bar.bar_format = self._bar_format()  # an unknown total is known now
            self._bar.refresh()
            self._bar.close()
        elif self.verbose:
            print_msg(self.final_line(), file=self.file)

    def stop(self):
        """Ends the bar where it stands, for an epoch stopped part of the way through (Ctrl-C):
        the line keeps its last step count, where ``close`` would fill it to the total."""
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.info = self._info(final=True)
            self._bar.refresh()
            self._bar.close()
        elif self.verbose:
            parts = [f"{self.steps_done}/{self.total or 'Unknown'} (stopped)", *self._details()]
            print_msg(self._prefix() + " - ".join(parts), file=self.file)

    def final_line(self):
        """The epoch's closing line as ``close`` writes it for this verbosity."""
        elapsed = clock() - self._start
        if self.verbose == 2:
            parts = [f"{self.steps_done}/{self.total}", f"{elapsed:.0f}s", *self._details()]
            return self._prefix() + " - ".join(parts)
        return tqdm.format_meter(
            self.total,
            self.total,
            elapsed,
            bar_format=self._bar_format(),
            ascii=self._chars,
            prefix=self._prefix(),
            info=self._info(final=True),
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _prefix(self):
        return f"{self.description}: " if self.description else ""

    def _bar_format(self):
        if self.total is None:
            return "{desc}{n_fmt}/Unknown {info}"
        return "{desc}{n_fmt}/{total_fmt} {bar:" + str(BAR_WIDTH) + "} {info}"

    def _details(self):
        """The time per step, the logs and the throughput, as separate fields."""
        elapsed = clock() - self._start
        details = []
        if self.steps_done:
            details.append(_format_step_time(elapsed / self.steps_done))
        if self.logs:
            details.append(format_logs(self.logs))
        if self.samples_seen and elapsed > 0:
            details.append(_format_rate(self.samples_seen / elapsed))
        return details

    def _info(self, final):
        elapsed = clock() - self._start
        if final:
            head = f"{elapsed:.0f}s"
        elif self.total and self.steps_done:
            remaining = elapsed / self.steps_done * (self.total - self.steps_done)
            head = f"ETA {_format_eta(remaining)}"
        else:
            head = f"{elapsed:.0f}s"
        details = self._details()
        if details and details[0].endswith("/step"):
            head = f"{head} {details.pop(0)}"
        return " - ".join([head, *details])


class Progbar:
    """Keras's ``Progbar``: a progress bar driven by explicit ``update``/``add`` calls, which
    averages the values it is given over the steps (except ``stateful_metrics``, shown as
    given). Drawn by ``ProgressBar``.

    Args:
        target: the total number of steps, or None if unknown.
        width: the bar's width in characters (ferrotape draws 20).
        verbose: 0 (silent), 1 (a live bar) or 2 (the final line only).
        interval: the minimum seconds between redraws (ferrotape redraws at most 10 times a
            second).
        stateful_metrics: names of values shown as given rather than averaged.
        unit_name: the name of a step.

    >>> import io
    >>> out = io.StringIO()
    >>> bar = Progbar(2, verbose=2)
    >>> bar._bar.file = out
    >>> bar.update(1, [("loss", 1.0)])
    >>> bar.update(2, [("loss", 0.5)])
    >>> "loss: 0.7500" in out.getvalue()
    True
    """

    def __init__(
        self,
        target,
        width=20,
        verbose=1,
        interval=0.05,
        stateful_metrics=None,
        unit_name="step",
    ):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stateful_metrics = set(stateful_metrics or ())
        self._values = {}
        self._seen_so_far = 0
        self._bar = ProgressBar(target, verbose=verbose)

    def update(self, current, values=None, finalize=None):
        """Moves to step ``current``, adding ``values`` (``[(name, value), ...]``): each
        non-stateful value is weighted by the steps since the last update."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            if name in self.stateful_metrics:
                self._values[name] = [float(value), 1]
            else:
                steps = max(current - self._seen_so_far, 1)
                total, count = self._values.get(name, [0.0, 0])
                self._values[name] = [total + float(value) * steps, count + steps]
        self._seen_so_far = current
        logs = {name: total / count for name, (total, count) in self._values.items()}
        self._bar.update(current, logs)
        if finalize:
            self._bar.close(logs)

    def add(self, n, values=None):
        """Advances by ``n`` steps (see ``update``)."""
        self.update(self._seen_so_far + n, values)
