"""Drive gains: one check everywhere currents become torques."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.drive import DriveGainError, check_drive_gains, gain_spread_warnings, torque_from_current


def test_good_gains_pass_and_scale_currents_per_joint():
    gains = check_drive_gains([10, 10.7, 8.46, 9, 9.48, 10.12], 6)
    assert gains.shape == (6,)
    current = np.array([[1.0, 2.0, 0.5, -1.0, 0.0, 3.0]])
    np.testing.assert_allclose(torque_from_current(current, gains), current * gains)


@pytest.mark.parametrize("gains, message", [
    (None, "none given"),
    ([10, 10, 8], "3 value"),
    ([10, 10, 8, 6, 6, -6], "finite positive"),
    ([10, 10, 8, 6, 6, float("nan")], "finite positive"),
    ([1e9] * 6, "implausible"),
    ([0.01] * 6, "implausible"),
    ("ten", "give 6 numbers"),
])
def test_bad_gains_are_refused_naming_the_fix(gains, message):
    with pytest.raises(DriveGainError, match=message):
        check_drive_gains(gains, 6)


def test_amperes_on_purpose_skip_only_the_plausibility_range():
    np.testing.assert_array_equal(check_drive_gains(np.ones(6), 6, plausible=False), np.ones(6))
    with pytest.raises(DriveGainError, match="implausible"):
        check_drive_gains(np.ones(6) * 0.5, 6)
    with pytest.raises(DriveGainError, match="finite positive"):
        check_drive_gains(np.zeros(6), 6, plausible=False)


def test_a_gain_far_from_the_others_is_warned_about_by_joint_name():
    names = ["base", "shoulder", "elbow", "wrist1", "wrist2", "wrist3"]
    assert gain_spread_warnings([10.0, 10.7, 8.46, 9.0, 9.48, 10.12], names) == []  # a UR10e's published gains
    assert gain_spread_warnings([10.0, 10.0, 8.0, 4.0, 4.0, 4.0], names) == []  # small wrist drives: 2.2x
    (warning,) = gain_spread_warnings([10.0, 10.7, 8.46, 9.0, 9.48, 1.012], names)
    assert "wrist3 1.012 Nm/A" in warning and "a digit or a unit off" in warning and "base" not in warning
    (warning,) = gain_spread_warnings([10.0, 107.0, 8.46, 9.0, 9.48, 10.12], names)
    assert "shoulder 107" in warning
