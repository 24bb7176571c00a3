"""Which robot an excitation run is for: the parameter, the trajectory file, the robot interface's status."""

from __future__ import annotations

import pytest

from robot_dynamics_id.nodes._excitation_parameters import EXCITATION_PARAMETERS, interface_robot_problem, run_robot
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
