"""The offline identifier: recording arrays + robot -> identified dynamic model, metrics and diagnostics.

``identify(recording, robot, options)`` runs, in order:

1. torque source (identification/torque_source.py, the one rule): motor current x drive gains,
   a joint torque (``effort_nm``), or on request UR's target moment;
2. preprocessing (identification/preprocessing.py): gaps, zero-phase filtering,
   central differences, decimation;
3. base parameters (dynamics/base_parameters.py) and the base regressor of the data
   (pinocchio's joint-torque regressor + rotor inertia + friction of seeds.md P2 eq. (11));
4. excitation check — too little excitation raises an error naming the
   unidentifiable base parameters;
5. OLS -> per-joint noise -> weighted (or robust IRLS) least squares; the Stribeck
   velocity of each joint is found by variable projection (1-D search per joint,
   the linear parameters eliminated in closed form);
6. physically consistent estimation (log-Cholesky per link, bounded CoM, friction
   and rotor inertia >= 0) started from the weighted solution;
7. the model file (io/model_file.DynamicModel) with base parameters and standard
   deviations, per-joint fit/RRE/RMS.

The input is "recording-like": any object (or dict) with ``time_s``, ``q_rad`` and
``effort_nm`` or ``current_a`` arrays, optionally ``qd_rad_s`` — e.g.
io/recording.Recording or identification/synthetic.SyntheticRecording.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg
import scipy.optimize

from ..dynamics.base_parameters import BaseParameterMap, check_excitation, compute_base_parameters
from ..dynamics.consistency import is_physically_consistent
from ..dynamics.friction import SIGN_SMOOTHING_RAD_S, FrictionParameters
from ..dynamics.regressor import (
    DEFAULT_COULOMB_VELOCITY_RAD_S,
    DEFAULT_STRIBECK_VELOCITY_RAD_S,
    full_parameter_vector,
    rigid_body_regressor,
    rotor_regressor,
)
from ..io.model_file import DynamicModel
from ..progress import ProgressCallback, scaled
from ..robots.model import RobotModel, load_robot
from .estimators import (
    ConsistentEstimate,
    LinearEstimate,
    compress,
    iteratively_reweighted_least_squares,
    NormalEquations,
    physically_consistent_least_squares,
)
from .metrics import moving_samples, torque_metrics
from .preprocessing import PreprocessedData, PreprocessingOptions, parallel_friction_columns, preprocess
from .torque_source import TORQUE_SOURCES, TorqueSignal, select_torque

__all__ = ["IdentificationOptions", "IdentificationResult", "identify", "predict_preprocessed", "predict_torque", "prepare",
           "validate"]

ESTIMATORS = ("ols", "wls", "irls", "consistent")


@dataclass(frozen=True, kw_only=True)
class IdentificationOptions:
    """Options of :func:`identify` (keyword-only).

    estimator: ``ols``, ``wls``, ``irls`` (linear, base parameters only; the per-link model is the
        one nearest the prior) or ``consistent`` (default: physically consistent per link).
    robust: with ``consistent``, start from IRLS (outlier-robust) weights instead of WLS.
    friction, rotor: include friction (P2 eq. 11 + offset) and reflected rotor inertia.
    fit_stribeck: search each joint's Stribeck velocity in ``stribeck_search_range_rad_s``;
        otherwise use ``stribeck_velocity_rad_s``.
    coulomb_velocity_rad_s: tanh smoothing of the Coulomb term (fixed).
    torque_source: ``auto``, ``current``, ``effort``, ``target_moment``: the rule of
        identification/torque_source.py (auto: current x gains when gains are given, else effort).
    drive_gains_nm_per_a: needed for ``current``; stored in the model (None: the model has no gains).
    prior: model whose per-link values anchor the unidentifiable directions (default: nominal).
    com_half_width_m: CoM box half-width around the prior CoM; None = half the link length + 5 cm.
    """

    estimator: str = "consistent"
    robust: bool = False
    friction: bool = True
    rotor: bool = True
    fit_stribeck: bool = True
    stribeck_velocity_rad_s: float | np.ndarray = DEFAULT_STRIBECK_VELOCITY_RAD_S
    stribeck_search_range_rad_s: tuple[float, float] = (0.005, 1.0)
    coulomb_velocity_rad_s: float | np.ndarray = DEFAULT_COULOMB_VELOCITY_RAD_S
    torque_source: str = "auto"
    drive_gains_nm_per_a: np.ndarray | None = None
    preprocessing: PreprocessingOptions = field(default_factory=PreprocessingOptions)
    prior: DynamicModel | None = None
    com_half_width_m: float | np.ndarray | None = None
    regularisation: float = 1e-6
    excitation_tolerance: float = 1e-6
    chunk_samples: int = 20000
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator {self.estimator!r} is unknown; choose one of {', '.join(ESTIMATORS)}")
        if self.torque_source not in TORQUE_SOURCES:
            raise ValueError(f"torque_source {self.torque_source!r} must be one of {', '.join(TORQUE_SOURCES)}")


@dataclass(frozen=True)
class IdentificationResult:
    """Everything the identifier found: the model, the base-parameter estimate and diagnostics."""

    model: DynamicModel
    base_map: BaseParameterMap
    base_estimate: LinearEstimate
    base_parameters_consistent: np.ndarray
    full_parameters: np.ndarray
    consistent: ConsistentEstimate | None
    physically_consistent_links: np.ndarray
    data: PreprocessedData
    predicted_torque_nm: np.ndarray
    measured_torque_nm: np.ndarray
    metrics: dict
    condition_number: float
    stribeck_velocity_rad_s: np.ndarray
    timings_s: dict


# ----------------------------------------------------------------------------------------- helpers
def _get(data: Any, name: str):
    if isinstance(data, dict):
        return data.get(name)
    return getattr(data, name, None)


def _torque_of(recording: Any, options: IdentificationOptions, n: int) -> TorqueSignal:
    """The torque by the one rule (gains as given: the drive-gain identification works in amperes)."""
    gains = options.drive_gains_nm_per_a
    if gains is not None:
        gains = np.broadcast_to(np.asarray(gains, float), (n,))
    return select_torque(recording, options.torque_source, gains, plausible_gains=False)


def _robot(robot: RobotModel | str) -> RobotModel:
    return robot if isinstance(robot, RobotModel) else load_robot(robot)


def prepare(recording: Any, robot: RobotModel | str, options: IdentificationOptions | None = None
            ) -> PreprocessedData:
    """Steps 1-2 of :func:`identify`: the preprocessed samples of a recording."""
    options = options or IdentificationOptions()
    rm = _robot(robot)
    q = _get(recording, "q_rad")
    t = _get(recording, "time_s")
    if q is None or t is None:
        raise ValueError("a recording needs time_s and q_rad arrays")
    torque = _torque_of(recording, options, rm.n_joints).torque_nm
    return preprocess(t, q, torque, qd_rad_s=_get(recording, "qd_rad_s"), options=options.preprocessing)


def _rigid_base_columns(rm: RobotModel, base_map: BaseParameterMap, data: PreprocessedData, chunk: int,
                        progress: ProgressCallback | None = None) -> np.ndarray:
    """Base columns of the rigid-body (+ rotor) part, computed chunk by chunk (bounded memory)."""
    n = rm.n_joints
    n_rb = 10 * n + (n if base_map.rotor else 0)
    cols = base_map.independent_columns[base_map.independent_columns < n_rb]
    out = np.empty((data.n_samples * n, cols.shape[0]))
    if progress is not None:
        progress(0.0, "regressor")
    for start in range(0, data.n_samples, chunk):
        stop = min(start + chunk, data.n_samples)
        blocks = [rigid_body_regressor(rm, data.q_rad[start:stop], data.qd_rad_s[start:stop],
                                       data.qdd_rad_s2[start:stop])]
        if base_map.rotor:
            blocks.append(rotor_regressor(data.qdd_rad_s2[start:stop]))
        out[start * n: stop * n] = np.hstack(blocks)[:, cols]
        if progress is not None:
            progress(stop / data.n_samples, "regressor")
    return out


def _check_friction_layout(base_map: BaseParameterMap, n: int) -> None:
    n_rb = 10 * n + (n if base_map.rotor else 0)
    fr_cols = np.arange(n_rb, n_rb + 4 * n)
    if not np.all(np.isin(fr_cols, base_map.independent_columns)):
        raise ValueError("friction columns are not all base parameters; the data/model are degenerate")


def _static_column(data: PreprocessedData, j: int, x_s: float) -> np.ndarray:
    """The Stribeck (static) friction column of joint j at x_s, parallel-filtered: (N,)."""
    def column(qd: np.ndarray) -> np.ndarray:
        return np.tanh(qd[:, j] / SIGN_SMOOTHING_RAD_S) / (1.0 + (qd[:, j] / x_s) ** 2)
    if data.filter_sos is None:
        return column(data.qd_rad_s)
    return data.parallel_filter(column)


def _fit_stribeck(a_rb: np.ndarray, data: PreprocessedData, y: np.ndarray, weights_joint: np.ndarray,
                  coulomb_velocity: np.ndarray, search: tuple[float, float], start: np.ndarray,
                  sweeps: int = 2) -> np.ndarray:
    """Variable projection: per joint, the Stribeck velocity x_s minimising the weighted residual with all
    linear parameters re-fitted in closed form (normal equations updated for the one column x_s changes)."""
    qd = data.qd_rad_s
    n = qd.shape[1]
    sw = np.sqrt(weights_joint)
    x_s = start.copy()
    fr = parallel_friction_columns(data, x_s, coulomb_velocity)
    a = np.hstack([a_rb, fr]) * np.tile(sw, qd.shape[0])[:, None]
    yw = y * np.tile(sw, qd.shape[0])
    scale = np.linalg.norm(a, axis=0)
    scale[scale == 0] = 1.0
    a /= scale
    gram = a.T @ a
    rhs = a.T @ yw
    yy = float(yw @ yw)
    per_joint = [np.ascontiguousarray(a[j::n]) for j in range(n)]
    y_joint = [yw[j::n] for j in range(n)]
    r0 = a_rb.shape[1]

    def rss(j: int, log_xs: float) -> float:
        col = r0 + 4 * j
        g = _static_column(data, j, float(np.exp(log_xs))) * sw[j]
        g_norm = np.linalg.norm(g) or 1.0
        g = g / g_norm
        gm = gram.copy()
        r = rhs.copy()
        cross = per_joint[j].T @ g
        gm[:, col] = cross
        gm[col, :] = cross
        gm[col, col] = g @ g
        r[col] = g @ y_joint[j]
        try:
            sol = scipy.linalg.solve(gm, r, assume_a="pos")
        except (np.linalg.LinAlgError, ValueError):
            return np.inf
        return yy - float(r @ sol)

    def commit(j: int, log_xs: float) -> None:
        col = r0 + 4 * j
        g_full = np.zeros(qd.shape[0] * n)
        g_full[j::n] = _static_column(data, j, float(np.exp(log_xs))) * sw[j]
        norm = np.linalg.norm(g_full) or 1.0
        g_full /= norm
        a[:, col] = g_full
        per_joint[j][:, col] = g_full[j::n]
        cross = a.T @ g_full
        gram[:, col] = cross
        gram[col, :] = cross
        rhs[col] = g_full @ yw

    lo, hi = np.log(search[0]), np.log(search[1])
    grid = np.linspace(lo, hi, 11)
    for _ in range(sweeps):
        for j in range(n):
            values = [rss(j, g) for g in grid]
            k = int(np.argmin(values))
            a_lo, a_hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.shape[0] - 1)]
            res = scipy.optimize.minimize_scalar(lambda v: rss(j, v), bounds=(a_lo, a_hi), method="bounded",
                                                 options={"xatol": 1e-2, "maxiter": 12})
            best = res.x if res.fun <= values[k] else grid[k]
            x_s[j] = float(np.exp(best))
            commit(j, best)
    return x_s


def _check_excitation_gram(normal: NormalEquations, names, tolerance: float) -> float:
    """Excitation check and column-normalised condition number from the normal equations
    (a square root of the Gram matrix has the same QR pivots and singular values as the regressor)."""
    gram = normal.gram.sum(axis=0)
    d = np.sqrt(np.maximum(np.diag(gram), 1e-300))
    gram_n = gram / np.outer(d, d)
    eigenvalues, vectors = np.linalg.eigh(gram_n)
    root = np.sqrt(np.maximum(eigenvalues, 0.0))[:, None] * vectors.T
    check_excitation(root * d, names, tolerance=tolerance)
    return float(np.sqrt(eigenvalues.max() / max(eigenvalues.min(), 1e-300)))


def _link_half_widths(rm: RobotModel) -> np.ndarray:
    """Half the distance to the next joint (or to the tool frame) + 5 cm: the CoM box half-width."""
    model = rm.model
    n = rm.n_joints
    lengths = np.zeros(n)
    for i in range(1, n):
        lengths[i - 1] = np.linalg.norm(model.jointPlacements[i + 1].translation)
    frame = model.frames[rm.tool_frame_id]
    lengths[n - 1] = np.linalg.norm(frame.placement.translation)
    return 0.5 * lengths + 0.05


# ----------------------------------------------------------------------------------------- main entry
def identify(recording: Any, robot: RobotModel | str, options: IdentificationOptions | None = None,
             *, preprocessed: PreprocessedData | None = None,
             progress: ProgressCallback | None = None) -> IdentificationResult:
    """Identify the dynamic model of ``robot`` from one recording (see the module docstring).

    ``progress(fraction, stage)`` is called as the stages run (preprocess, regressor, friction,
    estimate, model); the fractions are roughly proportional to their run time."""
    options = options or IdentificationOptions()
    rm = _robot(robot)
    n = rm.n_joints
    timings: dict[str, float] = {}
    clock = time.perf_counter()
    if progress is not None:
        progress(0.0, "preprocess")
    data = preprocessed if preprocessed is not None else prepare(recording, rm, options)
    signal = _torque_of(recording, options, n) if recording is not None else None
    torque_label = signal.description if signal is not None else "preprocessed"
    timings["preprocess"] = time.perf_counter() - clock

    clock = time.perf_counter()
    base_map = compute_base_parameters(rm, friction=options.friction, rotor=options.rotor)
    a_rb = _rigid_base_columns(rm, base_map, data, options.chunk_samples, scaled(progress, 0.1, 0.6))
    timings["regressor"] = time.perf_counter() - clock

    clock = time.perf_counter()
    if progress is not None:
        progress(0.6, "friction" if options.friction and options.fit_stribeck else "estimate")
    y = data.torque.ravel()
    v_k = np.broadcast_to(np.asarray(options.coulomb_velocity_rad_s, float), (n,)).copy()
    x_s = np.broadcast_to(np.asarray(options.stribeck_velocity_rad_s, float), (n,)).copy()

    def base_regressor(x_s_now: np.ndarray) -> np.ndarray:
        if not options.friction:
            return a_rb
        return np.hstack([a_rb, parallel_friction_columns(data, x_s_now, v_k)])

    if options.friction:
        _check_friction_layout(base_map, n)
    w_base = base_regressor(x_s)
    normal = NormalEquations.from_regressor(w_base, y, n)
    cond = _check_excitation_gram(normal, base_map.names, options.excitation_tolerance)
    sigma = normal.solve().residual_rms_nm
    if options.friction and options.fit_stribeck:
        x_s = _fit_stribeck(a_rb, data, y, 1.0 / np.maximum(sigma, 1e-9) ** 2, v_k,
                            options.stribeck_search_range_rad_s, x_s)
        w_base = base_regressor(x_s)
        normal = NormalEquations.from_regressor(w_base, y, n)
        sigma = normal.solve().residual_rms_nm
    timings["stribeck"] = time.perf_counter() - clock
    if progress is not None:
        progress(0.75, "estimate")

    clock = time.perf_counter()
    joint_weights = 1.0 / np.maximum(sigma, 1e-9) ** 2
    if options.estimator == "ols":
        linear = normal.solve()
    elif options.estimator == "irls" or options.robust:
        linear = iteratively_reweighted_least_squares(w_base, y, n)
    else:
        linear = normal.solve(joint_weights)
    timings["linear"] = time.perf_counter() - clock

    prior = options.prior or DynamicModel.from_robot_model(rm, robot=rm.name if rm.description else rm.urdf)
    prior_full = full_parameter_vector(prior.standard_parameters(), prior.rotor_inertia_kgm2 if options.rotor else None,
                                       FrictionParameters.zeros(n) if options.friction else None)
    start_full = base_map.standard_near(linear.parameters, prior_full)
    consistent = None
    clock = time.perf_counter()
    if options.estimator == "consistent":
        if linear.method == "irls":
            r_factor, z, _ = compress(w_base, y, linear.row_weights)
        else:
            r_factor, z = normal.compressed(joint_weights)
        half = _link_half_widths(rm) if options.com_half_width_m is None else options.com_half_width_m
        consistent = physically_consistent_least_squares(
            r_factor, z, base_map.combination_matrix, prior_full, n_joints=n, rotor=options.rotor,
            friction=options.friction, com_half_width_m=half, regularisation=options.regularisation,
            initial_full=start_full)
        full = consistent.full_parameters
    else:
        full = start_full
    timings["consistent"] = time.perf_counter() - clock
    if progress is not None:
        progress(0.95, "model")

    standard = full[: 10 * n]
    at = 10 * n
    rotor = full[at: at + n] if options.rotor else np.zeros(n)
    at += n if options.rotor else 0
    friction = (FrictionParameters.from_linear_vector(full[at: at + 4 * n], stribeck_velocity_rad_s=x_s,
                                                      coulomb_velocity_rad_s=v_k)
                if options.friction else FrictionParameters.zeros(n))
    base_consistent = base_map.base_from_standard(full)
    predicted = (w_base @ base_consistent).reshape(-1, n)
    metrics = torque_metrics(predicted, data.torque, rm.joint_names, moving=moving_samples(data.qd_rad_s))
    consistent_links = is_physically_consistent(standard.reshape(n, 10))
    # The arm's gains when known; never a placeholder (a model from joint torques may have none).
    gains = (None if options.drive_gains_nm_per_a is None
             else np.broadcast_to(np.asarray(options.drive_gains_nm_per_a, float), (n,)).copy())
    model = prior.with_standard_parameters(
        standard,
        rotor_inertia_kgm2=rotor,
        friction=friction,
        drive_gains_nm_per_a=gains,
        base_parameters={"names": list(base_map.names), "values": linear.parameters.tolist(),
                         "std": linear.std.tolist(), "values_consistent": base_consistent.tolist(),
                         "estimator": linear.method},
        provenance={
            **options.provenance,
            "method": f"{options.estimator} (base: {linear.method})",
            "torque_source": torque_label,
            "identified_from": {**(signal.provenance() if signal is not None else {"torque_source": "preprocessed",
                                                                                  "drive_gains_nm_per_a": None}),
                                **options.provenance.get("identified_from", {})},
            "preprocessing": data.summary(),
            "condition_number": cond,
            "physically_consistent_links": consistent_links.tolist(),
            "fit_percent": metrics["fit_percent"],
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )
    return IdentificationResult(
        model=model, base_map=base_map, base_estimate=linear, base_parameters_consistent=base_consistent,
        full_parameters=full, consistent=consistent, physically_consistent_links=consistent_links, data=data,
        predicted_torque_nm=predicted, measured_torque_nm=data.torque, metrics=metrics, condition_number=cond,
        stribeck_velocity_rad_s=x_s, timings_s=timings)


def predict_torque(model: DynamicModel, q_rad, qd_rad_s, qdd_rad_s2, *, robot: RobotModel | None = None
                   ) -> np.ndarray:
    """Joint torques (N, n) the model predicts: rigid body + rotor + friction (regressor form, fast)."""
    rm = robot or load_robot(model.robot)
    n = rm.n_joints
    w = rigid_body_regressor(rm, q_rad, qd_rad_s, qdd_rad_s2)
    tau = w @ model.standard_parameters() + rotor_regressor(qdd_rad_s2) @ model.rotor_inertia_kgm2
    from ..dynamics.friction import friction_torque
    return tau.reshape(-1, n) + friction_torque(model.friction, np.atleast_2d(qd_rad_s))


def predict_preprocessed(model: DynamicModel, data: PreprocessedData, *, robot: RobotModel | None = None
                         ) -> np.ndarray:
    """Torques (N, n) ``model`` predicts for preprocessed samples, friction parallel-filtered like the
    measured torque (what :func:`identify` fits, so training and validation metrics compare alike)."""
    rm = robot or load_robot(model.robot)
    n = rm.n_joints
    w = rigid_body_regressor(rm, data.q_rad, data.qd_rad_s, data.qdd_rad_s2)
    tau = (w @ model.standard_parameters() + rotor_regressor(data.qdd_rad_s2) @ model.rotor_inertia_kgm2)
    fr = model.friction
    friction = parallel_friction_columns(data, fr.stribeck_velocity_rad_s, fr.coulomb_velocity_rad_s)
    return (tau + friction @ fr.linear_vector()).reshape(-1, n)


def validate(model: DynamicModel, recording: Any, robot: RobotModel | str | None = None,
             options: IdentificationOptions | None = None, *, cutoff_hz: float | None = None) -> dict:
    """Metrics of ``model`` on another recording, preprocessed the same way (give the training
    ``cutoff_hz`` so both are filtered alike)."""
    options = options or IdentificationOptions()
    if cutoff_hz is not None:
        options = replace(options, preprocessing=replace(options.preprocessing, cutoff_hz=cutoff_hz))
    rm = _robot(robot if robot is not None else model.robot)
    data = prepare(recording, rm, options)
    predicted = predict_preprocessed(model, data, robot=rm)
    return torque_metrics(predicted, data.torque, rm.joint_names)
