"""trajectory_msgs/JointTrajectory <-> arrays, with the joint names checked (used by ur_interface and excitation).

The official UR driver's controllers name joints ``<tf_prefix>shoulder_pan_joint``
and so on; a trajectory may list them in any order. Names that match only once a
prefix is added or removed are refused with the parameter that fixes it, never
mapped silently.
"""

from __future__ import annotations

from array import array

import numpy as np
from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..hardware.trajectory_tracking import TrajectoryGoal, TrajectoryGoalError

__all__ = ["TRAJECTORY_TOPIC", "goal_from_message", "joint_order", "message_from_arrays"]

#: The official UR driver's trajectory controller listens here too.
TRAJECTORY_TOPIC = "/scaled_joint_trajectory_controller/joint_trajectory"


def _prefix_hint(given: list[str], expected: list[str]) -> str:
    for g in given:
        for e in expected:
            if g != e and g.endswith(e):
                return f" (they carry the prefix {g[:-len(e)]!r}: set tf_prefix to it)"
            if g != e and e.endswith(g):
                return f" (this side expects the prefix {e[:-len(g)]!r}: set tf_prefix to match the sender)"
    return ""


def joint_order(given, expected) -> np.ndarray:
    """Index array ``idx`` with ``given[idx[j]] == expected[j]``; raises TrajectoryGoalError naming the mismatch."""
    given, expected = list(given), list(expected)
    if sorted(given) != sorted(expected) or len(set(given)) != len(given):
        raise TrajectoryGoalError(f"the trajectory names joints {given}, the robot's are {expected}"
                                  + _prefix_hint(given, expected))
    return np.array([given.index(name) for name in expected])


def goal_from_message(msg: JointTrajectory, joint_names) -> TrajectoryGoal:
    """The goal in the robot's joint order; raises TrajectoryGoalError (empty message: the caller's cancel)."""
    if not msg.points:
        raise TrajectoryGoalError("the trajectory has no points")
    if msg.header.stamp.sec or msg.header.stamp.nanosec:
        raise TrajectoryGoalError("header.stamp is set: a delayed start is not supported; leave it 0 to start "
                                  "at once")
    order = joint_order(msg.joint_names, joint_names)
    n = len(order)

    def field(name: str) -> np.ndarray | None:
        rows = [getattr(p, name) for p in msg.points]
        sizes = {len(r) for r in rows}
        if sizes == {0}:
            return None
        if sizes != {n}:
            raise TrajectoryGoalError(f"every point must have {n} {name} or none; sizes found: {sorted(sizes)}")
        return np.asarray(rows, float)[:, order]

    t = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
    q = field("positions")
    if q is None:
        raise TrajectoryGoalError("the trajectory's points have no positions")
    return TrajectoryGoal(t, q, field("velocities"), field("accelerations"))


def message_from_arrays(time_s, position_rad, velocity_rad_s, acceleration_rad_s2, joint_names) -> JointTrajectory:
    """A JointTrajectory (header stamp 0: start on receipt) with one point per row."""
    msg = JointTrajectory()
    msg.joint_names = list(joint_names)
    points = []
    for t, q, qd, qdd in zip(np.asarray(time_s, float), position_rad, velocity_rad_s, acceleration_rad_s2):
        sec, nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)
        point = JointTrajectoryPoint()
        point.positions = array("d", q)
        point.velocities = array("d", qd)
        point.accelerations = array("d", qdd)
        point.time_from_start = Duration(sec=sec, nanosec=nanosec)
        points.append(point)
    msg.points = points
    return msg
