"""osc_controller's parameter table and the robot configuration of its direct connection.

Kept apart from the node so the node module stays a thin shell; ``rdi params osc_controller`` and the
README read the table through :mod:`robot_dynamics_id.nodes.osc_controller`, which re-exports it.
"""

from __future__ import annotations

import numpy as np

from ..control.controller_config import Payload
from ..control.tasks import APPROACH_DEPTH_M
from ..hardware.collision_config import UR_INTERFACE_COLLISION_PARAMETERS
from ..hardware.config import UrInterfaceConfig
from ..hardware.tool import MAX_TOOL_OFFSET_M, check_tool_mass, check_tool_offset
from ..io.payload_file import PayloadFileError, load_payload_file
from ..parameters import ParameterError, ParameterSpec, check_choice, check_positive
from ..robots.model import same_robot

__all__ = ["AXES", "MAX_TOOL_OFFSET_M", "OSC_CONTROLLER_PARAMETERS", "check_tool_offset", "controller_robot",
           "direct_robot_config",
           "nominal_controller_model", "polishing_settings", "target_motion_settings", "tool_payload"]

OSC_CONTROLLER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot", "string", "",
                  "robot (kinematics): ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or a URDF path; empty: the arm "
                  "model_file was identified for, else the arm of robot_config_files (direct)"),
    ParameterSpec("model_file", "string", "",
                  "identified model (rdi identify .../model.yaml); empty: the nominal model with the nominal drive "
                  "gains (robots/priors.py)"),
    ParameterSpec("rate_hz", "double", 500.0,
                  "control rate with robot_connection topics and no robot_config_files: the robot node's, 125 "
                  "(CB3) or 500; otherwise the rate_hz of robot_config_files (direct runs once per robot cycle)",
                  "Hz"),
    ParameterSpec("output_mode", "string", "torque",
                  "torque (direct_torque, e-Series; robot_connection direct only) or velocity (speedJ, CB3)"),
    ParameterSpec("velocity_integration_base", "string", "command",
                  "velocity output: integrate from the previous command (the law damps the commanded twist; the "
                  "pose is measured) or from the measured velocity (it damps the measured twist)"),
    ParameterSpec("robot_adds_gravity", "bool", True,
                  "the robot adds its own gravity compensation to torque commands (UR direct_torque)"),
    ParameterSpec("force_source", "string", "sensor",
                  "sensor (flange F/T) or estimated (momentum observer on motor currents)"),
    ParameterSpec("law", "string", "operational_space",
                  "operational_space (P2 hybrid law) or projected (P5: PIDC in the tangent space + constraint-force "
                  "control along the tool axis; torque output only)"),
    ParameterSpec("singularity_method", "string", "padding",
                  "padding (P2 eqs. 6-9), truncation (P2's baseline) or damped_least_squares"),
    ParameterSpec("motion_axes", "string_array", ["x", "y", "rx", "ry", "rz"],
                  "motion-controlled axes of the tool-tip frame; the others are force-controlled (P2: x y rz)"),
    ParameterSpec("contact_threshold_n", "double", 10.0, "normal force that ends the approach (P2 eq. 10)", "N"),
    ParameterSpec("max_force_n", "double", 60.0, "force targets above this are refused", "N"),
    ParameterSpec("target_min_z_m", "double_array", [],
                  "one value: the lowest base-frame z of a target's motion point and tool tip; a lower goal is "
                  "refused (the table, under a tool pointing down). Set it below any surface the tool is to press "
                  "on (an approach aims 0.02 m beyond it). Empty: no floor", "m"),
    ParameterSpec("payload_file", "string", "",
                  "the tool as identified by rdi payload (payload.yaml: mass, CoM and, when determined, inertia in "
                  "tool0); when set it replaces tool_mass_kg and tool_com_m"),
    ParameterSpec("tool_mass_kg", "double", 0.35, "tool mass (UR 'set payload')", "kg"),
    ParameterSpec("tool_com_m", "double_array", [0.0, 0.0, 0.0571], "tool centre of mass in tool0 coordinates", "m"),
    ParameterSpec("tool_tip_offset_m", "double_array", [0.0, 0.0, 0.11],
                  "tool tip (force point) in tool0 coordinates", "m"),
    ParameterSpec("friction_compensation", "bool", True, "add the identified friction model (P2 eq. 11-12)"),
    ParameterSpec("flexible_compensation", "bool", False,
                  "correct the force target for compliant (strain-wave) joints so the WORLD-frame force set-point "
                  "is met (Bicchi & Melchiorri, P4)"),
    ParameterSpec("joint_stiffness_nm_per_rad", "double_array", [],
                  "joint torsional stiffness, one per joint, for flexible_compensation (empty: the package's "
                  "ASSUMED UR3 values)", "Nm/rad"),
    ParameterSpec("flexible_compensation_rate_hz", "double", 5.0,
                  "how often the compliant-joint correction is recomputed", "Hz"),
    ParameterSpec("task", "string", "external",
                  "external (targets on ~/target_frame, ~/target_wrench) or polishing (built-in P2 task)"),
    ParameterSpec("target_speed_m_s", "double", 0.1,
                  "external: a ~/target_frame goal is reached at most this fast (a step becomes a smooth move; a "
                  "stream of goals is followed with a lag of speed^2 / (2 acceleration))", "m/s"),
    ParameterSpec("target_acceleration_m_s2", "double", 0.5, "external: the pose reference's acceleration bound",
                  "m/s^2"),
    ParameterSpec("target_angular_speed_rad_s", "double", 0.5, "external: the pose reference's rotation speed bound",
                  "rad/s"),
    ParameterSpec("target_angular_acceleration_rad_s2", "double", 2.0,
                  "external: the pose reference's angular acceleration bound", "rad/s^2"),
    ParameterSpec("polishing_force_n", "double", 10.0, "polishing: desired normal force", "N"),
    ParameterSpec("polishing_amplitude_m", "double", 0.08, "polishing: sinusoid amplitude", "m"),
    ParameterSpec("polishing_period_s", "double", 5.0, "polishing: sinusoid period", "s"),
    ParameterSpec("polishing_surface_z_m", "double", 0.005,
                  "polishing: expected surface height in the base frame (a guess; the shape is unknown)", "m"),
    ParameterSpec("polishing_duration_s", "double", 0.0, "polishing: stop after this long (0: run until stopped)",
                  "s"),
    ParameterSpec("state_rate_hz", "double", 50.0, "rate of ~/state", "Hz"),
    ParameterSpec("exit_when_done", "bool", False, "end the process when a timed polishing task is finished"),
    ParameterSpec("robot_connection", "string", "topics",
                  "direct (open the robot here; the law runs in the robot loop, needed for 500 Hz torque) or topics "
                  "(a separate ur_interface / UR driver node)"),
    ParameterSpec("interface_status_topic", "string", "/ur_interface/status",
                  "topics: ur_interface's status; when published, the task starts only once it names the model's "
                  "arm, and a fault it reports stops the controller (the UR driver has none; empty: do not read)"),
    ParameterSpec("state_timeout_s", "double", 0.5,
                  "topics: no new joint state for this long stops the controller (the robot node is gone)", "s"),
    ParameterSpec("tf_prefix", "string", "",
                  "topics: prefix of the joint names on /joint_states (UR driver tf_prefix)"),
    ParameterSpec("state_prediction", "bool", True,
                  "topics, velocity output: each joint state advanced by the velocities commanded over its age "
                  "(the transport's delay out of the pose loop; false: as received)"),
    ParameterSpec("robot_config_files", "string_array", [],
                  "ur_interface parameter files (e.g. config/ur3.yaml, config/ur3_control.yaml; their "
                  "ur_interface section is read): direct, the robot opened; topics, the files the robot node "
                  "was started from (its arm and rate)"),
    ParameterSpec("robot_backend", "string", "", "direct: sim or rtde (empty: as in robot_config_files)"),
    ParameterSpec("robot_ip", "string", "", "direct: controller address (empty: as in robot_config_files)"),
    ParameterSpec("robot_parameters", "string_array", [],
                  "direct: further ur_interface parameters as name=value (YAML value), applied last"),
    ParameterSpec("publish_robot_state", "bool", True,
                  "direct: publish /joint_states, /motor_currents, /target_moment and the wrench"),
) + UR_INTERFACE_COLLISION_PARAMETERS  # the collision observer in the robot loop (direct connection)

AXES = ("x", "y", "z", "rx", "ry", "rz")


def tool_payload(p: dict, robot: str) -> tuple[Payload, str]:
    """The tool the controller's model carries (``payload_file``, else ``tool_mass_kg``/``tool_com_m``) and a
    line saying which, for the log. A mass above the robot's rated payload or a CoM more than
    :data:`MAX_TOOL_OFFSET_M` from the flange is refused (a unit slip)."""
    if not p["payload_file"]:
        mass = check_tool_mass("tool_mass_kg", check_positive("tool_mass_kg", p["tool_mass_kg"], allow_zero=True),
                                robot)
        com = check_tool_offset("tool_com_m", p["tool_com_m"])
        return Payload(mass_kg=mass, com_m=com), f"tool: {mass:g} kg at {list(com)} m (tool_mass_kg, tool_com_m)"
    try:
        flange = load_payload_file(p["payload_file"])
    except PayloadFileError as exc:
        raise ParameterError(f"parameter 'payload_file': {exc}") from None
    if flange.robot is not None and not same_robot(flange.robot, robot):
        raise ParameterError(f"parameter 'payload_file': {flange.source} was identified on {flange.robot}, the "
                             f"controller's model is of {robot}: identify the payload with this arm's model")
    if flange.frame != "tool0":
        raise ParameterError(f"parameter 'payload_file': the payload is given in {flange.frame!r}; the controller "
                             "takes it in tool0")
    if flange.doubtful:  # a wrong tool weight is a steady force error, or a drift in free motion
        raise ParameterError(f"parameter 'payload_file': {flange.source} is a doubtful estimate ("
                             f"{'; '.join(w.split(':')[0] for w in flange.doubtful)}): the controller would "
                             "compensate a tool that may not be the mounted one. Record the payload run again "
                             "(rdi excite plan --kind payload, a longer run) and run rdi payload until it exits 0, "
                             "or give the tool as tool_mass_kg and tool_com_m")
    check_tool_mass("payload_file", flange.mass_kg, robot)
    check_tool_offset("payload_file", flange.com_m)
    return (Payload(mass_kg=flange.mass_kg, com_m=tuple(flange.com_m),
                    inertia_kgm2=tuple(map(tuple, flange.inertia_about_com_kgm2))),
            f"tool from {flange.source}: {flange.mass_kg:.3f} kg at {np.round(flange.com_m, 4).tolist()} m, "
            f"inertia {'identified' if flange.inertia_used else 'not determined: a point mass'}")


def target_floor(p: dict) -> float | None:
    """``target_min_z_m`` as a height (m), or None when empty."""
    values = [float(v) for v in p["target_min_z_m"] or ()]
    if not values:
        return None
    if len(values) != 1 or not np.isfinite(values[0]):
        raise ParameterError(f"parameter 'target_min_z_m' = {values}: give one finite height in m (e.g. [0.0], the "
                             "base's mounting plane), or [] for no floor")
    return values[0]


def polishing_settings(p: dict, limits) -> tuple[dict, float]:
    """(PolishingTask keywords without the start pose, force target N) of the polishing task, checked before the
    robot is opened against ``limits`` (a ControllerConfig): a force target above its ``max_force_n``, or an approach
    aiming below its floor ``target_min_z_m``, is refused here, not once the arm is moving."""
    max_force_n, floor_z_m = limits.max_force_n, limits.target_min_z_m
    force = check_positive("polishing_force_n", p["polishing_force_n"])
    if force > max_force_n:
        raise ParameterError(f"parameter 'polishing_force_n' = {force:g} N exceeds max_force_n = {max_force_n:g} N: "
                             "lower the force or raise max_force_n")
    aim = float(p["polishing_surface_z_m"]) - APPROACH_DEPTH_M
    if floor_z_m is not None and aim < floor_z_m:
        raise ParameterError(f"parameter 'polishing_surface_z_m' = {p['polishing_surface_z_m']:g} m: the approach "
                             f"aims the tool tip {APPROACH_DEPTH_M:g} m below it, at {aim:g} m, below target_min_z_m = "
                             f"{floor_z_m:g} m; lower target_min_z_m to at most {aim:g} m (or check the surface "
                             "height)")
    return {"expected_surface_z_m": float(p["polishing_surface_z_m"]),
            "amplitude_m": check_positive("polishing_amplitude_m", p["polishing_amplitude_m"], allow_zero=True),
            "period_s": check_positive("polishing_period_s", p["polishing_period_s"])}, force


def nominal_controller_model(robot: str):
    """The model without ``model_file``: a built-in UR's nominal model with its nominal drive gains (the
    sensorless force estimate turns currents into torques with them; robots/priors.py), a URDF's without gains."""
    from ..io.model_file import DynamicModel, ur_controller_model
    from ..robots.description import ROBOT_NAMES

    return ur_controller_model(robot) if str(robot).strip().lower() in ROBOT_NAMES else DynamicModel.nominal(robot)


def target_motion_settings(p: dict) -> dict:
    """PoseReference bounds of the external task (control/pose_reference.py), checked at start-up: beyond what a UR
    tool reaches (1 m/s linear, pi rad/s) is refused as a unit slip, not passed on to the law."""
    return {"speed_m_s": check_positive("target_speed_m_s", p["target_speed_m_s"], upper=1.0),
            "acceleration_m_s2": check_positive("target_acceleration_m_s2", p["target_acceleration_m_s2"], upper=10.0),
            "angular_speed_rad_s": check_positive("target_angular_speed_rad_s", p["target_angular_speed_rad_s"],
                                                  upper=np.pi),
            "angular_acceleration_rad_s2": check_positive("target_angular_acceleration_rad_s2",
                                                          p["target_angular_acceleration_rad_s2"], upper=40.0)}


def direct_robot_config(p: dict) -> UrInterfaceConfig:
    """The robot configuration of ``robot_connection: direct`` from the node's parameters."""
    overrides: dict = {}
    if p["robot_backend"]:
        overrides["backend"] = check_choice("robot_backend", p["robot_backend"], ("sim", "rtde"))
    if p["robot_ip"]:
        overrides["robot_ip"] = p["robot_ip"]
    import yaml

    for item in p["robot_parameters"] or []:
        name, sep, text = str(item).partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"parameter 'robot_parameters': {item!r} is not name=value "
                                 "(e.g. sim_truth_seed=7)")
        try:
            overrides[name.strip()] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ParameterError(f"parameter 'robot_parameters': {item!r}: {exc}") from None
    return UrInterfaceConfig.from_parameter_files(p["robot_config_files"] or [], overrides)


def controller_robot(p: dict, model_robot: str | None, config: UrInterfaceConfig | None) -> str:
    """The arm the controller is for: parameter ``robot``, or (empty) the one ``model_file`` was identified for,
    else the one the direct connection opens (``config``), else (topics) the one ``robot_config_files`` name.
    Whatever names an arm must name the same one."""
    given, model_file = (p["robot"] or "").strip(), p["model_file"]
    if config is None and not given and model_robot is None and p["robot_config_files"]:
        return direct_robot_config(p).robot_name  # topics: the files ur_interface was started from
    opened = None if config is None else config.robot_name
    if given and model_robot is not None and not same_robot(model_robot, given):
        raise ParameterError(f"parameter 'model_file': {model_file} was identified for {model_robot}, but "
                             f"parameter 'robot' is {given}: set robot:={model_robot} if that is the arm, "
                             f"or give the model identified on the {given}")
    chosen = given or model_robot or opened
    if chosen is None:
        raise ParameterError("parameter 'robot' is empty and neither model_file nor a direct connection names the "
                             "arm: set robot:=<the arm> (ur3, ur5e, ... or a URDF)")
    if opened is not None and not same_robot(opened, chosen):
        raise ParameterError(f"the robot opened in direct connection is {opened} (from robot_config_files / "
                             f"robot_parameters), but the model is for {chosen}: configure the same robot in both")
    return chosen
