"""Benchmark: an arm identified with a tool on its flange (a gripper left mounted, as labs often do).

The package's synthetic plant (identification/synthetic.py, ``real`` friction) with a tool merged into the last
link (io/payload_file.model_with_payload): 30 s Fourier training at 200 Hz with 0.05 Nm torque noise, validation on
another 15 s Fourier run. Prints the per-joint fit (%) of the default (physically consistent) model and of the
weighted least-squares fit, which has no bounds and is the baseline measured in the same run, and the consistent
fit's training residual over the weighted fit's (identification/excitation_checks.consistent_fit_notes warns above
1.5). Results: benchmarks/RESULTS.md (twenty-sixth session).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify, validate
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_recording
from robot_dynamics_id.io.payload_file import FlangePayload, model_with_payload
from robot_dynamics_id.sim.truth import nominal_friction

#: (robot, tool mass kg, tool CoM along the flange's z, m): none, a gripper, the UR5e's rating, a heavy UR10e tool
CASES = (("ur5e", 0.0, 0.0), ("ur5e", 2.0, 0.12), ("ur5e", 5.0, 0.10), ("ur10e", 10.0, 0.10))


def run_case(robot: str, mass_kg: float, com_z_m: float, seed: int) -> dict:
    truth = replace(perturbed_truth(robot, seed=seed), friction=nominal_friction(robot, "real"))
    if mass_kg:
        tool = FlangePayload(mass_kg, np.array([0.0, 0.02, com_z_m]), np.diag([2e-3, 2e-3, 1e-3]), "tool0", True, (),
                             None, None, "bench_identification_tool")
        truth = model_with_payload(truth, tool)
    train = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3, torque_noise_nm=0.05)
    check = synthetic_recording(truth, duration_s=15, rate_hz=200, seed=8, torque_noise_nm=0.05)
    out = {}
    for estimator in ("consistent", "wls"):
        result = identify(train, robot, IdentificationOptions(estimator=estimator))
        out[estimator] = np.asarray(validate(result.model, check, robot)["fit_percent"])
        if estimator == "consistent":
            rms = result.model.provenance["training_moving_rms_nm"]
            out["training ratio"] = np.asarray(rms["model"]) / np.asarray(rms["linear"])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2", help="truth seeds (default 1,2)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    worst_gap = 0.0
    for robot, mass, z in CASES:
        for seed in (int(s) for s in args.seeds.split(",")):
            r = run_case(robot, mass, z, seed)
            gap = float(np.max(r["wls"] - r["consistent"]))
            worst_gap = max(worst_gap, gap)
            print(f"{robot}, tool {mass:g} kg at {z:g} m, truth seed {seed}: held-out fit % consistent "
                  f"{np.round(r['consistent'], 2).tolist()}, weighted {np.round(r['wls'], 2).tolist()}; "
                  f"consistent below weighted by at most {gap:.2f} points; training residual ratio "
                  f"{np.round(r['training ratio'], 2).tolist()}", flush=True)
    print(f"worst: the consistent model's fit {worst_gap:.2f} points below the weighted fit's on a joint")
    return 0


if __name__ == "__main__":
    sys.exit(main())
