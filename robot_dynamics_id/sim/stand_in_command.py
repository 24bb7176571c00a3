"""The stand-in UR controller's command line (``python -m robot_dynamics_id.sim.ur_controller``, ``rdi sim-controller``).

Serves RTDE (30004), the dashboard (29999) and the script ports (30001-30003) on
a loopback address, in front of the simulated UR3, until Ctrl-C. Point
ur_interface at it with ``-p backend:=rtde -p robot_ip:=127.0.0.1``. ur_rtde
always uses the standard ports, so run one stand-in per address; more can run
side by side on 127.0.0.2, 127.0.0.3, ...

Here in sim/ (not commands/) because :class:`~robot_dynamics_id.sim.ur_controller.StandInProcess`
starts the stand-in as ``python -m robot_dynamics_id.sim.ur_controller`` with these options; the
``rdi`` command reuses them. Only argparse at import time (``rdi --help`` imports every command).
"""

from __future__ import annotations

import argparse
import sys

HELP = "run a local stand-in UR controller (RTDE, dashboard, script ports) backed by the simulated UR3"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--personality", default="e-series", choices=["cb3", "e-series"],
                        help="controller generation: cb3 (URControl 3.15, 125 Hz) or e-series (5.23, 500 Hz; "
                             "default)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="loopback address to listen on (127.x.y.z; default 127.0.0.1)")
    parser.add_argument("--rtde-port", type=int, default=30004, help="RTDE port (default 30004)")
    parser.add_argument("--dashboard-port", type=int, default=29999, help="dashboard port (default 29999)")
    parser.add_argument("--script-ports", type=int, nargs="*", default=[30001, 30002, 30003],
                        help="ports that accept URScript programs (default 30001 30002 30003)")
    parser.add_argument("--control-port", type=int, default=None,
                        help="fault-control port for tests (off by default; 0 = any free port)")
    parser.add_argument("--robot", default="ur3", help="simulated robot (default ur3)")
    parser.add_argument("--initial-q", type=float, nargs=6, metavar="Q",
                        help="initial joint positions, rad (default 0 -1.5708 1.5708 -1.5708 -1.5708 0)")
    parser.add_argument("--unlock-delay", type=float, default=None,
                        help="seconds before 'unlock protective stop' is accepted (default 5, like PolyScope)")
    parser.add_argument("--truth-seed", type=int, default=None,
                        help="seed of the plant's perturbed true parameters (default: nominal parameters)")
    parser.add_argument("--noise-seed", type=int, default=0, help="seed of the measurement noise (default 0)")
    parser.add_argument("--duration", type=float, default=None, help="stop after this many seconds")
    parser.add_argument("--nice", type=int, default=None,
                        help="run at this nice value, e.g. -10, to keep the 500 Hz loop on time on a busy machine "
                             "(needs the permission to raise priority; ignored otherwise)")
    parser.add_argument("--rt-priority", type=int, default=None,
                        help="run the control loop thread SCHED_FIFO at this priority (1-99), like a controller "
                             "on a real-time kernel; needs root or CAP_SYS_NICE (ignored otherwise)")
    parser.add_argument("--exit-with-parent", action="store_true",
                        help="also stop when standard input closes (used when a test starts it)")
    parser.add_argument("--quiet", action="store_true", help="log warnings and errors only")


def run(args: argparse.Namespace) -> int:
    from ..robots.description import ROBOT_NAMES, get_robot
    from .ur_controller.process import run_foreground

    if args.personality == "cb3" and str(args.robot).lower() in ROBOT_NAMES and \
            get_robot(args.robot).generation == "e-series":
        raise ValueError(f"--robot {args.robot} is an e-Series arm: there is no CB3 {args.robot}; drop --personality "
                         "cb3, or simulate a CB3 arm (ur3, ur5, ur10)")

    return run_foreground(
        personality=args.personality, host=args.host, rtde_port=args.rtde_port,
        dashboard_port=args.dashboard_port, script_ports=tuple(args.script_ports),
        control_port=args.control_port, robot=args.robot, initial_q_rad=args.initial_q,
        protective_stop_unlock_delay_s=args.unlock_delay, truth_seed=args.truth_seed,
        noise_seed=args.noise_seed, duration_s=args.duration, quiet=args.quiet,
        exit_on_stdin_eof=args.exit_with_parent, priority=args.nice, realtime_priority=args.rt_priority)


def main(argv: list[str] | None = None) -> int:
    """``python -m robot_dynamics_id.sim.ur_controller``: the same options as ``rdi sim-controller``."""
    parser = argparse.ArgumentParser(prog="python -m robot_dynamics_id.sim.ur_controller", description=HELP)
    configure(parser)
    args = parser.parse_args(argv)
    try:
        return run(args)
    except (ValueError, OSError) as exc:
        print(f"sim-controller: error: {exc}", file=sys.stderr)
        return 1
