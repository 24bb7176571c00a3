"""``python -m robot_dynamics_id.sim.ur_controller``: the same as ``rdi sim-controller``."""

import argparse
import sys

from ...commands import sim_controller


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_dynamics_id.sim.ur_controller",
                                     description=sim_controller.HELP)
    sim_controller.configure(parser)
    args = parser.parse_args(argv)
    try:
        return sim_controller.run(args)
    except (ValueError, OSError) as exc:
        print(f"sim-controller: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
