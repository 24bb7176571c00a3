"""Tests of the flexible-arm force-error compensation (Bicchi & Melchiorri, seeds.md P4).

Independent references used: numerical integration of the Euler–Bernoulli
cantilever for the beam compliance, pinocchio's SE3 action on forces for the
wrench transform, and a pinocchio fixed-point joint equilibrium
(θ = q + K⁻¹ J(θ)ᵀ w) for the compliant UR3.
"""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.compliance import (
    BeamSection,
    beam_compliance_matrix,
    beam_deflection_transform,
    homogeneous,
    joint_deflection_transform,
    planar_joint_deflection_transform,
    rotation_about_axis,
    wrench_transform_of,
)
from robot_dynamics_id.control.flexible import (
    PAPER_EXAMPLES,
    UR3_JOINT_STIFFNESS_NM_PER_RAD,
    CompliantChain,
    compensate_levenberg_marquardt,
    compensate_steepest_descent,
    compliant_force_setpoint,
    deflect_chain,
    paper_like_pose,
    paper_planar_arm,
    rigid_sensor_wrench,
    ur_force_setpoint_correction,
    wrench_jacobian,
    wrench_jacobian_fd,
)
from robot_dynamics_id.robots import load_robot


@pytest.fixture(scope="module")
def ur3():
    return load_robot("ur3")


def _random_transform(rng):
    axis = rng.standard_normal(3)
    axis /= np.linalg.norm(axis)
    return homogeneous(rotation_about_axis(axis, rng.uniform(-3, 3)), rng.uniform(-1, 1, 3))


# ------------------------------------------------------------------------- compliance building blocks

def test_beam_compliance_matches_integrated_euler_bernoulli_cantilever():
    section = BeamSection.circular(length_m=1.0, radius_m=0.01)
    c = beam_compliance_matrix(section)
    assert np.allclose(c, c.T) and np.all(np.linalg.eigvalsh(c) > 0)
    ei = section.youngs_modulus_pa * section.second_moment_z_m4
    length = section.length_m
    s = np.linspace(0.0, length, 20001)
    for load in ([0, 7.0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 3.0], [0, 0, -4.0, 0, 2.0, 0]):
        f, m = np.array(load[:3]), np.array(load[3:])
        # bending moment at section s of a cantilever loaded at its tip: M(s) = m + (r_tip - r(s)) x f
        arm = np.stack([length - s, 0 * s, 0 * s], axis=1)
        moment = m + np.cross(arm, f)
        curvature = moment / ei  # about y and z (equal J for a circle)
        theta = np.stack([np.concatenate([[0.0], np.cumsum(0.5 * (k[1:] + k[:-1]) * np.diff(s))])
                          for k in curvature.T], axis=1)
        # slope of the deflection curve: dy/ds = θz, dz/ds = −θy
        dy = np.trapezoid(theta[:, 2], s)
        dz = -np.trapezoid(theta[:, 1], s)
        predicted = c @ np.array(load, float)
        assert predicted[1] == pytest.approx(dy, rel=1e-6, abs=1e-12)
        assert predicted[2] == pytest.approx(dz, rel=1e-6, abs=1e-12)
        assert predicted[4] == pytest.approx(theta[-1, 1], rel=1e-6, abs=1e-12)
        assert predicted[5] == pytest.approx(theta[-1, 2], rel=1e-6, abs=1e-12)
    tip = beam_deflection_transform(c, np.array([0, 7.0, 0, 0, 0, 3.0]))
    assert np.allclose(tip[:3, 3], (c @ [0, 7.0, 0, 0, 0, 3.0])[:3])
    assert np.arctan2(tip[1, 0], tip[0, 0]) == pytest.approx((c @ [0, 7.0, 0, 0, 0, 3.0])[5])
    assert c[0, 0] == pytest.approx(length / (section.youngs_modulus_pa * np.pi * 0.01**2))
    assert c[3, 3] == pytest.approx(length / (section.shear_modulus_pa * np.pi * 0.01**4 / 2))


def test_wrench_transform_matches_pinocchio_and_composes():
    rng = np.random.default_rng(3)
    t1, t2 = _random_transform(rng), _random_transform(rng)
    w = rng.standard_normal(6)
    expected = pin.SE3(t1[:3, :3], t1[:3, 3]).act(pin.Force(w[:3], w[3:])).vector
    assert np.allclose(wrench_transform_of(t1) @ w, expected, atol=1e-12)
    assert np.allclose(wrench_transform_of(t1 @ t2), wrench_transform_of(t1) @ wrench_transform_of(t2))


def test_planar_joint_deflection_is_the_general_form_for_a_planar_link():
    distal = homogeneous(np.eye(3), [0.8, 0.0, 0.0])
    for delta in (-0.2, 0.03, 0.5):
        assert np.allclose(planar_joint_deflection_transform(0.8, delta),
                           joint_deflection_transform(np.array([0, 0, 1.0]), delta, distal), atol=1e-14)


def test_single_flexible_link_tip_rotation_is_joint_plus_beam_compliance():
    arm = paper_planar_arm(1)
    state = deflect_chain(arm, np.zeros(1), np.array([0, 10.0, 0, 0, 0, 0]))
    ei = 210e9 * np.pi * 0.01**4 / 4
    bend = 10.0 * 1.0**2 / (2 * ei)
    tip_turn = 1e-3 * state.joint_torque_nm[0] + bend
    force_angle = np.arctan2(-state.base_wrench[0], state.base_wrench[1])
    assert force_angle == pytest.approx(tip_turn, rel=1e-9)
    assert state.joint_torque_nm[0] == pytest.approx(10.0 * 1.0, rel=1e-3)  # 10 N at ~1 m


# ------------------------------------------------------------------------- chain equilibrium vs pinocchio

def _pinocchio_equilibrium(robot, q, w_tool, stiffness):
    model, data, fid = robot.model, robot.new_data(), robot.tool_frame_id
    theta = q.copy()
    for _ in range(200):
        jac = pin.computeFrameJacobian(model, data, theta, fid, pin.LOCAL)
        new = q + (jac.T @ w_tool) / stiffness
        if np.max(np.abs(new - theta)) < 1e-15:
            break
        theta = new
    pin.framesForwardKinematics(model, data, theta)
    return theta, data.oMf[fid].act(pin.Force(w_tool[:3], w_tool[3:])).vector


def test_ur3_chain_equilibrium_matches_pinocchio_fixed_point(ur3):
    rng = np.random.default_rng(7)
    stiffness = np.array([800.0, 900.0, 600.0, 300.0, 250.0, 200.0])  # soft, to make deflection visible
    chain = CompliantChain.from_robot_model(ur3, stiffness)
    for _ in range(3):
        q = rng.uniform(-2, 2, 6)
        w_tool = rng.uniform(-20, 20, 6)
        state = deflect_chain(chain, q, w_tool)
        theta, wrench = _pinocchio_equilibrium(ur3, q, w_tool, stiffness)
        assert np.max(np.abs(state.joint_deflection_rad)) > 1e-3
        assert np.allclose(q + state.joint_deflection_rad, theta, atol=1e-10)
        assert np.allclose(state.base_wrench, wrench, atol=1e-9)
        rigid = deflect_chain(chain.rigid(), q, w_tool)
        _, rigid_wrench = _pinocchio_equilibrium(ur3, q, w_tool, np.full(6, np.inf))
        assert np.allclose(rigid.base_wrench, rigid_wrench, atol=1e-10)


# ------------------------------------------------------------------------- G: analytic product vs FD

@pytest.mark.parametrize("n_links", [3, 5])
def test_paper_jacobian_matches_finite_differences_planar(n_links):
    rng = np.random.default_rng(n_links)
    arm = paper_planar_arm(n_links)
    w_e = np.array([0, 10.0, 0, 0, 0, 0])
    for _ in range(3):
        q = rng.uniform(-0.6, 0.6, n_links)
        g = wrench_jacobian(arm, deflect_chain(arm, q, w_e))
        g_fd = wrench_jacobian_fd(arm, q, w_e, frozen_deflection=True)
        assert np.linalg.norm(g - g_fd) <= 1e-6 * np.linalg.norm(g)
        # P4's G neglects how deflections change with q: close to, not equal to, the full derivative.
        g_full = wrench_jacobian_fd(arm, q, w_e, frozen_deflection=False)
        assert 1e-6 < np.linalg.norm(g - g_full) / np.linalg.norm(g) < 0.05


def test_paper_jacobian_matches_finite_differences_ur3_and_non_planar_beams(ur3):
    rng = np.random.default_rng(11)
    chain = CompliantChain.from_robot_model(ur3, UR3_JOINT_STIFFNESS_NM_PER_RAD)
    beam = BeamSection.circular(length_m=0.3, radius_m=0.004)
    dh = CompliantChain.from_dh(a_m=[0.3, 0.3, 0.3], d_m=[0.1, 0.0, 0.05], alpha_rad=[np.pi / 2, 0, -np.pi / 2],
                                joint_stiffness_nm_per_rad=500.0, beams=[beam, beam, beam])
    for arm in (chain, dh):
        q = rng.uniform(-2, 2, arm.n_joints)
        w_e = rng.uniform(-10, 10, 6)
        g = wrench_jacobian(arm, deflect_chain(arm, q, w_e))
        g_fd = wrench_jacobian_fd(arm, q, w_e)
        assert np.linalg.norm(g - g_fd) <= 1e-6 * np.linalg.norm(g)


# ------------------------------------------------------------------------- P4's examples

def test_steepest_descent_step_is_the_exact_line_search_of_eq15():
    ex = PAPER_EXAMPLES["3dof"]
    arm = paper_planar_arm(3)
    q = np.array([0.02, -0.03, 0.01])
    state = deflect_chain(arm, q, ex.sensor_wrench)
    e = ex.desired_base_wrench - state.base_wrench
    g = wrench_jacobian(arm, state)
    d = g.T @ e
    one_step = compensate_steepest_descent(arm, q, ex.sensor_wrench, ex.desired_base_wrench, max_iterations=1,
                                           period_s=0.01)
    step = one_step.lyapunov_history  # V at q0 and after one step
    alpha = np.linspace(0, 2, 4001) * (d @ d) / ((g @ d) @ (g @ d))
    linear_v = [0.5 * np.sum((e - a * (g @ d)) ** 2) for a in alpha]
    best_alpha = alpha[int(np.argmin(linear_v))]
    q1 = q + best_alpha * d
    v1 = 0.5 * np.sum((ex.desired_base_wrench - deflect_chain(arm, q1, ex.sensor_wrench).base_wrench) ** 2)
    assert len(step) == 2 and step[1] == pytest.approx(v1, rel=1e-3)
    assert step[1] < step[0]


@pytest.mark.parametrize("key", ["3dof", "5dof"])
def test_paper_examples_converge_with_both_solvers(key):
    ex = PAPER_EXAMPLES[key]
    arm = paper_planar_arm(ex.n_links)
    e0 = ex.desired_base_wrench - deflect_chain(arm, ex.q_initial_rad, ex.sensor_wrench).base_wrench
    # the default pose is bent (not the degenerate stretched q = 0) and reproduces the paper's e_fx, e_mz
    assert np.min(np.abs(ex.q_initial_rad[1:-1])) >= 0.04
    assert e0[0] == pytest.approx(ex.paper_initial_error[0], abs=1e-6)
    assert e0[5] == pytest.approx(ex.paper_initial_error[5], abs=1e-6)
    assert np.allclose(e0[2:5], 0.0)
    sd = compensate_steepest_descent(arm, ex.q_initial_rad, ex.sensor_wrench, ex.desired_base_wrench)
    lm = compensate_levenberg_marquardt(arm, ex.q_initial_rad, ex.sensor_wrench, ex.desired_base_wrench)
    for result in (sd, lm):
        assert result.converged, result.summary()
        assert result.lyapunov_value <= 1e-6
        assert np.allclose(result.error, ex.desired_base_wrench
                           - deflect_chain(arm, result.q_rad, ex.sensor_wrench).base_wrench)
    # paper-like: steepest descent needs hundreds of steps or more (P4: 335 and 1,427) ...
    assert sd.iterations >= 200
    # ... and the faster solver at most a tenth of them (iterations counted alike: update steps computed)
    assert lm.iterations <= 0.1 * sd.iterations
    assert lm.iterations <= 10


@pytest.mark.parametrize("key", ["3dof", "5dof"])
def test_paper_like_pose_reproduces_the_stated_initial_error_and_the_default(key):
    ex = PAPER_EXAMPLES[key]
    q = paper_like_pose(key)
    np.testing.assert_allclose(q, ex.q_initial_rad, atol=1e-9)
    arm = paper_planar_arm(ex.n_links)
    other = paper_like_pose(key, -0.025)
    e0 = ex.desired_base_wrench - deflect_chain(arm, other, ex.sensor_wrench).base_wrench
    assert e0[[0, 5]] == pytest.approx(ex.paper_initial_error[[0, 5]], abs=1e-9)
    assert other[1] == pytest.approx(-0.025)
    with pytest.raises(ValueError, match="smaller inner_bend_rad"):
        paper_like_pose("3dof", 0.5)


def test_stretched_pose_is_the_degenerate_start():
    """Why the defaults are bent: from q = 0 steepest descent is done almost at once on the 3-DOF arm."""
    ex = PAPER_EXAMPLES["3dof"]
    arm = paper_planar_arm(3)
    sd = compensate_steepest_descent(arm, np.zeros(3), ex.sensor_wrench, ex.desired_base_wrench)
    assert sd.converged and sd.iterations < 10


def test_levenberg_marquardt_needs_at_most_a_tenth_of_steepest_descent_on_slow_poses():
    """Poses of the paper's kind (stretched arm ± 0.05 rad): SD is slow on many, LM never is."""
    ex = PAPER_EXAMPLES["3dof"]
    arm = paper_planar_arm(3)
    rng = np.random.default_rng(2024)
    slow = 0
    for _ in range(4):
        q0 = rng.uniform(-0.05, 0.05, 3)
        sd = compensate_steepest_descent(arm, q0, ex.sensor_wrench, ex.desired_base_wrench)
        lm = compensate_levenberg_marquardt(arm, q0, ex.sensor_wrench, ex.desired_base_wrench)
        assert sd.converged and lm.converged
        assert lm.iterations <= 5
        if sd.iterations >= 50:
            slow += 1
            assert lm.iterations <= 0.1 * sd.iterations
    assert slow >= 1  # the comparison above is not vacuous


# ------------------------------------------------------------------------- unreachable set-points

def test_defective_arm_stops_with_best_error_and_reason():
    two_links = paper_planar_arm(2)  # needs 3 m of reach for a 30 N·m moment with 10 N, has 2 m
    w_e, w_d = np.array([0, 10.0, 0, 0, 0, 0]), np.array([0, 10.0, 0, 0, 0, 30.0])
    q0 = np.array([0.2, -0.3])
    for solver in (compensate_steepest_descent, compensate_levenberg_marquardt):
        result = solver(two_links, q0, w_e, w_d)
        assert not result.converged
        assert "not reached" in result.reason and "reach" in result.reason
        assert result.lyapunov_value < result.initial_lyapunov_value
        assert result.lyapunov_value == pytest.approx(0.5 * 10.0**2, rel=1e-3)  # moment short by 10 N·m
        assert result.lyapunov_value == pytest.approx(np.min(result.lyapunov_history))
        assert result.iterations < 5000


def test_force_magnitude_mismatch_is_named_in_the_reason():
    arm = paper_planar_arm(3)
    result = compensate_levenberg_marquardt(arm, np.zeros(3), np.array([0, 10.0, 0, 0, 0, 0]),
                                            np.array([0, 12.0, 0, 0, 0, 30.0]))
    assert not result.converged and "force magnitude" in result.reason


def test_iteration_limit_is_reported():
    ex = PAPER_EXAMPLES["5dof"]
    arm = paper_planar_arm(5)
    result = compensate_steepest_descent(arm, ex.q_initial_rad, ex.sensor_wrench, ex.desired_base_wrench,
                                         max_iterations=10)
    assert not result.converged and "iteration limit" in result.reason and result.iterations == 10


# ------------------------------------------------------------------------- UR3 contact with compliant joints

def test_ur3_correction_reduces_world_frame_force_error(ur3):
    stiffness = UR3_JOINT_STIFFNESS_NM_PER_RAD / 4  # softer than the default, a worn or light arm
    q_contact = np.array([0.3, -1.2, 1.4, -1.77, -1.57, 0.2])
    pin.framesForwardKinematics(ur3.model, data := ur3.new_data(), q_contact)
    p_tool = data.oMf[ur3.tool_frame_id].translation
    force = np.array([10.0, -5.0, 40.0])  # surface pushes up on the tool, plus friction
    desired = np.concatenate([force, np.cross(p_tool, force)])  # that force at the tool point, base axes
    chain = CompliantChain.from_robot_model(ur3, stiffness)
    w_tool = rigid_sensor_wrench(chain, q_contact, desired)  # what a rigid-model force loop holds

    _, before = _pinocchio_equilibrium(ur3, q_contact, w_tool, stiffness)
    result = ur_force_setpoint_correction(ur3, q_contact, None, desired, stiffness)
    _, after = _pinocchio_equilibrium(ur3, result.q_rad, w_tool, stiffness)
    error_before = np.linalg.norm((desired - before)[:3])
    error_after = np.linalg.norm((desired - after)[:3])
    assert result.converged, result.summary()
    assert error_before > 0.1  # the compliant joints really do turn the force
    assert error_after < 0.01 * error_before
    assert np.linalg.norm(desired - after) < 0.01 * np.linalg.norm(desired - before)
    assert np.max(np.abs(result.correction_rad)) < 0.05  # a small set-point correction


def test_ur3_correction_with_default_stiffness_and_steepest_descent(ur3):
    q = np.array([0.0, -1.0, 1.2, -1.8, -1.57, 0.0])
    desired = np.array([0.0, 0.0, 30.0, 0.0, 0.0, 0.0])
    lm = ur_force_setpoint_correction(ur3, q, None, desired)
    sd = ur_force_setpoint_correction(ur3, q, None, desired, method="steepest-descent", max_iterations=3000)
    for result in (lm, sd):
        assert result.converged and result.lyapunov_value < result.initial_lyapunov_value
    assert lm.iterations <= sd.iterations


# ------------------------------------------------------------------------- input validation

def test_clear_errors_for_bad_inputs(ur3):
    arm = paper_planar_arm(3)
    w = np.array([0, 10.0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="3 angles"):
        compensate_levenberg_marquardt(arm, np.zeros(2), w, w)
    with pytest.raises(ValueError, match="6 finite numbers"):
        compensate_steepest_descent(arm, np.zeros(3), w[:5], w)
    with pytest.raises(ValueError, match="positive definite"):
        compensate_steepest_descent(arm, np.zeros(3), w, w, weight=-np.eye(6))
    with pytest.raises(ValueError, match="stiffness must be > 0"):
        CompliantChain.from_robot_model(ur3, np.array([1e4, 1e4, 0.0, 1e3, 1e3, 1e3]))
    with pytest.raises(ValueError, match="one value per joint"):
        ur_force_setpoint_correction(ur3, np.zeros(6), None, w, np.ones(5))
    with pytest.raises(ValueError, match="method"):
        ur_force_setpoint_correction(ur3, np.zeros(6), None, w, method="newton")


def test_limiting_matrix_s_and_weight_keep_convergence():
    ex = PAPER_EXAMPLES["3dof"]
    arm = paper_planar_arm(3)
    q0 = np.array([0.03, -0.02, 0.01])
    limited = compensate_steepest_descent(arm, q0, ex.sensor_wrench, ex.desired_base_wrench,
                                          max_direction_component=0.5, weight=np.array([1, 1, 1, 1, 1, 4.0]))
    assert limited.converged, limited.summary()
    rigid = CompliantChain.from_dh(a_m=[1.0, 1.0, 1.0], d_m=0.0, alpha_rad=0.0, joint_stiffness_nm_per_rad=np.inf)
    state = deflect_chain(rigid, np.zeros(3), ex.sensor_wrench)
    assert np.allclose(state.base_wrench, ex.desired_base_wrench) and not np.any(state.joint_deflection_rad)


def test_online_force_setpoint_meets_the_world_wrench_on_the_deflected_chain(ur3):
    """CompliantJointForceCorrection (pinocchio fixed point) checked with the independent chain recursion."""
    stiffness = UR3_JOINT_STIFFNESS_NM_PER_RAD / 10
    q = np.array([0.3, -1.2, 1.4, -1.77, -1.57, 0.2])
    pin.framesForwardKinematics(ur3.model, data := ur3.new_data(), q)
    force = np.array([10.0, -5.0, 40.0])
    desired = np.concatenate([force, np.cross(data.oMf[ur3.tool_frame_id].translation, force)])
    chain = CompliantChain.from_robot_model(ur3, stiffness)
    rigid_hold = rigid_sensor_wrench(chain, q, desired)
    before = desired - deflect_chain(chain, q, rigid_hold).base_wrench
    result = compliant_force_setpoint(ur3, q, None, desired, stiffness)
    state = deflect_chain(chain, q, result.sensor_wrench_setpoint)
    after = desired - state.base_wrench
    assert np.linalg.norm(before[:3]) > 1.0  # 10x softer joints turn the 41 N force by > 1 N
    assert np.linalg.norm(after) < 1e-5 * np.linalg.norm(before)
    np.testing.assert_allclose(result.joint_deflection_rad, state.joint_deflection_rad, atol=1e-7)  # 3 fixed-point steps
    np.testing.assert_allclose(result.correction_matrix @ rigid_hold, result.sensor_wrench_setpoint, atol=1e-3)
    with pytest.raises(ValueError, match="6 finite joint angles"):
        compliant_force_setpoint(ur3, np.zeros(5), desired, desired, stiffness)


# ------------------------------------------------------------------------- link flexibility on the UR3, SD variants

def test_tube_section_and_ur3_link_beams_deflect_like_a_cantilever(ur3):
    from robot_dynamics_id.control.flexible import ur3_link_beams

    tube = BeamSection.tube(length_m=0.25, outer_diameter_m=0.06, wall_m=0.003)
    j = np.pi * (0.03**4 - 0.027**4) / 4
    assert np.isclose(tube.second_moment_y_m4, j) and np.isclose(tube.polar_moment_m4, 2 * j)
    with pytest.raises(ValueError, match="wall"):
        BeamSection.tube(length_m=0.2, outer_diameter_m=0.05, wall_m=0.03)
    beams = ur3_link_beams(ur3)
    chain = CompliantChain.from_robot_model(ur3, None, link_beams=beams)
    q = np.array([0.3, -1.2, 1.4, -1.77, -1.57, 0.2])
    w = np.array([1.0, -3.0, 40.0, 0.5, 0.2, 0.1])
    state = deflect_chain(chain, q, w)
    # the upper arm (segment 1) under its tip load: the cantilever's own tip deflection, along the beam's axes
    seg = chain.segments[1]
    rb = seg.beam_rotation
    load = state.distal_load_wrenches[1]
    expected = beam_compliance_matrix(beams[1]) @ np.r_[rb.T @ load[:3], rb.T @ load[3:]]
    assert np.allclose(state.link_deflection[1], np.r_[rb @ expected[:3], rb @ expected[3:]])
    # the beam's x axis points from the shoulder-lift joint to the elbow (the distal frame's -x for the UR3)
    assert np.allclose(seg.distal_transform[:3, :3] @ rb[:, 0], seg.distal_transform[:3, 3] / 0.24365, atol=1e-9)
    assert 1e-6 < np.linalg.norm(state.link_deflection[1, :3]) < 1e-3  # micrometres, not millimetres
    g = wrench_jacobian(chain, state)
    assert np.allclose(g, wrench_jacobian_fd(chain, q, w), atol=1e-6 * np.linalg.norm(g))
    with pytest.raises(ValueError, match="give its beam that length"):
        CompliantChain.from_robot_model(ur3, None, link_beams={1: BeamSection.tube(length_m=0.3, outer_diameter_m=0.06,
                                                                                  wall_m=0.003)})


def test_steepest_descent_variants_reach_the_same_set_point():
    ex = PAPER_EXAMPLES["3dof"]
    arm = paper_planar_arm(3)
    args = (arm, ex.q_initial_rad, ex.sensor_wrench, ex.desired_base_wrench)
    damped = compensate_steepest_descent(*args, step_scale=0.5, max_iterations=3000)
    limited = compensate_steepest_descent(*args, max_direction_component=0.003, max_iterations=3000)
    assert damped.converged and limited.converged
    assert damped.lyapunov_value <= 1e-6 and limited.lyapunov_value <= 1e-6
    with pytest.raises(ValueError, match="step_scale"):
        compensate_steepest_descent(*args, step_scale=0.0)
    with pytest.raises(ValueError, match="jacobian"):
        compensate_steepest_descent(*args, jacobian="secant")
