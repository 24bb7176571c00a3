"""The TCP-pose check (identification/kinematic_check.py) on every UR and its twin, across factory calibrations.

For each pair (the arm recorded, the arm named): the recorded ``actual_TCP_pose`` is made from the true arm's
kinematics with a simulated factory calibration (DH a, d perturbed by N(0, 1 mm), alpha by N(0, 1 mrad); one
calibration per seed) and a pendant TCP offset, over a 30 s excitation-like motion of every joint (base
+-0.8 rad). Printed per run: the rms residual with the named arm's kinematics, with the true arm's (the
baseline: what the right answer leaves), their ratio, and what the check says (names the twin / silent).

    .venv/bin/python benchmarks/bench_kinematic_check.py [--seeds 1,2,3]
"""

from __future__ import annotations

import argparse
import os
from dataclasses import replace

import numpy as np
from scipy.spatial.transform import Rotation

from robot_dynamics_id.identification.kinematic_check import check_tcp_pose_fits_robot
from robot_dynamics_id.robots.description import get_robot
from robot_dynamics_id.robots.model import load_robot

PAIRS = (("ur3e", "ur3"), ("ur3", "ur3e"), ("ur5", "ur5e"), ("ur5e", "ur5"), ("ur10", "ur10e"), ("ur10e", "ur10"),
         ("ur16e", "ur10e"))
#: the right arm named: the check must stay silent (a false alarm otherwise)
RIGHT = tuple((name, name) for name in ("ur3", "ur3e", "ur5", "ur5e", "ur10", "ur10e", "ur16e"))


def recorded_pose(true: str, seed: int, q: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(seed)
    d = get_robot(true)
    arm = load_robot(replace(d, dh_a_m=d.dh_a_m + rng.normal(0, 1e-3, 6), dh_d_m=d.dh_d_m + rng.normal(0, 1e-3, 6),
                             dh_alpha_rad=d.dh_alpha_rad + rng.normal(0, 1e-3, 6)))
    rotations, positions = arm.tool_poses(q)
    positions = positions + np.einsum("kij,j->ki", rotations, (0.01, -0.02, 0.15))  # the pendant's TCP
    return np.hstack([positions, Rotation.from_matrix(rotations).as_rotvec()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1,2,3", help="calibration seeds")
    args = parser.parse_args()
    t = np.linspace(0.0, 30.0, 1500)
    q = np.column_stack([0.8 * np.sin(2 * np.pi * 0.05 * (j + 1) * t + j) for j in range(6)]) \
        + np.array([0.0, -1.57, 1.57, -1.57, -1.57, 0.0])
    print(f"{'recorded':>8} {'named':>6} {'seed':>4} {'named mm':>9} {'true mm':>8} {'ratio':>6}  check says")
    named_runs = false_alarms = 0
    for true, claimed in PAIRS + RIGHT:
        for seed in (int(s) for s in args.seeds.split(",")):
            warnings, summary = check_tcp_pose_fits_robot(load_robot(claimed), q, recorded_pose(true, seed, q),
                                                   robot_label=claimed, robot_fix="{robot}")
            own = summary["residual_rms_mm"]
            right = own if true == claimed else summary["other_robots_residual_rms_mm"][true]
            says = summary.get("fits_other_robot")
            named_runs += true != claimed and says == true
            false_alarms += true == claimed and bool(warnings)
            said = f"names {says}" if says else ("warns: no built-in UR fits" if warnings else "silent")
            print(f"{true:>8} {claimed:>6} {seed:>4} {own:9.2f} {right:8.2f} {own / right:6.1f}  {said}")
    runs = len(args.seeds.split(","))
    print(f"twin named in {named_runs} of {len(PAIRS) * runs} runs; the right arm warned about in {false_alarms} of "
          f"{len(RIGHT) * runs}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
