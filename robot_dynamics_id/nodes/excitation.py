"""excitation: stream an excitation trajectory to the robot as joint velocity commands.

Publishes ``/forward_velocity_controller/commands`` (std_msgs/Float64MultiArray,
rad/s, configured joint order) at the robot rate — so it drives this package's
ur_interface and the official UR ROS 2 driver alike — and
``/excitation/progress`` (std_msgs/String, JSON: phase, fraction, trajectory
time, position error). Subscribes ``/joint_states`` (for the start check and
the position feedback) and ``~/cancel`` (std_msgs/Empty: ramp out smoothly and
stop).

Before moving, the trajectory is checked against the robot's limits (refused
with the first violation named), and the arm must be at the trajectory's start
pose unless ``move_to_start`` is true, in which case it is first moved there
slowly. The streaming loop runs in its own thread with absolute deadlines;
:class:`~robot_dynamics_id.excitation.streamer.TrajectoryStreamer` computes
each command.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, Float64MultiArray, String

from ..excitation.streamer import StartPoseError, TrajectoryStreamer
from ..parameters import ParameterError, ParameterSpec, check_positive
from ..robots.model import load_robot
from ._ros_params import declare_parameters
from ._run import run_node

__all__ = ["EXCITATION_PARAMETERS", "ExcitationNode", "main"]

EXCITATION_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("trajectory_file", "string", "",
                  "excitation trajectory YAML (make one with: rdi excite plan --out FILE)"),
    ParameterSpec("robot", "string", "ur3", "robot model (limits for the check): ur3, ur3e, ur5e, ur10e or a URDF"),
    ParameterSpec("rate_hz", "double", 500.0, "command rate (the robot's: 500 e-Series, 125 CB3)", "Hz"),
    ParameterSpec("start_tolerance_rad", "double", 0.05, "largest distance from the start pose to begin", "rad"),
    ParameterSpec("move_to_start", "bool", False, "move slowly to the start pose first if the arm is elsewhere"),
    ParameterSpec("approach_velocity_rad_s", "double", 0.2, "joint speed limit of the move to the start", "rad/s"),
    ParameterSpec("approach_acceleration_rad_s2", "double", 0.5, "acceleration limit of that move", "rad/s^2"),
    ParameterSpec("ramp_s", "double", 1.0, "smooth speed ramp at the start, the end and on cancel", "s"),
    ParameterSpec("position_gain_per_s", "double", 2.0, "feedback on the position error (keeps the plan)", "1/s"),
    ParameterSpec("max_position_error_rad", "double", 0.25,
                  "stop if the arm lags the plan by more than this on any joint", "rad"),
    ParameterSpec("table_height_m", "double", 0.05,
                  "keep-out: every link origin and the TCP must stay above this height (base frame)", "m"),
    ParameterSpec("exit_when_done", "bool", True, "end the process when the trajectory is finished"),
    ParameterSpec("wait_for_subscribers", "string_array", [],
                  "nodes that must be subscribed to the commands before the first one is sent (e.g. the recorder: "
                  "torque_logger); empty: any one subscriber. Every subscription already in the graph is waited for"),
    ParameterSpec("subscriber_wait_s", "double", 60.0,
                  "give up (exit 4) if those subscribers have not matched after this long", "s"),
)

_COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
# Reliable like the UR driver expects; a deeper writer history than the driver's depth 1 so that a
# recorder that falls behind for a moment still receives every command (the robot reads only the newest).
_COMMAND_PUBLISH_QOS = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: joint states older than this (wall clock) stop the excitation
_STALE_STATE_S = 1.0


class SubscriberWaitError(RuntimeError):
    """The robot interface or a required recorder never subscribed to the commands."""


class ExcitationNode(Node):
    """Streams an excitation; see the module docstring."""

    def __init__(self) -> None:
        super().__init__("excitation")
        p = declare_parameters(self, EXCITATION_PARAMETERS)
        from ..excitation.checker import ExcitationLimits, TrajectoryLimitError, check_trajectory
        from ..excitation.trajectory import TrajectoryFileError, approach_trajectory, load_trajectory

        if not p["trajectory_file"]:
            raise ParameterError("parameter 'trajectory_file' is empty: plan one with "
                                 "`rdi excite plan --robot ur3 --out excitation.yaml` and pass its path")
        try:
            robot = load_robot(p["robot"])
        except (ValueError, FileNotFoundError) as exc:
            raise ParameterError(f"parameter 'robot': {exc}") from None
        try:
            trajectory = load_trajectory(p["trajectory_file"])
        except (TrajectoryFileError, FileNotFoundError, ValueError) as exc:
            raise ParameterError(f"parameter 'trajectory_file': {exc}") from None
        self.rate_hz = check_positive("rate_hz", p["rate_hz"], upper=1000.0)
        limits = ExcitationLimits.from_robot(robot, table_height_m=float(p["table_height_m"]))
        try:
            check_trajectory(trajectory, robot, limits)
        except TrajectoryLimitError as exc:
            raise ParameterError(f"trajectory {p['trajectory_file']} refused: {exc}") from None
        self._approach_limits = (check_positive("approach_velocity_rad_s", p["approach_velocity_rad_s"]),
                                 check_positive("approach_acceleration_rad_s2", p["approach_acceleration_rad_s2"]))
        self._approach = approach_trajectory
        self._move_to_start = bool(p["move_to_start"])
        self._exit_when_done = bool(p["exit_when_done"])
        self._required_subscribers = sorted({n.strip().lstrip("/") for n in p["wait_for_subscribers"] or [] if n.strip()})
        self._subscriber_wait_s = check_positive("subscriber_wait_s", p["subscriber_wait_s"])
        self._names = list(robot.joint_names)
        self.streamer = TrajectoryStreamer(
            trajectory=trajectory, ramp_s=check_positive("ramp_s", p["ramp_s"], allow_zero=True),
            position_gain_per_s=check_positive("position_gain_per_s", p["position_gain_per_s"], allow_zero=True),
            start_tolerance_rad=check_positive("start_tolerance_rad", p["start_tolerance_rad"]),
            max_position_error_rad=check_positive("max_position_error_rad", p["max_position_error_rad"]))
        self._q: np.ndarray | None = None
        self._robot_time_s = 0.0
        self._received_s = 0.0
        self._q_lock = threading.Lock()
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self.exit_code = 0
        self._command_pub = self.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands",
                                                  _COMMAND_PUBLISH_QOS)
        self._progress_pub = self.create_publisher(String, "/excitation/progress", _STATE_QOS)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, _STATE_QOS)
        self.create_subscription(Empty, "~/cancel", self._on_cancel, _COMMAND_QOS)
        self._thread = threading.Thread(target=self._run, name="excitation_stream", daemon=True)
        self._thread.start()
        self.create_timer(0.1, self._check_finished)
        self.get_logger().info(f"excitation {p['trajectory_file']}: {trajectory.duration_s:.1f} s, "
                               f"checked against {robot.name} limits; waiting for /joint_states")

    # ---- callbacks ----------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        by_name = dict(zip(msg.name, msg.position))
        try:
            q = np.array([by_name[n] for n in self._names])
        except KeyError:
            return
        with self._q_lock:
            self._q = q
            self._robot_time_s = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
            self._received_s = time.monotonic()

    def _on_cancel(self, _msg: Empty) -> None:
        self.get_logger().warning("cancel requested: ramping out")
        self._cancel.set()

    def _check_finished(self) -> None:
        if self._finished.is_set() and self._exit_when_done:
            raise SystemExit(self.exit_code)

    # ---- streaming thread ----------------------------------------------------------------------------
    def _measured_q(self) -> np.ndarray | None:
        with self._q_lock:
            return None if self._q is None else self._q.copy()

    def _measured(self) -> tuple[float, np.ndarray]:
        """(robot time s, q rad) of the newest joint state."""
        with self._q_lock:
            return self._robot_time_s, self._q.copy()

    def _publish_progress(self, **fields) -> None:
        self._progress_pub.publish(String(data=json.dumps(fields)))

    def _run(self) -> None:
        try:
            self._stream()
        except Exception as exc:  # never leave the arm moving
            self.exit_code = 1
            self.get_logger().error(f"excitation stopped: {exc}")
            self._send(np.zeros(len(self._names)))
        finally:
            self._finished.set()

    def _send(self, velocity: np.ndarray) -> None:
        self._command_pub.publish(Float64MultiArray(data=[float(v) for v in velocity]))

    def _subscribers_ready(self) -> tuple[bool, list[str]]:
        """(ready, missing node names): every named node subscribes and every known subscription has matched.

        DDS drops what is published before a subscription has matched, so a recorder that matches late
        misses the first commands; the graph may know a subscription a moment before our writer has
        matched it, hence both checks.
        """
        infos = self.get_subscriptions_info_by_topic(self._command_pub.topic_name)
        present = {info.node_name for info in infos}
        missing = [n for n in self._required_subscribers if n not in present]
        matched = self._command_pub.get_subscription_count()
        return (not missing and matched >= max(1, len(infos))), missing

    def _wait_for_start(self) -> bool:
        """Block until the robot's state is known and the command subscribers have matched; False if cancelled."""
        deadline = time.monotonic() + self._subscriber_wait_s
        while True:
            ready, missing = self._subscribers_ready()
            if ready and self._measured_q() is not None:
                return True
            if time.monotonic() > deadline:
                what = (f"subscribers {missing} of {self._command_pub.topic_name}" if missing
                        else "/joint_states" if self._measured_q() is None
                        else f"a subscriber of {self._command_pub.topic_name} (is the robot interface running?)")
                raise SubscriberWaitError(f"no {what} after {self._subscriber_wait_s:.0f} s; start them, or change "
                                          "the parameter 'wait_for_subscribers'")
            if self._cancel.wait(0.05):
                return False

    def _stream(self) -> None:
        try:
            if not self._wait_for_start():
                return
        except SubscriberWaitError as exc:
            self.exit_code = 4
            self.get_logger().error(str(exc))
            self._publish_progress(phase="refused", reason=str(exc))
            return
        q = self._measured_q()
        try:
            self.streamer.check_start(q)
        except StartPoseError as exc:
            if not self._move_to_start:
                self.exit_code = 3
                self.get_logger().error(str(exc))
                self._publish_progress(phase="refused", reason=str(exc))
                return
            self.get_logger().info("moving slowly to the excitation's start pose")
            approach = self._approach(q, self.streamer.trajectory.start_position_rad,
                                      velocity_limit_rad_s=self._approach_limits[0],
                                      acceleration_limit_rad_s2=self._approach_limits[1], rate_hz=self.rate_hz)
            mover = TrajectoryStreamer(trajectory=approach, ramp_s=0.0,
                                       position_gain_per_s=self.streamer.position_gain_per_s,
                                       max_position_error_rad=self.streamer.max_position_error_rad)
            if not self._play(mover, "approach"):
                return
        self.get_logger().info("excitation started")
        if self._play(self.streamer, "excitation"):
            self.get_logger().info("excitation finished")

    def _play(self, streamer: TrajectoryStreamer, label: str) -> bool:
        period = 1.0 / self.rate_hz
        deadline = time.monotonic()
        next_progress = -np.inf
        while True:
            # The trajectory runs on the ROBOT's clock (joint-state stamps), so it stays in step with
            # the arm even when the arm's controller (or a simulator) runs late or early.
            now, q = self._measured()
            if time.monotonic() - self._received_s > _STALE_STATE_S:
                self.exit_code = 5
                reason = f"no /joint_states for {_STALE_STATE_S} s: the robot interface is gone; stopped"
                self.get_logger().error(reason)
                self._publish_progress(stage=label, phase="aborted", reason=reason)
                self._send(np.zeros(len(self._names)))
                return False
            if self._cancel.is_set():
                streamer.cancel(now)
            out = streamer.command(now, q)
            self._send(out.velocity_rad_s)
            if now >= next_progress or out.phase in ("done", "aborted"):
                self._publish_progress(stage=label, phase=out.phase, fraction=round(out.fraction, 4),
                                       trajectory_time_s=round(out.trajectory_time_s, 4),
                                       position_error_rad=round(out.position_error_rad, 5))
                next_progress = now + 0.1
            if out.phase == "aborted":
                self.exit_code = 4
                self.get_logger().error(streamer.aborted)
                self._publish_progress(stage=label, phase="aborted", reason=streamer.aborted)
                return False
            if out.phase == "done":
                return not self._cancel.is_set()
            deadline += period
            time.sleep(max(0.0, deadline - time.monotonic()))

    def shutdown(self) -> None:
        """Cancel (ramping out within ramp_s) and command rest before the process ends."""
        self._cancel.set()
        self._thread.join(2.0)
        self._send(np.zeros(len(self._names)))


def main(args=None) -> int:
    return run_node(ExcitationNode, args, name="excitation")


if __name__ == "__main__":
    sys.exit(main())
