"""The plain least-squares baseline a lab would write first, to score the identifier against.

Issue 15's baseline: ordinary least squares on the rigid-body joint-torque regressor
(pinocchio's ``computeJointTorqueRegressor``, 10 standard parameters per link) plus, per joint,
a viscous, a Coulomb and an offset column,

    tau_j = Y_j(q, q̇, q̈) pi + f_v,j q̇_j + f_c,j sign(q̇_j) + o_j,

fitted on every preprocessed training sample (standstill included), unweighted, with no
constraint: the parameters need not be physical, the minimum-norm solution is taken where the
regressor is rank deficient (only the base-parameter combinations matter to a prediction).

It is computed by the package's own preprocessing (identification/preprocessing.py: zero-phase
low-pass, differentiation) and scored beside the model on the same samples against the same
measured torque, so the comparison scores the models, not their preprocessing. ``rdi identify
--validate DATA --compare-baseline`` follows issue 15's protocol: the baseline is fitted on the
training recording low-passed at :data:`COMPARISON_CUTOFF_HZ`, and both are scored on the validation
recording low-passed at that cut-off (the model keeps its own; only the scoring filter changes).
A lower cut-off would score both against a smoother torque, which flatters the model (its friction
is filtered like the measurement; the baseline's sign(q̇) step is not).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ..dynamics.regressor import rigid_body_regressor
from ..robots.model import RobotModel
from .metrics import SCORING_CUTOFF_HZ, scoring_cutoff_hz
from .preprocessing import PreprocessedData

__all__ = ["BASELINE_DESCRIPTION", "COMPARISON_CUTOFF_HZ", "comparison_cutoff_hz", "fit_baseline",
           "predict_baseline"]

BASELINE_DESCRIPTION = ("ordinary least squares: rigid-body regressor + per-joint viscous, Coulomb, offset; "
                        "unconstrained, every training sample")
#: samples per chunk of the regressor (bounded memory on long recordings)
CHUNK_SAMPLES = 5000
#: low-pass cut-off of the comparison, Hz: the scoring of every validation (metrics.SCORING_CUTOFF_HZ)
COMPARISON_CUTOFF_HZ = SCORING_CUTOFF_HZ


def comparison_cutoff_hz(sample_rate_hz: float, model_cutoff_hz: float) -> float:
    """The comparison's cut-off: :func:`~.metrics.scoring_cutoff_hz` (10 Hz, less on a slow recording, never
    below the model's own cut-off)."""
    return scoring_cutoff_hz(sample_rate_hz, model_cutoff_hz)


def _columns(robot: RobotModel, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """(N*n, 13n): the rigid-body regressor, then per joint [q̇_j, sign(q̇_j), 1] on joint j's rows only."""
    n = robot.n_joints
    rigid = rigid_body_regressor(robot, q, qd, qdd)
    friction = np.zeros((q.shape[0], n, 3 * n))
    joints = np.arange(n)
    friction[:, joints, 3 * joints] = qd
    friction[:, joints, 3 * joints + 1] = np.sign(qd)
    friction[:, joints, 3 * joints + 2] = 1.0
    return np.hstack([rigid, friction.reshape(q.shape[0] * n, 3 * n)])


def fit_baseline(data: PreprocessedData, robot: RobotModel) -> np.ndarray:
    """The baseline's parameters (13n,) from preprocessed training data (module docstring).

    The regressor is reduced chunk by chunk to a triangular factor (QR of the stacked factor and the next
    chunk), so memory does not grow with the recording."""
    n = robot.n_joints
    if data.torque.shape[1] != n:
        raise ValueError(f"the data have {data.torque.shape[1]} joints, {robot.name} has {n}")
    r = np.zeros((0, 13 * n))
    z = np.zeros(0)
    for start in range(0, data.n_samples, CHUNK_SAMPLES):
        rows = slice(start, min(start + CHUNK_SAMPLES, data.n_samples))
        w = _columns(robot, data.q_rad[rows], data.qd_rad_s[rows], data.qdd_rad_s2[rows])
        q_factor, r = np.linalg.qr(np.vstack([r, w]))
        z = q_factor.T @ np.concatenate([z, data.torque[rows].ravel()])
    # gelsd: minimum-norm solution of the rank-deficient system (the non-base directions)
    return scipy.linalg.lstsq(r, z, lapack_driver="gelsd")[0]


def predict_baseline(parameters: np.ndarray, data: PreprocessedData, robot: RobotModel) -> np.ndarray:
    """The baseline's torque (N, n), Nm, for preprocessed samples."""
    n = robot.n_joints
    theta = np.asarray(parameters, float)
    if theta.shape != (13 * n,):
        raise ValueError(f"baseline parameters: expected {13 * n} values for {n} joints, got {theta.shape}")
    out = np.empty((data.n_samples, n))
    for start in range(0, data.n_samples, CHUNK_SAMPLES):
        rows = slice(start, min(start + CHUNK_SAMPLES, data.n_samples))
        out[rows] = (_columns(robot, data.q_rad[rows], data.qd_rad_s[rows], data.qdd_rad_s2[rows]) @ theta
                     ).reshape(-1, n)
    return out
