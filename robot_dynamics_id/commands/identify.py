"""``rdi identify``: identify a physically consistent dynamic model (with friction) from a bag or CSV."""

from __future__ import annotations

import argparse
import json
import sys

COMMAND = "identify"
HELP = "identify the dynamics from a rosbag2 bag or a ur_rtde CSV; writes DIR/model.yaml and a report"


def parse_gains(text: str | None):
    """'10.0,10.7,...' -> list of floats (Nm/A), or None."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"--drive-gains {text!r}: give comma-separated numbers in Nm/A, e.g. 10,10,8,6,6,6") from None
    return values


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--drive-gains", metavar="K1,...,K6",
                        help="joint torque per motor current, Nm/A (needed for --torque-source current)")
    parser.add_argument("--torque-source", default="auto", choices=("auto", "current", "target_moment", "effort"),
                        help="torque from motor current x gain, RTDE target moment, or a torque topic/column "
                             "(auto: current if gains are given, else effort, else target moment)")
    parser.add_argument("--ur-driver-topics", action="store_true",
                        help="the bag was recorded from the official UR ROS 2 driver (JointState.effort = current)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="rosbag2 bag directory (or .mcap/.db3) or ur_rtde CSV file")
    parser.add_argument("--robot", default="ur3", help="ur3, ur3e, ur5e, ur10e (default ur3)")
    parser.add_argument("--urdf", help="a URDF file to use instead of a built-in robot")
    parser.add_argument("--out", required=True, help="output folder (model.yaml, model.urdf, metrics.json, plots)")
    parser.add_argument("--method", default="consistent", choices=("consistent", "wls", "ols", "irls"),
                        help="estimator (default: physically consistent)")
    parser.add_argument("--friction-model", default="auto", metavar="auto|TERMS",
                        help="joint friction: auto (default: per joint the family with the lowest held-out error "
                             "on the training data), or the terms for every joint: p2, p2+load, p2+poly, "
                             "p2+presliding, ... (any of load, poly, presliding after p2), or one such spec per "
                             "joint separated by commas")
    parser.add_argument("--validate", metavar="DATA", help="also score the model on another recording")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    add_data_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..identification.job import run_identify

    summary = run_identify(args.data, robot=args.urdf or args.robot, out_dir=args.out,
                           torque_source=args.torque_source, drive_gains_nm_per_a=parse_gains(args.drive_gains),
                           method=args.method, ur_driver_topics=args.ur_driver_topics,
                           friction_model=args.friction_model,
                           validation_path=args.validate, progress=not args.quiet, plots=not args.no_plots)
    fits = ", ".join(f"{v:.1f}" for v in summary["fit_percent"])
    print(f"model: {summary['model']}")
    print(f"fit per joint (%): {fits}")
    if summary["validation_fit_percent"] is not None:
        print("validation fit per joint (%): " + ", ".join(f"{v:.1f}" for v in summary["validation_fit_percent"]))
    print(f"friction per joint: {', '.join(summary['friction_terms'])}")
    print(f"physically consistent: {'yes' if summary['physically_consistent'] else 'NO'} "
          f"(links {summary['physically_consistent_links']})")
    print(f"torque: {summary['torque_source']}; identification {summary['identify_s']:.1f} s "
          f"(reading {summary['read_s']:.1f} s)")
    for w in summary["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    with open(f"{args.out}/summary.json", "w") as f:
        json.dump(summary, f, indent=2)
    return 0
