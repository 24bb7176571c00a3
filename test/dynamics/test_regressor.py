"""Regressor columns reproduce pinocchio's RNEA (with rotor inertia) and the P2 eq. (11) friction."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.dynamics.friction import FrictionParameters, friction_torque
from robot_dynamics_id.dynamics.regressor import (
    friction_columns,
    full_parameter_vector,
    full_regressor,
    rigid_body_regressor,
    rotor_regressor,
    split_full_parameter_vector,
)
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots.model import load_robot


@pytest.mark.parametrize("name", ["ur3", "ur10e"])
def test_full_regressor_matches_rnea_plus_friction(name):
    robot = load_robot(name)
    model = DynamicModel.nominal(name)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.normal(size=(3, 7, 6))
    friction = FrictionParameters(rng.uniform(0, 1, 6), rng.uniform(0, 1, 6), rng.uniform(0, 1, 6),
                                  rng.uniform(-1, 1, 6), rng.uniform(0.05, 0.2, 6), np.full(6, 0.02))
    w, names = full_regressor(robot, q, qd, qdd, stribeck_velocity_rad_s=friction.stribeck_velocity_rad_s,
                              coulomb_velocity_rad_s=friction.coulomb_velocity_rad_s)
    theta = full_parameter_vector(model.standard_parameters(), model.rotor_inertia_kgm2, friction)
    assert w.shape == (7 * 6, 90) and len(names) == 90
    data = robot.model.createData()
    # pinocchio's rnea adds armature * qdd, which is our rotor column
    expected = np.array([pin.rnea(robot.model, data, q[k], qd[k], qdd[k]) for k in range(7)])
    expected += friction_torque(friction, qd)
    np.testing.assert_allclose((w @ theta).reshape(7, 6), expected, atol=1e-10)


def test_blocks_are_sample_major_and_joint_local():
    qdd = np.arange(12.0).reshape(2, 6)
    r = rotor_regressor(qdd)
    assert r.shape == (12, 6)
    assert r[6 + 2, 2] == qdd[1, 2] and r[6 + 2, 3] == 0.0
    f = friction_columns(np.full((2, 6), 0.5), 0.1, 0.01)
    assert f.shape == (12, 24)
    assert np.count_nonzero(f[3]) == 4 and np.all(f[3, 12:16] != 0)


def test_split_round_trip_and_bad_input():
    theta = np.arange(90.0)
    std, rotor, fr = split_full_parameter_vector(theta, 6)
    np.testing.assert_array_equal(np.concatenate([std, rotor, fr]), theta)
    with pytest.raises(ValueError, match="shape"):
        rigid_body_regressor(load_robot("ur3"), np.zeros((3, 5)), np.zeros((3, 5)), np.zeros((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        rigid_body_regressor(load_robot("ur3"), np.full((1, 6), np.nan), np.zeros((1, 6)), np.zeros((1, 6)))
