"""``rdi natural-oscillation``: reproduce P1 (Jamisola & Dadios) — Tables I/II, searches, friction, UR3."""

from __future__ import annotations

import argparse

COMMAND = "natural-oscillation"
HELP = "Reproduce the natural-oscillation identification (P1): Tables I and II, searches, friction bias, UR3 case."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-tables", action="store_true", help="do not simulate Tables I and II")
    parser.add_argument("--search", action="store_true", help="bracketing vs incremental search (+ metaheuristic)")
    parser.add_argument("--friction", action="store_true", help="measure the bias joint friction causes")
    parser.add_argument("--ur3", action="store_true", help="shoulder/elbow gravity terms of a simulated UR3")
    parser.add_argument("--ur3-full", action="store_true",
                        help="the whole upright UR3 (shoulder, elbow, wrist 1), with and without friction (minutes)")
    parser.add_argument("--mujoco", action="store_true",
                        help="MuJoCo UR3 in torque mode: no friction, friction, vs the regressor identifier (minutes)")
    parser.add_argument("--all", action="store_true", help="everything above")


def run(args: argparse.Namespace) -> int:
    from robot_dynamics_id.scenarios import natural_oscillation_report as report

    extras = (args.search, args.friction, args.ur3, args.ur3_full, args.mujoco, args.all)
    if args.skip_tables and not any(extras):
        raise ValueError("nothing to print: --skip-tables leaves out the tables, and none of --search, --friction, "
                         "--ur3, --ur3-full, --mujoco or --all was given")
    if not args.skip_tables:
        print("\n".join(report.tables_report()))
    if args.search or args.all:
        print("\n".join(report.search_report()[0]))
    if args.friction or args.all:
        print("\n".join(report.friction_bias_report()[0]))
    if args.ur3 or args.all:
        print("\n".join(report.ur3_report()[0]))
    if args.ur3_full or args.all:
        print("\n".join(report.ur3_full_report()[0]))
    if args.mujoco or args.all:
        from robot_dynamics_id.scenarios.natural_oscillation_mujoco import mujoco_report

        print("\n".join(mujoco_report()[0]))
    return 0
