"""An n-link planar inverted pendulum in a vertical plane: the test plant of the natural-oscillation method.

This is the plant of Jamisola & Dadios (seeds.md P1): a chain of rigid links on
parallel horizontal revolute joints, standing upright, driven by joint torques.
It exists so the natural-oscillation identification can be reproduced and
tested without a robot; it has its own fixed-step integrator (RK4) and optional
viscous + Coulomb joint friction with stick/slip (time-stepping, like ODE, the
simulator of the paper).

Conventions (P1, eq. (15)):

* ``q[0]`` is the angle of link 1 from the upright vertical, ``q[j]`` the angle
  of link j+1 relative to link j (rad); the arm is upright at ``q = 0``.
* The absolute angle of link j is ``phi_j = q_0 + ... + q_j``.
* Link j has length ``l_j`` (m), mass ``m_j`` (kg), its centre of mass on the
  link axis at distance ``r_j`` (m) from its joint, rotational inertia ``I_j``
  about its centre of mass (kg m^2).
* Dynamics ``M(q) qdd + c(q, qd) + g(q) + tau_friction(qd) = tau``, with
  ``g = dV/dq``; so the torque that floats the arm is ``tau = c + g``.

In absolute angles the chain has the classical closed form (derived from the
Lagrangian; it is the general-n form of P1, eq. (15))::

    D_jk(phi) = C_jk cos(phi_j - phi_k) + delta_jk I_j,   C_jk = sum_i m_i a_ij a_ik
    s_j(phi, phid) = sum_k C_jk sin(phi_j - phi_k) phid_k^2
    V(phi) = g sum_j B_j cos(phi_j),                       B_j = sum_i m_i a_ij

with ``a_ij = l_j`` for j < i, ``r_i`` for j = i and 0 otherwise. Joint-space
terms follow from ``phi = T q`` (T lower-triangular ones): ``M = T' D T``,
``c = T' s``, ``g = T' dV/dphi``. The *lumped parameters* the method can see are
the off-diagonal ``C_jk`` (Coriolis, P1's ``m2 l^2``) and the first moments
``B_j`` (gravity, P1's ``m l``); :class:`PlanarChainLumpedModel` holds exactly those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "STANDARD_GRAVITY_M_S2",
    "JointFriction",
    "PlanarChain",
    "PlanarChainLumpedModel",
    "PlanarPendulumArm",
]

STANDARD_GRAVITY_M_S2 = 9.81


_LOWER_ONES: dict[int, np.ndarray] = {}


def _lower_ones(n: int) -> np.ndarray:
    """T: lower-triangular ones, phi = T q (cached; matrix products are far cheaper than cumsum/flip here)."""
    t = _LOWER_ONES.get(n)
    if t is None:
        t = _LOWER_ONES[n] = np.tril(np.ones((n, n)))
    return t


def _absolute(q: np.ndarray) -> np.ndarray:
    """Absolute link angles phi = T q (cumulative sum of relative joint angles)."""
    return q @ _lower_ones(q.shape[-1]).T


def _joint_from_absolute(v: np.ndarray) -> np.ndarray:
    """T' v: generalised force in absolute angles -> joint torques (reverse cumulative sum)."""
    return v @ _lower_ones(v.shape[-1])


def _coriolis_from_couplings(coupling: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Joint Coriolis/centrifugal torques c = T' s for coupling matrix C (..., n, n; diagonal ignored)."""
    if q.shape[-1] == 1:
        return np.zeros_like(q)
    phi = _absolute(q)
    phid = _absolute(qd)
    sin_diff = np.sin(phi[..., :, None] - phi[..., None, :])
    s = ((coupling * sin_diff) @ (phid**2)[..., None])[..., 0]
    return _joint_from_absolute(s)


def _gravity_from_first_moments(first_moment_kgm: np.ndarray, q: np.ndarray, gravity_m_s2: float) -> np.ndarray:
    """Joint gravity torques g = dV/dq for V = g sum_j B_j cos(phi_j)."""
    phi = _absolute(q)
    return _joint_from_absolute(-gravity_m_s2 * first_moment_kgm * np.sin(phi))


@dataclass(frozen=True)
class PlanarChainLumpedModel:
    """The lumped parameters of a planar chain that enter c(q, qd) + g(q) — a controller's model.

    ``first_moment_kgm[j]`` is B_j (sum of mass times lever of everything the
    link carries, kg m); ``coupling_kgm2[j, k]`` (j != k, symmetric) is C_jk.
    P1's 2-DOF factors: f_m1 scales C_12, f_m2 scales B_1, f_m3 scales B_2.
    """

    first_moment_kgm: np.ndarray
    coupling_kgm2: np.ndarray
    gravity_m_s2: float = STANDARD_GRAVITY_M_S2

    def __post_init__(self) -> None:
        b = np.asarray(self.first_moment_kgm, float).reshape(-1)
        c = np.asarray(self.coupling_kgm2, float)
        if c.shape != (b.size, b.size):
            raise ValueError(f"coupling_kgm2 must be ({b.size}, {b.size}) for {b.size} links, got {c.shape}")
        if not np.allclose(c, c.T):
            raise ValueError("coupling_kgm2 must be symmetric (C_jk = C_kj)")
        object.__setattr__(self, "first_moment_kgm", b)
        object.__setattr__(self, "coupling_kgm2", c)

    @property
    def n_links(self) -> int:
        return self.first_moment_kgm.size

    def parameter_names(self) -> tuple[str, ...]:
        """Names of :meth:`parameter_vector`: couplings C_jk (j<k) first, then first moments B_j.

        For two links this is (C12, B1, B2): P1's factor order (f_m1, f_m2, f_m3).
        """
        n = self.n_links
        couplings = tuple(f"coupling_C{j + 1}{k + 1}_kgm2" for j in range(n) for k in range(j + 1, n))
        return couplings + tuple(f"first_moment_B{j + 1}_kgm" for j in range(n))

    def parameter_vector(self) -> np.ndarray:
        n = self.n_links
        iu = np.triu_indices(n, 1)
        return np.concatenate([self.coupling_kgm2[iu], self.first_moment_kgm])

    def scaled(self, factors: np.ndarray) -> PlanarChainLumpedModel:
        """This model with each lumped parameter multiplied by its factor (order of :meth:`parameter_names`)."""
        f = np.asarray(factors, float).reshape(-1)
        p = self.parameter_vector()
        if f.shape != p.shape:
            raise ValueError(f"need {p.size} factors ({', '.join(self.parameter_names())}), got {f.size}")
        return self.from_parameter_vector(p * f, self.n_links, gravity_m_s2=self.gravity_m_s2)

    @classmethod
    def from_parameter_vector(cls, values: np.ndarray, n_links: int, *,
                              gravity_m_s2: float = STANDARD_GRAVITY_M_S2) -> PlanarChainLumpedModel:
        v = np.asarray(values, float).reshape(-1)
        n_c = n_links * (n_links - 1) // 2
        if v.size != n_c + n_links:
            raise ValueError(f"a {n_links}-link model has {n_c + n_links} lumped parameters, got {v.size}")
        c = np.zeros((n_links, n_links))
        c[np.triu_indices(n_links, 1)] = v[:n_c]
        c = c + c.T
        return cls(v[n_c:], c, gravity_m_s2)

    def coriolis_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """c(q, qd), N m; arrays (..., n). P1 eq. (15), first two lines, for n links."""
        return _coriolis_from_couplings(self.coupling_kgm2, np.asarray(q, float), np.asarray(qd, float))

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        """g(q) = dV/dq, N m; arrays (..., n). P1 eq. (15), last two lines (P1 writes -g), for n links."""
        return _gravity_from_first_moments(self.first_moment_kgm, np.asarray(q, float), self.gravity_m_s2)

    def coriolis_gravity_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """c(q, qd) + g(q): the open-loop torque that floats the arm (P1, tau = c_hat + g_hat)."""
        return self.coriolis_torque(q, qd) + self.gravity_torque(q)


@dataclass(frozen=True)
class PlanarChain:
    """Physical parameters of an n-link planar pendulum (the simulated truth)."""

    link_length_m: np.ndarray
    link_mass_kg: np.ndarray
    com_distance_m: np.ndarray
    com_inertia_kgm2: np.ndarray
    gravity_m_s2: float = STANDARD_GRAVITY_M_S2

    def __post_init__(self) -> None:
        arrays = [np.asarray(getattr(self, k), float).reshape(-1) for k in
                  ("link_length_m", "link_mass_kg", "com_distance_m", "com_inertia_kgm2")]
        n = arrays[0].size
        if n < 1 or any(a.size != n for a in arrays):
            raise ValueError("link_length_m, link_mass_kg, com_distance_m, com_inertia_kgm2 need one entry per link")
        if np.any(arrays[0] <= 0) or np.any(arrays[1] <= 0) or np.any(arrays[3] < 0):
            raise ValueError("link lengths and masses must be > 0 and inertias >= 0")
        for key, a in zip(("link_length_m", "link_mass_kg", "com_distance_m", "com_inertia_kgm2"), arrays):
            object.__setattr__(self, key, a)

    @classmethod
    def uniform_rods(cls, mass_kg, length_m, *, gravity_m_s2: float = STANDARD_GRAVITY_M_S2) -> PlanarChain:
        """Thin uniform rods (CoM at mid-length, I = m l^2 / 12): P1's links."""
        m = np.atleast_1d(np.asarray(mass_kg, float))
        l_m = np.broadcast_to(np.atleast_1d(np.asarray(length_m, float)), m.shape).copy()
        return cls(l_m, m, l_m / 2.0, m * l_m**2 / 12.0, gravity_m_s2)

    @property
    def n_links(self) -> int:
        return self.link_length_m.size

    def _levers(self) -> np.ndarray:
        """a_ij: lever of link j's rotation on body i's centre of mass (m)."""
        n = self.n_links
        a = np.tril(np.broadcast_to(self.link_length_m, (n, n)), -1)
        a[np.diag_indices(n)] = self.com_distance_m
        return a

    def lumped_model(self) -> PlanarChainLumpedModel:
        """The exact lumped parameters (B_j, C_jk) of this chain: what a perfect identification returns."""
        a = self._levers()
        first_moment = self.link_mass_kg @ a
        coupling = np.einsum("i,ij,ik->jk", self.link_mass_kg, a, a)
        np.fill_diagonal(coupling, 0.0)
        return PlanarChainLumpedModel(first_moment, coupling, self.gravity_m_s2)

    def _absolute_inertia_constants(self) -> np.ndarray:
        a = self._levers()
        c = np.einsum("i,ij,ik->jk", self.link_mass_kg, a, a)
        return c + np.diag(self.com_inertia_kgm2)


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
        self._d_const = self.chain._absolute_inertia_constants()
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
        phi = _absolute(np.asarray(q, float))
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
        potential = self.chain.gravity_m_s2 * np.sum(self._truth.first_moment_kgm * np.cos(_absolute(self.q)), -1)
        return kinetic + potential
