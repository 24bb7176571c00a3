"""The operational-space force/motion controller: one ``step`` per robot cycle, no ROS.

:class:`OperationalSpaceController` combines the pieces of Jamisola et al. (seeds.md P2):

* model terms at the motion point (F/T sensor frame) and the tool tip (operational_space.py),
* Lambda with the singularity treatment of P2 eqs. (6)-(9) (singularity.py),
* the contact stages approach -> impact -> hybrid of P2 eq. (10) (contact.py),
* the hybrid law of P2 eqs. (2)-(5) with per-axis selection in the tool (task) frame
  (selection.py), PD motion law, PI force law with anti-windup and error saturation,
  orientation error of P2 eq. (13),
* friction compensation Gamma = J^T F + tau_friction (P2, eqs. (11)-(12)) with the identified
  model's terms (friction_compensation.py),
* the contact wrench from the flange F/T sensor or, without one, from a momentum
  observer on the motor currents (force_estimation.py),

and produces, per cycle, either joint torques (robots with ``direct_torque``; UR adds
its own gravity compensation, so that is subtracted when ``robot_adds_gravity`` is set)
or joint velocities (robots with velocity commands only, e.g. the CB3 UR3 via speedJ:
the closed-loop model ``qdd = M^-1 (Gamma - h + J^T w_ext)`` is integrated one period).

The options and the output (:class:`ControllerConfig`, :class:`ControlCommand`) are in
controller_config.py. Units: m, rad, s, N, Nm. Twists/wrenches in base axes (see operational_space.py).
In the HYBRID stage ``law='projected'`` replaces the P2 law by Aghili's projected hybrid
law (seeds.md P5; see controller_stages.py ``ProjectedHybridLaw``).

A cycle is a pipeline of small stages chosen once at construction from the options
(controller_stages.py): wrench source (sensor / estimated) -> tip wrench and contact stage ->
motion law -> force law and hybrid law (HYBRID stage) -> friction (off / measured / desired /
sum velocity) -> output (torque / velocity); ``step`` composes them and branches only on the
contact stage.

Real-time: ``step`` allocates little (its CPU time: benchmarks/bench_controller.py, numbers in
benchmarks/RESULTS.md); its :class:`ControlCommand` is reused between cycles (copy what you keep).

Compliant joints (Bicchi & Melchiorri, seeds.md P4): with ``flexible_compensation`` on, the
force target is corrected for the joint deflections of strain-wave gears
(control/flexible.py ``CompliantJointForceCorrection``): the encoders read the motor side,
so under load the tool frame is turned away from where the rigid model puts it, and the
wrench the tool applies in the world misses the target. The correction makes the applied
world-frame wrench equal the target mapped to the world through the rigid kinematics at
the measured joint angles (what the controller means by its target). It is recomputed at
``flexible_compensation_rate_hz`` (not every cycle: ~0.05 ms per update) from the measured
contact wrench; between updates a cycle only compares a time. It acts on the
force-controlled axes: a tilt of the tool changes the normal force only at second order,
so a pure normal-force task sees little change; a task whose force has tangential
components (pushing with friction, several force-controlled axes) is what it corrects.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pinocchio as pin

from ..io.model_file import DynamicModel
from ..robot_state import RobotState
from ..robots.model import add_body_at_frame
from ..dynamics.drive import check_drive_gains
from .contact import ContactStage, ContactStageMachine, StageEvent
from .controller_config import (ControlCommand, ControllerConfig, ForceSource, FrictionVelocitySource, HybridLaw,
                                OutputMode, Payload, VelocityIntegrationBase)
from .controller_stages import (CompliantForceTarget, CycleSignals, DesiredVelocityFriction, EstimatedWrench,
                                ForceLaw, ForceTargets, MeasuredVelocityFriction, MotionLaw, NoFriction,
                                OperationalSpaceHybridLaw, ProjectedHybridLaw, RigidForceTarget, SensorWrench,
                                ShiftedSensorWrench, SumVelocityFriction, TorqueOutput, VelocityIntegrator,
                                VelocityOutput, free_motion_torque)
from .flexible import UR3_JOINT_STIFFNESS_NM_PER_RAD
from .force_estimation import MomentumObserver
from .friction_compensation import FrictionCompensation
from .operational_space import OperationalSpaceModel
from .singularity import SingularityHandler

__all__ = ["CONTACT_FORCE_STOP_FACTOR", "ContactForceExceeded", "OperationalSpaceController"]

#: rounding allowed below target_min_z_m (m): a target placed exactly on the floor is on it
FLOOR_TOLERANCE_M = 1e-9
#: a measured contact force above this factor x max_force_n stops the controller: the targets are bounded by
#: max_force_n, so only a contact the law does not regulate (an impact, free motion into an obstacle) gets there
CONTACT_FORCE_STOP_FACTOR = 1.25


class ContactForceExceeded(ValueError):
    """The measured contact force passed the stop limit; the caller must stop the arm."""


def _with_payload(model: pin.Model, tool_frame_id: int, payload: Payload) -> None:
    if payload.mass_kg <= 0:
        return
    add_body_at_frame(model, tool_frame_id, pin.Inertia(float(payload.mass_kg), np.asarray(payload.com_m, float),
                                                        np.asarray(payload.inertia_kgm2, float)))


class OperationalSpaceController:
    """Hybrid force/motion control of a 6-axis arm in operational space (seeds.md P2).

    Use::

        ctl = OperationalSpaceController(model, config=ControllerConfig(...))
        ctl.set_motion_target(position_m, rotation)          # motion point (F/T sensor frame)
        ctl.set_force_target(normal_force_n=10.0)            # at the tool tip, tool axes
        ctl.start_approach(time_s)                           # stage 1 of P2 eq. (10)
        cmd = ctl.step(q, qd, time_s, wrench_base=..., current_a=...)
        robot.direct_torque(cmd.torque_nm)  or  robot.speed_j(cmd.velocity_rad_s, acc)

    ``model`` is the identified :class:`DynamicModel` (or ``DynamicModel.nominal('ur3')``).
    """

    def __init__(self, model: DynamicModel, *, config: ControllerConfig | None = None) -> None:
        cfg = config or ControllerConfig()
        self.config = cfg
        self.dynamic_model = model
        robot = model.robot_model()
        _with_payload(robot.model, robot.tool_frame_id, cfg.payload)
        self.robot = robot
        self.osm = OperationalSpaceModel(robot, sensor_offset=np.asarray(cfg.sensor_offset_m, float),
                                         tool_tip_offset=np.asarray(cfg.tool_tip_offset_m, float),
                                         wrench_reference_offset=np.asarray(cfg.wrench_reference_offset_m, float))
        n = self.osm.n_joints
        self.n_joints = n
        self.singularity = SingularityHandler(
            method=cfg.singularity_method, region_enter_sigma=cfg.singularity_region_enter_sigma,
            region_full_sigma=cfg.singularity_region_full_sigma, damping_max=cfg.singularity_damping_max)
        self.stages = ContactStageMachine(threshold_n=cfg.contact_threshold_n,
                                          min_impact_duration_s=cfg.min_impact_duration_s)
        self.friction_compensation = FrictionCompensation(
            model.friction, scale=cfg.friction_compensation_scale,
            smoothing_velocity_rad_s=cfg.friction_compensation_velocity_rad_s)
        self._motion_mask = np.array(cfg.motion_axes, bool)
        self._force_mask = ~self._motion_mask
        # Reach of the arm from the shoulder-lift joint to the tool tip (for refusing targets).
        self._shoulder_m, self._reach_m = self._reach()
        self._motion_point_to_tip = self.osm.tip_in_motion_frame.translation.copy()  # motion-point axes, m
        # ---- targets (arrays the stages hold; updated in place) ----
        self._x_d = np.zeros(3)
        self._r_d = np.eye(3)
        self._xd_d = np.zeros(6)
        self._xdd_d = np.zeros(6)
        self._targets = ForceTargets()
        self._wrench_d_task = self._targets.wrench_task
        self._has_motion_target = False
        self._stopped = False
        self._contact_requested = False
        # a measured contact force beyond this stops the controller (ContactForceExceeded), N^2
        self._force_stop_sq = (CONTACT_FORCE_STOP_FACTOR * cfg.max_force_n) ** 2
        # ---- the stages of a cycle, chosen once (controller_stages.py) ----
        self._signals = CycleSignals(n, self._targets)
        self._integrator = VelocityIntegrator(n)
        self.observer: MomentumObserver | None = None
        self._wrench_source = self._build_wrench_source(model)
        self._motion_law = self._build_motion_law()
        self._force_law = self._build_force_law(model)
        self._hybrid_law = (ProjectedHybridLaw(self.osm, kp=cfg.force_loop_gain,
                                               ki_per_s=cfg.force_loop_integral_gain_per_s,
                                               kv_per_s=cfg.kv_force_per_s)
                            if cfg.law is HybridLaw.PROJECTED else OperationalSpaceHybridLaw(self.osm))
        self._friction = self._build_friction()
        self._output = self._build_output(model)
        self._F = np.zeros(6)
        self._jtf = np.zeros(n)
        self.command = ControlCommand(
            mode=cfg.output_mode, torque_nm=np.zeros(n), joint_torque_nm=np.zeros(n), velocity_rad_s=np.zeros(n),
            joint_acceleration_rad_s2=np.zeros(n), stage=self.stages.stage, events=(), force_error=np.zeros(6),
            contact_wrench_tip_base=np.zeros(6), position_error_m=np.zeros(3), orientation_error_rad=np.zeros(3))

    # ---- building the stages --------------------------------------------------------------------
    def _build_wrench_source(self, model: DynamicModel) -> SensorWrench | EstimatedWrench:
        cfg = self.config
        if cfg.force_source is ForceSource.SENSOR:
            apart = bool(np.any(np.asarray(cfg.wrench_reference_offset_m, float)
                                != np.asarray(cfg.sensor_offset_m, float)))
            return ShiftedSensorWrench(self.osm) if apart else SensorWrench(self.osm)
        # Sensorless force needs joint torques from currents: the model's gains, checked like everywhere else.
        if model.drive_gains_nm_per_a is None:
            raise ValueError("force_source='estimated' turns motor currents into torques, but the model has no "
                             "drive gains (drive_gains_nm_per_a: null): identify the model from currents with "
                             "--drive-gains, or set the gains in the model file")
        gains = check_drive_gains(model.drive_gains_nm_per_a, model.n_joints, what="the model's drive_gains_nm_per_a")
        gain_per_s = 0.5 / cfg.period_s if cfg.observer_gain_per_s is None else cfg.observer_gain_per_s
        self.observer = MomentumObserver(self.osm.model, gain_per_s=gain_per_s, period_s=cfg.period_s)
        return EstimatedWrench(self.osm, self.observer, gains, self.friction_compensation)

    def _build_motion_law(self) -> MotionLaw:
        cfg = self.config
        # Gains as 6-vectors: translations then rotations (task or base axes, isotropic per group).
        kp = np.r_[np.full(3, cfg.kp_position_per_s2), np.full(3, cfg.kp_orientation_per_s2)]
        kv = np.r_[np.full(3, cfg.kv_position_per_s), np.full(3, cfg.kv_orientation_per_s)]
        return MotionLaw(self.osm, kp, kv, cfg.kv_impact_per_s, self._x_d, self._r_d, self._xd_d, self._xdd_d)

    def _build_force_law(self, model: DynamicModel) -> ForceLaw:
        cfg, n = self.config, self.n_joints
        target: RigidForceTarget | CompliantForceTarget = RigidForceTarget()
        if cfg.flexible_compensation:
            stiffness = (UR3_JOINT_STIFFNESS_NM_PER_RAD if cfg.joint_stiffness_nm_per_rad is None
                         else np.asarray(cfg.joint_stiffness_nm_per_rad, float))
            if np.size(stiffness) != n:
                raise ValueError(f"joint_stiffness_nm_per_rad needs {n} values (one per joint) for "
                                 f"{model.robot}, got {np.size(stiffness)}")
            target = CompliantForceTarget(self.osm, stiffness, self._force_mask, cfg.flexible_compensation_rate_hz)
        kpf = cfg.force_loop_gain if cfg.kp_force_m_s2_per_n is None else cfg.kp_force_m_s2_per_n
        kif = cfg.force_loop_integral_gain_per_s if cfg.ki_force_m_s2_per_n_s is None else cfg.ki_force_m_s2_per_n_s
        return ForceLaw(
            self.osm, target, period_s=cfg.period_s, motion_mask=self._motion_mask,
            kpf=np.r_[np.full(3, kpf), np.full(3, cfg.kp_moment_rad_s2_per_nm)],
            kif=np.r_[np.full(3, kif), np.full(3, cfg.ki_moment_rad_s2_per_nm_s)],
            kvf=np.r_[np.full(3, cfg.kv_force_per_s), np.full(3, cfg.kv_moment_per_s)],
            error_limit=np.r_[np.full(3, cfg.force_error_limit_n), np.full(3, cfg.moment_error_limit_nm)],
            integral_limit=np.r_[np.full(3, cfg.force_integral_limit_n_s), np.full(3, cfg.moment_integral_limit_nm_s)],
            schedule_kp=cfg.kp_force_m_s2_per_n is None, schedule_ki=cfg.ki_force_m_s2_per_n_s is None)

    def _build_friction(self) -> NoFriction | MeasuredVelocityFriction:
        cfg = self.config
        if not cfg.friction_compensation:
            return NoFriction()
        kind = {FrictionVelocitySource.MEASURED: MeasuredVelocityFriction,
                FrictionVelocitySource.DESIRED: DesiredVelocityFriction,
                FrictionVelocitySource.SUM: SumVelocityFriction}[cfg.friction_velocity_source]
        return kind(self.osm, self.friction_compensation, self._xd_d)

    def _build_output(self, model: DynamicModel) -> TorqueOutput | VelocityOutput:
        cfg = self.config
        if cfg.output_mode is OutputMode.VELOCITY:
            return VelocityOutput(
                self.osm, self._integrator, np.asarray(self.robot.velocity_limit_rad_s, float), period_s=cfg.period_s,
                from_command=cfg.velocity_integration_base is VelocityIntegrationBase.COMMAND,
                admittance_mass_kg=cfg.velocity_mode_admittance_mass_kg,
                force_gain_scale=cfg.velocity_mode_force_gain_scale, kv_force_per_s=cfg.kv_force_per_s,
                kv_impact_per_s=cfg.kv_impact_per_s)
        gravity = None
        if cfg.robot_adds_gravity:
            # The robot's own gravity model (what direct_torque adds), with the same payload and the same mount
            # (the installation's gravity: one arm, one mount, whichever model file the inertials come from).
            gravity_robot = replace(cfg.robot_gravity_model or DynamicModel.nominal(model.robot),
                                    gravity_m_s2=model.gravity_m_s2).robot_model()
            _with_payload(gravity_robot.model, gravity_robot.tool_frame_id, cfg.payload)
            gravity = gravity_robot.model
        return TorqueOutput(self.osm, np.asarray(self.robot.torque_limit_nm, float), gravity)

    # ------------------------------------------------------------------------------------
    def _reach(self) -> tuple[np.ndarray, float]:
        model = self.osm.model
        data = model.createData()
        q0 = np.zeros(self.n_joints)
        pin.framesForwardKinematics(model, data, q0)
        # Sum of the distances between consecutive joints from joint 2 on, plus the tool points:
        # an upper bound of how far the motion point can be from the shoulder-lift joint.
        points = [data.oMi[j].translation for j in range(2, model.njoints)]
        points.append(data.oMf[self.osm.motion_frame_id].translation)
        reach = sum(float(np.linalg.norm(b - a)) for a, b in zip(points[:-1], points[1:]))
        return data.oMi[2].translation.copy(), reach

    @property
    def stage(self) -> ContactStage:
        return self.stages.stage

    @property
    def events(self) -> list[StageEvent]:
        """Every stage change so far."""
        return self.stages.events

    # ---- targets --------------------------------------------------------------------------
    def set_motion_target(self, position_m, rotation=None, *, twist=None, acceleration=None) -> None:
        """Desired pose of the motion point (F/T sensor frame) in the base frame, with optional
        feed-forward twist [v, omega] (m/s, rad/s) and acceleration (base axes).

        Raises ValueError for NaN/inf, a non-rotation matrix, a position out of reach or below the floor
        (``config.target_min_z_m``).
        """
        p, r = self.check_motion_target(position_m, rotation)
        for name, value in (("twist", twist), ("acceleration", acceleration)):
            if value is not None:
                v = np.asarray(value, float)
                if v.shape != (6,) or not math.isfinite(float(v @ v)):
                    raise ValueError(f"motion target {name} must be 6 finite numbers, got {value!r}")
        self._x_d[:] = p
        if r is not None:
            self._r_d[:] = r
        self._xd_d[:] = 0.0 if twist is None else twist
        self._xdd_d[:] = 0.0 if acceleration is None else acceleration
        self._has_motion_target = True

    def check_motion_target(self, position_m, rotation=None) -> tuple[np.ndarray, np.ndarray | None]:
        """The pose as arrays, or ValueError for NaN/inf, a non-rotation matrix, a position out of reach (a ball
        about the shoulder: a straight line between two accepted positions stays accepted), or a motion point or
        tool tip below ``config.target_min_z_m`` (between two accepted goals: :meth:`check_way`)."""
        # Called every cycle by a task: the checks are cheap (a dot product is NaN/inf iff an entry is),
        # and an unchanged rotation is not checked again.
        p = np.asarray(position_m, float)
        r = None
        if p.shape != (3,) or not math.isfinite(float(p @ p)):
            raise ValueError(f"motion target position must be 3 finite numbers (m), got {position_m!r}")
        if rotation is not None:
            r = np.asarray(rotation, float)
            if r.shape != (3, 3) or not math.isfinite(float(np.vdot(r, r))):
                raise ValueError("motion target rotation must be a finite 3x3 matrix")
            if not (self._has_motion_target and np.array_equal(r, self._r_d)) and (
                    np.abs(r.T @ r - np.eye(3)).max() > 1e-6 or np.linalg.det(r) < 0):
                raise ValueError("motion target rotation is not a rotation matrix (R^T R != I or det < 0); "
                                 "orthonormalise it (e.g. via a quaternion)")
        if self.config.target_min_z_m is not None:
            self._check_height(p, self._r_d if r is None else r)
        d = p - self._shoulder_m
        distance = math.sqrt(float(d @ d))
        if distance > self._reach_m - self.config.reach_margin_m:
            raise ValueError(
                f"motion target {p.round(4).tolist()} m is {distance:.3f} m from the shoulder, beyond the arm's "
                f"reach of {self._reach_m - self.config.reach_margin_m:.3f} m; choose a closer target"
                + (" (the unit is m: a position in mm?)" if distance > 10.0 else ""))
        return p, r

    def lowest_point(self, p: np.ndarray, r: np.ndarray) -> tuple[str, float]:
        """("motion point" or "tool tip", z in m): the lower of the two for the motion point at ``p`` with
        rotation ``r`` (base frame); the tip is p + R t, t the tip in the motion point's frame."""
        tip_z = float(p[2] + r[2] @ self._motion_point_to_tip)
        return ("tool tip", tip_z) if tip_z < p[2] else ("motion point", float(p[2]))

    def _check_height(self, p: np.ndarray, r: np.ndarray) -> None:
        """ValueError when the motion point or the tool tip is below ``config.target_min_z_m``."""
        which, low = self.lowest_point(p, r)
        floor = self.config.target_min_z_m
        if low < floor - FLOOR_TOLERANCE_M:
            raise ValueError(f"motion target {p.round(4).tolist()} m puts the {which} at z = {low:.4f} m, below the "
                             f"floor target_min_z_m = {floor:g} m (base frame); choose a higher target, or lower the "
                             "floor if the surface really is there" + (" (the unit is m: a position in mm?)"
                                                                       if abs(low) > 10.0 else ""))

    def check_start(self, p: np.ndarray, r: np.ndarray) -> None:
        """ValueError when the arm's present pose (motion point ``p``, rotation ``r``) is below the floor: it
        cannot be held there, and the message says how to get out."""
        which, low = self.lowest_point(p, r)
        floor = self.config.target_min_z_m
        if floor is not None and low < floor - FLOOR_TOLERANCE_M:
            raise ValueError(f"the arm starts with its {which} at z = {low:.4f} m, below target_min_z_m = {floor:g} m: "
                             "move it above the floor (freedrive or the pendant) before starting the controller")

    def check_way(self, p0, r0, p1, r1, *, overshoot: tuple[float, float] = (0.0, 0.0)) -> None:
        """ValueError when the way from pose (p0, r0) to the goal (p1, r1) may take the motion point or the tool
        tip below ``config.target_min_z_m`` (nothing to check without a floor).

        The move and the turn run on their own profiles (control/pose_reference.py), so any point of the segment
        may meet any rotation of the geodesic between: the lowest tip is min(p0 z, p1 z) + min over the geodesic
        of (R t)_z, less what braking from the present speeds may overshoot (``overshoot`` = (m, rad); the turn's
        costs rad × |t|). A conservative bound: a goal it refuses may be reachable by
        another way (turn first, or stay higher while turning)."""
        floor = self.config.target_min_z_m
        if floor is None:
            return
        overshoot_m, overshoot_rad = overshoot
        p0, p1, r0, r1 = (np.asarray(x, float) for x in (p0, p1, r0, r1))
        log_r = pin.log3(r0.T @ r1)
        turn_tip_z = min(float((r0 @ pin.exp3(s * log_r))[2] @ self._motion_point_to_tip)
                         for s in np.linspace(0.0, 1.0, 33))
        lift = float(np.linalg.norm(self._motion_point_to_tip)) * overshoot_rad
        low_p = min(float(p0[2]), float(p1[2])) - overshoot_m
        which, low = ("tool tip", low_p + turn_tip_z - lift) if turn_tip_z - lift < 0.0 else ("motion point", low_p)
        if low < floor - FLOOR_TOLERANCE_M:
            raise ValueError(f"on the way to motion target {p1.round(4).tolist()} m the {which} may pass z = "
                             f"{low:.4f} m, below the floor target_min_z_m = {floor:g} m (the move and the turn run "
                             f"on their own profiles; braking may overshoot {overshoot_m * 1000:.0f} mm and "
                             f"{overshoot_rad:.2f} rad): send an intermediate goal (turn first, or stay higher "
                             "while turning)")

    def set_force_target(self, normal_force_n: float | None = None, *, wrench_task=None,
                         start_contact: bool = False) -> None:
        """Desired contact wrench the tool applies at its tip, in tool-tip (task) axes.

        ``normal_force_n`` sets (0, 0, f, 0, 0, 0): pressing along tool z with zero moments
        (P2 polishing). Only the force-controlled axes of ``motion_axes`` are used.
        ``start_contact``: in free motion, the next :meth:`step` begins the contact sequence
        (:meth:`start_approach` at that step's time), so the force is regulated once in contact.
        Raises ValueError for NaN/inf, a negative normal force (a pull) or a force/moment above
        ``max_force_n``/``max_moment_nm``.
        """
        if wrench_task is None:
            if normal_force_n is None:
                raise ValueError("give normal_force_n or wrench_task")
            w = np.array([0.0, 0.0, float(normal_force_n), 0.0, 0.0, 0.0])
        else:
            w = np.asarray(wrench_task, float)
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            raise ValueError(f"force target must be finite (6-vector [N, Nm]), got {w!r}")
        cfg = self.config
        if w[2] < 0 and self._force_mask[2]:
            # contact is made and held by pushing along the tool's z; a pull has no surface to act on
            raise ValueError(f"normal force target {w[2]:g} N is negative: the tool pushes into the surface along "
                             "its z axis, so give a positive fz (e.g. 10 N)")
        if np.linalg.norm(w[:3]) > cfg.max_force_n:
            raise ValueError(f"force target {np.linalg.norm(w[:3]):.1f} N exceeds the configured limit "
                             f"max_force_n = {cfg.max_force_n} N; lower the target or raise the limit")
        if np.linalg.norm(w[3:]) > cfg.max_moment_nm:
            raise ValueError(f"moment target {np.linalg.norm(w[3:]):.2f} Nm exceeds max_moment_nm = "
                             f"{cfg.max_moment_nm} Nm")
        targets = self._targets
        targets.wrench_task[:] = w
        # the feed-forward f_d of P2 eq. (2) acts on the force-controlled axes only
        np.multiply(w, self._force_mask, out=targets.wrench_force)
        targets.wrench_task_used[:] = targets.wrench_task
        targets.wrench_force_used[:] = targets.wrench_force
        self._force_law.target.reset()  # recompute the compliant-joint correction next cycle
        self._contact_requested = start_contact and self.stages.stage is ContactStage.FREE

    @property
    def force_target_used(self) -> np.ndarray:
        """The force target the force law regulates (tool-tip axes): the one set, or with
        ``flexible_compensation`` the one corrected for the joint deflections (a copy)."""
        return self._targets.wrench_task_used.copy()

    def start_approach(self, time_s: float) -> StageEvent | None:
        """Begin the contact sequence (stage 1: pure motion towards the motion target, P2 eq. (10))."""
        self._stopped = False
        return self.stages.start_approach(time_s)

    def enter_free_motion(self) -> None:
        """Plain motion control, no contact expected."""
        self._stopped = False
        self.stages.reset(ContactStage.FREE)
        self._signals.integral[:] = 0.0

    def stop(self) -> ControlCommand:
        """Zero velocity / zero torque command; the controller stays stopped until a new
        ``start_approach`` or ``enter_free_motion``. In torque mode the returned ``torque_nm``
        is zero (UR keeps compensating gravity itself; send ``joint_torque_nm`` = g otherwise)."""
        self._stopped = True
        c = self.command
        c.torque_nm[:] = 0.0
        c.joint_torque_nm[:] = 0.0
        c.velocity_rad_s[:] = 0.0
        c.joint_acceleration_rad_s2[:] = 0.0
        c.stopped = True
        c.events = ()
        self._integrator.qd_cmd[:] = 0.0
        return c

    # ---- the cycle ---------------------------------------------------------------------------
    def step_state(self, state: RobotState) -> ControlCommand:
        """:meth:`step` on a :class:`RobotState` (F/T wrench and currents taken from it)."""
        return self.step(state.q_rad, state.qd_rad_s, state.timestamp_s, wrench_base=state.tcp_wrench_base,
                         current_a=state.current_a)

    def step(self, q_rad: np.ndarray, qd_rad_s: np.ndarray, time_s: float, *,
             wrench_base: np.ndarray | None = None, current_a: np.ndarray | None = None) -> ControlCommand:
        """One control cycle: the stages chosen at construction (controller_stages.py), composed.

        ``wrench_base``: the wrench the ENVIRONMENT exerts on the robot through the tool, measured
        by the flange sensor ([N, Nm], base axes, moment about the sensor frame origin; like
        RTDE ``actual_TCP_force``); needed for ``force_source='sensor'``. ``current_a``: motor
        currents (A), needed for ``force_source='estimated'``.
        """
        c = self.command
        if self._stopped:
            return c
        # NaN/inf propagate through a dot product: two cheap calls instead of isfinite().all() twice
        if not math.isfinite(float(q_rad @ q_rad) + float(qd_rad_s @ qd_rad_s)):
            raise ValueError("joint state contains NaN or inf: stop the robot (controller.stop()) and check the "
                             "robot interface")
        if not self._has_motion_target:
            raise ValueError("no motion target: call set_motion_target() before step()")
        sig = self._signals
        sig.q, sig.qd, sig.time_s = q_rad, qd_rad_s, time_s
        self.osm.update(q_rad, qd_rad_s)
        sig.lam = self.singularity.operational_inertia(self.osm.lambda_inv, self.osm.J)
        self._wrench_source.measure(sig, wrench_base, current_a)
        normal_force = self._tip_wrench(sig)
        if float(sig.w_tip[:3] @ sig.w_tip[:3]) > self._force_stop_sq:
            free = self.stages.stage is ContactStage.FREE
            advice = ("in free motion: a collision, or (sensorless) a force estimate off from a model or tool of "
                      "another arm or an arm that lags its commands" if free else
                      "Approach slower, lower the force target, or raise max_force_n if the tool and the part take it")
            raise ContactForceExceeded(
                f"contact force {float(np.linalg.norm(sig.w_tip[:3])):.1f} N exceeds "
                f"{CONTACT_FORCE_STOP_FACTOR * self.config.max_force_n:g} N ({CONTACT_FORCE_STOP_FACTOR:g} x "
                f"max_force_n {self.config.max_force_n:g} N): stop the arm. {advice}")
        started = None
        if self._contact_requested:
            self._contact_requested = False
            started = self.stages.start_approach(time_s)
        self._update_contact_stage(sig, normal_force, time_s)
        if started is not None:  # reported like every stage change (the node logs and keeps command.events)
            c.events = (started, *c.events)
        self._output.begin(sig)  # names the twist the motion law damps
        self._motion_law(sig, c.position_error_m, c.orientation_error_rad)
        c.force_error[:] = 0.0
        gamma, jtf = c.joint_torque_nm, self._jtf
        if sig.stage is ContactStage.HYBRID:
            self._force_law(sig)
            c.force_error[:] = sig.force_error
            self._hybrid_law.joint_torque(sig, gamma, jtf)
            self._output.hybrid(sig)
        else:
            sig.omega_t = None
            free_motion_torque(self.osm, sig, self._F, gamma, jtf)
            self._output.free(sig)
        c.stage = sig.stage
        # ---- P2 eq. (12): Gamma = J^T F + h + tau_friction ----
        self._friction.add(sig, gamma)
        np.copyto(c.contact_wrench_tip_base, sig.w_tip)
        c.sigma_min = self.singularity.sigma_min
        c.singular_weight = self.singularity.padding_weight
        c.stopped = False
        self._output.finish(sig, c, jtf)
        return c

    def _tip_wrench(self, sig: CycleSignals) -> float:
        """The contact wrench moved from the motion point O to the tool tip T; returns the normal force along
        tool z. Wrench shift as a 6x6 matrix S (base axes): [f; m_O] = S [f; m_T], S = [[I, 0], [[d]x, I]],
        d = p_T - p_O; twists go the other way, twist_T = S^T twist_O."""
        osm = self.osm
        d = sig.d
        np.subtract(osm.tip_position_m, osm.position_m, out=d)
        S = sig.shift
        S[3, 1] = -d[2]
        S[3, 2] = d[1]
        S[4, 0] = d[2]
        S[4, 2] = -d[0]
        S[5, 0] = -d[1]
        S[5, 1] = d[0]
        w_o, w_tip = sig.w_o, sig.w_tip
        w_tip[:] = w_o
        w_tip[3:] -= S[3:, :3] @ w_o[:3]
        return float(osm.tip_rotation[:, 2] @ w_tip[:3])

    def _update_contact_stage(self, sig: CycleSignals, normal_force_n: float, time_s: float) -> None:
        """P2 eq. (10): approach -> impact -> hybrid on the normal force; the force integral restarts at HYBRID."""
        event = self.stages.update(normal_force_n, time_s)
        sig.stage = self.stages.stage
        if event is not None and sig.stage is ContactStage.HYBRID:
            sig.integral[:] = 0.0
        self.command.events = () if event is None else (event,)

    def reset_velocity_integrator(self, qd_rad_s: np.ndarray) -> None:
        """Seed the velocity-output integrator (e.g. with the measured velocity at start)."""
        self._integrator.seed(qd_rad_s)
