"""Estimators of the dynamic parameters from a regressor and measured torques.

All estimators work on a stacked regressor ``W`` (rows sample-major: row k*n + j
is joint j at sample k) and the torque vector ``y`` stacked the same way:

* :func:`ordinary_least_squares` — OLS, with the textbook covariance;
* :func:`weighted_least_squares` — WLS with one noise level per joint (two-step:
  OLS residuals give each joint's sigma, then rows are weighted by 1/sigma_j);
* :func:`iteratively_reweighted_least_squares` — IRLS with Tukey's bisquare on
  per-joint robust (MAD) scale: outliers get zero weight;
* :func:`physically_consistent_least_squares` — the same weighted cost over the
  *full* parameters, every link parameterised by log-Cholesky (dynamics/consistency.py)
  so masses are positive and inertias realisable, CoM boxed near the link, rotor
  inertia >= 0, and linear inequalities ``G x >= 0`` on the other parameters (the
  friction's dissipativity: only what physics constrains, not the sign of each shape
  parameter) (scipy ``least_squares``, trust-region reflective).

The consistent estimator never touches the N rows again: the weighted data are
first compressed by QR, ``|| R x - z ||`` has the same minimiser as ``|| W x - y ||``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import scipy.linalg
import scipy.optimize

from ..dynamics.consistency import log_cholesky_from_standard, log_cholesky_jacobian, standard_from_log_cholesky

__all__ = [
    "ConsistentEstimate",
    "LinearEstimate",
    "NormalEquations",
    "STD_BLOCK_CUTOFF_PERIODS",
    "STD_MIN_BLOCKS",
    "batch_means_blocks",
    "block_robust_covariance",
    "with_batch_means_std",
    "time_blocks",
    "compress",
    "iteratively_reweighted_least_squares",
    "ordinary_least_squares",
    "per_joint_rms",
    "physically_consistent_least_squares",
    "weighted_least_squares",
]


#: batch-means std (:func:`block_robust_covariance`): blocks this many low-pass periods long (the residual's
#: correlation from the low-pass spans about one; the std changes little from 1 to 8, benchmarks/RESULTS.md)
STD_BLOCK_CUTOFF_PERIODS = 2.0
#: ... when the data hold at least this many blocks (each variance is then a mean of that many terms)
STD_MIN_BLOCKS = 10
#: rows per chunk of the block covariance's pass over the regressor (bounded memory for long recordings)
_CHUNK_ROWS = 60000


@dataclass(frozen=True)
class LinearEstimate:
    """Result of a linear estimator: parameters, their standard deviations and covariance,
    per-joint residual RMS (Nm) and the row weights used (1 = unweighted)."""

    parameters: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    residual_rms_nm: np.ndarray
    row_weights: np.ndarray
    method: str
    iterations: int = 1


@dataclass(frozen=True)
class ConsistentEstimate:
    """Result of the physically consistent estimator: the full parameter vector
    (10n standard [+ n rotor] [+ 4n friction]), the optimiser's status and cost."""

    full_parameters: np.ndarray
    log_cholesky: np.ndarray
    cost: float
    success: bool
    message: str
    n_evaluations: int
    info: dict = field(default_factory=dict)


def _check(w: np.ndarray, y: np.ndarray, n_joints: int) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(w, float)
    y = np.asarray(y, float).ravel()
    if w.ndim != 2 or w.shape[0] != y.shape[0]:
        raise ValueError(f"regressor {w.shape} and torque vector {y.shape} do not match (rows must agree)")
    if w.shape[0] % n_joints:
        raise ValueError(f"{w.shape[0]} rows is not a multiple of n_joints={n_joints}")
    if w.shape[0] < w.shape[1]:
        raise ValueError(f"{w.shape[0]} equations for {w.shape[1]} parameters: record more data")
    return w, y


def per_joint_rms(residual: np.ndarray, n_joints: int) -> np.ndarray:
    """RMS per joint of a stacked residual vector."""
    r = np.asarray(residual, float).reshape(-1, n_joints)
    return np.sqrt(np.mean(r**2, axis=0))


def _solve_weighted(w: np.ndarray, y: np.ndarray, row_weights: np.ndarray, n_joints: int, method: str,
                    iterations: int = 1) -> LinearEstimate:
    sw = np.sqrt(row_weights)
    a = w * sw[:, None]
    b = y * sw
    # Column scaling keeps the problem well conditioned whatever the parameters' units.
    norms = np.linalg.norm(a, axis=0)
    norms[norms == 0] = 1.0
    q_factor, r_factor = np.linalg.qr(a / norms)
    x_scaled = scipy.linalg.solve_triangular(r_factor, q_factor.T @ b)
    x = x_scaled / norms
    residual = y - w @ x
    dof = max(int(np.count_nonzero(row_weights)) - w.shape[1], 1)
    weighted_sigma2 = float(np.sum(row_weights * residual**2) / dof)
    r_inv = scipy.linalg.solve_triangular(r_factor, np.eye(r_factor.shape[0]))
    cov = weighted_sigma2 * (r_inv @ r_inv.T) / np.outer(norms, norms)
    return LinearEstimate(parameters=x, std=np.sqrt(np.maximum(np.diag(cov), 0.0)), covariance=cov,
                          residual_rms_nm=per_joint_rms(residual, n_joints), row_weights=row_weights,
                          method=method, iterations=iterations)


def block_robust_covariance(w, y, parameters, row_weights, n_joints: int, block_id) -> np.ndarray:
    """Covariance of a weighted least-squares estimate whose residuals are correlated in time (batch means).

    The textbook ``s^2 (W^T Omega W)^-1`` counts every row as an independent measurement; low-passed
    torques and a model error that follows the trajectory are correlated over many samples, so it is too
    small. The sandwich (White; with contiguous blocks of samples as clusters, Kiefer & Vogelsang's batch
    means):

        H = W^T Omega W,   g_b = sum_{rows k of block b} W_k^T Omega_k e_k,   e = y - W x
        cov = B / (B - 1)  H^-1 (sum_b g_b g_b^T) H^-1

    ``block_id`` (one per sample: rows k*n .. k*n+n-1 share it) numbers the blocks; a block should span
    several correlation times of the residual and never two recording segments. ``row_weights`` is
    Omega's diagonal (0 = row left out). The estimate's score sums to zero, so the blocks' scores are
    centred; with fewer blocks than parameters the sum is rank-deficient, but each variance is still a
    B-term average (its own relative error ~ 1/sqrt(2B))."""
    w, y = _check(w, y, n_joints)
    weights = np.asarray(row_weights, float)
    residual = (y - w @ np.asarray(parameters, float)) * weights
    blocks = np.repeat(np.asarray(block_id), n_joints)
    _, index = np.unique(blocks, return_inverse=True)
    n_blocks = int(index.max()) + 1
    if n_blocks < 2:
        raise ValueError("a block covariance needs at least two blocks")
    p = w.shape[1]
    scores, gram = np.zeros((n_blocks, p)), np.zeros((p, p))
    for start in range(0, w.shape[0], _CHUNK_ROWS):  # no copy of the whole regressor
        rows = slice(start, start + _CHUNK_ROWS)
        np.add.at(scores, index[rows], w[rows] * residual[rows, None])
        gram += (w[rows] * weights[rows, None]).T @ w[rows]
    norms = np.sqrt(np.maximum(np.diag(gram), 0.0))
    norms[norms == 0] = 1.0
    bread = np.linalg.pinv(gram / np.outer(norms, norms), hermitian=True)
    meat = (scores / norms).T @ (scores / norms) * (n_blocks / (n_blocks - 1))
    return bread @ meat @ bread / np.outer(norms, norms)


def time_blocks(segment_id, length: int) -> np.ndarray:
    """Block number of each sample: runs of ``length`` consecutive samples, restarting at every segment."""
    segment = np.asarray(segment_id)
    k = np.arange(segment.shape[0])
    length = max(int(length), 1)
    first = np.r_[0, np.flatnonzero(segment[1:] != segment[:-1]) + 1]
    of_sample = np.searchsorted(first, k, side="right") - 1  # each sample's segment (by order)
    per_segment = -(-np.diff(np.r_[first, segment.shape[0]]) // length)  # blocks per segment, the last shorter
    offset = np.r_[0, np.cumsum(per_segment)[:-1]]
    return offset[of_sample] + (k - first[of_sample]) // length


def batch_means_blocks(segment_id, sample_rate_hz: float, cutoff_hz: float) -> tuple[np.ndarray, float]:
    """(block number of each sample, block length in s) for :func:`block_robust_covariance`: runs of
    :data:`STD_BLOCK_CUTOFF_PERIODS` periods of the low-pass cut-off, restarting at every segment."""
    length = int(np.ceil(STD_BLOCK_CUTOFF_PERIODS * sample_rate_hz / cutoff_hz))
    return time_blocks(segment_id, length), length / sample_rate_hz


def with_batch_means_std(estimate: LinearEstimate, w, y, n_joints: int, segment_id, sample_rate_hz: float,
                         cutoff_hz: float) -> tuple[LinearEstimate, str]:
    """``estimate`` with the batch-means covariance (:func:`block_robust_covariance` over
    :func:`batch_means_blocks`), and how its std was found; unchanged (the textbook std) when the data hold fewer
    than :data:`STD_MIN_BLOCKS` blocks."""
    blocks, block_s = batch_means_blocks(segment_id, sample_rate_hz, cutoff_hz)
    n_blocks = int(blocks.max()) + 1 if blocks.size else 0
    if n_blocks < STD_MIN_BLOCKS:
        return estimate, (f"textbook s^2 (W^T W)^-1 (independent rows: too small where the residual is correlated; "
                          f"the recording has {n_blocks} blocks of {block_s:.2f} s, under the {STD_MIN_BLOCKS} "
                          "batch means need)")
    cov = block_robust_covariance(w, y, estimate.parameters, estimate.row_weights, n_joints, blocks)
    method = (f"batch means over {n_blocks} blocks of {block_s:.2f} s ({STD_BLOCK_CUTOFF_PERIODS:g} low-pass "
              "periods): correlated residuals counted")
    return replace(estimate, covariance=cov, std=np.sqrt(np.maximum(np.diag(cov), 0.0))), method


def ordinary_least_squares(w, y, n_joints: int) -> LinearEstimate:
    """OLS: minimise ||W x - y||^2; covariance sigma^2 (W^T W)^-1."""
    w, y = _check(w, y, n_joints)
    return _solve_weighted(w, y, np.ones(y.shape[0]), n_joints, "ols")


def joint_row_weights(sigma_nm: np.ndarray, n_rows: int) -> np.ndarray:
    """Row weights 1/sigma_j^2 for stacked rows, from per-joint noise levels."""
    sigma = np.maximum(np.asarray(sigma_nm, float), 1e-9)
    return np.tile(1.0 / sigma**2, n_rows // sigma.shape[0])


def weighted_least_squares(w, y, n_joints: int, *, sigma_nm: np.ndarray | None = None) -> LinearEstimate:
    """WLS with a noise level per joint: given ``sigma_nm`` or estimated from OLS residuals."""
    w, y = _check(w, y, n_joints)
    if sigma_nm is None:
        sigma_nm = ordinary_least_squares(w, y, n_joints).residual_rms_nm
    weights = joint_row_weights(sigma_nm, y.shape[0])
    return _solve_weighted(w, y, weights, n_joints, "wls", iterations=2)


def iteratively_reweighted_least_squares(w, y, n_joints: int, *, tuning: float = 4.685, max_iterations: int = 30,
                                         tolerance: float = 1e-8, row_mask: np.ndarray | None = None
                                         ) -> LinearEstimate:
    """IRLS with Tukey's bisquare weights (``tuning`` x robust sigma; 4.685 = 95 % Gaussian efficiency).

    The scale of each joint is its residuals' median absolute deviation / 0.6745,
    so one joint's outliers do not affect another's weights. ``row_mask`` (0/1 per row)
    leaves rows out entirely (neither fitted nor part of the scale).
    """
    w, y = _check(w, y, n_joints)
    mask = np.ones(y.shape[0]) if row_mask is None else np.asarray(row_mask, float).ravel()
    estimate = _solve_weighted(w, y, mask, n_joints, "ols")
    x = estimate.parameters
    kept = mask.reshape(-1, n_joints) > 0
    for it in range(1, max_iterations + 1):
        residual = (y - w @ x).reshape(-1, n_joints)
        scale = np.array([np.median(np.abs(r[k] - np.median(r[k]))) if k.any() else 1.0
                          for r, k in zip(residual.T, kept.T)]) / 0.6745
        scale = np.maximum(scale, 1e-12)
        u = residual / (tuning * scale)
        bisquare = np.where(np.abs(u) < 1.0, (1.0 - u**2) ** 2, 0.0)
        weights = (bisquare / scale**2).ravel() * mask
        estimate = _solve_weighted(w, y, weights, n_joints, "irls", iterations=it)
        step = np.linalg.norm(estimate.parameters - x) / max(np.linalg.norm(x), 1e-12)
        x = estimate.parameters
        if step < tolerance:
            break
    return estimate


def compress(w, y, row_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Weighted data compression: (R, z, rss0) with ||sqrt(Wt)(W x - y)||^2 = ||R x - z||^2 + rss0."""
    w = np.asarray(w, float)
    y = np.asarray(y, float).ravel()
    sw = np.ones_like(y) if row_weights is None else np.sqrt(row_weights)
    aug = np.column_stack([w * sw[:, None], y * sw])
    r_aug = scipy.linalg.qr(aug, mode="r")[0]
    p = w.shape[1]
    return r_aug[:p, :p], r_aug[:p, p], float(r_aug[p, p] ** 2) if r_aug.shape[0] > p else 0.0


def _default_extra_bounds(n: int, rotor: bool, friction: bool) -> tuple[np.ndarray, np.ndarray]:
    """Rotor inertia >= 0; P2 friction static/Coulomb/viscous >= 0, offset free (the simple default)."""
    lo = ([np.zeros(n)] if rotor else []) + ([np.tile([0.0, 0.0, 0.0, -np.inf], n)] if friction else [])
    lo_arr = np.concatenate(lo) if lo else np.zeros(0)
    return lo_arr, np.full(lo_arr.shape[0], np.inf)


def physically_consistent_least_squares(
    r_factor: np.ndarray,
    z: np.ndarray,
    combination_matrix: np.ndarray,
    prior_full: np.ndarray,
    *,
    n_joints: int,
    rotor: bool = True,
    friction: bool = True,
    extra_bounds: tuple[np.ndarray, np.ndarray] | None = None,
    inequality: np.ndarray | None = None,
    extra_scale: np.ndarray | None = None,
    com_half_width_m: np.ndarray | float = 0.3,
    mass_bounds_kg: tuple[np.ndarray, np.ndarray] | None = None,
    regularisation: float = 1e-6,
    initial_full: np.ndarray | None = None,
    initial_base: np.ndarray | None = None,
    max_evaluations: int = 200,
) -> ConsistentEstimate:
    """Weighted least squares over the full parameters, each link physically consistent.

    Cost: ||R K x(eta, e) - z||^2 + regularisation * ||D (x - prior)||^2, where (R, z) is the
    compressed weighted base-regressor data (:func:`compress`), K the base map's combination
    matrix, x the full parameter vector (standard 10n, then the "extra" parameters e: rotor
    inertia, friction, ...), eta the links' log-Cholesky parameters (Rucker & Wensing 2022) and
    D a per-parameter scale. The small regulariser only chooses, among the parameter sets
    that fit the data equally (the non-base directions), the one nearest the prior; parameters
    that are base parameters on their own (friction) are not regularised. The start is
    ``initial_base`` mapped to the full vector nearest the prior in the D-scaled norm (e.g. the
    weighted estimate's base parameters), else ``initial_full``, else the prior.

    Bounds: CoM within ``com_half_width_m`` of the prior CoM (box, per axis), mass in
    ``mass_bounds_kg`` (default 1 % .. 10x of the prior); ``extra_bounds`` (lower, upper) on e
    (default: rotor inertia and P2 static/Coulomb/viscous friction >= 0, see
    :func:`_default_extra_bounds`). ``inequality`` G (m, len(e)): ``G e >= 0`` (e.g. the
    friction dissipates over the speeds seen), enforced by a stiff penalty inside the
    solver (a violation of 1 mNm weighs like moving the parameter by ~1 Nm) and then
    exactly, by the smallest (D-scaled) change of e that satisfies it (SLSQP).
    """
    n = n_joints
    prior_full = np.asarray(prior_full, float)
    p_full = combination_matrix.shape[1]
    n_extra = p_full - 10 * n
    if prior_full.shape != (p_full,) or n_extra < 0:
        raise ValueError(f"prior has shape {prior_full.shape}, expected ({p_full},) matching the base map")
    if extra_bounds is None:
        lo_extra, hi_extra = _default_extra_bounds(n, rotor, friction)
        if lo_extra.shape[0] != n_extra:
            raise ValueError(f"{n_extra} non-link parameters but rotor={rotor}, friction={friction} describe "
                             f"{lo_extra.shape[0]}: pass extra_bounds")
    else:
        lo_extra, hi_extra = (np.asarray(b, float).ravel() for b in extra_bounds)
        if lo_extra.shape != (n_extra,) or hi_extra.shape != (n_extra,):
            raise ValueError(f"extra_bounds must each have {n_extra} entries")
    g_matrix = np.zeros((0, n_extra)) if inequality is None else np.atleast_2d(np.asarray(inequality, float))
    if g_matrix.shape[1] != n_extra:
        raise ValueError(f"inequality has {g_matrix.shape[1]} columns, expected {n_extra} (one per extra parameter)")
    m_matrix = r_factor @ combination_matrix  # (r, p_full)
    prior_links = prior_full[: 10 * n].reshape(n, 10)
    prior_mass = np.maximum(prior_links[:, 0], 1e-3)
    # Per-parameter scale D: mass ~ m, first moment ~ m * 0.1 m, inertia ~ m * (0.1 m)^2.
    link_scale = np.column_stack([prior_mass, *(prior_mass * 0.1,) * 3, *(prior_mass * 0.01,) * 6])
    if extra_scale is None:
        extra_scale = np.maximum(np.abs(prior_full[10 * n:]), 1e-3)
        if rotor and extra_bounds is None:
            extra_scale = np.concatenate([extra_scale[:n], np.ones(n_extra - n)])
        elif extra_bounds is None:
            extra_scale = np.ones(n_extra)
    d_scale = np.concatenate([link_scale.ravel(), np.asarray(extra_scale, float)])
    # Regulariser weight relative to the data's own curvature along each (scaled) parameter. A parameter
    # that is a base parameter on its own (its column of K a unit vector alone in its row: friction) has
    # no non-base direction to choose, so it is not pulled towards the prior at all.
    col_energy = np.sum((m_matrix * d_scale) ** 2, axis=0)
    reg_rows = np.sqrt(regularisation * max(float(np.mean(col_energy)), 1e-12)) / d_scale
    k_nonzero = combination_matrix != 0
    alone = (k_nonzero.sum(axis=0) == 1) & (k_nonzero[np.argmax(k_nonzero, axis=0), :].sum(axis=1) == 1)
    reg_rows[alone] = 0.0
    # Penalty weight of the inequalities: 1e3 x the data's stiffness along the extra parameters they involve.
    extra_energy = np.sum(m_matrix[:, 10 * n:] ** 2, axis=0)
    involved = np.abs(g_matrix).sum(axis=0) > 0
    penalty = 1e3 * np.sqrt(float(np.max(extra_energy[involved]))) if involved.any() else 0.0

    start = prior_full if initial_full is None else np.asarray(initial_full, float)
    if initial_base is not None:
        # the full vector nearest the prior in the scaled norm ||D^-1 (x - prior)|| with these base
        # parameters (e.g. the weighted estimate's): a start whose links need the least repair
        kd = combination_matrix * d_scale
        start = prior_full + d_scale * np.linalg.lstsq(kd, np.asarray(initial_base, float) -
                                                       combination_matrix @ prior_full, rcond=None)[0]
    eta0 = log_cholesky_from_standard(start[: 10 * n].reshape(n, 10))
    extra0 = start[10 * n:].copy()
    prior_com = prior_links[:, 1:4] / prior_links[:, :1]
    half = np.broadcast_to(np.asarray(com_half_width_m, float), (n,))
    if mass_bounds_kg is None:
        mass_lo, mass_hi = 0.01 * prior_mass, 10.0 * prior_mass
    else:
        mass_lo, mass_hi = (np.broadcast_to(np.asarray(b, float), (n,)) for b in mass_bounds_kg)
    lo_eta = np.full((n, 10), -np.inf)
    hi_eta = np.full((n, 10), np.inf)
    lo_eta[:, 0], hi_eta[:, 0] = 0.5 * np.log(mass_lo), 0.5 * np.log(mass_hi)
    lo_eta[:, 7:10], hi_eta[:, 7:10] = prior_com - half[:, None], prior_com + half[:, None]
    # e^d_i and s_ij are radii of gyration (m) about the CoM: bounded to keep exp() finite.
    lo_eta[:, 1:4], hi_eta[:, 1:4] = np.log(1e-4), np.log(2.0)
    lo_eta[:, 4:7], hi_eta[:, 4:7] = -2.0, 2.0
    lower = np.concatenate([lo_eta.ravel(), lo_extra])
    upper = np.concatenate([hi_eta.ravel(), hi_extra])
    x0 = np.concatenate([eta0.ravel(), extra0])
    margin = 1e-6 * (upper - lower)
    margin = np.where(np.isfinite(margin), margin, 0.0)
    x0 = np.clip(x0, lower + margin, upper - margin)

    def full_of(v: np.ndarray) -> np.ndarray:
        return np.concatenate([standard_from_log_cholesky(v[: 10 * n].reshape(n, 10)).ravel(), v[10 * n:]])

    def residual(v: np.ndarray) -> np.ndarray:
        x = full_of(v)
        return np.concatenate([m_matrix @ x - z, reg_rows * (x - prior_full),
                               penalty * np.minimum(g_matrix @ v[10 * n:], 0.0)])

    def jacobian(v: np.ndarray) -> np.ndarray:
        jac_links = log_cholesky_jacobian(v[: 10 * n].reshape(n, 10))
        dx = scipy.linalg.block_diag(*jac_links, np.eye(n_extra)) if n_extra else scipy.linalg.block_diag(*jac_links)
        active = (g_matrix @ v[10 * n:] < 0.0).astype(float)
        jac_penalty = np.zeros((g_matrix.shape[0], v.shape[0]))
        jac_penalty[:, 10 * n:] = penalty * active[:, None] * g_matrix
        return np.vstack([m_matrix @ dx, reg_rows[:, None] * dx, jac_penalty])

    sol = scipy.optimize.least_squares(residual, x0, jac=jacobian, bounds=(lower, upper), method="trf",
                                       x_scale="jac", max_nfev=max_evaluations, xtol=1e-12, ftol=1e-12, gtol=1e-12)
    v = sol.x.copy()
    repaired = 0.0
    if g_matrix.shape[0] and np.min(g_matrix @ v[10 * n:]) < 0.0:
        v[10 * n:], repaired = _satisfy(g_matrix, v[10 * n:], d_scale[10 * n:], lo_extra, hi_extra)
    full = full_of(v)
    return ConsistentEstimate(full_parameters=full, log_cholesky=v[: 10 * n].reshape(n, 10), cost=float(sol.cost),
                              success=bool(sol.success), message=str(sol.message), n_evaluations=int(sol.nfev),
                              info={"optimality": float(sol.optimality), "inequality_repair": repaired,
                                    "min_inequality": float(np.min(g_matrix @ v[10 * n:]))
                                    if g_matrix.shape[0] else None})


def _satisfy(g_matrix: np.ndarray, e: np.ndarray, scale: np.ndarray, lower: np.ndarray, upper: np.ndarray
             ) -> tuple[np.ndarray, float]:
    """The e' nearest e (scaled distance) with G e' >= 0 within the bounds; returns (e', ||D^-1 (e' - e)||)."""
    def cost(x: np.ndarray) -> float:
        return float(np.sum(((x - e) / scale) ** 2))

    def grad(x: np.ndarray) -> np.ndarray:
        return 2.0 * (x - e) / scale**2

    bounds = [(None if not np.isfinite(a) else a, None if not np.isfinite(b) else b) for a, b in zip(lower, upper)]
    res = scipy.optimize.minimize(cost, e, jac=grad, method="SLSQP", bounds=bounds,
                                  constraints=[{"type": "ineq", "fun": lambda x: g_matrix @ x,
                                                "jac": lambda x: g_matrix}],
                                  options={"ftol": 1e-15, "maxiter": 200})
    x = res.x
    # SLSQP meets the constraints to ~1e-10: move the rest along the smallest feasible direction exactly.
    deficit = -np.min(g_matrix @ x)
    if deficit > 0:
        direction = np.linalg.lstsq(g_matrix, np.ones(g_matrix.shape[0]), rcond=None)[0]
        slack = np.min(g_matrix @ direction)
        if slack > 0:
            x = x + direction * (deficit / slack)
    return x, float(np.sqrt(cost(x)))


@dataclass(frozen=True)
class NormalEquations:
    """Per-joint normal equations of a stacked regressor: G_j = W_j^T W_j, b_j = W_j^T y_j, c_j = y_j^T y_j.

    Any per-joint weighting (WLS) is then a weighted sum of these small matrices, so
    long recordings are touched once; columns are scaled to unit norm first, which
    keeps the squared condition number harmless for a well-excited base regressor.
    """

    gram: np.ndarray  # (n, p, p), scaled columns
    rhs: np.ndarray  # (n, p)
    yy: np.ndarray  # (n,)
    column_scale: np.ndarray  # (p,)
    n_samples: int
    #: rows counted per joint (rows with weight 0 are left out), default every sample
    counts: np.ndarray | None = None

    @classmethod
    def from_regressor(cls, w, y, n_joints: int, *, row_mask: np.ndarray | None = None) -> NormalEquations:
        """Per-joint normal equations; ``row_mask`` (0/1 per row) leaves rows out (e.g. a joint at rest)."""
        w, y = _check(w, y, n_joints)
        counts = None
        if row_mask is not None:
            mask = np.asarray(row_mask, float).ravel()
            w = w * mask[:, None]
            y = y * mask
            counts = np.maximum(mask.reshape(-1, n_joints).sum(axis=0), 1.0)
        scale = np.linalg.norm(w, axis=0)
        scale[scale == 0] = 1.0
        n_samples = w.shape[0] // n_joints
        p = w.shape[1]
        gram = np.empty((n_joints, p, p))
        rhs = np.empty((n_joints, p))
        yy = np.empty(n_joints)
        for j in range(n_joints):
            wj = w[j::n_joints] / scale
            gram[j] = wj.T @ wj
            rhs[j] = wj.T @ y[j::n_joints]
            yy[j] = y[j::n_joints] @ y[j::n_joints]
        return cls(gram, rhs, yy, scale, n_samples, counts)

    @property
    def n_joints(self) -> int:
        return int(self.yy.shape[0])

    def _weighted(self, joint_weights: np.ndarray):
        g = np.einsum("j,jpq->pq", joint_weights, self.gram)
        b = joint_weights @ self.rhs
        return g, b

    def residual_rms(self, parameters: np.ndarray) -> np.ndarray:
        """Per-joint RMS residual of ``parameters`` (unscaled)."""
        x = np.asarray(parameters) * self.column_scale
        rss = self.yy - 2 * self.rhs @ x + np.einsum("p,jpq,q->j", x, self.gram, x)
        counts = self.n_samples if self.counts is None else self.counts
        return np.sqrt(np.maximum(rss, 0.0) / counts)

    def solve(self, joint_weights: np.ndarray | None = None, *, method: str = "wls") -> LinearEstimate:
        """Weighted LS with one weight per joint (None = OLS), with covariance and per-joint RMS."""
        n = self.n_joints
        wj = np.ones(n) if joint_weights is None else np.asarray(joint_weights, float)
        g, b = self._weighted(wj)
        chol = scipy.linalg.cho_factor(g)
        x_scaled = scipy.linalg.cho_solve(chol, b)
        x = x_scaled / self.column_scale
        rms = self.residual_rms(x)
        p = g.shape[0]
        counts = np.full(n, float(self.n_samples)) if self.counts is None else self.counts
        dof = max(float(counts.sum()) - p, 1.0)
        weighted_sigma2 = float(np.sum(wj * rms**2 * counts) / dof)
        cov = weighted_sigma2 * scipy.linalg.cho_solve(chol, np.eye(p)) / np.outer(self.column_scale, self.column_scale)
        return LinearEstimate(parameters=x, std=np.sqrt(np.maximum(np.diag(cov), 0.0)), covariance=cov,
                              residual_rms_nm=rms, row_weights=np.tile(wj, self.n_samples),
                              method="ols" if joint_weights is None else method, iterations=1)

    def compressed(self, joint_weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(R, z) with ||R x - z||^2 = weighted ||W x - y||^2 - const (R^T R = G by Cholesky)."""
        n = self.n_joints
        wj = np.ones(n) if joint_weights is None else np.asarray(joint_weights, float)
        g, b = self._weighted(wj)
        upper = scipy.linalg.cholesky(g, lower=False)
        z = scipy.linalg.solve_triangular(upper, b, trans="T")
        return upper * self.column_scale[None, :], z
