"""Linear estimators: exact recovery, per-joint weighting, robustness to outliers."""

import numpy as np

from scipy.signal import butter, sosfiltfilt

from robot_dynamics_id.identification.estimators import (
    NormalEquations,
    block_robust_covariance,
    compress,
    iteratively_reweighted_least_squares,
    ordinary_least_squares,
    time_blocks,
    weighted_least_squares,
)


def _problem(noise, seed=0, n_samples=2000, n_joints=3, p=8):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(n_samples * n_joints, p)) * np.logspace(-2, 2, p)
    x = rng.normal(size=p)
    sigma = np.tile(noise, n_samples)
    y = w @ x + rng.normal(size=w.shape[0]) * sigma
    return w, y, x


def test_ols_recovers_noise_free_parameters():
    w, y, x = _problem(np.zeros(3))
    est = ordinary_least_squares(w, y, 3)
    np.testing.assert_allclose(est.parameters, x, rtol=1e-10)
    normal = NormalEquations.from_regressor(w, y, 3)
    np.testing.assert_allclose(normal.solve().parameters, x, rtol=1e-8)


def test_wls_estimates_each_joints_noise_and_std_is_calibrated():
    noise = np.array([0.01, 0.1, 1.0])
    w, y, x = _problem(noise)
    wls = weighted_least_squares(w, y, 3)
    np.testing.assert_allclose(wls.residual_rms_nm, noise, rtol=0.1)
    ols = ordinary_least_squares(w, y, 3)
    assert np.linalg.norm(wls.parameters - x) < np.linalg.norm(ols.parameters - x)
    assert np.all(np.abs(wls.parameters - x) < 5 * wls.std)
    normal = NormalEquations.from_regressor(w, y, 3).solve(1 / noise**2)
    np.testing.assert_allclose(normal.parameters, weighted_least_squares(w, y, 3, sigma_nm=noise).parameters,
                               rtol=1e-6)


def test_irls_ignores_outliers():
    w, y, x = _problem(np.full(3, 0.05), seed=2)
    rng = np.random.default_rng(5)
    bad = rng.choice(y.size, size=y.size // 20, replace=False)
    y[bad] += rng.choice([-1, 1], size=bad.size) * 50.0
    ols_err = np.linalg.norm(ordinary_least_squares(w, y, 3).parameters - x)
    irls_err = np.linalg.norm(iteratively_reweighted_least_squares(w, y, 3).parameters - x)
    assert irls_err < 0.05 * ols_err


def test_compression_preserves_the_cost():
    w, y, _ = _problem(np.full(3, 0.1), seed=4)
    r, z, rss0 = compress(w, y)
    xt = np.random.default_rng(1).normal(size=w.shape[1])
    full = np.sum((w @ xt - y) ** 2)
    assert abs(full - (np.sum((r @ xt - z) ** 2) + rss0)) < 1e-8 * full
    r2, z2 = NormalEquations.from_regressor(w, y, 3).compressed()
    assert abs((np.sum((r2 @ xt - z2) ** 2) + rss0) - full) < 1e-6 * full


def test_consistent_estimator_enforces_linear_inequalities_exactly():
    """Extra parameters e with G e >= 0: the unconstrained optimum violates it, the result meets it exactly."""
    from robot_dynamics_id.identification.estimators import physically_consistent_least_squares

    rng = np.random.default_rng(3)
    n = 1
    theta_link = np.array([2.0, 0.0, 0.0, 0.2, 0.05, 0.0, 0.05, 0.0, 0.0, 0.02])  # a consistent link
    extra_true = np.array([-1.0, 0.5])  # wants e0 + e1 < 0
    k = np.eye(12)
    w = rng.normal(size=(200, 12))
    y = w @ np.concatenate([theta_link, extra_true]) + rng.normal(0, 1e-3, 200)
    r, z = np.linalg.qr(w)[1], np.linalg.qr(w)[0].T @ y
    g = np.array([[1.0, 1.0]])  # e0 + e1 >= 0
    est = physically_consistent_least_squares(r, z, k, np.concatenate([theta_link, [0.0, 0.0]]), n_joints=n,
                                              extra_bounds=(np.full(2, -np.inf), np.full(2, np.inf)),
                                              inequality=g, com_half_width_m=1.0)
    extra = est.full_parameters[10:]
    value = float((g @ extra)[0])
    assert -1e-12 <= value < 1e-3  # met, and on the constraint rather than pushed far inside it
    assert est.info["min_inequality"] >= -1e-12


def test_time_blocks_restart_at_every_segment():
    blocks = time_blocks(np.array([0, 0, 0, 0, 0, 1, 1, 1, 4]), 2)
    np.testing.assert_array_equal(blocks, [0, 0, 1, 1, 2, 3, 3, 4, 5])


def test_block_covariance_matches_the_spread_of_estimates_when_the_noise_is_low_passed():
    """Low-passed noise (as the identifier's torques are): the textbook std is several times too small, the
    batch-means std matches the spread of the estimates over independent noise draws."""
    n_samples, n_joints, p, draws = 1500, 2, 4, 300
    sos = butter(4, 0.08, output="sos")  # cut-off at 0.04 of the sample rate: ~12 samples per period
    t = np.arange(n_samples)
    w = np.stack([np.sin(2 * np.pi * t / 300), np.cos(2 * np.pi * t / 170), np.sin(2 * np.pi * t / 90),
                  np.ones(n_samples)], axis=1)
    w = np.repeat(w, n_joints, axis=0) * np.tile([1.0, 0.5], n_samples)[:, None]
    x = np.array([1.0, -2.0, 0.5, 0.3])
    rng = np.random.default_rng(3)
    blocks = time_blocks(np.zeros(n_samples, int), 25)  # 2 cut-off periods
    estimates, textbook, batch = [], [], []
    for _ in range(draws):
        noise = sosfiltfilt(sos, rng.normal(size=(n_samples, n_joints)), axis=0).ravel()
        est = ordinary_least_squares(w, w @ x + noise, n_joints)
        estimates.append(est.parameters)
        textbook.append(est.std)
        cov = block_robust_covariance(w, w @ x + noise, est.parameters, np.ones(w.shape[0]), n_joints, blocks)
        batch.append(np.sqrt(np.diag(cov)))
    spread = np.std(estimates, axis=0)
    assert np.all(np.mean(textbook, axis=0) < 0.5 * spread)
    ratio = np.mean(batch, axis=0) / spread
    assert np.all((ratio > 0.75) & (ratio < 1.25)), ratio


def test_block_covariance_is_the_same_in_chunks(monkeypatch):
    import robot_dynamics_id.identification.estimators as estimators

    w, y, _ = _problem(np.full(3, 0.05), seed=4, n_samples=200)
    est = ordinary_least_squares(w, y, 3)
    blocks = time_blocks(np.zeros(200, int), 10)
    whole = block_robust_covariance(w, y, est.parameters, np.ones(w.shape[0]), 3, blocks)
    monkeypatch.setattr(estimators, "_CHUNK_ROWS", 7)  # chunks that split samples and blocks
    chunked = block_robust_covariance(w, y, est.parameters, np.ones(w.shape[0]), 3, blocks)
    np.testing.assert_allclose(chunked, whole, rtol=1e-9, atol=1e-15)
