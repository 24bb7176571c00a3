"""The TCP-pose check: a UR and its e-Series twin (UR3/UR3e) hold nearly the same torques; their kinematics differ."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_dynamics_id.identification.kinematic_check import check_tcp_pose_fits_robot, tcp_pose_residual_m
from robot_dynamics_id.robots.description import get_robot
from robot_dynamics_id.robots.model import load_robot

T = np.linspace(0.0, 30.0, 1500)
#: an excitation-like motion of every joint, base included (a base at rest hides a d4 error in the base shift)
Q = np.column_stack([0.8 * np.sin(2 * np.pi * 0.05 * (j + 1) * T + j) for j in range(6)]) \
    + np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])


def _pose(robot, *, tcp_offset_m=(0.0, 0.0, 0.0), base_half_turn=False):
    """actual_TCP_pose as a UR controller reports it: flange pose x the pendant's TCP offset."""
    rotations, positions = robot.tool_poses(Q)
    positions = positions + np.einsum("kij,j->ki", rotations, tcp_offset_m)
    if base_half_turn:  # ROS base_link instead of UR's base frame
        flip = np.diag([-1.0, -1.0, 1.0])
        rotations, positions = flip @ rotations, positions @ flip.T
    return np.hstack([positions, Rotation.from_matrix(rotations).as_rotvec()])


def _calibrated(name, seed):
    """A real arm's factory calibration: its DH a few tenths of a mm and mrad off the nominal."""
    rng = np.random.default_rng(seed)
    d = get_robot(name)
    return load_robot(replace(d, dh_a_m=d.dh_a_m + rng.normal(0, 1e-3, 6), dh_d_m=d.dh_d_m + rng.normal(0, 1e-3, 6),
                              dh_alpha_rad=d.dh_alpha_rad + rng.normal(0, 1e-3, 6)))


@pytest.mark.parametrize("true, claimed, seed", [
    ("ur3e", "ur3", 1), ("ur3", "ur3e", 1), ("ur10", "ur10e", 1), ("ur16e", "ur10e", 1), ("ur5", "ur5e", 1),
    # a calibration that leaves the right arm 2.3 mm (above RESIDUAL_OK_M): the twin still fits it 3x better
    ("ur3e", "ur3", 3), ("ur16e", "ur10e", 3)])
def test_a_twin_with_other_kinematics_is_named(true, claimed, seed):
    warnings, summary = check_tcp_pose_fits_robot(load_robot(claimed), Q, _pose(_calibrated(true, seed)),
                                                  robot_label=f"--robot {claimed}", robot_fix="pass --robot {robot}")
    assert summary["fits_other_robot"] == true and summary["residual_rms_mm"] > 3.0, summary
    assert len(warnings) == 1 and f"but fits {true}'s" in warnings[0] and f"pass --robot {true}" in warnings[0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_right_robot_passes_with_calibration_tcp_offset_and_either_base_frame(seed):
    robot = load_robot("ur3e")
    pose = _pose(_calibrated("ur3e", seed), tcp_offset_m=(0.01, -0.02, 0.15), base_half_turn=seed == 2)
    warnings, summary = check_tcp_pose_fits_robot(robot, Q, pose, robot_label="ur3e", robot_fix="{robot}")
    assert warnings == [] and summary["residual_rms_mm"] < 3.0
    assert tcp_pose_residual_m(robot, Q, _pose(robot)[:, :3]) < 1e-9  # the nominal arm itself: exact


def test_kinematics_no_built_in_ur_has_are_named_and_too_few_poses_are_not_checked():
    d = get_robot("ur5e")
    custom = load_robot(replace(d, dh_a_m=d.dh_a_m * [1, 1.2, 1.2, 1, 1, 1]))  # 20 % longer arm links
    warnings, summary = check_tcp_pose_fits_robot(load_robot("ur5e"), Q, _pose(custom), robot_label="ur5e",
                                                  robot_fix="{robot}")
    assert "no built-in UR fits better" in warnings[0] and "fits_other_robot" not in summary
    pose = _pose(load_robot("ur3e"))
    pose[19:] = np.nan  # 19 left
    assert check_tcp_pose_fits_robot(load_robot("ur3"), Q, pose, robot_label="ur3", robot_fix="{robot}") == (
        [], {"checked": False, "reason": "fewer than 20 finite TCP poses"})


def test_drive_gain_runs_of_another_arm_a_twin_included_are_doubtful():
    from types import SimpleNamespace

    from robot_dynamics_id.identification.drive_gain_job import _kinematic_problems

    runs = [SimpleNamespace(q_rad=Q, tcp_pose=_pose(load_robot("ur16e"))), SimpleNamespace(q_rad=Q, tcp_pose=None)]
    warnings: list[str] = []
    problems = _kinematic_problems(load_robot("ur10e"), runs, ("empty.csv", "loaded_bag"), warnings)
    assert problems == ["empty.csv: the recorded TCP pose is ur16e's, not ur10e's (see the warning): pass --robot "
                        "ur16e"]
    assert len(warnings) == 1 and warnings[0].startswith("empty.csv: The recorded TCP pose does not fit --robot ur10e")
    twin: list[str] = []  # its other lever arms scale the gains (a UR3e's runs as ur3: base gain -12 %)
    assert _kinematic_problems(load_robot("ur3"), [SimpleNamespace(q_rad=Q, tcp_pose=_pose(load_robot("ur3e")))],
                               ("twin.csv",), twin) == ["twin.csv: the recorded TCP pose is ur3e's, not ur3's (see "
                                                        "the warning): pass --robot ur3e"]
    assert len(twin) == 1 and "fits ur3e's" in twin[0]
    right: list[str] = []
    assert _kinematic_problems(load_robot("ur3e"), [SimpleNamespace(q_rad=Q, tcp_pose=_pose(load_robot("ur3e")))],
                               ("right.csv",), right) == [] and right == []
