"""Fourier excitation (Swevers et al. 1997 eq. 12): rest at both ends, exact derivatives, file round trip."""

import numpy as np
import pytest

from robot_dynamics_id.excitation.fourier import FourierTrajectory, rest_constrained_coefficients
from robot_dynamics_id.excitation.trajectory_file import load_trajectory, save_trajectory


def _random(seed=0, n=6, k=5, periods=3, period=8.0):
    rng = np.random.default_rng(seed)
    return FourierTrajectory.from_free_coefficients(
        period_s=period, offset_rad=rng.uniform(-1, 1, n), a_free_rad_s=rng.normal(0, 0.3, (n, k - 1)),
        b_free_rad_s=rng.normal(0, 0.3, (n, k - 1)), n_periods=periods)


def test_rest_conditions_fill_the_first_harmonic():
    a, b = rest_constrained_coefficients(np.array([[1.0, 2.0]]), np.array([[3.0, -1.0]]))
    assert np.allclose(a, [[-3.0, 1.0, 2.0]])
    assert np.allclose(b, [[-(2 * 3.0 + 3 * -1.0), 3.0, -1.0]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_starts_and_ends_every_period_at_rest(seed):
    f = _random(seed)
    ends = np.arange(f.n_periods + 1) * f.period_s
    q, qd, qdd = f.evaluate(ends)
    assert np.allclose(qd, 0, atol=1e-12) and np.allclose(qdd, 0, atol=1e-12)
    assert np.allclose(q, f.start_position_rad, atol=1e-12)  # periodic: back where it started
    traj = f.to_trajectory(rate_hz=125.0)
    assert traj.starts_at_rest(velocity_tolerance_rad_s=1e-12) and traj.ends_at_rest(velocity_tolerance_rad_s=1e-12)
    assert traj.duration_s == pytest.approx(f.n_periods * f.period_s)
    # Not trivially at rest in between.
    assert np.abs(traj.velocity_rad_s).max() > 0.1


def test_derivatives_are_consistent():
    f = _random(4)
    t = np.linspace(0.3, 7.7, 50)
    h = 1e-5
    q_p, qd_p, _ = f.evaluate(t + h)
    q_m, qd_m, _ = f.evaluate(t - h)
    _, qd, qdd = f.evaluate(t)
    assert np.allclose((q_p - q_m) / (2 * h), qd, atol=1e-7)
    assert np.allclose((qd_p - qd_m) / (2 * h), qdd, atol=1e-6)


def test_scaling_keeps_rest_and_offsets():
    f = _random(5).scaled(0.5)
    q, qd, qdd = f.evaluate(np.array([0.0, f.duration_s]))
    assert np.allclose(qd, 0) and np.allclose(qdd, 0)
    assert np.allclose(f.offset_rad, _random(5).offset_rad)


def test_yaml_round_trip_regenerates_identical_samples(tmp_path):
    f = _random(6)
    traj = f.to_trajectory(rate_hz=125.0, robot="ur3", metadata={"seed": 6})
    path = save_trajectory(traj, tmp_path / "fourier.yaml")
    back = load_trajectory(path)
    assert back.kind == "fourier" and back.robot == "ur3" and back.metadata["seed"] == 6
    assert np.array_equal(back.position_rad, traj.position_rad)
    assert np.array_equal(back.acceleration_rad_s2, traj.acceleration_rad_s2)
    assert "samples" not in path.read_text()  # parameters only


def test_invalid_coefficients_are_refused():
    with pytest.raises(ValueError, match="n_joints"):
        FourierTrajectory(period_s=1.0, offset_rad=np.zeros(2), a_rad_s=np.zeros((3, 2)), b_rad_s=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="finite"):
        FourierTrajectory(period_s=1.0, offset_rad=np.zeros(1), a_rad_s=[[np.nan]], b_rad_s=[[0.0]])
    with pytest.raises(ValueError, match="missing the key"):
        FourierTrajectory.from_dict({"period_s": 1.0})
