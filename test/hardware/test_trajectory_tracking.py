"""Trajectories executed in the robot loop: interpolation, tracking on the robot's clock, speed scaling, cancel,
abort, rejection. The simulated UR is stepped directly, so time is the simulator's (virtual) clock."""

import numpy as np
import pytest

from robot_dynamics_id.hardware.sim_backend import SimBackend
from robot_dynamics_id.hardware.trajectory_tracking import (TrackingPhase, TrajectoryGoal, TrajectoryGoalError,
                                                            TrajectoryTracker)
from robot_dynamics_id.robot_state import RobotState

HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])


def _fourier_goal(duration_s=6.0, rate_hz=100.0, amplitude=0.3, start=HOME):
    """A rest-to-rest multi-sine per joint (position, velocity, acceleration exact), as waypoints."""
    t = np.arange(0.0, duration_s + 1e-9, 1.0 / rate_hz)
    w = 2 * np.pi / duration_s
    k = np.arange(1, 7)
    # (1 - cos) shapes start and end at rest with zero acceleration... up to the second harmonic
    q = start + amplitude * np.outer(1 - np.cos(w * t), np.ones(6)) * np.sin(np.outer(t, k) * w * 0.5) ** 2
    qd = np.gradient(q, t, axis=0, edge_order=2)
    qdd = np.gradient(qd, t, axis=0, edge_order=2)
    return TrajectoryGoal(t, q, qd, qdd)


def _run(tracker, backend, cycles, on_cycle=None):
    """Step the simulated arm with the tracker as its in-cycle controller; returns the commands it gave."""
    commands = []
    for k in range(cycles):
        state = backend.read()
        if on_cycle is not None:
            on_cycle(k, state)
        command = tracker(state)
        if command is not None:
            commands.append(command)
            if command.kind == "velocity":
                backend.speed_j(command.values, 40.0)
            else:
                backend.speed_stop(10.0)
        backend.end_cycle()
    return commands


def _backend(q0=HOME):
    backend = SimBackend(robot="ur3", rate_hz=500.0, initial_q_rad=q0, noise_seed=1)
    backend.connect()
    return backend


def _state(q, t=0.0):
    return RobotState(timestamp_s=t, q_rad=np.asarray(q, float))


# ---- interpolation --------------------------------------------------------------------------------
def test_quintic_segments_reproduce_position_velocity_and_acceleration_at_the_points():
    rng = np.random.default_rng(0)
    t = np.cumsum(rng.uniform(0.05, 0.2, 8))
    q, qd, qdd = rng.normal(size=(3, 8, 6))
    goal = TrajectoryGoal(t, q, qd, qdd)
    for k in range(7):
        c = goal._coefficients[k]
        h = t[k + 1] - t[k]
        powers = h ** np.arange(6)
        assert np.allclose(powers @ c, q[k + 1], atol=1e-9)
        assert np.allclose((np.arange(6) * np.r_[0, powers[:5]]) @ c, qd[k + 1], atol=1e-8)
        assert np.allclose((np.arange(6) * np.arange(-1, 5) * np.r_[0, 0, powers[:4]]) @ c, qdd[k + 1], atol=1e-7)
    mid = 0.5 * (t[2] + t[3])
    q_mid, qd_mid = goal.evaluate(mid)
    eps = 1e-6
    assert np.allclose((goal.evaluate(mid + eps)[0] - goal.evaluate(mid - eps)[0]) / (2 * eps), qd_mid, atol=1e-5)


def test_positions_only_interpolate_linearly_and_velocities_cubic():
    linear = TrajectoryGoal([0.0, 1.0], [[0.0], [2.0]])
    assert np.allclose(linear.evaluate(0.25), ([0.5], [2.0]))
    cubic = TrajectoryGoal([0.0, 1.0], [[0.0], [1.0]], [[0.0], [0.0]])
    q, qd = cubic.evaluate(0.5)
    assert q == pytest.approx([0.5]) and qd == pytest.approx([1.5])  # smoothstep 3s^2 - 2s^3


@pytest.mark.parametrize("points", [1, 2, 7])
def test_positions_at_many_times_equal_evaluate_one_by_one(points):
    """Inside the span, on every waypoint, before the first (a goal starting later than 0) and after the last."""
    rng = np.random.default_rng(points)
    t = np.sort(rng.uniform(0.1, 3.0, points)) if points > 1 else np.array([0.5])
    goal = TrajectoryGoal(t, rng.normal(size=(points, 3)), rng.normal(size=(points, 3)), rng.normal(size=(points, 3)))
    times = np.r_[0.0, t, rng.uniform(0.0, 3.5, 200), t[-1] + 1.0]
    one_by_one = np.array([goal.evaluate(ts)[0] for ts in times])
    np.testing.assert_allclose(goal.positions_at(times), one_by_one, rtol=0, atol=1e-12)


def test_the_first_point_later_than_zero_is_reached_from_where_the_arm_is():
    goal = TrajectoryGoal([2.0], [[1.0, 1.0]]).starting_from(np.array([0.0, 0.5]))
    assert goal.time_s.tolist() == [0.0, 2.0]
    assert np.allclose(goal.evaluate(1.0)[0], [0.5, 0.75])


@pytest.mark.parametrize("args, message", [
    (([], np.zeros((0, 6))), "no points"),
    (([0.0, 0.0], np.zeros((2, 6))), "strictly increasing"),
    (([0.0, 1.0], [[0.0] * 6, [np.nan] * 6]), "NaN"),
    (([0.0, 1.0], np.zeros((2, 6)), None, np.zeros((2, 6))), "without velocities"),
    (([0.0, 1.0], np.zeros((2, 6)), np.zeros((2, 5))), "shape"),
])
def test_bad_goals_are_refused_with_the_problem_named(args, message):
    with pytest.raises(TrajectoryGoalError, match=message):
        TrajectoryGoal(*args)


# ---- tracking on the simulated arm ------------------------------------------------------------------
def test_tracks_a_full_speed_trajectory_within_a_hundredth_of_a_radian_and_succeeds():
    goal = _fourier_goal()
    backend = _backend()
    tracker = TrajectoryTracker()
    tracker.submit(goal)
    commands = _run(tracker, backend, int(7.5 * 500))
    status = tracker.status
    assert status.phase == TrackingPhase.SUCCEEDED, status
    assert status.max_position_error_rad < 0.01, status
    assert np.max(np.abs([c.values for c in commands if c.kind == "velocity"])) > 0.5  # it really moved fast
    assert commands[-1].kind == "stop"
    assert np.max(np.abs(backend.read().q_rad - goal.position_rad[-1])) < 0.01


def test_trajectory_time_follows_the_robot_clock_not_the_number_of_calls():
    """A stalled host calls the tracker with fewer, further-apart samples: trajectory time still equals robot
    time, so the plan and the arm stay in step."""
    goal = TrajectoryGoal([0.0, 10.0], [HOME, HOME + 1.0], [np.zeros(6), np.zeros(6)])
    tracker = TrajectoryTracker(ramp_s=0.0, path_tolerance_rad=10.0)
    tracker.submit(goal)
    tracker(_state(HOME, t=100.0))
    tracker(_state(HOME, t=100.002))
    tracker(_state(HOME, t=103.0))  # 3 s of robot time in one call
    assert tracker.status.time_s == pytest.approx(3.0)


def test_speed_scaling_slows_trajectory_time_and_the_arm_stays_on_the_path():
    goal = _fourier_goal()
    backend = _backend()
    tracker = TrajectoryTracker()
    tracker.submit(goal)
    taus = []

    def at(k, state):
        if k == 500:
            tracker.set_speed_scaling(0.5)
        taus.append(tracker.status.time_s)

    _run(tracker, backend, 3 * 500, on_cycle=at)
    status = tracker.status
    assert status.phase == TrackingPhase.RUNNING and status.speed_scaling == pytest.approx(0.5)
    # the last second of robot time advanced half a second of trajectory time
    assert taus[-1] - taus[-501] == pytest.approx(0.5, abs=0.01)
    assert status.max_position_error_rad < 0.01


def test_cancel_slows_down_along_the_path_and_stops():
    goal = _fourier_goal()
    backend = _backend()
    tracker = TrajectoryTracker(ramp_s=0.5)
    tracker.submit(goal)

    def at(k, state):
        if k == 1000:
            tracker.cancel("operator")

    commands = _run(tracker, backend, 1500, on_cycle=at)
    status = tracker.status
    assert status.phase == TrackingPhase.CANCELLED and status.reason == "operator"
    assert status.max_position_error_rad < 0.01  # on the path all the way down
    assert 2.0 < status.time_s < 3.0
    assert commands[-1].kind == "stop"
    assert np.max(np.abs(backend.read().qd_rad_s)) < 0.05


def test_a_blocked_arm_aborts_with_the_joint_named():
    goal = TrajectoryGoal([0.0, 2.0], [HOME, HOME + [0, 0, 0.6, 0, 0, 0]], np.zeros((2, 6)))
    tracker = TrajectoryTracker(path_tolerance_rad=0.1)
    tracker.submit(goal)
    out = None
    for k in range(1000):  # the arm never moves
        out = tracker(_state(HOME, t=k * 0.002))
        if tracker.status.phase != TrackingPhase.RUNNING:
            break
    assert tracker.status.phase == TrackingPhase.ABORTED
    assert out.kind == "stop" and "joint 2" in tracker.status.reason
    assert tracker(_state(HOME, t=10.0)) is None  # nothing more after the abort


def test_a_goal_starting_away_from_the_arm_is_rejected_and_the_arm_does_not_move():
    goal = TrajectoryGoal([0.0, 1.0], [HOME + 0.2, HOME + 0.3])
    tracker = TrajectoryTracker(start_tolerance_rad=0.05)
    tracker.submit(goal)
    assert tracker(_state(HOME)) is None
    assert tracker.status.phase == TrackingPhase.REJECTED and "joint 0" in tracker.status.reason


def test_a_fault_ends_the_goal_at_once():
    tracker = TrajectoryTracker()
    tracker.submit(_fourier_goal())
    tracker(_state(HOME))
    tracker.abort("robot loop error: connection lost")
    out = tracker(_state(HOME, t=0.002))
    assert out.kind == "stop" and tracker.status.phase == TrackingPhase.ABORTED
    assert "connection lost" in tracker.status.reason


def test_a_cancel_after_a_fault_does_not_bring_the_goal_back():
    # A review's dashboard stop: the loop faulted (abort), the excitation then sent its cancel (an empty trajectory);
    # once the loop was ready again the cancel slowed the aborted goal "along its path", moving the arm.
    tracker = TrajectoryTracker()
    tracker.submit(_fourier_goal())
    tracker(_state(HOME))
    tracker.abort("program stopped on the controller")
    tracker.cancel("an empty trajectory was received: stopping along the path")
    out = tracker(_state(HOME, t=0.002))
    assert out.kind == "stop" and tracker.status.phase == TrackingPhase.ABORTED
    assert tracker(_state(HOME, t=0.004)) is None  # nothing more


def test_a_new_goal_replaces_the_running_one():
    tracker = TrajectoryTracker()
    first = tracker.submit(_fourier_goal())
    tracker(_state(HOME))
    second = tracker.submit(TrajectoryGoal([1.0], [HOME + 0.1]))
    tracker(_state(HOME, t=0.002))
    assert second == first + 1 and tracker.status.goal == second
    assert tracker.status.duration_s == pytest.approx(1.0)


def test_a_goal_planned_faster_than_the_limits_is_refused_up_front():
    """velocity_scale 0.25 with an excitation planned at full speed: refused naming the fix, instead of an abort
    two seconds in when the clamped arm has fallen 0.25 rad behind its path (found by a review)."""
    from robot_dynamics_id.hardware.trajectory_tracking import check_goal_speed

    t = np.linspace(0.0, 2.0, 201)
    q = np.zeros((t.size, 6))
    q[:, 4] = 0.3 * np.sin(2 * np.pi * t)  # peak 1.88 rad/s on joint 4
    goal = TrajectoryGoal(t, q)
    check_goal_speed(goal, np.full(6, 2.0))
    with pytest.raises(TrajectoryGoalError, match=r"needs 1.88 rad/s on joint 4, above its limit here 0.785 rad/s "
                                                  r"\(velocity_limits_rad_s x velocity_scale\)"):
        check_goal_speed(goal, np.full(6, 3.14 * 0.25))
    qd = np.gradient(q, t, axis=0)
    qd[:, 1] = 0.9  # given velocities are what is checked
    with pytest.raises(TrajectoryGoalError, match="on joint 1"):
        check_goal_speed(TrajectoryGoal(t, q, qd), np.array([2.0, 0.8, 2.0, 2.0, 2.0, 2.0]))
