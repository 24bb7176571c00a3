"""The fields of osc_controller's ``~/state`` JSON that come from the law's last cycle and the arm's pose.

Kept apart from the node so the node stays a shell; pure functions of the objects they read.
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

__all__ = ["CycleTiming", "command_fields", "pose_fields", "true_force_error"]


class CycleTiming:
    """Loop period error and law step time (µs, median and p99 of the last cycles), refreshed once a second:
    percentiles over thousands of cycles hold the GIL the control loop may need, so not at the state rate."""

    def __init__(self) -> None:
        self.period_errors: list[float] = []  # topics: |cycle period - rate period| (s); direct: the robot loop's
        self.step_times: list[float] = []  # the law's step (s)
        self.latest: dict = {}
        self._at = -float("inf")

    def statistics(self, robot_loop=None) -> dict:
        from ._diagnostics import median_p99_us

        now = time.monotonic()
        if now - self._at < 1.0:
            return self.latest
        self._at = now
        errors = (np.abs(robot_loop.period_errors_s(5000)) if robot_loop is not None
                  else np.array(self.period_errors[-5000:]))
        steps = np.array(self.step_times[-5000:])
        del self.period_errors[:-5000], self.step_times[:-5000]
        if errors.size and steps.size:
            self.latest = {"period_error_us": median_p99_us(errors), "step_time_us": median_p99_us(steps)}
        return self.latest


def _floats(values) -> list[float]:
    return [float(v) for v in np.ravel(values)]


def command_fields(cmd) -> dict:
    """The newest cycle's errors, contact wrench and singularity measure (a ControlCommand)."""
    return {"force_error_n": _floats(cmd.force_error)[:6],
            "contact_wrench_tip_base": _floats(cmd.contact_wrench_tip_base),
            "position_error_m": float(np.linalg.norm(cmd.position_error_m)),
            "orientation_error_rad": float(np.linalg.norm(cmd.orientation_error_rad)),
            "sigma_min": float(cmd.sigma_min), "singular": bool(cmd.singular_weight > 0)}


def pose_fields(osm, reference=None) -> dict:
    """Where the arm is (base frame, at the last cycle): ``pose`` of the motion point — the frame ~/target_frame
    sets — as position (m) and quaternion [x, y, z, w], and the tool tip's position (m). With the external
    task's :class:`~robot_dynamics_id.control.pose_reference.PoseReference`, ``goal``: the latest accepted goal,
    how far the reference still has to go (m, rad) and whether it has arrived (``at_rest``)."""
    position, rotation, tip = osm.position_m.copy(), osm.rotation.copy(), osm.tip_position_m.copy()
    q = pin.Quaternion(rotation)
    fields: dict = {"pose": {"position_m": _floats(position), "quaternion_xyzw": [q.x, q.y, q.z, q.w]},
                    "tip_position_m": _floats(tip)}
    if reference is not None:
        distance, angle = reference.remaining()
        fields["goal"] = {"position_m": _floats(reference.goal_position_m), "remaining_m": distance,
                          "remaining_rad": angle, "at_rest": reference.at_rest}
    return fields


def true_force_error(cmd, osm, state) -> float:
    """Simulation only: the cycle's normal-force error against the noise-free contact force (N).

    force_error is f_d - n_measured with n = r_z . (-f_base) (the law's sign convention), so
    f_d - n_true = force_error - r_z . (f_measured - f_true).
    """
    r_z = osm.tip_rotation[:, 2]
    return float(cmd.force_error[2]) - float(r_z @ (state.tcp_wrench_base[:3] - state.tcp_wrench_base_true[:3]))
