"""An n-link planar inverted pendulum in a vertical plane: the test plant of the natural-oscillation method.

This is the plant of Jamisola & Dadios (seeds.md P1): the chain of
:mod:`robot_dynamics_id.dynamics.planar_chain` (conventions and closed-form
dynamics there), driven by joint torques. It exists so the natural-oscillation
identification can be reproduced and tested without a robot; it has its own
fixed-step integrator (RK4) and optional viscous + Coulomb joint friction with
stick/slip (time-stepping, like ODE, the simulator of the paper).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dynamics.planar_chain import PlanarChain, absolute_link_angles

__all__ = [
    "JointFriction",
    "PlanarPendulumArm",
]


@dataclass(frozen=True)
class JointFriction:
    """Viscous + Coulomb joint friction (static = Coulomb level; stick when the drive cannot overcome it)."""

    viscous_nm_s_per_rad: np.ndarray
    coulomb_nm: np.ndarray

    def __post_init__(self) -> None:
        v = np.atleast_1d(np.asarray(self.viscous_nm_s_per_rad, float))
        c = np.atleast_1d(np.asarray(self.coulomb_nm, float))
        if v.shape != c.shape or np.any(v < 0) or np.any(c < 0):
            raise ValueError("friction coefficients need one non-negative value per joint (viscous and coulomb)")
        object.__setattr__(self, "viscous_nm_s_per_rad", v)
        object.__setattr__(self, "coulomb_nm", c)


@dataclass
class PlanarPendulumArm:
    """A torque-controlled n-link planar inverted pendulum: the natural-oscillation test plant.

    Implements the ``TorqueControlledArm`` protocol of
    :mod:`robot_dynamics_id.identification.natural_oscillation`:
    ``reset(q, qd)``, ``apply_torque(tau)``, ``step() -> (q, qd)``, ``period_s``.
    States may be batched, shape (B, n), to run several experiments at once.

    Each ``step`` holds the commanded torque (zero-order hold, like a digital
    controller) and integrates ``period_s`` with ``substeps`` RK4 steps; joint
    friction is applied implicitly after each RK4 step (viscous implicit,
    Coulomb by a projected Gauss–Seidel on the stick/slip condition), which stays
    stable for any friction level and lets the joints stick.
    """

    chain: PlanarChain
    period_s: float = 0.01
    substeps: int = 1
    friction: JointFriction | None = None
    q: np.ndarray = field(init=False, repr=False)
    qd: np.ndarray = field(init=False, repr=False)
    time_s: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        if self.period_s <= 0 or self.substeps < 1:
            raise ValueError("period_s must be > 0 and substeps >= 1")
        n = self.chain.n_links
        if self.friction is not None and self.friction.coulomb_nm.size != n:
            raise ValueError(f"friction needs {n} entries per coefficient, got {self.friction.coulomb_nm.size}")
        self._truth = self.chain.lumped_model()
        self._d_const = self.chain.absolute_inertia_constants_kgm2()
        self._tri = np.tril(np.ones((n, n)))
        self.q = np.zeros(n)
        self.qd = np.zeros(n)
        self._tau = np.zeros(n)

    @property
    def n_joints(self) -> int:
        return self.chain.n_links

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        q = np.array(q, float)
        qd = np.array(qd, float)
        if q.shape != qd.shape or q.shape[-1] != self.n_joints:
            raise ValueError(f"reset needs q and qd of the same shape (..., {self.n_joints})")
        self.q, self.qd, self.time_s = q, qd, 0.0
        self._tau = np.zeros_like(q)

    def apply_torque(self, tau_nm: np.ndarray) -> None:
        tau = np.asarray(tau_nm, float)
        if tau.shape != self.q.shape:
            raise ValueError(f"torque shape {tau.shape} does not match the state shape {self.q.shape}")
        self._tau = tau

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q) = T' D(phi) T, kg m^2, shape (..., n, n)."""
        phi = absolute_link_angles(np.asarray(q, float))
        if phi.shape[-1] == 1:
            return np.broadcast_to(self._d_const, phi.shape + (1,))
        d = self._d_const * np.cos(phi[..., :, None] - phi[..., None, :])
        return self._tri.T @ d @ self._tri

    def acceleration(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Forward dynamics without friction: qdd = M^-1 (tau - c - g)."""
        rhs = tau - self._truth.coriolis_gravity_torque(q, qd)
        if rhs.shape[-1] == 1:
            return rhs / self._d_const[0, 0]
        return np.linalg.solve(self.mass_matrix(q), rhs[..., None])[..., 0]

    def _rk4(self, q, qd, tau, h):
        k1v = self.acceleration(q, qd, tau)
        k2v = self.acceleration(q + 0.5 * h * qd, qd + 0.5 * h * k1v, tau)
        qd2 = qd + 0.5 * h * k1v
        k3v = self.acceleration(q + 0.5 * h * qd2, qd + 0.5 * h * k2v, tau)
        qd3 = qd + 0.5 * h * k2v
        k4v = self.acceleration(q + h * qd3, qd + h * k3v, tau)
        qd4 = qd + h * k3v
        q_new = q + h / 6.0 * (qd + 2 * qd2 + 2 * qd3 + qd4)
        qd_new = qd + h / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v)
        return q_new, qd_new

    def _apply_friction(self, q: np.ndarray, qd_free: np.ndarray, h: float) -> np.ndarray:
        """Implicit friction: (M + h B) qd + lambda = M qd_free, |lambda_j| <= h f_c,j, stick if inside."""
        fr = self.friction
        assert fr is not None
        m = self.mass_matrix(q)
        a = m + h * np.diag(fr.viscous_nm_s_per_rad)
        rhs = (m @ qd_free[..., None])[..., 0]
        limit = h * fr.coulomb_nm
        qd = qd_free.copy()
        n = self.n_joints
        for _ in range(8 if n > 1 else 1):  # projected Gauss-Seidel; one sweep is exact for one joint
            for j in range(n):
                w = rhs[..., j] - np.einsum("...k,...k->...", a[..., j, :], qd) + a[..., j, j] * qd[..., j]
                lam = np.clip(w, -limit[j], limit[j])
                qd[..., j] = (w - lam) / a[..., j, j]
        return qd

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        """Advance one control period; returns copies of (q, qd)."""
        h = self.period_s / self.substeps
        q, qd = self.q, self.qd
        for _ in range(self.substeps):
            q, qd_free = self._rk4(q, qd, self._tau, h)
            if self.friction is not None:
                qd = self._apply_friction(q, qd_free, h)
                q = q + 0.5 * h * (qd - qd_free)  # friction impulse spread over the step: moves q by h dv / 2
            else:
                qd = qd_free
        self.q, self.qd = q, qd
        self.time_s += self.period_s
        return q.copy(), qd.copy()

    def energy_j(self) -> np.ndarray:
        """Total mechanical energy (kinetic + gravity potential), J: a conservation check for tests."""
        m = self.mass_matrix(self.q)
        kinetic = 0.5 * np.einsum("...j,...jk,...k->...", self.qd, m, self.qd)
        phi = absolute_link_angles(self.q)
        potential = self.chain.gravity_m_s2 * np.sum(self._truth.first_moment_kgm * np.cos(phi), -1)
        return kinetic + potential
