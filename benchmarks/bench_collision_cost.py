"""CPU time of the collision detector per robot sample (what it adds to each robot-loop cycle).

Times :meth:`CollisionDetector.update` (observer on the identified-form model: mass matrix, Coriolis,
gravity, friction, thresholds) sample by sample over a 10 s simulated recording of the UR3, in
``--runs`` passes; baseline in the same run: the force estimator's momentum observer
(control/force_estimation.py MomentumObserver.update), which has no friction and no thresholds.
Prints the median and p99 per sample of each (per run, and their median over runs), the detector's ratio to the
baseline and the load average.

    .venv/bin/python benchmarks/bench_collision_cost.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from robot_dynamics_id.control.collision import CollisionDetector, CollisionThresholds
from robot_dynamics_id.control.force_estimation import MomentumObserver
from robot_dynamics_id.sim.excitation_presets import paper_prbs_excitation
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.truth import make_truth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    truth = make_truth("ur3", 3)
    rec = run_experiment(paper_prbs_excitation("ur3", duration_s=10.0, seed=1), robot="ur3", truth=truth).recording
    thresholds = CollisionThresholds(joint_names=truth.joint_names, velocity_edges_rad_s=np.array([0.02, 0.1, 0.5]),
                                     threshold_nm=np.full((6, 4), 1e3), observer_gain_per_s=50.0, rate_hz=500.0)
    detector = CollisionDetector(truth, thresholds, rate_hz=500.0)
    baseline = MomentumObserver(truth.robot_model().model, gain_per_s=50.0, period_s=0.002)
    torque = rec.current_a * truth.drive_gains_nm_per_a
    times = {"detector": np.empty((args.runs, rec.n_samples)), "baseline": np.empty((args.runs, rec.n_samples))}
    print(f"{rec.n_samples} samples x {args.runs} runs; load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    for run in range(args.runs):
        detector.reset()
        baseline.reset()
        for k in range(rec.n_samples):
            t0 = time.perf_counter()
            detector.update(rec.time_s[k], rec.q_rad[k], rec.qd_rad_s[k], rec.current_a[k])
            t1 = time.perf_counter()
            baseline.update(rec.q_rad[k], rec.qd_rad_s[k], torque[k])
            t2 = time.perf_counter()
            times["detector"][run, k] = t1 - t0
            times["baseline"][run, k] = t2 - t1
    stats = {}
    for name, values in times.items():
        v = values * 1e6
        medians, p99s = np.median(v, axis=1), np.percentile(v, 99, axis=1)
        stats[name] = float(np.median(medians)), float(np.median(p99s))
        print(f"  {name:9s} per sample: median {stats[name][0]:6.1f} us, p99 {stats[name][1]:6.1f} us "
              f"(median of {args.runs} runs; per run: median {np.round(medians, 1).tolist()}, p99 "
              f"{np.round(p99s, 1).tolist()})")
    # the ratio within each run (both timed sample by sample, under the same load), then its median over runs
    ratios = {stat: np.median(fn(times["detector"] * 1e6, axis=1) / fn(times["baseline"] * 1e6, axis=1))
              for stat, fn in (("median", np.median), ("p99", lambda v, axis: np.percentile(v, 99, axis=axis)))}
    print(f"  detector / baseline (median over runs of each run's ratio): median {ratios['median']:.2f}x, "
          f"p99 {ratios['p99']:.2f}x; load average after {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
