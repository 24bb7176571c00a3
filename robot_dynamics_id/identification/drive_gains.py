"""Drive gains (motor current -> joint torque, Nm/A) from a known-payload experiment.

Currents alone fix the dynamics only up to one scale per joint: k_j i_j = tau_j
is unchanged if k_j and every parameter seen by joint j are scaled together. A
payload of known mass and centre of mass breaks that: its torque is known from
the kinematics alone. With two recordings — A without, B with the payload —

    k_j i_j(A) - W_base(A) beta = 0
    k_j i_j(B) - W_base(B) beta = tau_payload(B)

is linear in the gains k and the arm's base parameters beta (global
identification of drive gains and dynamic parameters, Gautier & Briot 2014), and
is solved by two-step weighted least squares (one noise level per joint).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..dynamics.base_parameters import BaseParameterMap, check_excitation
from ..dynamics.regressor import (
    DEFAULT_COULOMB_VELOCITY_RAD_S,
    DEFAULT_STRIBECK_VELOCITY_RAD_S,
    full_regressor,
    rigid_body_regressor,
)
from ..robots.model import RobotModel
from .estimators import weighted_least_squares

__all__ = ["DriveGainEstimate", "identify_drive_gains", "payload_standard_parameters", "payload_torque"]


@dataclass(frozen=True)
class DriveGainEstimate:
    """Identified gains (Nm/A) with standard deviations, and the arm's base parameters found with them."""

    gains_nm_per_a: np.ndarray
    gains_std_nm_per_a: np.ndarray
    base_parameters: np.ndarray
    base_std: np.ndarray
    residual_rms_nm: np.ndarray


def payload_standard_parameters(robot: RobotModel, mass_kg: float, com_in_tool_m, inertia_about_com_kgm2=None,
                                ) -> np.ndarray:
    """The payload's 10 standard parameters in the last joint's frame (pinocchio order).

    ``com_in_tool_m`` and ``inertia_about_com_kgm2`` (default: a point mass) are in the tool frame.
    """
    if mass_kg <= 0:
        raise ValueError(f"payload mass must be > 0 kg, got {mass_kg}")
    model = robot.model
    frame = model.frames[robot.tool_frame_id]
    if frame.parentJoint != model.njoints - 1:
        raise ValueError(f"tool frame {robot.tool_frame!r} is not attached to the last joint")
    inertia = np.zeros((3, 3)) if inertia_about_com_kgm2 is None else np.asarray(inertia_about_com_kgm2, float)
    payload = pin.Inertia(float(mass_kg), np.asarray(com_in_tool_m, float), inertia)
    return np.asarray(frame.placement.act(payload).toDynamicParameters(), float)


def payload_torque(robot: RobotModel, q_rad, qd_rad_s, qdd_rad_s2, payload_parameters) -> np.ndarray:
    """Joint torques (N, n) the payload adds: the last link's regressor columns times its parameters."""
    w = rigid_body_regressor(robot, q_rad, qd_rad_s, qdd_rad_s2)
    n = robot.n_joints
    return (w[:, 10 * (n - 1):] @ np.asarray(payload_parameters, float)).reshape(-1, n)


def identify_drive_gains(
    robot: RobotModel,
    base_map: BaseParameterMap,
    without_payload: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    with_payload: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    payload_parameters: np.ndarray,
    *,
    stribeck_velocity_rad_s=DEFAULT_STRIBECK_VELOCITY_RAD_S,
    coulomb_velocity_rad_s=DEFAULT_COULOMB_VELOCITY_RAD_S,
) -> DriveGainEstimate:
    """Gains and base parameters from (q, qd, qdd, current_a) without and with a known payload.

    Arrays are (N, n) and already preprocessed (filtered, differentiated).
    """
    n = robot.n_joints
    blocks, rhs = [], []
    for data, with_load in ((without_payload, False), (with_payload, True)):
        q, qd, qdd, current = (np.asarray(x, float) for x in data)
        w, _ = full_regressor(robot, q, qd, qdd, friction=base_map.friction, rotor=base_map.rotor,
                              stribeck_velocity_rad_s=stribeck_velocity_rad_s,
                              coulomb_velocity_rad_s=coulomb_velocity_rad_s)
        wb = base_map.base_regressor(w)
        gain_columns = np.zeros((current.shape[0], n, n))
        gain_columns[:, np.arange(n), np.arange(n)] = current
        blocks.append(np.hstack([gain_columns.reshape(-1, n), -wb]))
        rhs.append(payload_torque(robot, q, qd, qdd, payload_parameters).ravel() if with_load
                   else np.zeros(current.size))
    a = np.vstack(blocks)
    y = np.concatenate(rhs)
    names = [f"drive_gain{j + 1}" for j in range(n)] + list(base_map.names)
    check_excitation(a, names)
    est = weighted_least_squares(a, y, n)
    gains = est.parameters[:n]
    if np.any(gains <= 0):
        raise ValueError(f"identified drive gains {np.round(gains, 3).tolist()} are not all positive: the payload "
                         "does not load every joint enough (move every joint, offset the payload CoM from the "
                         "flange axis, use a heavier payload)")
    return DriveGainEstimate(gains_nm_per_a=gains, gains_std_nm_per_a=est.std[:n], base_parameters=est.parameters[n:],
                             base_std=est.std[n:], residual_rms_nm=est.residual_rms_nm)
