"""The collision observer's parameters (hardware/collision_config.py): a tool given in the wrong unit is refused."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.control.collision import CollisionThresholds
from robot_dynamics_id.hardware.collision_config import make_collision_detector
from robot_dynamics_id.parameters import ParameterError
from robot_dynamics_id.sim.truth import make_truth


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    truth = make_truth("ur3", 3)
    thresholds = CollisionThresholds(joint_names=truth.joint_names, velocity_edges_rad_s=np.array([0.1]),
                                     threshold_nm=np.full((6, 2), 0.5), observer_gain_per_s=50.0, rate_hz=500.0)
    return str(replace(truth, collision_thresholds=thresholds.to_dict()).save(
        tmp_path_factory.mktemp("collision") / "model.yaml"))


def test_a_tool_within_the_rating_is_carried(model_file):
    detector = make_collision_detector({"model_file": model_file, "payload_kg": 0.35,
                                        "payload_com_m": [0.0, 0.0, 0.0571]}, rate_hz=500.0)
    assert detector is not None


@pytest.mark.parametrize("tool, expected", [
    ({"payload_kg": 500.0}, "parameter 'payload_kg': a tool of 500 kg exceeds the ur3's rated payload 3 kg"),
    ({"payload_kg": 0.35, "payload_com_m": [0.0, 0.0, 57.1]}, "parameter 'payload_com_m' = [0.0, 0.0, 57.1] lies"),
])
def test_a_tool_in_grams_or_millimetres_is_refused(model_file, tool, expected):
    # (in ur_interface it read as a 12,000 Nm external torque: a protective stop 2 ms after start)
    with pytest.raises(ParameterError) as error:
        make_collision_detector({"model_file": model_file, **tool}, rate_hz=500.0)
    assert str(error.value).startswith(expected)


def test_a_model_of_another_arm_is_refused_not_taken_for_a_collision(model_file):
    # (a UR10e model on a UR3: its gravity torques at rest read as an external torque, "collision" at t = 0.004 s)
    with pytest.raises(ParameterError, match="is a model of a ur3, the robot is a ur10e: give the model identified"):
        make_collision_detector({"model_file": model_file}, rate_hz=500.0, robot="ur10e")
    assert make_collision_detector({"model_file": model_file}, rate_hz=500.0, robot="ur3").robot == "ur3"


def test_an_old_model_whose_friction_bends_down_without_a_range_is_noted(model_file, tmp_path):
    from robot_dynamics_id.io.model_file import DynamicModel

    model = DynamicModel.load(model_file)
    assert make_collision_detector({"model_file": model_file}, rate_hz=500.0).notes == []
    n = model.n_joints
    old = replace(model.friction, viscous_quadratic_nm_s2_per_rad2=np.array([0.0, -0.4] + [0.0] * (n - 2)),
                  load_coefficient=np.zeros(n), presliding_distance_rad=np.zeros(n), terms=None,
                  speed_range_rad_s=np.full(n, np.inf))
    path = str(replace(model, friction=old).save(tmp_path / "old.yaml"))
    (note,) = make_collision_detector({"model_file": path}, rate_hz=500.0).notes
    assert "no speed range" in note and model.joint_names[1] in note and "identify the model again" in note
