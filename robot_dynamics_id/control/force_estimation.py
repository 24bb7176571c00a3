"""Contact wrench without a force sensor: the generalized-momentum observer (De Luca).

For ``M(q) qdd + C(q, qd) qd + g(q) = tau + tau_ext`` the generalized momentum
``p = M qd`` obeys ``pd = tau + C^T qd - g + tau_ext`` (because Md = C + C^T). The observer
(De Luca & Mattone 2003; De Luca et al. 2006)::

    r(t) = K_O [ p(t) - p(0) - int_0^t (tau + C^T qd - g + r) ds ]

is a first-order low-pass estimate of ``tau_ext`` (``rd = K_O (tau_ext - r)``) that needs
no joint acceleration. ``tau`` is the torque the drives apply: motor current x the
identified drive gain, minus the identified friction (P2, eq. (11)), which otherwise
appears as an external torque.

The contact wrench at an operational point follows from ``tau_ext = J^T w_ext``:
``w_ext = (J J^T + lambda^2 I)^-1 J tau_ext`` (damped, so it stays bounded at singularities).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

__all__ = ["MomentumObserver", "wrench_from_joint_torque"]


class MomentumObserver:
    """Discrete-time generalized-momentum observer of the external joint torque (Nm).

    ``gain_per_s`` is K_O (diagonal, 1/s): the estimate's bandwidth. Each
    :meth:`update` integrates one control period ``period_s``.
    """

    def __init__(self, model: pin.Model, *, gain_per_s: float | np.ndarray = 50.0, period_s: float = 0.002) -> None:
        gain = np.broadcast_to(np.asarray(gain_per_s, float), (model.nv,)).copy()
        if np.any(gain <= 0.0) or period_s <= 0.0:
            raise ValueError("momentum observer gain and period must be > 0")
        if np.any(gain * period_s > 1.0):
            raise ValueError(
                f"momentum observer gain {gain.max()} 1/s is too high for a {period_s} s period "
                "(needs gain * period <= 1); lower gain_per_s")
        self.model = model
        self.data = model.createData()
        self.gain_per_s = gain
        self.period_s = float(period_s)
        n = model.nv
        self.external_torque_nm = np.zeros(n)
        self._integral = np.zeros(n)
        self._p0 = np.zeros(n)
        self._initialised = False

    def reset(self) -> None:
        """Forget the history; the next update starts the observer again from r = 0."""
        self._initialised = False
        self.external_torque_nm[:] = 0.0

    def update(self, q_rad: np.ndarray, qd_rad_s: np.ndarray, drive_torque_nm: np.ndarray,
               mass_matrix: np.ndarray | None = None) -> np.ndarray:
        """One observer step; returns the external joint torque estimate r (Nm, a reused array).

        ``drive_torque_nm`` is the joint torque of the drives excluding friction.
        ``mass_matrix`` may pass an M(q) already computed this cycle.
        """
        m, d = self.model, self.data
        M = pin.crba(m, d, q_rad) if mass_matrix is None else mass_matrix
        if mass_matrix is None:
            M = np.triu(M) + np.triu(M, 1).T
        momentum = M @ qd_rad_s
        # C^T qd - g, computed as C^T qd - g = (Md qd - C qd) - g without forming Md:
        coriolis = pin.computeCoriolisMatrix(m, d, q_rad, qd_rad_s)
        gravity = pin.computeGeneralizedGravity(m, d, q_rad)
        beta_free = coriolis.T @ qd_rad_s - gravity
        if not self._initialised:
            self._p0[:] = momentum
            self._integral[:] = 0.0
            self.external_torque_nm[:] = 0.0
            self._initialised = True
            return self.external_torque_nm
        # Integrate with the previous r (explicit Euler on the observer ODE).
        self._integral += (drive_torque_nm + beta_free + self.external_torque_nm) * self.period_s
        self.external_torque_nm[:] = self.gain_per_s * (momentum - self._p0 - self._integral)
        return self.external_torque_nm


def wrench_from_joint_torque(jacobian: np.ndarray, external_torque_nm: np.ndarray,
                             damping: float = 1e-4) -> np.ndarray:
    """Wrench (base axes, at the Jacobian's point) explaining ``external_torque_nm = J^T w``.

    Damped least squares: w = (J J^T + damping I)^-1 J tau_ext, bounded at singularities.
    The system is symmetric positive definite: solved by Cholesky (LAPACK dposv, a fraction
    of numpy.linalg.solve's call overhead; it runs every controller cycle).
    """
    jjt = jacobian @ jacobian.T
    jjt.flat[::7] += damping
    rhs = jacobian @ external_torque_nm
    w, info = lapack.dposv(jjt, rhs)[1:]
    if info != 0:  # pragma: no cover - only for a non-finite J
        return np.linalg.solve(jjt, rhs)
    return w
