"""A small in-process rclpy client for the demo and the tests: records state topics, sends commands.

Not a node users run; it is how the demo and the integration tests talk to the
real node processes over DDS (loopback only: the caller's environment must
come from :func:`robot_dynamics_id.ros_processes.loopback_environment`).
"""

from __future__ import annotations

import json
import math
import threading
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

__all__ = ["RobotProbe"]

_RELIABLE_1 = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
_RELIABLE_DEEP = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


class RobotProbe(Node):
    """Records /joint_states and ~/status of ur_interface; publishes velocity/torque commands."""

    def __init__(self, *, name: str = "rdi_probe", status_topic: str = "/ur_interface/status",
                 record_joint_states: bool = True) -> None:
        super().__init__(name)
        self._lock = threading.Lock()
        self.joint_times_s: list[float] = []
        self.joint_positions: list[list[float]] = []
        self.joint_velocities: list[list[float]] = []
        self.statuses: list[dict] = []
        self.events: list[str] = []
        if record_joint_states:  # 500 Hz: a caller that only needs the status leaves it out (CPU)
            self.create_subscription(JointState, "/joint_states", self._on_joint_state, _RELIABLE_DEEP)
        self.create_subscription(String, status_topic, self._on_status, _RELIABLE_DEEP)
        self.velocity_pub = self.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands",
                                                  _RELIABLE_1)
        self.torque_pub = self.create_publisher(Float64MultiArray, "/forward_effort_controller/commands",
                                                _RELIABLE_1)
        self._executor = None
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    # ---- recording --------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        with self._lock:
            self.joint_times_s.append(msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9)
            self.joint_positions.append(list(msg.position))
            self.joint_velocities.append(list(msg.velocity))

    def _on_status(self, msg: String) -> None:
        status = json.loads(msg.data)
        with self._lock:
            self.statuses.append(status)
            if status.get("event"):
                self.events.append(status["event"])

    def latest_status(self) -> dict | None:
        with self._lock:
            return self.statuses[-1] if self.statuses else None

    def joint_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(t_s, q_rad, qd_rad_s) recorded so far."""
        with self._lock:
            return (np.array(self.joint_times_s), np.array(self.joint_positions), np.array(self.joint_velocities))

    def clear(self) -> None:
        with self._lock:
            self.joint_times_s.clear()
            self.joint_positions.clear()
            self.joint_velocities.clear()

    # ---- commanding -------------------------------------------------------------------------------
    def send_velocity(self, qd_rad_s) -> None:
        self.velocity_pub.publish(Float64MultiArray(data=[float(v) for v in qd_rad_s]))

    def send_torque(self, torque_nm) -> None:
        self.torque_pub.publish(Float64MultiArray(data=[float(v) for v in torque_nm]))

    def stream_velocity(self, qd_rad_s, duration_s: float, rate_hz: float = 100.0) -> None:
        """Publish the same velocity command at ``rate_hz`` for ``duration_s``."""
        period = 1.0 / rate_hz
        deadline = time.monotonic()
        end = deadline + duration_s
        while time.monotonic() < end:
            self.send_velocity(qd_rad_s)
            deadline += period
            time.sleep(max(0.0, deadline - time.monotonic()))

    def stream_velocity_until(self, qd_rad_s, until, timeout_s: float, rate_hz: float = 100.0) -> bool:
        """Publish the same velocity command at ``rate_hz`` until ``until()`` is true (checked after each
        command) or ``timeout_s`` (wall clock) passes; whether ``until()`` became true. A test states what the
        command must achieve on the robot's clock, so neither a slow simulation nor a probe that sees the
        stream late shortens it."""
        period = 1.0 / rate_hz
        start = deadline = time.monotonic()
        while time.monotonic() - start < timeout_s:
            self.send_velocity(qd_rad_s)
            if until():
                return True
            deadline += period
            time.sleep(max(0.0, deadline - time.monotonic()))
        return False

    def wait_for(self, predicate, timeout_s: float) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.02)
        return bool(predicate())

    def wait_ready(self, timeout_s: float = 30.0, *, pid: int | None = None) -> bool:
        """Until ur_interface reports ready and the command publisher is matched.

        ``pid``: the ur_interface process to wait for (a status left over from an earlier
        process, still in flight or recorded, does not count).
        """
        def ready() -> bool:
            status = self.latest_status() or {}
            return (status.get("state") in ("ready", "moving") and (pid is None or status.get("pid") == pid)
                    and self.velocity_pub.get_subscription_count() > 0)
        return self.wait_for(ready, timeout_s)

    # ---- spinning ---------------------------------------------------------------------------------------
    def spin_in_background(self, *, events: bool = False) -> None:
        """Spin in a thread. ``events``: rclpy's EventsExecutor (keeps up with 500 Hz streams on a loaded
        machine), only when every subscription and publisher exists already: rclpy's EventsExecutor deadlocks
        in wake() when another thread creates one while it spins (Kilted 9.1.2, reproduced here)."""
        from ._run import make_executor

        self._executor = make_executor(events=events)
        self._executor.add_node(self)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        # spin_once in a loop, not spin(): the EventsExecutor's shutdown() from another thread waits forever
        # for a spin() in progress (Kilted 9.1.2, reproduced here); the loop ends on close() or rclpy shutdown.
        try:
            while not self._closing.is_set() and rclpy.ok():
                self._executor.spin_once(timeout_sec=0.1)
        except Exception:  # context shut down
            pass

    def close(self) -> None:
        self._closing.set()
        if self._thread is not None:
            self._thread.join(2.0)
        if self._executor is not None:
            self._executor.shutdown(timeout_sec=2.0)
        self.destroy_node()


def probe_session(*, setup=None, **kwargs) -> RobotProbe:
    """rclpy.init (if needed) + a probe spinning in the background.

    ``setup(probe)``, if given, creates the caller's own subscriptions and publishers first; the probe then
    spins with the EventsExecutor (see :meth:`RobotProbe.spin_in_background`), and nothing may be created on
    it afterwards. Without ``setup`` it spins with the SingleThreadedExecutor, and callers may add entities.
    """
    if not rclpy.ok():
        rclpy.init()
    probe = RobotProbe(**kwargs)
    if setup is not None:
        setup(probe)
    probe.spin_in_background(events=setup is not None)
    return probe
