"""Benchmark: offline identification of 10 minutes of 500 Hz data vs the P3 simulated-annealing baseline.

Synthetic UR3 with a perturbed 'truth' (masses, CoMs, inertias, rotor inertia,
P2 eq. (11) friction), random Fourier excitation, Gaussian torque and position
noise. Prints our wall time (median and p99 over runs), the annealing baseline's
time on the same preprocessed data and the ratio, and both models' per-joint fit
(seeds.md P3 eq. (31)) on a separate validation trajectory.

    .venv/bin/python benchmarks/bench_identification.py [--quick] [--robot ur3]
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine threaded BLAS on small matrices is much slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

import numpy as np  # noqa: E402

from robot_dynamics_id.dynamics.consistency import is_physically_consistent  # noqa: E402
from robot_dynamics_id.dynamics.regressor import rigid_body_regressor  # noqa: E402
from robot_dynamics_id.identification.annealing import anneal, standard_to_physical  # noqa: E402
from robot_dynamics_id.identification.pipeline import (  # noqa: E402
    IdentificationOptions,
    identify,
    predict_preprocessed,
    prepare,
)
from robot_dynamics_id.identification.metrics import fit_percent  # noqa: E402
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_recording  # noqa: E402
from robot_dynamics_id.io.model_file import DynamicModel  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 minutes of data, 1 run, short annealing")
    parser.add_argument("--robot", default="ur3")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--anneal-iterations", type=int, default=None)
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    duration = 120.0 if args.quick else 600.0
    runs = args.runs or (1 if args.quick else 3)
    iterations = args.anneal_iterations or (20_000 if args.quick else 200_000)

    truth = perturbed_truth(args.robot, seed=1)
    t0 = time.perf_counter()
    train = synthetic_recording(truth, duration_s=duration, rate_hz=500.0, seed=3, torque_noise_nm=0.1,
                                position_noise_rad=1e-4, base_frequency_hz=0.05, harmonics=8)
    check = synthetic_recording(truth, duration_s=30.0, rate_hz=500.0, seed=8, torque_noise_nm=0.1,
                                position_noise_rad=1e-4)
    print(f"robot {args.robot}: training {train.time_s.size} samples ({duration:.0f} s at 500 Hz), "
          f"validation {check.time_s.size} samples; data generated in {time.perf_counter() - t0:.1f} s")

    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = identify(train, args.robot, IdentificationOptions())
        times.append(time.perf_counter() - start)
    assert result is not None
    times_arr = np.array(times)
    options = IdentificationOptions(preprocessing=replace(IdentificationOptions().preprocessing,
                                                          cutoff_hz=result.data.cutoff_hz))
    check_data = prepare(check, args.robot, options)
    robot = result.model.robot_model()
    ours_fit = fit_percent(predict_preprocessed(result.model, check_data, robot=robot), check_data.torque)
    print(f"ours (WLS + Stribeck search + physically consistent): median {np.median(times_arr):.2f} s, "
          f"p99 {np.percentile(times_arr, 99):.2f} s over {runs} run(s); stages "
          + ", ".join(f"{k} {v:.2f}" for k, v in result.timings_s.items()))
    print(f"  preprocessed: {result.data.summary()}")
    print(f"  links physically consistent: {result.physically_consistent_links.tolist()}")
    print(f"  validation fit %: {np.round(ours_fit, 2).tolist()} (min {ours_fit.min():.2f})")

    # Baseline: P3 annealing on the same preprocessed samples (66 parameters, viscous friction only).
    data = result.data
    n = robot.n_joints
    w = rigid_body_regressor(robot, data.q_rad, data.qd_rad_s, data.qdd_rad_s2)
    nominal = DynamicModel.nominal(args.robot)
    start_point = np.column_stack([standard_to_physical(nominal.standard_parameters()), np.zeros(n)])
    start = time.perf_counter()
    baseline = anneal(w, data.qd_rad_s, data.torque, start_point, max_iterations=iterations, max_time_s=600.0)
    anneal_time = time.perf_counter() - start
    # the baseline's links may be physically inconsistent (as in P3), which pinocchio's Inertia refuses:
    # predict straight from its standard parameters
    w_check = rigid_body_regressor(robot, check_data.q_rad, check_data.qd_rad_s, check_data.qdd_rad_s2)
    baseline_tau = (w_check @ baseline.standard_parameters).reshape(-1, n) + baseline.viscous_nm_s_per_rad * \
        check_data.qd_rad_s
    baseline_fit = fit_percent(baseline_tau, check_data.torque)
    consistent = is_physically_consistent(baseline.standard_parameters.reshape(n, 10))
    print(f"baseline (P3 simulated annealing, T = 10/k, {baseline.iterations} iterations): {anneal_time:.2f} s, "
          f"normalised cost {baseline.initial_cost:.4f} -> {baseline.cost:.4f}")
    print(f"  links physically consistent: {consistent.tolist()}")
    print(f"  validation fit %: {np.round(baseline_fit, 2).tolist()} (min {baseline_fit.min():.2f})")
    print(f"time ratio annealing / ours: {anneal_time / np.median(times_arr):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
