"""``rdi validate --collision-thresholds``: the collision observer's thresholds from a collision-free recording.

Runs the observer (control/collision.py) of the model on the recording's motor currents, sample by
sample as on the robot, and writes per-joint, per-speed-band thresholds into the model file
(``collision_thresholds``), where ur_interface and collision_monitor read them.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

__all__ = ["add_collision_arguments", "measure_collision_thresholds", "recording_rate_hz",
           "report_collision_thresholds"]

#: the rates UR controllers stream at; a recording within 2 % of one is taken to be at it
_UR_RATES_HZ = (125.0, 500.0)
#: a threshold above this fraction of the joint's rated torque is refused: such a residual on collision-free data
#: is an unmodelled tool, another arm or a model that does not fit, and the detector would miss real collisions
MAX_THRESHOLD_OF_RATED = 0.2


def add_collision_arguments(parser: argparse.ArgumentParser) -> None:
    from ..control.collision import DEFAULT_MARGIN, DEFAULT_QUANTILE

    group = parser.add_argument_group("collision thresholds (the data must be collision-free and hold motor currents)")
    group.add_argument("--collision-thresholds", action="store_true",
                       help="measure the collision observer's residual on DATA and write thresholds into MODEL")
    group.add_argument("--collision-gain", type=float, metavar="PER_S",
                       help="observer gain K_O, 1/s (default: 50 at 500 Hz, 31.25 at 125 Hz)")
    group.add_argument("--collision-quantile", type=float, default=DEFAULT_QUANTILE,
                       help=f"quantile of |residual| per joint and speed band (default {DEFAULT_QUANTILE})")
    group.add_argument("--collision-margin", type=float, default=DEFAULT_MARGIN,
                       help=f"threshold = quantile x (1 + margin) (default {DEFAULT_MARGIN})")


def check_collision_arguments(args: argparse.Namespace) -> None:
    """The collision options, checked before anything is computed or written (ValueError naming the flag)."""
    if not getattr(args, "collision_thresholds", False):
        return
    if not 0.5 <= args.collision_quantile <= 1.0:
        raise ValueError(f"--collision-quantile {args.collision_quantile:g} must be in [0.5, 1] (default 0.999)")
    if not args.collision_margin >= 0:
        raise ValueError(f"--collision-margin {args.collision_margin:g} must be >= 0 (threshold = quantile x "
                         "(1 + margin); default 1)")
    gain = args.collision_gain
    if gain is not None and not gain > 0:
        raise ValueError(f"--collision-gain {gain:g} must be > 0 1/s (default: 50 at 500 Hz, 31.25 at 125 Hz)")


def recording_rate_hz(time_s: np.ndarray) -> float:
    """The recording's sample rate: 125 or 500 Hz when within 2 % of it, else the median one."""
    dt = np.diff(np.asarray(time_s, float))
    dt = dt[dt > 0]
    if dt.size == 0:
        raise ValueError("the recording has fewer than two samples")
    rate = 1.0 / float(np.median(dt))
    for nominal in _UR_RATES_HZ:
        if abs(rate - nominal) <= 0.02 * nominal:
            return nominal
    return rate


def measure_collision_thresholds(model_path, data_path, *, out_dir=None, robot: str | None = None,
                                 ur_driver_topics: bool = False, read=None,
                                 gain_per_s: float | None = None, quantile: float | None = None,
                                 margin: float | None = None, drive_gains_nm_per_a=None, payload=None):
    """Thresholds of ``model_path``'s observer on the collision-free ``data_path``; written into the model file
    (and ``out_dir/collision_thresholds.json`` when given). Returns the :class:`CollisionThresholds`.

    The observer turns currents into torques with the model file's drive gains, on the robot as here:
    ``drive_gains_nm_per_a`` (what ``rdi validate --drive-gains`` scored with) must be those gains, or the
    thresholds would belong to another torque scale; ValueError naming the fix otherwise.

    ``read``: how to read the recording (identification/job.ReadOptions; default: from ``ur_driver_topics``).
    ``payload``: the tool mounted in the recording (io/payload_file.FlangePayload), carried by the observer and
    recorded with the thresholds; the nodes then refuse an observer that carries another tool.

    Refused (ValueError, nothing written): a threshold above MAX_THRESHOLD_OF_RATED of a joint's rated torque."""
    from ..control.collision import (DEFAULT_MARGIN, DEFAULT_QUANTILE, CollisionModelError, check_observer_gain,
                                     default_observer_gain_per_s, estimate_thresholds, observer_residuals)
    from ..identification.job import ReadOptions, load_recording
    from ..io.model_file import DynamicModel
    from ..robots.model import load_robot

    model = DynamicModel.load(model_path)
    if drive_gains_nm_per_a is not None:
        given = np.asarray(drive_gains_nm_per_a, float)
        stored = model.drive_gains_nm_per_a
        if stored is None or stored.shape != given.shape or not np.allclose(given, stored, rtol=1e-9, atol=0.0):
            held = "none" if stored is None else ", ".join(f"{v:g}" for v in stored)
            raise ValueError(
                f"--drive-gains {', '.join(f'{v:g}' for v in given)} differ from the gains in {model_path} ({held}): "
                "the collision observer uses the model file's gains on the robot, so its thresholds must be "
                "measured with them. Identify the model with these gains (rdi identify --drive-gains ...), or "
                "drop --drive-gains here")
    rm = load_robot(robot, gravity_m_s2=model.gravity_m_s2) if robot else model.kinematics()
    recording = load_recording(data_path, robot=rm, read=read or ReadOptions(ur_driver_topics=ur_driver_topics))
    if getattr(recording, "current_a", None) is None:
        raise ValueError(f"{data_path} holds no motor currents: the collision observer runs on currents x the "
                         "model's drive gains (record /motor_currents, or the RTDE actual_current)")
    rate = recording_rate_hz(recording.time_s)
    gain = default_observer_gain_per_s(rate) if gain_per_s is None else float(gain_per_s)
    try:
        check_observer_gain(gain, rate, fix="lower --collision-gain or leave it out")
    except CollisionModelError as exc:
        raise ValueError(f"--collision-gain: {exc}") from None
    tool_kg = 0.0 if payload is None else float(payload.mass_kg)
    tool_com = (0.0, 0.0, 0.0) if payload is None else tuple(float(c) for c in payload.com_m)
    residual = observer_residuals(model, recording.time_s, recording.q_rad, recording.qd_rad_s, recording.current_a,
                                  gain_per_s=gain, payload_kg=tool_kg, payload_com_m=tool_com)
    thresholds = estimate_thresholds(
        residual, recording.qd_rad_s, joint_names=model.joint_names, observer_gain_per_s=gain, rate_hz=rate,
        quantile=DEFAULT_QUANTILE if quantile is None else float(quantile),
        margin=DEFAULT_MARGIN if margin is None else float(margin),
        provenance={"data": str(Path(data_path).resolve()), "duration_s": float(recording.duration_s),
                    "torque": "motor current x the model's drive gains", "payload_kg": tool_kg,
                    "payload_com_m": list(tool_com)})
    _check_thresholds_useful(thresholds, rm, margin)
    replace(model, collision_thresholds=thresholds.to_dict()).save(model_path)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "collision_thresholds.json").write_text(json.dumps(thresholds.to_dict(), indent=2))
    return thresholds


def _check_thresholds_useful(thresholds, robot, margin: float | None) -> None:
    """ValueError when a threshold is so large that the detector could not see a collision (module constant)."""
    worst = thresholds.threshold_nm.max(axis=1) / np.asarray(robot.torque_limit_nm, float)
    j = int(np.argmax(worst))
    if worst[j] <= MAX_THRESHOLD_OF_RATED:
        return
    why = (f"--collision-margin {margin:g} is large (default 1)" if margin is not None and margin > 3 else
           "a tool the model does not carry (mount none, or pass its payload file: --payload), another arm's model "
           "or a model that does not fit these data (see the fit above)")
    raise ValueError(f"collision threshold of {thresholds.joint_names[j]} would be "
                     f"{thresholds.threshold_nm[j].max():.3g} Nm, {100 * worst[j]:.0f} % of the {robot.name}'s rated "
                     f"{robot.torque_limit_nm[j]:g} Nm: a detector that misses collisions. Cause: {why}. No thresholds "
                     "written")


def report_collision_thresholds(args: argparse.Namespace) -> None:
    """What ``rdi validate --collision-thresholds`` runs and prints."""
    import sys

    from ..io.model_file import DynamicModel
    from ..io.payload_file import load_payload_file
    from .identify import parse_gains, read_options

    model = DynamicModel.load(args.model)
    identified_from = str((model.provenance or {}).get("data") or "")
    if identified_from and Path(identified_from).resolve() == Path(args.data).resolve():
        print(f"warning: {args.data} is the recording the model was identified from: the residual is smallest on "
              "it, so these thresholds are tighter than on new motion (false alarms); measure them on another "
              "collision-free recording", file=sys.stderr)
    earlier = (model.collision_thresholds or {}).get("provenance") or {}
    th = measure_collision_thresholds(args.model, args.data, out_dir=args.out, robot=args.robot,
                                      read=read_options(args),
                                      drive_gains_nm_per_a=parse_gains(args.drive_gains, args.robot),
                                      gain_per_s=args.collision_gain, quantile=args.collision_quantile,
                                      margin=args.collision_margin,
                                      payload=None if args.payload is None else load_payload_file(args.payload))
    if earlier:
        print(f"note: replaced the thresholds measured on {earlier.get('data', 'another recording')}",
              file=sys.stderr)
    edges = th.velocity_edges_rad_s
    bands = [f"<{edges[0]:g}"] + [f"{a:g}-{b:g}" for a, b in zip(edges[:-1], edges[1:])] + [f">{edges[-1]:g}"]
    print(f"collision thresholds (Nm) at {th.rate_hz:g} Hz, observer gain {th.observer_gain_per_s:g} 1/s, "
          f"{th.quantile:g} quantile x {1 + th.margin:g}, by |qd| band (rad/s) {', '.join(bands)}:")
    for name, row in zip(th.joint_names, th.threshold_nm):
        print(f"  {name}: " + ", ".join(f"{v:.3f}" for v in row))
    print(f"wrote them into {args.model}")
