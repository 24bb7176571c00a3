"""Collisions of the simulated UR detected by the observer in the robot loop (scenarios/collisions.py)."""

import numpy as np
import pytest

from robot_dynamics_id.control.collision import CollisionDetector, estimate_thresholds, observer_residuals
from robot_dynamics_id.scenarios.collisions import (CASE_KINDS, plan_collision_cases, reference_run,
                                                    run_collision_case, run_collision_free)
from robot_dynamics_id.sim.excitation_presets import paper_prbs_excitation
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.truth import controller_model, make_truth

RATE_HZ = 500.0


@pytest.fixture(scope="module")
def setup():
    truth = make_truth("ur3", 5)
    trajectory = paper_prbs_excitation("ur3", duration_s=8.0, seed=3)
    validation = run_experiment(trajectory, robot="ur3", truth=truth, noise_seed=4, rate_hz=RATE_HZ).recording
    detectors = {}
    for name, model in (("truth", truth), ("nominal", controller_model("ur3"))):
        residual = observer_residuals(model, validation.time_s, validation.q_rad, validation.qd_rad_s,
                                      validation.current_a, gain_per_s=50.0)
        thresholds = estimate_thresholds(residual, validation.qd_rad_s, joint_names=model.joint_names,
                                         observer_gain_per_s=50.0, rate_hz=RATE_HZ)
        detectors[name] = CollisionDetector(model, thresholds, rate_hz=RATE_HZ)
    reference = reference_run(trajectory, robot="ur3", truth=truth, rate_hz=RATE_HZ, noise_seed=6)
    return truth, trajectory, detectors, reference


def test_collisions_of_every_kind_are_detected_and_stop_the_arm(setup):
    _, _, detectors, reference = setup
    cases = plan_collision_cases(reference, 3, seed=1)
    assert [c.kind for c in cases] == list(CASE_KINDS)
    for case in cases:
        result = run_collision_case(reference, case, detectors["truth"], model="truth")
        assert result.touch_s == pytest.approx(case.contact_time_s, abs=0.005), case.describe()  # on the planned path
        assert result.detected and not result.missed, case.describe()
        assert result.delay_s < 0.02, (case.describe(), result.delay_s)
        assert result.final_speed_rad_s < 0.01  # the protective stop brought the arm to rest
        assert result.detection.contact_link_at_least <= case.link
        assert result.peak_force_n >= result.force_at_detection_n > 0


def test_the_nominal_model_needs_a_harder_contact(setup):
    _, _, detectors, reference = setup
    (case,) = plan_collision_cases(reference, 1, seed=2, kinds=("soft_obstacle",))
    exact = run_collision_case(reference, case, detectors["truth"], model="truth")
    nominal = run_collision_case(reference, case, detectors["nominal"], model="nominal")
    assert exact.detected
    assert nominal.missed or nominal.force_at_detection_n > exact.force_at_detection_n


def test_collision_free_excitation_raises_nothing_with_the_exact_model(setup):
    truth, trajectory, detectors, _ = setup
    result = run_collision_free(trajectory, {"truth": detectors["truth"]}, robot="ur3", truth=truth,
                                rate_hz=RATE_HZ, duration_s=12.0, noise_seed=7)
    assert result.duration_s == pytest.approx(12.0, abs=0.01)
    assert result.passes >= 1  # finished and started again
    assert result.alarms["truth"] == []
    assert 0.1 < result.max_ratio["truth"].max() < 1.0
