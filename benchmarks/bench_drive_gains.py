"""Benchmark: drive gains from a known payload, with and without the load-dependent friction term (issue 15).

Per truth seed (never used in the tests) the simulated arm (sim/plant.py) runs one optimised Fourier
excitation twice: without and with a known payload at the flange (``--payload-kg`` at ``--payload-com``).
Plants: ``friction real`` (load-dependent Coulomb, concave viscous law, presliding: sim/truth.py), whose
joints rub harder with the payload on, and ``p2`` (seeds.md P2 eq. 11 + offset), whose do not. Each pair is
identified (identification/drive_gains.py ``identify_drive_gains_from_recordings``) by

* ours (the default): per joint, the friction family and shape constants the identifier selects on the run
  without the payload, and a Coulomb term that grows with the load, mu |tau_rigid| sign(qd);
* baseline: P2 friction columns (seeds.md P2 eq. 11 + offset) without the load term, the model before these
  two (``friction_model="p2"``, ``load_friction=False``), measured in the same run;

with the correct inputs and with three mistakes a lab makes: the payload's CoM x half its value, the loaded
run from another arm (the next truth seed), and ``--robot`` one size off (ur5e kinematics on a UR3's runs).
Printed per case: the worst joint's gain error against the truth (%), the worst joint's lack of fit
(``DriveGainEstimate.lack_of_fit``) and what ``rdi drive-gains`` makes of it (ok / warning / doubtful:
identification/drive_gain_job.py's bars). Wanted: correct inputs ok with a small error on both plants, every
mistake doubtful.

    .venv/bin/python benchmarks/bench_drive_gains.py [--seeds 1001,1002,1003] [--cache DIR]
"""

from __future__ import annotations

import os

# One BLAS thread: on a shared 2-core machine threaded BLAS on small matrices is much slower.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import pickle  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from robot_dynamics_id.identification.drive_gain_job import (  # noqa: E402
    DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL,
    DRIVE_GAIN_LACK_OF_FIT_WARN,
)
from robot_dynamics_id.identification.drive_gains import identify_drive_gains_from_recordings  # noqa: E402
from robot_dynamics_id.identification.pipeline import IdentificationOptions  # noqa: E402
from robot_dynamics_id.robots.model import load_robot  # noqa: E402
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation  # noqa: E402
from robot_dynamics_id.sim.experiment import run_experiment  # noqa: E402
from robot_dynamics_id.sim.truth import make_truth  # noqa: E402

ROBOT, WRONG_ROBOT = "ur3", "ur5e"


def simulate(seed: int, friction: str, *, duration_s: float, payload_kg: float, com_m: list[float],
             cache: str | None) -> dict:
    """Recordings of truth ``seed``: 'empty', 'loaded', and 'other' (the loaded run of truth seed + 1)."""
    path = None if cache is None else (Path(cache) / f"drive_{ROBOT}_{seed}_{friction}_{duration_s:g}_{payload_kg:g}_"
                                                      f"{'_'.join(f'{c:g}' for c in com_m)}.pkl")
    if path is not None and path.is_file():
        return pickle.loads(path.read_bytes())
    trajectory = planned_fourier_excitation(ROBOT, duration_s=duration_s, seed=seed)
    truths = {s: make_truth(ROBOT, s, friction=friction) for s in (seed, seed + 1)}
    runs = {"gains": truths[seed].drive_gains_nm_per_a}
    for name, truth_seed, kg in (("empty", seed, 0.0), ("loaded", seed, payload_kg), ("other", seed + 1, payload_kg)):
        runs[name] = run_experiment(trajectory, robot=ROBOT, truth=truths[truth_seed], noise_seed=seed + len(runs),
                                    payload_kg=kg, payload_com_m=com_m).recording
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(runs))
    return runs


def verdict(lack: np.ndarray) -> str:
    worst = float(np.max(lack))
    return "doubtful" if worst > DRIVE_GAIN_LACK_OF_FIT_DOUBTFUL else "warning" if worst > DRIVE_GAIN_LACK_OF_FIT_WARN \
        else "ok"


def run_case(runs: dict, case: str, *, payload_kg: float, com_m: list[float], ours: bool) -> dict:
    robot, loaded, com = ROBOT, runs["loaded"], list(com_m)
    if case == "CoM x half":
        com[0] *= 0.5
    elif case == "other arm":
        loaded = runs["other"]
    elif case == "robot off":
        robot = WRONG_ROBOT
    clock = time.perf_counter()
    est = identify_drive_gains_from_recordings(load_robot(robot), runs["empty"], loaded, payload_mass_kg=payload_kg,
                                               payload_com_m=com, load_friction=ours,
                                               options=None if ours else IdentificationOptions(friction_model="p2"))
    error = 100 * (est.gains_nm_per_a / runs["gains"] - 1)
    return {"error": error, "lack": est.lack_of_fit, "verdict": verdict(est.lack_of_fit),
            "mu": est.load_coefficient, "seconds": time.perf_counter() - clock}


CASES = ("correct", "CoM x half", "other arm", "robot off")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="1001,1002,1003", help="truth seeds (never used in the tests)")
    parser.add_argument("--frictions", default="real,p2", help="plant friction models: real, p2")
    parser.add_argument("--duration", type=float, default=30.0, help="each run, s (default 30)")
    parser.add_argument("--payload-kg", type=float, default=2.4)
    parser.add_argument("--payload-com", default="0.1,0.05,0.05", help="m in tool0 (default 0.1,0.05,0.05)")
    parser.add_argument("--cache", default=None, metavar="DIR",
                        help="keep the simulated runs in DIR and reuse them (the simulation is most of the time)")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    seeds = [int(s) for s in args.seeds.split(",")]
    com = [float(v) for v in args.payload_com.split(",")]
    started = time.perf_counter()
    table: dict[tuple[str, str, bool], list[dict]] = {}
    for friction in args.frictions.split(","):
        for seed in seeds:
            clock = time.perf_counter()
            runs = simulate(seed, friction, duration_s=args.duration, payload_kg=args.payload_kg, com_m=com,
                            cache=args.cache)
            print(f"\n=== {ROBOT}, truth seed {seed}, friction {friction!r} (runs ready in "
                  f"{time.perf_counter() - clock:.0f} s) ===")
            for case in CASES:
                for ours in (False, True):
                    r = run_case(runs, case, payload_kg=args.payload_kg, com_m=com, ours=ours)
                    table.setdefault((friction, case, ours), []).append(r)
                    mu = "" if r["mu"] is None else f" mu {np.round(r['mu'], 3).tolist()}"
                    print(f"  {case:<11} {'ours    ' if ours else 'baseline'} gain error % "
                          f"{np.round(r['error'], 2).tolist()}, lack of fit {np.round(r['lack'], 2).tolist()} -> "
                          f"{r['verdict']}{mu} ({r['seconds']:.1f} s)")
    print(f"\n=== over truth seeds {seeds} ({time.perf_counter() - started:.0f} s in all); worst joint per seed, "
          "median [max] over seeds ===")
    passed = True
    for (friction, case, ours), rows in table.items():
        error = [float(np.max(np.abs(r["error"]))) for r in rows]
        lack = [float(np.max(r["lack"])) for r in rows]
        verdicts = [r["verdict"] for r in rows]
        want = "ok" if case == "correct" else "doubtful"
        ok = all(v == want for v in verdicts)
        if ours:
            passed &= ok
        print(f"{friction:>4} {case:<11} {'ours    ' if ours else 'baseline'} gain error % "
              f"{np.median(error):6.2f} [{max(error):6.2f}]  lack of fit {np.median(lack):6.2f} [{max(lack):6.2f}]  "
              f"{'/'.join(verdicts)} (want {want}: {'yes' if ok else 'NO'})")
    print(f"\nours: correct inputs ok and every mistake doubtful on every seed: {'PASS' if passed else 'FAIL'}")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
