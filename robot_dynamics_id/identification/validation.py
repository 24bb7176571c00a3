"""Scoring a model on a recording at the recording's own timestamps, every sample.

:func:`validate_recording` preprocesses the recording like the training data
(same cut-off, zero-phase filter; identification/preprocessing.py with
``keep_all_samples``), predicts the torque of every sample and marks what each
sample is (:data:`STATUSES`):

* ``scored`` — used for the metrics;
* ``edge`` — within the filter's edge transient of its segment (the
  identifier trims these too);
* ``short_segment`` — in a piece between gaps too short to filter;
* ``non_finite`` — NaN/inf in the recording's row (also the samples inside a gap of a
  signal other than the joint states, which the bag reader leaves NaN: io/bag_decode.py).

Nothing is silently removed: the result has one row per recording sample
(NaN predictions where none could be made). The metrics (identification/metrics.py)
are computed on the ``scored`` samples, with the moving-sample RRE (|q̇_j| >
threshold, per joint) as a first-class metric. Given UR's own model torque
(target_current x gains, or target_moment; identification/torque_source.py), it
is filtered like the measurement and scored the same way, against the same
measured signal. Given the plain least-squares baseline's parameters
(identification/baseline.py), its prediction on the same preprocessed samples is
scored beside the model's.

The model predicts with its per-link parameters when every link is physically
consistent, and otherwise with the identified *base* parameters stored in the
model (``--method wls|ols|irls`` give such models): the regressor form needs no
realisable bodies, so every method's model can be validated. The result says
which was used. The friction is the model's own (dynamics/friction.py: load-dependent
Coulomb on the links' rigid-body torque, the quadratic viscous term, the Dahl
presliding state along each contiguous segment), evaluated by the function the
identifier's prediction uses (identification/friction_columns.py), so validation
and ``pipeline.predict_preprocessed`` give the same torque.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..dynamics.base_parameters import BaseParameterMap, compute_base_parameters
from ..dynamics.regressor import rigid_body_regressor, rotor_regressor
from ..io.model_file import DynamicModel
from ..robots.model import RobotModel
from .baseline import predict_baseline
from .friction_columns import friction_torque_preprocessed
from .metrics import MOVING_THRESHOLD_RAD_S, moving_samples, torque_metrics
from .preprocessing import PreprocessedData, PreprocessingOptions, preprocess

__all__ = ["DOUBTFUL_FIT_PERCENT", "DOUBTFUL_TRAINING_FIT_PERCENT", "SPEED_BEYOND_RANGE", "STATUSES",
           "TEMPERATURE_NOTE_C", "ValidationResult", "doubtful_fits", "median_temperatures_c", "predict_samples",
           "speed_range_notes", "temperature_notes", "validate_recording", "validation_notes"]

STATUSES = ("scored", "edge", "short_segment", "non_finite")
#: a fit below this on any joint (worse than predicting the mean by half its spread) makes a result doubtful:
#: files are written, but the command does not exit 0
DOUBTFUL_FIT_PERCENT = -50.0
#: a fit below this on the data the model was fitted to makes a result doubtful: least squares with an offset
#: term does at least as well as the mean there, so a joint below it has a torque the model cannot hold (its
#: drive gain or unit off, another robot's data), not a motion the model has not seen
DOUBTFUL_TRAINING_FIT_PERCENT = 0.0
#: a recording this many times faster than the speeds a joint's friction was identified over gets a note
SPEED_BEYOND_RANGE = 1.2
#: a recording whose joint's median temperature is this far from the training run's (degrees C) gets a note
TEMPERATURE_NOTE_C = 5.0
#: samples per chunk of the full-rate regressor (bounded memory for long recordings)
CHUNK_SAMPLES = 20000


@dataclass(frozen=True, eq=False)
class ValidationResult:
    """Per recording sample: measured and predicted torque, status; plus the metrics (module doc)."""

    joint_names: tuple[str, ...]
    #: the recording's timestamps, s, (N,)
    time_s: np.ndarray
    #: the torque signal as recorded (current x gains, or effort), Nm, (N, n)
    measured_nm: np.ndarray
    #: the same, zero-phase low-passed like the model's inputs (what is scored), Nm; NaN where not computed
    measured_filtered_nm: np.ndarray
    #: the model's prediction, Nm; NaN where not computed
    predicted_nm: np.ndarray
    #: one of STATUSES per sample
    status: np.ndarray
    #: (N, n) joint j moves at this sample (filtered velocity above the threshold)
    moving: np.ndarray
    metrics: dict
    #: 'per-link model' or 'base parameters'
    prediction: str
    #: UR's model torque, filtered like the measurement (None when not asked), Nm
    ur_model_nm: np.ndarray | None = None
    #: the plain least-squares baseline's prediction (None when not asked), Nm
    baseline_nm: np.ndarray | None = None

    @property
    def scored(self) -> np.ndarray:
        return self.status == "scored"


def _base_map_of(model: DynamicModel, robot: RobotModel) -> BaseParameterMap | None:
    """The base-parameter map the model's stored base parameters belong to (None if none matches)."""
    stored = model.base_parameters or {}
    names = tuple(stored.get("names") or ())
    if not names:
        return None
    for friction in (True, False):
        for rotor in (True, False):
            base_map = compute_base_parameters(robot, friction=friction, rotor=rotor)
            if base_map.names == names:
                return base_map
    return None


def _rigid_predictor(model: DynamicModel, robot: RobotModel):
    """(description, function (q, qd, qdd) -> (rigid-body + rotor torque, the links' rigid-body torque), each
    (N, n)). The links' torque (no rotor inertia, no friction) is what load-dependent friction sees; it is the
    model's per-link parameters in regressor form in both cases (as the identifier's load term used them),
    computed only when the friction has a load term."""
    n = robot.n_joints
    theta = model.standard_parameters()
    needs_links = model.friction.has_load_term

    if np.all(model.is_physically_consistent()):
        rotor = np.asarray(model.rotor_inertia_kgm2, float)

        def per_link(q, qd, qdd):
            links = (rigid_body_regressor(robot, q, qd, qdd) @ theta).reshape(-1, n)
            return links + (rotor_regressor(qdd) @ rotor).reshape(-1, n), links
        return "per-link model", per_link
    base_map = _base_map_of(model, robot)
    if base_map is None:
        raise ValueError(f"the model's links {np.flatnonzero(~model.is_physically_consistent()).tolist()} are not "
                         "physically consistent and it carries no base parameters of this robot to predict with; "
                         "identify it again with rdi identify")
    stored = model.base_parameters
    beta = np.asarray(stored.get("values_consistent") or stored["values"], float)
    n_rb = 10 * n + (n if base_map.rotor else 0)
    columns = base_map.independent_columns[base_map.independent_columns < n_rb]
    beta_rb = beta[: columns.shape[0]]

    def base(q, qd, qdd):
        w = rigid_body_regressor(robot, q, qd, qdd)
        blocks = [w] + ([rotor_regressor(qdd)] if base_map.rotor else [])
        tau = (np.hstack(blocks)[:, columns] @ beta_rb).reshape(-1, n)
        return tau, (w @ theta).reshape(-1, n) if needs_links else None
    return "base parameters", base


def predict_samples(model: DynamicModel, data: PreprocessedData, robot: RobotModel) -> tuple[np.ndarray, str]:
    """Torques (N, n) ``model`` predicts for preprocessed samples, the friction parallel-filtered like the
    measured torque; the rigid-body part computed chunk by chunk. Returns (torque, 'per-link model' | 'base
    parameters').

    The friction is evaluated like the identifier's (identification/friction_columns.py, the same function as
    pipeline.predict_preprocessed): every term the model chose, the load-dependent one on the links'
    rigid-body torque, a presliding state integrated along each segment's full-rate travel from rest."""
    how, rigid = _rigid_predictor(model, robot)
    n = robot.n_joints
    out = np.empty((data.n_samples, n))
    links = np.empty((data.n_samples, n)) if model.friction.has_load_term else None
    for start in range(0, data.n_samples, CHUNK_SAMPLES):
        stop = min(start + CHUNK_SAMPLES, data.n_samples)
        tau, tau_links = rigid(data.q_rad[start:stop], data.qd_rad_s[start:stop], data.qdd_rad_s2[start:stop])
        out[start:stop] = tau
        if links is not None:
            links[start:stop] = tau_links
    out += friction_torque_preprocessed(model.friction, data, links)
    return out, how


def _get(data: Any, name: str):
    return data.get(name) if isinstance(data, dict) else getattr(data, name, None)


def validate_recording(model: DynamicModel, recording: Any, torque_nm: np.ndarray, robot: RobotModel, *,
                       cutoff_hz: float | None, preprocessing: PreprocessingOptions | None = None,
                       moving_threshold_rad_s: float = MOVING_THRESHOLD_RAD_S,
                       ur_model_nm: np.ndarray | None = None,
                       baseline_parameters: np.ndarray | None = None) -> ValidationResult:
    """Score ``model`` on a recording (``time_s``, ``q_rad``, optional ``qd_rad_s``) whose measured joint
    torque is ``torque_nm`` (N, n); see the module docstring. ``ur_model_nm``: UR's model torque of the same
    samples; ``baseline_parameters``: :func:`~robot_dynamics_id.identification.baseline.fit_baseline`'s, from
    the training data; each is scored beside the model, with the per-joint ratio ours / theirs of the
    moving-sample RRE."""
    t = np.asarray(_get(recording, "time_s"), float)
    q = np.asarray(_get(recording, "q_rad"), float)
    qd_raw = _get(recording, "qd_rad_s")
    tau = np.asarray(torque_nm, float)
    if tau.shape != q.shape:
        raise ValueError(f"torque {tau.shape} and positions {q.shape} must have the same shape (N, n)")
    options = replace(preprocessing or PreprocessingOptions(), cutoff_hz=cutoff_hz, keep_all_samples=True)
    extra = {} if ur_model_nm is None else {"ur_model": np.asarray(ur_model_nm, float)}
    data = preprocess(t, q, tau, qd_rad_s=qd_raw, extra=extra, options=options)
    predicted, how = predict_samples(model, data, robot)

    n_rows, n = tau.shape
    rows = data.source_index
    stacked = [t[:, None], q, tau] + ([np.asarray(qd_raw, float)] if qd_raw is not None else []) + list(extra.values())
    finite = np.all(np.isfinite(np.hstack(stacked)), axis=1)
    status = np.where(finite, "short_segment", "non_finite").astype(object)
    status[rows] = np.where(data.edge, "edge", "scored")
    status = status.astype(str)

    def full(values: np.ndarray) -> np.ndarray:
        out = np.full((n_rows, n), np.nan)
        out[rows] = values
        return out

    measured_f, predicted_full = full(data.torque), full(predicted)
    moving = np.zeros((n_rows, n), bool)
    moving[rows] = moving_samples(data.qd_rad_s, moving_threshold_rad_s)
    scored = status == "scored"
    if not scored.any():
        raise ValueError("no sample of the recording could be scored (all at filter edges, in short segments or "
                         "non-finite); record longer contiguous data")
    names = list(robot.joint_names)
    metrics = torque_metrics(predicted_full[scored], measured_f[scored], names, moving=moving[scored])
    metrics.update(prediction=how, cutoff_hz=float(data.cutoff_hz), moving_threshold_rad_s=moving_threshold_rad_s,
                   sample_status={s: int(np.sum(status == s)) for s in STATUSES})
    def compare(key: str, theirs: np.ndarray) -> None:
        other = torque_metrics(theirs[scored], measured_f[scored], names, moving=moving[scored])
        metrics[key] = other
        with np.errstate(divide="ignore", invalid="ignore"):
            metrics[f"moving_rre_ratio_to_{key}"] = [
                float(a / b) for a, b in zip(metrics["moving_rre_percent"], other["moving_rre_percent"])]

    ur_full = baseline_full = None
    if ur_model_nm is not None:
        ur_full = full(data.extra["ur_model"])
        compare("ur_model", ur_full)
    if baseline_parameters is not None:
        baseline_full = full(predict_baseline(baseline_parameters, data, robot))
        compare("baseline", baseline_full)
    return ValidationResult(joint_names=tuple(names), time_s=t, measured_nm=tau, measured_filtered_nm=measured_f,
                            predicted_nm=predicted_full, status=status, moving=moving, metrics=metrics,
                            prediction=how, ur_model_nm=ur_full, baseline_nm=baseline_full)


def doubtful_fits(metrics: dict, joint_names, what: str, *, training: bool = False) -> list[str]:
    """Problems that make a result doubtful: a fit below :data:`DOUBTFUL_FIT_PERCENT` on any joint of held-out
    data, or below :data:`DOUBTFUL_TRAINING_FIT_PERCENT` on the data the model was fitted to (``training``)."""
    fits = np.asarray(metrics.get("fit_percent") or [], float)
    bar = DOUBTFUL_TRAINING_FIT_PERCENT if training else DOUBTFUL_FIT_PERCENT
    bad = np.flatnonzero(~(fits >= bar))
    if not bad.size:
        return []
    listed = ", ".join(f"{joint_names[j]} {fits[j]:.0f} %" for j in bad)
    if training:
        return [f"{what} fit is below zero ({listed}): on the very data it was fitted to, the model predicts these "
                "torques worse than their mean, so they do not fit the others' rigid-body model. Check these "
                "joints' drive gains (a digit or unit off?), the torque source and --robot (see the warnings)"]
    return [f"{what} fit is far below zero ({listed}): the model predicts these torques worse than their mean. "
            "Check that the torque source, drive gains and robot match those the model was identified with"]


def training_data_notes(trained_on: str | Path | None, validated_on: str | Path) -> list[str]:
    """A warning when a model is validated on the recording it was identified from (the same file or bag): the
    scores then show how well it fits its training data, not how it predicts."""
    if not trained_on or Path(trained_on).expanduser().resolve() != Path(validated_on).expanduser().resolve():
        return []
    return [f"validated on {validated_on}, the recording the model was identified from: the scores show how well "
            "it fits its training data, not how it predicts; validate on another run (issue 15's protocol: a "
            "different trajectory, e.g. rdi excite plan --kind point-to-point)"]


def speed_range_notes(model: DynamicModel, qd_rad_s: np.ndarray, joint_names) -> list[str]:
    """A note when a recording moves joints faster than their friction was identified over.

    Beyond ``friction.speed_range_rad_s`` (dynamics/friction.py) the friction law is extended by a stated
    rule, not measured: scores there test an extrapolation. A joint at more than
    :data:`SPEED_BEYOND_RANGE` x its range is named. A model without a recorded range (a file written before
    the range was recorded) is evaluated as fitted at every speed: a joint the recording moves past the speed
    where such a law stops rising (a negative quadratic or viscous term) gets a note."""
    friction = model.friction
    speed = np.abs(np.asarray(qd_rad_s, float))
    top = np.max(np.where(np.isfinite(speed), speed, 0.0), axis=0)
    turnover = friction.unbounded_turnover_rad_s()
    turns = np.flatnonzero(top > turnover)
    if turns.size:
        listed = "; ".join(f"{joint_names[j]} past {turnover[j]:.2f} rad/s (the recording: {top[j]:.2f})"
                           for j in turns)
        return [f"the model records no speed range for its friction (friction.speed_range_rad_s; a model file "
                f"written before it was recorded), and its law, evaluated as fitted at every speed, falls with speed "
                f"on {listed}: identify again to record the range"]
    limit = np.asarray(friction.speed_range_rad_s, float)
    fast = np.flatnonzero(np.isfinite(limit) & (top > SPEED_BEYOND_RANGE * limit))
    if not fast.size:
        return []
    listed = "; ".join(f"{joint_names[j]} {top[j]:.2f} rad/s, {top[j] / limit[j]:.1f}x its {limit[j]:.2f}"
                       for j in fast)
    return [f"these joints move faster than the speeds their friction was identified over "
            f"(friction.speed_range_rad_s): {listed}. Friction there is the law extended past its data "
            "(dynamics/friction.py), so the scores at those speeds test an extrapolation. To predict such motion, "
            "identify from a training run that reaches these speeds (rdi excite plan --velocity-scale)"]


def median_temperatures_c(joint_temperature_c) -> list[float] | None:
    """Each joint's median temperature over a recording (degrees C, 0.1), None when it holds none."""
    if joint_temperature_c is None:
        return None
    values = np.asarray(joint_temperature_c, float)
    if not np.isfinite(values).any():
        return None
    return [round(float(v), 1) for v in np.nanmedian(values, axis=0)]


def temperature_notes(model: DynamicModel, joint_temperature_c, joint_names) -> list[str]:
    """A note when the recording's joints are warmer or colder than in the training run by more than
    :data:`TEMPERATURE_NOTE_C` (both medians; model.yaml ``provenance.identified_from.joint_temperature_c``).

    A strain-wave joint's friction falls as it warms (the grease thins; e.g. Simoni et al., "Modelling the
    temperature in joint friction of industrial manipulators", Robotica, doi:10.1017/S0263574717000509): the
    model's friction holds at the temperatures it was identified at."""
    trained = (model.provenance.get("identified_from") or {}).get("joint_temperature_c")
    now = median_temperatures_c(joint_temperature_c)
    if trained is None or now is None or len(trained) != len(now):
        return []
    delta = np.asarray(now) - np.asarray(trained, float)
    far = np.flatnonzero(np.abs(delta) > TEMPERATURE_NOTE_C)
    if not far.size:
        return []
    listed = "; ".join(f"{joint_names[j]} {now[j]:.1f} degC ({delta[j]:+.1f} from {float(trained[j]):.1f})"
                       for j in far)
    return [f"the joints are at other temperatures than in the training run: {listed}. Joint friction changes with "
            "temperature (less friction when warm), and the model's was identified at the training run's: "
            "friction errors in these scores may be that, not the model. Identify from a run at the working "
            "temperature (after the arm has run for a while), and validate at the same"]


def validation_notes(model: DynamicModel, qd_rad_s: np.ndarray, joint_names, *, trained_on: str | Path | None,
                     validated_on: str | Path, joint_temperature_c=None) -> list[str]:
    """What a score on this recording does not show: the training data again (:func:`training_data_notes`),
    speeds past the friction's identified range (:func:`speed_range_notes`), joints at other temperatures than
    in training (:func:`temperature_notes`)."""
    return (training_data_notes(trained_on, validated_on) + speed_range_notes(model, qd_rad_s, joint_names)
            + temperature_notes(model, joint_temperature_c, joint_names))
