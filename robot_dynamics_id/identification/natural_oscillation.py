"""Dynamics identification by natural oscillation of an inverted pendulum (Jamisola & Dadios, seeds.md P1).

The arm stands upright in torque control and receives only its model's
Coriolis and gravity torques, ``tau = c_hat(q, qd) + g_hat(q)`` (P1: control law
``u = qdd_d - k_v (qd - qd_d) - k_p (q - q_d)`` with ``k_p = k_v = 0`` and
``qdd_d = 0``, so the ``M_hat u`` term vanishes). After a push the arm falls if
the model's gravity is too small and oscillates if it is too large, faster the
larger the excess; the true lumped parameters sit at the lowest frequency before
falling. Each lumped parameter (a product such as m l) carries a factor ``f``;
identification searches the factors.

What the method identifies, and what it cannot (P1 claims "full dynamics"):

* it identifies the gravity terms only: each group's first moments (mass times CoM,
  lumped with everything the group carries: P1's "m l"), along the link from the fall
  boundary and across it from where the arm oscillates. Masses and CoM positions are not
  separable, CoM components along the joint axes do not enter, a joint gravity does not
  load at the experiment's pose is not seen (a UR3's base always; wrists 2-3 upright);
* inertia enters only through ``c(q, qd)``, which is second order in the push's small
  velocities and never decides fall or oscillation: the inertia factor of P1's Table II
  (f_m1) is not identifiable this way (the differential-evolution search shows it);
* friction is assumed zero: a real arm's Coulomb friction exceeds the gravity residual
  of a 1 % error and holds an under-compensated arm, so the law needs a friction model
  fed forward (our extension), and that model's error goes into the result.

This module holds the arm-independent parts:

* :class:`TorqueControlledArm` — the plant protocol (``reset``, ``apply_torque``,
  ``step``, ``period_s``), met by the planar simulator
  :class:`robot_dynamics_id.sim.pendulum.PlanarPendulumArm`, the pinocchio UR3
  of :mod:`.natural_oscillation_ur3` and, later, the MuJoCo UR3 plant.
* :class:`FactorizedArmModel` — a controller model whose lumped parameters are
  scaled by factors; :class:`PlanarChainFactorModel` for the planar chain.
* :func:`run_push_trial` — one experiment: upright, push, open-loop law, fall
  detection against a safety bound, periods counted in a fixed window (P1's
  measure) and a zero-crossing frequency (no fixed window needed).
* Searches for the fall boundary: :func:`incremental_search` (P1, Fig. 3),
  :func:`bracketing_search` (bisection per lumped factor) and
  :func:`differential_evolution_search` (a metaheuristic for many factors,
  P1's future work).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Protocol, runtime_checkable

import numpy as np

from ..dynamics.planar_chain import PlanarChainLumpedModel, coriolis_from_couplings, gravity_from_first_moments

__all__ = [
    "BracketingResult",
    "FactorizedArmModel",
    "IncrementalSearchResult",
    "MetaheuristicResult",
    "NoFallAtLowEnd",
    "OscillationOutcome",
    "OscillationTrial",
    "PlanarChainFactorModel",
    "PushExperiment",
    "TorqueControlledArm",
    "bracketing_search",
    "count_periods",
    "differential_evolution_search",
    "incremental_search",
    "run_push_trial",
    "spectral_frequency_hz",
    "zero_crossing_frequency_hz",
    "zero_crossing_times_s",
]


class NoFallAtLowEnd(ValueError):
    """A bisection found no fall at or below its low end: nothing to bisect."""


@runtime_checkable
class TorqueControlledArm(Protocol):
    """A plant commanded in joint torque at a fixed control period.

    ``apply_torque`` sets the torque held during the next ``step``; ``step``
    advances one ``period_s`` and returns (q, qd). States may be batched (B, n).
    """

    period_s: float

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None: ...

    def apply_torque(self, tau_nm: np.ndarray) -> None: ...

    def step(self) -> tuple[np.ndarray, np.ndarray]: ...


class FactorizedArmModel(Protocol):
    """A controller model of c(q, qd) + g(q) whose lumped parameters are scaled by factors.

    ``torque(q, qd, factors)`` returns c_hat + g_hat (N m) for factors of shape
    (k,) or, with batched states, (B, k). ``oscillation_coordinates(q)`` maps
    joint angles to the coordinates in which gravity separates (absolute link
    angles of a planar chain); fall detection and frequencies use them.
    """

    factor_names: tuple[str, ...]

    def torque(self, q: np.ndarray, qd: np.ndarray, factors: np.ndarray) -> np.ndarray: ...

    def oscillation_coordinates(self, q: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class PlanarChainFactorModel:
    """P1's factorised open-loop model for a planar chain: every lumped parameter times its factor.

    Factor order = ``nominal.parameter_names()``: couplings C_jk, then first
    moments B_j; for two links (f_m1, f_m2, f_m3) of P1 eq. (15).
    ``measure_relative_angles`` selects which angles fall detection and
    frequency estimates use: the joint angles (P1 counts periods per link
    joint) or the absolute link angles (in which gravity separates).
    """

    nominal: PlanarChainLumpedModel
    measure_relative_angles: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_nominal_vector", self.nominal.parameter_vector())
        object.__setattr__(self, "_upper", np.triu_indices(self.nominal.n_links, 1))

    @property
    def factor_names(self) -> tuple[str, ...]:
        return tuple(name.split("_")[1] for name in self.nominal.parameter_names())

    def torque(self, q: np.ndarray, qd: np.ndarray, factors: np.ndarray) -> np.ndarray:
        n = self.nominal.n_links
        p = self._nominal_vector * np.asarray(factors, float)
        n_c = n * (n - 1) // 2
        first_moment = p[..., n_c:]
        coupling = np.zeros(p.shape[:-1] + (n, n))
        coupling[(...,) + self._upper] = p[..., :n_c]
        coupling = coupling + np.swapaxes(coupling, -1, -2)
        q = np.asarray(q, float)
        # P1 eq. (15) generalised to n links (see robot_dynamics_id.dynamics.planar_chain).
        g = gravity_from_first_moments(first_moment, q, self.nominal.gravity_m_s2)
        return g + coriolis_from_couplings(coupling, q, np.asarray(qd, float))

    def oscillation_coordinates(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, float)
        return q if self.measure_relative_angles else np.cumsum(q, -1)


class OscillationOutcome(enum.Enum):
    """What the arm did after the push."""

    FELL = "falls"              # left the safety bound: model gravity too small (or marginal)
    OSCILLATED = "oscillates"   # at least one full period in every measured coordinate
    SETTLED = "settled"         # neither: stuck by friction, or too slow to complete a period


@dataclass(frozen=True)
class PushExperiment:
    """Settings of one natural-oscillation trial (P1, Fig. 3: upright at rest, push, watch).

    The push is an initial joint velocity. ``window_steps`` is the fixed
    counting window of P1 (5,000 simulation steps). ``max_excursion_rad`` is the
    safety bound: beyond it the arm counts as fallen and the trial stops (a
    real arm must be caught long before it really falls). ``stop_after_periods``
    ends an oscillating trial early once every measured coordinate completed
    that many periods — the zero-crossing frequency needs no fixed window.
    ``plant_gravity_compensation`` is subtracted from the command, for plants
    that add their own gravity model to a torque command (UR ``direct_torque``).
    ``predict_half_step`` evaluates the law at ``q + qd period/2``: a torque held
    over a period acts, on average, half a period late, and that lag on the
    (large) gravity term is a negative damping of about ``g B period / 2`` that
    makes the oscillation grow; the prediction removes it to first order.
    ``hold_joints``/``hold_gains`` keep joints that are not part of the
    experiment at their start angle by PD control.
    """

    upright_q_rad: np.ndarray
    push_qd_rad_s: np.ndarray
    window_steps: int = 5000
    max_excursion_rad: float = 0.6
    stop_after_periods: int | None = None
    plant_gravity_compensation: Callable[[np.ndarray], np.ndarray] | None = None
    hold_joints: tuple[int, ...] = ()
    hold_gains: tuple[float, float] = (0.0, 0.0)
    predict_half_step: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "upright_q_rad", np.asarray(self.upright_q_rad, float))
        object.__setattr__(self, "push_qd_rad_s", np.asarray(self.push_qd_rad_s, float))
        if self.upright_q_rad.shape != self.push_qd_rad_s.shape:
            raise ValueError("upright_q_rad and push_qd_rad_s must have the same shape (one entry per joint)")
        if self.window_steps < 10:
            raise ValueError("window_steps must be >= 10")
        if not self.max_excursion_rad > 0:
            raise ValueError("max_excursion_rad (the safety bound) must be > 0")


@dataclass
class OscillationTrial:
    """Result of one push trial (arrays over the measured coordinates; batched trials add a leading axis)."""

    factors: np.ndarray
    time_s: np.ndarray                 # (N,)
    coordinates_rad: np.ndarray        # (N, [B,] n) measured coordinates (see FactorizedArmModel)
    outcome: np.ndarray                # ([B,]) of OscillationOutcome
    fell_at_s: np.ndarray              # ([B,]) time the safety bound was crossed, nan if never
    periods_counted: np.ndarray        # ([B,] n) full periods in the window (P1's measure)
    frequency_hz: np.ndarray           # ([B,] n) zero-crossing estimate, nan if < 1 period
    center_rad: np.ndarray             # ([B,] n) mean coordinate over whole periods (equilibrium)
    window_s: float
    period_s: float

    @property
    def fell(self) -> np.ndarray:
        return np.vectorize(lambda o: o is OscillationOutcome.FELL, otypes=[bool])(self.outcome)


def zero_crossing_times_s(time_s: np.ndarray, x: np.ndarray, level: float = 0.0,
                          rising_only: bool = False) -> np.ndarray:
    """Times at which ``x`` crosses ``level``, linearly interpolated between samples."""
    y = np.asarray(x, float) - level
    t = np.asarray(time_s, float)
    s = np.signbit(y)
    idx = np.nonzero(s[:-1] != s[1:])[0]
    if rising_only:
        idx = idx[y[idx + 1] > y[idx]]
    y0, y1 = y[idx], y[idx + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(y1 != y0, y0 / (y0 - y1), 0.0)
    return t[idx] + frac * (t[idx + 1] - t[idx])


def count_periods(x: np.ndarray, level: float = 0.0) -> int:
    """Full periods in a record, counted as P1 does: half the number of crossings of ``level``.

    A signal starting exactly at ``level`` (the upright pose) does not count its start.
    """
    y = np.asarray(x, float) - level
    y = y[np.nonzero(y)[0][0]:] if np.any(y) else y
    crossings = np.count_nonzero(np.signbit(y[:-1]) != np.signbit(y[1:]))
    return int(crossings // 2)


def zero_crossing_frequency_hz(time_s: np.ndarray, x: np.ndarray, level: float | None = None) -> float:
    """Oscillation frequency from rising crossings of the signal's centre; no fixed window needed.

    ``level`` defaults to the midpoint of the record's extremes. Returns nan if
    fewer than two rising crossings (one full period) exist.
    """
    x = np.asarray(x, float)
    if level is None:
        level = 0.5 * (float(np.max(x)) + float(np.min(x)))
    rising = zero_crossing_times_s(time_s, x, level, rising_only=True)
    if rising.size < 2:
        return float("nan")
    return (rising.size - 1) / float(rising[-1] - rising[0])


def spectral_frequency_hz(time_s: np.ndarray, x: np.ndarray, *, zero_pad: int = 8) -> float:
    """Dominant frequency from the Hann-windowed spectrum, peak refined by parabolic interpolation.

    Needs a few periods in the record for a sharp peak; returns nan for a record
    without variation.
    """
    t = np.asarray(time_s, float)
    y = np.asarray(x, float) - np.mean(x)
    if t.size < 8 or not np.any(y):
        return float("nan")
    dt = float(np.median(np.diff(t)))
    n_fft = int(2 ** np.ceil(np.log2(t.size * zero_pad)))
    spec = np.abs(np.fft.rfft(y * np.hanning(t.size), n_fft))
    k = int(np.argmax(spec[1:]) + 1)
    if 1 <= k < spec.size - 1:
        a, b, c = np.log(spec[k - 1: k + 2] + 1e-300)
        denom = a - 2 * b + c
        k = k + (0.5 * (a - c) / denom if denom != 0 else 0.0)
    return float(k / (n_fft * dt))


def _full_periods(time_s: np.ndarray, x: np.ndarray) -> int:
    """Full periods about the midpoint of the record's extremes (rising crossings minus one)."""
    lvl = 0.5 * (float(np.max(x)) + float(np.min(x)))
    return max(0, zero_crossing_times_s(time_s, x, lvl, rising_only=True).size - 1)


def _classify(time_s, coords, fell_at_s, level, period_s, window_s, factors):
    """Periods, frequency and centre per coordinate for one (unbatched) trial record."""
    n = coords.shape[-1]
    periods = np.array([count_periods(coords[:, j], level[j]) for j in range(n)])
    freq = np.full(n, np.nan)
    center = np.full(n, np.nan)
    for j in range(n):
        x = coords[:, j]
        lvl = 0.5 * (np.max(x) + np.min(x))
        rising = zero_crossing_times_s(time_s, x, lvl, rising_only=True)
        if rising.size >= 2:
            freq[j] = (rising.size - 1) / (rising[-1] - rising[0])
            sel = (time_s >= rising[0]) & (time_s <= rising[-1])
            center[j] = float(np.mean(x[sel]))
    if np.isfinite(fell_at_s):
        outcome = OscillationOutcome.FELL
    elif np.all(np.isfinite(freq)):
        outcome = OscillationOutcome.OSCILLATED
    else:
        outcome = OscillationOutcome.SETTLED
    return outcome, periods, freq, center


def run_push_trial(arm: TorqueControlledArm, model: FactorizedArmModel, factors: np.ndarray,
                   experiment: PushExperiment) -> OscillationTrial:
    """One P1 trial: reset upright, push, send only c_hat + g_hat, watch for a fall or oscillation.

    ``factors`` of shape (k,) runs one trial; shape (B, k) runs B trials at once
    on a plant that accepts batched states. The command each period is
    ``c_hat(q, qd) + g_hat(q)`` (P1, the open-loop law with k_p = k_v = 0)
    minus the plant's own gravity compensation if it adds one, plus PD holds on
    ``hold_joints``.
    """
    f = np.asarray(factors, float)
    batched = f.ndim == 2
    q0 = experiment.upright_q_rad
    qd0 = experiment.push_qd_rad_s
    if batched:
        q0 = np.broadcast_to(q0, (f.shape[0],) + q0.shape).copy()
        qd0 = np.broadcast_to(qd0, (f.shape[0],) + qd0.shape).copy()
    arm.reset(q0, qd0)
    ref = model.oscillation_coordinates(experiment.upright_q_rad)
    n_steps = experiment.window_steps
    coords = np.empty((n_steps + 1,) + np.shape(model.oscillation_coordinates(q0)))
    coords[0] = model.oscillation_coordinates(q0)
    fell_at = np.full(f.shape[:-1], np.nan)
    hold = list(experiment.hold_joints)
    kp, kd = experiment.hold_gains
    q, qd = q0, qd0
    last = n_steps
    for i in range(1, n_steps + 1):
        q_law = q + (0.5 * arm.period_s) * qd if experiment.predict_half_step else q
        tau = model.torque(q_law, qd, f)
        if experiment.plant_gravity_compensation is not None:
            tau = tau - experiment.plant_gravity_compensation(q_law)
        if hold:
            tau = np.array(tau, float)
            tau[..., hold] = kp * (q0[..., hold] - q[..., hold]) - kd * qd[..., hold]
        arm.apply_torque(tau)
        q, qd = arm.step()
        c = model.oscillation_coordinates(q)
        coords[i] = c
        out = np.max(np.abs(c - ref), axis=-1) > experiment.max_excursion_rad
        if getattr(arm, "trial_fell", False):  # the arm's own guard ended the trial as a fall (e.g. too fast)
            out = np.ones_like(out, dtype=bool)
        newly = out & np.isnan(fell_at)
        if np.any(newly):
            fell_at = np.where(newly, i * arm.period_s, fell_at)
        if np.all(np.isfinite(fell_at)):
            last = i
            break
        if experiment.stop_after_periods is not None and i % 50 == 0:
            t_now = np.arange(i + 1) * arm.period_s
            flat = coords[: i + 1].reshape(i + 1, -1, coords.shape[-1])
            fell_flat = np.ravel(fell_at)
            done = all(np.isfinite(fell_flat[b]) or all(
                _full_periods(t_now, flat[:, b, j]) >= experiment.stop_after_periods
                for j in range(flat.shape[-1])) for b in range(flat.shape[1]))
            if done:
                last = i
                break
    time_s = np.arange(last + 1) * arm.period_s
    coords = coords[: last + 1]
    window_s = n_steps * arm.period_s
    if not batched:
        outcome, periods, freq, center = _classify(time_s, coords, fell_at, ref, arm.period_s, window_s, f)
        return OscillationTrial(f, time_s, coords, np.array(outcome, dtype=object), fell_at, periods, freq,
                                center, window_s, arm.period_s)
    results = [_classify(time_s, coords[:, b], fell_at[b], ref, arm.period_s, window_s, f[b])
               for b in range(f.shape[0])]
    return OscillationTrial(
        f, time_s, coords, np.array([r[0] for r in results], dtype=object), fell_at,
        np.array([r[1] for r in results]), np.array([r[2] for r in results]),
        np.array([r[3] for r in results]), window_s, arm.period_s)


# --------------------------------------------------------------------------- searches

TrialFunction = Callable[[np.ndarray], OscillationTrial]


def _is_stable(trial: OscillationTrial) -> bool:
    return not bool(np.any(trial.fell))


@dataclass
class IncrementalSearchResult:
    """P1's search: factors lowered in fixed steps from above until the arm falls."""

    factors: np.ndarray                    # last factors that did not fall (the estimate)
    n_trials: int
    history: list[OscillationTrial] = field(default_factory=list)


def incremental_search(run_trial: TrialFunction, start_factors: np.ndarray, *, step: float,
                       lower: np.ndarray | None = None, direction: np.ndarray | None = None,
                       max_trials: int = 1000) -> IncrementalSearchResult:
    """P1, Fig. 3: start high (over-compensated), lower the factors by ``step`` until the arm falls.

    ``direction`` (default all ones) selects which factors are lowered (1) or
    kept (0). The estimate is the last setting that did not fall; its
    resolution is ``step``. Raises if the start already falls.
    """
    f = np.asarray(start_factors, float).copy()
    d = np.ones_like(f) if direction is None else np.asarray(direction, float)
    history: list[OscillationTrial] = []
    trial = run_trial(f)
    history.append(trial)
    if not _is_stable(trial):
        raise ValueError(f"the arm already falls at the start factors {f}; start higher (over-compensate more)")
    last_stable = f.copy()
    while len(history) < max_trials:
        f = f - step * d
        if lower is not None and np.any(f < lower):
            break
        trial = run_trial(f)
        history.append(trial)
        if not _is_stable(trial):
            break
        last_stable = f.copy()
    return IncrementalSearchResult(last_stable, len(history), history)


@dataclass
class BracketingResult:
    """Bisection on the fall boundary of one factor: falls at ``low``, does not fall at ``high``."""

    estimate: float            # midpoint of the final bracket
    low: float
    high: float
    n_trials: int
    extrapolated: float        # root of a line through (f, omega^2) of the two lowest stable trials; nan if n/a
    history: list[OscillationTrial] = field(default_factory=list)


def bracketing_search(run_trial: TrialFunction, base_factors: np.ndarray, index: int, *,
                      low: float, high: float, tolerance: float, max_trials: int = 30,
                      on_stable_trial: Callable[[OscillationTrial, float], None] | None = None,
                      frequency_coordinate: int | None = None) -> BracketingResult:
    """Bisect factor ``index`` between a falling ``low`` and an oscillating ``high`` to ``tolerance``.

    Gravity of a planar chain separates in the absolute link angles, so the
    fall boundary of one first-moment factor does not depend on the others as
    long as they over-compensate; one factor at a time is therefore exact.
    ``on_stable_trial(trial, current_estimate)`` lets a caller refine its
    model from each oscillating trial (e.g. the UR3's perpendicular CoM term).
    The ends are checked first (two trials) and moved outwards if wrong.
    """
    if not low < high:
        raise ValueError(f"bracket needs low < high, got [{low}, {high}]")
    base = np.asarray(base_factors, float).copy()
    history: list[OscillationTrial] = []

    def trial_at(value: float) -> bool:
        f = base.copy()
        f[index] = value
        t = run_trial(f)
        history.append(t)
        stable = _is_stable(t)
        if stable and on_stable_trial is not None:
            on_stable_trial(t, 0.5 * (lo + hi))
        return stable

    lo, hi = float(low), float(high)
    width = hi - lo
    while not trial_at(hi):
        lo, hi = hi, hi + width
        if len(history) >= max_trials:
            raise ValueError("no stable (oscillating) factor found above the bracket; raise 'high'")
    while trial_at(lo):
        hi, lo = lo, lo - width
        if len(history) >= max_trials or lo <= 0:
            raise NoFallAtLowEnd("the arm does not fall at the low end of the bracket: friction can hold an "
                                 "under-compensated arm (feed it forward), or lower 'low'")
    while hi - lo > tolerance and len(history) < max_trials:
        mid = 0.5 * (lo + hi)
        if trial_at(mid):
            hi = mid
        else:
            lo = mid
    # Secant on omega^2 (linear in the factor near the boundary for small pushes).
    stable = [t for t in history if _is_stable(t)]
    extrapolated = float("nan")
    j = frequency_coordinate
    if len(stable) >= 2:
        pts = sorted(((float(t.factors[index]), t.frequency_hz) for t in stable), key=lambda p: p[0])[:2]
        w = [float(np.min(p[1])) if j is None else float(p[1][j]) for p in pts]
        if np.all(np.isfinite(w)) and w[1] != w[0]:
            (f0, _), (f1, _) = pts
            extrapolated = f0 - w[0] ** 2 * (f1 - f0) / (w[1] ** 2 - w[0] ** 2)
    return BracketingResult(0.5 * (lo + hi), lo, hi, len(history), extrapolated, history)


@dataclass
class MetaheuristicResult:
    """Result of the metaheuristic search over all factors."""

    factors: np.ndarray
    objective: float
    n_trials: int


def differential_evolution_search(run_trial: TrialFunction, bounds: list[tuple[float, float]], *,
                                  max_generations: int = 15, population: int = 6, seed: int = 0,
                                  tolerance: float = 1e-3) -> MetaheuristicResult:
    """Minimise the oscillation frequency subject to "does not fall" with differential evolution.

    P1's future work for arms with more lumped parameters than a grid covers.
    Objective: sum over measured coordinates of the squared zero-crossing
    frequency for a stable trial (unmeasurable periods count as 0); a falling
    trial costs ``1e3 * (1 + (window - fall time) / window)`` so earlier falls
    are worse and the population is pushed back to the stable side.
    """
    from scipy.optimize import differential_evolution

    count = [0]

    def objective(f: np.ndarray) -> float:
        count[0] += 1
        t = run_trial(np.asarray(f, float))
        if not _is_stable(t):
            return 1e3 * (1.0 + (t.window_s - float(np.nanmin(t.fell_at_s))) / t.window_s)
        return float(np.sum(np.nan_to_num(t.frequency_hz, nan=0.0) ** 2))

    res = differential_evolution(objective, bounds, maxiter=max_generations, popsize=population, seed=seed,
                                 tol=tolerance, polish=False, init="latinhypercube", mutation=(0.5, 0.9),
                                 recombination=0.7, updating="immediate")
    return MetaheuristicResult(np.asarray(res.x, float), float(res.fun), count[0])
