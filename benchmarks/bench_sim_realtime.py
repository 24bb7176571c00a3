"""Real-time factor of the simulated UR (sim/plant.py) at 500 Hz (e-Series) and 125 Hz (CB3).

For each rate, several runs of a speedJ motion (all six joints moving, noise on);
per-step wall time is recorded for every controller cycle. Prints median and p99
of the per-step wall time, and the real-time factor = control period / median
step time (how many times faster than real time the simulator runs).
Also runs the polishing scene (tool + surface contact) at 500 Hz.

    .venv/bin/python benchmarks/bench_sim_realtime.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from robot_dynamics_id.sim.plant import SimulatedUR
from robot_dynamics_id.sim.scene import polishing_scene

HOME = np.array([0.0, -1.57, 1.0, -1.0, -1.57, 0.0])


def _run(rate_hz: float, seconds: float, seed: int, scene=None) -> np.ndarray:
    sim = SimulatedUR(robot="ur3", truth_seed=seed, noise_seed=seed, rate_hz=rate_hz,
                      initial_q_rad=HOME, scene=scene)
    n = int(round(seconds * rate_hz))
    times = np.empty(n)
    for k in range(n):
        t = k / rate_hz
        if k % max(1, int(rate_hz / 10)) == 0:  # a new speedJ command 10 times a second
            sim.speed_j(0.4 * np.sin(2 * np.pi * 0.5 * t + np.arange(6)), 5.0)
        start = time.perf_counter()
        sim.step()
        times[k] = time.perf_counter() - start
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer and shorter runs")
    args = parser.parse_args()
    runs, seconds = (3, 1.0) if args.quick else (5, 4.0)
    cases = [("500 Hz (e-Series)", 500.0, None), ("125 Hz (CB3)", 125.0, None),
             ("500 Hz + polishing scene", 500.0, polishing_scene(surface_top_m=(0.3, 0.0, -0.3)))]
    print(f"simulated UR3, {runs} runs x {seconds:.0f} s of simulated time per case; "
          f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'case':28s} {'substeps':>8s} {'median step':>12s} {'p99 step':>10s} {'RTF(median)':>12s} {'RTF(run)':>9s}")
    for label, rate, scene in cases:
        all_times = []
        run_rtf = []
        for seed in range(runs):
            times = _run(rate, seconds, seed, scene)
            all_times.append(times)
            run_rtf.append(seconds / times.sum())
        t = np.concatenate(all_times)
        substeps = SimulatedUR(robot="ur3", rate_hz=rate).substeps
        median, p99 = np.median(t), np.percentile(t, 99)
        print(f"{label:28s} {substeps:8d} {median * 1e6:9.1f} us {p99 * 1e6:7.1f} us "
              f"{(1.0 / rate) / median:12.1f} {np.median(run_rtf):9.1f}")
    print(f"load average at end {os.getloadavg()[0]:.1f} (p99 is dominated by other processes when it is high)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
