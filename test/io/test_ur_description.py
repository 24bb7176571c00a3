"""The ur_description export: same joint torques from the exported URDF, ur_description's YAML structure."""

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robot_dynamics_id.cli import main as rdi
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.io.ur_description import (
    UR_DESCRIPTION_LINKS, UrDescriptionExportError, export_ur_description,
)
from robot_dynamics_id.robots import ROBOT_NAMES, load_robot
from robot_dynamics_id.sim.truth import make_truth

# The structure of Universal_Robots_ROS2_Description config/ur3/physical_parameters.yaml (read through the
# search tool): the keys its ur_common.xacro reads, in the nesting it reads them.
UPSTREAM_UR3_STRUCTURE = {
    "offsets": {"shoulder_offset", "elbow_offset"},
    "inertia_parameters": {"base_mass", "shoulder_mass", "upper_arm_mass", "forearm_mass", "wrist_1_mass",
                           "wrist_2_mass", "wrist_3_mass", "links", "center_of_mass", "rotation", "tensor"},
}
UPSTREAM_UR3_ROTATION_PITCH = {"shoulder": 0.0, "upper_arm": np.pi / 2, "forearm": np.pi / 2, "wrist_1": 0.0,
                               "wrist_2": 0.0, "wrist_3": 0.0}


def _identified_like(robot: str) -> DynamicModel:
    """A model with full (non-diagonal) inertias, shifted CoMs and friction: a perturbed truth."""
    return make_truth(robot, 11)


def _rigid_torques(model: pin.Model, q, qd, qdd) -> np.ndarray:
    model = model.copy()
    model.armature = np.zeros(model.nv)  # the rigid-body part: URDF has no rotor inertia
    data = model.createData()
    return np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])


@pytest.mark.parametrize("robot", ROBOT_NAMES)
def test_exported_urdf_gives_the_same_joint_torques(robot, tmp_path):
    model = _identified_like(robot)
    paths = export_ur_description(model, tmp_path / "export")
    exported = pin.buildModelFromXML(paths["urdf"].read_text())
    ours = model.robot_model().model
    assert tuple(exported.names[1:]) == tuple(load_robot(robot).joint_names)
    rng = np.random.default_rng(4)
    q = rng.uniform(-np.pi, np.pi, (300, 6))
    qd = rng.uniform(-3, 3, (300, 6))
    qdd = rng.uniform(-10, 10, (300, 6))
    difference = np.abs(_rigid_torques(exported, q, qd, qdd) - _rigid_torques(ours, q, qd, qdd)).max()
    assert difference <= 1e-9, f"exported URDF torques differ by {difference:.3g} Nm"
    # ...and a wrong export would show: the same URDF with the nominal inertials differs by far more
    nominal = pin.buildModelFromXML(load_robot(robot).urdf)
    assert np.abs(_rigid_torques(nominal, q, qd, qdd) - _rigid_torques(ours, q, qd, qdd)).max() > 1e-3


def test_exported_frames_are_ur_descriptions(tmp_path):
    """base and tool0 of the exported URDF are our base (DH 0) and tool0 (flange) frames; base_link is turned by pi."""
    model = _identified_like("ur3")
    exported = pin.buildModelFromXML(export_ur_description(model, tmp_path)["urdf"].read_text())
    ours = load_robot("ur3")
    de, do = exported.createData(), ours.model.createData()
    for q in np.random.default_rng(2).uniform(-np.pi, np.pi, (20, 6)):
        pin.framesForwardKinematics(exported, de, q)
        pin.framesForwardKinematics(ours.model, do, q)
        base = de.oMf[exported.getFrameId("base")]
        tool_in_base = base.actInv(de.oMf[exported.getFrameId("tool0")])
        np.testing.assert_allclose(tool_in_base.homogeneous, do.oMf[ours.tool_frame_id].homogeneous, atol=1e-10)
        for name in UR_DESCRIPTION_LINKS:
            link = f"{name}_link"
            np.testing.assert_allclose(base.actInv(de.oMf[exported.getFrameId(link)]).homogeneous,
                                       do.oMf[ours.model.getFrameId(link)].homogeneous, atol=1e-10)
    np.testing.assert_allclose(de.oMf[exported.getFrameId("base")].rotation, np.diag([-1.0, -1.0, 1.0]), atol=1e-15)


def test_physical_parameters_have_ur_descriptions_structure_and_values(tmp_path):
    model = _identified_like("ur3")
    paths = export_ur_description(model, tmp_path)
    data = yaml.safe_load(paths["physical_parameters"].read_text())
    assert {k: set(v) for k, v in data.items()} == UPSTREAM_UR3_STRUCTURE
    inertia = data["inertia_parameters"]
    assert inertia["links"] == {"base": {"radius": 0.075, "length": 0.038}}
    for i, name in enumerate(UR_DESCRIPTION_LINKS):
        assert inertia[f"{name}_mass"] == pytest.approx(model.link_mass_kg[i], abs=1e-15)
        cog = inertia["center_of_mass"][f"{name}_cog"]
        np.testing.assert_allclose([cog["x"], cog["y"], cog["z"]], model.link_com_m[i], atol=1e-15)
        rot = inertia["rotation"][name]
        assert set(rot) == {"roll", "pitch", "yaw"} and rot["pitch"] == pytest.approx(UPSTREAM_UR3_ROTATION_PITCH[name])
        t = inertia["tensor"][name]
        assert set(t) == {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}
        tensor = np.array([[t["ixx"], t["ixy"], t["ixz"]], [t["ixy"], t["iyy"], t["iyz"]],
                           [t["ixz"], t["iyz"], t["izz"]]])
        r = pin.rpy.rpyToMatrix(rot["roll"], rot["pitch"], rot["yaw"])
        np.testing.assert_allclose(r @ tensor @ r.T, model.link_inertia_kgm2[i], atol=1e-15)
    # the upper arm is written in the pitched axes: its tensor is not the link-frame one
    assert not np.allclose(inertia["tensor"]["upper_arm"]["ixx"], model.link_inertia_kgm2[1][0, 0])


def test_kinematics_joint_dynamics_and_drive_file(tmp_path):
    model = _identified_like("ur3e")
    paths = export_ur_description(model, tmp_path)
    kin = yaml.safe_load(paths["default_kinematics"].read_text())["kinematics"]
    assert set(kin) == {*UR_DESCRIPTION_LINKS, "hash"}
    assert kin["shoulder"]["z"] == pytest.approx(0.15185) and kin["forearm"]["x"] == pytest.approx(-0.24355)
    assert kin["wrist_2"]["y"] == pytest.approx(-0.08535)
    dyn = yaml.safe_load(paths["joint_dynamics"].read_text())["joint_dynamics"]
    assert list(dyn) == list(load_robot("ur3e").joint_names)
    np.testing.assert_allclose([d["damping"] for d in dyn.values()], model.friction.viscous_nm_s_per_rad)
    np.testing.assert_allclose([d["friction"] for d in dyn.values()], model.friction.coulomb_nm)
    drive = yaml.safe_load(paths["friction_and_drive_gains"].read_text())
    np.testing.assert_allclose(drive["drive_gains_nm_per_a"], model.drive_gains_nm_per_a)
    np.testing.assert_allclose(drive["rotor_inertia_kgm2"], model.rotor_inertia_kgm2)
    assert drive["friction"]["static_nm"] == pytest.approx(model.friction.static_nm.tolist())
    urdf = pin.buildModelFromXML(paths["urdf"].read_text())
    np.testing.assert_allclose(urdf.damping, model.friction.viscous_nm_s_per_rad)
    # A model identified from joint torques without drive gains has none: exported as null, not invented.
    from dataclasses import replace

    unknown = export_ur_description(replace(model, drive_gains_nm_per_a=None), tmp_path / "no_gains")
    assert yaml.safe_load(unknown["friction_and_drive_gains"].read_text())["drive_gains_nm_per_a"] is None


def test_cli_writes_the_folder_and_refuses_a_custom_urdf_model(tmp_path, capsys):
    model = _identified_like("ur3")
    model_path = model.save(tmp_path / "model.yaml")
    assert rdi(["export", "--model", str(model_path), "--format", "ur_description", "--out",
                str(tmp_path / "out"), "--tf-prefix", "left_"]) == 0
    urdf = (tmp_path / "out" / "ur3_identified.urdf").read_text()
    assert 'name="left_tool0"' in urdf and 'name="left_shoulder_pan_joint"' in urdf
    assert "physical_parameters" in capsys.readouterr().out
    custom = tmp_path / "arm.urdf"
    custom.write_text(load_robot("ur3").urdf)
    from dataclasses import replace
    with pytest.raises(UrDescriptionExportError, match="needs a built-in UR arm"):
        export_ur_description(replace(model, robot=str(custom)), tmp_path / "custom")
    assert rdi(["export", "--model", str(tmp_path / "missing.yaml"), "--out", str(tmp_path / "x")]) == 1


def test_cli_says_that_a_urdf_does_not_hold_a_tilted_mount(tmp_path, capsys):
    from dataclasses import replace

    floor = _identified_like("ur3").save(tmp_path / "floor.yaml")
    assert rdi(["export", "--model", str(floor), "--out", str(tmp_path / "floor_out")]) == 0
    assert "mount" not in capsys.readouterr().err
    wall = replace(_identified_like("ur3"), gravity_m_s2=np.array([9.81, 0.0, 0.0])).save(tmp_path / "wall.yaml")
    assert rdi(["export", "--model", str(wall), "--out", str(tmp_path / "wall_out")]) == 0
    assert "gravity (9.81, 0, 0) m/s²" in capsys.readouterr().err
