"""Benchmark / reproduction of P1 (Jamisola & Dadios, natural-oscillation identification), seeds.md.

Prints Tables I and II from the paper's stated model and from the tuned set-up beside the
paper's numbers (and the zero point the paper's own Table I implies), the trials needed by
the bracketing search versus P1's incremental search at the same resolution (ratio), the
friction bias, the UR3 shoulder/elbow case and the whole upright UR3 (shoulder, elbow,
wrist 1: every joint gravity loads there) with and without friction fed forward, and the
time of one push trial (median and p99). ``--quick`` runs the tables, searches and
timings only. ``--mujoco`` adds the MuJoCo UR3 cases (shoulder + elbow; their trials run
the full simulator: several minutes each on a loaded 2-core machine, so not in the default
run, which stays within 5 minutes).

    .venv/bin/python benchmarks/bench_natural_oscillation.py [--quick] [--mujoco [--no-friction-cases]]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from robot_dynamics_id.identification.natural_oscillation import run_push_trial
from robot_dynamics_id.scenarios.natural_oscillation_paper import one_dof_setup, two_dof_setup
from robot_dynamics_id.scenarios.natural_oscillation_report import (
    friction_bias_report,
    search_report,
    tables_report,
    ur3_full_report,
    ur3_report,
)


def _timing(label: str, fn, repeats: int) -> None:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    print(f"  {label}: median {np.median(times) * 1e3:.0f} ms, p99 {np.percentile(times, 99) * 1e3:.0f} ms "
          f"over {repeats} runs")


def _section(title: str, fn):
    t0 = time.perf_counter()
    out = fn()
    print("\n".join(out))
    print(f"  ({title}: {time.perf_counter() - t0:.0f} s)\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tables, searches and timings only")
    parser.add_argument("--mujoco", action="store_true", help="add the MuJoCo UR3 cases (several minutes each)")
    parser.add_argument("--ur3-friction-identification", action="store_true",
                        help="whole upright UR3: also identify with the true friction fed forward (minutes)")
    parser.add_argument("--no-friction-cases", action="store_true",
                        help="MuJoCo UR3: only the frictionless case and the regressor comparison")
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"machine load average (1/5/15 min): {' / '.join(f'{v:.1f}' for v in os.getloadavg())} on "
          f"{os.cpu_count()} cores\n")
    _section("tables", tables_report)
    _section("searches", lambda: search_report(with_metaheuristic=not args.quick)[0])
    if not args.quick:
        _section("friction bias", lambda: friction_bias_report()[0])
        _section("UR3 shoulder + elbow", lambda: ur3_report()[0])
        _section("whole upright UR3", lambda: ur3_full_report(
            identify_with_friction=args.ur3_friction_identification)[0])
    if args.mujoco:
        from robot_dynamics_id.scenarios.natural_oscillation_mujoco import mujoco_report

        _section("MuJoCo UR3", lambda: mujoco_report(with_friction_cases=not args.no_friction_cases)[0])
    print("Timing of one 5,000-step push trial (50 s simulated, dt 0.01 s):")
    s1, s2 = one_dof_setup(), two_dof_setup()
    a1, m1, a2, m2 = s1.arm(), s1.model(), s2.arm(), s2.model()
    _timing("1-DOF", lambda: run_push_trial(a1, m1, np.array([1.05]), s1.experiment), 3 if args.quick else 7)
    _timing("2-DOF", lambda: run_push_trial(a2, m2, np.array([1.05, 1.05, 1.05]), s2.experiment),
            3 if args.quick else 7)
    print(f"\n(wall time {time.perf_counter() - start:.0f} s, CPU {time.process_time():.0f} s, load "
          f"{' / '.join(f'{v:.1f}' for v in os.getloadavg())})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
