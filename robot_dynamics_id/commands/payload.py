"""``rdi payload``: identify what is mounted on the flange (mass, CoM, inertia) with the identified arm model.

Exit status: 0, the estimate written; 3, written (``status: doubtful``) but the mass
or centre of mass is not determined by the data, the mass is beyond the robot's
rated payload or below what an empty flange shows, or the recording's TCP pose is
another arm's (see the warnings); 1, an error. A doubtful result never replaces a
good payload file: it goes beside it (``payload.doubtful.yaml``).
"""

from __future__ import annotations

import argparse
import sys

COMMAND = "payload"
HELP = "identify the payload (mass, CoM, inertia in tool0) from a recording with it mounted, using the arm model"


def configure(parser: argparse.ArgumentParser) -> None:
    from .identify import add_data_arguments

    parser.add_argument("--model", required=True, help="the arm's model.yaml (rdi identify, without the payload)")
    parser.add_argument("--data", required=True,
                        help="rosbag2 bag or ur_rtde CSV recorded with the payload mounted, e.g. during "
                             "`rdi excite plan --kind payload`'s wrist motion")
    parser.add_argument("--out", required=True,
                        help="payload YAML to write (a folder: FOLDER/payload.yaml); an existing file is replaced "
                             "only when it is an earlier payload file")
    parser.add_argument("--robot", help="the arm model's robot (name or URDF path; default: the model's; another "
                                         "robot is refused: the arm model belongs to its robot)")
    add_data_arguments(parser, checks=False, torque_help=(
        "auto (default): the torque source the arm model was identified from (motor current x its drive gains, "
        "or a torque interface's effort); another source is refused, and so is target_moment (it echoes the "
        "payload set on the pendant)"), gains_help="; default: the arm model's (other gains are refused: the payload "
                                                   "torque must be on the model's scale)")


def run(args: argparse.Namespace) -> int:
    from ..identification.payload_job import is_doubtful, run_payload
    from .identify import parse_gains, read_options

    estimate, path = run_payload(args.model, args.data, out_path=args.out, torque_source=args.torque_source,
                                 drive_gains_nm_per_a=parse_gains(args.drive_gains, args.robot), robot=args.robot,
                                 read=read_options(args))
    c, cs = estimate.com_m * 1000, estimate.com_std_m * 1000
    print(f"payload mass: {estimate.mass_kg:.4f} kg (std {estimate.mass_std_kg:.4f})")
    print("centre of mass in tool0 (mm): " + ", ".join(f"{v:.1f} ± {s:.1f}" for v, s in zip(c, cs)))
    i, s = estimate.inertia_about_com_kgm2, estimate.inertia_std_kgm2
    print(f"inertia about the CoM (kg m^2): ixx {i[0, 0]:.2e} ± {s[0]:.1e}, iyy {i[1, 1]:.2e} ± {s[1]:.1e}, "
          f"izz {i[2, 2]:.2e} ± {s[2]:.1e}, ixy {i[0, 1]:.2e}, ixz {i[0, 2]:.2e}, iyz {i[1, 2]:.2e}")
    print(f"condition number of the payload regressor: {estimate.condition_number:.2f}")
    doubtful = is_doubtful(estimate)
    if not doubtful:  # a doubtful payload is not offered for the robot's set-payload call
        print(f"ur_rtde: {estimate.ur_rtde_snippet()}")
        print(f"UR ROS 2 driver: {estimate.ur_driver_snippet()}")
    print(f"wrote {path}" + (" (status: doubtful)" if doubtful else ""))
    for warning in estimate.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if doubtful:
        print("rdi payload: the result is doubtful (exit 3): see the warnings; no set-payload call is offered",
              file=sys.stderr)
        return 3
    return 0
