"""The consistent fit's link bounds (identification/link_bounds.py)."""

from dataclasses import replace

import numpy as np

from robot_dynamics_id.identification.link_bounds import (
    TOOL_COM_REACH_M,
    TOOL_MASS_FACTOR,
    link_com_half_widths,
    link_mass_bounds,
)
from robot_dynamics_id.robots import load_robot


def test_the_last_link_may_hold_a_tool_and_the_others_stay_within_their_geometry():
    robot = load_robot("ur10e")
    half = link_com_half_widths(robot)
    assert half[-1] == half[-2] == TOOL_COM_REACH_M
    # the upper arm and forearm: half the distance to the next joint (0.6127 m; 0.57155 m along, 0.17415 m across)
    # + 5 cm
    np.testing.assert_allclose(half[1:3], [0.5 * 0.6127 + 0.05, 0.5 * np.hypot(0.57155, 0.17415) + 0.05], atol=1e-3)
    prior = np.array([7.4, 13.1, 3.9, 2.0, 2.0, 0.4])
    lower, upper = link_mass_bounds(robot, prior)
    np.testing.assert_allclose(lower, 0.01 * prior)
    np.testing.assert_allclose(upper[:-1], 10 * prior[:-1])
    assert upper[-1] == 0.4 + TOOL_MASS_FACTOR * 12.5  # the UR10e's rated payload


def test_a_robot_without_a_rating_keeps_the_tenfold_mass_bound():
    robot = replace(load_robot("ur3"), description=None)
    prior = np.full(6, 0.5)
    assert np.all(link_mass_bounds(robot, prior)[1] == 5.0)
