"""The level rules of each node's /diagnostics status (see :mod:`._diagnostics`): pure functions, no ROS.

Each takes what its node already keeps (the ~/status dict, the counters, the newest progress) and returns a
:class:`~._diagnostics.Report`: values with units in their keys, and findings whose messages say what is
wrong. Counters (commands refused, late cycles, messages lost) are judged by how much they grew since the
previous report (:class:`~._diagnostics.CounterDeltas`), so one refused command is one WARN, not a WARN for
the rest of the run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from ..robot_state import SafetyMode
from ._diagnostics import CounterDeltas, Report

__all__ = ["LATE_CYCLES_WARN_FRACTION", "REAL_TIME_FACTOR_WARN", "collision_monitor_report", "controller_report",
           "excitation_report", "recorder_report", "robot_loop_report"]

#: WARN when more than this fraction of the cycles since the previous report started over one period late
LATE_CYCLES_WARN_FRACTION = 0.01
#: WARN when the robot's clock runs slower than this many robot seconds per wall second (a simulation that
#: cannot keep up: what is timed in wall time, such as a ROS publisher's stream, then meets a slower robot)
REAL_TIME_FACTOR_WARN = 0.8
#: WARN when the state topics are more than this many robot seconds of samples behind the loop
BACKLOG_WARN_S = 1.0
#: WARN when the excitation lags its plan by more than this fraction of its abort threshold
DEVIATION_WARN_FRACTION = 0.5


def _safety_name(mode: int) -> str:
    try:
        return SafetyMode(int(mode)).name.lower()
    except ValueError:
        return f"unknown ({mode})"


def _events(report: Report, events: Iterable[tuple[str, str, bool]], fault: str | None = None) -> None:
    """The robot loop's warn/error events since the previous report, each as a finding of its level; but a
    watchdog stop of an arm at rest is how every trajectory and every stream that ended with a zero command
    ends (the watchdog then stops commanding), not a warning; and the event of the ``fault`` the report already
    names ("robot fault: ...") is not said twice."""
    for level, message, moving in events:
        if level == "error":
            if not (fault and message.startswith(fault)):
                report.error(message)
        elif level == "warn" and (moving or not message.startswith("watchdog")):
            report.warn(message)


def robot_loop_report(status: Mapping, deltas: CounterDeltas, *, rate_hz: float, simulated: bool,
                      events: Iterable[tuple[str, str, bool]] = (), last_refusal: str | None = None,
                      trajectory: Mapping | None = None) -> Report:
    """ur_interface (and osc_controller in direct connection): the robot loop.

    ``status`` is the node's ~/status dict (LoopStatus plus period_error_us, backlog, real_time_factor);
    ``events`` the loop's (level, message, arm moving) events since the previous report; ``last_refusal`` the newest
    refused command's reason; ``trajectory`` the tracker's status dict.

    Late cycles and a slow clock are WARN on a real robot (a cycle that starts late misses the robot's
    command slot). A ``simulated`` robot waits for the loop: its clock is the robot's, so a loaded machine
    only makes the run take longer; that goes into the OK message ("simulation at 0.37 of real time").
    """
    report = Report(ok_message="robot loop running")
    values = report.values
    timing = status.get("period_error_us") or {}
    safety = int(status.get("safety_mode", int(SafetyMode.NORMAL)))
    values.update({
        "state": status.get("state"), "connected": status.get("connected"), "control_mode": status.get("mode"),
        "watchdog": status.get("watchdog"), "robot_mode": status.get("robot_mode"),
        "safety_mode": _safety_name(safety), "fault": status.get("fault"),
        "loop_rate_hz": float(rate_hz),
        "loop_period_error_median_us": timing.get("median"), "loop_period_error_p99_us": timing.get("p99"),
        "loop_period_error_max_us": timing.get("max"), "loop_timing_window_cycles": timing.get("window_cycles"),
        "cycles": status.get("cycles"), "late_cycles": status.get("late_cycles"),
        "skipped_cycles": status.get("skipped_cycles"), "rejected_commands": status.get("rejected_commands"),
        "state_topics_backlog_samples": status.get("backlog"), "real_time_factor": status.get("real_time_factor"),
    })
    if trajectory is not None:
        values.update({"trajectory_goal": trajectory.get("goal"), "trajectory_phase": trajectory.get("phase"),
                       "trajectory_fraction": trajectory.get("fraction"),
                       "trajectory_position_error_rad": trajectory.get("position_error_rad"),
                       "trajectory_max_position_error_rad": trajectory.get("max_position_error_rad")})
    state = status.get("state")
    if state == "fault":
        report.error(f"robot fault: {status.get('fault') or 'unknown'}")
    elif state == "connecting":
        report.error(f"not connected to the robot: {status.get('fault') or 'connecting'}")
    elif state == "stopped":
        report.warn("robot loop stopped")
    if status.get("connected") and safety != int(SafetyMode.NORMAL) and safety != int(SafetyMode.REDUCED):
        report.error(f"safety mode {_safety_name(safety)}: the arm does not move until it is cleared")
    _events(report, events, status.get("fault") if state == "fault" else None)
    refused = deltas.delta("rejected_commands", int(status.get("rejected_commands") or 0))
    if refused:
        report.warn(f"{refused} command{'s' if refused > 1 else ''} refused since the last report"
                    + (f": {last_refusal}" if last_refusal else ""))
    cycles = deltas.delta("cycles", int(status.get("cycles") or 0))
    late = deltas.delta("late_cycles", int(status.get("late_cycles") or 0))
    if cycles and late > LATE_CYCLES_WARN_FRACTION * cycles and not simulated:
        report.warn(f"{late} of {cycles} cycles started over one period late since the last report: the machine "
                    "does not keep the robot's rate (load, or no real-time priority)")
    backlog = int(status.get("backlog") or 0)
    if backlog > BACKLOG_WARN_S * rate_hz:
        report.warn(f"the state topics are {backlog} samples ({backlog / rate_hz:.1f} s) behind the robot: "
                    "the machine cannot publish at the robot's rate")
    factor = status.get("real_time_factor")
    if factor is not None and factor < REAL_TIME_FACTOR_WARN:
        if simulated:
            report.ok_message += f" (simulation at {factor:.2f} of real time: the machine is loaded)"
        else:
            report.warn(f"the robot's clock runs at {factor:.2f} of the wall clock: the robot's time stamps or "
                        "the connection are wrong")
    return report


#: how a controller stops without an error (osc_controller's stop reasons)
_NORMAL_STOPS = ("polishing finished", "shutdown", "stopped by a signal")


def controller_report(cmd, *, stage: str, stopped: str | None, started: bool, force_error_limit_n: float,
                      timing: Mapping) -> Report:
    """osc_controller: the control law. ``cmd`` is the newest cycle's ControlCommand (None before the first):
    its normal force error (N), position and orientation errors, smallest singular value; ``timing`` the
    node's loop period error and step time statistics (µs)."""
    report = Report(ok_message=f"stage {stage}")
    period, step = timing.get("period_error_us") or {}, timing.get("step_time_us") or {}
    force_error = None if cmd is None else float(cmd.force_error[2])
    sigma_min = None if cmd is None else float(cmd.sigma_min)
    singular = cmd is not None and bool(cmd.singular_weight > 0)
    report.values.update({
        "stage": stage, "stopped": stopped, "force_error_n": force_error, "force_error_limit_n": force_error_limit_n,
        "position_error_m": None if cmd is None else float(np.linalg.norm(cmd.position_error_m)),
        "orientation_error_rad": None if cmd is None else float(np.linalg.norm(cmd.orientation_error_rad)),
        "sigma_min": sigma_min, "singular": singular,
        "loop_period_error_median_us": period.get("median"), "loop_period_error_p99_us": period.get("p99"),
        "step_time_median_us": step.get("median"), "step_time_p99_us": step.get("p99"),
    })
    if stopped is not None:
        if stopped in _NORMAL_STOPS:
            report.ok_message = f"controller stopped: {stopped}"
        else:
            report.error(f"controller stopped: {stopped}")
        return report
    if not started:
        report.warn("waiting for the robot's state (/joint_states, and the wrench with force_source sensor)")
    if singular:
        report.warn(f"near a singularity (smallest singular value {sigma_min:.3g}): motion there is limited")
    if force_error is not None and abs(force_error) >= force_error_limit_n:
        report.warn(f"normal force error {force_error:.1f} N reaches its limit {force_error_limit_n:g} N")
    return report


def excitation_report(progress: Mapping | None, *, max_position_error_rad: float, exit_code: int,
                      finished: bool) -> Report:
    """excitation: the newest /excitation/progress fields, the abort threshold, and how the run ended."""
    progress = dict(progress or {})
    report = Report(ok_message="waiting for the robot and the subscribers" if not progress else
                    f"{progress.get('stage', 'excitation')} {progress.get('phase', '')}".strip())
    error = progress.get("position_error_rad")
    report.values.update({
        "stage": progress.get("stage"), "phase": progress.get("phase"),
        "progress_fraction": progress.get("fraction"), "trajectory_time_s": progress.get("trajectory_time_s"),
        "position_error_rad": error, "max_position_error_rad": max_position_error_rad,
        "speed_scaling": progress.get("speed_scaling"), "exit_code": exit_code if finished else None,
    })
    phase = progress.get("phase")
    if phase in ("aborted", "refused"):
        report.error(f"excitation {phase}: {progress.get('reason') or 'see the log'}")
    elif phase == "cancelled":
        report.warn("excitation cancelled before its end")
    elif error is not None and error > DEVIATION_WARN_FRACTION * max_position_error_rad:
        report.warn(f"the arm lags the plan by {error:.3f} rad (aborts at {max_position_error_rad:g} rad)")
    return report


def recorder_report(counts: Mapping[str, int], lost: Mapping[str, int], deltas: CounterDeltas, *,
                    waiting: list[str], bag_path: str, bag_size_bytes: int, period_s: float) -> Report:
    """torque_logger: messages recorded per topic (total and rate since the previous report), messages DDS
    reported lost, topics still waited for, and the bag's size."""
    report = Report(ok_message=f"recording {len(counts)} topics")
    report.values.update({"bag_path": bag_path, "bag_size_mb": round(bag_size_bytes / 1e6, 3),
                          "topics_waited_for": ", ".join(waiting) or None})
    for topic, total in counts.items():
        new = deltas.delta("recorded " + topic, total)
        report.values[f"{topic} recorded_messages"] = total
        report.values[f"{topic} rate_hz"] = round(new / period_s, 1)
    for topic, total in lost.items():
        report.values[f"{topic} lost_messages"] = total
        new = deltas.delta("lost " + topic, total)
        if new:
            report.warn(f"{new} messages of {topic} lost since the last report: the recorder fell behind "
                        "(a loaded machine or a slow disk)")
    if waiting:
        report.warn(f"waiting for {', '.join(waiting)}: not published yet (is the robot node running?)")
    return report


def collision_monitor_report(*, monitoring: bool, rate_problem: str | None, samples: int, collisions: int,
                             last_collision: str | None, deltas: CounterDeltas, sample_age_s: float | None) -> Report:
    """collision_monitor: is it watching, how many samples, collisions since the previous report."""
    report = Report(ok_message="monitoring" if monitoring else "waiting for samples")
    report.values.update({"monitoring": monitoring, "samples": samples, "collisions": collisions,
                          "last_collision": last_collision, "newest_sample_age_s": sample_age_s})
    deltas.delta("samples", samples)
    if rate_problem:
        report.error(f"not monitoring: {rate_problem}")
    if deltas.delta("collisions", collisions):
        report.warn(f"collision: {last_collision}")
    if monitoring and sample_age_s is not None and sample_age_s > 1.0:
        report.warn(f"no paired /joint_states and /motor_currents for {sample_age_s:.1f} s: not monitoring")
    return report
