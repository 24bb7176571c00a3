"""Excitation quality: the P3 PRBS + sinusoid schedule versus the optimised Fourier excitation (UR3).

Prints, for each seed, the normalised condition number of the base-parameter
regressor (rigid body + rotor + friction columns) over the whole trajectory at
the robot rate (125 Hz) for

* the schedule of seeds.md P3 (one joint PRBS ±0.5 rad/s at 7.5 rad/s², the
  others sinusoids, joints in turn) — the baseline, and
* the Fourier excitation optimised by excitation/optimise.py (same duration,
  half the robot's velocity/acceleration limits, table keep-out 0.05 m),

their ratio (target: optimised <= 1/3 of the baseline), and the optimisation
time (wall and CPU; median and p99 over the seeds — the machine may be shared,
so CPU time is the steadier number).

    .venv/bin/python benchmarks/bench_excitation.py            # 3 seeds, defaults of `rdi excite plan`
    .venv/bin/python benchmarks/bench_excitation.py --quick    # 1 seed, 1 start
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from robot_dynamics_id.dynamics.base_parameters import compute_base_parameters
from robot_dynamics_id.excitation._blas import single_threaded_blas
from robot_dynamics_id.excitation.checker import ExcitationLimits, check_trajectory
from robot_dynamics_id.excitation.optimise import (
    FourierOptimisationSettings,
    excitation_condition_number,
    optimise_fourier_excitation,
)
from robot_dynamics_id.excitation.prbs import PrbsSinusoidSchedule
from robot_dynamics_id.robots import load_robot

TARGET_RATIO = 1.0 / 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one seed, one optimiser start")
    parser.add_argument("--duration", type=float, default=60.0, help="trajectory duration, s (default 60)")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds (default 3)")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    seeds = [0] if args.quick else list(range(args.seeds))
    robot = load_robot("ur3")
    rate = robot.description.control_rate_hz
    with single_threaded_blas():
        base_map = compute_base_parameters(robot)
        print(f"UR3, duration {args.duration:g} s, {base_map.n_base} base parameters (rigid body + rotor + friction), "
              f"condition numbers at {rate:g} Hz over the whole trajectory")
        print(f"{'seed':>4} {'PRBS+sin':>9} {'Fourier':>8} {'ratio':>6} {'wall s':>7} {'CPU s':>6}  start condition "
              "numbers (initial -> final)")
        ratios, walls, cpus = [], [], []
        for seed in seeds:
            prbs = PrbsSinusoidSchedule(duration_s=args.duration, seed=seed).to_trajectory(
                rate_hz=rate, joint_names=robot.joint_names)
            check_trajectory(prbs, robot, ExcitationLimits.from_robot(robot, table_height_m=0.05))
            cond_prbs = excitation_condition_number(robot, prbs, base_map=base_map)

            settings = FourierOptimisationSettings(duration_s=args.duration, seed=seed,
                                                   **({"n_starts": 1} if args.quick else {}))
            wall0, cpu0 = time.perf_counter(), time.process_time()
            result = optimise_fourier_excitation(robot, settings, base_map=base_map)
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            fourier = result.to_trajectory(rate_hz=rate)
            check_trajectory(fourier, robot, result.limits)
            cond_fourier = excitation_condition_number(robot, fourier, base_map=base_map)
            ratio = cond_fourier / cond_prbs
            ratios.append(ratio)
            walls.append(wall)
            cpus.append(cpu)
            starts = ", ".join(f"{s['initial_condition_number']:.0f} -> {s['final_condition_number']:.2f}"
                               for s in result.starts)
            print(f"{seed:>4} {cond_prbs:>9.2f} {cond_fourier:>8.2f} {ratio:>6.3f} {wall:>7.1f} {cpu:>6.1f}  {starts}")
    worst = max(ratios)
    print(f"ratio optimised / PRBS schedule: median {np.median(ratios):.3f}, worst {worst:.3f} "
          f"(target <= {TARGET_RATIO:.3f}): {'PASS' if worst <= TARGET_RATIO else 'FAIL'}")
    print(f"optimisation time: wall median {np.median(walls):.1f} s, p99 {np.percentile(walls, 99):.1f} s; "
          f"CPU median {np.median(cpus):.1f} s, p99 {np.percentile(cpus, 99):.1f} s "
          f"({settings.n_starts} starts x <= {settings.max_iterations} SLSQP iterations)")
    return 0 if worst <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
