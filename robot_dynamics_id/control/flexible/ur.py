"""P4 applied to UR arms: joint set-point correction and the online force set-point correction.

Compliant strain-wave joints (and, optionally, flexible links) of a UR arm under a contact
load turn the tool frame away from where the rigid model puts it; see
:func:`ur_force_setpoint_correction` (P4's joint set-point correction) and
:class:`CompliantJointForceCorrection` (the closed-form force set-point a force loop can hold).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..compliance import BeamSection, wrench_transform_of
from .chain import CompliantChain, _as_wrench, _compliance_from_stiffness, _kinematic_factor
from .solvers import DEFAULT_LYAPUNOV_TOLERANCE, CompensationResult, compensate_levenberg_marquardt, \
    compensate_steepest_descent

if TYPE_CHECKING:
    from ...robots.model import RobotModel

__all__ = [
    "UR3_JOINT_STIFFNESS_NM_PER_RAD",
    "UR3_LINK_TUBES_ASSUMED",
    "CompliantJointForceCorrection",
    "ForceSetpointCorrection",
    "compliant_force_setpoint",
    "rigid_sensor_wrench",
    "ur3_link_beams",
    "ur_force_setpoint_correction",
]

#: ASSUMED joint torsional stiffness of a UR3 (base, shoulder, elbow, wrist 1–3), N·m/rad.
#: Universal Robots publishes none. These are the order of magnitude of
#: strain-wave (harmonic) gear catalogue stiffness for the gear sizes such an arm
#: plausibly uses (~10⁴ N·m/rad for the big joints, a few 10³ for the wrists).
#: They are placeholders to be replaced by identified values (motor- vs
#: link-side deflection under a known load) for a real robot.
UR3_JOINT_STIFFNESS_NM_PER_RAD = np.array([2.0e4, 2.0e4, 1.0e4, 3.0e3, 3.0e3, 3.0e3])


#: ASSUMED cross-sections of the UR3's two long links (aluminium tubes), as
#: (outer diameter m, wall m) per segment index (1: upper arm, shoulder-lift -> elbow;
#: 2: forearm, elbow -> wrist 1). Universal Robots publishes no link dimensions or
#: materials: these are the order of magnitude of the visible tubes, to be replaced by
#: measured values (or an identified link stiffness) for a real arm.
UR3_LINK_TUBES_ASSUMED: dict[int, tuple[float, float]] = {1: (0.060, 0.003), 2: (0.050, 0.003)}


def ur3_link_beams(robot_model: RobotModel,
                   tubes: dict[int, tuple[float, float]] | None = None) -> dict[int, BeamSection]:
    """Beams for :meth:`CompliantChain.from_robot_model` ``link_beams``: the tubes (default
    :data:`UR3_LINK_TUBES_ASSUMED`) with each link's joint-to-joint length taken from the model."""
    model = robot_model.model
    beams = {}
    for index, (outer, wall) in (UR3_LINK_TUBES_ASSUMED if tubes is None else tubes).items():
        length = float(np.linalg.norm(model.jointPlacements[index + 2].translation))
        beams[index] = BeamSection.tube(length_m=length, outer_diameter_m=outer, wall_m=wall)
    return beams


def rigid_sensor_wrench(chain: CompliantChain, q_rad: np.ndarray, desired_base_wrench: np.ndarray) -> np.ndarray:
    """The sensor wrench a rigid-model force controller regulates for ``ᴮw_d``: ``K_rigid(q)⁻¹ ᴮw_d``."""
    rigid = chain.rigid()
    k = wrench_transform_of(rigid.base_transform)
    for seg, qi in zip(rigid.segments, np.asarray(q_rad, dtype=float).reshape(-1)):
        k = k @ _kinematic_factor(seg, qi)
    return np.linalg.solve(k, _as_wrench(desired_base_wrench, "desired_base_wrench"))


def ur_force_setpoint_correction(
    robot_model: RobotModel,
    q_rad: np.ndarray,
    wrench_tool: np.ndarray | None,
    desired_wrench_base: np.ndarray,
    joint_stiffness_nm_per_rad: np.ndarray | float | None = None,
    *,
    weight: np.ndarray | None = None,
    tolerance: float = DEFAULT_LYAPUNOV_TOLERANCE,
    max_iterations: int = 100,
    method: str = "levenberg-marquardt",
) -> CompensationResult:
    """Joint set-point correction so a UR arm with compliant joints meets a base-frame wrench set-point.

    Model (P4 applied to a UR arm, links rigid, strain-wave joints compliant):
    the joint position loop holds the motor-side angle ``q``; under the contact
    load the link-side angle is ``q + τ/k`` with ``τ`` the load's moment about
    each joint axis. The force loop holds the tool-frame wrench ``wrench_tool``
    (what the wrist sensor reads); the base-frame wrench is that wrench mapped
    through the DEFLECTED kinematics. The function finds ``q`` (near ``q_rad``)
    whose deflected kinematics map ``wrench_tool`` to ``desired_wrench_base``.

    Arguments:
      robot_model: ``robot_dynamics_id.robots.load_robot('ur3')`` (any single
        revolute chain; its ``tool_frame`` is the sensor frame).
      q_rad: current joint set-point (rad), the starting point.
      wrench_tool: ``[f; m]`` in the tool frame, moment about its origin (N, N·m),
        the load the environment applies to the tool. ``None`` = what a
        rigid-model force controller would regulate, ``K_rigid(q)⁻¹ ᴮw_d``.
      desired_wrench_base: the set-point in the model's base frame (the UR
        controller's base, DH frame 0), same convention.
      joint_stiffness_nm_per_rad: per joint (or scalar); ``None`` =
        :data:`UR3_JOINT_STIFFNESS_NM_PER_RAD` (an ASSUMPTION; identify it for a real arm).
      weight: P of ``V = ½ eᵀ P e`` (6×6 or its diagonal); e.g. weight forces
        against moments.
      method: ``'levenberg-marquardt'`` (default, a few iterations) or
        ``'steepest-descent'`` (P4, eq. (15)).

    Returns a :class:`CompensationResult`: ``q_rad`` is the corrected joint
    set-point, ``correction_rad`` the change, ``initial_error`` / ``error`` the
    world-frame wrench error before / after, ``deflection.joint_deflection_rad``
    the predicted joint deflections; ``converged`` False with a ``reason`` when
    the set-point cannot be met (the best set-point is still returned).

    How a controller uses it (offline, before the contact phase): compute
    ``result = ur_force_setpoint_correction(robot, q_contact, None, w_d)``, then
    command ``result.q_rad`` as the position set-point and keep regulating the
    sensor wrench ``rigid_sensor_wrench(chain, q_contact, w_d)`` (the force loop
    target is unchanged; only the arm's set-point moves). Note a full wrench
    (6 components) is generally not reachable by reorienting alone: the force
    magnitude is fixed by ``wrench_tool`` and translation along the force line
    does not change the wrench, so weight what matters with ``weight``.
    """
    stiffness = UR3_JOINT_STIFFNESS_NM_PER_RAD if joint_stiffness_nm_per_rad is None else joint_stiffness_nm_per_rad
    chain = CompliantChain.from_robot_model(robot_model, stiffness)
    q = np.asarray(q_rad, dtype=float).reshape(-1)
    w_d = _as_wrench(desired_wrench_base, "desired_wrench_base")
    w_e = rigid_sensor_wrench(chain, q, w_d) if wrench_tool is None else _as_wrench(wrench_tool, "wrench_tool")
    if method == "levenberg-marquardt":
        return compensate_levenberg_marquardt(chain, q, w_e, w_d, weight=weight, tolerance=tolerance,
                                              max_iterations=max_iterations)
    if method == "steepest-descent":
        return compensate_steepest_descent(chain, q, w_e, w_d, weight=weight, tolerance=tolerance,
                                           max_iterations=max_iterations)
    raise ValueError(f"method must be 'levenberg-marquardt' or 'steepest-descent', got {method!r}")


# --------------------------------------------------------------------------------------------------
# Online force set-point correction for a force loop on an arm with compliant joints
# --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ForceSetpointCorrection:
    """Output of :class:`CompliantJointForceCorrection` (all wrenches ``[f; m]``, N and N·m).

    ``sensor_wrench_setpoint``: the wrench the force loop must hold in the sensor (tool)
    frame, moment about its origin, so the deflected arm applies ``desired_wrench_base``
    in the world: ``K_t⁻¹ ᴮw_d`` (P4, eqs. (6)–(8) with the deflected ``K_t``).
    ``rigid_base_setpoint``: the same wrench mapped by the RIGID kinematics at the
    measured q, ``K_r K_t⁻¹ ᴮw_d`` — what to give a controller that maps the sensor
    reading to the base frame with the rigid model (UR's ``actual_TCP_force`` does).
    ``correction_matrix``: ``K_t⁻¹ K_r`` (6×6, sensor-frame axes); a set-point given in
    the rigid sensor frame, ``w``, becomes ``correction_matrix @ w``.
    ``joint_deflection_rad``: link-side minus motor-side angle, ``θ − q``.
    """

    sensor_wrench_setpoint: np.ndarray
    rigid_base_setpoint: np.ndarray
    correction_matrix: np.ndarray
    joint_deflection_rad: np.ndarray


class CompliantJointForceCorrection:
    """Online force set-point correction for a force-controlled arm with compliant joints (P4 applied).

    Why: a force loop regulates what the wrist sensor reads; the base-frame wrench is the
    reading mapped through the kinematics. The joint encoders of a UR arm read the motor
    side of its strain-wave gears, so under a contact load the flange is turned by the
    joint deflections ``δ = K⁻¹ τ`` (P4, eq. (19) terms; ``τ = Jᵀ w`` the load's joint
    torques) away from where the rigid model puts it, and the world-frame wrench misses
    its set-point. P4 moves the joint set-points with the sensor wrench held fixed
    (:func:`ur_force_setpoint_correction`, iterative); a controller that chooses the
    wrench its force loop holds can instead hold ``K_t⁻¹ ᴮw_d`` — closed form, no
    iteration over set-points, cheap enough for every control cycle (see the benchmark).

    Model: links rigid, joint i a torsional spring of stiffness ``k_i`` (N·m/rad) between
    the measured motor-side angle ``q_i`` and the link-side angle ``θ_i``; the
    equilibrium ``θ = q + K⁻¹ J(θ)ᵀ w`` (``J`` the frame Jacobian in the sensor frame,
    ``w`` the load on the arm in the sensor frame) is solved by ``fixed_point_iterations``
    fixed-point steps (each gains a factor ~|δ|, so 3 give ~1e-9 rad for δ ~ 1e-3).

    Use: ``corr = CompliantJointForceCorrection(robot.model, robot.tool_frame_id,
    stiffness)``, then each call ``corr(q_measured, sensor_wrench, desired_wrench_base)``.
    Holds its own pinocchio data: one instance per thread.
    """

    def __init__(self, model, frame_id: int, joint_stiffness_nm_per_rad: np.ndarray | float | None = None,
                 *, fixed_point_iterations: int = 3) -> None:
        import pinocchio as pin

        self._pin = pin
        self.model = model
        self.data = model.createData()
        self.frame_id = int(frame_id)
        if not 0 <= self.frame_id < model.nframes:
            raise ValueError(f"frame_id {frame_id} is not a frame of the model ({model.nframes} frames)")
        stiffness = UR3_JOINT_STIFFNESS_NM_PER_RAD if joint_stiffness_nm_per_rad is None \
            else joint_stiffness_nm_per_rad
        self.compliance_rad_per_nm = _compliance_from_stiffness(stiffness, model.nv)
        if int(fixed_point_iterations) < 1:
            raise ValueError(f"fixed_point_iterations must be >= 1, got {fixed_point_iterations!r}")
        self.fixed_point_iterations = int(fixed_point_iterations)

    @classmethod
    def from_robot(cls, robot_model: RobotModel, joint_stiffness_nm_per_rad: np.ndarray | float | None = None,
                   **kwargs) -> CompliantJointForceCorrection:
        """For a :class:`RobotModel` (e.g. ``load_robot('ur3')``), sensor frame = its tool frame."""
        return cls(robot_model.model, robot_model.tool_frame_id, joint_stiffness_nm_per_rad, **kwargs)

    def deflection(self, q_rad: np.ndarray, load_wrench_sensor: np.ndarray) -> np.ndarray:
        """Link-side angles ``θ`` of the compliant joints under ``load_wrench_sensor`` (sensor frame)."""
        pin = self._pin
        q = np.asarray(q_rad, dtype=float).reshape(-1)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            raise ValueError(f"q_rad must hold {self.model.nq} finite joint angles (rad), got {np.asarray(q_rad)!r}")
        w = _as_wrench(load_wrench_sensor, "load_wrench_sensor")
        theta = q
        for _ in range(self.fixed_point_iterations):
            jac = pin.computeFrameJacobian(self.model, self.data, theta, self.frame_id, pin.LOCAL)
            theta = q + self.compliance_rad_per_nm * (jac.T @ w)
        return theta

    def __call__(self, q_rad: np.ndarray, sensor_wrench: np.ndarray | None,
                 desired_wrench_base: np.ndarray) -> ForceSetpointCorrection:
        """The corrected set-point at measured ``q_rad`` under the measured ``sensor_wrench``.

        ``sensor_wrench``: the LOAD on the arm in the sensor frame (environment on robot,
        moment about the frame origin), i.e. the wrist sensor reading; ``None`` = the arm
        is loaded by the corrected set-point itself (solved by two extra passes).
        ``desired_wrench_base``: the world-frame set-point in the same convention, base
        axes, moment about the base origin.
        """
        pin = self._pin
        q = np.asarray(q_rad, dtype=float).reshape(-1)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            raise ValueError(f"q_rad must hold {self.model.nq} finite joint angles (rad), got {np.asarray(q_rad)!r}")
        w_d = _as_wrench(desired_wrench_base, "desired_wrench_base")
        pin.framesForwardKinematics(self.model, self.data, q)
        t_rigid = wrench_transform_of(self.data.oMf[self.frame_id].homogeneous)
        load = np.linalg.solve(t_rigid, w_d) if sensor_wrench is None else _as_wrench(sensor_wrench, "sensor_wrench")
        for _ in range(3 if sensor_wrench is None else 1):
            theta = self.deflection(q, load)
            pin.framesForwardKinematics(self.model, self.data, theta)
            t_true = wrench_transform_of(self.data.oMf[self.frame_id].homogeneous)
            load = np.linalg.solve(t_true, w_d)  # K_t⁻¹ ᴮw_d
        correction = np.linalg.solve(t_true, t_rigid)
        return ForceSetpointCorrection(
            sensor_wrench_setpoint=load, rigid_base_setpoint=t_rigid @ load, correction_matrix=correction,
            joint_deflection_rad=theta - q,
        )


def compliant_force_setpoint(
    robot_model: RobotModel,
    q_rad: np.ndarray,
    sensor_wrench: np.ndarray | None,
    desired_wrench_base: np.ndarray,
    joint_stiffness_nm_per_rad: np.ndarray | float | None = None,
) -> ForceSetpointCorrection:
    """One-off :class:`CompliantJointForceCorrection` call (builds pinocchio data each time; in a
    loop keep an instance instead). ``None`` stiffness = :data:`UR3_JOINT_STIFFNESS_NM_PER_RAD`."""
    return CompliantJointForceCorrection.from_robot(robot_model, joint_stiffness_nm_per_rad)(
        q_rad, sensor_wrench, desired_wrench_base)
