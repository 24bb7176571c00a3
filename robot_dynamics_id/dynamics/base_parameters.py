"""Base (identifiable) parameters: the minimal set of parameter combinations the torques determine.

Many standard parameters never affect the joint torques (e.g. most of link 1's
inertia) or affect them only in fixed linear combinations. The base parameters
are found numerically (Gautier's method): the full regressor is evaluated on
random samples, QR with column pivoting picks ``r`` independent columns and
expresses the others in them, ``W_dep = W_indep beta``. Then for *every* motion

    W theta = W_indep (theta_indep + beta theta_dep) = W_base (K theta)

with the base parameters ``K theta`` and ``K = [I  beta]`` (columns permuted back).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..robots.model import RobotModel
from .regressor import (
    DEFAULT_COULOMB_VELOCITY_RAD_S,
    DEFAULT_STRIBECK_VELOCITY_RAD_S,
    full_regressor,
)

__all__ = [
    "BaseParameterMap",
    "InsufficientExcitationError",
    "check_excitation",
    "compute_base_parameters",
    "condition_number",
]


class InsufficientExcitationError(ValueError):
    """The data do not excite every base parameter; the message names the unidentifiable ones."""

    def __init__(self, message: str, unidentifiable: list[str]):
        super().__init__(message)
        self.unidentifiable = unidentifiable


@dataclass(frozen=True)
class BaseParameterMap:
    """How the full parameter vector maps to the base parameters.

    ``independent_columns``: indices (into the full regressor) kept as base columns.
    ``combination_matrix`` K, shape (r, p): base = K @ full.
    ``names``: one readable name per base parameter, e.g. ``link2.mx + 0.244*link3.m``.
    ``full_names``: the full regressor's column names.
    """

    independent_columns: np.ndarray
    combination_matrix: np.ndarray
    names: tuple[str, ...]
    full_names: tuple[str, ...]
    friction: bool = True
    rotor: bool = True

    @property
    def n_base(self) -> int:
        return int(self.independent_columns.shape[0])

    @property
    def n_full(self) -> int:
        return int(self.combination_matrix.shape[1])

    def base_regressor(self, full_regressor: np.ndarray) -> np.ndarray:
        """Keep the independent columns of a full regressor: W_base, shape (rows, r)."""
        w = np.asarray(full_regressor)
        if w.shape[1] != self.n_full:
            raise ValueError(f"full regressor has {w.shape[1]} columns, this map expects {self.n_full}")
        return w[:, self.independent_columns]

    def base_from_standard(self, theta) -> np.ndarray:
        """Base parameters of a full parameter vector (rigid body [+ rotor] [+ friction])."""
        theta = np.asarray(theta, float)
        if theta.shape[-1] != self.n_full:
            raise ValueError(f"parameter vector has {theta.shape[-1]} entries, this map expects {self.n_full}")
        return theta @ self.combination_matrix.T

    def standard_near(self, base, prior) -> np.ndarray:
        """The full parameter vector closest (Euclidean) to ``prior`` whose base parameters are ``base``."""
        k = self.combination_matrix
        prior = np.asarray(prior, float)
        correction = np.linalg.lstsq(k, np.asarray(base, float) - k @ prior, rcond=None)[0]
        return prior + correction


def _random_samples(robot: RobotModel, n_samples: int, rng: np.random.Generator):
    n = robot.n_joints
    q = rng.uniform(-np.pi, np.pi, (n_samples, n))
    qd = rng.uniform(-1.0, 1.0, (n_samples, n)) * np.minimum(robot.velocity_limit_rad_s, 3.0)
    qdd = rng.uniform(-1.0, 1.0, (n_samples, n)) * np.minimum(robot.acceleration_limit_rad_s2, 10.0)
    return q, qd, qdd


def _format_combination(name: str, coefficients: np.ndarray, dependent_names: list[str]) -> str:
    terms = [name]
    for c, dep in zip(coefficients, dependent_names):
        if abs(c) > 1e-10:
            terms.append(f"{'+' if c > 0 else '-'} {abs(c):.6g}*{dep}")
    return " ".join(terms)


def compute_base_parameters(robot: RobotModel, *, friction: bool = True, rotor: bool = True,
                            n_samples: int = 300, seed: int = 0, tolerance: float = 1e-9,
                            stribeck_velocity_rad_s=DEFAULT_STRIBECK_VELOCITY_RAD_S,
                            coulomb_velocity_rad_s=DEFAULT_COULOMB_VELOCITY_RAD_S) -> BaseParameterMap:
    """Base parameters of ``robot`` by QR of the column-normalised regressor on random samples.

    ``tolerance`` is relative to the largest |R_ii| of the column-normalised regressor.
    The map depends only on the kinematics (not on the inertials the model carries).
    """
    if n_samples * robot.n_joints < 12 * robot.n_joints + 10 * robot.n_joints:
        raise ValueError(f"n_samples={n_samples} is too few to find the base parameters; use >= 100")
    rng = np.random.default_rng(seed)
    q, qd, qdd = _random_samples(robot, n_samples, rng)
    w, names = full_regressor(robot, q, qd, qdd, friction=friction, rotor=rotor,
                              stribeck_velocity_rad_s=stribeck_velocity_rad_s,
                              coulomb_velocity_rad_s=coulomb_velocity_rad_s)
    norms = np.linalg.norm(w, axis=0)
    # Columns at rounding level (e.g. link 2's first moment along its own, horizontal, axis) are zero.
    w = np.where(norms > tolerance * norms.max(), w, 0.0)
    norms = np.linalg.norm(w, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    # QR *without* pivoting in the natural column order (Gautier): a column is dependent when it
    # lies in the span of the columns before it, so later links' parameters regroup onto earlier
    # ones and the base parameters read like the classical closed-form ones.
    r_factor = scipy.linalg.qr(w / scale, mode="r")[0]
    diag = np.abs(np.diag(r_factor))
    is_independent = diag > tolerance * diag.max()
    independent = np.flatnonzero(is_independent)
    dependent = np.flatnonzero(~is_independent)
    rank = independent.shape[0]
    # W_dep = W_indep beta: least squares on the random-sample regressor (exact up to rounding)
    w_scaled = w / scale
    beta_scaled = np.linalg.lstsq(w_scaled[:, independent], w_scaled[:, dependent], rcond=None)[0]
    beta = beta_scaled * scale[dependent][None, :] / scale[independent][:, None]
    beta[np.abs(beta) < 1e-9 * max(1.0, np.abs(beta).max(initial=0.0))] = 0.0
    order = np.argsort(independent)  # keep base columns in the natural column order
    independent = independent[order]
    beta = beta[order]
    k = np.zeros((rank, w.shape[1]))
    k[np.arange(rank), independent] = 1.0
    k[:, dependent] = beta
    dependent_names = [names[i] for i in dependent]
    base_names = tuple(_format_combination(names[i], beta[row], dependent_names) for row, i in enumerate(independent))
    return BaseParameterMap(independent_columns=independent, combination_matrix=k, names=base_names,
                            full_names=tuple(names), friction=friction, rotor=rotor)


def condition_number(base_regressor: np.ndarray, *, normalise: bool = True) -> float:
    """2-norm condition number of a base regressor, by default after scaling every column to unit norm
    (so the number measures excitation, not the parameters' units). ``inf`` if a column is zero."""
    w = np.asarray(base_regressor, float)
    if normalise:
        norms = np.linalg.norm(w, axis=0)
        if np.any(norms == 0):
            return float("inf")
        w = w / norms
    s = np.linalg.svd(w, compute_uv=False)
    return float("inf") if s[-1] == 0 else float(s[0] / s[-1])


def check_excitation(base_regressor: np.ndarray, names, *, tolerance: float = 1e-7) -> None:
    """Raise :class:`InsufficientExcitationError` naming the base parameters the data cannot identify.

    QR with pivoting of the column-normalised regressor: columns pivoted past the
    numerical rank are (nearly) combinations of the others in this data set.
    """
    w = np.asarray(base_regressor, float)
    names = list(names)
    norms = np.linalg.norm(w, axis=0)
    zero = [names[i] for i in np.flatnonzero(norms == 0)]
    scale = np.where(norms > 0, norms, 1.0)
    r_factor, perm = scipy.linalg.qr(w / scale, mode="r", pivoting=True)
    diag = np.abs(np.diag(r_factor))
    rank = int(np.sum(diag > tolerance * max(diag[0], 1e-300)))
    if rank == w.shape[1]:
        return
    bad = [names[i] for i in perm[rank:] if names[i] not in zero] + zero
    raise InsufficientExcitationError(
        f"the data excite only {rank} of {w.shape[1]} base parameters; unidentifiable: {', '.join(bad)}. "
        "Record a richer excitation (more joints moving, wider velocity range, optimised Fourier "
        "trajectory: `rdi excite plan`) or fix these parameters from a prior.",
        bad,
    )
