"""identifier: identify the dynamics from a recorded bag (or ur_rtde CSV), write the report, exit.

A ROS wrapper around :func:`robot_dynamics_id.identification.job.run_identify`
(the same job as ``rdi identify``, same options) so the offline step can be part
of a launch file. It publishes its result on ``~/result`` (std_msgs/String,
JSON: status, model path, per-joint fit, physical consistency, warnings) and
exits with

* 0: the model was written and is plausible;
* 1: refused or failed (nothing written; the log names the fix);
* 2: a parameter is wrong (nothing done);
* 3: the model was written but is doubtful (a fit far below zero; see
  ``problems`` in the result and metrics.json);
* 6: cancelled (Ctrl-C, SIGTERM): no output folder is left that looks complete
  (the job writes into a hidden staging folder that is renamed at the end).

With ``payload_model_file`` set it identifies the payload mounted during the
recording instead (the job of ``rdi payload``, with that arm model and the same
data options) and writes ``out_dir/payload.yaml``; it exits 0, 1, 2 and 6 as
above and 3 when the mass or centre of mass is doubtful.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..identification.job import EXIT_DOUBTFUL, JOINT_STATES_EFFORT, METHODS, TORQUE_SOURCES
from ..identification.metrics import MOVING_THRESHOLD_RAD_S
from ..identification.torque_source import TORQUE_SOURCE_RULE
from ..parameters import ParameterError, ParameterSpec, check_choice, check_positive
from ._identifier_words import as_node_parameters
from ._ros_params import declare_parameters
from ._run import EXIT_CANCELLED, run_node

__all__ = ["EXIT_CANCELLED", "IDENTIFIER_PARAMETERS", "IdentifierNode", "main"]

IDENTIFIER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("data_path", "string", "", "rosbag2 bag directory (or .mcap/.db3) or ur_rtde CSV to identify from"),
    ParameterSpec("robot", "string", "ur3", "ur3, ur3e, ur5, ur5e, ur10, ur10e, ur16e or the path of a URDF file"),
    ParameterSpec("tool_frame", "string", "tool0", "last frame of a URDF robot"),
    ParameterSpec("gravity_m_s2", "double_array", [0.0, 0.0, -9.81],
                  "gravitational acceleration in the robot's base frame (the mount; floor: 0, 0, -9.81; UR's "
                  "installation holds the opposite vector)", "m/s²"),
    ParameterSpec("out_dir", "string", "identification",
                  "output folder (new, empty or an earlier result): model.yaml, model.urdf, metrics.json, "
                  "predictions.csv, PNG plots"),
    ParameterSpec("torque_source", "string", "auto", "auto | current | effort | target_moment; " + TORQUE_SOURCE_RULE),
    ParameterSpec("drive_gains_nm_per_a", "double_array", [], "joint torque per motor current (empty: unknown)",
                  "Nm/A"),
    ParameterSpec("drive_gains_file", "string", "",
                  "the JSON `rdi drive-gains --out` wrote (a doubtful one is refused); empty: drive_gains_nm_per_a"),
    ParameterSpec("method", "string", "consistent", "consistent (physically consistent) | wls | ols | irls"),
    ParameterSpec("friction_model", "string", "auto",
                  "joint friction: auto (per joint the family with the lowest held-out error on the training data) "
                  "| the terms of every joint (p2, p2+load, p2+poly, p2+presliding, ...) | one such spec per joint, "
                  "comma-separated"),
    ParameterSpec("presliding_distance_rad", "double_array", [],
                  "Dahl presliding distance of the joints whose friction has presliding: one value for all or one "
                  "per joint (empty: searched per joint in 0.2-10 mrad)", "rad"),
    ParameterSpec("ur_driver_topics", "bool", False,
                  "the bag comes from the official UR driver (JointState.effort = motor current, checked from the data: "
                  "gravity-compensated effort of new firmware is refused)"),
    ParameterSpec("joint_states_effort", "string", "",
                  "what JointState.effort holds, stated: torque | current (skips the data check of "
                  "ur_driver_topics) | current_as_torque (UR's gravity-compensated, never used as torque) | ignore "
                  "(empty: torque, or with ur_driver_topics motor current checked from the data)"),
    ParameterSpec("joint_states_topic", "string", "", "joint states topic (empty: /joint_states)"),
    ParameterSpec("motor_currents_topic", "string", "", "motor currents topic, JointState effort in A "
                                                        "(empty: /motor_currents)"),
    ParameterSpec("target_currents_topic", "string", "", "UR's target currents topic (empty: /target_currents)"),
    ParameterSpec("target_moment_topic", "string", "", "UR's target moment topic (empty: /target_moment)"),
    ParameterSpec("nan_policy", "string", "raise", "samples with NaN/inf: raise (refuse the data) | drop (reported)"),
    ParameterSpec("skip_robot_check", "bool", False,
                  "report, but do not refuse, torques that do not fit the robot's nominal model"),
    ParameterSpec("compare_ur_model", "bool", False,
                  "also score UR's own model (target_current x gains, else target_moment): moving-sample RRE"),
    ParameterSpec("moving_threshold_rad_s", "double", MOVING_THRESHOLD_RAD_S,
                  "a joint moves above this speed (moving-sample RRE)", "rad/s"),
    ParameterSpec("validation_data_path", "string", "", "optional second recording to score the model on"),
    ParameterSpec("compare_baseline", "bool", False,
                  "also fit plain least squares (rigid body + viscous, Coulomb, offset) on data_path and score it "
                  "beside the model on validation_data_path (needed): moving-sample RRE"),
    ParameterSpec("payload_model_file", "string", "",
                  "arm model (model.yaml, identified without the payload): identify the payload mounted during "
                  "data_path instead of the arm, writing out_dir/payload.yaml (empty: identify the arm)"),
)

_LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _friction_model(text: str) -> str:
    from ..identification.job import check_friction_model

    try:
        return check_friction_model(text)
    except ValueError as exc:
        raise ParameterError(f"parameter 'friction_model': {exc}") from None


def _presliding(values) -> list[float] | None:
    from ..dynamics.friction import check_presliding_distances

    values = list(values or [])
    if not values:
        return None
    try:  # the joint count is checked by the job, which knows the robot
        check_presliding_distances(values, len(values), what="parameter 'presliding_distance_rad'")
    except ValueError as exc:
        raise ParameterError(str(exc)) from None
    return values


def _gravity(values) -> list[float]:
    from ..robots.model import check_gravity

    try:
        return check_gravity(list(values), what="parameter 'gravity_m_s2'").tolist()
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def _drive_gains(p: dict) -> list[float] | None:
    from ..identification.drive_gain_job import load_gains_file

    listed = list(p["drive_gains_nm_per_a"] or []) or None
    if not p["drive_gains_file"]:
        return listed
    if listed is not None:
        raise ParameterError("parameters 'drive_gains_file' and 'drive_gains_nm_per_a' are both set: give one")
    try:
        return load_gains_file(p["drive_gains_file"], what="parameter 'drive_gains_file'", robot=p["robot"] or None)
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def job_arguments(p: dict) -> dict:
    """The run_identify keyword arguments of validated node parameters (raises ParameterError)."""
    from ..identification.job import ReadOptions

    if not p["data_path"]:
        raise ParameterError("parameter 'data_path' is empty: give the bag (or CSV) to identify from")
    for name in ("data_path", "validation_data_path", "payload_model_file"):
        if p.get(name) and not Path(p[name]).expanduser().exists():
            raise ParameterError(f"parameter '{name}': {p[name]} does not exist (a bag directory, a ur_rtde CSV"
                                 + (", or the arm's model.yaml" if name == "payload_model_file" else "") + ")")
    topics = {name: p[f"{name}_topic"] for name in ("joint_states", "motor_currents", "target_currents",
                                                    "target_moment") if p[f"{name}_topic"]}
    effort = p["joint_states_effort"] or None
    if effort is not None:
        check_choice("joint_states_effort", effort, tuple(JOINT_STATES_EFFORT))
    try:
        read = ReadOptions(ur_driver_topics=bool(p["ur_driver_topics"]), joint_states_effort=effort, topics=topics,
                           nan_policy=check_choice("nan_policy", p["nan_policy"], ("raise", "drop")))
    except ValueError as exc:
        raise ParameterError(str(exc).replace("--topic ", "topic parameter ")) from None
    return dict(
        data_path=p["data_path"], robot=p["robot"], out_dir=p["out_dir"], tool_frame=p["tool_frame"] or "tool0",
        torque_source=check_choice("torque_source", p["torque_source"], TORQUE_SOURCES),
        drive_gains_nm_per_a=_drive_gains(p),
        method=check_choice("method", p["method"], METHODS),
        friction_model=_friction_model(p["friction_model"]),
        presliding_distance_rad=_presliding(p["presliding_distance_rad"]),
        read=read, skip_robot_check=bool(p["skip_robot_check"]), compare_ur_model=bool(p["compare_ur_model"]),
        moving_threshold_rad_s=check_positive("moving_threshold_rad_s", p["moving_threshold_rad_s"], allow_zero=True),
        validation_path=p["validation_data_path"] or None,
        gravity_m_s2=_gravity(p["gravity_m_s2"]),
        compare_baseline=_compare_baseline(p),
    )


def _compare_baseline(p: dict) -> bool:
    if p["compare_baseline"] and not p["validation_data_path"]:
        raise ParameterError("parameter 'compare_baseline' scores the baseline on held-out data: set "
                             "'validation_data_path' to a second recording")
    return bool(p["compare_baseline"])


class IdentifierNode(Node):
    """Runs one identification job, then ends the process (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("identifier")
        p = declare_parameters(self, IDENTIFIER_PARAMETERS)
        self._job = job_arguments(p)
        self._payload_model = p["payload_model_file"]
        self._cancel = threading.Event()
        self._result_pub = self.create_publisher(String, "~/result", _LATCHED)
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, name="identification", daemon=True)
        self._thread.start()
        what = (f"the payload of {p['data_path']} with the arm model {self._payload_model} -> "
                f"{p['out_dir']}/payload.yaml" if self._payload_model else
                f"{p['data_path']} for {p['robot']} -> {p['out_dir']}")
        self.get_logger().info(f"identifying {what}")

    def _run(self) -> None:
        from ..identification.job import JobCancelled, run_identify
        from ..progress import stage_logger

        if self._payload_model:
            self._run_payload()
            return
        try:
            summary = run_identify(progress=stage_logger(self.get_logger().info, "identify", silenced_by=self._cancel),
                                   cancel=self._cancel, **self._job)
        except JobCancelled as exc:
            self.get_logger().warning(f"identification cancelled: {exc}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "status": "cancelled"})))
            self.exit_code = EXIT_CANCELLED
            return
        except Exception as exc:  # noqa: BLE001 - any failure must end the node (exit 1), never leave it spinning
            known = isinstance(exc, (ValueError, OSError, RuntimeError))
            text = as_node_parameters(str(exc)) if known else f"{type(exc).__name__}: {exc} (a bug: please report it)"
            self.get_logger().error(f"identification failed: {text}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "status": "failed", "error": text})))
            self.exit_code = 1
            return
        fits = ", ".join(f"{v:.1f}" for v in summary["fit_percent"])
        for key in ("warnings", "problems"):  # in the words of this node's parameters (the result too)
            summary[key] = [as_node_parameters(text) for text in summary[key]]
        for warning in summary["warnings"]:
            self.get_logger().warning(warning)
        self.get_logger().info(f"model written to {summary['model']}; fit per joint (%): {fits}; physically "
                               f"consistent: {'yes' if summary['physically_consistent'] else 'NO'}")
        ok = summary["status"] == "ok"
        for problem in summary["problems"]:
            self.get_logger().error(f"DOUBTFUL RESULT: {problem}")
        self._result_pub.publish(String(data=json.dumps({"ok": ok, **summary})))
        self.exit_code = 0 if ok else EXIT_DOUBTFUL

    def _run_payload(self) -> None:
        from ..identification.job import JobCancelled
        from ..identification.payload_job import is_doubtful, run_payload

        job = self._job
        try:
            Path(job["out_dir"]).mkdir(parents=True, exist_ok=True)
            # robot: refused when it is not the arm model's (the payload is what that model does not explain)
            estimate, path = run_payload(self._payload_model, job["data_path"],
                                         out_path=Path(job["out_dir"]) / "payload.yaml",
                                         torque_source=job["torque_source"],
                                         drive_gains_nm_per_a=job["drive_gains_nm_per_a"], robot=job["robot"],
                                         read=job["read"], cancel=self._cancel)
        except JobCancelled as exc:
            self.get_logger().warning(f"payload identification cancelled: {exc}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "status": "cancelled"})))
            self.exit_code = EXIT_CANCELLED
            return
        except Exception as exc:  # noqa: BLE001 - any failure must end the node (exit 1), never leave it spinning
            known = isinstance(exc, (ValueError, OSError, RuntimeError))
            text = as_node_parameters(str(exc)) if known else f"{type(exc).__name__}: {exc} (a bug: please report it)"
            self.get_logger().error(f"payload identification failed: {text}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "status": "failed", "error": text})))
            self.exit_code = 1
            return
        warnings = [as_node_parameters(text) for text in estimate.warnings]
        for warning in warnings:
            self.get_logger().warning(warning)
        self.get_logger().info(f"payload written to {path}: {estimate.mass_kg:.3f} kg, CoM "
                               f"{[round(v, 4) for v in estimate.com_m.tolist()]} m in {estimate.frame}")
        doubtful = is_doubtful(estimate)
        self._result_pub.publish(String(data=json.dumps({"ok": not doubtful,
                                                         "status": "doubtful" if doubtful else "ok",
                                                         "payload": str(path),
                                                         "mass_kg": estimate.mass_kg,
                                                         "com_m": estimate.com_m.tolist(),
                                                         "warnings": warnings})))
        self.exit_code = EXIT_DOUBTFUL if doubtful else 0

    @property
    def done(self) -> bool:
        """The job has ended (run_node then exits with :attr:`exit_code`)."""
        return self.exit_code is not None

    def begin_stop(self) -> None:
        """Ctrl-C/SIGTERM: ask the job to stop at its next check; it then leaves nothing behind."""
        if self.exit_code is None:
            self.get_logger().warning("stop requested: cancelling the identification")
        self._cancel.set()

    def stop_finished(self) -> bool:
        return not self._thread.is_alive()

    def shutdown(self) -> None:
        """A job still running when the process ends is cancelled: its staging folder is removed."""
        if self.exit_code is None:
            from ..identification.output_dir import discard_staging

            self._cancel.set()
            discard_staging(self._job["out_dir"])
            self.exit_code = EXIT_CANCELLED


def main(args=None) -> int:
    return run_node(IdentifierNode, args, name="identifier")


if __name__ == "__main__":
    sys.exit(main())
