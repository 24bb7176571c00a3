"""Joint-torque regressors: the arm's dynamics written linearly in its parameters.

The inverse dynamics of a rigid serial arm with reflected rotor inertia and the
friction of seeds.md P2 eq. (11) is linear in its parameters::

    tau = Y_rb(q, qd, qdd) theta_rb + diag(qdd) rotor + Y_f(qd; x_s, v_k) phi

* ``theta_rb``: 10 standard parameters per link in pinocchio's order
  (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz), inertia about the
  joint-frame origin (pinocchio ``computeJointTorqueRegressor``);
* ``rotor``: reflected rotor (armature) inertia per joint, kg m^2;
* ``phi``: (f_s, f_k, k_v, offset) per joint for fixed Stribeck velocity x_s and
  Coulomb smoothing velocity v_k (dynamics/friction.py).

Samples of shape (N, n) are stacked *sample-major*: row ``k*n + j`` is joint j
at sample k. Column order of :func:`full_regressor`: rigid body (10n), rotor (n),
friction (4n, joint-major, :data:`LINEAR_FRICTION_NAMES` order) — the same order
as :func:`full_parameter_vector`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pinocchio as pin

from ..robots.model import RobotModel
from .friction import LINEAR_FRICTION_NAMES, FrictionParameters, friction_regressor

__all__ = [
    "DEFAULT_COULOMB_VELOCITY_RAD_S",
    "DEFAULT_STRIBECK_VELOCITY_RAD_S",
    "INERTIAL_PARAMETER_NAMES",
    "friction_columns",
    "full_parameter_names",
    "full_parameter_vector",
    "full_regressor",
    "rigid_body_regressor",
    "rotor_regressor",
    "split_full_parameter_vector",
]

#: Stribeck velocity x_s used when none is given (P2 eq. (11) PUMA value), rad/s.
DEFAULT_STRIBECK_VELOCITY_RAD_S = 0.1
#: Coulomb tanh smoothing velocity v_k used when none is given, rad/s (a UR dead zone is sharp).
DEFAULT_COULOMB_VELOCITY_RAD_S = 0.01

#: Names of pinocchio's 10 standard inertial parameters of one link, in regressor order.
INERTIAL_PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def _as_samples(name: str, values, n: int) -> np.ndarray:
    arr = np.atleast_2d(np.asarray(values, float))
    if arr.ndim != 2 or arr.shape[1] != n:
        raise ValueError(f"{name} must have shape (N, {n}) (samples x joints), got {np.shape(values)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf; clean the data (identification/preprocessing.py) first")
    return arr


def _pin_model(robot: RobotModel | pin.Model) -> pin.Model:
    return robot.model if isinstance(robot, RobotModel) else robot


def rigid_body_regressor(robot: RobotModel | pin.Model, q_rad, qd_rad_s, qdd_rad_s2) -> np.ndarray:
    """Rigid-body joint-torque regressor, shape (N*n, 10n), rows sample-major.

    Uses pinocchio's ``computeJointTorqueRegressor`` (Newton-Euler, linear in the
    10 standard parameters per link). Excludes rotor inertia (see :func:`rotor_regressor`).
    """
    model = _pin_model(robot)
    n = model.nv
    q = _as_samples("q_rad", q_rad, n)
    qd = _as_samples("qd_rad_s", qd_rad_s, n)
    qdd = _as_samples("qdd_rad_s2", qdd_rad_s2, n)
    if not (q.shape == qd.shape == qdd.shape):
        raise ValueError(f"q, qd, qdd must have the same shape, got {q.shape}, {qd.shape}, {qdd.shape}")
    n_samples = q.shape[0]
    n_columns = 10 * (model.njoints - 1)
    out = np.empty((n_samples, n, n_columns))
    data = model.createData()
    regressor = pin.computeJointTorqueRegressor
    for k in range(n_samples):
        out[k] = regressor(model, data, q[k], qd[k], qdd[k])
    return out.reshape(n_samples * n, n_columns)


def rotor_regressor(qdd_rad_s2) -> np.ndarray:
    """Reflected rotor inertia columns: tau_j += rotor_j * qdd_j; shape (N*n, n)."""
    qdd = np.atleast_2d(np.asarray(qdd_rad_s2, float))
    n_samples, n = qdd.shape
    out = np.zeros((n_samples, n, n))
    idx = np.arange(n)
    out[:, idx, idx] = qdd
    return out.reshape(n_samples * n, n)


def friction_columns(qd_rad_s, stribeck_velocity_rad_s=DEFAULT_STRIBECK_VELOCITY_RAD_S,
                     coulomb_velocity_rad_s=DEFAULT_COULOMB_VELOCITY_RAD_S) -> np.ndarray:
    """Friction columns of seeds.md P2 eq. (11) + offset, shape (N*n, 4n), joint-major
    (f_s, f_k, k_v, offset) per joint, i.e. :meth:`FrictionParameters.linear_vector` order."""
    qd = np.atleast_2d(np.asarray(qd_rad_s, float))
    n_samples, n = qd.shape
    x_s = np.broadcast_to(np.asarray(stribeck_velocity_rad_s, float), (n,))
    v_k = np.broadcast_to(np.asarray(coulomb_velocity_rad_s, float), (n,))
    if np.any(x_s <= 0) or np.any(v_k <= 0):
        raise ValueError("Stribeck and Coulomb velocity constants must be > 0 rad/s")
    y = friction_regressor(qd, x_s, v_k)  # (N, n, 4)
    out = np.zeros((n_samples, n, n, 4))
    idx = np.arange(n)
    out[:, idx, idx, :] = y
    return out.reshape(n_samples * n, 4 * n)


def full_parameter_names(robot: RobotModel | pin.Model, *, friction: bool = True, rotor: bool = True) -> list[str]:
    """Column names of :func:`full_regressor`, e.g. ``link3.mx``, ``rotor2``, ``joint4.coulomb_nm``."""
    n = _pin_model(robot).nv
    names = [f"link{i + 1}.{p}" for i in range(n) for p in INERTIAL_PARAMETER_NAMES]
    if rotor:
        names += [f"rotor{j + 1}" for j in range(n)]
    if friction:
        names += [f"joint{j + 1}.{p}" for j in range(n) for p in LINEAR_FRICTION_NAMES]
    return names


def full_regressor(robot: RobotModel | pin.Model, q_rad, qd_rad_s, qdd_rad_s2, *, friction: bool = True,
                   rotor: bool = True, stribeck_velocity_rad_s=DEFAULT_STRIBECK_VELOCITY_RAD_S,
                   coulomb_velocity_rad_s=DEFAULT_COULOMB_VELOCITY_RAD_S) -> tuple[np.ndarray, list[str]]:
    """Regressor of the whole model (rigid body, rotor, friction) and its column names.

    Shape (N*n, 10n [+ n] [+ 4n]), rows sample-major.
    """
    blocks = [rigid_body_regressor(robot, q_rad, qd_rad_s, qdd_rad_s2)]
    if rotor:
        blocks.append(rotor_regressor(qdd_rad_s2))
    if friction:
        blocks.append(friction_columns(qd_rad_s, stribeck_velocity_rad_s, coulomb_velocity_rad_s))
    return np.hstack(blocks), full_parameter_names(robot, friction=friction, rotor=rotor)


def iter_full_regressor_chunks(robot: RobotModel | pin.Model, q_rad, qd_rad_s, qdd_rad_s2, *,
                               chunk_samples: int = 20000, **options) -> Iterator[tuple[slice, np.ndarray]]:
    """:func:`full_regressor` in chunks of samples (bounded memory); yields (sample slice, rows)."""
    q = np.atleast_2d(np.asarray(q_rad, float))
    for start in range(0, q.shape[0], chunk_samples):
        sl = slice(start, min(start + chunk_samples, q.shape[0]))
        rows, _ = full_regressor(robot, q[sl], np.atleast_2d(qd_rad_s)[sl], np.atleast_2d(qdd_rad_s2)[sl], **options)
        yield sl, rows


def full_parameter_vector(standard_parameters, rotor_inertia_kgm2=None, friction: FrictionParameters | None = None
                          ) -> np.ndarray:
    """Stack parameters in :func:`full_regressor` column order (omit rotor/friction by passing None)."""
    parts = [np.asarray(standard_parameters, float).ravel()]
    if rotor_inertia_kgm2 is not None:
        parts.append(np.asarray(rotor_inertia_kgm2, float).ravel())
    if friction is not None:
        parts.append(friction.linear_vector())
    return np.concatenate(parts)


def split_full_parameter_vector(theta, n_joints: int, *, friction: bool = True, rotor: bool = True
                                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Inverse of :func:`full_parameter_vector`: (standard 10n, rotor n or None, friction linear 4n or None)."""
    theta = np.asarray(theta, float).ravel()
    expected = 10 * n_joints + (n_joints if rotor else 0) + (4 * n_joints if friction else 0)
    if theta.shape[0] != expected:
        raise ValueError(f"parameter vector has {theta.shape[0]} entries, expected {expected}")
    standard = theta[: 10 * n_joints]
    at = 10 * n_joints
    rotor_values = None
    if rotor:
        rotor_values = theta[at: at + n_joints]
        at += n_joints
    friction_values = theta[at: at + 4 * n_joints] if friction else None
    return standard, rotor_values, friction_values
