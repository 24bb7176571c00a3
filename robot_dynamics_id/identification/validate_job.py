"""``rdi validate`` as a job on files: score a model on another recording (identification/job.py reads and
checks the data the same way for identify).

The torque scored is the one the model was identified from (model.yaml ``provenance.identified_from``) unless
told otherwise; the data are checked against the model's robot as identify checks them; the result is written
into a staging folder that becomes ``--out`` only when complete, and a doubtful one exits
:data:`~.job.EXIT_DOUBTFUL`. Outputs: ``metrics.json`` and ``predictions.csv`` (every recording sample).
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from ..dynamics.drive import check_drive_gains, gain_spread_warnings
from ..io.model_file import DynamicModel
from ..io.payload_file import load_payload_file, model_with_payload, payload_notes
from ..robots.model import same_robot
from .data_checks import DataCheckError, check_joint_count, mount_problems
from .job import (VALIDATE_TORQUE_SOURCES, ReadOptions, _check_cancel, _checked_signal, _load_robot,
                  _method_and_source, _ur_model, load_recording)
from .metrics import MOVING_THRESHOLD_RAD_S, scoring_cutoff_hz
from .output_dir import check_output_dir, staged_output
from .torque_source import TORQUE_SOURCES, TorqueSourceError, select_torque, torque_holdings

__all__ = ["run_validate"]


def _validation_torque(model: DynamicModel, torque_source: str, gains_given) -> tuple[str, object, list[str]]:
    """(source, gains, notes) validate uses: the model's own record unless told otherwise."""
    record = model.provenance.get("identified_from") or {}
    notes: list[str] = []
    recorded_gains = record.get("drive_gains_nm_per_a")
    source = torque_source
    if source == "model":
        source = record.get("torque_source")
        if source not in TORQUE_SOURCES:
            source = "auto"
            notes.append("the model does not record the torque source it was identified from (an older file): "
                         "validating with --torque-source auto")
    gains = gains_given
    if gains is None:
        gains = recorded_gains if recorded_gains is not None else model.drive_gains_nm_per_a
    elif recorded_gains is not None and not np.allclose(np.asarray(gains, float), recorded_gains, rtol=1e-6):
        notes.append(f"--drive-gains differ from the gains the model was identified with {recorded_gains}: "
                     "measured and predicted torques may be on different scales")
    return source, gains, notes


def _validation_signal(recording, source: str, gains, recorded: str | None, *, from_model: bool):
    """The torque validate scores on; when the model's own source is missing from the data, the refusal says so
    and names the options that score on another source."""
    try:
        return select_torque(recording, source, gains)
    except TorqueSourceError as exc:
        if not from_model or recorded not in TORQUE_SOURCES:
            raise
        other = ("--torque-source effort" if recorded == "current" else
                 "--torque-source current --drive-gains K0,...,K5")
        raise TorqueSourceError(
            f"the model was identified from the {recorded} torque (model.yaml), but the data hold "
            f"{torque_holdings(recording)}. Validate on a recording with that torque, or score on another source "
            f"with {other} (the two may be on different scales: the fit then shows that too)") from exc


def run_validate(model_path: str | Path, data_path: str | Path, *, out_dir: str | Path, torque_source: str = "model",
                 drive_gains_nm_per_a=None, robot: str | None = None, ur_driver_topics: bool = False,
                 read: ReadOptions | None = None, tool_frame: str | None = None, skip_robot_check: bool = False,
                 compare_ur_model: bool = False, moving_threshold_rad_s: float = MOVING_THRESHOLD_RAD_S,
                 cutoff_hz: float | None = None, payload: str | Path | None = None,
                 cancel: threading.Event | None = None) -> dict:
    """Score a model on another recording; write metrics.json and predictions.csv (every sample, Nm).

    ``cutoff_hz``: low-pass of measurement and model inputs (default: metrics.scoring_cutoff_hz, 10 Hz).
    ``payload``: ``rdi payload``'s payload.yaml, added to the model's last link (a run with it mounted).
    Returns the metrics with ``status`` ('ok' or 'doubtful'), ``problems`` and ``warnings``."""
    from .report import write_metrics, write_predictions
    from .validation import doubtful_fits, validate_recording, validation_notes

    _method_and_source("consistent", torque_source, VALIDATE_TORQUE_SOURCES)
    read = read or ReadOptions(ur_driver_topics=ur_driver_topics)
    out = check_output_dir(out_dir, inputs=[data_path, model_path], command="validate")
    model = DynamicModel.load(model_path)
    record = model.provenance.get("identified_from") or {}
    if robot is not None and not same_robot(robot, model.robot):
        raise DataCheckError(f"--robot {robot} contradicts the model, which was identified for {model.robot}: drop "
                             f"--robot (the model's robot is used) or validate a model identified for {robot}")
    payload_used = None
    if payload is not None:
        flange = load_payload_file(payload)
        model, payload_used = model_with_payload(model, flange), flange
    rm = _load_robot(model.robot, tool_frame or record.get("tool_frame", "tool0"), model.gravity_m_s2)
    if model.n_joints != rm.n_joints:
        raise DataCheckError(f"the model has {model.n_joints} joints but its robot {model.robot} has {rm.n_joints}")
    source, gains, notes = _validation_torque(model, torque_source, drive_gains_nm_per_a)
    if gains is not None:
        gains = check_drive_gains(gains, rm.n_joints, what="--drive-gains" if drive_gains_nm_per_a is not None
                                  else "the model's drive gains")
    recording = load_recording(data_path, robot=rm, read=read)
    check_joint_count(recording.n_joints, rm, what=f"the data {data_path}")
    notes += validation_notes(model, recording.qd_rad_s, rm.joint_names, trained_on=record.get("data"),
                              validated_on=data_path, joint_temperature_c=recording.joint_temperature_c)
    signal = _validation_signal(recording, source, gains, record.get("torque_source"),
                                from_model=torque_source == "model")
    if record.get("torque_source") in TORQUE_SOURCES and signal.source != record["torque_source"]:
        notes.append(f"scored on the {signal.source} torque, but the model was identified from the "
                     f"{record['torque_source']} torque (model.yaml): the two may be on different scales (a drive "
                     "gain error scales one and not the other), so the fit may look worse or better than it is")
    trained = (model.provenance.get("preprocessing") or {}).get("cutoff_hz")
    cutoff = cutoff_hz if cutoff_hz is not None else scoring_cutoff_hz(1.0 / recording.sample_period_s,
                                                                       float(trained) if trained else None)
    checked = rm if payload_used is None else rm.with_flange_payload(payload_used.mass_kg, payload_used.com_m,
                                                                     payload_used.inertia_about_com_kgm2)
    # With a declared payload the likeliest cause comes first: it is not the one mounted (another arm's nominal
    # model that happens to fit the torques is the less likely story)
    unmounted = ("" if payload_used is None else f"the torques do not fit the arm with the declared payload ("
                 f"{payload_used.mass_kg:.3g} kg, --payload): is it the one mounted in these data? (without a "
                 "payload: validate them without --payload) If the payload is right: ")
    try:
        check_warnings, checks = _checked_signal(  # checked as the training data were (the model's cut-off)
            recording, checked, signal, float(trained) if trained else cutoff,
            label=f"the model's robot {model.robot}", robot_fix="validate a model identified for {robot}",
            skip_robot_check=skip_robot_check)
    except DataCheckError as exc:
        raise DataCheckError(f"{unmounted}{exc}") from None
    if unmounted and (checks["fits_other_robot"] or checks["doubtful_reason"]):
        check_warnings.insert(0, unmounted.split(" If the payload")[0])
    _check_cancel(cancel)
    ur = _ur_model(recording, signal, gains) if compare_ur_model else None
    result = validate_recording(model, recording, signal.torque_nm, rm, cutoff_hz=cutoff,
                                moving_threshold_rad_s=moving_threshold_rad_s, ur_model_nm=ur)
    metrics = dict(result.metrics)
    problems = doubtful_fits(metrics, list(rm.joint_names), "validation") + [
        f"{unmounted}{problem}" for problem in mount_problems(checks, rm, "the data")]
    if payload_used is not None:
        notes += payload_notes(payload_used, model_path)
    warnings = [*recording.warnings, *signal.notes, *notes, *check_warnings,
                *(gain_spread_warnings(gains, rm.joint_names) if drive_gains_nm_per_a is not None else [])]
    if result.prediction == "base parameters":
        warnings.append("the model's per-link parameters are not physically consistent: predicted with its "
                        "identified base parameters")
    metrics.update(status="doubtful" if problems else "ok", problems=problems, warnings=warnings,
                   torque_source=signal.description, torque=signal.provenance(), data_checks=checks,
                   model=str(Path(model_path).resolve()), data=str(Path(data_path).resolve()), out_dir=str(out),
                   payload=payload_used.describe() if payload_used is not None else None)
    with staged_output(out, command="validate") as stage:
        write_metrics(stage / "metrics.json", metrics)
        write_predictions(stage / "predictions.csv", result, recording.file_rows)
        _check_cancel(cancel)
    return metrics
