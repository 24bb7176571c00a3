"""Wall and CPU time of the simulated identification experiment (``rdi simulate-experiment``).

One run = a PRBS + sinusoid excitation of ``--duration`` s (default 60) on the
simulated UR3 at 500 Hz: excitation generation, the closed-loop run
(sim/experiment.run_experiment: streamer + safety guard + plant, every cycle
recorded) and writing the torque logger's bag (mcap). Baseline measured in the
same run: the plant alone stepped for the same number of cycles under a plain
speedJ command (SimulatedUR.step), i.e. what no experiment loop can beat.

Printed: median and p99 over ``--repeats`` runs (the machine is shared, so
wall time varies; CPU time is steadier), the real-time factor (robot time per
wall second) and the ratio experiment / plant-only.

    .venv/bin/python benchmarks/bench_simulate_experiment.py [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_dynamics_id.sim.excitation_presets import paper_prbs_excitation
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.experiment_bag import write_experiment_bag
from robot_dynamics_id.sim.plant import SimulatedUR


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def stats(values: list[float]) -> str:
    arr = np.asarray(values)
    return f"median {np.median(arr):7.2f} s  p99 {np.percentile(arr, 99):7.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=60.0, help="excitation length, s (default 60)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="10 s excitation, 2 repeats")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    if args.quick:
        args.duration, args.repeats = 10.0, 2
    rows: dict[str, list[float]] = {k: [] for k in ("excitation_wall", "run_wall", "run_cpu", "bag_wall", "bag_cpu",
                                                    "plant_wall", "plant_cpu", "total_wall")}
    robot_time = 0.0
    for repeat in range(args.repeats):
        trajectory, w0, _ = timed(lambda: paper_prbs_excitation("ur3", duration_s=args.duration, seed=repeat))
        result, w1, c1 = timed(lambda: run_experiment(trajectory, truth_seed=repeat, noise_seed=repeat))
        tmp = Path(tempfile.mkdtemp(prefix="bench_simexp_"))
        try:
            _, w2, c2 = timed(lambda: write_experiment_bag(tmp / "bag", result))
        finally:
            shutil.rmtree(tmp)
        cycles = result.n_samples - 1
        robot_time = result.recording.duration_s
        plant = SimulatedUR(robot="ur3", truth_seed=repeat, rate_hz=500.0, initial_q_rad=trajectory.start_position_rad)

        def plant_only():
            for k in range(cycles):
                plant.speed_j(np.full(6, 0.3 * np.sin(k / 250.0)), 10.0)
                plant.step()

        _, w3, c3 = timed(plant_only)
        for key, value in (("excitation_wall", w0), ("run_wall", w1), ("run_cpu", c1), ("bag_wall", w2),
                           ("bag_cpu", c2), ("plant_wall", w3), ("plant_cpu", c3), ("total_wall", w0 + w1 + w2)):
            rows[key].append(value)
        print(f"repeat {repeat}: {cycles + 1} samples, {robot_time:.1f} s robot time: excitation {w0:.2f} s, "
              f"run {w1:.2f} s wall / {c1:.2f} s CPU, bag {w2:.2f} s wall / {c2:.2f} s CPU, plant alone {w3:.2f} s "
              f"wall / {c3:.2f} s CPU", flush=True)
    print(f"\nsimulated experiment, {args.duration:g} s excitation at 500 Hz ({robot_time:.1f} s robot time), "
          f"{args.repeats} runs:")
    for key in rows:
        print(f"  {key:16s} {stats(rows[key])}")
    total = np.median(rows["total_wall"])
    print(f"  real-time factor (robot time / total wall, median): {robot_time / total:.2f}x")
    print(f"  run / plant-alone CPU (median ratio): {np.median(np.array(rows['run_cpu']) / rows['plant_cpu']):.2f}")


if __name__ == "__main__":
    main()
