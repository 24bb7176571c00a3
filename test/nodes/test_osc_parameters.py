"""osc_controller's tool: from rdi payload's payload.yaml or from tool_mass_kg/tool_com_m."""

import numpy as np
import pytest
import yaml

from robot_dynamics_id.control.controller_config import ControllerConfig
from robot_dynamics_id.nodes._osc_parameters import polishing_settings, target_floor, tool_payload
from robot_dynamics_id.parameters import ParameterError

INERTIA = {"ixx": 3e-3, "iyy": 2.5e-3, "izz": 2e-3, "ixy": 2e-4, "ixz": -1e-4, "iyz": 3e-4}


def _payload_file(path, *, robot="ur3", determined=True, **changes):
    path.write_text(yaml.safe_dump({
        "schema": "robot_dynamics_id/payload/1", "frame": "tool0", "mass_kg": 1.3, "com_m": [0.02, -0.01, 0.05],
        "inertia_determined": determined, "realisable_inertia_about_com_kgm2": INERTIA, "warnings": [],
        "provenance": {"robot": robot}, **changes}))
    return str(path)


def _params(**changes):
    return {"payload_file": "", "tool_mass_kg": 0.35, "tool_com_m": [0.0, 0.0, 0.0571], **changes}


def test_without_a_file_the_tool_parameters_are_used():
    payload, line = tool_payload(_params(), "ur3")
    assert payload.mass_kg == 0.35 and payload.com_m == (0.0, 0.0, 0.0571)
    assert "tool_mass_kg" in line


def test_the_file_replaces_the_tool_parameters_with_its_inertia(tmp_path):
    payload, line = tool_payload(_params(payload_file=_payload_file(tmp_path / "p.yaml")), "ur3")
    assert payload.mass_kg == 1.3 and payload.com_m == pytest.approx((0.02, -0.01, 0.05))
    assert np.asarray(payload.inertia_kgm2)[0, 1] == pytest.approx(2e-4) and "inertia identified" in line
    payload, line = tool_payload(_params(payload_file=_payload_file(tmp_path / "q.yaml", determined=False)), "ur3")
    assert not np.any(payload.inertia_kgm2) and "a point mass" in line


@pytest.mark.parametrize("robot, file_robot, message", [
    ("ur3", "ur5e", "identified on ur5e, the controller's model is of ur3"),
    ("ur3", None, "does not exist"),
])
def test_a_payload_that_does_not_belong_is_refused(tmp_path, robot, file_robot, message):
    path = _payload_file(tmp_path / "p.yaml", robot=file_robot) if file_robot else str(tmp_path / "none.yaml")
    with pytest.raises(ParameterError, match=f"parameter 'payload_file': .*{message}"):
        tool_payload(_params(payload_file=path), robot)


@pytest.mark.parametrize("changes", [
    {"status": "doubtful"},
    {"status": "doubtful", "warnings": ["the mass is uncertain: std 0.0053 kg (5.0 % > 2 %)"]},
    {"warnings": ["the centre of mass is uncertain: std 3 mm"]},  # a file written before `status`
])
def test_a_doubtful_payload_file_is_refused_with_the_way_out(tmp_path, changes):
    """rdi payload writes a doubtful estimate to --out when no good file is there: the controller took it and only
    logged the doubt (a 0.107 kg "tool" of an empty flange, its CoM 60 mm inside the wrist)."""
    path = _payload_file(tmp_path / "p.yaml", **changes)
    with pytest.raises(ParameterError, match=r"parameter 'payload_file': .*is a doubtful estimate .*rdi payload "
                                              r"until it exits 0, or give the tool as tool_mass_kg"):
        tool_payload(_params(payload_file=path), "ur3")
    tool_payload(_params(payload_file=_payload_file(tmp_path / "ok.yaml", status="ok")), "ur3")


@pytest.mark.parametrize("changes, message", [
    ({"tool_mass_kg": 350.0}, r"'tool_mass_kg': a tool of 350 kg exceeds the ur3's rated payload 3 kg"),
    ({"tool_com_m": [0.0, 0.0, 57.1]}, r"'tool_com_m' = \[0.0, 0.0, 57.1\] lies 57.1 m from the flange"),
])
def test_a_tool_in_the_wrong_unit_is_refused(changes, message):
    """Grams for kg or mm for m swung the simulated arm at 25-32 rad/s before these checks."""
    with pytest.raises(ParameterError, match=message):
        tool_payload(_params(**changes), "ur3")
    tool_payload(_params(tool_mass_kg=3.0), "ur3")  # the rated payload itself is fine


def test_polishing_force_above_max_force_is_refused_before_the_robot_opens():
    p = {"polishing_force_n": 80.0, "polishing_surface_z_m": 0.005, "polishing_amplitude_m": 0.08,
         "polishing_period_s": 5.0}
    with pytest.raises(ParameterError, match="'polishing_force_n' = 80 N exceeds max_force_n = 60 N"):
        polishing_settings(p, ControllerConfig(max_force_n=60.0))
    settings, force = polishing_settings({**p, "polishing_force_n": 10.0}, ControllerConfig(max_force_n=60.0))
    assert force == 10.0 and settings == {"expected_surface_z_m": 0.005, "amplitude_m": 0.08, "period_s": 5.0}


def test_the_floor_is_one_height_and_a_polishing_approach_below_it_is_refused_before_the_robot_opens():
    assert target_floor({"target_min_z_m": []}) is None
    assert target_floor({"target_min_z_m": [-0.2]}) == -0.2
    for bad in ([0.0, 0.1], [float("inf")]):
        with pytest.raises(ParameterError, match="give one finite height in m"):
            target_floor({"target_min_z_m": bad})
    p = {"polishing_force_n": 10.0, "polishing_surface_z_m": 0.005, "polishing_amplitude_m": 0.08,
         "polishing_period_s": 5.0}
    with pytest.raises(ParameterError, match=r"aims the tool tip 0.02 m below it, at -0.015 m, below target_min_z_m = "
                                             r"0 m; lower target_min_z_m to at most -0.015 m"):
        polishing_settings(p, ControllerConfig(target_min_z_m=0.0))
    assert polishing_settings(p, ControllerConfig(target_min_z_m=-0.015))[1] == 10.0


def test_without_a_model_file_a_built_in_arm_brings_its_nominal_drive_gains():
    """force_source estimated turns currents into torques: a CB3 UR10 run without an identified model was refused
    for "the model has no drive gains" though the arm's nominal gains are known."""
    from robot_dynamics_id.nodes._osc_parameters import nominal_controller_model
    from robot_dynamics_id.robots.priors import nominal_drive_gains

    model = nominal_controller_model("ur10")
    np.testing.assert_array_equal(model.drive_gains_nm_per_a, nominal_drive_gains("ur10"))
    assert model.robot == "ur10"


def test_without_a_model_file_a_urdf_arm_has_no_gains_to_assume(tmp_path):
    from robot_dynamics_id.nodes._osc_parameters import nominal_controller_model
    from robot_dynamics_id.robots.model import load_robot

    urdf = tmp_path / "lab_arm.urdf"
    urdf.write_text(load_robot("ur3").urdf)
    assert nominal_controller_model(str(urdf)).drive_gains_nm_per_a is None


def test_the_controller_takes_its_arm_from_the_model_else_the_config_and_refuses_disagreement(tmp_path):
    from types import SimpleNamespace

    from robot_dynamics_id.nodes._osc_parameters import OSC_CONTROLLER_PARAMETERS, controller_robot
    from robot_dynamics_id.parameters import ParameterError

    defaults = {s.name: s.default for s in OSC_CONTROLLER_PARAMETERS}
    assert defaults["robot"] == ""
    p = {**defaults, "model_file": "m.yaml"}
    ur10 = SimpleNamespace(robot_name="ur10")
    assert controller_robot(p, "ur10", None) == "ur10"  # the model's arm
    assert controller_robot(p, None, ur10) == "ur10"  # the arm the direct connection opens
    assert controller_robot({**p, "robot": "UR10"}, "ur10", ur10) == "UR10"
    with pytest.raises(ParameterError, match="m.yaml was identified for ur10e, but parameter 'robot' is ur3"):
        controller_robot({**p, "robot": "ur3"}, "ur10e", None)
    with pytest.raises(ParameterError, match="the robot opened in direct connection is ur10 .* the model is for ur5e"):
        controller_robot(p, "ur5e", ur10)
    with pytest.raises(ParameterError, match=r"parameter 'robot' is empty .* set robot:=<the arm>"):
        controller_robot({**p, "robot_config_files": []}, None, None)
    config = tmp_path / "ur5e.yaml"  # topics: the file ur_interface was started from names the arm
    config.write_text("ur_interface:\n  ros__parameters:\n    robot: ur5e\n    effort_source: target_moment\n")
    assert controller_robot({**p, "robot_config_files": [str(config)]}, None, None) == "ur5e"
