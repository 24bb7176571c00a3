"""Projected hybrid force/motion control: motion in the constraint's tangent space, force along its normal.

Aghili's projection-matrix control (seeds.md P5) as one function a controller can
call each cycle. Given the joint-space model (``M``, ``h``) and a constraint
Jacobian ``A`` (m x n) — e.g. for a tool in contact with a surface of outward unit
normal ``n`` (world frame), ``A = n^T J_v`` with ``J_v`` the 3 x n linear part of the
tool Jacobian (pinocchio ``LOCAL_WORLD_ALIGNED``) — the torque is

    tau = P (M qdd_c + h)                         motion: PIDC, eqs. (45)-(48)
        + (I - P)(M qdd_c + h) - (I - P) A^T lambda_cmd     force, eqs. (51), (52)

with ``P = I - A^+ A`` (SVD, rank tolerance; eqs. (4), (15)) and ``qdd_c = P qdd_ref - A^+ Adot qd``
the reference acceleration made consistent with the constraint (eqs. (13), (16)).
Applied to the constrained system the motion follows ``qdd_c`` and the constraint
force is ``tau_c = A^T lambda_cmd``: the two are decoupled (a change in one
command does not move the other), and the motion torque has the minimum norm
(or the minimum ``||W tau||`` when ``joint_weights`` is given, eqs. (49), (50)).

Sign convention: ``tau_c = A^T lambda`` is the force the constraint exerts ON the
robot. With ``A = n^T J_v`` and ``n`` pointing out of the surface towards the robot,
``lambda > 0`` N is the surface pushing back, i.e. the robot pressing on the surface
with ``lambda`` newtons.

Inputs per cycle (arrays in, arrays out, no state here):
``Adot qd`` is ``n^T (Jdot_v qd)``, the classical (not spatial) tool acceleration
at zero joint acceleration — pinocchio: ``forwardKinematics(model, data, q, v, 0*v)``
then ``getFrameClassicalAcceleration(..., LOCAL_WORLD_ALIGNED).linear``.
A force PI (:func:`~robot_dynamics_id.dynamics.constrained.constraint_force_pi`)
or a measured contact force enters through ``commanded_force``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..dynamics.constrained import (
    DEFAULT_RANK_TOLERANCE,
    consistent_acceleration,
    constraint_force_torque,
    null_space_projector,
    projected_inverse_dynamics,
    weighted_projected_inverse_dynamics,
)

__all__ = ["HybridTorque", "pd_reference_acceleration", "projected_hybrid_torque"]


@dataclass(frozen=True)
class HybridTorque:
    """One cycle of :func:`projected_hybrid_torque`.

    ``torque_nm`` = ``motion_torque_nm`` (tangent space, lies in range(P)) +
    ``force_torque_nm`` (normal space, range(A^T)); ``consistent_acceleration_rad_s2``
    is the constraint-consistent reference acceleration the motion part realises;
    ``projector`` is ``P``; ``constraint_rank`` how many constraint directions were
    enforced (fewer than ``m`` at a singular configuration).
    """

    torque_nm: np.ndarray
    motion_torque_nm: np.ndarray
    force_torque_nm: np.ndarray
    consistent_acceleration_rad_s2: np.ndarray
    projector: np.ndarray
    constraint_rank: int


def pd_reference_acceleration(
    desired_position: np.ndarray,
    desired_velocity: np.ndarray,
    desired_acceleration: np.ndarray,
    position: np.ndarray,
    velocity: np.ndarray,
    *,
    stiffness_per_s2: float | np.ndarray,
    damping_per_s: float | np.ndarray,
) -> np.ndarray:
    """``qdd_ref = qdd_d + K_d (qd_d - qd) + K_p (q_d - q)`` (the PD law of PIDC, Aghili P5, eq. (46)).

    Works in any coordinates (joint or task); the projection in
    :func:`projected_hybrid_torque` keeps only its tangent part, so a joint-space PD on
    a constraint-consistent desired trajectory is a PD on the independent coordinates.
    """
    q_d, qd_d, qdd_d = (np.asarray(x, dtype=float) for x in (desired_position, desired_velocity, desired_acceleration))
    q, qd = np.asarray(position, dtype=float), np.asarray(velocity, dtype=float)
    if not (q_d.shape == qd_d.shape == qdd_d.shape == q.shape == qd.shape):
        raise ValueError(
            "desired position/velocity/acceleration and measured position/velocity must have the same shape, "
            f"got {q_d.shape}, {qd_d.shape}, {qdd_d.shape}, {q.shape}, {qd.shape}"
        )
    return qdd_d + np.asarray(damping_per_s) * (qd_d - qd) + np.asarray(stiffness_per_s2) * (q_d - q)


def projected_hybrid_torque(
    mass_matrix: np.ndarray,
    bias_torque: np.ndarray,
    constraint_jacobian: np.ndarray,
    constraint_bias_acceleration: np.ndarray,
    reference_acceleration: np.ndarray,
    commanded_force: np.ndarray | float | None = None,
    *,
    joint_weights: np.ndarray | None = None,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> HybridTorque:
    """Joint torque for motion in the constraint's tangent space plus a commanded constraint force.

    Parameters (n joints, m constraint rows):

    * ``mass_matrix`` ``M(q)`` (n x n, kg m^2) and ``bias_torque`` ``h = c + g`` (n, N m);
    * ``constraint_jacobian`` ``A`` (m x n), may be redundant or rank-deficient;
    * ``constraint_bias_acceleration`` ``Adot qd`` (m,);
    * ``reference_acceleration`` ``qdd_ref`` (n, rad/s^2), e.g. from
      :func:`pd_reference_acceleration`; its normal part is replaced by the one the
      constraint imposes (Aghili P5, eqs. (13), (16));
    * ``commanded_force`` ``lambda_cmd`` (m,; a float when m = 1): the constraint
      multipliers to realise (N for ``A = n^T J_v``); ``None`` = no force term, i.e.
      plain PIDC (zero normal torque, the constraint takes whatever force the motion needs);
    * ``joint_weights``: optional ``W = diag(w)`` for the unit-consistent motion torque
      (min ``||W tau||``, eqs. (49), (50)), e.g. ``1/l`` for revolute and 1 for prismatic joints;
    * ``rank_tolerance``: singular values of ``A`` below it are dropped (units of A).

    The motion part is ``P (M qdd_c + h)`` (eqs. (45)-(48)); the force part
    ``(I - P)(M qdd_c + h - A^T lambda_cmd)`` (eqs. (51), (52)).
    """
    m_mat = np.asarray(mass_matrix, dtype=float)
    if m_mat.ndim != 2 or m_mat.shape[0] != m_mat.shape[1]:
        raise ValueError(f"mass_matrix must be square n x n, got shape {m_mat.shape}")
    n = m_mat.shape[0]
    a = np.atleast_2d(np.asarray(constraint_jacobian, dtype=float))
    if a.shape[1] != n:
        raise ValueError(
            f"constraint_jacobian must have {n} columns (one per joint), got shape {a.shape}; "
            "for a surface contact use A = n^T J_v (1 x n)"
        )
    projection = null_space_projector(a, rank_tolerance=rank_tolerance)
    qdd_c = consistent_acceleration(reference_acceleration, projection,
                                    np.atleast_1d(np.asarray(constraint_bias_acceleration, dtype=float)))
    if joint_weights is None:
        motion = projected_inverse_dynamics(m_mat, bias_torque, qdd_c, projection.projector)
    else:
        motion = weighted_projected_inverse_dynamics(m_mat, bias_torque, qdd_c, a, joint_weights,
                                                     rank_tolerance=rank_tolerance)
    if commanded_force is None:
        force = np.zeros(n)
    else:
        lam = np.atleast_1d(np.asarray(commanded_force, dtype=float))
        if lam.shape != (a.shape[0],):
            raise ValueError(f"commanded_force must have one entry per constraint row ({a.shape[0]}), got {lam.shape}")
        force = constraint_force_torque(m_mat, bias_torque, qdd_c, projection, a, lam)
        if joint_weights is not None:
            # The weighted motion torque already carries a normal-space part; the force
            # term must set the total normal part, so take that part back out.
            force = force - projection.normal_projector @ motion
    return HybridTorque(motion + force, motion, force, qdd_c, projection.projector, projection.rank)
