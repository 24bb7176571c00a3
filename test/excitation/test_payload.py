"""The payload excitation planner (excitation/payload.py)."""

import numpy as np

from robot_dynamics_id.excitation.checker import ExcitationLimits
from robot_dynamics_id.excitation.payload import PayloadExcitationSettings, _WristProblem, plan_payload_excitation
from robot_dynamics_id.robots import load_robot


def test_the_plan_is_optimised_when_every_slsqp_iterate_breaks_a_limit_by_a_little():
    """SLSQP's iterates on this problem all break a limit slightly (25 iterations on a UR3: every one). Only
    feasible iterates were kept, so the plan was the random start itself; each iterate is now shrunk towards the
    pose until it is feasible, and the best of those is kept."""
    robot = load_robot("ur3")

    def plan(iterations):
        settings = PayloadExcitationSettings(n_starts=1, max_iterations=iterations, velocity_scale=1.0,
                                             acceleration_scale=1.0)
        return plan_payload_excitation(robot, settings, rate_hz=125.0).metadata["payload_condition_number"]

    start, optimised = plan(0), plan(25)
    assert optimised < 0.5 * start, (start, optimised)


def test_an_infeasible_point_is_shrunk_until_it_is_feasible():
    robot = load_robot("ur3")
    settings = PayloadExcitationSettings()
    problem = _WristProblem(robot, settings, ExcitationLimits.from_robot(robot, safety_factor=settings.safety_factor))
    x = problem.random_start(np.random.default_rng(1))
    far = 3.0 * x
    assert not problem.feasible(far)
    near = problem.feasible_near(far)
    assert near is not None and problem.feasible(near)
    np.testing.assert_allclose(near / np.linalg.norm(near), far / np.linalg.norm(far))  # the same direction
    np.testing.assert_array_equal(problem.feasible_near(x), x)  # a feasible point is kept as it is
