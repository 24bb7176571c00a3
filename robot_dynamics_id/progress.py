"""Progress of long jobs: a callback the core calls, and the one place that draws it.

Core modules (identification, excitation planning, ...) take
``progress: ProgressCallback | None`` and call ``progress(fraction, stage)``:
``fraction`` in [0, 1] of the whole job, ``stage`` a short stable name of what
runs now ("regressor", "start 2/4"). They never import a renderer (issue 19: a
progress callback instead of a bar inside the algorithm).

Commands draw it with :class:`ProgressReporter`:

* on a terminal (the stream is a TTY): one live bar per stage, redrawn in place
  with ``\\r`` at most every ``min_interval_s``; when the stage changes the
  finished line stays and a new one starts;
* anywhere else (a pipe, a log file, a launch log): plain lines only — one when
  a stage starts and at most one every ``log_interval_s`` while it runs. Never
  a ``\\r``, so a log file reads as one line per event.

:func:`scaled` maps a sub-job's own 0..1 onto a slice of the whole job; :func:`stage_logger`
gives a logger (a node's) one line per stage.
"""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Callable, TextIO

__all__ = ["ProgressCallback", "ProgressReporter", "scaled", "stage_logger", "stream_is_terminal"]

#: ``progress(fraction, stage)``: fraction of the whole job done (0..1) and the stage running now.
ProgressCallback = Callable[[float, str], None]


def scaled(progress: ProgressCallback | None, start: float, end: float,
           stage: str | None = None) -> ProgressCallback | None:
    """``progress`` seen by a sub-job that covers ``start``..``end`` of the whole job (None stays None).

    With ``stage``, the sub-job's own stage names are replaced by it (a loop that reports
    per-chunk progress under one stage name)."""
    if progress is None:
        return None

    def report(fraction: float, sub_stage: str = "") -> None:
        f = min(max(float(fraction), 0.0), 1.0)
        progress(start + (end - start) * f, stage if stage is not None else sub_stage)
    return report


def stage_logger(log: Callable[[str], None], label: str, *, silenced_by=None) -> ProgressCallback:
    """A callback that logs one line when the stage changes and nothing else (a node's logger, a log file).

    ``silenced_by``: an event (``threading.Event``) after which nothing is logged: a job being cancelled finishes
    its current stage before it checks, and its next stage's line would read as if it went on."""
    last: list[str | None] = [None]

    def report(fraction: float, stage: str = "") -> None:
        if silenced_by is not None and silenced_by.is_set():
            return
        if stage != last[0]:
            last[0] = stage
            log(f"{label}: {stage} ({100 * min(max(float(fraction), 0.0), 1.0):.0f} %)")
    return report


def stream_is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an interactive terminal (not a pipe or a file) and TERM is not 'dumb'."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
    return bool(tty) and os.environ.get("TERM", "") != "dumb"


class ProgressReporter:
    """Draws ``progress(fraction, stage)`` calls on a stream: a bar on a terminal, lines elsewhere.

    Use as a context manager (or call :meth:`close`): closing ends a live bar with a newline.
    :meth:`note` writes one line of text (the bar, if any, is cleared first and redrawn on the
    next update). ``terminal`` forces the mode (None: ask the stream); ``clock`` is injectable
    for tests.
    """

    def __init__(self, label: str, stream: TextIO | None = None, *, terminal: bool | None = None,
                 width: int = 28, min_interval_s: float = 0.1, log_interval_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = stream_is_terminal(self.stream) if terminal is None else bool(terminal)
        self.width = width
        self.min_interval_s = min_interval_s
        self.log_interval_s = log_interval_s
        self._clock = clock
        self._start = clock()
        self._stage: str | None = None
        self._last_draw = -math.inf
        self._fraction = 0.0
        self._live = False  # a bar line is on the terminal without its newline
        self._closed = False

    # -- the callback ------------------------------------------------------------------------------------
    def __call__(self, fraction: float, stage: str = "") -> None:
        if self._closed:
            return
        f = float(fraction)
        self._fraction = min(max(f, 0.0), 1.0) if math.isfinite(f) else self._fraction
        now = self._clock()
        if stage != self._stage:
            if self._live:
                self._end_line()
            self._stage = stage
            self._draw(now)
            return
        interval = self.min_interval_s if self.terminal else self.log_interval_s
        if now - self._last_draw >= interval:
            self._draw(now)

    def note(self, text: str) -> None:
        """One line of text, prefixed with the elapsed time (a stage message, a result)."""
        if self._live:
            self._clear_line()
        self._write(f"[{self._clock() - self._start:6.1f} s] {text}\n")

    def close(self) -> None:
        """End the output: a live bar is completed and ends its line; in a log, a final 'done' line."""
        if self._closed:
            return
        now = self._clock()
        if self._stage is not None:
            if self.terminal:
                self._fraction = 1.0  # closed without an error: the job is done
                self._draw(now)
                self._end_line()
            else:
                self._write(f"{self.label}: done in {now - self._start:.1f} s\n")
        self._closed = True

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:  # an error or an interrupt: never "done"
            if self._live:
                self._end_line()  # an error message must start on its own line
            elif self._stage is not None and not self._closed:
                self._write(f"{self.label}: stopped after {self._clock() - self._start:.1f} s\n")
            self._closed = True
            return
        self.close()

    # -- drawing ------------------------------------------------------------------------------------------
    def _draw(self, now: float) -> None:
        self._last_draw = now
        elapsed = now - self._start
        stage = f" {self._stage}" if self._stage else ""
        if self.terminal:
            filled = int(round(self.width * self._fraction))
            line = (f"{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {100 * self._fraction:5.1f}% "
                    f"{elapsed:6.1f} s{stage}")
            self._write(f"\r{line}\x1b[K")  # erase what a longer previous line left
            self._live = True
        else:
            self._write(f"{self.label}:{stage} {100 * self._fraction:.0f} % ({elapsed:.1f} s)\n")

    def _end_line(self) -> None:
        self._write("\n")
        self._live = False

    def _clear_line(self) -> None:
        self._write("\r\x1b[K")
        self._live = False
        self._last_draw = -math.inf  # the next update redraws the bar under the note

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed pipe must not fail the job it reports on
            pass
