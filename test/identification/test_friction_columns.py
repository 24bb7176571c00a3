"""Friction columns: parallel-filtered exactly like the torque, on evenly and unevenly spaced samples."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.signal

from robot_dynamics_id.dynamics.friction import dahl_state, friction_torque
from robot_dynamics_id.identification.friction_columns import (
    ColumnCache,
    FrictionDesign,
    _centred_means,
    _filtfilt,
    design_columns,
    friction_speed_range,
    friction_torque_preprocessed,
)
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


def test_beyond_a_models_speed_range_the_columns_take_its_extension_and_a_fit_records_its_range(friction_only):
    """A model identified over slower speeds (range 0.2 rad/s; the joints reach 0.3): the parallel-filtered
    prediction is the filtered torque of dynamics/friction.py's law with its extension beyond the range; the range a
    fit records is the largest speed of the velocity its columns are evaluated on."""
    friction, t, q, qd, unbounded = friction_only
    bounded = replace(friction, speed_range_rad_s=np.full(6, 0.2))
    state = dahl_state(np.diff(q, axis=0, prepend=q[:1]), friction.presliding_distance_rad)
    tau = friction_torque(bounded, qd, presliding_state=state)
    assert np.max(np.abs(tau - unbounded)) > 1e-3  # the concave law and its extension part beyond 0.2 rad/s
    data, error = _parallel_error(bounded, t, q, qd, tau, np.arange(t.size))
    assert np.all(error < 1e-3), error
    np.testing.assert_allclose(friction_speed_range(data), np.abs(qd).max(axis=0), rtol=1e-12)
    # the Stribeck column alone (a cached path the searches use) is held at the range like the others
    cache = ColumnCache(data)
    shape = dict(stribeck_velocity_rad_s=0.5, coulomb_velocity_rad_s=0.01, speed_range_rad_s=0.2)
    alone = cache.columns(0, ["static_nm"], **shape)[:, 0]
    np.testing.assert_allclose(alone, cache.columns(0, ["static_nm", "coulomb_nm"], **shape)[:, 0], rtol=1e-12)
    assert np.max(np.abs(alone - cache.columns(0, ["static_nm"], **{**shape, "speed_range_rad_s": np.inf})[:, 0])) > 1e-3


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


def _rms(x):
    return np.sqrt(np.mean(x ** 2, axis=0))


def test_the_searches_fast_filter_gives_the_exact_columns_within_a_percent(friction_only):
    """The searches filter trial columns at a reduced rate (ColumnCache(fast=True)): moving mean, then the same
    Butterworth cut-off. Every column of a rich design (load term included) stays within 1 % rms of the exact
    filter's."""
    friction, t, q, qd, tau = friction_only
    data = preprocess(t, q, tau, qd_rad_s=qd, options=PreprocessingOptions(cutoff_hz=3.0))
    design = FrictionDesign.of(replace(friction, terms=("p2+load+poly+presliding",) * 6))
    load = np.column_stack([np.cos(0.3 * data.time_s + j) * (2.0 + j) for j in range(6)])
    exact = design_columns(ColumnCache(data), design, load)
    fast_cache = ColumnCache(data, fast=True)
    fast = design_columns(fast_cache, design, load)
    assert fast_cache.filtered([np.ones((t.size, 1))]).shape == (data.n_samples, 1)
    assert np.all(_rms(fast - exact) <= 0.01 * _rms(exact)), _rms(fast - exact) / _rms(exact)
    assert not np.array_equal(fast, exact)  # the reduced-rate filter was used, not the exact one


def test_a_new_load_torque_gives_new_load_columns(friction_only):
    """The load term's full-rate torque is kept for the load array last asked with; another array is used as
    given (the load-dependent Coulomb column is linear in |load|)."""
    friction, t, q, qd, tau = friction_only
    data = preprocess(t, q, tau, qd_rad_s=qd, options=PreprocessingOptions(cutoff_hz=3.0))
    cache = ColumnCache(data, fast=True)
    load = np.column_stack([np.cos(0.3 * data.time_s + j) * (2.0 + j) for j in range(6)])
    kwargs = dict(stribeck_velocity_rad_s=0.1, coulomb_velocity_rad_s=0.01)
    once = cache.columns(2, ["load_coefficient"], load_torque_nm=load, **kwargs)
    twice = cache.columns(2, ["load_coefficient"], load_torque_nm=2.0 * load, **kwargs)
    np.testing.assert_allclose(twice, 2.0 * once, rtol=1e-9, atol=1e-12)
    again = cache.columns(2, ["load_coefficient"], load_torque_nm=load, **kwargs)
    np.testing.assert_allclose(again, once, rtol=1e-12)


@pytest.mark.parametrize("padlen", [0, 1, 30, 49])
def test_the_filter_with_given_initial_conditions_is_scipys_filtfilt(padlen):
    sos = scipy.signal.butter(4, 3.0, fs=100.0, output="sos")
    x = np.random.default_rng(2).normal(size=(50 if padlen == 49 else 400, 3)).cumsum(axis=0)
    np.testing.assert_allclose(_filtfilt(sos, scipy.signal.sosfilt_zi(sos), x, padlen),
                               scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padlen), rtol=0, atol=1e-12)


@pytest.mark.parametrize("length, first, m", [(100, 0, 5), (101, 4, 5), (7, 2, 9), (3, 2, 3), (60, 1, 1)])
def test_centred_means_average_the_rows_each_window_covers(length, first, m):
    x = np.random.default_rng(3).normal(size=(length, 2))
    expected = [x[max(c - m // 2, 0): c + m // 2 + 1].mean(axis=0) for c in range(first, length, m)]
    np.testing.assert_allclose(_centred_means(x, first, m), np.reshape(expected, (-1, 2)), atol=1e-12)
