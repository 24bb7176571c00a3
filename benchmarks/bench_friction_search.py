"""Benchmark: does the friction search find the shape constants' best fit? (issue 15, item 1)

The Stribeck velocity x_s and the presliding distance delta enter the friction model nonlinearly
and are found by variable projection (identification/friction_fit.py): every linear parameter
solved for each trial value. The residual over x_s can have two valleys — a small x_s, and a
large one whose Stribeck curve is a near-parabola over the speeds seen — and which is lower
depends on delta, since the two trade at reversals. Per truth seed (``friction="real"``: load-
dependent Coulomb, concave, Dahl presliding; seeds the tests never use), a 30 s synthetic
recording (identification/synthetic.py, 200 Hz, 0.05 Nm torque noise) is identified with the
richest family (``p2+load+poly+presliding`` on every joint) three ways:

* reference: x_s fixed at the truth (``fit_stribeck=False``), delta searched — the fit a perfect
  Stribeck search would reach;
* one start: the search from the lowest valley of the x_s profile at the starting delta only
  (``friction_fit.SHAPE_STARTS = 1``);
* the default: from each of the ``SHAPE_STARTS`` lowest valleys, each refined with delta, the
  lowest residual kept.

Printed per joint: the training residual's RMS divided by the reference's (1.00 = as good as the
true x_s; below 1 = the noise fitted a little better elsewhere), medians and worst over the
seeds, and the identification time.

    .venv/bin/python benchmarks/bench_friction_search.py [--seeds 101,...,108]
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine threaded BLAS on small matrices is much slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from robot_dynamics_id.identification import friction_fit  # noqa: E402
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify  # noqa: E402
from robot_dynamics_id.identification.synthetic import synthetic_recording  # noqa: E402
from robot_dynamics_id.sim.truth import make_truth  # noqa: E402

FAMILY = "p2+load+poly+presliding"
#: the default search should come within this factor of the reference's residual on every joint
BAR = 1.05


def residual_rms(recording, options: IdentificationOptions) -> tuple[np.ndarray, float]:
    """(per-joint RMS of measured - predicted torque over the training samples, Nm; seconds taken)."""
    started = time.perf_counter()
    result = identify(recording, "ur3", options)
    seconds = time.perf_counter() - started
    return np.sqrt(np.mean((result.measured_torque_nm - result.predicted_torque_nm) ** 2, axis=0)), seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="101,102,103,104,105,106,107,108",
                        help="truth seeds (never used in the tests)")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    default_starts = friction_fit.SHAPE_STARTS
    ratios = {"one start": [], "default": []}
    seconds = {"reference": [], "one start": [], "default": []}
    print(f"training-residual RMS / reference's (x_s at the truth), {FAMILY}, per joint 0-5; load: "
          f"{os.getloadavg()[0]:.2f} (1-min load average at the start)")
    for seed in seeds:
        truth = make_truth("ur3", seed, friction="real")
        recording = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3, torque_noise_nm=0.05,
                                        position_noise_rad=1e-5)
        reference, t = residual_rms(recording, IdentificationOptions(
            friction_model=FAMILY, fit_stribeck=False, stribeck_velocity_rad_s=truth.friction.stribeck_velocity_rad_s))
        seconds["reference"].append(t)
        for label, starts in (("one start", 1), ("default", default_starts)):
            friction_fit.SHAPE_STARTS = starts
            try:
                rms, t = residual_rms(recording, IdentificationOptions(friction_model=FAMILY))
            finally:
                friction_fit.SHAPE_STARTS = default_starts
            seconds[label].append(t)
            ratios[label].append(rms / reference)
            print(f"  seed {seed} {label:<9} " + " ".join(f"{v:6.3f}" for v in rms / reference) + f"   {t:5.1f} s")
    print(f"\n=== over truth seeds {seeds} ===")
    for label, values in ratios.items():
        values = np.array(values)
        print(f"  {label:<9} median " + " ".join(f"{v:6.3f}" for v in np.median(values, axis=0))
              + "   worst " + " ".join(f"{v:6.3f}" for v in values.max(axis=0)))
    print("  identification time, s (median / max): " + ", ".join(
        f"{label} {np.median(v):.1f} / {np.max(v):.1f}" for label, v in seconds.items()))
    worst = float(np.max(ratios["default"]))
    ok = worst <= BAR
    print(f"default within {BAR:g} x the reference on every joint and seed: {'PASS' if ok else 'FAIL'} "
          f"(worst {worst:.3f})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
