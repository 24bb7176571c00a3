"""robot_dynamics_id: dynamics identification and operational-space control for UR arms.

The package is a pure numpy core (robots, dynamics, excitation, identification,
control, sim, hardware, io) with a thin rclpy shell in ``robot_dynamics_id.nodes``.
Nothing outside ``nodes`` imports rclpy.
"""

__version__ = "0.1.0"
