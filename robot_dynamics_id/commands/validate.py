"""``rdi validate``: score a model on another recording; metrics.json + predictions.csv at every sample."""

from __future__ import annotations

import argparse
import sys

from ._collision_thresholds import add_collision_arguments, check_collision_arguments, report_collision_thresholds
from .identify import (
    EXIT_CODES,
    add_data_arguments,
    format_rre,
    parse_gains,
    print_ur_comparison,
    read_options,
    report_doubtful,
)

COMMAND = "validate"
HELP = ("score a model on other data (with the torque source it was identified from): writes DIR/metrics.json and "
        "DIR/predictions.csv (every sample, Nm)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument("--model", required=True, help="model.yaml written by rdi identify")
    parser.add_argument("--data", required=True, help="rosbag2 bag or ur_rtde CSV to predict")
    parser.add_argument("--out", required=True, help="output folder (new, empty or an earlier rdi result)")
    parser.add_argument("--robot", help="the robot the data come from; must be the model's (checked), default: "
                                        "the model's")
    parser.add_argument("--cutoff-hz", type=float, metavar="HZ",
                        help="zero-phase low-pass of the measured torque and the model's inputs, Hz (default: 10, "
                             "issue 15's scoring protocol; less on a recording slower than 25 Hz; never below the "
                             "cut-off the model was identified with)")
    parser.add_argument("--payload", metavar="PAYLOAD_YAML",
                        help="payload.yaml written by rdi payload: the data were recorded with it mounted, so it is "
                             "added to the model's last link (mass, CoM and, when determined, inertia in tool0)")
    add_data_arguments(parser, validate=True)
    add_collision_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from ..identification.job import EXIT_DOUBTFUL
    from ..identification.validate_job import run_validate

    check_collision_arguments(args)  # before the validation writes anything
    metrics = run_validate(args.model, args.data, out_dir=args.out, torque_source=args.torque_source,
                           drive_gains_nm_per_a=parse_gains(args.drive_gains, args.robot), robot=args.robot,
                           read=read_options(args), tool_frame=args.tool_frame,
                           skip_robot_check=args.skip_robot_check, compare_ur_model=args.compare_ur_model,
                           moving_threshold_rad_s=args.moving_threshold, cutoff_hz=args.cutoff_hz,
                           payload=args.payload)
    print(f"torque: {metrics['torque_source']}, low-passed at {metrics['cutoff_hz']:.3g} Hz; predicted with the "
          f"model's {metrics['prediction']}")
    if metrics.get("payload"):
        used = metrics["payload"]
        print(f"payload: {used['mass_kg']:.3f} kg at {[round(c, 4) for c in used['com_m']]} m in {used['frame']} "
              f"({used['inertia']}), from {used['file']}")
    print("fit per joint (%): " + ", ".join(f"{v:.1f}" for v in metrics["fit_percent"]))
    print("moving-sample RRE per joint (%): " + format_rre(metrics["moving_rre_percent"]))
    print("RMS error per joint (Nm): " + ", ".join(f"{v:.3f}" for v in metrics["rms_nm"]))
    print_ur_comparison(metrics, "against UR's model")
    counts = metrics["sample_status"]
    print(f"wrote {args.out}/metrics.json and {args.out}/predictions.csv ({sum(counts.values())} samples: "
          + ", ".join(f"{v} {k}" for k, v in counts.items() if v) + ")")
    if report_doubtful(metrics, "validate"):
        if args.collision_thresholds:
            print("rdi validate: collision thresholds NOT written: the validation is doubtful (thresholds from a "
                  "model that does not fit these data would be meaningless); fix the problems above first",
                  file=sys.stderr)
        return EXIT_DOUBTFUL
    if args.collision_thresholds:
        report_collision_thresholds(args)
    return 0
