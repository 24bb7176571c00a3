"""Constrained multibody dynamics and control by projection matrices (Aghili, seeds.md P5).

A system ``M(q) qdd + h(q, qd) = tau + tau_c`` subject to ``phi(q) = 0`` with constraint
Jacobian ``A = dphi/dq`` (m x n), which may be redundant or lose rank (singular
configurations): everything goes through the orthogonal projector ``P = I - A^+ A`` onto
the null space of ``A``, by an SVD whose singular values below a tolerance count as zero,
so nothing inverts ``A A^T`` (as the classical Lagrange-multiplier formulation does).

What is here, with the paper's equation numbers:

* :func:`null_space_projector` — ``P`` and ``A^+`` by SVD with a rank tolerance [4, 15];
* :func:`consistent_acceleration` — ``(I - P) qdd = -A^+ Adot qd`` [13, 16];
* :func:`constraint_inertia_matrix` (``M_c``, [22-24]),
  :func:`symmetric_constraint_inertia_matrix` (``M_s``, [28]),
  :func:`parameterised_constraint_inertia_matrix` (``M_lambda``, [29]);
* :func:`constrained_forward_dynamics` — direct dynamics [22] (or the M_s / M_lambda forms);
* :func:`constraint_force` and :func:`constraint_multipliers` — recovery [32];
* :func:`correct_constraint_drift` — Newton-Raphson with ``A^+`` [39]; :func:`project_velocity` [12];
* :func:`projected_inverse_dynamics` — PIDC, the minimum-norm torque [45-48];
* :func:`weighted_projected_inverse_dynamics` — the unit-consistent version [49, 50];
* :func:`constraint_force_torque` and :func:`constraint_force_pi` — force control [51, 52];
* :func:`passive_joint_torque` and :func:`passive_joints_controllable` — passive joints [55-62];
  :func:`passive_joint_force_torque` — passive joints AND a commanded constraint force;
* :func:`inertia_decoupling_defect` — the inertia condition for decoupled force control (``P M = M P``).

Conventions: ``h = c + g`` is the bias torque (Coriolis, centrifugal, gravity);
``constraint_bias_acceleration`` is the m-vector ``Adot qd`` (the part of
``phi_ddot = A qdd + Adot qd`` that does not depend on ``qdd``); ``tau_c = A^T lambda``
is the generalised force the constraint exerts ON the system. All functions are
pure: arrays in, arrays out, no state kept between calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "DEFAULT_RANK_TOLERANCE",
    "ConstraintProjection",
    "DriftCorrection",
    "PassiveForceTorque",
    "PassiveJointTorque",
    "consistent_acceleration",
    "constrained_forward_dynamics",
    "constraint_force",
    "constraint_force_pi",
    "constraint_force_torque",
    "constraint_inertia_matrix",
    "constraint_multipliers",
    "correct_constraint_drift",
    "inertia_decoupling_defect",
    "null_space_projector",
    "parameterised_constraint_inertia_matrix",
    "passive_joint_force_torque",
    "passive_joint_torque",
    "passive_joints_controllable",
    "project_velocity",
    "projected_inverse_dynamics",
    "symmetric_constraint_inertia_matrix",
    "weighted_projected_inverse_dynamics",
]

#: Singular values of ``A`` at or below this (absolute, in the units of A: m/rad for a
#: position constraint on a revolute arm) are treated as zero. Small enough that a
#: fixed-step integration essentially never lands inside the dropped band, large
#: enough to sit well above round-off of an O(1) Jacobian.
DEFAULT_RANK_TOLERANCE = 1e-9


def _as_matrix(name: str, value: np.ndarray, n: int | None = None) -> np.ndarray:
    a = np.atleast_2d(np.asarray(value, dtype=float))
    if a.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape {np.shape(value)}")
    if n is not None and a.shape[1] != n:
        raise ValueError(f"{name} must have {n} columns (one per joint), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _as_square(name: str, value: np.ndarray) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"{name} must be a square n x n matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or inf")
    return a


def _as_vector(name: str, value: np.ndarray, n: int) -> np.ndarray:
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {np.shape(value)}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or inf")
    return v


@dataclass(frozen=True)
class ConstraintProjection:
    """The SVD-based projection data of one constraint Jacobian ``A`` (m x n).

    ``projector`` is ``P = I - A^+ A`` (n x n, symmetric, idempotent), the
    projector onto the admissible (tangent) velocities; ``pseudo_inverse`` is the
    rank-truncated ``A^+`` (n x m); ``rank`` the number of singular values above
    ``rank_tolerance``; ``singular_values`` all of them (descending), so a caller
    can watch the distance to a singular configuration (the smallest one).
    """

    projector: np.ndarray
    pseudo_inverse: np.ndarray
    rank: int
    singular_values: np.ndarray
    rank_tolerance: float

    @property
    def normal_projector(self) -> np.ndarray:
        """``I - P``: the projector onto the constraint-normal space (range of A^T)."""
        return np.eye(self.projector.shape[0]) - self.projector


def null_space_projector(
    constraint_jacobian: np.ndarray, *, rank_tolerance: float = DEFAULT_RANK_TOLERANCE
) -> ConstraintProjection:
    """``P = I - A^+ A`` and ``A^+`` from an SVD of ``A`` (Aghili P5, eqs. (4), (15)).

    Singular values ``<= rank_tolerance`` (absolute, units of ``A``) are dropped, so at a
    singular configuration the lost constraint direction is simply not enforced
    instead of producing an infinite pseudo-inverse. ``A`` may be redundant (m > rank).
    """
    if not rank_tolerance >= 0.0:
        raise ValueError(f"rank_tolerance must be >= 0, got {rank_tolerance}")
    a = _as_matrix("constraint_jacobian", constraint_jacobian)
    n = a.shape[1]
    if a.shape[0] == 1:
        # One constraint: the SVD is sigma = ||a||, v = a / sigma (same result, ~10x cheaper).
        sigma = float(np.sqrt(a[0] @ a[0]))
        if sigma > rank_tolerance:
            v = a[0] / sigma
            return ConstraintProjection(np.eye(n) - np.outer(v, v), (v / sigma)[:, None], 1,
                                        np.array([sigma]), float(rank_tolerance))
        return ConstraintProjection(np.eye(n), np.zeros((n, 1)), 0, np.array([sigma]), float(rank_tolerance))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    r = int(np.count_nonzero(s > rank_tolerance))
    v_r = vt[:r].T  # orthonormal basis of the row space of A (constraint-normal directions)
    # P = I - V_r V_r^T is exactly symmetric; A^+ = V_r S_r^-1 U_r^T (eq. 15).
    projector = np.eye(n) - v_r @ v_r.T
    pseudo_inverse = (v_r / s[:r]) @ u[:, :r].T
    return ConstraintProjection(projector, pseudo_inverse, r, s, float(rank_tolerance))


def project_velocity(joint_velocity: np.ndarray, projector: np.ndarray) -> np.ndarray:
    """Admissible part ``P qd`` of a joint velocity (Aghili P5, eq. (12): admissible iff ``P qd = qd``)."""
    p = _as_square("projector", projector)
    return p @ _as_vector("joint_velocity", joint_velocity, p.shape[0])


def consistent_acceleration(
    reference_acceleration: np.ndarray,
    projection: ConstraintProjection,
    constraint_bias_acceleration: np.ndarray,
) -> np.ndarray:
    """Make an acceleration satisfy the constraint: ``P qdd_ref - A^+ Adot qd``.

    Aghili P5, eqs. (13), (16): an admissible acceleration has normal part
    ``(I - P) qdd = -A^+ Adot qd``; the tangent part of the reference is kept.
    """
    p = projection.projector
    n = p.shape[0]
    qdd = _as_vector("reference_acceleration", reference_acceleration, n)
    b = _as_vector("constraint_bias_acceleration", constraint_bias_acceleration, projection.pseudo_inverse.shape[1])
    return p @ qdd - projection.pseudo_inverse @ b


def constraint_inertia_matrix(mass_matrix: np.ndarray, projector: np.ndarray) -> np.ndarray:
    """``M_c = M + P M - M P`` (Aghili P5, eqs. (22)-(24)).

    ``P M - M P`` is skew-symmetric, so ``x^T M_c x = x^T M x > 0``: ``M_c`` is
    invertible whenever ``M`` is, at singular configurations and with redundant
    constraints alike.
    """
    m = _as_square("mass_matrix", mass_matrix)
    p = _as_square("projector", projector)
    return m + p @ m - m @ p


def symmetric_constraint_inertia_matrix(mass_matrix: np.ndarray, projector: np.ndarray) -> np.ndarray:
    """``M_s = P M P + (I - P) M (I - P)``, symmetric positive definite (Aghili P5, eq. (28))."""
    m = _as_square("mass_matrix", mass_matrix)
    p = _as_square("projector", projector)
    q = np.eye(p.shape[0]) - p
    return p @ m @ p + q @ m @ q


def parameterised_constraint_inertia_matrix(
    mass_matrix: np.ndarray, projector: np.ndarray, mass_scale: float | None = None
) -> np.ndarray:
    """``M_lambda = P M + lambda (I - P)`` (Aghili P5, eq. (29)).

    ``mass_scale`` (lambda, in the units of M) defaults to ``tr(M)/n`` so both
    blocks have comparable magnitude (a good condition number).
    """
    m = _as_square("mass_matrix", mass_matrix)
    p = _as_square("projector", projector)
    lam = float(np.trace(m) / m.shape[0]) if mass_scale is None else float(mass_scale)
    if not lam > 0.0:
        raise ValueError(f"mass_scale (lambda) must be > 0 for M_lambda to be invertible, got {lam}")
    return p @ m + lam * (np.eye(p.shape[0]) - p)


InertiaForm = Literal["c", "s", "lambda"]


def constrained_forward_dynamics(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    torque: np.ndarray,
    constraint_jacobian: np.ndarray,
    constraint_bias_acceleration: np.ndarray,
    *,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
    inertia_form: InertiaForm = "c",
    projection: ConstraintProjection | None = None,
) -> np.ndarray:
    """Joint acceleration of the constrained system (Aghili P5, eq. (22)).

    Solves ``P M qdd = P (tau - h)`` [21] together with ``(I - P) qdd = b``,
    ``b = -A^+ Adot qd`` [16], through one invertible matrix:

    * ``"c"``: ``M_c qdd = P (tau - h) + M b`` (eq. 22);
    * ``"s"``: ``M_s qdd = P (tau - h) + (I - 2P) M b`` (eq. 28 form);
    * ``"lambda"``: ``M_lambda qdd = P (tau - h) + lambda b`` (eq. 29 form, lambda = tr(M)/n).

    All three give the same ``qdd``. Pass ``projection`` to reuse one computed
    for this ``A`` (then ``rank_tolerance`` is ignored).
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    h = _as_vector("bias_torque", bias_torque, n)
    tau = _as_vector("torque", torque, n)
    if projection is None:
        projection = null_space_projector(_as_matrix("constraint_jacobian", constraint_jacobian, n),
                                          rank_tolerance=rank_tolerance)
    p = projection.projector
    b = -projection.pseudo_inverse @ _as_vector(
        "constraint_bias_acceleration", constraint_bias_acceleration, projection.pseudo_inverse.shape[1]
    )
    rhs = p @ (tau - h)
    if inertia_form == "c":
        return np.linalg.solve(constraint_inertia_matrix(m, p), rhs + m @ b)
    if inertia_form == "s":
        return np.linalg.solve(symmetric_constraint_inertia_matrix(m, p), rhs + (np.eye(n) - 2.0 * p) @ m @ b)
    if inertia_form == "lambda":
        lam = float(np.trace(m) / n)
        return np.linalg.solve(parameterised_constraint_inertia_matrix(m, p, lam), rhs + lam * b)
    raise ValueError(f"inertia_form must be 'c', 's' or 'lambda', got {inertia_form!r}")


def constraint_force(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    torque: np.ndarray,
    joint_acceleration: np.ndarray,
    projector: np.ndarray,
) -> np.ndarray:
    """Generalised constraint force ``tau_c = (I - P)(M qdd + h - tau)`` (Aghili P5, eq. (32)).

    From ``M qdd + h = tau + tau_c``; the projection keeps the part in the
    constraint-normal space (range of A^T), where a constraint force lives.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    p = _as_square("projector", projector)
    residual = (m @ _as_vector("joint_acceleration", joint_acceleration, n)
                + _as_vector("bias_torque", bias_torque, n) - _as_vector("torque", torque, n))
    return residual - p @ residual


def constraint_multipliers(
    constraint_torque: np.ndarray,
    constraint_jacobian: np.ndarray,
    *,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> np.ndarray:
    """Minimum-norm Lagrange multipliers ``lambda = (A^T)^+ tau_c`` with ``tau_c = A^T lambda``.

    Unique only if ``A`` has full row rank (Aghili P5, after eq. (32)); otherwise
    the minimum-norm one, and the dropped directions get zero.
    """
    a = _as_matrix("constraint_jacobian", constraint_jacobian)
    proj = null_space_projector(a, rank_tolerance=rank_tolerance)
    # (A^T)^+ = (A^+)^T
    return proj.pseudo_inverse.T @ _as_vector("constraint_torque", constraint_torque, a.shape[1])


@dataclass(frozen=True)
class DriftCorrection:
    """Result of :func:`correct_constraint_drift`: the corrected ``q``, ``||phi(q)||`` and iterations used."""

    joint_position: np.ndarray
    constraint_error: float
    iterations: int
    converged: bool


def correct_constraint_drift(
    joint_position: np.ndarray,
    constraint: Callable[[np.ndarray], np.ndarray],
    constraint_jacobian: Callable[[np.ndarray], np.ndarray],
    *,
    tolerance: float = 1e-12,
    step_tolerance: float = 1e-12,
    max_iterations: int = 10,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> DriftCorrection:
    """Pull ``q`` back onto ``phi(q) = 0`` by Newton-Raphson ``q <- q - A^+(q) phi(q)`` (Aghili P5, eq. (39)).

    The pseudo-inverse step is the minimum-norm correction (it moves ``q`` only in
    the constraint-normal directions) and converges quadratically near the
    solution. Iterates while ``||phi|| >= tolerance`` (units of phi) and, once
    iterating, until the last Newton step is shorter than ``step_tolerance``
    (units of q), at most ``max_iterations``; ``converged`` says whether both hold. The step test matters near a
    singular configuration: there ``||A||`` is small, so a tiny ``||phi||`` can still
    leave ``q`` a distance ``||phi|| / sigma_min(A)`` off the constraint manifold,
    where the projected vector field turns quickly. Does not raise: the caller
    decides what a miss means.
    """
    q = np.asarray(joint_position, dtype=float).reshape(-1).copy()
    if not np.all(np.isfinite(q)):
        raise ValueError("joint_position contains NaN or inf; the state diverged before drift correction")
    if max_iterations < 0:
        raise ValueError(f"max_iterations must be >= 0, got {max_iterations}")
    phi = np.atleast_1d(np.asarray(constraint(q), dtype=float))
    err = float(np.linalg.norm(phi))
    step = np.inf
    it = 0
    # Once started, iterate until the step is negligible too; but a q that already
    # meets the tolerance is left alone (a Newton step driven by round-off in phi,
    # amplified by 1/sigma_min(A) near a singular configuration, would only add noise).
    while (err >= tolerance or (it > 0 and step >= step_tolerance)) and it < max_iterations:
        proj = null_space_projector(constraint_jacobian(q), rank_tolerance=rank_tolerance)
        dq = proj.pseudo_inverse @ phi
        q = q - dq
        step = float(np.linalg.norm(dq))
        phi = np.atleast_1d(np.asarray(constraint(q), dtype=float))
        err = float(np.linalg.norm(phi))
        it += 1
    # A zero phi needs no step; otherwise the last step must have been negligible.
    converged = err < tolerance and (step < step_tolerance or it == 0)
    return DriftCorrection(q, err, it, converged)


def projected_inverse_dynamics(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    reference_acceleration: np.ndarray,
    projector: np.ndarray,
) -> np.ndarray:
    """Projected inverse-dynamics control (PIDC): ``tau = P (M qdd_ref + h)`` (Aghili P5, eqs. (45)-(48)).

    With a constraint-consistent ``qdd_ref`` (see :func:`consistent_acceleration`)
    the constrained system then moves with ``qdd = qdd_ref``. Every other torque
    giving the same motion differs by a constraint-normal term ``(I - P) xi``,
    orthogonal to this one, so this torque has the minimum Euclidean norm.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    p = _as_square("projector", projector)
    u = m @ _as_vector("reference_acceleration", reference_acceleration, n) + _as_vector("bias_torque", bias_torque, n)
    return p @ u


def weighted_projected_inverse_dynamics(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    reference_acceleration: np.ndarray,
    constraint_jacobian: np.ndarray,
    torque_weights: np.ndarray,
    *,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> np.ndarray:
    """Unit-consistent PIDC: the torque of minimum ``||W tau||`` (Aghili P5, eqs. (49), (50)).

    ``W = diag(torque_weights)``, e.g. ``1/l`` (characteristic length l, m) for a
    revolute joint's N m and 1 for a prismatic joint's N, or ``1/tau_max`` to
    weigh by actuator limits. With ``P_W = I - (A W)^+ (A W)``:
    ``tau = W^-1 P_W W (M qdd_ref + h)``. It produces the same motion as
    :func:`projected_inverse_dynamics` (it differs by a term in range(A^T)) and
    does not depend on the units chosen for each joint. ``W = I`` gives plain PIDC.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    w = _as_vector("torque_weights", torque_weights, n)
    if np.any(w <= 0.0):
        raise ValueError("torque_weights must all be > 0 (W must be invertible)")
    a = _as_matrix("constraint_jacobian", constraint_jacobian, n)
    u = m @ _as_vector("reference_acceleration", reference_acceleration, n) + _as_vector("bias_torque", bias_torque, n)
    # Same rank decision as the unweighted projector would make, on the scaled Jacobian.
    p_w = null_space_projector(a * w[None, :], rank_tolerance=rank_tolerance).projector
    return (p_w @ (w * u)) / w


def constraint_force_torque(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    reference_acceleration: np.ndarray,
    projection: ConstraintProjection,
    constraint_jacobian: np.ndarray,
    commanded_multipliers: np.ndarray,
) -> np.ndarray:
    """Normal-space torque that sets the constraint force (Aghili P5, eqs. (51), (52)).

    ``tau_perp = (I - P)(M qdd_ref + h) - (I - P) A^T lambda_cmd``. Added to the PIDC
    torque it leaves the motion untouched (it lies in range(A^T), which ``P``
    annihilates) and makes the constraint force ``tau_c = A^T lambda_cmd`` when the
    system moves with ``qdd_ref``: force and motion are decoupled.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    a = _as_matrix("constraint_jacobian", constraint_jacobian, n)
    q_normal = projection.normal_projector
    u = m @ _as_vector("reference_acceleration", reference_acceleration, n) + _as_vector("bias_torque", bias_torque, n)
    lam = _as_vector("commanded_multipliers", commanded_multipliers, a.shape[0])
    return q_normal @ (u - a.T @ lam)


def constraint_force_pi(
    desired_multipliers: np.ndarray,
    measured_multipliers: np.ndarray,
    integral: np.ndarray,
    *,
    proportional_gain: float,
    integral_gain_per_s: float,
    period_s: float,
) -> tuple[np.ndarray, np.ndarray]:
    """PI law on the constraint-force error (Aghili P5, eqs. (51), (52)).

    Returns ``(lambda_cmd, new_integral)`` with
    ``lambda_cmd = lambda_d + k_p e + k_i * integral(e)``, ``e = lambda_d - lambda_measured``.
    The integral is the caller's state (passed in, returned updated). A rigid
    constraint reacts instantly, so with a measurement one sample old keep
    ``|k_p| < 1`` and ``k_i * period_s < 1``.
    """
    lam_d = np.atleast_1d(np.asarray(desired_multipliers, dtype=float))
    m = lam_d.shape[0]
    err = lam_d - _as_vector("measured_multipliers", measured_multipliers, m)
    if not period_s > 0.0:
        raise ValueError(f"period_s must be > 0, got {period_s}")
    new_integral = _as_vector("integral", integral, m) + err * period_s
    return lam_d + proportional_gain * err + integral_gain_per_s * new_integral, new_integral


@dataclass(frozen=True)
class PassiveJointTorque:
    """Result of :func:`passive_joint_torque`.

    ``torque`` is zero on the passive joints when ``controllable``; otherwise it is
    the least-squares compromise and ``passive_residual`` (``||(I - S) tau||``, N m) says by how much
    the passive joints would need actuation.
    """

    torque: np.ndarray
    controllable: bool
    passive_residual: float


def _selector(actuated: np.ndarray, n: int) -> np.ndarray:
    mask = np.asarray(actuated, dtype=bool).reshape(-1)
    if mask.shape != (n,):
        raise ValueError(f"actuated must be a boolean mask of shape ({n},), got {np.shape(actuated)}")
    return np.diag(mask.astype(float))


def passive_joints_controllable(projector: np.ndarray, actuated: np.ndarray, *, tolerance: float = 1e-9) -> bool:
    """Whether the motion can be produced with the passive joints unactuated (Aghili P5, eqs. (58), (64)).

    With selector ``S`` (1 on actuated joints), a torque ``P u + (I - P) xi`` with
    ``(I - S) tau = 0`` exists for every ``u`` iff the constraint force can carry
    every passive joint: ``rank((I - S)(I - P)) = n - rank(S)``, i.e. the passive
    joint axes are covered by the constraint-normal space.
    """
    p = _as_square("projector", projector)
    n = p.shape[0]
    s = _selector(actuated, n)
    b = (np.eye(n) - s) @ (np.eye(n) - p)
    n_passive = int(n - np.count_nonzero(np.diag(s)))
    if n_passive == 0:
        return True
    return int(np.linalg.matrix_rank(b, tol=tolerance)) == n_passive


def passive_joint_torque(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    reference_acceleration: np.ndarray,
    projection: ConstraintProjection,
    actuated: np.ndarray,
    *,
    tolerance: float = 1e-9,
) -> PassiveJointTorque:
    """PIDC with passive joints: the minimum-norm torque that is zero on passive joints (Aghili P5, eqs. (55)-(62)).

    ``tau = P u + (I - P) xi`` with ``u = M qdd_ref + h`` produces the motion for
    any ``xi`` (the constraint absorbs the normal part). Requiring ``(I - S) tau = 0``
    gives ``B xi = -(I - S) P u`` with ``B = (I - S)(I - P)``, solved by ``xi = -B^+ (I - S) P u``:
    the least ``||tau||`` among the admissible torques, exact when
    :func:`passive_joints_controllable` holds.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    p = projection.projector
    s = _selector(actuated, n)
    s_bar = np.eye(n) - s
    u = m @ _as_vector("reference_acceleration", reference_acceleration, n) + _as_vector("bias_torque", bias_torque, n)
    b = s_bar @ (np.eye(n) - p)
    xi = -np.linalg.pinv(b, rcond=tolerance) @ (s_bar @ (p @ u))
    tau = p @ u + (np.eye(n) - p) @ xi
    residual = float(np.linalg.norm(s_bar @ tau))
    return PassiveJointTorque(tau, passive_joints_controllable(p, actuated, tolerance=tolerance), residual)


def inertia_decoupling_defect(mass_matrix: np.ndarray, projector: np.ndarray) -> float:
    """``||(I - P) M P||_F / ||M||_F``: zero iff the constraint force does not depend on the motion torque.

    From eqs. (22) and (32): the acceleration depends only on ``P tau``, and
    ``tau_c = (I - P)(M qdd + h - tau)``, so ``d tau_c / d(P tau) = (I - P) M M_c^-1 P``.
    ``M_c^-1 P x`` spans the tangent space, so the plant's force and motion are decoupled iff
    ``(I - P) M P = 0``, i.e. ``P M = M P`` (then ``M_c = M``). Where it holds a force law needs
    no inertia term, ``tau_perp = (I - P)(h - A^T lambda_d)``; where it does not, the term
    ``(I - P) M qdd_ref`` of :func:`constraint_force_torque` (eqs. (51), (52)) decouples them.
    """
    m = _as_square("mass_matrix", mass_matrix)
    p = _as_square("projector", projector)
    q = np.eye(p.shape[0]) - p
    return float(np.linalg.norm(q @ m @ p) / np.linalg.norm(m))


@dataclass(frozen=True)
class PassiveForceTorque:
    """Result of :func:`passive_joint_force_torque`: ``torque`` (zero on passive joints when realisable)
    gives the reference motion and the force ``A^T multipliers`` (the realisable force nearest the
    command); ``controllable_directions`` (m x k, orthonormal) spans the multipliers the actuators can
    still choose (k = 0: the motion alone sets the force); ``passive_residual`` = ``||(I - S) tau||`` (N m)."""

    torque: np.ndarray
    multipliers: np.ndarray
    controllable_directions: np.ndarray
    passive_residual: float


def passive_joint_force_torque(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    reference_acceleration: np.ndarray,
    constraint_jacobian: np.ndarray,
    actuated: np.ndarray,
    commanded_multipliers: np.ndarray,
    *,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> PassiveForceTorque:
    """Motion AND constraint force with passive joints (Aghili P5, eqs. (51)-(62) together).

    With the motion fixed (``qdd = qdd_ref``, constraint-consistent, see
    :func:`consistent_acceleration`), the equation of motion gives every admissible torque
    as ``tau = M qdd_ref + h - A^T lambda``: the constraint force ``A^T lambda`` is the only
    freedom. Passive joints require ``(I - S) tau = 0``, i.e. ``(I - S) A^T lambda = (I - S) u``
    (``u = M qdd_ref + h``): the multipliers left free form the null space of
    ``(I - S) A^T`` (within the range of A: multipliers A^T annihilates do nothing). The
    force is set to the command's projection on that space, the rest fixed by the passive
    joints (least squares when they cannot be balanced exactly). ``actuated`` is the mask S.
    """
    m = _as_square("mass_matrix", mass_matrix)
    n = m.shape[0]
    a = _as_matrix("constraint_jacobian", constraint_jacobian, n)
    s = np.diag(_selector(actuated, n))
    u = m @ _as_vector("reference_acceleration", reference_acceleration, n) + _as_vector("bias_torque", bias_torque, n)
    lam_cmd = _as_vector("commanded_multipliers", commanded_multipliers, a.shape[0])
    # lambda = U z with U an orthonormal basis of range(A) (the multipliers that act through A^T)
    uu, sv, _ = np.linalg.svd(a, full_matrices=False)
    basis = uu[:, sv > rank_tolerance]
    passive = s == 0.0
    b = a.T[passive] @ basis                       # (I - S) A^T U, passive rows only
    rhs = u[passive]
    z_cmd = basis.T @ lam_cmd
    if b.shape[0] == 0:
        z = z_cmd
        free = np.eye(basis.shape[1])
    else:
        ub, sb, vbt = np.linalg.svd(b, full_matrices=True)
        r = int(np.count_nonzero(sb > rank_tolerance * max(1.0, float(sb[0]) if sb.size else 1.0)))
        free = vbt[r:].T                           # null space of b (controllable directions in z)
        z_part = vbt[:r].T @ ((ub[:, :r].T @ rhs) / sb[:r])  # least-squares, minimum norm
        z = z_part + free @ (free.T @ (z_cmd - z_part))
    lam = basis @ z
    tau = u - a.T @ lam
    return PassiveForceTorque(tau, lam, basis @ free, float(np.linalg.norm(tau[passive])))
