"""The P3 simulated-annealing baseline: parameter mapping and cost decrease within a budget."""

import numpy as np

from robot_dynamics_id.dynamics.regressor import rigid_body_regressor
from robot_dynamics_id.identification.annealing import anneal, physical_to_standard, standard_to_physical
from robot_dynamics_id.identification.synthetic import fourier_trajectory, inverse_dynamics, perturbed_truth
from robot_dynamics_id.io.model_file import DynamicModel


def test_physical_standard_round_trip():
    theta = DynamicModel.nominal("ur3").standard_parameters().reshape(6, 10)
    np.testing.assert_allclose(physical_to_standard(standard_to_physical(theta)), theta, atol=1e-12)


def test_annealing_lowers_the_normalised_cost_and_the_truth_scores_zero():
    truth = perturbed_truth("ur3", seed=1)
    robot = truth.robot_model()
    _, q, qd, qdd = fourier_trajectory(robot, duration_s=20, rate_hz=20, seed=1)
    rigid = truth.with_standard_parameters(truth.standard_parameters())
    tau = inverse_dynamics(rigid.__class__(**{**rigid.__dict__, "friction": rigid.friction.zeros(6),
                                              "rotor_inertia_kgm2": np.zeros(6)}), q, qd, qdd)
    tau += truth.friction.viscous_nm_s_per_rad * qd
    w = rigid_body_regressor(robot, q, qd, qdd)
    exact = np.column_stack([standard_to_physical(truth.standard_parameters()), truth.friction.viscous_nm_s_per_rad])
    at_truth = anneal(w, qd, tau, exact, max_iterations=1)
    assert at_truth.initial_cost < 1e-12
    nominal = DynamicModel.nominal("ur3")
    start = np.column_stack([standard_to_physical(nominal.standard_parameters()), np.zeros(6)])
    result = anneal(w, qd, tau, start, max_iterations=5000, max_time_s=10.0, seed=0)
    assert result.cost < result.initial_cost
    assert result.iterations == 5000 and result.physical.shape == (6, 11)
