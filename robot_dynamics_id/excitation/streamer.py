"""Streaming a joint trajectory as velocity commands: smooth ramp-in/out, cancel, position feedback.

The robot takes velocity commands (speedJ). :class:`TrajectoryStreamer` plays a
:class:`~robot_dynamics_id.excitation.trajectory.JointTrajectory` through a
time warp tau(t) whose rate ramps smoothly 0 -> 1 at the start and 1 -> 0 at
the end or on cancel, so the command is ``qd_ref(tau) * dtau/dt`` — smooth at
both ends and always ON the planned path (never off it, as scaling velocities
would be). A proportional correction on the position error keeps the arm on the
plan despite servo lag: ``qd_cmd = qd_ref dtau/dt + k_p (q_ref(tau) - q)``.

Pure numpy; the excitation node calls :meth:`command` once per robot cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .trajectory import JointTrajectory

__all__ = ["StartPoseError", "StreamerOutput", "TrajectoryStreamer"]


class StartPoseError(ValueError):
    """The arm is too far from the trajectory's start pose to begin streaming."""


def _smoothstep(u: float) -> float:
    """C2 ramp 0 -> 1 on [0, 1] (quintic)."""
    u = min(max(u, 0.0), 1.0)
    return u * u * u * (10 - 15 * u + 6 * u * u)


def _smoothstep_integral(u: float) -> float:
    """The integral of :func:`_smoothstep` from 0 to ``u`` (u^4 (5/2 - 3u + u^2) on [0, 1]; 1/2 at 1; linear after)."""
    if u <= 0.0:
        return 0.0
    if u >= 1.0:
        return 0.5 + (u - 1.0)
    return u ** 4 * (2.5 - 3.0 * u + u * u)


@dataclass(frozen=True)
class StreamerOutput:
    """One cycle's command and progress."""

    velocity_rad_s: np.ndarray
    trajectory_time_s: float
    fraction: float
    phase: str  # "ramp_in" | "running" | "ramp_out" | "done" | "aborted"
    position_error_rad: float


class TrajectoryStreamer:
    """Plays a trajectory as joint-velocity commands (see the module docstring).

    Args:
        trajectory: what to play.
        ramp_s: duration of the speed ramps at start, end and on cancel.
        position_gain_per_s: proportional gain on the position error (1/s).
        start_tolerance_rad: largest allowed distance from the start pose, per joint.
        max_position_error_rad: abort (command rest, phase "aborted") when the arm is farther than
            this from the plan on any joint: it is not following (blocked, limited, or too slow).
    """

    def __init__(self, *, trajectory: JointTrajectory, ramp_s: float = 1.0, position_gain_per_s: float = 2.0,
                 start_tolerance_rad: float = 0.05, max_position_error_rad: float = 0.25) -> None:
        if ramp_s < 0 or position_gain_per_s < 0 or start_tolerance_rad <= 0:
            raise ValueError("ramp_s and position_gain_per_s must be >= 0, start_tolerance_rad > 0")
        self.trajectory = trajectory
        self.ramp_s = float(ramp_s)
        self.position_gain_per_s = float(position_gain_per_s)
        self.start_tolerance_rad = float(start_tolerance_rad)
        self.max_position_error_rad = float(max_position_error_rad)
        self.aborted: str | None = None
        self._t_start: float | None = None
        self._tau = 0.0
        self._rate = 0.0
        self._last_t: float | None = None
        self._stopping_from: tuple[float, float] | None = None  # (time, rate) when the ramp-out began
        self.done = False

    def check_start(self, q_rad: np.ndarray) -> None:
        """Raise :class:`StartPoseError` naming the worst joint if the arm is not at the start pose."""
        error = np.abs(np.asarray(q_rad, float) - self.trajectory.start_position_rad)
        j = int(np.argmax(error))
        if error[j] > self.start_tolerance_rad:
            raise StartPoseError(
                f"the arm is {error[j]:.3f} rad from the excitation's start pose on joint {j} "
                f"(tolerance {self.start_tolerance_rad} rad); move it there first, or set "
                "move_to_start: true to approach it slowly")

    def cancel(self, now_s: float) -> None:
        """Begin the ramp-out now (smooth stop on the path)."""
        if self._stopping_from is None and not self.done:
            self._stopping_from = (now_s, self._rate)

    def _rate_at(self, now_s: float) -> float:
        if self._stopping_from is not None:
            t0, r0 = self._stopping_from
            return r0 * (1.0 - _smoothstep((now_s - t0) / self.ramp_s)) if self.ramp_s > 0 else 0.0
        elapsed = now_s - self._t_start
        rate = _smoothstep(elapsed / self.ramp_s) if self.ramp_s > 0 else 1.0
        # Begin the ramp-out so that tau reaches the end as the rate reaches 0: a quintic ramp
        # from rate 1 covers ramp_s / 2 of trajectory time.
        remaining = self.trajectory.duration_s - self._tau
        if remaining <= self.ramp_s / 2:  # with ramp_s = 0: stop exactly at the end
            self._stopping_from = (now_s, min(rate, 1.0))
            return self._rate_at(now_s)
        return rate

    def _warp_increment(self, t_a: float, t_b: float) -> float:
        """Integral of the warp rate dtau/dt from ``t_a`` to ``t_b`` (s): ramp-in S(u), then 1, and from the
        ramp-out's start t0 on r0 (1 - S(u)), whose integral r0 ramp_s (u - I(u)) stays at r0 ramp_s / 2."""
        if t_b <= t_a:
            return 0.0
        if self._stopping_from is None:
            return self._ramp_in_increment(t_a, t_b)
        t0, r0 = self._stopping_from
        before = self._ramp_in_increment(t_a, min(t_b, t0)) if t_a < t0 else 0.0
        if self.ramp_s <= 0 or t_b <= t0:
            return before
        ua, ub = min((max(t_a, t0) - t0) / self.ramp_s, 1.0), min((t_b - t0) / self.ramp_s, 1.0)
        return before + r0 * self.ramp_s * ((ub - _smoothstep_integral(ub)) - (ua - _smoothstep_integral(ua)))

    def _ramp_in_increment(self, t_a: float, t_b: float) -> float:
        if t_b <= t_a:
            return 0.0
        if self.ramp_s <= 0:
            return t_b - t_a
        ua, ub = (t_a - self._t_start) / self.ramp_s, (t_b - self._t_start) / self.ramp_s
        return self.ramp_s * (_smoothstep_integral(ub) - _smoothstep_integral(ua))

    def command(self, now_s: float, q_rad: np.ndarray) -> StreamerOutput:
        """The velocity command for time ``now_s`` (monotonic seconds) given the measured ``q_rad``."""
        q = np.asarray(q_rad, float)
        if self._t_start is None:
            self._t_start = now_s
            self._last_t = now_s
        last_t = self._last_t
        self._last_t = now_s
        self._rate = 0.0 if self.done else self._rate_at(now_s)
        # The time warp integrated exactly over the cycle (its rate is a known function of time): a late cycle
        # on a loaded machine then costs no trajectory time, and the ramp-out ends exactly at the end.
        if not self.done:
            self._tau = min(self._tau + self._warp_increment(last_t, max(now_s, last_t)),
                            self.trajectory.duration_s)
        q_ref, qd_ref, _ = self.trajectory.evaluate(self._tau)
        q_ref, qd_ref = np.ravel(q_ref), np.ravel(qd_ref)
        error = q_ref - q
        worst = int(np.argmax(np.abs(error)))
        if self.aborted is None and abs(error[worst]) > self.max_position_error_rad:
            self.aborted = (f"joint {worst} is {abs(error[worst]):.3f} rad from the planned position (limit "
                            f"{self.max_position_error_rad} rad): the arm does not follow the excitation; stopped")
            self.done = True
        velocity = qd_ref * self._rate + self.position_gain_per_s * error
        if self._stopping_from is not None and self._rate <= 1e-6:
            self.done = True
        if self.done:
            velocity = np.zeros_like(velocity)
        phase = ("aborted" if self.aborted else "done" if self.done else "ramp_out" if self._stopping_from is not None
                 else "ramp_in" if self._rate < 1.0 - 1e-9 else "running")
        return StreamerOutput(velocity_rad_s=velocity, trajectory_time_s=self._tau,
                              fraction=self._tau / self.trajectory.duration_s if self.trajectory.duration_s else 1.0,
                              phase=phase, position_error_rad=float(np.max(np.abs(error))))
