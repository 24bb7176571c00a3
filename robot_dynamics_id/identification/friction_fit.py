"""Friction in the identification: regressor columns, shape constants, the load iteration, model selection.

Per joint the friction is dynamics/friction.py's model: the P2 eq. (11) terms
(static/Stribeck, Coulomb, viscous, offset) and, when selected, the terms real UR
joints add — load-dependent Coulomb ``mu |tau_load| sgn``, the odd polynomial viscous
law ``k_2 qd|qd| + k_3 qd^3`` and Dahl presliding (the sign functions follow the state
z of ``dz/dq = (sgn(dq) - z) / delta``). What this module does with it:

* **Columns** (:func:`joint_columns`, :func:`design_columns`): for fixed shape
  constants (Stribeck velocity x_s, Coulomb smoothing v_k, presliding distance delta)
  and a given load torque the model is linear in its parameters. The columns are
  evaluated on the full-rate velocity (and the presliding state on the full-rate
  travel ``qd dt``), then low-passed, trimmed and decimated exactly like the measured
  torque (Gautier's parallel filtering; identification/preprocessing.py).
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
  log delta for presliding joints) on a grid then a bounded refinement, every linear
  parameter re-solved in closed form for each trial (the normal equations are updated
  for the one joint's columns that change).
* **Standstill rule**: a joint at rest (|qd| below ``standstill_velocity_rad_s`` after the
  low-pass) holds a *statically indeterminate* friction torque — anything up to the
  breakaway level, set by how the servo left it, not by the velocity — so its rows get
  weight 0 (the joint's other rows and the other joints at that instant are kept).
* **Model selection** (:func:`select_terms`): every family (P2 plus each subset of load,
  poly, presliding) is fitted with the linear (weighted) estimator on K-1 of K
  contiguous time blocks of the training data and scored on the block left out (blocked
  cross-validation, moving rows only). Per joint the *simplest* family whose held-out
  mean squared error is within ``tolerance`` (1 %) of the joint's best is chosen: a term
  stays only if it lowers the held-out error by more than that. The shape constants and
  the load torque are found once on all training data (each family reuses those of its
  sign type), which the held-out blocks therefore saw: a second-order leak of two
  constants per joint.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import scipy.interpolate
import scipy.linalg
import scipy.optimize
import scipy.signal

from ..dynamics.friction import (
    EXTENDED_FRICTION_NAMES,
    FRICTION_TERMS,
    LINEAR_FRICTION_NAMES,
    SIGN_SMOOTHING_RAD_S,
    FrictionParameters,
    dahl_state,
    terms_name,
)
from .preprocessing import PreprocessedData

__all__ = [
    "LOAD_PASSES",
    "FrictionDesign",
    "FrictionFit",
    "design_columns",
    "dissipativity_rows",
    "fit_friction",
    "friction_torque_preprocessed",
    "joint_columns",
    "select_terms",
    "standstill_mask",
]

#: Passes of the load-torque fixed-point iteration (contraction ~ mu: 3 passes leave ~mu^3 of the first change).
LOAD_PASSES = 3
#: Every family the automatic selection compares: P2 plus each subset of the optional terms.
CANDIDATE_TERMS: tuple[tuple[str, ...], ...] = tuple(
    combo for r in range(len(FRICTION_TERMS) + 1) for combo in itertools.combinations(FRICTION_TERMS, r))
_SPLINE_MIN_SAMPLES = 4


@dataclass(frozen=True)
class FrictionDesign:
    """Which friction terms each joint has, and the shape constants the columns are evaluated with.

    Column order of :func:`design_columns`: the P2 columns of every joint (4n, joint-major,
    :data:`LINEAR_FRICTION_NAMES`), then the optional parameters (joint-major, in
    :data:`EXTENDED_FRICTION_NAMES` order) of the joints that have them.
    """

    terms: tuple[tuple[str, ...], ...]
    stribeck_velocity_rad_s: np.ndarray
    coulomb_velocity_rad_s: np.ndarray
    presliding_distance_rad: np.ndarray

    @property
    def n_joints(self) -> int:
        return len(self.terms)

    @property
    def presliding(self) -> np.ndarray:
        return np.array(["presliding" in t for t in self.terms])

    def joint_parameters(self, j: int) -> list[str]:
        """The linear parameters of joint j, P2 first."""
        extra = [p for p in EXTENDED_FRICTION_NAMES[4:]
                 if any(p in FRICTION_TERMS[t] for t in self.terms[j])]
        return list(LINEAR_FRICTION_NAMES) + extra

    def extras(self) -> list[tuple[int, str]]:
        """(joint, parameter) of every optional column, in column order."""
        return [(j, p) for j in range(self.n_joints) for p in self.joint_parameters(j)[4:]]

    @property
    def n_columns(self) -> int:
        return 4 * self.n_joints + len(self.extras())

    def column_indices(self, j: int) -> np.ndarray:
        """Indices of joint j's columns (in :meth:`joint_parameters` order) among the design's columns."""
        extra_at = [4 * self.n_joints + k for k, (jj, _) in enumerate(self.extras()) if jj == j]
        return np.array(list(range(4 * j, 4 * j + 4)) + extra_at, int)

    def names(self) -> list[str]:
        p2 = [f"joint{j + 1}.{p}" for j in range(self.n_joints) for p in LINEAR_FRICTION_NAMES]
        return p2 + [f"joint{j + 1}.{p}" for j, p in self.extras()]

    def family(self, j: int) -> str:
        return terms_name(self.terms[j])

    def with_terms(self, terms) -> FrictionDesign:
        return replace(self, terms=tuple(tuple(t) for t in terms))

    def with_shape(self, j: int, *, stribeck_velocity_rad_s: float | None = None,
                   presliding_distance_rad: float | None = None) -> FrictionDesign:
        x_s, delta = self.stribeck_velocity_rad_s.copy(), self.presliding_distance_rad.copy()
        if stribeck_velocity_rad_s is not None:
            x_s[j] = stribeck_velocity_rad_s
        if presliding_distance_rad is not None:
            delta[j] = presliding_distance_rad
        return replace(self, stribeck_velocity_rad_s=x_s, presliding_distance_rad=delta)

    def parameters(self, values: np.ndarray) -> FrictionParameters:
        """The :class:`FrictionParameters` of column values (this design's order); absent terms are zero."""
        values = np.asarray(values, float)
        n = self.n_joints
        ext = np.zeros((n, 7))
        ext[:, :4] = values[: 4 * n].reshape(n, 4)
        for k, (j, p) in enumerate(self.extras()):
            ext[j, EXTENDED_FRICTION_NAMES.index(p)] = values[4 * n + k]
        delta = np.where(self.presliding, self.presliding_distance_rad, 0.0)
        return FrictionParameters.from_extended_vector(
            ext.ravel(), stribeck_velocity_rad_s=self.stribeck_velocity_rad_s,
            coulomb_velocity_rad_s=self.coulomb_velocity_rad_s, presliding_distance_rad=delta,
            terms=[self.family(j) for j in range(n)])

    @classmethod
    def of(cls, friction: FrictionParameters) -> FrictionDesign:
        """The design of an existing friction model (its terms and shape constants)."""
        from ..dynamics.friction import parse_terms

        return cls(tuple(parse_terms(t) for t in friction.terms), friction.stribeck_velocity_rad_s.copy(),
                   friction.coulomb_velocity_rad_s.copy(), friction.presliding_distance_rad.copy())


# ------------------------------------------------------------------------------------------- columns
class ColumnCache:
    """The full-rate signals of one preprocessed data set and its parallel filter, for friction columns.

    Presliding states are cached per (joint, distance): the searches evaluate the same ones often.
    Exact data (no filter: ``data.filter_sos is None``) use the decimated velocity and the
    position increments instead.
    """

    def __init__(self, data: PreprocessedData) -> None:
        self.data = data
        self.exact = data.filter_sos is None
        if self.exact:
            rows = [np.flatnonzero(data.segment_id == s) for s in np.unique(data.segment_id)]
            self.qd = [data.qd_rad_s[r] for r in rows]
            self.dq = [np.diff(data.q_rad[r], axis=0, prepend=data.q_rad[r[:1]]) for r in rows]
        else:
            rows = [np.flatnonzero(data.segment_id == s) for s in range(len(data.full_rate_qd_rad_s))]
            period = 1.0 / (data.sample_rate_hz * data.decimation)
            self.qd = list(data.full_rate_qd_rad_s)
            self.dq = [qd * period for qd in self.qd]
        self.rows = rows
        self._dahl: dict[tuple[int, float], list[np.ndarray]] = {}
        self._static: dict[tuple[int, float, float, float], np.ndarray] = {}

    def dahl(self, j: int, delta: float) -> list[np.ndarray]:
        key = (j, float(delta))
        if key not in self._dahl:
            self._dahl[key] = [dahl_state(dq[:, j:j + 1], delta)[:, 0] for dq in self.dq]
        return self._dahl[key]

    def _load(self, k: int, j: int, load_torque_nm: np.ndarray) -> np.ndarray:
        values = load_torque_nm[self.rows[k], j:j + 1]
        if self.exact:
            return values[:, 0]
        return _to_full_rate(values, self.qd[k].shape[0], self.data.trim_samples, self.data.decimation)[:, 0]

    def filtered(self, parts: list[np.ndarray]) -> np.ndarray:
        """Per-segment full-rate values (M, k) -> low-passed, trimmed, decimated and stacked (N, k)."""
        if self.exact:
            return np.concatenate(parts, axis=0)
        d, out = self.data, []
        for values in parts:
            m = values.shape[0]
            f = scipy.signal.sosfiltfilt(d.filter_sos, values, axis=0, padlen=min(3 * d.trim_samples, m - 1))
            out.append(f[d.trim_samples: m - d.trim_samples: d.decimation])
        return np.concatenate(out, axis=0)

    def columns(self, j: int, params: list[str], *, stribeck_velocity_rad_s: float, coulomb_velocity_rad_s: float,
                presliding_distance_rad: float = 0.0, load_torque_nm: np.ndarray | None = None) -> np.ndarray:
        """Joint j's columns (N, len(params)) of the named linear parameters (:data:`EXTENDED_FRICTION_NAMES`)."""
        if "load_coefficient" in params and load_torque_nm is None:
            raise ValueError(f"joint {j + 1} has a load-dependent friction term: pass load_torque_nm")
        if params == ["static_nm"]:  # the searches ask for the same Stribeck columns again and again
            key = (j, float(stribeck_velocity_rad_s), float(coulomb_velocity_rad_s), float(presliding_distance_rad))
            if key not in self._static:
                self._static[key] = self._columns(j, params, stribeck_velocity_rad_s, coulomb_velocity_rad_s,
                                                  presliding_distance_rad, None)
            return self._static[key]
        return self._columns(j, params, stribeck_velocity_rad_s, coulomb_velocity_rad_s, presliding_distance_rad,
                             load_torque_nm)

    def _columns(self, j: int, params: list[str], stribeck_velocity_rad_s: float, coulomb_velocity_rad_s: float,
                 presliding_distance_rad: float, load_torque_nm: np.ndarray | None) -> np.ndarray:
        parts = []
        for k, (qd_all, _) in enumerate(zip(self.qd, self.dq)):
            qd = qd_all[:, j]
            if presliding_distance_rad > 0:
                static = coulomb = self.dahl(j, presliding_distance_rad)[k]
            else:
                static = np.tanh(qd / SIGN_SMOOTHING_RAD_S)
                coulomb = np.tanh(qd / coulomb_velocity_rad_s)
            values = {
                "static_nm": lambda: static / (1.0 + (qd / stribeck_velocity_rad_s) ** 2),
                "coulomb_nm": lambda: coulomb,
                "viscous_nm_s_per_rad": lambda: qd,
                "offset_nm": lambda: np.ones_like(qd),
                "load_coefficient": lambda: np.abs(self._load(k, j, load_torque_nm)) * coulomb,
                "viscous_quadratic_nm_s2_per_rad2": lambda: qd * np.abs(qd),
                "viscous_cubic_nm_s3_per_rad3": lambda: qd**3,
            }
            parts.append(np.column_stack([values[p]() for p in params]))
        return self.filtered(parts)

    def design_joint(self, design: FrictionDesign, j: int, load_torque_nm: np.ndarray | None,
                     params: list[str] | None = None) -> np.ndarray:
        """Joint j's columns of a design (all of them, or the named ones)."""
        return self.columns(j, design.joint_parameters(j) if params is None else params,
                            stribeck_velocity_rad_s=float(design.stribeck_velocity_rad_s[j]),
                            coulomb_velocity_rad_s=float(design.coulomb_velocity_rad_s[j]),
                            presliding_distance_rad=float(design.presliding_distance_rad[j])
                            if design.presliding[j] else 0.0, load_torque_nm=load_torque_nm)


def _to_full_rate(values: np.ndarray, length: int, trim: int, decimation: int) -> np.ndarray:
    """Decimated samples (at full-rate indices trim + k*decimation) to every full-rate index (cubic spline,
    end values held beyond the first and last sample)."""
    idx = trim + decimation * np.arange(values.shape[0])
    full = np.arange(length)
    if values.shape[0] >= _SPLINE_MIN_SAMPLES:
        spline = scipy.interpolate.CubicSpline(idx, values, axis=0, extrapolate=False)
        return spline(np.clip(full, idx[0], idx[-1]))
    return np.column_stack([np.interp(full, idx, values[:, k]) for k in range(values.shape[1])])


def joint_columns(data: PreprocessedData | ColumnCache, design: FrictionDesign, j: int,
                  load_torque_nm: np.ndarray | None = None) -> np.ndarray:
    """Joint j's friction columns (N, k), parallel-filtered like the torque, in :meth:`joint_parameters` order."""
    cache = data if isinstance(data, ColumnCache) else ColumnCache(data)
    return cache.design_joint(design, j, load_torque_nm)


def design_columns(data: PreprocessedData | ColumnCache, design: FrictionDesign,
                   load_torque_nm: np.ndarray | None = None) -> np.ndarray:
    """All friction columns of a design (N*n, :attr:`FrictionDesign.n_columns`), rows sample-major."""
    cache = data if isinstance(data, ColumnCache) else ColumnCache(data)
    n = design.n_joints
    n_samples = cache.data.n_samples
    out = np.zeros((n_samples, n, design.n_columns))
    for j in range(n):
        out[:, j, design.column_indices(j)] = cache.design_joint(design, j, load_torque_nm)
    return out.reshape(n_samples * n, design.n_columns)


def friction_torque_preprocessed(friction: FrictionParameters, data: PreprocessedData,
                                 load_torque_nm: np.ndarray | None = None) -> np.ndarray:
    """The friction torque (N, n) a model predicts for preprocessed samples, parallel-filtered like the torque."""
    design = FrictionDesign.of(friction)
    ext = friction.extended_vector().reshape(-1, 7)
    out = np.empty((data.n_samples, design.n_joints))
    for j in range(design.n_joints):
        cols = joint_columns(data, design, j, load_torque_nm)
        out[:, j] = cols @ ext[j, [EXTENDED_FRICTION_NAMES.index(p) for p in design.joint_parameters(j)]]
    return out


def standstill_mask(data: PreprocessedData, velocity_rad_s: float) -> np.ndarray:
    """Row weights (N*n,): 0 where the joint is at rest (|qd| < velocity_rad_s), else 1 (module doc)."""
    if velocity_rad_s < 0:
        raise ValueError(f"standstill velocity must be >= 0 rad/s, got {velocity_rad_s}")
    return (np.abs(data.qd_rad_s) >= velocity_rad_s).astype(float).ravel()


def dissipativity_rows(design: FrictionDesign, max_speed_rad_s: np.ndarray, *, points: int = 24
                       ) -> np.ndarray:
    """Rows G (m, n_columns) with ``G phi >= 0`` <=> the friction dissipates over the speeds seen.

    Per joint, the steady sliding curve (sgn = 1; the load term is >= 0 by mu >= 0, the offset is
    not friction) at 0 and at ``points - 1`` speeds spread geometrically up to the joint's largest
    speed: ``f_s / (1 + (v/x_s)^2) + f_k + k_v v + k_2 v^2 + k_3 v^3 >= 0``.
    """
    n = design.n_joints
    rows = []
    for j in range(n):
        v_max = max(float(max_speed_rad_s[j]), 1e-3)
        speeds = np.concatenate([[0.0], np.geomspace(1e-3, v_max, points - 1)])
        idx = design.column_indices(j)
        params = design.joint_parameters(j)
        for v in speeds:
            row = np.zeros(design.n_columns)
            values = {"static_nm": 1.0 / (1.0 + (v / design.stribeck_velocity_rad_s[j]) ** 2), "coulomb_nm": 1.0,
                      "viscous_nm_s_per_rad": v, "viscous_quadratic_nm_s2_per_rad2": v * v,
                      "viscous_cubic_nm_s3_per_rad3": v**3}
            for k, p in zip(idx, params):
                row[k] = values.get(p, 0.0)
            rows.append(row)
    return np.array(rows)


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
        self.gram = self.a.T @ self.a
        self.rhs = self.a.T @ self.yw
        self.yy = float(self.yw @ self.yw)
        self.offset = a_rb.shape[1]
        self.design = design

    def _block(self, j: int, local: list[int], cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        g = cols * self.sw[j::self.n][:, None]
        norms = np.linalg.norm(g, axis=0)
        norms[norms == 0] = 1.0
        return g / norms, self.offset + self.design.column_indices(j)[local]

    def rss(self, j: int, local: list[int], cols: np.ndarray) -> float:
        """Weighted residual sum of squares with joint j's columns ``local`` replaced by ``cols`` (N, k)."""
        g, c = self._block(j, local, cols)
        gram, rhs = self.gram.copy(), self.rhs.copy()
        cross = self.a[j::self.n].T @ g
        gram[:, c] = cross
        gram[c, :] = cross.T
        gram[np.ix_(c, c)] = g.T @ g
        rhs[c] = g.T @ self.yw[j::self.n]
        try:
            sol = scipy.linalg.solve(gram, rhs, assume_a="pos")
        except (np.linalg.LinAlgError, ValueError):
            return np.inf
        return self.yy - float(rhs @ sol)

    def commit(self, j: int, local: list[int], cols: np.ndarray) -> None:
        g, c = self._block(j, local, cols)
        rows = np.arange(j, self.a.shape[0], self.n)
        self.a[:, c] = 0.0
        self.a[np.ix_(rows, c)] = g
        cross = self.a.T @ self.a[:, c]
        self.gram[:, c] = cross
        self.gram[c, :] = cross.T
        self.rhs[c] = self.a[:, c].T @ self.yw


def _search(f: Callable[[float], float], lo: float, hi: float, grid: int = 9) -> float:
    """argmin of f over log-spaced [lo, hi]: grid then a bounded refinement around the best point."""
    logs = np.linspace(np.log(lo), np.log(hi), grid)
    values = [f(float(np.exp(v))) for v in logs]
    k = int(np.argmin(values))
    a, b = logs[max(k - 1, 0)], logs[min(k + 1, grid - 1)]
    res = scipy.optimize.minimize_scalar(lambda v: f(float(np.exp(v))), bounds=(a, b), method="bounded",
                                         options={"xatol": 2e-2, "maxiter": 10})
    return float(np.exp(res.x)) if res.fun <= values[k] else float(np.exp(logs[k]))


def _shape_columns(design: FrictionDesign, j: int, *, delta: bool) -> list[int]:
    """Local indices of joint j's columns that change with x_s (the static one) or with delta (the signs)."""
    params = design.joint_parameters(j)
    if not delta:
        return [0]
    return [k for k, p in enumerate(params) if p in ("static_nm", "coulomb_nm", "load_coefficient")]


def _search_shapes(proj: _Projection, cache: ColumnCache, load: np.ndarray | None, *, stribeck: bool,
                   stribeck_range: tuple[float, float], presliding_range: tuple[float, float] | None
                   ) -> FrictionDesign:
    """Per joint (one sweep): presliding distance, then Stribeck velocity, by variable projection."""
    for j in range(proj.design.n_joints):
        if presliding_range is not None and proj.design.presliding[j]:
            local = _shape_columns(proj.design, j, delta=True)
            params = [proj.design.joint_parameters(j)[k] for k in local]

            def columns_delta(value: float, j: int = j, params=params) -> np.ndarray:
                return cache.design_joint(proj.design.with_shape(j, presliding_distance_rad=value), j, load, params)
            best = _search(lambda v: proj.rss(j, local, columns_delta(v)), *presliding_range)
            proj.commit(j, local, columns_delta(best))
            proj.design = proj.design.with_shape(j, presliding_distance_rad=best)
        if stribeck:
            def columns_xs(value: float, j: int = j) -> np.ndarray:
                return cache.design_joint(proj.design.with_shape(j, stribeck_velocity_rad_s=value), j, load,
                                          ["static_nm"])
            best = _search(lambda v: proj.rss(j, [0], columns_xs(v)), *stribeck_range)
            proj.commit(j, [0], columns_xs(best))
            proj.design = proj.design.with_shape(j, stribeck_velocity_rad_s=best)
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
                 tolerance: float = 0.01) -> tuple[list[tuple[str, ...]], dict]:
    """Per joint, the simplest family whose blocked cross-validated MSE is within ``tolerance`` of the best.

    ``columns_by_family``: family (optional terms) -> its friction columns (N*n, k). Rows with weight 0
    are neither fitted nor scored. Returns the chosen family per joint and a JSON-ready report.
    """
    if blocks < 2:
        raise ValueError(f"model selection needs at least 2 time blocks, got {blocks}")
    n_samples = y.shape[0] // n
    edges = np.linspace(0, n_samples, blocks + 1).astype(int)
    mask = (row_weights > 0).astype(float)
    y_power = np.array([np.mean(y.reshape(-1, n)[:, j][mask.reshape(-1, n)[:, j] > 0] ** 2)
                        if mask.reshape(-1, n)[:, j].any() else 0.0 for j in range(n)])
    mse: dict[tuple[str, ...], np.ndarray] = {}
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
    chosen = []
    for j in range(n):
        best = min(mse[f][j] for f in order)
        floor = 1e-9 * y_power[j]
        chosen.append(next(f for f in order if mse[f][j] <= best * (1.0 + tolerance) + floor))
    report = {
        "rule": (f"blocked cross-validation over {blocks} contiguous time blocks of the training data (moving "
                 f"samples); per joint the simplest family within {100 * tolerance:g} % of the lowest held-out "
                 "mean squared error"),
        "held_out_rms_nm": {terms_name(f): np.sqrt(mse[f]).tolist() for f in order},
        "chosen": [terms_name(f) for f in chosen],
    }
    return chosen, report


# ------------------------------------------------------------------------------------------- the fit
@dataclass(frozen=True)
class FrictionFit:
    """The friction part of an identification: design, its columns, the load torque and the selection report."""

    design: FrictionDesign
    columns: np.ndarray
    load_torque_nm: np.ndarray | None
    row_weights: np.ndarray
    selection: dict | None


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


def fit_friction(data: PreprocessedData, a_rb: np.ndarray, y: np.ndarray, *, n_joints: int,
                 terms: str | tuple[tuple[str, ...], ...], load_torque_of: Callable[[np.ndarray], np.ndarray],
                 initial_load_torque_nm: np.ndarray, stribeck_velocity_rad_s: np.ndarray,
                 coulomb_velocity_rad_s: np.ndarray, presliding_distance_rad: float | None = None,
                 fit_stribeck: bool = True, stribeck_range_rad_s: tuple[float, float] = (0.005, 1.0),
                 presliding_range_rad: tuple[float, float] = (2e-4, 1e-2), standstill_velocity_rad_s: float = 0.02,
                 blocks: int = 5, tolerance: float = 0.01, stribeck_grid: int = 13) -> FrictionFit:
    """Choose (``terms="auto"``) or take the friction terms per joint, find their shape constants and the load
    torque, and return the design with its columns (module doc). ``load_torque_of(theta)`` maps a linear
    solution over [a_rb, friction columns] to the links' rigid-body torque (N, n).

    Automatic choice: the load torque from :data:`LOAD_PASSES` passes of the richest model; every family's
    Stribeck velocities on a ``stribeck_grid``-point log grid (each family its own), the presliding
    distances once on the richest presliding model; blocked cross-validation (:func:`select_terms`); then
    the chosen design's Stribeck velocities refined and the load passes repeated on it.
    """
    n = n_joints
    cache = ColumnCache(data)
    mask = standstill_mask(data, standstill_velocity_rad_s)
    if mask.reshape(-1, n).sum(axis=0).min() < 1:
        raise ValueError("a joint never moves faster than the standstill velocity "
                         f"({standstill_velocity_rad_s:g} rad/s): excite every joint, or lower it")
    start_delta = 1e-3 if presliding_distance_rad is None else float(presliding_distance_rad)
    if start_delta <= 0:
        raise ValueError(f"presliding_distance_rad must be > 0 rad, got {presliding_distance_rad}")
    search_delta = None if presliding_distance_rad is not None else presliding_range_rad
    base = FrictionDesign(tuple(() for _ in range(n)), np.asarray(stribeck_velocity_rad_s, float).copy(),
                          np.asarray(coulomb_velocity_rad_s, float).copy(), np.full(n, start_delta))
    p2_columns = np.hstack([a_rb, design_columns(cache, base)])
    sigma = _joint_rms(y - p2_columns @ _solve(p2_columns, y, mask), mask, n)
    weights = mask * np.tile(1.0 / np.maximum(sigma, 1e-9) ** 2, data.n_samples)

    def load_passes(design: FrictionDesign, load: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        fr = design_columns(cache, design, load)
        for _ in range(LOAD_PASSES if _has_load(design) else 0):
            load = load_torque_of(_solve(np.hstack([a_rb, fr]), y, weights))
            fr = design_columns(cache, design, load)
        return fr, load

    def finish(design: FrictionDesign, load: np.ndarray, selection: dict | None) -> FrictionFit:
        fr = design_columns(cache, design, load)
        proj = _Projection(a_rb, fr, y, weights, n, design)
        design = _search_shapes(proj, cache, load, stribeck=fit_stribeck, stribeck_range=stribeck_range_rad_s,
                                presliding_range=search_delta if selection is None else None)
        fr, load = load_passes(design, load)
        return FrictionFit(design, fr, load if _has_load(design) else None, mask, selection)

    if terms != "auto":
        design = base.with_terms(terms)
        _, load = load_passes(design, initial_load_torque_nm)
        return finish(design, load, None)

    rich_tanh = base.with_terms([tuple(t for t in FRICTION_TERMS if t != "presliding")] * n)
    fr_tanh, load = load_passes(rich_tanh, initial_load_torque_nm)
    grid = np.geomspace(*stribeck_range_rad_s, stribeck_grid) if fit_stribeck else None
    # Presliding distances: on the richest presliding model (Stribeck velocities from the richest other one).
    rich_dahl = base.with_terms([tuple(FRICTION_TERMS)] * n)
    if fit_stribeck:
        proj = _Projection(a_rb, fr_tanh, y, weights, n, rich_tanh)
        rich_dahl = replace(rich_dahl, stribeck_velocity_rad_s=_search_shapes(
            proj, cache, load, stribeck=True, stribeck_range=stribeck_range_rad_s,
            presliding_range=None).stribeck_velocity_rad_s)
    fr_dahl = design_columns(cache, rich_dahl, load)
    if search_delta is not None:
        proj = _Projection(a_rb, fr_dahl, y, weights, n, rich_dahl)
        rich_dahl = _search_shapes(proj, cache, load, stribeck=False, stribeck_range=stribeck_range_rad_s,
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
    chosen, report = select_terms(a_rb, y, weights, n, columns, blocks=blocks, tolerance=tolerance)
    design = replace(base.with_terms(chosen),
                     stribeck_velocity_rad_s=np.array([stribeck_of[chosen[j]][j] for j in range(n)]),
                     presliding_distance_rad=rich_dahl.presliding_distance_rad.copy())
    return finish(design, load, report)
