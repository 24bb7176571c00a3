"""The stages of one operational-space control cycle, chosen once when the controller is built.

:meth:`OperationalSpaceController.step <robot_dynamics_id.control.controller.OperationalSpaceController.step>`
composes them in this order::

    wrench source -> (tip wrench, contact stage) -> motion law -> force law + hybrid law (HYBRID stage)
    -> friction -> output

Which object fills each slot depends only on :class:`ControllerConfig` (force source, law, friction velocity
source, flexible compensation, output mode), so a cycle does not branch on options; it branches only on the
contact stage, which is state. The stages share one :class:`CycleSignals` (preallocated arrays, overwritten
every cycle). Units: m, rad, s, N, Nm; twists/wrenches in base axes unless a name says otherwise.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from ..dynamics.drive import torque_from_current
from .compliance import wrench_transform_of
from .contact import ContactStage
from .controller_config import ControlCommand
from .flexible import CompliantJointForceCorrection
from .force_estimation import MomentumObserver, wrench_from_joint_torque
from .friction_compensation import FrictionCompensation
from .operational_space import OperationalSpaceModel, orientation_error, shift_wrench
from .projected import projected_hybrid_torque

__all__ = [
    "CompliantForceTarget",
    "CycleSignals",
    "DesiredVelocityFriction",
    "EstimatedWrench",
    "free_motion_torque",
    "ForceLaw",
    "ForceTargets",
    "MeasuredVelocityFriction",
    "MotionLaw",
    "NoFriction",
    "OperationalSpaceHybridLaw",
    "ProjectedHybridLaw",
    "RigidForceTarget",
    "SensorWrench",
    "ShiftedSensorWrench",
    "SumVelocityFriction",
    "TorqueOutput",
    "VelocityIntegrator",
    "VelocityOutput",
]


class CycleSignals:
    """What several stages of one cycle read: the inputs, the model terms' products, the laws' outputs.

    Also the two memories the stages share across cycles: the force-law integral (task axes) and whether the
    last command saturated (the force law's anti-windup reads what the output stage wrote).
    """

    def __init__(self, n_joints: int, targets: ForceTargets) -> None:
        self.q = np.zeros(n_joints)
        self.qd = np.zeros(n_joints)
        self.time_s = 0.0
        self.targets = targets
        self.lam = np.zeros((6, 6))
        self.stage = ContactStage.FREE
        #: contact wrench, robot on environment, moment about the motion point O
        self.w_o = np.zeros(6)
        #: the same at the tool tip T
        self.w_tip = np.zeros(6)
        #: d = p_T - p_O and the wrench shift S = [[I, 0], [[d]x, I]] ([f; m_O] = S [f; m_T])
        self.d = np.zeros(3)
        self.shift = np.eye(6)
        self.accel = np.zeros(6)  # motion law F*_m (P2 eq. (3))
        self.omega = np.zeros((6, 6))  # P2 eq. (2) selection Omega in base axes
        self.omega_t: np.ndarray | None = None  # I - Omega in the HYBRID stage, else None
        self.task_to_o = np.zeros((6, 6))  # task (tip) axes -> base axes at O: S R6
        self.force_error = np.zeros(6)  # saturated force error, task axes
        self.f_star_o = np.zeros(6)  # force law F*_f at O, base axes
        self.twist_cmd = np.zeros(6)  # velocity output: the commanded twist at O
        #: the twist the motion law damps: the measured one, or (velocity output integrated from its own
        #: command) the commanded one; set by the output stage's begin()
        self.damped_twist = self.twist_cmd
        self.a_vel = np.zeros(6)  # velocity output: the closed-loop acceleration
        self.integral = np.zeros(6)
        self.saturated = False


class ForceTargets:
    """The force targets (task axes) set by the user and the ones the force law uses (corrected or not)."""

    def __init__(self) -> None:
        self.wrench_task = np.zeros(6)
        self.wrench_force = np.zeros(6)  # on the force-controlled axes only (the feed-forward f_d of P2 eq. (2))
        self.wrench_task_used = np.zeros(6)
        self.wrench_force_used = np.zeros(6)


# ---- wrench sources ------------------------------------------------------------------------------------
class SensorWrench:
    """Contact wrench from the flange F/T sensor, P2: f = -F_sensor (robot on environment), moment about O."""

    def __init__(self, osm: OperationalSpaceModel) -> None:
        self.osm = osm

    def measure(self, sig: CycleSignals, wrench_base: np.ndarray | None, current_a: np.ndarray | None) -> None:
        if wrench_base is None:
            raise ValueError("force_source='sensor' needs wrench_base (F/T sensor reading) every step")
        np.negative(wrench_base, out=sig.w_o)


class ShiftedSensorWrench(SensorWrench):
    """:class:`SensorWrench` for a sensor whose wrench reference point is not the motion point: the moment is
    moved to O, m_O = m_ref + (p_ref - p_O) x f."""

    def measure(self, sig: CycleSignals, wrench_base: np.ndarray | None, current_a: np.ndarray | None) -> None:
        super().measure(sig, wrench_base, current_a)
        shift_wrench(sig.w_o.copy(), self.osm.wrench_point_m, self.osm.position_m, out=sig.w_o)


class EstimatedWrench:
    """Contact wrench without a sensor: a momentum observer on the drive torque (currents x gains, minus the
    identified friction), f = -(J^T)^+ tau_ext (force_estimation.py)."""

    def __init__(self, osm: OperationalSpaceModel, observer: MomentumObserver, drive_gains: np.ndarray,
                 friction: FrictionCompensation) -> None:
        self.osm = osm
        self.observer = observer
        self._drive_gains = drive_gains
        self._friction = friction

    def measure(self, sig: CycleSignals, wrench_base: np.ndarray | None, current_a: np.ndarray | None) -> None:
        if current_a is None:
            raise ValueError("force_source='estimated' needs current_a (motor currents) every step")
        drive_torque = torque_from_current(current_a, self._drive_gains)
        drive = drive_torque - self._friction.torque(sig.qd, drive_torque)
        tau_ext = self.observer.update(sig.q, sig.qd, drive, self.osm.M)
        np.negative(wrench_from_joint_torque(self.osm.J, tau_ext), out=sig.w_o)


# ---- motion law -------------------------------------------------------------------------------------------
class MotionLaw:
    """P2 eq. (3): F*_m = xdd_d - K_v (xd - xd_d) - K_p e, e = [x - x_d; the orientation error of eq. (13)];
    in the IMPACT stage P2 eq. (10): F*_m = -k_v,impact xd (dissipate the impact).

    xd is the twist the output stage names (``sig.damped_twist``): the measured one, or with velocity output
    integrated from its own command the commanded one, so the arm's velocity servo lag stays out of the damping
    loop (its gain K_v dt is near 1 at 125 Hz); the pose error is always measured.
    """

    def __init__(self, osm: OperationalSpaceModel, kp: np.ndarray, kv: np.ndarray, kv_impact_per_s: float,
                 x_d: np.ndarray, r_d: np.ndarray, xd_d: np.ndarray, xdd_d: np.ndarray) -> None:
        self.osm = osm
        self._kp, self._kv, self._kv_impact = kp, kv, kv_impact_per_s
        self._x_d, self._r_d, self._xd_d, self._xdd_d = x_d, r_d, xd_d, xdd_d

    def __call__(self, sig: CycleSignals, position_error_m: np.ndarray, orientation_error_rad: np.ndarray) -> None:
        osm, accel = self.osm, sig.accel
        pos_err = np.subtract(osm.position_m, self._x_d, out=position_error_m)
        ori_err = orientation_error(osm.rotation, self._r_d)
        orientation_error_rad[:] = ori_err
        if sig.stage is ContactStage.IMPACT:
            np.multiply(-self._kv_impact, sig.damped_twist, out=accel)
        else:
            np.subtract(sig.damped_twist, self._xd_d, out=accel)
            accel *= -self._kv
            accel += self._xdd_d
            accel[:3] -= self._kp[:3] * pos_err
            accel[3:] -= self._kp[3:] * ori_err


# ---- force targets: rigid, or corrected for compliant joints (P4) -----------------------------------------
class RigidForceTarget:
    """The force law holds the target as set (a rigid arm)."""

    def update(self, sig: CycleSignals) -> None:
        pass

    def reset(self) -> None:
        pass


class CompliantForceTarget:
    """Bicchi & Melchiorri (P4) applied to the force target: hold the tip wrench that the DEFLECTED arm maps
    onto the target's world-frame wrench, w_used = K(T_t^-1 T_r) w_d (P4 eq. (7); flexible/ur.py
    ``CompliantJointForceCorrection``), recomputed at ``rate_hz`` from the measured contact wrench."""

    def __init__(self, osm: OperationalSpaceModel, stiffness_nm_per_rad: np.ndarray, force_mask: np.ndarray,
                 rate_hz: float) -> None:
        self.osm = osm
        self.correction = CompliantJointForceCorrection(osm.model, osm.force_frame_id, stiffness_nm_per_rad,
                                                        fixed_point_iterations=2)
        self._force_mask = force_mask
        self._rate_hz = rate_hz
        self._next_time_s = -math.inf
        self._load = np.zeros(6)

    def reset(self) -> None:
        """Recompute at the next cycle (a new target)."""
        self._next_time_s = -math.inf

    def update(self, sig: CycleSignals) -> None:
        if sig.time_s < self._next_time_s:
            return
        flex, r, q = self.correction, self.osm.tip_rotation, sig.q
        load = self._load  # the environment's wrench on the robot, tip axes, moment about the tip
        load[:3] = -(r.T @ sig.w_tip[:3])
        load[3:] = -(r.T @ sig.w_tip[3:])
        theta = flex.deflection(q, load)
        # correction matrix K_t^-1 K_r (tip axes) from the rigid and deflected tip frames
        pin.framesForwardKinematics(flex.model, flex.data, q)
        t_rigid = flex.data.oMf[flex.frame_id].copy()  # oMf is overwritten below
        pin.framesForwardKinematics(flex.model, flex.data, theta)
        relative = flex.data.oMf[flex.frame_id].actInv(t_rigid)  # rigid tip seen from the true tip
        targets = sig.targets
        corrected = wrench_transform_of(relative.homogeneous) @ targets.wrench_task  # P4 eq. (7)
        targets.wrench_task_used[:] = corrected
        np.multiply(corrected, self._force_mask, out=targets.wrench_force_used)
        self._next_time_s = sig.time_s + 1.0 / self._rate_hz


# ---- force law (HYBRID stage) ---------------------------------------------------------------------------
class ForceLaw:
    """P2 eqs. (2), (4) at the tool tip in task axes: Omega = R6 diag(s) R6^T; e = sat(f_d - R6^T f_tip) on the
    force axes; integral with anti-windup (frozen while the output saturates); F*_f = K_pf e + K_if int e -
    K_vf (S R6)^T twist_O, mapped to O. Without fixed force gains, K_pf, K_if (translations) are scheduled on
    the inertia along the tool axis: K = K_loop / (n^T Lambda n), n = S R6 e_z."""

    def __init__(self, osm: OperationalSpaceModel, target: RigidForceTarget | CompliantForceTarget, *,
                 period_s: float, motion_mask: np.ndarray, kpf: np.ndarray, kif: np.ndarray, kvf: np.ndarray,
                 error_limit: np.ndarray, integral_limit: np.ndarray, schedule_kp: bool, schedule_ki: bool) -> None:
        self.osm = osm
        self.target = target
        self._period_s = period_s
        self._motion_float = motion_mask.astype(float)
        self._force_mask = ~motion_mask
        self._kpf, self._kif, self._kvf = kpf, kif, kvf
        self._kpf_now, self._kif_now = kpf.copy(), kif.copy()
        self._err_lim, self._int_lim = error_limit, integral_limit
        self._schedule = schedule_kp or schedule_ki
        self._schedule_kp, self._schedule_ki = schedule_kp, schedule_ki
        self._r6 = np.zeros((6, 6))
        self._eye6 = np.eye(6)
        self._omega_t = np.zeros((6, 6))

    def __call__(self, sig: CycleSignals) -> None:
        R6 = self._r6
        R6[:3, :3] = self.osm.tip_rotation
        R6[3:, 3:] = self.osm.tip_rotation
        omega = np.dot(R6 * self._motion_float, R6.T, out=sig.omega)
        A = np.dot(sig.shift, R6, out=sig.task_to_o)
        self.target.update(sig)
        err = sig.force_error
        np.subtract(sig.targets.wrench_task_used, R6.T @ sig.w_tip, out=err)
        err *= self._force_mask
        np.minimum(err, self._err_lim, out=err)
        np.maximum(err, -self._err_lim, out=err)
        if not sig.saturated:
            sig.integral += err * self._period_s
            np.minimum(sig.integral, self._int_lim, out=sig.integral)
            np.maximum(sig.integral, -self._int_lim, out=sig.integral)
        kpf, kif = self._gains(sig.lam, A) if self._schedule else (self._kpf, self._kif)
        f_star = kpf * err + kif * sig.integral - self._kvf * (A.T @ self.osm.twist)
        f_star *= self._force_mask
        sig.f_star_o = A @ f_star
        sig.omega_t = np.subtract(self._eye6, omega, out=self._omega_t)

    def _gains(self, lam: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n_axis = A[:, 2]  # tool z at the tip, seen at O
        inv_lambda_n = 1.0 / float(n_axis @ (lam @ n_axis))
        kpf, kif = self._kpf_now, self._kif_now
        if self._schedule_kp:
            kpf[:3] = self._kpf[:3] * inv_lambda_n
        if self._schedule_ki:
            kif[:3] = self._kif[:3] * inv_lambda_n
        return kpf, kif


# ---- hybrid laws: the HYBRID stage's joint torque -----------------------------------------------------------
def free_motion_torque(osm: OperationalSpaceModel, sig: CycleSignals, force: np.ndarray, gamma: np.ndarray,
                       jtf: np.ndarray) -> None:
    """APPROACH/IMPACT/FREE: F = Lambda (F*_m - Jdot qd), Gamma = J^T F + h (P2 eqs. (2), (12) with Omega = I)."""
    force[:] = sig.lam @ (sig.accel - osm.dJ_qd)
    np.dot(osm.J.T, force, out=gamma)
    jtf[:] = gamma
    gamma += osm.h


class OperationalSpaceHybridLaw:
    """P2 eq. (2): F = Lambda (Omega F*_m + Omega~ F*_f - Jdot qd) + Omega~ f_d, Gamma = J^T F + h (eq. (12))."""

    def __init__(self, osm: OperationalSpaceModel) -> None:
        self.osm = osm
        self._force = np.zeros(6)

    def joint_torque(self, sig: CycleSignals, gamma: np.ndarray, jtf: np.ndarray) -> None:
        osm, F = self.osm, self._force
        ff_o = sig.task_to_o @ sig.targets.wrench_force_used
        F[:] = sig.lam @ (sig.omega @ sig.accel + sig.f_star_o - osm.dJ_qd) + ff_o
        np.dot(osm.J.T, F, out=gamma)
        jtf[:] = gamma
        gamma += osm.h


class ProjectedHybridLaw:
    """Aghili's projected hybrid law (seeds.md P5) in the HYBRID stage.

    The contact is the constraint n^T x_tip = const on the tool tip, n = -tool z (the controller does not know
    the surface: it takes the normal along the tool axis it presses with), so A = n^T J_v,tip (1 x n) and
    Adot qd = n^T (tip classical acceleration at qdd = 0; the rotation of n itself is neglected). The motion
    reference is the motion law's acceleration at the motion point mapped to the joints with the dynamically
    consistent inverse M^-1 J^T Lambda (so the padded Lambda of P2 still applies near a singularity), then
    projected onto the tangent space (P5, eqs. (13), (16), PIDC eqs. (45)-(48)). The constraint force command
    is a PI law on the normal force with the desired force fed forward and damping on the tip's normal
    velocity (P5, eqs. (51)-(52)). The torque already holds h (P (M qdd_c + h) + ...).
    """

    def __init__(self, osm: OperationalSpaceModel, *, kp: float, ki_per_s: float, kv_per_s: float) -> None:
        self.osm = osm
        self._kp, self._ki, self._kv = kp, ki_per_s, kv_per_s

    def joint_torque(self, sig: CycleSignals, gamma: np.ndarray, jtf: np.ndarray) -> None:
        osm, d = self.osm, sig.d
        normal = -osm.tip_rotation[:, 2]
        # tip linear Jacobian: v_T = v_O + omega x d = v_O - [d]x omega
        jac = osm.J
        jv_tip = jac[:3] + sig.shift[3:, :3].T @ jac[3:]
        a_row = normal @ jv_tip
        omega = osm.twist[3:]
        a_bias = osm.dJ_qd[:3] + np.cross(osm.dJ_qd[3:], d) + np.cross(omega, np.cross(omega, d))
        qdd_ref = osm.M_inv @ (jac.T @ (sig.lam @ (sig.accel - osm.dJ_qd)))
        # inertia along the constraint normal, 1 / (A M^-1 A^T)
        inertia_n = 1.0 / float(a_row @ (osm.M_inv @ a_row))
        f_d = float(sig.targets.wrench_task_used[2])
        v_n = float(a_row @ sig.qd)
        force_cmd = (f_d + self._kp * sig.force_error[2] + self._ki * sig.integral[2]
                     + self._kv * inertia_n * v_n)
        result = projected_hybrid_torque(osm.M, osm.h, a_row[None, :], np.array([normal @ a_bias]), qdd_ref,
                                         force_cmd)
        gamma[:] = result.torque_nm
        np.subtract(gamma, osm.h, out=jtf)


# ---- friction feed-forward, P2 eqs. (11)-(12) ----------------------------------------------------------------
class NoFriction:
    """Friction compensation off."""

    def add(self, sig: CycleSignals, gamma: np.ndarray) -> None:
        pass


class MeasuredVelocityFriction:
    """Gamma += tau_f(qd measured); the load-dependent term sees the rigid-body torque the gears transmit."""

    def __init__(self, osm: OperationalSpaceModel, friction: FrictionCompensation, xd_d: np.ndarray) -> None:
        self.osm = osm
        self.friction = friction
        self._xd_d = xd_d

    def add(self, sig: CycleSignals, gamma: np.ndarray) -> None:
        rigid = gamma.copy() if self.friction.extended else None
        gamma += self.friction.torque(sig.qd, rigid)


class DesiredVelocityFriction(MeasuredVelocityFriction):
    """Gamma += tau_f(qd_d), qd_d = M^-1 J^T Lambda xd_d (the desired twist, dynamically consistent)."""

    def add(self, sig: CycleSignals, gamma: np.ndarray) -> None:
        rigid = gamma.copy() if self.friction.extended else None
        gamma += self.friction.torque(self._velocity(sig), rigid)

    def _velocity(self, sig: CycleSignals) -> np.ndarray:
        osm = self.osm
        return osm.M_inv @ (osm.J.T @ (sig.lam @ self._xd_d))


class SumVelocityFriction(DesiredVelocityFriction):
    """In the HYBRID stage the measured motion along the force-controlled directions plus the desired motion
    elsewhere: qd = M^-1 J^T Lambda (xd_d + (I - Omega) xd); the desired one otherwise."""

    def _velocity(self, sig: CycleSignals) -> np.ndarray:
        qd_desired = super()._velocity(sig)
        if sig.omega_t is None:
            return qd_desired
        osm = self.osm
        qd_force = osm.M_inv @ (osm.J.T @ (sig.lam @ (sig.omega_t @ osm.twist)))
        return qd_desired + qd_force


# ---- outputs -------------------------------------------------------------------------------------------------
class VelocityIntegrator:
    """The velocity output's memory: the last commanded joint velocity (rad/s), valid once seeded."""

    def __init__(self, n_joints: int) -> None:
        self.qd_cmd = np.zeros(n_joints)
        self.valid = False

    def seed(self, qd_rad_s: np.ndarray) -> None:
        self.qd_cmd[:] = qd_rad_s
        self.valid = True


class TorqueOutput:
    """Joint torques (direct_torque): tau = Gamma [- g_robot(q) when the robot adds its own gravity model],
    clipped to the torque limits; qdd = M^-1 (Gamma - h - tau_f + J^T w_env), w_env = -w_O (the closed loop)."""

    def __init__(self, osm: OperationalSpaceModel, torque_limit_nm: np.ndarray,
                 gravity_model: pin.Model | None) -> None:
        self.osm = osm
        self._limit = torque_limit_nm
        self._gravity_model = gravity_model
        self._gravity_data = None if gravity_model is None else gravity_model.createData()

    def begin(self, sig: CycleSignals) -> None:
        sig.damped_twist = self.osm.twist

    def hybrid(self, sig: CycleSignals) -> None:
        pass

    def free(self, sig: CycleSignals) -> None:
        pass

    def finish(self, sig: CycleSignals, command: ControlCommand, jtf: np.ndarray) -> None:
        """``jtf`` = Gamma - h - tau_f (J^T F, or the projected torque minus h); ``command.joint_torque_nm`` = Gamma."""
        osm = self.osm
        jtf -= osm.J.T @ sig.w_o
        np.dot(osm.M_inv, jtf, out=command.joint_acceleration_rad_s2)
        tau = command.torque_nm
        tau[:] = command.joint_torque_nm
        if self._gravity_model is not None:
            tau -= pin.computeGeneralizedGravity(self._gravity_model, self._gravity_data, sig.q)
        np.minimum(tau, self._limit, out=tau)
        np.maximum(tau, -self._limit, out=tau)
        sig.saturated = bool((np.abs(tau) >= self._limit).any())


class VelocityOutput:
    """Joint velocities (speedJ): the closed-loop model qdd = M^-1 J^T Lambda (a - Jdot qd) integrated one
    period from the previous command (or the measured velocity), clipped to the velocity limits.

    Integrated from the previous command, the motion law damps the commanded twist (an admittance whose only
    measured input is the pose, and the force): damping the measured twist closes a loop of gain K_v dt through
    the servo's lag, which rings while holding still at 125 Hz. Integrated from the measured velocity, it damps
    the measured twist.

    a in the HYBRID stage: Omega F*_m + s F*_f + (S R6 e)/m_a - k_vf (I - Omega) twist_cmd, an admittance in the
    force directions damped on the COMMANDED twist (pressed on a surface the arm stands still while its servo
    reference may still move); in IMPACT P2 eq. (10) on the commanded motion plus yielding to the contact
    force, -k_v,impact twist_cmd - w_O / m_a; otherwise the motion law's F*_m.
    """

    def __init__(self, osm: OperationalSpaceModel, integrator: VelocityIntegrator, velocity_limit_rad_s: np.ndarray,
                 *, period_s: float, from_command: bool, admittance_mass_kg: float, force_gain_scale: float,
                 kv_force_per_s: float, kv_impact_per_s: float) -> None:
        self.osm = osm
        self.integrator = integrator
        self._limit = velocity_limit_rad_s
        self._period_s = period_s
        self._from_command = from_command
        self._mass = admittance_mass_kg
        self._scale = force_gain_scale
        self._kv_force = kv_force_per_s
        self._kv_impact = kv_impact_per_s

    def begin(self, sig: CycleSignals) -> None:
        it = self.integrator
        np.dot(self.osm.J, it.qd_cmd if it.valid else sig.qd, out=sig.twist_cmd)
        sig.damped_twist = sig.twist_cmd if self._from_command else self.osm.twist

    def hybrid(self, sig: CycleSignals) -> None:
        sig.a_vel = (sig.omega @ sig.accel + self._scale * sig.f_star_o
                     + (sig.task_to_o @ sig.force_error) / self._mass
                     - self._kv_force * (sig.omega_t @ sig.twist_cmd))

    def free(self, sig: CycleSignals) -> None:
        if sig.stage is ContactStage.IMPACT:
            sig.a_vel = -self._kv_impact * sig.twist_cmd - sig.w_o / self._mass
        else:
            sig.a_vel = sig.accel

    def finish(self, sig: CycleSignals, command: ControlCommand, jtf: np.ndarray) -> None:
        osm, it = self.osm, self.integrator
        np.dot(osm.M_inv, osm.J.T @ (sig.lam @ (sig.a_vel - osm.dJ_qd)), out=command.joint_acceleration_rad_s2)
        base = it.qd_cmd if (self._from_command and it.valid) else sig.qd
        v = command.velocity_rad_s
        v[:] = base + command.joint_acceleration_rad_s2 * self._period_s
        np.clip(v, -self._limit, self._limit, out=v)
        sig.saturated = bool(np.any(np.abs(v) >= self._limit))
        it.qd_cmd[:] = v
        it.valid = True
