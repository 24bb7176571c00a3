"""Log-Cholesky parameterisation: round trips, always-consistent images, exact Jacobian."""

import numpy as np

from robot_dynamics_id.dynamics.consistency import (
    is_physically_consistent,
    log_cholesky_from_standard,
    log_cholesky_jacobian,
    pseudo_inertia_from_standard,
    standard_from_log_cholesky,
    standard_from_pseudo_inertia,
)
from robot_dynamics_id.io.model_file import DynamicModel


def test_round_trip_on_the_nominal_links():
    theta = DynamicModel.nominal("ur3").standard_parameters().reshape(6, 10)
    assert is_physically_consistent(theta).all()
    np.testing.assert_allclose(standard_from_pseudo_inertia(pseudo_inertia_from_standard(theta)), theta, atol=1e-15)
    eta = log_cholesky_from_standard(theta)
    np.testing.assert_allclose(standard_from_log_cholesky(eta), theta, atol=1e-12)
    # mass = exp(2 alpha), CoM = t (Rucker & Wensing 2022)
    np.testing.assert_allclose(np.exp(2 * eta[:, 0]), theta[:, 0])
    np.testing.assert_allclose(eta[:, 7:10], theta[:, 1:4] / theta[:, :1], atol=1e-12)


def test_every_log_cholesky_vector_is_consistent_and_agrees_with_the_model_file_check():
    eta = np.random.default_rng(0).normal(size=(50, 10))
    theta = standard_from_log_cholesky(eta)
    assert is_physically_consistent(theta).all()
    model = DynamicModel.nominal("ur3").with_standard_parameters(theta[:6].ravel())
    assert model.is_physically_consistent().all()


def test_inconsistent_link_is_detected_and_projected():
    theta = DynamicModel.nominal("ur3").standard_parameters().reshape(6, 10).copy()
    theta[2, 4] = -0.5  # negative I_xx about the origin
    ok = is_physically_consistent(theta)
    assert not ok[2] and ok[[0, 1, 3, 4, 5]].all()
    projected = standard_from_log_cholesky(log_cholesky_from_standard(theta))
    assert is_physically_consistent(projected).all()


def test_complex_step_jacobian_matches_finite_differences():
    eta = np.random.default_rng(3).normal(size=(2, 10)) * 0.5
    jac = log_cholesky_jacobian(eta)
    h = 1e-6
    for k in range(10):
        e1, e2 = eta.copy(), eta.copy()
        e1[:, k] += h
        e2[:, k] -= h
        fd = (standard_from_log_cholesky(e1) - standard_from_log_cholesky(e2)) / (2 * h)
        np.testing.assert_allclose(jac[:, :, k], fd, rtol=1e-6, atol=1e-8)
