"""Operational-space inertia near kinematic singularities (seeds.md P2, eqs. (6)-(9)).

Away from singularities ``Lambda = (J M^-1 J^T)^-1`` (P2, eq. (1)). Near one, ``J`` loses
rank and ``Lambda^-1`` becomes singular. Three ways of forming ``Lambda`` are offered:

* ``padding`` — Jamisola P2, eqs. (6)-(9): express ``Lambda^-1`` in a frame whose
  axis k is the lost direction (P2 uses the link-4 frame of the PUMA; here the frame
  comes from the SVD of ``J``: the left singular vectors ``U``, found as the
  eigenvectors of ``J J^T``), set row and column k to zero and the diagonal element to
  one (unit inertia: no dynamic decoupling along the lost axis, but the motion
  command along it still acts), invert, and transform back ``Lambda = U Lambda_U U^T``.
  Applied inside a region ``sigma_min < region_enter_sigma``; between
  ``region_enter_sigma`` and ``region_full_sigma`` the regular and padded inertias are
  blended with a C1 smoothstep weight so entry and exit do not jerk the arm.
* ``truncation`` — the baseline P2 compares against: inside the region the lost
  direction is simply removed (zero inertia along it, hard switch at the border).
* ``damped_least_squares`` — ``Lambda = (J M^-1 J^T + lambda^2 I)^-1`` with the damping
  growing quadratically as sigma_min falls below ``region_enter_sigma``
  (Nakamura & Hanafusa style variable damping).
* ``none`` — plain inverse (fails at the singularity; for comparison only).

The UR3's wrist singularity (q5 = 0) gives sigma_min(J) ~ 0.16 |q5| at the flange, so
the default region (0.04 / 0.015) starts about 14 deg and is fully padded inside 5 deg.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
from scipy.linalg import lapack

__all__ = ["SingularityHandler", "SingularityMethod", "smoothstep"]


class SingularityMethod(str, Enum):
    """How Lambda is formed near a singularity."""

    PADDING = "padding"
    TRUNCATION = "truncation"
    DAMPED_LEAST_SQUARES = "damped_least_squares"
    NONE = "none"


_EYE6 = np.eye(6)


def spd_inverse(matrix: np.ndarray) -> np.ndarray:
    """Inverse of a symmetric positive-definite matrix by a Cholesky solve (LAPACK dposv: about
    a third of numpy.linalg.inv's call overhead for 6x6); falls back to a plain inverse when the
    matrix is not positive definite."""
    x, info = lapack.dposv(matrix, _EYE6)[1:]
    if info != 0:
        return np.linalg.inv(matrix)
    return x


def smoothstep(x: float) -> float:
    """C1 ramp 0 -> 1 on [0, 1]: 3x^2 - 2x^3, clamped."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    return x * x * (3.0 - 2.0 * x)


class SingularityHandler:
    """Forms Lambda from Lambda^-1 and J each cycle, with the selected singularity treatment.

    After :meth:`operational_inertia` the attributes ``sigma_min`` (smallest singular
    value of J), ``padding_weight`` (0 outside the region, 1 fully inside),
    ``in_region`` and ``lost_direction`` (unit 6-vector, twist space, base axes) describe
    the cycle.
    """

    def __init__(self, *, method: SingularityMethod | str = SingularityMethod.PADDING,
                 region_enter_sigma: float = 0.03, region_full_sigma: float = 0.01,
                 padding_inverse_inertia: float = 1.0, damping_max: float = 0.02) -> None:
        self.method = SingularityMethod(method)
        if not (region_enter_sigma > region_full_sigma >= 0.0):
            raise ValueError(
                f"singularity region needs region_enter_sigma > region_full_sigma >= 0, got "
                f"{region_enter_sigma} and {region_full_sigma}")
        if padding_inverse_inertia <= 0.0 or damping_max < 0.0:
            raise ValueError("padding_inverse_inertia must be > 0 and damping_max >= 0")
        self.region_enter_sigma = float(region_enter_sigma)
        self.region_full_sigma = float(region_full_sigma)
        #: the diagonal element written into the padded Lambda^-1 (P2: 1)
        self.padding_inverse_inertia = float(padding_inverse_inertia)
        #: lambda^2 of damped least squares at sigma_min = 0 (units of Lambda^-1)
        self.damping_max = float(damping_max)
        self.sigma_min = np.inf
        self.padding_weight = 0.0
        self.in_region = False
        self.lost_direction = np.zeros(6)
        self._lam = np.zeros((6, 6))
        self._jjt = np.zeros((6, 6))
        self._eye = np.eye(6)

    def operational_inertia(self, lambda_inv: np.ndarray, jacobian: np.ndarray) -> np.ndarray:
        """Lambda (6x6, base axes) for this cycle; the returned array is reused next cycle."""
        np.dot(jacobian, jacobian.T, out=self._jjt)
        # J J^T = U S^2 U^T: the eigen-decomposition gives the SVD's U and sigma at a third of the cost.
        eigval, u, info = lapack.dsyev(self._jjt)
        if info != 0:  # pragma: no cover - LAPACK failure on a finite symmetric matrix
            eigval, u = np.linalg.eigh(self._jjt)
        sigma_min = float(np.sqrt(max(eigval[0], 0.0)))
        self.sigma_min = sigma_min
        self.lost_direction = u[:, 0]
        self.in_region = sigma_min < self.region_enter_sigma
        method = self.method
        if method is SingularityMethod.NONE or not self.in_region:
            self.padding_weight = 0.0
            self._lam[:] = spd_inverse(lambda_inv) if method is not SingularityMethod.NONE \
                else np.linalg.inv(lambda_inv)
            return self._lam
        if method is SingularityMethod.DAMPED_LEAST_SQUARES:
            ratio = sigma_min / self.region_enter_sigma
            damping = self.damping_max * (1.0 - ratio * ratio)
            self.padding_weight = 1.0 - ratio
            self._lam[:] = spd_inverse(lambda_inv + damping * self._eye)
            return self._lam
        # Lambda^-1 in the singular frame (P2, eq. (6)): columns of U are its axes.
        lam_u = u.T @ lambda_inv @ u
        lam_u[0, :] = 0.0
        lam_u[:, 0] = 0.0
        if method is SingularityMethod.TRUNCATION:
            # Baseline: drop the lost direction entirely (hard switch at the region border).
            self.padding_weight = 1.0
            lam_u[0, 0] = 1.0
            inv_u = np.linalg.inv(lam_u)
            inv_u[0, 0] = 0.0
            self._lam[:] = u @ inv_u @ u.T
            return self._lam
        # P2, eqs. (7)-(8): pad row/column k with zeros and a unit diagonal, invert,
        # P2, eq. (9): transform back to the base frame.
        lam_u[0, 0] = self.padding_inverse_inertia
        padded = u @ spd_inverse(lam_u) @ u.T
        span = self.region_enter_sigma - self.region_full_sigma
        weight = smoothstep((self.region_enter_sigma - sigma_min) / span)
        self.padding_weight = weight
        if weight >= 1.0:
            self._lam[:] = padded
        else:
            # Smooth transition at the region's edge: blend with the regular inverse,
            # which is still well conditioned here (sigma_min >= region_full_sigma).
            regular = spd_inverse(lambda_inv)
            self._lam[:] = weight * padded + (1.0 - weight) * regular
        return self._lam
