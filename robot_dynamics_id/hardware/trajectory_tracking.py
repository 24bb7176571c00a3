"""Joint trajectories executed inside the robot loop, on the robot's clock.

This is what the UR driver's ``scaled_joint_trajectory_controller`` does inside
ros2_control: a whole trajectory arrives at once, and every controller cycle
interpolates it and commands the arm, so no other process has to be scheduled
on time for the arm to stay on its path.

:class:`TrajectoryGoal` interpolates the waypoints of a
``trajectory_msgs/JointTrajectory`` the way ros2_controllers' joint trajectory
controller does: linear between points that carry positions only, cubic
(Hermite) with velocities, quintic with velocities and accelerations. A first
point later than t = 0 is reached from where the arm is when the goal starts.

:class:`TrajectoryTracker` is a :class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`
cycle controller. Trajectory time τ advances with the robot's clock times a rate
r (the speed scaling; 0 on cancel), slewed at ``1 / ramp_s`` per second so that
speed changes are smooth and the arm stays *on* the path::

    τ_{k+1} = τ_k + r_k (t_{k+1} − t_k)                          (time warp, robot clock t)
    q̇_cmd   = r_k q̇_ref(τ) + K_p (q_ref(τ) − q)                   (velocity feed-forward + P feedback)

A late process or a slow DDS hop cannot create a position error: t is the
robot's own timestamp. The goal aborts (the arm stops) when the arm is farther
than ``path_tolerance_rad`` from q_ref(τ) on any joint, and succeeds when τ has
reached the end and the arm is within ``goal_tolerance_rad`` of the last point.
Pure numpy; no ROS.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..robot_state import RobotState
from .robot_loop import CycleCommand

__all__ = ["TrackingPhase", "TrackingStatus", "TrajectoryGoal", "TrajectoryGoalError", "TrajectoryTracker",
           "check_goal_speed"]


#: a goal may plan this much above a joint's velocity limit (interpolation between its points) before it is
#: refused: the tracker would clamp it and fall behind its path until the path tolerance aborts it
GOAL_SPEED_TOLERANCE = 1.02


def check_goal_speed(goal: TrajectoryGoal, velocity_limit_rad_s, joint_names=None) -> None:
    """Refuse a goal whose planned joint speeds (its velocities, else its positions' differences) exceed
    ``velocity_limit_rad_s`` (the guard's limits: the configured ones x velocity_scale) by more than
    :data:`GOAL_SPEED_TOLERANCE`, naming the joint (by name when ``joint_names`` are given), the speed and the
    fixes."""
    limit = np.asarray(velocity_limit_rad_s, float)
    if goal.velocity_rad_s is not None:
        speed = np.abs(goal.velocity_rad_s)
    elif goal.time_s.size > 1:
        speed = np.abs(np.diff(goal.position_rad, axis=0) / np.diff(goal.time_s)[:, None])
    else:
        return
    peak = speed.max(axis=0)
    over = peak > limit * GOAL_SPEED_TOLERANCE
    if over.any():
        j = int(np.argmax(peak / limit))
        joint = f"joint {j}" if joint_names is None else str(joint_names[j])
        raise TrajectoryGoalError(f"the trajectory needs {peak[j]:.3g} rad/s on {joint}, above its limit here "
                                  f"{limit[j]:.3g} rad/s (velocity_limits_rad_s x velocity_scale): plan it within "
                                  "the limits (rdi excite plan --velocity-scale) or raise velocity_scale")


class TrajectoryGoalError(ValueError):
    """A trajectory that cannot be executed (shape, timing, values or start); the message names the problem."""


def _segment_coefficients(t, q, qd, qdd) -> np.ndarray:
    """Polynomial coefficients c_0..c_5 of each segment, shape (K-1, 6, n): q(s) = Σ c_i s^i, s = t − t_k."""
    h = np.diff(t)[:, None]
    p0, p1 = q[:-1], q[1:]
    c = np.zeros((len(h), 6, q.shape[1]))
    c[:, 0] = p0
    if qd is None:  # positions only: linear, as ros2_controllers' JTC
        c[:, 1] = (p1 - p0) / h
        return c
    v0, v1 = qd[:-1], qd[1:]
    c[:, 1] = v0
    if qdd is None:  # cubic Hermite
        c[:, 2] = (3 * (p1 - p0) / h - 2 * v0 - v1) / h
        c[:, 3] = (2 * (p0 - p1) / h + v0 + v1) / h**2
        return c
    a0, a1 = qdd[:-1], qdd[1:]
    c[:, 2] = a0 / 2
    c[:, 3] = (20 * (p1 - p0) - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h**2) / (2 * h**3)
    c[:, 4] = (30 * (p0 - p1) + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h**2) / (2 * h**4)
    c[:, 5] = (12 * (p1 - p0) - 6 * (v1 + v0) * h - (a0 - a1) * h**2) / (2 * h**5)
    return c


class TrajectoryGoal:
    """Waypoints of a joint trajectory and their interpolation (see the module docstring).

    Args:
        time_s: (K,) time from the start of each point, strictly increasing, ≥ 0 (s).
        position_rad: (K, n) positions (rad).
        velocity_rad_s: (K, n) velocities (rad/s), or None.
        acceleration_rad_s2: (K, n) accelerations (rad/s²), or None (needs velocities).

    Raises :class:`TrajectoryGoalError` naming the first problem.
    """

    def __init__(self, time_s, position_rad, velocity_rad_s=None, acceleration_rad_s2=None) -> None:
        t = np.asarray(time_s, float).ravel()
        q = np.atleast_2d(np.asarray(position_rad, float))
        if t.size == 0:
            raise TrajectoryGoalError("the trajectory has no points")
        if q.shape[0] != t.size:
            raise TrajectoryGoalError(f"{t.size} times but {q.shape[0]} position vectors")
        qd = None if velocity_rad_s is None else np.atleast_2d(np.asarray(velocity_rad_s, float))
        qdd = None if acceleration_rad_s2 is None else np.atleast_2d(np.asarray(acceleration_rad_s2, float))
        if qdd is not None and qd is None:
            raise TrajectoryGoalError("accelerations given without velocities")
        for name, arr in (("velocities", qd), ("accelerations", qdd)):
            if arr is not None and arr.shape != q.shape:
                raise TrajectoryGoalError(f"{name} have shape {arr.shape}, positions {q.shape}")
        for name, arr in (("times", t), ("positions", q), ("velocities", qd), ("accelerations", qdd)):
            if arr is not None and not np.all(np.isfinite(arr)):
                raise TrajectoryGoalError(f"the trajectory's {name} contain NaN or infinity")
        if t[0] < 0 or np.any(np.diff(t) <= 0):
            raise TrajectoryGoalError("time_from_start must be ≥ 0 and strictly increasing from point to point")
        self.time_s, self.position_rad, self.velocity_rad_s, self.acceleration_rad_s2 = t, q, qd, qdd
        self._coefficients = _segment_coefficients(t, q, qd, qdd) if t.size > 1 else np.zeros((0, 6, q.shape[1]))
        self._segment = 0

    @property
    def n_joints(self) -> int:
        return self.position_rad.shape[1]

    @property
    def duration_s(self) -> float:
        return float(self.time_s[-1])

    def starting_from(self, q_rad: np.ndarray) -> TrajectoryGoal:
        """The goal as executed from ``q_rad`` at rest: a first point later than t = 0 is reached from there."""
        if self.time_s[0] <= 0.0:
            return self
        n = self.n_joints
        zero = np.zeros((1, n))
        join = (lambda a: None if a is None else np.vstack([zero, a]))
        return TrajectoryGoal(np.r_[0.0, self.time_s], np.vstack([np.asarray(q_rad, float).reshape(1, n),
                                                                 self.position_rad]),
                              join(self.velocity_rad_s), join(self.acceleration_rad_s2))

    def evaluate(self, t_s: float) -> tuple[np.ndarray, np.ndarray]:
        """(q_ref rad, q̇_ref rad/s) at trajectory time ``t_s``; holds the first/last point outside the span.

        Called once per robot cycle with a non-decreasing time: the segment search starts from the last one."""
        t = self.time_s
        if t_s <= t[0] or t.size == 1:
            return self.position_rad[0], np.zeros(self.n_joints)
        if t_s >= t[-1]:
            return self.position_rad[-1], np.zeros(self.n_joints)
        k = self._segment
        if not (t[k] <= t_s < t[k + 1]):
            k = int(np.searchsorted(t, t_s, side="right")) - 1
            self._segment = k
        s = t_s - t[k]
        c = self._coefficients[k]
        q = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5]))))
        qd = c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])))
        return q, qd

    def positions_at(self, times_s) -> np.ndarray:
        """(N, n) q_ref (rad) at each of the trajectory times ``times_s`` at once: the positions
        :meth:`evaluate` gives one by one (held at the first/last point outside the span), for checking a
        whole plan against its interpolation without a Python loop over its samples."""
        t = self.time_s
        ts = np.asarray(times_s, float).ravel()
        if t.size == 1:
            return np.repeat(self.position_rad[:1], ts.size, axis=0)
        k = np.clip(np.searchsorted(t, ts, side="right") - 1, 0, t.size - 2)
        s = (ts - t[k])[:, None]
        c = self._coefficients[k]
        q = c[:, 0] + s * (c[:, 1] + s * (c[:, 2] + s * (c[:, 3] + s * (c[:, 4] + s * c[:, 5]))))
        q[ts <= t[0]] = self.position_rad[0]
        q[ts >= t[-1]] = self.position_rad[-1]
        return q


class TrackingPhase:
    """Values of :attr:`TrackingStatus.phase`."""

    IDLE = "idle"
    RUNNING = "running"
    STOPPING = "stopping"  # cancelled: slowing down along the path
    SETTLING = "settling"  # trajectory time at the end; waiting for the arm to reach the last point
    SUCCEEDED = "succeeded"
    CANCELLED = "cancelled"
    ABORTED = "aborted"
    REJECTED = "rejected"


#: phases in which the tracker commands the arm
_ACTIVE = (TrackingPhase.RUNNING, TrackingPhase.STOPPING, TrackingPhase.SETTLING)


@dataclass(frozen=True)
class TrackingStatus:
    """The tracker's state, as ur_interface reports it (``~/trajectory_status``)."""

    goal: int  # number of goals received so far (the current goal's id)
    phase: str
    time_s: float  # trajectory time τ (s)
    duration_s: float
    speed_scaling: float  # the rate r at which trajectory time advances now (0..1)
    position_error_rad: float  # max over joints of |q_ref(τ) − q| now
    max_position_error_rad: float  # the largest position error of this goal so far
    reason: str = ""

    @property
    def active(self) -> bool:
        return self.phase in _ACTIVE

    @property
    def fraction(self) -> float:
        return min(1.0, self.time_s / self.duration_s) if self.duration_s > 0 else 1.0

    def as_dict(self) -> dict:
        out = asdict(self)
        out["fraction"] = self.fraction
        return out


class TrajectoryTracker:
    """Executes :class:`TrajectoryGoal` s as a robot-loop cycle controller (see the module docstring).

    Args:
        position_gain_per_s: K_p, feedback on the position error (1/s).
        path_tolerance_rad: abort when the arm is farther than this from the path on any joint (rad).
        goal_tolerance_rad: succeed when within this of the last point on every joint (rad).
        settle_s: after the trajectory's end, abort if the arm has not come within the goal tolerance in this
            long (robot time, s).
        start_tolerance_rad: a goal whose first point is at t = 0 must start within this of the arm (rad).
        ramp_s: a change of rate (speed scaling, cancel) from 1 to 0 takes this long (robot time, s).

    Thread safety: :meth:`submit`, :meth:`cancel`, :meth:`abort` and :meth:`set_speed_scaling` may be called
    from any thread; :meth:`__call__` runs in the robot loop's thread only.
    """

    def __init__(self, *, position_gain_per_s: float = 10.0, path_tolerance_rad: float = 0.25,
                 goal_tolerance_rad: float = 0.01, settle_s: float = 1.0, start_tolerance_rad: float = 0.05,
                 ramp_s: float = 0.5) -> None:
        if min(position_gain_per_s, settle_s, ramp_s) < 0 or min(path_tolerance_rad, goal_tolerance_rad,
                                                                   start_tolerance_rad) <= 0:
            raise ValueError("tracker gains, times and tolerances must be positive")
        self.position_gain_per_s = float(position_gain_per_s)
        self.path_tolerance_rad = float(path_tolerance_rad)
        self.goal_tolerance_rad = float(goal_tolerance_rad)
        self.settle_s = float(settle_s)
        self.start_tolerance_rad = float(start_tolerance_rad)
        self.ramp_s = float(ramp_s)
        self._lock = threading.Lock()
        self._pending_goal: TrajectoryGoal | None = None
        self._pending_stop: tuple[str, str] | None = None  # (phase, reason)
        self._speed_scaling = 1.0
        self._goals = 0
        self._goal: TrajectoryGoal | None = None
        self._tau = 0.0
        self._rate = 0.0
        self._last_t: float | None = None
        self._settle_until = 0.0
        self.reference_rad: np.ndarray | None = None  # q_ref(τ) of the latest cycle (None when idle)
        self._status = TrackingStatus(0, TrackingPhase.IDLE, 0.0, 0.0, 1.0, 0.0, 0.0)

    # ---- any thread --------------------------------------------------------------------------------
    @property
    def status(self) -> TrackingStatus:
        return self._status

    @property
    def speed_scaling(self) -> float:
        """The configured speed scaling (0..1); the rate in use is in :attr:`status`."""
        return self._speed_scaling

    def submit(self, goal: TrajectoryGoal) -> int:
        """Queue ``goal``; it replaces any goal in progress at the next cycle. Returns its id."""
        with self._lock:
            self._goals += 1
            self._pending_goal, self._pending_stop = goal, None
            return self._goals

    def cancel(self, reason: str = "cancelled") -> None:
        """Slow down along the path to rest (``ramp_s``), then end the goal as cancelled."""
        with self._lock:
            if self._pending_stop is not None and self._pending_stop[0] == TrackingPhase.ABORTED:
                return  # aborted while the loop was faulted: a cancel must not bring the goal back to slow down
            self._pending_goal, self._pending_stop = None, (TrackingPhase.CANCELLED, reason)

    def abort(self, reason: str) -> None:
        """End the goal at once (the robot loop has stopped the arm: a fault); no further command.

        Reported as aborted at once: a faulted loop calls no cycle controller until the fault clears."""
        with self._lock:
            self._pending_goal, self._pending_stop = None, (TrackingPhase.ABORTED, reason)
            if self._status.active:
                self._status = replace(self._status, phase=TrackingPhase.ABORTED, reason=reason, speed_scaling=0.0)

    def set_speed_scaling(self, value: float) -> float:
        """Set the speed scaling (clipped to 0..1; 0 holds the arm on the path); returns the value used."""
        value = float(np.clip(value, 0.0, 1.0)) if np.isfinite(value) else 1.0
        self._speed_scaling = value
        return value

    # ---- robot loop thread -----------------------------------------------------------------------------
    def __call__(self, state: RobotState) -> CycleCommand | None:
        with self._lock:
            goal, self._pending_goal = self._pending_goal, None
            stop, self._pending_stop = self._pending_stop, None
        if goal is not None:
            return self._start(goal, state)
        if stop is not None and (self._status.active or self._goal is not None):
            if stop[0] == TrackingPhase.ABORTED:
                return self._finish(TrackingPhase.ABORTED, stop[1])
            self._set(phase=TrackingPhase.STOPPING, reason=stop[1])
        if not self._status.active:
            return None
        return self._track(state)

    def _set(self, **changes) -> None:
        self._status = replace(self._status, **changes)

    def _start(self, goal: TrajectoryGoal, state: RobotState) -> CycleCommand | None:
        was_active = self._status.active
        if goal.n_joints != state.q_rad.size:
            return self._reject(f"the trajectory has {goal.n_joints} joints, the robot {state.q_rad.size}",
                                was_active)
        if goal.time_s[0] <= 0.0:
            gap = np.abs(goal.position_rad[0] - state.q_rad)
            j = int(np.argmax(gap))
            if gap[j] > self.start_tolerance_rad:
                return self._reject(f"its first point (at t = 0) is {gap[j]:.3f} rad from the arm on joint {j} "
                                    f"(start tolerance {self.start_tolerance_rad} rad): start the trajectory "
                                    "where the arm is, or give the first point a time_from_start > 0",
                                    was_active)
        self._goal = goal.starting_from(state.q_rad)
        self._tau, self._last_t = 0.0, state.timestamp_s
        # A goal that replaces a running one keeps the current rate; from rest it starts at full speed, as
        # the UR driver's controller does (the trajectory itself must start at the arm's velocity).
        self._rate = self._rate if was_active else self._speed_scaling
        self._status = TrackingStatus(self._goals, TrackingPhase.RUNNING, 0.0, self._goal.duration_s,
                                      self._rate, 0.0, 0.0)
        return self._track(state)

    def _reject(self, reason: str, was_active: bool) -> CycleCommand | None:
        self._status = TrackingStatus(self._goals, TrackingPhase.REJECTED, 0.0, 0.0, self._rate, 0.0, 0.0,
                                      f"trajectory rejected: {reason}")
        self._goal, self.reference_rad = None, None
        return CycleCommand("stop", reason=self._status.reason) if was_active else None

    def _finish(self, phase: str, reason: str = "") -> CycleCommand:
        self._set(phase=phase, reason=reason, speed_scaling=0.0)
        self._goal, self.reference_rad, self._rate = None, None, 0.0
        return CycleCommand("stop", reason=reason or f"trajectory {phase}")

    def _track(self, state: RobotState) -> CycleCommand:
        goal = self._goal
        t = state.timestamp_s
        dt = max(0.0, t - self._last_t)
        self._last_t = t
        phase = self._status.phase
        target = 0.0 if phase == TrackingPhase.STOPPING else self._speed_scaling
        step = dt / self.ramp_s if self.ramp_s > 0 else np.inf
        self._rate += min(max(target - self._rate, -step), step)  # slew: |Δr| ≤ dt / ramp_s
        self._tau = min(self._tau + self._rate * dt, goal.duration_s)
        q_ref, qd_ref = goal.evaluate(self._tau)
        error = q_ref - state.q_rad
        worst = float(np.max(np.abs(error)))
        self.reference_rad = q_ref
        status = self._status  # a new snapshot every cycle (cheaper built whole than by dataclasses.replace)
        self._status = TrackingStatus(status.goal, phase, self._tau, status.duration_s, self._rate, worst,
                                      max(worst, status.max_position_error_rad), status.reason)
        if worst > self.path_tolerance_rad:
            j = int(np.argmax(np.abs(error)))
            return self._finish(TrackingPhase.ABORTED,
                                f"joint {j} is {abs(error[j]):.3f} rad from the trajectory (path tolerance "
                                f"{self.path_tolerance_rad} rad): the arm does not follow; stopped")
        if phase == TrackingPhase.STOPPING and self._rate <= 0.0:
            return self._finish(TrackingPhase.CANCELLED, self._status.reason)
        if phase == TrackingPhase.RUNNING and self._tau >= goal.duration_s:
            self._settle_until = t + self.settle_s
            self._set(phase=TrackingPhase.SETTLING)
        if self._status.phase == TrackingPhase.SETTLING:
            if worst <= self.goal_tolerance_rad:
                return self._finish(TrackingPhase.SUCCEEDED)
            if t > self._settle_until:
                return self._finish(TrackingPhase.ABORTED,
                                    f"the arm is {worst:.3f} rad from the trajectory's last point {self.settle_s} s "
                                    f"after its end (goal tolerance {self.goal_tolerance_rad} rad)")
        return CycleCommand("velocity", qd_ref * self._rate + self.position_gain_per_s * error)
