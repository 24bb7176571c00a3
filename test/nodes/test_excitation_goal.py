"""The excitation node's trajectory message: points every 1/trajectory_point_rate_hz, checked against every
planned sample (the receiver's quintic interpolation must reproduce the plan)."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot_dynamics_id.nodes.excitation import ExcitationNode
from robot_dynamics_id.parameters import ParameterError
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation

NAMES = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
         "wrist_3_joint"]


@pytest.fixture(scope="module")
def plan():
    return planned_fourier_excitation("ur3", duration_s=10.0, seed=0, rate_hz=500.0, period_s=10.0)


def _goal_message(plan, point_rate_hz):
    node = SimpleNamespace(_point_rate_hz=point_rate_hz, _names=NAMES)
    return ExcitationNode._goal_message(node, plan)


def test_points_at_the_point_rate_and_the_last_sample(plan):
    msg, points = _goal_message(plan, 100.0)
    assert points == len(msg.points) == (plan.n_samples - 1) // 5 + 1 + ((plan.n_samples - 1) % 5 != 0)
    last = msg.points[-1]
    assert last.time_from_start.sec + last.time_from_start.nanosec * 1e-9 == pytest.approx(
        plan.time_s[-1] - plan.time_s[0], abs=1e-9)
    np.testing.assert_allclose(last.positions, plan.position_rad[-1])


def test_too_few_points_to_reproduce_the_plan_are_refused_with_the_fix(plan):
    with pytest.raises(ParameterError, match="misses the plan by .* raise trajectory_point_rate_hz"):
        _goal_message(plan, 2.0)
