"""Operational-space model terms and the hybrid force/motion law of Jamisola et al. (seeds.md P2).

End-effector dynamics (P2, eq. (1)): ``Lambda(x) xdd + mu(x, xd) + p(x) = F`` with
``Lambda = (J M^-1 J^T)^-1``. The control law (P2, eqs. (2)-(5))::

    F        = Lambda_hat (Omega F*_motion + Omega~ F*_force) + mu_hat + p_hat + Omega~ f_d
    F*_motion = xdd_d - k_v (xd - xd_d) - k_p (x - x_d)
    F*_force  = k_pf (f_d - f) + k_if int(f_d - f)
    Gamma    = J^T F + tau_friction                                     (P2, eq. (12))

Conventions used throughout the control package:

* Twists are ``[v, omega]`` of an operational point in BASE-frame axes (pinocchio's
  LOCAL_WORLD_ALIGNED); wrenches are ``[force, moment about that point]`` in base axes.
* Two operational points (P2, "task frames"): motion is controlled at the
  force-sensor frame (the stiff flange, ``motion point``); force is controlled at
  the tool tip (``force point``). Wrenches at the tip are moved to the motion point
  with :func:`shift_wrench` before they meet ``Lambda`` and ``J``.
* ``mu_hat + p_hat`` mapped to joints: ``J^T (mu + p) = h(q, qd) - J^T Lambda Jd qd``
  (``h = C qd + g``) whenever ``J`` is invertible. We apply ``h`` directly in joint
  space, so gravity stays exactly compensated inside the singular region too, where
  ``Lambda`` is padded and ``J^T Lambda J M^-1 != I`` (see ``singularity.py``).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robots.model import RobotModel

__all__ = [
    "OperationalSpaceModel",
    "orientation_error",
    "shift_wrench",
    "skew",
]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED

#: Frame names added to the controller's copy of the pinocchio model.
MOTION_FRAME = "osc_motion_point"
FORCE_FRAME = "osc_force_point"
SENSOR_FRAME = "osc_wrench_point"


def skew(v: np.ndarray) -> np.ndarray:
    """The cross-product matrix [v]x."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def orientation_error(rotation: np.ndarray, rotation_desired: np.ndarray) -> np.ndarray:
    """Orientation error dPhi (rad, base axes) of ``rotation`` relative to ``rotation_desired``.

    Jamisola P2, eq. (13): dPhi = -1/2 (r1 x r1d + r2 x r2d + r3 x r3d), r_i the columns.
    For a small rotation R = exp([phi]x) R_d this equals +phi, so ``x - x_d`` in the
    motion law is replaced by dPhi for the rotational rows.
    """
    # sum_i r_i x r_id = vex-like difference of M = R R_d^T: (M_yz - M_zy, M_zx - M_xz, M_xy - M_yx)
    m = rotation @ rotation_desired.T
    return -0.5 * np.array([m[1, 2] - m[2, 1], m[2, 0] - m[0, 2], m[0, 1] - m[1, 0]])


def shift_wrench(wrench: np.ndarray, from_point_m: np.ndarray, to_point_m: np.ndarray,
                 out: np.ndarray | None = None) -> np.ndarray:
    """The same wrench (base axes) with its moment taken about ``to_point_m`` instead of ``from_point_m``.

    m_to = m_from + (from - to) x f. This is how P2 moves tip wrenches to the wrist
    (sensor) origin before combining them with Lambda and J.
    """
    if out is None:
        out = np.empty(6)
    f = wrench[:3]
    r = from_point_m - to_point_m
    out[:3] = f
    out[3] = wrench[3] + r[1] * f[2] - r[2] * f[1]
    out[4] = wrench[4] + r[2] * f[0] - r[0] * f[2]
    out[5] = wrench[5] + r[0] * f[1] - r[1] * f[0]
    return out


def _as_se3(offset: pin.SE3 | np.ndarray | None) -> pin.SE3:
    if offset is None:
        return pin.SE3.Identity()
    if isinstance(offset, pin.SE3):
        return offset
    arr = np.asarray(offset, float)
    if arr.shape == (3,):
        return pin.SE3(np.eye(3), arr)
    if arr.shape == (4, 4):
        return pin.SE3(arr)
    raise ValueError(f"a frame offset must be a pin.SE3, a 3-vector (m) or a 4x4 transform, got shape {arr.shape}")


class OperationalSpaceModel:
    """Model terms of the arm at the two operational points, recomputed once per control cycle.

    ``update(q, qd)`` fills (all preallocated, base-frame axes):

    * ``M`` joint inertia (with rotor inertia), ``M_inv``, ``h = C qd + g`` (nonlinear effects),
    * ``J`` the 6xn Jacobian of the motion point, ``dJ_qd`` its bias acceleration Jd qd,
    * ``position_m``, ``rotation`` of the motion point; ``tip_position_m``, ``tip_rotation``,
      ``wrench_point_m`` (the point the F/T reading's moments are about),
    * ``lambda_inv = J M^-1 J^T`` (P2, eq. (1)); Lambda itself is formed by ``singularity.py``.

    The motion point is ``tool0`` moved by ``sensor_offset`` (the F/T sensor frame);
    the force point is ``tool0`` moved by ``tool_tip_offset`` (the tool tip); the F/T
    sensor's moments are about ``tool0`` moved by ``wrench_reference_offset`` (RTDE's
    ``actual_TCP_force`` and the simulator: the flange, offset zero).
    """

    def __init__(self, robot_model: RobotModel, *, sensor_offset: pin.SE3 | np.ndarray | None = None,
                 tool_tip_offset: pin.SE3 | np.ndarray | None = None,
                 wrench_reference_offset: pin.SE3 | np.ndarray | None = None) -> None:
        self.robot_model = robot_model
        model = robot_model.model.copy()
        tool_id = model.getFrameId(robot_model.tool_frame)
        tool = model.frames[tool_id]
        parent = tool.parentJoint
        sensor = _as_se3(sensor_offset)
        tip = _as_se3(tool_tip_offset)
        self.motion_frame_id = model.addFrame(
            pin.Frame(MOTION_FRAME, parent, tool_id, tool.placement * sensor, pin.FrameType.OP_FRAME))
        self.force_frame_id = model.addFrame(
            pin.Frame(FORCE_FRAME, parent, tool_id, tool.placement * tip, pin.FrameType.OP_FRAME))
        self.wrench_frame_id = model.addFrame(
            pin.Frame(SENSOR_FRAME, parent, tool_id, tool.placement * _as_se3(wrench_reference_offset),
                      pin.FrameType.OP_FRAME))
        self.model = model
        self.data = model.createData()
        self.n_joints = model.nv
        #: the tip seen from the motion point, in the motion point's frame (m)
        self.tip_in_motion_frame = (sensor.inverse() * tip)
        n = self.n_joints
        self.M = np.zeros((n, n))
        self.M_inv = np.zeros((n, n))
        self.h = np.zeros(n)
        self.J = np.zeros((6, n))
        self.dJ_qd = np.zeros(6)
        self.position_m = np.zeros(3)
        self.rotation = np.eye(3)
        self.tip_position_m = np.zeros(3)
        self.tip_rotation = np.eye(3)
        self.wrench_point_m = np.zeros(3)
        self.lambda_inv = np.zeros((6, 6))
        self.twist = np.zeros(6)
        self._minv_jt = np.zeros((n, 6))
        self._lower_mask = np.tril(np.ones((n, n), dtype=bool), -1)
        # the F/T moments' reference point is the motion point unless the offsets differ
        self._wrench_point_is_motion_point = bool(
            np.allclose((sensor.inverse() * _as_se3(wrench_reference_offset)).homogeneous, np.eye(4)))

    def update(self, q_rad: np.ndarray, qd_rad_s: np.ndarray) -> None:
        """Recompute every model term at (q, qd): one computeAllTerms pass + M^-1 (about 10 us)."""
        m, d = self.model, self.data
        # computeAllTerms: kinematics with zero acceleration, CRBA (full symmetric M),
        # nonlinear effects h and joint Jacobians in one pass.
        pin.computeAllTerms(m, d, q_rad, qd_rad_s)
        om = pin.updateFramePlacement(m, d, self.motion_frame_id)
        ot = pin.updateFramePlacement(m, d, self.force_frame_id)
        self.M[:] = d.M
        self.h[:] = d.nle
        self.J[:] = pin.getFrameJacobian(m, d, self.motion_frame_id, _LWA)
        # Classical acceleration at zero qdd = Jd qd (the Coriolis part of mu, P2 eq. (1)).
        self.dJ_qd[:] = pin.getFrameClassicalAcceleration(m, d, self.motion_frame_id, _LWA).vector
        self.position_m[:] = om.translation
        self.rotation[:] = om.rotation
        self.tip_position_m[:] = ot.translation
        self.tip_rotation[:] = ot.rotation
        if self._wrench_point_is_motion_point:
            self.wrench_point_m[:] = self.position_m
        else:
            self.wrench_point_m[:] = pin.updateFramePlacement(m, d, self.wrench_frame_id).translation
        # M^-1 by ABA-style recursion (pinocchio fills the upper triangle only).
        mi = pin.computeMinverse(m, d, q_rad)
        self.M_inv[:] = mi
        np.copyto(self.M_inv, mi.T, where=self._lower_mask)
        np.dot(self.M_inv, self.J.T, out=self._minv_jt)
        # P2, eq. (1): Lambda^-1 = J M^-1 J^T.
        np.dot(self.J, self._minv_jt, out=self.lambda_inv)
        np.dot(self.J, qd_rad_s, out=self.twist)

    def gravity(self, q_rad: np.ndarray) -> np.ndarray:
        """Generalized gravity g(q) (Nm); uses its own data so it does not disturb ``update``."""
        return pin.computeGeneralizedGravity(self.model, self.model.createData(), q_rad).copy()

    def jacobian_at_tip(self) -> np.ndarray:
        """6xn Jacobian of the tool tip (after ``update``)."""
        return pin.getFrameJacobian(self.model, self.data, self.force_frame_id, _LWA).copy()

    def forward_kinematics(self, q_rad: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(motion-point position, rotation, tip position) at q without touching the cycle data."""
        d = self.model.createData()
        pin.framesForwardKinematics(self.model, d, q_rad)
        om = d.oMf[self.motion_frame_id]
        return om.translation.copy(), om.rotation.copy(), d.oMf[self.force_frame_id].translation.copy()
