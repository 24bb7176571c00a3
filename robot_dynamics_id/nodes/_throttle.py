"""Repeated fault messages: one line per kind per interval, the next one says how many were held back.

A publisher stuck on NaN sends 500 bad commands a second; logging each (as rclpy's call-site throttle
does not count what it drops) floods the log and hides the first line that matters. :class:`RepeatThrottle`
lets the first message of a kind through, holds back the repeats for ``interval_s``, and the next message
let through carries "(N more since HH:MM:SS.mmm)", the wall time of the line before it. What is still
held back when the burst ends comes out through :meth:`RepeatThrottle.pending` (called from a timer).
No ROS here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

__all__ = ["RepeatThrottle"]


@dataclass
class _Kind:
    last_s: float  # clock time of the line last let through
    last_wall_s: float  # its wall time, for the "since" of the next line
    held: int = 0  # messages held back since
    latest: str = ""  # the newest held-back message


class RepeatThrottle:
    """At most one line per kind of message per ``interval_s``, with a count of the ones held back.

    Args:
        interval_s: the shortest time between two lines of one kind.
        clock: monotonic clock (s); wall: wall clock (s since the epoch), for the "since" text.
    """

    def __init__(self, interval_s: float = 1.0, *, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], float] = time.time) -> None:
        self.interval_s = float(interval_s)
        self._clock = clock
        self._wall = wall
        self._kinds: dict[str, _Kind] = {}

    @staticmethod
    def _since(wall_s: float) -> str:
        return datetime.fromtimestamp(wall_s).strftime("%H:%M:%S.%f")[:-3]

    def admit(self, kind: str, message: str) -> str | None:
        """The line to log for ``message`` (with the count held back since the last one), or None to hold it."""
        now = self._clock()
        entry = self._kinds.get(kind)
        if entry is not None and now - entry.last_s < self.interval_s:
            entry.held += 1
            entry.latest = message
            return None
        line = message
        if entry is not None and entry.held:
            line = f"{message} ({entry.held} more since {self._since(entry.last_wall_s)})"
        self._kinds[kind] = _Kind(last_s=now, last_wall_s=self._wall())
        return line

    def pending(self) -> list[str]:
        """Lines for the kinds whose repeats stopped with some still held back (the newest message and the
        count); each is reported once."""
        now = self._clock()
        lines = []
        for entry in self._kinds.values():
            if entry.held and now - entry.last_s >= self.interval_s:
                lines.append(f"{entry.latest} ({entry.held} more since {self._since(entry.last_wall_s)}; "
                             "the last of them)")
                entry.held, entry.last_s, entry.last_wall_s = 0, now, self._wall()
        return lines
