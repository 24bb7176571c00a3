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
