"""identifier: identify the dynamics from a recorded bag (or ur_rtde CSV), write the report, exit.

A ROS wrapper around :func:`robot_dynamics_id.identification.job.run_identify`
(the same job as ``rdi identify``) so the offline step can be part of a launch
file. It publishes its result on ``~/result`` (std_msgs/String, JSON: model path,
per-joint fit, physical consistency) and exits 0, or logs the error (with the
fix) and exits 1.

With ``payload_model_file`` set it identifies the payload mounted during the
recording instead (the job of ``rdi payload``, with that arm model) and writes
``out_dir/payload.yaml``; it exits 3 when the mass or centre of mass is doubtful.
"""

from __future__ import annotations

import json
import sys
import threading

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

from ..parameters import ParameterError, ParameterSpec, check_choice
from ._ros_params import declare_parameters
from ._run import run_node

__all__ = ["IDENTIFIER_PARAMETERS", "IdentifierNode", "main"]

IDENTIFIER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("data_path", "string", "", "rosbag2 bag directory (or .mcap/.db3) or ur_rtde CSV to identify from"),
    ParameterSpec("robot", "string", "ur3", "ur3, ur3e, ur5e, ur10e or the path of a URDF file"),
    ParameterSpec("out_dir", "string", "identification",
                  "output folder: model.yaml, model.urdf, metrics.json, PNG plots"),
    ParameterSpec("torque_source", "string", "auto",
                  "auto | current (x drive gains) | target_moment | effort (a torque topic)"),
    ParameterSpec("drive_gains_nm_per_a", "double_array", [], "joint torque per motor current (torque_source current)",
                  "Nm/A"),
    ParameterSpec("method", "string", "consistent", "consistent (physically consistent) | wls | ols | irls"),
    ParameterSpec("ur_driver_topics", "bool", False,
                  "the bag comes from the official UR driver (JointState.effort = motor current)"),
    ParameterSpec("driver_effort", "string", "check",
                  "with ur_driver_topics: check (the data must show motor current, not the gravity-compensated "
                  "torque of new firmware) | current (the driver ran with use_currents_as_efforts: true)"),
    ParameterSpec("validation_data_path", "string", "", "optional second recording to score the model on"),
    ParameterSpec("payload_model_file", "string", "",
                  "arm model (model.yaml, identified without the payload): identify the payload mounted during "
                  "data_path instead of the arm, writing out_dir/payload.yaml (empty: identify the arm)"),
)

_LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)


class IdentifierNode(Node):
    """Runs one identification job, then ends the process (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__("identifier")
        p = declare_parameters(self, IDENTIFIER_PARAMETERS)
        if not p["data_path"]:
            raise ParameterError("parameter 'data_path' is empty: give the bag (or CSV) to identify from")
        self._job = dict(
            data_path=p["data_path"], robot=p["robot"], out_dir=p["out_dir"],
            torque_source=check_choice("torque_source", p["torque_source"],
                                       ("auto", "current", "target_moment", "effort")),
            drive_gains_nm_per_a=p["drive_gains_nm_per_a"] or None,
            method=check_choice("method", p["method"], ("consistent", "wls", "ols", "irls")),
            ur_driver_topics=bool(p["ur_driver_topics"]),
            driver_effort=check_choice("driver_effort", p["driver_effort"], ("check", "current")),
            validation_path=p["validation_data_path"] or None,
        )
        self._payload_model = p["payload_model_file"]
        self._result_pub = self.create_publisher(String, "~/result", _LATCHED)
        self.exit_code: int | None = None
        threading.Thread(target=self._run, name="identification", daemon=True).start()
        self.get_logger().info(f"identifying {p['data_path']} for {p['robot']} -> {p['out_dir']}")

    def _run(self) -> None:
        from ..identification.job import run_identify

        if self._payload_model:
            self._run_payload()
            return
        try:
            summary = run_identify(progress=False, **self._job)
        except (ValueError, FileNotFoundError, RuntimeError) as exc:
            self.get_logger().error(f"identification failed: {exc}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "error": str(exc)})))
            self.exit_code = 1
            return
        fits = ", ".join(f"{v:.1f}" for v in summary["fit_percent"])
        self.get_logger().info(f"model written to {summary['model']}; fit per joint (%): {fits}; physically "
                               f"consistent: {'yes' if summary['physically_consistent'] else 'NO'}")
        self._result_pub.publish(String(data=json.dumps({"ok": True, **summary})))
        self.exit_code = 0

    def _run_payload(self) -> None:
        from pathlib import Path

        from ..identification.payload_job import is_doubtful, run_payload

        job = self._job
        try:
            estimate, path = run_payload(self._payload_model, job["data_path"],
                                         out_path=Path(job["out_dir"]) / "payload.yaml",
                                         torque_source=job["torque_source"],
                                         drive_gains_nm_per_a=job["drive_gains_nm_per_a"], robot=None,
                                         ur_driver_topics=job["ur_driver_topics"],
                                         driver_effort=job["driver_effort"])  # robot: the arm model's
        except (ValueError, FileNotFoundError, RuntimeError) as exc:
            self.get_logger().error(f"payload identification failed: {exc}")
            self._result_pub.publish(String(data=json.dumps({"ok": False, "error": str(exc)})))
            self.exit_code = 1
            return
        for warning in estimate.warnings:
            self.get_logger().warning(warning)
        self.get_logger().info(f"payload written to {path}: {estimate.mass_kg:.3f} kg, CoM "
                               f"{[round(v, 4) for v in estimate.com_m.tolist()]} m in {estimate.frame}")
        doubtful = is_doubtful(estimate)
        self._result_pub.publish(String(data=json.dumps({"ok": not doubtful, "payload": str(path),
                                                         "mass_kg": estimate.mass_kg,
                                                         "com_m": estimate.com_m.tolist(),
                                                         "warnings": list(estimate.warnings)})))
        self.exit_code = 3 if doubtful else 0

    @property
    def done(self) -> bool:
        """The job has ended (run_node then exits with :attr:`exit_code`)."""
        return self.exit_code is not None

    def shutdown(self) -> None:
        """Nothing to stop: the job thread is a daemon and writes its files atomically."""


def main(args=None) -> int:
    return run_node(IdentifierNode, args, name="identifier")


if __name__ == "__main__":
    sys.exit(main())
