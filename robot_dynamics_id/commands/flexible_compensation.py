"""``rdi flexible-compensation``: reproduce Bicchi & Melchiorri's force-error compensation (seeds.md P4).

Prints the 3-DOF and 5-DOF planar examples (our initial errors and iteration
counts beside the paper's), an unreachable set-point on a defective arm, and the
UR3 contact demonstration (world-frame force error before/after the joint
set-point correction).
"""

from __future__ import annotations

import argparse

COMMAND = "flexible-compensation"
HELP = "reproduce P4 (quasi-static force-error compensation for flexible arms) and the UR3 contact demo"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--family", type=int, default=4,
                        help="number of extra poses of the paper's kind per example (other inner-joint bends, "
                             "each matching the paper's initial error; default 4; the 5-DOF ones take ~5 s each)")
    parser.add_argument("--family-max-bend-rad", type=float, default=0.1,
                        help="largest inner-joint bend of the pose family, rad (default 0.1)")
    parser.add_argument("--ur-stiffness", type=float, nargs=6, metavar="K",
                        help="UR3 joint stiffness, N·m/rad, base..wrist 3 (default: the package's assumed values)")


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ..control.flexible import compensate_levenberg_marquardt, compensate_steepest_descent, paper_planar_arm
    from ..control.flexible_reproduction import format_example, format_ur_demo, reproduce_example, ur3_contact_demo

    if args.family < 0:
        raise ValueError("--family must be >= 0")
    for key in ("3dof", "5dof"):
        rep = reproduce_example(key, family_size=args.family, family_max_bend_rad=args.family_max_bend_rad)
        print(format_example(rep))
        print()
    print("Defective arm (2 links, 2 m reach) asked for the 3-DOF set-point (needs 3 m):")
    arm = paper_planar_arm(2)
    w_e, w_d = np.array([0, 10.0, 0, 0, 0, 0]), np.array([0, 10.0, 0, 0, 0, 30.0])
    for solver in (compensate_steepest_descent, compensate_levenberg_marquardt):
        result = solver(arm, np.array([0.2, -0.3]), w_e, w_d)
        print(f"  {result.method}: converged={result.converged}, iterations={result.iterations}, "
              f"best V={result.lyapunov_value:.4g} (initial {result.initial_lyapunov_value:.4g})")
        print(f"    reason: {result.reason}")
    print()
    stiffness = None if args.ur_stiffness is None else np.asarray(args.ur_stiffness, float)
    print(format_ur_demo(ur3_contact_demo(joint_stiffness_nm_per_rad=stiffness),
                         "" if stiffness is not None else "ASSUMED default "))
    return 0
