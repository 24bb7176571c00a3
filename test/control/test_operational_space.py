"""Model terms and the hybrid law of the operational-space controller (seeds.md P2 eqs. (1)-(5), (13))."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.controller import OperationalSpaceController
from robot_dynamics_id.control.controller_config import ControllerConfig
from robot_dynamics_id.control.operational_space import OperationalSpaceModel, orientation_error, shift_wrench
from robot_dynamics_id.control.selection import (POLISHING_MOTION_AXES, motion_axes_from_names,
                                                 selection_matrices)
from robot_dynamics_id.dynamics.friction import FrictionParameters, friction_torque
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots.model import load_robot

Q = np.array([0.2, -1.4, 1.5, -1.6, -1.3, 0.4])
QD = np.array([0.3, -0.2, 0.4, 0.5, -0.6, 0.2])


def test_orientation_error_is_the_small_rotation_vector():
    rd = pin.rpy.rpyToMatrix(0.3, -0.2, 1.0)
    phi = np.array([1e-3, -2e-3, 0.5e-3])
    r = pin.exp3(phi) @ rd
    np.testing.assert_allclose(orientation_error(r, rd), phi, atol=1e-8)
    np.testing.assert_allclose(orientation_error(rd, rd), 0.0, atol=1e-15)


def test_shift_wrench_moves_the_moment_reference():
    w = np.array([1.0, -2.0, 3.0, 0.1, 0.2, 0.3])
    a, b = np.array([0.1, 0.2, 0.3]), np.array([-0.2, 0.0, 0.5])
    moved = shift_wrench(w, a, b)
    np.testing.assert_allclose(moved[3:], w[3:] + np.cross(a - b, w[:3]))
    np.testing.assert_allclose(shift_wrench(moved, b, a), w, atol=1e-15)


def test_model_terms_match_pinocchio_and_finite_differences():
    robot = load_robot("ur3")
    osm = OperationalSpaceModel(robot, tool_tip_offset=[0, 0, 0.1])
    osm.update(Q, QD)
    m, d = robot.model, robot.model.createData()
    M = pin.crba(m, d, Q)
    M = np.triu(M) + np.triu(M, 1).T
    np.testing.assert_allclose(osm.M, M, atol=1e-12)
    np.testing.assert_allclose(osm.M_inv @ osm.M, np.eye(6), atol=1e-9)
    np.testing.assert_allclose(osm.h, pin.nonLinearEffects(m, d, Q, QD), atol=1e-12)
    np.testing.assert_allclose(osm.lambda_inv, osm.J @ np.linalg.solve(M, osm.J.T), atol=1e-10)
    # J maps qd to the motion point's velocity; Jd qd by central differences along the motion.
    eps = 1e-6
    p_plus = osm.forward_kinematics(Q + eps * QD)[0]
    p_minus = osm.forward_kinematics(Q - eps * QD)[0]
    np.testing.assert_allclose(osm.J[:3] @ QD, (p_plus - p_minus) / (2 * eps), atol=1e-7)
    J0 = osm.J.copy()
    osm.update(Q + eps * QD, QD)
    J1 = osm.J.copy()
    np.testing.assert_allclose(osm.dJ_qd[:3], ((J1 - J0) / eps @ QD)[:3], atol=1e-4)
    # The tip is 0.1 m along tool0 z.
    osm.update(Q, QD)
    np.testing.assert_allclose(osm.tip_position_m - osm.position_m, 0.1 * osm.rotation[:, 2], atol=1e-12)


def test_selection_matrices_are_complementary_projectors():
    r = pin.rpy.rpyToMatrix(0.4, 0.1, -0.7)
    omega, omega_t = selection_matrices(r, POLISHING_MOTION_AXES)
    np.testing.assert_allclose(omega + omega_t, np.eye(6), atol=1e-15)
    np.testing.assert_allclose(omega @ omega, omega, atol=1e-12)
    np.testing.assert_allclose(omega @ omega_t, 0.0, atol=1e-12)
    # tool z is force-controlled: Omega removes it, Omega~ keeps it
    z = np.r_[r[:, 2], 0, 0, 0]
    np.testing.assert_allclose(omega @ z, 0.0, atol=1e-12)
    np.testing.assert_allclose(omega_t @ z, z, atol=1e-12)
    np.testing.assert_array_equal(motion_axes_from_names(["z", "rx", "ry"]), POLISHING_MOTION_AXES)
    with pytest.raises(ValueError, match="unknown task axis"):
        motion_axes_from_names(["q"])


def test_inlined_friction_equals_the_package_model():
    rng = np.random.default_rng(1)
    fr = FrictionParameters(rng.uniform(0.5, 1, 6), rng.uniform(1, 2, 6), rng.uniform(0.1, 1, 6),
                            rng.uniform(-0.1, 0.1, 6), np.full(6, 0.1), np.full(6, 0.02))
    model = DynamicModel.nominal("ur3")
    from dataclasses import replace
    ctl = OperationalSpaceController(replace(model, friction=fr),
                                     config=ControllerConfig(friction_compensation_velocity_rad_s=0.0))
    for qd in (QD, -QD * 0.01, np.zeros(6)):
        np.testing.assert_allclose(ctl.friction_compensation.torque(qd), friction_torque(fr, qd), atol=1e-12)


def test_free_motion_law_decouples_the_end_effector():
    """With the exact model, Gamma of P2 eq. (2) gives xdd = F*_motion (checked with ABA)."""
    model = DynamicModel.nominal("ur3")
    ctl = OperationalSpaceController(model, config=ControllerConfig(robot_adds_gravity=False,
                                                                    friction_compensation=False))
    osm = ctl.osm
    osm.update(Q, QD)
    target = osm.position_m + np.array([0.01, -0.02, 0.005])
    rd = pin.exp3(np.array([0.02, 0.0, -0.01])) @ osm.rotation
    ctl.set_motion_target(target, rd)
    ctl.enter_free_motion()
    cmd = ctl.step(Q, QD, 0.0, wrench_base=np.zeros(6))
    m = ctl.osm.model
    d = m.createData()
    qdd = pin.aba(m, d, Q, QD, cmd.joint_torque_nm)
    xdd = osm.J @ qdd + osm.dJ_qd
    twist = osm.J @ QD
    cfg = ctl.config
    expected = np.empty(6)
    expected[:3] = -cfg.kv_position_per_s * twist[:3] - cfg.kp_position_per_s2 * (osm.position_m - target)
    expected[3:] = (-cfg.kv_orientation_per_s * twist[3:]
                    - cfg.kp_orientation_per_s2 * orientation_error(osm.rotation, rd))
    np.testing.assert_allclose(xdd, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(cmd.joint_acceleration_rad_s2, qdd, atol=1e-8)
