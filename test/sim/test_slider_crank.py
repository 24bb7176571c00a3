"""The P5 slider-crank (equal crank and rod) simulated and controlled through its singular configuration."""

import numpy as np

from robot_dynamics_id.scenarios.slider_crank import CrankTrajectory, crank_tracking_law, min_norm_check, singular_start
from robot_dynamics_id.sim.constrained_simulation import augmented_matrix, simulate_augmented, simulate_constrained
from robot_dynamics_id.sim.planar_mechanisms import (
    PlanarSerialChain,
    RedundantConstraints,
    slider_crank,
    slider_crank_branch_state,
)

RNG = np.random.default_rng(3)


def lagrangian_bias(chain: PlanarSerialChain, q, qd, eps=1e-6):
    """c + g from finite differences of M and V (independent of the Kane-form code)."""
    n = q.size
    dm = [(chain.mass_matrix(q + eps * e) - chain.mass_matrix(q - eps * e)) / (2 * eps) for e in np.eye(n)]
    coriolis = sum(dm[k] * qd[k] for k in range(n)) @ qd - 0.5 * np.array([qd @ dm[k] @ qd for k in range(n)])
    gravity = np.array([(chain.potential_energy(q + eps * e) - chain.potential_energy(q - eps * e)) / (2 * eps)
                        for e in np.eye(n)])
    return coriolis + gravity


def test_chain_dynamics_match_the_lagrangian():
    chain = PlanarSerialChain(link_length_m=[0.4, 0.3, 0.2], link_mass_kg=[2.0, 1.0, 0.5],
                              com_distance_m=[0.2, 0.1, 0.15], com_inertia_kgm2=[0.03, 0.01, 0.002], tip_mass_kg=0.3)
    q, qd = RNG.normal(size=3), RNG.normal(size=3)
    assert np.allclose(chain.bias_torque(q, qd), lagrangian_bias(chain, q, qd), atol=1e-7)
    m = chain.mass_matrix(q)
    assert np.allclose(m, m.T) and np.all(np.linalg.eigvalsh(m) > 0)


def test_constraint_jacobian_and_bias_match_finite_differences():
    system = slider_crank()
    q, qd = RNG.normal(size=2), RNG.normal(size=2)
    eps = 1e-6
    a_fd = np.array([(system.constraint(q + eps * e) - system.constraint(q - eps * e)) / (2 * eps) for e in np.eye(2)]).T
    assert np.allclose(system.constraint_jacobian(q), a_fd, atol=1e-8)
    adot = (system.constraint_jacobian(q + eps * qd) - system.constraint_jacobian(q - eps * qd)) / (2 * eps)
    assert np.allclose(system.constraint_bias_acceleration(q, qd), adot @ qd, atol=1e-7)


def test_the_folded_configuration_is_singular():
    system = slider_crank()
    q, _ = singular_start()
    assert np.abs(system.constraint_jacobian(q)).max() < 1e-15
    assert np.linalg.cond(augmented_matrix(system.mass_matrix(q), system.constraint_jacobian(q))) > 1e15


def test_free_motion_through_the_singularity_conserves_energy_and_the_constraint():
    system = slider_crank()
    q0, qd0 = singular_start(6.0)
    sim = simulate_constrained(system, q0, qd0, duration_s=1.2, step_s=1e-3)
    assert sim.completed
    # It really went through singular configurations (start, top, bottom again).
    assert np.sum(sim.min_singular_value < 1e-2) >= 3 and sim.min_singular_value.min() < 1e-12
    assert sim.constraint_error_m.max() <= 1e-9
    kinetic0 = system.chain.kinetic_energy(q0, qd0)
    assert np.abs(sim.energy_j - sim.energy_j[0]).max() / kinetic0 <= 1e-6
    assert sim.constraint_inertia_condition.max() < 100.0
    # It stays on the ordinary branch (slider passes the pivot; rod angle = -2 crank angle).
    assert np.abs(sim.q[:, 1] + 2 * sim.q[:, 0]).max() < 1e-9
    assert sim.q[-1, 0] - sim.q[0, 0] > 2 * np.pi  # full turns


def test_augmented_baseline_is_singular_where_the_projection_is_not():
    system = slider_crank()
    q0, qd0 = singular_start(6.0)
    aug = simulate_augmented(system, q0, qd0, duration_s=0.05, step_s=1e-3)
    proj = simulate_constrained(system, q0, qd0, duration_s=0.05, step_s=1e-3)
    assert aug.constraint_inertia_condition[0] > 1e15  # numerically singular KKT matrix
    assert proj.constraint_inertia_condition[0] < 10.0
    # Redundant constraints: the augmented formulation cannot even start; the projection is unaffected.
    redundant = RedundantConstraints(system)
    assert not simulate_augmented(redundant, q0, qd0, duration_s=0.05, step_s=1e-3).completed
    red = simulate_constrained(redundant, q0, qd0, duration_s=0.05, step_s=1e-3)
    assert red.completed and np.abs(red.q - proj.q).max() < 1e-12


def test_pidc_tracks_the_crank_through_the_singularity_with_minimum_norm_torque():
    system = slider_crank()
    traj = CrankTrajectory()
    q0, qd0, _ = traj.joint(0.0)
    sim = simulate_constrained(system, q0, qd0, duration_s=0.8, step_s=1e-3,
                               torque_law=crank_tracking_law(system, traj))
    crank_d = np.array([traj.crank(t)[0] for t in sim.time_s])
    assert sim.q[-1, 0] > np.pi / 2 + 0.3 and sim.min_singular_value.min() < 5e-3  # crossed the singularity
    assert np.abs(sim.q[:, 0] - crank_d).max() <= 1e-3
    for k in range(0, sim.time_s.size, 80):
        ratio, dqdd = min_norm_check(system, sim.q[k], sim.qd[k], sim.torque[k], samples=30, seed=k)
        assert ratio >= 1.0 - 1e-12 and dqdd < 1e-9


def test_passive_rod_joint_crank_only_actuation():
    system = slider_crank()
    traj = CrankTrajectory()
    q0, qd0, _ = traj.joint(0.0)
    sim = simulate_constrained(system, q0, qd0, duration_s=0.3, step_s=1e-3,
                               torque_law=crank_tracking_law(system, traj, actuated=np.array([True, False])))
    crank_d = np.array([traj.crank(t)[0] for t in sim.time_s])
    assert np.abs(sim.torque[:, 1]).max() < 1e-9
    assert np.abs(sim.q[:, 0] - crank_d).max() <= 1e-3


def test_branch_state_is_admissible():
    system = slider_crank()
    q, qd, qdd = slider_crank_branch_state(0.7, 2.0, -1.0)
    assert abs(system.constraint(q)[0]) < 1e-15
    assert abs((system.constraint_jacobian(q) @ qd)[0]) < 1e-14
