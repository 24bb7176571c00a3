"""osc_controller: real-time operational-space force/motion control (Jamisola et al., seeds.md P2).

Subscribes
  /joint_states                            sensor_msgs/JointState (position, velocity)
  /motor_currents                          sensor_msgs/JointState (effort = current, A; sensorless force)
  /force_torque_sensor_broadcaster/wrench  geometry_msgs/WrenchStamped (frame_id *base: base axes, as our
                                           ur_interface publishes; otherwise tool0 axes, as the UR driver)
  ~/target_frame                           geometry_msgs/PoseStamped: goal of the motion point (base frame), task
                                           external; reached within target_speed_m_s etc. (control/pose_reference.py)
  ~/target_wrench                          geometry_msgs/WrenchStamped: force target at the tool tip (tool axes)
  /ur_interface/status                     std_msgs/String (topics, interface_status_topic): the robot node's
                                           arm, rate and faults (_osc_topics.py)
Publishes
  /forward_effort_controller/commands      std_msgs/Float64MultiArray, Nm (output_mode torque)
  /forward_velocity_controller/commands    std_msgs/Float64MultiArray, rad/s (output_mode velocity)
  ~/state                                  std_msgs/String, JSON: stage, pose/force errors, singularity, pose (and
                                           goal), loop timing, events (new since the last state), stage_history
  ~/force_error_n, ~/position_error_m      std_msgs/Float64 at state_rate_hz, the newest cycle's normal force
                                           error f_d - n (N; 0 outside contact) and |position error| (m)
  ~/command                                direct: sensor_msgs/JointState, each cycle's command after the guard
                                           (effort Nm or velocity rad/s), stamped like the cycle's sample
  /diagnostics                             diagnostic_msgs/DiagnosticArray, 1 Hz: "osc_controller: controller"
                                           (ERROR: stopped on an error; WARN: waiting for state, singular, force
                                           error at its limit); direct: "osc_controller: robot loop" too

Two ways to reach the robot (``robot_connection``):

* ``direct`` — the node opens the robot itself (simulated or ur_rtde), with
  the configuration ur_interface would use (``robot_config_files``), and the
  control law runs inside the robot loop's cycle: read, compute, command with
  no transport delay in between, as ros2_control hosts controllers inside the
  UR driver. This is what a 500 Hz torque loop needs. The node then publishes
  the robot's state topics itself (/joint_states, /motor_currents,
  /target_moment, the wrench), so a recorder sees the same topics.
* ``topics`` — the node talks to a separate robot node (ur_interface or the
  official UR driver) over the topics above, its loop in its own thread at
  ``rate_hz``. DDS adds latency and jitter to every cycle (in simulation that
  lost the contact), so contact tasks use ``direct``. What owning the loop
  checks in ``direct`` is checked from the topics (_osc_topics.py): the state's
  age, and ur_interface's arm and faults.

Any error stops the controller (zero torque / a speedJ stop) and it stays
stopped; so does any robot fault (protective stop, disconnection).

Exit codes: 0 a timed polishing task finished, or an untimed task ended by
Ctrl-C/SIGTERM; 1 the controller stopped on an error or a robot fault; 2
configuration (e.g. a model identified for another robot, or, topics, a robot
node running another arm); 6 a timed task
stopped by a signal before its end.
"""

from __future__ import annotations

import json
import sys
import threading
import time

import numpy as np
import pinocchio as pin
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64, String

from ..control.pose_reference import PoseReference
from ..control.tasks import PolishingTask
from ..hardware.config import UrInterfaceConfig
from ..hardware.robot_loop import CycleCommand, RobotLoop
from ..parameters import ParameterError, check_choice, check_positive, check_vector
from ..robot_state import RobotState
from ._diagnostic_rules import controller_report, robot_loop_report
from ._diagnostics import CounterDeltas, NodeDiagnostics
from ._osc_parameters import (AXES, OSC_CONTROLLER_PARAMETERS, check_tool_offset, controller_robot,
                              direct_robot_config, nominal_controller_model, polishing_settings,
                              target_floor, target_motion_settings, tool_payload)
from ._osc_state import CycleTiming, command_fields, pose_fields, true_force_error
from ._osc_topics import EXIT_CONFIGURATION, Sample, TopicsRobot
from ._robot_topics import RobotStateTopics
from ._ros_params import declare_parameters
from ._run import EXIT_CANCELLED, flush_publishers, freeze_startup_objects, raise_python_threads_priority, run_node

__all__ = ["OSC_CONTROLLER_PARAMETERS", "OscControllerNode", "main"]

_COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
_STATE_QOS = QoSProfile(depth=50, reliability=ReliabilityPolicy.RELIABLE)


class OscControllerNode(Node):
    """ROS shell of :class:`robot_dynamics_id.control.controller.OperationalSpaceController`."""

    def __init__(self) -> None:
        super().__init__("osc_controller")
        p = declare_parameters(self, OSC_CONTROLLER_PARAMETERS)
        from ..control.controller import OperationalSpaceController
        from ..control.controller_config import ControllerConfig
        from ..io.model_file import DynamicModel, ModelFileError

        try:
            model = DynamicModel.load(p["model_file"]) if p["model_file"] else None
        except (ModelFileError, ValueError, FileNotFoundError) as exc:
            raise ParameterError(f"parameter 'model_file': {exc}") from None
        for note in model.notes_for_use() if model is not None else ():
            self.get_logger().warning(f"model_file {p['model_file']} {note}")
        self.connection = check_choice("robot_connection", p["robot_connection"], ("direct", "topics"))
        self.robot_config = direct_robot_config(p) if self.connection == "direct" else None
        self.robot_name = robot_name = controller_robot(p, None if model is None else model.robot, self.robot_config)
        if self.connection == "topics" and p["output_mode"] == "torque":
            # a review's polishing this way: the wrist at its speed limit for 6 s, in contact, up to 2x max_force_n
            raise ParameterError("output_mode torque needs robot_connection: direct (the law inside the robot loop); "
                                 "over topics the transport's delay sits inside the 500 Hz torque loop and the arm "
                                 "oscillates: use output_mode: velocity over topics")
        if model is None:
            try:
                model = nominal_controller_model(robot_name)
            except (ModelFileError, ValueError, FileNotFoundError) as exc:
                raise ParameterError(f"parameter 'robot': {exc}") from None
        if p["collision_model_file"] and self.robot_config is None:
            raise ParameterError("parameter 'collision_model_file' needs robot_connection: direct; with a separate "
                                 "robot node, give it to that node (ur_interface) or run collision_monitor")
        # direct: the law runs once per robot cycle, so the control rate is the robot's; topics: the robot node's,
        # from the files it was started from when given (control.launch.py passes them)
        files_config = self.robot_config or (direct_robot_config(p) if p["robot_config_files"] else None)
        self.rate_hz = (files_config.rate_hz if files_config is not None
                        else check_positive("rate_hz", p["rate_hz"], upper=1000.0))
        axes = list(p["motion_axes"] or [])
        unknown = [a for a in axes if a not in AXES]
        if unknown:
            raise ParameterError(f"parameter 'motion_axes': {unknown} unknown; use names from {list(AXES)}")
        tip = check_tool_offset("tool_tip_offset_m", p["tool_tip_offset_m"])
        payload, payload_line = tool_payload(p, model.robot)
        self.task_kind = check_choice("task", p["task"], ("external", "polishing"))
        if p["collision_model_file"] and self.task_kind == "polishing":
            # the observer sees the tool's intended contact as an external torque like any other
            raise ParameterError("parameter 'collision_model_file': the collision observer would take the polishing "
                                 "contact for a collision (the F/T-sensed tool wrench is not subtracted); use it for "
                                 "free motion (task external) or leave it empty")
        try:
            config = ControllerConfig(
                period_s=1.0 / self.rate_hz,
                law=check_choice("law", p["law"], ("operational_space", "projected")),
                output_mode=check_choice("output_mode", p["output_mode"], ("torque", "velocity")),
                # Velocity output: qd_cmd = base + dt * qdd. From the previous command the law damps the commanded
                # twist (controller_stages.VelocityOutput): the servo's and the transport's delays stay out of the
                # K_v loop (gain K_v dt ~ 1 at 125 Hz), direct and over topics (benchmarks/RESULTS.md).
                velocity_integration_base=check_choice(
                    "velocity_integration_base", p["velocity_integration_base"] or "command", ("command", "measured")),
                robot_adds_gravity=bool(p["robot_adds_gravity"]),
                force_source=check_choice("force_source", p["force_source"], ("sensor", "estimated")),
                singularity_method=check_choice("singularity_method", p["singularity_method"],
                                                ("padding", "truncation", "damped_least_squares")),
                motion_axes=tuple(a in axes for a in AXES),
                contact_threshold_n=check_positive("contact_threshold_n", p["contact_threshold_n"]),
                max_force_n=check_positive("max_force_n", p["max_force_n"]),
                target_min_z_m=target_floor(p),
                payload=payload,
                tool_tip_offset_m=tuple(tip),
                friction_compensation=bool(p["friction_compensation"]),
                flexible_compensation=bool(p["flexible_compensation"]),
                joint_stiffness_nm_per_rad=(tuple(check_vector("joint_stiffness_nm_per_rad",
                                                               p["joint_stiffness_nm_per_rad"],
                                                               len(model.joint_names), positive=True))
                                            if p["joint_stiffness_nm_per_rad"] else None),
                flexible_compensation_rate_hz=check_positive("flexible_compensation_rate_hz",
                                                             p["flexible_compensation_rate_hz"], upper=500.0),
            )
            self.controller = OperationalSpaceController(model, config=config)
            self._polishing = polishing_settings(p, config) if self.task_kind == "polishing" else None
            self._target_motion = target_motion_settings(p) if self.task_kind == "external" else None
        except ValueError as exc:
            raise ParameterError(f"controller configuration: {exc}") from None
        self.output_mode = config.output_mode.value
        self._names = list(model.joint_names)
        self._p = p
        self._lock = threading.RLock()  # re-entered: the law may stop the task inside a cycle
        self._task = None  # PolishingTask, or the external task's PoseReference
        self._task_t0: float | None = None
        self._goal: tuple[np.ndarray, np.ndarray] | None = None  # a goal that came before the task started
        self._stopped_reason: str | None = None
        self._error_exit_code = 1  # 2 when the stop was a configuration error found at run time (another arm)
        self._cycle_timing = CycleTiming()
        self._force_error_window_n: float | None = None
        self._true_force_error_window_n: float | None = None
        self._stage_events: list[str] = []
        #: every stage change so far, in ~/state too: a subscriber that joins late still sees the sequence
        self._stage_history: list[str] = []
        self._done = threading.Event()
        self._running = True
        self._robot_loop: RobotLoop | None = None
        self._robot_topics: RobotStateTopics | None = None
        self._topics: TopicsRobot | None = None
        self._collision_topics = None

        self._state_pub = self.create_publisher(String, "~/state", _STATE_QOS)
        self._error_pubs = (self.create_publisher(Float64, "~/force_error_n", 10),
                            self.create_publisher(Float64, "~/position_error_m", 10))
        self._add_diagnostics()
        if self.robot_config is not None:
            self._open_robot(self.robot_config, config)
        else:
            self._topics = TopicsRobot(
                self, [p["tf_prefix"] + n for n in self._names], robot=robot_name, output_mode=self.output_mode,
                rate_hz=self.rate_hz, force_source=config.force_source.value,
                status_topic=p["interface_status_topic"], state_prediction=bool(p["state_prediction"]),
                state_timeout_s=check_positive("state_timeout_s", p["state_timeout_s"], upper=10.0))
        self.create_subscription(PoseStamped, "~/target_frame", self._on_target_frame, _COMMAND_QOS)
        self.create_subscription(WrenchStamped, "~/target_wrench", self._on_target_wrench, _COMMAND_QOS)
        # ~/state comes from its own thread, not an executor timer, so its rate does not depend on the
        # executor being woken (it is idle in direct connection) and its work runs outside the executor.
        self._state_period_s = 1.0 / check_positive("state_rate_hz", p["state_rate_hz"], upper=500.0)
        self._reporting = threading.Event()
        self._reporter = threading.Thread(target=self._report, name="osc_state_reporter", daemon=True)
        self._exit_guard = self.create_guard_condition(self._exit_when_done)
        self._thread: threading.Thread | None = None
        if self.robot_config is not None and self.robot_config.realtime_priority > 0:
            raise_python_threads_priority(self.get_logger())  # the reporter below inherits it
        self._reporter.start()
        freeze_startup_objects()
        if self._robot_loop is not None:
            self._robot_loop.start()
        else:
            self._thread = threading.Thread(target=self._loop, name="osc_control_loop", daemon=True)
            self._thread.start()
        where = (f"robot {self.robot_config.backend} {self.robot_config.robot_ip if self.robot_config.backend == 'rtde' else ''}"
                 .strip() + " (direct)" if self.robot_config is not None else "robot node over topics")
        self.get_logger().info(
            f"osc_controller: {'identified model ' + p['model_file'] if p['model_file'] else 'nominal model'}, "
            f"{self.output_mode} output at {self.rate_hz:.0f} Hz to the {where}, force from "
            f"{config.force_source.value}, singularity {config.singularity_method.value}, task {self.task_kind}; "
            + payload_line)

    def _add_diagnostics(self) -> None:
        robot = self.robot_config
        where = "over topics" if robot is None else robot.robot_ip if robot.backend == "rtde" else "simulated"
        hardware_id, ctl = f"{self.robot_name} {where}", self.controller
        NodeDiagnostics(self, part="controller", hardware_id=hardware_id, collect=lambda: controller_report(
            getattr(self, "_last", None), stage=str(getattr(ctl.stage, "value", ctl.stage)),
            timing=self._cycle_timing.latest, stopped=self._stopped_reason, started=self._task_t0 is not None,
            force_error_limit_n=ctl.config.force_error_limit_n))
        if robot is not None:  # the node owns the robot loop: judged as ur_interface's
            deltas = CounterDeltas()
            NodeDiagnostics(self, part="robot loop", hardware_id=hardware_id, collect=lambda: robot_loop_report(
                self._robot_loop.status.as_dict(), deltas, rate_hz=self.rate_hz, simulated=robot.backend == "sim"))

    def _open_robot(self, robot: UrInterfaceConfig, config) -> None:
        if config.output_mode.value == "torque" and not robot.supports_torque:
            raise ParameterError("output_mode torque needs a robot that accepts torque commands: set "
                                 "supports_torque: true in the robot parameters (e-Series, PolyScope >= 5.23) "
                                 "or use output_mode velocity")
        if list(robot.joint_names) != self._names:
            raise ParameterError(f"the robot's joints {list(robot.joint_names)} differ from the model's "
                                 f"{self._names}; use the same robot (and tf_prefix) in both")
        if self._p["publish_robot_state"]:
            # inline: published by the loop thread after each command, so no second thread takes the GIL
            # in the middle of the next cycle's law
            self._robot_topics = RobotStateTopics(node=self, config=robot, inline=True)
        topics = self._robot_topics  # on_command: ~/command, each cycle's command after the guard (as ur_interface)
        self._robot_loop = robot.make_loop(
            on_sample=topics and topics.on_sample, on_command=topics and topics.on_command,
            on_event=self._on_robot_event, cycle_controller=self._direct_cycle,
            cycle_monitor=self._collision_monitor(robot))

    def _collision_monitor(self, robot: UrInterfaceConfig):
        """The collision observer in the robot loop (collision_model_file set; direct connection only)."""
        from ..hardware.collision_config import UR_INTERFACE_COLLISION_PARAMETERS as table
        from ._collision_topics import in_loop_collision_monitor

        raw, topics = {s.name: self._p[s.name] for s in table}, self._robot_topics
        monitor, self._collision_topics = in_loop_collision_monitor(  # the observer carries the controller's tool
            self, raw, robot, stamp_offset=lambda: None if topics is None else topics.clock_offset_s,
            tool=self.controller.config.payload)
        return monitor

    # ---- targets (executor thread) ---------------------------------------------------------------------
    def _stopped_for_good(self, what: str) -> bool:
        """A target after the controller stopped moves nothing: say so (restart the controller)."""
        if self._stopped_reason is None:
            return False
        self.get_logger().error(f"{what} refused: the controller has stopped ({self._stopped_reason}); restart it")
        return True

    def _on_target_frame(self, msg: PoseStamped) -> None:
        if self.task_kind != "external":
            self.get_logger().warning("target ignored: task is polishing")
            return
        if self._stopped_for_good("target_frame"):
            return
        p, o = msg.pose.position, msg.pose.orientation
        quat = np.array([o.x, o.y, o.z, o.w])
        try:
            if not np.all(np.isfinite(quat)) or abs(np.linalg.norm(quat) - 1.0) > 1e-3:
                raise ValueError(f"orientation quaternion {quat.tolist()} is not a unit quaternion")
            quat /= np.linalg.norm(quat)  # a quaternion typed to 4 decimals is a rotation within 1e-3
            goal = self.controller.check_motion_target(np.array([p.x, p.y, p.z]),
                                                       pin.Quaternion(quat[3], *quat[:3]).toRotationMatrix())
            with self._lock:  # the reference moves to it within the target_* bounds, from the next cycle on
                if self._task is None:
                    self._goal = goal  # its way is checked when the task starts, from the arm's pose
                else:
                    self.controller.check_way(self._task.position_m, self._task.rotation, *goal,
                                              overshoot=self._task.overshoot)
                    self._task.set_goal(*goal)
        except ValueError as exc:
            self.get_logger().error(f"target_frame refused: {exc}")
            self._stage_events.append(f"target refused: {exc}")

    def _on_target_wrench(self, msg: WrenchStamped) -> None:
        if self.task_kind != "external":
            self.get_logger().warning("target ignored: task is polishing")
            return
        if self._stopped_for_good("target_wrench"):
            return
        f, m = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, m.x, m.y, m.z])
        try:
            with self._lock:
                starts = bool(np.any(w[:3])) and self.controller.stage.value == "free"
                self.controller.set_force_target(wrench_task=w, start_contact=bool(np.any(w[:3])))
            if starts:  # the approach moves to the pose goal: without one beyond the surface it waits there
                self.get_logger().info(
                    f"force target set: approaching the pose goal until the contact force exceeds "
                    f"{self.controller.config.contact_threshold_n:g} N; send ~/target_frame at or beyond the surface")
        except ValueError as exc:
            self.get_logger().error(f"target_wrench refused: {exc}")
            self._stage_events.append(f"target refused: {exc}")

    # ---- control loop thread ---------------------------------------------------------------------------
    def _wait_for_state(self) -> bool:
        """topics: until the first sample (and ur_interface's status, naming our arm) is here; a robot node that
        is still connecting is waited for, one running another arm stops the controller (exit 2)."""
        while self._running:
            problem = self._topics.problem()
            if problem is not None and problem[1] == EXIT_CONFIGURATION:
                self._stop(problem[0], exit_code=EXIT_CONFIGURATION)
                return False
            if problem is None and self._topics.ready():
                return True
            time.sleep(0.01)
        return False

    def _start_task(self, t: float, q: np.ndarray, qd: np.ndarray) -> None:
        ctl = self.controller
        ctl.osm.update(q, qd)
        start, rotation = ctl.osm.position_m.copy(), ctl.osm.rotation.copy()
        ctl.check_start(start, rotation)
        ctl.set_motion_target(start, rotation)  # hold where the arm is
        ctl.reset_velocity_integrator(qd)
        if self._polishing is not None:
            settings, force_n = self._polishing
            self._task = PolishingTask(start_position_m=start, start_rotation=rotation,
                                       tip_offset_base_m=ctl.osm.tip_position_m - ctl.osm.position_m, **settings)
            ctl.set_force_target(force_n)
            ctl.start_approach(t)
        else:
            self._task = PoseReference(start, rotation, **self._target_motion)
            if self._goal is not None:
                try:
                    ctl.check_way(start, rotation, *self._goal, overshoot=self._task.overshoot)
                    self._task.set_goal(*self._goal)
                except ValueError as exc:
                    self.get_logger().error(f"target_frame refused: {exc}")
                    self._stage_events.append(f"target refused: {exc}")
            ctl.enter_free_motion()
        self._task_t0 = t

    def _loop(self) -> None:
        try:
            if not self._wait_for_state():
                return
            period = 1.0 / self.rate_hz
            sample = self._topics.take()
            with self._lock:
                self._start_task(sample.t, sample.q, sample.qd)
            deadline = time.monotonic()
            last = None
            duration = float(self._p["polishing_duration_s"])
            while self._running:
                now = time.monotonic()
                if last is not None:
                    self._cycle_timing.period_errors.append(abs(now - last - period))
                last = now
                problem = self._topics.problem()
                if problem is not None:
                    self._stop(problem[0], exit_code=problem[1])
                    return
                sample = self._topics.take()
                if sample is not None:  # a cycle without a new sample sends nothing (ur_interface's watchdog)
                    self._cycle(sample, duration)
                deadline += period
                delay = deadline - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                elif delay < -0.25:
                    deadline = time.monotonic()
        except Exception as exc:  # any fault: stop the arm and stay stopped
            self._stop(f"control loop error: {type(exc).__name__}: {exc}")

    def _on_robot_event(self, level: str, message: str) -> None:
        """Robot loop events (direct connection): a robot fault stops the controller for good."""
        if level == "error":
            loop = getattr(self, "_robot_loop", None)
            if loop is not None and loop.configuration_fault:  # e.g. a CB3 at 500 Hz: ends as ur_interface does
                self._stop(loop.configuration_fault, exit_code=EXIT_CONFIGURATION)
            else:
                self._stop(f"robot fault: {message}")
        elif level == "warn":
            self.get_logger().warning(message)
        else:
            self.get_logger().info(message)

    def _direct_cycle(self, state: RobotState) -> CycleCommand | None:
        """One control cycle inside the robot loop (direct connection): sample in, command out."""
        if self._stopped_reason is not None:
            return CycleCommand("stop", reason="arm stopped by the controller")
        try:
            with self._lock:  # targets and stop requests from ROS callbacks wait for the cycle
                if self._task_t0 is None:
                    self._start_task(state.timestamp_s, state.q_rad, state.qd_rad_s)
                values = self._control(state.timestamp_s, state.q_rad, state.qd_rad_s, state.tcp_wrench_base,
                                       True, state.current_a, float(self._p["polishing_duration_s"]))
                if values is not None and state.tcp_wrench_base_true is not None:
                    self._score_against_truth(state)
        except Exception as exc:  # any fault: stop the arm and stay stopped
            self._stop(f"control error: {type(exc).__name__}: {exc}")
            values = None
        if values is None:
            return CycleCommand("stop", reason="arm stopped by the controller")
        return CycleCommand(self.output_mode, values)

    def _score_against_truth(self, state: RobotState) -> None:
        """Simulation only: the worst normal-force error against the noise-free contact force (not used by the law)."""
        if self.controller.config.force_source.value == "sensor" and self._last.stage == "hybrid":
            error = abs(true_force_error(self._last, self.controller.osm, state))
            self._true_force_error_window_n = max(self._true_force_error_window_n or 0.0, error)

    def _cycle(self, sample: Sample, duration: float) -> None:
        with self._lock:
            values = self._control(sample.t, sample.q, sample.qd, sample.wrench, sample.wrench_in_base_axes,
                                   sample.current, duration)
        if values is not None:
            self._topics.publish(values)

    def _control(self, t: float, q: np.ndarray, qd: np.ndarray, wrench: np.ndarray | None, in_base: bool,
                 current: np.ndarray | None, duration: float) -> np.ndarray | None:
        """The law for one cycle: the joint command (Nm or rad/s), or None when the task has ended."""
        ctl = self.controller
        if wrench is not None and not in_base:  # tool0 axes (UR driver): rotate into base axes
            rotation = ctl.osm.rotation
            wrench = np.r_[rotation @ wrench[:3], rotation @ wrench[3:]]
        if self._task is not None:
            target = self._task.targets(t - self._task_t0, ctl.stage)
            ctl.set_motion_target(target.position_m, target.rotation, twist=target.twist,
                                  acceleration=target.acceleration)
            if duration > 0 and self._task.sliding and t - self._task_t0 > duration:
                self._stop("polishing finished", error=False)
                return None
        a0 = time.perf_counter()
        cmd = ctl.step(q, qd, t, wrench_base=wrench, current_a=current)
        self._cycle_timing.step_times.append(time.perf_counter() - a0)
        for event in cmd.events:
            text = f"stage {event}"
            self._stage_events.append(text)
            self._stage_history.append(str(event))
            self.get_logger().info(text)
        values = cmd.torque_nm if self.output_mode == "torque" else cmd.velocity_rad_s
        if not np.all(np.isfinite(values)):
            raise FloatingPointError("the control law produced NaN/inf")
        self._last = cmd
        if cmd.stage == "hybrid":
            # every cycle's normal-force error, not only the ~/state samples: the worst since the last report
            error = abs(float(cmd.force_error[2]))
            self._force_error_window_n = max(self._force_error_window_n or 0.0, error)
        return values

    def _stop(self, reason: str, *, error: bool = True, exit_code: int = 1) -> None:
        if self._stopped_reason is not None:
            return
        self._stopped_reason, self._error_exit_code = reason, exit_code
        if error:  # separate call sites: rclpy refuses a call site whose severity changes
            self.get_logger().error(f"controller stopped: {reason}")
        else:
            self.get_logger().info(f"controller stopped: {reason}")
        try:
            with self._lock:
                cmd = self.controller.stop()
            # direct: the next robot cycle stops the arm (CycleCommand stop); topics: once it has commanded
            if self._topics is not None and self._task_t0 is not None:
                self._topics.publish_stop(cmd.torque_nm if self.output_mode == "torque" else None)
        finally:
            self._running = False
            self._done.set()
            try:  # the final state (why it stopped) goes out before the process may end
                self._publish_state()
            except Exception:  # the context may already be shut down
                pass
            self._exit_guard.trigger()  # the executor thread ends the process if exit_when_done

    # ---- reporting ------------------------------------------------------------------------------------------
    def _report(self) -> None:
        deadline = time.monotonic()
        while not self._reporting.is_set():
            try:
                self._publish_state()
            except Exception as exc:  # the context may be shutting down; reporting never stops control
                if not self._reporting.is_set():
                    self.get_logger().warning(f"~/state not published: {exc}")
            deadline = max(deadline + self._state_period_s, time.monotonic())
            self._reporting.wait(deadline - time.monotonic())

    def _publish_state(self) -> None:
        cmd = getattr(self, "_last", None)
        state: dict = {"stage": str(self.controller.stage.value) if hasattr(self.controller.stage, "value")
                       else str(self.controller.stage),
                       "stopped": self._stopped_reason}
        if cmd is not None:
            state.update(command_fields(cmd))
            state.update(pose_fields(self.controller.osm, self._task if self._polishing is None else None))
        if self._force_error_window_n is not None:
            # max |normal force error| over every cycle since the previous ~/state (N)
            state["force_error_abs_max_n"], self._force_error_window_n = self._force_error_window_n, None
        if self._true_force_error_window_n is not None:
            # simulation only: the same against the noise-free contact force
            state["true_force_error_abs_max_n"], self._true_force_error_window_n = \
                self._true_force_error_window_n, None
        state.update(self._cycle_timing.statistics(self._robot_loop))
        if self._robot_loop is not None:
            state["robot"] = self._robot_loop.status.as_dict()
        state["stage_history"] = self._stage_history[-50:]
        if self._stage_events:
            state["events"] = list(self._stage_events)
            self._stage_events.clear()
        self._state_pub.publish(String(data=json.dumps(state)))
        if cmd is not None:  # the plottable numbers, at the state's rate
            for pub, value in zip(self._error_pubs, (float(cmd.force_error[2]), state["position_error_m"])):
                pub.publish(Float64(data=value))

    def _exit_when_done(self) -> None:
        """Guard-condition callback: wakes the executor so that run_node sees :attr:`done` at once."""

    @property
    def done(self) -> bool:
        """The task has ended and exit_when_done is set, or a configuration error stopped it (run_node then exits
        with :attr:`exit_code`)."""
        return self._done.is_set() and (bool(self._p["exit_when_done"]) or self._error_exit_code == EXIT_CONFIGURATION)

    @property
    def exit_code(self) -> int:
        return 0 if self._stopped_reason == "polishing finished" else self._error_exit_code

    # ---- stop on a signal (run_node) ------------------------------------------------------------------
    def begin_stop(self) -> None:
        """Ctrl-C/SIGTERM: stop the law (the arm comes to rest, as on any stop) and remember how the task stood."""
        self._reason_at_signal = self._stopped_reason
        self._signalled = True
        if self._stopped_reason not in (None, "polishing finished"):  # the exit code is the earlier stop's
            self.get_logger().info(f"exit code {self._error_exit_code}: the controller had stopped earlier "
                                   f"({self._stopped_reason})")
        self._stop("stopped by a signal", error=False)

    def stop_finished(self) -> bool:
        return True  # the stop is a command of the next robot cycle; shutdown() then stops the loop

    @property
    def exit_code_when_interrupted(self) -> int:
        """0 for an untimed task (it runs until stopped) or one that had finished; 6 for a timed polishing task
        cut short; 1 if the controller had already stopped on an error."""
        if not getattr(self, "_signalled", False):
            return EXIT_CANCELLED
        reason = self._reason_at_signal
        if reason is None:
            timed = self.task_kind == "polishing" and float(self._p["polishing_duration_s"]) > 0
            return EXIT_CANCELLED if timed else 0
        return 0 if reason == "polishing finished" else self._error_exit_code

    def shutdown(self) -> None:
        """Stop the control loop and leave the arm at rest."""
        self._stop("shutdown", error=False)
        self._reporting.set()
        self._reporter.join(1.0)
        if self._robot_loop is not None:
            self._robot_loop.stop()
        if self._robot_topics is not None:
            self._robot_topics.close()
        if self._collision_topics is not None:
            self._collision_topics.close()
        if self._thread is not None:
            self._thread.join(1.0)
        publishers = [self._state_pub] + ([self._topics.command_pub, self._topics.stop_pub] if self._topics else [])
        if self._collision_topics is not None:
            publishers.append(self._collision_topics.event_publisher)
        flush_publishers(publishers)  # the stop commands and the final state reach their subscribers


def main(args=None) -> int:
    return run_node(OscControllerNode, args, name="osc_controller")


if __name__ == "__main__":
    sys.exit(main())
