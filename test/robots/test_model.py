"""Loading a robot: the mount's gravity is explicit and checked."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.robots.model import STANDARD_GRAVITY_M_S2, check_gravity, gravity_from_text, load_robot

Q = np.array([0.3, -1.2, 1.0, -0.5, 0.4, 0.1])


def test_a_floor_mount_is_the_default_and_another_mount_changes_only_the_gravity_torque():
    floor = load_robot("ur3")
    np.testing.assert_allclose(floor.gravity_m_s2, STANDARD_GRAVITY_M_S2)
    assert floor.is_standard_gravity()
    wall = load_robot("ur3", gravity_m_s2=[9.81, 0.0, 0.0])
    assert not wall.is_standard_gravity()
    np.testing.assert_allclose(floor.gravity_m_s2, STANDARD_GRAVITY_M_S2)  # the floor model is untouched
    g_floor = pin.computeGeneralizedGravity(floor.model, floor.new_data(), Q)
    g_wall = pin.computeGeneralizedGravity(wall.model, wall.new_data(), Q)
    assert abs(g_wall[0]) > 1.0 and abs(g_floor[0]) < 1e-9  # on a wall the base joint carries gravity
    qd, qdd = np.full(6, 0.3), np.full(6, -0.2)
    inertial = (pin.rnea(floor.model, floor.new_data(), Q, qd, qdd) - g_floor)
    np.testing.assert_allclose(pin.rnea(wall.model, wall.new_data(), Q, qd, qdd) - g_wall, inertial, atol=1e-9)


@pytest.mark.parametrize("value, message", [("0,0", "three numbers"), ("a,b,c", "three numbers"),
                                            ("0,0,-1", r"\|g\| = 1 m/s²"), ("0,0,nan", "between 9.7 and 9.9")])
def test_a_gravity_that_is_not_the_earths_is_refused_naming_the_form(value, message):
    with pytest.raises(ValueError, match=message):
        gravity_from_text(value)
    np.testing.assert_allclose(gravity_from_text(" 0, 4.905, -8.496 "), [0.0, 4.905, -8.496])
    with pytest.raises(ValueError, match="floor mount is 0,0,-9.81"):
        check_gravity([0.0, 0.0, 9.0])
