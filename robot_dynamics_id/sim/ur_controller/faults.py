"""Fault injection of the stand-in UR controller: what tests (and the fault-control port) do to it.

Dropped connections, a stalled output stream, a protective stop, a stopped program, an
unreachable controller (ports closed for a while, like a reboot or a pulled cable), and the
dashboard's unlock of a protective stop, with the controller's own rules (PolyScope refuses
the unlock for 5 s). Callable from any thread; each fault is written to the event log.
"""

from __future__ import annotations

import math
import threading
import time

__all__ = ["FaultInjection"]


class FaultInjection:
    """The fault-injection methods of :class:`.StandInController` (a mixin: it works on the controller's state).

    Uses the controller's ``_lock``, ``_listeners``, ``plant``, ``unlock_delay_s``, ``log``/``reject``,
    the stop transitions ``_enter_protective_stop``/``_stop_program`` and the fault state the control
    loop reads: ``_stall_until``, ``_unreachable_until`` (+ ``_closed_ports``), ``_protective_stop_since``.
    """

    _lock: threading.RLock
    _listeners: dict
    _stall_until: float
    _unreachable_until: float
    _closed_ports: list[str]
    _protective_stop_since: float | None
    unlock_delay_s: float

    # ---- any thread -----------------------------------------------------------------
    def drop_connections(self, kind: str = "rtde") -> int:
        """Close client connections abruptly: ``rtde``, ``dashboard``, ``script`` or ``all``."""
        names = [n for n in self._listeners if kind == "all" or n.startswith(kind)]
        if not names:
            raise ValueError(f"drop_connections: unknown kind {kind!r}; use rtde, dashboard, script or all")
        count = sum(self._listeners[n].drop_clients() for n in names if n != "control")
        self.log("warn", f"fault injected: dropped {count} {kind} connection(s)")
        return count

    def stall_stream(self, seconds: float | None = None) -> None:
        """Stop sending RTDE data packages for ``seconds`` (None: until :meth:`resume_stream`).

        Connections stay open and inputs are still accepted: the client just sees no new data."""
        with self._lock:
            self._stall_until = math.inf if seconds is None else time.monotonic() + float(seconds)
        self.log("warn", f"fault injected: RTDE output stream stalled for "
                         f"{'ever' if seconds is None else f'{seconds:g} s'}")

    def resume_stream(self) -> None:
        with self._lock:
            self._stall_until = 0.0
        self.log("info", "RTDE output stream resumed")

    @property
    def stream_stalled(self) -> bool:
        return time.monotonic() < self._stall_until

    def trigger_protective_stop(self, reason: str = "injected") -> None:
        """Protective stop: the arm stops, the program stops, motion is refused until unlocked."""
        with self._lock:
            self._enter_protective_stop(f"protective stop ({reason})")

    def stop_program(self, reason: str = "injected") -> None:
        """Stop the running program (as the dashboard's ``stop``): the arm decelerates to rest."""
        with self._lock:
            self._stop_program(f"program stopped ({reason})")

    def set_unreachable(self, seconds: float) -> None:
        """Close every port (connections reset, new ones refused) for ``seconds``, like a controller
        reboot or a pulled cable; the arm stops as the program loses its client (watchdog) or not."""
        with self._lock:
            self._unreachable_until = time.monotonic() + float(seconds)
            closed = [name for name in self._listeners if name != "control"]
            for name in closed:
                self._listeners.pop(name).close()
            self._closed_ports = closed
        self.log("warn", f"fault injected: controller unreachable for {seconds:g} s (ports closed: "
                         f"{', '.join(closed)})")

    def unlock_protective_stop(self) -> str:
        """The dashboard's ``unlock protective stop``; returns its reply."""
        with self._lock:
            if self._protective_stop_since is None:
                return "Protective stop releasing"
            if time.monotonic() - self._protective_stop_since < self.unlock_delay_s:
                self.reject(f"unlock protective stop less than {self.unlock_delay_s:g} s after it occurred")
                return (f"Cannot unlock protective stop until {self.unlock_delay_s:g}s after occurrence. "
                        "Always inspect cause of protective stop before unlocking")
            self.plant.clear_protective_stop()
            self._protective_stop_since = None
            self.log("info", "protective stop unlocked")
            return "Protective stop releasing"
