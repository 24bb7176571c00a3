"""ur_interface: the UR arm (real over RTDE, or simulated) as ROS topics.

Publishes
  /joint_states                              sensor_msgs/JointState  position rad, velocity rad/s,
                                             effort = joint TORQUE in Nm (from effort_source)
  /motor_currents                            sensor_msgs/JointState  effort = measured motor current, A
  /target_moment                             sensor_msgs/JointState  effort = controller model torque, Nm
  /force_torque_sensor_broadcaster/wrench    geometry_msgs/WrenchStamped, TCP wrench in the BASE frame
  ~/status                                   std_msgs/String, JSON: state, connected, modes, watchdog, fault,
                                             loop timing
Subscribes
  /forward_velocity_controller/commands      std_msgs/Float64MultiArray, rad/s, configured joint order
  /forward_effort_controller/commands        std_msgs/Float64MultiArray, Nm, configured joint order

The robot loop runs in its own thread
(:class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`); the state topics
are published by :class:`~robot_dynamics_id.nodes._robot_topics.RobotStateTopics`
(robot-clock stamps, off the real-time thread, none dropped).
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, String

from ..hardware.config import UR_INTERFACE_PARAMETERS, UrInterfaceConfig
from ..hardware.safety import CommandRejected
from ._robot_topics import RobotStateTopics
from ._ros_params import declare_parameters
from ._run import freeze_startup_objects, raise_python_threads_priority, run_node

__all__ = ["UrInterfaceNode", "main"]

#: Commands: reliable, depth 1 (the UR driver's convention; only the newest matters).
COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: ~/status reports the loop's period error over this many newest cycles (10 s at 500 Hz)
TIMING_WINDOW_CYCLES = 5000


class UrInterfaceNode(Node):
    """ROS shell around the robot loop: parameters, topics, status."""

    def __init__(self) -> None:
        super().__init__("ur_interface")
        raw = declare_parameters(self, UR_INTERFACE_PARAMETERS)
        self.config = UrInterfaceConfig.from_parameters(raw)  # raises ParameterError naming the parameter
        cfg = self.config
        if cfg.realtime_priority > 0:
            raise_python_threads_priority(self.get_logger())
        self._topics = RobotStateTopics(node=self, config=cfg)
        # Deep enough that a burst of refusals does not overwrite the fault event before it.
        self._status_pub = self.create_publisher(String, "~/status", QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                                 self._on_velocity_command, COMMAND_QOS)
        self.create_subscription(Float64MultiArray, "/forward_effort_controller/commands",
                                 self._on_torque_command, COMMAND_QOS)

        self._timing: dict | None = None
        self._timing_at = 0.0
        self.loop = cfg.make_loop(on_sample=self._topics.on_sample, on_event=self._on_event)
        self.create_timer(1.0 / cfg.status_rate_hz, self._publish_status)
        freeze_startup_objects()
        self.loop.start()
        self.get_logger().info(
            f"ur_interface: robot {cfg.robot_name}, backend {cfg.backend}, {cfg.rate_hz:.0f} Hz, "
            f"watchdog {cfg.watchdog_s * 1000:.0f} ms, limit policy {cfg.limit_policy.value}, "
            f"effort from {cfg.effort_source}")

    # ---- commands ---------------------------------------------------------------------------
    def _on_velocity_command(self, msg: Float64MultiArray) -> None:
        try:
            cmd = self.loop.submit_velocity(np.asarray(msg.data, float))
        except CommandRejected as exc:
            self.get_logger().error(f"velocity command refused: {exc.reason}")
            self._publish_status(event=f"velocity command refused: {exc.reason}")
            return
        if cmd.notes:
            self.get_logger().warning("; ".join(cmd.notes), throttle_duration_sec=1.0)

    def _on_torque_command(self, msg: Float64MultiArray) -> None:
        try:
            cmd = self.loop.submit_torque(np.asarray(msg.data, float))
        except CommandRejected as exc:
            self.get_logger().error(f"torque command refused: {exc.reason}")
            self._publish_status(event=f"torque command refused: {exc.reason}")
            return
        if cmd.notes:
            self.get_logger().warning("; ".join(cmd.notes), throttle_duration_sec=1.0)

    # ---- loop thread → log and status ------------------------------------------------------------------
    def _on_event(self, level: str, message: str) -> None:
        # One call site per severity: rclpy refuses a call site whose severity changes between calls.
        if level == "info":
            self.get_logger().info(message)
        elif level == "warn":
            self.get_logger().warning(message)
        else:
            self.get_logger().error(message)
        self._publish_status(event=message)

    # ---- status ------------------------------------------------------------------------------------------
    def _loop_timing(self) -> dict | None:
        """Period-error statistics of the newest TIMING_WINDOW_CYCLES loop cycles, refreshed once a second.

        The percentiles hold the GIL while the robot loop may need it (1.5 ms over the loop's whole
        60,000-cycle record, measured), so they are computed over a shorter window and not at every status."""
        now = time.monotonic()
        if now - self._timing_at >= 1.0:
            self._timing_at = now
            errors = np.abs(self.loop.period_errors_s(TIMING_WINDOW_CYCLES))
            self._timing = None if not errors.size else {
                "median": float(np.median(errors) * 1e6),
                "p99": float(np.percentile(errors, 99) * 1e6),
                "max": float(errors.max() * 1e6),
                "window_cycles": int(errors.size),
            }
        return self._timing

    def _publish_status(self, event: str | None = None) -> None:
        status = self.loop.status.as_dict()
        timing = self._loop_timing()
        if timing is not None:
            status["period_error_us"] = timing
        status["backlog"] = self._topics.backlog
        status["pid"] = os.getpid()
        if event:
            status["event"] = event
        try:
            self._status_pub.publish(String(data=json.dumps(status)))
        except Exception:  # the context may already be shut down during exit
            pass

    def shutdown(self) -> None:
        """Stop the arm and the threads; every queued sample is published first."""
        self.loop.stop()
        self._topics.close()


def main(args=None) -> int:
    return run_node(UrInterfaceNode, args, name="ur_interface")


if __name__ == "__main__":
    sys.exit(main())
