"""Which robot an excitation run is for: the parameter, the trajectory file, the robot interface's status."""

from __future__ import annotations

import pytest

from robot_dynamics_id.nodes._excitation_parameters import (EXCITATION_PARAMETERS, interface_rate_note,
                                                            interface_robot_problem, run_robot)
from robot_dynamics_id.parameters import ParameterError


def test_an_empty_robot_parameter_takes_the_arm_the_trajectory_was_planned_for():
    assert {s.name: s.default for s in EXCITATION_PARAMETERS}["robot"] == ""
    assert run_robot("", "ur10", "plan.yaml") == "ur10"
    assert run_robot("  ", "ur16e", "plan.yaml") == "ur16e"


def test_a_named_robot_must_be_the_planned_one_and_the_fix_is_named():
    assert run_robot("UR5e", "ur5e", "plan.yaml") == "UR5e"
    assert run_robot("ur3", None, "old.yaml") == "ur3"  # an unnamed file: checked against the parameter's arm
    with pytest.raises(ParameterError, match=r"plan.yaml was planned for ur10e, but parameter 'robot' is ur3: "
                                             r"plan one for this arm \(rdi excite plan --robot ur3\)"):
        run_robot("ur3", "ur10e", "plan.yaml")


def test_an_unnamed_trajectory_without_a_robot_parameter_is_refused_not_guessed():
    with pytest.raises(ParameterError, match=r"old.yaml does not say which robot .* set robot:=<the arm>"):
        run_robot("", None, "old.yaml")


def test_the_interface_status_must_name_the_same_arm():
    topic = "/ur_interface/status"
    assert interface_robot_problem({"robot": "ur10", "state": "ready"}, "ur10", topic) is None
    assert interface_robot_problem({"robot": "/lab/urdf/ur10.urdf"}, "ur10", topic) is None  # a URDF by its stem
    assert interface_robot_problem({"state": "ready"}, "ur10", topic) is None  # an older interface: not named
    problem = interface_robot_problem({"robot": "ur3"}, "ur10", topic)
    assert problem is not None
    assert "runs a ur3 (/ur_interface/status), but this trajectory is for ur10" in problem
    assert "config:=" in problem and "rdi excite plan --robot ur3" in problem


def test_a_trajectory_faster_than_the_interfaces_scaled_limits_is_refused_before_the_arm_moves():
    """The review: ur_interface at velocity_scale 0.25 refused the plan only after the slow move to its start."""
    from robot_dynamics_id.excitation.prbs import UR_HOME_POSITION_RAD, PrbsSinusoidSchedule
    from robot_dynamics_id.nodes._excitation_parameters import interface_speed_problem
    from robot_dynamics_id.robots.model import load_robot

    names = load_robot("ur3").joint_names
    plan = PrbsSinusoidSchedule(duration_s=8.0, start_position_rad=UR_HOME_POSITION_RAD, sinusoid_amplitude_rad=0.2,
                                prbs_velocity_rad_s=0.4, prbs_register_bits=3, seed=3).to_trajectory(rate_hz=125.0)
    topic = "/ur_interface/status"
    assert interface_speed_problem({"velocity_limits_rad_s": [3.14] * 6}, plan, names, topic) is None
    assert interface_speed_problem({"robot": "ur3"}, plan, names, topic) is None  # an interface that does not say
    problem = interface_speed_problem({"velocity_limits_rad_s": [0.1] * 6}, plan, names, topic)
    assert problem is not None and problem.startswith("the robot interface (/ur_interface/status) would refuse")
    assert any(f"rad/s on {name}, above its limit here 0.1 rad/s" in problem for name in names), problem
    assert "rdi excite plan --velocity-scale" in problem and "raise velocity_scale" in problem


def test_velocity_commands_faster_than_the_interface_loop_are_warned_about_once_named():
    cb3 = {"robot": "ur10", "rate_hz": 125.0}
    note = interface_rate_note(cb3, 500.0, "velocity")
    assert note is not None and "at 500 Hz" in note and "set rate_hz: 125" in note
    assert interface_rate_note(cb3, 125.0, "velocity") is None
    assert interface_rate_note(cb3, 500.0, "trajectory") is None  # executed in the robot loop at its own rate
    assert interface_rate_note({"robot": "ur10"}, 500.0, "velocity") is None  # an interface that does not say
