"""Physical consistency of link inertial parameters: the pseudo-inertia and its log-Cholesky parameters.

A link's 10 standard parameters (pinocchio order: m, h = m c, inertia about the
joint-frame origin I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) describe a real rigid body
iff its 4x4 pseudo-inertia

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I)/2 * 1 - I   (the second moment of mass)

is positive definite (Wensing, Kim & Slotine 2017). The log-Cholesky
parameterisation (Rucker & Wensing 2022, eq. (7)-(9)) writes J = U U^T with

    U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3], [0, 0, 0, 1]]

so *every* real 10-vector eta = (alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3) gives
a physically consistent link, with mass e^(2 alpha) and centre of mass exactly t.
An unconstrained optimiser over eta therefore can only return realisable links.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "is_physically_consistent",
    "log_cholesky_jacobian",
    "log_cholesky_from_standard",
    "pseudo_inertia_from_standard",
    "standard_from_log_cholesky",
    "standard_from_pseudo_inertia",
]

_ETA_NAMES = ("alpha", "d1", "d2", "d3", "s12", "s23", "s13", "t1", "t2", "t3")


def _links(values, width: int) -> np.ndarray:
    arr = np.asarray(values)
    if arr.shape[-1] != width:
        raise ValueError(f"expected the last axis to have {width} entries per link, got shape {arr.shape}")
    return arr.reshape(-1, width)


def pseudo_inertia_from_standard(theta) -> np.ndarray:
    """Pseudo-inertia J (L, 4, 4) of standard parameters (L, 10) or (10L,)."""
    p = _links(theta, 10)
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = p.T
    inertia = np.empty((p.shape[0], 3, 3), dtype=p.dtype)
    inertia[:, 0, 0], inertia[:, 0, 1], inertia[:, 0, 2] = ixx, ixy, ixz
    inertia[:, 1, 0], inertia[:, 1, 1], inertia[:, 1, 2] = ixy, iyy, iyz
    inertia[:, 2, 0], inertia[:, 2, 1], inertia[:, 2, 2] = ixz, iyz, izz
    trace = ixx + iyy + izz
    j = np.zeros((p.shape[0], 4, 4), dtype=p.dtype)
    j[:, :3, :3] = 0.5 * trace[:, None, None] * np.eye(3) - inertia
    j[:, :3, 3] = np.stack([hx, hy, hz], axis=1)
    j[:, 3, :3] = j[:, :3, 3]
    j[:, 3, 3] = m
    return j


def standard_from_pseudo_inertia(j) -> np.ndarray:
    """Standard parameters (L, 10) of pseudo-inertias (L, 4, 4): I = tr(Sigma) 1 - Sigma."""
    j = np.asarray(j).reshape(-1, 4, 4)
    sigma = j[:, :3, :3]
    inertia = np.trace(sigma, axis1=1, axis2=2)[:, None, None] * np.eye(3) - sigma
    return np.stack([j[:, 3, 3], j[:, 0, 3], j[:, 1, 3], j[:, 2, 3], inertia[:, 0, 0], inertia[:, 0, 1],
                     inertia[:, 1, 1], inertia[:, 0, 2], inertia[:, 1, 2], inertia[:, 2, 2]], axis=1)


def _upper_factor(eta: np.ndarray) -> np.ndarray:
    """U of Rucker & Wensing 2022 eq. (7) for eta (L, 10); works for complex eta (complex-step Jacobians)."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = eta.T
    u = np.zeros((eta.shape[0], 4, 4), dtype=eta.dtype)
    u[:, 0, 0], u[:, 0, 1], u[:, 0, 2], u[:, 0, 3] = np.exp(d1), s12, s13, t1
    u[:, 1, 1], u[:, 1, 2], u[:, 1, 3] = np.exp(d2), s23, t2
    u[:, 2, 2], u[:, 2, 3] = np.exp(d3), t3
    u[:, 3, 3] = 1.0
    return u * np.exp(alpha)[:, None, None]


def standard_from_log_cholesky(eta) -> np.ndarray:
    """Standard parameters (L, 10) of log-Cholesky parameters (L, 10) or (10L,): always consistent."""
    e = _links(eta, 10)
    u = _upper_factor(e)
    return standard_from_pseudo_inertia(u @ np.swapaxes(u, 1, 2))


def log_cholesky_jacobian(eta) -> np.ndarray:
    """d(standard)/d(eta), shape (L, 10, 10), by complex-step differentiation (exact to rounding)."""
    e = _links(eta, 10).astype(float)
    step = 1e-30
    jac = np.empty((e.shape[0], 10, 10))
    for k in range(10):
        perturbed = e.astype(complex)
        perturbed[:, k] += 1j * step
        jac[:, :, k] = standard_from_log_cholesky(perturbed).imag / step
    return jac


def log_cholesky_from_standard(theta, *, min_eigenvalue: float = 1e-9) -> np.ndarray:
    """Log-Cholesky parameters (L, 10) of standard parameters (L, 10) or (10L,).

    A link that is not physically consistent is first projected onto the
    consistent set by clipping the pseudo-inertia's eigenvalues at
    ``min_eigenvalue`` (scaled by the link's mass), so this always succeeds.
    """
    j = pseudo_inertia_from_standard(np.asarray(theta, float))
    out = np.empty((j.shape[0], 10))
    flip = np.eye(4)[::-1]
    for i, ji in enumerate(j):
        w, v = np.linalg.eigh(ji)
        floor = min_eigenvalue * max(abs(ji[3, 3]), 1e-6)
        if w.min() < floor:
            ji = (v * np.maximum(w, floor)) @ v.T
        # J = U U^T with U upper triangular: Cholesky of the index-reversed matrix, reversed back.
        lower = np.linalg.cholesky(flip @ ji @ flip)
        u = flip @ lower @ flip
        scale = u[3, 3]
        out[i] = (np.log(scale), np.log(u[0, 0] / scale), np.log(u[1, 1] / scale), np.log(u[2, 2] / scale),
                  u[0, 1] / scale, u[1, 2] / scale, u[0, 2] / scale,
                  u[0, 3] / scale, u[1, 3] / scale, u[2, 3] / scale)
    return out


def is_physically_consistent(theta, *, tolerance: float = 0.0) -> np.ndarray:
    """Per link (bool array): positive mass and pseudo-inertia positive definite (> -tolerance)."""
    j = pseudo_inertia_from_standard(np.asarray(theta, float))
    eig_min = np.linalg.eigvalsh(j).min(axis=1)
    return (j[:, 3, 3] > 0) & (eig_min > -tolerance)
