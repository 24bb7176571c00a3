"""Integrators for planar constrained mechanisms (Aghili, seeds.md P5) and the classical baseline.

* :func:`simulate_constrained` — RK4 on the projected direct dynamics (P5 eq. 22), with
  Newton-Raphson drift correction (eq. 39) and velocity projection (eq. 12) after every
  step. It records the constraint error, energy, ``cond(M_c)``, the smallest singular
  value of ``A`` and the constraint force (eq. 32) along the run.
* :func:`simulate_augmented` — the classical baseline: the augmented (KKT,
  Lagrange-multiplier) system ``[[M, -A^T], [A, 0]]``, which assumes A has full row rank,
  stabilised either by the full-rank coordinate projection ``q <- q - A^T (A A^T)^-1 phi``
  (default) or by Baumgarte's feedback (``stabilisation="baumgarte"``). What the runs
  show (benchmarks/bench_slider_crank.py): it stops where A is EXACTLY rank-deficient
  (redundant constraints; a start at a singular configuration, e.g. a parallelogram
  four-bar lying flat); passing NEAR a singular configuration with coordinate projection
  it integrates on, with multipliers that grow without bound; with Baumgarte's
  stabilisation the crossing can diverge, depending on the gains.

Systems: anything with the methods of :class:`.planar_mechanisms.TipOnLineSystem`
(``n_joints``, ``terms``, ``constraint``, ``constraint_jacobian``, ``energy``).
The integrator is the classical fixed-step RK4 (1 ms by default) with the torque held
over each step (zero-order hold, as a digital controller applies it) unless
``sample_and_hold=False``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..dynamics.constrained import (
    DEFAULT_RANK_TOLERANCE,
    constraint_inertia_matrix,
    correct_constraint_drift,
    null_space_projector,
)

__all__ = [
    "ConstrainedSimulation",
    "TorqueLaw",
    "augmented_forward_dynamics",
    "augmented_matrix",
    "simulate_augmented",
    "simulate_constrained",
]


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


def _projected_acceleration(m, h, tau, a, adot_qd, rank_tolerance, projection=None):
    """``constrained_forward_dynamics`` (M_c form, eq. 22) without its argument checks: the
    simulator's inner loop, where the arrays come from the system itself."""
    proj = projection or null_space_projector(a, rank_tolerance=rank_tolerance)
    p = proj.projector
    return np.linalg.solve(m + p @ m - m @ p, p @ (tau - h) - m @ (proj.pseudo_inverse @ adot_qd)), proj


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
    system,
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
        qdd, _ = _projected_acceleration(m, h, tau, a, adot_qd, rank_tolerance, proj)
        # eq. (32), then the minimum-norm multipliers lambda = (A^T)^+ tau_c (same rank decision as P)
        residual = m @ qdd + h - tau
        last_lam = proj.pseudo_inverse.T @ (residual - proj.projector @ residual)
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
            m_s, h_s, a_s, b_s = system.terms(qs, qds)
            return _projected_acceleration(m_s, h_s, tau, a_s, b_s, rank_tolerance)[0]

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


def augmented_forward_dynamics(mass_matrix, bias_torque, torque, constraint_jacobian, constraint_bias_acceleration,
                               stabilisation_acceleration=None):
    """Baseline: solve ``M qdd = tau - h + A^T lambda``, ``A qdd = -Adot qd + s`` for ``(qdd, lambda)``.

    The Lagrange-multiplier formulation that assumes A has full row rank; ``s``
    (``stabilisation_acceleration``, default 0) is Baumgarte's ``-2 alpha A qd - beta^2 phi``.
    Raises ``numpy.linalg.LinAlgError`` when the KKT matrix is exactly singular; near a
    singular configuration it returns whatever the ill-conditioned solve gives.
    """
    kkt = augmented_matrix(mass_matrix, constraint_jacobian)
    n = np.asarray(mass_matrix).shape[0]
    rhs_c = -np.atleast_1d(np.asarray(constraint_bias_acceleration, float))
    if stabilisation_acceleration is not None:
        rhs_c = rhs_c + np.atleast_1d(np.asarray(stabilisation_acceleration, float))
    rhs = np.concatenate([np.asarray(torque, float) - np.asarray(bias_torque, float), rhs_c])
    sol = np.linalg.solve(kkt, rhs)
    return sol[:n], sol[n:]


def simulate_augmented(
    system,
    q0: np.ndarray,
    qd0: np.ndarray,
    *,
    duration_s: float,
    step_s: float = 1e-3,
    torque_law: TorqueLaw | None = None,
    drift_tolerance_m: float = 1e-12,
    divergence_energy_j: float = 1e3,
    stabilisation: str = "projection",
    baumgarte_per_s: float = 10.0,
) -> ConstrainedSimulation:
    """The same RK4 run with the classical augmented (Lagrange-multiplier) formulation.

    ``stabilisation="projection"``: after each step the classical full-rank Newton step
    ``q <- q - A^T (A A^T)^-1 phi`` and ``qd <- qd - A^T (A A^T)^-1 A qd``.
    ``"baumgarte"``: no correction after the step; the acceleration constraint carries
    Baumgarte's feedback ``A qdd = -Adot qd - 2 a A qd - a^2 phi`` with
    ``a = baumgarte_per_s`` (critically damped). The run stops and records ``failure``
    on a singular solve, a non-finite state, or an energy change beyond
    ``divergence_energy_j``. ``constraint_inertia_condition`` holds the KKT matrix's
    condition number.
    """
    if stabilisation not in ("projection", "baumgarte"):
        raise ValueError(f"stabilisation must be 'projection' or 'baumgarte', got {stabilisation!r}")
    if not baumgarte_per_s >= 0.0:
        raise ValueError(f"baumgarte_per_s must be >= 0, got {baumgarte_per_s}")
    baumgarte = stabilisation == "baumgarte"
    steps = _check_run(duration_s, step_s)
    n = system.n_joints
    law = torque_law or _zero_torque(n)
    rec = {k: [] for k in ("t", "q", "qd", "tau", "lam", "err", "verr", "e", "cond", "smin")}

    def full_rank_step(a, r):
        return a.T @ np.linalg.solve(a @ a.T, r)

    def stabiliser(qs, qds, a):
        if not baumgarte:
            return None
        return -2.0 * baumgarte_per_s * (a @ qds) - baumgarte_per_s**2 * system.constraint(qs)

    def correct(q, qd):
        phi = system.constraint(q)
        if baumgarte:
            return q, qd, float(np.linalg.norm(phi))
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
            _, last_lam = augmented_forward_dynamics(m, h, tau, a, adot_qd, stabiliser(q, qd, a))
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
                terms = system.terms(qs, qds)
                return augmented_forward_dynamics(*_with_torque(terms, tau), stabiliser(qs, qds, terms[2]))[0]

            q, qd = _rk4_step(accel, t, q, qd, step_s)
            q, qd, err = correct(q, qd)
        except np.linalg.LinAlgError as exc:
            failure, failed_at = f"singular matrix in the augmented formulation ({exc})", t
            break
    return _pack(rec, failure, failed_at)
