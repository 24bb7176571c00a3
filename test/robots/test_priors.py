"""The assumed nominal values of robots/priors.py and the UR controller's model built from them."""

import numpy as np
import pytest

from robot_dynamics_id.io.model_file import DynamicModel, ur_controller_model
from robot_dynamics_id.robots import ROBOT_NAMES
from robot_dynamics_id.robots.priors import nominal_drive_gains


@pytest.mark.parametrize("robot", ROBOT_NAMES)
def test_every_builtin_arm_has_positive_nominal_drive_gains(robot):
    gains = nominal_drive_gains(robot)
    assert gains.shape == (6,) and np.all(gains > 0)


def test_unknown_robot_is_refused_by_name():
    with pytest.raises(ValueError, match="ur3"):
        nominal_drive_gains("ur7")
    with pytest.raises(ValueError, match="ur3"):
        ur_controller_model("ur7")


def test_ur_controller_model_is_the_nominal_model_with_the_nominal_gains():
    model = ur_controller_model("UR3")
    nominal = DynamicModel.nominal("ur3")
    np.testing.assert_array_equal(model.link_mass_kg, nominal.link_mass_kg)
    np.testing.assert_array_equal(model.drive_gains_nm_per_a, nominal_drive_gains("ur3"))
    assert not np.any(model.friction.coulomb_nm)
    assert model.provenance["robot"] == "ur3"


def test_gains_copied_from_another_arms_table_are_named():
    from robot_dynamics_id.robots.priors import foreign_nominal_gains

    text = foreign_nominal_gains([10, 10, 8, 6, 6, 6], "ur10")
    assert text.startswith("the drive gains 10, 10, 8, 6, 6, 6 Nm/A are the assumed nominal gains of ur3 / ur3e, "
                           "not of the ur10 (13.58, 14.3, 11.37, 11.24, 11.77, 11.77)")
    assert foreign_nominal_gains(nominal_drive_gains("ur10"), "ur10") is None  # its own
    assert foreign_nominal_gains([10.2, 9.9, 8.1, 6.0, 6.1, 5.9], "ur10") is None  # identified: no table's
    assert foreign_nominal_gains([10, 10, 8, 6, 6, 6], "/path/lab_arm.urdf") is None  # no nominal to compare


def test_the_nominal_gains_are_recognised_as_assumed():
    from robot_dynamics_id.robots.priors import is_nominal_gains

    assert is_nominal_gains([10, 10, 8, 6, 6, 6], "ur3") and is_nominal_gains(nominal_drive_gains("ur10"), "UR10")
    assert not is_nominal_gains([10.2, 9.9, 8.1, 6.0, 6.1, 5.9], "ur3")  # calibrated
    assert not is_nominal_gains([10, 10, 8, 6, 6, 6], "ur10") and not is_nominal_gains(None, "ur3")
    assert not is_nominal_gains([10, 10, 8, 6, 6], "ur3")
