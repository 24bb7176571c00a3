"""Sensorless collision detection on the simulated UR3: identified vs nominal model, side by side (issue 20).

Per controller rate (500 Hz e-Series, 125 Hz CB3), the lab's procedure end to end, in-process on the
plant's clock (faster than real time where the machine allows):

1. the identified model: ``rdi identify`` on a bag of a 30 s optimised excitation (excitation seed 0) of
   a perturbed arm (truth seed), torque = motor current x the arm's drive gains (as after
   ``rdi drive-gains``); the nominal model: published masses and inertia priors, no friction, the same
   gains — the baseline, measured in the same run;
2. thresholds for each: ``rdi validate --collision-thresholds`` on a bag of a collision-free run of the
   monitored excitation (another optimised excitation, seed 1, 30 s);
3. collisions: the monitored excitation executed by ur_interface's robot loop (trajectory tracker, guard,
   collision monitor as cycle monitor, protective stop through the simulated backend), resumed from a
   snapshot before each of ``--cases`` random collisions (scenarios/collisions.py): soft obstacles
   (10 N/mm), hard obstacles (500 N/mm) in a link point's path, pushes of 30-60 N on links 2-6.
   Each case runs twice, once with each model's monitor reacting;
4. false alarms: the monitored excitation repeated for ``--hours`` of robot time, both models' monitors
   reporting only (an alarm is counted and the monitor re-armed).

Printed per model: detection delay after the first touch (median, p99, max), missed contacts (reaching
30 N undetected), false alarms before the contact in the case runs, the contact force at detection and its
peak over the case (the arm's stop included), false alarms per hour, the largest |r|/threshold of the
collision-free run; and per kind. Also: wall time, real-time factor, load average.

    .venv/bin/python benchmarks/bench_collision.py [--rates 500,125] [--hours 1] [--cases 60] [--truth-seed 3]
    .venv/bin/python benchmarks/bench_collision.py --quick      # 0.02 h, 6 cases, 500 Hz: a smoke run

The collision cases' figures are printed before the collision-free run (the long part). The rates are
independent: on a 2-core machine run them as two processes (``--rates 500 --json a.json`` and ``--rates 125
--json b.json``) at the same time.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_dynamics_id.commands._collision_thresholds import measure_collision_thresholds
from robot_dynamics_id.control.collision import CollisionDetector, CollisionThresholds
from robot_dynamics_id.identification.job import run_identify
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.scenarios.collisions import (CASE_KINDS, plan_collision_cases, reference_run,
                                                    run_collision_case, run_collision_free)
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.experiment_bag import write_experiment_bag
from robot_dynamics_id.sim.truth import controller_model, make_truth

ROBOT = "ur3"


def _models(work: Path, truth, rate: float, seconds: float) -> dict[str, Path]:
    """Step 1: identified and nominal model files."""
    excitation = planned_fourier_excitation(ROBOT, duration_s=seconds, seed=0, period_s=10.0, rate_hz=rate)
    run = run_experiment(excitation, robot=ROBOT, truth=truth, noise_seed=1, rate_hz=rate)
    bag = write_experiment_bag(work / "identification_bag", run)
    summary = run_identify(bag, robot=ROBOT, out_dir=work / "identified", torque_source="current",
                           drive_gains_nm_per_a=truth.drive_gains_nm_per_a, progress=False, plots=False)
    print(f"  identified from {seconds:.0f} s at {rate:g} Hz: training fit "
          + ", ".join(f"{f:.1f}" for f in summary["fit_percent"]) + " %", flush=True)
    nominal = controller_model(ROBOT)
    from dataclasses import replace

    nominal = replace(nominal, drive_gains_nm_per_a=np.asarray(truth.drive_gains_nm_per_a, float))
    return {"identified": Path(summary["model"]), "nominal": nominal.save(work / "nominal.yaml")}


def _thresholds(work: Path, models: dict[str, Path], truth, monitored, rate: float) -> dict[str, CollisionDetector]:
    """Step 2: `rdi validate --collision-thresholds` on a collision-free bag of the monitored excitation."""
    run = run_experiment(monitored, robot=ROBOT, truth=truth, noise_seed=2, rate_hz=rate)
    bag = write_experiment_bag(work / "validation_bag", run)
    detectors = {}
    for name, path in models.items():
        measure_collision_thresholds(path, bag, out_dir=work / f"thresholds_{name}")
        model = DynamicModel.load(path)
        thresholds = CollisionThresholds.from_model(model)
        detectors[name] = CollisionDetector(model, thresholds, rate_hz=rate)
        print(f"  {name:10s} thresholds (Nm, fastest band): "
              + ", ".join(f"{v:.2f}" for v in thresholds.threshold_nm[:, -1])
              + "; slowest band: " + ", ".join(f"{v:.2f}" for v in thresholds.threshold_nm[:, 0]), flush=True)
    return detectors


def _stats(values) -> str:
    v = np.asarray([x for x in values if x is not None], float)
    if v.size == 0:
        return "n/a"
    return (f"median {np.median(v) * 1e3:5.1f} ms, p99 {np.percentile(v, 99) * 1e3:5.1f} ms, "
            f"max {v.max() * 1e3:5.1f} ms (n = {v.size})")


def _summarise_cases(name: str, results) -> dict:
    """Print and return the collision cases' figures of one model (before the long collision-free run)."""
    delays = [r.delay_s for r in results]
    missed = [r for r in results if r.missed]
    early = [r for r in results if r.false_alarm_before_contact]
    at_detection = [r.force_at_detection_n for r in results if r.detected]
    peaks = [r.peak_force_n for r in results]
    print(f"  {name}:")
    print(f"    detection delay after the first touch: {_stats(delays)}")
    print(f"    missed contacts (>= 30 N, not detected): {len(missed)} of {len(results)}"
          + ("".join(f"\n      - {r.case.describe()}: peak {r.peak_force_n:.0f} N" for r in missed)))
    print(f"    false alarms before the contact (case runs): {len(early)}")
    if at_detection:
        print(f"    contact force at detection: median {np.median(at_detection):.1f} N, "
              f"p99 {np.percentile(at_detection, 99):.1f} N")
    print(f"    peak contact force (stop included): median {np.median(peaks):.1f} N, "
          f"p99 {np.percentile(peaks, 99):.1f} N, max {np.max(peaks):.1f} N")
    for kind in CASE_KINDS:
        sub = [r for r in results if r.case.kind == kind]
        if sub:
            peak = np.median([r.peak_force_n for r in sub])
            print(f"      {kind:14s} delay {_stats([r.delay_s for r in sub])}; missed "
                  f"{sum(r.missed for r in sub)}/{len(sub)}; peak median {peak:.0f} N", flush=True)
    return {"delays_s": delays, "missed": len(missed), "early_alarms": len(early), "cases": len(results),
            "force_at_detection_n": at_detection, "peak_force_n": peaks}


def _summarise_free(name: str, free) -> dict:
    """Print and return the collision-free run's figures of one model."""
    alarms = free.alarms[name]
    print(f"    collision-free {free.duration_s / 3600:.3f} h ({free.passes} passes): {len(alarms)} false alarms "
          f"({free.alarms_per_hour(name):.1f} per hour); largest |r|/threshold per joint "
          + ", ".join(f"{v:.2f}" for v in free.max_ratio[name]))
    return {"false_alarms": len(alarms), "collision_free_h": free.duration_s / 3600,
            "max_ratio": free.max_ratio[name].tolist()}


def run_rate(rate: float, args, work: Path) -> dict:
    print(f"\n== {ROBOT} at {rate:g} Hz, truth seed {args.truth_seed} ==", flush=True)
    t0 = time.perf_counter()
    truth = make_truth(ROBOT, args.truth_seed)
    models = _models(work, truth, rate, args.identify_seconds)
    monitored = planned_fourier_excitation(ROBOT, duration_s=args.excitation_seconds, seed=1, period_s=10.0,
                                           rate_hz=rate)
    detectors = _thresholds(work, models, truth, monitored, rate)
    t_setup = time.perf_counter() - t0

    t0 = time.perf_counter()
    reference = reference_run(monitored, robot=ROBOT, truth=truth, rate_hz=rate, noise_seed=3)
    cases = plan_collision_cases(reference, args.cases, seed=args.case_seed)
    results = {name: [run_collision_case(reference, case, detector, model=name) for case in cases]
               for name, detector in detectors.items()}
    t_cases = time.perf_counter() - t0
    # printed now: the collision-free run that follows takes the longest (an hour of robot time)
    print(f"\n  collisions at {rate:g} Hz ({len(cases)} per model; times after the first touch), "
          f"{t_cases:.0f} s wall:")
    summary = {name: _summarise_cases(name, results[name]) for name in detectors}

    t0 = time.perf_counter()
    last = [t0]

    def progress(robot_s: float) -> None:
        now = time.perf_counter()
        if now - last[0] > 60:
            last[0] = now
            print(f"    collision-free: {robot_s / 60:.0f} min of robot time, "
                  f"{robot_s / (now - t0):.2f}x real time, load {os.getloadavg()[0]:.1f}", flush=True)

    free = run_collision_free(monitored, detectors, robot=ROBOT, truth=truth, rate_hz=rate,
                              duration_s=args.hours * 3600.0, noise_seed=4, on_progress=progress)
    t_free = time.perf_counter() - t0

    print(f"\n  collision-free at {rate:g} Hz:")
    for name in detectors:
        print(f"  {name}:")
        summary[name].update(_summarise_free(name, free))
    print(f"  wall time: set-up {t_setup:.0f} s, collisions {t_cases:.0f} s, collision-free {t_free:.0f} s "
          f"({free.duration_s / t_free:.2f}x real time); load average {os.getloadavg()[0]:.1f}", flush=True)
    summary["cases"] = [r.as_dict() for name in results for r in results[name]]
    summary["wall_s"] = {"setup": t_setup, "collisions": t_cases, "collision_free": t_free}
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rates", default="500,125", help="controller rates, Hz (default 500,125)")
    parser.add_argument("--hours", type=float, default=1.0, help="collision-free robot time per rate (default 1)")
    parser.add_argument("--cases", type=int, default=60, help="collisions per rate (default 60)")
    parser.add_argument("--truth-seed", type=int, default=3)
    parser.add_argument("--case-seed", type=int, default=0)
    parser.add_argument("--identify-seconds", type=float, default=30.0)
    parser.add_argument("--excitation-seconds", type=float, default=30.0)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--quick", action="store_true", help="500 Hz, 6 cases, 0.02 h: a smoke run")
    args = parser.parse_args()
    if args.quick:
        args.rates, args.cases, args.hours = "500", 6, 0.02
    print(f"bench_collision: {args}; load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs", flush=True)
    out = {}
    with tempfile.TemporaryDirectory(prefix="bench_collision_") as tmp:
        for rate in (float(r) for r in args.rates.split(",")):
            work = Path(tmp) / f"{rate:g}hz"
            work.mkdir()
            out[f"{rate:g}"] = run_rate(rate, args, work)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
