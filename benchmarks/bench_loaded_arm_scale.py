"""The gravity scale of the data check (identification/data_checks.py) for bare and loaded arms: where
``LOADED_SCALE`` (rdi identify's "was a tool or payload mounted during the run?") sits.

For each arm, on one optimised excitation (the same for all cases): the least-squares scale of the joint torque
against the nominal model's gravity torque (``gravity_scale``), for

* the bare arm: twelve simulated truths (masses, CoMs, inertias spread as `rdi simulate-experiment`'s), read with
  their own drive gains and with the nominal gains (the gains' error scales the torque: the baseline spread);
* the same arm (truth seed 0) with a payload at the flange of 10, 20, 30, 50 and 100 % of its rating, CoM 5 cm out.

Deterministic (no noise, no optimiser randomness beyond the seed): one run.

    .venv/bin/python benchmarks/bench_loaded_arm_scale.py [--robots ur3 ur5e ur10e]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from robot_dynamics_id.dynamics.payload import payload_parameters, payload_regressor
from robot_dynamics_id.identification.data_checks import LOADED_SCALE, gravity_scale
from robot_dynamics_id.identification.synthetic import inverse_dynamics
from robot_dynamics_id.robots.model import load_robot
from robot_dynamics_id.robots.priors import nominal_drive_gains
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation
from robot_dynamics_id.sim.truth import make_truth

FRACTIONS = (0.1, 0.2, 0.3, 0.5, 1.0)


def one_robot(name: str) -> dict:
    robot = load_robot(name)
    trajectory = planned_fourier_excitation(robot, duration_s=20.0, seed=0, max_iterations=15)
    step = max(1, trajectory.n_samples // 1000)
    q, qd, qdd = (a[::step] for a in (trajectory.position_rad, trajectory.velocity_rad_s,
                                       trajectory.acceleration_rad_s2))
    nominal = nominal_drive_gains(name)
    own, with_nominal_gains = [], []
    for seed in range(12):
        truth = make_truth(name, seed)
        tau = inverse_dynamics(truth, q, qd, qdd)
        own.append(gravity_scale(robot, q, qd, qdd, tau).scale)
        with_nominal_gains.append(gravity_scale(robot, q, qd, qdd, tau / truth.drive_gains_nm_per_a * nominal).scale)
    truth = make_truth(name, 0)
    base = inverse_dynamics(truth, q, qd, qdd)
    rated = robot.description.payload_kg
    loaded = {}
    for fraction in FRACTIONS:
        tool = payload_regressor(truth.robot_model(), q, qd, qdd) @ payload_parameters(fraction * rated, (0, 0, 0.05))
        loaded[fraction] = gravity_scale(robot, q, qd, qdd, base + tool.reshape(-1, robot.n_joints)).scale
    return {"own": (min(own), max(own)), "nominal_gains": (min(with_nominal_gains), max(with_nominal_gains)),
            "loaded": loaded, "rated_kg": rated}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", nargs="+", default=["ur3", "ur5e", "ur10e"])
    args = parser.parse_args()
    print(f"gravity scale vs the nominal model (LOADED_SCALE = {LOADED_SCALE}); load {os.getloadavg()[0]:.2f}")
    print(f"{'robot':7} {'bare, own gains':>16} {'bare, nominal gains':>20}   "
          + "  ".join(f"{int(100 * f):>3} % rated" for f in FRACTIONS))
    for name in args.robots:
        r = one_robot(name)
        bare = max(r["own"][1], r["nominal_gains"][1])
        own, nominal = r["own"], r["nominal_gains"]
        print(f"{name:7} {own[0]:7.3f}-{own[1]:<7.3f}  {nominal[0]:9.3f}-{nominal[1]:<9.3f} "
              + "  ".join(f"{r['loaded'][f]:>11.2f}" for f in FRACTIONS)
              + f"   threshold / largest bare: {LOADED_SCALE / bare:.2f}")


if __name__ == "__main__":
    main()
