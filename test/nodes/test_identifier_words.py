"""The identifier node names its parameters where the shared job's messages name ``rdi`` options."""

from __future__ import annotations

import pytest

from robot_dynamics_id.nodes._identifier_words import SWITCHES, VALUE_OPTIONS, as_node_parameters
from robot_dynamics_id.nodes.identifier import IDENTIFIER_PARAMETERS


@pytest.mark.parametrize("text, expected", [
    ("the data fit a ur10e: pass --robot ur10e.", "the data fit a ur10e: pass robot:=ur10e."),
    ("check --robot, the drive gains", "check robot, the drive gains"),
    ("give --drive-gains K0,...,K5 (Nm/A)", "give drive_gains_nm_per_a:=[K0,...,K5] (Nm/A)"),
    ("--skip-robot-check if the arm really differs", "skip_robot_check:=true if the arm really differs"),
    ("pass --ur-driver-topics and --drive-gains, or --torque-source current",
     "pass ur_driver_topics:=true and drive_gains_nm_per_a (or drive_gains_file), or torque_source:=current"),
    # a command the user is told to run keeps its own options; an option the node lacks stays
    ("is for rdi payload; rdi validate --payload payload.yaml on it", "is for rdi payload; rdi validate --payload "
     "payload.yaml on it"),
    ("plan it (rdi excite plan --kind payload), then --nan-policy drop",
     "plan it (rdi excite plan --kind payload), then nan_policy:=drop"),
    ("--no-plots is not a node parameter", "--no-plots is not a node parameter"),
])
def test_cli_options_become_node_parameters(text, expected):
    assert as_node_parameters(text) == expected


def test_every_named_parameter_is_one_the_node_declares():
    declared = {spec.name for spec in IDENTIFIER_PARAMETERS}
    named = {name.split(" ")[0] for name in [*VALUE_OPTIONS.values(), *SWITCHES.values()] if not name.startswith("the")}
    assert named <= declared, named - declared
