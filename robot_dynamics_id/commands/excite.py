"""``rdi excite``: plan an excitation trajectory (``plan``) or validate a trajectory file (``check``).

    rdi excite plan --robot ur3 --kind fourier --duration 60 --seed 0 --out excitation.yaml
    rdi excite plan --robot ur3 --kind prbs --duration 60 --out prbs.yaml
    rdi excite plan --robot ur3 --kind payload --out payload_excitation.yaml
    rdi excite plan --robot ur3 --kind point-to-point --duration 40 --seed 1 --out ptp.yaml
    rdi excite check excitation.yaml --robot ur3

``plan --kind prbs`` builds the schedule of seeds.md P3 (one joint PRBS, the
others sinusoids, joints in turn); ``plan --kind fourier`` optimises a Fourier
excitation for the condition number of the base regressor (excitation/optimise.py);
``plan --kind payload`` a short wrist-only motion for ``rdi payload`` (excitation/payload.py);
``plan --kind point-to-point`` a validation run with stops (excitation/point_to_point.py): random
waypoints, rest-to-rest moves and holds, the motion a lab's own programs make, for
``rdi validate`` / ``rdi identify --validate`` (not for identification: it is not optimised and its
condition number is printed, not judged). All are checked before they are written. ``check`` refuses a file that breaks
a joint limit, the table keep-out or does not start/end at rest, or is sampled
below 50 Hz, naming the first violation, and exits with status 1. Both judge the
base regressor's condition number of a plan for identification as ``rdi identify``
will judge the recording: a warning above 300, exit 3 above 1000 (a payload plan
prints its payload regressor's, a point-to-point validation run its own, unjudged). ``plan --out`` never replaces a file that
is not an earlier trajectory file (a bag, a model).
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np

from ..progress import ProgressReporter

COMMAND = "excite"
KINDS = ("fourier", "prbs", "payload", "point-to-point")
#: per-kind defaults of the options several kinds share (None on the command line: "the kind's default");
#: point-to-point: PointToPointSettings' fractions of the limits and waypoint box (excitation/point_to_point.py)
KIND_DEFAULTS = {"velocity_scale": {"point-to-point": 0.3}, "acceleration_scale": {"point-to-point": 0.2},
                 "position_range": {"point-to-point": 0.8}}
SHARED_DEFAULTS = {"velocity_scale": 0.5, "acceleration_scale": 0.5, "position_range": np.pi / 2}
HELP = ("plan an excitation trajectory (PRBS schedule, optimised Fourier, payload wrist motion, point-to-point "
        "validation run) or check a file")


def configure(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    plan = sub.add_parser("plan", help="generate (and for fourier: optimise) an excitation and save it as YAML",
                          description="Generate an excitation trajectory, check it and save it as YAML.")
    plan.add_argument("--robot", default="ur3",
                      help="ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or a URDF path (default ur3)")
    plan.add_argument("--kind", choices=KINDS, default="fourier",
                      help="fourier: optimised Fourier series; prbs: the PRBS + sinusoid schedule of P3; payload: "
                           "a short optimised wrist motion (arm still) for payload identification (rdi payload); "
                           "point-to-point: a validation run of rest-to-rest moves with stops (rdi validate)")
    plan.add_argument("--duration", type=float, default=None,
                      help="duration, s (default 60; payload: 20; point-to-point: 40)")
    plan.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    plan.add_argument("--out", required=True,
                      help="output YAML file (a folder: FOLDER/excitation.yaml); an existing file is replaced only "
                           "when it is an earlier trajectory file")
    plan.add_argument("--table-height", type=float, default=0.05,
                      help="keep every joint origin and the tool frame above this height, m (default 0.05); "
                           "include link radius and tool length in the margin")
    plan.add_argument("--no-table", action="store_true", help="disable the table keep-out")
    plan.add_argument("--safety-factor", type=float, default=1.0,
                      help="scale all robot limits by this factor (0..1] for the check (default 1)")
    plan.add_argument("--rate", type=float, default=None, help="sample rate, Hz (default: the robot's rate)")
    plan.add_argument("--include-samples", action="store_true",
                      help="also write the samples (default: parameters only; samples are regenerated on load)")
    fourier = plan.add_argument_group("fourier, payload and point-to-point")
    fourier.add_argument("--velocity-scale", type=float, default=None,
                         help="fraction of the robot's velocity limits the optimiser (point-to-point: every move) "
                              "may use (default 0.5; point-to-point: 0.3)")
    fourier.add_argument("--acceleration-scale", type=float, default=None,
                         help="fraction of the robot's acceleration limits the optimiser (point-to-point: every "
                              "move) may use (default 0.5; point-to-point: 0.2)")
    fourier.add_argument("--period", type=float, default=10.0,
                         help="Fourier period, s; must divide --duration (default 10)")
    fourier.add_argument("--harmonics", type=int, default=None, help="number of harmonics (default 5; payload: 4)")
    fourier.add_argument("--position-range", type=float, default=None,
                         help="each joint stays within the centre (UR home) pose ± this, rad (default pi/2); "
                              "payload: each wrist joint; point-to-point: the waypoints' box about --pose "
                              "(default 0.8)")
    fourier.add_argument("--pose", default=None, metavar="Q1,...,Q6",
                         help="payload: the arm pose the wrist moves about, rad (default 0,-pi/2,pi/2,-pi/2,-pi/2,0: "
                              "forearm horizontal); point-to-point: the centre of the waypoints (default "
                              "0,-1.57,1,-1,1,0: upper arm raised, elbow bent)")
    fourier.add_argument("--starts", type=int, default=2, help="random starts of the optimiser (default 2)")
    fourier.add_argument("--max-iterations", type=int, default=120, help="SLSQP iterations per start (default 120)")
    prbs = plan.add_argument_group("prbs")
    prbs.add_argument("--prbs-velocity", type=float, default=0.5, help="PRBS level, rad/s (default 0.5, P3)")
    prbs.add_argument("--prbs-acceleration", type=float, default=7.5,
                      help="acceleration of the PRBS switches, rad/s^2 (default 7.5, P3)")
    prbs.add_argument("--prbs-register-bits", type=int, default=6, help="LFSR length m, 2^m-1 bits (default 6)")
    prbs.add_argument("--prbs-clock", type=float, default=None,
                      help="PRBS clock, s (default: one full sequence per joint turn)")
    prbs.add_argument("--amplitude", type=float, default=0.5, help="sinusoid amplitude of the other joints, rad")

    check = sub.add_parser("check", help="validate a trajectory file against a robot's limits",
                           description="Validate a trajectory file; exit 1 naming the first violation.")
    check.add_argument("file", help="trajectory YAML (planned by `rdi excite plan` or a user's samples file)")
    check.add_argument("--robot", default=None, help="robot to check against (default: the file's robot)")
    check.add_argument("--table-height", type=float, default=0.05, help="table keep-out height, m (default 0.05)")
    check.add_argument("--no-table", action="store_true", help="disable the table keep-out")
    check.add_argument("--safety-factor", type=float, default=1.0, help="scale all robot limits (default 1)")
    check.add_argument("--velocity-scale", type=float, default=1.0, help="further scale velocity limits (default 1)")
    check.add_argument("--acceleration-scale", type=float, default=1.0,
                       help="further scale acceleration limits (default 1)")
    check.add_argument("--no-rest", action="store_true", help="do not require the start and end at rest")


def _condition_number(robot, trajectory) -> float:
    from ..excitation._blas import single_threaded_blas
    from ..excitation.optimise import excitation_condition_number

    with single_threaded_blas():
        return excitation_condition_number(robot, trajectory)


def _condition_verdict(cond: float) -> int:
    """Judge the base regressor's condition number as ``rdi identify`` will judge the recording (excitation_checks):
    a warning above CONDITION_WARN, exit 3 above CONDITION_DOUBTFUL. Returns the exit code."""
    from ..identification.excitation_checks import CONDITION_DOUBTFUL, CONDITION_WARN

    if cond <= CONDITION_WARN:
        return 0
    advice = "plan a longer or optimised excitation (--kind fourier, --duration 60)"
    if cond > CONDITION_DOUBTFUL:
        print(f"rdi excite: DOUBTFUL: condition number {cond:.4g} above {CONDITION_DOUBTFUL:g}: rdi identify calls "
              f"a recording of this motion doubtful (exit 3); {advice}", file=sys.stderr)
        return 3
    print(f"warning: condition number {cond:.4g} above {CONDITION_WARN:g}: rdi identify warns that such data "
          f"determine the model poorly; {advice}", file=sys.stderr)
    return 0


def _is_trajectory_file(path) -> bool:
    import yaml

    try:
        return str((yaml.safe_load(path.read_text()) or {}).get("schema", "")).startswith(
            "robot_dynamics_id/excitation/")
    except (OSError, yaml.YAMLError, AttributeError, UnicodeDecodeError):
        return False


def _checked_out(out: str):
    """--out checked before planning: never a bag, a model or another file that is not an earlier plan."""
    from ..identification.output_dir import check_output_file

    return check_output_file(out, default_name="excitation.yaml", earlier_result=_is_trajectory_file,
                             what="trajectory file (rdi excite plan)")


def _plan_rate(args: argparse.Namespace, robot) -> float:
    from ..excitation.checker import MIN_RATE_HZ
    from ..excitation.optimise import robot_rate_hz

    rate = robot_rate_hz(robot) if args.rate is None else float(args.rate)
    if not rate >= MIN_RATE_HZ:
        raise ValueError(f"--rate {args.rate:g}: plan at the robot's rate (125 Hz CB3, 500 Hz e-Series), at least "
                         f"{MIN_RATE_HZ:g} Hz (between sparser samples a trajectory controller leaves the limits)")
    if rate > robot_rate_hz(robot):
        print(f"note: --rate {rate:g} Hz is above the {robot.name}'s controller rate ({robot_rate_hz(robot):g} Hz, "
              "RTDE): a real arm takes the samples at its own rate (the simulated one may run faster)",
              file=sys.stderr)
    return rate


#: longer plans are a unit slip (ms for s): identification needs minutes, not hours, and the optimiser's time grows
MAX_PLAN_DURATION_S = 3600.0


def _upright_height_m(robot) -> float:
    """Height of the tool frame with the arm pointing straight up (the UR zero pose with the shoulder at -pi/2)."""
    q = np.zeros(robot.n_joints)
    if robot.n_joints > 1:
        q[1] = -np.pi / 2
    return float(robot.tool_poses(q)[1][0, 2])


def _unit_problem(args: argparse.Namespace, robot) -> str | None:
    """The first plan option whose value only makes sense in another unit (degrees for rad, mm for m), or None.

    Each of these values would otherwise fail later with a message about a consequence (no feasible start, the PRBS
    clock) instead of the unit. Bounds: a joint turns at most one turn either way; the PRBS level is a joint speed.
    """
    turn = 2 * np.pi
    if args.duration is not None and not 0 < args.duration <= MAX_PLAN_DURATION_S:
        return (f"--duration {args.duration:g}: the excitation's length in s, at most {MAX_PLAN_DURATION_S:g} "
                f"({args.duration:g} ms is {args.duration / 1000:.4g} s)")
    if not 0 < args.position_range <= turn:
        return (f"--position-range {args.position_range:g}: a range about the centre pose in rad, at most one turn "
                f"(2*pi); {args.position_range:g} degrees is {np.radians(args.position_range):.4g} rad")
    if args.pose is not None:
        try:
            pose = np.array([float(v) for v in args.pose.replace(" ", "").split(",")])
        except ValueError:
            return f"--pose {args.pose!r}: give {robot.n_joints} comma-separated joint angles in rad"
        if pose.size != robot.n_joints:
            return f"--pose {args.pose!r}: {pose.size} values for {robot.n_joints} joints, in rad"
        beyond = np.flatnonzero(np.abs(pose) > robot.position_limit_rad)
        if beyond.size:
            j = int(beyond[0])
            return (f"--pose: {robot.joint_names[j]} {pose[j]:g} is beyond its limit "
                    f"±{robot.position_limit_rad[j]:.4g} rad; the unit is rad (in degrees, this pose is "
                    f"--pose {','.join(f'{v:.4g}' for v in np.radians(pose))})")
    slowest = float(np.min(robot.velocity_limit_rad_s))
    if args.kind == "prbs" and args.prbs_velocity > slowest:
        return (f"--prbs-velocity {args.prbs_velocity:g} rad/s is above the slowest joint's limit {slowest:.4g} rad/s "
                f"({robot.name}); the unit is rad/s ({args.prbs_velocity:g} deg/s is "
                f"{np.radians(args.prbs_velocity):.4g} rad/s)")
    if args.kind == "prbs" and not 0 < args.amplitude <= np.pi:
        return (f"--amplitude {args.amplitude:g}: a sinusoid amplitude in rad, at most pi; {args.amplitude:g} "
                f"degrees is {np.radians(args.amplitude):.4g} rad")
    return _table_problem(args, robot)


def _table_problem(args: argparse.Namespace, robot) -> str | None:
    # (negative: a table below the base, an arm on a pedestal; but not farther than the arm reaches)
    if args.no_table or abs(args.table_height) < _upright_height_m(robot):
        return None
    return (f"--table-height {args.table_height:g} m is {'above' if args.table_height > 0 else 'below'} the "
            f"{robot.name}'s reach ({_upright_height_m(robot):.3g} m, the tool held straight up); the unit is m "
            f"({args.table_height:g} mm is {args.table_height / 1000:.4g} m; no table: --no-table)")


def _plan(args: argparse.Namespace) -> int:
    from ..excitation.checker import ExcitationLimits, check_trajectory
    from ..excitation.optimise import FourierOptimisationSettings, optimise_fourier_excitation
    from ..excitation.prbs import PrbsSinusoidSchedule, UR_HOME_POSITION_RAD
    from ..excitation.trajectory_file import save_trajectory
    from ..robots import load_robot

    robot = load_robot(args.robot)
    _fill_kind_defaults(args)
    problem = _unit_problem(args, robot)
    if problem:
        raise ValueError(problem)
    rate = _plan_rate(args, robot)
    args.out = _checked_out(args.out)
    table = None if args.no_table else args.table_height
    if args.kind == "payload":
        return _plan_payload(args, robot, rate, table)
    if args.kind == "point-to-point":
        return _plan_point_to_point(args, robot, rate, table)
    duration = 60.0 if args.duration is None else args.duration
    harmonics = 5 if args.harmonics is None else args.harmonics
    if args.pose is not None:
        raise ValueError(f"--pose is for --kind payload or point-to-point; the {args.kind} excitation centres on "
                         "the UR home pose")
    if args.kind == "fourier":
        settings = FourierOptimisationSettings(
            duration_s=duration, period_s=args.period, n_harmonics=harmonics,
            velocity_scale=args.velocity_scale, acceleration_scale=args.acceleration_scale,
            safety_factor=args.safety_factor, table_height_m=table, position_range_rad=args.position_range,
            n_starts=args.starts, max_iterations=args.max_iterations, seed=args.seed)
        print(f"optimising a Fourier excitation for {robot.name} ({settings.n_periods} x {settings.period_s:g} s, "
              f"{settings.n_harmonics} harmonics, {settings.n_starts} starts) ...", flush=True)
        with ProgressReporter("optimise", sys.stdout) as bar:
            result = optimise_fourier_excitation(robot, settings, progress=bar)
        trajectory = result.to_trajectory(rate_hz=rate)
        limits = result.limits
        print(f"optimised in {result.wall_time_s:.1f} s ({result.n_cost_evaluations} cost evaluations)")
    else:
        if robot.n_joints != 6:
            raise ValueError("the PRBS schedule's default start pose is the UR home pose; use a 6-joint robot")
        schedule = PrbsSinusoidSchedule(
            duration_s=duration, start_position_rad=UR_HOME_POSITION_RAD, prbs_velocity_rad_s=args.prbs_velocity,
            prbs_acceleration_rad_s2=args.prbs_acceleration, prbs_register_bits=args.prbs_register_bits,
            prbs_clock_s=args.prbs_clock, sinusoid_amplitude_rad=args.amplitude, seed=args.seed)
        trajectory = schedule.to_trajectory(rate_hz=rate, joint_names=robot.joint_names, robot=robot.name)
        limits = ExcitationLimits.from_robot(robot, safety_factor=args.safety_factor, table_height_m=table)
        trajectory.limits = limits.to_dict()
    report = check_trajectory(trajectory, robot, limits)
    cond = _condition_number(robot, trajectory)
    trajectory.metadata = dict(trajectory.metadata, seed=args.seed, condition_number_robot_rate=cond)
    path = save_trajectory(trajectory, args.out, include_samples=True if args.include_samples else None)
    print(f"checked: {report.summary()}")
    print(f"normalised condition number of the base regressor: {cond:.2f}")
    print(f"start pose (rad): {[round(v, 4) for v in trajectory.start_position_rad.tolist()]} -- move there at rest "
          "before streaming")
    print(f"wrote {path}")
    return _condition_verdict(cond)


def _fill_kind_defaults(args: argparse.Namespace) -> None:
    """Options several kinds share and left unset take the kind's default (KIND_DEFAULTS, else SHARED_DEFAULTS)."""
    for name, shared in SHARED_DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, KIND_DEFAULTS.get(name, {}).get(args.kind, shared))


def _pose(args: argparse.Namespace, robot, default) -> tuple[float, ...]:
    if args.pose is None:
        return tuple(default)
    try:
        return tuple(float(v) for v in args.pose.replace(" ", "").split(","))
    except ValueError:
        raise ValueError(f"--pose {args.pose!r}: give {robot.n_joints} comma-separated joint angles in rad") from None


#: PointToPointSettings' names in the library's messages -> the options of ``plan`` that set them
_POINT_TO_POINT_OPTIONS = (("duration_s", "--duration"), ("range_rad", "--position-range"),
                           ("centre_rad", "--pose"))


def _plan_point_to_point(args: argparse.Namespace, robot, rate: float, table) -> int:
    """A validation run (module doc): the condition number is printed for information, never judged."""
    from ..excitation.checker import ExcitationLimits, check_trajectory
    from ..excitation.point_to_point import DEFAULT_CENTRE_RAD, PointToPointSettings, point_to_point_trajectory
    from ..excitation.trajectory_file import save_trajectory

    for name in ("velocity_scale", "acceleration_scale"):
        if not 0 < getattr(args, name) <= 1:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(args, name):g}: a fraction of the robot's "
                             "limits, in (0, 1]")
    limits = ExcitationLimits.from_robot(robot, safety_factor=args.safety_factor, table_height_m=table)
    settings = PointToPointSettings(
        duration_s=40.0 if args.duration is None else args.duration,
        centre_rad=_pose(args, robot, DEFAULT_CENTRE_RAD[:robot.n_joints]), range_rad=args.position_range,
        velocity_fraction=args.velocity_scale, acceleration_fraction=args.acceleration_scale, seed=args.seed)
    try:
        trajectory = point_to_point_trajectory(robot, settings, rate_hz=rate, limits=limits)
    except ValueError as exc:  # the library names its settings; say the options that set them
        text = str(exc)
        for setting, option in _POINT_TO_POINT_OPTIONS:
            text = re.sub(rf"\b{setting}\b", option, text)
        raise ValueError(text) from None
    trajectory.limits = limits.to_dict()
    report = check_trajectory(trajectory, robot, limits)
    cond = _condition_number(robot, trajectory)
    trajectory.metadata = dict(trajectory.metadata, purpose="validation", condition_number_robot_rate=cond)
    path = save_trajectory(trajectory, args.out)
    print(f"checked: {report.summary()}")
    print(f"{trajectory.metadata['waypoints']} waypoints (and back to the start) in {trajectory.duration_s:.1f} s; normalised condition "
          f"number of the base regressor: {cond:.4g} (a validation run: score a model on it with rdi validate or "
          "rdi identify --validate; identify from a Fourier or PRBS run)")
    print(f"start pose (rad): {[round(v, 4) for v in trajectory.start_position_rad.tolist()]} -- move there at rest "
          "before streaming")
    print(f"wrote {path}")
    return 0


def _plan_payload(args: argparse.Namespace, robot, rate: float, table) -> int:
    from ..excitation.checker import ExcitationLimits, check_trajectory
    from ..excitation.payload import PAYLOAD_ARM_POSE_RAD, PayloadExcitationSettings, plan_payload_excitation
    from ..excitation.trajectory_file import save_trajectory

    pose = _pose(args, robot, PAYLOAD_ARM_POSE_RAD)
    settings = PayloadExcitationSettings(
        duration_s=20.0 if args.duration is None else args.duration, period_s=args.period,
        n_harmonics=4 if args.harmonics is None else args.harmonics, pose_rad=pose,
        wrist_range_rad=args.position_range, velocity_scale=args.velocity_scale,
        acceleration_scale=args.acceleration_scale, safety_factor=args.safety_factor, table_height_m=table,
        n_starts=args.starts, max_iterations=args.max_iterations, seed=args.seed)
    print(f"optimising a {settings.duration_s:g} s wrist excitation for payload identification on {robot.name} "
          f"({settings.n_starts} starts) ...", flush=True)
    with ProgressReporter("optimise", sys.stdout) as bar:
        trajectory = plan_payload_excitation(robot, settings, rate_hz=rate, progress=bar)
    limits = ExcitationLimits.from_dict(trajectory.limits)
    report = check_trajectory(trajectory, robot, limits)
    trajectory.metadata = dict(trajectory.metadata, seed=args.seed)
    path = save_trajectory(trajectory, args.out, include_samples=True if args.include_samples else None)
    print(f"checked: {report.summary()}")
    print(f"normalised condition number of the payload regressor: "
          f"{trajectory.metadata['payload_condition_number']:.2f}")
    print(f"start pose (rad): {[round(v, 4) for v in trajectory.start_position_rad.tolist()]} -- the arm stays there; "
          "only the wrist moves. Mount the payload, record, then: rdi payload --model MODEL --data BAG --out FILE")
    print(f"wrote {path}")
    return 0


def _check(args: argparse.Namespace) -> int:
    from ..excitation.checker import ExcitationLimits, TrajectoryLimitError, check_trajectory
    from ..excitation.trajectory_file import load_trajectory
    from ..robots import load_robot

    from pathlib import Path

    from ..robots.model import same_robot

    if Path(args.file).is_dir():
        raise ValueError(f"{args.file} is a folder: give the trajectory file (rdi excite plan --out FILE)")
    trajectory = load_trajectory(args.file)
    if args.robot and trajectory.robot and not same_robot(args.robot, trajectory.robot):
        print(f"warning: {args.file} was planned for {trajectory.robot}; checked against {args.robot}'s limits",
              file=sys.stderr)
    robot_name = args.robot or trajectory.robot
    if not robot_name:
        raise ValueError(f"{args.file} names no robot; pass --robot (e.g. --robot ur3)")
    robot = load_robot(robot_name)
    if _table_problem(args, robot):
        raise ValueError(_table_problem(args, robot))
    limits = ExcitationLimits.from_robot(robot, safety_factor=args.safety_factor, velocity_scale=args.velocity_scale,
                                         acceleration_scale=args.acceleration_scale,
                                         table_height_m=None if args.no_table else args.table_height)
    try:
        report = check_trajectory(trajectory, robot, limits, require_rest=not args.no_rest)
    except TrajectoryLimitError as exc:
        print(f"REFUSED {args.file} for {robot.name}: {exc}", file=sys.stderr)
        return 1
    print(f"OK {args.file} ({trajectory.kind}) for {robot.name}: {report.summary()}")
    if (trajectory.metadata or {}).get("purpose") == "payload identification":
        from ..excitation.payload import payload_condition_number

        cond = payload_condition_number(robot, trajectory.position_rad, trajectory.velocity_rad_s,
                                        trajectory.acceleration_rad_s2)
        print(f"normalised condition number of the payload regressor: {cond:.2f}")
        return 0
    cond = _condition_number(robot, trajectory)
    print(f"normalised condition number of the base regressor: {cond:.2f}")
    if (trajectory.metadata or {}).get("purpose") == "validation":
        print("a validation run (rdi excite plan --kind point-to-point): its condition number is not judged")
        return 0
    return _condition_verdict(cond)


def run(args: argparse.Namespace) -> int:
    if args.action == "plan":
        return _plan(args)
    return _check(args)
