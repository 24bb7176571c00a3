"""The common trajectory type: evaluation at any time, file I/O, approach and concatenation helpers."""

import numpy as np
import pytest
import yaml

from robot_dynamics_id.excitation.prbs import PrbsSinusoidSchedule
from robot_dynamics_id.excitation.trajectory import JointTrajectory, approach_trajectory, concatenate_trajectories
from robot_dynamics_id.excitation.trajectory_file import TrajectoryFileError, load_trajectory, save_trajectory


def _cubic_samples(rate_hz=50.0, duration=2.0):
    t = np.arange(int(duration * rate_hz) + 1) / rate_hz
    c = np.array([0.3, -0.2])
    q = c * t[:, None] ** 3
    qd = 3 * c * t[:, None] ** 2
    qdd = 6 * c * t[:, None]
    return JointTrajectory(time_s=t, position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd)


def test_interpolation_is_exact_at_samples_and_hermite_between():
    traj = _cubic_samples()
    q, qd, qdd = traj.evaluate(traj.time_s)
    assert np.array_equal(q, traj.position_rad)
    t = np.array([0.013, 0.51, 1.999])
    q, qd, _ = traj.evaluate(t)
    # Cubic Hermite reproduces a cubic exactly.
    assert np.allclose(q, np.array([0.3, -0.2]) * t[:, None] ** 3, atol=1e-12)
    assert np.allclose(qd, 3 * np.array([0.3, -0.2]) * t[:, None] ** 2, atol=1e-3)


def test_outside_the_time_span_the_trajectory_holds_still():
    traj = _cubic_samples()
    q, qd, qdd = traj.evaluate(-1.0)
    assert np.array_equal(q, traj.start_position_rad) and not qd.any() and not qdd.any()
    q, qd, qdd = traj.evaluate(5.0)
    assert np.array_equal(q, traj.end_position_rad) and not qd.any() and not qdd.any()
    assert traj.velocity_at(1.0).shape == (2,)


def test_analytic_evaluator_is_used_between_samples():
    sched = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=1)
    coarse = sched.to_trajectory(rate_hz=10.0)
    t = np.array([3.3333, 17.77])
    assert np.array_equal(coarse.evaluate(t)[1], sched.evaluate(t)[1])
    fine = coarse.resample(125.0)
    assert fine.n_samples == 30 * 125 + 1 and fine.kind == "prbs_sinusoid"
    assert np.allclose(fine.position_rad, sched.evaluate(fine.time_s)[0])


def test_save_and_load_each_kind(tmp_path):
    sched = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=2)
    prbs = sched.to_trajectory(rate_hz=125.0, robot="ur3")
    back = load_trajectory(save_trajectory(prbs, tmp_path / "prbs.yaml"))
    assert back.kind == "prbs_sinusoid" and np.array_equal(back.position_rad, prbs.position_rad)
    samples = _cubic_samples()
    back = load_trajectory(save_trajectory(samples, tmp_path / "samples.yaml"))
    assert back.kind == "samples"
    assert np.array_equal(back.velocity_rad_s, samples.velocity_rad_s)


def test_user_file_with_positions_only_is_differentiated(tmp_path):
    t = np.linspace(0, 2, 201)
    q = np.column_stack([np.sin(t), np.cos(t)])
    path = tmp_path / "user.yaml"
    path.write_text(yaml.safe_dump({"samples": {"time_s": t.tolist(), "position_rad": q.tolist()}}))
    traj = load_trajectory(path)
    assert traj.kind == "samples" and traj.robot is None
    assert np.allclose(traj.velocity_rad_s[5:-5], np.column_stack([np.cos(t), -np.sin(t)])[5:-5], atol=1e-3)


@pytest.mark.parametrize("doc, match", [
    ({"kind": "fourier"}, "parameters"),
    ({"kind": "samples"}, "samples"),
    ({"kind": "spline", "parameters": {}}, "unknown trajectory kind"),
    ({"schema": "other/1", "kind": "samples"}, "schema"),
    ({"samples": {"time_s": [0, 1, 2], "position_rad": [[0], [1]]}}, "rows"),
])
def test_bad_files_name_the_problem(tmp_path, doc, match):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(TrajectoryFileError, match=match):
        load_trajectory(path)
    with pytest.raises(FileNotFoundError):
        load_trajectory(tmp_path / "missing.yaml")


def test_approach_is_rest_to_rest_within_limits():
    start = np.array([0.0, -1.0, 0.5, 0.0, 0.0, 0.0])
    goal = np.array([1.0, -1.5, 0.0, 0.3, -0.2, 2.0])
    v = np.array([0.5, 0.5, 0.5, 1.0, 1.0, 1.0])
    a = np.full(6, 2.0)
    traj = approach_trajectory(start, goal, velocity_limit_rad_s=v, acceleration_limit_rad_s2=a, rate_hz=125.0)
    assert np.allclose(traj.start_position_rad, start) and np.allclose(traj.end_position_rad, goal)
    assert traj.starts_at_rest() and traj.ends_at_rest()
    assert np.all(np.abs(traj.velocity_rad_s).max(axis=0) <= v + 1e-9)
    assert np.all(np.abs(traj.acceleration_rad_s2).max(axis=0) <= a + 1e-9)
    # Limited by joint 6 (2 rad at 1 rad/s): duration = 15/8 * 2 / 1.
    assert traj.duration_s == pytest.approx(3.75, abs=1 / 125)


def test_concatenation_joins_pieces_and_refuses_gaps():
    sched = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=2)
    excitation = sched.to_trajectory(rate_hz=125.0)
    here = excitation.start_position_rad + 0.3
    approach = approach_trajectory(here, excitation.start_position_rad, velocity_limit_rad_s=0.5,
                                   acceleration_limit_rad_s2=2.0)
    back = approach_trajectory(excitation.end_position_rad, here, velocity_limit_rad_s=0.5,
                               acceleration_limit_rad_s2=2.0)
    whole = concatenate_trajectories([approach, excitation, back])
    assert whole.duration_s == pytest.approx(approach.duration_s + excitation.duration_s + back.duration_s)
    assert np.all(np.diff(whole.time_s) > 0)
    assert whole.starts_at_rest() and whole.ends_at_rest(velocity_tolerance_rad_s=1e-9)
    with pytest.raises(ValueError, match="approach_trajectory"):
        concatenate_trajectories([excitation, approach])
