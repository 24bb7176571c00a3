"""The calibrated-curve friction law (sim/measured_friction.py) and the plant running it."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.dynamics.friction import friction_torque
from robot_dynamics_id.robots import get_robot
from robot_dynamics_id.robots.priors import nominal_drive_gains
from robot_dynamics_id.sim.measured_friction import CALIBRATION_SPEEDS_RAD_S, measured_friction
from robot_dynamics_id.sim.plant import SimulatedUR
from robot_dynamics_id.sim.truth import make_truth

HOME = np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0])


def test_the_ur5e_curve_passes_through_the_calibration_points_times_the_gear_ratio():
    """Base joint, positive direction: 0.055, 0.095, 0.136, 0.174 Nm motor side x 101 (the module's table)."""
    law = measured_friction("ur5e")
    np.testing.assert_allclose(law.steady_curve(CALIBRATION_SPEEDS_RAD_S, 0),
                               101 * np.array([0.055, 0.095, 0.136, 0.174]), rtol=1e-12)
    np.testing.assert_allclose(law.steady_curve(CALIBRATION_SPEEDS_RAD_S, 1, direction=-1),
                               101 * np.array([0.066, 0.106, 0.158, 0.219]), rtol=1e-12)


@pytest.mark.parametrize("seed", [None, 3, 1001])
def test_every_curve_is_monotone_flat_at_breakaway_and_concave_where_the_table_is(seed):
    law = measured_friction("ur3", seed)
    speeds = np.linspace(0.0, 4.0, 4001)
    for j in range(6):
        for direction, curves in ((1, law.positive), (-1, law.negative)):
            curve = law.steady_curve(speeds, j, direction=direction)
            assert np.all(np.diff(curve) >= -1e-12)
            assert np.ptp(curve[speeds <= 0.01]) == 0.0
            assert curve[0] > 0
            # concave: steeper at low speed than at high (the table's chord slopes fall, but for wrist 3's
            # positive direction above 0.5 rad/s)
            knee = curves[j].speeds[1]
            slow, fast = (curves[j].value_and_slope(v)[1] for v in (0.5 * knee, 4.0 * knee))
            assert slow > fast or (j == 5 and direction == 1)
    # no Coulomb + viscous line holds the base joint's curve: the best line over 0.05-3 rad/s misses by > 3 %
    table = measured_friction("ur5e")
    fast = np.linspace(0.05, 3.0, 200)
    curve = table.steady_curve(fast, 0)
    line = np.polyval(np.polyfit(fast, curve, 1), fast)
    assert np.max(np.abs(line - curve)) > 0.03 * curve.max()


def test_the_slope_is_the_derivative_of_the_torque():
    law = measured_friction("ur5e", 7)
    law.elements[:] = np.array([[0.3, -1.0, 1.0, 0.9, -0.2, 0.0]] * 2)
    load = np.array([20.0, -60.0, 30.0, 3.0, -2.0, 0.5])
    rng = np.random.default_rng(0)
    for qd in np.concatenate([rng.normal(0, 0.05, (20, 6)), rng.normal(0, 1.5, (20, 6))]):
        torque, slope = law.torque_and_slope(qd, load)
        h = 1e-7
        # where the power-flow sign (tau_l qd) does not change within +-h
        numeric = (law.torque_and_slope(qd + h, load)[0] - law.torque_and_slope(qd - h, load)[0]) / (2 * h)
        np.testing.assert_allclose(slope, numeric, rtol=1e-4, atol=1e-3)
        assert np.all(np.isfinite(torque))


def test_the_load_term_is_larger_when_the_joint_drives_its_links_than_when_they_back_drive_it():
    law = measured_friction("ur5e", 1001)
    law.reset(np.full(6, 0.5))
    qd = np.full(6, 0.5)
    no_load = law.torque_and_slope(qd, np.zeros(6))[0]
    driving = law.torque_and_slope(qd, np.full(6, 20.0))[0] - no_load
    driven = law.torque_and_slope(qd, np.full(6, -20.0))[0] - no_load
    expected = law.mu_abs * 20 + law.mu_square * 400 / law.rated_torque_nm
    np.testing.assert_allclose(driving, expected * (1 + law.beta), rtol=1e-12)
    np.testing.assert_allclose(driven, expected * (1 - law.beta), rtol=1e-12)
    assert np.all(law.beta > 0)


def test_the_two_presliding_elements_build_friction_over_travel_and_hold_it_at_rest():
    law = measured_friction("ur5e")
    law.reset(np.full(6, -1.0))  # slid negative
    delta = law.delta[0]
    law.advance(np.full(6, delta))  # one distance of positive travel: the fast element has turned, the slow not yet
    fast, slow = law.elements[0, 0], law.elements[1, 0]
    assert fast == pytest.approx(1 - 2 * np.exp(-1.0), rel=1e-12)
    assert slow == pytest.approx(1 - 2 * np.exp(-0.2), rel=1e-12)
    law.advance(np.full(6, 40 * delta))
    at_rest = law.torque_and_slope(np.zeros(6), np.zeros(6))[0]  # standing still after positive travel
    breakaway = np.array([law.steady_curve([0.0], j)[0] for j in range(6)])
    assert np.all(at_rest > 0.99 * breakaway) and np.all(at_rest <= breakaway)


def test_a_joint_held_at_rest_in_the_plant_stays_still():
    """Stopped after a move, every joint holds still (the friction's sign picks the direction's curve and the power
    flow: picked by the sign of the velocity they flipped at rest, and the held joints chattered, std 0.2-0.45 Nm)."""
    sim = SimulatedUR(robot="ur5e", truth=make_truth("ur5e", 4), rate_hz=500, initial_q_rad=HOME, noise=False,
                      joint_friction=measured_friction("ur5e", 4))
    sim.speed_j(np.full(6, 0.2), 2.0)
    sim.step(250)
    sim.speed_j(np.zeros(6), 2.0)
    sim.step(250)
    held = []
    for _ in range(250):
        sim.step()
        held.append(sim.friction_torque_nm.copy())
        assert np.max(np.abs(sim.qd_true_rad_s)) < 1e-4
    assert np.max(np.std(held, axis=0)) < 1e-3


def test_urs_model_knows_this_arms_curve_without_load_or_direction():
    law = measured_friction("ur5e", 5)
    view = law.controller_view()
    for j in range(6):
        knots = law.positive[j].speeds  # the calibration points (both directions share them)
        mean = 0.5 * (law.steady_curve(knots, j) + law.steady_curve(knots, j, direction=-1))
        np.testing.assert_allclose(view.steady_curve(knots, j), mean, rtol=1e-12)
        between = np.linspace(0.0, 3.5, 50)  # the mean curve's own interpolation, close to the curves' mean
        mean = 0.5 * (law.steady_curve(between, j) + law.steady_curve(between, j, direction=-1))
        np.testing.assert_allclose(view.steady_curve(between, j), mean, rtol=2e-3)
    assert not view.needs_load_torque and not view.any_presliding
    # the sign of the reference velocity, smoothed; no load term whatever the torque
    torque = view.torque_and_slope(np.full(6, -1.0), np.full(6, 500.0))[0]
    np.testing.assert_allclose(torque, [-view.steady_curve([1.0], j)[0] for j in range(6)], rtol=1e-6)


def test_the_plant_applies_the_law_and_target_current_holds_the_calibrated_curve():
    """At constant speed the plant's friction is the law's (slid state, the links' torque as load) and
    target_current x nominal gains - target_moment is the controller's view at the reference velocity."""
    truth = make_truth("ur5e", 4)
    law = measured_friction("ur5e", 4)
    sim = SimulatedUR(robot="ur5e", truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False, joint_friction=law)
    command = np.array([0.4, -0.3, 0.3, 0.6, -0.6, 0.9])
    sim.speed_j(command, 4.0)
    sim.step(400)
    links = truth.robot_model().model.copy()
    links.armature = np.zeros(6)
    reference = measured_friction("ur5e", 4)
    reference.reset(command)
    view = law.controller_view()
    gains = nominal_drive_gains("ur5e")
    for _ in range(10):
        state = sim.step()
        q, qd = sim.q_true_rad, sim.qd_true_rad_s
        load = np.array(pin.rnea(links, links.createData(), q, qd, np.zeros(6)))
        np.testing.assert_allclose(sim.friction_torque_nm, reference.torque_and_slope(qd, load)[0], atol=2e-2)
        np.testing.assert_allclose(state.target_current_a * gains - state.target_moment_nm,
                                   view.torque_and_slope(command)[0], rtol=1e-9, atol=1e-9)
    # and the truth's own friction is not applied
    p2 = friction_torque(truth.friction, sim.qd_true_rad_s)
    assert np.max(np.abs(sim.friction_torque_nm - p2)) > 1.0


def test_another_arm_scales_with_the_square_root_of_its_torque_limits():
    ur3, ur5e = measured_friction("ur3"), measured_friction("ur5e")
    ratio = np.array([ur3.steady_curve([1.0], j)[0] / ur5e.steady_curve([1.0], j)[0] for j in range(6)])
    limits = get_robot("ur3").torque_limit_nm / get_robot("ur5e").torque_limit_nm
    np.testing.assert_allclose(ratio, np.sqrt(limits), rtol=1e-12)
