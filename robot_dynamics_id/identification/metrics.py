"""Validation metrics of a torque prediction, per joint.

* fit (Cesarino, seeds.md P3 eq. (31)): Fit = 100 (1 - ||tau_hat - tau|| / ||tau - mean(tau)||), %;
  100 is perfect, 0 is no better than the mean, negative is worse than the mean;
* relative residual error: RRE = 100 ||tau_hat - tau|| / ||tau||, %;
* RMS error, Nm (or the unit of the data);
* moving-sample RRE: the RRE of each joint over the samples where *that* joint moves
  (|q̇_j| > :data:`MOVING_THRESHOLD_RAD_S`): the score of issue 15's comparisons with
  the OLS baseline and UR's own model, where standstill (presliding, held torque)
  does not dilute the error.

What is scored: the measured torque and the model's inputs low-passed alike (zero phase), at
:func:`scoring_cutoff_hz` unless told otherwise: :data:`SCORING_CUTOFF_HZ`, issue 15's protocol
(current x gain, 10 Hz zero-phase low-pass), the same for every recording, so the scores of two
runs, two files or two tools mean the same thing and a lab scoring ``predictions.csv`` against
its own 10 Hz signal gets the numbers the tool prints. Identification filters lower (the
automatic cut-off follows the training motion, identification/preprocessing.py; the model is
fitted unbiased by parallel filtering): a prediction low-passed at a training cut-off of 3 Hz
lacks the 3-10 Hz content of a faster validation motion and of friction's reversals, which a
10 Hz measurement holds (benchmarks/RESULTS.md measures the cost).
"""

from __future__ import annotations

import numpy as np

__all__ = ["MAX_CUTOFF_FRACTION_OF_RATE", "MOVING_THRESHOLD_RAD_S", "SCORING_CUTOFF_HZ", "fit_percent",
           "moving_rre_percent", "moving_samples", "relative_residual_error_percent", "rms_error",
           "scoring_cutoff_hz", "torque_metrics"]

#: a joint "moves" above this speed, rad/s (moving-sample metrics)
MOVING_THRESHOLD_RAD_S = 0.02
#: low-pass of what is scored, Hz (module doc): issue 15's scoring protocol
SCORING_CUTOFF_HZ = 10.0
#: the scoring cut-off stays below this fraction of the sample rate (a 4th-order Butterworth filter needs the
#: cut-off well inside the Nyquist band)
MAX_CUTOFF_FRACTION_OF_RATE = 0.4


def scoring_cutoff_hz(sample_rate_hz: float, model_cutoff_hz: float | None = None) -> float:
    """:data:`SCORING_CUTOFF_HZ`, or less on a slow recording (at most 0.4 x its rate), never below the cut-off
    the model was identified with."""
    cutoff = min(SCORING_CUTOFF_HZ, MAX_CUTOFF_FRACTION_OF_RATE * float(sample_rate_hz))
    return float(max(cutoff, model_cutoff_hz or 0.0))


def _pair(predicted, measured) -> tuple[np.ndarray, np.ndarray]:
    p = np.atleast_2d(np.asarray(predicted, float))
    m = np.atleast_2d(np.asarray(measured, float))
    if p.shape != m.shape:
        raise ValueError(f"predicted {p.shape} and measured {m.shape} torques must have the same shape (N, n)")
    return p, m


def fit_percent(predicted, measured) -> np.ndarray:
    """P3 eq. (31) per joint (columns)."""
    p, m = _pair(predicted, measured)
    spread = np.linalg.norm(m - m.mean(axis=0), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100.0 * (1.0 - np.linalg.norm(p - m, axis=0) / spread)


def relative_residual_error_percent(predicted, measured) -> np.ndarray:
    """100 ||tau_hat - tau|| / ||tau|| per joint."""
    p, m = _pair(predicted, measured)
    with np.errstate(divide="ignore", invalid="ignore"):
        return 100.0 * np.linalg.norm(p - m, axis=0) / np.linalg.norm(m, axis=0)


def rms_error(predicted, measured) -> np.ndarray:
    """Root-mean-square error per joint."""
    p, m = _pair(predicted, measured)
    return np.sqrt(np.mean((p - m) ** 2, axis=0))


def moving_samples(qd_rad_s, threshold_rad_s: float = MOVING_THRESHOLD_RAD_S) -> np.ndarray:
    """(N, n) mask: joint j moves at sample k (|q̇| above the threshold)."""
    return np.abs(np.atleast_2d(np.asarray(qd_rad_s, float))) > threshold_rad_s


def moving_rre_percent(predicted, measured, moving) -> np.ndarray:
    """Per joint, 100 ||tau_hat - tau|| / ||tau|| over the samples where that joint moves (NaN: never moves)."""
    p, m = _pair(predicted, measured)
    mask = np.asarray(moving, bool)
    if mask.shape != p.shape:
        raise ValueError(f"moving mask {mask.shape} must have the torques' shape {p.shape}")
    num = np.sqrt(np.sum(np.where(mask, (p - m) ** 2, 0.0), axis=0))
    den = np.sqrt(np.sum(np.where(mask, m ** 2, 0.0), axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(mask.any(axis=0), 100.0 * num / den, np.nan)


def torque_metrics(predicted, measured, joint_names=None, *, moving=None) -> dict:
    """All metrics as a JSON-ready dict: per joint and overall (all joints stacked).

    ``moving``: (N, n) mask of moving samples (:func:`moving_samples`); adds ``moving_rre_percent``.
    """
    p, m = _pair(predicted, measured)
    names = list(joint_names) if joint_names is not None else [f"joint{j + 1}" for j in range(p.shape[1])]
    fit, rre, rms = fit_percent(p, m), relative_residual_error_percent(p, m), rms_error(p, m)
    overall_rre = 100.0 * np.linalg.norm(p - m) / max(np.linalg.norm(m), 1e-300)
    out = {
        "samples": int(p.shape[0]),
        "per_joint": {name: {"fit_percent": float(fit[j]), "rre_percent": float(rre[j]), "rms_nm": float(rms[j])}
                      for j, name in enumerate(names)},
        "fit_percent": [float(v) for v in fit],
        "rre_percent": [float(v) for v in rre],
        "rms_nm": [float(v) for v in rms],
        "min_fit_percent": float(np.min(fit)),
        "overall_rre_percent": float(overall_rre),
    }
    if moving is not None:
        moving_rre = moving_rre_percent(p, m, moving)
        counts = np.asarray(moving, bool).sum(axis=0)
        out["moving_rre_percent"] = [float(v) for v in moving_rre]
        out["moving_samples"] = [int(c) for c in counts]
        for j, name in enumerate(names):
            out["per_joint"][name]["moving_rre_percent"] = float(moving_rre[j])
    return out
