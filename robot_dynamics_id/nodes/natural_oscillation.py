"""natural_oscillation: identify a UR3's shoulder/elbow gravity terms by natural oscillation (seeds.md P1).

Runs the procedure of :mod:`robot_dynamics_id.identification.natural_oscillation_ur3`
on a torque-controlled arm through ``ur_interface`` (or the official UR driver):
per trial the arm is moved upright in velocity mode, pushed, and then driven
only by the model's Coriolis + gravity torques minus the robot's own gravity
compensation (UR ``direct_torque`` adds it), with the base and wrist joints
held by PD. It falls if the model's gravity is too small, oscillates if too
large; the fall boundary per lumped first moment is bisected.

Subscribes ``/joint_states`` (sensor_msgs/JointState) and the robot node's status
(``interface_status_topic``, ur_interface's ``~/status``; the UR driver has none): before the first
trial the arm it runs and whether it takes torque commands are checked (another arm, or no torque:
exit 2, nothing moved); a fault, or a command of ours it refused, during the trials stops the
procedure (exit 3: torque commands that were never applied must not read as "does not fall"). Publishes
``/forward_effort_controller/commands`` (std_msgs/Float64MultiArray, N m,
configured joint order), ``/forward_velocity_controller/commands`` (rad/s:
the moves upright, the push, and the zero-velocity stop when the guard sees a
fall — ur_interface's speedJ stop) and ``/natural_oscillation/progress``
(std_msgs/String, JSON per trial and the final result).

``trial_factors`` (pairs f_shoulder, f_elbow) runs exactly those trials
instead of the search, e.g. to check the set-up before identifying.
The procedure runs in its own thread at the robot rate (one command per
received state); the ROS callbacks only hand over the latest joint state.

Exit codes: 0 done, 1 error, 2 configuration, 3 the arm was stopped (a hard limit,
no joint states, the robot node's fault or refusal) or the result is doubtful (factors
no real arm has, most trials ended by the speed guard, the same factors fell once and
not once: ``status``/``problems`` in the output), 6 cancelled by Ctrl-C/SIGTERM (the
arm is stopped first). ``output_file`` is written whatever the end: ``status`` ok,
doubtful, refused, stopped, failed or cancelled, with the trials run so far.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ..parameters import ParameterError, ParameterSpec, check_positive, check_vector
from ..robots.model import load_robot, same_robot
from ._ros_params import declare_parameters
from ._run import EXIT_CANCELLED, flush_publishers, run_node

__all__ = ["NATURAL_OSCILLATION_PARAMETERS", "NaturalOscillationNode", "main"]

NATURAL_OSCILLATION_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot", "string", "ur3", "robot model: ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e (the vertical-plane "
                  "procedure needs a UR: shoulder and elbow axes parallel)"),
    ParameterSpec("rate_hz", "double", 500.0, "robot rate: one torque command per joint state", "Hz"),
    ParameterSpec("joint_names", "string_array", [], "joint order of states and commands (empty: the robot's)"),
    ParameterSpec("model_file", "string", "",
                  "prior model (YAML, rdi model schema) whose gravity the factors scale; empty: published nominal"),
    ParameterSpec("robot_gravity_model_file", "string", "",
                  "the model the robot's direct_torque adds gravity from (empty: the published nominal, "
                  "what the simulated UR uses); subtracted from every command"),
    ParameterSpec("compensate_friction", "bool", False,
                  "add model_file's friction (P2 eq. 11) to the law: needed on a UR, whose Coulomb friction "
                  "holds an under-compensated arm (not part of P1)"),
    ParameterSpec("upright_q_rad", "double_array", [0.0, -1.5708, 0.0, -1.5708, 0.0, 0.0],
                  "the upright pose: upper arm, forearm and wrist 1 vertical", "rad"),
    ParameterSpec("push_rad_s", "double", 0.05, "the push: elbow velocity when torque control takes over", "rad/s"),
    ParameterSpec("max_excursion_rad", "double", 0.5,
                  "fall guard: a link angle this far from upright is a fall; the arm is stopped", "rad"),
    ParameterSpec("max_velocity_rad_s", "double", 1.5, "hard guard: any joint faster aborts the procedure", "rad/s"),
    ParameterSpec("joint_limit_margin_rad", "double", 0.1,
                  "hard guard: distance kept from the position limits (else abort)", "rad"),
    ParameterSpec("window_s", "double", 12.0, "longest trial (P1's counting window)", "s"),
    ParameterSpec("stop_after_periods", "integer", 2, "end an oscillating trial after this many periods"),
    ParameterSpec("hold_kp_nm_per_rad", "double_array", [200.0, 60.0, 20.0, 10.0],
                  "PD hold stiffness of base, wrist 1, wrist 2, wrist 3", "Nm/rad"),
    ParameterSpec("hold_kd_nm_s_per_rad", "double_array", [6.0, 1.5, 0.3, 0.15],
                  "PD hold damping of base, wrist 1, wrist 2, wrist 3", "Nm s/rad"),
    ParameterSpec("approach_speed_rad_s", "double", 0.2, "joint speed of the moves upright", "rad/s"),
    ParameterSpec("trial_factors", "double_array", [],
                  "run these trials only: pairs f_shoulder, f_elbow (empty: identify by bisection)"),
    ParameterSpec("low", "double", 0.8, "bisection: factor expected to fall"),
    ParameterSpec("high", "double", 1.25, "bisection: factor expected to oscillate"),
    ParameterSpec("tolerance", "double", 0.004, "bisection: final bracket width of each factor"),
    ParameterSpec("max_trials", "integer", 15, "bisection: most trials per lumped parameter"),
    ParameterSpec("output_file", "string", "", "write the result here as JSON, also a failed or cancelled run's "
                  "trials (empty: only the progress topic)"),
    ParameterSpec("interface_status_topic", "string", "/ur_interface/status",
                  "the robot node's status (arm, torque support, faults, refused commands); empty: none (UR driver)"),
    ParameterSpec("exit_when_done", "bool", True, "end the process when the procedure is finished"),
)

_COMMAND_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
_STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


class _LatestState:
    """Latest joint state handed from the ROS callback to the procedure thread (newest wins)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._state: tuple[np.ndarray, np.ndarray] | None = None
        self._serial = 0
        self._taken = 0

    def put(self, q: np.ndarray, qd: np.ndarray) -> None:
        with self._cond:
            self._state = (q, qd)
            self._serial += 1
            self._cond.notify_all()

    def take_new(self, timeout_s: float) -> tuple[np.ndarray, np.ndarray] | None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._serial > self._taken, timeout_s):
                return None
            self._taken = self._serial
            return self._state


class _Cancelled(Exception):
    """Ctrl-C/SIGTERM: the procedure ends at its next command; the arm is stopped by the zero-velocity command."""


class _Refused(Exception):
    """The robot node cannot run the trials (another arm, no torque commands): nothing moved, exit code 2."""


def interface_problem(status: dict, robot: str, topic: str) -> str | None:
    """Why the robot node whose ``~/status`` is ``status`` must not get the trials' torque commands, or None."""
    theirs = status.get("robot")
    if theirs is not None and not same_robot(str(theirs), robot):
        return (f"the robot node runs a {theirs} ({topic}), but parameter 'robot' is {robot}: start ur_interface "
                f"with this arm's parameter file, or set robot:={theirs} with a model of it")
    if status.get("supports_torque") is False:
        return (f"the robot node does not take torque commands ({topic}: supports_torque false); the trials are "
                "torque-controlled: an e-Series with PolyScope >= 5.23 and supports_torque: true in its "
                "parameter file, or the simulated arm (backend: sim)")
    return None


def _check_friction_prior(model_file: str, prior) -> None:
    """compensate_friction feeds model_file's friction forward: refuse when there is none to feed."""
    if not model_file:
        raise ParameterError("parameter 'compensate_friction' is true but 'model_file' is empty: the published "
                             "nominal model has no friction; give an identified model of this arm (rdi identify)")
    friction = prior.friction
    if not any(np.any(np.asarray(getattr(friction, name), float) != 0)
               for name in ("static_nm", "coulomb_nm", "viscous_nm_s_per_rad")):
        raise ParameterError(f"parameter 'compensate_friction' is true but model_file {model_file} has no friction "
                             "(all zero): give a model identified with friction (rdi identify)")


def _nominal_gains_note(model_file: str, prior) -> str | None:
    """A warning when the prior's drive gains are the published nominal ones (assumed, not calibrated)."""
    from ..robots.priors import is_nominal_gains

    if not model_file or not is_nominal_gains(prior.drive_gains_nm_per_a, prior.robot):
        return None
    return (f"model_file {model_file} was identified with the nominal drive gains "
            f"{prior.drive_gains_nm_per_a.tolist()}: its gravity "
            "and friction (Nm) scale with their error, which the search reads as gravity; calibrate the gains "
            "first (rdi drive-gains)")


class _RosLink:
    """The :class:`~robot_dynamics_id.identification.natural_oscillation_robot.RobotLink` over ROS topics.

    Once the node is cancelled no command goes out any more (the procedure ends with :class:`_Cancelled`
    at its next step), so nothing can override the zero-velocity stop sent at the end."""

    def __init__(self, node: "NaturalOscillationNode", period_s: float) -> None:
        self.period_s = period_s
        self._node = node

    def _check(self) -> None:
        if self._node.cancelled.is_set():
            raise _Cancelled
        stop = self._node.interface_stop
        if stop is not None:
            from ..identification.natural_oscillation_robot import ArmStopped

            raise ArmStopped(stop)

    def next_state(self, timeout_s: float):
        self._check()
        return self._node.latest.take_new(timeout_s)

    def send_torque(self, torque_nm: np.ndarray) -> None:
        self._check()
        self._node.effort_pub.publish(Float64MultiArray(data=[float(v) for v in torque_nm]))

    def send_velocity(self, qd_rad_s: np.ndarray) -> None:
        self._check()
        self._node.velocity_pub.publish(Float64MultiArray(data=[float(v) for v in qd_rad_s]))


class NaturalOscillationNode(Node):
    """Runs the natural-oscillation procedure; see the module docstring."""

    def __init__(self) -> None:
        super().__init__("natural_oscillation")
        p = declare_parameters(self, NATURAL_OSCILLATION_PARAMETERS)
        self._setup(p)
        self.latest = _LatestState()
        self.cancelled = threading.Event()
        self._finished = threading.Event()
        self.exit_code = 0
        self.effort_pub = self.create_publisher(Float64MultiArray, "/forward_effort_controller/commands", _COMMAND_QOS)
        self.velocity_pub = self.create_publisher(Float64MultiArray, "/forward_velocity_controller/commands",
                                                  _COMMAND_QOS)
        self._progress_pub = self.create_publisher(String, "/natural_oscillation/progress", _STATE_QOS)
        self.create_subscription(JointState, "/joint_states", self._on_joint_state, _STATE_QOS)
        self._status: dict | None = None
        self._status_seen = threading.Event()
        self._rejected_at_start: int | None = None  # ur_interface's rejected_commands when the trials began
        self.interface_stop: str | None = None  # the robot node's fault or refusal: the procedure stops
        self._trials: list[dict] = []
        if self._status_topic:
            self.create_subscription(String, self._status_topic, self._on_status, _STATE_QOS)
        self._thread = threading.Thread(target=self._run, name="natural_oscillation", daemon=True)
        # The procedure starts once the node spins: a signal before that interrupts the construction (nothing
        # has moved); from then on it cancels the procedure, which stops the arm and says so.
        self._start_timer = self.create_timer(0.0, self._start_procedure)
        what = f"{len(self._trial_factors)} given trials" if self._trial_factors else "bisection of both factors"
        self.get_logger().info(f"natural_oscillation on {self._robot.name}: {what}")

    # ---- configuration --------------------------------------------------------------------------
    def _setup(self, p: dict) -> None:
        from ..io.model_file import DynamicModel, ModelFileError
        from ..io.model_file import ur_controller_model as controller_model

        try:
            self._robot = load_robot(p["robot"])
        except (ValueError, FileNotFoundError) as exc:
            raise ParameterError(f"parameter 'robot': {exc}") from None
        n = self._robot.n_joints
        if n != 6 or self._robot.description is None:
            raise ParameterError("parameter 'robot': the procedure needs a built-in 6-joint UR (ur3, ur3e, ...)")
        self._names = list(p["joint_names"]) if p["joint_names"] else list(self._robot.joint_names)
        if len(self._names) != n:
            raise ParameterError(f"parameter 'joint_names' has {len(self._names)} names, the robot has {n} joints")
        self.rate_hz = check_positive("rate_hz", p["rate_hz"], upper=1000.0)

        def model(name: str) -> DynamicModel:
            if not p[name]:
                return controller_model(self._robot.description.name)
            try:
                loaded = DynamicModel.load(p[name])
            except (ModelFileError, FileNotFoundError, OSError) as exc:
                raise ParameterError(f"parameter {name!r}: {exc}") from None
            if not same_robot(loaded.robot, p["robot"]):
                raise ParameterError(f"parameter {name!r}: {p[name]} is a model of {loaded.robot}, but parameter "
                                     f"'robot' is {p['robot']}: give a model of this arm, or set robot:={loaded.robot}")
            return loaded

        self._prior = model("model_file")
        self._robot_gravity = model("robot_gravity_model_file")
        self._compensate_friction = bool(p["compensate_friction"])
        if self._compensate_friction:
            _check_friction_prior(p["model_file"], self._prior)
        self._gains_note = _nominal_gains_note(p["model_file"], self._prior)
        self._status_topic = str(p["interface_status_topic"] or "")
        self._upright = np.array(check_vector("upright_q_rad", p["upright_q_rad"], n))
        self._push = check_positive("push_rad_s", p["push_rad_s"], upper=0.5)
        self._excursion = check_positive("max_excursion_rad", p["max_excursion_rad"], upper=1.0)
        self._max_velocity = check_positive("max_velocity_rad_s", p["max_velocity_rad_s"], upper=3.0)
        self._margin = check_positive("joint_limit_margin_rad", p["joint_limit_margin_rad"], allow_zero=True)
        self._window_s = check_positive("window_s", p["window_s"], upper=600.0)
        self._periods = int(p["stop_after_periods"])
        if self._periods < 1:
            raise ParameterError("parameter 'stop_after_periods' must be >= 1")
        kp = check_vector("hold_kp_nm_per_rad", p["hold_kp_nm_per_rad"], 4)
        kd = check_vector("hold_kd_nm_s_per_rad", p["hold_kd_nm_s_per_rad"], 4)
        if kp is None or kd is None or min(kp + kd) < 0:
            raise ParameterError("parameters 'hold_kp_nm_per_rad'/'hold_kd_nm_s_per_rad' need 4 values >= 0 "
                                 "(base, wrist 1, wrist 2, wrist 3)")
        self._hold = tuple(zip(kp, kd))
        self._approach_speed = check_positive("approach_speed_rad_s", p["approach_speed_rad_s"], upper=1.0)
        factors = list(p["trial_factors"] or [])
        if len(factors) % 2:
            raise ParameterError(f"parameter 'trial_factors' needs pairs (f_shoulder, f_elbow), got {len(factors)} "
                                 "values")
        if any(not (0 <= f <= 3) for f in factors):
            raise ParameterError(f"parameter 'trial_factors' values must be in [0, 3], got {factors}")
        self._trial_factors = [np.array(factors[i:i + 2]) for i in range(0, len(factors), 2)]
        self._low = check_positive("low", p["low"])
        self._high = check_positive("high", p["high"])
        if not self._low < self._high:
            raise ParameterError(f"parameters 'low' ({self._low}) must be below 'high' ({self._high})")
        self._tolerance = check_positive("tolerance", p["tolerance"], upper=0.5)
        self._max_trials = int(p["max_trials"])
        if self._max_trials < 3:
            raise ParameterError("parameter 'max_trials' must be >= 3")
        self._output = str(p["output_file"])
        target = Path(self._output).expanduser()
        if self._output and (target.is_dir() or not target.resolve().parent.is_dir()
                             or not os.access(target.resolve().parent, os.W_OK)):
            # checked now, not when the trials are over and the result would be lost
            raise ParameterError(f"parameter 'output_file': {self._output} is a folder, or its folder does not exist "
                                 "or cannot be written: give a file in an existing, writable folder")
        self._exit_when_done = bool(p["exit_when_done"])

    # ---- callbacks ----------------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        try:
            index = [list(msg.name).index(name) for name in self._names]
            q = np.array([msg.position[i] for i in index])
            qd = np.array([msg.velocity[i] for i in index])
        except (ValueError, IndexError):
            return
        self.latest.put(q, qd)

    def _on_status(self, msg: String) -> None:
        try:
            status = json.loads(msg.data)
        except ValueError:
            return
        if not isinstance(status, dict):
            return
        self._status = status
        self._status_seen.set()
        rejected = status.get("rejected_commands")
        if self._rejected_at_start is None or self.interface_stop is not None:
            return
        if isinstance(rejected, int) and rejected > self._rejected_at_start:
            self.interface_stop = (f"the robot node refused our commands ({self._status_topic}: "
                                   f"{status.get('event') or 'rejected_commands ' + str(rejected)}): stopped")
        elif status.get("fault"):
            self.interface_stop = f"robot fault ({self._status_topic}): {status['fault']}: stopped"

    @property
    def done(self) -> bool:
        """The job has ended (run_node then exits with :attr:`exit_code`)."""
        return self._finished.is_set() and self._exit_when_done

    def _start_procedure(self) -> None:
        self._start_timer.cancel()
        if self._thread.ident is None:
            self._thread.start()

    def _publish(self, **fields) -> None:
        try:
            self._progress_pub.publish(String(data=json.dumps(fields)))
        except Exception:  # context already shut down at exit
            pass

    # ---- procedure thread ------------------------------------------------------------------------------
    def _run(self) -> None:
        from ..identification.natural_oscillation_robot import ArmStopped

        try:
            self._procedure()
        except _Cancelled:
            self.exit_code = EXIT_CANCELLED
            self.get_logger().warning("natural oscillation cancelled (signal): arm stopped")
            self._publish(phase="cancelled")
            self._write_unfinished("cancelled", "cancelled by a signal")
        except _Refused as exc:
            self.exit_code = 2
            self.get_logger().error(f"natural oscillation refused: {exc}")
            self._publish(phase="aborted", reason=str(exc))
            self._write_unfinished("refused", str(exc))
        except ArmStopped as exc:
            self.exit_code = 3
            self.get_logger().error(str(exc))
            self._publish(phase="aborted", reason=str(exc))
            self._write_unfinished("stopped", str(exc))
        except Exception as exc:  # never leave the arm in torque mode
            self.exit_code = 1
            reason = f"{type(exc).__name__}: {exc}{self._advice(exc)}"
            self.get_logger().error(f"natural oscillation stopped: {reason}")
            self._publish(phase="aborted", reason=reason)
            self._write_unfinished("failed", reason)
        finally:
            self.velocity_pub.publish(Float64MultiArray(data=[0.0] * len(self._names)))
            self._finished.set()

    def _procedure(self) -> None:
        from ..identification.natural_oscillation import PushExperiment, run_push_trial
        from ..identification.natural_oscillation_robot import (ArmStopped, FallGuard, StreamingVerticalPlaneArm,
                                                                doubtful_search, doubtful_trials)
        from ..identification.natural_oscillation_ur3 import (
            ACTIVE_JOINTS,
            FrictionCompensatedModel,
            VerticalPlaneGravityModel,
            active_joint_friction,
            identify_vertical_plane_gravity,
            reduced_vertical_plane_model,
        )

        active = list(ACTIVE_JOINTS)
        gravity_model = VerticalPlaneGravityModel(
            reduced_vertical_plane_model(self._prior.robot_model().model, self._upright), self._upright[active])
        law = gravity_model
        if self._compensate_friction:
            law = FrictionCompensatedModel(gravity_model, active_joint_friction(self._prior.friction, active))
        limit = np.asarray(self._robot.position_limit_rad, float)
        guard = FallGuard(max_excursion_rad=self._excursion, position_lower_rad=-limit, position_upper_rad=limit,
                          position_margin_rad=self._margin, max_velocity_rad_s=self._max_velocity)
        arm = StreamingVerticalPlaneArm(
            link=_RosLink(self, 1.0 / self.rate_hz), guard=guard, coordinates=gravity_model.oscillation_coordinates,
            upright_q_rad=self._upright, hold_gains=self._hold, approach_speed_rad_s=self._approach_speed,
            on_event=lambda m: self.get_logger().warning(m))
        experiment = PushExperiment(
            self._upright[active], np.array([0.0, self._push]), window_steps=int(round(self._window_s * self.rate_hz)),
            max_excursion_rad=self._excursion, stop_after_periods=self._periods,
            plant_gravity_compensation=arm.gravity_compensation(self._robot_gravity.robot_model().model))
        self.get_logger().info("waiting for /joint_states")
        waited_s = 0.0
        while self.latest.take_new(0.1) is None:  # short waits: a signal must not wait 30 s
            waited_s += 0.1
            if self.cancelled.is_set():
                raise _Cancelled
            if waited_s >= 30.0:
                raise ArmStopped("no /joint_states for 30 s: is ur_interface running?")
        self._check_interface()
        if self._gains_note:
            self.get_logger().warning(self._gains_note)
        law = _FactorRecorder(law)

        trials = self._trials

        def report(summary: dict) -> None:
            # Called when a trial ends (the next reset or the end): the arm is stopped by then.
            factors = [float(f) for f in law.factors]
            outcome = "falls" if summary["fell"] else "does not fall"
            trials.append({"factors": factors, "outcome": outcome, **summary})
            self._publish(phase="trial", factors=factors, outcome=outcome, guard_falls=arm.falls, **summary)
            self.get_logger().info(f"trial {summary['trial']}: factors {np.round(factors, 4).tolist()} -> {outcome}")

        arm.on_trial_end = report
        if self._trial_factors:
            for f in self._trial_factors:
                run_push_trial(arm, law, f, experiment)
            arm.finish_trial()
            problems = doubtful_trials(trials)
            self._publish(phase="done", trials=arm.trials, guard_falls=arm.falls, trial_time_s=arm.trial_time_s)
            self._write({"phase": "done", "status": "doubtful" if problems else "ok", "problems": problems,
                         "trials": trials, "guard_falls": arm.falls, "trial_time_s": arm.trial_time_s})
            for problem in problems:
                self.get_logger().error(f"doubtful: {problem}")
            if problems:
                self.exit_code = 3
            return
        result = identify_vertical_plane_gravity(arm, law, experiment, low=self._low, high=self._high,
                                                 tolerance=self._tolerance, max_trials=self._max_trials)
        arm.finish_trial()
        out = {"phase": "done", "first_moments_kgm": {k: float(v) for k, v in
                                                      zip(("MX2", "MY2", "MX3", "MY3"), result.first_moments_kgm)},
               "prior_first_moments_kgm": [float(v) for v in gravity_model.first_moments_kgm],
               "factors": [float(v) for v in result.factors], "trials": result.n_trials,
               "trial_time_s": arm.trial_time_s, "guard_falls": arm.falls}
        problems = doubtful_search(result.factors, trials)
        out.update(status="doubtful" if problems else "ok", problems=problems)
        self._publish(**out)
        self._write({**out, "trials_run": trials})
        self.get_logger().info(f"identified first moments {out['first_moments_kgm']}")
        for problem in problems:
            self.get_logger().error(f"doubtful: {problem}")
        if problems:
            self.exit_code = 3

    def _check_interface(self) -> None:
        """Before the first trial: the robot node runs this arm and takes torque commands (else _Refused)."""
        if not self._status_topic:
            return
        # ur_interface publishes its status at status_rate_hz (10 Hz): 3 s is that and DDS discovery on a busy
        # machine. (Waiting for 30 joint states, as before, gave up after 60 ms at 500 Hz.)
        for _ in range(30):
            if self._status_seen.wait(0.1) or self.cancelled.is_set():
                break
        status = self._status
        if status is None:
            self.get_logger().warning(f"no status on {self._status_topic}: the robot's arm and torque support are "
                                      "not checked (set interface_status_topic: '' for a robot node without one)")
            return
        problem = interface_problem(status, self._robot.name, self._status_topic)
        if problem:
            raise _Refused(problem)
        rejected = status.get("rejected_commands")
        self._rejected_at_start = int(rejected) if isinstance(rejected, int) else 0
        self.get_logger().info(f"robot node checked ({self._status_topic}): a {status.get('robot', '(unnamed)')} "
                               "that takes torque commands")

    def _advice(self, exc: Exception) -> str:
        from ..identification.natural_oscillation import NoFallAtLowEnd

        if not isinstance(exc, NoFallAtLowEnd):
            return ""
        if not self._compensate_friction:
            return (": the joints' friction holds the arm; feed it forward: compensate_friction: true with "
                    "model_file, an identified model of this arm (README, natural oscillation)")
        return ": lower 'low', or check model_file's friction (it may underestimate the arm's)"

    def _write(self, result: dict) -> None:
        if self._output:
            Path(self._output).expanduser().write_text(json.dumps(
                result, indent=2, default=lambda v: v.item() if hasattr(v, "item") else str(v)))

    def _write_unfinished(self, status: str, reason: str) -> None:
        """The output file of a run that did not finish: why, and the trials it ran (nothing is lost)."""
        try:
            self._write({"phase": "unfinished", "status": status, "problems": [reason], "trials": self._trials})
        except OSError as exc:
            self.get_logger().error(f"could not write {self._output}: {exc}")

    # ---- stop on a signal (run_node) ------------------------------------------------------------------
    def begin_stop(self) -> None:
        """Ctrl-C/SIGTERM: the procedure stops at its next command and sends the zero-velocity stop."""
        self.get_logger().warning("stop requested (signal): stopping the arm")
        self.cancelled.set()

    def stop_finished(self) -> bool:
        return self._finished.is_set()

    @property
    def exit_code_when_interrupted(self) -> int:
        """0 if the procedure had finished, else its failure code or 6 (cancelled)."""
        if not self._finished.is_set():
            return EXIT_CANCELLED
        return self.exit_code

    def shutdown(self) -> None:
        """Stop the arm (zero velocity) before the process ends."""
        self.cancelled.set()
        if self._thread.ident is not None:
            self._thread.join(2.0)
        try:
            self.velocity_pub.publish(Float64MultiArray(data=[0.0] * len(self._names)))
        except Exception:
            pass
        flush_publishers((self.velocity_pub, self.effort_pub, self._progress_pub))


class _FactorRecorder:
    """The law, remembering the factors of the latest command (which trial is running)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.factors = np.zeros(2)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def torque(self, q, qd, factors):
        self.factors = np.asarray(factors, float).copy()
        return self.inner.torque(q, qd, factors)


def main(args=None) -> int:
    return run_node(NaturalOscillationNode, args, name="natural_oscillation")


if __name__ == "__main__":
    sys.exit(main())
