"""Payload identification as a job on files: what ``rdi payload`` and the identifier node's payload mode run.

Reads the identified arm model (model.yaml, identified *without* the payload)
and a recording with the payload mounted (bag or ur_rtde CSV), identifies the
payload (identification/payload.py) and writes ``payload.yaml``.

The torque rule: the payload is what the arm model does not explain, so the
torque must be measured as the arm model's was. ``torque_source='auto'`` takes
the arm model's source from its provenance (``identified_from.torque_source``:
motor current x the model's drive gains, or a torque interface's effort); another
explicit source is refused. The torque itself comes from the one rule of
identification/torque_source.py, the data are read as by ``rdi identify``
(:class:`~.job.ReadOptions`). RTDE's target
moment is refused: it is the controller's model torque *with the payload set on
the pendant*, so it can only echo that setting.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from ..io.model_file import DynamicModel, plain_for_yaml
from ..io.payload_file import DOUBTFUL_WARNINGS, PAYLOAD_SCHEMA, load_payload_file
from ..robots.model import load_robot, same_robot
from ..robots.priors import is_nominal_gains
from .data_checks import check_joint_count
from .job import JobCancelled, ReadOptions
from .kinematic_check import check_tcp_pose_fits_robot
from .output_dir import check_output_file, write_output_file
from .payload import PayloadEstimate, PayloadIdentificationError, identify_payload
from .torque_source import TorqueSourceError, select_torque, torque_holdings

__all__ = ["arm_torque_source", "run_payload"]

#: Warnings that make a payload estimate doubtful (rdi payload then exits 3); others are advice. One list, defined
#: beside the payload file reader, which flags the same warnings when it reads the file back.
DOUBTFUL = DOUBTFUL_WARNINGS
#: a mass below this fraction of the robot's rated payload is what an arm model's own errors make with nothing
#: mounted (a UR3 model, an empty flange: 6.5 g), not a payload to set
NOTHING_MOUNTED_FRACTION = 0.01
#: below this fraction of the rated payload a mass is noted (not doubtful): a light tool, or an empty flange seen
#: through an arm model with larger errors (the README's model, nominal drive gains: 107 g on a UR3)
LIGHT_PAYLOAD_FRACTION = 0.05
#: a joint of the arm (not the wrist) whose position spans more than this moved during the payload run, rad
ARM_JOINT_STILL_RAD = 0.02


#: how the ``provenance.torque`` label of files without ``identified_from`` begins, per torque source
_TORQUE_LABELS = (("motor current", "current"), ("joint torque (effort", "effort"), ("joint effort", "effort"),
                  ("ur's target moment", "target_moment"), ("target moment", "target_moment"))


def arm_torque_source(model: DynamicModel) -> str | None:
    """The torque source an identified model was fitted to ('current', 'effort', 'target_moment'), from
    its provenance (``identified_from``, else the older ``torque`` label); None when the file does not say."""
    provenance = model.provenance or {}
    recorded = (provenance.get("identified_from") or {}).get("torque_source")
    if recorded in ("current", "effort", "target_moment"):
        return recorded
    label = str(provenance.get("torque", "")).strip().lower()
    for prefix, source in _TORQUE_LABELS:
        if label.startswith(prefix):
            return source
    return None


def _torque_source(model: DynamicModel, requested: str) -> str:
    arm = arm_torque_source(model)
    if requested == "target_moment" or (requested == "auto" and arm == "target_moment"):
        raise PayloadIdentificationError(
            "torque source target_moment cannot identify a payload: RTDE's target moment is the controller's model "
            "torque with the payload set on the pendant, so it only echoes that setting. Record motor currents "
            "(identify the arm with --torque-source current) or a measured joint torque")
    if requested == "auto":
        return arm or "auto"
    if arm is not None and requested != arm:
        raise PayloadIdentificationError(
            f"the arm model was identified from the {arm} torque source, the payload data would use {requested}: "
            "the payload is what the arm model does not explain, so both must measure torque the same way. Use "
            f"--torque-source {arm} (or auto)")
    return requested


def run_payload(model_path: str | Path, data_path: str | Path, *, out_path: str | Path, torque_source: str = "auto",
                drive_gains_nm_per_a=None, robot: str | None = None, ur_driver_topics: bool = False,
                read: ReadOptions | None = None, cancel: threading.Event | None = None) -> tuple[PayloadEstimate, Path]:
    """Identify the payload of a recording with the arm model; write ``out_path`` (payload.yaml).

    ``read``: how to read the data (default: ``ReadOptions(ur_driver_topics=ur_driver_topics)``); ``cancel``
    set before the file is written: :class:`~.job.JobCancelled`, nothing written."""
    from .job import load_recording

    out = check_output_file(out_path, inputs=(model_path, data_path), default_name="payload.yaml",
                            earlier_result=_is_payload_file, what="payload file (rdi payload)")
    model = DynamicModel.load(model_path)
    inconsistent = np.flatnonzero(~model.is_physically_consistent())
    if inconsistent.size:  # rdi validate --payload and the controller refuse such a model with the payload too
        raise PayloadIdentificationError(
            f"the arm model's links {inconsistent.tolist()} are not physically consistent (identified with --method "
            f"{model.provenance.get('method', 'wls, ols or irls')}), so it predicts from base parameters, which "
            "cannot carry a payload on the flange: identify the arm with --method consistent (the default)")
    if robot is not None and not same_robot(robot, model.robot):
        raise PayloadIdentificationError(
            f"--robot {robot} contradicts the arm model, which was identified for {model.robot}: the payload is what "
            f"that model does not explain, so it needs the model's own robot. Drop --robot, or identify the arm as "
            f"{robot} first")
    rm = load_robot(robot, gravity_m_s2=model.gravity_m_s2) if robot else model.kinematics()
    source = _torque_source(model, torque_source)
    gains = model.drive_gains_nm_per_a if drive_gains_nm_per_a is None else np.asarray(drive_gains_nm_per_a, float)
    if (drive_gains_nm_per_a is not None and model.drive_gains_nm_per_a is not None
            and not np.allclose(gains, model.drive_gains_nm_per_a, rtol=1e-6)):
        raise PayloadIdentificationError(
            f"--drive-gains {', '.join(f'{g:g}' for g in gains)} differ from the gains the arm model was identified "
            f"with ({', '.join(f'{g:g}' for g in model.drive_gains_nm_per_a)} Nm/A): the payload is what the model "
            "does not explain, so its torque must be on the model's scale. Drop --drive-gains (the model's are used), "
            "or identify the arm again with the new gains")
    read = read or ReadOptions(ur_driver_topics=ur_driver_topics)
    recording = load_recording(data_path, robot=rm, read=read)
    check_joint_count(recording.n_joints, rm, what=f"the data {data_path}")
    try:
        signal = select_torque(recording, source, gains)
    except TorqueSourceError as exc:
        if source != "effort":
            raise
        raise PayloadIdentificationError(
            f"the arm model was identified from joint torques (effort: e.g. a bag whose /joint_states effort "
            f"ur_interface made from currents x its drive gains), but {data_path} holds {torque_holdings(recording)}: "
            "record the payload run the way the arm's was (a bag), or identify the arm from the motor currents "
            "(rdi identify --torque-source current --drive-gains ...) so that both are on one scale") from exc
    data = {"time_s": recording.time_s, "q_rad": recording.q_rad, "qd_rad_s": recording.qd_rad_s,
            "effort_nm": signal.torque_nm}
    estimate = identify_payload(data, model, rm, provenance={
        "arm_model": str(Path(model_path).resolve()), "data": str(Path(data_path).resolve()),
        "torque": signal.description, "identified_from": {**signal.provenance(), "read": read.describe()},
        "robot": str(robot or model.robot), "duration_s": float(recording.duration_s),
        "reader_warnings": list(getattr(recording, "warnings", ()) or ())})
    if cancel is not None and cancel.is_set():
        raise JobCancelled("cancelled before the payload was identified; nothing was written")
    notes = _arm_checks(estimate, rm, recording)
    if is_nominal_gains(model.drive_gains_nm_per_a, model.robot) and signal.source == "current":
        notes.append(f"the arm model was identified with {model.robot}'s nominal drive gains "
                     f"({', '.join(f'{g:g}' for g in model.drive_gains_nm_per_a)} Nm/A, assumed, not calibrated): the "
                     "payload mass scales with their error, which the std does not cover; calibrate them first (rdi "
                     "drive-gains) and identify the arm again")
    estimate = replace(estimate, warnings=estimate.warnings + tuple(notes))
    doubtful = is_doubtful(estimate)
    if doubtful and out.exists() and not load_payload_file(out).doubtful:
        out = out.with_name(f"{out.stem}.doubtful{out.suffix}")  # a doubtful result never replaces a good one
    content = estimate.to_dict()
    content = {"schema": content.pop("schema"), "status": "doubtful" if doubtful else "ok", **content}
    write_output_file(out, "# Payload identified by robot_dynamics_id (rdi payload); frame: tool0 (flange), SI "
                      "units\n" + yaml.safe_dump(plain_for_yaml(content), sort_keys=False))
    return estimate, out


def _is_payload_file(path: Path) -> bool:
    try:
        return (yaml.safe_load(path.read_text()) or {}).get("schema") == PAYLOAD_SCHEMA
    except (OSError, yaml.YAMLError, AttributeError):
        return False


def _arm_checks(estimate: PayloadEstimate, robot, recording) -> list[str]:
    """Doubtful-result warnings the payload's own fit cannot give: a mass beyond the robot's rated payload or
    below what an empty flange shows (a built-in robot), and a recorded TCP pose of another arm."""
    warnings = []
    rated = None if robot.description is None else robot.description.payload_kg
    if rated is not None and estimate.mass_kg > rated:
        warnings.append(f"the mass exceeds the {robot.name}'s rated payload ({estimate.mass_kg:.3g} > {rated:g} kg): "
                        "a recording of another arm, or torques on another scale than the arm model's (its drive "
                        "gains)")
    elif rated is not None and estimate.mass_kg < NOTHING_MOUNTED_FRACTION * rated:
        warnings.append(f"the mass is below {100 * NOTHING_MOUNTED_FRACTION:g} % of the {robot.name}'s rated "
                        f"payload ({1000 * estimate.mass_kg:.1f} g): is the payload mounted? With nothing on the "
                        "flange the arm model's own errors make such a mass; record the run with the payload on")
    elif rated is not None and estimate.mass_kg < LIGHT_PAYLOAD_FRACTION * rated:
        warnings.append(f"a light payload ({1000 * estimate.mass_kg:.0f} g, below {100 * LIGHT_PAYLOAD_FRACTION:g} % "
                        f"of the {robot.name}'s rated payload): if nothing is mounted, this is the arm model's own "
                        "error (its drive gains, most often), not a tool to set")
    q = getattr(recording, "q_rad", None)
    arm_span = np.ptp(q[:, :3], axis=0) if q is not None and q.shape[1] >= 6 else np.zeros(0)
    moved = [f"joint {j} ({arm_span[j]:.2f} rad)" for j in np.flatnonzero(arm_span > ARM_JOINT_STILL_RAD)]
    if moved:
        warnings.append(f"the base, shoulder or elbow moved during the payload run ({', '.join(moved)}): the arm "
                        "model's errors on those joints go into the payload, which the std does not cover; record "
                        "the wrist-only excitation (rdi excite plan --kind payload)")
    tcp_pose = getattr(recording, "tcp_pose", None)
    if tcp_pose is not None:
        _, summary = check_tcp_pose_fits_robot(robot, recording.q_rad, tcp_pose, robot_label=robot.name,
                                               robot_fix="{robot}")
        if summary.get("fits_other_robot"):
            warnings.append(f"the recorded TCP pose is {summary['fits_other_robot']}'s, not {robot.name}'s: the "
                            f"payload of another arm's run, seen through the {robot.name} model")
    return warnings


def is_doubtful(estimate: PayloadEstimate) -> bool:
    """Mass or centre of mass not determined by the data (the inertia alone is advice, not doubt)."""
    return any(w.startswith(DOUBTFUL) for w in estimate.warnings)
