"""P3 eq. (31) fit, RRE and RMS."""

import numpy as np

from robot_dynamics_id.identification.metrics import fit_percent, relative_residual_error_percent, torque_metrics


def test_fit_definition():
    t = np.linspace(0, 1, 100)
    measured = np.column_stack([np.sin(6 * t) + 2, np.cos(3 * t)])
    np.testing.assert_allclose(fit_percent(measured, measured), 100.0)
    np.testing.assert_allclose(fit_percent(np.tile(measured.mean(0), (100, 1)), measured), 0.0, atol=1e-12)
    assert np.all(fit_percent(-measured, measured) < 0)
    np.testing.assert_allclose(relative_residual_error_percent(1.1 * measured, measured), 10.0)
    m = torque_metrics(measured + 0.01, measured, ["a", "b"])
    assert m["per_joint"]["a"]["rms_nm"] == m["rms_nm"][0] and abs(m["rms_nm"][1] - 0.01) < 1e-12


def test_moving_sample_rre_scores_each_joint_where_it_moves():
    from robot_dynamics_id.identification.metrics import moving_rre_percent, moving_samples

    qd = np.array([[0.5, 0.0], [0.01, 0.3], [-0.5, 0.3], [0.0, -0.03]])
    moving = moving_samples(qd)
    np.testing.assert_array_equal(moving, [[True, False], [False, True], [True, True], [False, True]])
    measured = np.array([[2.0, 9.0], [9.0, 1.0], [-2.0, 1.0], [9.0, -1.0]])
    predicted = measured + np.array([[0.2, 50.0], [50.0, 0.1], [0.2, 0.1], [50.0, -0.1]])  # big errors at rest
    np.testing.assert_allclose(moving_rre_percent(predicted, measured, moving), [10.0, 10.0])
    m = torque_metrics(predicted, measured, ["a", "b"], moving=moving)
    np.testing.assert_allclose(m["moving_rre_percent"], [10.0, 10.0])
    assert m["per_joint"]["b"]["moving_rre_percent"] == m["moving_rre_percent"][1]
    assert m["moving_samples"] == [2, 3]
    assert np.isnan(moving_rre_percent(measured, measured, np.zeros_like(moving))).all()
