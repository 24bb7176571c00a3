"""collision_monitor: sensorless collision detection beside a robot node (control/collision.py).

Runs the generalized-momentum observer of an identified model on every sample the robot node publishes
and stops the arm at a collision. To run it *inside* the robot loop instead (no transport delay), give
ur_interface ``collision_model_file``; both publish the same topics.

Subscribes
  /joint_states                       sensor_msgs/JointState (position rad, velocity rad/s)
  /motor_currents                     sensor_msgs/JointState (effort = motor current, A), same stamps
  <robot_node>/status                 std_msgs/String JSON (safety_mode: a cleared protective stop re-arms;
                                      robot: a model of another arm would stop the arm at once: the node
                                      ends, exit code 2, as the controller does)
Publishes
  /collision_monitor/external_torque, /collision_monitor/residual, /collision_monitor/collision
                                      (nodes/_collision_topics.py)
  <robot_node>/protective_stop        std_msgs/String, the collision (reaction protective_stop): ur_interface
                                      makes a protective stop through the robot
  /diagnostics                        diagnostic_msgs/DiagnosticArray, 1 Hz, "collision_monitor: observer":
                                      samples, collisions; ERROR while not monitoring (the robot's rate differs
                                      from the thresholds', no paired samples 5 s after the start) or while no one
                                      takes <robot_node>/protective_stop (a wrong robot_node: a collision would
                                      stop nothing); WARN at a collision or when the samples stop
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from ..hardware.collision_config import COLLISION_PARAMETERS, make_collision_monitor
from ..parameters import ParameterError, ParameterSpec
from ..robot_state import RobotState, SafetyMode
from ..robots.model import same_robot
from ._collision_topics import CollisionTopics
from ._diagnostic_rules import collision_monitor_report
from ._diagnostics import CounterDeltas, NodeDiagnostics
from ._ros_params import declare_parameters
from ._run import flush_publishers, run_node

__all__ = ["COLLISION_MONITOR_PARAMETERS", "CollisionMonitorNode", "main"]

COLLISION_MONITOR_PARAMETERS: tuple[ParameterSpec, ...] = tuple(
    replace(spec, description="identified model with collision thresholds (rdi validate --collision-thresholds); "
                              "required") if spec.name == "model_file" else spec for spec in COLLISION_PARAMETERS) + (
    ParameterSpec("robot_node", "string", "/ur_interface",
                  "the robot node: its ~/status is read and a collision goes to its ~/protective_stop"),
    ParameterSpec("rate_hz", "double", 0.0,
                  "the robot's sample rate (0: measured from the first 100 samples); must match the thresholds'",
                  "Hz"),
)

_SENSOR_QOS = QoSProfile(depth=200, reliability=ReliabilityPolicy.RELIABLE)
_COMMAND_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: samples whose stamps measure the rate when rate_hz is 0
_RATE_SAMPLES = 100
#: seconds after the start without a sample before the monitor says why (s)
NO_SAMPLES_S = 5.0


class CollisionMonitorNode(Node):
    """Pairs /joint_states with /motor_currents by stamp and feeds the collision monitor."""

    #: every entity is created in __init__: the EventsExecutor may serve the 500 Hz streams
    events_executor = True

    def __init__(self) -> None:
        super().__init__("collision_monitor")
        p = declare_parameters(self, COLLISION_MONITOR_PARAMETERS)
        if not p["model_file"]:
            raise ParameterError("parameter 'model_file' is empty: give the identified model with collision "
                                 "thresholds (rdi validate --collision-thresholds)")
        rate = float(p["rate_hz"] or 0.0)
        if rate < 0:
            raise ParameterError(f"parameter 'rate_hz' = {rate} must be >= 0")
        self.monitor = make_collision_monitor(p, rate_hz=rate or None, on_collision=self._on_collision,
                                              on_sample=self._on_sample)
        self._names = list(self.monitor.detector.joint_names)
        self._topics = CollisionTopics(self, self._names, model_label=p["model_file"])
        self._thresholds_rate = self.monitor.detector.thresholds.rate_hz
        self._rate_checked = rate > 0
        self._stamps: list[float] = []
        robot = str(p["robot_node"]).rstrip("/")
        self._robot_node, self._stops = robot, self.monitor.react
        self._robot_problem: str | None = None  # the robot node runs another arm
        self._monitoring_since = np.inf  # monotonic time the rate was checked
        self._logged: set[str] = set()
        self._stop_pub = self.create_publisher(String, robot + "/protective_stop", _COMMAND_QOS)
        self._pending: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._safety_mode = int(SafetyMode.NORMAL)
        self._index: list[int] | None = None
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, _SENSOR_QOS)
        self.create_subscription(JointState, "/motor_currents", self._on_current, _SENSOR_QOS)
        self.create_subscription(String, robot + "/status", self._on_status, _SENSOR_QOS)
        self._samples, self._collisions = 0, 0
        self._received = {"/joint_states": 0, "/motor_currents": 0}  # messages, before pairing
        self._started_s = time.monotonic()
        self._last_collision: str | None = None
        self._rate_problem: str | None = None
        self._sample_wall_s: float | None = None
        deltas = CounterDeltas()
        NodeDiagnostics(self, part="observer", hardware_id=str(p["model_file"]),
                        collect=lambda: collision_monitor_report(
            monitoring=self._rate_checked and self._robot_problem is None, rate_problem=self._problem(),
            samples=self._samples,
            collisions=self._collisions, last_collision=self._last_collision, deltas=deltas,
            sample_age_s=None if self._sample_wall_s is None else time.monotonic() - self._sample_wall_s))
        for note in self.monitor.detector.notes:
            self.get_logger().warning(note)
        self.get_logger().info(f"collision_monitor: {p['model_file']}, reaction {p['reaction']}, stops through "
                               f"{robot}/protective_stop")

    @staticmethod
    def _stamp(msg: JointState) -> float:
        return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9

    def _order(self, msg: JointState) -> list[int] | None:
        if self._index is None or len(msg.name) != len(self._names):
            by_name = {n: i for i, n in enumerate(msg.name)}
            missing = [n for n in self._names if n not in by_name]
            if missing:
                self.get_logger().error(f"/joint_states lacks the model's joints {missing}",
                                        throttle_duration_sec=5.0)
                return None
            self._index = [by_name[n] for n in self._names]
        return self._index

    def _on_joint_state(self, msg: JointState) -> None:
        self._received["/joint_states"] += 1
        index = self._order(msg)
        if index is None or len(msg.velocity) != len(msg.name):
            return
        self._pending[self._stamp(msg)] = (np.array([msg.position[i] for i in index]),
                                           np.array([msg.velocity[i] for i in index]))
        while len(self._pending) > 50:  # currents that never came: drop the oldest
            self._pending.pop(next(iter(self._pending)))

    def _on_current(self, msg: JointState) -> None:
        self._received["/motor_currents"] += 1
        t = self._stamp(msg)
        joint = self._pending.pop(t, None)
        index = self._order(msg)
        if joint is None or index is None or len(msg.effort) != len(msg.name):
            return
        if self._robot_problem is not None or (not self._rate_checked and not self._check_rate(t)):
            return
        state = RobotState(timestamp_s=t, q_rad=joint[0], qd_rad_s=joint[1],
                           current_a=np.array([msg.effort[i] for i in index]), safety_mode=self._safety_mode)
        reason = self.monitor(state)
        self._samples += 1
        self._sample_wall_s = time.monotonic()
        if reason:
            self._stop_pub.publish(String(data=reason))

    def _check_rate(self, t: float) -> bool:
        self._stamps.append(t)
        if len(self._stamps) < _RATE_SAMPLES:
            return False
        rate = 1.0 / float(np.median(np.diff(self._stamps)))
        if abs(rate - self._thresholds_rate) > 0.02 * self._thresholds_rate:
            self._rate_problem = (f"the robot publishes at {rate:.1f} Hz, the collision thresholds were measured "
                                  f"at {self._thresholds_rate:g} Hz: measure them at this rate")
            self.get_logger().error(f"{self._rate_problem}; not monitoring", throttle_duration_sec=10.0)
            self._stamps.clear()
            return False
        self._rate_checked, self._rate_problem = True, None
        self.get_logger().info(f"robot rate {rate:.1f} Hz: monitoring")
        self._monitoring_since = time.monotonic()
        return True

    def _on_status(self, msg: String) -> None:
        try:
            status = json.loads(msg.data)
            self._safety_mode = int(status.get("safety_mode", self._safety_mode))
        except (ValueError, TypeError, AttributeError):
            return
        theirs = status.get("robot")
        if theirs is not None and not same_robot(str(theirs), self.monitor.detector.robot):
            self._robot_problem = (f"the robot node runs a {theirs} ({self._robot_node}/status), the model is of a "
                                   f"{self.monitor.detector.robot}: give the model identified on this arm")
            self._log_once(self._robot_problem + "; not monitoring: collision_monitor ends (exit code 2)")

    @property
    def done(self) -> bool:
        """A configuration error found at run time (the robot node runs another arm) ends the node."""
        return self._robot_problem is not None

    @property
    def exit_code(self) -> int:
        return 2 if self._robot_problem is not None else 0

    @property
    def exit_code_when_interrupted(self) -> int:
        """A service: Ctrl-C is its normal end, unless it was refusing another arm's robot."""
        return self.exit_code

    def _problem(self) -> str | None:
        """Why the monitor cannot do its job now (diagnostics ERROR), logged once."""
        problem = self._rate_problem or self._robot_problem or self._no_samples()
        # (from 2 s after monitoring began: the robot node's subscription is discovered with its samples)
        if (problem is None and self._stops and time.monotonic() - self._monitoring_since > 2.0
                and self._stop_pub.get_subscription_count() == 0):
            problem = (f"no one subscribes to {self._robot_node}/protective_stop: a collision would not stop the "
                       "arm; set robot_node to the robot node's name (e.g. /ur_interface)")
            self._log_once(problem)
        return problem

    def _no_samples(self) -> str | None:
        """Why no sample reached the observer NO_SAMPLES_S after the start (logged once), or None."""
        if self._samples or self._stamps or time.monotonic() - self._started_s < NO_SAMPLES_S:
            return None
        missing = [topic for topic, count in self._received.items() if not count]
        if missing:
            problem = (f"no {' and no '.join(missing)} in {NO_SAMPLES_S:g} s: the observer needs both (joint "
                       "states and motor currents, A, of the same cycles, as ur_interface publishes them); is the "
                       "robot node running?")
        else:
            problem = ("/joint_states and /motor_currents arrive, but never with the same stamp (or without the "
                       "model's joints and velocities): they must come from one robot node's cycles")
        self._log_once(problem + "; not monitoring")
        return problem

    def _log_once(self, text: str) -> None:
        if text not in self._logged:
            self._logged.add(text)
            self.get_logger().error(text)

    def _on_sample(self, time_s, external_torque_nm, threshold_nm) -> None:
        self._topics.on_sample(time_s, external_torque_nm, threshold_nm)

    def _on_collision(self, event) -> None:
        self.get_logger().error(event.describe())
        self._collisions += 1
        self._last_collision = event.describe()
        self._topics.on_collision(event)

    def shutdown(self) -> None:
        self._topics.close()  # queued residuals and collision reports are published first
        flush_publishers((self._stop_pub, self._topics.event_publisher))  # a stop sent last must arrive


def main(args=None) -> int:
    return run_node(CollisionMonitorNode, args, name="collision_monitor")


if __name__ == "__main__":
    sys.exit(main())
