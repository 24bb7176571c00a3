"""How well the data determine each friction parameter: standard deviations with the shape constants free.

The linear estimate's covariance holds the Stribeck velocity x_s, the presliding distance delta and
the friction family fixed; the data may not. :func:`friction_uncertainty` widens it by what those
leave open (identification/friction_fit.py finds them; the model-file stores the result with the
friction model so a user can see which parameters a recording determines).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.optimize

from .friction_columns import ColumnCache, FrictionDesign
from .friction_fit import SHAPE_GRID, FrictionFit, _Projection, leading_part, local_minima
from .preprocessing import PreprocessedData

__all__ = ["friction_uncertainty"]


def _profile_spread(proj: _Projection, cache: ColumnCache, fit: FrictionFit, j: int, name: str,
                    search_range: tuple[float, float], threshold: float) -> np.ndarray:
    """Largest change of joint j's parameters (and of the log shape constant, last) over the other local
    minima of the residual profile in the shape constant ``name`` that fit within ``threshold`` of the best."""
    design, load = fit.design, fit.load_torque_nm
    params = design.joint_parameters(j)
    changing = ["static_nm"] if name == "stribeck_velocity_rad_s" else \
        [p for p in params if p in ("static_nm", "coulomb_nm", "load_coefficient")]
    local = [params.index(p) for p in changing]
    idx = proj.offset + design.column_indices(j)
    value = float(getattr(design, name)[j])

    def at(v: float) -> tuple[float, np.ndarray]:
        moved = (design.with_shape(j, stribeck_velocity_rad_s=v) if name == "stribeck_velocity_rad_s"
                 else design.with_shape(j, presliding_distance_rad=v))
        return proj.solve(j, local, cache.design_joint(moved, j, load, changing))

    rss_hat, theta_hat = at(value)
    logs = np.linspace(np.log(search_range[0]), np.log(search_range[1]), SHAPE_GRID)
    profile = [at(float(np.exp(v)))[0] for v in logs]
    spread = np.zeros(len(params) + 1)
    for k in local_minima(profile):
        lo, hi = logs[max(k - 1, 0)], logs[min(k + 1, logs.size - 1)]
        res = scipy.optimize.minimize_scalar(lambda v: at(float(np.exp(v)))[0], bounds=(lo, hi), method="bounded",
                                             options={"xatol": 2e-2, "maxiter": 8})
        best = float(res.x) if res.fun <= profile[k] else float(logs[k])
        if abs(best - np.log(value)) < 0.05:
            continue
        rss, theta = at(float(np.exp(best)))
        if rss - rss_hat <= threshold:
            spread[:-1] = np.maximum(spread[:-1], np.abs(theta[idx] - theta_hat[idx]))
            spread[-1] = max(spread[-1], abs(best - np.log(value)))
    return spread


def _correlation_inflation(residual: np.ndarray, row_weights: np.ndarray, segment_id: np.ndarray,
                           n: int) -> np.ndarray:
    """Per joint (1 + rho) / (1 - rho), rho = lag-1 autocorrelation of the residual over consecutive kept rows."""
    r = residual.reshape(-1, n)
    kept = row_weights.reshape(-1, n) > 0
    same = np.concatenate([[False], segment_id[1:] == segment_id[:-1]])
    out = np.ones(n)
    for j in range(n):
        pair = kept[1:, j] & kept[:-1, j] & same[1:]
        if pair.sum() < 3:
            continue
        a, b = r[1:, j][pair], r[:-1, j][pair]
        rho = float(np.clip(a @ b / max(np.sqrt((a @ a) * (b @ b)), 1e-300), 0.0, 0.95))
        out[j] = (1.0 + rho) / (1.0 - rho)
    return out


def _on_search_boundary(design: FrictionDesign, stribeck_range: tuple[float, float],
                        presliding_range: tuple[float, float]) -> list[str]:
    """Parameters the data do not determine because a shape constant ended on its search range's edge.

    A Stribeck velocity at the top of the range makes the Stribeck term a smooth curve shaper,
    interchangeable with the Coulomb, viscous and quadratic terms over the speeds seen; at the bottom
    it is a spike at reversals, interchangeable with the Coulomb step. A presliding distance on an
    edge is itself undetermined.
    """
    out = []
    for j in range(design.n_joints):
        params = design.joint_parameters(j)
        x_s = np.log(design.stribeck_velocity_rad_s[j])
        if abs(x_s - np.log(stribeck_range[1])) < 0.03:
            out += [f"joint{j + 1}.{p}" for p in params if p not in ("offset_nm", "load_coefficient")]
            out.append(f"joint{j + 1}.stribeck_velocity_rad_s")
        elif abs(x_s - np.log(stribeck_range[0])) < 0.03:
            out += [f"joint{j + 1}.static_nm", f"joint{j + 1}.stribeck_velocity_rad_s"]
        if design.presliding[j]:
            delta = np.log(design.presliding_distance_rad[j])
            if min(abs(delta - np.log(presliding_range[0])), abs(delta - np.log(presliding_range[1]))) < 0.03:
                out.append(f"joint{j + 1}.presliding_distance_rad")
    return out


def friction_uncertainty(data: PreprocessedData, fit: FrictionFit, a_rb: np.ndarray, y: np.ndarray,
                         row_weights: np.ndarray, theta: np.ndarray, *,
                         stribeck_range_rad_s: tuple[float, float] = (0.005, 1.0),
                         presliding_range_rad: tuple[float, float] = (2e-4, 1e-2), step: float = 1e-3,
                         search_seconds: float = 60.0) -> dict:
    """Standard deviations of every friction parameter with the shape constants and the family free.

    The linear estimate's covariance holds x_s, delta and the family fixed; the data may not. Three
    parts, combined in quadrature (a spread counts as the half-width of a 95 % interval, /1.96):

    * local: the model linearised in all parameters, J = [W, d(W theta)/d log x_s_j, d(W theta)/d log
      delta_j] (weighted rows, central differences of the columns), cov = s^2 (J^T J)^-1, s^2 the
      weighted residual variance, each joint's variances inflated by (1 + rho) / (1 - rho) for the
      lag-1 autocorrelation rho of its (low-passed) residual;
    * profile: other local minima of the residual over x_s (and delta) that fit within chi^2_1(95 %) =
      3.84 s^2 (inflated like the variances) of the best, over the first ``search_seconds`` of a long
      recording like the search — e.g. a large x_s whose Stribeck curve is a parabola over the speeds seen,
      against a small x_s plus viscous and quadratic terms: the parameters' change between them;
    * family: the families the cross-validation could not tell from the chosen one (absent terms
      count as zero): the parameters' change between them;
    * a shape constant that ended on the edge of its search range leaves the parameters it trades
      with undetermined (std inf; :func:`_on_search_boundary`).

    Returns ``{"names", "values", "std", "std_local"}``; for ``stribeck_velocity_rad_s`` and
    ``presliding_distance_rad`` the std is relative (of the logarithm).
    """
    design, load, n = fit.design, fit.load_torque_nm, fit.design.n_joints
    cache = ColumnCache(data, fast=True)
    offset = a_rb.shape[1]
    base = np.hstack([a_rb, fit.columns])
    sw = np.sqrt(row_weights)
    residual = (y - base @ theta) * sw
    s2 = float(residual @ residual) / max(int(np.count_nonzero(row_weights)) - base.shape[1], 1)
    # Low-passed residuals are correlated from one sample to the next: a joint's variances (and its residual
    # profile's threshold) get the AR(1) inflation (1 + rho) / (1 - rho) of its residual's lag-1 autocorrelation.
    inflation = _correlation_inflation(residual, row_weights, data.segment_id, n)
    # the profiles over the shape constants: on the part of a long recording the search used
    part, rows = leading_part(data, int(np.ceil(search_seconds * data.sample_rate_hz)))
    stacked = (rows[:, None] * n + np.arange(n)).ravel()
    part_fit = replace(fit, columns=fit.columns[stacked], load_torque_nm=None if load is None else load[rows])
    part_cache = cache if part is data else ColumnCache(part, fast=True)
    proj = _Projection(a_rb[stacked], fit.columns[stacked], y[stacked], row_weights[stacked], n, design)
    part_s2 = float(np.sum(((y - base @ theta) ** 2 * row_weights)[stacked])) / max(
        int(np.count_nonzero(row_weights[stacked])) - base.shape[1], 1)
    extra_cols, extra_names, extra_values, spreads = [], [], [], {}
    for j in range(n):
        idx = offset + design.column_indices(j)
        params = design.joint_parameters(j)
        shapes = [("stribeck_velocity_rad_s", stribeck_range_rad_s, ["static_nm"])]
        if design.presliding[j]:
            shapes.append(("presliding_distance_rad", presliding_range_rad,
                           [p for p in params if p in ("static_nm", "coulomb_nm", "load_coefficient")]))
        for name, search_range, changing in shapes:
            value = float(getattr(design, name)[j])
            local = [params.index(p) for p in changing]
            cols = []
            for sign in (1.0, -1.0):
                trial = value * np.exp(sign * step)
                moved = (design.with_shape(j, stribeck_velocity_rad_s=trial) if name.startswith("stribeck")
                         else design.with_shape(j, presliding_distance_rad=trial))
                cols.append(cache.design_joint(moved, j, load, changing))
            column = np.zeros(y.shape[0])
            column[j::n] = (cols[0] - cols[1]) @ theta[idx[local]] / (2.0 * step)
            extra_cols.append(column)
            extra_names.append(f"joint{j + 1}.{name}")
            extra_values.append(value)
            spread = _profile_spread(proj, part_cache, part_fit, j, name, search_range,
                                     3.84 * part_s2 * inflation[j])
            for p, v in zip(params, spread[:-1]):
                spreads[f"joint{j + 1}.{p}"] = max(spreads.get(f"joint{j + 1}.{p}", 0.0), float(v))
            spreads[f"joint{j + 1}.{name}"] = max(spreads.get(f"joint{j + 1}.{name}", 0.0), float(spread[-1]))
        for alternative in (fit.alternatives[j] if fit.alternatives else ()):
            for k, p in enumerate(params + ["stribeck_velocity_rad_s"]):
                key = f"joint{j + 1}.{p}"
                if p == "stribeck_velocity_rad_s":
                    change = abs(np.log(alternative[p] / design.stribeck_velocity_rad_s[j]))
                else:
                    change = abs(alternative.get(p, 0.0) - theta[idx[k]])
                spreads[key] = max(spreads.get(key, 0.0), float(change))
    jac = np.hstack([base, np.column_stack(extra_cols)])
    jw = jac * sw[:, None]
    scale = np.linalg.norm(jw, axis=0)
    scale[scale == 0] = 1.0
    gram_inv = np.linalg.pinv((jw / scale).T @ (jw / scale), rcond=1e-12, hermitian=True)
    local_std = (np.sqrt(np.maximum(np.diag(gram_inv), 0.0) * s2) / scale)[offset:]
    names = design.names() + extra_names
    joint_of = [int(nm[5:nm.index(".")]) - 1 for nm in names]
    local_std = local_std * np.sqrt(inflation[joint_of])
    total = [float(np.hypot(sd, spreads.get(nm, 0.0) / 1.96)) for nm, sd in zip(names, local_std)]
    for nm in _on_search_boundary(design, stribeck_range_rad_s, presliding_range_rad):
        total[names.index(nm)] = float("inf")
    values = list(theta[offset:]) + extra_values
    return {"names": names, "values": [float(v) for v in values], "std": total,
            "std_local": [float(v) for v in local_std]}
