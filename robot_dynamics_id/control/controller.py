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
law (seeds.md P5; see :meth:`OperationalSpaceController._projected_torque`).

Real-time: ``step`` allocates little and takes 0.05 ms (free motion) to 0.08 ms (hybrid)
median of one core's CPU time (benchmarks/bench_controller.py); its :class:`ControlCommand`
is reused between cycles (copy what you keep).

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

import numpy as np
import pinocchio as pin

from ..io.model_file import DynamicModel
from ..robot_state import RobotState
from ..dynamics.drive import check_drive_gains, torque_from_current
from .contact import ContactStage, ContactStageMachine, StageEvent
from .compliance import wrench_transform_of
from .controller_config import (ControlCommand, ControllerConfig, ForceSource, FrictionVelocitySource, HybridLaw,
                                OutputMode, Payload, VelocityIntegrationBase)
from .flexible import UR3_JOINT_STIFFNESS_NM_PER_RAD, CompliantJointForceCorrection
from .force_estimation import MomentumObserver, wrench_from_joint_torque
from .friction_compensation import FrictionCompensation
from .operational_space import OperationalSpaceModel, orientation_error, shift_wrench
from .projected import projected_hybrid_torque
from .singularity import SingularityHandler

__all__ = ["OperationalSpaceController"]


def _with_payload(model: pin.Model, tool_frame_id: int, payload: Payload) -> None:
    if payload.mass_kg <= 0:
        return
    frame = model.frames[tool_frame_id]
    inertia = pin.Inertia(float(payload.mass_kg), np.asarray(payload.com_m, float),
                          np.asarray(payload.inertia_kgm2, float))
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(inertia)


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
        # The robot's own gravity model (what direct_torque adds), with the same payload.
        gravity_model = (cfg.robot_gravity_model or DynamicModel.nominal(model.robot)).robot_model()
        _with_payload(gravity_model.model, gravity_model.tool_frame_id, cfg.payload)
        self._gravity_model = gravity_model.model
        self._gravity_data = gravity_model.model.createData()
        observer_gain = 0.5 / cfg.period_s if cfg.observer_gain_per_s is None else cfg.observer_gain_per_s
        self.observer = MomentumObserver(self.osm.model, gain_per_s=observer_gain, period_s=cfg.period_s) \
            if cfg.force_source is ForceSource.ESTIMATED else None
        self.friction_compensation = FrictionCompensation(
            model.friction, scale=cfg.friction_compensation_scale,
            smoothing_velocity_rad_s=cfg.friction_compensation_velocity_rad_s)
        # Sensorless force needs joint torques from currents: the model's gains, checked like everywhere else.
        self._drive_gains = None
        if cfg.force_source is ForceSource.ESTIMATED:
            if model.drive_gains_nm_per_a is None:
                raise ValueError("force_source='estimated' turns motor currents into torques, but the model has no "
                                 "drive gains (drive_gains_nm_per_a: null): identify the model from currents with "
                                 "--drive-gains, or set the gains in the model file")
            self._drive_gains = check_drive_gains(model.drive_gains_nm_per_a, model.n_joints,
                                                  what="the model's drive_gains_nm_per_a")
        self._torque_limit = np.asarray(robot.torque_limit_nm, float)
        self._velocity_limit = np.asarray(robot.velocity_limit_rad_s, float)
        self._motion_mask = np.array(cfg.motion_axes, bool)
        self._force_mask = ~self._motion_mask
        # Gains as 6-vectors: translations then rotations (task or base axes, isotropic per group).
        self._kp = np.r_[np.full(3, cfg.kp_position_per_s2), np.full(3, cfg.kp_orientation_per_s2)]
        self._kv = np.r_[np.full(3, cfg.kv_position_per_s), np.full(3, cfg.kv_orientation_per_s)]
        self._schedule_force_gains = cfg.kp_force_m_s2_per_n is None or cfg.ki_force_m_s2_per_n_s is None
        kpf = cfg.force_loop_gain if cfg.kp_force_m_s2_per_n is None else cfg.kp_force_m_s2_per_n
        kif = cfg.force_loop_integral_gain_per_s if cfg.ki_force_m_s2_per_n_s is None else cfg.ki_force_m_s2_per_n_s
        self._kpf = np.r_[np.full(3, kpf), np.full(3, cfg.kp_moment_rad_s2_per_nm)]
        self._kif = np.r_[np.full(3, kif), np.full(3, cfg.ki_moment_rad_s2_per_nm_s)]
        self._kpf_now = self._kpf.copy()
        self._kif_now = self._kif.copy()
        self._kvf = np.r_[np.full(3, cfg.kv_force_per_s), np.full(3, cfg.kv_moment_per_s)]
        self._err_lim = np.r_[np.full(3, cfg.force_error_limit_n), np.full(3, cfg.moment_error_limit_nm)]
        self._int_lim = np.r_[np.full(3, cfg.force_integral_limit_n_s), np.full(3, cfg.moment_integral_limit_nm_s)]
        # Reach of the arm from the shoulder-lift joint to the tool tip (for refusing targets).
        self._shoulder_m, self._reach_m = self._reach()
        # ---- targets ----
        self._x_d = np.zeros(3)
        self._r_d = np.eye(3)
        self._xd_d = np.zeros(6)
        self._xdd_d = np.zeros(6)
        self._wrench_d_task = np.zeros(6)
        self._wrench_d_force = np.zeros(6)
        # the targets the force law uses: the above, or corrected for compliant joints (P4)
        self._wrench_d_task_used = np.zeros(6)
        self._wrench_d_force_used = np.zeros(6)
        self._flex: CompliantJointForceCorrection | None = None
        self._flex_next_time = -math.inf
        if cfg.flexible_compensation:
            stiffness = (UR3_JOINT_STIFFNESS_NM_PER_RAD if cfg.joint_stiffness_nm_per_rad is None
                         else np.asarray(cfg.joint_stiffness_nm_per_rad, float))
            if np.size(stiffness) != n:
                raise ValueError(f"joint_stiffness_nm_per_rad needs {n} values (one per joint) for "
                                 f"{model.robot}, got {np.size(stiffness)}")
            self._flex = CompliantJointForceCorrection(self.osm.model, self.osm.force_frame_id, stiffness,
                                                       fixed_point_iterations=2)
            self._flex_load = np.zeros(6)
        self._has_motion_target = False
        # ---- state ----
        self._integral = np.zeros(6)
        self._qd_cmd = np.zeros(n)
        self._qd_cmd_valid = False
        self._saturated = False
        self._stopped = False
        self._last_time = None
        # ---- preallocated work arrays ----
        self._omega = np.zeros((6, 6))
        self._omega_t = np.zeros((6, 6))
        self._accel = np.zeros(6)
        self._F = np.zeros(6)
        self._w_meas_o = np.zeros(6)
        self._w_tip = np.zeros(6)
        self._tmp6 = np.zeros(6)
        self._shift = np.eye(6)
        self._r6 = np.zeros((6, 6))
        self._task_to_o = np.zeros((6, 6))
        self._eye6 = np.eye(6)
        self._motion_float = self._motion_mask.astype(float)
        self._sensor_apart = bool(np.any(np.asarray(cfg.wrench_reference_offset_m, float)
                                         != np.asarray(cfg.sensor_offset_m, float)))
        self._ff_o = np.zeros(6)
        self._jtf = np.zeros(n)
        self.command = ControlCommand(
            mode=cfg.output_mode, torque_nm=np.zeros(n), joint_torque_nm=np.zeros(n), velocity_rad_s=np.zeros(n),
            joint_acceleration_rad_s2=np.zeros(n), stage=self.stages.stage, events=(), force_error=np.zeros(6),
            contact_wrench_tip_base=np.zeros(6), position_error_m=np.zeros(3), orientation_error_rad=np.zeros(3))

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

        Raises ValueError for NaN/inf, a non-rotation matrix, or a position out of reach.
        """
        # Called every cycle by a task: the checks are cheap (a dot product is NaN/inf iff an entry is),
        # and an unchanged rotation is not checked again.
        p = np.asarray(position_m, float)
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
        d = p - self._shoulder_m
        distance = math.sqrt(float(d @ d))
        if distance > self._reach_m - self.config.reach_margin_m:
            raise ValueError(
                f"motion target {p.round(4).tolist()} m is {distance:.3f} m from the shoulder, beyond the arm's "
                f"reach of {self._reach_m - self.config.reach_margin_m:.3f} m; choose a closer target")
        for name, value in (("twist", twist), ("acceleration", acceleration)):
            if value is not None:
                v = np.asarray(value, float)
                if v.shape != (6,) or not math.isfinite(float(v @ v)):
                    raise ValueError(f"motion target {name} must be 6 finite numbers, got {value!r}")
        self._x_d[:] = p
        if rotation is not None:
            self._r_d[:] = r
        self._xd_d[:] = 0.0 if twist is None else twist
        self._xdd_d[:] = 0.0 if acceleration is None else acceleration
        self._has_motion_target = True

    def set_force_target(self, normal_force_n: float | None = None, *, wrench_task=None) -> None:
        """Desired contact wrench the tool applies at its tip, in tool-tip (task) axes.

        ``normal_force_n`` sets (0, 0, f, 0, 0, 0): pressing along tool z with zero moments
        (P2 polishing). Only the force-controlled axes of ``motion_axes`` are used.
        Raises ValueError for NaN/inf or a force/moment above ``max_force_n``/``max_moment_nm``.
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
        if np.linalg.norm(w[:3]) > cfg.max_force_n:
            raise ValueError(f"force target {np.linalg.norm(w[:3]):.1f} N exceeds the configured limit "
                             f"max_force_n = {cfg.max_force_n} N; lower the target or raise the limit")
        if np.linalg.norm(w[3:]) > cfg.max_moment_nm:
            raise ValueError(f"moment target {np.linalg.norm(w[3:]):.2f} Nm exceeds max_moment_nm = "
                             f"{cfg.max_moment_nm} Nm")
        self._wrench_d_task[:] = w
        # the feed-forward f_d of P2 eq. (2) acts on the force-controlled axes only
        np.multiply(w, self._force_mask, out=self._wrench_d_force)
        self._wrench_d_task_used[:] = self._wrench_d_task
        self._wrench_d_force_used[:] = self._wrench_d_force
        self._flex_next_time = -math.inf  # recompute the compliant-joint correction next cycle

    @property
    def force_target_used(self) -> np.ndarray:
        """The force target the force law regulates (tool-tip axes): the one set, or with
        ``flexible_compensation`` the one corrected for the joint deflections (a copy)."""
        return self._wrench_d_task_used.copy()

    def _update_flexible_compensation(self, q_rad: np.ndarray, w_tip: np.ndarray, time_s: float) -> None:
        """Bicchi & Melchiorri (P4) applied to the force target: hold the tip wrench that the
        DEFLECTED arm maps onto the target's world-frame wrench (flexible.CompliantJointForceCorrection)."""
        r = self.osm.tip_rotation
        load = self._flex_load  # the environment's wrench on the robot, tip axes, moment about the tip
        load[:3] = -(r.T @ w_tip[:3])
        load[3:] = -(r.T @ w_tip[3:])
        theta = self._flex.deflection(q_rad, load)
        # correction matrix K_t^-1 K_r (tip axes) from the rigid and deflected tip frames
        pin.framesForwardKinematics(self._flex.model, self._flex.data, q_rad)
        t_rigid = self._flex.data.oMf[self._flex.frame_id].copy()  # oMf is overwritten below
        pin.framesForwardKinematics(self._flex.model, self._flex.data, theta)
        relative = self._flex.data.oMf[self._flex.frame_id].actInv(t_rigid)  # rigid tip seen from the true tip
        corrected = wrench_transform_of(relative.homogeneous) @ self._wrench_d_task  # K(T_t^-1 T_r) w, P4 eq. (7)
        self._wrench_d_task_used[:] = corrected
        np.multiply(corrected, self._force_mask, out=self._wrench_d_force_used)
        self._flex_next_time = time_s + 1.0 / self.config.flexible_compensation_rate_hz

    def start_approach(self, time_s: float) -> StageEvent | None:
        """Begin the contact sequence (stage 1: pure motion towards the motion target, P2 eq. (10))."""
        self._stopped = False
        return self.stages.start_approach(time_s)

    def enter_free_motion(self) -> None:
        """Plain motion control, no contact expected."""
        self._stopped = False
        self.stages.reset(ContactStage.FREE)
        self._integral[:] = 0.0

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
        self._qd_cmd[:] = 0.0
        return c

    # ---- the cycle ---------------------------------------------------------------------------
    def step_state(self, state: RobotState) -> ControlCommand:
        """:meth:`step` on a :class:`RobotState` (F/T wrench and currents taken from it)."""
        return self.step(state.q_rad, state.qd_rad_s, state.timestamp_s, wrench_base=state.tcp_wrench_base,
                         current_a=state.current_a)

    def step(self, q_rad: np.ndarray, qd_rad_s: np.ndarray, time_s: float, *,
             wrench_base: np.ndarray | None = None, current_a: np.ndarray | None = None) -> ControlCommand:
        """One control cycle.

        ``wrench_base``: the wrench the ENVIRONMENT exerts on the robot through the tool, measured
        by the flange sensor ([N, Nm], base axes, moment about the sensor frame origin; like
        RTDE ``actual_TCP_force``); needed for ``force_source='sensor'``. ``current_a``: motor
        currents (A), needed for ``force_source='estimated'``.
        """
        cfg = self.config
        c = self.command
        if self._stopped:
            return c
        # NaN/inf propagate through a dot product: two cheap calls instead of isfinite().all() twice
        if not math.isfinite(float(q_rad @ q_rad) + float(qd_rad_s @ qd_rad_s)):
            raise ValueError("joint state contains NaN or inf: stop the robot (controller.stop()) and check the "
                             "robot interface")
        if not self._has_motion_target:
            raise ValueError("no motion target: call set_motion_target() before step()")
        osm = self.osm
        osm.update(q_rad, qd_rad_s)
        lam = self.singularity.operational_inertia(osm.lambda_inv, osm.J)

        # ---- contact wrench (robot on environment, P2: f = -F_sensor) ----
        w_o = self._w_meas_o
        if cfg.force_source is ForceSource.SENSOR:
            if wrench_base is None:
                raise ValueError("force_source='sensor' needs wrench_base (F/T sensor reading) every step")
            np.negative(wrench_base, out=w_o)
            if self._sensor_apart:
                shift_wrench(w_o.copy(), osm.wrench_point_m, osm.position_m, out=w_o)
        else:
            if current_a is None:
                raise ValueError("force_source='estimated' needs current_a (motor currents) every step")
            drive_torque = torque_from_current(current_a, self._drive_gains)
            drive = drive_torque - self.friction_compensation.torque(qd_rad_s, drive_torque)
            tau_ext = self.observer.update(q_rad, qd_rad_s, drive, osm.M)
            np.negative(wrench_from_joint_torque(osm.J, tau_ext), out=w_o)
        # Wrench shift between tip T and motion point O as a 6x6 matrix S (base axes):
        # [f; m_O] = S [f; m_T], S = [[I, 0], [[d]x, I]], d = p_T - p_O; twists go the other way,
        # twist_T = S^T twist_O.
        d = osm.tip_position_m - osm.position_m
        S = self._shift
        S[3, 1] = -d[2]
        S[3, 2] = d[1]
        S[4, 0] = d[2]
        S[4, 2] = -d[0]
        S[5, 0] = -d[1]
        S[5, 1] = d[0]
        w_tip = self._w_tip
        w_tip[:] = w_o
        w_tip[3:] -= S[3:, :3] @ w_o[:3]
        r_task = osm.tip_rotation
        normal_force = float(r_task[:, 2] @ w_tip[:3])

        # ---- contact stage, P2 eq. (10) ----
        event = self.stages.update(normal_force, time_s)
        stage = self.stages.stage
        if event is not None and stage is ContactStage.HYBRID:
            self._integral[:] = 0.0
        c.events = () if event is None else (event,)

        # ---- motion law, P2 eq. (3) with the orientation error of eq. (13) ----
        accel = self._accel
        pos_err = np.subtract(osm.position_m, self._x_d, out=c.position_error_m)
        ori_err = orientation_error(osm.rotation, self._r_d)
        c.orientation_error_rad[:] = ori_err
        twist = osm.twist
        if stage is ContactStage.IMPACT:
            # P2, eq. (10): dissipate the impact, F*_motion = -k_v xd.
            np.multiply(-cfg.kv_impact_per_s, twist, out=accel)
        else:
            np.subtract(twist, self._xd_d, out=accel)
            accel *= -self._kv
            accel += self._xdd_d
            accel[:3] -= self._kp[:3] * pos_err
            accel[3:] -= self._kp[3:] * ori_err

        F = self._F
        c.force_error[:] = 0.0
        velocity_out = cfg.output_mode is OutputMode.VELOCITY
        if velocity_out:
            twist_cmd = osm.J @ (self._qd_cmd if self._qd_cmd_valid else qd_rad_s)
        omega_t = None
        projected = cfg.law is HybridLaw.PROJECTED and stage is ContactStage.HYBRID
        if stage is ContactStage.HYBRID:
            R6 = self._r6
            R6[:3, :3] = r_task
            R6[3:, 3:] = r_task
            # P2 eq. (2): Omega = R6 diag(s) R6^T in base axes (selection.py)
            omega = np.dot(R6 * self._motion_float, R6.T, out=self._omega)
            # task (tip) axes -> base axes at the motion point
            A = np.dot(S, R6, out=self._task_to_o)
            # Force law at the tool tip in task axes, P2 eq. (4), with saturation and anti-windup.
            err = self._tmp6
            if self._flex is not None and time_s >= self._flex_next_time:
                self._update_flexible_compensation(q_rad, w_tip, time_s)
            np.subtract(self._wrench_d_task_used, R6.T @ w_tip, out=err)
            err *= self._force_mask
            np.minimum(err, self._err_lim, out=err)
            np.maximum(err, -self._err_lim, out=err)
            c.force_error[:] = err
            if not self._saturated:
                self._integral += err * cfg.period_s
                np.minimum(self._integral, self._int_lim, out=self._integral)
                np.maximum(self._integral, -self._int_lim, out=self._integral)
            # damping on the tip twist in task axes (twist_T = S^T twist_O)
            kpf, kif = self._kpf, self._kif
            if self._schedule_force_gains:
                # gain scheduling on the inertia along the force axis (tool z at the tip, seen at O)
                n_axis = A[:, 2]
                inv_lambda_n = 1.0 / float(n_axis @ (lam @ n_axis))
                kpf, kif = self._kpf_now, self._kif_now
                if cfg.kp_force_m_s2_per_n is None:
                    kpf[:3] = self._kpf[:3] * inv_lambda_n
                if cfg.ki_force_m_s2_per_n_s is None:
                    kif[:3] = self._kif[:3] * inv_lambda_n
            f_star = kpf * err + kif * self._integral - self._kvf * (A.T @ twist)
            f_star *= self._force_mask
            f_star_o = A @ f_star
            ff_o = A @ self._wrench_d_force_used
            # P2, eq. (2): F = Lambda (Omega F*_m + Omega~ F*_f) + mu + p + Omega~ f_d (mu, p in joint space).
            if projected:
                tau_projected = self._projected_torque(accel, err, lam, d, twist, qd_rad_s)
            else:
                F[:] = lam @ (omega @ accel + f_star_o - osm.dJ_qd) + ff_o
            if velocity_out or cfg.friction_velocity_source is FrictionVelocitySource.SUM:
                omega_t = np.subtract(self._eye6, omega, out=self._omega_t)
            if velocity_out:
                # admittance in the force directions (see velocity_mode_admittance_mass_kg), damped
                # on the COMMANDED twist: pressed on a surface the arm stands still while its
                # servo reference may still move.
                a_vel = (omega @ accel + cfg.velocity_mode_force_gain_scale * f_star_o
                         + (A @ err) / cfg.velocity_mode_admittance_mass_kg
                         - cfg.kv_force_per_s * (omega_t @ twist_cmd))
        else:
            F[:] = lam @ (accel - osm.dJ_qd)
            if velocity_out:
                a_vel = accel
                if stage is ContactStage.IMPACT:
                    # P2 eq. (10) on the commanded motion, plus yielding to the contact force
                    a_vel = -cfg.kv_impact_per_s * twist_cmd - w_o / cfg.velocity_mode_admittance_mass_kg
        c.stage = stage

        # ---- joint torque, P2 eq. (12): Gamma = J^T F + h + tau_friction ----
        gamma = c.joint_torque_nm
        jtf = self._jtf
        if projected:
            # Aghili P5: the projected law's torque already holds h (P (M qdd_c + h) + ...)
            gamma[:] = tau_projected
            np.subtract(gamma, osm.h, out=jtf)
        else:
            np.dot(osm.J.T, F, out=gamma)
            jtf[:] = gamma
            gamma += osm.h
        if cfg.friction_compensation:
            source = cfg.friction_velocity_source
            rigid = gamma.copy() if self.friction_compensation.extended else None  # the torque the gears transmit
            if source is FrictionVelocitySource.MEASURED:
                gamma += self.friction_compensation.torque(qd_rad_s, rigid)
            else:
                qd_desired = osm.M_inv @ (osm.J.T @ (lam @ self._xd_d))
                if source is FrictionVelocitySource.SUM and omega_t is not None:
                    # measured motion along the force-controlled directions + desired motion elsewhere
                    qd_force = osm.M_inv @ (osm.J.T @ (lam @ (omega_t @ twist)))
                    qd_desired = qd_desired + qd_force
                gamma += self.friction_compensation.torque(qd_desired, rigid)
        np.copyto(c.contact_wrench_tip_base, w_tip)
        c.sigma_min = self.singularity.sigma_min
        c.singular_weight = self.singularity.padding_weight
        c.stopped = False

        if cfg.output_mode is OutputMode.TORQUE:
            # closed-loop model acceleration qdd = M^-1 (Gamma - h - tau_f + J^T w_env), w_env = -w_o
            jtf -= osm.J.T @ w_o
            np.dot(osm.M_inv, jtf, out=c.joint_acceleration_rad_s2)
        else:
            # velocity output: the closed-loop model's acceleration, qdd = M^-1 J^T Lambda (a - Jd qd)
            np.dot(osm.M_inv, osm.J.T @ (lam @ (a_vel - osm.dJ_qd)), out=c.joint_acceleration_rad_s2)
        qdd = c.joint_acceleration_rad_s2
        if cfg.output_mode is OutputMode.TORQUE:
            tau = c.torque_nm
            tau[:] = gamma
            if cfg.robot_adds_gravity:
                tau -= pin.computeGeneralizedGravity(self._gravity_model, self._gravity_data, q_rad)
            np.minimum(tau, self._torque_limit, out=tau)
            np.maximum(tau, -self._torque_limit, out=tau)
            self._saturated = bool((np.abs(tau) >= self._torque_limit).any())
        else:
            base = (self._qd_cmd if (cfg.velocity_integration_base is VelocityIntegrationBase.COMMAND and self._qd_cmd_valid)
                    else qd_rad_s)
            v = c.velocity_rad_s
            v[:] = base + qdd * cfg.period_s
            np.clip(v, -self._velocity_limit, self._velocity_limit, out=v)
            self._saturated = bool(np.any(np.abs(v) >= self._velocity_limit))
            self._qd_cmd[:] = v
            self._qd_cmd_valid = True
        return c

    def _projected_torque(self, accel: np.ndarray, err: np.ndarray, lam: np.ndarray, d: np.ndarray,
                          twist: np.ndarray, qd_rad_s: np.ndarray) -> np.ndarray:
        """Joint torque of the projected hybrid law (Aghili P5) for this HYBRID cycle.

        The contact is the constraint n^T x_tip = const on the tool tip, n = -tool z (the
        controller does not know the surface: it takes the normal along the tool axis it
        presses with), so A = n^T J_v,tip (1 x n) and Adot qd = n^T (tip classical
        acceleration at qdd = 0; the rotation of n itself is neglected). The motion
        reference is the motion law's acceleration at the motion point mapped to the
        joints with the dynamically consistent inverse M^-1 J^T Lambda (so the padded
        Lambda of P2 still applies near a singularity), then projected onto the tangent
        space (P5, eqs. (13), (16), PIDC eqs. (45)-(48)). The constraint force command is
        a PI law on the normal force with the desired force fed forward and damping on the
        tip's normal velocity (P5, eqs. (51)-(52)).
        """
        osm, cfg = self.osm, self.config
        normal = -osm.tip_rotation[:, 2]
        # tip linear Jacobian: v_T = v_O + omega x d = v_O - [d]x omega
        jac = osm.J
        jv_tip = jac[:3] + self._shift[3:, :3].T @ jac[3:]
        a_row = normal @ jv_tip
        omega = twist[3:]
        a_bias = osm.dJ_qd[:3] + np.cross(osm.dJ_qd[3:], d) + np.cross(omega, np.cross(omega, d))
        qdd_ref = osm.M_inv @ (jac.T @ (lam @ (accel - osm.dJ_qd)))
        # inertia along the constraint normal, 1 / (A M^-1 A^T)
        inertia_n = 1.0 / float(a_row @ (osm.M_inv @ a_row))
        f_d = float(self._wrench_d_task_used[2])
        v_n = float(a_row @ qd_rad_s)
        force_cmd = (f_d + cfg.force_loop_gain * err[2] + cfg.force_loop_integral_gain_per_s * self._integral[2]
                     + cfg.kv_force_per_s * inertia_n * v_n)
        result = projected_hybrid_torque(osm.M, osm.h, a_row[None, :], np.array([normal @ a_bias]), qdd_ref,
                                         force_cmd)
        return result.torque_nm

    def reset_velocity_integrator(self, qd_rad_s: np.ndarray) -> None:
        """Seed the velocity-output integrator (e.g. with the measured velocity at start)."""
        self._qd_cmd[:] = qd_rad_s
        self._qd_cmd_valid = True
