"""osc_controller's ``topics`` connection: the robot's state from a separate robot node, and what it must check.

With ``robot_connection: topics`` the law runs in the controller's own thread on the newest sample of
/joint_states (+ /motor_currents, the wrench) that ur_interface or the UR driver publishes. What ``direct``
gets from owning the robot loop has to be checked here instead:

* a sample is used once: a cycle without a newer one sends nothing (the law would integrate a stale state
  again), and no new sample for ``state_timeout_s`` stops the controller: the robot node is gone, and its
  commands must not wait for it to come back;
* ur_interface's ``~/status`` (when it is published; the UR driver has none): the task starts only once it
  names the controller's arm (another arm's kinematics put the tool elsewhere: exit 2), and a fault,
  protective stop or lost connection it reports stops the controller (exit 1), as a robot fault does in
  ``direct``, and so does a command of ours it refused or stopped (the next command would start the arm
  again: the controller would not know its law no longer reaches the arm); a different loop rate is warned
  about once;
* joint states that do not carry the model's joint names are named in a warning (a ``tf_prefix``);
* velocity output: the state arrives late (the transport, and a busy machine, hold it for tens of ms), and the
  pose loop (crossover ~30 rad/s) rings and grows with that delay in it. The law gets the sample's joint
  positions advanced by the velocities this controller commanded over the sample's age
  (:func:`advanced_by_commands`, a Smith predictor with the commands as the model of the arm): the delay of the
  state leaves the loop, the robot's own following error stays in it. The age is measured against the
  smallest (arrival - stamp) of the last seconds (:class:`StateAge`), so a stamp on another clock (the
  robot's, a simulation slower than real time) is not taken for a delay.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ..robots.model import same_robot

__all__ = ["EXIT_CONFIGURATION", "Sample", "StateAge", "TopicsRobot", "advanced_by_commands", "command_refusal",
           "interface_problem"]

EXIT_CONFIGURATION = 2
_COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
_SENSOR_QOS = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
_STATUS_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: ur_interface loop states in which the arm does not follow commands (hardware/robot_loop.LoopState)
_NOT_FOLLOWING = ("fault", "connecting", "stopped")
#: a state older than this (s) is not advanced (a stall, not a delay: the state timeout handles it)
PREDICTION_MAX_AGE_S = 0.5


@dataclass(frozen=True)
class Sample:
    """One cycle's input: joint state (t: its stamp minus the first joint state's, s, as the robot's time in
    ``direct`` starts near 0; q rad, qd rad/s), wrench (base or tool0 axes), currents (A)."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    wrench: np.ndarray | None
    wrench_in_base_axes: bool
    current: np.ndarray | None


def advanced_by_commands(q_rad: np.ndarray, stamp_s: float, now_s: float, sent_s: np.ndarray,
                         sent_rad_s: np.ndarray) -> np.ndarray:
    """Joint positions ``q_rad`` stamped ``stamp_s``, advanced to ``now_s`` by the commanded velocities:
    q + sum_i v_i |[s_i, s_{i+1}] ∩ [stamp, now]|, where command i (``sent_rad_s[i]``, rad/s) was sent at
    ``sent_s[i]`` (the clock of ``now_s``, s, ascending) and held until the next one (the last: until now).
    Commands before the stamp count from the stamp on. ``q_rad`` itself when the state is not older than now,
    or older than PREDICTION_MAX_AGE_S."""
    age_s = now_s - stamp_s
    if not 0.0 < age_s <= PREDICTION_MAX_AGE_S or len(sent_s) == 0:
        return q_rad
    ends = np.append(sent_s[1:], now_s)
    held_s = np.clip(np.minimum(ends, now_s) - np.maximum(sent_s, stamp_s), 0.0, None)
    return q_rad + held_s @ sent_rad_s


class StateAge:
    """Age of a state on the receiver's clock, from stamps on any clock: the offset (arrival - stamp) of
    the least delayed state of the last ``window_s`` stands for no delay, so age = now - stamp - that offset.
    The window must outlast a congested stretch of the transport; a sender clock that drifts by a fraction d
    (a simulation running slower than real time) makes the age up to d * (window_s + window_s / blocks) too long.
    """

    def __init__(self, window_s: float = 1.0, blocks: int = 8) -> None:
        self._block_s = window_s / blocks
        self._minima: deque[float] = deque(maxlen=blocks)
        self._block_start_s: float | None = None
        self._block_min = float("inf")

    def arrived(self, stamp_s: float, arrival_s: float) -> None:
        if self._block_start_s is None or arrival_s - self._block_start_s > self._block_s:
            if self._block_start_s is not None:
                self._minima.append(self._block_min)
            self._block_start_s, self._block_min = arrival_s, float("inf")
        self._block_min = min(self._block_min, arrival_s - stamp_s)

    def stamp_on_local_clock(self, stamp_s: float) -> float:
        """When the state stamped ``stamp_s`` was taken, on the arrival clock (s)."""
        return stamp_s + min(self._block_min, min(self._minima, default=float("inf")))


def interface_problem(status: dict, robot: str, topic: str) -> tuple[str, int] | None:
    """Why the controller must not (go on) commanding the robot node whose ``~/status`` is ``status``:
    (reason, exit code), or None."""
    theirs = status.get("robot")
    if theirs is not None and not same_robot(str(theirs), robot):
        return (f"the robot node runs a {theirs} ({topic}), but the controller's model is of a {robot}: give "
                f"ur_interface this arm's parameter file (config:=), or a model of the {theirs} (model_file)",
                EXIT_CONFIGURATION)
    state = status.get("state")
    if state in _NOT_FOLLOWING or status.get("connected") is False:
        why = status.get("fault") or f"robot node state {state}"
        return f"robot fault: {why} ({topic})", 1
    return None


def command_refusal(status: dict) -> str | None:
    """The event of a ``~/status`` message that says ur_interface refused or stopped a command, else None."""
    event = str(status.get("event") or "")
    return event if event.startswith("command stopped") or " command refused" in event else None


class TopicsRobot:
    """Subscriptions, command publishers and checks of the ``topics`` connection (all thread-safe)."""

    def __init__(self, node: Node, joint_names: list[str], *, robot: str, output_mode: str, rate_hz: float,
                 force_source: str, status_topic: str, state_timeout_s: float, state_prediction: bool = True) -> None:
        self._node, self._names, self._robot = node, list(joint_names), robot
        self._rate_hz, self._force_source = rate_hz, force_source
        self._status_topic, self._timeout_s = status_topic, state_timeout_s
        self._lock = threading.Lock()
        self._joint: tuple[float, np.ndarray, np.ndarray] | None = None
        self._received_at: float | None = None  # monotonic time of the newest joint state
        self._taken_t: float | None = None  # t of the sample last given to the law
        self._first_stamp_s: float | None = None  # the first joint state's stamp: the law's time starts there
        self._current: np.ndarray | None = None
        self._wrench: tuple[np.ndarray, bool] | None = None
        self._status: dict | None = None
        self._refusal: str | None = None  # ur_interface refused or stopped one of our commands
        self._other_names: list[str] | None = None
        self._warned: set[str] = set()
        #: velocity output: (wall time s, command rad/s) of the last PREDICTION_MAX_AGE_S, for advanced_by_commands
        self._age = StateAge()
        self._sent: deque[tuple[float, np.ndarray]] | None = (
            deque(maxlen=int(rate_hz * PREDICTION_MAX_AGE_S) + 2)
            if output_mode == "velocity" and state_prediction else None)
        topic = "/forward_effort_controller/commands" if output_mode == "torque" else \
            "/forward_velocity_controller/commands"
        self.command_pub = node.create_publisher(Float64MultiArray, topic, _COMMAND_QOS)
        self.stop_pub = node.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands",
                                              _COMMAND_QOS)
        node.create_subscription(JointState, "/joint_states", self._on_joint_state, _SENSOR_QOS)
        node.create_subscription(JointState, "/motor_currents", self._on_current, _SENSOR_QOS)
        node.create_subscription(WrenchStamped, "/force_torque_sensor_broadcaster/wrench", self._on_wrench,
                                 _SENSOR_QOS)
        if status_topic:
            node.create_subscription(String, status_topic, self._on_status, _STATUS_QOS)

    # ---- subscriptions (executor thread) ----------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        by_name = {n: i for i, n in enumerate(msg.name)}
        try:
            idx = [by_name[n] for n in self._names]
        except KeyError:
            with self._lock:
                self._other_names = list(msg.name)
            return
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        q = np.array([msg.position[i] for i in idx])
        qd = np.array([msg.velocity[i] for i in idx]) if len(msg.velocity) == len(msg.name) else np.zeros(len(idx))
        with self._lock:
            if self._first_stamp_s is None:
                self._first_stamp_s = t
            self._joint, self._received_at = (t - self._first_stamp_s, q, qd), time.monotonic()
            self._age.arrived(t - self._first_stamp_s, time.time())

    def _on_current(self, msg: JointState) -> None:
        by_name = {n: i for i, n in enumerate(msg.name)}
        try:
            current = np.array([msg.effort[by_name[n]] for n in self._names])
        except (KeyError, IndexError):
            return
        with self._lock:
            self._current = current

    def _on_wrench(self, msg: WrenchStamped) -> None:
        f, m = msg.wrench.force, msg.wrench.torque
        in_base = msg.header.frame_id.endswith("base") or msg.header.frame_id == ""
        with self._lock:
            self._wrench = (np.array([f.x, f.y, f.z, m.x, m.y, m.z]), in_base)

    def _on_status(self, msg: String) -> None:
        try:
            status = json.loads(msg.data)
        except ValueError:
            return
        if isinstance(status, dict):
            with self._lock:
                self._status = status
                # every status message is seen here; an event is only in the one that reports it
                if self._taken_t is not None:  # from the controller's first command on
                    self._refusal = self._refusal or command_refusal(status)

    # ---- control thread ---------------------------------------------------------------------------------
    def ready(self) -> bool:
        """The first sample is here (with the wrench or the currents, whichever the force comes from), and
        ur_interface's status too when it publishes one. Names joint states without our joints once."""
        with self._lock:
            joint, status, others = self._joint, self._status, self._other_names
            force = self._wrench if self._force_source == "sensor" else self._current
        if joint is None and others is not None:
            self._warn_once(f"/joint_states carries {others}, not the model's joints {self._names}: waiting (a "
                            "driver started with a tf_prefix needs the same tf_prefix here)")
        awaiting_status = (status is None and bool(self._status_topic)
                           and self._node.count_publishers(self._status_topic) > 0)
        return joint is not None and force is not None and not awaiting_status

    def problem(self) -> tuple[str, int] | None:
        """Why the controller must stop now: (reason, exit code), or None."""
        with self._lock:
            received_at, status, refusal = self._received_at, self._status, self._refusal
        if received_at is not None and time.monotonic() - received_at > self._timeout_s:
            return (f"no joint state for {time.monotonic() - received_at:.2f} s (state_timeout_s "
                    f"{self._timeout_s:g}): the robot node is gone or stalled", 1)
        if status is None:
            return None
        theirs = status.get("rate_hz")
        if isinstance(theirs, (int, float)) and abs(theirs - self._rate_hz) > 0.01 * theirs:
            self._warn_once(f"the controller runs at {self._rate_hz:g} Hz, the robot node at {theirs:g} Hz "
                            f"({self._status_topic}): set rate_hz: {theirs:g}")
        problem = interface_problem(status, self._robot, self._status_topic)  # a fault first: it says why
        if problem is None and refusal is not None:
            return f"the robot node stopped a command of this controller: {refusal} ({self._status_topic})", 1
        return problem

    def take(self) -> Sample | None:
        """The newest sample if the law has not had it yet, else None."""
        with self._lock:
            if self._joint is None or self._joint[0] == self._taken_t:
                return None
            t, q, qd = self._joint
            self._taken_t = t
            taken_s = self._age.stamp_on_local_clock(t)
            wrench, in_base = (None, True) if self._wrench is None else (self._wrench[0].copy(), self._wrench[1])
            current = None if self._current is None else self._current.copy()
            sent = []  # the commands since the sample was taken, and the one in force then
            for item in reversed(self._sent or ()):
                sent.append(item)
                if item[0] <= taken_s:
                    break
        if sent:
            q = advanced_by_commands(q, taken_s, time.time(), np.array([s for s, _ in reversed(sent)]),
                                     np.array([v for _, v in reversed(sent)]))
        return Sample(t, q, qd, wrench, in_base, current)

    def publish(self, values) -> None:
        data = [float(v) for v in values]
        self.command_pub.publish(Float64MultiArray(data=data))
        if self._sent is not None:
            with self._lock:
                self._sent.append((time.time(), np.array(data)))

    def publish_stop(self, torque_nm=None) -> None:
        """Torque output: the stop torque; always a zero velocity, on which ur_interface brings the arm to rest."""
        if torque_nm is not None:
            self.publish(torque_nm)
        self.stop_pub.publish(Float64MultiArray(data=[0.0] * len(self._names)))
        if self._sent is not None:
            with self._lock:
                self._sent.append((time.time(), np.zeros(len(self._names))))

    def _warn_once(self, text: str) -> None:
        if text not in self._warned:
            self._warned.add(text)
            self._node.get_logger().warning(text)
