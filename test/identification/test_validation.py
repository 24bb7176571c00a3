"""Validation at the recording's own timestamps, every sample, for every method's model."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.dynamics.friction import FrictionParameters
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify, predict_preprocessed, prepare
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.identification.validation import (DOUBTFUL_FIT_PERCENT, SPEED_BEYOND_RANGE, doubtful_fits,
                                                         predict_samples, speed_range_notes, validate_recording)
from robot_dynamics_id.robots.model import load_robot

GAINS = np.array([10.0, 10.0, 8.0, 6.0, 6.0, 6.0])


@pytest.fixture(scope="module")
def setting():
    truth = perturbed_truth("ur3", seed=5, relative=0.1)
    train = synthetic_ur_recording(truth, GAINS, duration_s=30.0, seed=1, torque_noise_nm=0.02)
    check = synthetic_ur_recording(truth, GAINS, duration_s=12.0, seed=2, torque_noise_nm=0.02)
    robot = load_robot("ur3")
    models = {m: identify(train, robot, IdentificationOptions(estimator=m)) for m in ("consistent", "wls")}
    return truth, check, robot, models


def _damaged(recording):
    """Two NaN rows, a 1 s gap, and a 0.1 s piece between two gaps (too short to filter)."""
    keep = np.ones(recording.n_samples, bool)
    keep[600:700] = False          # gap
    keep[712:800] = False          # 12 samples between gaps: a short segment
    damaged = recording.select(keep)
    effort = damaged.effort_nm.copy()
    effort[300:302] = np.nan
    return replace(damaged, effort_nm=effort), keep


def test_every_sample_is_returned_with_its_status(setting):
    truth, check, robot, models = setting
    recording, _ = _damaged(check)
    result = validate_recording(models["consistent"].model, recording, recording.effort_nm, robot,
                                cutoff_hz=models["consistent"].data.cutoff_hz)
    n = recording.n_samples
    assert result.time_s.shape == (n,) and result.predicted_nm.shape == (n, 6)
    np.testing.assert_array_equal(result.time_s, recording.time_s)
    assert list(result.status[300:302]) == ["non_finite"] * 2
    assert set(result.status[600:612]) == {"short_segment"}
    assert result.status[0] == "edge" and result.status[-1] == "edge" and result.status[302] == "edge"
    counts = result.metrics["sample_status"]
    assert counts["non_finite"] == 2 and counts["short_segment"] == 12
    assert counts["scored"] + counts["edge"] == n - 14 and counts["scored"] > 0.5 * n
    assert sum(counts.values()) == n
    # predictions exist wherever the data could be filtered (edges too), and only there
    has = np.all(np.isfinite(result.predicted_nm), axis=1)
    np.testing.assert_array_equal(has, np.isin(result.status, ("scored", "edge")))
    # the metrics are those of the scored samples (reproducible from predictions.csv)
    s = result.scored
    err = result.predicted_nm[s] - result.measured_filtered_nm[s]
    rre = 100 * np.linalg.norm(err, axis=0) / np.linalg.norm(result.measured_filtered_nm[s], axis=0)
    np.testing.assert_allclose(result.metrics["rre_percent"], rre)
    assert min(result.metrics["fit_percent"]) > 95.0


def test_non_physical_models_are_validated_with_their_base_parameters(setting):
    truth, check, robot, models = setting
    wls = models["wls"]
    assert not wls.physically_consistent_links.all()
    result = validate_recording(wls.model, check, check.effort_nm, robot, cutoff_hz=wls.data.cutoff_hz)
    assert result.prediction == "base parameters"
    assert min(result.metrics["fit_percent"]) > 95.0
    # the base parameters predict what the identifier predicted on its own samples ...
    via_base, how = predict_samples(wls.model, wls.data, robot)
    assert how == "base parameters"
    np.testing.assert_allclose(via_base, wls.predicted_torque_nm, rtol=1e-9, atol=1e-9)
    # ... and what the per-link numbers (not realisable bodies) give in regressor form
    np.testing.assert_allclose(via_base, predict_preprocessed(wls.model, wls.data, robot=robot), atol=1e-6)


def test_consistent_prediction_agrees_with_the_pipeline(setting):
    truth, check, robot, models = setting
    model = models["consistent"].model
    data = prepare(check, robot, IdentificationOptions(torque_source="effort"))
    mine, how = predict_samples(model, data, robot)
    assert how == "per-link model"
    np.testing.assert_allclose(mine, predict_preprocessed(model, data, robot=robot), atol=1e-9)


def test_ur_model_is_scored_against_the_same_measurement(setting):
    truth, check, robot, models = setting
    result = validate_recording(models["consistent"].model, check, check.effort_nm, robot,
                                cutoff_hz=models["consistent"].data.cutoff_hz,
                                ur_model_nm=check.target_current_a * GAINS)
    ours, ur = result.metrics["moving_rre_percent"], result.metrics["ur_model"]["moving_rre_percent"]
    np.testing.assert_allclose(result.metrics["moving_rre_ratio_to_ur_model"], np.divide(ours, ur))
    # UR's model here is the nominal model without friction: ours, identified with friction, is better
    assert np.all(np.asarray(ours) < np.asarray(ur))
    assert result.ur_model_nm.shape == check.effort_nm.shape


def test_a_training_fit_below_zero_is_doubtful():
    """On the data it was fitted to, least squares with an offset does at least as well as the mean: a joint
    below zero there holds a torque the model cannot (a drive gain a digit off), not an unseen motion."""
    assert doubtful_fits({"fit_percent": [99.0, 0.5]}, ["a", "b"], "training", training=True) == []
    (problem,) = doubtful_fits({"fit_percent": [99.0, -10.0]}, ["a", "b"], "training", training=True)
    assert "training fit is below zero (b -10 %)" in problem and "drive gains" in problem


def test_a_fit_far_below_zero_is_doubtful():
    assert doubtful_fits({"fit_percent": [99.0, -10.0]}, ["a", "b"], "validation") == []
    (problem,) = doubtful_fits({"fit_percent": [99.0, DOUBTFUL_FIT_PERCENT - 1, float("nan")]}, ["a", "b", "c"],
                               "validation")
    assert "b -51 %" in problem and "c nan %" in problem


def test_a_recording_faster_than_the_identified_friction_is_named(setting):
    """Beyond friction.speed_range_rad_s the law is extrapolated: validate says which joints go there."""
    _, _, robot, models = setting
    model = models["consistent"].model
    names = list(robot.joint_names)
    limit = model.friction.speed_range_rad_s
    assert np.all(np.isfinite(limit)) and np.all(limit > 0)  # an identified model records its range
    qd = np.vstack([-0.99 * SPEED_BEYOND_RANGE * limit, np.zeros_like(limit), [np.nan] * len(limit)])
    assert speed_range_notes(model, qd, names) == []
    qd[0, 2] = -2.0 * limit[2]  # either direction counts
    (note,) = speed_range_notes(model, qd, names)
    assert f"{names[2]} {2.0 * limit[2]:.2f} rad/s, 2.0x its {limit[2]:.2f}" in note
    assert names[0] not in note and "--velocity-scale" in note


def test_a_model_without_a_speed_range_is_noted_where_the_recording_passes_its_laws_top(setting):
    _, _, robot, models = setting
    model = models["consistent"].model
    names = list(robot.joint_names)
    n = len(names)
    unbounded = replace(FrictionParameters.zeros(n), viscous_nm_s_per_rad=np.ones(n), coulomb_nm=np.ones(n))
    qd = np.full((2, n), 100.0)
    assert speed_range_notes(replace(model, friction=unbounded), qd, names) == []  # a law that keeps rising
    bends = replace(unbounded, viscous_quadratic_nm_s2_per_rad2=np.array([0.0, -0.5] + [0.0] * (n - 2)), terms=None)
    assert speed_range_notes(replace(model, friction=bends), np.full((2, n), 0.9), names) == []  # below its top
    (note,) = speed_range_notes(replace(model, friction=bends), np.full((2, n), 1.5), names)
    assert "no speed range" in note and f"{names[1]} past 1.00 rad/s (the recording: 1.50)" in note
    assert names[0] not in note
