"""The safety guard: NaN refusal, clamping vs refusing, position-limit braking, watchdog."""

import numpy as np
import pytest

from robot_dynamics_id.hardware.safety import CommandRejected, SafetyGuard, SafetyLimits


def limits():
    return SafetyLimits(position_lower_rad=np.full(6, -3.0), position_upper_rad=np.full(6, 3.0),
                        velocity_rad_s=np.full(6, 1.0), acceleration_rad_s2=np.full(6, 5.0),
                        torque_nm=np.full(6, 10.0))


def test_nan_and_wrong_length_commands_are_refused():
    guard = SafetyGuard(limits=limits())
    with pytest.raises(CommandRejected, match=r"NaN/inf at joint index \[2\]"):
        guard.guard_velocity([0, 0, np.nan, 0, 0, 0], q_rad=np.zeros(6))
    with pytest.raises(CommandRejected, match="has 5 values, expected 6"):
        guard.guard_velocity([0] * 5, q_rad=np.zeros(6))
    with pytest.raises(CommandRejected, match="NaN/inf"):
        guard.guard_torque([np.inf, 0, 0, 0, 0, 0], q_rad=np.zeros(6), qd_rad_s=np.zeros(6))


def test_clamp_policy_bounds_velocity_acceleration_and_torque():
    guard = SafetyGuard(limits=limits(), policy="clamp")
    cmd = guard.guard_velocity([2.0, -3.0, 0.5, 0, 0, 0], q_rad=np.zeros(6), acceleration_rad_s2=50.0)
    np.testing.assert_allclose(cmd.values[:3], [1.0, -1.0, 0.5])
    assert cmd.acceleration_rad_s2 == 5.0
    assert set(cmd.clamped_joints) == {0, 1}
    tau = guard.guard_torque([20, -20, 1, 0, 0, 0], q_rad=np.zeros(6), qd_rad_s=np.zeros(6))
    np.testing.assert_allclose(tau.values[:3], [10, -10, 1])


def test_refuse_policy_names_joint_value_and_limit():
    guard = SafetyGuard(limits=limits(), policy="refuse")
    with pytest.raises(CommandRejected, match=r"2 rad/s on joint 0 exceeds its limit 1 rad/s"):
        guard.guard_velocity([2.0, 0, 0, 0, 0, 0], q_rad=np.zeros(6))
    with pytest.raises(CommandRejected, match="acceleration"):
        guard.guard_velocity([0.1] * 6, q_rad=np.zeros(6), acceleration_rad_s2=50.0)


def test_velocity_towards_a_position_limit_is_reduced_so_the_joint_can_stop():
    guard = SafetyGuard(limits=limits(), position_margin_rad=0.0)
    q = np.zeros(6)
    q[1] = 2.99  # 0.01 rad from the upper limit
    cmd = guard.guard_velocity([0, 1.0, 0, 0, 0, 0], q_rad=q, acceleration_rad_s2=5.0)
    assert cmd.values[1] == pytest.approx(np.sqrt(2 * 5.0 * 0.01))
    away = guard.guard_velocity([0, -1.0, 0, 0, 0, 0], q_rad=q, acceleration_rad_s2=5.0)
    assert away.values[1] == -1.0


def test_watchdog_expires_after_silence_and_not_before():
    guard = SafetyGuard(limits=limits(), watchdog_s=0.04)
    assert not guard.watchdog_expired(100.0)  # nothing commanded yet: nothing to stop
    guard.feed_watchdog(100.0)
    assert not guard.watchdog_expired(100.039)
    assert guard.watchdog_expired(100.041)
    guard.disarm_watchdog()
    assert not guard.watchdog_expired(200.0)


def test_bad_limits_are_rejected_with_the_name():
    with pytest.raises(ValueError, match="velocity_rad_s must be > 0"):
        SafetyLimits(position_lower_rad=-np.ones(6), position_upper_rad=np.ones(6), velocity_rad_s=-np.ones(6),
                     acceleration_rad_s2=np.ones(6), torque_nm=np.ones(6))


def test_limits_replaced_on_a_running_guard_apply_to_the_next_command():
    """The guard derives its per-cycle bounds once; replacing the limits or the margin must still take effect."""
    guard = SafetyGuard(limits=limits())
    assert guard.guard_velocity([0.9] * 6, q_rad=np.zeros(6)).values[0] == 0.9
    guard.limits = SafetyLimits(position_lower_rad=np.full(6, -3.0), position_upper_rad=np.full(6, 3.0),
                                velocity_rad_s=np.full(6, 0.5), acceleration_rad_s2=np.full(6, 2.0),
                                torque_nm=np.full(6, 4.0))
    cmd = guard.guard_velocity([0.9] * 6, q_rad=np.zeros(6), acceleration_rad_s2=50.0)
    assert cmd.values[0] == 0.5 and cmd.acceleration_rad_s2 == 2.0
    assert guard.guard_torque([9.0] * 6, q_rad=np.zeros(6), qd_rad_s=np.zeros(6)).values[0] == 4.0
    assert guard.stopping_deceleration() == 2.0
    # 0.1 rad from the upper limit with a 0.05 rad margin: v = sqrt(2 * 2 * 0.05)
    q = np.full(6, 2.9)
    guard.position_margin_rad = 0.05
    np.testing.assert_allclose(guard.guard_velocity([0.5] * 6, q_rad=q).values, np.sqrt(2 * 2.0 * 0.05))


def test_torque_is_refused_while_a_joint_runs_faster_than_its_limit():
    """A torque command bounds no speed: the measured one is checked (UR's joint-speed safety limit)."""
    guard = SafetyGuard(limits=limits())
    qd = np.zeros(6)
    qd[4] = 1.04  # within the 5 % allowance of the 1 rad/s limit
    guard.guard_torque(np.ones(6), q_rad=np.zeros(6), qd_rad_s=qd)
    qd[4] = -1.06
    with pytest.raises(CommandRejected, match=r"joint 4 moves at -1.06 rad/s, beyond its velocity limit 1 rad/s"):
        guard.guard_torque(np.zeros(6), q_rad=np.zeros(6), qd_rad_s=qd)
