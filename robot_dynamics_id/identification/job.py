"""Identification as a job on files: what ``rdi identify`` and the identifier node run, and the reading and
checks ``rdi validate`` (identification/validate_job.py), ``rdi drive-gains`` and ``rdi payload`` share.

Data in: a rosbag2 bag (directory, or a single .mcap/.db3 file: our own topics,
the official UR driver's, or UR's RTDE_ROS2_Publisher's, io/ur_driver_bags.py) or
a ur_rtde CSV recording (:class:`ReadOptions`: topic names, what
``JointState.effort`` holds, NaN policy). The joint torque comes from the one rule of
identification/torque_source.py (``auto``: current x drive gains when the gains
are known, else a torque interface's effort, else refused naming
``--drive-gains``); model.yaml records it (``provenance.identified_from``) and
validation uses the same unless told otherwise.

Before anything is written: the output folder is checked
(identification/output_dir.py), the data are checked against the robot
(identification/data_checks.py: joint count, rating, torque scale against the
nominal model naming the likely robot, implausible gains, gravity-compensated
torque, the direction of gravity). A result is written into a staging folder
that becomes ``--out`` only when complete. A fit below zero on the training data or far below zero on other
data, identified masses no payload explains, torques whose gravity points elsewhere than the model's (the
mount), or a TCP pose of another arm, make the result *doubtful*: written, with ``status: doubtful`` and the
problems in metrics.json, and the commands exit non-zero (:data:`EXIT_DOUBTFUL`).

Outputs: ``model.yaml``, ``model.urdf`` (physically consistent models only),
``metrics.json``, ``summary.json``, ``predictions.csv`` (training data, every
sample), PNG plots (identify; ``validation_predictions.csv`` with ``--validate``);
``metrics.json`` and ``predictions.csv`` (validate).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..dynamics.base_parameters import InsufficientExcitationError
from ..dynamics.drive import check_drive_gains, gain_spread_warnings
from ..dynamics.friction import check_presliding_distances
from ..io.model_file import DynamicModel
from ..robots.model import RobotModel, load_robot
from ..progress import ProgressCallback, scaled
from .data_checks import (DataCheckError, check_joint_count, check_torque_fits_robot, loaded_arm_notes,
                          mass_warnings, mount_problems)
from .excitation_checks import consistent_fit_notes, excitation_checks, rate_notes, rate_problems
from .kinematic_check import check_tcp_pose_fits_robot
from .metrics import MOVING_THRESHOLD_RAD_S, scoring_cutoff_hz
from .output_dir import check_output_dir, staged_output
from .torque_source import TORQUE_SOURCES, TorqueSignal, select_torque, ur_model_torque

__all__ = ["EXIT_DOUBTFUL", "JOINT_STATES_EFFORT", "JobCancelled", "METHODS", "ReadOptions", "TOPIC_FIELDS",
           "TORQUE_SOURCES", "VALIDATE_TORQUE_SOURCES", "check_friction_model", "load_recording",
           "run_identify"]

METHODS = ("consistent", "wls", "ols", "irls")
#: validate's choices: 'model' = the torque source the model was identified from (the default)
VALIDATE_TORQUE_SOURCES = ("model", *TORQUE_SOURCES)
#: what JointState.effort holds (--joint-states-effort) -> the bag reader's name
JOINT_STATES_EFFORT = {"torque": "torque_nm", "current": "current_a", "current_as_torque": "current_as_torque_nm",
                       "ignore": "ignore"}
#: topics that can be renamed (--topic FIELD=NAME)
TOPIC_FIELDS = ("joint_states", "motor_currents", "target_currents", "target_moment", "wrench")
#: exit code of a command whose result was written but is doubtful (module doc)
EXIT_DOUBTFUL = 3


class JobCancelled(RuntimeError):
    """The job was cancelled (Ctrl-C, SIGTERM, the node's stop); nothing was left that looks complete."""


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How to read a recording: bag topics and meanings, NaN handling.

    ``JointState.effort`` has one option, ``joint_states_effort`` (``--joint-states-effort``). Unset, it is a
    joint torque for our own bags and motor current for the official UR driver's (``ur_driver_topics``), and
    the driver's is *checked* to be motor current from the data (io/ur_driver_bags.py: new firmware puts UR's
    gravity-compensated torque there; such a bag is refused naming the fix). Set, it is what the user states:
    ``current`` skips that check (the driver ran with ``use_currents_as_efforts: true``)."""

    #: the bag comes from the official UR driver (JointState.effort = motor current, checked, unless said otherwise)
    ur_driver_topics: bool = False
    #: what JointState.effort holds: 'torque', 'current', 'current_as_torque' (UR's gravity-compensated) or
    #: 'ignore'; None: the default of the bag's source (see the class docstring)
    joint_states_effort: str | None = None
    #: topic renames, FIELD -> topic (FIELD in TOPIC_FIELDS)
    topics: dict[str, str] = field(default_factory=dict)
    #: 'raise' (refuse NaN/inf samples) or 'drop' them (each drop reported)
    nan_policy: str = "raise"

    def __post_init__(self) -> None:
        if self.joint_states_effort is not None and self.joint_states_effort not in JOINT_STATES_EFFORT:
            raise ValueError(f"--joint-states-effort {self.joint_states_effort!r}: choose one of "
                             f"{', '.join(JOINT_STATES_EFFORT)}")
        unknown = sorted(set(self.topics) - set(TOPIC_FIELDS))
        if unknown:
            raise ValueError(f"--topic {unknown[0]}=...: unknown field; choose one of {', '.join(TOPIC_FIELDS)}")
        for name, topic in self.topics.items():
            if not str(topic).startswith("/"):
                raise ValueError(f"--topic {name}={topic}: a topic name starts with '/'")
        if self.nan_policy not in ("raise", "drop"):
            raise ValueError(f"--nan-policy {self.nan_policy!r}: choose raise or drop")

    def bag_topics(self):
        from ..io.bag_decode import BagTopics, JointVectorTopic

        base = BagTopics.ur_driver() if self.ur_driver_topics else BagTopics()
        changes: dict = {}
        if self.joint_states_effort is not None:
            changes["joint_states_effort"] = JOINT_STATES_EFFORT[self.joint_states_effort]
        for name, topic in self.topics.items():
            changes[name] = JointVectorTopic(topic) if name in ("motor_currents", "target_currents",
                                                                 "target_moment") else topic
        return replace(base, **changes)

    @property
    def check_effort(self) -> bool:
        """The official driver's effort, read as motor current by default, is checked from the data unless the
        user stated what it holds."""
        return self.joint_states_effort is None

    def describe(self) -> dict:
        return {"ur_driver_topics": self.ur_driver_topics, "joint_states_effort": self.joint_states_effort,
                "topics": dict(self.topics), "nan_policy": self.nan_policy}


def load_recording(path: str | Path, *, robot: RobotModel, ur_driver_topics: bool = False,
                   read: ReadOptions | None = None):
    """Read a bag or a ur_rtde CSV into a :class:`~robot_dynamics_id.io.recording.Recording`.

    Bags go through :func:`~robot_dynamics_id.io.ur_driver_bags.read_robot_bag`: UR's RTDE_ROS2_Publisher
    topics are recognised by name, the official driver's /joint_states (``read.ur_driver_topics``) have their
    effort checked to be motor current (unless ``read.joint_states_effort`` states it), anything else is read
    with this package's topics (renamed by ``read.topics``)."""
    read = read or ReadOptions(ur_driver_topics=ur_driver_topics)
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data {path} does not exist: give a rosbag2 bag directory or a ur_rtde CSV file")
    joint_names = tuple(robot.joint_names)
    if path.is_file() and path.suffix.lower() in (".csv", ".txt"):
        from ..io.ur_csv import read_ur_csv

        if len(joint_names) != 6:
            raise DataCheckError(f"a ur_rtde CSV holds 6 joints but {robot.name} has {len(joint_names)}: pass the "
                                 "robot the data were recorded on (--robot)")
        rec = read_ur_csv(path, joint_names=joint_names, nan_policy=read.nan_policy)
        if read.topics or read.joint_states_effort or read.ur_driver_topics:
            rec = rec.with_warnings("topic options (--topic, --joint-states-effort, --ur-driver-topics) apply to "
                                    "bags only; ignored for a CSV")
        return rec
    from ..io.ur_driver_bags import read_robot_bag

    rec = read_robot_bag(path, robot, topics=read.bag_topics(), ur_driver_topics=read.ur_driver_topics,
                         check_effort=read.check_effort, nan_policy=read.nan_policy)
    stated = bool(read.topics or read.joint_states_effort)
    if stated and rec.source is not None and "RTDE_ROS2_Publisher" in rec.source.storage:
        rec = rec.with_warnings("read from UR's RTDE_ROS2_Publisher topics: --topic and --joint-states-effort apply "
                                "to /joint_states and this package's topics; ignored")
    return rec


def _load_robot(robot: str, tool_frame: str, gravity_m_s2=None) -> RobotModel:
    rm = load_robot(robot, tool_frame=tool_frame, gravity_m_s2=gravity_m_s2)
    if rm.tool_frame != tool_frame and not rm.tool_frame.endswith(tool_frame):
        raise ValueError(f"--tool-frame {tool_frame}: the built-in {rm.name} model ends at {rm.tool_frame}; a "
                         "tool frame applies to a URDF given with --urdf")
    return rm


def check_friction_model(text: str, n_joints: int | None = None) -> str:
    """``text`` if it is a friction model spec (``auto``, terms for every joint, or one spec per joint; with
    ``n_joints`` the count is checked too), else ValueError naming the known terms."""
    from ..dynamics.friction import parse_terms

    text = str(text).strip()
    if text == "auto":
        return text
    specs = text.split(",")
    for spec in specs:
        parse_terms(spec)
    if n_joints is not None and len(specs) not in (1, n_joints):
        raise ValueError(f"friction model {text!r} names {len(specs)} joint models but the robot has {n_joints} "
                         "joints; give one spec for all joints or one per joint")
    return text


def _check_cancel(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise JobCancelled("cancelled before the result was complete; nothing was written")


def _method_and_source(method: str, torque_source: str, choices=TORQUE_SOURCES) -> None:
    if method not in METHODS:
        raise ValueError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    if torque_source not in choices:
        raise ValueError(f"torque source {torque_source!r}: choose one of {', '.join(choices)}")


def _checked_signal(recording, robot: RobotModel, signal: TorqueSignal, cutoff_hz: float | None, *, label: str,
                    robot_fix: str, skip_robot_check: bool, data=None) -> tuple[list[str], dict]:
    """Data checks on a recording's torque (joint count done; ``data``: the signal already preprocessed):
    returns (warnings, check summary)."""
    from .preprocessing import PreprocessingOptions, preprocess

    if data is None:
        data = preprocess(recording.time_s, recording.q_rad, signal.torque_nm, qd_rad_s=recording.qd_rad_s,
                          options=PreprocessingOptions(cutoff_hz=cutoff_hz))
    # the kinematics first (torques hardly show them, and their scale depends on the gains): the torque check names it
    pose_warnings, pose = ([], None) if getattr(recording, "tcp_pose", None) is None else check_tcp_pose_fits_robot(
        robot, recording.q_rad, recording.tcp_pose, robot_label=label, robot_fix=robot_fix)
    warnings, scale = check_torque_fits_robot(robot, data.q_rad, data.qd_rad_s, data.qdd_rad_s2, data.torque,
                                              source=signal.source, drive_gains_nm_per_a=signal.drive_gains_nm_per_a,
                                              robot_label=label, robot_fix=robot_fix,
                                              skip_robot_check=skip_robot_check,
                                              tcp_pose=pose)
    summary = {"torque_scale_vs_nominal": scale.scale if np.isfinite(scale.scale) else None,
               "checked_joints": np.flatnonzero(scale.checked).tolist(),
               "gravity_coefficient": [None if not np.isfinite(v) else float(v) for v in scale.gravity_coefficient],
               "gravity_angle_deg": float(scale.gravity_angle_deg) if np.isfinite(scale.gravity_angle_deg) else None,
               "gravity_residual_ratio": (float(scale.gravity_residual_ratio)
                                          if np.isfinite(scale.gravity_residual_ratio) else None),
               "mount_differs": scale.mount_differs, "fits_other_robot": scale.fits_other_robot,
               "doubtful_reason": scale.doubtful_reason}
    if pose is not None:
        summary["tcp_pose"] = pose
    return [*warnings, *pose_warnings, *rate_notes(recording.sample_period_s)], summary


def gap_notes(data, preprocessing) -> list[str]:
    """What the timestamps' gaps did to the training data (preprocessing module doc, step 1)."""
    if not data.n_gaps:
        return []
    period_ms = 1e3 * data.full_rate_period_s
    bridged = f"; {data.n_bridged_gaps} shorter one(s) bridged" if data.n_bridged_gaps else ""
    bridge_ms = 1e3 * min(preprocessing.max_bridged_gap_s, 0.1 / data.cutoff_hz)
    return [f"{data.n_gaps} gap(s) in the timestamps (steps over {preprocessing.gap_factor:g}x the "
            f"{period_ms:.3g} ms period, longer than {bridge_ms:.3g} ms) split the recording into "
            f"{data.n_segments} kept segment(s), each losing its filter edges: "
            f"{data.summary()['duration_s']:.1f} s kept{bridged}. Dropped samples or a paused recording: record "
            "again without pauses if the fit is short of data"]


def _comparison(metrics: dict, key: str = "ur_model") -> dict:
    """The moving-sample RRE of ours and of the other model (``key``: ur_model, baseline), per joint, and
    their ratio."""
    return {"moving_rre_percent": metrics["moving_rre_percent"],
            key: {"moving_rre_percent": metrics[key]["moving_rre_percent"]},
            f"moving_rre_ratio_to_{key}": metrics[f"moving_rre_ratio_to_{key}"]}


def _baseline_warning(metrics: dict, names) -> list[str]:
    """A warning naming the joints where the plain least-squares baseline predicts the held-out data better."""
    ratio = np.asarray(metrics["moving_rre_ratio_to_baseline"], float)
    worse = np.flatnonzero(ratio > 1.0)
    if not worse.size:
        return []
    listed = ", ".join(f"{names[j]} {metrics['moving_rre_percent'][j]:.2f} % vs "
                       f"{metrics['baseline']['moving_rre_percent'][j]:.2f} %" for j in worse)
    return [f"on the validation data the plain least-squares baseline predicts better than the model on {listed} "
            "(moving-sample RRE): the model misses something this arm does. Try --friction-model with more terms "
            "(see metrics.json friction_model), a longer or richer excitation, or --method wls to see whether "
            "the physical constraints cost it"]


def _ur_model(recording, signal: TorqueSignal, gains) -> np.ndarray:
    return ur_model_torque(recording, signal.drive_gains_nm_per_a if signal.drive_gains_nm_per_a is not None
                           else gains)[0]


def baseline_comparison(result, recording, options, validation_recording, validation_torque_nm: np.ndarray,
                        robot: RobotModel, *, moving_threshold_rad_s: float = MOVING_THRESHOLD_RAD_S):
    """The model and the plain least-squares baseline scored on a validation recording (a ValidationResult
    whose metrics hold both), by issue 15's protocol: the baseline fitted on the training ``recording`` low-passed
    at :func:`~robot_dynamics_id.identification.baseline.comparison_cutoff_hz`, both scored on the validation
    recording at that cut-off against the same measured torque. ``result``/``options``: the identification's."""
    from .baseline import comparison_cutoff_hz, fit_baseline
    from .pipeline import prepare
    from .validation import validate_recording

    cutoff = comparison_cutoff_hz(result.data.sample_rate_hz * result.data.decimation, result.data.cutoff_hz)
    baseline = fit_baseline(prepare(recording, robot, replace(options, preprocessing=replace(
        options.preprocessing, cutoff_hz=cutoff))), robot)
    return validate_recording(result.model, validation_recording, validation_torque_nm, robot, cutoff_hz=cutoff,
                              preprocessing=options.preprocessing, moving_threshold_rad_s=moving_threshold_rad_s,
                              baseline_parameters=baseline)


def run_identify(data_path: str | Path, *, robot: str, out_dir: str | Path, torque_source: str = "auto",
                 drive_gains_nm_per_a=None, method: str = "consistent", ur_driver_topics: bool = False,
                 validation_path: str | Path | None = None, progress: ProgressCallback | None = None,
                 plots: bool = True, read: ReadOptions | None = None, tool_frame: str = "tool0",
                 skip_robot_check: bool = False, compare_ur_model: bool = False,
                 moving_threshold_rad_s: float = MOVING_THRESHOLD_RAD_S, friction_model: str = "auto",
                 cancel: threading.Event | None = None, gravity_m_s2=None, compare_baseline: bool = False,
                 presliding_distance_rad=None) -> dict:
    """Identify from a file, write the report folder, and return a summary dict (``status`` 'ok' or 'doubtful').

    ``presliding_distance_rad``: the Dahl presliding distance of the joints whose friction has presliding, rad,
    one value or one per joint (None: searched per joint, identification/friction_fit.py).

    ``gravity_m_s2``: gravitational acceleration in the base frame (the mount; None: a floor mount).
    ``compare_baseline``: also fit the plain least-squares baseline (identification/baseline.py) on the
    training data and score it beside the model on the validation recording (which it needs), both low-passed
    at :func:`~robot_dynamics_id.identification.baseline.comparison_cutoff_hz`; a joint where the baseline
    predicts better is a warning.

    ``progress(fraction, stage)`` is told the stages as they run: read, preprocess, the identification's
    own stages, check fit, validation, write report."""
    from .baseline import BASELINE_DESCRIPTION
    from .pipeline import IdentificationOptions, identify, prepare
    from .report import write_metrics, write_predictions, write_report
    from .validation import doubtful_fits, median_temperatures_c, validate_recording, validation_notes

    _method_and_source(method, torque_source)
    if compare_baseline and validation_path is None:
        raise ValueError("--compare-baseline scores the plain least-squares baseline on held-out data (on the "
                         "training data it would only show that it fits what it was fitted to): give --validate "
                         "DATA, a second recording")
    read = read or ReadOptions(ur_driver_topics=ur_driver_topics)
    out = check_output_dir(out_dir, inputs=[data_path, validation_path], command="identify")
    rm = _load_robot(robot, tool_frame, gravity_m_s2)
    friction_model = check_friction_model(friction_model, rm.n_joints)  # before any data is read
    presliding_distance_rad = check_presliding_distances(presliding_distance_rad, rm.n_joints,
                                                         what="presliding distance (--presliding-distance)")
    gains = None if drive_gains_nm_per_a is None else check_drive_gains(drive_gains_nm_per_a, rm.n_joints,
                                                                         what="--drive-gains")
    progress = progress or None  # False (an older caller's "no bar") means none
    _report(progress, 0.0, "read")
    t0 = time.perf_counter()
    recording = load_recording(data_path, robot=rm, read=read)
    check_joint_count(recording.n_joints, rm)
    signal = select_torque(recording, torque_source, gains)
    warnings = [*recording.warnings, *signal.notes,
                *(gain_spread_warnings(gains, rm.joint_names) if gains is not None else [])]
    # A URDF robot is named by its absolute path in model.yaml, so validate finds the same kinematics.
    robot_ref = rm.name if rm.description is not None else str(Path(robot).expanduser().resolve())
    identified_from = {"data": str(Path(data_path).resolve()), "robot": robot_ref, "tool_frame": tool_frame,
                       "gravity_m_s2": rm.gravity_m_s2.tolist(), "read": read.describe()}
    temperatures = median_temperatures_c(recording.joint_temperature_c)
    if temperatures is not None:  # friction depends on them (validation.temperature_notes)
        identified_from["joint_temperature_c"] = temperatures
    options = IdentificationOptions(
        estimator=method, torque_source=signal.source, drive_gains_nm_per_a=gains,
        friction_model=friction_model, presliding_distance_rad=presliding_distance_rad,
        prior=DynamicModel.from_robot_model(rm, robot=robot_ref),
        provenance={"data": str(Path(data_path).resolve()), "torque": signal.description, "robot": str(robot),
                    "samples": int(recording.n_samples), "duration_s": float(recording.duration_s),
                    "warnings": list(warnings), "identified_from": identified_from})
    t_read = time.perf_counter() - t0
    _check_cancel(cancel)
    _report(progress, 0.1, "preprocess")
    data = prepare(recording, rm, options)
    warnings += gap_notes(data, options.preprocessing)
    check_warnings, checks = _checked_signal(recording, rm, signal, data.cutoff_hz, label=f"--robot {robot}",
                                             robot_fix="pass --robot {robot}", skip_robot_check=skip_robot_check,
                                             data=data)
    warnings += check_warnings + loaded_arm_notes(checks, rm)
    _check_cancel(cancel)
    try:
        result = identify(recording, rm, options, preprocessed=data, progress=scaled(progress, 0.15, 0.7))
    except InsufficientExcitationError as exc:  # a damaged or cut-off file looks like a poor excitation: say so
        if not recording.warnings:
            raise
        raise InsufficientExcitationError(f"{str(exc).rstrip('.')}. What the reader noticed: "
                                          f"{'; '.join(recording.warnings)}",
                                          exc.unidentifiable) from None
    names = list(rm.joint_names)
    consistent = bool(np.all(result.physically_consistent_links))
    warnings += mass_warnings(result.model.link_mass_kg, rm, consistent=consistent)
    if not consistent:
        warnings.append(f"the per-link model is not physically consistent (links "
                        f"{np.flatnonzero(~result.physically_consistent_links).tolist()}): predictions use the "
                        "identified base parameters and no URDF is written; a controller or simulator needs "
                        "--method consistent")
    negative_mu = np.flatnonzero(result.model.friction.non_physical_load)
    if negative_mu.size:
        warnings.append(f"the load-dependent friction coefficient of {', '.join(names[j] for j in negative_mu)} is "
                        "negative (friction falling as the transmitted torque grows: not physical, an unconstrained "
                        "fit); --method consistent bounds it >= 0, or fix the terms with --friction-model")
    excitation_warnings, problems = excitation_checks(result.condition_number, recording.warnings, friction_terms=(
        result.model.friction.terms), condition_number_p2=result.condition_number_p2, qd_rad_s=recording.qd_rad_s,
        friction_chosen=friction_model == "auto")
    warnings += excitation_warnings
    if method == "consistent":
        warnings += consistent_fit_notes(result.model.provenance["training_moving_rms_nm"], names)
    problems += rate_problems(recording.sample_period_s)
    problems += doubtful_fits(result.metrics, names, "training", training=True) + mount_problems(
        checks, rm, "training data")
    if not skip_robot_check:
        problems += mass_warnings(result.model.link_mass_kg, rm, consistent=consistent, doubtful=True)
    _check_cancel(cancel)
    _report(progress, 0.7, "check fit")
    ur_training = _ur_model(recording, signal, gains) if compare_ur_model else None
    training = validate_recording(result.model, recording, signal.torque_nm, rm,
                                  cutoff_hz=scoring_cutoff_hz(1.0 / recording.sample_period_s, result.data.cutoff_hz),
                                  preprocessing=options.preprocessing, moving_threshold_rad_s=moving_threshold_rad_s,
                                  ur_model_nm=ur_training)
    validation = validation_at_model_cutoff = None
    if validation_path is not None:
        _report(progress, 0.8, "validation")
        vrec = load_recording(validation_path, robot=rm, read=read)
        check_joint_count(vrec.n_joints, rm, what=f"the validation data {validation_path}")
        vsignal = select_torque(vrec, signal.source, gains)
        vwarn, vchecks = _checked_signal(vrec, rm, vsignal, result.data.cutoff_hz, label=f"--robot {robot}",
                                   robot_fix="pass --robot {robot}", skip_robot_check=skip_robot_check)
        warnings += [f"validation data: {w}" for w in (*vrec.warnings, *vwarn, *validation_notes(
            result.model, vrec.qd_rad_s, names, trained_on=data_path, validated_on=validation_path,
            joint_temperature_c=vrec.joint_temperature_c))]
        validation = validate_recording(result.model, vrec, vsignal.torque_nm, rm,
                                        cutoff_hz=scoring_cutoff_hz(1.0 / vrec.sample_period_s, result.data.cutoff_hz),
                                        preprocessing=options.preprocessing,
                                        moving_threshold_rad_s=moving_threshold_rad_s,
                                        ur_model_nm=_ur_model(vrec, vsignal, gains) if compare_ur_model else None)
        problems += doubtful_fits(validation.metrics, names, "validation")
        # the same run scored at the model's own cut-off: what the identification's filter lets it claim
        at_model = validate_recording(result.model, vrec, vsignal.torque_nm, rm, cutoff_hz=result.data.cutoff_hz,
                                      preprocessing=options.preprocessing,
                                      moving_threshold_rad_s=moving_threshold_rad_s).metrics
        validation_at_model_cutoff = {k: at_model[k] for k in ("cutoff_hz", "fit_percent", "moving_rre_percent",
                                                               "rms_nm")}
        if compare_baseline:
            compared = baseline_comparison(result, recording, options, vrec, vsignal.torque_nm, rm,
                                           moving_threshold_rad_s=moving_threshold_rad_s)
            warnings += _baseline_warning(compared.metrics, names)
        problems += mount_problems(vchecks, rm, "validation data")
    _check_cancel(cancel)
    status = "doubtful" if problems else "ok"
    summary = {
        "status": status, "problems": problems,
        "model": str(out / "model.yaml"),
        "out_dir": str(out),
        # every sample of the training recording with the given moving threshold: what `rdi validate` on the
        # same file reports (the fit on the filtered, decimated samples the estimator saw is beside it)
        "fit_percent": training.metrics["fit_percent"],
        "moving_rre_percent": training.metrics.get("moving_rre_percent"),
        "rms_nm": training.metrics["rms_nm"],
        "cutoff_hz": training.metrics["cutoff_hz"],
        "fit_percent_identification_samples": result.metrics["fit_percent"],
        "validation_fit_percent": None if validation is None else validation.metrics["fit_percent"],
        "validation_moving_rre_percent": None if validation is None else validation.metrics["moving_rre_percent"],
        "validation_rms_nm": None if validation is None else validation.metrics["rms_nm"],
        "validation_at_model_cutoff": validation_at_model_cutoff,
        "physically_consistent": consistent,
        "friction_terms": list(result.model.friction.terms),
        "physically_consistent_links": result.physically_consistent_links.tolist(),
        "condition_number": float(result.condition_number),
        "torque_source": signal.description,
        "gravity_m_s2": rm.gravity_m_s2.tolist(),
        "drive_gains_nm_per_a": None if gains is None else gains.tolist(),
        "identified_from": result.model.provenance.get("identified_from"),
        "read_s": t_read,
        "identify_s": float(sum(result.timings_s.values())),
        "warnings": warnings,
    }
    if compare_ur_model:
        summary["ur_model_comparison"] = {"training": _comparison(training.metrics), **(
            {} if validation is None else {"validation": _comparison(validation.metrics)})}
    if compare_baseline:
        summary["baseline_comparison"] = {"baseline": BASELINE_DESCRIPTION, "cutoff_hz": compared.metrics["cutoff_hz"],
                                          "validation": _comparison(compared.metrics, "baseline")}
    _report(progress, 0.9, "write report")
    # model.yaml says so too: export and the controller read the model, not metrics.json
    result.model.provenance.update(status=status, problems=problems)
    with staged_output(out, command="identify") as stage:
        write_report(result, stage, robot=rm, validation_metrics=None if validation is None else validation.metrics,
                     plots=plots, extra={"status": status, "problems": problems, "warnings": warnings,
                                         "data_checks": checks, "training_every_sample": training.metrics,
                                         "validation_at_model_cutoff": validation_at_model_cutoff})
        write_predictions(stage / "predictions.csv", training, recording.file_rows)
        if validation is not None:
            write_predictions(stage / "validation_predictions.csv", validation, vrec.file_rows)
        if compare_baseline:
            write_predictions(stage / "baseline_comparison.csv", compared, vrec.file_rows)
        write_metrics(stage / "summary.json", summary)
        _check_cancel(cancel)
    _report(progress, 1.0, "write report")
    return summary


def _report(progress: ProgressCallback | None, fraction: float, stage: str) -> None:
    if progress is not None:
        progress(fraction, stage)
