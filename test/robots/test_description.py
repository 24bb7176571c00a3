"""The generated UR models reproduce the published DH kinematics and masses (ur.md)."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.robots import (
    JOINT_NAMES, ROBOT_NAMES, dh_forward_kinematics, dh_link_frames, get_robot, load_robot,
)

PUBLISHED_MASSES = {
    "ur3": (2.0, 3.42, 1.26, 0.8, 0.8, 0.35),
    "ur3e": (1.98, 3.4445, 1.437, 0.871, 0.805, 0.261),
    "ur5e": (3.761, 8.058, 2.846, 1.37, 1.3, 0.365),
    "ur10e": (7.369, 13.051, 3.989, 2.1, 1.98, 0.615),
}
PUBLISHED_D1_A2 = {"ur3": (0.1519, -0.24365), "ur3e": (0.15185, -0.24355),
                   "ur5e": (0.1625, -0.425), "ur10e": (0.1807, -0.6127)}


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_pinocchio_tool0_matches_dh_forward_kinematics(name):
    robot = load_robot(name)
    data = robot.new_data()
    rng = np.random.default_rng(0)
    worst_pos = worst_rot = 0.0
    for _ in range(1000):
        q = rng.uniform(-np.pi, np.pi, 6)
        pin.framesForwardKinematics(robot.model, data, q)
        pose = data.oMf[robot.tool_frame_id].homogeneous
        reference = dh_forward_kinematics(robot.description, q)
        worst_pos = max(worst_pos, np.abs(pose[:3, 3] - reference[:3, 3]).max())
        worst_rot = max(worst_rot, np.abs(pose[:3, :3] - reference[:3, :3]).max())
    assert worst_pos <= 1e-9
    assert worst_rot <= 1e-9


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_models_carry_published_masses_and_dh(name):
    robot = load_robot(name)
    masses = [robot.model.inertias[i].mass for i in range(1, 7)]
    np.testing.assert_allclose(masses, PUBLISHED_MASSES[name], rtol=0, atol=1e-12)
    d1, a2 = PUBLISHED_D1_A2[name]
    assert robot.description.dh_d_m[0] == d1 and robot.description.dh_a_m[1] == a2
    assert robot.joint_names == JOINT_NAMES


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_centres_of_mass_sit_where_the_dh_frames_put_them(name):
    robot = load_robot(name)
    data = robot.new_data()
    q = np.random.default_rng(1).uniform(-np.pi, np.pi, 6)
    pin.forwardKinematics(robot.model, data, q)
    frames = dh_link_frames(robot.description, q)
    for i in range(6):
        com_world = data.oMi[i + 1].act(robot.model.inertias[i + 1].lever)
        expected = frames[i][:3, :3] @ robot.description.link_com_m[i] + frames[i][:3, 3]
        np.testing.assert_allclose(com_world, expected, atol=1e-9)


def test_custom_urdf_path_is_accepted_like_a_name(tmp_path):
    path = tmp_path / "my_ur3.urdf"
    path.write_text(load_robot("ur3").urdf)
    custom = load_robot(str(path))
    assert custom.description is None
    assert custom.joint_names == JOINT_NAMES
    np.testing.assert_allclose(custom.torque_limit_nm, get_robot("ur3").torque_limit_nm)
    q = np.linspace(-1, 1, 6)
    a, b = custom.new_data(), load_robot("ur3").new_data()
    pin.framesForwardKinematics(custom.model, a, q)
    pin.framesForwardKinematics(load_robot("ur3").model, b, q)
    np.testing.assert_allclose(a.oMf[custom.tool_frame_id].homogeneous, b.oMf[custom.tool_frame_id].homogeneous)


def test_unknown_robot_and_missing_file_name_the_problem(tmp_path):
    with pytest.raises(ValueError, match="unknown robot 'ur4'.*ur3, ur3e, ur5e, ur10e"):
        load_robot("ur4")
    with pytest.raises(FileNotFoundError, match="neither a known robot"):
        load_robot(str(tmp_path / "missing.urdf"))
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/>")
    with pytest.raises(ValueError, match="cannot parse URDF"):
        load_robot(str(bad))


def test_limits_are_the_published_ones():
    ur3 = get_robot("ur3")
    np.testing.assert_allclose(ur3.torque_limit_nm, [56, 56, 28, 12, 12, 12])
    np.testing.assert_allclose(np.degrees(ur3.velocity_limit_rad_s), [180, 180, 180, 360, 360, 360])
    assert ur3.control_rate_hz == 125.0 and get_robot("ur3e").control_rate_hz == 500.0
