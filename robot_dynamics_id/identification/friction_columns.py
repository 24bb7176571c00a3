"""Friction columns of the identification: which terms each joint has, evaluated and parallel-filtered.

:class:`FrictionDesign` says which friction terms (dynamics/friction.py: P2 eq. (11) + offset,
load-dependent Coulomb, odd polynomial viscous law, Dahl presliding) each joint has and the
shape constants (Stribeck velocity x_s, Coulomb smoothing v_k, presliding distance delta)
its columns are evaluated with. For those constants and a given load torque the model is
linear in its parameters. :class:`ColumnCache` evaluates the columns on the full-rate
velocity (the presliding state on the full-rate travel, the integral of ``qd`` timed as the
recording's velocity is: preprocessing.velocity_travel_weight; the load torque carried
from the decimated samples to the full rate by a cubic spline), then low-passes, trims and
decimates them exactly like the measured torque (Gautier's parallel filtering;
identification/preprocessing.py). Also here: the standstill row mask and the
dissipativity rows of the consistent estimator (identification/friction_fit.py uses them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.interpolate
import scipy.signal

from ..dynamics.friction import (
    EXTENDED_FRICTION_NAMES,
    FRICTION_TERMS,
    LINEAR_FRICTION_NAMES,
    SIGN_SMOOTHING_RAD_S,
    FrictionParameters,
    dahl_state,
    extension_growth,
    parse_terms,
    terms_name,
)
from .preprocessing import PreprocessedData, even_grid

__all__ = [
    "ColumnCache",
    "FrictionDesign",
    "design_columns",
    "dissipativity_rows",
    "friction_speed_range",
    "friction_torque_preprocessed",
    "joint_columns",
    "standstill_mask",
]

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
    #: per joint, the speed at which the Stribeck, viscous and quadratic columns are held beyond it
    #: (dynamics/friction.py ``speed_range_rad_s``); None: nowhere (what a fit's columns are)
    speed_range_rad_s: np.ndarray | None = None

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
        ext = np.zeros((n, len(EXTENDED_FRICTION_NAMES)))
        ext[:, :4] = values[: 4 * n].reshape(n, 4)
        for k, (j, p) in enumerate(self.extras()):
            ext[j, EXTENDED_FRICTION_NAMES.index(p)] = values[4 * n + k]
        delta = np.where(self.presliding, self.presliding_distance_rad, 0.0)
        return FrictionParameters.from_extended_vector(
            ext.ravel(), stribeck_velocity_rad_s=self.stribeck_velocity_rad_s,
            coulomb_velocity_rad_s=self.coulomb_velocity_rad_s, presliding_distance_rad=delta,
            terms=[self.family(j) for j in range(n)], speed_range_rad_s=self.speed_range_rad_s)

    @classmethod
    def of(cls, friction: FrictionParameters) -> FrictionDesign:
        """The design of an existing friction model (its terms, shape constants and speed range)."""
        return cls(tuple(parse_terms(t) for t in friction.terms), friction.stribeck_velocity_rad_s.copy(),
                   friction.coulomb_velocity_rad_s.copy(), friction.presliding_distance_rad.copy(),
                   friction.speed_range_rad_s.copy() if friction.bounded else None)


# ------------------------------------------------------------------------------------------- columns
class ColumnCache:
    """The full-rate signals of one preprocessed data set and its parallel filter, for friction columns.

    Presliding states are cached per (joint, distance): the searches evaluate the same ones often.
    Exact data (no filter: ``data.filter_sos is None``) use the decimated velocity and the
    position increments instead.

    ``fast=True`` (for the searches, which only need where the minimum is): the low-pass runs at a
    rate m times lower after a centred moving average of m samples (m odd, dividing the decimation,
    the intermediate rate at least 4x the decimated one): the same cut-off, a passband droop below
    1 % at the cut-off. Columns that are fitted or predicted with use the exact filter.
    """

    def __init__(self, data: PreprocessedData, *, fast: bool = False) -> None:
        self.data = data
        self.exact = data.filter_sos is None
        self._signs: dict[tuple[int, float], tuple[list[np.ndarray], list[np.ndarray]]] = {}
        self._reduce = None
        if fast and not self.exact and not data.keep_all_samples:
            m = max((k for k in range(1, data.decimation // 4 + 1, 2) if data.decimation % k == 0), default=1)
            if m > 1:
                order = 2 * data.filter_sos.shape[0]
                fs = data.sample_rate_hz * data.decimation
                sos = scipy.signal.butter(order, data.cutoff_hz, fs=fs / m, output="sos")
                # the filter's steady-state initial conditions depend on sos only: solved once, not per column
                self._reduce = (m, sos, scipy.signal.sosfilt_zi(sos))
        if self.exact:
            rows = [np.flatnonzero(data.segment_id == s) for s in np.unique(data.segment_id)]
            self.qd = [data.qd_rad_s[r] for r in rows]
            self.dq = [np.diff(data.q_rad[r], axis=0, prepend=data.q_rad[r[:1]]) for r in rows]
        else:
            rows = [np.flatnonzero(data.segment_id == s) for s in range(len(data.full_rate_qd_rad_s))]
            self.qd = list(data.full_rate_qd_rad_s)
            self.t = list(data.full_rate_time_s)
            # travel between samples on the samples' own steps (a median period would miscount the travel across
            # a repeated or skipped cycle), weighting the two velocities as the recording's velocity is timed
            # (preprocessing.velocity_travel_weight: 0.5 the trapezoid, 1 a backward difference). The small
            # motions of a joint settling at a stop count too: they move the presliding state.
            w = data.travel_weight
            self.dq = [(w * qd + (1.0 - w) * np.concatenate([qd[:1], qd[:-1]])) * np.diff(t, prepend=t[0])[:, None]
                       for qd, t in zip(self.qd, self.t)]
            # the fast filter below assumes evenly spaced samples: uneven segments take the exact one
            self._even = [even_grid(t, data.full_rate_period_s) is None for t in self.t]
        self.rows = rows
        self._dahl: dict[tuple[int, float], list[np.ndarray]] = {}
        self._static: dict[tuple[int, float, float, float], np.ndarray] = {}
        # full-rate load torques of the last load array asked for (a search asks with the same one many times)
        self._loads: tuple[np.ndarray | None, dict[tuple[int, int], np.ndarray]] = (None, {})

    def dahl(self, j: int, delta: float) -> list[np.ndarray]:
        key = (j, float(delta))
        if key not in self._dahl:
            self._dahl[key] = [dahl_state(dq[:, j:j + 1], delta)[:, 0] for dq in self.dq]
        return self._dahl[key]

    def _load(self, k: int, j: int, load_torque_nm: np.ndarray) -> np.ndarray:
        values = load_torque_nm[self.rows[k], j:j + 1]
        if self.exact or self.data.keep_all_samples:  # already at every full-rate sample of the segment
            return values[:, 0]
        if self._loads[0] is not load_torque_nm:  # identity, not equality: callers make a new array per pass
            self._loads = (load_torque_nm, {})
        cached = self._loads[1]
        if (k, j) not in cached:
            cached[k, j] = _to_full_rate(values, self.t[k], self.data.trim_samples, self.data.decimation)[:, 0]
        return cached[k, j]

    def filtered(self, parts: list[np.ndarray]) -> np.ndarray:
        """Per-segment full-rate values (M, k) -> low-passed, trimmed, decimated and stacked (N, k)."""
        if self.exact:
            return np.concatenate(parts, axis=0)
        d, out = self.data, []
        for k, values in enumerate(parts):
            if self._reduce is not None and self._even[k]:
                out.append(self._filtered_fast(values))
                continue
            m = values.shape[0]
            f = d.lowpass(values, self.t[k])
            # validation keeps every sample (preprocessing keep_all_samples): nothing trimmed or decimated
            out.append(f if d.keep_all_samples else f[d.trim_samples: m - d.trim_samples: d.decimation])
        return np.concatenate(out, axis=0)

    def _filtered_fast(self, values: np.ndarray) -> np.ndarray:
        d = self.data
        m, sos, zi = self._reduce
        step = d.decimation // m
        length = values.shape[0]
        first = d.trim_samples % m
        averaged = _centred_means(values, first, m)
        f = _filtfilt(sos, zi, averaged, padlen=min(3 * d.trim_samples // m, averaged.shape[0] - 1))
        keep = len(range(d.trim_samples, length - d.trim_samples, d.decimation))
        start = (d.trim_samples - first) // m
        return f[start: start + step * keep: step]

    def _tanh_signs(self, j: int, coulomb_velocity_rad_s: float) -> tuple[list[np.ndarray], list[np.ndarray]]:
        key = (j, float(coulomb_velocity_rad_s))
        if key not in self._signs:
            self._signs[key] = ([np.tanh(qd[:, j] / SIGN_SMOOTHING_RAD_S) for qd in self.qd],
                                [np.tanh(qd[:, j] / coulomb_velocity_rad_s) for qd in self.qd])
        return self._signs[key]

    def columns(self, j: int, params: list[str], *, stribeck_velocity_rad_s: float, coulomb_velocity_rad_s: float,
                presliding_distance_rad: float = 0.0, load_torque_nm: np.ndarray | None = None,
                speed_range_rad_s: float = np.inf) -> np.ndarray:
        """Joint j's columns (N, len(params)) of the named linear parameters (:data:`EXTENDED_FRICTION_NAMES`);
        the Stribeck, viscous and quadratic ones of the velocity clipped to ``speed_range_rad_s`` (a model's
        range: :meth:`extension` adds the growth beyond it; dynamics/friction.py)."""
        if "load_coefficient" in params and load_torque_nm is None:
            raise ValueError(f"joint {j + 1} has a load-dependent friction term: pass load_torque_nm")
        if params == ["static_nm"]:  # the searches ask for the same Stribeck columns again and again
            key = (j, float(stribeck_velocity_rad_s), float(coulomb_velocity_rad_s), float(presliding_distance_rad),
                   float(speed_range_rad_s))  # a model's range holds the Stribeck column too
            if key not in self._static:
                self._static[key] = self._columns(j, params, stribeck_velocity_rad_s, coulomb_velocity_rad_s,
                                                  presliding_distance_rad, None, speed_range_rad_s)
            return self._static[key]
        return self._columns(j, params, stribeck_velocity_rad_s, coulomb_velocity_rad_s, presliding_distance_rad,
                             load_torque_nm, speed_range_rad_s)

    def extension(self, j: int, speed_range_rad_s: float, slope: float) -> np.ndarray:
        """Joint j's friction added beyond +-``speed_range_rad_s`` with ``slope`` (dynamics/friction.py
        :func:`extension_growth`; 0 inside), parallel-filtered (N,)."""
        return self.filtered([extension_growth(speed_range_rad_s, slope,
                                               qd[:, j] - np.clip(qd[:, j], -speed_range_rad_s, speed_range_rad_s)
                                               )[:, None] for qd in self.qd])[:, 0]

    def _columns(self, j: int, params: list[str], stribeck_velocity_rad_s: float, coulomb_velocity_rad_s: float,
                 presliding_distance_rad: float, load_torque_nm: np.ndarray | None,
                 speed_range_rad_s: float = np.inf) -> np.ndarray:
        parts = []
        for k, (qd_all, _) in enumerate(zip(self.qd, self.dq)):
            qd = qd_all[:, j]
            # the fitted terms within a model's speed range, held at it beyond (there: extension)
            qd_speed = np.clip(qd, -speed_range_rad_s, speed_range_rad_s) if np.isfinite(speed_range_rad_s) else qd
            if presliding_distance_rad > 0:
                static = coulomb = self.dahl(j, presliding_distance_rad)[k]
            else:
                signs = self._tanh_signs(j, coulomb_velocity_rad_s)
                static, coulomb = signs[0][k], signs[1][k]
            values = {
                "static_nm": lambda: static / (1.0 + (qd_speed / stribeck_velocity_rad_s) ** 2),
                "coulomb_nm": lambda: coulomb,
                "viscous_nm_s_per_rad": lambda: qd_speed,
                "offset_nm": lambda: np.ones_like(qd),
                "load_coefficient": lambda: np.abs(self._load(k, j, load_torque_nm)) * coulomb,
                "viscous_quadratic_nm_s2_per_rad2": lambda: qd_speed * np.abs(qd_speed),
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
                            if design.presliding[j] else 0.0, load_torque_nm=load_torque_nm,
                            speed_range_rad_s=np.inf if design.speed_range_rad_s is None
                            else float(design.speed_range_rad_s[j]))


def _centred_means(values: np.ndarray, first: int, m: int) -> np.ndarray:
    """Means of the m rows (m odd) centred on rows first, first + m, ... of ``values`` (M, k); a window that
    runs past either end averages the rows it covers."""
    half, length = m // 2, values.shape[0]
    n_centres = len(range(first, length, m))
    lo = first - half  # the first window's start; whole windows follow one another without overlap
    inner_start = min((-lo) // m + 1 if lo < 0 else 0, n_centres)  # the first window inside the rows
    inner_stop = max(min(n_centres, (length - lo) // m), inner_start)  # past the last window inside
    out = np.empty((n_centres, values.shape[1]))
    a, b = lo + inner_start * m, lo + inner_stop * m
    if b > a:  # reduceat: the fastest of reshape-mean, strided sums and cumsum differences at these sizes
        out[inner_start:inner_stop] = np.add.reduceat(values[a:b], np.arange(0, b - a, m), axis=0) / m
    for c in [*range(inner_start), *range(inner_stop, n_centres)]:  # at most one or two at each end
        start, stop = max(lo + c * m, 0), min(lo + (c + 1) * m, length)
        out[c] = values[start:stop].mean(axis=0)
    return out


def _filtfilt(sos: np.ndarray, zi: np.ndarray, x: np.ndarray, padlen: int) -> np.ndarray:
    """scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padlen) (odd extension, steady-state initial conditions)
    with the initial conditions ``zi = sosfilt_zi(sos)`` given."""
    if padlen > 0:
        x = np.concatenate([2 * x[:1] - x[padlen:0:-1], x, 2 * x[-1:] - x[-2:-padlen - 2:-1]], axis=0)
    zi = zi[:, :, None]
    y, _ = scipy.signal.sosfilt(sos, x, axis=0, zi=zi * x[:1])
    y, _ = scipy.signal.sosfilt(sos, y[::-1], axis=0, zi=zi * y[-1:])
    y = y[::-1]
    return y[padlen: y.shape[0] - padlen] if padlen > 0 else y


def _to_full_rate(values: np.ndarray, time_s: np.ndarray, trim: int, decimation: int) -> np.ndarray:
    """Decimated samples (at full-rate indices trim + k*decimation of a segment whose full-rate timestamps are
    ``time_s``) to every full-rate sample (cubic spline in time, end values held beyond the first and last)."""
    at = time_s[trim + decimation * np.arange(values.shape[0])]
    if values.shape[0] >= _SPLINE_MIN_SAMPLES:
        spline = scipy.interpolate.CubicSpline(at, values, axis=0, extrapolate=False)
        return spline(np.clip(time_s, at[0], at[-1]))
    return np.column_stack([np.interp(time_s, at, values[:, k]) for k in range(values.shape[1])])


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
    ext = friction.extended_vector().reshape(-1, len(EXTENDED_FRICTION_NAMES))
    slope = friction.extension_slope()
    cache = ColumnCache(data)
    out = np.empty((data.n_samples, design.n_joints))
    for j in range(design.n_joints):
        cols = joint_columns(cache, design, j, load_torque_nm)
        out[:, j] = cols @ ext[j, [EXTENDED_FRICTION_NAMES.index(p) for p in design.joint_parameters(j)]]
        if slope[j] > 0:  # beyond the identified speeds the curve grows on from its value there (dynamics/friction.py)
            out[:, j] += cache.extension(j, float(friction.speed_range_rad_s[j]), float(slope[j]))
    return out


def friction_speed_range(data: PreprocessedData) -> np.ndarray:
    """Per joint, the largest speed (rad/s) of the velocity the friction columns are evaluated on: the speeds a
    friction law fitted to ``data`` was identified over (floored at 1 mrad/s)."""
    cache = ColumnCache(data)
    top = np.max([np.abs(qd).max(axis=0) for qd in cache.qd if qd.shape[0]], axis=0)
    return np.maximum(top, 1e-3)


def standstill_mask(data: PreprocessedData, velocity_rad_s: float) -> np.ndarray:
    """Row weights (N*n,): 0 where the joint is at rest (|qd| < velocity_rad_s), else 1 (module doc)."""
    if velocity_rad_s < 0:
        raise ValueError(f"standstill velocity must be >= 0 rad/s, got {velocity_rad_s}")
    return (np.abs(data.qd_rad_s) >= velocity_rad_s).astype(float).ravel()


def dissipativity_rows(design: FrictionDesign, max_speed_rad_s: np.ndarray, *, points: int = 24
                       ) -> np.ndarray:
    """Rows G (m, n_columns) with ``G phi >= 0`` <=> the friction dissipates at every speed.

    Per joint, the steady sliding curve (sgn = 1; the load term is >= 0 by mu >= 0, the offset is
    not friction) at 0 and at ``points - 1`` speeds spread geometrically up to the joint's largest
    speed V: ``f_s / (1 + (v/x_s)^2) + f_k + k_v v + k_2 v^2 >= 0``. Beyond V the model holds the fitted
    terms at V and only adds a growth >= 0 (dynamics/friction.py), so the row at V covers every speed
    past it.
    """
    n = design.n_joints
    rows = []
    for j in range(n):
        v_max = max(float(max_speed_rad_s[j]), 1e-3)
        speeds = np.concatenate([[0.0], np.geomspace(1e-3, v_max, points - 1)])
        idx = design.column_indices(j)
        params = design.joint_parameters(j)
        for v, stribeck in [(v, 1.0 / (1.0 + (v / design.stribeck_velocity_rad_s[j]) ** 2)) for v in speeds]:
            row = np.zeros(design.n_columns)
            values = {"static_nm": stribeck, "coulomb_nm": 1.0,
                      "viscous_nm_s_per_rad": v, "viscous_quadratic_nm_s2_per_rad2": v * v}
            for k, p in zip(idx, params):
                row[k] = values.get(p, 0.0)
            rows.append(row)
    return np.array(rows)
