"""Watching a trajectory that a robot controller executes: progress, divergence, a controller that does not move.

The excitation node sends a whole trajectory to a trajectory controller (this
package's ur_interface, or the UR driver's scaled_joint_trajectory_controller)
and watches the joint states. The controller may run trajectory time slower
than the clock (speed scaling, the pendant's slider), so progress is not the
time since sending: :class:`TrajectoryMonitor` estimates the path time τ̂ as the
sample of the plan nearest to the measured position, searched forward from the
previous estimate within what the robot's clock allows::

    τ̂_k = argmin_{τ ∈ [τ̂_{k-1}, τ̂_{k-1} + (t_k − t_{k-1}) + margin]} ‖q_plan(τ) − q_k‖_∞

and the deviation from the path is that minimum. Time t is the robot's (the
joint states' stamps). Pure numpy; no ROS.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MonitorOutput", "SilenceWatch", "TrajectoryMonitor", "verdict_from_status"]

#: a joint that moved less than this has not moved (rad): above encoder noise, below any real motion
_MOVED_RAD = 2e-3


@dataclass(frozen=True)
class MonitorOutput:
    """One joint-state sample's verdict."""

    phase: str  # "waiting" (not moving yet) | "running" | "done" | "diverged" | "stalled"
    path_time_s: float
    fraction: float
    deviation_rad: float  # distance from the planned path, max over joints
    reason: str = ""


class TrajectoryMonitor:
    """Progress and failure of a trajectory executed by a controller (see the module docstring).

    Args:
        time_s: (N,) plan sample times from 0 (s).
        position_rad: (N, n) planned positions (rad).
        path_tolerance_rad: the arm farther than this from the path on any joint: diverged.
        goal_tolerance_rad: at the end of the path and within this of the last point on every joint: done.
        start_timeout_s: robot time after the first sample within which the arm must have moved, if the plan
            has moved by more than ``path_tolerance_rad / 4`` by then; else stalled.
        stalled_hint: appended to the stalled message (e.g. how to activate the controller).
    """

    def __init__(self, time_s, position_rad, *, path_tolerance_rad: float = 0.25, goal_tolerance_rad: float = 0.05,
                 start_timeout_s: float = 3.0, stalled_hint: str = "") -> None:
        self.time_s = np.asarray(time_s, float)
        self.position_rad = np.asarray(position_rad, float)
        self.path_tolerance_rad = float(path_tolerance_rad)
        self.goal_tolerance_rad = float(goal_tolerance_rad)
        self.start_timeout_s = float(start_timeout_s)
        self.stalled_hint = stalled_hint
        self.duration_s = float(self.time_s[-1])
        self._index = 0
        self._t_first: float | None = None
        self._t_last: float | None = None
        self._q_first: np.ndarray | None = None
        self._moved = False
        self._margin_s = 0.05 + 2 * (self.duration_s / max(1, self.time_s.size - 1))

    def update(self, t_s: float, q_rad) -> MonitorOutput:
        """Verdict for the joint-state sample ``q_rad`` at robot time ``t_s``."""
        q = np.asarray(q_rad, float)
        if self._t_first is None:
            self._t_first, self._t_last, self._q_first = t_s, t_s, q.copy()
        dt = max(0.0, t_s - self._t_last)
        self._t_last = t_s
        end_time = self.time_s[self._index] + dt + self._margin_s
        stop = int(np.searchsorted(self.time_s, end_time, side="right"))
        window = self.position_rad[self._index:max(stop, self._index + 1)]
        distance = np.max(np.abs(window - q), axis=1)
        best = int(np.argmin(distance))
        self._index += best
        deviation = float(distance[best])
        tau = float(self.time_s[self._index])
        fraction = tau / self.duration_s if self.duration_s > 0 else 1.0
        if not self._moved:
            self._moved = bool(np.max(np.abs(q - self._q_first)) > _MOVED_RAD)
        if deviation > self.path_tolerance_rad:
            return MonitorOutput("diverged", tau, fraction, deviation,
                                 f"the arm is {deviation:.3f} rad from the planned path (tolerance "
                                 f"{self.path_tolerance_rad} rad): it does not follow the trajectory")
        if not self._moved:
            waited = t_s - self._t_first
            planned = np.max(np.abs(self._planned_at(waited) - self._q_first))
            if waited > self.start_timeout_s and planned > self.path_tolerance_rad / 4:
                return MonitorOutput("stalled", tau, fraction, deviation,
                                     f"the arm has not moved {waited:.1f} s (robot time) after the trajectory was "
                                     f"sent, though the plan has moved {planned:.3f} rad by then" + self.stalled_hint)
            return MonitorOutput("waiting", tau, fraction, deviation)
        if self._index == self.time_s.size - 1 and deviation <= self.goal_tolerance_rad:
            return MonitorOutput("done", tau, 1.0, deviation)
        return MonitorOutput("running", tau, fraction, deviation)

    def _planned_at(self, t_s: float) -> np.ndarray:
        k = min(int(np.searchsorted(self.time_s, t_s)), self.time_s.size - 1)
        return self.position_rad[k]


def verdict_from_status(status: dict) -> MonitorOutput | None:
    """The verdict a trajectory controller that reports its own progress gives (ur_interface's
    ``~/trajectory_status``: phase, trajectory time τ, duration, position error): None while it has not
    started the goal. Aborts are not verdicts here: the controller reports them with their reason."""
    phase = {"running": "running", "stopping": "running", "settling": "running", "succeeded": "done"}.get(
        status.get("phase", ""))
    if phase is None:
        return None
    duration = float(status.get("duration_s", 0.0))
    tau = float(status.get("time_s", 0.0))
    fraction = 1.0 if phase == "done" else (min(1.0, tau / duration) if duration > 0 else 1.0)
    return MonitorOutput(phase, tau, fraction, float(status.get("position_error_rad", 0.0)))


class SilenceWatch:
    """Whether a stream of messages has stopped, judged only over time the watching process itself ran.

    A process starved by a loaded machine finds, when it runs again, its last message old: the messages
    may be queued in its own executor, not missing. So after a stall of the caller longer than ``stall_s``
    (the gap between two calls of :meth:`silent`) the wait restarts; the stream is silent only once
    ``timeout_s`` passes while the caller runs without another message. (The robot stops the arm on its
    own command watchdog meanwhile.) Times in seconds on one monotonic clock.
    """

    def __init__(self, timeout_s: float, stall_s: float) -> None:
        if not 0.0 < stall_s < timeout_s:
            raise ValueError(f"need 0 < stall_s < timeout_s, got stall_s={stall_s}, timeout_s={timeout_s}")
        self.timeout_s, self.stall_s = float(timeout_s), float(stall_s)
        self._last_call_s: float | None = None
        self._resumed_s = -np.inf

    def silent(self, now_s: float, last_message_s: float) -> bool:
        if self._last_call_s is not None and now_s - self._last_call_s > self.stall_s:
            self._resumed_s = now_s
        self._last_call_s = now_s
        return now_s - max(last_message_s, self._resumed_s) > self.timeout_s
