"""Configuration of the robot interface: parameter table, validation, and the objects it builds.

The ur_interface node declares exactly :data:`UR_INTERFACE_PARAMETERS`, passes
the values to :func:`UrInterfaceConfig.from_parameters` (which stops start-up
with a message naming the parameter and the allowed range), and builds the
backend and guard from the validated config.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..dynamics.drive import DriveGainError, check_drive_gains, torque_from_current
from ..parameters import ParameterError, ParameterSpec, check_choice, check_positive, check_vector
from ..robots.model import RobotModel, load_robot
from .backend import RobotBackend
from .collision_config import UR_INTERFACE_COLLISION_PARAMETERS
from .robot_loop import RobotLoop
from .safety import LimitPolicy, SafetyGuard, SafetyLimits

__all__ = ["RESOLVE_TIMEOUT_S", "TRAJECTORY_PARAMETERS", "check_robot_address", "UR_INTERFACE_NODE_PARAMETERS", "UR_INTERFACE_PARAMETERS", "UrInterfaceConfig",
           "make_tracker"]


#: how long the start-up check of a robot_ip host name may wait for the resolver (s)
RESOLVE_TIMEOUT_S = 2.0


def check_robot_address(value) -> str:
    """``robot_ip`` as given, if it is an IP address or a host name that resolves (within RESOLVE_TIMEOUT_S).

    A name that does not resolve is a configuration mistake, not a network fault to retry forever.
    The resolver runs in a helper thread so that a resolver that does not answer cannot hold start-up
    (and Ctrl-C) for its own timeouts (5 s per server and attempt by default)."""
    address = str(value).strip()
    try:
        ipaddress.ip_address(address)
        return address
    except ValueError:
        pass
    labels = address.rstrip(".").split(".")
    if labels and all(label.isdigit() for label in labels):
        raise ParameterError(f"parameter 'robot_ip' = {address!r} is not a valid IPv4 address (four numbers "
                             "0-255): give the controller's address, e.g. 192.168.1.10")
    if not address or len(address) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in labels):
        raise ParameterError(f"parameter 'robot_ip' = {address!r} is neither an IP address nor a host name: give "
                             "the controller's address, e.g. 192.168.1.10 (127.0.0.1 for rdi sim-controller)")
    outcome: list = []
    done = threading.Event()

    def resolve() -> None:
        try:
            outcome.append(socket.getaddrinfo(address, 30004, type=socket.SOCK_STREAM))
        except OSError as exc:
            outcome.append(exc)
        done.set()

    threading.Thread(target=resolve, name="resolve-robot-ip", daemon=True).start()
    if not done.wait(RESOLVE_TIMEOUT_S):
        raise ParameterError(f"parameter 'robot_ip' = {address!r}: the host name did not resolve within "
                             f"{RESOLVE_TIMEOUT_S:g} s (no answer from the name server): give the controller's IP "
                             "address instead")
    if isinstance(outcome[0], OSError):
        raise ParameterError(f"parameter 'robot_ip' = {address!r} is not an IP address and does not resolve as a "
                             f"host name ({outcome[0]}): give the controller's IP address, e.g. 192.168.1.10")
    return address


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")


def _check_priority(value) -> int:
    priority = int(value)
    if not 0 <= priority <= 99:
        raise ParameterError(f"parameter 'realtime_priority' = {priority}: use 0 (off) or 1-99")
    return priority

UR_INTERFACE_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot", "string", "ur3",
                  "robot model: ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e, or the path of a URDF file"),
    ParameterSpec("backend", "string", "sim", "sim (MuJoCo UR in-process) or rtde (a UR controller via ur_rtde)"),
    ParameterSpec("robot_ip", "string", "127.0.0.1",
                  "controller address for backend rtde (127.0.0.1 = the local stand-in, rdi sim-controller)"),
    ParameterSpec("rate_hz", "double", 500.0, "robot loop rate: 500 (e-Series) or 125 (CB3)", "Hz"),
    ParameterSpec("tf_prefix", "string", "", "prefix of joint and frame names, as in the UR driver"),
    ParameterSpec("joint_names", "string_array", [],
                  "joint order of states and commands (empty: the robot's, with tf_prefix)"),
    ParameterSpec("velocity_limits_rad_s", "double_array", [],
                  "per-joint velocity limits (empty: the robot's published limits)", "rad/s"),
    ParameterSpec("acceleration_limits_rad_s2", "double_array", [],
                  "per-joint acceleration limits (empty: the robot model's defaults)", "rad/s^2"),
    ParameterSpec("position_limits_lower_rad", "double_array", [], "lower position limits (empty: -robot's)", "rad"),
    ParameterSpec("position_limits_upper_rad", "double_array", [], "upper position limits (empty: robot's)", "rad"),
    ParameterSpec("torque_limits_nm", "double_array", [], "per-joint torque limits (empty: robot's)", "Nm"),
    ParameterSpec("velocity_scale", "double", 1.0,
                  "fraction (0, 1] of the velocity limits to allow: start a new experiment at 0.25", ""),
    ParameterSpec("limit_policy", "string", "clamp",
                  "clamp: bound out-of-limit commands; refuse: reject them and stop the arm"),
    ParameterSpec("watchdog_s", "double", 0.04,
                  "stop the arm when no command arrives for this long (UR driver: 40 ms)", "s"),
    ParameterSpec("drive_gains_nm_per_a", "double_array", [],
                  "joint torque per motor current (empty: unknown, effort then comes from target moment)", "Nm/A"),
    ParameterSpec("effort_source", "string", "current",
                  "what JointState.effort carries (always Nm): current (x drive gain) or target_moment"),
    ParameterSpec("supports_torque", "bool", False,
                  "rtde: the robot accepts direct_torque (e-Series, PolyScope >= 5.23); sim: always true"),
    ParameterSpec("controller_watchdog_hz", "double", 10.0,
                  "rtde: ur_rtde setWatchdog frequency; the controller stops the arm if we go silent", "Hz"),
    ParameterSpec("status_rate_hz", "double", 10.0, "rate of the ~/status topic", "Hz"),
    ParameterSpec("realtime_priority", "integer", 0,
                  "SCHED_FIFO priority (1-99) of the robot loop thread, as ur_rtde's rt_priority; 0: normal "
                  "scheduling. Needs the rtprio privilege (warning and normal scheduling without it)"),
    ParameterSpec("sim_truth_seed", "integer", -1,
                  "sim: seed of the plant's perturbed true parameters (-1: nominal parameters)"),
    ParameterSpec("sim_noise_seed", "integer", 0, "sim: seed of the measurement noise"),
    ParameterSpec("sim_initial_q_rad", "double_array", [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0],
                  "sim: initial joint positions", "rad"),
    ParameterSpec("sim_scene", "string", "none",
                  "sim: none, or polishing (tool with ball tip, curved surface, F/T sensor at the flange)"),
    ParameterSpec("sim_base_motion", "bool", False,
                  "sim: move the arm's base slowly (a few cm, 0.1-0.2 Hz), like P2's mobile base"),
    ParameterSpec("sim_external_loads_file", "string", "",
                  "sim: YAML list of forces on the links on the robot clock (pushes, obstacles: sim/contacts.py); "
                  "empty: none"),
)


#: Trajectory execution inside the robot loop (ur_interface; hardware/trajectory_tracking.py).
TRAJECTORY_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("trajectory_position_gain_per_s", "double", 10.0,
                  "feedback on the position error while executing a trajectory (K_p)", "1/s"),
    ParameterSpec("trajectory_path_tolerance_rad", "double", 0.25,
                  "abort a trajectory (stop the arm) when a joint is farther than this from its path", "rad"),
    ParameterSpec("trajectory_goal_tolerance_rad", "double", 0.01,
                  "a trajectory succeeds when every joint is within this of its last point", "rad"),
    ParameterSpec("trajectory_settle_s", "double", 1.0,
                  "after a trajectory's end, abort if the goal tolerance is not reached in this long", "s"),
    ParameterSpec("trajectory_start_tolerance_rad", "double", 0.05,
                  "a trajectory whose first point is at t = 0 must start within this of the arm", "rad"),
    ParameterSpec("trajectory_ramp_s", "double", 0.5,
                  "speed changes (speed scaling, cancel) go from full speed to rest in this long", "s"),
    ParameterSpec("speed_scaling", "double", 1.0,
                  "initial speed scaling of trajectories, 0..1 (changed at run time on ~/speed_scaling)", ""),
)


#: every parameter the ur_interface node declares
UR_INTERFACE_NODE_PARAMETERS = UR_INTERFACE_PARAMETERS + TRAJECTORY_PARAMETERS + UR_INTERFACE_COLLISION_PARAMETERS


#: highest joint acceleration limit accepted, rad/s^2 (UR publishes none; config/ur3_control.yaml uses 40):
#: far above it is a unit slip (deg/s^2), not a faster arm
MAX_ACCELERATION_RAD_S2 = 100.0


def _within(name: str, values, bound, unit: str, what: str, *, negated: bool = False) -> np.ndarray:
    """``values`` (n,) if none exceeds ``bound`` (n,), else ParameterError naming the joint and the bound
    (``negated``: the values are a lower limit's, negated; the message shows them as given)."""
    v, b = np.asarray(values, float), np.asarray(bound, float)
    if np.any(v > b + 1e-9):
        j = int(np.argmax(v - b))
        sign = -1.0 if negated else 1.0
        raise ParameterError(f"parameter '{name}'[{j}] = {sign * v[j]:.4g} {unit} is beyond {what}: "
                             f"{sign * b[j]:.4g} {unit}")
    return v


def make_tracker(p: dict):
    """The trajectory tracker from :data:`TRAJECTORY_PARAMETERS` values; raises ParameterError naming one."""
    from .trajectory_tracking import TrajectoryTracker

    tracker = TrajectoryTracker(
        position_gain_per_s=check_positive("trajectory_position_gain_per_s", p["trajectory_position_gain_per_s"],
                                           allow_zero=True, upper=100.0),
        path_tolerance_rad=check_positive("trajectory_path_tolerance_rad", p["trajectory_path_tolerance_rad"]),
        goal_tolerance_rad=check_positive("trajectory_goal_tolerance_rad", p["trajectory_goal_tolerance_rad"]),
        settle_s=check_positive("trajectory_settle_s", p["trajectory_settle_s"], allow_zero=True),
        start_tolerance_rad=check_positive("trajectory_start_tolerance_rad", p["trajectory_start_tolerance_rad"]),
        ramp_s=check_positive("trajectory_ramp_s", p["trajectory_ramp_s"], allow_zero=True, upper=10.0))
    tracker.set_speed_scaling(check_positive("speed_scaling", p["speed_scaling"], allow_zero=True, upper=1.0))
    return tracker


@dataclass(frozen=True)
class UrInterfaceConfig:
    """Validated configuration of the robot interface."""

    robot: RobotModel
    robot_name: str
    backend: str
    robot_ip: str
    rate_hz: float
    tf_prefix: str
    joint_names: tuple[str, ...]
    limits: SafetyLimits
    limit_policy: LimitPolicy
    watchdog_s: float
    drive_gains_nm_per_a: np.ndarray | None
    effort_source: str
    supports_torque: bool
    controller_watchdog_hz: float
    status_rate_hz: float
    sim_truth_seed: int | None
    sim_noise_seed: int
    sim_initial_q_rad: np.ndarray
    sim_scene: str = "none"
    sim_base_motion: bool = False
    realtime_priority: int = 0
    sim_external_loads: tuple = ()

    @classmethod
    def from_parameter_files(cls, paths, overrides: dict | None = None, *,
                             node_name: str = "ur_interface") -> UrInterfaceConfig:
        """Validate the ``node_name`` section of ROS parameter files (later files win), then ``overrides``.

        Lets another node open the robot with exactly the configuration ur_interface would use
        (the same config/ur3.yaml files), without a second copy of it.
        """
        import yaml

        values: dict = {}
        for path in paths:
            try:
                document = yaml.safe_load(Path(path).read_text()) or {}
            except FileNotFoundError:
                raise ParameterError(f"robot parameter file {path} does not exist") from None
            except yaml.YAMLError as exc:
                raise ParameterError(f"robot parameter file {path} is not valid YAML: {exc}") from None
            if not isinstance(document, dict):
                raise ParameterError(f"robot parameter file {path}: expected '{node_name}: ros__parameters: ...'")
            for key in ("/**", node_name, "/" + node_name):
                section = document.get(key)
                if isinstance(section, dict) and isinstance(section.get("ros__parameters"), dict):
                    values.update(section["ros__parameters"])
        values.update(overrides or {})
        return cls.from_parameters(values)

    @classmethod
    def from_parameters(cls, values: dict) -> UrInterfaceConfig:
        """Validate raw parameter values (missing keys take the table's defaults)."""
        p = {s.name: s.default for s in UR_INTERFACE_PARAMETERS}
        # ur_interface's tracker (read by make_tracker) and collision observer (hardware/collision_config.py)
        trajectory = {s.name for s in TRAJECTORY_PARAMETERS + UR_INTERFACE_COLLISION_PARAMETERS}
        unknown = set(values) - set(p) - trajectory
        if unknown:
            raise ParameterError(f"unknown parameter(s) {sorted(unknown)}; known: {sorted(set(p) | trajectory)}")
        values = {k: v for k, v in values.items() if k not in trajectory}
        p.update({k: v for k, v in values.items() if v is not None})

        try:
            robot = load_robot(p["robot"], tf_prefix=p["tf_prefix"] or "")
        except (ValueError, FileNotFoundError) as exc:
            raise ParameterError(f"parameter 'robot': {exc}") from None
        n = robot.n_joints
        backend = check_choice("backend", p["backend"], ("sim", "rtde"))
        if backend == "sim" and robot.description is None:
            raise ParameterError("parameter 'robot': the simulator needs a built-in robot (ur3, ur3e, ur5, ur5e, ur10, "
                                 "ur10e, ur16e); "
                                 "a URDF path works with backend: rtde")
        rate = check_positive("rate_hz", p["rate_hz"])
        if rate not in (125.0, 500.0):
            raise ParameterError(f"parameter 'rate_hz' = {rate} is not allowed: UR controllers run at 125 (CB3) "
                                 "or 500 (e-Series) Hz")
        names = tuple(p["joint_names"]) if p["joint_names"] else robot.joint_names
        if len(names) != n:
            raise ParameterError(f"parameter 'joint_names' has {len(names)} names, the robot has {n} joints")
        if len(set(names)) != n:
            raise ParameterError(f"parameter 'joint_names' contains duplicates: {list(names)}")
        scale = check_positive("velocity_scale", p["velocity_scale"], upper=1.0)
        velocity = _within("velocity_limits_rad_s", check_vector("velocity_limits_rad_s", p["velocity_limits_rad_s"],
                           n, positive=True, default=robot.velocity_limit_rad_s), robot.velocity_limit_rad_s,
                           "rad/s", "the robot's limit")
        acceleration = _within("acceleration_limits_rad_s2", check_vector(
            "acceleration_limits_rad_s2", p["acceleration_limits_rad_s2"], n, positive=True,
            default=robot.acceleration_limit_rad_s2), np.full(n, MAX_ACCELERATION_RAD_S2), "rad/s^2",
            "what any UR joint does (UR publishes no acceleration limit; a value in deg/s^2?)")
        upper = _within("position_limits_upper_rad", check_vector(
            "position_limits_upper_rad", p["position_limits_upper_rad"], n, default=robot.position_limit_rad),
            robot.position_limit_rad, "rad", "the joint's range (a value in degrees?)")
        lower = -_within("position_limits_lower_rad", -np.array(check_vector(
            "position_limits_lower_rad", p["position_limits_lower_rad"], n, default=-robot.position_limit_rad)),
            robot.position_limit_rad, "rad", "the joint's range (a value in degrees?)", negated=True)
        torque = _within("torque_limits_nm", check_vector("torque_limits_nm", p["torque_limits_nm"], n, positive=True,
                                                          default=robot.torque_limit_nm), robot.torque_limit_nm,
                         "Nm", "the robot's rated torque")
        try:
            limits = SafetyLimits(position_lower_rad=lower, position_upper_rad=upper,
                                  velocity_rad_s=velocity * scale, acceleration_rad_s2=acceleration,
                                  torque_nm=torque)
        except ValueError as exc:
            raise ParameterError(f"limits: {exc}") from None
        gains = check_vector("drive_gains_nm_per_a", p["drive_gains_nm_per_a"], n, positive=True)
        if gains is not None:
            try:
                gains = check_drive_gains(gains, n, what="parameter 'drive_gains_nm_per_a'")
            except DriveGainError as exc:
                raise ParameterError(str(exc)) from None
        effort_source = check_choice("effort_source", p["effort_source"], ("current", "target_moment"))
        if effort_source == "current" and gains is None:
            raise ParameterError(
                "parameter 'effort_source' is 'current' but 'drive_gains_nm_per_a' is empty: give the drive gains "
                "(identify them with a known payload: rdi identify --help) or set effort_source: target_moment")
        initial = check_vector("sim_initial_q_rad", p["sim_initial_q_rad"], n)
        loads: tuple = ()
        if p["sim_external_loads_file"]:
            from ..sim.contacts import load_loads_file

            try:
                loads = tuple(load_loads_file(p["sim_external_loads_file"]))
            except ValueError as exc:
                raise ParameterError(f"parameter 'sim_external_loads_file': {exc}") from None
        seed = int(p["sim_truth_seed"])
        return cls(
            robot=robot,
            robot_name=str(p["robot"]),
            backend=backend,
            robot_ip=check_robot_address(p["robot_ip"]) if backend == "rtde" else str(p["robot_ip"]),
            rate_hz=rate,
            tf_prefix=str(p["tf_prefix"] or ""),
            joint_names=names,
            limits=limits,
            limit_policy=LimitPolicy(check_choice("limit_policy", p["limit_policy"], ("clamp", "refuse"))),
            watchdog_s=check_positive("watchdog_s", p["watchdog_s"], upper=0.2),
            drive_gains_nm_per_a=None if gains is None else np.array(gains),
            effort_source=effort_source,
            supports_torque=bool(p["supports_torque"]) or backend == "sim",
            controller_watchdog_hz=check_positive("controller_watchdog_hz", p["controller_watchdog_hz"],
                                                  allow_zero=True),
            status_rate_hz=check_positive("status_rate_hz", p["status_rate_hz"], upper=100.0),
            sim_truth_seed=None if seed < 0 else seed,
            sim_noise_seed=int(p["sim_noise_seed"]),
            sim_initial_q_rad=np.zeros(n) if initial is None else np.array(initial),
            sim_scene=check_choice("sim_scene", p["sim_scene"], ("none", "polishing")),
            sim_base_motion=bool(p["sim_base_motion"]),
            realtime_priority=_check_priority(p["realtime_priority"]),
            sim_external_loads=loads,
        )

    def make_loop(self, **callbacks) -> RobotLoop:
        """The robot loop for this configuration: backend, guard and scheduling (callbacks as RobotLoop's)."""
        return RobotLoop(backend=self.make_backend(), guard=self.make_guard(),
                         realtime_priority=self.realtime_priority, **callbacks)

    def make_guard(self) -> SafetyGuard:
        return SafetyGuard(limits=self.limits, policy=self.limit_policy, watchdog_s=self.watchdog_s)

    def make_backend(self) -> RobotBackend:
        if self.backend == "sim":
            from .sim_backend import SimBackend

            return SimBackend(robot=self.robot_name,
                              rate_hz=self.rate_hz, truth_seed=self.sim_truth_seed,
                              noise_seed=self.sim_noise_seed, initial_q_rad=self.sim_initial_q_rad,
                              scene=self.sim_scene, base_motion=self.sim_base_motion,
                              external_loads=self.sim_external_loads)
        from .rtde_backend import RtdeBackend

        return RtdeBackend(robot_ip=self.robot_ip, rate_hz=self.rate_hz, supports_torque=self.supports_torque,
                           controller_watchdog_hz=self.controller_watchdog_hz,
                           realtime_priority=self.realtime_priority)

    def joint_torque_nm(self, state) -> np.ndarray:
        """JointState.effort in Nm from the configured source."""
        if self.effort_source == "current":
            return torque_from_current(state.current_a, self.drive_gains_nm_per_a)
        return np.asarray(state.target_moment_nm)
