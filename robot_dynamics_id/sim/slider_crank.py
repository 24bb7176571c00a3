"""Constrained planar mechanisms simulated by projection matrices: the slider-crank case study (Aghili, seeds.md P5).

* :class:`PlanarSerialChain` — closed-form dynamics (M, h, energy, point Jacobians) of a
  planar chain of revolute joints under gravity (-y), with an optional point mass at the tip.
* :class:`TipOnLineSystem` — such a chain with its tip held on a straight line
  (``phi(q) = n^T (p_tip(q) - p_0) = 0``). The slider-crank is the 2-link case with the
  line through the crank pivot: the loop is cut at the slider and the constraint is the
  vertical position of the cut point. :func:`slider_crank` builds it with EQUAL crank
  and rod lengths, which makes the constraint Jacobian vanish when crank and rod are
  folded onto each other vertically (crank angle +-90 deg, rod angle -180 deg): a
  bifurcation point of the mechanism.
* :func:`simulate_constrained` — RK4 on the projected direct dynamics (P5 eq. 22), with
  Newton-Raphson drift correction (eq. 39) and velocity projection (eq. 12) after
  every step. It records the constraint error, energy, ``cond(M_c)``, the smallest
  singular value of ``A`` and the constraint force (eq. 32) along the run.
* :func:`simulate_augmented` — the classical baseline: the augmented (KKT,
  Lagrange-multiplier) system ``[[M, -A^T], [A, 0]]``, which assumes A has full rank.
  At the slider-crank's singular configuration its matrix becomes singular.

* :class:`RedundantConstraints` — the same constraint stated twice (A never full rank).
* :class:`CrankTrajectory`, :func:`crank_tracking_law` — PIDC of the crank through the
  singularity (P5 eqs. 45-48; passive rod joint by eqs. 55-62); :func:`min_norm_check`.
* :func:`reproduce_slider_crank` — the numbers printed by ``rdi slider-crank`` and
  ``benchmarks/bench_slider_crank.py``.

The integrator is the classical fixed-step RK4 (1 ms by default) with the torque
held over each step (zero-order hold, as a digital controller applies it) unless
``sample_and_hold=False``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..dynamics.constrained import (
    DEFAULT_RANK_TOLERANCE,
    constrained_forward_dynamics,
    constraint_force,
    constraint_inertia_matrix,
    constraint_multipliers,
    correct_constraint_drift,
    null_space_projector,
)

__all__ = [
    "GRAVITY_M_S2",
    "ConstrainedSimulation",
    "CrankTrajectory",
    "RedundantConstraints",
    "crank_tracking_law",
    "min_norm_check",
    "reproduce_slider_crank",
    "singular_start",
    "PlanarSerialChain",
    "TipOnLineSystem",
    "TorqueLaw",
    "augmented_forward_dynamics",
    "augmented_matrix",
    "simulate_augmented",
    "simulate_constrained",
    "slider_crank",
    "slider_crank_branch_state",
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


#: A torque law for the simulators: ``(time_s, q, qd, last_multiplier) -> tau`` (N m).
#: ``last_multiplier`` is the constraint multiplier of the previous step (a force
#: sensor reading one sample old; zeros at the start).
TorqueLaw = Callable[[float, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class ConstrainedSimulation:
    """Time series of a constrained simulation (one row per sample, ``time_s`` first).

    ``constraint_error_m`` is ``||phi(q)||`` after drift correction;
    ``velocity_error_m_s`` is ``||A qd||``; ``constraint_inertia_condition`` is
    ``cond(M_c)`` (projection run) or the KKT matrix's condition number
    (augmented run); ``min_singular_value`` is the smallest singular value of ``A``
    (its distance to the singular configuration); ``multiplier`` is the constraint
    force ``lambda`` applied over the step that starts at the sample, and ``torque`` the input
    over that step. ``failure`` is empty if the run completed, otherwise why and
    ``failed_at_s`` when it stopped.
    """

    time_s: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    torque: np.ndarray
    multiplier: np.ndarray
    constraint_error_m: np.ndarray
    velocity_error_m_s: np.ndarray
    energy_j: np.ndarray
    constraint_inertia_condition: np.ndarray
    min_singular_value: np.ndarray
    failure: str = ""
    failed_at_s: float = float("nan")

    @property
    def completed(self) -> bool:
        return not self.failure


def _zero_torque(n: int) -> TorqueLaw:
    return lambda t, q, qd, lam: np.zeros(n)


def _with_torque(terms, tau):
    """``(M, h, A, Adot qd)`` -> the argument order of the forward-dynamics functions."""
    m, h, a, adot_qd = terms
    return m, h, tau, a, adot_qd


def _rk4_step(accel, t, q, qd, dt):
    """One classical RK4 step of ``(q, qd)' = (qd, accel(t, q, qd))``."""
    k1v, k1a = qd, accel(t, q, qd)
    k2v, k2a = qd + 0.5 * dt * k1a, accel(t + 0.5 * dt, q + 0.5 * dt * k1v, qd + 0.5 * dt * k1a)
    k3v, k3a = qd + 0.5 * dt * k2a, accel(t + 0.5 * dt, q + 0.5 * dt * k2v, qd + 0.5 * dt * k2a)
    k4v, k4a = qd + dt * k3a, accel(t + dt, q + dt * k3v, qd + dt * k3a)
    return (q + dt / 6.0 * (k1v + 2 * k2v + 2 * k3v + k4v),
            qd + dt / 6.0 * (k1a + 2 * k2a + 2 * k3a + k4a))


def _check_run(duration_s: float, step_s: float) -> int:
    if not step_s > 0.0 or not duration_s > 0.0:
        raise ValueError(f"duration_s and step_s must be > 0, got {duration_s}, {step_s}")
    return int(round(duration_s / step_s))


def simulate_constrained(
    system: TipOnLineSystem,
    q0: np.ndarray,
    qd0: np.ndarray,
    *,
    duration_s: float,
    step_s: float = 1e-3,
    torque_law: TorqueLaw | None = None,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
    drift_tolerance_m: float = 1e-12,
    sample_and_hold: bool = True,
) -> ConstrainedSimulation:
    """Simulate by the projection formulation: RK4 on ``M_c qdd = P(tau - h) - M A^+ Adot qd`` (P5 eq. 22).

    After each step ``q`` is corrected by Newton-Raphson ``q <- q - A^+ phi`` until
    ``||phi|| < drift_tolerance_m`` (eq. 39) and ``qd`` is projected, ``qd <- P qd`` (eq. 12).
    The initial state is corrected the same way. Works through singular
    configurations: the SVD drops singular values ``<= rank_tolerance``.

    ``sample_and_hold`` (default) evaluates ``torque_law`` once per step and holds it,
    as a digital controller at ``1/step_s`` Hz does; ``False`` evaluates it at every
    RK4 stage (a continuous-time controller). Under a hold, a normal-space
    (constraint-force) torque leaks into the tangent space within the step because
    ``P(q)`` turns as ``q`` moves: force/motion decoupling is exact only in continuous time.
    Any object with the methods of :class:`TipOnLineSystem` can be simulated.
    """
    steps = _check_run(duration_s, step_s)
    n = system.n_joints
    law = torque_law or _zero_torque(n)

    def correct(q, qd):
        fix = correct_constraint_drift(q, system.constraint, system.constraint_jacobian,
                                       tolerance=drift_tolerance_m, rank_tolerance=rank_tolerance)
        a = system.constraint_jacobian(fix.joint_position)
        proj = null_space_projector(a, rank_tolerance=rank_tolerance)
        # P qd (eq. 12) written as the correction qd - A^+ (A qd): identical in exact
        # arithmetic, but it leaves an already-admissible qd untouched instead of adding
        # round-off that A^+ would amplify near a singular configuration.
        return fix.joint_position, qd - proj.pseudo_inverse @ (a @ qd), fix.constraint_error, proj

    q, qd, err, proj = correct(np.asarray(q0, float), np.asarray(qd0, float))
    m_dim = system.constraint(q).shape[0]
    rec = {k: [] for k in ("t", "q", "qd", "tau", "lam", "err", "verr", "e", "cond", "smin")}
    last_lam = np.zeros(m_dim)
    for k in range(steps + 1):
        t = k * step_s
        tau = np.asarray(law(t, q, qd, last_lam), dtype=float).reshape(n)
        m, h, a, adot_qd = system.terms(q, qd)
        qdd = constrained_forward_dynamics(m, h, tau, a, adot_qd, projection=proj)
        last_lam = constraint_multipliers(constraint_force(m, h, tau, qdd, proj.projector), a,
                                          rank_tolerance=rank_tolerance)
        rec["t"].append(t); rec["q"].append(q); rec["qd"].append(qd); rec["tau"].append(tau)
        rec["lam"].append(last_lam); rec["err"].append(err); rec["verr"].append(float(np.linalg.norm(a @ qd)))
        rec["e"].append(system.energy(q, qd))
        rec["cond"].append(float(np.linalg.cond(constraint_inertia_matrix(m, proj.projector))))
        rec["smin"].append(float(proj.singular_values[-1]) if proj.singular_values.size else 0.0)
        if k == steps:
            break

        def accel(ts, qs, qds, tau=tau, lam=last_lam):
            if not sample_and_hold:
                tau = np.asarray(law(ts, qs, qds, lam), dtype=float).reshape(n)
            return constrained_forward_dynamics(*_with_torque(system.terms(qs, qds), tau),
                                                rank_tolerance=rank_tolerance)

        q, qd = _rk4_step(accel, t, q, qd, step_s)
        q, qd, err, proj = correct(q, qd)
    return _pack(rec)


def _pack(rec, failure: str = "", failed_at_s: float = float("nan")) -> ConstrainedSimulation:
    return ConstrainedSimulation(
        time_s=np.asarray(rec["t"]), q=np.asarray(rec["q"]), qd=np.asarray(rec["qd"]),
        torque=np.asarray(rec["tau"]), multiplier=np.asarray(rec["lam"]),
        constraint_error_m=np.asarray(rec["err"]), velocity_error_m_s=np.asarray(rec["verr"]),
        energy_j=np.asarray(rec["e"]), constraint_inertia_condition=np.asarray(rec["cond"]),
        min_singular_value=np.asarray(rec["smin"]), failure=failure, failed_at_s=failed_at_s,
    )


def augmented_matrix(mass_matrix: np.ndarray, constraint_jacobian: np.ndarray) -> np.ndarray:
    """The classical augmented (KKT) matrix ``[[M, -A^T], [A, 0]]``; singular whenever A loses rank."""
    m = np.asarray(mass_matrix, float)
    a = np.atleast_2d(np.asarray(constraint_jacobian, float))
    k = a.shape[0]
    return np.block([[m, -a.T], [a, np.zeros((k, k))]])


def augmented_forward_dynamics(mass_matrix, bias_torque, torque, constraint_jacobian, constraint_bias_acceleration):
    """Baseline: solve ``M qdd = tau - h + A^T lambda``, ``A qdd = -Adot qd`` for ``(qdd, lambda)``.

    The Lagrange-multiplier formulation that assumes A has full row rank. Raises
    ``numpy.linalg.LinAlgError`` when the KKT matrix is exactly singular; near a
    singular configuration it returns whatever the ill-conditioned solve gives.
    """
    kkt = augmented_matrix(mass_matrix, constraint_jacobian)
    n = np.asarray(mass_matrix).shape[0]
    rhs = np.concatenate([np.asarray(torque, float) - np.asarray(bias_torque, float),
                          -np.atleast_1d(np.asarray(constraint_bias_acceleration, float))])
    sol = np.linalg.solve(kkt, rhs)
    return sol[:n], sol[n:]


def simulate_augmented(
    system: TipOnLineSystem,
    q0: np.ndarray,
    qd0: np.ndarray,
    *,
    duration_s: float,
    step_s: float = 1e-3,
    torque_law: TorqueLaw | None = None,
    drift_tolerance_m: float = 1e-12,
    divergence_energy_j: float = 1e3,
) -> ConstrainedSimulation:
    """The same RK4 run with the classical augmented formulation (the baseline that fails at singularities).

    Drift correction is the classical full-rank Newton step ``q <- q - A^T (A A^T)^-1 phi``
    and velocities are corrected by ``qd <- qd - A^T (A A^T)^-1 A qd``. The run stops
    and records ``failure`` on a singular solve, a non-finite state, or an energy
    change beyond ``divergence_energy_j``. ``constraint_inertia_condition`` holds the
    KKT matrix's condition number.
    """
    steps = _check_run(duration_s, step_s)
    n = system.n_joints
    law = torque_law or _zero_torque(n)
    rec = {k: [] for k in ("t", "q", "qd", "tau", "lam", "err", "verr", "e", "cond", "smin")}

    def full_rank_step(a, r):
        return a.T @ np.linalg.solve(a @ a.T, r)

    def correct(q, qd):
        phi = system.constraint(q)
        for _ in range(10):
            if np.linalg.norm(phi) < drift_tolerance_m:
                break
            q = q - full_rank_step(system.constraint_jacobian(q), phi)
            phi = system.constraint(q)
        a = system.constraint_jacobian(q)
        return q, qd - full_rank_step(a, a @ qd), float(np.linalg.norm(phi))

    failure, failed_at = "", float("nan")
    try:
        q, qd, err = correct(np.asarray(q0, float), np.asarray(qd0, float))
    except np.linalg.LinAlgError as exc:
        return _pack(rec, f"initial drift correction failed: {exc}", 0.0)
    e0 = system.energy(q, qd)
    last_lam = np.zeros(system.constraint(q).shape[0])
    for k in range(steps + 1):
        t = k * step_s
        try:
            tau = np.asarray(law(t, q, qd, last_lam), dtype=float).reshape(n)
            m, h, a, adot_qd = system.terms(q, qd)
            _, last_lam = augmented_forward_dynamics(m, h, tau, a, adot_qd)
            energy = system.energy(q, qd)
            rec["t"].append(t); rec["q"].append(q); rec["qd"].append(qd); rec["tau"].append(tau)
            rec["lam"].append(last_lam); rec["err"].append(err); rec["verr"].append(float(np.linalg.norm(a @ qd)))
            rec["e"].append(energy)
            rec["cond"].append(float(np.linalg.cond(augmented_matrix(m, a))))
            rec["smin"].append(float(np.linalg.svd(a, compute_uv=False)[-1]))
            if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd)) and np.all(np.isfinite(last_lam))):
                failure, failed_at = "state or multiplier became non-finite", t
                break
            if abs(energy - e0) > divergence_energy_j:
                failure, failed_at = f"energy changed by {energy - e0:.3g} J (diverged)", t
                break
            if k == steps:
                break

            def accel(ts, qs, qds, tau=tau):
                return augmented_forward_dynamics(*_with_torque(system.terms(qs, qds), tau))[0]

            q, qd = _rk4_step(accel, t, q, qd, step_s)
            q, qd, err = correct(q, qd)
        except np.linalg.LinAlgError as exc:
            failure, failed_at = f"singular matrix in the augmented formulation ({exc})", t
            break
    return _pack(rec, failure, failed_at)


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


# --- control of the slider-crank: PIDC tracking of a crank-angle trajectory -----------------


@dataclass(frozen=True)
class CrankTrajectory:
    """Desired crank angle ``theta(t) = start + rate t + amplitude sin(frequency t)`` (rad).

    With the defaults the crank turns ~3 rad/s with a +-0.5 rad wobble, so it passes
    the singular configurations (+-pi/2) about once a second.
    """

    start_rad: float = 0.0
    rate_rad_s: float = 3.0
    amplitude_rad: float = 0.5
    frequency_rad_s: float = 2.0

    def crank(self, time_s: float) -> tuple[float, float, float]:
        """``(theta, theta_dot, theta_ddot)`` at ``time_s``."""
        w = self.frequency_rad_s
        s, c = np.sin(w * time_s), np.cos(w * time_s)
        return (self.start_rad + self.rate_rad_s * time_s + self.amplitude_rad * s,
                self.rate_rad_s + self.amplitude_rad * w * c,
                -self.amplitude_rad * w * w * s)

    def joint(self, time_s: float):
        """Desired ``(q, qd, qdd)`` of the slider-crank on its ordinary branch."""
        return slider_crank_branch_state(*self.crank(time_s))


def crank_tracking_law(
    system: TipOnLineSystem,
    trajectory: CrankTrajectory,
    *,
    stiffness_per_s2: float = 400.0,
    damping_per_s: float = 40.0,
    actuated: np.ndarray | None = None,
    rank_tolerance: float = DEFAULT_RANK_TOLERANCE,
) -> TorqueLaw:
    """PIDC tracking the crank trajectory (Aghili P5, eqs. (45)-(48)); passive joints by eqs. (55)-(62).

    A PD on the (branch-consistent) joint trajectory, made constraint-consistent and
    projected by :func:`~robot_dynamics_id.control.projected.projected_hybrid_torque`.
    With ``actuated`` (boolean mask, e.g. ``[True, False]`` for a crank motor and a
    free rod joint) the torque is the minimum-norm one that is zero on the passive joints.
    """
    from ..control.projected import pd_reference_acceleration, projected_hybrid_torque
    from ..dynamics.constrained import consistent_acceleration, passive_joint_torque

    def law(t, q, qd, _lam):
        q_d, qd_d, qdd_d = trajectory.joint(t)
        qdd_ref = pd_reference_acceleration(q_d, qd_d, qdd_d, q, qd,
                                            stiffness_per_s2=stiffness_per_s2, damping_per_s=damping_per_s)
        m, h, a, adot_qd = system.terms(q, qd)
        if actuated is None:
            return projected_hybrid_torque(m, h, a, adot_qd, qdd_ref, rank_tolerance=rank_tolerance).torque_nm
        proj = null_space_projector(a, rank_tolerance=rank_tolerance)
        return passive_joint_torque(m, h, consistent_acceleration(qdd_ref, proj, adot_qd), proj, actuated).torque

    return law


def min_norm_check(system: TipOnLineSystem, q: np.ndarray, qd: np.ndarray, torque: np.ndarray, *,
                   samples: int = 100, seed: int = 0,
                   rank_tolerance: float = DEFAULT_RANK_TOLERANCE) -> tuple[float, float]:
    """Compare ``torque`` with ``torque + (I - P) xi`` for random ``xi`` (same motion by construction).

    Returns ``(smallest norm ratio ||tau + (I-P) xi|| / ||tau||, largest change of qdd)``: a
    minimum-norm torque gives a ratio >= 1 and a zero acceleration change.
    """
    rng = np.random.default_rng(seed)
    m, h, a, b = system.terms(q, qd)
    proj = null_space_projector(a, rank_tolerance=rank_tolerance)
    qdd = constrained_forward_dynamics(m, h, torque, a, b, projection=proj)
    ratio, dqdd = np.inf, 0.0
    norm = float(np.linalg.norm(torque))
    for _ in range(samples):
        other = torque + proj.normal_projector @ rng.normal(scale=max(norm, 1.0), size=torque.shape)
        ratio = min(ratio, float(np.linalg.norm(other)) / max(norm, 1e-300))
        dqdd = max(dqdd, float(np.max(np.abs(constrained_forward_dynamics(m, h, other, a, b, projection=proj) - qdd))))
    return ratio, dqdd


# --- the P5 reproduction -------------------------------------------------------------------


def singular_start(crank_rate_rad_s: float = 6.0):
    """State AT the singular configuration (crank down, rod folded back, slider on the pivot),
    moving along the ordinary branch. This is also the mechanism's stable equilibrium."""
    q, qd, _ = slider_crank_branch_state(-np.pi / 2, crank_rate_rad_s)
    return q, qd


def reproduce_slider_crank(*, duration_s: float = 10.0, step_s: float = 1e-3,
                           crank_rate_rad_s: float = 6.0) -> dict[str, float | str]:
    """Run the P5 slider-crank reproduction and return its numbers (see ``rdi slider-crank``).

    1. Free motion (no input, no friction) from the singular configuration, RK4 at
       ``step_s`` with Newton-Raphson drift correction: constraint error, energy drift
       (relative to the initial kinetic energy = energy above the potential minimum),
       ``cond(M_c)`` along the run, singular crossings.
    2. The augmented (KKT) baseline from the same state, and with the constraint
       stated twice (redundant): its matrix's condition number, and failure.
    3. PIDC tracking a crank trajectory through the singularities (both joints
       driven), the minimum-norm check, and the crank-only (passive rod) variant.
    """
    out: dict[str, float | str] = {"duration_s": duration_s, "step_s": step_s}
    system = slider_crank()
    q0, qd0 = singular_start(crank_rate_rad_s)
    free = simulate_constrained(system, q0, qd0, duration_s=duration_s, step_s=step_s)
    kinetic0 = system.chain.kinetic_energy(q0, qd0)
    smin = free.min_singular_value
    near = (smin[1:-1] < smin[:-2]) & (smin[1:-1] <= smin[2:]) & (smin[1:-1] < 0.02)
    out.update({
        "free_max_constraint_error_m": float(free.constraint_error_m.max()),
        "free_max_velocity_error_m_s": float(free.velocity_error_m_s.max()),
        "free_energy_drift_relative": float(np.abs(free.energy_j - free.energy_j[0]).max() / kinetic0),
        "free_singular_crossings": int(near.sum() + (smin[0] < 0.02)),
        "free_closest_sigma_min_m": float(smin.min()),
        "free_max_rod_off_branch_rad": float(np.abs(free.q[:, 1] + 2 * free.q[:, 0]).max()),
        "Mc_condition_max": float(free.constraint_inertia_condition.max()),
        "Mc_condition_median": float(np.median(free.constraint_inertia_condition)),
        "Mc_condition_at_start": float(free.constraint_inertia_condition[0]),
    })
    aug = simulate_augmented(system, q0, qd0, duration_s=duration_s, step_s=step_s)
    out.update({
        "augmented_kkt_condition_at_start": float(aug.constraint_inertia_condition[0]) if aug.time_s.size else float("nan"),
        "augmented_kkt_condition_median": float(np.median(aug.constraint_inertia_condition)) if aug.time_s.size else float("nan"),
        "augmented_failure": aug.failure or "none",
        "augmented_energy_drift_relative": float(np.abs(aug.energy_j - aug.energy_j[0]).max() / kinetic0)
        if aug.time_s.size else float("nan"),
    })
    redundant = RedundantConstraints(system)
    short = min(duration_s, 1.0)
    red_proj = simulate_constrained(redundant, q0, qd0, duration_s=short, step_s=step_s)
    red_aug = simulate_augmented(redundant, q0, qd0, duration_s=short, step_s=step_s)
    n_short = red_proj.time_s.size
    out.update({
        "redundant_projection_max_q_difference_rad": float(np.abs(red_proj.q - free.q[:n_short]).max()),
        "redundant_augmented_failure": red_aug.failure or "none",
        "redundant_augmented_failed_at_s": red_aug.failed_at_s,
    })
    traj = CrankTrajectory()
    qt0, qdt0, _ = traj.joint(0.0)
    track = simulate_constrained(system, qt0, qdt0, duration_s=duration_s, step_s=step_s,
                                 torque_law=crank_tracking_law(system, traj))
    crank_d = np.array([traj.crank(t)[0] for t in track.time_s])
    checks = [min_norm_check(system, track.q[k], track.qd[k], track.torque[k])
              for k in range(0, track.time_s.size, max(1, track.time_s.size // 50))]
    out.update({
        "pidc_max_crank_error_rad": float(np.abs(track.q[:, 0] - crank_d).max()),
        "pidc_crank_travel_rad": float(track.q[-1, 0] - track.q[0, 0]),
        "pidc_closest_sigma_min_m": float(track.min_singular_value.min()),
        "pidc_max_torque_nm": float(np.abs(track.torque).max()),
        "pidc_min_norm_ratio_vs_random_nullspace": float(min(c[0] for c in checks)),
        "pidc_random_nullspace_max_qdd_change": float(max(c[1] for c in checks)),
        "pidc_max_constraint_error_m": float(track.constraint_error_m.max()),
    })
    passive = simulate_constrained(system, qt0, qdt0, duration_s=duration_s, step_s=step_s,
                                   torque_law=crank_tracking_law(system, traj, actuated=np.array([True, False])))
    out.update({
        "passive_max_crank_error_rad": float(np.abs(passive.q[:, 0] - crank_d).max()),
        "passive_max_rod_torque_nm": float(np.abs(passive.torque[:, 1]).max()),
        "passive_max_crank_torque_nm": float(np.abs(passive.torque[:, 0]).max()),
        "passive_max_slider_force_n": float(np.abs(passive.multiplier).max()),
    })
    return out
