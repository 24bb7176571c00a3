"""Simulated tasks of the force/motion controller (control/) on the MuJoCo UR3 (sim/plant.py, sim/scene.py).

* :func:`run_polishing` — the polishing task of Jamisola et al. (seeds.md P2) scaled to a
  UR3: approach a curved surface unknown to the controller, make contact through the
  three stages of P2 eq. (10), then hold the normal force while tracking a sinusoid
  along the surface (0.08 m amplitude, 5 s period) while the base moves slowly (the
  person pushing the mobile base in P2). By default the tool orientation is
  motion-controlled (``align_with_surface=True`` gives P2's zero moments about tool x
  and y instead; with the simulated BALL pad no moment about the contact point exists,
  so those axes would be left free and drift: use it only with a flat pad).

  The tool is :data:`POLISHING_TOOL`: a 0.3 kg, 10 cm shaft ending in a 1 cm-radius
  ball pad on a 3 kN/m, 25 N s/m prismatic spring-damper (50 g; P2's compliant
  polishing pad: motion at the stiff sensor frame, force at the compliant tip), on the
  contact :data:`~robot_dynamics_id.sim.scene.POLISHING_PAD_CONTACT` (elliptic cone,
  friction 0.15). With the rigid ball of the first version (``tool=Tool(),
  contact=ContactModel()``, stiff 1.4e5 N/m contact, pyramidal cone, friction 0.3) the
  joints' stick-slip at every velocity reversal went straight into the contact force
  (drops to 0 and peaks of 14-20 N): no force loop gain could fix that without a
  compliance in series.
* :func:`run_free_motion` — motion control only along a fast Cartesian path (P2's free
  motion experiment).
* contact through the wrist singularity: :mod:`.singularity_crossing`.

Each returns a result with the time series and the figures the acceptance criteria
name; errors are measured on the simulator's truth (true contact force, true poses).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..control.contact import ContactStage
from ..control.controller import OperationalSpaceController
from ..control.controller_config import ControllerConfig, OutputMode, Payload
from ..io.model_file import DynamicModel
from ..robots.kinematics import solve_ik
from ..sim.plant import SimulatedUR
from ..sim.scene import (POLISHING_PAD_CONTACT, CompliantPad, ContactModel, Scene,
                         SinusoidalBaseMotion, Tool, polishing_scene)
from ..sim.truth import nominal_truth

__all__ = [
    "POLISHING_TOOL",
    "FreeMotionResult",
    "PolishingResult",
    "quintic_ramp",
    "run_free_motion",
    "run_polishing",
    "tool_payload",
]

#: The polishing tool: 0.3 kg shaft, 10 cm long, ending in a 1 cm-radius ball pad on a
#: 3 kN/m, 25 N s/m spring-damper (50 g); see sim/scene.CompliantPad.
POLISHING_TOOL = Tool(pad=CompliantPad())

#: a pose with the tool pointing down over the polishing surface
START_Q_RAD = np.array([0.0, -1.9, -1.6, -1.2, np.pi / 2, 0.0])


def tool_payload(tool: Tool) -> Payload:
    """The controller's payload for a scene tool (UR's "set payload")."""
    mass, com, inertia = tool.inertial()
    return Payload(float(mass), tuple(float(v) for v in com), tuple(tuple(float(v) for v in row) for row in inertia))


def _apply_contact_cone(sim: SimulatedUR, contact_cone: str | None) -> None:
    """Diagnostic: switch the plant's friction cone ('elliptic' or 'pyramidal'; None = the scene's).

    The scene's :class:`~robot_dynamics_id.sim.scene.ContactModel` ``cone`` sets it when the
    MJCF is built (the polishing contact uses 'elliptic'); this overrides the compiled model's
    option afterwards, for comparisons.
    """
    if contact_cone is None:
        return
    import mujoco

    cones = {"elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC, "pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL}
    if contact_cone not in cones:
        raise ValueError(f"contact_cone must be None, 'elliptic' or 'pyramidal', got {contact_cone!r}")
    sim._mj_model.opt.cone = cones[contact_cone]


def quintic_ramp(x: float) -> tuple[float, float, float]:
    """Quintic 0->1 ramp s(x) and its first two derivatives in x, clamped to [0, 1]."""
    if x <= 0.0:
        return 0.0, 0.0, 0.0
    if x >= 1.0:
        return 1.0, 0.0, 0.0
    return (x**3 * (10 - 15 * x + 6 * x * x), 30 * x * x * (1 - x) ** 2, 60 * x * (1 - x) * (1 - 2 * x))


@dataclass
class PolishingResult:
    """Time series of a polishing run and its summary figures (true contact force)."""

    time_s: np.ndarray
    stage: list[ContactStage]
    normal_force_true_n: np.ndarray
    normal_force_measured_n: np.ndarray
    path_error_m: np.ndarray
    events: list
    hybrid_start_s: float
    tracking_start_s: float
    settle_s: float
    desired_force_n: float
    max_joint_acceleration_rad_s2: float = 0.0
    step_time_s: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def settled(self) -> np.ndarray:
        return self.time_s >= self.hybrid_start_s + self.settle_s

    @property
    def max_force_error_n(self) -> float:
        """max |f_d - f| (true normal force) after the impact stage settled."""
        if not np.isfinite(self.hybrid_start_s):
            return float("inf")
        return float(np.max(np.abs(self.desired_force_n - self.normal_force_true_n[self.settled])))

    @property
    def rms_force_error_n(self) -> float:
        if not np.isfinite(self.hybrid_start_s):
            return float("inf")
        return float(np.sqrt(np.mean((self.desired_force_n - self.normal_force_true_n[self.settled]) ** 2)))

    @property
    def max_path_error_m(self) -> float:
        """max tangential (tool x/y) position error while tracking the sinusoid."""
        sel = self.time_s >= self.tracking_start_s
        return float(np.max(self.path_error_m[sel])) if np.any(sel) else float("inf")


def run_polishing(
    *,
    controller_model: DynamicModel | None = None,
    truth: DynamicModel | None = None,
    output_mode: str = "torque",
    force_source: str = "sensor",
    normal_force_n: float = 10.0,
    amplitude_m: float = 0.08,
    sinusoid_period_s: float = 5.0,
    tracking_duration_s: float = 10.0,
    base_motion: bool = True,
    rate_hz: float | None = None,
    noise: bool = True,
    seed: int = 0,
    settle_s: float = 0.5,
    approach_speed_m_s: float = 0.05,
    start_height_m: float = 0.03,
    approach_depth_m: float = 0.02,
    expected_surface_error_m: float = 0.005,
    config_overrides: dict | None = None,
    record_step_time: bool = False,
    contact: ContactModel | None = None,
    align_with_surface: bool = False,
    contact_cone: str | None = None,
    tool: Tool | None = None,
) -> PolishingResult:
    """The P2 polishing task on the MuJoCo UR3 (see the module docstring).

    ``controller_model``: what the controller believes (default: the truth itself, i.e.
    a perfectly identified model). ``truth``: the plant (default nominal_truth('ur3')).
    ``output_mode`` 'torque' runs at 500 Hz (e-Series direct_torque), 'velocity' at
    125 Hz (CB3 speedJ) unless ``rate_hz`` says otherwise. The controller is told the
    surface height only approximately (``expected_surface_error_m`` too high): it
    approaches a point 10 mm below that guess.
    """
    import time as _time

    truth = truth or nominal_truth("ur3")
    controller_model = controller_model or truth
    mode = OutputMode(output_mode)
    if rate_hz is None:
        rate_hz = 500.0 if mode is OutputMode.TORQUE else 125.0
    tool = POLISHING_TOOL if tool is None else tool
    contact = POLISHING_PAD_CONTACT if contact is None else contact
    motion = SinusoidalBaseMotion() if base_motion else None
    scene = polishing_scene(tool=tool, base_motion=motion)
    scene = Scene(tool=scene.tool, surface=scene.surface, contact=contact, base_motion=scene.base_motion)
    # start with the tip start_height_m above the surface, tool pointing straight down
    import pinocchio as pin

    robot = controller_model.robot_model()
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, START_Q_RAD)
    tip0 = data.oMf[robot.tool_frame_id] * pin.SE3(np.eye(3), tool.tip_point_tool0_m)
    rotation_down = np.array([[0.0, -1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])  # tool z straight down
    top = scene.surface.height_m(tip0.translation[0], tip0.translation[1])
    start_tip = pin.SE3(rotation_down, np.array([tip0.translation[0], tip0.translation[1], top + start_height_m]))
    q_start = solve_ik(robot, start_tip, START_Q_RAD, local_offset_m=tool.tip_point_tool0_m)
    sim = SimulatedUR(robot=controller_model.robot, truth=truth, rate_hz=rate_hz, initial_q_rad=q_start,
                      scene=scene, noise=noise, noise_seed=seed)
    _apply_contact_cone(sim, contact_cone)
    period = 1.0 / rate_hz
    options = dict(period_s=period, output_mode=mode, force_source=force_source, payload=tool_payload(tool),
                   tool_tip_offset_m=tuple(tool.tip_point_tool0_m),
                   motion_axes=(True, True, False, False, False, True) if align_with_surface
                   else (True, True, False, True, True, True))
    options.update(config_overrides or {})
    ctl = OperationalSpaceController(controller_model, config=ControllerConfig(**options))
    state = sim.state()
    ctl.osm.update(state.q_rad, state.qd_rad_s)
    start = ctl.osm.position_m.copy()
    rotation_d = ctl.osm.rotation.copy()
    tip_offset = ctl.osm.tip_position_m - ctl.osm.position_m
    surface_top = scene.surface.height_m(start[0] + tip_offset[0], start[1] + tip_offset[1])
    guess = surface_top + expected_surface_error_m
    # P2 eq. (10), stage 1: aim at a point just below the expected surface.
    approach_target = start.copy()
    approach_target[2] = guess - tip_offset[2] - approach_depth_m
    approach_length = float(start[2] - approach_target[2])
    approach_time = 1.875 * approach_length / approach_speed_m_s  # quintic ramp: peak speed 1.875 L / T
    ctl.set_motion_target(start, rotation_d)
    ctl.set_force_target(normal_force_n)
    ctl.reset_velocity_integrator(state.qd_rad_s)
    ctl.start_approach(state.timestamp_s)
    t0 = state.timestamp_s
    hybrid_start = np.inf
    tracking_start = np.inf
    total = approach_time + 2.0 + tracking_duration_s
    n_steps = int(total / period)
    times, stages, f_true, f_meas, path_err, step_t = [], [], [], [], [], []
    omega = 2 * np.pi / sinusoid_period_s
    max_qdd = 0.0
    for _ in range(n_steps):
        t = state.timestamp_s - t0
        stage = ctl.stage
        if stage in (ContactStage.APPROACH, ContactStage.IMPACT):
            s, ds, dds = quintic_ramp(t / approach_time)
            p = start + (approach_target - start) * s
            v = np.r_[(approach_target - start) * ds / approach_time, 0, 0, 0]
            a = np.r_[(approach_target - start) * dds / approach_time**2, 0, 0, 0]
            ctl.set_motion_target(p, rotation_d, twist=v, acceleration=a)
        else:
            if not np.isfinite(hybrid_start):
                hybrid_start = t
                tracking_start = t + settle_s
            tau = t - tracking_start
            # amplitude envelope: ramp in over one period so the path starts smoothly
            env, denv, ddenv = quintic_ramp(tau / sinusoid_period_s)
            x = amplitude_m * env * np.sin(omega * tau) if tau > 0 else 0.0
            dx = amplitude_m * (denv / sinusoid_period_s * np.sin(omega * tau) + env * omega * np.cos(omega * tau)) \
                if tau > 0 else 0.0
            ddx = amplitude_m * (ddenv / sinusoid_period_s**2 * np.sin(omega * tau)
                                 + 2 * denv / sinusoid_period_s * omega * np.cos(omega * tau)
                                 - env * omega**2 * np.sin(omega * tau)) if tau > 0 else 0.0
            p = np.array([start[0] + x, start[1], guess - tip_offset[2]])
            ctl.set_motion_target(p, rotation_d, twist=np.r_[dx, 0, 0, 0, 0, 0], acceleration=np.r_[ddx, 0, 0, 0, 0, 0])
        a0 = _time.perf_counter()
        cmd = ctl.step_state(state)
        if record_step_time:
            step_t.append(_time.perf_counter() - a0)
        if mode is OutputMode.TORQUE:
            sim.direct_torque(cmd.torque_nm)
        else:
            sim.speed_j(cmd.velocity_rad_s, 40.0)
        if cmd.stage is ContactStage.HYBRID and t > hybrid_start + settle_s:
            max_qdd = max(max_qdd, float(np.abs(cmd.joint_acceleration_rad_s2).max()))
        state = sim.step()
        # truth: contact force the tool applies to the surface along the tool axis
        flange = sim.flange_pose_base()
        z_tool = flange[:3, 2]
        contact = -sim.contact_force_world()
        times.append(t + period)
        stages.append(cmd.stage)
        f_true.append(float(z_tool @ contact))
        f_meas.append(float(-z_tool @ state.tcp_wrench_base[:3]))
        # tangential error of the motion point along the base x/y plane projected on tool x/y
        e = flange[:3, 3] - ctl._x_d
        e_t = e - z_tool * (z_tool @ e)
        path_err.append(float(np.linalg.norm(e_t)) if np.isfinite(tracking_start) else 0.0)
    return PolishingResult(
        time_s=np.array(times), stage=stages, normal_force_true_n=np.array(f_true),
        normal_force_measured_n=np.array(f_meas), path_error_m=np.array(path_err), events=list(ctl.events),
        hybrid_start_s=float(hybrid_start), tracking_start_s=float(tracking_start), settle_s=settle_s,
        desired_force_n=normal_force_n, max_joint_acceleration_rad_s2=max_qdd, step_time_s=np.array(step_t))


@dataclass
class FreeMotionResult:
    """Free-motion tracking errors (true poses) along a Cartesian path."""

    time_s: np.ndarray
    position_error_m: np.ndarray
    orientation_error_rad: np.ndarray
    peak_speed_m_s: float
    #: per cycle, the largest joint command: |velocity| (rad/s) or |torque| (Nm) by output_mode
    command_max: np.ndarray

    @property
    def max_position_error_m(self) -> float:
        return float(self.position_error_m.max())

    @property
    def max_orientation_error_deg(self) -> float:
        return float(np.degrees(self.orientation_error_rad.max()))


def run_free_motion(
    *,
    controller_model: DynamicModel | None = None,
    truth: DynamicModel | None = None,
    output_mode: str = "torque",
    peak_speed_m_s: float = 0.5,
    radius_m: float = 0.08,
    duration_s: float = 4.0,
    rate_hz: float | None = None,
    noise: bool = True,
    config_overrides: dict | None = None,
    tool: Tool | None = None,
) -> FreeMotionResult:
    """Track a horizontal circle (``radius_m``) at a speed that ramps to ``peak_speed_m_s`` (0: hold still),
    tool pointing down, fixed orientation. Errors are the motion point's true pose errors."""
    truth = truth or nominal_truth("ur3")
    controller_model = controller_model or truth
    mode = OutputMode(output_mode)
    if rate_hz is None:
        rate_hz = 500.0 if mode is OutputMode.TORQUE else 125.0
    tool = POLISHING_TOOL if tool is None else tool
    sim = SimulatedUR(robot=controller_model.robot, truth=truth, rate_hz=rate_hz, initial_q_rad=START_Q_RAD,
                      scene=Scene(tool=tool), noise=noise)
    period = 1.0 / rate_hz
    options = dict(period_s=period, output_mode=mode, payload=tool_payload(tool),
                   tool_tip_offset_m=tuple(tool.tip_point_tool0_m))
    options.update(config_overrides or {})
    ctl = OperationalSpaceController(controller_model, config=ControllerConfig(**options))
    state = sim.state()
    ctl.osm.update(state.q_rad, state.qd_rad_s)
    start = ctl.osm.position_m.copy()
    rotation_d = ctl.osm.rotation.copy()
    centre = start - np.array([radius_m, 0.0, 0.0])
    ctl.set_motion_target(start, rotation_d)
    ctl.reset_velocity_integrator(state.qd_rad_s)
    ctl.enter_free_motion()
    omega_peak = peak_speed_m_s / radius_m
    ramp = 1.0  # s to reach the peak angular rate (smooth)
    times, pos_err, ori_err, command_max = [], [], [], []
    t0 = state.timestamp_s
    phase = 0.0
    for _ in range(int(duration_s / period)):
        t = state.timestamp_s - t0
        # phase with a smooth angular-rate ramp up, hold, ramp down
        up, dup, _ = quintic_ramp(t / ramp)
        down, ddown, _ = quintic_ramp((duration_s - 0.2 - t) / ramp)
        rate_scale = up * down
        phase_rate = omega_peak * rate_scale
        phase_acc = omega_peak * (dup / ramp * down - up * ddown / ramp)
        phase += phase_rate * period
        c, s = np.cos(phase), np.sin(phase)
        p = centre + radius_m * np.array([c, s, 0.0])
        v = radius_m * phase_rate * np.array([-s, c, 0.0])
        acc = radius_m * (phase_acc * np.array([-s, c, 0.0]) - phase_rate**2 * np.array([c, s, 0.0]))
        ctl.set_motion_target(p, rotation_d, twist=np.r_[v, 0, 0, 0], acceleration=np.r_[acc, 0, 0, 0])
        cmd = ctl.step_state(state)
        if mode is OutputMode.TORQUE:
            sim.direct_torque(cmd.torque_nm)
        else:
            sim.speed_j(cmd.velocity_rad_s, 40.0)
        command_max.append(float(np.abs(cmd.torque_nm if mode is OutputMode.TORQUE else cmd.velocity_rad_s).max()))
        state = sim.step()
        flange = sim.flange_pose_base()
        times.append(t + period)
        pos_err.append(float(np.linalg.norm(flange[:3, 3] - ctl._x_d)))
        # rotation angle between actual and desired
        rel = rotation_d.T @ flange[:3, :3]
        ori_err.append(float(np.arccos(np.clip((np.trace(rel) - 1) / 2, -1.0, 1.0))))
    return FreeMotionResult(np.array(times), np.array(pos_err), np.array(ori_err), peak_speed_m_s,
                            np.array(command_max))
