"""The safety checker refuses each kind of violation and names the first one correctly."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.excitation.checker import (
    ExcitationLimits,
    TrajectoryLimitError,
    check_trajectory,
    keep_out_heights,
)
from robot_dynamics_id.excitation.fourier import FourierTrajectory
from robot_dynamics_id.excitation.prbs import UR_HOME_POSITION_RAD
from robot_dynamics_id.excitation.trajectory import JointTrajectory
from robot_dynamics_id.robots import load_robot


@pytest.fixture(scope="module")
def robot():
    return load_robot("ur3")


@pytest.fixture(scope="module")
def valid(robot):
    rng = np.random.default_rng(0)
    f = FourierTrajectory.from_free_coefficients(
        period_s=5.0, offset_rad=np.array(UR_HOME_POSITION_RAD), a_free_rad_s=rng.normal(0, 0.1, (6, 3)),
        b_free_rad_s=rng.normal(0, 0.1, (6, 3)), n_periods=1)
    return f.to_trajectory(rate_hz=125.0, joint_names=robot.joint_names)


def _planted(traj, kind=None, **changes):
    arrays = {"position_rad": traj.position_rad, "velocity_rad_s": traj.velocity_rad_s,
              "acceleration_rad_s2": traj.acceleration_rad_s2}
    arrays = {k: np.array(v) for k, v in arrays.items()}
    for key, (k, j, value) in changes.items():
        arrays[key][k, j] = value
    return JointTrajectory(time_s=traj.time_s, joint_names=traj.joint_names, kind=kind or traj.kind, **arrays)


def test_valid_trajectory_passes_with_a_report(robot, valid):
    report = check_trajectory(valid, robot)
    assert report.velocity_fraction.max() < 1 and report.acceleration_fraction.max() < 1
    assert report.lowest_height_m >= 0.05
    assert "peak velocity" in report.summary()
    assert issubclass(TrajectoryLimitError, ValueError)


def test_position_violation(robot, valid):
    limits = ExcitationLimits.from_robot(robot, safety_factor=0.5)  # ±pi
    bad = _planted(valid, position_rad=(slice(300, 320), 2, 3.3))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot, limits)
    err = info.value
    assert (err.quantity, err.joint, err.joint_index) == ("position", "elbow_joint", 2)
    assert err.time_s == pytest.approx(valid.time_s[300])
    assert err.value == pytest.approx(3.3) and err.limit == pytest.approx(np.pi)
    assert "elbow_joint" in str(err) and "t = 2.4000 s" in str(err)


def test_velocity_violation(robot, valid):
    bad = _planted(valid, velocity_rad_s=(200, 3, -7.0))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot)
    err = info.value
    assert (err.quantity, err.joint) == ("velocity", "wrist_1_joint")
    assert err.time_s == pytest.approx(1.6) and err.value == -7.0 and err.limit == pytest.approx(2 * np.pi)


def test_acceleration_violation_with_velocity_scale_untouched(robot, valid):
    limits = ExcitationLimits.from_robot(robot, acceleration_scale=0.5)
    bad = _planted(valid, acceleration_rad_s2=(111, 0, 5.5))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot, limits)
    err = info.value
    assert (err.quantity, err.joint, err.value, err.limit) == ("acceleration", "shoulder_pan_joint", 5.5, 5.0)
    assert err.time_s == pytest.approx(valid.time_s[111])


def test_keep_out_violation_names_the_lowest_point(robot, valid):
    low_pose = np.array([0.0, 0.1, 0.0, 0.5, 1.0, 0.0])  # arm just below horizontal, wrist bent down
    q = np.array(valid.position_rad)
    q[250:260] = low_pose
    bad = JointTrajectory(time_s=valid.time_s, position_rad=q, velocity_rad_s=valid.velocity_rad_s,
                          acceleration_rad_s2=valid.acceleration_rad_s2, joint_names=valid.joint_names)
    # Independent forward kinematics of the body frames and tool0.
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, low_pose)
    names = ["shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link", "wrist_2_link", "wrist_3_link",
             "tool0"]
    heights = {n: data.oMf[robot.model.getFrameId(n)].translation[2] for n in names}
    lowest = min(heights, key=heights.get)
    # The flange (tool0) and the wrist-3 joint origin coincide in this model: accept either name.
    tied = {n for n, h in heights.items() if h < heights[lowest] + 1e-9}
    assert heights[lowest] < 0.1 and heights["wrist_1_link"] > 0.1
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot, ExcitationLimits.from_robot(robot, table_height_m=0.1))
    err = info.value
    assert err.quantity == "keep_out" and err.joint in tied
    assert err.value == pytest.approx(heights[lowest]) and err.limit == 0.1
    assert err.time_s == pytest.approx(valid.time_s[250])
    # The same trajectory passes with the keep-out disabled.
    check_trajectory(bad, robot, ExcitationLimits.from_robot(robot, table_height_m=None))
    h, point_names = keep_out_heights(robot, low_pose)
    assert point_names[-1] == "tool0" and h.min() == pytest.approx(heights[lowest])


def test_nan_sample(robot, valid):
    bad = _planted(valid, position_rad=(400, 4, np.nan))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot)
    err = info.value
    assert (err.quantity, err.joint) == ("non_finite", "wrist_2_joint")
    assert err.time_s == pytest.approx(valid.time_s[400]) and np.isnan(err.value)
    bad = _planted(valid, acceleration_rad_s2=(10, 1, np.inf))
    with pytest.raises(TrajectoryLimitError, match="non_finite violation at t = 0.0800 s, shoulder_lift_joint"):
        check_trajectory(bad, robot)


def test_the_earliest_violation_is_reported(robot, valid):
    bad = _planted(valid, acceleration_rad_s2=(300, 0, 50.0), velocity_rad_s=(200, 5, 9.0))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot)
    assert (info.value.quantity, info.value.joint) == ("velocity", "wrist_3_joint")


def test_start_and_end_not_at_rest(robot, valid):
    moving = _planted(valid, kind="samples", velocity_rad_s=(0, 1, 0.2))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(moving, robot)
    assert (info.value.quantity, info.value.joint, info.value.time_s) == ("start_rest", "shoulder_lift_joint", 0.0)
    check_trajectory(moving, robot, require_rest=False)
    # Fourier trajectories must also end with zero acceleration.
    jerky = _planted(valid, acceleration_rad_s2=(-1, 2, 0.5))
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(jerky, robot)
    assert (info.value.quantity, info.value.joint) == ("end_rest", "elbow_joint")
    check_trajectory(_planted(jerky, kind="samples"), robot)  # a sampled file only needs zero velocity


def test_time_axis_and_shape_errors(robot, valid):
    t = np.array(valid.time_s)
    t[50] = t[49]
    bad = JointTrajectory(time_s=t, position_rad=valid.position_rad, velocity_rad_s=valid.velocity_rad_s,
                          acceleration_rad_s2=valid.acceleration_rad_s2)
    with pytest.raises(TrajectoryLimitError) as info:
        check_trajectory(bad, robot)
    assert info.value.quantity == "time"
    short = JointTrajectory(time_s=t[:3], position_rad=np.zeros((3, 5)), velocity_rad_s=np.zeros((3, 5)),
                            acceleration_rad_s2=np.zeros((3, 5)))
    with pytest.raises(ValueError, match="5 joints"):
        check_trajectory(short, robot)


def test_limits_round_trip_and_validation(robot):
    limits = ExcitationLimits.from_robot(robot, safety_factor=0.8, velocity_scale=0.5, table_height_m=0.02)
    again = ExcitationLimits.from_dict(limits.to_dict())
    assert np.array_equal(again.velocity_rad_s, limits.velocity_rad_s) and again.table_height_m == 0.02
    assert np.allclose(limits.velocity_rad_s, robot.velocity_limit_rad_s * 0.4)
    with pytest.raises(ValueError, match="safety_factor"):
        ExcitationLimits.from_robot(robot, safety_factor=1.5)
