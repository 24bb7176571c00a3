"""``rdi identify``: identify a physically consistent dynamic model (with friction) from a bag or CSV."""

from __future__ import annotations

import argparse
import sys

COMMAND = "identify"
HELP = "identify the dynamics from a rosbag2 bag or a ur_rtde CSV; writes DIR/model.yaml and a report"

EXIT_CODES = ("exit codes: 0 result written and plausible; 1 refused (nothing written; the message names the fix); "
              "3 result written but doubtful (a training fit below zero or a validation fit far below it, link "
              "masses no payload explains, the data's gravity far from the model's, or torques that fit another "
              "UR's nominal model: see metrics.json 'problems'); 130 interrupted "
              "(Ctrl-C) or 143 terminated (SIGTERM), nothing written")


def parse_numbers(text: str | None, option: str, example: str) -> list[float] | None:
    """'10.0,10.7,...' -> list of floats, or None; ValueError naming ``option`` and showing ``example``."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise ValueError(f"{option} {text!r}: give comma-separated numbers, {example}") from None
    return values


def parse_gains(text: str | None, robot: str | None = None):
    """'10.0,10.7,...' or the JSON file ``rdi drive-gains --out`` wrote -> list of floats (Nm/A), or None.
    A file calibrated on another arm than ``robot`` (when given) is refused."""
    if text is not None and text.strip().lower().endswith(".json"):
        from ..identification.drive_gain_job import load_gains_file

        return load_gains_file(text.strip(), robot=robot)
    return parse_numbers(text, "--drive-gains", "in Nm/A, e.g. 10,10,8,6,6,6")


def parse_topics(items: list[str] | None) -> dict[str, str]:
    """['motor_currents=/x', ...] -> {'motor_currents': '/x'}."""
    out: dict[str, str] = {}
    for item in items or ():
        field, sep, topic = item.partition("=")
        if not sep or not field or not topic:
            raise ValueError(f"--topic {item!r}: write FIELD=TOPIC, e.g. motor_currents=/ur/motor_currents")
        out[field.strip()] = topic.strip()
    return out


def add_data_arguments(parser: argparse.ArgumentParser, *, validate: bool = False, checks: bool = True,
                       torque_help: str | None = None, gains_help: str | None = None) -> None:
    """Options shared by identify, validate and payload: torque source, gains, how to read the data, and (with
    ``checks``) the robot checks and scoring options of identify and validate. ``torque_help``: another help
    text for --torque-source (a command whose 'auto' means something else); ``gains_help``: appended to
    --drive-gains' help."""
    from ..identification.job import JOINT_STATES_EFFORT, TOPIC_FIELDS, TORQUE_SOURCES, VALIDATE_TORQUE_SOURCES
    from ..identification.metrics import MOVING_THRESHOLD_RAD_S
    from ..identification.torque_source import TORQUE_SOURCE_RULE

    parser.add_argument("--drive-gains", metavar="K0,...,K5|FILE.json",
                        help="joint torque per motor current, Nm/A, one per joint, or the JSON `rdi drive-gains --out` "
                             "wrote (a doubtful one is refused)" + ("; default: the model's" if validate else "")
                             + (gains_help or ""))
    if validate:
        parser.add_argument("--torque-source", default="model", choices=VALIDATE_TORQUE_SOURCES,
                            help="default 'model': the source (and gains) the model was identified from, as "
                                 f"model.yaml records it; the others as in rdi identify ({TORQUE_SOURCE_RULE})")
    else:
        parser.add_argument("--torque-source", default="auto", choices=TORQUE_SOURCES,
                            help=torque_help or TORQUE_SOURCE_RULE)
    parser.add_argument("--ur-driver-topics", action="store_true",
                        help="the bag was recorded from the official UR ROS 2 driver: JointState.effort is read as "
                             "motor current and checked from the data (refused when it is the gravity-compensated "
                             "torque of new firmware) unless --joint-states-effort states what it holds")
    parser.add_argument("--joint-states-effort", choices=tuple(JOINT_STATES_EFFORT),
                        help="what JointState.effort in the bag holds, stated (no data check): torque (a torque "
                             "interface, e.g. our ur_interface; the default for our bags), current (A; the UR "
                             "driver's with use_currents_as_efforts: true), current_as_torque (UR's "
                             "gravity-compensated value: the UR driver on new firmware; never used as torque) or "
                             "ignore")
    parser.add_argument("--topic", action="append", metavar="FIELD=TOPIC",
                        help=f"read FIELD from another topic (repeatable); FIELD: {', '.join(TOPIC_FIELDS)}")
    parser.add_argument("--nan-policy", default="raise", choices=("raise", "drop"),
                        help="samples with NaN/inf: refuse the data (default) or drop them (each drop reported)")
    if not checks:
        return
    parser.add_argument("--tool-frame", default=None if validate else "tool0",
                        help="last frame of a URDF robot (default tool0" + (", or the model's" if validate else "")
                             + ")")
    parser.add_argument("--skip-robot-check", action="store_true",
                        help="report, but do not refuse, torques that do not fit the robot's nominal model (an arm "
                             "that really differs from it)")
    parser.add_argument("--compare-ur-model", action="store_true",
                        help="also score UR's own model (target_current x gains, else target_moment) against the "
                             "same measured torque: moving-sample RRE of both per joint")
    parser.add_argument("--moving-threshold", type=float, default=MOVING_THRESHOLD_RAD_S, metavar="RAD_S",
                        help=f"a joint moves above this speed, rad/s (moving-sample RRE; default "
                             f"{MOVING_THRESHOLD_RAD_S})")


def read_options(args: argparse.Namespace):
    """The :class:`~robot_dynamics_id.identification.job.ReadOptions` of the parsed data arguments."""
    from ..identification.job import ReadOptions

    threshold = getattr(args, "moving_threshold", 0.0)
    if not threshold >= 0:
        raise ValueError(f"--moving-threshold {threshold}: give a speed >= 0 rad/s")
    return ReadOptions(ur_driver_topics=args.ur_driver_topics, joint_states_effort=args.joint_states_effort,
                       topics=parse_topics(args.topic), nan_policy=args.nan_policy)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EXIT_CODES
    parser.add_argument("--data", required=True, help="rosbag2 bag directory (or .mcap/.db3) or ur_rtde CSV file")
    parser.add_argument("--robot", default="ur3", help="ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e (default ur3); the "
                                                       "data are checked against its nominal model")
    parser.add_argument("--urdf", help="a URDF file to use instead of a built-in robot")
    parser.add_argument("--gravity", metavar="GX,GY,GZ",
                        help="gravitational acceleration in the robot's base frame, m/s² (default 0,0,-9.81: a "
                             "floor or table mount). A tilted, wall or ceiling mount needs it: the data are checked "
                             "against it and model.yaml records it. UR's installation (Mounting) holds the opposite "
                             "vector: negate it")
    parser.add_argument("--out", required=True,
                        help="output folder (model.yaml, model.urdf, metrics.json, predictions.csv, plots); must be "
                             "new, empty or an earlier rdi result (replaced only when the new one is complete)")
    parser.add_argument("--method", default="consistent", choices=("consistent", "wls", "ols", "irls"),
                        help="estimator (default: physically consistent; the others give base parameters and a "
                             "per-link model that may not be physical)")
    parser.add_argument("--friction-model", default="auto", metavar="auto|TERMS",
                        help="joint friction: auto (default: per joint the family with the lowest held-out error "
                             "on the training data), or the terms for every joint: p2, p2+load, p2+poly, "
                             "p2+presliding, ... (any of load, poly, presliding after p2), or one such spec per "
                             "joint separated by commas")
    parser.add_argument("--presliding-distance", metavar="RAD[,RAD...]",
                        help="Dahl presliding distance of the joints whose friction has presliding, rad: one value "
                             "for all or one per joint (e.g. 0.001 = 1 mrad; default: searched per joint in "
                             "0.2-10 mrad)")
    parser.add_argument("--validate", metavar="DATA", help="also score the model on another recording")
    parser.add_argument("--compare-baseline", action="store_true",
                        help="also fit plain least squares (rigid-body regressor + per-joint viscous, Coulomb, "
                             "offset; unconstrained) on the training data and score it beside the model on the "
                             "--validate recording, both low-passed at 10 Hz: moving-sample RRE of both per joint; "
                             "a joint where it predicts better is a warning")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress on stderr (a bar on a terminal, one line per stage otherwise)")
    add_data_arguments(parser)


def format_rre(values) -> str:
    """Per-joint moving-sample RRE (%) for a line of output: 'not moving' where a joint has no moving sample
    (a held joint: its RRE is undefined, NaN in metrics.json)."""
    return ", ".join("not moving" if v is None or v != v else f"{v:.2f}" for v in values)


def print_ur_comparison(metrics: dict, label: str, key: str = "ur_model", name: str = "UR's model",
                        short: str = "UR") -> None:
    """One line: moving-sample RRE of ours and of the other model (``key`` in ``metrics``: UR's model, or the
    plain least-squares baseline) per joint, and their ratio."""
    other = metrics.get(key)
    if not other:
        return
    ours, theirs = format_rre(metrics["moving_rre_percent"]), format_rre(other["moving_rre_percent"])
    ratio = format_rre(metrics[f"moving_rre_ratio_to_{key}"])
    print(f"{label}: moving-sample RRE per joint (%): ours {ours}; {name} {theirs}; ours/{short} {ratio}")


def report_doubtful(result: dict, command: str) -> bool:
    """A job result's ``warnings`` and, when its ``status`` is not ok, its ``problems`` on stderr; True when
    the result is doubtful (the command then exits EXIT_DOUBTFUL)."""
    for w in result["warnings"]:
        print(f"warning: {w}", file=sys.stderr)
    if result["status"] == "ok":
        return False
    for p in result["problems"]:
        print(f"rdi {command}: DOUBTFUL RESULT: {p}", file=sys.stderr)
    return True


def run(args: argparse.Namespace) -> int:
    from ..identification.job import EXIT_DOUBTFUL, run_identify
    from ..progress import ProgressReporter
    from ..robots.model import gravity_from_text

    with ProgressReporter("identify") as bar:
        summary = run_identify(args.data, robot=args.urdf or args.robot, out_dir=args.out,
                               torque_source=args.torque_source,
                               drive_gains_nm_per_a=parse_gains(args.drive_gains, args.urdf or args.robot),
                               method=args.method, validation_path=args.validate,
                               progress=None if args.quiet else bar, plots=not args.no_plots,
                               read=read_options(args), tool_frame=args.tool_frame,
                               skip_robot_check=args.skip_robot_check, compare_ur_model=args.compare_ur_model,
                               moving_threshold_rad_s=args.moving_threshold,
                               friction_model=args.friction_model,
                               gravity_m_s2=None if args.gravity is None else gravity_from_text(args.gravity),
                               compare_baseline=args.compare_baseline,
                               presliding_distance_rad=parse_numbers(args.presliding_distance, "--presliding-distance",
                                                                     "in rad, e.g. 0.001"))
    print(f"model: {summary['model']}")
    print(f"torque: {summary['torque_source']}")
    print("gravity in the base frame (m/s²): " + ", ".join(f"{g:.4g}" for g in summary["gravity_m_s2"]))
    gains = summary["drive_gains_nm_per_a"]
    print("drive gains in model.yaml: " + (", ".join(f"{g:.4g}" for g in gains) + " Nm/A" if gains is not None else
                                           "none (not given; a controller estimating force from currents needs them)"))
    print(f"scored against the torque low-passed at {summary['cutoff_hz']:.3g} Hz (fit: 100 % predicts it exactly, "
          "0 % no better than its mean; RRE: error / torque)")
    print("fit per joint (%): " + ", ".join(f"{v:.1f}" for v in summary["fit_percent"]))
    print("moving-sample RRE per joint (%): " + format_rre(summary["moving_rre_percent"]))
    print("RMS error per joint (Nm): " + ", ".join(f"{v:.3f}" for v in summary["rms_nm"]))
    if summary["validation_fit_percent"] is not None:
        print("validation fit per joint (%): " + ", ".join(f"{v:.1f}" for v in summary["validation_fit_percent"]))
        print("validation moving-sample RRE per joint (%): " + format_rre(summary["validation_moving_rre_percent"]))
        print("validation RMS error per joint (Nm): " + ", ".join(f"{v:.3f}" for v in summary["validation_rms_nm"]))
        at_model = summary.get("validation_at_model_cutoff")
        if at_model and at_model["cutoff_hz"] != summary["cutoff_hz"]:
            print(f"validation fit per joint at the model's own {at_model['cutoff_hz']:.3g} Hz cut-off (%): "
                  + ", ".join(f"{v:.1f}" for v in at_model["fit_percent"]))
    for label, metrics in (summary.get("ur_model_comparison") or {}).items():
        print_ur_comparison(metrics, label)
    baseline = summary.get("baseline_comparison")
    if baseline:
        print_ur_comparison(baseline["validation"], f"validation at {baseline['cutoff_hz']:g} Hz", "baseline",
                            "plain least squares", "LS")
    print(f"friction per joint: {', '.join(summary['friction_terms'])}")
    print(f"physically consistent: {'yes' if summary['physically_consistent'] else 'NO'} "
          f"(links {summary['physically_consistent_links']})")
    print(f"identification {summary['identify_s']:.1f} s (reading {summary['read_s']:.1f} s)")
    return EXIT_DOUBTFUL if report_doubtful(summary, "identify") else 0
