"""Preprocessing of recorded joint data for identification.

From robot timestamps, positions, (optionally) velocities and torques/currents to
clean, synchronous q, qd, qdd and torque samples:

1. rows with NaN/inf are dropped; timestamps must increase — a jump larger than
   ``gap_factor`` x the median period (dropped packets, a paused recording) or a
   non-increasing step splits the data into *segments*; nothing is ever filtered
   or differentiated across a gap. A short jump (at most ``max_bridged_gap_s`` and
   a tenth of the cut-off's period: a few controller cycles a 500 Hz host missed)
   is *bridged* instead: the segment goes on, unevenly spaced, and takes the path
   of step 2 (splitting there would cost each piece its filter edges: a 500 Hz
   recording missing a few cycles a second lost most of its samples to trimming);
2. zero-phase low-pass (Butterworth, ``scipy.signal.sosfiltfilt``) of every
   signal, with the same filter, so torques and accelerations keep the same
   phase and attenuation; the cut-off is given or chosen from the data (the
   frequency holding ``energy_fraction`` of the joint velocities' energy, times
   ``cutoff_margin``);
   The filter assumes evenly spaced samples. A segment whose steps are not
   (host-clock stamps, ur_rtde's file recording, which polls the controller's
   2 ms cycles every 1/frequency and so records 8/10/12 ms steps at 100 Hz) is
   first resampled by linear interpolation onto an even grid of the median
   period, filtered and differentiated there, and read back at the recorded
   timestamps: filtering uneven samples as if even shifts each filtered value to
   the nominal time, and differencing those values on the real timestamps turns
   the timing jitter into acceleration spikes. Evenly spaced segments (steps
   within 0.1 % of the period) are used as they are;
3. acceleration (and velocity when not recorded) by central differences
   (``numpy.gradient``) on the segment's timestamps, or on the even grid;
4. the filter's edge transients are trimmed from each segment, then samples are
   decimated to a few times the cut-off (the signal above it is gone anyway).
   With ``keep_all_samples`` (validation's predictions at the recording's own
   timestamps) nothing is trimmed or decimated: every sample of every segment
   long enough to filter is kept and the edge samples are marked in ``edge``.

``source_index`` maps every output sample to its row in the input arrays, so
results can be put back on the recording's timestamps.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.signal

from ..dynamics.friction import friction_regressor
from ..dynamics.regressor import friction_columns

__all__ = [
    "PreprocessedData",
    "PreprocessingOptions",
    "estimate_cutoff_hz",
    "find_segments",
    "parallel_friction_columns",
    "preprocess",
    "velocity_travel_weight",
]


@dataclass(frozen=True, kw_only=True)
class PreprocessingOptions:
    """Options of :func:`preprocess` (keyword-only).

    cutoff_hz: low-pass cut-off; ``None`` = from the data (:func:`estimate_cutoff_hz`).
    filter_order: Butterworth order (applied forward and backward: twice the attenuation).
    gap_factor: a timestamp step above ``gap_factor`` x the median period is a gap.
    max_bridged_gap_s: a gap no longer than this and than a tenth of the cut-off's period is bridged (module
        doc, step 1): linear interpolation across 20 ms moves a 2 Hz motion by < 1 % of its amplitude, and the
        torque and the friction columns are interpolated alike. 0 = never bridge.
    min_segment_s: shorter segments (after trimming) are dropped.
    decimate_to_hz: target rate after filtering; ``None`` = ``decimation_factor_of_cutoff`` x cut-off.
    energy_fraction / cutoff_margin / min_cutoff_hz: the automatic cut-off choice. The floor is low
        (2 Hz) on purpose: an optimised Fourier excitation of a UR3 (10 s period, 5 harmonics) has
        its velocity energy below 0.6 Hz, so 5 x that (3 Hz) keeps the dynamics, while a 10 Hz
        cut-off lets through 1.8x more current noise (on the simulated UR3 the wrists' validation
        fit drops from 98.2 % to 96.8 %). Torques and the model see the same filter (parallel
        filtering), so the cut-off does not bias the estimate.
    friction_velocity_cutoff_hz: low-pass of the full-rate velocity the (nonlinear) friction terms are
        evaluated on before parallel filtering. ``None``: a *measured* velocity is used unfiltered and a
        velocity differentiated from positions is filtered at 4 x the cut-off. Friction follows the
        instantaneous velocity: a servo makes the wrist velocities ripple at tens of Hz (the simulated
        UR3's wrists: ~6 mrad/s rms above 20 Hz), and friction of a pre-filtered velocity then misses
        ~0.02 Nm rms that the measured torque holds (sim/plant.py, measured on the UR3).
    """

    cutoff_hz: float | None = None
    filter_order: int = 4
    gap_factor: float = 3.0
    max_bridged_gap_s: float = 0.02
    min_segment_s: float = 0.5
    decimate_to_hz: float | None = None
    decimation_factor_of_cutoff: float = 5.0
    energy_fraction: float = 0.99
    cutoff_margin: float = 5.0
    min_cutoff_hz: float = 2.0
    trim_cutoff_periods: float = 2.0
    friction_velocity_cutoff_hz: float | None = None
    keep_all_samples: bool = False


@dataclass(frozen=True)
class PreprocessedData:
    """Filtered, differentiated, gap-free samples ready for the regressor.

    Arrays have N rows (samples) and n columns (joints); ``segment_id`` tells which
    contiguous recording segment each sample came from. ``torque`` is in the
    unit it was given in (Nm, or A for currents); ``extra`` holds other signals
    filtered the same way.
    """

    time_s: np.ndarray
    q_rad: np.ndarray
    qd_rad_s: np.ndarray
    qdd_rad_s2: np.ndarray
    torque: np.ndarray
    segment_id: np.ndarray
    sample_rate_hz: float
    cutoff_hz: float
    decimation: int
    n_segments: int
    n_gaps: int
    n_dropped_rows: int = 0
    #: timestamp jumps over gap_factor x the period that were short enough to bridge (module doc, step 1)
    n_bridged_gaps: int = 0
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    #: per segment, full-rate joint velocity (lightly filtered) for friction columns, see :meth:`parallel_filter`
    full_rate_qd_rad_s: tuple[np.ndarray, ...] = ()
    #: per segment, the timestamps of those full-rate samples (s): uneven segments are filtered on an even grid
    full_rate_time_s: tuple[np.ndarray, ...] = ()
    filter_sos: np.ndarray | None = None
    trim_samples: int = 0
    #: row of the input arrays each sample came from, (N,)
    source_index: np.ndarray | None = None
    #: True for samples within the filter's edge transient of their segment (only with keep_all_samples)
    edge: np.ndarray | None = None
    keep_all_samples: bool = False
    #: w of the travel between samples, dq_k = dt_k (w qd_k + (1 - w) qd_{k-1}) (:func:`velocity_travel_weight`)
    travel_weight: float = 0.5

    def parallel_filter(self, function) -> np.ndarray:
        """Apply ``function`` (full-rate velocity (M, n) -> array (M, ...)) per segment, then the torque's
        own low-pass, trimming and decimation: the result lines up with the decimated samples.

        Nonlinear terms of the model (friction's sign and Stribeck shape) must see the same filter as
        the measured torque, or a filtered Coulomb step is compared with a sharp one (Gautier's
        parallel filtering); linearity in the parameters makes this exact.
        """
        if self.filter_sos is None:
            raise ValueError("these data carry no full-rate velocity; run preprocess() to create them")
        parts = []
        for qd_full, t_full in zip(self.full_rate_qd_rad_s, self.full_rate_time_s):
            values = np.asarray(function(qd_full), float)
            filtered = self.lowpass(values, t_full)
            parts.append(filtered if self.keep_all_samples else
                         filtered[self.trim_samples: qd_full.shape[0] - self.trim_samples: self.decimation])
        return np.concatenate(parts, axis=0)

    @property
    def full_rate_period_s(self) -> float:
        return 1.0 / (self.sample_rate_hz * self.decimation)

    def lowpass(self, values: np.ndarray, time_s: np.ndarray) -> np.ndarray:
        """The torque's zero-phase low-pass of full-rate rows (M, ...) at one segment's ``time_s`` (M,), through
        the even grid when the segment is uneven (module doc, step 2), at ``time_s``."""
        return zero_phase_lowpass(self.filter_sos, values, time_s, self.full_rate_period_s,
                                  padlen=3 * self.trim_samples)

    @property
    def n_samples(self) -> int:
        return int(self.time_s.shape[0])

    def summary(self) -> dict:
        return {"samples": self.n_samples, "sample_rate_hz": self.sample_rate_hz, "cutoff_hz": self.cutoff_hz,
                "decimation": self.decimation, "segments": self.n_segments, "gaps": self.n_gaps,
                "dropped_rows": self.n_dropped_rows, "bridged_gaps": self.n_bridged_gaps,
                "velocity_travel_weight": self.travel_weight,
                "duration_s": float(self.n_samples / self.sample_rate_hz) if self.sample_rate_hz else 0.0}


def find_segments(time_s: np.ndarray, *, gap_factor: float = 3.0, bridge_s: float = 0.0
                  ) -> tuple[list[slice], float]:
    """Contiguous segments of a timestamp vector and its median period (s).

    A step that is non-positive or larger than ``gap_factor`` x the median period ends a segment, unless it
    is no longer than ``bridge_s`` (a bridged gap: the segment goes on, unevenly spaced).
    """
    t = np.asarray(time_s, float)
    if t.ndim != 1 or t.shape[0] < 2:
        raise ValueError("time_s must be a 1-D array of at least 2 timestamps")
    dt = np.diff(t)
    positive = dt[dt > 0]
    if positive.size == 0:
        raise ValueError("timestamps never increase; pass the robot's timestamps in seconds")
    period = float(np.median(positive))
    breaks = np.flatnonzero((dt <= 0) | ((dt > gap_factor * period) & (dt > bridge_s))) + 1
    edges = np.concatenate([[0], breaks, [t.shape[0]]])
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a], period


def count_long_steps(time_s: np.ndarray, segments: list[slice], period_s: float, gap_factor: float) -> int:
    """Steps over ``gap_factor`` x the period inside the segments: the gaps that were bridged."""
    return int(sum(np.count_nonzero(np.diff(time_s[s]) > gap_factor * period_s) for s in segments))


#: the top of the spectrum (this fraction of the Nyquist band and above) holds only the velocity's noise: its
#: median level is the noise floor :func:`estimate_cutoff_hz` takes off before measuring the motion's bandwidth
NOISE_BAND_FRACTION = 0.75
#: a spectral bin holds motion when it is this many times above the noise floor (a Welch estimate of white
#: noise from a few segments fluctuates up to ~3x its level)
NOISE_PEAK_FACTOR = 4.0
#: a joint whose velocity energy above the noise floor is less than this fraction of its whole energy barely
#: moves: it has no bandwidth of its own to keep (its 99 % point would be in the noise)
MOTION_ENERGY_FRACTION = 0.5


def estimate_cutoff_hz(velocity: np.ndarray, sample_rate_hz: float, *, energy_fraction: float = 0.99,
                       margin: float = 5.0, min_cutoff_hz: float = 2.0) -> float:
    """Cut-off from the data: ``margin`` x the frequency below which ``energy_fraction`` of the
    (mean-removed) joint velocities' spectral energy lies, worst joint; clipped to [min, 0.4 fs].

    The motion's own bandwidth is what the dynamics must keep; noise lives above it. So each joint's
    white noise floor (the median level of the top quarter of the spectrum, :data:`NOISE_BAND_FRACTION`)
    is taken off first (bins within :data:`NOISE_PEAK_FACTOR` of it hold no motion), and a joint left
    with less than :data:`MOTION_ENERGY_FRACTION` of its energy (one that barely moves: its velocity is
    mostly noise) does not set the bandwidth: otherwise a single still joint put its 99 % point in the
    noise and the cut-off at 0.4 fs, unfiltering every joint.
    """
    v = np.atleast_2d(np.asarray(velocity, float))
    if v.shape[0] < 16:
        return float(np.clip(min_cutoff_hz, 0, 0.4 * sample_rate_hz))
    freqs, psd = scipy.signal.welch(v - v.mean(axis=0), fs=sample_rate_hz, axis=0,
                                    nperseg=min(v.shape[0], int(max(256, 10 * sample_rate_hz))))
    top = freqs >= NOISE_BAND_FRACTION * 0.5 * sample_rate_hz
    floor = np.median(psd[top], axis=0) if np.count_nonzero(top) >= 4 else np.zeros(psd.shape[1])
    # above the floor by more than its fluctuations (a few averaged segments: up to ~3x): the motion's bins
    motion = np.where(psd > NOISE_PEAK_FACTOR * floor, psd - floor, 0.0)
    energy = np.cumsum(motion, axis=0)
    total, whole = energy[-1], psd.sum(axis=0)
    bandwidth = 0.0
    for j in range(v.shape[1]):
        if total[j] <= 0 or total[j] < MOTION_ENERGY_FRACTION * whole[j]:
            continue
        k = int(np.searchsorted(energy[:, j], energy_fraction * total[j]))
        bandwidth = max(bandwidth, float(freqs[min(k, freqs.shape[0] - 1)]))
    return float(np.clip(margin * bandwidth, min_cutoff_hz, 0.4 * sample_rate_hz))


#: steps within this fraction of the median period count as evenly spaced (no resampling)
EVEN_STEP_TOLERANCE = 1e-3


def even_grid(time_s: np.ndarray, period_s: float) -> np.ndarray | None:
    """Evenly spaced times from ``time_s[0]`` at ``period_s`` within the segment, or None when the segment's
    own steps are already even (each within :data:`EVEN_STEP_TOLERANCE` of the period)."""
    t = np.asarray(time_s, float)
    if t.size < 2 or np.max(np.abs(np.diff(t) - period_s)) <= EVEN_STEP_TOLERANCE * period_s:
        return None
    count = int(np.floor((t[-1] - t[0]) / period_s + 1e-9)) + 1
    return t[0] + period_s * np.arange(count)


def interpolate_rows(new_t: np.ndarray, old_t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each column of ``values`` (rows at ``old_t``, any trailing shape) linearly interpolated at ``new_t``
    (held past the ends)."""
    flat = values.reshape(values.shape[0], -1)
    out = np.column_stack([np.interp(new_t, old_t, flat[:, j]) for j in range(flat.shape[1])])
    return out.reshape((new_t.shape[0],) + values.shape[1:])


def zero_phase_lowpass(sos: np.ndarray, values: np.ndarray, time_s: np.ndarray, period_s: float, *,
                       padlen: int) -> np.ndarray:
    """``sosfiltfilt`` of rows (M, ...) at ``time_s``; an uneven segment through its even grid (module doc,
    step 2), read back at ``time_s``."""
    grid = even_grid(time_s, period_s)
    if grid is None:
        return scipy.signal.sosfiltfilt(sos, values, axis=0, padlen=min(padlen, values.shape[0] - 1))
    filtered = scipy.signal.sosfiltfilt(sos, interpolate_rows(grid, time_s, values), axis=0,
                                        padlen=min(padlen, grid.shape[0] - 1))
    return interpolate_rows(time_s, grid, filtered)


def velocity_travel_weight(time_s: np.ndarray, q_rad: np.ndarray, qd_rad_s: np.ndarray,
                           segments: list[slice]) -> float:
    """How a recorded velocity is timed against the positions: the w, in [0, 1], for which
    ``q_k - q_{k-1} = dt_k (w qd_k + (1 - w) qd_{k-1})`` holds best (least squares over every step of every
    segment; 0.5 when nothing moves).

    0.5 is a velocity of the sample's instant (the trapezoidal rule); 1 a velocity that is the mean over the
    step just ended (a backward difference of positions, which is what the simulated UR reports and an encoder
    velocity usually is); a 100 Hz file of a 500 Hz controller's 2 ms mean velocity gives about 0.6. The
    presliding state follows the travel (:class:`~.friction_columns.ColumnCache`): integrated with the
    trapezoid, a backward-difference velocity lags half a step, and a presliding distance is a fraction of a
    millirad, a few steps of travel. The positions fix the timing; the velocity, less noisy, then gives the
    travel (differences of quantised positions would move the state at standstill).
    """
    num = den = 0.0
    for seg in segments:
        if seg.stop - seg.start < 3:
            continue
        v = qd_rad_s[seg]
        x = np.diff(v, axis=0)
        y = np.diff(q_rad[seg], axis=0) / np.diff(time_s[seg])[:, None] - v[:-1]
        num += float(np.sum(x * y))
        den += float(np.sum(x * x))
    return float(np.clip(num / den, 0.0, 1.0)) if den > 0 else 0.5


def _velocity_for_cutoff(t: np.ndarray, q: np.ndarray, qd: np.ndarray | None, period_s: float) -> np.ndarray:
    """The joint velocity of one segment on evenly spaced samples (the spectrum assumes them)."""
    v = qd if qd is not None else np.gradient(q, t, axis=0)
    grid = even_grid(t, period_s)
    return v if grid is None else interpolate_rows(grid, t, v)


def _check_signal(name: str, values, n_rows: int) -> np.ndarray:
    arr = np.asarray(values, float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n_rows:
        raise ValueError(f"{name} must have shape (N, n) with N={n_rows} samples, got {np.shape(values)}")
    return arr


def preprocess(time_s, q_rad, torque, *, qd_rad_s=None, extra: dict | None = None,
               options: PreprocessingOptions | None = None) -> PreprocessedData:
    """Segment, filter, differentiate, trim and decimate one recording (see module docstring)."""
    opts = options or PreprocessingOptions()
    t = np.asarray(time_s, float).ravel()
    n_rows = t.shape[0]
    q = _check_signal("q_rad", q_rad, n_rows)
    tau = _check_signal("torque", torque, n_rows)
    qd = None if qd_rad_s is None else _check_signal("qd_rad_s", qd_rad_s, n_rows)
    extra_in = {k: _check_signal(k, v, n_rows) for k, v in (extra or {}).items()}
    if tau.shape[1] != q.shape[1] or (qd is not None and qd.shape[1] != q.shape[1]):
        raise ValueError(f"q has {q.shape[1]} joints but torque/velocity have a different count")
    stacked = [t[:, None], q, tau] + ([qd] if qd is not None else []) + list(extra_in.values())
    finite = np.all(np.isfinite(np.hstack(stacked)), axis=1)
    n_bad = int(n_rows - finite.sum())
    if finite.sum() < 2:
        raise ValueError("fewer than 2 finite samples; check the recording")
    # Drop bad rows; the time jump they leave is then detected as a gap.
    rows = np.flatnonzero(finite)
    t, q, tau = t[finite], q[finite], tau[finite]
    qd = None if qd is None else qd[finite]
    extra_in = {k: v[finite] for k, v in extra_in.items()}

    segments, period = find_segments(t, gap_factor=opts.gap_factor, bridge_s=opts.max_bridged_gap_s)
    fs = 1.0 / period
    if opts.cutoff_hz is None:
        longest = max(segments, key=lambda s: s.stop - s.start)
        v_for_cutoff = _velocity_for_cutoff(t[longest], q[longest], None if qd is None else qd[longest], period)
        cutoff = estimate_cutoff_hz(v_for_cutoff, fs, energy_fraction=opts.energy_fraction,
                                    margin=opts.cutoff_margin, min_cutoff_hz=opts.min_cutoff_hz)
    else:
        cutoff = float(opts.cutoff_hz)
        if not 0 < cutoff < 0.5 * fs:
            raise ValueError(f"cutoff_hz={cutoff} must lie in (0, {0.5 * fs:.1f}) Hz (half the {fs:.1f} Hz rate)")
    bridge_s = min(opts.max_bridged_gap_s, 0.1 / cutoff)
    if bridge_s < opts.max_bridged_gap_s:  # the cut-off allows less than the segments were found with
        segments, period = find_segments(t, gap_factor=opts.gap_factor, bridge_s=bridge_s)
    n_bridged = count_long_steps(t, segments, period, opts.gap_factor)
    sos = scipy.signal.butter(opts.filter_order, cutoff, btype="low", fs=fs, output="sos")
    target = opts.decimate_to_hz or opts.decimation_factor_of_cutoff * cutoff
    decimation = max(1, int(np.floor(fs / target + 1e-6)))  # tolerate timestamp rounding in fs
    if opts.keep_all_samples:
        decimation = 1
    trim = int(np.ceil(opts.trim_cutoff_periods * fs / cutoff))
    min_len = max(int(np.ceil(opts.min_segment_s * fs)) + 2 * trim, 3 * (opts.filter_order * 2 + 1) + 2)

    # Velocity for the (nonlinear) friction terms: measured (unfiltered unless asked), or differentiated
    # and filtered far above the cut-off (encoder quantisation makes raw differences too noisy).
    velocity_cutoff = opts.friction_velocity_cutoff_hz
    if velocity_cutoff is None and qd is None:
        velocity_cutoff = 4.0 * cutoff
    sos_velocity = None if velocity_cutoff is None else scipy.signal.butter(
        opts.filter_order, min(float(velocity_cutoff), 0.45 * fs), btype="low", fs=fs, output="sos")
    out: dict[str, list] = {"t": [], "q": [], "qd": [], "qdd": [], "tau": [], "seg": [], "qd_full": [], "row": [],
                            "edge": [], "t_full": []}
    out_extra: dict[str, list] = {k: [] for k in extra_in}
    kept = 0
    for seg in segments:
        if seg.stop - seg.start < min_len:
            continue
        ts = t[seg]
        grid = even_grid(ts, period)  # None: the segment is evenly spaced already (step 2 of the module doc)
        step = ts if grid is None else period
        # Long odd-extension padding: the filter's edge transient then has died out inside the trim.
        pad = min(3 * trim, (ts if grid is None else grid).shape[0] - 1)

        def smooth(values, sos=sos):
            """Zero-phase low-pass of rows at ts (on the even grid when there is one), on the grid's times."""
            return scipy.signal.sosfiltfilt(sos, values if grid is None else interpolate_rows(grid, ts, values),
                                            axis=0, padlen=pad)

        def at_samples(values):
            return values if grid is None else interpolate_rows(ts, grid, values)

        qf = smooth(q[seg])
        qdf = smooth(qd[seg]) if qd is not None else np.gradient(qf, step, axis=0)
        qddf = np.gradient(qdf, step, axis=0)  # central differences on the timestamps (or the even grid)
        qf, qdf, qddf = at_samples(qf), at_samples(qdf), at_samples(qddf)
        qd_raw = qd[seg] if qd is not None else np.gradient(q[seg], ts, axis=0)
        qd_full = qd_raw if sos_velocity is None else at_samples(smooth(qd_raw, sos_velocity))
        out["qd_full"].append(qd_full)
        out["t_full"].append(ts)
        tauf = at_samples(smooth(tau[seg]))
        keep = slice(0, ts.shape[0]) if opts.keep_all_samples else slice(trim, ts.shape[0] - trim, decimation)
        edge = np.zeros(ts.shape[0], bool)
        edge[:trim] = True
        edge[ts.shape[0] - trim:] = True
        out["row"].append(rows[seg][keep])
        out["edge"].append(edge[keep])
        out["t"].append(ts[keep])
        out["q"].append(qf[keep])
        out["qd"].append(qdf[keep])
        out["qdd"].append(qddf[keep])
        out["tau"].append(tauf[keep])
        out["seg"].append(np.full(out["t"][-1].shape[0], kept))
        for k, v in extra_in.items():
            out_extra[k].append(at_samples(smooth(v[seg]))[keep])
        kept += 1
    if kept == 0:
        raise ValueError(
            f"no segment is long enough: need >= {min_len} contiguous samples ({min_len / fs:.2f} s at {fs:.0f} Hz) "
            f"between gaps; found {len(segments)} segments (longest "
            f"{max(s.stop - s.start for s in segments)} samples). Record longer, without pauses or dropped samples"
        )
    n_gaps = len(segments) - 1
    # a velocity differentiated here is central (np.gradient): the instant of the sample
    weight = 0.5 if qd is None else velocity_travel_weight(t, q, qd, segments)
    return PreprocessedData(
        time_s=np.concatenate(out["t"]), q_rad=np.vstack(out["q"]), qd_rad_s=np.vstack(out["qd"]),
        qdd_rad_s2=np.vstack(out["qdd"]), torque=np.vstack(out["tau"]), segment_id=np.concatenate(out["seg"]),
        sample_rate_hz=fs / decimation, cutoff_hz=cutoff, decimation=decimation, n_segments=kept, n_gaps=n_gaps,
        n_dropped_rows=n_bad, n_bridged_gaps=n_bridged, extra={k: np.vstack(v) for k, v in out_extra.items()},
        full_rate_qd_rad_s=tuple(out["qd_full"]), full_rate_time_s=tuple(out["t_full"]), filter_sos=sos,
        trim_samples=trim,
        source_index=np.concatenate(out["row"]), edge=np.concatenate(out["edge"]),
        keep_all_samples=opts.keep_all_samples, travel_weight=weight,
    )


def parallel_friction_columns(data: PreprocessedData, stribeck_velocity_rad_s, coulomb_velocity_rad_s) -> np.ndarray:
    """Friction columns (N*n, 4n) of seeds.md P2 eq. (11) from the full-rate velocity, filtered and
    decimated exactly like the torque (:meth:`PreprocessedData.parallel_filter`)."""
    n = data.q_rad.shape[1]
    x_s = np.broadcast_to(np.asarray(stribeck_velocity_rad_s, float), (n,))
    v_k = np.broadcast_to(np.asarray(coulomb_velocity_rad_s, float), (n,))
    if data.filter_sos is None:
        return friction_columns(data.qd_rad_s, x_s, v_k)
    y = data.parallel_filter(lambda qd: friction_regressor(qd, x_s, v_k))  # (N, n, 4)
    n_samples = y.shape[0]
    out = np.zeros((n_samples, n, n, 4))
    idx = np.arange(n)
    out[:, idx, idx, :] = y
    return out.reshape(n_samples * n, 4 * n)
