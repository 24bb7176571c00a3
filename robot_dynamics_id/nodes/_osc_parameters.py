"""osc_controller's parameter table and the robot configuration of its direct connection.

Kept apart from the node so the node module stays a thin shell; ``rdi params osc_controller`` and the
README read the table through :mod:`robot_dynamics_id.nodes.osc_controller`, which re-exports it.
"""

from __future__ import annotations

from ..hardware.collision_config import UR_INTERFACE_COLLISION_PARAMETERS
from ..hardware.config import UrInterfaceConfig
from ..parameters import ParameterError, ParameterSpec, check_choice

__all__ = ["AXES", "OSC_CONTROLLER_PARAMETERS", "direct_robot_config"]

OSC_CONTROLLER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("robot", "string", "ur3", "robot (kinematics): ur3, ur3e, ur5e, ur10e or a URDF path"),
    ParameterSpec("model_file", "string", "",
                  "identified model (rdi identify .../model.yaml); empty: the nominal model"),
    ParameterSpec("rate_hz", "double", 500.0, "control rate: 500 (e-Series torque) or 125 (CB3 velocity)", "Hz"),
    ParameterSpec("output_mode", "string", "torque", "torque (direct_torque, e-Series) or velocity (speedJ, CB3)"),
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
    ParameterSpec("robot_config_files", "string_array", [],
                  "direct: ur_interface parameter files to configure the robot from (e.g. config/ur3.yaml, "
                  "config/ur3_control.yaml); their ur_interface section is read"),
    ParameterSpec("robot_backend", "string", "", "direct: sim or rtde (empty: as in robot_config_files)"),
    ParameterSpec("robot_ip", "string", "", "direct: controller address (empty: as in robot_config_files)"),
    ParameterSpec("robot_parameters", "string_array", [],
                  "direct: further ur_interface parameters as name=value (YAML value), applied last"),
    ParameterSpec("publish_robot_state", "bool", True,
                  "direct: publish /joint_states, /motor_currents, /target_moment and the wrench"),
) + UR_INTERFACE_COLLISION_PARAMETERS  # the collision observer in the robot loop (direct connection)

AXES = ("x", "y", "z", "rx", "ry", "rz")


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
