"""excitation's parameter table and the checks of which robot a run is for.

Kept apart from the node so the node module stays a thin shell; ``rdi params excitation`` and the README read
the table through :mod:`robot_dynamics_id.nodes.excitation`, which re-exports it.
"""

from __future__ import annotations

from ..parameters import ParameterError, ParameterSpec
from ..robots.model import same_robot
from ._trajectory_msgs import TRAJECTORY_TOPIC

__all__ = ["EXCITATION_PARAMETERS", "interface_robot_problem", "interface_speed_problem", "run_robot"]

EXCITATION_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("trajectory_file", "string", "",
                  "excitation trajectory YAML (make one with: rdi excite plan --out FILE)"),
    ParameterSpec("robot", "string", "",
                  "robot model (limits for the check): ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or a URDF; "
                  "empty: the robot the trajectory file was planned for"),
    ParameterSpec("command_interface", "string", "trajectory",
                  "trajectory: send the whole trajectory to a trajectory controller (executed in the robot loop); "
                  "velocity: stream joint velocities at rate_hz"),
    ParameterSpec("trajectory_topic", "string", TRAJECTORY_TOPIC, "where the trajectory goes (JointTrajectory)"),
    ParameterSpec("trajectory_point_rate_hz", "double", 100.0,
                  "points per second of the trajectory sent (the receiver interpolates quintic between them)", "Hz"),
    ParameterSpec("trajectory_status_topic", "string", "/ur_interface/trajectory_status",
                  "ur_interface's trajectory status, read for progress and abort reasons when present (empty: "
                  "do not read)"),
    ParameterSpec("interface_status_topic", "string", "/ur_interface/status",
                  "ur_interface's status: when it is published, nothing is sent until it names the same robot as "
                  "'robot' (the UR driver has none; empty: do not check)"),
    ParameterSpec("watch_joint_states", "bool", False,
                  "also check the arm against the plan from /joint_states while ur_interface reports the goal's "
                  "progress itself (its loop aborts on divergence; the 500 Hz joint states cost this process CPU)"),
    ParameterSpec("tf_prefix", "string", "", "prefix of the joint names, as the UR driver's tf_prefix"),
    ParameterSpec("start_timeout_s", "double", 3.0,
                  "trajectory: the arm must move within this (robot time) after the trajectory is sent", "s"),
    ParameterSpec("rate_hz", "double", 500.0, "command rate (the robot's: 500 e-Series, 125 CB3)", "Hz"),
    ParameterSpec("start_tolerance_rad", "double", 0.05, "largest distance from the start pose to begin", "rad"),
    ParameterSpec("move_to_start", "bool", False, "move slowly to the start pose first if the arm is elsewhere"),
    ParameterSpec("approach_velocity_rad_s", "double", 0.2,
                  "joint speed limit of the move to the start (at most a tenth of the robot's slowest joint limit)",
                  "rad/s"),
    ParameterSpec("approach_acceleration_rad_s2", "double", 0.5,
                  "acceleration limit of that move (at most a tenth of the robot's lowest)", "rad/s^2"),
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


def run_robot(robot: str, planned_for: str | None, path: str) -> str:
    """The robot a run is checked against: parameter ``robot``, or (empty) the one the trajectory was planned for.

    Raises :class:`ParameterError` when neither names one, or when they name different arms (limits, dynamics
    and workspace differ)."""
    robot = (robot or "").strip()
    if not robot:
        if planned_for is None:
            raise ParameterError(f"trajectory {path} does not say which robot it was planned for (an older or "
                                 "hand-written file) and parameter 'robot' is empty: set robot:=<the arm> "
                                 "(ur3, ur5e, ... or a URDF)")
        return planned_for
    if planned_for is not None and not same_robot(planned_for, robot):
        raise ParameterError(f"trajectory {path} was planned for {planned_for}, but parameter 'robot' is {robot}: "
                             f"plan one for this arm (rdi excite plan --robot {robot}) or set robot:={planned_for} "
                             "if that is the arm")
    return robot


def interface_speed_problem(status: dict, trajectory, names, topic: str) -> str | None:
    """Why ur_interface (its ``status``) would refuse ``trajectory`` as too fast for its limits (the configured ones
    x its velocity_scale), found before the arm moves to the start; None when it would not (or does not say)."""
    from ..hardware.trajectory_tracking import TrajectoryGoal, TrajectoryGoalError, check_goal_speed

    limits = status.get("velocity_limits_rad_s")
    if not limits or len(limits) != trajectory.n_joints:
        return None
    goal = TrajectoryGoal(trajectory.time_s - trajectory.time_s[0], trajectory.position_rad,
                          trajectory.velocity_rad_s, trajectory.acceleration_rad_s2)
    try:
        check_goal_speed(goal, limits, names)
    except TrajectoryGoalError as exc:
        return f"the robot interface ({topic}) would refuse this trajectory: {exc}"
    return None


def interface_robot_problem(status: dict, robot: str, topic: str) -> str | None:
    """Why the robot interface whose status is ``status`` must not run a trajectory for ``robot`` (None: it may).

    ur_interface's limits, simulated arm and drive gains are those of its own ``robot``: a trajectory planned
    for another arm would be clamped or refused mid-run, or, on a real arm, recorded with another arm's gains."""
    theirs = status.get("robot")
    if theirs is None or same_robot(str(theirs), robot):
        return None
    return (f"the robot interface runs a {theirs} ({topic}), but this trajectory is for {robot}: start "
            f"ur_interface with this arm's parameter file (config:=, its 'robot: {robot}'), or plan for the "
            f"{theirs} (rdi excite plan --robot {theirs})")


def interface_rate_note(status: dict, rate_hz: float, command_interface: str) -> str | None:
    """A warning when velocity commands are streamed faster than the robot interface's loop takes them (a CB3 at
    125 Hz): the extra commands are only replaced before use, at this process's CPU cost. None otherwise."""
    theirs = status.get("rate_hz")
    if command_interface != "velocity" or not isinstance(theirs, (int, float)) or rate_hz <= 1.01 * theirs:
        return None
    return (f"streaming velocity commands at {rate_hz:g} Hz to a robot interface that runs at {theirs:g} Hz: "
            f"set rate_hz: {theirs:g} (the robot uses one command per cycle)")
