"""The plain least-squares baseline (identification/baseline.py): its columns are the model it names, and the
chunked fit is the one-shot least-squares solution."""

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.identification import baseline
from robot_dynamics_id.identification.synthetic import fourier_trajectory, perturbed_truth
from robot_dynamics_id.robots.model import load_robot

VISCOUS = np.array([1.2, 0.9, 0.7, 0.3, 0.25, 0.2])
COULOMB = np.array([2.0, 1.5, 1.1, 0.5, 0.45, 0.4])
OFFSET = np.array([0.3, -0.2, 0.1, 0.05, -0.04, 0.02])


def _samples(robot, truth_robot, seed: int, duration_s: float = 8.0):
    """Preprocessed-like samples whose torque is exactly the baseline's model: rigid body of the truth's
    links (no rotor inertia) + viscous + Coulomb (sign) + offset."""
    t, q, qd, qdd = fourier_trajectory(robot, duration_s=duration_s, rate_hz=100.0, seed=seed)
    data = truth_robot.model.createData()
    rigid = np.array([pin.rnea(truth_robot.model, data, *x) for x in zip(q, qd, qdd)])
    torque = rigid + VISCOUS * qd + COULOMB * np.sign(qd) + OFFSET
    return SimpleNamespace(q_rad=q, qd_rad_s=qd, qdd_rad_s2=qdd, torque=torque, n_samples=t.shape[0])


@pytest.fixture(scope="module")
def arms():
    robot = load_robot("ur3")
    truth = perturbed_truth("ur3", seed=5, relative=0.1).robot_model()
    truth.model.armature = np.zeros(truth.n_joints)  # the baseline has no rotor inertia column
    return robot, truth


def test_the_baseline_recovers_a_torque_of_its_own_model_class_on_another_trajectory(arms):
    robot, truth = arms
    theta = baseline.fit_baseline(_samples(robot, truth, seed=1), robot)
    held_out = _samples(robot, truth, seed=2)
    predicted = baseline.predict_baseline(theta, held_out, robot)
    error = np.linalg.norm(predicted - held_out.torque, axis=0) / np.linalg.norm(held_out.torque, axis=0)
    assert error.max() < 1e-6, error
    # each friction column sits on its own joint: the fitted viscous/Coulomb/offset are the truth's
    np.testing.assert_allclose(theta[60:].reshape(6, 3), np.column_stack([VISCOUS, COULOMB, OFFSET]), atol=1e-6)


def test_the_chunked_fit_is_the_one_shot_least_squares_solution(arms, monkeypatch):
    robot, truth = arms
    samples = _samples(robot, truth, seed=3)
    rng = np.random.default_rng(0)
    samples.torque = samples.torque + rng.normal(scale=0.05, size=samples.torque.shape)
    w = baseline._columns(robot, samples.q_rad, samples.qd_rad_s, samples.qdd_rad_s2)
    one_shot = np.linalg.lstsq(w, samples.torque.ravel(), rcond=None)[0]
    monkeypatch.setattr(baseline, "CHUNK_SAMPLES", 170)  # 800 samples: five chunks, the last one short
    chunked = baseline.fit_baseline(samples, robot)
    # the non-base directions are not determined: compare what the parameters predict
    np.testing.assert_allclose(w @ chunked, w @ one_shot, atol=1e-8)
    assert np.linalg.norm(chunked) <= np.linalg.norm(one_shot) * (1 + 1e-9)  # the minimum-norm solution


def test_bad_shapes_are_refused(arms):
    robot, truth = arms
    samples = _samples(robot, truth, seed=4, duration_s=1.0)
    with pytest.raises(ValueError, match="expected 78 values for 6 joints"):
        baseline.predict_baseline(np.zeros(77), samples, robot)
    samples.torque = samples.torque[:, :5]
    with pytest.raises(ValueError, match="5 joints"):
        baseline.fit_baseline(samples, robot)
