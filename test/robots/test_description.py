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
    # Universal_Robots_ROS2_Description config/<robot>/physical_parameters.yaml
    "ur5": (3.7, 8.393, 2.33, 1.219, 1.219, 0.1879),
    "ur10": (7.1, 12.7, 4.27, 2.0, 2.0, 0.365),
    "ur16e": (7.369, 10.45, 4.321, 2.18, 2.033, 0.907),
}
PUBLISHED_D1_A2 = {"ur3": (0.1519, -0.24365), "ur3e": (0.15185, -0.24355),
                   "ur5e": (0.1625, -0.425), "ur10e": (0.1807, -0.6127),
                   "ur5": (0.089159, -0.425), "ur10": (0.1273, -0.612), "ur16e": (0.1807, -0.4784)}
#: the same file's centres of mass, in its URDF link frames (shoulder, upper arm, forearm, wrist 1-3), as printed
ROS_DESCRIPTION_COM = {
    "ur5": ((0.0, -0.00193, -0.02561), (-0.2125, 0.0, 0.11336), (-0.24225, 0.0, 0.0265),
            (0.0, -0.01634, -0.0018), (0.0, 0.01634, -0.0018), (0.0, 0.0, -0.001159)),
    "ur10": ((0.021, -0.027, 0.0), (-0.232, 0.0, 0.158), (-0.3323, 0.0, 0.068),
             (0.0, -0.018, 0.007), (0.0, 0.018, -0.007), (0.0, 0.0, -0.026)),
    "ur16e": ((0.0, -0.030, -0.016), (-0.1764, 0.0, 0.16), (-0.166, 0.0, 0.065),
              (0.0, -0.011, -0.009), (0.0, 0.012, -0.018), (0.0, 0.0, -0.044)),
}


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


@pytest.mark.parametrize("name", sorted(ROS_DESCRIPTION_COM))
def test_centres_of_mass_are_the_ros_descriptions_mapped_to_dh_frames(name):
    """The file's comments give the map from UR's DH-frame values ("model"): shoulder (x, -z, y), upper arm and
    forearm (x - link length, y, z), wrist 1 (x, -z, y), wrist 2 (x, z, -y), wrist 3 (x, y, z)."""
    description = get_robot(name)
    ros = np.array(ROS_DESCRIPTION_COM[name])
    lengths = -description.dh_a_m[1:3]
    expected = np.array([
        (ros[0, 0], ros[0, 2], -ros[0, 1]),
        (ros[1, 0] + lengths[0], ros[1, 1], ros[1, 2]),
        (ros[2, 0] + lengths[1], ros[2, 1], ros[2, 2]),
        (ros[3, 0], ros[3, 2], -ros[3, 1]),
        (ros[4, 0], -ros[4, 2], ros[4, 1]),
        tuple(ros[5]),
    ])
    np.testing.assert_allclose(description.link_com_m, expected, atol=1e-12)


@pytest.mark.parametrize("name, generation, rate_hz, payload_kg", [
    ("ur5", "cb3", 125.0, 5.0), ("ur10", "cb3", 125.0, 10.0), ("ur16e", "e-series", 500.0, 16.0)])
def test_cb3_and_e_series_arms_carry_their_generation_and_rated_payload(name, generation, rate_hz, payload_kg):
    description = get_robot(name)
    assert (description.generation, description.control_rate_hz, description.payload_kg) == \
        (generation, rate_hz, payload_kg)


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
    with pytest.raises(ValueError, match="unknown robot 'ur4'.*ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e"):
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
