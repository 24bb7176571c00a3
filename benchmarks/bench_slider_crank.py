"""Aghili P5 reproduction: constrained mechanisms through singular configurations, with the classical baseline.

Prints, beside the paper's claims (seeds.md P5 states no numbers, only claims):

1. the equal-length slider-crank through its singular configurations: constraint error,
   energy drift, cond(M_c) vs the augmented KKT matrix, the multipliers of both, the
   augmented baseline with coordinate projection and with redundant constraints, PIDC
   tracking, minimum norm and the passive rod joint;
2. where the augmented (Lagrange-multiplier) formulation breaks down beside the
   projection method: a parallelogram four-bar released from its flat (singular)
   configuration, and the slider-crank crossing with Baumgarte stabilisation;
3. a planar five-bar: motion + constraint-force control with all joints actuated, one and
   two passive joints; the decoupling condition on the inertia matrix (P M = M P);
4. the cost of one projected forward-dynamics evaluation vs the augmented solve
   (median and p99 over repeated runs).

RK4, 1 ms step; ``--quick`` shortens the runs.

    .venv/bin/python benchmarks/bench_slider_crank.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from robot_dynamics_id.dynamics.constrained import constrained_forward_dynamics  # noqa: E402
from robot_dynamics_id.scenarios.five_bar import five_bar_report  # noqa: E402
from robot_dynamics_id.scenarios.slider_crank import augmented_failure_cases, reproduce_slider_crank  # noqa: E402
from robot_dynamics_id.sim.constrained_simulation import augmented_forward_dynamics  # noqa: E402
from robot_dynamics_id.sim.planar_mechanisms import slider_crank  # noqa: E402


def time_calls(fn, repeats: int = 7, calls: int = 2000) -> tuple[float, float]:
    per_call = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        per_call.append((time.perf_counter() - t0) / calls)
    per_call = np.array(per_call) * 1e6
    return float(np.median(per_call)), float(np.percentile(per_call, 99))


def _fmt(value) -> str:
    return f"{value:.3e}" if isinstance(value, float) else str(value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 s runs instead of 5 s (failure cases and five-bar 2 s)")
    parser.add_argument("--duration", type=float, default=5.0, help="seconds per slider-crank run (default 5)")
    args = parser.parse_args()
    duration = 2.0 if args.quick else args.duration
    start = time.perf_counter()
    print(f"machine load average (1/5/15 min): {' / '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} cores")

    print("\n== 1. slider-crank (equal crank/rod 0.3 m), RK4 at 1 ms, "
          f"{duration:g} s per run; paper: 'simulation and control carry on through singular configurations'")
    t0 = time.perf_counter()
    numbers = reproduce_slider_crank(duration_s=duration, step_s=1e-3)
    for key, value in numbers.items():
        print(f"  {key:45s} {_fmt(value)}")
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
    print(f"  ({time.perf_counter() - t0:.0f} s)")

    failure_s = 2.0 if args.quick else 3.0
    print(f"\n== 2. the augmented (Lagrange-multiplier) baseline where A is singular, {failure_s:g} s runs; "
          "paper: 'the classical augmented formulation fails' there")
    t0 = time.perf_counter()
    cases = augmented_failure_cases(duration_s=failure_s)
    for name, summary in cases.items():
        print(f"  {name}: " + ", ".join(f"{k} {_fmt(v)}" for k, v in summary.items()))
    print(f"  ({time.perf_counter() - t0:.0f} s)")

    print("\n== 3. five-bar with passive joints; paper: force and motion decoupled, passive joints by eqs. (55)-(62)")
    t0 = time.perf_counter()
    lines, _ = five_bar_report(duration_s=2.0 if args.quick else 2.5)
    print("\n".join(lines))
    print(f"  ({time.perf_counter() - t0:.0f} s)")

    print("\n== 4. cost of one forward-dynamics evaluation (slider-crank)")
    system = slider_crank()
    q = np.array([0.4, -0.8])
    qd = np.array([2.0, -4.0])
    m, h, a, b = system.terms(q, qd)
    tau = np.zeros(2)
    proj_us = time_calls(lambda: constrained_forward_dynamics(m, h, tau, a, b))
    aug_us = time_calls(lambda: augmented_forward_dynamics(m, h, tau, a, b))
    print(f"  projection median {proj_us[0]:.1f} us (p99 {proj_us[1]:.1f}), augmented median {aug_us[0]:.1f} us "
          f"(p99 {aug_us[1]:.1f}), ratio {proj_us[0] / aug_us[0]:.2f}")
    print(f"\n(wall time {time.perf_counter() - start:.0f} s, CPU {time.process_time():.0f} s, load "
          f"{' / '.join(f'{v:.1f}' for v in os.getloadavg())})")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
