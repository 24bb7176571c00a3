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

Every sample is stamped with the robot's own clock (RTDE timestamp) plus a
constant offset fixed when the connection is made, so stamp differences are
robot-clock differences. The robot loop runs in its own thread
(:class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`); samples reach ROS
through a deque drained by a publisher thread, so none is dropped.
"""

from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time

import numpy as np
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ..hardware.config import UR_INTERFACE_PARAMETERS, UrInterfaceConfig
from ..hardware.robot_loop import RobotLoop
from ..hardware.safety import CommandRejected
from ..robot_state import RobotState
from ._ros_params import declare_parameters
from ._run import run_node

__all__ = ["UrInterfaceNode", "main"]

#: Commands: reliable, depth 1 (the UR driver's convention; only the newest matters).
COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: State topics: reliable with a deep history (20 s at 500 Hz) so a busy recorder loses nothing.
STATE_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)


def _stamp(msg_header, t_s: float) -> None:
    sec = int(t_s)
    msg_header.stamp.sec = sec
    msg_header.stamp.nanosec = int(round((t_s - sec) * 1e9)) % 1_000_000_000


class UrInterfaceNode(Node):
    """ROS shell around the robot loop: parameters, topics, status."""

    def __init__(self) -> None:
        super().__init__("ur_interface")
        raw = declare_parameters(self, UR_INTERFACE_PARAMETERS)
        self.config = UrInterfaceConfig.from_parameters(raw)  # raises ParameterError naming the parameter
        cfg = self.config
        self._names = list(cfg.joint_names)
        self._samples: collections.deque[RobotState] = collections.deque(maxlen=20_000)
        self._wake = threading.Event()
        self._clock_offset_s: float | None = None

        self._joint_pub = self.create_publisher(JointState, "/joint_states", STATE_QOS)
        self._current_pub = self.create_publisher(JointState, "/motor_currents", STATE_QOS)
        self._moment_pub = self.create_publisher(JointState, "/target_moment", STATE_QOS)
        self._wrench_pub = self.create_publisher(WrenchStamped, "/force_torque_sensor_broadcaster/wrench", STATE_QOS)
        # Deep enough that a burst of refusals does not overwrite the fault event before it.
        self._status_pub = self.create_publisher(String, "~/status", QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        self.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                                 self._on_velocity_command, COMMAND_QOS)
        self.create_subscription(Float64MultiArray, "/forward_effort_controller/commands",
                                 self._on_torque_command, COMMAND_QOS)

        self.loop = RobotLoop(backend=cfg.make_backend(), guard=cfg.make_guard(),
                              on_sample=self._on_sample, on_event=self._on_event)
        self._publishing = True
        self._publisher_thread = threading.Thread(target=self._publish_samples, name="state_publisher", daemon=True)
        self._publisher_thread.start()
        self.create_timer(1.0 / cfg.status_rate_hz, self._publish_status)
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

    # ---- loop thread → publisher thread ----------------------------------------------------------------
    def _on_sample(self, state: RobotState) -> None:
        self._samples.append(state)
        self._wake.set()

    def _on_event(self, level: str, message: str) -> None:
        # One call site per severity: rclpy refuses a call site whose severity changes between calls.
        if level == "info":
            self.get_logger().info(message)
        elif level == "warn":
            self.get_logger().warning(message)
        else:
            self.get_logger().error(message)
        self._publish_status(event=message)

    def _publish_samples(self) -> None:
        while self._publishing:
            self._wake.wait(0.1)
            self._wake.clear()
            while self._samples:
                try:
                    self._publish_one(self._samples.popleft())
                except Exception as exc:  # e.g. context shut down while draining
                    if self._publishing:
                        self.get_logger().error(f"publishing a sample failed: {exc}")
                    return

    def _publish_one(self, s: RobotState) -> None:
        if self._clock_offset_s is None or s.timestamp_s + self._clock_offset_s < 0:
            self._clock_offset_s = time.time() - s.timestamp_s
        t = s.timestamp_s + self._clock_offset_s
        js = JointState()
        _stamp(js.header, t)
        js.header.frame_id = ""
        js.name = self._names
        js.position = s.q_rad.tolist()
        js.velocity = s.qd_rad_s.tolist()
        js.effort = self.config.joint_torque_nm(s).tolist()
        self._joint_pub.publish(js)
        cur = JointState()
        cur.header = js.header
        cur.name = self._names
        cur.effort = s.current_a.tolist()
        self._current_pub.publish(cur)
        mom = JointState()
        mom.header = js.header
        mom.name = self._names
        mom.effort = s.target_moment_nm.tolist()
        self._moment_pub.publish(mom)
        w = WrenchStamped()
        w.header.stamp = js.header.stamp
        w.header.frame_id = self.config.tf_prefix + "base"
        f = s.tcp_wrench_base
        w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = float(f[0]), float(f[1]), float(f[2])
        w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = float(f[3]), float(f[4]), float(f[5])
        self._wrench_pub.publish(w)

    # ---- status ------------------------------------------------------------------------------------------
    def _publish_status(self, event: str | None = None) -> None:
        status = self.loop.status.as_dict()
        errors = np.abs(self.loop.period_errors_s())
        if errors.size:
            status["period_error_us"] = {
                "median": float(np.median(errors) * 1e6),
                "p99": float(np.percentile(errors, 99) * 1e6),
                "max": float(errors.max() * 1e6),
                "window_cycles": int(errors.size),
            }
        status["backlog"] = len(self._samples)
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
        deadline = time.monotonic() + 2.0
        while self._samples and time.monotonic() < deadline:
            time.sleep(0.01)
        self._publishing = False
        self._wake.set()
        self._publisher_thread.join(1.0)


def main(args=None) -> int:
    return run_node(UrInterfaceNode, args, name="ur_interface")


if __name__ == "__main__":
    sys.exit(main())
