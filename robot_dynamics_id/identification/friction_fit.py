"""Friction in the identification: regressor columns, shape constants, the load iteration, model selection.

Per joint the friction is dynamics/friction.py's model: the P2 eq. (11) terms
(static/Stribeck, Coulomb, viscous, offset) and, when selected, the terms real UR
joints add — load-dependent Coulomb ``mu |tau_load| sgn``, the odd polynomial viscous
law ``k_2 qd|qd|`` and Dahl presliding (the sign functions follow the state
z of ``dz/dq = (sgn(dq) - z) / delta``). What this module does with it:

* **Columns** (identification/friction_columns.py): for fixed shape constants
  (Stribeck velocity x_s, Coulomb smoothing v_k, presliding distance delta) and a given
  load torque the model is linear in its parameters; the columns are parallel-filtered
  like the measured torque.
* **Load-dependent Coulomb** needs ``tau_load``, the links' rigid-body torque, which
  depends on the parameters being estimated. It is taken from the previous pass
  (a fixed-point iteration)::

      tau_load^(0) = Y_rb(q, qd, qdd) theta_rb^prior                       (the nominal model)
      tau_load^(i) = Y_rb(q, qd, qdd) theta_rb^(i-1),   theta^(i) = argmin || W(tau_load^(i)) theta - tau ||_w

  with ``theta_rb^(i-1)`` the standard parameters nearest the prior whose base parameters
  the previous pass found. The map contracts by about mu (~0.06), so
  :data:`LOAD_PASSES` passes leave changes far below the noise. The decimated
  ``tau_load`` is smooth (it is computed from low-passed kinematics) and is carried to
  the full rate by a cubic spline before multiplying the sign.
* **Shape constants** by variable projection: per joint a 1-D search of log x_s (and
  log delta for presliding joints) on a fine grid then a bounded refinement, every linear
  parameter re-solved in closed form for each trial (the normal equations are updated
  for the one joint's columns that change), coordinate-wise until no constant moves by
  more than 2 % (x_s and delta trade at reversals). The residual over x_s often has two
  valleys whose order depends on delta, so a presliding joint is searched from each of
  the :data:`SHAPE_STARTS` lowest valleys of its x_s profile, each refined with delta,
  and keeps the lowest (:class:`_JointShapes`). The searches filter the trial
  columns at a reduced rate (friction_columns.ColumnCache ``fast``); the columns the
  parameters are fitted with use the exact filter. A recording longer than 60 s is
  searched on its first 60 s.
* **Standstill rule**: a joint at rest (|qd| below ``standstill_velocity_rad_s`` after the
  low-pass) holds a *statically indeterminate* friction torque — anything up to the
  breakaway level, set by how the servo left it, not by the velocity — so its rows get
  weight 0 (the joint's other rows and the other joints at that instant are kept).
* **Model selection** (:func:`select_terms`): every family (P2 plus each subset of load,
  poly, presliding) is fitted with the linear (weighted) estimator on K-1 of K
  contiguous time blocks of the training data and scored on the block left out (blocked
  cross-validation, moving rows only). Per joint the *simplest* family whose held-out
  RMS error is within ``tolerance`` (1 %) of the joint's best is chosen: a term stays only
  if it lowers the held-out error by more than that. Each family gets its own
  Stribeck velocities; the presliding distances come from the richest presliding family
  and the load torque from the richest other one. These constants were found on all the
  training data, which the held-out blocks therefore saw: a second-order leak of one or
  two constants per joint.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import scipy.linalg
import scipy.optimize

from ..dynamics.friction import FRICTION_TERMS, check_presliding_distances, terms_name
from .friction_columns import (
    ColumnCache,
    FrictionDesign,
    design_columns,
    dissipativity_rows,
    friction_torque_preprocessed,
    joint_columns,
    standstill_mask,
)
from .preprocessing import PreprocessedData

__all__ = [
    "CANDIDATE_TERMS",
    "LOAD_PASSES",
    "FrictionDesign",
    "FrictionFit",
    "design_columns",
    "dissipativity_rows",
    "fit_friction",
    "friction_torque_preprocessed",
    "joint_columns",
    "leading_part",
    "select_terms",
    "standstill_mask",
]

#: Passes of the load-torque fixed-point iteration (contraction ~ mu: 3 passes leave ~mu^3 of the first change).
LOAD_PASSES = 3
#: Every family the automatic selection compares: P2 plus each subset of the optional terms.
CANDIDATE_TERMS: tuple[tuple[str, ...], ...] = tuple(
    combo for r in range(len(FRICTION_TERMS) + 1) for combo in itertools.combinations(FRICTION_TERMS, r))


# ------------------------------------------------------------------------------ variable projection
class _Projection:
    """Weighted, column-scaled normal equations of [A_rb, F] in which some of one joint's friction columns can
    be replaced cheaply (every friction column is zero outside its joint's rows)."""

    def __init__(self, a_rb: np.ndarray, fr: np.ndarray, y: np.ndarray, row_weights: np.ndarray, n: int,
                 design: FrictionDesign) -> None:
        self.n = n
        self.sw = np.sqrt(row_weights)
        a = np.hstack([a_rb, fr]) * self.sw[:, None]
        self.yw = y * self.sw
        scale = np.linalg.norm(a, axis=0)
        scale[scale == 0] = 1.0
        self.a = a / scale
        self.scale = scale
        self.gram = self.a.T @ self.a
        self.rhs = self.a.T @ self.yw
        self.yy = float(self.yw @ self.yw)
        self.offset = a_rb.shape[1]
        self.design = design

    def _block(self, j: int, local: list[int], cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        g = cols * self.sw[j::self.n][:, None]
        norms = np.linalg.norm(g, axis=0)
        norms[norms == 0] = 1.0
        return g / norms, self.offset + self.design.column_indices(j)[local], norms

    def solve(self, j: int, local: list[int], cols: np.ndarray) -> tuple[float, np.ndarray]:
        """(weighted residual sum of squares, parameters) with joint j's columns ``local`` replaced by ``cols``."""
        g, c, norms = self._block(j, local, cols)
        gram, rhs = self.gram.copy(), self.rhs.copy()
        cross = self.a[j::self.n].T @ g
        gram[:, c] = cross
        gram[c, :] = cross.T
        gram[np.ix_(c, c)] = g.T @ g
        rhs[c] = g.T @ self.yw[j::self.n]
        try:
            sol = scipy.linalg.solve(gram, rhs, assume_a="pos")
        except (np.linalg.LinAlgError, ValueError):
            return np.inf, np.full(rhs.shape, np.nan)
        scale = self.scale.copy()
        scale[c] = norms
        return self.yy - float(rhs @ sol), sol / scale

    def rss(self, j: int, local: list[int], cols: np.ndarray) -> float:
        """Weighted residual sum of squares with joint j's columns ``local`` replaced by ``cols`` (N, k)."""
        return self.solve(j, local, cols)[0]

    def commit(self, j: int, local: list[int], cols: np.ndarray) -> None:
        g, c, norms = self._block(j, local, cols)
        self.scale[c] = norms
        rows = np.arange(j, self.a.shape[0], self.n)
        self.a[:, c] = 0.0
        self.a[np.ix_(rows, c)] = g
        cross = self.a.T @ self.a[:, c]
        self.gram[:, c] = cross
        self.gram[c, :] = cross.T
        self.rhs[c] = self.a[:, c].T @ self.yw


#: Points of the log grid the shape constants are searched on before refinement. The residual over
#: the Stribeck velocity can have a narrow global valley beside a broad local one (a large x_s whose
#: Stribeck curve is nearly a parabola over the speeds seen), so the grid is fine (ratio ~1.25).
SHAPE_GRID = 25


def _grid(f: Callable[[float], float], lo: float, hi: float, grid: int) -> tuple[np.ndarray, np.ndarray]:
    """(log-spaced points of [lo, hi] in log, f at each)."""
    logs = np.linspace(np.log(lo), np.log(hi), grid)
    return logs, np.array([f(float(np.exp(v))) for v in logs])


def _refine(f: Callable[[float], float], logs: np.ndarray, values: np.ndarray, k: int) -> float:
    """argmin of f between the grid neighbours of point k (bounded, in log), or point k itself."""
    a, b = logs[max(k - 1, 0)], logs[min(k + 1, logs.size - 1)]
    res = scipy.optimize.minimize_scalar(lambda v: f(float(np.exp(v))), bounds=(a, b), method="bounded",
                                         options={"xatol": 2e-2, "maxiter": 10})
    return float(np.exp(res.x)) if res.fun <= values[k] else float(np.exp(logs[k]))


def _search(f: Callable[[float], float], lo: float, hi: float, grid: int = SHAPE_GRID) -> float:
    """argmin of f over log-spaced [lo, hi]: grid then a bounded refinement around the best point."""
    logs, values = _grid(f, lo, hi, grid)
    return _refine(f, logs, values, int(np.argmin(values)))


#: Valleys of a joint's Stribeck-velocity profile each refined with its presliding distance (the
#: best ones, at most this many): the two constants trade at reversals, so the valley that is lowest
#: at the starting distance need not be the lowest once the distance follows it.
SHAPE_STARTS = 3


def local_minima(values: np.ndarray) -> list[int]:
    """Indices of the local minima of a grid profile, end points included, in grid order."""
    padded = np.concatenate([[np.inf], np.asarray(values, float), [np.inf]])
    return [k for k in range(padded.size - 2) if padded[k + 1] <= padded[k] and padded[k + 1] <= padded[k + 2]]


def _valleys(values: np.ndarray, keep: int | None = None) -> list[int]:
    """The lowest ``keep`` (default ``SHAPE_STARTS``) local minima of a grid profile, lowest first."""
    return sorted(local_minima(values), key=lambda k: values[k])[:SHAPE_STARTS if keep is None else keep]


def _shape_columns(design: FrictionDesign, j: int, *, delta: bool) -> list[int]:
    """Local indices of joint j's columns that change with x_s (the static one) or with delta (the signs)."""
    params = design.joint_parameters(j)
    if not delta:
        return [0]
    return [k for k, p in enumerate(params) if p in ("static_nm", "coulomb_nm", "load_coefficient")]


def _local_search(f: Callable[[float], float], value: float, lo: float, hi: float) -> float:
    """argmin of f within a factor 2 of ``value`` (clipped to [lo, hi]), bounded, in log."""
    a, b = np.log(max(value / 2, lo)), np.log(min(value * 2, hi))
    current = f(value)
    res = scipy.optimize.minimize_scalar(lambda v: f(float(np.exp(v))), bounds=(a, b), method="bounded",
                                         options={"xatol": 1e-2, "maxiter": 12})
    return float(np.exp(res.x)) if res.fun < current else value


class _JointShapes:
    """The shape constants of one joint searched by variable projection on ``proj`` (which it updates)."""

    def __init__(self, proj: _Projection, cache: ColumnCache, load: np.ndarray | None, j: int, *,
                 stribeck: tuple[float, float] | None, presliding: tuple[float, float] | None) -> None:
        self.proj, self.cache, self.load, self.j = proj, cache, load, j
        self._memo: dict[tuple, np.ndarray] = {}
        self.searches: list[tuple[str, tuple[float, float], list[int]]] = []
        if stribeck is not None:
            self.searches.append(("stribeck_velocity_rad_s", stribeck, [0]))
        if presliding is not None and proj.design.presliding[j]:
            self.searches.append(("presliding_distance_rad", presliding, _shape_columns(proj.design, j, delta=True)))

    def columns(self, name: str, value: float, local: list[int]) -> np.ndarray:
        """Joint j's columns ``local`` with ``name`` = value (the searches revisit points: memoised)."""
        design = self.proj.design.with_shape(self.j, **{name: value})
        key = (tuple(local), float(design.stribeck_velocity_rad_s[self.j]),
               float(design.presliding_distance_rad[self.j]))
        if key not in self._memo:
            params = [self.proj.design.joint_parameters(self.j)[k] for k in local]
            self._memo[key] = self.cache.design_joint(design, self.j, self.load, params)
        return self._memo[key]

    def rss_of(self, name: str, local: list[int]) -> Callable[[float], float]:
        return lambda value: self.proj.rss(self.j, local, self.columns(name, value, local))

    def set(self, name: str, value: float, local: list[int]) -> float:
        """Commit ``name`` = value; the log-distance it moved."""
        old = float(getattr(self.proj.design, name)[self.j])
        self.proj.commit(self.j, local, self.columns(name, value, local))
        self.proj.design = self.proj.design.with_shape(self.j, **{name: value})
        return abs(np.log(value / old))

    def sweep(self, *, global_search: bool, skip: str | None = None) -> float:
        """One coordinate-wise pass (grid searches or local ones); the largest log-distance moved."""
        moved = 0.0
        for name, bounds, local in self.searches:
            if name == skip:
                continue
            f = self.rss_of(name, local)
            value = float(getattr(self.proj.design, name)[self.j])
            best = _search(f, *bounds) if global_search else _local_search(f, value, *bounds)
            moved = max(moved, self.set(name, best, local))
        return moved

    def rss(self) -> float:
        name, _, local = self.searches[0]
        return self.rss_of(name, local)(float(getattr(self.proj.design, name)[self.j]))

    def multistart(self, sweeps: int, *, global_others: bool) -> float:
        """Each valley of the Stribeck profile refined with the other constants (searched on their grid first
        when ``global_others``); the lowest one kept. The largest log-distance a constant moved."""
        name, bounds, local = self.searches[0]
        f = self.rss_of(name, local)
        logs, values = _grid(f, *bounds, SHAPE_GRID)
        start = self.proj.design
        found = []
        for k in _valleys(values):
            self.restore(start)
            self.set(name, _refine(f, logs, values, k), local)
            self.sweep(global_search=global_others, skip=name)
            for _ in range(sweeps - 1):
                if self.sweep(global_search=False) < 0.02:
                    break
            found.append((self.rss(), self.proj.design))
        self.restore(min(found, key=lambda item: item[0])[1])
        return max(abs(np.log(getattr(self.proj.design, n)[self.j] / getattr(start, n)[self.j]))
                   for n, _, _ in self.searches)

    def restore(self, design: FrictionDesign) -> None:
        """Make ``design`` the current one, its columns of this joint committed."""
        self.proj.design = design
        every = sorted({k for _, _, local in self.searches for k in local})
        params = [design.joint_parameters(self.j)[k] for k in every]
        self.proj.commit(self.j, every, self.cache.design_joint(design, self.j, self.load, params))


def _search_shapes(proj: _Projection, cache: ColumnCache, load: np.ndarray | None, *, stribeck: bool,
                   stribeck_range: tuple[float, float], presliding_range: tuple[float, float] | None,
                   sweeps: int = 4, global_first: bool = True) -> FrictionDesign:
    """Per joint, Stribeck velocity and presliding distance by variable projection, coordinate-wise: in
    the first sweep a global grid search of each, then local refinements until no constant moves by more
    than 2 % (the two trade with each other at reversals, so one pass does not settle them). A joint with
    both is searched from each valley of its Stribeck profile in the first two sweeps
    (``_JointShapes.multistart``; the second after the other joints have moved)."""
    for sweep in range(sweeps):
        moved = 0.0
        for j in range(proj.design.n_joints):
            shapes = _JointShapes(proj, cache, load, j, stribeck=stribeck_range if stribeck else None,
                                  presliding=presliding_range)
            if not shapes.searches:
                continue
            if sweep < 2 and global_first and len(shapes.searches) == 2:
                moved = max(moved, shapes.multistart(sweeps, global_others=sweep == 0))
            else:
                moved = max(moved, shapes.sweep(global_search=sweep == 0 and global_first))
        if (sweep > 0 or not global_first) and moved < 0.02:
            break
    return proj.design


# ------------------------------------------------------------------------------------ linear helpers
def _solve(a: np.ndarray, y: np.ndarray, row_weights: np.ndarray) -> np.ndarray:
    """Weighted least squares (column-scaled, minimum-norm if rank deficient)."""
    sw = np.sqrt(row_weights)
    aw = a * sw[:, None]
    scale = np.linalg.norm(aw, axis=0)
    scale[scale == 0] = 1.0
    return np.linalg.lstsq(aw / scale, y * sw, rcond=None)[0] / scale


def _joint_rms(residual: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    r = (residual * mask).reshape(-1, n)
    count = np.maximum(mask.reshape(-1, n).sum(axis=0), 1.0)
    return np.sqrt((r**2).sum(axis=0) / count)


def _family_cost(terms: tuple[str, ...]) -> int:
    return sum(max(len(FRICTION_TERMS[t]), 1) for t in terms)


def select_terms(a_rb: np.ndarray, y: np.ndarray, row_weights: np.ndarray, n: int,
                 columns_by_family: dict[tuple[str, ...], np.ndarray], *, blocks: int = 5,
                 tolerance: float = 0.01) -> tuple[list[tuple[str, ...]], dict, dict]:
    """Per joint, the simplest family whose blocked cross-validated RMS error is within ``tolerance`` of the best.

    ``columns_by_family``: family (optional terms) -> its friction columns (N*n, k). Rows with weight 0
    are neither fitted nor scored. Returns the chosen family per joint, a JSON-ready report (held-out
    RMS per family, the chosen ones, per joint the families within the tolerance: the ones the data
    cannot tell apart) and each family's friction parameters fitted on all the data.
    """
    if blocks < 2:
        raise ValueError(f"model selection needs at least 2 time blocks, got {blocks}")
    n_samples = y.shape[0] // n
    edges = np.linspace(0, n_samples, blocks + 1).astype(int)
    mask = (row_weights > 0).astype(float)
    y_power = np.array([np.mean(y.reshape(-1, n)[:, j][mask.reshape(-1, n)[:, j] > 0] ** 2)
                        if mask.reshape(-1, n)[:, j].any() else 0.0 for j in range(n)])
    mse: dict[tuple[str, ...], np.ndarray] = {}
    full_fits: dict[tuple[str, ...], np.ndarray] = {}
    for family, fr in columns_by_family.items():
        a = np.hstack([a_rb, fr])
        sw = np.sqrt(row_weights)
        aw = a * sw[:, None]
        yw = y * sw
        scale = np.linalg.norm(aw, axis=0)
        scale[scale == 0] = 1.0
        aw /= scale
        grams, rhss = [], []
        for b in range(blocks):
            rows = slice(edges[b] * n, edges[b + 1] * n)
            grams.append(aw[rows].T @ aw[rows])
            rhss.append(aw[rows].T @ yw[rows])
        gram, rhs = sum(grams), sum(rhss)
        full_fits[family] = (np.linalg.lstsq(gram, rhs, rcond=None)[0] / scale)[a_rb.shape[1]:]
        sse = np.zeros(n)
        for b in range(blocks):
            rows = slice(edges[b] * n, edges[b + 1] * n)
            g = gram - grams[b]
            try:
                theta = scipy.linalg.solve(g, rhs - rhss[b], assume_a="pos")
            except (np.linalg.LinAlgError, ValueError):
                theta = np.linalg.lstsq(g, rhs - rhss[b], rcond=None)[0]
            residual = (y[rows] - (a[rows] / scale) @ theta) * mask[rows]
            sse += (residual.reshape(-1, n) ** 2).sum(axis=0)
        mse[family] = sse / np.maximum(mask.reshape(-1, n).sum(axis=0), 1.0)
    order = sorted(columns_by_family, key=lambda f: (_family_cost(f), CANDIDATE_TERMS.index(f)
                                                     if f in CANDIDATE_TERMS else 0))
    chosen, acceptable = [], []
    for j in range(n):
        best = min(mse[f][j] for f in order)
        floor = 1e-9 * y_power[j]
        acceptable.append([f for f in order if mse[f][j] <= best * (1.0 + tolerance) ** 2 + floor])
        chosen.append(acceptable[-1][0])
    report = {
        "rule": (f"blocked cross-validation over {blocks} contiguous time blocks of the training data (moving "
                 f"samples); per joint the simplest family within {100 * tolerance:g} % of the lowest held-out "
                 "RMS error"),
        "held_out_rms_nm": {terms_name(f): np.sqrt(mse[f]).tolist() for f in order},
        "chosen": [terms_name(f) for f in chosen],
        "indistinguishable": [[terms_name(f) for f in fams] for fams in acceptable],
    }
    return chosen, report, full_fits


# ------------------------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class FrictionFit:
    """The friction part of an identification: design, its columns, the load torque and the selection report."""

    design: FrictionDesign
    columns: np.ndarray
    load_torque_nm: np.ndarray | None
    row_weights: np.ndarray
    selection: dict | None
    #: per joint, the friction parameters (name -> value) of the families the data cannot tell from the chosen one
    alternatives: tuple[tuple[dict, ...], ...] = ()


def _has_load(design: FrictionDesign) -> bool:
    return any("load" in t for t in design.terms)


def _subset(columns: np.ndarray, rich: FrictionDesign, family: FrictionDesign) -> np.ndarray:
    """The columns of ``family`` (a design with fewer optional terms) taken from the ``rich`` design's."""
    keep = []
    for j in range(rich.n_joints):
        rich_params = rich.joint_parameters(j)
        rich_idx = rich.column_indices(j)
        for p in family.joint_parameters(j):
            keep.append((family.column_indices(j)[family.joint_parameters(j).index(p)],
                         rich_idx[rich_params.index(p)]))
    order = np.array([r for _, r in sorted(keep)])
    return columns[:, order]


def leading_part(data: PreprocessedData, n_rows: int) -> tuple[PreprocessedData, np.ndarray]:
    """The first ``n_rows`` preprocessed samples as preprocessed data of their own (segments in order, the
    last one cut with its filter margin), and their row indices."""
    if n_rows >= data.n_samples:
        return data, np.arange(data.n_samples)
    rows = np.arange(n_rows)
    last = int(data.segment_id[n_rows - 1])
    changes = {name: getattr(data, name)[:n_rows] for name in
               ("time_s", "q_rad", "qd_rad_s", "qdd_rad_s2", "torque", "segment_id")}
    changes["extra"] = {k: v[:n_rows] for k, v in data.extra.items()}
    if data.filter_sos is not None:
        kept_in_last = int(np.count_nonzero(data.segment_id[:n_rows] == last))
        length = 2 * data.trim_samples + (kept_in_last - 1) * data.decimation + 1
        for name in ("full_rate_qd_rad_s", "full_rate_time_s"):
            full = getattr(data, name)
            changes[name] = tuple(full[:last]) + (full[last][:length],)
    return replace(data, n_segments=last + 1, **changes), rows


def fit_friction(data: PreprocessedData, a_rb: np.ndarray, y: np.ndarray, *, n_joints: int,
                 terms: str | tuple[tuple[str, ...], ...], load_torque_of: Callable[[np.ndarray], np.ndarray],
                 initial_load_torque_nm: np.ndarray, stribeck_velocity_rad_s: np.ndarray,
                 coulomb_velocity_rad_s: np.ndarray, presliding_distance_rad: float | np.ndarray | None = None,
                 fit_stribeck: bool = True, stribeck_range_rad_s: tuple[float, float] = (0.005, 1.0),
                 presliding_range_rad: tuple[float, float] = (2e-4, 1e-2), standstill_velocity_rad_s: float = 0.02,
                 blocks: int = 5, tolerance: float = 0.01, stribeck_grid: int = SHAPE_GRID,
                 search_seconds: float = 60.0) -> FrictionFit:
    """Choose (``terms="auto"``) or take the friction terms per joint, find their shape constants and the load
    torque, and return the design with its columns (module doc). ``load_torque_of(theta)`` maps a linear
    solution over [a_rb, friction columns] to the links' rigid-body torque (N, n).

    Automatic choice: the load torque from :data:`LOAD_PASSES` passes of the richest model; every family's
    Stribeck velocities on a ``stribeck_grid``-point log grid then refined (each family its own), the presliding
    distances once on the richest presliding model; blocked cross-validation (:func:`select_terms`); then
    the chosen design's shape constants searched again (converged) and the load passes repeated on it.

    A recording longer than ``search_seconds`` (after preprocessing) is searched and chosen on its first
    ``search_seconds``; the chosen design's columns and load passes then use all of it.
    """
    n_keep = int(np.ceil(search_seconds * data.sample_rate_hz))
    if n_keep >= data.n_samples:
        return _fit_friction(data, a_rb, y, n_joints, terms, load_torque_of, initial_load_torque_nm,
                             stribeck_velocity_rad_s, coulomb_velocity_rad_s, presliding_distance_rad, fit_stribeck,
                             stribeck_range_rad_s, presliding_range_rad, standstill_velocity_rad_s, blocks, tolerance,
                             stribeck_grid)
    part, rows = leading_part(data, n_keep)
    stacked = (rows[:, None] * n_joints + np.arange(n_joints)).ravel()
    chosen = _fit_friction(part, a_rb[stacked], y[stacked], n_joints, terms,
                           lambda theta: load_torque_of(theta)[rows], initial_load_torque_nm[rows],
                           stribeck_velocity_rad_s, coulomb_velocity_rad_s, presliding_distance_rad, fit_stribeck,
                           stribeck_range_rad_s, presliding_range_rad, standstill_velocity_rad_s, blocks, tolerance,
                           stribeck_grid)
    design, exact = chosen.design, ColumnCache(data)
    mask = standstill_mask(data, standstill_velocity_rad_s)
    load = initial_load_torque_nm
    fr = design_columns(exact, design, load)
    a = np.hstack([a_rb, fr])
    sigma = _joint_rms(y - a @ _solve(a, y, mask), mask, n_joints)
    weights = mask * np.tile(1.0 / np.maximum(sigma, 1e-9) ** 2, data.n_samples)
    for _ in range(LOAD_PASSES if _has_load(design) else 0):
        load = load_torque_of(_solve(np.hstack([a_rb, fr]), y, weights))
        fr = design_columns(exact, design, load)
    selection = None if chosen.selection is None else {**chosen.selection, "search_seconds": float(search_seconds)}
    return FrictionFit(design, fr, load if _has_load(design) else None, mask, selection, chosen.alternatives)


def _fit_friction(data, a_rb, y, n_joints, terms, load_torque_of, initial_load_torque_nm, stribeck_velocity_rad_s,
                  coulomb_velocity_rad_s, presliding_distance_rad, fit_stribeck, stribeck_range_rad_s,
                  presliding_range_rad, standstill_velocity_rad_s, blocks, tolerance, stribeck_grid) -> FrictionFit:
    n = n_joints
    cache = ColumnCache(data, fast=True)  # searches and selection: where the minimum is
    exact = ColumnCache(data)  # the columns the parameters are fitted with
    mask = standstill_mask(data, standstill_velocity_rad_s)
    if mask.reshape(-1, n).sum(axis=0).min() < 1:
        raise ValueError("a joint never moves faster than the standstill velocity "
                         f"({standstill_velocity_rad_s:g} rad/s): excite every joint, or lower it")
    start_delta = check_presliding_distances(1e-3 if presliding_distance_rad is None else presliding_distance_rad, n)
    search_delta = None if presliding_distance_rad is not None else presliding_range_rad
    base = FrictionDesign(tuple(() for _ in range(n)), np.asarray(stribeck_velocity_rad_s, float).copy(),
                          np.asarray(coulomb_velocity_rad_s, float).copy(), start_delta)
    p2_columns = np.hstack([a_rb, design_columns(cache, base)])
    sigma = _joint_rms(y - p2_columns @ _solve(p2_columns, y, mask), mask, n)
    weights = mask * np.tile(1.0 / np.maximum(sigma, 1e-9) ** 2, data.n_samples)

    def load_passes(design: FrictionDesign, load: np.ndarray, columns: ColumnCache = cache
                    ) -> tuple[np.ndarray, np.ndarray]:
        fr = design_columns(columns, design, load)
        for _ in range(LOAD_PASSES if _has_load(design) else 0):
            load = load_torque_of(_solve(np.hstack([a_rb, fr]), y, weights))
            fr = design_columns(columns, design, load)
        return fr, load

    def finish(design: FrictionDesign, load: np.ndarray, selection: dict | None, alternatives=()) -> FrictionFit:
        fr = design_columns(cache, design, load)
        proj = _Projection(a_rb, fr, y, weights, n, design)
        # after a selection the shape constants are close already: local refinement only
        design = _search_shapes(proj, cache, load, stribeck=fit_stribeck, stribeck_range=stribeck_range_rad_s,
                                presliding_range=search_delta, global_first=selection is None)
        fr, load = load_passes(design, load, exact)
        return FrictionFit(design, fr, load if _has_load(design) else None, mask, selection, alternatives)

    if terms != "auto":
        design = base.with_terms(terms)
        _, load = load_passes(design, initial_load_torque_nm)
        return finish(design, load, None)

    rich_tanh = base.with_terms([tuple(t for t in FRICTION_TERMS if t != "presliding")] * n)
    fr_tanh, load = load_passes(rich_tanh, initial_load_torque_nm)
    grid = np.geomspace(*stribeck_range_rad_s, stribeck_grid) if fit_stribeck else None
    # Presliding distances: on the richest presliding model, searched together with its Stribeck velocities.
    rich_dahl = base.with_terms([tuple(FRICTION_TERMS)] * n)
    fr_dahl = design_columns(cache, rich_dahl, load)
    if fit_stribeck or search_delta is not None:
        proj = _Projection(a_rb, fr_dahl, y, weights, n, rich_dahl)
        rich_dahl = _search_shapes(proj, cache, load, stribeck=fit_stribeck, stribeck_range=stribeck_range_rad_s,
                                   presliding_range=search_delta)
        fr_dahl = design_columns(cache, rich_dahl, load)

    columns, stribeck_of = {}, {}
    for family in CANDIDATE_TERMS:
        presliding = "presliding" in family
        rich, fr_rich = (rich_dahl, fr_dahl) if presliding else (rich_tanh, fr_tanh)
        design = rich.with_terms([family] * n)
        fr = _subset(fr_rich, rich, design)
        x_s = design.stribeck_velocity_rad_s.copy()
        if grid is not None:
            proj = _Projection(a_rb, fr, y, weights, n, design)
            for j in range(n):
                def static(value: float, j: int = j, design: FrictionDesign = design) -> np.ndarray:
                    return cache.design_joint(design.with_shape(j, stribeck_velocity_rad_s=value), j, load,
                                              ["static_nm"])
                values = [proj.rss(j, [0], static(g)) for g in grid]
                k = int(np.argmin(values))
                lo, hi = np.log(grid[max(k - 1, 0)]), np.log(grid[min(k + 1, grid.size - 1)])
                res = scipy.optimize.minimize_scalar(lambda v: proj.rss(j, [0], static(float(np.exp(v)))),
                                                     bounds=(lo, hi), method="bounded",
                                                     options={"xatol": 2e-2, "maxiter": 8})
                x_s[j] = float(np.exp(res.x)) if res.fun <= values[k] else float(grid[k])
                best = static(x_s[j])
                proj.commit(j, [0], best)
                fr[j::n, design.column_indices(j)[0]] = best[:, 0]
        columns[family], stribeck_of[family] = fr, x_s
    chosen, report, fits = select_terms(a_rb, y, weights, n, columns, blocks=blocks, tolerance=tolerance)
    design = replace(base.with_terms(chosen),
                     stribeck_velocity_rad_s=np.array([stribeck_of[chosen[j]][j] for j in range(n)]),
                     presliding_distance_rad=rich_dahl.presliding_distance_rad.copy())
    alternatives = []
    for j, names in enumerate(report["indistinguishable"]):
        per_joint = []
        for family in CANDIDATE_TERMS:
            if terms_name(family) in names[1:]:
                fam = base.with_terms([family] * n)
                values = dict(zip(fam.joint_parameters(j), fits[family][fam.column_indices(j)]))
                values["stribeck_velocity_rad_s"] = float(stribeck_of[family][j])
                per_joint.append(values)
        alternatives.append(tuple(per_joint))
    return finish(design, load, report, tuple(alternatives))
