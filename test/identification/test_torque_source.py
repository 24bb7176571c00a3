"""The one torque-source rule: what auto picks, what is refused and how."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.identification.torque_source import (TorqueSourceError, motor_currents, select_torque,
                                                            ur_model_torque)

GAINS = np.array([10.0, 10.0, 8.0, 6.0, 6.0, 6.0])


@pytest.fixture(scope="module")
def recording():
    return synthetic_ur_recording(perturbed_truth("ur3", seed=3, relative=0.1), GAINS, duration_s=4.0)


def test_auto_prefers_current_times_gains_when_the_gains_are_known(recording):
    signal = select_torque(recording, "auto", GAINS * 1.1)
    assert signal.source == "current"
    np.testing.assert_allclose(signal.torque_nm, recording.current_a * GAINS * 1.1)
    assert signal.provenance() == {"torque_source": "current", "drive_gains_nm_per_a": (GAINS * 1.1).tolist(),
                                   "signal": signal.description}


def test_auto_without_gains_uses_a_real_joint_torque(recording):
    signal = select_torque(recording, "auto")
    assert signal.source == "effort" and signal.drive_gains_nm_per_a is None
    np.testing.assert_array_equal(signal.torque_nm, recording.effort_nm)


def test_auto_with_currents_but_no_gains_refuses_naming_drive_gains(recording):
    csv_like = replace(recording, effort_nm=None)  # a ur_rtde CSV: currents, target, gravity-compensated torque
    with pytest.raises(TorqueSourceError, match="--drive-gains") as info:
        select_torque(csv_like, "auto")
    assert "gravity-compensated" in str(info.value)


def test_gravity_compensated_torque_is_never_the_joint_torque(recording):
    only_compensated = replace(recording, effort_nm=None, current_a=None, target_current_a=None,
                               target_moment_nm=None)
    for source in ("auto", "effort"):
        with pytest.raises(TorqueSourceError, match="gravity-compensated .* cannot identify gravity"):
            select_torque(only_compensated, source)


def test_target_moment_is_used_only_when_asked(recording):
    only_moment = replace(recording, effort_nm=None, current_a=None, current_as_torque_nm=None)
    with pytest.raises(TorqueSourceError, match="--torque-source target_moment"):
        select_torque(only_moment, "auto")
    signal = select_torque(only_moment, "target_moment")
    assert signal.source == "target_moment" and "UR's model" in signal.notes[0]


def test_an_effort_that_is_the_target_moment_is_not_a_measurement(recording):
    republished = replace(recording, effort_nm=recording.target_moment_nm.copy(), current_a=None)
    with pytest.raises(TorqueSourceError, match="identical to UR's target moment"):
        select_torque(republished, "auto")
    with pytest.raises(TorqueSourceError, match="identical to UR's target moment"):
        select_torque(republished, "effort")


def test_explicit_sources_need_their_signal(recording):
    with pytest.raises(TorqueSourceError, match="needs the drive gains"):
        select_torque(recording, "current")
    with pytest.raises(TorqueSourceError, match="--ur-driver-topics"):
        select_torque(replace(recording, current_a=None), "current", GAINS)
    with pytest.raises(TorqueSourceError, match="choose one of"):
        select_torque(recording, "torque")
    with pytest.raises(ValueError, match="implausible"):
        select_torque(recording, "current", np.full(6, 1e9))


def test_ur_model_is_target_current_times_gains_else_target_moment(recording):
    values, label = ur_model_torque(recording, GAINS)
    np.testing.assert_allclose(values, recording.target_current_a * GAINS)
    assert "target_current" in label
    values, label = ur_model_torque(recording, None)
    np.testing.assert_array_equal(values, recording.target_moment_nm)
    with pytest.raises(TorqueSourceError, match="cannot be scored"):
        ur_model_torque(replace(recording, target_current_a=None, target_moment_nm=None), GAINS)


def test_drive_gains_come_from_motor_currents_only(recording):
    np.testing.assert_array_equal(motor_currents(recording), recording.current_a)
    with pytest.raises(TorqueSourceError, match="holds no motor currents"):
        motor_currents(replace(recording, current_a=None), "run.csv")
