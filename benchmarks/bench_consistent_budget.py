"""Benchmark: does the consistent fit's evaluation budget limit what the model predicts?

``physically_consistent_least_squares`` (identification/estimators.py) stops after
``IdentificationOptions.consistent_max_evaluations`` evaluations (default 200), usually before scipy calls it
converged; ``model.yaml`` records that (``provenance.consistent_solver``). This benchmark identifies the
independent benchmark's training files (bench_identification_independent.py, recordings no code of the package
produced) with several budgets and scores each model on both validation runs as ``rdi validate`` does (current x
gain, low-passed at 10 Hz, moving samples): the fit's cost, its time, and the held-out moving-sample RRE per
joint, with the largest change against the default budget.

    .venv/bin/python benchmarks/bench_consistent_budget.py [--budgets 200,1000,5000] [--cases ur5e:11,ur10:7]
        [--cache DIR]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_identification_independent import ARMS, generate  # noqa: E402

from robot_dynamics_id.identification.job import load_recording  # noqa: E402
from robot_dynamics_id.identification.metrics import scoring_cutoff_hz  # noqa: E402
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify  # noqa: E402
from robot_dynamics_id.identification.torque_source import select_torque  # noqa: E402
from robot_dynamics_id.identification.validation import validate_recording  # noqa: E402
from robot_dynamics_id.robots.model import load_robot  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", default="200,1000,5000", help="evaluation budgets; the first is the reference")
    parser.add_argument("--cases", default="ur5e:11,ur10:7", help="ARM:SEED of the independent benchmark")
    parser.add_argument("--cache", type=Path, default=None, help="the independent benchmark's recordings (DIR)")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    cache = args.cache or Path(tempfile.mkdtemp(prefix="rdi_budget_"))
    budgets = [int(b) for b in args.budgets.split(",")]
    worst_change = 0.0
    for case in args.cases.split(","):
        name, seed = case.split(":")
        arm = ARMS[name]
        data = cache / f"{arm.robot}_seed{seed}"
        if not (data / "val_ptp.csv").is_file():
            data.mkdir(parents=True, exist_ok=True)
            generate(data, arm, int(seed))
        robot = load_robot(arm.robot)
        gains = arm.gain_nm_per_a
        train = load_recording(data / "train.csv", robot=robot)
        runs = {run: load_recording(data / f"{run}.csv", robot=robot) for run in ("val_fourier", "val_ptp")}
        print(f"\n=== {arm.robot}, truth seed {seed}")
        reference = None
        for budget in budgets:
            options = IdentificationOptions(torque_source="current", drive_gains_nm_per_a=gains,
                                            consistent_max_evaluations=budget)
            clock = time.perf_counter()
            result = identify(train, robot, options)
            seconds = time.perf_counter() - clock
            solver = result.model.provenance["consistent_solver"]
            scores = []
            for recording in runs.values():
                torque = select_torque(recording, "current", gains).torque_nm
                cutoff = scoring_cutoff_hz(1.0 / recording.sample_period_s, result.data.cutoff_hz)
                scores.append(validate_recording(result.model, recording, torque, robot,
                                                 cutoff_hz=cutoff).metrics["moving_rre_percent"])
            scores = np.array(scores)
            change = "" if reference is None else f"; largest change {np.max(np.abs(scores - reference)):.2f} points"
            if reference is None:
                reference = scores
            else:
                worst_change = max(worst_change, float(np.max(np.abs(scores - reference))))
            print(f"  budget {budget:5d}: cost {result.consistent.cost:.4g}, identify {seconds:.1f} s, evaluations "
                  f"{solver['evaluations']}, converged {solver['converged']}{change}")
            for run, row in zip(runs, scores):
                print(f"    {run:12s} moving-sample RRE %: " + ", ".join(f"{v:.2f}" for v in row))
    print(f"\nlargest held-out change against budget {budgets[0]}: {worst_change:.2f} points; recordings in {cache}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
