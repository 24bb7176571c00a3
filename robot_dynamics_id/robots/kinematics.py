"""Forward kinematics straight from DH parameters (the reference the URDF is checked against), and a tool-pose IK."""

from __future__ import annotations

import numpy as np

from .description import RobotDescription

__all__ = ["dh_transform", "dh_forward_kinematics", "dh_link_frames", "solve_ik"]


def dh_transform(a_m: float, d_m: float, alpha_rad: float, theta_rad: float) -> np.ndarray:
    """Standard DH transform ``Rz(theta) Tz(d) Tx(a) Rx(alpha)`` as a 4×4 matrix."""
    ct, st = np.cos(theta_rad), np.sin(theta_rad)
    ca, sa = np.cos(alpha_rad), np.sin(alpha_rad)
    return np.array(
        [
            [ct, -st * ca, st * sa, a_m * ct],
            [st, ct * ca, -ct * sa, a_m * st],
            [0.0, sa, ca, d_m],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def dh_link_frames(robot: RobotDescription, q_rad: np.ndarray) -> np.ndarray:
    """Poses of DH frames 1..n in the base frame, shape (n, 4, 4)."""
    q = np.asarray(q_rad, dtype=float)
    if q.shape != (robot.n_joints,):
        raise ValueError(f"q must have shape ({robot.n_joints},), got {q.shape}")
    frames = np.empty((robot.n_joints, 4, 4))
    pose = np.eye(4)
    for i in range(robot.n_joints):
        pose = pose @ dh_transform(robot.dh_a_m[i], robot.dh_d_m[i], robot.dh_alpha_rad[i], q[i])
        frames[i] = pose
    return frames


def dh_forward_kinematics(robot: RobotDescription, q_rad: np.ndarray) -> np.ndarray:
    """Pose of the flange (DH frame n, the UR ``tool0`` frame) in the base frame, 4×4."""
    return dh_link_frames(robot, q_rad)[-1]


def solve_ik(robot_model, target, q_init: np.ndarray, *, local_offset_m=(0.0, 0.0, 0.0),
             iterations: int = 200) -> np.ndarray:
    """Joint angles placing ``tool0 * Tz(local_offset)`` at the pinocchio SE3 ``target``
    (damped Gauss-Newton from ``q_init``); raises RuntimeError if it does not converge."""
    import pinocchio as pin

    model = robot_model.model
    data = model.createData()
    fid = robot_model.tool_frame_id
    offset = pin.SE3(np.eye(3), np.asarray(local_offset_m, float))
    q = np.asarray(q_init, float).copy()
    for _ in range(iterations):
        pin.framesForwardKinematics(model, data, q)
        current = data.oMf[fid] * offset
        err = pin.log6(current.actInv(target)).vector
        if np.linalg.norm(err) < 1e-10:
            return q
        jac = offset.toActionMatrixInverse() @ pin.computeFrameJacobian(model, data, q, fid, pin.LOCAL)
        q = q + np.linalg.solve(jac.T @ jac + 1e-9 * np.eye(model.nv), jac.T @ err)
    pin.framesForwardKinematics(model, data, q)
    if np.linalg.norm(pin.log6((data.oMf[fid] * offset).actInv(target)).vector) > 1e-6:
        raise RuntimeError("inverse kinematics did not converge: the target is probably out of reach")
    return q
