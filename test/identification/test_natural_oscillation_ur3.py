"""Natural-oscillation identification (seeds.md P1) of a simulated UR3's shoulder and elbow gravity terms."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.identification.natural_oscillation import PushExperiment
from robot_dynamics_id.identification.natural_oscillation_ur3 import (
    ACTIVE_JOINTS_FULL,
    UR3_UPRIGHT_Q_RAD,
    PinocchioArm,
    VerticalPlaneGravityModel,
    identify_vertical_plane_gravity,
    perturbed_model,
    reduced_vertical_plane_model,
    vertical_plane_first_moments,
)
from robot_dynamics_id.robots import load_robot

UP = UR3_UPRIGHT_Q_RAD[[1, 2]]


@pytest.fixture(scope="module")
def ur3_models():
    nominal_full = load_robot("ur3").model
    truth_full = perturbed_model(nominal_full, seed=1)
    return reduced_vertical_plane_model(nominal_full), reduced_vertical_plane_model(truth_full)


def test_model_gravity_equals_pinocchio(ur3_models):
    nominal, _ = ur3_models
    model = VerticalPlaneGravityModel(nominal, UP)
    data = nominal.createData()
    for q in (UP, UP + [0.3, -0.5], UP + [1.0, 2.0]):
        np.testing.assert_allclose(model.gravity_torque(q, np.ones(2)),
                                   pin.computeGeneralizedGravity(nominal, data, q), atol=1e-10)


def _experiment(**kw):
    return PushExperiment(UP, np.array([0.0, 0.05]), window_steps=6000, max_excursion_rad=0.5,
                          stop_after_periods=2, **kw)


def test_shoulder_and_elbow_first_moments_within_one_percent(ur3_models):
    nominal, truth = ur3_models
    true_p = vertical_plane_first_moments(truth, UP)
    model = VerticalPlaneGravityModel(nominal, UP)
    assert abs(true_p[2] / model.first_moments_kgm[2] - 1) > 0.02  # the prior really is wrong
    result = identify_vertical_plane_gravity(PinocchioArm(truth), model, _experiment(), tolerance=0.008)
    err = (result.first_moments_kgm - true_p)[[0, 2]] / true_p[[0, 2]]
    print("\nUR3 MX2, MX3 relative errors", err, "trials", result.n_trials)
    assert np.all(np.abs(err) < 0.01)
    assert result.n_trials <= 20


def test_direct_torque_style_plant_needs_its_gravity_subtracted(ur3_models):
    nominal, truth = ur3_models
    model = VerticalPlaneGravityModel(nominal, UP)
    from robot_dynamics_id.identification.natural_oscillation import run_push_trial
    data = nominal.createData()
    arm = PinocchioArm(truth, controller_gravity=nominal)  # adds the controller's own gravity model
    naive = run_push_trial(arm, model, np.array([0.95, 0.95]), _experiment())
    corrected = run_push_trial(arm, model, np.array([1.1, 1.1]), _experiment(
        plant_gravity_compensation=lambda q: pin.computeGeneralizedGravity(nominal, data, q)))
    # Without subtraction the controller's compensation doubles g_hat: a 5 % under-compensated
    # model still "oscillates", so the fall boundary would be found far too low.
    assert not naive.fell
    assert not corrected.fell
    under = run_push_trial(arm, model, np.array([0.95, 0.95]), _experiment(
        plant_gravity_compensation=lambda q: pin.computeGeneralizedGravity(nominal, data, q)))
    assert under.fell


def test_whole_upright_arm_model_and_friction_plant():
    full = load_robot("ur3").model
    nominal = reduced_vertical_plane_model(full, UR3_UPRIGHT_Q_RAD, ACTIVE_JOINTS_FULL)
    up = UR3_UPRIGHT_Q_RAD[list(ACTIVE_JOINTS_FULL)]
    model = VerticalPlaneGravityModel(nominal, up)
    assert model.first_moments_kgm.shape == (6,) and model.factor_names[-1] == "wrist1_first_moment"
    data = nominal.createData()
    for dq in ([0, 0, 0], [0.3, -0.5, 0.2], [1.0, 2.0, -1.5]):
        q = up + np.array(dq)
        np.testing.assert_allclose(model.gravity_torque(q, np.ones(3)), pin.computeGeneralizedGravity(nominal, data, q),
                                   atol=1e-10)
    # Coulomb friction in the plant holds a small residual torque and lets a large one through
    arm = PinocchioArm(nominal, coulomb_nm=np.full(3, 1.0))
    arm.reset(up, np.zeros(3))
    gravity = pin.computeGeneralizedGravity(nominal, data, up)
    arm.apply_torque(gravity + np.array([0.0, 0.5, 0.0]))
    for _ in range(50):
        q, qd = arm.step()
    assert np.allclose(qd, 0.0) and np.allclose(q, up, atol=1e-6)  # stuck (to the step's O(h^3) residue)
    arm.apply_torque(gravity + np.array([0.0, 3.0, 0.0]))
    for _ in range(50):
        q, qd = arm.step()
    assert qd[1] > 0.01


def test_friction_compensation_takes_a_load_dependent_coulomb_term(ur3_models):
    """rdi identify picks '+load' friction on some joints; the law feeds it its own rigid-body torque as the load
    (it raised "pass load_torque_nm" at the first command)."""
    from robot_dynamics_id.dynamics.friction import friction_torque
    from robot_dynamics_id.identification.natural_oscillation_ur3 import FrictionCompensatedModel, active_joint_friction
    from robot_dynamics_id.sim.truth import nominal_friction

    friction = active_joint_friction(nominal_friction("ur3", "real"), [1, 2])
    assert friction.has_load_term
    gravity = VerticalPlaneGravityModel(ur3_models[0], UP)
    law = FrictionCompensatedModel(gravity, friction)
    q, qd, factors = UP + [0.2, -0.3], np.array([0.4, -0.2]), np.array([1.1, 0.9])
    rigid = gravity.torque(q, qd, factors)
    expected = rigid + friction_torque(friction, qd, load_torque_nm=rigid)
    np.testing.assert_allclose(law.torque(q, qd, factors), expected, atol=1e-12)
    # the load term acts: the same friction without a load would give another torque
    assert not np.allclose(expected, rigid + friction_torque(friction, qd, load_torque_nm=np.zeros(2)))
