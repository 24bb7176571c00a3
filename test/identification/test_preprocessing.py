"""Preprocessing: gaps split segments, differentiation is accurate, cut-off comes from the data."""

import numpy as np
import pytest

from robot_dynamics_id.identification.preprocessing import (
    PreprocessingOptions,
    estimate_cutoff_hz,
    find_segments,
    preprocess,
)


def _sine(t):
    w = 2 * np.pi * 0.5
    q = np.column_stack([np.sin(w * t), 0.5 * np.cos(w * t)])
    qd = np.column_stack([w * np.cos(w * t), -0.5 * w * np.sin(w * t)])
    qdd = np.column_stack([-w**2 * np.sin(w * t), -0.5 * w**2 * np.cos(w * t)])
    return q, qd, qdd


def test_derivatives_of_a_clean_sine_are_accurate():
    t = np.arange(0, 20, 0.002)
    q, qd, qdd = _sine(t)
    data = preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=10.0))
    _, qd_ref, qdd_ref = _sine(data.time_s)
    assert np.max(np.abs(data.qd_rad_s - qd_ref)) < 1e-3
    assert np.max(np.abs(data.qdd_rad_s2 - qdd_ref)) < 0.05  # 0.5 % of the 9.9 rad/s^2 peak
    assert data.decimation == 10 and data.n_segments == 1


@pytest.mark.parametrize("velocity_recorded", [True, False])
def test_uneven_timestamps_of_a_ur_rtde_file_recording_give_accurate_accelerations(velocity_recorded):
    """ur_rtde's file recording at 100 Hz: a host thread takes the controller's latest 2 ms cycle every 10 ms
    (with host jitter), so steps are 4-16 ms. Filtering those samples as if even and differencing on the real
    stamps turned the jitter into acceleration spikes (12 % rms here); resampled, they are as good as even ones."""
    rng = np.random.default_rng(3)
    host = np.arange(3000) * 0.01 + rng.normal(0.0, 0.001, 3000)
    t = np.unique(np.floor(host / 0.002) * 0.002)
    assert len(np.unique(np.round(np.diff(t), 4))) >= 4  # really uneven
    q, qd, qdd = _sine(t)
    options = PreprocessingOptions(cutoff_hz=3.0)
    data = preprocess(t, q, qdd, qd_rad_s=qd if velocity_recorded else None, options=options)
    # the torque channel carries the true acceleration through the same filter: the reference
    error = np.sqrt(np.mean((data.qdd_rad_s2 - data.torque) ** 2)) / np.sqrt(np.mean(data.torque ** 2))
    assert error < 0.005, error
    _, qd_ref, _ = _sine(data.time_s)  # values belong to the recorded timestamps
    assert np.max(np.abs(data.qd_rad_s - qd_ref)) < 0.01
    # every sample at the recording's own timestamps (validation's predictions), in the same places
    every = preprocess(t, q, qdd, qd_rad_s=qd, options=PreprocessingOptions(cutoff_hz=3.0, keep_all_samples=True))
    assert np.array_equal(every.time_s, t) and np.array_equal(every.source_index, np.arange(t.size))


def test_gap_splits_segments_and_nothing_crosses_it():
    t = np.arange(0, 20, 0.002)
    t = np.concatenate([t[:4000], t[4500:] + 0.3])  # lost packets and a clock jump
    q, _, qdd = _sine(t)
    data = preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=10.0))
    assert data.n_segments == 2 and data.n_gaps == 1
    for seg in range(2):
        dt = np.diff(data.time_s[data.segment_id == seg])
        assert np.allclose(dt, dt[0])
    _, _, qdd_ref = _sine(data.time_s)
    assert np.max(np.abs(data.qdd_rad_s2 - qdd_ref)) < 0.05  # no edge artefacts at the gap


def test_nan_rows_are_dropped_and_become_gaps():
    t = np.arange(0, 10, 0.002)
    q, _, qdd = _sine(t)
    q[2000:2010] = np.nan
    data = preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=10.0))
    assert data.n_dropped_rows == 10 and data.n_segments == 2
    assert np.all(np.isfinite(data.qdd_rad_s2))


def test_cutoff_from_data_follows_the_motion_bandwidth():
    fs = 500.0
    t = np.arange(0, 60, 1 / fs)
    slow = np.column_stack([np.sin(2 * np.pi * 0.3 * t)])
    fast = np.column_stack([np.sin(2 * np.pi * 6.0 * t)])
    assert estimate_cutoff_hz(slow, fs, margin=5, min_cutoff_hz=0.1) < estimate_cutoff_hz(fast, fs, margin=5,
                                                                                        min_cutoff_hz=0.1)
    assert 20 < estimate_cutoff_hz(fast, fs, margin=5, min_cutoff_hz=0.1) < 40


@pytest.mark.parametrize("noise_rad_s", [1e-3, 5e-3, 1e-2])
def test_a_joint_that_barely_moves_does_not_set_the_cutoff_from_its_noise(noise_rad_s):
    """Five joints on a 10 s-period Fourier motion (bandwidth 0.5 Hz: cut-off 5 x ~0.5 Hz) and one wrist that
    barely moves (0.2 % of the others' speed, or still): its velocity is mostly noise, whose 99 % energy point is
    near Nyquist; it used to set the cut-off to 0.4 fs (40 Hz at 100 Hz) for every joint. A real 2 Hz motion of
    the same joint still raises it (5 x 2 Hz)."""
    fs = 100.0
    t = np.arange(0, 30, 1 / fs)
    rng = np.random.default_rng(0)
    v = np.column_stack([sum(rng.normal(0, 0.15) * np.sin(2 * np.pi * 0.1 * k * t + rng.uniform(0, 6))
                             for k in range(1, 6)) for _ in range(6)])
    for still in (0.002, 0.0):
        weak = v * np.r_[1, 1, 1, 1, 1, still]
        assert estimate_cutoff_hz(weak + rng.normal(0, noise_rad_s, v.shape), fs) == pytest.approx(3.0)
    fast = v + np.r_[0, 0, 0, 0, 0, 0.05] * np.sin(2 * np.pi * 2.0 * t)[:, None]
    assert estimate_cutoff_hz(fast + rng.normal(0, noise_rad_s, v.shape), fs) == pytest.approx(10.0, rel=0.05)


def test_errors_name_the_problem():
    with pytest.raises(ValueError, match="never increase"):
        find_segments(np.zeros(5))
    t = np.arange(0, 0.05, 0.002)
    with pytest.raises(ValueError, match="long enough"):
        preprocess(t, np.zeros((t.size, 2)), np.zeros((t.size, 2)), options=PreprocessingOptions(cutoff_hz=10.0))
    with pytest.raises(ValueError, match="cutoff_hz"):
        preprocess(np.arange(0, 5, 0.002), np.zeros((2500, 1)), np.zeros((2500, 1)),
                   options=PreprocessingOptions(cutoff_hz=400.0))


def test_short_gaps_are_bridged_long_ones_split():
    """A few missed 2 ms cycles (8 ms steps) are bridged: the segment goes on, resampled on its even grid; a
    jump longer than max_bridged_gap_s, or than a tenth of the cut-off's period, still splits."""
    t = np.arange(0, 20, 0.002)
    keep = np.ones(t.size, bool)
    for start in range(300, 9000, 870):  # ten 8 ms steps
        keep[start: start + 3] = False
    keep[4000:4150] = False  # a 0.3 s pause
    t = t[keep]
    q, _, qdd = _sine(t)
    data = preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=3.0))
    assert (data.n_segments, data.n_gaps, data.n_bridged_gaps) == (2, 1, 10)
    assert data.summary()["bridged_gaps"] == 10
    _, _, qdd_ref = _sine(data.time_s)
    assert np.max(np.abs(data.qdd_rad_s2 - qdd_ref)) < 0.05
    # a 20 Hz cut-off allows 5 ms: the 8 ms steps split; so does max_bridged_gap_s=0
    assert preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=20.0)).n_gaps == 11
    assert preprocess(t, q, qdd, options=PreprocessingOptions(cutoff_hz=3.0, max_bridged_gap_s=0.0)).n_gaps == 11


def test_cutoff_of_unevenly_spaced_samples_is_the_even_ones():
    """The spectrum the cut-off comes from assumes even samples: uneven ones are resampled first."""
    t = np.arange(0, 60, 0.002)
    rng = np.random.default_rng(2)
    drop = rng.random(t.size) < 0.3
    drop[1:] &= ~drop[:-1]
    drop[0] = False
    w = 2 * np.pi * np.array([0.1, 0.23, 0.41, 0.6])
    qd = np.column_stack([np.sin(np.outer(t, w)).sum(axis=1)] * 2)
    q = np.column_stack([(-np.cos(np.outer(t, w)) / w).sum(axis=1)] * 2)
    even = preprocess(t, q, qd, qd_rad_s=qd).cutoff_hz
    uneven = preprocess(t[~drop], q[~drop], qd[~drop], qd_rad_s=qd[~drop]).cutoff_hz
    assert uneven == pytest.approx(even, rel=0.05), (uneven, even)
