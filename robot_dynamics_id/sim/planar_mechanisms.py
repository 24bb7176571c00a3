"""Planar constrained mechanisms for Aghili's projection-matrix method (seeds.md P5).

* :class:`PlanarSerialChain` — closed-form dynamics (M, h, energy, point Jacobians) of a
  planar chain of revolute joints under gravity (-y), with an optional point mass at the tip.
* :class:`TipOnLineSystem` — such a chain with its tip held on a straight line
  (``phi(q) = n^T (p_tip(q) - p_0) = 0``). The slider-crank is the 2-link case with the
  line through the crank pivot: the loop is cut at the slider and the constraint is the
  vertical position of the cut point. :func:`slider_crank` builds it with EQUAL crank
  and rod lengths, which makes the constraint Jacobian vanish when crank and rod are
  folded onto each other vertically (crank angle +-90 deg, rod angle -180 deg): a
  bifurcation point of the mechanism.
* :class:`ClosedLoopLinkage` — two chains from two ground pivots whose tips are pinned
  together (the loop cut at that pin, ``phi = p_tip,left - p_tip,right``, 2 rows):
  :func:`parallelogram_four_bar` (its flat configuration is a bifurcation point where A
  loses a rank) and :func:`five_bar` (a parallel mechanism, distal joints passive).
* :class:`RedundantConstraints` — a system with its constraint stated twice (A never full rank).

Every system offers ``n_joints``, ``terms(q, qd) -> (M, h, A, Adot qd)``, ``constraint``,
``constraint_jacobian`` and ``energy``: what :mod:`.constrained_simulation` integrates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "GRAVITY_M_S2",
    "ClosedLoopLinkage",
    "PlanarSerialChain",
    "RedundantConstraints",
    "TipOnLineSystem",
    "five_bar",
    "parallelogram_four_bar",
    "slider_crank",
    "slider_crank_branch_state",
    "uniform_rods",
]

GRAVITY_M_S2 = 9.81


@dataclass(frozen=True, eq=False)
class PlanarSerialChain:
    """A planar chain of revolute joints (relative angles ``q``, rad) in the vertical x-y plane.

    Link ``i`` has length ``link_length_m[i]``, mass ``link_mass_kg[i]`` with its centre
    of mass ``com_distance_m[i]`` along the link from its joint, and inertia
    ``com_inertia_kgm2[i]`` about that centre (z axis). ``tip_mass_kg`` is a point
    mass at the end of the last link (e.g. a slider). Gravity acts along -y.
    Equations of motion: ``M(q) qdd + h(q, qd) = tau`` with ``h`` = Coriolis +
    centrifugal + gravity, written from the point Jacobians (Kane's form: in the
    plane the angular-velocity Jacobians are constant, so only the translational
    terms ``m J^T Jdot qd`` contribute to the velocity-dependent torque).
    """

    link_length_m: np.ndarray
    link_mass_kg: np.ndarray
    com_distance_m: np.ndarray
    com_inertia_kgm2: np.ndarray
    tip_mass_kg: float = 0.0
    gravity_m_s2: float = GRAVITY_M_S2

    def __post_init__(self) -> None:
        n = np.asarray(self.link_length_m, dtype=float).reshape(-1).shape[0]
        if n == 0:
            raise ValueError("a planar chain needs at least one link")
        for name in ("link_length_m", "link_mass_kg", "com_distance_m", "com_inertia_kgm2"):
            value = np.asarray(getattr(self, name), dtype=float).reshape(-1)
            if value.shape != (n,):
                raise ValueError(f"{name} must have one entry per link ({n}), got shape {value.shape}")
            if np.any(value < 0.0) or not np.all(np.isfinite(value)):
                raise ValueError(f"{name} must be finite and >= 0, got {value}")
            object.__setattr__(self, name, value)
        if self.tip_mass_kg < 0.0:
            raise ValueError(f"tip_mass_kg must be >= 0, got {self.tip_mass_kg}")

    @property
    def n_joints(self) -> int:
        return int(self.link_length_m.shape[0])

    def _body_table(self):
        """Per mass point: weights ``w[b, j]`` (m) so its position is ``sum_j w[b, j] e(phi_j)``,
        its mass, rotational inertia and angular-velocity Jacobian row; plus the
        triangular matrix ``U[j, k] = 1 (j >= k)`` that sums link terms into Jacobian
        columns. The last row is always the tip (mass possibly zero) so tip queries
        share the computation."""
        n = self.n_joints
        w = np.zeros((n + 1, n))
        jw = np.zeros((n + 1, n))
        for i in range(n):
            w[i, :i] = self.link_length_m[:i]
            w[i, i] = self.com_distance_m[i]
            jw[i, : i + 1] = 1.0
        w[n] = self.link_length_m
        jw[n] = 1.0
        mass = np.append(self.link_mass_kg, self.tip_mass_kg)
        inertia = np.append(self.com_inertia_kgm2, 0.0)
        rotational_inertia = (jw.T * inertia) @ jw  # constant in the plane
        return w, mass, rotational_inertia, np.tril(np.ones((n, n)))

    @property
    def _table(self):
        table = self.__dict__.get("_cached_table")
        if table is None:
            table = self._body_table()
            object.__setattr__(self, "_cached_table", table)
        return table

    def _kinematics_xy(self, q, qd):
        # With absolute link angles phi_j = q_1 + ... + q_j, a point sum_j w_j e(phi_j)
        # has Jacobian column k = sum_{j >= k} w_j e_perp(phi_j) and centripetal
        # acceleration (Jdot qd) -sum_j w_j phid_j^2 e(phi_j).
        w, _, _, tri = self._table
        phi = np.cumsum(q)
        c, s = np.cos(phi), np.sin(phi)
        px, py = w @ c, w @ s
        jx, jy = -(w * s) @ tri, (w * c) @ tri
        if qd is None:
            ax = ay = np.zeros_like(px)
        else:
            wp = w * np.cumsum(qd) ** 2
            ax, ay = -wp @ c, -wp @ s
        return px, py, jx, jy, ax, ay

    def kinematics(self, q: np.ndarray, qd: np.ndarray | None = None):
        """Positions (b, 2), Jacobians (b, 2, n) and ``Jdot qd`` (b, 2) of every mass point.

        Rows: the link centres of mass in order, then the tip. ``Jdot qd`` is zero if
        ``qd`` is None.
        """
        px, py, jx, jy, ax, ay = self._kinematics_xy(
            np.asarray(q, dtype=float), None if qd is None else np.asarray(qd, dtype=float))
        return np.stack([px, py], 1), np.stack([jx, jy], 1), np.stack([ax, ay], 1)

    def _dynamics_from(self, jx, jy, ax, ay):
        _, mass, rot, _ = self._table
        m = (jx.T * mass) @ jx + (jy.T * mass) @ jy + rot
        h = jx.T @ (mass * ax) + jy.T @ (mass * (ay + self.gravity_m_s2))
        return m, h

    def dynamics(self, q: np.ndarray, qd: np.ndarray):
        """``(M(q), h(q, qd))``: joint-space inertia (kg m^2) and bias torque (N m) in one pass."""
        _, _, jx, jy, ax, ay = self._kinematics_xy(np.asarray(q, dtype=float), np.asarray(qd, dtype=float))
        return self._dynamics_from(jx, jy, ax, ay)

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """Joint-space inertia ``M(q)`` (kg m^2)."""
        return self.dynamics(q, np.zeros(self.n_joints))[0]

    def bias_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``h(q, qd)`` = Coriolis + centrifugal + gravity torque (N m)."""
        return self.dynamics(q, qd)[1]

    def tip(self, q: np.ndarray, qd: np.ndarray | None = None):
        """Tip position (m), 2 x n Jacobian and ``Jdot qd`` (m/s^2; zeros if ``qd`` is None)."""
        px, py, jx, jy, ax, ay = self._kinematics_xy(
            np.asarray(q, dtype=float), None if qd is None else np.asarray(qd, dtype=float))
        return np.array([px[-1], py[-1]]), np.stack([jx[-1], jy[-1]]), np.array([ax[-1], ay[-1]])

    def kinetic_energy(self, q: np.ndarray, qd: np.ndarray) -> float:
        qd = np.asarray(qd, dtype=float)
        return float(0.5 * qd @ self.mass_matrix(q) @ qd)

    def potential_energy(self, q: np.ndarray) -> float:
        """Gravity potential (J), zero with every mass at the height of the base joint."""
        _, mass, _, _ = self._table
        _, py, _, _, _, _ = self._kinematics_xy(np.asarray(q, dtype=float), None)
        return float(self.gravity_m_s2 * mass @ py)


@dataclass(frozen=True, eq=False)
class TipOnLineSystem:
    """A :class:`PlanarSerialChain` whose tip is held on a line: ``phi(q) = n^T (p_tip - p_0) = 0``.

    ``line_normal`` is the line's unit normal (2,), ``line_point_m`` a point on it.
    ``A = n^T J_tip`` (1 x n) and ``Adot qd = n^T Jdot_tip qd``. The multiplier ``lambda``
    of ``tau_c = A^T lambda`` is the force (N) the line pushes on the tip along ``n``.
    """

    chain: PlanarSerialChain
    line_normal: np.ndarray = field(default_factory=lambda: np.array([0.0, 1.0]))
    line_point_m: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def __post_init__(self) -> None:
        n = np.asarray(self.line_normal, dtype=float).reshape(-1)
        if n.shape != (2,) or not np.isclose(np.linalg.norm(n), 1.0):
            raise ValueError(f"line_normal must be a unit 2-vector, got {self.line_normal}")
        object.__setattr__(self, "line_normal", n)
        object.__setattr__(self, "line_point_m", np.asarray(self.line_point_m, dtype=float).reshape(2))

    @property
    def n_joints(self) -> int:
        return self.chain.n_joints

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        return self.chain.mass_matrix(q)

    def bias_torque(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.chain.bias_torque(q, qd)

    def terms(self, q: np.ndarray, qd: np.ndarray):
        """``(M, h, A, Adot qd)`` at one state, sharing one kinematics pass (what a simulator step needs)."""
        chain = self.chain
        _, _, jx, jy, ax, ay = chain._kinematics_xy(np.asarray(q, dtype=float), np.asarray(qd, dtype=float))
        m, h = chain._dynamics_from(jx, jy, ax, ay)
        nx, ny = self.line_normal
        return m, h, (nx * jx[-1] + ny * jy[-1])[None, :], np.array([nx * ax[-1] + ny * ay[-1]])

    def constraint(self, q: np.ndarray) -> np.ndarray:
        """``phi(q)`` (m), shape (1,)."""
        pos, _, _ = self.chain.tip(q)
        return np.array([self.line_normal @ (pos - self.line_point_m)])

    def constraint_jacobian(self, q: np.ndarray) -> np.ndarray:
        """``A(q) = dphi/dq`` (m/rad), shape (1, n)."""
        _, jac, _ = self.chain.tip(q)
        return (self.line_normal @ jac)[None, :]

    def constraint_bias_acceleration(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """``Adot qd`` (m/s^2), shape (1,)."""
        _, _, acc = self.chain.tip(q, qd)
        return np.array([self.line_normal @ acc])

    def energy(self, q: np.ndarray, qd: np.ndarray) -> float:
        """Total mechanical energy (J)."""
        return self.chain.kinetic_energy(q, qd) + self.chain.potential_energy(q)


def slider_crank(
    *,
    length_m: float = 0.3,
    crank_mass_kg: float = 1.0,
    rod_mass_kg: float = 1.0,
    slider_mass_kg: float = 0.5,
    gravity_m_s2: float = GRAVITY_M_S2,
) -> TipOnLineSystem:
    """The P5 case study: slider-crank with EQUAL crank and rod lengths, cut at the slider.

    ``q = (crank angle, rod angle relative to the crank)``; uniform slender links;
    the slider is a point mass at the rod's end, held on the horizontal line
    through the crank pivot (constraint: vertical position of the cut point = 0).
    Singular (``A = 0``) at crank angle +-pi/2 with the rod folded back (q2 = -pi).
    """
    if not length_m > 0.0:
        raise ValueError(f"length_m must be > 0, got {length_m}")
    masses = np.array([crank_mass_kg, rod_mass_kg], dtype=float)
    chain = PlanarSerialChain(
        link_length_m=np.array([length_m, length_m]),
        link_mass_kg=masses,
        com_distance_m=np.array([length_m / 2, length_m / 2]),
        com_inertia_kgm2=masses * length_m**2 / 12.0,
        tip_mass_kg=slider_mass_kg,
        gravity_m_s2=gravity_m_s2,
    )
    return TipOnLineSystem(chain=chain)


def slider_crank_branch_state(crank_angle_rad: float, crank_rate_rad_s: float = 0.0,
                              crank_acceleration_rad_s2: float = 0.0):
    """``(q, qd, qdd)`` of the slider-crank on its ordinary branch (rod angle = -2 x crank angle).

    On that branch the slider sits at ``x = 2 l cos(crank)`` and passes through the
    crank pivot at the singular configurations.
    """
    d = np.array([1.0, -2.0])
    return d * crank_angle_rad, d * crank_rate_rad_s, d * crank_acceleration_rad_s2


@dataclass(frozen=True, eq=False)
class RedundantConstraints:
    """A constrained system with its constraint stated ``copies`` times (e.g. a slider held by
    coincident guides). Same motion, but ``A`` never has full row rank: the projection
    formulation is unaffected, the augmented (KKT) matrix is singular everywhere."""

    system: TipOnLineSystem
    copies: int = 2

    @property
    def n_joints(self) -> int:
        return self.system.n_joints

    def terms(self, q, qd):
        m, h, a, b = self.system.terms(q, qd)
        return m, h, np.vstack([a] * self.copies), np.concatenate([b] * self.copies)

    def constraint(self, q):
        return np.concatenate([self.system.constraint(q)] * self.copies)

    def constraint_jacobian(self, q):
        return np.vstack([self.system.constraint_jacobian(q)] * self.copies)

    def energy(self, q, qd) -> float:
        return self.system.energy(q, qd)


def uniform_rods(length_m, mass_kg, *, tip_mass_kg: float = 0.0,
                 gravity_m_s2: float = GRAVITY_M_S2) -> PlanarSerialChain:
    """A chain of thin uniform rods (CoM at mid-length, inertia m l^2 / 12 about it)."""
    length = np.atleast_1d(np.asarray(length_m, dtype=float))
    mass = np.broadcast_to(np.asarray(mass_kg, dtype=float), length.shape).copy()
    return PlanarSerialChain(link_length_m=length, link_mass_kg=mass, com_distance_m=length / 2.0,
                             com_inertia_kgm2=mass * length**2 / 12.0, tip_mass_kg=tip_mass_kg,
                             gravity_m_s2=gravity_m_s2)


@dataclass(frozen=True, eq=False)
class ClosedLoopLinkage:
    """Two planar chains from ground pivots at the origin and at ``right_base_m`` with their tips pinned.

    ``q = (q_left, q_right)`` (relative joint angles of each chain); the loop is cut at the
    pin, so ``phi(q) = p_tip,left(q_left) - (right_base + p_tip,right(q_right))`` (2 rows, m)
    and ``A = [J_left, -J_right]``. The multiplier ``lambda`` of ``tau_c = A^T lambda`` is
    the force (N, x y) the right chain's tip applies to the left chain's tip at the pin.
    """

    left: PlanarSerialChain
    right: PlanarSerialChain
    right_base_m: np.ndarray = field(default_factory=lambda: np.zeros(2))

    def __post_init__(self) -> None:
        object.__setattr__(self, "right_base_m", np.asarray(self.right_base_m, dtype=float).reshape(2))

    @property
    def n_joints(self) -> int:
        return self.left.n_joints + self.right.n_joints

    def _split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.asarray(x, dtype=float)
        return x[: self.left.n_joints], x[self.left.n_joints:]

    def terms(self, q: np.ndarray, qd: np.ndarray):
        """``(M, h, A, Adot qd)``: M block-diagonal (the chains meet only through the constraint)."""
        ql, qr = self._split(q)
        vl, vr = self._split(qd)
        m_l, h_l = self.left.dynamics(ql, vl)
        m_r, h_r = self.right.dynamics(qr, vr)
        _, j_l, a_l = self.left.tip(ql, vl)
        _, j_r, a_r = self.right.tip(qr, vr)
        k, n = self.left.n_joints, self.n_joints
        m = np.zeros((n, n))
        m[:k, :k] = m_l
        m[k:, k:] = m_r
        return m, np.concatenate([h_l, h_r]), np.hstack([j_l, -j_r]), a_l - a_r

    def constraint(self, q: np.ndarray) -> np.ndarray:
        ql, qr = self._split(q)
        return self.left.tip(ql)[0] - self.right_base_m - self.right.tip(qr)[0]

    def constraint_jacobian(self, q: np.ndarray) -> np.ndarray:
        ql, qr = self._split(q)
        return np.hstack([self.left.tip(ql)[1], -self.right.tip(qr)[1]])

    def constraint_bias_acceleration(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return self.terms(q, qd)[3]

    def tip(self, q: np.ndarray) -> np.ndarray:
        """Position of the pin (the left chain's tip), m."""
        return self.left.tip(self._split(q)[0])[0]

    def energy(self, q: np.ndarray, qd: np.ndarray) -> float:
        ql, qr = self._split(q)
        vl, vr = self._split(qd)
        right_height = self.right.gravity_m_s2 * self.right_base_m[1] * (
            float(np.sum(self.right.link_mass_kg)) + self.right.tip_mass_kg)
        return (self.left.kinetic_energy(ql, vl) + self.left.potential_energy(ql) + self.right.kinetic_energy(qr, vr)
                + self.right.potential_energy(qr) + right_height)


def parallelogram_four_bar(*, crank_m: float = 0.2, coupler_m: float = 0.4, mass_kg: float = 1.0,
                           gravity_m_s2: float = GRAVITY_M_S2) -> ClosedLoopLinkage:
    """A parallelogram four-bar: crank and rocker ``crank_m`` long, coupler = ground = ``coupler_m``.

    ``q = (crank, coupler relative to crank, rocker)``. On the parallelogram branch the
    coupler stays parallel to the ground, ``q = (t, -t, t)``. At ``t = 0`` or ``pi`` every
    link lies on the ground line: A loses a rank (its x row vanishes) and the
    anti-parallelogram branch crosses this one (a change point of a Grashof linkage).
    """
    left = uniform_rods([crank_m, coupler_m], mass_kg, gravity_m_s2=gravity_m_s2)
    right = uniform_rods([crank_m], mass_kg, gravity_m_s2=gravity_m_s2)
    return ClosedLoopLinkage(left, right, np.array([coupler_m, 0.0]))


def five_bar(*, base_m: float = 0.2, proximal_m: float = 0.25, distal_m: float = 0.3, mass_kg: float = 0.5,
             gravity_m_s2: float = GRAVITY_M_S2) -> ClosedLoopLinkage:
    """A planar five-bar parallel mechanism: ground pivots ``base_m`` apart, two proximal and two distal links.

    ``q = (left proximal, left distal relative, right proximal, right distal relative)``;
    the distal links meet at the end point (the cut pin). The usual build actuates the
    two ground joints (q[0], q[2]) and leaves the distal joints passive. Its parallel
    (type II) singularity is where the distal links are collinear: there the passive
    joints can no longer be balanced by the loop's constraint force.
    """
    left = uniform_rods([proximal_m, distal_m], mass_kg, gravity_m_s2=gravity_m_s2)
    right = uniform_rods([proximal_m, distal_m], mass_kg, gravity_m_s2=gravity_m_s2)
    return ClosedLoopLinkage(left, right, np.array([base_m, 0.0]))
