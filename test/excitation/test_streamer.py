"""Streaming a trajectory as velocity commands: ramps, staying on the path, cancel, start check."""

import numpy as np
import pytest

from robot_dynamics_id.excitation.streamer import StartPoseError, TrajectoryStreamer
from robot_dynamics_id.excitation.trajectory import approach_trajectory


def _trajectory():
    return approach_trajectory(np.zeros(6), np.array([0.6, -0.4, 0.3, 0.2, -0.2, 0.1]),
                               velocity_limit_rad_s=np.full(6, 0.5), acceleration_limit_rad_s2=np.full(6, 2.0),
                               rate_hz=500.0, minimum_duration_s=3.0)


def _play(streamer, q0, period_s=0.002, cancel_at_s=None, max_s=30.0):
    q = q0.copy()
    commands = []
    t = 0.0
    while t < max_s:
        if cancel_at_s is not None and t >= cancel_at_s:
            streamer.cancel(t)
        out = streamer.command(t, q)
        commands.append(out.velocity_rad_s)
        q = q + out.velocity_rad_s * period_s  # a perfect velocity servo
        t += period_s
        if out.phase == "done":
            break
    return q, np.array(commands), out


def test_plays_to_the_end_pose_with_smooth_commands():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.5)
    q, commands, last = _play(streamer, traj.start_position_rad)
    assert last.phase == "done"
    np.testing.assert_allclose(q, traj.end_position_rad, atol=2e-3)
    assert np.abs(commands[0]).max() < 1e-6  # starts from rest
    assert np.abs(commands[-1]).max() == 0.0  # ends with an explicit zero
    jerk_free = np.abs(np.diff(commands, axis=0)).max()
    assert jerk_free < 0.01  # rad/s per 2 ms cycle: no steps


def test_cancel_stops_smoothly_on_the_path():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.5)
    q, commands, last = _play(streamer, traj.start_position_rad, cancel_at_s=1.5)
    assert last.phase == "done"
    assert last.fraction < 0.9
    q_ref, _, _ = traj.evaluate(last.trajectory_time_s)
    np.testing.assert_allclose(q, np.ravel(q_ref), atol=2e-3)  # stopped where the plan was
    assert np.abs(np.diff(commands, axis=0)).max() < 0.01


def test_refuses_to_start_far_from_the_start_pose():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, start_tolerance_rad=0.05)
    q = traj.start_position_rad.copy()
    q[2] += 0.3
    with pytest.raises(StartPoseError, match="0.300 rad from the excitation's start pose on joint 2"):
        streamer.check_start(q)
    streamer.check_start(traj.start_position_rad + 0.01)


def test_position_feedback_pulls_a_lagging_arm_back_to_the_plan():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.5, position_gain_per_s=5.0)
    q = traj.start_position_rad.copy()
    t = 0.0
    for _ in range(1500):
        out = streamer.command(t, q)
        q = q + 0.9 * out.velocity_rad_s * 0.002  # a servo that only reaches 90 % of the command
        t += 0.002
    assert out.position_error_rad < 0.01


def test_without_ramps_the_stream_ends_exactly_at_the_end():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.0)
    q, _, last = _play(streamer, traj.start_position_rad)
    assert last.phase == "done"
    assert last.fraction == 1.0
    np.testing.assert_allclose(q, traj.end_position_rad, atol=2e-3)


def test_an_arm_that_does_not_follow_aborts_the_stream():
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.2, max_position_error_rad=0.1)
    q = traj.start_position_rad.copy()  # the arm never moves (blocked)
    t = 0.0
    for _ in range(5000):
        out = streamer.command(t, q)
        t += 0.002
        if out.phase == "aborted":
            break
    assert out.phase == "aborted"
    assert np.all(out.velocity_rad_s == 0)
    assert "does not follow" in streamer.aborted


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_late_cycles_cost_no_trajectory_time_and_the_ramp_out_ends_at_the_end(seed):
    # A loaded machine: cycles 2-250 ms apart instead of 2 ms. The warp is integrated exactly over each cycle,
    # so the excitation is played to its end (a rectangle rule stopped at 99.2 % in a loaded test run).
    traj = _trajectory()
    streamer = TrajectoryStreamer(trajectory=traj, ramp_s=0.5)
    rng = np.random.default_rng(seed)
    t, q, out = 0.0, traj.start_position_rad.copy(), None
    while t < 30.0:
        out = streamer.command(t, q)
        period = float(rng.uniform(0.002, 0.25))
        q = q + out.velocity_rad_s * period
        t += period
        if out.phase == "done":
            break
    assert out.phase == "done"
    assert out.fraction == pytest.approx(1.0, abs=1e-9)
    # played for the planned duration + half of each ramp, plus at most a few late cycles (each <= 0.25 s)
    assert traj.duration_s + streamer.ramp_s - 1e-6 <= t <= traj.duration_s + streamer.ramp_s + 3 * 0.25
