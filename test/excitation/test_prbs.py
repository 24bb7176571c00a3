"""The PRBS + sinusoid schedule of seeds.md P3: levels, clocked switching, acceleration limit, rest, limits."""

import numpy as np
import pytest

from robot_dynamics_id.excitation.checker import ExcitationLimits, check_trajectory
from robot_dynamics_id.excitation.prbs import (
    MAXIMAL_LENGTH_TAPS,
    PrbsSinusoidSchedule,
    maximal_length_sequence,
    ramped_binary_velocity,
)
from robot_dynamics_id.robots import load_robot


def _minimal_period(bits: np.ndarray) -> int:
    n = bits.size
    for p in range(1, n + 1):
        if np.array_equal(bits[: n - p], bits[p:]):
            return p
    return n


@pytest.mark.parametrize("m", [m for m in MAXIMAL_LENGTH_TAPS if m <= 11])
def test_lfsr_is_maximal_length(m):
    period = 2**m - 1
    bits = maximal_length_sequence(m, initial_state=5 % period or 1, length=2 * period)
    assert _minimal_period(bits) == period
    # A maximal-length sequence holds 2^(m-1) ones and 2^(m-1) - 1 zeros per period.
    assert bits[:period].sum() == 2 ** (m - 1)


def test_lfsr_rejects_the_locked_state_and_unknown_lengths():
    with pytest.raises(ValueError, match="all-zero"):
        maximal_length_sequence(6, initial_state=0)
    with pytest.raises(ValueError, match="register_bits"):
        maximal_length_sequence(40)


def test_ramped_velocity_levels_switch_at_clock_with_limited_acceleration():
    v, a, clock, start = 0.5, 7.5, 0.2, 0.3
    bits = np.array([1, 1, 0, 1, 0, 0, 0, 1])
    t = np.linspace(0.0, start + (bits.size + 1) * clock, 20001)
    dq, qd, qdd = ramped_binary_velocity(t, bits, start_s=start, clock_s=clock, level_rad_s=v, acceleration_rad_s2=a)
    targets = np.concatenate([[0.0], np.where(bits > 0, v, -v), [0.0]])
    assert np.all(qd[t < start] == 0.0)
    for k in range(bits.size + 1):
        edge = start + k * clock
        change = abs(targets[k + 1] - targets[k])
        ramp = change / a
        # Before the edge the old level holds exactly; the change starts at the edge.
        before = (t > edge - 0.3 * clock) & (t < edge)
        assert np.all(qd[before] == targets[k])
        settled = (t >= edge + ramp + 1e-9) & (t < edge + clock) if k < bits.size else (t >= edge + ramp + 1e-9)
        assert settled.any()
        assert np.all(qd[settled] == targets[k + 1])  # exactly ±v (or 0 after the last edge)
        if change > 0:
            ramping = (t > edge + 1e-9) & (t < edge + ramp - 1e-9)
            assert np.allclose(np.abs(qdd[ramping]), a)
    # Acceleration limit: also on the numerically differentiated velocity, not just the reported qdd.
    assert np.max(np.abs(qdd)) <= a
    assert np.max(np.abs(np.diff(qd) / np.diff(t))) <= a * (1 + 1e-9)
    # Displacement is the integral of velocity.
    integral = np.concatenate([[0.0], np.cumsum(0.5 * (qd[1:] + qd[:-1]) * np.diff(t))])
    assert np.max(np.abs(integral - dq)) < 1e-6


def test_ramped_velocity_rejects_a_clock_shorter_than_a_full_swing():
    with pytest.raises(ValueError, match="full swing"):
        ramped_binary_velocity(np.array([0.0]), np.array([1, 0]), start_s=0, clock_s=0.1, level_rad_s=0.5,
                               acceleration_rad_s2=7.5)


@pytest.fixture(scope="module")
def schedule():
    return PrbsSinusoidSchedule(duration_s=60.0, seed=3)


def test_one_joint_at_a_time_runs_the_prbs_at_the_papers_levels(schedule):
    traj = schedule.to_trajectory(rate_hz=500.0)
    t, qd = traj.time_s, traj.velocity_rad_s
    turn = schedule.turn_duration_s
    clock = schedule.effective_clock_s
    ramp = 2 * schedule.prbs_velocity_rad_s / schedule.prbs_acceleration_rad_s2
    for j in range(6):
        start = schedule.turn_start_s(j)
        bits = schedule.prbs_bits(j)
        assert bits.size == 63  # one full period of the 6-stage register per turn
        for k, bit in enumerate(bits):
            # Hold phase of bit k (after any ramp): exactly +v for 1, -v for 0.
            hold = (t >= start + k * clock + ramp + 1e-6) & (t < start + (k + 1) * clock - 1e-6)
            expected = 0.5 if bit else -0.5
            assert np.all(qd[hold, j] == expected)
        inside = (t >= start) & (t <= start + turn)
        assert np.max(np.abs(traj.acceleration_rad_s2[inside, j])) <= 7.5 + 1e-12
        # The other joints move sinusoidally during this turn (the pose keeps changing).
        middle = (t > start + 0.3 * turn) & (t < start + 0.7 * turn)
        for other in range(6):
            if other != j:
                assert np.ptp(traj.position_rad[middle, other]) > 0.05


def test_schedule_starts_and_ends_at_rest_and_is_consistent(schedule):
    traj = schedule.to_trajectory(rate_hz=1000.0)
    assert np.all(traj.velocity_rad_s[0] == 0) and np.allclose(traj.velocity_rad_s[-1], 0, atol=1e-12)
    assert np.allclose(traj.position_rad[0], schedule.start_position_rad)
    # q is the integral of qd (trapezoid at 1 kHz) and qd the integral of qdd.
    dt = np.diff(traj.time_s)[:, None]
    q_int = traj.position_rad[0] + np.vstack(
        [np.zeros(6), np.cumsum(0.5 * (traj.velocity_rad_s[1:] + traj.velocity_rad_s[:-1]) * dt, axis=0)])
    assert np.max(np.abs(q_int - traj.position_rad)) < 1e-4
    qd_int = np.vstack([np.zeros(6), np.cumsum(
        0.5 * (traj.acceleration_rad_s2[1:] + traj.acceleration_rad_s2[:-1]) * dt, axis=0)])
    assert np.max(np.abs(qd_int - traj.velocity_rad_s)) < 0.05  # PRBS qdd jumps: trapezoid error per jump


def test_schedule_respects_ur3_limits_and_table(schedule):
    robot = load_robot("ur3")
    traj = schedule.to_trajectory(rate_hz=125.0, joint_names=robot.joint_names)
    report = check_trajectory(traj, robot, ExcitationLimits.from_robot(robot, table_height_m=0.05))
    assert report.acceleration_fraction.max() <= 1.0
    assert report.lowest_height_m >= 0.05


def test_schedule_is_reproducible_by_seed():
    a = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=7).to_trajectory(rate_hz=50.0)
    b = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=7).to_trajectory(rate_hz=50.0)
    c = PrbsSinusoidSchedule(duration_s=30.0, prbs_register_bits=5, seed=8).to_trajectory(rate_hz=50.0)
    assert np.array_equal(a.position_rad, b.position_rad)
    assert not np.allclose(a.position_rad, c.position_rad)


def test_schedule_rejects_a_too_fast_clock():
    with pytest.raises(ValueError, match="full velocity swing"):
        PrbsSinusoidSchedule(duration_s=12.0, prbs_register_bits=6)
    with pytest.raises(ValueError, match="turn_order"):
        PrbsSinusoidSchedule(turn_order=[0, 0, 1])


def test_explicit_clock_and_dict_round_trip():
    sched = PrbsSinusoidSchedule(duration_s=24.0, prbs_clock_s=0.25, prbs_register_bits=7, turn_order=[2, 0, 1],
                                 sinusoid_amplitude_rad=[0.3, 0.2, 0.4, 0.5, 0.5, 0.5])
    assert sched.effective_clock_s == 0.25
    assert sched.prbs_bits(3).size == 0  # no turn for joint 3
    assert sched.turn_start_s(2) == 0.0
    again = PrbsSinusoidSchedule.from_dict(sched.to_dict())
    t = np.linspace(0, 24, 301)
    assert np.array_equal(sched.evaluate(t)[0], again.evaluate(t)[0])
