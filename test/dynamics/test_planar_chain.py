"""Tests of the planar chain's lumped model (seeds.md P1, eq. (15)), the model the natural-oscillation method scales."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.planar_chain import PlanarChain, PlanarChainLumpedModel


def test_lumped_model_is_p1_equation_15():
    chain = PlanarChain.uniform_rods([1.3, 0.7], 0.5)
    lm = chain.lumped_model()
    m1, m2, l, g = 1.3, 0.7, 0.5, chain.gravity_m_s2
    q, qd = np.array([0.2, -0.4]), np.array([0.5, 1.1])
    s2, s1, s12 = np.sin(q[1]), np.sin(q[0]), np.sin(q.sum())
    c1 = -0.5 * m2 * s2 * l**2 * qd[1] ** 2 - m2 * s2 * l**2 * qd[0] * qd[1]
    c2 = 0.5 * m2 * s2 * l**2 * qd[0] ** 2
    g1 = (0.5 * m1 + m2) * g * l * s1 + 0.5 * m2 * g * l * s12
    g2 = 0.5 * m2 * g * l * s12
    np.testing.assert_allclose(lm.coriolis_torque(q, qd), [c1, c2], rtol=1e-12)
    # P1 writes the compensating torque; our g(q) = dV/dq is its negative.
    np.testing.assert_allclose(lm.gravity_torque(q), [-g1, -g2], rtol=1e-12)
    assert lm.parameter_names()[0].startswith("coupling_C12")


def test_lumped_parameter_vector_round_trips_and_scales():
    lm = PlanarChain.uniform_rods([1.0, 0.8, 0.6], 0.4).lumped_model()
    back = PlanarChainLumpedModel.from_parameter_vector(lm.parameter_vector(), 3)
    np.testing.assert_allclose(back.coupling_kgm2, lm.coupling_kgm2, rtol=1e-15)
    np.testing.assert_allclose(back.first_moment_kgm, lm.first_moment_kgm, rtol=1e-15)
    factors = np.linspace(0.9, 1.1, lm.parameter_vector().size)
    np.testing.assert_allclose(lm.scaled(factors).parameter_vector(), lm.parameter_vector() * factors, rtol=1e-15)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="one entry per link"):
        PlanarChain([1.0, 1.0], [1.0], [0.5], [0.1])
    with pytest.raises(ValueError, match="symmetric"):
        PlanarChainLumpedModel(np.ones(2), np.array([[0.0, 1.0], [2.0, 0.0]]))
    with pytest.raises(ValueError, match="needs? 3 factors|need 3 factors"):
        PlanarChain.uniform_rods([1.0, 1.0], 0.4).lumped_model().scaled(np.ones(2))
