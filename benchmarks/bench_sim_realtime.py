"""Real-time factor of the simulated UR (sim/plant.py) at 500 Hz (e-Series) and 125 Hz (CB3).

For each rate, several runs of a speedJ motion (all six joints moving, noise on);
per-step wall time is recorded for every controller cycle. Prints median and p99
of the per-step wall time, and the real-time factor = control period / median
step time (how many times faster than real time the simulator runs).
Also runs the polishing scene (tool + surface contact) at 500 Hz.

Baseline, measured in the same run: MuJoCo alone on the same model (the same number of
``mj_step`` substeps per cycle, no applied torque: the arm swings under gravity; no drive, friction
or noise model); ``x base`` is the plant's median step over the baseline's, run by run, median over runs.

    .venv/bin/python benchmarks/bench_sim_realtime.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import time

import mujoco
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


def _run_bare_mujoco(rate_hz: float, seconds: float, seed: int, scene=None) -> np.ndarray:
    """Baseline: the plant's own MjModel (built from ``sim.mjcf``) stepped by ``mujoco.mj_step`` alone, substeps per
    cycle as the plant; the arm held where it starts by its bias forces (gravity, Coriolis) applied every substep,
    so it visits the states the plant does, not a fall."""
    sim = SimulatedUR(robot="ur3", truth_seed=seed, noise_seed=seed, rate_hz=rate_hz,
                      initial_q_rad=HOME, scene=scene)
    m = mujoco.MjModel.from_xml_string(sim.mjcf)
    d = mujoco.MjData(m)
    d.qpos[:] = sim._mj_data.qpos  # the plant's start: the arm at HOME (and the scene's joints where it put them)
    mujoco.mj_forward(m, d)
    n = int(round(seconds * rate_hz))
    times = np.empty(n)
    for k in range(n):
        start = time.perf_counter()
        for _ in range(sim.substeps):
            d.qfrc_applied[:] = d.qfrc_bias
            mujoco.mj_step(m, d)
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
    print(f"{'case':28s} {'substeps':>8s} {'median step':>12s} {'p99 step':>10s} {'RTF(median)':>12s} "
          f"{'RTF(run)':>9s} {'x base':>6s}")
    for label, rate, scene in cases:
        all_times, run_rtf, ratios, base_times, base_rtf = [], [], [], [], []
        for seed in range(runs):
            base = _run_bare_mujoco(rate, seconds, seed, scene)
            times = _run(rate, seconds, seed, scene)
            base_times.append(base)
            all_times.append(times)
            run_rtf.append(seconds / times.sum())
            base_rtf.append(seconds / base.sum())
            ratios.append(np.median(times) / np.median(base))
        substeps = SimulatedUR(robot="ur3", rate_hz=rate).substeps
        for name, t, rtf, ratio in ((label, np.concatenate(all_times), run_rtf, np.median(ratios)),
                                    ("  baseline: MuJoCo alone", np.concatenate(base_times), base_rtf, 1.0)):
            median, p99 = np.median(t), np.percentile(t, 99)
            print(f"{name:28s} {substeps:8d} {median * 1e6:9.1f} us {p99 * 1e6:7.1f} us "
                  f"{(1.0 / rate) / median:12.1f} {np.median(rtf):9.1f} {ratio:6.1f}")
    print(f"load average at end {os.getloadavg()[0]:.1f} (p99 is dominated by other processes when it is high)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
