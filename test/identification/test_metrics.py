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
