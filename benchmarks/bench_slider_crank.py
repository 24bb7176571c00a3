"""Aghili P5 reproduction: the equal-length slider-crank through its singular configurations.

Prints the acceptance numbers of seeds.md P5 (constraint error, energy drift,
cond(M_c) vs the augmented KKT matrix, PIDC tracking and minimum norm) and the
cost of one projected forward-dynamics evaluation vs the augmented solve
(median and p99 over repeated runs). RK4, 1 ms step, 10 s (``--quick``: 2 s).

    .venv/bin/python benchmarks/bench_slider_crank.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot_dynamics_id.dynamics.constrained import constrained_forward_dynamics  # noqa: E402
from robot_dynamics_id.sim.slider_crank import (  # noqa: E402
    augmented_forward_dynamics,
    reproduce_slider_crank,
    slider_crank,
)


def time_calls(fn, repeats: int = 7, calls: int = 2000) -> tuple[float, float]:
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls)
    per_call = np.array(per_call) * 1e6
    return float(np.median(per_call)), float(np.percentile(per_call, 99))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs instead of 10 s")
    args = parser.parse_args()
    duration = 2.0 if args.quick else 10.0
    t0 = time.perf_counter()
    numbers = reproduce_slider_crank(duration_s=duration, step_s=1e-3)
    wall = time.perf_counter() - t0
    print(f"slider-crank (equal crank/rod 0.3 m), RK4 at 1 ms, {duration:g} s per run, total wall {wall:.1f} s")
    for key, value in numbers.items():
        print(f"  {key:45s} {value:.3e}" if isinstance(value, float) else f"  {key:45s} {value}")
    checks = {
        "constraint error <= 1e-9": numbers["free_max_constraint_error_m"] <= 1e-9
        and numbers["pidc_max_constraint_error_m"] <= 1e-9,
        "energy drift <= 1e-6 relative": numbers["free_energy_drift_relative"] <= 1e-6,
        "M_c well conditioned where KKT is singular": numbers["Mc_condition_max"] < 1e3
        and numbers["augmented_kkt_condition_at_start"] > 1e15,
        "PIDC crank error <= 1e-3 rad": numbers["pidc_max_crank_error_rad"] <= 1e-3,
        "PIDC torque minimum norm": numbers["pidc_min_norm_ratio_vs_random_nullspace"] >= 1.0 - 1e-12,
    }
    for name, ok in checks.items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")

    system = slider_crank()
    q = np.array([0.4, -0.8])
    qd = np.array([2.0, -4.0])
    m, h, a, b = system.terms(q, qd)
    tau = np.zeros(2)
    proj_us = time_calls(lambda: constrained_forward_dynamics(m, h, tau, a, b))
    aug_us = time_calls(lambda: augmented_forward_dynamics(m, h, tau, a, b))
    print(f"forward dynamics per call: projection median {proj_us[0]:.1f} us (p99 {proj_us[1]:.1f}), "
          f"augmented median {aug_us[0]:.1f} us (p99 {aug_us[1]:.1f}), ratio {proj_us[0] / aug_us[0]:.2f}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
