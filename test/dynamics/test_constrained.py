"""Projection-matrix constrained dynamics (Aghili P5): projector, inertia matrices, dynamics, control laws."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.constrained import (
    consistent_acceleration,
    constrained_forward_dynamics,
    constraint_force,
    constraint_force_pi,
    constraint_force_torque,
    constraint_inertia_matrix,
    constraint_multipliers,
    correct_constraint_drift,
    inertia_decoupling_defect,
    null_space_projector,
    parameterised_constraint_inertia_matrix,
    passive_joint_force_torque,
    passive_joint_torque,
    passive_joints_controllable,
    project_velocity,
    projected_inverse_dynamics,
    symmetric_constraint_inertia_matrix,
    weighted_projected_inverse_dynamics,
)

RNG = np.random.default_rng(7)


def random_spd(n):
    x = RNG.normal(size=(n, n))
    return x @ x.T + n * np.eye(n)


def kkt_solution(m, h, tau, a, b):
    """Independent reference for full-rank A: M qdd = tau - h + A^T lam, A qdd = -b."""
    k = a.shape[0]
    sol = np.linalg.solve(np.block([[m, -a.T], [a, np.zeros((k, k))]]), np.concatenate([tau - h, -b]))
    return sol[: m.shape[0]], sol[m.shape[0]:]


@pytest.mark.parametrize("a", [
    RNG.normal(size=(2, 5)),                              # full row rank
    np.vstack([np.ones(4), 2 * np.ones(4), [1, 0, 0, 0]]),  # redundant rows (rank 2)
    np.zeros((1, 3)),                                     # vanished constraint (singular configuration)
])
def test_projector_is_the_orthogonal_null_space_projector(a):
    proj = null_space_projector(a)
    p = proj.projector
    assert np.allclose(p, p.T) and np.allclose(p @ p, p)
    assert np.allclose(a @ p, 0.0, atol=1e-12)
    assert proj.rank == np.linalg.matrix_rank(a)
    assert np.allclose(proj.pseudo_inverse, np.linalg.pinv(a), atol=1e-12)
    assert np.allclose(p, np.eye(a.shape[1]) - np.linalg.pinv(a) @ a, atol=1e-12)


def test_rank_tolerance_drops_tiny_singular_values():
    a = np.array([[1.0, 0.0, 0.0], [0.0, 1e-11, 0.0]])
    assert null_space_projector(a).rank == 1
    assert null_space_projector(a, rank_tolerance=1e-12).rank == 2
    assert np.abs(null_space_projector(a).pseudo_inverse).max() <= 1.0
    with pytest.raises(ValueError, match="rank_tolerance"):
        null_space_projector(a, rank_tolerance=-1.0)


@pytest.mark.parametrize("a", [RNG.normal(size=(2, 4)), np.zeros((1, 4)), np.vstack([np.ones(4)] * 3)])
def test_constraint_inertia_matrices_are_invertible_even_when_a_is_singular(a):
    m = random_spd(4)
    p = null_space_projector(a).projector
    mc = constraint_inertia_matrix(m, p)
    # P M - M P is skew-symmetric: the quadratic form of M_c is that of M (eqs. 23-24).
    assert np.allclose((mc - m) + (mc - m).T, 0.0, atol=1e-12)
    x = RNG.normal(size=4)
    assert np.isclose(x @ mc @ x, x @ m @ x)
    ms = symmetric_constraint_inertia_matrix(m, p)
    assert np.allclose(ms, ms.T) and np.all(np.linalg.eigvalsh(ms) > 0)
    ml = parameterised_constraint_inertia_matrix(m, p)
    for mat in (mc, ms, ml):
        assert np.linalg.cond(mat) < 1e3


def test_forward_dynamics_forms_agree_with_the_augmented_solution_for_full_rank_a():
    n = 5
    m, a = random_spd(n), RNG.normal(size=(2, n))
    h, tau, b = RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=2)
    qdd_ref, lam_ref = kkt_solution(m, h, tau, a, b)
    for form in ("c", "s", "lambda"):
        qdd = constrained_forward_dynamics(m, h, tau, a, b, inertia_form=form)
        assert np.allclose(qdd, qdd_ref, atol=1e-10), form
    tau_c = constraint_force(m, h, tau, qdd_ref, null_space_projector(a).projector)
    assert np.allclose(tau_c, a.T @ lam_ref, atol=1e-10)  # eq. (32)
    assert np.allclose(constraint_multipliers(tau_c, a), lam_ref, atol=1e-10)
    with pytest.raises(ValueError, match="inertia_form"):
        constrained_forward_dynamics(m, h, tau, a, b, inertia_form="x")


def test_forward_dynamics_with_redundant_constraints_matches_the_reduced_set():
    n = 4
    m, a = random_spd(n), RNG.normal(size=(1, n))
    h, tau, qd = RNG.normal(size=n), RNG.normal(size=n), RNG.normal(size=n)
    b = np.array([0.3])
    single = constrained_forward_dynamics(m, h, tau, a, b)
    redundant = constrained_forward_dynamics(m, h, tau, np.vstack([a, 2 * a]), np.array([0.3, 0.6]))
    assert np.allclose(single, redundant, atol=1e-12)
    # The augmented matrix is singular for the redundant set.
    kkt = np.block([[m, -np.vstack([a, 2 * a]).T], [np.vstack([a, 2 * a]), np.zeros((2, 2))]])
    assert np.linalg.cond(kkt) > 1e15
    # Admissible velocities: P qd is annihilated by A (eq. 12).
    assert np.allclose(a @ project_velocity(qd, null_space_projector(a).projector), 0.0, atol=1e-12)


def test_drift_correction_converges_quadratically_along_the_normal():
    # Circle constraint phi = |q|^2 - 1 in 2-D; the minimum-norm correction is radial.
    def phi(q):
        return np.array([q @ q - 1.0])

    def jac(q):
        return 2.0 * q[None, :]

    start = np.array([1.3, 0.4])
    fix = correct_constraint_drift(start, phi, jac)
    assert fix.converged and fix.constraint_error < 1e-12 and fix.iterations <= 6
    assert np.allclose(fix.joint_position / np.linalg.norm(fix.joint_position), start / np.linalg.norm(start))
    errors = [abs(phi(correct_constraint_drift(start, phi, jac, max_iterations=k).joint_position)[0]) for k in (1, 2, 3)]
    assert errors[2] < 10 * errors[1] ** 2  # quadratic convergence
    untouched = correct_constraint_drift(np.array([1.0, 0.0]), phi, jac)
    assert untouched.iterations == 0 and untouched.converged


def test_pidc_realises_the_reference_with_minimum_norm_torque():
    n = 4
    m, a = random_spd(n), RNG.normal(size=(1, n))
    h, b = RNG.normal(size=n), RNG.normal(size=1)
    proj = null_space_projector(a)
    qdd_ref = consistent_acceleration(RNG.normal(size=n), proj, b)
    assert np.allclose(a @ qdd_ref, -b)  # eq. (13)
    tau = projected_inverse_dynamics(m, h, qdd_ref, proj.projector)
    assert np.allclose(constrained_forward_dynamics(m, h, tau, a, b), qdd_ref, atol=1e-10)
    for _ in range(100):
        other = tau + proj.normal_projector @ RNG.normal(scale=5.0, size=n)
        assert np.allclose(constrained_forward_dynamics(m, h, other, a, b), qdd_ref, atol=1e-9)
        assert np.linalg.norm(other) >= np.linalg.norm(tau) - 1e-12


def test_weighted_pidc_minimises_the_weighted_norm_and_keeps_the_motion():
    n = 3
    m, a = random_spd(n), RNG.normal(size=(1, n))
    h, b = RNG.normal(size=n), RNG.normal(size=1)
    proj = null_space_projector(a)
    qdd_ref = consistent_acceleration(RNG.normal(size=n), proj, b)
    w = np.array([1 / 0.3, 1.0, 1 / 0.05])  # e.g. two revolute joints (1/l) and a prismatic one
    tau_w = weighted_projected_inverse_dynamics(m, h, qdd_ref, a, w)
    assert np.allclose(constrained_forward_dynamics(m, h, tau_w, a, b), qdd_ref, atol=1e-10)
    for _ in range(100):
        other = tau_w + proj.normal_projector @ RNG.normal(scale=5.0, size=n)
        assert np.linalg.norm(w * other) >= np.linalg.norm(w * tau_w) - 1e-12
    assert np.allclose(weighted_projected_inverse_dynamics(m, h, qdd_ref, a, np.ones(n)),
                       projected_inverse_dynamics(m, h, qdd_ref, proj.projector))
    with pytest.raises(ValueError, match="torque_weights"):
        weighted_projected_inverse_dynamics(m, h, qdd_ref, a, np.array([1.0, 0.0, 1.0]))


def test_constraint_force_control_sets_the_force_without_touching_the_motion():
    n = 4
    m, a = random_spd(n), RNG.normal(size=(1, n))
    h, b = RNG.normal(size=n), RNG.normal(size=1)
    proj = null_space_projector(a)
    qdd_ref = consistent_acceleration(RNG.normal(size=n), proj, b)
    motion = projected_inverse_dynamics(m, h, qdd_ref, proj.projector)
    for lam_cmd in (np.array([-3.0]), np.array([0.0]), np.array([12.5])):
        tau = motion + constraint_force_torque(m, h, qdd_ref, proj, a, lam_cmd)
        qdd = constrained_forward_dynamics(m, h, tau, a, b)
        assert np.allclose(qdd, qdd_ref, atol=1e-10)
        lam = constraint_multipliers(constraint_force(m, h, tau, qdd, proj.projector), a)
        assert np.allclose(lam, lam_cmd, atol=1e-9)


def test_force_pi_integrates_the_error():
    lam, integral = constraint_force_pi([10.0], [8.0], [0.0], proportional_gain=0.5, integral_gain_per_s=20.0,
                                        period_s=0.01)
    assert np.allclose(integral, [0.02]) and np.allclose(lam, [10.0 + 1.0 + 0.4])
    with pytest.raises(ValueError, match="period_s"):
        constraint_force_pi([1.0], [1.0], [0.0], proportional_gain=0, integral_gain_per_s=0, period_s=0.0)


def test_passive_joint_torque_is_zero_on_passive_joints_and_realises_the_motion():
    n = 3
    m = random_spd(n)
    a = np.array([[0.3, 1.0, -0.5], [0.2, -0.4, 1.0]])  # two constraints, one actuator is enough
    h, b = RNG.normal(size=n), RNG.normal(size=2)
    proj = null_space_projector(a)
    qdd_ref = consistent_acceleration(RNG.normal(size=n), proj, b)
    actuated = np.array([True, False, False])
    assert passive_joints_controllable(proj.projector, actuated)
    sol = passive_joint_torque(m, h, qdd_ref, proj, actuated)
    assert sol.controllable and sol.passive_residual < 1e-10
    assert np.allclose(sol.torque[1:], 0.0, atol=1e-10)
    assert np.allclose(constrained_forward_dynamics(m, h, sol.torque, a, b), qdd_ref, atol=1e-9)
    # With the constraint gone (A = 0) nothing carries the passive joints: not controllable.
    free = null_space_projector(np.zeros((1, n)))
    assert not passive_joints_controllable(free.projector, actuated)
    bad = passive_joint_torque(m, h, RNG.normal(size=n), free, actuated)
    assert not bad.controllable and bad.passive_residual > 1e-3


def _constraint_force_of(m, h, tau, a, b):
    proj = null_space_projector(a)
    return constraint_force(m, h, tau, constrained_forward_dynamics(m, h, tau, a, b), proj.projector)


def test_decoupling_defect_is_zero_exactly_when_the_motion_torque_leaves_the_constraint_force_alone():
    n = 4
    a = RNG.normal(size=(2, n))
    proj = null_space_projector(a)
    p, q = proj.projector, proj.normal_projector
    h, b = RNG.normal(size=n), RNG.normal(size=2)
    tangent_push = p @ RNG.normal(size=n)
    # an inertia matrix that commutes with P: blocks on the tangent and normal spaces
    x, y = random_spd(n), random_spd(n)
    commuting = p @ x @ p + q @ y @ q
    assert inertia_decoupling_defect(commuting, p) < 1e-12
    tau = RNG.normal(size=n)
    assert np.allclose(_constraint_force_of(commuting, h, tau, a, b),
                       _constraint_force_of(commuting, h, tau + tangent_push, a, b), atol=1e-10)
    general = random_spd(n)
    assert inertia_decoupling_defect(general, p) > 1e-3
    assert not np.allclose(_constraint_force_of(general, h, tau, a, b),
                           _constraint_force_of(general, h, tau + tangent_push, a, b), atol=1e-6)


def test_passive_joint_force_torque_realises_motion_and_the_force_the_passive_joints_allow():
    n = 4
    m, h = random_spd(n), RNG.normal(size=n)
    a = RNG.normal(size=(2, n))
    b = RNG.normal(size=2)
    proj = null_space_projector(a)
    qdd_ref = consistent_acceleration(RNG.normal(size=n), proj, b)
    lam_cmd = np.array([3.0, -2.0])
    # all actuated: PIDC + eqs. (51), (52), the whole commanded force
    full = passive_joint_force_torque(m, h, qdd_ref, a, np.ones(n, bool), lam_cmd)
    expected = projected_inverse_dynamics(m, h, qdd_ref, proj.projector) + constraint_force_torque(
        m, h, qdd_ref, proj, a, lam_cmd)
    assert np.allclose(full.torque, expected, atol=1e-9) and full.controllable_directions.shape == (2, 2)
    # one passive joint: one force direction left, the motion still exact, torque zero on that joint
    actuated = np.array([True, True, True, False])
    one = passive_joint_force_torque(m, h, qdd_ref, a, actuated, lam_cmd)
    assert one.controllable_directions.shape == (2, 1) and one.passive_residual < 1e-9
    assert np.allclose(constrained_forward_dynamics(m, h, one.torque, a, b), qdd_ref, atol=1e-9)
    realised = constraint_multipliers(_constraint_force_of(m, h, one.torque, a, b), a)
    assert np.allclose(realised, one.multipliers, atol=1e-8)
    e = one.controllable_directions[:, 0]
    assert np.isclose(e @ realised, e @ lam_cmd, atol=1e-8)
    # two passive joints (as many as constraints): the motion alone sets the force, same torque as eqs. (55)-(62)
    two = passive_joint_force_torque(m, h, qdd_ref, a, np.array([True, False, True, False]), lam_cmd)
    assert two.controllable_directions.shape == (2, 0)
    assert np.allclose(two.torque, passive_joint_torque(m, h, qdd_ref, proj, np.array([True, False, True, False])).torque,
                       atol=1e-8)


def test_shape_errors_name_the_argument():
    with pytest.raises(ValueError, match="mass_matrix"):
        constraint_inertia_matrix(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match="torque"):
        constrained_forward_dynamics(np.eye(2), np.zeros(2), np.zeros(3), np.ones((1, 2)), [0.0])
    with pytest.raises(ValueError, match="NaN"):
        null_space_projector(np.array([[np.nan, 1.0]]))
