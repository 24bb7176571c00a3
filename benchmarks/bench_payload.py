"""Payload identification on the simulated UR3, beside the truth (issue 17 acceptance).

Per truth seed (a simulated arm whose masses, inertias, friction and drive gains
differ from the nominal model), the lab's procedure end to end, on files:

1. drive gains from a known-payload experiment (2.4 kg, as ``rdi demo``):
   ``rdi drive-gains`` on the two bags of a 30 s optimised excitation;
2. the arm model: ``rdi identify`` on the run without payload, torque = motor
   current x those gains;
3. ``rdi excite plan --kind payload`` (default settings), then the payload run on
   the simulator with the payload mounted (default 1.3 kg at (0.02, -0.01, 0.05) m
   in tool0), written to a bag, once per noise seed;
4. ``rdi payload`` on each bag (identification/payload_job.run_payload).

Printed per run: mass, CoM and inertia beside the truth, the errors and the
reported standard deviations. Baseline measured in the same run: the same
payload bags with the *nominal* arm model (published masses, inertia priors,
no friction, the calibrated gains) — what the estimate would be without the
identified arm. Summary: median and worst errors over all runs, median and p99
of ``rdi payload``'s wall time, and the load average.

    .venv/bin/python benchmarks/bench_payload.py [--quick] [--truth-seeds 7,3] [--noise-seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from robot_dynamics_id.excitation.payload import PayloadExcitationSettings, plan_payload_excitation
from robot_dynamics_id.identification.drive_gain_job import run_drive_gains
from robot_dynamics_id.identification.job import run_identify
from robot_dynamics_id.identification.payload_job import run_payload
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots import load_robot
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
from robot_dynamics_id.sim.experiment import run_experiment, run_known_payload_experiment
from robot_dynamics_id.sim.experiment_bag import write_experiment_bag

CALIBRATION_KG, CALIBRATION_COM = 2.4, (0.1, 0.05, 0.05)


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _arm_model(work: Path, truth_seed: int, duration_s: float) -> tuple[Path, Path, np.ndarray]:
    """Steps 1-2: calibrated gains, identified arm model; returns (model.yaml, nominal-model yaml, true gains)."""
    excitation = planned_fourier_excitation("ur3", duration_s=duration_s, seed=0, period_s=10.0)
    runs = run_known_payload_experiment(excitation, payload_kg=CALIBRATION_KG, payload_com_m=CALIBRATION_COM,
                                        robot="ur3", truth_seed=truth_seed, noise_seed=11)
    without = write_experiment_bag(work / "calibration_without", runs.without_payload)
    loaded = write_experiment_bag(work / "calibration_with", runs.with_payload)
    gains = run_drive_gains(without, loaded, robot="ur3", payload_mass_kg=runs.payload.mass_kg,
                            payload_com_m=runs.payload.com_m,
                            payload_inertia_about_com_kgm2=runs.payload.inertia_about_com_kgm2)["drive_gains_nm_per_a"]
    summary = run_identify(without, robot="ur3", out_dir=work / "arm", torque_source="current",
                           drive_gains_nm_per_a=gains, plots=False)
    truth_gains = runs.without_payload.truth.drive_gains_nm_per_a
    print(f"truth seed {truth_seed}: drive gains error "
          + ", ".join(f"{100 * (g / t - 1):+.2f}" for g, t in zip(gains, truth_gains)) + " %; arm fit "
          + ", ".join(f"{f:.1f}" for f in summary["fit_percent"]) + " %", flush=True)
    identified = DynamicModel.load(summary["model"])
    nominal = replace(DynamicModel.nominal("ur3"), drive_gains_nm_per_a=np.asarray(gains),
                      provenance=identified.provenance)
    nominal_path = nominal.save(work / "nominal_model.yaml")
    return Path(summary["model"]), nominal_path, truth_gains


def _row(label: str, est, mass: float, com: np.ndarray, inertia: np.ndarray) -> dict:
    com_error_mm = 1000 * np.linalg.norm(est.com_m - com)
    mass_error = 100 * (est.mass_kg / mass - 1)
    inertia_error = np.abs(est.inertia_about_com_kgm2 - inertia).max()
    print(f"  {label:<10} mass {est.mass_kg:.4f} kg (truth {mass:.4f}; {mass_error:+.2f} %, std "
          f"{est.mass_std_kg:.4f})  CoM {np.round(est.com_m * 1000, 2).tolist()} mm (truth "
          f"{np.round(com * 1000, 2).tolist()}; |error| {com_error_mm:.2f} mm, std "
          f"{np.round(est.com_std_m * 1000, 2).tolist()})  inertia max |error| {inertia_error:.2e} kg m^2 "
          f"(std up to {est.inertia_std_kgm2.max():.1e})", flush=True)
    return {"mass_error_percent": abs(mass_error), "com_error_mm": com_error_mm, "inertia_error": inertia_error}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--truth-seeds", default="7,3")
    parser.add_argument("--noise-seeds", default="1,2,3")
    parser.add_argument("--mass", type=float, default=1.3)
    parser.add_argument("--com", type=_floats, default=[0.02, -0.01, 0.05])
    parser.add_argument("--arm-duration", type=float, default=30.0, help="arm identification excitation, s")
    parser.add_argument("--quick", action="store_true", help="one truth seed, one noise seed")
    args = parser.parse_args()
    truth_seeds = [int(s) for s in args.truth_seeds.split(",")]
    noise_seeds = [int(s) for s in args.noise_seeds.split(",")]
    if args.quick:
        truth_seeds, noise_seeds = truth_seeds[:1], noise_seeds[:1]
    com = np.asarray(args.com, float)
    robot = load_robot("ur3")
    started = time.perf_counter()
    plan_t = time.perf_counter()
    trajectory = plan_payload_excitation(robot, PayloadExcitationSettings(), rate_hz=500.0)
    plan_s = time.perf_counter() - plan_t
    print(f"payload excitation: {trajectory.duration_s:g} s, wrist only, condition number "
          f"{trajectory.metadata['payload_condition_number']:.2f} (planned in {plan_s:.1f} s)", flush=True)
    rows: dict[str, list[dict]] = {"identified": [], "nominal": []}
    payload_s: list[float] = []
    work = Path(tempfile.mkdtemp(prefix="bench_payload_"))
    try:
        for truth_seed in truth_seeds:
            seed_dir = work / f"truth{truth_seed}"
            model, nominal, _ = _arm_model(seed_dir, truth_seed, args.arm_duration)
            for noise_seed in noise_seeds:
                result = run_experiment(trajectory, robot="ur3", truth_seed=truth_seed, noise_seed=100 + noise_seed,
                                        payload_kg=args.mass, payload_com_m=com)
                bag = write_experiment_bag(seed_dir / f"payload_{noise_seed}", result)
                truth_inertia = result.payload.inertia_about_com_kgm2
                print(f" truth seed {truth_seed}, noise seed {noise_seed}:")
                for label, arm in (("identified", model), ("nominal", nominal)):
                    t0 = time.perf_counter()
                    est, _ = run_payload(arm, bag, out_path=seed_dir / f"payload_{label}_{noise_seed}.yaml")
                    if label == "identified":
                        payload_s.append(time.perf_counter() - t0)
                    rows[label].append(_row(label, est, args.mass, com, truth_inertia))
                    for warning in est.warnings:
                        print(f"    warning: {warning[:110]}...")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nsummary over {len(rows['identified'])} runs (truth seeds {truth_seeds}, noise seeds {noise_seeds}); "
          f"payload {args.mass} kg at {com.tolist()} m:")
    for label, values in rows.items():
        mass = np.array([r["mass_error_percent"] for r in values])
        cerr = np.array([r["com_error_mm"] for r in values])
        ierr = np.array([r["inertia_error"] for r in values])
        print(f"  {label:<10} |mass error| median {np.median(mass):.3f} %, worst {mass.max():.3f} % (target 2 %); "
              f"|CoM error| median {np.median(cerr):.2f} mm, worst {cerr.max():.2f} mm (target 5 mm); inertia max "
              f"|error| median {np.median(ierr):.1e} kg m^2")
    arr = np.asarray(payload_s)
    print(f"  rdi payload wall time: median {np.median(arr):.2f} s, p99 {np.percentile(arr, 99):.2f} s "
          f"({arr.size} runs, 20 s of data at 500 Hz)")
    print(f"  load average {os.getloadavg()[0]:.1f}; total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
