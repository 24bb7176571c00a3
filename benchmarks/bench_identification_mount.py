"""Benchmark: an arm that is not floor-mounted, identified as if it were and with ``--gravity`` (the mount check).

Part 1, synthetic arms (identification/synthetic.py: a perturbed truth, torque = the truth's inverse dynamics
with Gaussian noise, as a ur_rtde CSV at 100 Hz with drive gains given), mounted tilted about the base x axis by
each ``--tilts`` angle: for each tilt, ``rdi identify`` on a 30 s Fourier run with a 20 s run of another
trajectory as ``--validate``, twice in the same run: with the default gravity (a floor mount: the baseline)
and with ``--gravity`` the true vector. Prints the exit code, the data check's angle between the torques'
gravity direction and the one assumed, and the validation run's fit and moving-sample RRE per joint.

Part 1b, a tool on the flange (not in the nominal model; a point mass at (0.05, 0, 0.12) m in the last link's
frame, half and all of the rated payload): the angle the check finds on floor-mounted and 30°-tilted arms,
the data check alone (the torque scale check warns or refuses a payload at the flange on its own).

Part 2, how far the check's estimate strays on floor-mounted arms with the friction real UR joints have
(``--plant-seeds``: the MuJoCo plant of bench_identification_real_friction.py, friction "real", its three
runs per seed; 500 Hz and the uneven 100 Hz subsampling): the angle the check finds where the truth is 0.
The warning threshold is data_checks.MOUNT_ANGLE_WARN_DEG.

    .venv/bin/python benchmarks/bench_identification_mount.py [--robots ur3,ur10e] [--tilts 0,5,15,30,90]
        [--plant-seeds 1001,1002,1003] [--cache DIR]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from robot_dynamics_id.cli import main as rdi  # noqa: E402
from robot_dynamics_id.identification.data_checks import (MOUNT_ANGLE_WARN_DEG,  # noqa: E402
                                                          MOUNT_RESIDUAL_RATIO_WARN, check_torque_fits_robot,
                                                          gravity_direction)
from robot_dynamics_id.identification.preprocessing import preprocess  # noqa: E402
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording  # noqa: E402
from robot_dynamics_id.io.ur_csv import write_ur_csv  # noqa: E402
from robot_dynamics_id.robots.model import load_robot  # noqa: E402
from robot_dynamics_id.robots.priors import nominal_drive_gains  # noqa: E402


def _row(values, fmt: str) -> str:
    return ", ".join(format(v, fmt) for v in values)


def synthetic_part(robots: list[str], tilts: list[float], root: Path) -> None:
    print("part 1: synthetic arms mounted tilted about base x; identify (30 s Fourier) and --validate (20 s, "
          "another Fourier run); floor = default gravity (baseline), --gravity = the true vector")
    for robot in robots:
        gains = nominal_drive_gains(robot)
        gain_text = ",".join(f"{g:g}" for g in gains)
        for tilt in tilts:
            angle = np.radians(tilt)
            gravity = 9.81 * np.array([0.0, np.sin(angle), -np.cos(angle)])
            truth = replace(perturbed_truth(robot, seed=31, relative=0.1), gravity_m_s2=gravity)
            noise = 0.01 * np.asarray(load_robot(robot).torque_limit_nm, float) / 10  # 0.1 % of the rating
            train = write_ur_csv(root / f"{robot}_{tilt:g}_train.csv",
                                 synthetic_ur_recording(truth, gains, duration_s=30.0, seed=7, torque_noise_nm=noise))
            check = write_ur_csv(root / f"{robot}_{tilt:g}_check.csv",
                                 synthetic_ur_recording(truth, gains, duration_s=20.0, seed=8, torque_noise_nm=noise))
            for label, extra in (("floor", []), ("--gravity", ["--gravity", ",".join(f"{v:.5f}" for v in gravity)])):
                out = root / f"{robot}_{tilt:g}_{label.strip('-')}"
                err = io.StringIO()
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                    code = rdi(["identify", "--data", str(train), "--robot", robot, "--out", str(out), "--quiet",
                                "--no-plots",
                                "--drive-gains", gain_text, "--validate", str(check), *extra])
                if code not in (0, 3):
                    print(f"  {robot} tilt {tilt:4.0f}° {label:9s}: exit {code} (refused: "
                          f"{err.getvalue().strip().splitlines()[-1]})")
                    continue
                summary = json.loads((out / "summary.json").read_text())
                checks = json.loads((out / "metrics.json").read_text()).get("data_checks", {})
                found, ratio = checks.get("gravity_angle_deg"), checks.get("gravity_residual_ratio")
                print(f"  {robot} tilt {tilt:4.0f}° {label:9s}: exit {code}; check: gravity "
                      f"{'not seen' if found is None else f'{found:.1f}° from the assumed, ratio {ratio:.2f}'}; "
                      "validation fit % "
                      f"[{_row(summary['validation_fit_percent'], '.1f')}], moving RRE % "
                      f"[{_row(summary['validation_moving_rre_percent'], '.2f')}]", flush=True)


def payload_part(robots: list[str]) -> None:
    print("part 1b: a tool on the flange (point mass at (0.05, 0, 0.12) m in the last link's frame), the check's "
          "angle to the true gravity")
    for robot in robots:
        rated = load_robot(robot).description.payload_kg
        for tilt in (0.0, 30.0):
            angle = np.radians(tilt)
            gravity = 9.81 * np.array([0.0, np.sin(angle), -np.cos(angle)])
            for fraction in (0.0, 0.5, 1.0):
                kg = fraction * rated
                truth = perturbed_truth(robot, seed=41, relative=0.1)
                mass, com = truth.link_mass_kg.copy(), truth.link_com_m.copy()
                com[-1] = (mass[-1] * com[-1] + kg * np.array([0.05, 0.0, 0.12])) / (mass[-1] + kg)
                mass[-1] += kg
                truth = replace(truth, link_mass_kg=mass, link_com_m=com, gravity_m_s2=gravity)
                r = synthetic_ur_recording(truth, nominal_drive_gains(robot), duration_s=20.0, seed=3)
                d = preprocess(r.time_s, r.q_rad, r.effort_nm, qd_rad_s=r.qd_rad_s)
                found = gravity_direction(load_robot(robot), d.q_rad, d.qd_rad_s, d.qdd_rad_s2, d.torque)
                error = float(np.degrees(np.arccos(np.clip(found @ gravity / 9.81, -1.0, 1.0))))
                print(f"  {robot} tilt {tilt:4.0f}° tool {kg:5.2f} kg: found {error:.2f}° from the true gravity",
                      flush=True)


def plant_part(robot: str, seeds: list[int], cache: str | None) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_identification_real_friction import simulate, subsample_jittered

    from robot_dynamics_id.sim.truth import make_truth

    print(f"part 2: floor-mounted {robot} plant with friction 'real' (truth seeds {seeds}); the check's angle where "
          f"the truth is 0 and the residual ratio (warning above {MOUNT_ANGLE_WARN_DEG:g}° with a ratio of at least "
          f"{MOUNT_RESIDUAL_RATIO_WARN:g}), torque = current x true gains")
    rm = load_robot(robot)
    angles = []
    for seed in seeds:
        gains = make_truth(robot, seed, friction="real").drive_gains_nm_per_a
        runs = simulate(robot, seed, train_s=30.0, validation_s=40.0, cache=cache)
        for name, recording in runs.items():
            for rate, r in (("500 Hz", recording), ("100 Hz uneven", subsample_jittered(recording, 5, seed))):
                d = preprocess(r.time_s, r.q_rad, r.current_a * gains, qd_rad_s=r.qd_rad_s)
                warnings, scale = check_torque_fits_robot(rm, d.q_rad, d.qd_rad_s, d.qdd_rad_s2, d.torque,
                                                          source="current", drive_gains_nm_per_a=gains)
                angles.append(scale.gravity_angle_deg)
                print(f"  seed {seed} {name:5s} {rate:13s}: {scale.gravity_angle_deg:.2f}°, residual ratio "
                      f"{scale.gravity_residual_ratio:.3f}, {len(warnings)} warning(s)", flush=True)
    print(f"  angle over {len(angles)} recordings: median {np.median(angles):.2f}°, max {np.max(angles):.2f}°")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", default="ur3,ur10e")
    parser.add_argument("--tilts", default="0,5,15,30,90", help="mount tilts about base x, degrees")
    parser.add_argument("--plant-seeds", default="1001,1002,1003", help="empty: skip part 2")
    parser.add_argument("--plant-robot", default="ur3")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="keep/reuse the plant runs here (bench_identification_real_friction.py's cache)")
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        synthetic_part(args.robots.split(","), [float(t) for t in args.tilts.split(",")], Path(tmp))
    payload_part(args.robots.split(","))
    if args.plant_seeds:
        plant_part(args.plant_robot, [int(s) for s in args.plant_seeds.split(",")], args.cache)
    print(f"{time.perf_counter() - started:.0f} s; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
