"""Benchmark: are the base parameters' standard deviations in model.yaml the spread a lab would see?

A std claims: record the same trajectory again (new noise) and the estimate moves by about this much. This
benchmark checks the claim directly. One trajectory of a perturbed UR (identification/synthetic.py, friction
in the identifier's P2 family, so the noise is the only error) is recorded ``--draws`` times with independent
current noise, and each recording is identified (``identify``: WLS, P2 friction with fixed shape constants, so
every draw has the same columns: the truth's). Per base parameter, the spread of the estimates over the draws is
compared with the mean std each identification reported:

* **textbook**: ``s^2 (W^T W)^-1``, every row independent (the std before the twenty-fifth session);
* **batch means** (what model.yaml now stores; estimators.block_robust_covariance, blocks of
  estimators.STD_BLOCK_CUTOFF_PERIODS low-pass periods).

Two noise kinds, each 1 % of the joint's RMS current: ``white`` (independent per 2 ms cycle) and ``servo``
(half white, half a first-order low-pass of 20 ms: the servo's ripple and current-loop lag). Printed: the
median and the 10th/90th percentile over the well-excited parameters (spread < 5 % of the value) of
reported std / observed spread (1 = calibrated; below 1 = too confident). With ``--draws`` draws the spread
itself is uncertain by about 1/sqrt(2 (draws - 1)) per parameter; the median over parameters much less.

    .venv/bin/python benchmarks/bench_parameter_std.py [--draws 16] [--robot ur5e] [--block-periods P]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

import numpy as np  # noqa: E402
from scipy.signal import lfilter  # noqa: E402

import robot_dynamics_id.identification.estimators as estimators  # noqa: E402
import robot_dynamics_id.identification.pipeline as pipeline  # noqa: E402
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify  # noqa: E402
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording  # noqa: E402

RATE_HZ = 500.0
SERVO_TIME_CONSTANT_S = 0.02


def _noise(kind: str, shape, rng) -> np.ndarray:
    white = rng.normal(size=shape)
    if kind == "white":
        return white
    a = np.exp(-1.0 / (SERVO_TIME_CONSTANT_S * RATE_HZ))
    slow = lfilter([1.0 - a], [1.0, -a], rng.normal(size=shape), axis=0)
    slow /= slow.std(axis=0)
    return (white + slow) / np.sqrt(2.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=16)
    parser.add_argument("--robot", default="ur5e")
    parser.add_argument("--duration", type=float, default=30.0, help="s of each recording (default 30)")
    parser.add_argument("--block-periods", type=float, default=estimators.STD_BLOCK_CUTOFF_PERIODS,
                        help="batch-means block length in low-pass periods (default: the identifier's)")
    args = parser.parse_args()
    estimators.STD_BLOCK_CUTOFF_PERIODS = args.block_periods
    truth = perturbed_truth(args.robot, seed=77, relative=0.1)
    gains = np.full(truth.n_joints, 10.0)
    clean = synthetic_ur_recording(truth, gains, duration_s=args.duration, rate_hz=RATE_HZ, seed=4)
    level = np.sqrt(np.mean(clean.current_a**2, axis=0)) * 0.01
    options = IdentificationOptions(estimator="wls", friction_model="p2", fit_stribeck=False,
                                    stribeck_velocity_rad_s=truth.friction.stribeck_velocity_rad_s,
                                    coulomb_velocity_rad_s=truth.friction.coulomb_velocity_rad_s,
                                    torque_source="current", drive_gains_nm_per_a=gains)
    seen: dict[str, np.ndarray] = {}
    original = pipeline.with_batch_means_std

    def recording_both(linear, *a, **k):  # the textbook std of the same fit, before it is replaced
        seen["textbook"] = linear.std.copy()
        return original(linear, *a, **k)

    pipeline.with_batch_means_std = recording_both
    print(f"{args.robot}, {args.duration:g} s at {RATE_HZ:g} Hz, {args.draws} noise draws per kind, current noise "
          f"1 % of each joint's RMS current; load: {os.getloadavg()[0]:.2f} (1-min average)")
    for kind in ("white", "servo"):
        rng = np.random.default_rng(2025)
        estimates, textbook, batch = [], [], []
        clock = time.perf_counter()
        for _ in range(args.draws):
            noisy = replace(clean, current_a=clean.current_a + _noise(kind, clean.current_a.shape, rng) * level)
            result = identify(noisy, truth.robot, options)
            estimates.append(result.base_estimate.parameters)
            batch.append(result.base_estimate.std)
            textbook.append(seen["textbook"][: result.base_estimate.std.size])
        spread = np.std(estimates, axis=0, ddof=1)
        well = spread < 0.05 * np.abs(np.mean(estimates, axis=0))
        method = result.model.base_parameters.get("std_method", "")
        print(f"\n{kind} noise ({time.perf_counter() - clock:.0f} s; {int(well.sum())} of {well.size} parameters "
              f"well excited; {method})")
        for name, reported in (("textbook", textbook), ("batch means", batch)):
            ratio = (np.mean(reported, axis=0) / spread)[well]
            print(f"  {name:12s} reported std / observed spread: median {np.median(ratio):.2f}, "
                  f"p10 {np.percentile(ratio, 10):.2f}, p90 {np.percentile(ratio, 90):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
