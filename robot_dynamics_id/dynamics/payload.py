"""A payload fixed to the flange: its 10 inertial parameters in the tool frame and its joint-torque regressor.

A rigid payload adds to the last link's 10 standard parameters (pinocchio order
m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz, inertia about the
frame origin). Users give it in the tool (flange, ``tool0``) frame, where ur_rtde's
``setPayload(mass, cog)`` and the UR driver's ``set_payload`` take it; the last
joint's frame differs from ``tool0`` by a constant placement X, and the change of
frame is linear in the parameters: theta_joint = A theta_tool with A the 10x10
matrix of X acting on spatial inertias (Featherstone, Rigid Body Dynamics
Algorithms, eq. (2.66)). So the payload's torques are linear in its tool-frame
parameters::

    tau_payload = Y_last(q, qd, qdd) A theta_tool

with Y_last the last link's 10 columns of the joint-torque regressor.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..robots.model import RobotModel
from .regressor import rigid_body_regressor

__all__ = ["PAYLOAD_PARAMETER_NAMES", "payload_inertials", "payload_parameters", "payload_regressor",
           "tool_to_joint_transform"]

#: Tool-frame payload parameters, in the order of :func:`payload_regressor`'s columns.
PAYLOAD_PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def tool_to_joint_transform(robot: RobotModel) -> np.ndarray:
    """A (10, 10): the last joint's standard parameters of a body given by its tool-frame parameters.

    Built column by column from pinocchio's own change of frame (``SE3.act`` on an ``Inertia``), which is
    linear in the 10 parameters; the base point with unit mass only keeps every intermediate well defined.
    """
    model = robot.model
    frame = model.frames[robot.tool_frame_id]
    if frame.parentJoint != model.njoints - 1:
        raise ValueError(f"tool frame {robot.tool_frame!r} is not attached to the last joint: a payload there "
                         "would not move with the flange")
    placement = frame.placement

    def act(theta: np.ndarray) -> np.ndarray:
        return np.asarray(placement.act(pin.Inertia.FromDynamicParameters(theta)).toDynamicParameters(), float)

    base = np.array([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    at_base = act(base)
    return np.column_stack([act(base + e) - at_base for e in np.eye(10)])


def payload_parameters(mass_kg: float, com_m, inertia_about_com_kgm2=None) -> np.ndarray:
    """Tool-frame standard parameters (10,) of a payload: mass, CoM (m) and inertia about the CoM
    (kg m^2, tool axes; default a point mass)."""
    inertia = np.zeros((3, 3)) if inertia_about_com_kgm2 is None else np.asarray(inertia_about_com_kgm2, float)
    com = np.asarray(com_m, float)
    if com.shape != (3,) or inertia.shape != (3, 3):
        raise ValueError(f"payload CoM must be 3 values and inertia 3x3, got {com.shape} and {inertia.shape}")
    return np.asarray(pin.Inertia(float(mass_kg), com, inertia).toDynamicParameters(), float)


def payload_inertials(theta) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass kg, CoM m, inertia about the CoM kg m^2) of tool-frame parameters (any sign of mass except 0).

    The inertia about the CoM is I_o - m (|c|^2 E - c c^T) (parallel-axis theorem), c = h / m.
    """
    p = np.asarray(theta, float)
    m = float(p[0])
    if m == 0:
        raise ValueError("payload mass is 0: the centre of mass is undefined")
    c = p[1:4] / m
    i_origin = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    i_com = i_origin - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return m, c, i_com


def payload_regressor(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, *,
                      transform: np.ndarray | None = None) -> np.ndarray:
    """Joint-torque regressor of a flange payload's tool-frame parameters, (N*n, 10), rows sample-major."""
    n = robot.n_joints
    a = tool_to_joint_transform(robot) if transform is None else transform
    last = rigid_body_regressor(robot, q_rad, qd_rad_s, qdd_rad_s2)[:, 10 * (n - 1):]
    return last @ a
