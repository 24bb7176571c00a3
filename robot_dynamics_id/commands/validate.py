"""``rdi validate``: predict torques of another recording with a model; metrics.json + predictions.csv."""

from __future__ import annotations

import argparse

from ._collision_thresholds import add_collision_arguments, report_collision_thresholds
from .identify import add_data_arguments, parse_gains

COMMAND = "validate"
HELP = "score a model on other data: writes DIR/metrics.json and DIR/predictions.csv (Nm)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model.yaml written by rdi identify")
    parser.add_argument("--data", required=True, help="rosbag2 bag or ur_rtde CSV to predict")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--robot", help="override the model's robot (name or URDF path)")
    add_data_arguments(parser)
    add_collision_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..identification.job import run_validate

    metrics = run_validate(args.model, args.data, out_dir=args.out, torque_source=args.torque_source,
                           drive_gains_nm_per_a=parse_gains(args.drive_gains), robot=args.robot,
                           ur_driver_topics=args.ur_driver_topics, driver_effort=args.driver_effort)
    print("fit per joint (%): " + ", ".join(f"{v:.1f}" for v in metrics["fit_percent"]))
    print("RMS error per joint (Nm): " + ", ".join(f"{v:.3f}" for v in metrics["rms_nm"]))
    print(f"wrote {args.out}/metrics.json and {args.out}/predictions.csv")
    if args.collision_thresholds:
        report_collision_thresholds(args)
    return 0
