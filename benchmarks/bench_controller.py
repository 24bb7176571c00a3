"""Timing of one operational-space controller step (model terms + law + singularity + friction).

Target (project issue 5): p99 <= 0.15 ms per step on this machine. Prints median and p99
over several runs, for each singularity method, far from and inside the singular region,
for torque and velocity output and for sensorless force estimation.

    .venv/bin/python benchmarks/bench_controller.py [--quick]
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np

from robot_dynamics_id.control.contact import ContactStage
from robot_dynamics_id.control.controller import ControllerConfig, OperationalSpaceController
from robot_dynamics_id.sim.truth import nominal_truth

Q_REGULAR = np.array([0.0, -1.9, -1.6, -1.2, np.pi / 2, 0.0])
Q_SINGULAR = np.array([0.0, -1.9, -1.6, -1.2, 0.1, 0.0])  # sigma_min inside the blend region


def time_steps(ctl: OperationalSpaceController, q: np.ndarray, n: int, hybrid: bool) -> np.ndarray:
    rng = np.random.default_rng(0)
    ctl.osm.update(q, np.zeros(6))
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.set_force_target(10.0)
    if hybrid:
        ctl.stages.reset(ContactStage.HYBRID)
    else:
        ctl.enter_free_motion()
    z = ctl.osm.tip_rotation[:, 2]
    wrench = np.r_[-10.0 * z, 0.0, 0.0, 0.0]
    qs = q + rng.normal(0, 1e-3, (n, 6))
    qds = rng.normal(0, 0.1, (n, 6))
    currents = rng.normal(0, 0.5, (n, 6))
    out = np.empty(n)
    gc.disable()
    try:
        for k in range(n):
            t0 = time.perf_counter()
            ctl.step(qs[k], qds[k], k * 0.002, wrench_base=wrench, current_a=currents[k])
            out[k] = time.perf_counter() - t0
    finally:
        gc.enable()
    return out * 1e3


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and runs")
    args = parser.parse_args()
    n_steps, n_runs = (2000, 3) if args.quick else (10000, 5)
    model = nominal_truth("ur3")  # identified-like model: inertials + friction
    cases = [
        ("torque, padding, hybrid, regular pose", dict(), Q_REGULAR, True),
        ("torque, padding, hybrid, singular region", dict(), Q_SINGULAR, True),
        ("torque, truncation, singular region", dict(singularity_method="truncation"), Q_SINGULAR, True),
        ("torque, damped LS, singular region", dict(singularity_method="damped_least_squares"), Q_SINGULAR, True),
        ("torque, free motion", dict(), Q_REGULAR, False),
        ("velocity output, hybrid", dict(output_mode="velocity", period_s=0.008), Q_REGULAR, True),
        ("torque, sensorless (momentum observer)", dict(force_source="estimated"), Q_REGULAR, True),
    ]
    print(f"controller step time, ms ({n_runs} runs x {n_steps} steps; target p99 <= 0.15 ms)")
    print(f"{'case':45s} {'median':>8s} {'p99':>8s} {'p99 worst run':>14s}")
    worst_main = 0.0
    for name, options, q, hybrid in cases:
        meds, p99s = [], []
        for _ in range(n_runs):
            ctl = OperationalSpaceController(model, config=ControllerConfig(**options))
            times = time_steps(ctl, q, n_steps, hybrid)
            meds.append(np.median(times))
            p99s.append(np.percentile(times, 99))
        print(f"{name:45s} {np.median(meds):8.4f} {np.median(p99s):8.4f} {max(p99s):14.4f}")
        if name.startswith("torque, padding"):
            worst_main = max(worst_main, float(np.median(p99s)))
    verdict = "PASS" if worst_main <= 0.15 else "FAIL"
    print(f"padding torque-mode step p99 (median over runs): {worst_main:.4f} ms -> {verdict} (<= 0.15 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
