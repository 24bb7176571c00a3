"""Set-point correction solvers for P4 (Bicchi & Melchiorri, seeds.md): the paper's steepest descent and LM.

* :func:`compensate_steepest_descent` — the paper's Lyapunov law ``q̇ = λ Gᵀ P e`` (eq. (13))
  in its discrete form with the step ``λ_n`` and the limiting diagonal ``S_n`` (eq. (15)).
* :func:`compensate_levenberg_marquardt` — Gauss–Newton / Levenberg–Marquardt on the same
  error and stopping rule.

Errors are ``e = ᴮw_d − ᴮw`` and ``V = ½ eᵀ P e`` (P4, eqs. (8)–(9)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .chain import ChainDeflection, CompliantChain, _as_wrench, deflect_chain, wrench_jacobian, wrench_jacobian_fd

__all__ = [
    "DEFAULT_LYAPUNOV_TOLERANCE",
    "CompensationResult",
    "compensate_levenberg_marquardt",
    "compensate_steepest_descent",
    "wrench_invariant_mismatch",
]

#: Stopping rule of P4's examples: V = ½ eᵀ P e ≤ 10⁻⁶.
DEFAULT_LYAPUNOV_TOLERANCE = 1e-6


@dataclass(frozen=True)
class CompensationResult:
    """Outcome of a set-point correction: the best joint set-point found and why the solver stopped.

    ``converged`` is True only if ``V = ½ eᵀ P e`` reached ``tolerance``;
    otherwise ``reason`` says why it stopped (iteration limit, no further
    progress — typically an unreachable set-point) and ``q_rad`` / ``error`` are
    the best found. ``iterations`` counts joint-space update steps computed, the
    same way for both solvers: a steepest-descent step (one G, one chain
    evaluation) or a Levenberg–Marquardt trial step (one linear solve and one
    chain evaluation, rejected trials included; G only after an accepted step).
    ``error_evaluations`` counts deflected-chain evaluations.
    """

    method: str
    converged: bool
    reason: str
    q_rad: np.ndarray
    q_initial_rad: np.ndarray
    iterations: int
    error_evaluations: int
    lyapunov_value: float
    initial_lyapunov_value: float
    error: np.ndarray
    initial_error: np.ndarray
    tolerance: float
    lyapunov_history: np.ndarray
    deflection: ChainDeflection

    @property
    def correction_rad(self) -> np.ndarray:
        """Joint set-point change ``q − q_initial`` (rad)."""
        return self.q_rad - self.q_initial_rad

    def summary(self) -> str:
        status = "converged" if self.converged else "NOT converged"
        return (f"{self.method}: {status} after {self.iterations} iterations ({self.reason}); "
                f"V {self.initial_lyapunov_value:.4g} -> {self.lyapunov_value:.4g}; "
                f"|e| {np.linalg.norm(self.initial_error):.4g} -> {np.linalg.norm(self.error):.4g}")


def _weight(weight: np.ndarray | None) -> np.ndarray:
    if weight is None:
        return np.eye(6)
    p = np.asarray(weight, dtype=float)
    if p.shape == (6,):
        p = np.diag(p)
    if p.shape != (6, 6) or not np.allclose(p, p.T) or np.any(np.linalg.eigvalsh(p) <= 0):
        raise ValueError("weight P must be a symmetric positive definite 6x6 matrix (or 6 positive diagonal values)")
    return p


class _Tracker:
    """Best-so-far bookkeeping and the stopping tests shared by both solvers."""

    def __init__(self, *, tolerance: float, stall_iterations: int, stall_relative_decrease: float) -> None:
        self.tolerance = tolerance
        self.stall_iterations = stall_iterations
        self.stall_relative_decrease = stall_relative_decrease
        self.history: list[float] = []
        self.best_v = np.inf
        self.best_q: np.ndarray | None = None
        self.best_state: ChainDeflection | None = None
        self.best_error: np.ndarray | None = None
        self._best_at_window_start = np.inf
        self._window_start = 0

    def record(self, v: float, q: np.ndarray, state: ChainDeflection, e: np.ndarray) -> None:
        self.history.append(v)
        if v < self.best_v:
            self.best_v, self.best_q, self.best_state, self.best_error = v, q.copy(), state, e.copy()

    def stalled(self, iteration: int) -> bool:
        """True if the best V fell by less than the set fraction over the last window."""
        if iteration - self._window_start < self.stall_iterations:
            return False
        stalled = self.best_v > self._best_at_window_start * (1.0 - self.stall_relative_decrease)
        self._best_at_window_start, self._window_start = self.best_v, iteration
        return stalled


def _check_problem(chain, q0, sensor_wrench, desired, tolerance, max_iterations):
    q = np.asarray(q0, dtype=float).reshape(-1).copy()
    if q.shape != (chain.n_joints,):
        raise ValueError(f"initial joint set-point needs {chain.n_joints} angles (rad), got {q.size}")
    if not (tolerance > 0):
        raise ValueError(f"tolerance on V must be > 0, got {tolerance!r}")
    if int(max_iterations) < 1:
        raise ValueError(f"max_iterations must be >= 1, got {max_iterations!r}")
    return q, _as_wrench(sensor_wrench, "sensor_wrench"), _as_wrench(desired, "desired_base_wrench")


def _result(method, tracker, q0, e0, v0, reason, converged, iterations, evaluations) -> CompensationResult:
    return CompensationResult(
        method=method, converged=converged, reason=reason, q_rad=tracker.best_q, q_initial_rad=q0,
        iterations=iterations, error_evaluations=evaluations, lyapunov_value=tracker.best_v,
        initial_lyapunov_value=v0, error=tracker.best_error, initial_error=e0, tolerance=tracker.tolerance,
        lyapunov_history=np.asarray(tracker.history), deflection=tracker.best_state,
    )


def wrench_invariant_mismatch(sensor_wrench: np.ndarray, desired_base_wrench: np.ndarray) -> str | None:
    """Why no pose can map ``sensor_wrench`` onto ``desired_base_wrench``, or None if the invariants agree.

    A change of frame keeps the force magnitude ``|f|`` and the product ``f·m``
    (the wrench's pitch times |f|²), so a set-point that differs in either is
    unreachable whatever the arm does; only the line of action can move.
    """
    w_e, w_d = np.asarray(sensor_wrench, float), np.asarray(desired_base_wrench, float)
    f_e, f_d = float(np.linalg.norm(w_e[:3])), float(np.linalg.norm(w_d[:3]))
    if abs(f_e - f_d) > 1e-6 * max(1.0, f_d):
        return (f"force magnitude of the set-point is {f_d:.6g} N but the sensor wrench has {f_e:.6g} N; "
                f"moving the arm only re-orients the force, so change the force set-point of the force loop")
    p_e, p_d = float(w_e[:3] @ w_e[3:]), float(w_d[:3] @ w_d[3:])
    if abs(p_e - p_d) > 1e-6 * max(1.0, f_d**2):
        return (f"f·m of the set-point is {p_d:.6g} N²m but {p_e:.6g} N²m for the sensor wrench; "
                f"this product does not change with the frame, so no pose can meet the set-point")
    return None


def _unreachable_reason(tracker: _Tracker, what: str, hint: str | None) -> str:
    why = hint or ("the required line of action is out of the arm's reach or the arm has too few "
                   "joints (a defective arm)")
    return (f"{what}: best V = {tracker.best_v:.4g} > tolerance {tracker.tolerance:g}; set-point not "
            f"reached, likely cause: {why}; the best joint set-point found is returned")


def compensate_steepest_descent(
    chain: CompliantChain,
    q_initial_rad: np.ndarray,
    sensor_wrench: np.ndarray,
    desired_base_wrench: np.ndarray,
    *,
    weight: np.ndarray | None = None,
    tolerance: float = DEFAULT_LYAPUNOV_TOLERANCE,
    max_iterations: int = 20000,
    period_s: float = 1.0,
    max_direction_component: float | None = None,
    step_scale: float = 1.0,
    jacobian: str = "paper",
    stall_iterations: int = 500,
    stall_relative_decrease: float = 1e-6,
) -> CompensationResult:
    """P4's Lyapunov-based correction: ``q̇ = λ S Gᵀ P e`` stepped in discrete time.

    Bicchi & Melchiorri P4, eq. (13): ``q̇ = λ Gᵀ P e`` makes ``V = ½ eᵀ P e``
    decrease; eq. (15): with period T, ``q_{n+1} = q_n + T λ_n S_n G_nᵀ P e_n`` and

        λ_n = (1/T) (e_nᵀ Pᵀ G_n S_n G_nᵀ P e_n) / (e_nᵀ Pᵀ G_n S_n G_nᵀ P G_n S_n G_nᵀ P e_n),

    the step that minimises the linearised V along the direction. ``S_n`` is
    diagonal and limits the size of ``G_nᵀ P e_n``: here
    ``S_n,ii = min(1, max_direction_component / |(Gᵀ P e)_i|)`` (identity when
    ``max_direction_component`` is None). ``period_s`` only scales λ (the step
    ``T λ`` does not depend on it). ``step_scale`` multiplies λ_n (1 = eq. (15); the
    sweep of benchmarks/bench_flexible_compensation.py tries under- and over-relaxation);
    ``jacobian='full'`` uses the exact derivative of the quasi-static model (finite
    differences, deflections following q) instead of P4's G. Stops when ``V ≤ tolerance`` (converged),
    when ``Gᵀ P e`` vanishes or V stops falling by ``stall_relative_decrease``
    over ``stall_iterations`` steps (unreachable set-point), or at
    ``max_iterations``.
    """
    q, w_e, w_d = _check_problem(chain, q_initial_rad, sensor_wrench, desired_base_wrench,
                                 tolerance, max_iterations)
    hint = wrench_invariant_mismatch(w_e, w_d)
    p = _weight(weight)
    if not period_s > 0 or not step_scale > 0:
        raise ValueError(f"period_s and step_scale must be > 0, got {period_s!r}, {step_scale!r}")
    if jacobian not in ("paper", "full"):
        raise ValueError(f"jacobian must be 'paper' (P4's G) or 'full' (finite differences), got {jacobian!r}")
    tracker = _Tracker(tolerance=tolerance, stall_iterations=stall_iterations,
                       stall_relative_decrease=stall_relative_decrease)
    q0 = q.copy()
    e0 = v0 = None
    evaluations = 0
    for iteration in range(max_iterations + 1):
        state = deflect_chain(chain, q, w_e)
        evaluations += 1
        e = w_d - state.base_wrench
        v = 0.5 * float(e @ p @ e)  # P4, eq. (9)
        if e0 is None:
            e0, v0 = e.copy(), v
        tracker.record(v, q, state, e)
        if v <= tolerance:
            return _result("steepest-descent (P4 eq. 15)", tracker, q0, e0, v0,
                           f"V <= {tolerance:g}", True, iteration, evaluations)
        if iteration == max_iterations:
            break
        if tracker.stalled(iteration):
            return _result("steepest-descent (P4 eq. 15)", tracker, q0, e0, v0,
                           _unreachable_reason(tracker, f"no progress over {stall_iterations} iterations", hint),
                           False, iteration, evaluations)
        if jacobian == "paper":
            g_mat = wrench_jacobian(chain, state)
        else:
            g_mat = wrench_jacobian_fd(chain, q, w_e, frozen_deflection=False)
            evaluations += 2 * chain.n_joints
        grad = g_mat.T @ (p @ e)  # Gᵀ P e
        if max_direction_component is None:
            s = np.ones_like(grad)
        else:
            s = np.minimum(1.0, max_direction_component / np.maximum(np.abs(grad), 1e-300))
        direction = s * grad  # S Gᵀ P e
        numerator = float(grad @ direction)
        curvature = g_mat @ direction
        denominator = float(curvature @ p @ curvature)
        if numerator <= 1e-300 or denominator <= 1e-300:
            return _result("steepest-descent (P4 eq. 15)", tracker, q0, e0, v0,
                           _unreachable_reason(tracker, "stationary point (G^T P e = 0)", hint),
                           False, iteration, evaluations)
        lam = step_scale * numerator / denominator / period_s  # P4, eq. (15)
        q = q + period_s * lam * direction  # q_{n+1} = q_n + T q̇_n
    return _result("steepest-descent (P4 eq. 15)", tracker, q0, e0, v0,
                   f"iteration limit {max_iterations} reached; best V = {tracker.best_v:.4g}",
                   False, max_iterations, evaluations)


def compensate_levenberg_marquardt(
    chain: CompliantChain,
    q_initial_rad: np.ndarray,
    sensor_wrench: np.ndarray,
    desired_base_wrench: np.ndarray,
    *,
    weight: np.ndarray | None = None,
    tolerance: float = DEFAULT_LYAPUNOV_TOLERANCE,
    max_iterations: int = 200,
    jacobian: str = "paper",
    initial_damping: float = 1e-3,
    max_step_rad: float = 0.5,
    stall_iterations: int = 20,
    stall_relative_decrease: float = 1e-6,
) -> CompensationResult:
    """Gauss–Newton / Levenberg–Marquardt on P4's error, with P4's stopping rule ``V ≤ tolerance``.

    Each iteration solves ``(Gᵀ P G + μ I) Δq = Gᵀ P e`` (μ = 0 is Gauss–Newton),
    accepts the step if V falls (then μ shrinks), otherwise grows μ and retries.
    ``jacobian='paper'`` uses P4's G (deflections frozen, same cost as one
    steepest-descent step); ``'full'`` uses central finite differences of the
    complete quasi-static model (2n extra chain evaluations, exact derivative).
    ``max_step_rad`` caps the joint-space step norm. ``iterations`` counts every
    linear solve, rejected trials included.
    """
    q, w_e, w_d = _check_problem(chain, q_initial_rad, sensor_wrench, desired_base_wrench,
                                 tolerance, max_iterations)
    hint = wrench_invariant_mismatch(w_e, w_d)
    p = _weight(weight)
    if jacobian not in ("paper", "full"):
        raise ValueError(f"jacobian must be 'paper' (P4's G) or 'full' (finite differences), got {jacobian!r}")
    method = f"levenberg-marquardt ({jacobian} G)"
    tracker = _Tracker(tolerance=tolerance, stall_iterations=stall_iterations,
                       stall_relative_decrease=stall_relative_decrease)
    q0 = q.copy()
    state = deflect_chain(chain, q, w_e)
    evaluations = 1
    e = w_d - state.base_wrench
    v = 0.5 * float(e @ p @ e)
    e0, v0 = e.copy(), v
    tracker.record(v, q, state, e)
    mu = None
    nu = 2.0
    need_jacobian = True
    iteration = 0
    while v > tolerance:
        if iteration >= max_iterations:
            return _result(method, tracker, q0, e0, v0,
                           f"iteration limit {max_iterations} reached; best V = {tracker.best_v:.4g}",
                           False, iteration, evaluations)
        if tracker.stalled(iteration):
            return _result(method, tracker, q0, e0, v0,
                           _unreachable_reason(tracker, f"no progress over {stall_iterations} iterations", hint),
                           False, iteration, evaluations)
        if need_jacobian:
            if jacobian == "paper":
                g_mat = wrench_jacobian(chain, state)
            else:
                g_mat = wrench_jacobian_fd(chain, q, w_e, frozen_deflection=False, step_rad=1e-6)
                evaluations += 2 * chain.n_joints
            a = g_mat.T @ p @ g_mat
            grad = g_mat.T @ (p @ e)
            if mu is None:
                mu = initial_damping * max(float(np.max(np.diag(a))), 1e-12)
            need_jacobian = False
            if float(np.linalg.norm(grad)) <= 1e-14 * max(1.0, float(np.linalg.norm(e))):
                return _result(method, tracker, q0, e0, v0,
                               _unreachable_reason(tracker, "stationary point (G^T P e = 0)", hint),
                               False, iteration, evaluations)
        iteration += 1
        step = np.linalg.solve(a + mu * np.eye(a.shape[0]), grad)
        norm = float(np.linalg.norm(step))
        if norm > max_step_rad:
            step *= max_step_rad / norm
        q_trial = q + step
        trial = deflect_chain(chain, q_trial, w_e)
        evaluations += 1
        e_trial = w_d - trial.base_wrench
        v_trial = 0.5 * float(e_trial @ p @ e_trial)
        predicted = float(step @ grad) - 0.5 * float(step @ a @ step)  # decrease of the linear model
        if v_trial < v:
            rho = (v - v_trial) / predicted if predicted > 0 else 1.0
            mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)  # Nielsen's damping update
            nu = 2.0
            q, state, e, v = q_trial, trial, e_trial, v_trial
            tracker.record(v, q, state, e)
            need_jacobian = True
        else:
            mu *= nu
            nu *= 2.0
            if mu > 1e16:
                return _result(method, tracker, q0, e0, v0,
                               _unreachable_reason(tracker, "no descent step found (damping exhausted)", hint),
                               False, iteration, evaluations)
    return _result(method, tracker, q0, e0, v0, f"V <= {tolerance:g}", True, iteration, evaluations)
