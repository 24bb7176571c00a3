"""``rdi drive-gains`` as a job: two recordings (without and with a known payload) -> drive gains, checked.

The estimate is identification/drive_gains.py's; this module reads the files, applies the one torque-source
rule (drive gains come from motor currents only) and judges the result: gains no UR joint can have, or two runs
that do not fit one arm with the declared payload (the lack of fit), make it *doubtful* (``rdi drive-gains``
exits :data:`~robot_dynamics_id.identification.job.EXIT_DOUBTFUL`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..dynamics.drive import PLAUSIBLE_DRIVE_GAIN_NM_PER_A, gain_spread_warnings
from ..robots.model import load_robot, same_robot
from .data_checks import check_joint_count
from .drive_gains import identify_drive_gains_from_recordings
from .kinematic_check import check_tcp_pose_fits_robot
from .job import ReadOptions, check_friction_model, load_recording
from .pipeline import IdentificationOptions
from .torque_source import motor_currents

__all__ = ["DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL", "DRIVE_GAIN_LACK_OF_FIT_WARN", "load_gains_file", "run_drive_gains"]

#: drive gains: the lack of fit (drive_gains.DriveGainEstimate.lack_of_fit) above which a joint is warned about,
#: and above which the result is doubtful. Correct inputs stay near 1; a payload CoM off by half, a loaded run of
#: another arm or --robot wrong give several times more, on plants with P2 friction and with the friction of real
#: joints (benchmarks/bench_drive_gains.py; the numbers in benchmarks/RESULTS.md)
DRIVE_GAIN_LACK_OF_FIT_WARN = 2.0
DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL = 3.0


def load_gains_file(path: str | Path, what: str = "--drive-gains", *, robot: str | None = None) -> list[float]:
    """The gains (Nm/A) of the JSON ``rdi drive-gains --out`` wrote; a doubtful result is refused, and so are
    gains calibrated on another arm than ``robot`` (when given: its ``inputs.robot``)."""
    import json

    try:
        doc = json.loads(Path(path).expanduser().read_text())
        gains = [float(g) for g in doc["drive_gains_nm_per_a"]]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{what} {path}: not a result of rdi drive-gains --out ({exc})") from None
    if doc.get("status") != "ok":
        raise ValueError(f"{what} {path}: the gains there are {doc.get('status')!r} (see its 'problems'): "
                         "calibrate again, or give the numbers yourself if you have checked them")
    theirs = (doc.get("inputs") or {}).get("robot") if isinstance(doc.get("inputs"), dict) else None
    if robot and theirs and not same_robot(str(theirs), str(robot)):
        raise ValueError(f"{what} {path}: the gains were calibrated as a {theirs} (its inputs.robot), but the arm "
                         f"here is {robot}: calibrate them with --robot {robot} (rdi drive-gains), or identify the "
                         f"{theirs}")
    return gains


def run_drive_gains(without_payload_path: str | Path, with_payload_path: str | Path, *, robot: str,
                    payload_mass_kg: float, payload_com_m, payload_inertia_about_com_kgm2=None,
                    ur_driver_topics: bool = False, read: ReadOptions | None = None, gravity_m_s2=None,
                    friction_model: str = "auto", load_friction: bool = True) -> dict:
    """Drive gains (Nm/A) from two recordings with motor currents (best of the same excitation): without and
    with a known payload at the flange (mass kg, CoM and inertia about it in tool0, m and kg m^2).

    Returns a JSON-ready dict: ``drive_gains_nm_per_a``, ``std_nm_per_a``, ``relative_std``, the
    cut-off and Stribeck velocities used, ``lack_of_fit`` per joint (drive_gains.DriveGainEstimate),
    ``status`` ('ok' or 'doubtful': gains no UR joint can have, or a lack of fit above
    :data:`DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL`), ``problems``, ``warnings`` and the ``inputs``.
    ``friction_model`` (as ``rdi identify --friction-model``) is chosen on the run without the payload;
    ``load_friction``: a Coulomb term that grows with the load (drive_gains.identify_drive_gains).
    Pass the gains to :func:`run_identify` (``--drive-gains``).
    """
    read = read or ReadOptions(ur_driver_topics=ur_driver_topics)
    rm = load_robot(robot, gravity_m_s2=gravity_m_s2)
    friction_model = check_friction_model(friction_model, rm.n_joints)  # before any data is read
    recordings = []
    for path in (without_payload_path, with_payload_path):
        rec = load_recording(path, robot=rm, read=read)
        check_joint_count(rec.n_joints, rm, what=str(path))
        motor_currents(rec, what=str(path))  # the one rule: drive gains come from motor currents only
        recordings.append(rec)
    if Path(without_payload_path).resolve() == Path(with_payload_path).resolve():
        raise ValueError(f"--data and --payload-data are the same recording ({without_payload_path}): give the run "
                         "without the payload and the run with it")
    estimate = identify_drive_gains_from_recordings(
        rm, recordings[0], recordings[1], payload_mass_kg=payload_mass_kg, payload_com_m=payload_com_m,
        payload_inertia_about_com_kgm2=payload_inertia_about_com_kgm2,
        options=IdentificationOptions(friction_model=friction_model), load_friction=load_friction)
    warnings = [*recordings[0].warnings, *recordings[1].warnings,
                *gain_spread_warnings(estimate.gains_nm_per_a, rm.joint_names, what="the identified drive gains")]
    problems = _kinematic_problems(rm, recordings, (without_payload_path, with_payload_path), warnings)
    lo, hi = PLAUSIBLE_DRIVE_GAIN_NM_PER_A
    outside = np.flatnonzero((estimate.gains_nm_per_a < lo) | (estimate.gains_nm_per_a > hi))
    if outside.size:
        listed = ", ".join(f"{rm.joint_names[j]} {estimate.gains_nm_per_a[j]:.4g}" for j in outside)
        problems.append(f"the identified drive gains are implausible ({listed} Nm/A; a UR joint's lie within "
                        f"{lo:g}-{hi:g} Nm/A): check the payload mass (kg), its CoM (m) and --robot (default ur3; "
                        f"this run: {rm.name})")
    lack = estimate.lack_of_fit
    apart = np.flatnonzero(lack > DRIVE_GAIN_LACK_OF_FIT_WARN)
    named = ", ".join(f"{rm.joint_names[j]} {lack[j]:.1f}x" for j in apart)
    if named:
        text = (f"the two runs do not fit one arm with the declared payload ({named} the residual of each run "
                "fitted alone): the payload's CoM or mass distribution (m, tool0; a point mass is assumed), "
                f"--robot (default ur3; this run: {rm.name}), or the runs differ (another arm or recording rate); "
                "friction the model lacks adds to it (the families fitted: 'friction_terms'). The reported std "
                "understates the gains' error")
        (problems if np.max(lack) > DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL else warnings).append(text)
    if not outside.size:
        problems += _nominal_scale_problems(rm, recordings[0], estimate.gains_nm_per_a, payload_mass_kg)
    return {"status": "doubtful" if problems else "ok", "problems": problems,
            "drive_gains_nm_per_a": estimate.gains_nm_per_a.tolist(),
            "std_nm_per_a": estimate.gains_std_nm_per_a.tolist(),
            "relative_std": estimate.relative_std.tolist(),
            "cutoff_hz": estimate.cutoff_hz,
            "stribeck_velocity_rad_s": None if estimate.stribeck_velocity_rad_s is None
            else estimate.stribeck_velocity_rad_s.tolist(),
            "residual_rms_a": estimate.residual_rms_a.tolist(),
            "lack_of_fit": lack.tolist(),
            "friction_terms": None if estimate.friction_terms is None else list(estimate.friction_terms),
            "load_coefficient": None if estimate.load_coefficient is None else estimate.load_coefficient.tolist(),
            "warnings": warnings,
            "inputs": {"data": str(Path(without_payload_path).resolve()),
                       "payload_data": str(Path(with_payload_path).resolve()), "robot": rm.name,
                       "payload_mass_kg": float(payload_mass_kg), "payload_com_m": np.asarray(payload_com_m,
                                                                                              float).tolist(),
                       "gravity_m_s2": rm.gravity_m_s2.tolist(), "friction_model": friction_model,
                       "load_friction": bool(load_friction)}}


def _nominal_scale_problems(rm, recording, gains, payload_mass_kg: float) -> list[str]:
    """The payload's mass scales every gain alike, which the two runs cannot show; the arm's own gravity can: the
    run without the payload, with these gains, must be the nominal model's torque within the data checks' band
    (identify refuses the gains later otherwise: a review's 1.2 kg for 2.4 halved every gain)."""
    from .job import _checked_signal
    from .torque_source import select_torque

    signal = select_torque(recording, "current", gains)
    _, summary = _checked_signal(recording, rm, signal, None, label=rm.name, robot_fix="--robot",
                                 skip_robot_check=False)
    scale = summary.get("torque_scale_vs_nominal")
    if scale is None or not summary.get("doubtful_reason"):
        return []
    return [f"with these gains the run without the payload is {scale:.2f}x the gravity torque of {rm.name}'s "
            f"nominal model: every gain is off by that factor. The payload's mass scales them all (--payload-kg "
            f"{payload_mass_kg:g}: weigh it, in kg), or the arm is not a {rm.name} (--robot)"]


def _kinematic_problems(rm, recordings, paths, warnings: list[str]) -> list[str]:
    """The TCP-pose check (kinematic_check.py) of each recording that holds one; its warnings are appended to
    ``warnings``. Currents cannot name the arm (the gains are what is sought), but the kinematics can: another
    arm's pose, a twin's included, makes the gains doubtful (the gains absorb the other arm's lever arms)."""
    problems = []
    for rec, path in zip(recordings, paths):
        if getattr(rec, "tcp_pose", None) is None:
            continue
        found, summary = check_tcp_pose_fits_robot(rm, rec.q_rad, rec.tcp_pose, robot_label=f"--robot {rm.name}",
                                                   robot_fix="pass --robot {robot}")
        warnings += [f"{path}: {w}" for w in found]
        if summary.get("fits_other_robot"):  # a twin too: its other link lengths scale the gains (UR3e as ur3: -12 %)
            problems.append(f"{path}: the recorded TCP pose is {summary['fits_other_robot']}'s, not {rm.name}'s "
                            f"(see the warning): pass --robot {summary['fits_other_robot']}")
    return problems
