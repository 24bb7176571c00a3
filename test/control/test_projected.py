"""Projected hybrid force/motion law (Aghili P5 eqs. 45-52) on a planar 3-link arm whose tip slides on a table.

The plant is the constrained direct dynamics of sim/constrained_simulation.py (eq. 22); the
controller knows the model exactly unless a test says otherwise.
"""

import numpy as np
import pytest

from robot_dynamics_id.control.projected import pd_reference_acceleration, projected_hybrid_torque
from robot_dynamics_id.dynamics.constrained import constraint_force_pi, null_space_projector
from robot_dynamics_id.sim.constrained_simulation import simulate_constrained
from robot_dynamics_id.sim.planar_mechanisms import PlanarSerialChain, TipOnLineSystem

TABLE_Y_M = -0.2
STEP_S = 2e-3


def arm_on_table(mass_scale: float = 1.0) -> TipOnLineSystem:
    masses = np.array([2.0, 1.5, 0.5]) * mass_scale
    lengths = np.array([0.4, 0.35, 0.2])
    chain = PlanarSerialChain(link_length_m=lengths, link_mass_kg=masses, com_distance_m=lengths / 2,
                              com_inertia_kgm2=masses * lengths**2 / 12)
    # Table top below the arm; outward normal +y, so lambda > 0 = tip pressing down on it.
    return TipOnLineSystem(chain=chain, line_normal=np.array([0.0, 1.0]), line_point_m=np.array([0.0, TABLE_Y_M]))


def inverse_kinematics(x: float, y: float, psi: float) -> np.ndarray:
    l1, l2, l3 = 0.4, 0.35, 0.2
    wx, wy = x - l3 * np.cos(psi), y - l3 * np.sin(psi)
    q2 = -np.arccos((wx**2 + wy**2 - l1**2 - l2**2) / (2 * l1 * l2))
    q1 = np.arctan2(wy, wx) - np.arctan2(l2 * np.sin(q2), l1 + l2 * np.cos(q2))
    return np.array([q1, q2, psi - q1 - q2])


def task(system, q, qd):
    """Task coordinates z = (x_tip, y_tip, psi), Jacobian and Jdot qd."""
    pos, jac, acc = system.chain.tip(q, qd)
    return (np.array([pos[0], pos[1], np.sum(q)]), np.vstack([jac, np.ones(3)]),
            np.array([acc[0], acc[1], 0.0]))


def desired(t, x_step_m=0.0, step_time_s=np.inf):
    x = 0.5 + 0.08 * np.sin(2 * t) + (x_step_m if t >= step_time_s else 0.0)
    psi = -np.pi / 2 + 0.2 * np.sin(3 * t)
    return (np.array([x, TABLE_Y_M, psi]), np.array([0.16 * np.cos(2 * t), 0.0, 0.6 * np.cos(3 * t)]),
            np.array([-0.32 * np.sin(2 * t), 0.0, -1.8 * np.sin(3 * t)]))


def hybrid_law(model, force_of_t, x_step_m=0.0, step_time_s=np.inf, pi_gain_per_s=0.0, weights=None):
    integral = {"e": np.zeros(1)}

    def law(t, q, qd, last_lambda):
        z, jz, jdqd = task(model, q, qd)
        z_d, zd_d, zdd_d = desired(t, x_step_m, step_time_s)
        zdd_ref = pd_reference_acceleration(z_d, zd_d, zdd_d, z, jz @ qd, stiffness_per_s2=400.0, damping_per_s=40.0)
        zdd_ref[1] = 0.0  # normal direction: the constraint decides
        qdd_ref = np.linalg.solve(jz, zdd_ref - jdqd)
        m, h, a, adot_qd = model.terms(q, qd)
        lam_cmd = np.atleast_1d(force_of_t(t))
        if pi_gain_per_s:
            lam_cmd, integral["e"] = constraint_force_pi(lam_cmd, last_lambda, integral["e"], proportional_gain=0.0,
                                                         integral_gain_per_s=pi_gain_per_s, period_s=STEP_S)
        return projected_hybrid_torque(m, h, a, adot_qd, qdd_ref, lam_cmd, joint_weights=weights).torque_nm

    return law


def run(law, duration_s=1.0, sample_and_hold=False):
    system = arm_on_table()
    q0 = inverse_kinematics(*desired(0.0)[0])
    qd0 = np.linalg.solve(task(system, q0, np.zeros(3))[1], desired(0.0)[1])
    return simulate_constrained(system, q0, qd0, duration_s=duration_s, step_s=STEP_S, torque_law=law,
                                sample_and_hold=sample_and_hold)


def task_error(sim, x_step_m=0.0, step_time_s=np.inf):
    system = arm_on_table()
    err = [task(system, q, qd)[0] - desired(t, x_step_m, step_time_s)[0] for t, q, qd in zip(sim.time_s, sim.q, sim.qd)]
    return np.abs(np.array(err))


def test_tracks_motion_and_commanded_force():
    sim = run(hybrid_law(arm_on_table(), lambda t: 8.0))
    err = task_error(sim)
    assert err[:, 0].max() < 1e-3 and err[:, 2].max() < 1e-3  # x (m) and tool angle (rad)
    assert sim.constraint_error_m.max() < 1e-9
    assert np.abs(sim.multiplier[:, 0] - 8.0).max() < 1e-6


def test_force_step_does_not_move_the_arm():
    # Continuous-time control law: the decoupling is exact.
    constant = run(hybrid_law(arm_on_table(), lambda t: 8.0), duration_s=0.6)
    stepped = run(hybrid_law(arm_on_table(), lambda t: 8.0 if t < 0.3 else 20.0), duration_s=0.6)
    assert np.abs(stepped.multiplier[-1, 0] - 20.0) < 1e-6
    assert np.abs(stepped.q - constant.q).max() < 1e-9


def test_sampled_force_step_moves_the_arm_only_at_sample_rate_order():
    # Torque held over each 2 ms step: P(q) turns within the step, so part of the force
    # torque leaks into the motion; the leak is small and shrinks with the period.
    constant = run(hybrid_law(arm_on_table(), lambda t: 8.0), duration_s=0.6, sample_and_hold=True)
    stepped = run(hybrid_law(arm_on_table(), lambda t: 8.0 if t < 0.3 else 20.0), duration_s=0.6,
                  sample_and_hold=True)
    leak = np.abs(stepped.q - constant.q).max()
    assert 1e-9 < leak < 1e-3


def test_motion_step_does_not_change_the_force():
    sim = run(hybrid_law(arm_on_table(), lambda t: 8.0, x_step_m=0.02, step_time_s=0.3), duration_s=0.6)
    assert task_error(sim, 0.02, 0.3)[150, 0] > 0.01  # the step did disturb the motion ...
    assert np.abs(sim.multiplier[:, 0] - 8.0).max() < 1e-6  # ... and not the contact force


def test_force_pi_removes_model_error():
    # Controller believes every link is 20 % heavier: open loop the force is off.
    wrong_model = arm_on_table(mass_scale=1.2)
    # A digital PI (one update per 2 ms sample, force measured one sample late).
    open_loop = run(hybrid_law(wrong_model, lambda t: 8.0), duration_s=0.8, sample_and_hold=True)
    closed = run(hybrid_law(wrong_model, lambda t: 8.0, pi_gain_per_s=50.0), duration_s=0.8, sample_and_hold=True)
    assert np.abs(open_loop.multiplier[-50:, 0] - 8.0).max() > 0.1
    assert np.abs(closed.multiplier[-50:, 0] - 8.0).max() < 0.1 * np.abs(open_loop.multiplier[-50:, 0] - 8.0).max()


def test_motion_torque_has_minimum_norm_and_weighting_keeps_the_motion():
    system = arm_on_table()
    rng = np.random.default_rng(1)
    q = inverse_kinematics(0.45, TABLE_Y_M, -1.3)
    qd = null_space_projector(system.constraint_jacobian(q)).projector @ rng.normal(size=3)
    m, h, a, b = system.terms(q, qd)
    qdd_ref = rng.normal(size=3)
    plain = projected_hybrid_torque(m, h, a, b, qdd_ref)
    weights = np.array([1 / 0.4, 1 / 0.35, 1 / 0.2])
    weighted = projected_hybrid_torque(m, h, a, b, qdd_ref, joint_weights=weights)
    normal = np.eye(3) - plain.projector
    for _ in range(200):
        xi = normal @ rng.normal(scale=10.0, size=3)
        assert np.linalg.norm(plain.torque_nm + xi) >= np.linalg.norm(plain.torque_nm) - 1e-12
        assert np.linalg.norm(weights * (weighted.torque_nm + xi)) >= np.linalg.norm(weights * weighted.torque_nm) - 1e-12
    # Same motion: the torques differ only in the constraint-normal space.
    assert np.allclose(plain.projector @ (weighted.torque_nm - plain.torque_nm), 0.0, atol=1e-12)
    assert not np.allclose(weighted.torque_nm, plain.torque_nm)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="columns"):
        projected_hybrid_torque(np.eye(3), np.zeros(3), np.ones((1, 2)), [0.0], np.zeros(3))
    with pytest.raises(ValueError, match="commanded_force"):
        projected_hybrid_torque(np.eye(3), np.zeros(3), np.ones((1, 3)), [0.0], np.zeros(3), [1.0, 2.0])
