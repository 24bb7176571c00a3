"""ur_interface: the UR arm (real over RTDE, or simulated) as ROS topics.

Publishes
  /joint_states                              sensor_msgs/JointState  position rad, velocity rad/s,
                                             effort = joint TORQUE in Nm (from effort_source)
  /motor_currents                            sensor_msgs/JointState  effort = measured motor current, A
  /target_moment                             sensor_msgs/JointState  effort = controller model torque, Nm
  /force_torque_sensor_broadcaster/wrench    geometry_msgs/WrenchStamped, TCP wrench in the BASE frame
  ~/command                                  sensor_msgs/JointState, what the loop sent the robot each cycle
  ~/status                                   std_msgs/String, JSON: robot, rate_hz, supports_torque,
                                             velocity_limits_rad_s (x velocity_scale),
                                             state, connected, modes, watchdog, fault,
                                             loop timing, real_time_factor (robot seconds per wall second),
                                             robot_time_s (robot clock, s) and stamp_offset_s (message stamp =
                                             robot_time_s + stamp_offset_s)
  ~/trajectory_status                        std_msgs/String, JSON: goal, phase, time_s, duration_s, fraction,
                                             speed_scaling, position_error_rad, reason (20 Hz while a trajectory
                                             runs, and on every change of phase)
  /speed_scaling_state_broadcaster/speed_scaling  std_msgs/Float64, 0..1, as the UR driver
  ~/loop_period_error_us                     std_msgs/Float64, µs: the largest |cycle period - nominal period|
                                             over the cycles since the previous message (status_rate_hz)
  ~/real_time_factor                         std_msgs/Float64, robot seconds per wall second (status_rate_hz;
                                             1 on a real robot, below 1 when a simulation cannot keep up)
  ~/trajectory_position_error_rad            std_msgs/Float64, rad: max over joints of |reference - measured|
                                             (20 Hz, only while a trajectory runs)
  /diagnostics                               diagnostic_msgs/DiagnosticArray, 1 Hz: "ur_interface: robot loop",
                                             hardware_id the robot; ERROR on a fault, a lost connection or a
                                             protective stop, WARN on refused commands, a watchdog stop, a
                                             state backlog, late cycles of a real robot (nodes/_diagnostic_rules.py)
Subscribes
  /scaled_joint_trajectory_controller/joint_trajectory  trajectory_msgs/JointTrajectory: executed inside the
                                             robot loop on the robot's clock (hardware/trajectory_tracking.py);
                                             a message without points stops along the path (as the UR driver)
  ~/speed_scaling                            std_msgs/Float64, 0..1: slows trajectory time (the pendant slider)
  ~/protective_stop                          std_msgs/String (the reason): protective stop through the robot (a
                                             collision_monitor beside this node sends it)
  ~/unlock_protective_stop                   std_msgs/Empty: leave the protective stop (UR: dashboard 'unlock
                                             protective stop', refused for 5 s after the stop)
  ~/resend_robot_program                     std_msgs/Empty: upload the control script again after a program
                                             stop on the pendant or the dashboard (which the node never undoes
                                             by itself), as the UR driver's service
Collision observer (collision_model_file set): runs in the robot loop on every sample; publishes
/collision_monitor/{external_torque, residual, collision} (nodes/_collision_topics.py) and makes a protective
stop at a collision (collision_reaction).
Serves (where control_msgs is installed: a ROS machine)
  /scaled_joint_trajectory_controller/follow_joint_trajectory  control_msgs/FollowJointTrajectory, same tracker
  /forward_velocity_controller/commands      std_msgs/Float64MultiArray, rad/s, configured joint order
  /forward_effort_controller/commands        std_msgs/Float64MultiArray, Nm, configured joint order
                                             (both refused while a trajectory runs: one controller at a time)

The robot loop runs in its own thread
(:class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`); the state topics
are published by :class:`~robot_dynamics_id.nodes._robot_topics.RobotStateTopics`
from that thread, after each cycle's command has gone out (robot-clock stamps,
every sample, serialized once and rewritten in place).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import deque

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from std_msgs.msg import Empty, Float64, Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from ..hardware.collision_config import UR_INTERFACE_COLLISION_PARAMETERS
from ..hardware.config import TRAJECTORY_PARAMETERS, UR_INTERFACE_PARAMETERS, UrInterfaceConfig, make_tracker
from ..hardware.safety import CommandRejected
from ..hardware.trajectory_tracking import TrajectoryGoalError, check_goal_speed
from ._collision_topics import in_loop_collision_monitor
from ._diagnostic_rules import robot_loop_report
from ._diagnostics import CounterDeltas, NodeDiagnostics
from ._robot_topics import RobotStateTopics
from ._ros_params import declare_parameters
from ._run import flush_publishers, freeze_startup_objects, raise_python_threads_priority, run_node
from ._throttle import RepeatThrottle
from ._trajectory_action import offer_follow_joint_trajectory
from ._trajectory_msgs import TRAJECTORY_TOPIC, goal_from_message

__all__ = ["UrInterfaceNode", "main"]

#: Commands: reliable, depth 1 (the UR driver's convention; only the newest matters).
COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: ~/status reports the loop's period error over this many newest cycles (10 s at 500 Hz)
TIMING_WINDOW_CYCLES = 5000
#: ~/trajectory_status rate while a trajectory runs
TRAJECTORY_STATUS_HZ = 20.0
_EVENT_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
#: joint speed below which the arm counts as at rest when a signal stops the node (rad/s)
_AT_REST_RAD_S = 0.01


class UrInterfaceNode(Node):
    """ROS shell around the robot loop: parameters, topics, status."""

    def __init__(self) -> None:
        super().__init__("ur_interface")
        raw = declare_parameters(self, UR_INTERFACE_PARAMETERS, TRAJECTORY_PARAMETERS,
                                 UR_INTERFACE_COLLISION_PARAMETERS)
        trajectory = {s.name for s in TRAJECTORY_PARAMETERS}
        collision = {s.name for s in UR_INTERFACE_COLLISION_PARAMETERS}
        # both raise ParameterError naming the parameter
        self.config = UrInterfaceConfig.from_parameters({k: v for k, v in raw.items()
                                                         if k not in trajectory and k not in collision})
        self.tracker = make_tracker({k: v for k, v in raw.items() if k in trajectory})
        cfg = self.config
        if cfg.realtime_priority > 0:
            raise_python_threads_priority(self.get_logger())
        # inline: each sample is published by the robot loop thread right after the cycle's command went out.
        # A publisher thread woke 500 times a second and took the GIL from the loop in the middle of its next
        # cycle, which cost CPU and loop timing (benchmarks/RESULTS.md, issue 14: what each step bought).
        self._topics = RobotStateTopics(node=self, config=cfg, inline=True)
        # Deep enough that a burst of refusals does not overwrite the fault event before it.
        self._status_pub = self.create_publisher(String, "~/status", _EVENT_QOS)
        self._trajectory_pub = self.create_publisher(String, "~/trajectory_status", _EVENT_QOS)
        self._scaling_pub = self.create_publisher(Float64, "/speed_scaling_state_broadcaster/speed_scaling", 10)
        # plottable numbers beside the JSON (rqt_plot, PlotJuggler), at the rate of the status they come from
        self._period_error_pub = self.create_publisher(Float64, "~/loop_period_error_us", 10)
        self._real_time_pub = self.create_publisher(Float64, "~/real_time_factor", 10)
        self._trajectory_error_pub = self.create_publisher(Float64, "~/trajectory_position_error_rad", 10)
        self.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                                 self._on_velocity_command, COMMAND_QOS)
        self.create_subscription(Float64MultiArray, "/forward_effort_controller/commands",
                                 self._on_torque_command, COMMAND_QOS)
        self.create_subscription(JointTrajectory, TRAJECTORY_TOPIC, self._on_trajectory, COMMAND_QOS)
        self.create_subscription(Float64, "~/speed_scaling", self._on_speed_scaling, COMMAND_QOS)
        self.create_subscription(String, "~/protective_stop", self._on_protective_stop, COMMAND_QOS)
        self.create_subscription(Empty, "~/unlock_protective_stop", self._on_unlock, COMMAND_QOS)
        self.create_subscription(Empty, "~/resend_robot_program", self._on_resend_program, COMMAND_QOS)
        monitor, self._collision_topics = in_loop_collision_monitor(
            self, {k: v for k, v in raw.items() if k in collision}, cfg,
            stamp_offset=lambda: self._topics.clock_offset_s)
        self._action = offer_follow_joint_trajectory(self, self.tracker, cfg.joint_names, self._goal,
                                                     self._not_ready_reason)

        self._timing: dict | None = None
        self._timing_at = 0.0
        self._clock_mark: tuple[float, float] | None = None  # (wall s, robot s) at the previous status
        self._real_time_factor: float | None = None
        self._reported_trajectory = self.tracker.status
        self._throttle = RepeatThrottle(interval_s=1.0)
        self._cycles_at_status = 0
        # /diagnostics: the loop's warn/error events and the newest refusal since the previous report
        self._diagnostic_events: deque[tuple[str, str, bool]] = deque(maxlen=20)
        self._last_refusal: str | None = None
        self._diagnostic_deltas = CounterDeltas()
        self.loop = cfg.make_loop(on_sample=self._topics.on_sample, on_event=self._on_event,
                                  cycle_controller=self.tracker, on_command=self._on_command,
                                  cycle_monitor=monitor)
        self.create_timer(1.0 / cfg.status_rate_hz, self._publish_status)
        self.create_timer(1.0 / TRAJECTORY_STATUS_HZ, self._publish_trajectory_status)
        self.create_timer(1.0, self._report_held_back)
        where = f"{cfg.robot_ip}" if cfg.backend == "rtde" else "simulated"
        NodeDiagnostics(self, part="robot loop", hardware_id=f"{cfg.robot_name} {where}", collect=self._diagnose)
        freeze_startup_objects()
        self.loop.start()
        self.get_logger().info(
            f"ur_interface: robot {cfg.robot_name}, backend {cfg.backend}, {cfg.rate_hz:.0f} Hz, "
            f"watchdog {cfg.watchdog_s * 1000:.0f} ms, limit policy {cfg.limit_policy.value}, "
            f"effort from {cfg.effort_source}")
        from ..robots.priors import foreign_nominal_gains

        copied = None if cfg.drive_gains_nm_per_a is None else foreign_nominal_gains(cfg.drive_gains_nm_per_a,
                                                                                    cfg.robot_name)
        if copied:  # /joint_states effort = current x these gains: every recording would be scaled
            self.get_logger().warning(f"parameter 'drive_gains_nm_per_a': {copied}")
        description = cfg.robot.description
        if cfg.backend == "sim" and description is not None and description.generation == "cb3" and cfg.rate_hz > 125:
            # the real path refuses both (the controller's version); the simulator is more capable than the arm
            self.get_logger().info(f"simulated {cfg.robot_name} at {cfg.rate_hz:.0f} Hz, torque commands accepted: a "
                                   f"real {cfg.robot_name} is a CB3 (125 Hz, no torque); set rate_hz: 125 to "
                                   "rehearse its experiment")

    # ---- trajectories -------------------------------------------------------------------------
    def _on_trajectory(self, msg: JointTrajectory) -> None:
        if not msg.points:
            self.tracker.cancel("an empty trajectory was received: stopping along the path")
            return
        try:
            reason = self._not_ready_reason()
            if reason:
                raise TrajectoryGoalError(reason)
            goal = self._goal(msg, self.config.joint_names)
        except TrajectoryGoalError as exc:
            reason = f"trajectory refused: {exc}"
            self.get_logger().error(reason)
            self._trajectory_pub.publish(String(data=json.dumps({"phase": "rejected", "reason": reason})))
            return
        number = self.tracker.submit(goal)
        self.get_logger().info(f"trajectory {number}: {len(msg.points)} points, {goal.duration_s:.2f} s")

    def _goal(self, msg, joint_names):
        """The message's goal, refused up front when it plans faster than the limits (velocity_scale included)."""
        goal = goal_from_message(msg, joint_names)
        check_goal_speed(goal, self.config.limits.velocity_rad_s, self.config.joint_names)
        return goal

    def _not_ready_reason(self) -> str | None:
        status = self.loop.status
        if status.state in ("ready", "moving"):
            return None
        return f"the robot is not ready (state {status.state}" + (f": {status.fault}" if status.fault else "") + ")"

    # ---- protective stop (a collision_monitor beside this node) -------------------------------------
    def _on_protective_stop(self, msg: String) -> None:
        self.loop.request_protective_stop(msg.data or "protective stop requested")

    def _on_unlock(self, msg: Empty) -> None:
        self.loop.request_unlock_protective_stop()

    def _on_resend_program(self, msg: Empty) -> None:
        if self.loop.request_program_restart():
            self.get_logger().info("restarting the control script (resend_robot_program)")
        else:
            self.get_logger().warning("resend_robot_program ignored: no program stop holds the robot")

    def _on_speed_scaling(self, msg: Float64) -> None:
        used = self.tracker.set_speed_scaling(msg.data)
        self.get_logger().info(f"speed scaling {used:.2f}")

    def _on_command(self, state, kind: str, values) -> None:
        # Robot loop thread: record what was sent, with the trajectory's reference when one drives the arm.
        self._topics.on_command(state, kind, values, self.tracker.reference_rad)

    def _publish_trajectory_status(self) -> None:
        status = self.tracker.status
        if self._action is not None:
            latest = self.loop.latest_state
            self._action.poll(None if latest is None else latest.q_rad)
        changed = (status.goal, status.phase) != (self._reported_trajectory.goal, self._reported_trajectory.phase)
        if status.active or changed:
            self._trajectory_pub.publish(String(data=json.dumps(status.as_dict())))
        if status.active:
            self._trajectory_error_pub.publish(Float64(data=float(status.position_error_rad)))
        if changed and status.phase not in ("idle", "running"):
            text = f"trajectory {status.goal} {status.phase}" + (f": {status.reason}" if status.reason else "")
            if status.phase in ("aborted", "rejected"):
                self.get_logger().error(text)
                self._diagnostic_events.append(("warn", text, True))
            else:
                self.get_logger().info(text)
        self._reported_trajectory = status

    # ---- commands ---------------------------------------------------------------------------
    def _refuse_while_trajectory(self, what: str) -> bool:
        if not self.tracker.status.active:
            return False
        message = (f"{what} ignored: a trajectory is executing (one controller at a time; stop it with an empty "
                   f"JointTrajectory on {TRAJECTORY_TOPIC})")
        self._diagnostic_events.append(("warn", message, True))
        self._report_throttled("warn", f"{what} ignored", message)
        return True

    def _on_velocity_command(self, msg: Float64MultiArray) -> None:
        self._submit("velocity", self.loop.submit_velocity, msg)

    def _on_torque_command(self, msg: Float64MultiArray) -> None:
        self._submit("torque", self.loop.submit_torque, msg)

    def _submit(self, kind: str, submit, msg: Float64MultiArray) -> None:
        if self._refuse_while_trajectory(f"{kind} command"):
            return
        try:
            cmd = submit(np.asarray(msg.data, float))
        except CommandRejected as exc:
            self._last_refusal = f"{kind} command refused: {exc.reason}"
            self._report_throttled("error", f"{kind} refused", f"{kind} command refused: {exc.reason}")
            return
        if cmd.notes:
            self._report_throttled("warn", f"{kind} notes", "; ".join(cmd.notes), status=False)

    def _report_throttled(self, level: str, kind: str, message: str, *, status: bool = True) -> None:
        """Log (and put on ~/status) at most one message of each kind per second, with the count held back:
        a publisher stuck on bad values must not flood the log (rejected_commands on ~/status counts all)."""
        line = self._throttle.admit(kind, message)
        if line is None:
            return
        # One call site per severity: rclpy refuses a call site whose severity changes between calls.
        if level == "error":
            self.get_logger().error(line)
        else:
            self.get_logger().warning(line)
        if status:
            self._publish_status(event=line)

    def _report_held_back(self) -> None:
        """Timer: the last of a burst of repeated messages, with its count, once the burst has ended."""
        for line in self._throttle.pending():
            self.get_logger().warning(line)

    # ---- loop thread → log and status ------------------------------------------------------------------
    def _on_event(self, level: str, message: str) -> None:
        if level == "error":  # the loop stopped the arm: a running trajectory ends here
            self.tracker.abort(message)
        latest = self.loop.latest_state  # moving at the event: a watchdog stop of a moving arm is a warning
        moving = latest is not None and float(np.max(np.abs(latest.qd_rad_s))) >= _AT_REST_RAD_S
        self._diagnostic_events.append((level, message, moving))
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

    def _update_real_time_factor(self) -> float | None:
        """Robot seconds per wall second since the previous status (the simulator runs slower than real time
        when the machine cannot keep up: its clock is the robot's)."""
        latest = self.loop.latest_state
        if latest is None:
            return None
        now = time.monotonic()
        if self._clock_mark is not None and now - self._clock_mark[0] >= 0.5:
            self._real_time_factor = round((latest.timestamp_s - self._clock_mark[1]) / (now - self._clock_mark[0]),
                                           3)
        if self._clock_mark is None or now - self._clock_mark[0] >= 0.5:
            self._clock_mark = (now, latest.timestamp_s)
        self._scaling_pub.publish(Float64(data=float(self.tracker.speed_scaling)))
        return self._real_time_factor

    def _publish_period_error(self, cycles: int) -> None:
        """~/loop_period_error_us: the largest period error over the cycles since the previous status (a few
        dozen values: cheap, unlike the percentiles of :meth:`_loop_timing`)."""
        newest = cycles - self._cycles_at_status
        self._cycles_at_status = cycles
        errors = self.loop.period_errors_s(newest) if newest > 0 else np.zeros(0)
        if errors.size:
            self._period_error_pub.publish(Float64(data=float(np.abs(errors).max() * 1e6)))

    def _status_dict(self) -> dict:
        status = self.loop.status.as_dict()
        timing = self._loop_timing()
        if timing is not None:
            status["period_error_us"] = timing
        status["backlog"] = self._topics.backlog
        status["real_time_factor"] = self._update_real_time_factor()
        latest = self.loop.latest_state
        status["robot_time_s"] = None if latest is None else round(latest.timestamp_s, 4)
        status["stamp_offset_s"] = self._topics.clock_offset_s
        status["pid"] = os.getpid()
        # the excitation node refuses a trajectory for another arm, or one faster than these limits, before moving
        status["robot"] = self.config.robot_name
        status["velocity_limits_rad_s"] = [round(float(v), 5) for v in self.config.limits.velocity_rad_s]
        status["rate_hz"] = self.config.rate_hz
        # natural_oscillation refuses to run its torque trials on a robot that would refuse the commands
        status["supports_torque"] = self.config.supports_torque
        return status

    def _publish_status(self, event: str | None = None) -> None:
        status = self._status_dict()
        if event:
            status["event"] = event
        try:
            self._status_pub.publish(String(data=json.dumps(status)))
            if not event:  # the timer's status, not an event's: the plottable numbers at its rate
                self._publish_period_error(status["cycles"])
                if status["real_time_factor"] is not None:
                    self._real_time_pub.publish(Float64(data=status["real_time_factor"]))
        except Exception:  # the context may already be shut down during exit
            pass

    def _diagnose(self):
        """/diagnostics (timer, 1 Hz): the loop's status judged by :func:`robot_loop_report`."""
        events = [self._diagnostic_events.popleft() for _ in range(len(self._diagnostic_events))]
        return robot_loop_report(self._status_dict(), self._diagnostic_deltas, rate_hz=self.config.rate_hz,
                                 simulated=self.config.backend == "sim", events=events,
                                 last_refusal=self._last_refusal, trajectory=self.tracker.status.as_dict())

    # ---- end on a configuration the robot refused (run_node) ----------------------------------------------
    @property
    def done(self) -> bool:
        """The robot refused this configuration (e.g. 500 Hz on a CB3): nothing to serve, the process ends (2)."""
        return self.loop.configuration_fault is not None

    @property
    def exit_code(self) -> int:
        return 2 if self.done else 0

    @property
    def exit_code_when_interrupted(self) -> int:  # a service: Ctrl-C is how it ends (0)
        return self.exit_code

    # ---- stop on a signal (run_node) ------------------------------------------------------------------
    def begin_stop(self) -> None:
        """Ctrl-C/SIGTERM: a running trajectory slows down along its path (as a cancel does); a velocity or
        torque command stream is ended with a stop at the guard's deceleration. run_node then waits for
        :meth:`stop_finished` before :meth:`shutdown` disconnects."""
        # the ramp takes ramp_s of robot time; a simulated robot on a loaded machine runs slower than the wall
        rate = self._real_time_factor or 1.0
        self.stop_timeout_s = 1.5 + self.tracker.ramp_s / max(0.1, min(1.0, rate))
        if self.tracker.status.active:
            self.get_logger().warning("stop requested (signal): the running trajectory stops along its path")
            self.tracker.cancel("ur_interface is shutting down (signal): stopping along the path")
        elif self.loop.status.mode != "none":
            self.loop.request_stop("ur_interface is shutting down (signal): stopping the arm")

    def stop_finished(self) -> bool:
        """The arm is at rest (or the robot is not connected: nothing more can be done from here)."""
        if self.tracker.status.active:
            return False
        latest = self.loop.latest_state
        if latest is None or not self.loop.status.connected:
            return True
        return float(np.max(np.abs(latest.qd_rad_s))) < _AT_REST_RAD_S

    def shutdown(self) -> None:
        """Stop the arm and the threads; every queued sample is published first."""
        self.tracker.abort("ur_interface is shutting down")
        self.loop.stop()
        self._topics.close()
        publishers = [self._trajectory_pub, self._status_pub]
        if self._collision_topics is not None:
            self._collision_topics.close()  # queued residuals and collision reports are published first
            publishers.append(self._collision_topics.event_publisher)
        try:  # how the last trajectory ended (cancelled along its path by a signal, or aborted here)
            self._publish_trajectory_status()
        except Exception:  # the context may already be shut down
            pass
        flush_publishers(publishers)


def main(args=None) -> int:
    return run_node(UrInterfaceNode, args, name="ur_interface")


if __name__ == "__main__":
    sys.exit(main())
