"""excitation: run an excitation trajectory on the robot and watch it.

``command_interface: trajectory`` (default): the whole trajectory goes out once
as ``trajectory_msgs/JointTrajectory`` on
``/scaled_joint_trajectory_controller/joint_trajectory`` (points with position,
velocity and acceleration, interpolated quintic by the receiver), so the robot
loop — this package's ur_interface, or the UR driver's
scaled_joint_trajectory_controller — executes it on the robot's clock and no
500 Hz stream depends on this process. The node watches ``/joint_states``
(:class:`~robot_dynamics_id.excitation.monitor.TrajectoryMonitor`: progress
under speed scaling, divergence, a controller that does not move) and, where
present, ur_interface's ``~/trajectory_status`` (the reason of an abort). Once
ur_interface reports the goal running, its status (20 Hz: progress, position
error; its loop aborts on divergence) is what is watched and ``/joint_states``
is unsubscribed, unless ``watch_joint_states`` is true.
``~/cancel`` or Ctrl-C sends an empty trajectory: the arm slows down along the
path and stops.

``command_interface: velocity``: the trajectory is streamed as joint velocities
on ``/forward_velocity_controller/commands`` at the robot rate
(:class:`~robot_dynamics_id.excitation.streamer.TrajectoryStreamer`), as before.

Both publish ``/excitation/progress`` (std_msgs/String, JSON: stage, phase,
fraction, trajectory time, position error) and, for plotting, ``~/progress_fraction``
(std_msgs/Float64, 0..1 of the current stage) at the same rate (10 Hz); and
``/diagnostics`` (diagnostic_msgs/DiagnosticArray, 1 Hz, "excitation: trajectory":
ERROR when aborted or refused, WARN when cancelled or when the arm lags the plan
by over half of ``max_position_error_rad``). Before moving, the trajectory is
checked against the robot's limits (refused with the first violation named),
the robot is the one it was planned for (``robot`` empty: the file's), and,
when ur_interface's ``~/status`` is published, it must name that robot and its
velocity limits (x its velocity_scale) must allow the trajectory. The arm must
be at the trajectory's start pose unless ``move_to_start`` is true, in which
case it is first moved there slowly.

Exit codes: 0 done, 2 configuration, 3 not at the start pose, 4 aborted (the
arm did not follow, or a subscriber never came or left during the run), 5 the robot's joint states
stopped, 6 cancelled before the end.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import numpy as np
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..excitation.monitor import SilenceWatch, TrajectoryMonitor, verdict_from_status
from ..excitation.streamer import StartPoseError, TrajectoryStreamer
from ..hardware.trajectory_tracking import TrajectoryGoal, TrajectoryGoalError
from ..parameters import ParameterError, check_choice, check_positive
from ..robots.model import load_robot
from ._diagnostic_rules import excitation_report
from ._diagnostics import NodeDiagnostics
from ._excitation_parameters import (EXCITATION_PARAMETERS, interface_rate_note, interface_robot_problem,
                                     interface_speed_problem, run_robot)
from ._recorder_watch import RecorderWatch
from ._ros_params import declare_parameters
from ._run import EXIT_CANCELLED, flush_publishers, run_node
from ._trajectory_msgs import joint_order, message_from_arrays

__all__ = ["EXCITATION_PARAMETERS", "ExcitationNode", "main"]

_COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
# Reliable like the UR driver expects; a deeper writer history than the driver's depth 1 so that a
# recorder that falls behind for a moment still receives every command (the robot reads only the newest).
_COMMAND_PUBLISH_QOS = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)
_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: joint states older than this (wall clock) stop a velocity stream: this process closes the loop
_STALE_STATE_S = 1.0
#: a gap between two steps of the stream longer than this is a stall of this process (not scheduled): its
#: joint states may be queued, not missing, so the wait above restarts (excitation/monitor.py SilenceWatch)
_SELF_STALL_S = 0.1
#: a trajectory runs in the robot's own loop: the watcher's late joint states endanger nothing (a loaded
#: machine may starve this process for a second), so only a silent robot interface (neither joint states nor
#: trajectory status for this long, wall clock) ends the run
_SILENT_INTERFACE_S = 5.0
#: the joint states are checked against the plan at most this often (robot time, s): 100 Hz is plenty to see
#: a divergence, and it keeps this process's CPU small
_MONITOR_PERIOD_S = 0.01
#: largest interpolation error accepted for the points sent (rad)
_MAX_INTERPOLATION_ERROR_RAD = 1e-4
#: trajectory status phases in which the controller still moves the arm
_MOVING = ("running", "stopping", "settling")
_INACTIVE_CONTROLLER_HINT = (
    ". Is the trajectory controller active? With the UR driver: ros2 control switch_controllers --activate "
    "scaled_joint_trajectory_controller --deactivate forward_velocity_controller; and check the speed scaling "
    "(the pendant's slider) is above 0")


class SubscriberWaitError(RuntimeError):
    """The robot interface or a required recorder never subscribed to the commands."""


class ExcitationNode(Node):
    """Sends or streams an excitation and watches it; see the module docstring."""

    #: run_node spins it with the EventsExecutor: it receives /joint_states at the robot's rate
    events_executor = True

    def __init__(self) -> None:
        super().__init__("excitation")
        p = declare_parameters(self, EXCITATION_PARAMETERS)
        from ..excitation.checker import ExcitationLimits, TrajectoryLimitError, check_trajectory
        from ..excitation.trajectory import approach_trajectory
        from ..excitation.trajectory_file import TrajectoryFileError, load_trajectory

        if not p["trajectory_file"]:
            raise ParameterError("parameter 'trajectory_file' is empty: plan one with "
                                 "`rdi excite plan --robot ur3 --out excitation.yaml` and pass its path")
        try:
            trajectory = load_trajectory(p["trajectory_file"])
        except (TrajectoryFileError, FileNotFoundError, ValueError) as exc:
            raise ParameterError(f"parameter 'trajectory_file': {exc}") from None
        self._robot_name = run_robot(p["robot"], trajectory.robot, p["trajectory_file"])
        try:
            robot = load_robot(self._robot_name, tf_prefix=p["tf_prefix"] or "")
        except (ValueError, FileNotFoundError) as exc:
            raise ParameterError(f"parameter 'robot': {exc}") from None
        planned_for = f"planned for {trajectory.robot}"
        if trajectory.robot is None:
            planned_for = "planned for an unnamed robot"
            self.get_logger().warning(f"trajectory {p['trajectory_file']} does not say which robot it was planned "
                                      f"for (an older or hand-written file): only checked against the {robot.name} "
                                      f"limits; add 'robot: {robot.name}' to it once you know it was planned for "
                                      "this arm")
        self.rate_hz = check_positive("rate_hz", p["rate_hz"], upper=1000.0)
        limits = ExcitationLimits.from_robot(robot, table_height_m=float(p["table_height_m"]))
        try:
            check_trajectory(trajectory, robot, limits)
        except TrajectoryLimitError as exc:
            raise ParameterError(f"trajectory {p['trajectory_file']} refused: {exc}") from None
        # the move to the start is meant to be slow: at most a tenth of the slowest joint's speed limit
        self._approach_limits = (
            check_positive("approach_velocity_rad_s", p["approach_velocity_rad_s"],
                           upper=round(0.1 * float(np.min(robot.velocity_limit_rad_s)), 3)),
            check_positive("approach_acceleration_rad_s2", p["approach_acceleration_rad_s2"],
                           upper=round(0.1 * float(np.min(robot.acceleration_limit_rad_s2)), 3)))
        self._approach = approach_trajectory
        self._move_to_start = bool(p["move_to_start"])
        self._exit_when_done = bool(p["exit_when_done"])
        self._required_subscribers = sorted({n.strip().lstrip("/") for n in p["wait_for_subscribers"] or [] if n.strip()})
        self._subscriber_wait_s = check_positive("subscriber_wait_s", p["subscriber_wait_s"])
        self._names = list(robot.joint_names)
        self._interface = check_choice("command_interface", p["command_interface"], ("trajectory", "velocity"))
        self._trajectory_topic = p["trajectory_topic"]
        self._point_rate_hz = check_positive("trajectory_point_rate_hz", p["trajectory_point_rate_hz"], upper=1000.0)
        self._start_timeout_s = check_positive("start_timeout_s", p["start_timeout_s"])
        self._controller_status: dict | None = None
        self._next_check_s = -np.inf
        self._monitor: TrajectoryMonitor | None = None
        self._verdict = None
        self.streamer = TrajectoryStreamer(
            trajectory=trajectory, ramp_s=check_positive("ramp_s", p["ramp_s"], allow_zero=True),
            position_gain_per_s=check_positive("position_gain_per_s", p["position_gain_per_s"], allow_zero=True),
            start_tolerance_rad=check_positive("start_tolerance_rad", p["start_tolerance_rad"]),
            max_position_error_rad=check_positive("max_position_error_rad", p["max_position_error_rad"]))
        self._q: np.ndarray | None = None
        self._order: np.ndarray | None = None
        self._names_problem: str | None = None  # the joint states name other joints (e.g. a tf_prefix)
        self._robot_time_s = 0.0
        self._received_s = 0.0
        self._status_received_s = 0.0  # wall clock of the latest trajectory status
        self._q_lock = threading.Lock()
        self._rate_mark: tuple[float, float] | None = None  # (wall s, robot s)
        self._robot_rate = 1.0
        self._halted = False  # shutdown: nothing more is published from the streaming thread
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self.exit_code = 0
        if self._interface == "trajectory":
            self._command_pub = self.create_publisher(JointTrajectoryMsg, self._trajectory_topic, _COMMAND_QOS)
            if p["trajectory_status_topic"]:
                self.create_subscription(String, p["trajectory_status_topic"], self._on_controller_status,
                                         QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
        else:
            self._command_pub = self.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands",
                                                      _COMMAND_PUBLISH_QOS)
        self._interface_status_topic = p["interface_status_topic"]
        self._interface_status: dict | None = None  # ur_interface's newest ~/status: which robot it runs
        self._rate_noted = False  # warned once that velocity commands outpace the interface (a CB3 at 125 Hz)
        if self._interface_status_topic:
            self.create_subscription(String, self._interface_status_topic, self._on_interface_status, _STATE_QOS)
        self._progress_pub = self.create_publisher(String, "/excitation/progress", _STATE_QOS)
        self._fraction_pub = self.create_publisher(Float64, "~/progress_fraction", _STATE_QOS)
        self._progress: dict | None = None  # the newest progress fields, for /diagnostics
        NodeDiagnostics(self, part="trajectory", hardware_id=f"{robot.name}", collect=lambda: excitation_report(
            self._progress, max_position_error_rad=self.streamer.max_position_error_rad, exit_code=self.exit_code,
            finished=self._finished.is_set()))
        # Raw: with the trajectory interface only every ~10 ms sample is decoded (the monitor's rate), the
        # rest only marks the stream alive, so this process costs little at the robot's 500 Hz.
        self._next_decode_s = -np.inf
        self._watch_joint_states = bool(p["watch_joint_states"])
        self._status_topic = p["trajectory_status_topic"]
        self._status_goal_after: int | None = None  # watching a goal sent when the status had this goal count
        self._joint_sub = self.create_subscription(JointState, "/joint_states", self._on_joint_state_bytes,
                                                   _STATE_QOS, raw=True)
        self.create_subscription(Empty, "~/cancel", self._on_cancel, _COMMAND_QOS)
        self._recorders = RecorderWatch(self, self._required_subscribers)  # a SIGKILLed one stays in the graph
        self._thread = threading.Thread(target=self._run, name="excitation_stream", daemon=True)
        self._thread.start()
        self.get_logger().info(f"excitation {p['trajectory_file']}: {trajectory.duration_s:.1f} s, {planned_for}, "
                               f"checked against {robot.name} limits; {self._interface} interface on "
                               f"{self._command_pub.topic_name}; waiting for /joint_states")

    # ---- callbacks ----------------------------------------------------------------------------
    def _on_joint_state_bytes(self, data: bytes) -> None:
        now = time.monotonic()
        if self._interface == "trajectory" and now < self._next_decode_s and self._q is not None:
            with self._q_lock:
                self._received_s = now
            return
        self._next_decode_s = now + _MONITOR_PERIOD_S
        self._on_joint_state(deserialize_message(data, JointState))

    def _on_joint_state(self, msg: JointState) -> None:
        if self._order is None or len(msg.name) != len(self._order):
            try:
                self._order = joint_order(msg.name, self._names)
            except TrajectoryGoalError as exc:
                self._names_problem = f"/joint_states: {exc}"
                self._order = None
                return
        t = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        q = np.asarray(msg.position)[self._order]
        with self._q_lock:
            self._q = q
            self._robot_time_s = t
            self._received_s = now = time.monotonic()
            monitor = self._monitor
        # robot seconds per wall second (a simulator on a loaded machine runs slow): bounds the stop's wait
        if self._rate_mark is None or now - self._rate_mark[0] >= 0.5:
            if self._rate_mark is not None:
                self._robot_rate = (t - self._rate_mark[1]) / (now - self._rate_mark[0])
            self._rate_mark = (now, t)
        if monitor is not None and t >= self._next_check_s:
            self._next_check_s = t + _MONITOR_PERIOD_S
            self._verdict = monitor.update(t, q)

    def _on_controller_status(self, msg: String) -> None:
        self._status_received_s = time.monotonic()
        try:
            self._controller_status = status = json.loads(msg.data)
        except ValueError:
            return
        after = self._status_goal_after
        if (self._joint_sub is not None and not self._watch_joint_states and after is not None
                and status.get("goal", 0) > after and verdict_from_status(status) is not None):
            # ur_interface runs our goal and reports its progress at 20 Hz (and aborts on divergence itself):
            # the 500 Hz joint states are no longer needed here (their delivery is most of this process's CPU)
            self.destroy_subscription(self._joint_sub)
            self._joint_sub = None
            self.get_logger().info(f"watching the trajectory through {self._status_topic} (set watch_joint_states "
                                   "to also check it against /joint_states)")

    def _on_interface_status(self, msg: String) -> None:
        try:
            self._interface_status = json.loads(msg.data)
        except ValueError:
            pass

    def _on_cancel(self, _msg: Empty) -> None:
        self.get_logger().warning("cancel requested: ramping out")
        self._cancel.set()

    @property
    def done(self) -> bool:
        """The job has ended (run_node then exits with :attr:`exit_code`)."""
        return self._finished.is_set() and self._exit_when_done

    # ---- streaming thread ----------------------------------------------------------------------------
    def _measured_q(self) -> np.ndarray | None:
        with self._q_lock:
            return None if self._q is None else self._q.copy()

    def _measured(self) -> tuple[float, np.ndarray]:
        """(robot time s, q rad) of the newest joint state."""
        with self._q_lock:
            return self._robot_time_s, self._q.copy()

    def _publish_progress(self, **fields) -> None:
        self._progress = fields
        self._progress_pub.publish(String(data=json.dumps(fields)))
        if "fraction" in fields:
            self._fraction_pub.publish(Float64(data=float(fields["fraction"])))

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
        if self._halted:
            return
        if self._interface == "trajectory":  # stop: an empty trajectory
            self._command_pub.publish(JointTrajectoryMsg(joint_names=self._names))
        else:
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

    def _interface_runs_our_robot(self) -> bool:
        """True once the robot interface's status names our robot, or when it publishes none (the UR driver);
        False while its first status is awaited. Raises :class:`ParameterError` when it names another arm."""
        topic = self._interface_status_topic
        if not topic or self.count_publishers(topic) == 0:
            return True
        if self._interface_status is None:
            return False
        problem = (interface_robot_problem(self._interface_status, self._robot_name, topic)
                   or interface_speed_problem(self._interface_status, self.streamer.trajectory, self._names, topic))
        if problem is not None:
            raise ParameterError(problem)
        note = interface_rate_note(self._interface_status, self.rate_hz, self._interface)
        if note and not self._rate_noted:
            self._rate_noted = True
            self.get_logger().warning(note)
        return True

    def _wait_for_start(self) -> bool:
        """Block until the robot's state is known, the robot interface runs our robot and the command subscribers
        have matched; False if cancelled."""
        deadline = time.monotonic() + self._subscriber_wait_s
        while True:
            ready, missing = self._subscribers_ready()
            checked = self._interface_runs_our_robot()
            if ready and checked and self._measured_q() is not None:
                return True
            if self._names_problem is not None and self._measured_q() is None:
                raise ParameterError(self._names_problem)
            if time.monotonic() > deadline:
                what = (f"subscribers {missing} of {self._command_pub.topic_name}" if missing
                        else "/joint_states" if self._measured_q() is None
                        else f"status on {self._interface_status_topic}" if not checked
                        else f"a subscriber of {self._command_pub.topic_name} (is the robot interface running?)")
                raise SubscriberWaitError(f"no {what} after {self._subscriber_wait_s:.0f} s (subscriber_wait_s): "
                                          "start them (ur_interface, the recorder: check its log, it may have "
                                          "exited, e.g. for an existing bag_path), or change 'wait_for_subscribers'")
            if self._cancel.wait(0.05):
                return False

    def _stream(self) -> None:
        try:
            if not self._wait_for_start():
                self.exit_code = EXIT_CANCELLED  # cancelled before it started
                return
        except (SubscriberWaitError, ParameterError) as exc:
            self.exit_code = 2 if isinstance(exc, ParameterError) else 4
            self.get_logger().error(str(exc))
            self._publish_progress(phase="refused", reason=str(exc))
            return
        q = self._measured_q()
        trajectory = self.streamer.trajectory
        try:
            self.streamer.check_start(q)
        except StartPoseError as exc:
            if not self._move_to_start:
                self.exit_code = 3
                self.get_logger().error(str(exc))
                self._publish_progress(phase="refused", reason=str(exc))
                return
            self.get_logger().info("moving slowly to the excitation's start pose")
            approach = self._approach(q, trajectory.start_position_rad,
                                      velocity_limit_rad_s=self._approach_limits[0],
                                      acceleration_limit_rad_s2=self._approach_limits[1], rate_hz=self.rate_hz)
            if not self._run_stage(approach, "approach", ramp_s=0.0):
                if self._cancel.is_set() and self.exit_code == 0:
                    self.exit_code = EXIT_CANCELLED
                return
        self.get_logger().info("excitation started")
        if self._run_stage(trajectory, "excitation", ramp_s=self.streamer.ramp_s):
            # a recorder that stopped mid-run holds part of it
            left = self._recorders.gone(lambda: self._subscribers_ready()[1], throttled=False)
            if left:
                self.exit_code = 4
                self.get_logger().error(f"excitation finished, but {left} no longer subscribe(s): their recording "
                                        "of the run is incomplete; record it again")
            else:
                self.get_logger().info("excitation finished")
        elif self._cancel.is_set() and self.exit_code == 0:
            self.exit_code = EXIT_CANCELLED

    def _run_stage(self, trajectory, label: str, *, ramp_s: float) -> bool:
        if self._interface == "trajectory":
            return self._execute(trajectory, label)
        streamer = self.streamer if label == "excitation" else TrajectoryStreamer(
            trajectory=trajectory, ramp_s=ramp_s, position_gain_per_s=self.streamer.position_gain_per_s,
            max_position_error_rad=self.streamer.max_position_error_rad)
        return self._play(streamer, label)

    # ---- trajectory interface -------------------------------------------------------------------------------
    def _goal_message(self, trajectory):
        """The trajectory as points every 1/trajectory_point_rate_hz (and its last sample), checked: the
        receiver's quintic interpolation between them must reproduce every planned sample."""
        step = max(1, int(round(trajectory.rate_hz / self._point_rate_hz)))
        index = np.arange(0, trajectory.n_samples, step)
        if index[-1] != trajectory.n_samples - 1:
            index = np.r_[index, trajectory.n_samples - 1]
        t = trajectory.time_s[index] - trajectory.time_s[0]
        q, qd, qdd = (a[index] for a in (trajectory.position_rad, trajectory.velocity_rad_s,
                                          trajectory.acceleration_rad_s2))
        goal = TrajectoryGoal(t, q, qd, qdd)
        error = float(np.max(np.abs(goal.positions_at(trajectory.time_s - trajectory.time_s[0])
                                    - trajectory.position_rad)))
        if error > _MAX_INTERPOLATION_ERROR_RAD:
            raise ParameterError(f"the trajectory sent at {self._point_rate_hz:g} points/s misses the plan by "
                                 f"{error:.2g} rad between points; raise trajectory_point_rate_hz")
        return message_from_arrays(t, q, qd, qdd, self._names), len(index)

    def _execute(self, trajectory, label: str) -> bool:
        """Send ``trajectory`` whole and watch it until done, failed or cancelled; False unless done."""
        msg, points = self._goal_message(trajectory)
        goal_before = (self._controller_status or {}).get("goal", 0)
        monitor = TrajectoryMonitor(trajectory.time_s - trajectory.time_s[0], trajectory.position_rad,
                                    path_tolerance_rad=self.streamer.max_position_error_rad,
                                    goal_tolerance_rad=self.streamer.start_tolerance_rad,
                                    start_timeout_s=self._start_timeout_s, stalled_hint=_INACTIVE_CONTROLLER_HINT)
        with self._q_lock:
            self._verdict, self._next_check_s, self._monitor = None, -np.inf, monitor
        self._status_goal_after = goal_before
        self._command_pub.publish(msg)
        self.get_logger().info(f"{label}: sent {points} points ({trajectory.duration_s:.1f} s) to "
                               f"{self._command_pub.topic_name}")
        next_progress = 0.0
        try:
            while True:
                if self._cancel.wait(0.02):
                    return self._stop_trajectory(label)
                verdict, controller = self._verdict, self._controller_status or {}
                if self._joint_sub is None and controller.get("goal", 0) > goal_before:
                    verdict = verdict_from_status(controller) or verdict
                failure = self._trajectory_failure(verdict, controller, goal_before)
                if failure is not None:
                    self.exit_code = 5 if failure.startswith("no /joint_states") else 4
                    self.get_logger().error(f"{label} stopped: {failure}")
                    self._publish_progress(stage=label, phase="aborted", reason=failure)
                    self._command_pub.publish(JointTrajectoryMsg(joint_names=self._names))
                    return False
                if verdict is None:
                    continue
                done = verdict.phase == "done" or (controller.get("goal", 0) > goal_before
                                                   and controller.get("phase") == "succeeded")
                if done or time.monotonic() >= next_progress:
                    self._publish_progress(stage=label, phase="done" if done else verdict.phase,
                                           fraction=round(1.0 if done else verdict.fraction, 4),
                                           trajectory_time_s=round(verdict.path_time_s, 4),
                                           position_error_rad=round(verdict.deviation_rad, 5),
                                           speed_scaling=controller.get("speed_scaling"))
                    next_progress = time.monotonic() + 0.1
                if done:
                    return True
        finally:
            self._status_goal_after = None
            with self._q_lock:
                self._monitor = None

    def _trajectory_failure(self, verdict, controller: dict, goal_before: int) -> str | None:
        if time.monotonic() - max(self._received_s, self._status_received_s) > _SILENT_INTERFACE_S:
            return (f"no /joint_states and no trajectory status for {_SILENT_INTERFACE_S} s: the robot interface "
                    "is gone; stopped")
        if controller.get("goal", 0) > goal_before and controller.get("phase") in ("aborted", "rejected", "cancelled"):
            return f"the trajectory controller reports: {controller.get('reason') or controller.get('phase')}"
        if controller.get("phase") == "rejected" and "goal" not in controller:
            return controller.get("reason", "trajectory rejected")
        if verdict is not None and verdict.phase in ("diverged", "stalled"):
            return verdict.reason
        return self._recording_stopped()

    def _recording_stopped(self) -> str | None:
        """Why the run must stop: a required recorder left mid-run (the rest would be motion nobody records)."""
        left = self._recorders.gone(lambda: self._subscribers_ready()[1])
        return (f"{left} stopped recording (no longer subscribed, or silent on /diagnostics): the rest of the run "
                "would not be recorded; record it again") if left else None

    def _stop_trajectory(self, label: str) -> bool:
        """Cancel: an empty trajectory makes the controller stop along the path; wait until the arm is at rest."""
        self._command_pub.publish(JointTrajectoryMsg(joint_names=self._names))
        self.exit_code = EXIT_CANCELLED
        self.get_logger().warning(f"{label} cancelled: the trajectory controller stops the arm along the path")
        self._publish_progress(stage=label, phase="cancelled")
        deadline = time.monotonic() + 3.0
        if self._joint_sub is None:  # the controller reports the end of its stop
            while time.monotonic() < deadline and (self._controller_status or {}).get("phase") in _MOVING:
                time.sleep(0.1)
            return False
        last = self._measured_q()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            q = self._measured_q()
            if q is not None and last is not None and np.max(np.abs(q - last)) < 1e-3:
                break
            last = q
        return False

    def _play(self, streamer: TrajectoryStreamer, label: str) -> bool:
        period = 1.0 / self.rate_hz
        watch, lost = SilenceWatch(_STALE_STATE_S, _SELF_STALL_S), None
        deadline = time.monotonic()
        next_progress = -np.inf
        while True:
            # The trajectory runs on the ROBOT's clock (joint-state stamps), so it stays in step with
            # the arm even when the arm's controller (or a simulator) runs late or early.
            now, q = self._measured()
            if watch.silent(time.monotonic(), self._received_s):
                self.exit_code = 5
                reason = f"no /joint_states for {_STALE_STATE_S} s: the robot interface is gone; stopped"
                self.get_logger().error(reason)
                self._publish_progress(stage=label, phase="aborted", reason=reason)
                self._send(np.zeros(len(self._names)))
                return False
            lost = lost or self._recording_stopped()
            if lost and self.exit_code != 4:
                self.exit_code = 4
                self.get_logger().error(f"{label} stopped: {lost}")
                self._publish_progress(stage=label, phase="aborted", reason=lost)
            if self._cancel.is_set() or lost:
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
                return not (self._cancel.is_set() or lost)
            deadline += period
            time.sleep(max(0.0, deadline - time.monotonic()))

    def begin_stop(self) -> None:
        """Ctrl-C/SIGTERM: cancel as ~/cancel does (run_node keeps spinning until :meth:`stop_finished`)."""
        self.get_logger().warning("stop requested (signal): cancelling")
        self._cancel.set()

    def stop_finished(self) -> bool:
        return self._finished.is_set()

    @property
    def stop_timeout_s(self) -> float:
        """How long run_node waits for the ramp: ramp_s of robot time at the rate the robot's clock runs."""
        return 2.0 + self.streamer.ramp_s / max(0.1, min(1.0, self._robot_rate))

    @property
    def exit_code_when_interrupted(self) -> int:
        """After a signal: the run's own code (0 if it had finished, 6 cancelled, 4/5 failed); 6 if the
        stop did not finish in time."""
        return self.exit_code if self._finished.is_set() else EXIT_CANCELLED

    def shutdown(self) -> None:
        """Cancel (the arm slows down along the path) and wait for it, before the process ends."""
        self._cancel.set()
        self._thread.join(4.0)
        if self._interface == "velocity":
            self._halted = True  # a thread that did not end in time must not override the stop below
            self._command_pub.publish(Float64MultiArray(data=[0.0] * len(self._names)))
        # the stop reaches the robot, and every command the recorder, before we exit: a loaded machine may
        # take seconds to acknowledge the tail of a 500 Hz stream (DDS drops what is unacknowledged at exit)
        if not flush_publishers((self._command_pub, self._progress_pub), timeout_s=3.0):
            self.get_logger().warning("not every subscriber acknowledged the last commands within 3 s: a "
                                      "recorder may miss the tail of the run")


def main(args=None) -> int:
    return run_node(ExcitationNode, args, name="excitation")


if __name__ == "__main__":
    sys.exit(main())
