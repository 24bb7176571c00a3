"""Optimised Fourier excitation: analytic gradient, limits, rest, improvement, reproducibility."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.base_parameters import compute_base_parameters
from robot_dynamics_id.excitation import optimise
from robot_dynamics_id.excitation._blas import single_threaded_blas
from robot_dynamics_id.excitation.checker import ExcitationLimits, check_trajectory
from robot_dynamics_id.excitation.optimise import (
    FourierOptimisationSettings,
    excitation_condition_number,
    optimise_fourier_excitation,
)
from robot_dynamics_id.excitation.prbs import UR_HOME_POSITION_RAD
from robot_dynamics_id.excitation.trajectory_file import load_trajectory, save_trajectory
from robot_dynamics_id.robots import load_robot

SMALL = dict(duration_s=8.0, period_s=4.0, n_harmonics=3, n_starts=1, max_iterations=12, cost_rate_hz=10.0,
             constraint_rate_hz=10.0)


@pytest.fixture(scope="module", autouse=True)
def one_blas_thread():
    # Small SVDs/QRs: a threaded BLAS only waits on a loaded CI machine (excitation/_blas.py).
    with single_threaded_blas():
        yield


@pytest.fixture(scope="module")
def robot():
    return load_robot("ur3")


@pytest.fixture(scope="module")
def base_map(robot):
    return compute_base_parameters(robot)


@pytest.fixture(scope="module")
def result(robot, base_map):
    return optimise_fourier_excitation(robot, FourierOptimisationSettings(seed=1, **SMALL), base_map=base_map)


def test_analytic_gradient_matches_finite_differences(robot, base_map):
    settings = FourierOptimisationSettings(**SMALL)
    limits = ExcitationLimits.from_robot(robot, velocity_scale=0.5, acceleration_scale=0.5)
    centre = np.array(UR_HOME_POSITION_RAD)
    problem = optimise._Problem(robot, settings, limits, base_map, centre - 1.5, centre + 1.5)
    x = problem.random_start(np.random.default_rng(0), centre)
    grad = problem.gradient(x)
    rng = np.random.default_rng(1)
    for _ in range(3):
        d = rng.standard_normal(x.size) * 1e-5
        numeric = problem.cost(x + d) - problem.cost(x - d)
        assert numeric == pytest.approx(2 * grad @ d, rel=2e-3, abs=1e-9)
    # Keep-out Jacobian against finite differences too.
    values, jac = problem.keep_out(x, jacobian=True)
    d = rng.standard_normal(x.size) * 1e-6
    assert np.allclose(problem.keep_out(x + d) - problem.keep_out(x - d), 2 * jac @ d, atol=1e-10)


def test_result_respects_limits_starts_at_rest_and_improves(robot, base_map, result):
    traj = result.to_trajectory(rate_hz=125.0)
    assert traj.kind == "fourier" and traj.joint_names == robot.joint_names
    assert traj.duration_s == pytest.approx(8.0)
    check_trajectory(traj, robot, result.limits)  # planning limits (half speed), keep-out 0.05 m
    assert np.allclose(traj.velocity_rad_s[[0, -1]], 0, atol=1e-12)
    assert np.allclose(traj.acceleration_rad_s2[[0, -1]], 0, atol=1e-12)
    start = result.starts[0]
    assert result.condition_number < 0.5 * start["initial_condition_number"]
    cond = excitation_condition_number(robot, traj, base_map=base_map)
    assert np.isfinite(cond) and cond < start["initial_condition_number"]


def test_same_seed_same_trajectory_and_file_round_trip(robot, base_map, result, tmp_path):
    again = optimise_fourier_excitation(robot, FourierOptimisationSettings(seed=1, **SMALL), base_map=base_map)
    assert np.array_equal(again.fourier.a_rad_s, result.fourier.a_rad_s)
    assert np.array_equal(again.fourier.offset_rad, result.fourier.offset_rad)
    traj = result.to_trajectory(rate_hz=125.0)
    back = load_trajectory(save_trajectory(traj, tmp_path / "opt.yaml"))
    assert np.array_equal(back.position_rad, traj.position_rad)
    assert back.robot == "ur3" and back.limits["table_height_m"] == 0.05
    assert back.metadata["settings"]["seed"] == 1
    assert ExcitationLimits.from_dict(back.limits).velocity_rad_s == pytest.approx(result.limits.velocity_rad_s)


def test_settings_are_validated():
    with pytest.raises(ValueError, match="whole number of periods"):
        FourierOptimisationSettings(duration_s=25.0, period_s=10.0)
    with pytest.raises(ValueError, match="n_harmonics"):
        FourierOptimisationSettings(n_harmonics=1)
