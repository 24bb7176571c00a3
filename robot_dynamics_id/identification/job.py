"""Identification and validation as jobs on files: what ``rdi identify``, ``rdi validate`` and the
identifier node run.

Data in: a rosbag2 bag (directory, or a single .mcap/.db3 file) or a ur_rtde CSV
recording. Torque source, selectable:

* ``current``: motor current (A) x drive gain (Nm/A), gains from ``drive_gains``;
* ``target_moment``: the controller's model torque (RTDE target_moment; excludes friction);
* ``effort``: a torque topic/column (our ur_interface's JointState.effort in Nm, or the
  CSV's ``actual_current_as_torque``).

Outputs: ``model.yaml``, ``model.urdf``, ``metrics.json``, PNG plots (identify);
``metrics.json`` and ``predictions.csv`` (validate).
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..io.model_file import DynamicModel
from ..robots.model import RobotModel, load_robot

__all__ = ["TORQUE_SOURCES", "load_recording", "run_drive_gains", "run_identify", "run_validate", "torque_data"]

TORQUE_SOURCES = ("auto", "current", "target_moment", "effort")
METHODS = ("consistent", "wls", "ols", "irls")


def load_recording(path: str | Path, *, robot: RobotModel, ur_driver_topics: bool = False):
    """Read a bag or a ur_rtde CSV into a :class:`~robot_dynamics_id.io.recording.Recording`."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data {path} does not exist: give a rosbag2 bag directory or a ur_rtde CSV file")
    joint_names = tuple(robot.joint_names)
    if path.is_file() and path.suffix.lower() in (".csv", ".txt"):
        from ..io.ur_csv import read_ur_csv

        return read_ur_csv(path, joint_names=joint_names)
    from ..io.bag_reader import BagTopics, read_bag

    topics = BagTopics.ur_driver() if ur_driver_topics else BagTopics()
    return read_bag(path, joint_names=joint_names, topics=topics)


def torque_data(recording, *, torque_source: str = "auto", drive_gains_nm_per_a=None) -> tuple[dict, str]:
    """(recording-like dict with ``effort_nm`` in Nm, description of the torque source)."""
    if torque_source not in TORQUE_SOURCES:
        raise ValueError(f"torque source {torque_source!r}: choose one of {', '.join(TORQUE_SOURCES)}")
    available = {k: getattr(recording, k, None) for k in ("current_a", "target_moment_nm", "effort_nm")}
    source = torque_source
    if source == "auto":
        if available["current_a"] is not None and drive_gains_nm_per_a is not None:
            source = "current"
        elif available["effort_nm"] is not None:
            source = "effort"
        elif available["target_moment_nm"] is not None:
            source = "target_moment"
        else:
            raise ValueError("the data hold no torque: no joint effort, no target moment, and motor currents "
                             "need --drive-gains")
    key = {"current": "current_a", "target_moment": "target_moment_nm", "effort": "effort_nm"}[source]
    values = available[key]
    if values is None:
        have = [k for k, v in available.items() if v is not None] or ["nothing"]
        raise ValueError(f"torque source {source!r} needs {key}, but the data hold only {', '.join(have)}; "
                         "choose another --torque-source")
    if source == "current":
        if drive_gains_nm_per_a is None:
            raise ValueError("torque source 'current' needs the drive gains (Nm/A per joint): pass --drive-gains "
                             "k1,...,k6, or identify them with a known payload (identification/job.run_drive_gains)")
        gains = np.asarray(drive_gains_nm_per_a, float)
        if gains.shape != (values.shape[1],) or np.any(gains <= 0):
            raise ValueError(f"--drive-gains needs {values.shape[1]} positive values, got {gains.tolist()}")
        values = values * gains
        label = f"motor current x drive gains {gains.tolist()} Nm/A"
    else:
        label = {"target_moment": "target moment (controller model torque, excludes friction)",
                 "effort": "joint effort (torque, Nm)"}[source]
    data = {"time_s": recording.time_s, "q_rad": recording.q_rad, "qd_rad_s": recording.qd_rad_s,
            "effort_nm": values}
    return data, label


def run_identify(data_path: str | Path, *, robot: str, out_dir: str | Path, torque_source: str = "auto",
                 drive_gains_nm_per_a=None, method: str = "consistent", ur_driver_topics: bool = False,
                 validation_path: str | Path | None = None, progress: bool = True, plots: bool = True,
                 friction_model: str = "auto") -> dict:
    """Identify from a file, write the report folder, and return a summary dict."""
    from .pipeline import IdentificationOptions, identify, validate
    from .report import write_report

    if method not in METHODS:
        raise ValueError(f"method {method!r}: choose one of {', '.join(METHODS)}")
    rm = load_robot(robot)
    t0 = time.perf_counter()
    recording = load_recording(data_path, robot=rm, ur_driver_topics=ur_driver_topics)
    data, label = torque_data(recording, torque_source=torque_source, drive_gains_nm_per_a=drive_gains_nm_per_a)
    options = IdentificationOptions(
        estimator=method, torque_source="effort", progress=progress, friction_model=friction_model,
        drive_gains_nm_per_a=None if drive_gains_nm_per_a is None else np.asarray(drive_gains_nm_per_a, float),
        provenance={"data": str(Path(data_path).resolve()), "torque": label, "robot": str(robot),
                    "samples": int(recording.n_samples), "duration_s": float(recording.duration_s),
                    "warnings": list(getattr(recording, "warnings", ()) or ())})
    t_read = time.perf_counter() - t0
    result = identify(data, rm, options)
    validation = None
    if validation_path is not None:
        vrec = load_recording(validation_path, robot=rm, ur_driver_topics=ur_driver_topics)
        vdata, _ = torque_data(vrec, torque_source=torque_source, drive_gains_nm_per_a=drive_gains_nm_per_a)
        validation = validate(result.model, vdata, rm, options, cutoff_hz=result.data.cutoff_hz)
    paths = write_report(result, out_dir, robot=rm, validation_metrics=validation, plots=plots)
    return {
        "model": str(paths["model"]),
        "out_dir": str(Path(out_dir)),
        "fit_percent": result.metrics["fit_percent"],
        "validation_fit_percent": None if validation is None else validation["fit_percent"],
        "physically_consistent": bool(np.all(result.physically_consistent_links)),
        "friction_terms": list(result.model.friction.terms),
        "physically_consistent_links": result.physically_consistent_links.tolist(),
        "condition_number": float(result.condition_number),
        "torque_source": label,
        "read_s": t_read,
        "identify_s": float(sum(result.timings_s.values())),
        "warnings": list(getattr(recording, "warnings", ()) or ()),
    }


def run_drive_gains(without_payload_path: str | Path, with_payload_path: str | Path, *, robot: str,
                    payload_mass_kg: float, payload_com_m, payload_inertia_about_com_kgm2=None,
                    ur_driver_topics: bool = False) -> dict:
    """Drive gains (Nm/A) from two recordings of the same excitation with motor currents: without and
    with a known payload at the flange (mass kg, CoM and inertia about it in tool0, m and kg m^2).

    Returns a JSON-ready dict: ``drive_gains_nm_per_a``, ``std_nm_per_a``, ``relative_std``, the
    cut-off and Stribeck velocities used. Pass the gains to :func:`run_identify` (``--drive-gains``).
    """
    from .drive_gains import identify_drive_gains_from_recordings

    rm = load_robot(robot)
    recordings = []
    for path in (without_payload_path, with_payload_path):
        rec = load_recording(path, robot=rm, ur_driver_topics=ur_driver_topics)
        if getattr(rec, "current_a", None) is None:
            raise ValueError(f"{path} holds no motor currents; drive gains need current_a in both recordings")
        recordings.append(rec)
    estimate = identify_drive_gains_from_recordings(
        rm, recordings[0], recordings[1], payload_mass_kg=payload_mass_kg, payload_com_m=payload_com_m,
        payload_inertia_about_com_kgm2=payload_inertia_about_com_kgm2)
    return {"drive_gains_nm_per_a": estimate.gains_nm_per_a.tolist(),
            "std_nm_per_a": estimate.gains_std_nm_per_a.tolist(),
            "relative_std": estimate.relative_std.tolist(),
            "cutoff_hz": estimate.cutoff_hz,
            "stribeck_velocity_rad_s": None if estimate.stribeck_velocity_rad_s is None
            else estimate.stribeck_velocity_rad_s.tolist(),
            "residual_rms_a": estimate.residual_rms_a.tolist()}


def run_validate(model_path: str | Path, data_path: str | Path, *, out_dir: str | Path, torque_source: str = "auto",
                 drive_gains_nm_per_a=None, robot: str | None = None, ur_driver_topics: bool = False) -> dict:
    """Predict torques of another recording with a model; write metrics.json and predictions.csv (Nm)."""
    from .metrics import torque_metrics
    from .pipeline import IdentificationOptions, predict_preprocessed, prepare

    model = DynamicModel.load(model_path)
    rm = load_robot(robot or model.robot)
    gains = drive_gains_nm_per_a
    if gains is None and torque_source in ("current", "auto"):
        gains = model.drive_gains_nm_per_a  # the model carries the gains it was identified with
    recording = load_recording(data_path, robot=rm, ur_driver_topics=ur_driver_topics)
    data, label = torque_data(recording, torque_source=torque_source, drive_gains_nm_per_a=gains)
    cutoff = (model.provenance.get("preprocessing") or {}).get("cutoff_hz")
    options = IdentificationOptions(torque_source="effort")
    if cutoff:
        options = replace(options, preprocessing=replace(options.preprocessing, cutoff_hz=float(cutoff)))
    prepared = prepare(data, rm, options)
    predicted = predict_preprocessed(model, prepared, robot=rm)
    metrics = torque_metrics(predicted, prepared.torque, rm.joint_names)
    metrics["torque_source"] = label
    metrics["model"] = str(Path(model_path).resolve())
    metrics["data"] = str(Path(data_path).resolve())
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics, indent=2, default=_json_default))
    n = rm.n_joints
    with open(out / "predictions.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["time_s"] + [f"measured_{j}" for j in range(n)] + [f"predicted_{j}" for j in range(n)])
        for t, meas, pred in zip(prepared.time_s, prepared.torque, predicted):
            writer.writerow([f"{t:.6f}"] + [f"{v:.6f}" for v in meas] + [f"{v:.6f}" for v in pred])
    return metrics


def _json_default(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
