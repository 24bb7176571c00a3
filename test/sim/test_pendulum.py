"""Tests of the planar inverted-pendulum plant used by the natural-oscillation method (seeds.md P1)."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.planar_chain import PlanarChain
from robot_dynamics_id.sim.pendulum import JointFriction, PlanarPendulumArm


def test_mass_matrix_matches_textbook_two_link():
    chain = PlanarChain.uniform_rods([1.3, 0.7], [0.5, 0.4])
    arm = PlanarPendulumArm(chain)
    q = np.array([0.3, 0.7])
    m1, m2, l1, l2 = 1.3, 0.7, 0.5, 0.4
    i1, i2, c1, c2 = m1 * l1**2 / 12, m2 * l2**2 / 12, l1 / 2, l2 / 2
    m22 = i2 + m2 * c2**2
    m12 = m22 + m2 * l1 * c2 * np.cos(q[1])
    m11 = i1 + m1 * c1**2 + i2 + m2 * (l1**2 + c2**2 + 2 * l1 * c2 * np.cos(q[1]))
    np.testing.assert_allclose(arm.mass_matrix(q), [[m11, m12], [m12, m22]], rtol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_free_motion_conserves_energy(n):
    arm = PlanarPendulumArm(PlanarChain.uniform_rods(np.linspace(1.0, 0.5, n), 0.4), period_s=0.01, substeps=4)
    arm.reset(np.full(n, 0.2), np.full(n, 0.3))
    e0 = arm.energy_j()
    for _ in range(100):
        arm.step()
    assert abs(arm.energy_j() - e0) < 1e-4 * abs(e0)
    assert np.max(np.abs(arm.q)) > 0.5  # it really fell (nothing holds it)


def test_compensated_arm_floats_and_batches():
    chain = PlanarChain.uniform_rods([1.0, 1.0], 0.4)
    arm = PlanarPendulumArm(chain, period_s=0.002)
    lm = chain.lumped_model()
    arm.reset(np.zeros((2, 2)), np.array([[0.0, 0.0], [0.1, 0.0]]))
    for _ in range(100):
        arm.apply_torque(lm.coriolis_gravity_torque(arm.q, arm.qd))
        q, _ = arm.step()
    np.testing.assert_allclose(q[0], 0.0, atol=1e-12)  # at rest upright and exactly compensated: stays
    assert 0.015 < q[1, 0] < 0.025  # pushed: drifts (neutral), about 0.1 rad/s * 0.2 s


def test_coulomb_friction_sticks_and_viscous_damps():
    chain = PlanarChain.uniform_rods([1.0], 0.4)
    stuck = PlanarPendulumArm(chain, friction=JointFriction([0.0], [0.5]))
    stuck.reset(np.array([0.05]), np.zeros(1))  # gravity torque 1.96*0.05 ~ 0.1 Nm < 0.5 Nm
    for _ in range(50):
        stuck.step()
    np.testing.assert_allclose(stuck.q, [0.05], atol=1e-5)  # time-stepping friction: O(h^3) creep only
    lm = chain.lumped_model()
    damped = PlanarPendulumArm(chain, friction=JointFriction([0.05], [0.0]))
    damped.reset(np.zeros(1), np.array([0.3]))
    peaks = []
    for _ in range(2000):
        damped.apply_torque(1.1 * lm.gravity_torque(damped.q))  # over-compensated: oscillates
        q, _ = damped.step()
        peaks.append(abs(q[0]))
    assert max(peaks[-300:]) < 0.5 * max(peaks[:300])


def test_bad_inputs_raise():
    arm = PlanarPendulumArm(PlanarChain.uniform_rods([1.0], 0.4))
    with pytest.raises(ValueError, match="same shape"):
        arm.reset(np.zeros(1), np.zeros(2))
