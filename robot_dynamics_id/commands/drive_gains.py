"""``rdi drive-gains``: motor-current-to-torque gains from the same excitation without and with a known payload."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COMMAND = "drive-gains"
HELP = "identify drive gains (Nm/A) from two recordings: without and with a known payload at the flange"

EXIT_CODES = ("exit codes: 0 gains found and plausible; 1 refused (the message names the fix); 3 gains written but "
              "doubtful (no UR joint has such gains, or the two runs do not fit one arm with the declared payload: "
              "its CoM, --robot, or runs of different arms or rates; see 'problems')")


def _vector(text: str, n: int, name: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{name} {text!r}: give {n} comma-separated numbers") from None
    if len(values) != n:
        raise ValueError(f"{name} {text!r}: give {n} comma-separated numbers")
    return values


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument("--data", required=True, help="recording without payload (bag or ur_rtde CSV, with currents)")
    parser.add_argument("--payload-data", required=True,
                        help="a recording with the payload mounted (best the same excitation; another one that moves "
                             "every joint does too)")
    parser.add_argument("--payload-kg", type=float, required=True,
                        help="payload mass, kg (a point mass at its CoM; its error scales every gain alike and "
                             "cannot be seen in the data: weigh it)")
    parser.add_argument("--payload-com", default="0,0,0", metavar="X,Y,Z",
                        help="payload centre of mass in tool0, m (default 0,0,0: on the flange centre, which "
                             "leaves the last joint's gain unidentifiable)")
    parser.add_argument("--robot", default="ur3",
                        help="ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or a URDF path (default ur3)")
    parser.add_argument("--gravity", metavar="GX,GY,GZ",
                        help="gravitational acceleration in the base frame, m/s² (default 0,0,-9.81: a floor mount; "
                             "see rdi identify --gravity)")
    parser.add_argument("--ur-driver-topics", action="store_true",
                        help="bags from the official UR driver (JointState.effort = motor current, checked from the "
                             "data unless --joint-states-effort current states it)")
    parser.add_argument("--joint-states-effort", choices=("current",),
                        help="current: JointState.effort is motor current (A), without the data check (the driver "
                             "ran with use_currents_as_efforts: true)")
    parser.add_argument("--friction-model", default="auto", metavar="auto|TERMS",
                        help="joint friction of the fit, chosen on the run without the payload as by rdi identify "
                             "--friction-model (default auto)")
    parser.add_argument("--no-load-friction", action="store_true",
                        help="leave out the Coulomb term that grows with the joint's load (on by default: a payload "
                             "raises a real joint's friction)")
    parser.add_argument("--out", help="also write the result as JSON to this file (a folder: FOLDER/drive_gains.json); "
                                      "an existing file is replaced only when it is an earlier result, and a "
                                      "doubtful result never replaces a good one (it goes beside: NAME.doubtful.json)")


def is_gains_file(path: Path) -> bool:
    """Whether ``path`` is an earlier ``rdi drive-gains --out`` result (JSON with the gains and the inputs)."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "drive_gains_nm_per_a" in doc and "inputs" in doc


def _checked_payload(args: argparse.Namespace) -> list[float]:
    """The known payload's CoM (m), with its mass checked against the robot's rating (a unit slip: lb, g)."""
    from ..hardware.tool import MAX_TOOL_OFFSET_M
    from ..robots.description import ROBOT_NAMES, get_robot
    from ..robots.model import robot_key

    if not args.payload_kg > 0:
        raise ValueError(f"--payload-kg must be > 0, got {args.payload_kg}")
    rated = get_robot(args.robot).payload_kg if robot_key(args.robot) in ROBOT_NAMES else None
    if rated is not None and args.payload_kg > rated:
        raise ValueError(f"--payload-kg {args.payload_kg:g} exceeds the {args.robot}'s rated payload {rated:g} kg: "
                         "give the mass in kg (1 lb = 0.4536 kg, 350 g = 0.35 kg), or --robot the arm it was "
                         "recorded on")
    com = _vector(args.payload_com, 3, "--payload-com")
    if max(abs(v) for v in com) > MAX_TOOL_OFFSET_M:
        raise ValueError(f"--payload-com {args.payload_com}: more than {MAX_TOOL_OFFSET_M:g} m from the flange; "
                         "give it in metres (57 mm is 0.057)")
    return com


def run(args: argparse.Namespace) -> int:
    from ..identification.drive_gain_job import run_drive_gains
    from ..identification.job import EXIT_DOUBTFUL, ReadOptions
    from ..identification.output_dir import check_output_file, write_output_file
    from .identify import report_doubtful
    from ..robots.model import gravity_from_text

    com = _checked_payload(args)
    out = None if not args.out else check_output_file(
        args.out, inputs=(args.data, args.payload_data), default_name="drive_gains.json",
        earlier_result=is_gains_file, what="rdi drive-gains result")
    result = run_drive_gains(args.data, args.payload_data, robot=args.robot, payload_mass_kg=args.payload_kg,
                             payload_com_m=com,
                             read=ReadOptions(ur_driver_topics=args.ur_driver_topics,
                                              joint_states_effort=args.joint_states_effort),
                             gravity_m_s2=None if args.gravity is None else gravity_from_text(args.gravity),
                             friction_model=args.friction_model, load_friction=not args.no_load_friction)
    gains = result["drive_gains_nm_per_a"]
    print("drive gains (Nm/A): " + ",".join(f"{g:.4g}" for g in gains))
    print("relative std (%): " + ", ".join(f"{100 * s:.2f}" for s in result["relative_std"])
          + " (from the current noise: not counting an error in the payload's mass or CoM)")
    print("lack of fit (both runs' residual with one arm and the declared payload / each run's alone; ~1 when "
          "they agree): " + ", ".join(f"{v:.2f}" for v in result["lack_of_fit"]))
    if result["friction_terms"] is not None:
        print("friction per joint (family chosen on the run without the payload, load term on both): "
              + ", ".join(result["friction_terms"]))
    if out is not None:
        if result["status"] != "ok" and out.exists() and json.loads(out.read_text()).get("status") == "ok":
            out = out.with_name(f"{out.stem}.doubtful{out.suffix}")  # a doubtful result never replaces a good one
        print(f"wrote {write_output_file(out, json.dumps(result, indent=2) + chr(10))}")
    if report_doubtful(result, "drive-gains"):
        return EXIT_DOUBTFUL
    listed = ",".join(f"{g:.4g}" for g in gains)
    print(f"use them with: rdi identify --drive-gains {listed} (torque = current x gains)"
          + (f", or --drive-gains {out}" if out is not None else ""))
    return 0
