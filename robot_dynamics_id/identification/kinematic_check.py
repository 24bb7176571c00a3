"""Does the recorded TCP pose fit ``--robot``'s kinematics? A check the joint torques cannot make.

Two URs of one family (a UR3 and a UR3e: d4 differs by 18.7 mm, d6 by 10.3 mm;
ur.md) hold nearly the same torques at the same joint angles, and a joint-space
identification absorbs such offsets into its base parameters, so the torque
checks (identification/data_checks.py) cannot tell them apart. The controller's
Cartesian kinematics, the payload's frame and every exported model can.

A UR controller reports ``actual_TCP_pose`` (x, y, z in m; rotation vector in
rad; its base frame) computed with the arm's own calibrated kinematics and the
TCP offset set on the pendant. With the right nominal kinematics, for every
sample k::

    p_meas_k = R_b (p_k + R_k t) + p_b

where (R_k, p_k) is the flange (tool0) pose of ``robot`` at q_k, t the constant
TCP offset in the flange frame and (R_b, p_b) a constant base placement: R_b is
one of the two base conventions in use (UR's ``base`` and ROS's ``base_link``,
a half turn about z apart), p_b absorbs a small calibration shift. Linear least
squares in (p_b, t) per convention; the better convention's rms position residual
is the robot's. The factory calibration moves the TCP by a mm or two
(:data:`RESIDUAL_OK_M`). How much the twins differ depends on the motion: d4 is
along the shoulder axis, so it shows only as far as the base joint turns (an
excitation's motion: several mm; a wrist-only run: nothing). Every built-in UR
is fitted alike: when ``robot`` does not fit and another does
:data:`OTHER_BETTER_FACTOR` times better, the data are that robot's; when none
fits and the residual exceeds :data:`NO_FIT_M`, the kinematics are not a
built-in UR's (or the pose was recorded in another frame). Both are warnings:
the joint-space model is not harmed, what uses Cartesian kinematics is.
"""

from __future__ import annotations

import numpy as np

from ..robots.description import ROBOT_NAMES
from ..robots.model import RobotModel, load_robot

__all__ = ["NO_FIT_M", "OTHER_BETTER_FACTOR", "OTHER_FIT_M", "RESIDUAL_OK_M", "check_tcp_pose_fits_robot",
           "tcp_pose_residual_m"]

#: rms TCP position residual (m) within which a robot's nominal kinematics fit a recorded pose (a factory
#: calibration moves a real arm's TCP by about this much: ur.md); another robot must also fit 3x better, so a
#: calibration a little larger than this never names another robot
RESIDUAL_OK_M = 0.002
#: another robot "fits instead" when its residual is this many times smaller and within OTHER_FIT_M
OTHER_BETTER_FACTOR = 3.0
#: the largest residual (m) with which another robot can "fit instead": a calibration larger than RESIDUAL_OK_M
#: leaves the right robot a few mm (2.3 mm in a simulated one) while its twin leaves 3.5-10 mm, never a third of it
OTHER_FIT_M = 0.005
#: with no built-in UR fitting, a residual above this (m) says the kinematics are not ``robot``'s: well above
#: what any calibration moves, so an arm far off its nominal kinematics is not flagged by mistake
NO_FIT_M = 0.02
#: samples used (evenly spread over the recording): the poses, not their number, carry the information
MAX_SAMPLES = 1500
#: UR's base frame and ROS's base_link: a half turn about z apart
_BASE_ROTATIONS = (np.eye(3), np.diag([-1.0, -1.0, 1.0]))


def tcp_pose_residual_m(robot: RobotModel, q_rad, tcp_position_m) -> float:
    """RMS position residual (m) of recorded TCP positions (N, 3) against ``robot``'s kinematics at ``q_rad``
    (N, n), with the TCP offset and the base placement fitted (module docstring)."""
    q, measured = np.asarray(q_rad, float), np.asarray(tcp_position_m, float)
    rotations, positions = robot.tool_poses(q)
    best = np.inf
    for base in _BASE_ROTATIONS:
        # p_meas - R_b p_k = p_b + (R_b R_k) t: 3 rows per sample, unknowns (p_b, t)
        a = np.concatenate([np.broadcast_to(np.eye(3), rotations.shape), base @ rotations], axis=2).reshape(-1, 6)
        b = (measured - positions @ base.T).reshape(-1)
        solution = np.linalg.lstsq(a, b, rcond=None)[0]
        best = min(best, float(np.sqrt(np.mean(np.sum((b - a @ solution).reshape(-1, 3) ** 2, axis=1)))))
    return best


def check_tcp_pose_fits_robot(robot: RobotModel, q_rad, tcp_pose, *, robot_label: str,
                              robot_fix: str) -> tuple[list[str], dict]:
    """(warnings, summary) of the recorded TCP pose (N, 6) against ``robot`` and every built-in UR.

    ``robot_fix``: what to do when another robot fits, with ``{robot}`` for its name (as the torque check's).
    Samples with a non-finite pose are left out; fewer than 20 left: no check (summary says why)."""
    q, pose = np.asarray(q_rad, float), np.asarray(tcp_pose, float)
    ok = np.all(np.isfinite(pose), axis=1) & np.all(np.isfinite(q), axis=1)
    if ok.sum() < 20:
        return [], {"checked": False, "reason": "fewer than 20 finite TCP poses"}
    index = np.flatnonzero(ok)
    index = index[np.linspace(0, index.size - 1, min(MAX_SAMPLES, index.size)).round().astype(int)]
    q, position = q[index], pose[index, :3]
    own = tcp_pose_residual_m(robot, q, position)
    others = {name: tcp_pose_residual_m(load_robot(name), q, position) for name in ROBOT_NAMES
              if load_robot(name).n_joints == robot.n_joints and name != robot.name}
    summary = {"checked": True, "samples": int(index.size), "residual_rms_mm": round(own * 1000, 3),
               "other_robots_residual_rms_mm": {k: round(v * 1000, 3) for k, v in others.items()}}
    if own <= RESIDUAL_OK_M:
        return [], summary
    better = sorted((v, k) for k, v in others.items() if v <= OTHER_FIT_M and v * OTHER_BETTER_FACTOR <= own)
    summary["wrong_arm"] = bool(better) and own > NO_FIT_M  # more than a twin: the result is doubtful (job.py)
    if better:
        residual, name = better[0]
        summary["fits_other_robot"] = name
        why = ("Joint torques hardly tell a UR from its e-Series twin; everything Cartesian does (controller, "
               "payload frame, exported model)" if own <= NO_FIT_M else
               "The arms differ by far more than a calibration: the joint-space model is of the wrong arm too")
        return [f"The recorded TCP pose does not fit {robot_label}'s kinematics (rms {own * 1000:.1f} mm with the "
                f"TCP offset fitted) but fits {name}'s ({residual * 1000:.1f} mm): the data look like a {name}'s. "
                f"{why}. {robot_fix.format(robot=name)}"], summary
    if own <= NO_FIT_M:
        return [], summary
    return [f"The recorded TCP pose does not fit {robot_label}'s kinematics (rms {own * 1000:.1f} mm with the TCP "
            f"offset fitted; no built-in UR fits better): a robot with other kinematics (give its URDF as --robot), "
            "or a pose recorded in another frame"], summary
