"""The n-link planar chain in a vertical plane (Jamisola & Dadios, seeds.md P1): its physical and lumped parameters.

A chain of rigid links on parallel horizontal revolute joints, standing upright,
driven by joint torques. This module holds the model the natural-oscillation
identification (identification/natural_oscillation.py) scales and the physical
chain behind it; the simulated plant is :class:`robot_dynamics_id.sim.pendulum.PlanarPendulumArm`.

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

from dataclasses import dataclass

import numpy as np

__all__ = [
    "STANDARD_GRAVITY_M_S2",
    "PlanarChain",
    "PlanarChainLumpedModel",
    "absolute_link_angles",
    "coriolis_from_couplings",
    "gravity_from_first_moments",
]

STANDARD_GRAVITY_M_S2 = 9.81


_LOWER_ONES: dict[int, np.ndarray] = {}


def _lower_ones(n: int) -> np.ndarray:
    """T: lower-triangular ones, phi = T q (cached; matrix products are far cheaper than cumsum/flip here)."""
    t = _LOWER_ONES.get(n)
    if t is None:
        t = _LOWER_ONES[n] = np.tril(np.ones((n, n)))
    return t


def absolute_link_angles(q: np.ndarray) -> np.ndarray:
    """Absolute link angles phi = T q (cumulative sum of relative joint angles)."""
    return q @ _lower_ones(q.shape[-1]).T


def _joint_from_absolute(v: np.ndarray) -> np.ndarray:
    """T' v: generalised force in absolute angles -> joint torques (reverse cumulative sum)."""
    return v @ _lower_ones(v.shape[-1])


def coriolis_from_couplings(coupling: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """Joint Coriolis/centrifugal torques c = T' s for coupling matrix C (..., n, n; diagonal ignored)."""
    if q.shape[-1] == 1:
        return np.zeros_like(q)
    phi = absolute_link_angles(q)
    phid = absolute_link_angles(qd)
    sin_diff = np.sin(phi[..., :, None] - phi[..., None, :])
    s = ((coupling * sin_diff) @ (phid**2)[..., None])[..., 0]
    return _joint_from_absolute(s)


def gravity_from_first_moments(first_moment_kgm: np.ndarray, q: np.ndarray, gravity_m_s2: float) -> np.ndarray:
    """Joint gravity torques g = dV/dq for V = g sum_j B_j cos(phi_j)."""
    phi = absolute_link_angles(q)
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
        return coriolis_from_couplings(self.coupling_kgm2, np.asarray(q, float), np.asarray(qd, float))

    def gravity_torque(self, q: np.ndarray) -> np.ndarray:
        """g(q) = dV/dq, N m; arrays (..., n). P1 eq. (15), last two lines (P1 writes -g), for n links."""
        return gravity_from_first_moments(self.first_moment_kgm, np.asarray(q, float), self.gravity_m_s2)

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

    def absolute_inertia_constants_kgm2(self) -> np.ndarray:
        """C_jk + delta_jk I_j: the constant factors of D(phi) in absolute angles (module docstring), kg m^2."""
        a = self._levers()
        c = np.einsum("i,ij,ik->jk", self.link_mass_kg, a, a)
        return c + np.diag(self.com_inertia_kgm2)
