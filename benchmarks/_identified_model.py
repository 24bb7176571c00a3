"""A model identified the way a lab would, from a simulated experiment on a given truth (benchmarks only)."""

from __future__ import annotations

import time
from pathlib import Path


def identify_simulated_arm(out_dir: str | Path, *, truth_seed: int, duration_s: float = 30.0,
                           robot: str = "ur3") -> Path:
    """Run an optimised excitation on the simulated arm with truth ``make_truth(robot, truth_seed)``,
    identify it (torque = current x the arm's drive gains, as after `rdi drive-gains`), return model.yaml."""
    from robot_dynamics_id.identification.job import run_identify
    from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
    from robot_dynamics_id.sim.experiment import run_experiment
    from robot_dynamics_id.sim.experiment_bag import write_experiment_bag

    out_dir = Path(out_dir)
    t0 = time.perf_counter()
    trajectory = planned_fourier_excitation(robot, duration_s=duration_s, seed=0, period_s=10.0)
    result = run_experiment(trajectory, robot=robot, truth_seed=truth_seed, noise_seed=1)
    bag = write_experiment_bag(out_dir / "bag", result)
    summary = run_identify(bag, robot=robot, out_dir=out_dir / "identification", torque_source="current",
                           drive_gains_nm_per_a=result.truth.drive_gains_nm_per_a, plots=False)
    print(f"identified the model from a {duration_s:.0f} s simulated experiment (truth seed {truth_seed}) in "
          f"{time.perf_counter() - t0:.0f} s: training fit " + ", ".join(f"{f:.1f}" for f in summary["fit_percent"])
          + " %", flush=True)
    return out_dir / "identification" / "model.yaml"
