"""A point-to-point run with stops: the validation motion an identified model meets in a lab's own programs.

Random waypoints around a centre pose, joined by quintic rest-to-rest moves
(:func:`~robot_dynamics_id.excitation.trajectory.approach_trajectory`: every moving
joint on one minimum-jerk profile, within a fraction of the velocity and
acceleration limits), with a hold at every waypoint. Each move moves a random
subset of the joints (each with probability ``move_probability``), so joints start
from rest in either direction while others stand still, and a joint often stays at
rest for several moves — the motions where friction at standstill, breakaway and
presliding show. Every move is checked against the limits and the table keep-out
(excitation/checker.py) and a refused waypoint is drawn again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..robots.model import RobotModel
from .checker import ExcitationLimits, TrajectoryLimitError, check_trajectory
from .trajectory import JointTrajectory, approach_trajectory, concatenate_trajectories

__all__ = ["DEFAULT_CENTRE_RAD", "PointToPointSettings", "point_to_point_trajectory"]

#: Default centre pose: upper arm raised, elbow bent, the tool well above the table (rad).
DEFAULT_CENTRE_RAD = (0.0, -1.57, 1.0, -1.0, 1.0, 0.0)


@dataclass(frozen=True, kw_only=True)
class PointToPointSettings:
    """Parameters of :func:`point_to_point_trajectory` (keyword-only; rad, rad/s, rad/s², s).

    ``centre_rad``: default :data:`DEFAULT_CENTRE_RAD`; ``range_rad``: half-width of the waypoint box
    around it per joint (scalar or n);
    ``velocity_fraction``/``acceleration_fraction``: of the robot's limits, for every move;
    ``hold_s``: (min, max) of the uniformly drawn hold at each waypoint.
    """

    duration_s: float = 40.0
    centre_rad: tuple[float, ...] | None = None
    range_rad: float | tuple[float, ...] = 0.8
    velocity_fraction: float = 0.3
    acceleration_fraction: float = 0.2
    hold_s: tuple[float, float] = (0.3, 1.5)
    move_probability: float = 0.6
    seed: int = 0
    max_attempts: int = 200

    def __post_init__(self) -> None:
        if not self.duration_s > 0:
            raise ValueError(f"duration_s must be > 0, got {self.duration_s}")
        for name in ("velocity_fraction", "acceleration_fraction", "move_probability"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.hold_s[0] <= self.hold_s[1]:
            raise ValueError(f"hold_s must be (min, max) with 0 <= min <= max, got {self.hold_s}")


def point_to_point_trajectory(robot: RobotModel, settings: PointToPointSettings | None = None, *,
                              rate_hz: float = 500.0, limits: ExcitationLimits | None = None) -> JointTrajectory:
    """Waypoints, moves and holds within ``settings.duration_s`` (module doc; no waypoint is added whose move, hold
    and return would end after it); starts and ends at rest at the centre.

    Raises ValueError when no admissible waypoint is found in ``max_attempts`` draws (the box or
    the centre pose leaves the limits or the keep-out: choose another centre or a smaller range), or when
    not even the first waypoint's move, hold and return fit in ``duration_s``.
    """
    s = settings or PointToPointSettings()
    n = robot.n_joints
    limits = limits or ExcitationLimits.from_robot(robot)
    centre = np.asarray(DEFAULT_CENTRE_RAD[:n] if s.centre_rad is None else s.centre_rad, float)
    if centre.shape != (n,):
        raise ValueError(f"centre_rad needs {n} joint angles, got {s.centre_rad}")
    half = np.broadcast_to(np.asarray(s.range_rad, float), (n,))
    v_max = np.asarray(limits.velocity_rad_s, float) * s.velocity_fraction
    a_max = np.asarray(limits.acceleration_rad_s2, float) * s.acceleration_fraction
    rng = np.random.default_rng(s.seed)

    def hold(q: np.ndarray, seconds: float) -> JointTrajectory:
        steps = max(int(round(seconds * rate_hz)), 1)
        t = np.arange(steps + 1) / rate_hz
        zeros = np.zeros((t.size, n))
        return JointTrajectory(time_s=t, position_rad=np.tile(q, (t.size, 1)), velocity_rad_s=zeros,
                               acceleration_rad_s2=zeros, joint_names=robot.joint_names)

    def move(q0: np.ndarray, q1: np.ndarray) -> JointTrajectory:
        return approach_trajectory(q0, q1, velocity_limit_rad_s=v_max, acceleration_limit_rad_s2=a_max,
                                   rate_hz=rate_hz, joint_names=robot.joint_names)

    pieces = [hold(centre, s.hold_s[0] or 1.0 / rate_hz)]
    q = centre.copy()
    elapsed = 2 * pieces[0].duration_s  # the first hold, and the same hold at the end
    while True:
        for _ in range(s.max_attempts):
            moving = rng.random(n) < s.move_probability
            if not moving.any():
                moving[rng.integers(n)] = True
            target = np.where(moving, centre + rng.uniform(-half, half), q)
            piece = move(q, target)
            try:
                check_trajectory(piece, robot, limits)
            except TrajectoryLimitError:
                continue
            break
        else:
            raise ValueError(f"no admissible waypoint in {s.max_attempts} draws around {centre.tolist()} "
                             f"(range {half.tolist()} rad): choose another centre_rad or a smaller range_rad")
        dwell = hold(target, rng.uniform(*s.hold_s))
        # the run ends by ``duration_s``: a waypoint whose move, hold and return do not fit ends the draws
        needed = piece.duration_s + dwell.duration_s + move(target, centre).duration_s
        if elapsed + needed > s.duration_s:
            break
        pieces += [piece, dwell]
        q = target
        elapsed += piece.duration_s + dwell.duration_s
    if len(pieces) == 1:
        raise ValueError(f"duration_s {s.duration_s:g} s is too short for one move, hold and return (the first "
                         f"drawn needs {elapsed + needed:.1f} s): give a longer duration or a smaller range_rad")
    back = move(q, centre)
    pieces += [back, hold(centre, s.hold_s[0] or 1.0 / rate_hz)]
    trajectory = concatenate_trajectories(pieces)
    return JointTrajectory(time_s=trajectory.time_s, position_rad=trajectory.position_rad,
                           velocity_rad_s=trajectory.velocity_rad_s, acceleration_rad_s2=trajectory.acceleration_rad_s2,
                           joint_names=robot.joint_names, kind="samples",
                           robot=robot.description.name if robot.description is not None else None,
                           metadata={"generator": "point to point with stops", "seed": int(s.seed),
                                     "waypoints": (len(pieces) - 3) // 2})  # drawn: not the start, nor the return
