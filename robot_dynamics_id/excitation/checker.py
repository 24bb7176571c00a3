"""Safety check of an excitation trajectory before it is sent to a robot.

Every trajectory — the P3 PRBS schedule, an optimised Fourier excitation or a
user's file — passes :func:`check_trajectory` before it is streamed. The check
refuses the trajectory at its *first* problem in time and names it
(:class:`TrajectoryLimitError`: time, joint or point, value, limit):

* non-finite samples (NaN/inf) and a time axis that is not increasing;
* joint position, velocity and acceleration limits of the robot model, each
  optionally scaled down by a safety factor (``ExcitationLimits.from_robot``);
* the table keep-out: every joint origin and the tool frame (pinocchio forward
  kinematics of the robot model) must stay at or above ``table_height_m`` in the
  base frame. For the UR arms the shoulder, elbow and wrist-1 axes are
  horizontal, so the links' side offsets along them do not change heights; the
  margin should still cover the link radius and any tool;
* a start (and end) not at rest: the robot is standing still when streaming
  begins and must be left standing still. Fourier excitations are also checked
  for zero acceleration at both ends (they are designed that way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pinocchio as pin

from ..robots.model import RobotModel
from .trajectory import JointTrajectory

__all__ = [
    "CheckReport",
    "ExcitationLimits",
    "TrajectoryLimitError",
    "check_trajectory",
    "keep_out_heights",
    "keep_out_points",
]

#: Order in which simultaneous problems are reported (most basic first).
_QUANTITY_ORDER = ("time", "rate", "non_finite", "position", "velocity", "acceleration", "keep_out", "start_rest",
                   "end_rest")
#: lowest sample rate of a trajectory run on a robot (Hz): between samples 1/50 s apart the quintic interpolation
#: of a trajectory controller stays on the planned path; at 5 Hz it left the plan by 5 mrad and its accelerations
#: exceeded the limits the samples kept
MIN_RATE_HZ = 50.0


class TrajectoryLimitError(ValueError):
    """A trajectory breaks a limit; ``quantity``, ``time_s``, ``joint``, ``value`` and ``limit`` say where.

    ``quantity`` is one of ``time``, ``rate``, ``non_finite``, ``position``, ``velocity``,
    ``acceleration``, ``keep_out``, ``start_rest``, ``end_rest``. ``joint`` is the
    joint name (or, for ``keep_out``, the link/frame name that is too low).
    ``value``/``limit`` are in rad, rad/s, rad/s² or metres (heights).
    """

    def __init__(self, *, quantity: str, time_s: float, joint: str, value: float, limit: float,
                 joint_index: int | None = None, detail: str = "") -> None:
        self.quantity = quantity
        self.time_s = float(time_s)
        self.joint = joint
        self.joint_index = joint_index
        self.value = float(value)
        self.limit = float(limit)
        v, lim = self.value, self.limit
        if quantity == "position":
            what = f"position {v:.4g} rad is outside {detail or f'the limit {lim:.4g}'} rad"
        elif quantity in ("velocity", "acceleration"):
            unit = "rad/s" if quantity == "velocity" else "rad/s^2"
            what = f"|{quantity}| {abs(v):.4g} {unit} exceeds the limit {lim:.4g} {unit}"
        elif quantity == "keep_out":
            what = f"height {v:.4g} m is below the table keep-out {lim:.4g} m"
        elif quantity == "non_finite":
            what = f"{detail or 'sample'} is {v}"
        elif quantity in ("start_rest", "end_rest"):
            which = "start" if quantity == "start_rest" else "end"
            what = (f"does not {which} at rest: {detail or 'velocity'} {v:.4g} exceeds the rest tolerance "
                    f"{lim:.4g}; add a ramp (excitation.trajectory.approach_trajectory) or fix the file")
        elif quantity == "time":
            what = f"time axis is not finite and strictly increasing (value {v:.6g})"
        elif quantity == "rate":
            what = (f"sampled at {v:.3g} Hz, below {lim:g} Hz: the limits hold at the samples only, and a receiver "
                    "interpolating between them (the trajectory controller) leaves them; plan at the robot's rate "
                    "(rdi excite plan --rate 125 or 500)")
        else:
            raise ValueError(f"unknown quantity {quantity!r}")
        message = f"{quantity} violation at t = {self.time_s:.4f} s, {joint}: {what}"
        super().__init__(message)


@dataclass(frozen=True, kw_only=True)
class ExcitationLimits:
    """Limits a trajectory must respect (per joint, symmetric for velocity and acceleration).

    ``table_height_m=None`` disables the keep-out. Tolerances define "at rest".
    """

    position_lower_rad: np.ndarray
    position_upper_rad: np.ndarray
    velocity_rad_s: np.ndarray
    acceleration_rad_s2: np.ndarray
    table_height_m: float | None = 0.05
    rest_velocity_tolerance_rad_s: float = 1e-3
    rest_acceleration_tolerance_rad_s2: float = 1e-2
    description: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        lower = np.asarray(self.position_lower_rad, float).ravel()
        n = lower.size
        for name in ("position_lower_rad", "position_upper_rad", "velocity_rad_s", "acceleration_rad_s2"):
            value = np.asarray(getattr(self, name), float).ravel()
            if value.size == 1:
                value = np.full(n, value[0])
            if value.shape != (n,) or not np.all(np.isfinite(value)):
                raise ValueError(f"limits {name} must be {n} finite values, got {getattr(self, name)!r}")
            object.__setattr__(self, name, value)
        if np.any(self.position_upper_rad <= self.position_lower_rad):
            raise ValueError("every position_upper_rad must be above position_lower_rad")
        if np.any(self.velocity_rad_s <= 0) or np.any(self.acceleration_rad_s2 <= 0):
            raise ValueError("velocity and acceleration limits must be > 0")

    @property
    def n_joints(self) -> int:
        return self.position_lower_rad.size

    @classmethod
    def from_robot(cls, robot: RobotModel, *, safety_factor: float = 1.0, velocity_scale: float = 1.0,
                   acceleration_scale: float = 1.0, table_height_m: float | None = 0.05,
                   rest_velocity_tolerance_rad_s: float = 1e-3,
                   rest_acceleration_tolerance_rad_s2: float = 1e-2) -> ExcitationLimits:
        """The robot model's limits: position × ``safety_factor``, velocity × ``safety_factor`` ×
        ``velocity_scale``, acceleration × ``safety_factor`` × ``acceleration_scale``."""
        for name, value in (("safety_factor", safety_factor), ("velocity_scale", velocity_scale),
                            ("acceleration_scale", acceleration_scale)):
            if not 0 < value <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {value}")
        position = np.asarray(robot.position_limit_rad, float) * safety_factor
        return cls(
            position_lower_rad=-position,
            position_upper_rad=position,
            velocity_rad_s=np.asarray(robot.velocity_limit_rad_s, float) * safety_factor * velocity_scale,
            acceleration_rad_s2=np.asarray(robot.acceleration_limit_rad_s2, float) * safety_factor
            * acceleration_scale,
            table_height_m=table_height_m,
            rest_velocity_tolerance_rad_s=rest_velocity_tolerance_rad_s,
            rest_acceleration_tolerance_rad_s2=rest_acceleration_tolerance_rad_s2,
            description={"robot": robot.name, "safety_factor": safety_factor, "velocity_scale": velocity_scale,
                         "acceleration_scale": acceleration_scale},
        )

    def scaled(self, factor: float) -> ExcitationLimits:
        """Velocity and acceleration limits × ``factor``, positions shrunk towards their centre."""
        centre = 0.5 * (self.position_upper_rad + self.position_lower_rad)
        half = 0.5 * (self.position_upper_rad - self.position_lower_rad) * factor
        return ExcitationLimits(
            position_lower_rad=centre - half, position_upper_rad=centre + half,
            velocity_rad_s=self.velocity_rad_s * factor, acceleration_rad_s2=self.acceleration_rad_s2 * factor,
            table_height_m=self.table_height_m, rest_velocity_tolerance_rad_s=self.rest_velocity_tolerance_rad_s,
            rest_acceleration_tolerance_rad_s2=self.rest_acceleration_tolerance_rad_s2,
            description=dict(self.description, scaled_by=factor),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "position_lower_rad": self.position_lower_rad.tolist(),
            "position_upper_rad": self.position_upper_rad.tolist(),
            "velocity_rad_s": self.velocity_rad_s.tolist(),
            "acceleration_rad_s2": self.acceleration_rad_s2.tolist(),
            "table_height_m": self.table_height_m,
            "rest_velocity_tolerance_rad_s": self.rest_velocity_tolerance_rad_s,
            "rest_acceleration_tolerance_rad_s2": self.rest_acceleration_tolerance_rad_s2,
            **({"description": dict(self.description)} if self.description else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExcitationLimits:
        try:
            return cls(
                position_lower_rad=data["position_lower_rad"], position_upper_rad=data["position_upper_rad"],
                velocity_rad_s=data["velocity_rad_s"], acceleration_rad_s2=data["acceleration_rad_s2"],
                table_height_m=data.get("table_height_m", 0.05),
                rest_velocity_tolerance_rad_s=data.get("rest_velocity_tolerance_rad_s", 1e-3),
                rest_acceleration_tolerance_rad_s2=data.get("rest_acceleration_tolerance_rad_s2", 1e-2),
                description=dict(data.get("description") or {}),
            )
        except KeyError as exc:
            raise ValueError(f"limits block is missing the key {exc.args[0]!r}") from exc


def keep_out_points(robot: RobotModel) -> list[tuple[str, str, int]]:
    """The points kept above the table: (name, "joint"|"frame", pinocchio id) for every joint origin
    and the tool frame. Joint origins are named after the link each joint moves."""
    model = robot.model
    points: list[tuple[str, str, int]] = []
    for joint_id in range(1, model.njoints):
        # The body frame whose parent joint is this one names the link (e.g. "wrist_2_link").
        name = next((f.name for f in model.frames if f.parentJoint == joint_id and f.type == pin.FrameType.BODY),
                    model.names[joint_id])
        points.append((name, "joint", joint_id))
    points.append((robot.tool_frame, "frame", robot.tool_frame_id))
    return points


def keep_out_heights(robot: RobotModel, q_rad: np.ndarray, data: pin.Data | None = None
                     ) -> tuple[np.ndarray, list[str]]:
    """Heights z (m, base frame) of every keep-out point for each sample: (N, n_points) and the names."""
    q = np.atleast_2d(np.asarray(q_rad, float))
    model = robot.model
    data = data or model.createData()
    points = keep_out_points(robot)
    heights = np.empty((q.shape[0], len(points)))
    for k in range(q.shape[0]):
        pin.forwardKinematics(model, data, q[k])
        for i, (_, kind, idx) in enumerate(points):
            if kind == "joint":
                heights[k, i] = data.oMi[idx].translation[2]
            else:
                heights[k, i] = pin.updateFramePlacement(model, data, idx).translation[2]
    return heights, [p[0] for p in points]


@dataclass(frozen=True)
class CheckReport:
    """What a passed check measured: the largest fraction of each limit used, and the lowest point."""

    position_margin_rad: np.ndarray
    peak_velocity_rad_s: np.ndarray
    peak_acceleration_rad_s2: np.ndarray
    velocity_fraction: np.ndarray
    acceleration_fraction: np.ndarray
    lowest_height_m: float
    lowest_point: str
    duration_s: float
    #: the same peaks as fractions of the robot's own limits (the checked limits may be scaled down)
    velocity_fraction_of_robot: np.ndarray | None = None
    acceleration_fraction_of_robot: np.ndarray | None = None

    @staticmethod
    def _fraction(checked: np.ndarray, of_robot: np.ndarray | None) -> str:
        if of_robot is not None and abs(of_robot.max() - checked.max()) < 0.005:
            return f"max {checked.max():.0%} of the robot's limit"  # checked against the robot's own limits
        text = f"max {checked.max():.0%} of the limit checked"
        if of_robot is not None:  # a planning limit below the robot's (excite plan's safety factor)
            text += f", {of_robot.max():.0%} of the robot's"
        return text

    def summary(self) -> str:
        return (f"duration {self.duration_s:.2f} s; peak velocity {np.round(self.peak_velocity_rad_s, 3).tolist()} "
                f"rad/s ({self._fraction(self.velocity_fraction, self.velocity_fraction_of_robot)}); peak "
                f"acceleration {np.round(self.peak_acceleration_rad_s2, 3).tolist()} rad/s^2 "
                f"({self._fraction(self.acceleration_fraction, self.acceleration_fraction_of_robot)}); smallest "
                "position margin "
                f"{self.position_margin_rad.min():.3f} rad; lowest point {self.lowest_point} at "
                f"{self.lowest_height_m:.3f} m")


def _joint_names(trajectory: JointTrajectory, robot: RobotModel) -> tuple[str, ...]:
    """Joint names for messages: the file's if it has real ones (checked against the robot), else the robot's."""
    generic = tuple(f"joint{j + 1}" for j in range(trajectory.n_joints))
    if trajectory.joint_names == generic:
        return tuple(robot.joint_names)
    for mine, theirs in zip(trajectory.joint_names, robot.joint_names):
        if not (mine == theirs or mine.endswith(theirs) or theirs.endswith(mine)):  # allow a tf prefix
            raise ValueError(f"joint names of the trajectory {list(trajectory.joint_names)} do not match robot "
                             f"{robot.name!r} {list(robot.joint_names)} (same order required); plan for this robot "
                             "or fix joint_names in the file")
    return trajectory.joint_names


def _first_index(mask: np.ndarray) -> tuple[int, int] | None:
    """(sample, column) of the first True in a (N, m) mask, earliest sample then lowest column."""
    rows = np.flatnonzero(mask.any(axis=1))
    if rows.size == 0:
        return None
    k = int(rows[0])
    return k, int(np.flatnonzero(mask[k])[0])


def check_trajectory(
    trajectory: JointTrajectory,
    robot: RobotModel,
    limits: ExcitationLimits | None = None,
    *,
    require_rest: bool = True,
    require_zero_acceleration_at_ends: bool | None = None,
) -> CheckReport:
    """Raise :class:`TrajectoryLimitError` at the first problem of ``trajectory`` (see the module docstring).

    ``limits`` defaults to the robot model's limits (``ExcitationLimits.from_robot(robot)``).
    ``require_zero_acceleration_at_ends`` defaults to True for Fourier trajectories.
    Returns a :class:`CheckReport` when the trajectory passes.
    """
    limits = limits or ExcitationLimits.from_robot(robot)
    n = trajectory.n_joints
    if n != robot.n_joints or limits.n_joints != n:
        raise ValueError(f"trajectory has {n} joints, robot {robot.name!r} {robot.n_joints}, limits "
                         f"{limits.n_joints}: plan for this robot")
    if require_zero_acceleration_at_ends is None:
        require_zero_acceleration_at_ends = trajectory.kind == "fourier"
    names = _joint_names(trajectory, robot)
    t = trajectory.time_s
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2

    found: list[tuple[int, int, TrajectoryLimitError]] = []  # (sample, order, error)

    def add(quantity: str, k: int, error: TrajectoryLimitError) -> None:
        found.append((k, _QUANTITY_ORDER.index(quantity), error))

    # Time axis: finite and strictly increasing.
    bad_t = ~np.isfinite(t)
    bad_t[1:] |= ~(np.diff(t) > 0)
    if bad_t.any():
        k = int(np.flatnonzero(bad_t)[0])
        add("time", k, TrajectoryLimitError(quantity="time", time_s=t[k - 1] if k > 0 and np.isfinite(t[k - 1])
                                            else 0.0, joint="time", value=t[k], limit=float("nan")))
    if t.size > 1 and np.all(np.isfinite(t)):
        period = float(np.median(np.diff(t)))
        if period > 0 and 1.0 / period < MIN_RATE_HZ:
            add("rate", 0, TrajectoryLimitError(quantity="rate", time_s=t[0], joint="time", value=1.0 / period,
                                                limit=MIN_RATE_HZ))
    # Non-finite samples.
    for label, arr in (("position", q), ("velocity", qd), ("acceleration", qdd)):
        hit = _first_index(~np.isfinite(arr))
        if hit:
            k, j = hit
            add("non_finite", k, TrajectoryLimitError(quantity="non_finite", time_s=t[k], joint=names[j],
                                                      joint_index=j, value=arr[k, j], limit=float("nan"),
                                                      detail=label))
    finite = np.isfinite(q).all(axis=1) & np.isfinite(qd).all(axis=1) & np.isfinite(qdd).all(axis=1)

    eps = 1e-9
    with np.errstate(invalid="ignore"):
        hit = _first_index((q > limits.position_upper_rad + eps) | (q < limits.position_lower_rad - eps))
        if hit:
            k, j = hit
            bound = limits.position_upper_rad[j] if q[k, j] > 0.5 * (
                limits.position_upper_rad[j] + limits.position_lower_rad[j]) else limits.position_lower_rad[j]
            add("position", k, TrajectoryLimitError(
                quantity="position", time_s=t[k], joint=names[j], joint_index=j, value=q[k, j], limit=bound,
                detail=f"[{limits.position_lower_rad[j]:.4g}, {limits.position_upper_rad[j]:.4g}]"))
        for quantity, arr, lim in (("velocity", qd, limits.velocity_rad_s),
                                   ("acceleration", qdd, limits.acceleration_rad_s2)):
            hit = _first_index(np.abs(arr) > lim * (1 + eps) + eps)
            if hit:
                k, j = hit
                add(quantity, k, TrajectoryLimitError(quantity=quantity, time_s=t[k], joint=names[j], joint_index=j,
                                                       value=arr[k, j], limit=lim[j]))

    lowest_height, lowest_point = float("inf"), ""
    if finite.any():
        heights, point_names = keep_out_heights(robot, np.where(finite[:, None], q, 0.0))
        heights[~finite] = np.inf
        i_min = np.unravel_index(np.argmin(heights), heights.shape)
        lowest_height, lowest_point = float(heights[i_min]), point_names[i_min[1]]
        if limits.table_height_m is not None:
            hit = _first_index(heights < limits.table_height_m - eps)
            if hit:
                k = hit[0]
                i = int(np.argmin(heights[k]))  # name the lowest point at the first offending sample
                add("keep_out", k, TrajectoryLimitError(quantity="keep_out", time_s=t[k], joint=point_names[i],
                                                        value=heights[k, i], limit=limits.table_height_m))

    if require_rest:
        for quantity, k in (("start_rest", 0), ("end_rest", t.size - 1)):
            if not finite[k]:
                continue
            j_v = int(np.argmax(np.abs(qd[k])))
            if abs(qd[k, j_v]) > limits.rest_velocity_tolerance_rad_s:
                add(quantity, k, TrajectoryLimitError(
                    quantity=quantity, time_s=t[k], joint=names[j_v], joint_index=j_v, value=qd[k, j_v],
                    limit=limits.rest_velocity_tolerance_rad_s, detail="velocity (rad/s)"))
                continue
            if require_zero_acceleration_at_ends:
                j_a = int(np.argmax(np.abs(qdd[k])))
                if abs(qdd[k, j_a]) > limits.rest_acceleration_tolerance_rad_s2:
                    add(quantity, k, TrajectoryLimitError(
                        quantity=quantity, time_s=t[k], joint=names[j_a], joint_index=j_a, value=qdd[k, j_a],
                        limit=limits.rest_acceleration_tolerance_rad_s2, detail="acceleration (rad/s^2)"))

    if found:
        found.sort(key=lambda item: (item[0], item[1]))
        raise found[0][2]

    peak_v = np.max(np.abs(qd), axis=0)
    peak_a = np.max(np.abs(qdd), axis=0)
    margin = np.minimum(limits.position_upper_rad - q.max(axis=0), q.min(axis=0) - limits.position_lower_rad)
    return CheckReport(
        position_margin_rad=margin, peak_velocity_rad_s=peak_v, peak_acceleration_rad_s2=peak_a,
        velocity_fraction=peak_v / limits.velocity_rad_s, acceleration_fraction=peak_a / limits.acceleration_rad_s2,
        lowest_height_m=lowest_height, lowest_point=lowest_point, duration_s=trajectory.duration_s,
        velocity_fraction_of_robot=peak_v / np.asarray(robot.velocity_limit_rad_s, float),
        acceleration_fraction_of_robot=peak_a / np.asarray(robot.acceleration_limit_rad_s2, float),
    )
