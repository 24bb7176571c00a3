"""PoseReference: goals reached within the speed/acceleration bounds, on the caller's clock."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.pose_reference import MAX_STEP_S, PoseReference

BOUNDS = dict(speed_m_s=0.1, acceleration_m_s2=0.5, angular_speed_rad_s=0.5, angular_acceleration_rad_s2=2.0)
DT = 0.002


def _run(ref, seconds, goal_at=None, start_s=0.0):
    """Targets every DT for ``seconds``; ``goal_at(k, t)`` may set a goal before cycle k."""
    out = []
    for k in range(int(round(seconds / DT))):
        t = start_s + k * DT
        if goal_at is not None:
            goal_at(ref, k, t)
        out.append(ref.targets(t))
    return out


def _arrays(targets):
    return (np.array([x.position_m for x in targets]), np.array([x.twist for x in targets]),
            np.array([x.acceleration for x in targets]))


def test_a_step_becomes_a_bounded_move_that_ends_exactly_on_the_goal():
    start, goal = np.array([0.3, 0.0, 0.3]), np.array([0.34, 0.0, 0.3])
    goal_rotation = pin.exp3(np.array([0.0, 0.0, 0.5]))
    ref = PoseReference(start, np.eye(3), **BOUNDS)
    ref.set_goal(goal, goal_rotation)
    assert not ref.at_rest
    p, twist, acc = _arrays(_run(ref, 2.0))
    speed = np.linalg.norm(twist[:, :3], axis=1)
    assert speed.max() == pytest.approx(0.1) and np.linalg.norm(twist[:, 3:], axis=1).max() == pytest.approx(0.5)
    assert np.linalg.norm(acc[:, :3], axis=1).max() <= 0.5 + 1e-9
    assert np.linalg.norm(acc[:, 3:], axis=1).max() <= 2.0 + 1e-9
    # the time-optimal trapezoid: 0.2 s up, 0.2 s at 0.1 m/s, 0.2 s down = 0.6 s (a few cycles to land)
    arrival_s = np.argmax(np.all(p == goal, axis=1)) * DT
    assert 0.6 <= arrival_s < 0.7
    # the position is the integral of the twist it reports (the law's feed-forward is consistent), but for
    # the landing on the goal: at most what a_max covers in a cycle (a_max dt^2)
    integral = start[0] + np.r_[0.0, np.cumsum(0.5 * (twist[1:, 0] + twist[:-1, 0]) * DT)]
    assert np.abs(p[:, 0] - integral).max() <= 0.5 * DT ** 2 + 1e-12
    # monotone: no overshoot of a step
    assert np.all(np.diff(p[:, 0]) >= -1e-12) and p[:, 0].max() <= goal[0] + 1e-12
    final = ref.targets(2.0)
    assert np.array_equal(final.position_m, goal) and np.allclose(final.rotation, goal_rotation)
    assert ref.at_rest and ref.remaining() == (0.0, pytest.approx(0.0, abs=1e-12))
    assert not final.twist.any() and not final.acceleration.any()


def test_a_rotation_follows_the_geodesic_and_its_angular_velocity_is_in_base_axes():
    rotation = pin.exp3(np.array([0.3, -0.2, 0.1]))
    goal_rotation = rotation @ pin.exp3(np.array([0.0, 0.4, 0.0]))  # about the frame's own y
    ref = PoseReference(np.zeros(3), rotation, **BOUNDS)
    ref.set_goal(np.zeros(3), goal_rotation)
    targets = _run(ref, 3.0)
    axis = rotation @ np.array([0.0, 1.0, 0.0])  # the same axis in base axes
    for x in targets[1:]:
        w = x.twist[3:]
        if w.any():
            assert np.allclose(np.cross(w, axis), 0.0, atol=1e-12)  # along the one axis throughout
        # on the geodesic: the rotation from the start is about that axis
        step = pin.log3(rotation.T @ x.rotation)
        assert np.allclose(np.cross(rotation @ step, axis), 0.0, atol=1e-9)
    assert np.allclose(targets[-1].rotation, goal_rotation)
    assert np.linalg.norm([x.twist[3:] for x in targets], axis=1).max() == pytest.approx(0.5)


def test_a_goal_changed_mid_move_is_followed_without_a_velocity_jump():
    ref = PoseReference(np.zeros(3), np.eye(3), **BOUNDS)
    ref.set_goal([0.1, 0.0, 0.0])

    def turn(r, k, t):
        if k == 200:  # 0.4 s in, at full speed along x: now go along y instead
            r.set_goal([0.0, 0.1, 0.0])

    p, twist, acc = _arrays(_run(ref, 4.0, turn))
    dv = np.linalg.norm(np.diff(twist[:, :3], axis=0), axis=1)
    assert dv.max() <= 0.5 * DT + 1e-12  # the velocity changes by at most a_max dt per cycle
    assert np.array_equal(p[-1], [0.0, 0.1, 0.0])


def _segment_distance(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ab = b - a
    t = np.clip(((x - a) @ ab) / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(x - (a + np.outer(t, ab)), axis=1)


def test_the_way_to_a_goal_changed_mid_move_stays_within_its_overshoot_of_the_segment_and_the_geodesic():
    # what osc_controller's floor check allows for (control/controller.py check_way): random goals, changed at a
    # random moment of the first move (at rest the way is the segment and the geodesic themselves)
    rng = np.random.default_rng(5)
    worst = [0.0, 0.0]
    for _ in range(30):
        ref = PoseReference(np.zeros(3), np.eye(3), **BOUNDS)
        ref.set_goal(rng.uniform(-0.2, 0.2, 3), pin.exp3(rng.uniform(-1.5, 1.5, 3)))
        change = int(rng.integers(0, 600))
        _run(ref, change * DT)
        a, r_a, (d_max, angle_max) = ref.position_m.copy(), ref.rotation.copy(), ref.overshoot
        b, r_b = rng.uniform(-0.2, 0.2, 3), pin.exp3(rng.uniform(-1.5, 1.5, 3))
        ref.set_goal(b, r_b)
        targets = _run(ref, 3.0, start_s=change * DT)
        off = _segment_distance(np.array([x.position_m for x in targets]), a, b).max()
        log_r = pin.log3(r_a.T @ r_b)
        geodesic = [r_a @ pin.exp3(s * log_r) for s in np.linspace(0.0, 1.0, 201)]
        turned = max(min(np.linalg.norm(pin.log3(g.T @ x.rotation)) for g in geodesic) for x in targets[::25])
        assert off <= d_max + 1e-9 and turned <= angle_max + 0.01, (off, d_max, turned, angle_max)
        worst = [max(worst[0], off), max(worst[1], turned)]
    assert worst[0] > 0.002 and worst[1] > 0.02  # the redirections did leave the segment and the geodesic


@pytest.mark.parametrize("every", [1, 5, 25])
def test_a_stream_of_goals_is_tracked_without_chattering(every):
    """Goals on a line at 0.05 m/s, published every ``every`` cycles (500, 100, 20 Hz): the reference follows with
    a small lag, its acceleration is steady while the stream moves (no +-a_max at the stream's rate), and it stops
    on the last goal."""
    def path(t):
        return np.array([0.3 + 0.05 * min(t, 2.0), 0.0, 0.3])

    def stream(r, k, t):
        if k % every == 0:
            r.set_goal(path(t))

    ref = PoseReference(path(0.0), np.eye(3), **BOUNDS)
    targets = _run(ref, 4.0, stream)
    p, _, acc = _arrays(targets)
    steady = slice(int(0.8 / DT), int(1.9 / DT))
    lag = np.array([path(k * DT)[0] for k in range(len(p))]) - p[:, 0]
    # lag: v^2 / (2 a) = 2.5 mm plus up to one stream interval of the path (the linear ramp between goals)
    assert np.abs(lag[steady]).max() < 0.0025 + 0.05 * every * DT + 0.0005
    assert np.abs(acc[steady, 0]).max() < 0.01
    assert lag.min() > -0.0002  # at most a fraction of a millimetre past the path when it stops
    assert np.array_equal(p[-1], path(2.0))


def test_the_clock_is_the_callers_repeats_and_pauses_are_safe():
    ref = PoseReference(np.zeros(3), np.eye(3), **BOUNDS)
    ref.targets(10.0)
    ref.set_goal([0.05, 0.0, 0.0])
    a = ref.targets(10.0)  # the same timestamp twice (no new state): no motion
    assert not a.position_m.any()
    b = ref.targets(9.0)  # a timestamp from the past: holds
    assert np.array_equal(b.position_m, a.position_m)
    c = ref.targets(20.0)  # a 10 s pause is integrated as MAX_STEP_S, never as a jump
    assert c.position_m[0] <= 0.5 * 0.5 * MAX_STEP_S ** 2 + 1e-12
    assert np.linalg.norm(c.twist[:3]) <= 0.5 * MAX_STEP_S + 1e-12


@pytest.mark.parametrize("bad", [dict(speed_m_s=0.0), dict(acceleration_m_s2=-1.0), dict(angular_speed_rad_s=np.inf),
                                 dict(angular_acceleration_rad_s2=np.nan)])
def test_bounds_must_be_finite_and_positive(bad):
    with pytest.raises(ValueError, match="finite and > 0"):
        PoseReference(np.zeros(3), np.eye(3), **{**BOUNDS, **bad})
