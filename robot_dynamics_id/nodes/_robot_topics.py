"""The robot's state as ROS topics, published from the robot loop's thread (``inline``) or a thread of their own.

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

With ``inline`` (what ur_interface and osc_controller use) every sample is
published in the robot loop's own thread right after the cycle's command has
gone out: no second thread wakes 500 times a second to compete with the loop
for the GIL in the middle of the next cycle's law. Without it, samples reach ROS
through a deque drained by a publisher thread (the loop never calls DDS).

Each message is serialized once (:mod:`._cdr_template`) and only its stamp and
arrays are rewritten per sample; ``Publisher.publish(bytes)`` sends them. What
is left per sample is mostly DDS delivering to the subscribers
(benchmarks/bench_state_topics.py).
"""

from __future__ import annotations

import collections
import threading
import time

from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from ..hardware.config import UrInterfaceConfig
from ..robot_state import RobotState
from ._cdr_template import CdrTemplate, joint_state_template, wrench_template
from ._run import flush_publishers

__all__ = ["STATE_QOS", "RobotStateTopics"]

#: State topics: reliable with a deep history (20 s at 500 Hz) so a busy recorder loses nothing.
STATE_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)


def _stamp(t_s: float) -> tuple[int, int]:
    """(sec, nanosec) of a time in seconds; a fraction that rounds up to a whole second carries into sec."""
    sec = int(t_s)
    nanosec = int(round((t_s - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec, nanosec = sec + 1, nanosec - 1_000_000_000
    return sec, nanosec


#: a robot clock this far behind its newest time has restarted (a controller restart), s
_CLOCK_RESTART_S = 0.5


class RobotStateTopics:
    """Publishes every :class:`RobotState` the robot loop hands to :meth:`on_sample`.

    Every sample is stamped with the robot's own clock (RTDE timestamp) plus a
    constant offset fixed at the first sample, so stamp differences are
    robot-clock differences. A robot clock that goes back (the controller
    restarted: its clock starts again) fixes the offset anew, so the stamps
    go on from the wall clock and never go back.
    """

    def __init__(self, *, node: Node, config: UrInterfaceConfig, backlog: int = 20_000, inline: bool = False) -> None:
        self._node = node
        self._config = config
        self._names = list(config.joint_names)
        self._samples: collections.deque = collections.deque(maxlen=backlog)
        self._wake = threading.Event()
        self._idle = True  # the publisher thread is (about to be) waiting for samples
        self._clock_offset_s: float | None = None
        self._last_timestamp_s = -float("inf")  # the newest robot time stamped
        #: robot clock restarts seen (the controller restarted); each re-anchored the stamps
        self.clock_restarts = 0
        # The message templates, built here and not at the first sample: the first one in a process costs
        # ~150 ms (rosbags builds its serializers), a stall the robot loop cannot take (the controller's RTDE
        # watchdog stops the program after 100 ms at its default 10 Hz).
        self._prepare_messages()
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
        # Serialized once, then only the stamp and the arrays are rewritten per sample (_cdr_template.py):
        # rclpy's per-field conversion of five messages at 500 Hz was most of this thread's work.
        n = len(self._names)
        self._js = joint_state_template(self._names, (n, n, n))
        self._cur = joint_state_template(self._names, (0, 0, n))
        self._mom = joint_state_template(self._names, (0, 0, n))
        # the four command shapes: (reference or not) x (velocity or torque)
        self._commands: dict[tuple[int, int, int], CdrTemplate] = {
            lengths: joint_state_template(self._names, lengths)
            for lengths in ((0, n, 0), (n, n, 0), (0, 0, n), (n, 0, n))}
        self._wrench = wrench_template(self._config.tf_prefix + "base")

    def _stamp_time(self, timestamp_s: float) -> tuple[int, int]:
        """(sec, nanosec) of the message stamp of a sample taken at ``timestamp_s`` on the robot's clock."""
        if self._clock_offset_s is None or timestamp_s + self._clock_offset_s < 0:
            self._clock_offset_s = time.time() - timestamp_s
        elif timestamp_s < self._last_timestamp_s - _CLOCK_RESTART_S:
            # the controller restarted: its clock began again; stamps from the old offset would go back in time.
            # Anchored anew on the wall clock, and never before the last stamp (the robot clock may have run ahead)
            last_stamp = self._last_timestamp_s + self._clock_offset_s
            self._clock_offset_s = max(time.time(), last_stamp + _CLOCK_RESTART_S) - timestamp_s
            self.clock_restarts += 1
            self._last_timestamp_s = timestamp_s
        self._last_timestamp_s = max(self._last_timestamp_s, timestamp_s)
        return _stamp(timestamp_s + self._clock_offset_s)

    def _publish_command(self, item: tuple) -> None:
        timestamp_s, kind, values, reference = item
        position = () if reference is None else reference
        velocity = values if kind == "velocity" else ()
        effort = values if kind == "torque" else ()
        lengths = (len(position), len(velocity), len(effort))
        sec, nanosec = self._stamp_time(timestamp_s)
        template = self._commands.get(lengths)
        if template is None:  # another shape (a robot that reports fewer joints): built once
            template = self._commands[lengths] = joint_state_template(self._names, lengths)
        self._command_pub.publish(template.fill(sec, nanosec, position, velocity, effort))

    def _publish_one(self, s: RobotState) -> None:
        sec, nanosec = self._stamp_time(s.timestamp_s)
        self._joint_pub.publish(self._js.fill(sec, nanosec, s.q_rad, s.qd_rad_s, self._config.joint_torque_nm(s)))
        self._current_pub.publish(self._cur.fill(sec, nanosec, (), (), s.current_a))
        self._moment_pub.publish(self._mom.fill(sec, nanosec, (), (), s.target_moment_nm))
        self._wrench_pub.publish(self._wrench.fill(sec, nanosec, s.tcp_wrench_base))
