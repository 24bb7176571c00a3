"""Benchmark / reproduction of P1 (Jamisola & Dadios, natural-oscillation identification), seeds.md.

Prints Tables I and II beside the paper's numbers, the trials needed by the
bracketing search versus P1's incremental search at the same resolution
(ratio), the friction bias, the UR3 shoulder/elbow case, and the time of one
push trial (median and p99). ``--quick`` skips the metaheuristic, the
friction sweep and the UR3 cases (pinocchio and MuJoCo; the MuJoCo\nfriction cases take ~5 min on a loaded 2-core machine).

    .venv/bin/python benchmarks/bench_natural_oscillation.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robot_dynamics_id.identification.natural_oscillation import run_push_trial
from robot_dynamics_id.identification.natural_oscillation_paper import one_dof_setup, two_dof_setup
from robot_dynamics_id.identification.natural_oscillation_report import (
    friction_bias_report,
    search_report,
    tables_report,
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tables, searches and timings only")
    parser.add_argument("--no-friction-cases", action="store_true",
                        help="MuJoCo UR3: only the frictionless case and the regressor comparison")
    args = parser.parse_args()
    print("\n".join(tables_report()))
    lines, _ = search_report(with_metaheuristic=not args.quick)
    print("\n".join(lines))
    if not args.quick:
        print("\n".join(friction_bias_report()[0]))
        print("\n".join(ur3_report()[0]))
        from robot_dynamics_id.identification.natural_oscillation_mujoco import mujoco_report

        print("\n".join(mujoco_report(with_friction_cases=not args.no_friction_cases)[0]))
    print("Timing of one 5,000-step push trial (50 s simulated, dt 0.01 s):")
    s1, s2 = one_dof_setup(), two_dof_setup()
    a1, m1, a2, m2 = s1.arm(), s1.model(), s2.arm(), s2.model()
    _timing("1-DOF", lambda: run_push_trial(a1, m1, np.array([1.05]), s1.experiment), 3 if args.quick else 7)
    _timing("2-DOF", lambda: run_push_trial(a2, m2, np.array([1.05, 1.05, 1.05]), s2.experiment),
            3 if args.quick else 7)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
