"""robot_dynamics_id: dynamics identification and operational-space control for UR arms.

The package is a pure numpy core (robots, dynamics, excitation, identification,
control, sim, hardware, io) with a thin rclpy shell in ``robot_dynamics_id.nodes``.
Nothing outside ``nodes`` imports rclpy.
"""

import os as _os

# Our matrices are 6x6 to a few hundred columns: BLAS threads only add latency, and their busy-waiting
# competes with the 500 Hz loops for the 2 cores of a small lab PC.
# Set before numpy is first imported by any entry point (nodes, rdi, the stand-in); a user's value wins.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
_os.environ.setdefault("OMP_NUM_THREADS", "1")

__version__ = "0.1.0"
