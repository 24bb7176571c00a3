"""Sensorless contact force: generalized-momentum observer (De Luca) on a pinocchio plant."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.force_estimation import MomentumObserver, wrench_from_joint_torque
from robot_dynamics_id.robots.model import load_robot


def test_observer_recovers_an_external_wrench_while_the_arm_moves():
    robot = load_robot("ur3")
    model, data = robot.model, robot.model.createData()
    fid = robot.tool_frame_id
    dt = 0.002
    obs = MomentumObserver(model, gain_per_s=80.0, period_s=dt)
    q = np.array([0.1, -1.3, 1.4, -1.6, -1.4, 0.3])
    qd = np.zeros(6)
    wrench = np.array([3.0, -2.0, 10.0, 0.1, -0.2, 0.05])  # environment on the robot, at tool0
    estimates = []
    for k in range(600):
        t = k * dt
        # drive torque: gravity + a slow excitation (known to the observer), external torque unknown
        tau = pin.computeGeneralizedGravity(model, data, q) + 2.0 * np.sin(3.0 * t) * np.array([1, 1, 1, .2, .2, .2])
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        jac = pin.getFrameJacobian(model, data, fid, pin.LOCAL_WORLD_ALIGNED)
        tau_ext = jac.T @ wrench if t > 0.3 else np.zeros(6)
        r = obs.update(q, qd, tau)
        estimates.append((t, r.copy(), tau_ext, jac))
        # integrate the plant with small substeps (semi-implicit Euler)
        for _ in range(4):
            qdd = pin.aba(model, data, q, qd, tau + tau_ext)
            qd = qd + qdd * dt / 4
            q = q + qd * dt / 4
    t, r, tau_ext, jac = estimates[-1]
    np.testing.assert_allclose(r, tau_ext, atol=0.05 * np.abs(tau_ext).max())
    w = wrench_from_joint_torque(jac, r, damping=1e-8)
    np.testing.assert_allclose(w[:3], wrench[:3], atol=0.5)
    # before the contact the estimate stays near zero
    before = [e[1] for e in estimates if 0.1 < e[0] < 0.3]
    assert np.abs(before).max() < 0.05


def test_observer_gain_must_suit_the_period():
    robot = load_robot("ur3")
    with pytest.raises(ValueError, match="too high"):
        MomentumObserver(robot.model, gain_per_s=1000.0, period_s=0.008)
