"""Friction columns: parallel-filtered exactly like the torque, on evenly and unevenly spaced samples."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.dynamics.friction import dahl_state, friction_torque
from robot_dynamics_id.identification.friction_columns import friction_torque_preprocessed
from robot_dynamics_id.identification.preprocessing import PreprocessingOptions, preprocess
from robot_dynamics_id.sim.truth import nominal_friction

PERIOD_S = 0.002


@pytest.fixture(scope="module")
def friction_only():
    """30 s at 500 Hz of joints that start, stop and reverse (presliding engaged); the torque is the friction of
    the UR3's 'real' joints without the load term (which needs the rigid-body torque), positions the exact
    travel of the velocity."""
    friction = replace(nominal_friction("ur3", "real"), load_coefficient=np.zeros(6),
                       terms=("p2+poly+presliding",) * 6)
    t = np.arange(0, 30, PERIOD_S)
    qd = np.column_stack([0.3 * np.sin(2 * np.pi * (0.1 + 0.05 * j) * t + j) * (np.sin(2 * np.pi * 0.07 * t + j) > -0.3)
                          for j in range(6)])
    q = np.concatenate([np.zeros((1, 6)), np.cumsum(0.5 * (qd[1:] + qd[:-1]), axis=0) * PERIOD_S])
    state = dahl_state(np.diff(q, axis=0, prepend=q[:1]), friction.presliding_distance_rad)
    return friction, t, q, qd, friction_torque(friction, qd, presliding_state=state)


def _parallel_error(friction, t, q, qd, tau, keep):
    data = preprocess(t[keep], q[keep], tau[keep], qd_rad_s=qd[keep], options=PreprocessingOptions(cutoff_hz=3.0))
    predicted = friction_torque_preprocessed(friction, data)
    error = np.sqrt(np.mean((predicted - data.torque) ** 2, axis=0) / np.mean(data.torque ** 2, axis=0))
    return data, error


def test_columns_of_even_samples_are_the_filtered_torque(friction_only):
    data, error = _parallel_error(*friction_only, np.arange(friction_only[1].size))
    assert data.n_bridged_gaps == 0 and np.all(error < 1e-3), error


@pytest.mark.parametrize("missed", ["single cycles", "up to three cycles"])
def test_columns_of_a_host_polled_recording_are_the_filtered_torque(friction_only, missed):
    """A 500 Hz file written by a host thread misses controller cycles (4 ms steps; 8 ms when three in a row are
    missed). The columns of such a segment are filtered through the even grid like the torque, and the presliding
    travel follows each sample's own step: filtered as if even with the median step, the friction predicted
    from the true model was 1.7-3.6 % rms off the filtered torque (single cycles missed), and three missed
    cycles split the file into pieces too short to keep."""
    rng = np.random.default_rng(5)
    t = friction_only[1]
    drop = rng.random(t.size) < 0.15
    drop[1:] &= ~drop[:-1]  # single cycles only
    if missed == "up to three cycles":
        for start in rng.integers(1, t.size - 4, 40):
            drop[start: start + 3] = True
    drop[0] = drop[-1] = False
    data, error = _parallel_error(*friction_only, np.flatnonzero(~drop))
    assert data.n_segments == 1 and data.n_gaps == 0
    assert (data.n_bridged_gaps > 0) == (missed == "up to three cycles")
    assert np.all(error < 0.005), error


def test_presliding_travel_follows_how_the_recorded_velocity_is_timed(friction_only):
    """A velocity that is the mean over the step just ended (a backward difference of positions, as the simulated
    UR reports) integrated with the trapezoid lags the travel by half a step: the preprocessing finds the timing from
    the positions (weight 1 here, 0.5 for an instantaneous velocity) and the presliding state is then exact."""
    friction, t, q, qd, tau = friction_only
    backward = np.diff(q, axis=0, prepend=q[:1]) / PERIOD_S
    backward[0] = qd[0]
    keep = np.arange(t.size)
    data, error = _parallel_error(friction, t, q, backward, tau, keep)
    assert data.travel_weight == pytest.approx(1.0, abs=0.01)
    assert np.all(error < 2e-3), error
    trapezoid = friction_torque_preprocessed(friction, replace(data, travel_weight=0.5))
    lagging = np.sqrt(np.mean((trapezoid - data.torque) ** 2, axis=0) / np.mean(data.torque ** 2, axis=0))
    assert np.all(lagging > 3 * error), (lagging, error)
    assert preprocess(t, q, tau, qd_rad_s=qd, options=PreprocessingOptions(cutoff_hz=3.0)).travel_weight == \
        pytest.approx(0.5, abs=0.01)
