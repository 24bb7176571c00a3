"""ur_interface's configuration: limits beyond the robot's rating (or in another unit) are refused by name."""

from pathlib import Path

import pytest

from robot_dynamics_id.hardware.config import UrInterfaceConfig
from robot_dynamics_id.parameters import ParameterError

CONFIG = Path(__file__).resolve().parents[2] / "config"


def _config(**overrides):
    return UrInterfaceConfig.from_parameter_files([CONFIG / "ur3.yaml", CONFIG / "ur3_control.yaml"], overrides)


def test_the_shipped_files_are_accepted():
    limits = _config().limits
    assert limits.acceleration_rad_s2.max() == 40.0 and limits.torque_nm.tolist() == [56, 56, 28, 12, 12, 12]


@pytest.mark.parametrize("name, value, message", [
    ("torque_limits_nm", [100.0, 100.0, 50.0, 12.0, 12.0, 12.0],
     r"'torque_limits_nm'\[0\] = 100 Nm is beyond the robot's rated torque: 56 Nm"),
    ("position_limits_upper_rad", [360.0] * 6, r"'position_limits_upper_rad'\[0\] = 360 rad is beyond the joint's "
                                               r"range \(a value in degrees\?\): 6.283 rad"),
    ("position_limits_lower_rad", [-6.0, -6.0, -6.0, -6.0, -6.0, -360.0],
     r"'position_limits_lower_rad'\[5\] = -360 rad is beyond the joint's range \(a value in degrees\?\): -6.283"),
    ("acceleration_limits_rad_s2", [1000.0] * 6, r"'acceleration_limits_rad_s2'\[0\] = 1000 rad/s\^2 is beyond"),
    ("velocity_limits_rad_s", [3.2, 1.0, 1.0, 1.0, 1.0, 1.0], r"'velocity_limits_rad_s'\[0\] = 3.2 rad/s is beyond"),
])
def test_a_limit_beyond_the_rating_is_refused_naming_joint_and_bound(name, value, message):
    # docs/faults.md row "limit_beyond_rating"
    with pytest.raises(ParameterError, match=message):
        _config(**{name: value})
