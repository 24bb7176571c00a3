"""Data that do not fit the robot or the torque source are named, not identified silently."""

import numpy as np
import pytest

from robot_dynamics_id.identification.data_checks import (DataCheckError, check_joint_count, check_torque_fits_robot,
                                                          gravity_scale, likely_robots, mass_warnings)
from robot_dynamics_id.identification.preprocessing import preprocess
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.robots.model import load_robot

UR3_GAINS = np.array([10.0, 10.0, 8.0, 6.0, 6.0, 6.0])
UR10E_GAINS = np.array([10.0, 10.70, 8.46, 9.00, 9.48, 10.12])


def _prepared(recording, torque):
    data = preprocess(recording.time_s, recording.q_rad, torque, qd_rad_s=recording.qd_rad_s)
    return data.q_rad, data.qd_rad_s, data.qdd_rad_s2, data.torque


@pytest.fixture(scope="module")
def ur3():
    return synthetic_ur_recording(perturbed_truth("ur3", seed=11, relative=0.1), UR3_GAINS, duration_s=20.0)


@pytest.fixture(scope="module")
def ur10e():
    return synthetic_ur_recording(perturbed_truth("ur10e", seed=12, relative=0.1), UR10E_GAINS, duration_s=20.0)


def test_a_joint_torque_of_the_named_robot_passes(ur3):
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.effort_nm), source="effort")
    assert warnings == []
    assert 0.8 < scale.scale < 1.2 and scale.checked[1] and scale.checked[2]


def test_ur10e_data_named_ur3_are_refused_naming_the_ur10e(ur10e):
    with pytest.raises(DataCheckError, match=r"do not fit --robot ur3.*They fit ur10e .*pass --robot ur10e"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur10e, ur10e.effort_nm), source="effort")
    warnings, _ = check_torque_fits_robot(load_robot("ur10e"), *_prepared(ur10e, ur10e.effort_nm), source="effort")
    assert warnings == []
    assert next(iter(likely_robots(*_prepared(ur10e, ur10e.effort_nm)))) == "ur10e"


def test_motor_current_read_as_torque_is_named(ur3):
    with pytest.raises(DataCheckError, match=r"looks like motor current in A .*--ur-driver-topics"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_a), source="effort")


def test_gravity_compensated_effort_is_named(ur3):
    with pytest.raises(DataCheckError, match="gravity-compensated .*use_currents_as_efforts"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_as_torque_nm), source="effort")
    scale = gravity_scale(load_robot("ur3"), *_prepared(ur3, ur3.current_as_torque_nm))
    assert abs(scale.scale) < 0.15 and scale.inertial_scale > 0.5


def test_gains_three_times_too_large_name_the_implied_gains(ur3):
    torque = ur3.current_a * UR3_GAINS * 3
    with pytest.raises(DataCheckError, match=r"drive gains are off: ur3's nominal model implies joint 1: (9|10|11)"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, torque), source="current",
                                drive_gains_nm_per_a=UR3_GAINS * 3)


def test_a_moderate_mismatch_is_a_warning_and_skip_turns_errors_into_warnings(ur3, ur10e):
    warnings, _ = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.effort_nm * 2.0), source="effort")
    assert any("do not fit --robot ur3" in w for w in warnings)
    warnings, _ = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur10e, ur10e.effort_nm), source="effort",
                                          skip_robot_check=True)
    assert any("not refused: --skip-robot-check" in w for w in warnings)
    assert any("beyond ur3's rated" in w for w in warnings)


def test_joint_count_and_masses():
    with pytest.raises(DataCheckError, match="hold 7 joints but ur3 has 6"):
        check_joint_count(7, load_robot("ur3"))
    rm = load_robot("ur3")
    nominal = np.array([rm.model.inertias[i + 1].mass for i in range(6)])
    assert mass_warnings(nominal * 1.2, rm, consistent=True) == []
    (warning,) = mass_warnings(nominal * 4, rm, consistent=True)
    assert "4.00x the nominal ur3's" in warning
    assert mass_warnings(nominal * 4, rm, consistent=False) == []
