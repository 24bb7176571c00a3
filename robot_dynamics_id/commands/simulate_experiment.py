"""``rdi simulate-experiment``: the identification experiment on the simulated arm, without ROS.

Runs the simulated UR (sim/plant.py) under an excitation as fast as the computer
allows, through the same closed loop as ``launch/experiment.launch.py`` (the
excitation node's streamer, ur_interface's safety guard), and writes

* ``--out BAG``: a rosbag2 bag with the topics and message types the torque logger
  records (/joint_states with effort = current x configured drive gain,
  /motor_currents, /target_moment, the base-frame wrench, the velocity commands,
  /excitation/progress);
* ``--truth-out TRUTH.yaml``: the plant's true model in the identifier's model-file
  schema, for scoring an identification;
* ``--csv OUT.csv`` (optional): the same run as an ur_rtde ``startFileRecording`` CSV.

``--known-payload-kg M --known-payload-out BAG2`` runs the same excitation a second
time on the same truth with a known payload at the flange (the data for
drive-gain identification); the payload spec is stored in both bags' metadata
(``custom_data.known_payload_experiment``, JSON: role, payload, other bag).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

COMMAND = "simulate-experiment"
#: below this a CSV's Nyquist frequency is at the identifier's automatic cut-off (a few Hz): nothing to identify
MIN_CSV_RATE_HZ = 10.0
HELP = "run the identification experiment on the simulated arm (no ROS) and write a bag + the true model"

_GENERATED = ("prbs", "fourier")


def _vector3(text: str) -> tuple[float, float, float]:
    try:
        values = tuple(float(v) for v in text.replace(" ", "").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected x,y,z in metres, e.g. 0,0,0.05; got {text!r}") from None
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected 3 comma-separated values x,y,z (m), got {text!r}")
    return values  # type: ignore[return-value]


def _gains(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.replace(" ", "").split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated drive gains in Nm/A, got {text!r}") from None


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="ur3",
                        help="simulated arm: ur3, ur3e, ur5, ur5e, ur10, ur10e or ur16e (default ur3)")
    parser.add_argument("--truth-seed", type=int, default=0,
                        help="seed of the plant's perturbed true parameters (sim/truth.make_truth); "
                             "-1: the nominal model (default 0)")
    parser.add_argument("--excitation", required=True, metavar="FILE|prbs|fourier",
                        help="an excitation YAML file (rdi excite plan), 'prbs' (the P3 PRBS + sinusoid schedule, "
                             "seeded) or 'fourier' (planned now by the excitation optimiser, fast setting, seeded)")
    parser.add_argument("--duration", type=float, default=None, metavar="S",
                        help="excitation length for prbs/fourier, s (default 60); a file fixes its own")
    parser.add_argument("--seed", type=int, default=0, help="seed of a generated excitation (default 0)")
    parser.add_argument("--friction", choices=("p2", "real", "measured"), default="p2",
                        help="the plant's joint friction: p2 (seeds.md P2 eq. 11 + offset; default), real "
                             "(+ load-dependent Coulomb, concave viscous law, presliding: what real UR joints show; "
                             "sim/truth.py), or measured (a UR5e controller's own joint friction calibration, "
                             "load-dependent, two presliding elements: a law outside the identifier's model "
                             "families, sim/measured_friction.py; TRUTH.yaml then has no friction and names the law "
                             "in provenance.joint_friction)")
    parser.add_argument("--noise-seed", type=int, default=0,
                        help="seed of the measurement noise (the known-payload run uses seed + 1; default 0)")
    parser.add_argument("--out", required=True, metavar="BAG", help="bag directory to create (must not exist)")
    parser.add_argument("--truth-out", required=True, metavar="TRUTH.yaml",
                        help="where to write the true model (its true drive gains included: drive_gains_nm_per_a, "
                             "Nm/A; provenance.simulated_runs: each run's bag, payload and noise seed)")
    parser.add_argument("--rate", type=float, default=500.0, help="controller rate, Hz (500 e-Series, 125 CB3)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap", help="bag storage (default mcap)")
    parser.add_argument("--payload-kg", type=float, default=0.0, help="payload at the flange, kg (default 0)")
    parser.add_argument("--payload-com", type=_vector3, default=(0.0, 0.0, 0.0), metavar="X,Y,Z",
                        help="payload centre of mass in the tool0 frame, m (default 0,0,0)")
    parser.add_argument("--drive-gains", type=_gains, default=None, metavar="G1,...,G6",
                        help="drive gains ur_interface is configured with (joint_states effort = current x gain), "
                             "Nm/A (default: the robot's assumed nominal ones, robots/priors.py; ur3: 10,10,8,6,6,6). "
                             "The simulated arm's true gains differ from them per truth seed, as a real arm's do: "
                             "TRUTH.yaml holds them (drive_gains_nm_per_a)")
    parser.add_argument("--csv", default=None, metavar="OUT.csv",
                        help="also write the run as an ur_rtde startFileRecording CSV")
    parser.add_argument("--csv-rate", type=float, default=None, metavar="HZ",
                        help="rate of the CSVs, Hz, as a recording made with ur_rtde's RTDEReceiveInterface(ip, HZ) "
                             "holds it: every (--rate / HZ)-th controller sample; must divide --rate (default: "
                             "--rate). The bags keep every sample")
    parser.add_argument("--known-payload-kg", type=float, default=None, metavar="M",
                        help="also run the excitation again with this known payload (kg) for drive-gain "
                             "identification; needs --known-payload-out")
    parser.add_argument("--known-payload-com", type=_vector3, default=(0.0, 0.0, 0.0), metavar="X,Y,Z",
                        help="CoM of the known payload in the tool0 frame, m (default 0,0,0)")
    parser.add_argument("--known-payload-out", default=None, metavar="BAG2",
                        help="bag of the run with the known payload (must not exist)")
    parser.add_argument("--known-payload-csv", default=None, metavar="OUT2.csv",
                        help="CSV of the run with the known payload")
    parser.add_argument("--save-excitation", default=None, metavar="FILE",
                        help="save the generated prbs/fourier excitation (to replay it on the robot)")
    parser.add_argument("--fourier-iterations", type=int, default=30,
                        help="SLSQP iterations when planning a fourier excitation (default 30: fast)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _check_new(path: str | None, option: str, what: str = "a bag") -> Path | None:
    if path is None:
        return None
    p = Path(path)
    if p.exists():
        raise ValueError(f"{option} {p} exists already; {what} is never overwritten: choose a new path")
    return p


def _validate(args: argparse.Namespace):
    """Check every argument before anything slow runs; returns (robot model, excitation source)."""
    from ..robots.description import get_robot
    from ..robots.model import load_robot

    get_robot(args.robot)  # ValueError naming the known robots
    robot = load_robot(args.robot)
    if args.duration is not None and not args.duration > 0:
        raise ValueError(f"--duration must be > 0 s, got {args.duration}")
    if not args.rate > 0:
        raise ValueError(f"--rate must be > 0 Hz, got {args.rate}")
    if args.payload_kg < 0:
        raise ValueError(f"--payload-kg must be >= 0, got {args.payload_kg}")
    rated = robot.description.payload_kg
    for option, mass in (("--payload-kg", args.payload_kg), ("--known-payload-kg", args.known_payload_kg)):
        if mass is not None and mass > rated:
            raise ValueError(f"{option} {mass:g} kg exceeds the {robot.description.name}'s rated payload {rated:g} kg")
    if args.drive_gains is not None and (len(args.drive_gains) != robot.n_joints or min(args.drive_gains) <= 0):
        raise ValueError(f"--drive-gains needs {robot.n_joints} positive values in Nm/A, got {list(args.drive_gains)}")
    if args.csv_rate is not None:
        factor = args.rate / args.csv_rate if args.csv_rate > 0 else 0.0
        if not (args.csv_rate > 0 and factor >= 1.0 - 1e-9 and abs(factor - round(factor)) < 1e-6):
            raise ValueError(f"--csv-rate must divide the controller rate --rate {args.rate:g} Hz (e.g. "
                             f"{args.rate / 5:g} for every 5th sample), got {args.csv_rate:g}")
        if args.csv_rate < MIN_CSV_RATE_HZ:
            raise ValueError(f"--csv-rate {args.csv_rate:g} Hz: a recording below {MIN_CSV_RATE_HZ:g} Hz cannot hold "
                             "the motion the identifier filters (it passes a few Hz; the samples must resolve it): "
                             f"use {MIN_CSV_RATE_HZ:g} Hz or more (ur_rtde recordings are typically 100-500 Hz)")
        if args.csv is None and args.known_payload_csv is None:
            raise ValueError("--csv-rate sets the rate of the CSV: give --csv OUT.csv (or --known-payload-csv) too")
    if args.truth_seed < -1:
        raise ValueError(f"--truth-seed must be >= 0 (or -1 for the nominal model), got {args.truth_seed}")
    if args.fourier_iterations < 1:
        raise ValueError("--fourier-iterations must be >= 1")
    source = args.excitation
    if source not in _GENERATED:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"--excitation {source}: no such file; give an excitation YAML "
                                    "(rdi excite plan --out FILE) or 'prbs' or 'fourier'")
        if args.duration is not None:
            raise ValueError("--duration applies to generated excitations (prbs, fourier); the file "
                             f"{source} fixes its own duration: leave --duration out")
    out = _check_new(args.out, "--out")
    if Path(args.truth_out).is_dir():
        raise ValueError(f"--truth-out {args.truth_out} is a directory; give a file name such as truth.yaml")
    _check_new(args.truth_out, "--truth-out", "a recorded run's true model")
    _check_new(args.csv, "--csv", "a recording")
    known = args.known_payload_kg is not None
    if known:
        if not args.known_payload_kg > 0:
            raise ValueError(f"--known-payload-kg must be > 0, got {args.known_payload_kg}")
        if args.known_payload_out is None:
            raise ValueError("--known-payload-kg needs --known-payload-out BAG2 for the run with the payload")
        if args.payload_kg > 0:
            raise ValueError("--payload-kg and --known-payload-kg cannot be combined: the known-payload "
                             "experiment compares a run without payload to one with the known payload")
        second = _check_new(args.known_payload_out, "--known-payload-out")
        _check_new(args.known_payload_csv, "--known-payload-csv", "a recording")
        if second is not None and out is not None and second.resolve() == out.resolve():
            raise ValueError("--known-payload-out must differ from --out")
    elif args.known_payload_out is not None or args.known_payload_csv is not None:
        raise ValueError("--known-payload-out/--known-payload-csv need --known-payload-kg")
    return robot, source


def _excitation(args: argparse.Namespace, robot, source: str, say):
    from ..excitation.trajectory_file import load_trajectory, save_trajectory
    from ..sim.excitation_presets import paper_prbs_excitation, planned_fourier_excitation

    duration = 60.0 if args.duration is None else float(args.duration)
    if source == "prbs":
        trajectory = paper_prbs_excitation(robot, duration_s=duration, seed=args.seed, rate_hz=args.rate)
    elif source == "fourier":
        say(f"planning a {duration:g} s Fourier excitation (seed {args.seed}, {args.fourier_iterations} iterations)")
        started = time.perf_counter()
        trajectory = planned_fourier_excitation(robot, duration_s=duration, seed=args.seed, rate_hz=args.rate,
                                                max_iterations=args.fourier_iterations)
        say(f"planned in {time.perf_counter() - started:.1f} s, condition number "
            f"{trajectory.metadata.get('condition_number', float('nan')):.2f}")
    else:
        trajectory = load_trajectory(source)
    if args.save_excitation:
        if source not in _GENERATED:
            raise ValueError("--save-excitation is for generated excitations (prbs, fourier)")
        save_trajectory(trajectory, args.save_excitation)
    return trajectory


def run(args: argparse.Namespace) -> int:
    import json
    from dataclasses import replace

    from ..io.ur_csv import write_ur_csv
    from ..progress import ProgressReporter
    from ..sim.experiment import PayloadSpec, resolve_truth, run_experiment
    from ..sim.experiment_bag import write_experiment_bag

    def say(text: str) -> None:
        if not args.quiet:
            print(f"simulate-experiment: {text}", file=sys.stderr, flush=True)

    robot, source = _validate(args)
    trajectory = _excitation(args, robot, source, say)
    name = robot.description.name
    truth_seed = None if args.truth_seed < 0 else args.truth_seed
    measured = args.friction == "measured"
    truth = resolve_truth(name, None, truth_seed, friction="p2" if measured else args.friction)
    if measured:
        # the plant's joints follow the law (each run its own, it holds a presliding state); the truth file says so
        from ..dynamics.friction import FrictionParameters
        from ..sim.measured_friction import measured_friction

        law = measured_friction(name, truth_seed)
        truth = replace(truth, friction=FrictionParameters.zeros(truth.n_joints),
                        provenance={**(truth.provenance or {}), "friction": "measured",
                                    "joint_friction": law.summary()})

    runs = [("run", args.out, args.csv, args.payload_kg, args.payload_com, args.noise_seed, {})]
    if args.known_payload_kg is not None:
        # Both bags name the payload and each other, so the pair can be found again for drive-gain identification.
        payload = PayloadSpec.point_mass(args.known_payload_kg, args.known_payload_com).to_dict()
        runs[0][-1]["known_payload_experiment"] = json.dumps(
            {"role": "without_payload", "payload": payload, "other_bag": str(args.known_payload_out)})
        runs.append(("run with known payload", args.known_payload_out, args.known_payload_csv,
                     args.known_payload_kg, args.known_payload_com, args.noise_seed + 1,
                     {"known_payload_experiment": json.dumps(
                         {"role": "with_payload", "payload": payload, "other_bag": str(args.out)})}))
    say(f"{trajectory.kind} excitation of {trajectory.duration_s:g} s on the simulated {name} at {args.rate:g} Hz, "
        f"truth {'nominal' if truth_seed is None else f'seed {truth_seed}'}, friction {args.friction}")
    csv_every = 1 if args.csv_rate is None else int(round(args.rate / args.csv_rate))
    results = []
    for label, out, csv, payload_kg, payload_com, noise_seed, extra in runs:
        # The simulation reports (robot time, fraction); the reporter draws a bar on a terminal, lines in a log.
        with ProgressReporter(f"simulate-experiment: {label}") as bar:
            result = run_experiment(trajectory, robot=name, truth=truth, noise_seed=noise_seed, rate_hz=args.rate,
                                    payload_kg=payload_kg, payload_com_m=payload_com,
                                    configured_drive_gains_nm_per_a=args.drive_gains,
                                    joint_friction=measured_friction(name, truth_seed) if measured else None,
                                    on_progress=None if args.quiet else (lambda t_s, f, bar=bar: bar(f, "simulate")))
        if truth_seed is not None:
            result = replace(result, truth_seed=truth_seed)
        started = time.perf_counter()
        write_experiment_bag(out, result, storage=args.storage, extra_metadata=extra)
        bag_s = time.perf_counter() - started
        if csv:
            Path(csv).parent.mkdir(parents=True, exist_ok=True)
            write_ur_csv(csv, result.recording.select(slice(None, None, csv_every)))
        results.append(result)
        print(f"{label}: {result.describe()}")
        print(f"  bag {out} ({args.storage}, written in {bag_s:.2f} s)"
              + (f", CSV {csv} ({args.rate / csv_every:g} Hz)" if csv else ""))
    # what was simulated with this truth, so a later estimate (rdi payload, drive gains) can be compared with it
    simulated = [{"bag": str(Path(out).resolve()), "csv": str(Path(csv).resolve()) if csv else None,
                  "payload_kg": float(payload_kg), "payload_com_m": [float(v) for v in payload_com],
                  "csv_rate_hz": float(args.rate / csv_every) if csv else None,
                  "noise_seed": int(noise_seed)} for _, out, csv, payload_kg, payload_com, noise_seed, _ in runs]
    replace(truth, provenance={**(truth.provenance or {}), "simulated_runs": simulated,
                               "rate_hz": float(args.rate)}).save(args.truth_out)
    print(f"true model: {args.truth_out}")
    if args.known_payload_kg is not None:
        spec = results[1].payload
        print(f"known payload: {spec.mass_kg:g} kg, CoM {[float(v) for v in spec.com_m]} m in tool0 "
              "(both bags' custom_data 'known_payload_experiment')")
    return 0
