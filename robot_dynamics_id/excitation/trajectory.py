"""The joint trajectory every excitation produces: samples at the robot rate, evaluable at any time.

A UR arm on a CB3 controller takes joint *velocity* commands (``speedJ``), so an
excitation is defined by its velocity and the position follows by integration.
Whatever generated it (the PRBS + sinusoid schedule of seeds.md P3, an optimised
Fourier series, a user's file), a trajectory is handed around as a
:class:`JointTrajectory`: samples ``(t, q, qd, qdd)`` at the robot rate plus
:meth:`JointTrajectory.evaluate` for any time (analytic where the generator has a
closed form, Hermite interpolation of the samples otherwise). A streaming node
only needs ``duration_s``, ``start_position_rad`` and ``evaluate(t)``.

Trajectory file (YAML, ``schema: robot_dynamics_id/excitation/1``)::

    schema: robot_dynamics_id/excitation/1
    kind: fourier | prbs_sinusoid | samples
    robot: ur3                     # the robot it was planned for (may be absent in a user's file)
    joint_names: [...]
    rate_hz: 125.0                 # sample rate of the regenerated samples
    duration_s: 60.0
    parameters: {...}              # kind-specific generator parameters (fourier, prbs_sinusoid)
    samples:                       # kind: samples only (a user's trajectory)
      time_s: [...]
      position_rad: [[...], ...]   # N x n
      velocity_rad_s: [[...]]      # optional: differentiated from position if absent
      acceleration_rad_s2: [[...]] # optional: differentiated from velocity if absent
    limits: {...}                  # optional: the limits it was planned under
    metadata: {...}                # optional free-form (seed, condition number, timings)

Generated kinds are stored by their parameters and regenerated on load, so the
file is small and the samples are bit-for-bit those of the planner. Reading and writing
the file: :mod:`.trajectory_file`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..io.model_file import plain_for_yaml

__all__ = [
    "TRAJECTORY_SCHEMA",
    "JointTrajectory",
    "approach_trajectory",
    "concatenate_trajectories",
]

TRAJECTORY_SCHEMA = "robot_dynamics_id/excitation/1"

#: ``evaluator(t) -> (q, qd, qdd)`` for an array of times ``t`` (M,), each result (M, n).
Evaluator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


def _as_2d(name: str, values, n_samples: int) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n_samples:
        raise ValueError(f"{name} must have shape ({n_samples}, n_joints), got {np.shape(values)}")
    return arr


class JointTrajectory:
    """Joint positions, velocities and accelerations sampled in time, plus evaluation at any time.

    ``time_s`` starts at 0 and increases; arrays are (N, n). ``kind`` names the
    generator (``"fourier"``, ``"prbs_sinusoid"``, ``"samples"``); ``parameters``
    holds what regenerates it (saved to YAML). ``evaluator`` (optional) gives the
    exact trajectory between samples; without it :meth:`evaluate` interpolates
    (cubic Hermite on position, linear on velocity and acceleration).

    Samples are not validated against limits here (NaN is allowed so that a
    user's broken file reaches :func:`excitation.checker.check_trajectory`, which
    names the problem).
    """

    def __init__(
        self,
        *,
        time_s,
        position_rad,
        velocity_rad_s,
        acceleration_rad_s2,
        joint_names: Sequence[str] | None = None,
        kind: str = "samples",
        parameters: dict[str, Any] | None = None,
        robot: str | None = None,
        limits: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        evaluator: Evaluator | None = None,
    ) -> None:
        t = np.asarray(time_s, dtype=float).ravel()
        if t.size < 2:
            raise ValueError("a trajectory needs at least 2 samples")
        self.time_s = t
        self.position_rad = _as_2d("position_rad", position_rad, t.size)
        n = self.position_rad.shape[1]
        self.velocity_rad_s = _as_2d("velocity_rad_s", velocity_rad_s, t.size)
        self.acceleration_rad_s2 = _as_2d("acceleration_rad_s2", acceleration_rad_s2, t.size)
        if self.velocity_rad_s.shape[1] != n or self.acceleration_rad_s2.shape[1] != n:
            raise ValueError("position, velocity and acceleration must have the same number of joints")
        if joint_names is None:
            joint_names = tuple(f"joint{j + 1}" for j in range(n))
        if len(joint_names) != n:
            raise ValueError(f"{len(joint_names)} joint names given for {n} joints")
        self.joint_names = tuple(joint_names)
        self.kind = str(kind)
        self.parameters = dict(parameters or {})
        self.robot = robot
        self.limits = dict(limits or {})
        self.metadata = dict(metadata or {})
        self._evaluator = evaluator
        for arr in (self.time_s, self.position_rad, self.velocity_rad_s, self.acceleration_rad_s2):
            arr.setflags(write=False)

    # ---- basic facts ----------------------------------------------------------------
    @property
    def n_joints(self) -> int:
        return self.position_rad.shape[1]

    @property
    def n_samples(self) -> int:
        return self.time_s.size

    @property
    def duration_s(self) -> float:
        return float(self.time_s[-1] - self.time_s[0])

    @property
    def rate_hz(self) -> float:
        """Mean sample rate (the robot rate for generated trajectories)."""
        return (self.n_samples - 1) / self.duration_s if self.duration_s > 0 else float("nan")

    @property
    def start_position_rad(self) -> np.ndarray:
        """Where the robot must be (at rest) before streaming starts."""
        return self.position_rad[0].copy()

    @property
    def end_position_rad(self) -> np.ndarray:
        return self.position_rad[-1].copy()

    def starts_at_rest(self, *, velocity_tolerance_rad_s: float = 1e-6) -> bool:
        return bool(np.all(np.abs(self.velocity_rad_s[0]) <= velocity_tolerance_rad_s))

    def ends_at_rest(self, *, velocity_tolerance_rad_s: float = 1e-6) -> bool:
        return bool(np.all(np.abs(self.velocity_rad_s[-1]) <= velocity_tolerance_rad_s))

    # ---- evaluation -----------------------------------------------------------------
    def evaluate(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, qdd) at time(s) ``t_s`` (seconds from the start).

        A scalar time gives three (n,) arrays; an array of M times gives (M, n).
        Before the start the trajectory holds its start pose at rest and after the
        end its end pose at rest, so a streaming loop that overshoots commands zero
        velocity rather than extrapolating.
        """
        scalar = np.ndim(t_s) == 0
        t = np.atleast_1d(np.asarray(t_s, dtype=float))
        t0, t1 = self.time_s[0], self.time_s[-1]
        inside = (t >= t0) & (t <= t1)
        q = np.empty((t.size, self.n_joints))
        qd = np.zeros_like(q)
        qdd = np.zeros_like(q)
        q[t < t0] = self.position_rad[0]
        q[t > t1] = self.position_rad[-1]
        if np.any(inside):
            fn = self._evaluator or self._interpolate
            qi, qdi, qddi = fn(t[inside])
            q[inside], qd[inside], qdd[inside] = qi, qdi, qddi
        if scalar:
            return q[0], qd[0], qdd[0]
        return q, qd, qdd

    def position_at(self, t_s) -> np.ndarray:
        return self.evaluate(t_s)[0]

    def velocity_at(self, t_s) -> np.ndarray:
        """The velocity command (rad/s) to stream at time ``t_s``."""
        return self.evaluate(t_s)[1]

    def _interpolate(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ts = self.time_s
        k = np.clip(np.searchsorted(ts, t, side="right") - 1, 0, ts.size - 2)
        h = (ts[k + 1] - ts[k])[:, None]
        s = ((t - ts[k]) / h[:, 0])[:, None]
        q0, q1 = self.position_rad[k], self.position_rad[k + 1]
        v0, v1 = self.velocity_rad_s[k], self.velocity_rad_s[k + 1]
        # Cubic Hermite basis: exact at the samples, C1 in position.
        h00 = 2 * s**3 - 3 * s**2 + 1
        h10 = s**3 - 2 * s**2 + s
        h01 = -2 * s**3 + 3 * s**2
        h11 = s**3 - s**2
        q = h00 * q0 + h10 * h * v0 + h01 * q1 + h11 * h * v1
        qd = (1 - s) * v0 + s * v1
        qdd = (1 - s) * self.acceleration_rad_s2[k] + s * self.acceleration_rad_s2[k + 1]
        return q, qd, qdd

    def resample(self, rate_hz: float) -> JointTrajectory:
        """The same trajectory sampled at ``rate_hz`` (keeps kind, parameters and evaluator)."""
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        n = int(np.floor(self.duration_s * rate_hz + 1e-9)) + 1
        t = self.time_s[0] + np.arange(n) / rate_hz
        if t[-1] < self.time_s[-1] - 1e-12:
            t = np.append(t, self.time_s[-1])
        q, qd, qdd = self.evaluate(t)
        return JointTrajectory(
            time_s=t - self.time_s[0], position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd,
            joint_names=self.joint_names, kind=self.kind, parameters=self.parameters, robot=self.robot,
            limits=self.limits, metadata=self.metadata,
            evaluator=None if self._evaluator is None else _shifted(self._evaluator, self.time_s[0]),
        )

    # ---- file I/O ---------------------------------------------------------------------
    def to_dict(self, *, include_samples: bool | None = None) -> dict[str, Any]:
        """The YAML document of this trajectory (see the module docstring).

        Generated kinds are stored by parameters only unless ``include_samples``.
        """
        if include_samples is None:
            include_samples = self.kind == "samples" or not self.parameters
        doc: dict[str, Any] = {
            "schema": TRAJECTORY_SCHEMA,
            "kind": self.kind,
            "robot": self.robot,
            "joint_names": list(self.joint_names),
            "rate_hz": float(self.rate_hz),
            "duration_s": float(self.duration_s),
        }
        if self.parameters:
            doc["parameters"] = plain_for_yaml(self.parameters)
        if include_samples:
            doc["samples"] = {
                "time_s": self.time_s.tolist(),
                "position_rad": self.position_rad.tolist(),
                "velocity_rad_s": self.velocity_rad_s.tolist(),
                "acceleration_rad_s2": self.acceleration_rad_s2.tolist(),
            }
        if self.limits:
            doc["limits"] = plain_for_yaml(self.limits)
        if self.metadata:
            doc["metadata"] = plain_for_yaml(self.metadata)
        return doc

    def __repr__(self) -> str:
        return (f"JointTrajectory(kind={self.kind!r}, robot={self.robot!r}, n_joints={self.n_joints}, "
                f"duration_s={self.duration_s:.3f}, rate_hz={self.rate_hz:.1f})")


def _shifted(evaluator: Evaluator, offset_s: float) -> Evaluator:
    if offset_s == 0.0:
        return evaluator
    return lambda t: evaluator(np.asarray(t) + offset_s)


# ---- helpers for streaming -------------------------------------------------------------

# Peak |velocity| and |acceleration| of the quintic min-jerk profile s(u) = 10u^3 - 15u^4 + 6u^5
# per unit distance and unit duration: 15/8 and 10/sqrt(3).
_QUINTIC_PEAK_VELOCITY = 15.0 / 8.0
_QUINTIC_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)


def approach_trajectory(
    start_position_rad,
    goal_position_rad,
    *,
    velocity_limit_rad_s,
    acceleration_limit_rad_s2,
    rate_hz: float = 125.0,
    minimum_duration_s: float = 0.5,
    joint_names: Sequence[str] | None = None,
) -> JointTrajectory:
    """A rest-to-rest move from ``start`` to ``goal`` (e.g. the current pose to an excitation's start).

    All joints follow one quintic (minimum-jerk) profile scaled to the slowest
    joint, so the path is a straight line in joint space and every joint's
    velocity and acceleration stay within the given limits. The joint-space line
    is *not* checked against the table keep-out: run the checker on it.
    """
    q0 = np.asarray(start_position_rad, float).ravel()
    q1 = np.asarray(goal_position_rad, float).ravel()
    if q0.shape != q1.shape:
        raise ValueError(f"start and goal have different shapes {q0.shape} and {q1.shape}")
    v = np.broadcast_to(np.asarray(velocity_limit_rad_s, float), q0.shape)
    a = np.broadcast_to(np.asarray(acceleration_limit_rad_s2, float), q0.shape)
    if np.any(v <= 0) or np.any(a <= 0):
        raise ValueError("approach velocity and acceleration limits must be > 0")
    delta = q1 - q0
    dist = np.abs(delta)
    duration = max(
        minimum_duration_s,
        float(np.max(_QUINTIC_PEAK_VELOCITY * dist / v)),
        float(np.max(np.sqrt(_QUINTIC_PEAK_ACCELERATION * dist / a))),
    )
    # Round up to a whole number of samples so the last sample is exactly at the goal.
    n = int(np.ceil(duration * rate_hz - 1e-9))
    duration = n / rate_hz

    def evaluator(t: np.ndarray):
        u = np.clip(np.asarray(t, float) / duration, 0.0, 1.0)[:, None]
        s = 10 * u**3 - 15 * u**4 + 6 * u**5
        ds = (30 * u**2 - 60 * u**3 + 30 * u**4) / duration
        dds = (60 * u - 180 * u**2 + 120 * u**3) / duration**2
        return q0 + s * delta, ds * delta, dds * delta

    t = np.arange(n + 1) / rate_hz
    q, qd, qdd = evaluator(t)
    return JointTrajectory(time_s=t, position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd,
                           joint_names=joint_names, kind="samples",
                           metadata={"generator": "approach (quintic rest-to-rest)"}, evaluator=evaluator)


def concatenate_trajectories(trajectories: Sequence[JointTrajectory], *, position_tolerance_rad: float = 1e-6
                             ) -> JointTrajectory:
    """Join trajectories end to start (e.g. approach + excitation + return) into one sampled trajectory.

    Each piece must start where the previous ended; the joint is at the shared
    sample (the first sample of each later piece is dropped).
    """
    if not trajectories:
        raise ValueError("nothing to concatenate")
    first = trajectories[0]
    t_parts, q_parts, qd_parts, qdd_parts = [first.time_s], [first.position_rad], [first.velocity_rad_s], \
        [first.acceleration_rad_s2]
    t_end = first.time_s[-1]
    for i, piece in enumerate(trajectories[1:], start=1):
        if piece.n_joints != first.n_joints:
            raise ValueError(f"piece {i} has {piece.n_joints} joints, piece 0 has {first.n_joints}")
        gap = np.max(np.abs(piece.position_rad[0] - q_parts[-1][-1]))
        if gap > position_tolerance_rad:
            raise ValueError(f"piece {i} starts {gap:.3g} rad away from where piece {i - 1} ends; "
                             "insert an approach_trajectory between them")
        t_parts.append(piece.time_s[1:] - piece.time_s[0] + t_end)
        q_parts.append(piece.position_rad[1:])
        qd_parts.append(piece.velocity_rad_s[1:])
        qdd_parts.append(piece.acceleration_rad_s2[1:])
        t_end = t_parts[-1][-1]
    return JointTrajectory(time_s=np.concatenate(t_parts), position_rad=np.vstack(q_parts),
                           velocity_rad_s=np.vstack(qd_parts), acceleration_rad_s2=np.vstack(qdd_parts),
                           joint_names=first.joint_names, kind="samples", robot=first.robot,
                           metadata={"generator": "concatenation of " + ", ".join(p.kind for p in trajectories)})
