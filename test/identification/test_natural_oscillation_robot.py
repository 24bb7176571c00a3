"""The natural-oscillation procedure's guard and its verdict on a search (identification/natural_oscillation_robot)."""

import numpy as np

from robot_dynamics_id.identification.natural_oscillation_robot import FallGuard, doubtful_search, doubtful_trials


def test_speed_is_separate_from_the_hard_limits():
    guard = FallGuard(max_excursion_rad=0.5, position_lower_rad=-np.ones(2), position_upper_rad=np.ones(2),
                      position_margin_rad=0.1, max_velocity_rad_s=1.5)
    fast = np.array([0.0, -1.6])
    assert guard.too_fast(fast) == "joint 1 moves at -1.600 rad/s, above the guard's 1.5 rad/s"
    assert guard.hard_limit(np.zeros(2), fast) == guard.too_fast(fast)
    assert guard.hard_limit(np.zeros(2), fast, check_speed=False) is None  # speed: a fall in a trial, not an abort
    assert "position limit" in guard.hard_limit(np.array([0.95, 0.0]), np.zeros(2), check_speed=False)
    assert guard.hard_limit(np.array([np.nan, 0.0]), np.zeros(2), check_speed=False) == "joint state contains NaN"


def test_a_search_that_ends_at_factors_no_arm_has_or_on_speed_stops_is_doubtful():
    falls = [{"trial": k, "fell": True, "fall": "excursion"} for k in range(4)]
    assert doubtful_search([1.05, 0.97], falls + [{"trial": 5, "fell": False}]) == []
    (problem,) = doubtful_search([2.12, 1.47], falls)
    assert "[2.12, 1.47]" in problem and "0.5-2x the prior's" in problem
    speed = [{"trial": k, "fell": True, "fall": "speed"} for k in range(17)]
    (problem,) = doubtful_search([1.1, 1.0], speed + falls)
    assert problem.startswith("17 of 21 trials ended with a joint above the guard's speed") and \
        "compensate_friction false" in problem


def test_the_same_factors_falling_once_and_not_once_is_doubtful():
    # a review's search: [1.25, 1.3] fell in trial 10 and did not in trial 12, and the result said ok
    trials = [{"trial": 10, "factors": [1.25, 1.3], "fell": True, "fall": "excursion"},
              {"trial": 11, "factors": [1.25, 1.1], "fell": True, "fall": "excursion"},
              {"trial": 12, "factors": [1.25, 1.3], "fell": False}]
    (problem,) = doubtful_trials(trials)
    assert problem.startswith("factors [1.25, 1.3] fell in trial(s) [10] and did not in [12]"), problem
    assert doubtful_search([1.1, 1.0], trials) == [problem]
    assert doubtful_trials(trials[:2]) == []
