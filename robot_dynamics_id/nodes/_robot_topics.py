"""The robot's state as ROS topics, published off the real-time thread.

Used by every node that owns the robot loop (ur_interface, and osc_controller
when it connects to the robot directly), so the topics are the same whichever
node drives the arm:

  /joint_states                            sensor_msgs/JointState  position rad, velocity rad/s,
                                           effort = joint TORQUE in Nm (from effort_source)
  /motor_currents                          sensor_msgs/JointState  effort = measured motor current, A
  /target_moment                           sensor_msgs/JointState  effort = controller model torque, Nm
  /force_torque_sensor_broadcaster/wrench  geometry_msgs/WrenchStamped, TCP wrench in the BASE frame
  ~/command                                sensor_msgs/JointState, what the loop sent the robot in a cycle
                                           (after the guard), stamped like that cycle's sample: velocity rad/s
                                           or effort Nm; position = the trajectory's reference (rad) while a
                                           trajectory runs, else empty. Only in cycles that send a command.

Samples reach ROS through a deque drained by a publisher thread, so the robot
loop never waits for DDS and no sample is dropped; or, with ``inline``, they are
published in the robot loop's own thread right after the cycle's command has
gone out (no second thread competing with the loop for the GIL in the middle of
the next cycle's law).
"""

from __future__ import annotations

import collections
from array import array
import threading
import time

from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from ..hardware.config import UrInterfaceConfig
from ..robot_state import RobotState
from ._run import flush_publishers

__all__ = ["STATE_QOS", "RobotStateTopics"]

#: State topics: reliable with a deep history (20 s at 500 Hz) so a busy recorder loses nothing.
STATE_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)


def _stamp(msg_header, t_s: float) -> None:
    sec = int(t_s)
    msg_header.stamp.sec = sec
    msg_header.stamp.nanosec = int(round((t_s - sec) * 1e9)) % 1_000_000_000


class RobotStateTopics:
    """Publishes every :class:`RobotState` the robot loop hands to :meth:`on_sample`.

    Every sample is stamped with the robot's own clock (RTDE timestamp) plus a
    constant offset fixed at the first sample, so stamp differences are
    robot-clock differences.
    """

    def __init__(self, *, node: Node, config: UrInterfaceConfig, backlog: int = 20_000, inline: bool = False) -> None:
        self._node = node
        self._config = config
        self._names = list(config.joint_names)
        self._samples: collections.deque = collections.deque(maxlen=backlog)
        self._wake = threading.Event()
        self._idle = True  # the publisher thread is (about to be) waiting for samples
        self._clock_offset_s: float | None = None
        self._joint_pub = node.create_publisher(JointState, "/joint_states", STATE_QOS)
        self._current_pub = node.create_publisher(JointState, "/motor_currents", STATE_QOS)
        self._moment_pub = node.create_publisher(JointState, "/target_moment", STATE_QOS)
        self._wrench_pub = node.create_publisher(WrenchStamped, "/force_torque_sensor_broadcaster/wrench",
                                                 STATE_QOS)
        self._command_pub = node.create_publisher(JointState, "~/command", STATE_QOS)
        self._publishing = True
        self._inline = inline
        self._thread = threading.Thread(target=self._publish_samples, name="state_publisher", daemon=True)
        if not inline:
            self._thread.start()

    @property
    def clock_offset_s(self) -> float | None:
        """Stamp = robot clock + this (s); None before the first sample."""
        return self._clock_offset_s

    @property
    def backlog(self) -> int:
        """Samples waiting to be published."""
        return len(self._samples)

    def on_sample(self, state: RobotState) -> None:
        """Queue a sample (robot loop thread; never blocks), or publish it now when ``inline``."""
        if self._inline:
            if self._publishing:
                try:
                    self._publish_one(state)
                except Exception as exc:  # e.g. context shut down: never break the robot loop
                    self._node.get_logger().error(f"publishing a sample failed: {exc}")
            return
        self._samples.append(state)
        if self._idle:  # wake the publisher only when it sleeps: Event.set costs a lock round trip per call
            self._wake.set()

    def on_command(self, state: RobotState, kind: str, values, reference_rad=None) -> None:
        """Queue the command the loop sent in ``state``'s cycle (robot loop thread; never blocks)."""
        item = (state.timestamp_s, kind, values, reference_rad)
        if self._inline:
            if self._publishing:
                try:
                    self._publish_command(item)
                except Exception as exc:
                    self._node.get_logger().error(f"publishing a command failed: {exc}")
            return
        self._samples.append(item)
        if self._idle:
            self._wake.set()

    def close(self, drain_timeout_s: float = 2.0) -> None:
        """Publish what is queued (up to the timeout) and end the publisher thread."""
        deadline = time.monotonic() + drain_timeout_s
        while self._samples and time.monotonic() < deadline:
            time.sleep(0.01)
        self._publishing = False
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(1.0)
        flush_publishers((self._joint_pub, self._current_pub, self._moment_pub, self._wrench_pub, self._command_pub))

    def _publish_samples(self) -> None:
        while self._publishing:
            # Announce the sleep before looking at the queue: a sample appended after the look sees _idle
            # and wakes us; one appended before it is seen by the look.
            self._idle = True
            if not self._samples:
                self._wake.wait(0.1)
            self._idle = False
            self._wake.clear()
            while self._samples:
                item = self._samples.popleft()
                try:
                    if type(item) is tuple:
                        self._publish_command(item)
                    else:
                        self._publish_one(item)
                except Exception as exc:  # e.g. context shut down while draining
                    if self._publishing:
                        self._node.get_logger().error(f"publishing a sample failed: {exc}")
                    return

    def _prepare_messages(self) -> None:
        # One message per topic, filled in place each sample: joint names and frame ids are set once
        # (rclpy validates every element of a list assigned to a field), arrays go in as array('d').
        self._js, self._cur, self._mom = JointState(), JointState(), JointState()
        for msg in (self._js, self._cur, self._mom):
            msg.name = self._names
        self._command = JointState()
        self._command.name = self._names
        self._wrench = WrenchStamped()
        self._wrench.header.frame_id = self._config.tf_prefix + "base"

    def _stamp_time(self, timestamp_s: float) -> float:
        if self._clock_offset_s is None or timestamp_s + self._clock_offset_s < 0:
            self._clock_offset_s = time.time() - timestamp_s
        if not hasattr(self, "_js"):
            self._prepare_messages()
        return timestamp_s + self._clock_offset_s

    def _publish_command(self, item: tuple) -> None:
        timestamp_s, kind, values, reference = item
        msg = self._command
        _stamp(msg.header, self._stamp_time(timestamp_s))
        msg.position = array("d", () if reference is None else reference)
        msg.velocity = array("d", values if kind == "velocity" else ())
        msg.effort = array("d", values if kind == "torque" else ())
        self._command_pub.publish(msg)

    def _publish_one(self, s: RobotState) -> None:
        t = self._stamp_time(s.timestamp_s)
        js, cur, mom, w = self._js, self._cur, self._mom, self._wrench
        for msg in (js, cur, mom, w):
            _stamp(msg.header, t)
        js.position = array("d", s.q_rad)
        js.velocity = array("d", s.qd_rad_s)
        js.effort = array("d", self._config.joint_torque_nm(s))
        self._joint_pub.publish(js)
        cur.effort = array("d", s.current_a)
        self._current_pub.publish(cur)
        mom.effort = array("d", s.target_moment_nm)
        self._moment_pub.publish(mom)
        f = s.tcp_wrench_base
        w.wrench.force.x, w.wrench.force.y, w.wrench.force.z = float(f[0]), float(f[1]), float(f[2])
        w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z = float(f[3]), float(f[4]), float(f[5])
        self._wrench_pub.publish(w)
