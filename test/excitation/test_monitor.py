"""Watching a trajectory that another controller executes: progress under speed scaling, divergence, stall."""

import numpy as np
import pytest

from robot_dynamics_id.excitation.monitor import SilenceWatch, TrajectoryMonitor, verdict_from_status

T = np.arange(0.0, 10.0 + 1e-9, 0.002)
Q = np.outer(np.sin(2 * np.pi * T / 10.0), np.linspace(0.2, 0.6, 6))


def _monitor(**kw):
    return TrajectoryMonitor(T, Q, path_tolerance_rad=0.1, goal_tolerance_rad=0.02, start_timeout_s=1.0, **kw)


def test_progress_follows_the_arm_at_half_speed_and_ends_done():
    monitor = _monitor()
    out = None
    for k in range(0, 10001, 5):  # 20 s of robot time, the controller runs trajectory time at half speed
        t = k * 0.002
        out = monitor.update(100.0 + t, Q[min(k // 2, T.size - 1)])
        if k == 5000:
            assert out.phase == "running" and out.fraction == pytest.approx(0.5, abs=0.01)  # 10 s at half speed
    assert out.phase == "done" and out.fraction == 1.0


def test_an_arm_that_leaves_the_path_is_reported_as_diverged():
    monitor = _monitor()
    out = None
    for k in range(0, 2000, 5):
        q = Q[k] + (0.3 if k > 1000 else 0.0)
        out = monitor.update(k * 0.002, q)
        if out.phase == "diverged":
            break
    assert out.phase == "diverged" and "0.29" in out.reason and "from the planned path" in out.reason


def test_an_arm_that_never_moves_is_reported_as_stalled_with_the_hint():
    """Nothing moves (an inactive controller): the estimate stays at the start, so this is not a divergence but a
    stall, reported once the start timeout (robot time) has passed."""
    monitor = _monitor(stalled_hint=". Activate the controller")
    outs = [monitor.update(k * 0.01, Q[0]) for k in range(150)]
    phases = [o.phase for o in outs]
    assert set(phases[:100]) == {"waiting"}
    assert phases[-1] == "stalled" and outs[-1].reason.endswith(". Activate the controller")
    assert "not moved 1.0" in next(o.reason for o in outs if o.phase == "stalled")


def test_a_controllers_own_status_gives_progress_and_its_end_but_no_verdict_before_it_starts():
    """ur_interface's ~/trajectory_status: the running phases (stopping and settling included: the arm still
    moves) give the trajectory time and error it reports; success is done; idle, aborted and rejected are
    not verdicts (the caller reports an abort with the controller's own reason)."""
    running = verdict_from_status({"goal": 2, "phase": "running", "time_s": 7.5, "duration_s": 30.0,
                                   "position_error_rad": 0.004})
    assert (running.phase, running.path_time_s, running.fraction, running.deviation_rad) == (
        "running", 7.5, 0.25, 0.004)
    assert verdict_from_status({"phase": "settling", "time_s": 30.0, "duration_s": 30.0}).fraction == 1.0
    assert verdict_from_status({"phase": "stopping", "time_s": 3.0, "duration_s": 30.0}).phase == "running"
    done = verdict_from_status({"phase": "succeeded", "time_s": 29.0, "duration_s": 30.0})
    assert (done.phase, done.fraction) == ("done", 1.0)
    for phase in ("idle", "aborted", "rejected", "cancelled", ""):
        assert verdict_from_status({"phase": phase, "time_s": 1.0, "duration_s": 30.0}) is None


def test_a_stream_is_silent_only_after_the_timeout_while_the_watcher_runs():
    watch = SilenceWatch(timeout_s=1.0, stall_s=0.1)
    t = np.arange(0.0, 1.5, 0.002)
    # messages until 0.2 s, the watcher stepping every 2 ms: silent 1.0 s later
    verdicts = [watch.silent(now, min(now, 0.2)) for now in t]
    assert not any(v for now, v in zip(t, verdicts) if now <= 1.2 + 1e-9)
    assert all(v for now, v in zip(t, verdicts) if now > 1.2 + 1e-6)


def test_a_stall_of_the_watcher_itself_restarts_the_wait():
    # the watcher was not scheduled from 0.2 to 1.6 s: its last message is 1.4 s old, but queued ones may
    # follow; it judges silence only after 1.0 s of its own running
    watch = SilenceWatch(timeout_s=1.0, stall_s=0.1)
    assert not watch.silent(0.2, 0.2)
    t = np.arange(1.6, 3.0, 0.002)
    verdicts = [watch.silent(now, 0.2) for now in t]
    assert not any(v for now, v in zip(t, verdicts) if now <= 2.6 - 1e-6)
    assert all(v for now, v in zip(t, verdicts) if now > 2.6 + 1e-6)
    # and a message after the stall keeps it alive
    watch = SilenceWatch(timeout_s=1.0, stall_s=0.1)
    watch.silent(0.2, 0.2)
    watch.silent(1.6, 0.2)
    assert not watch.silent(1.602, 1.601)
    with pytest.raises(ValueError, match="stall_s < timeout_s"):
        SilenceWatch(timeout_s=0.1, stall_s=0.5)
