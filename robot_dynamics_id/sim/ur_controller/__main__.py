"""``python -m robot_dynamics_id.sim.ur_controller``: the same as ``rdi sim-controller``."""

import sys

from ..stand_in_command import main

if __name__ == "__main__":
    sys.exit(main())
