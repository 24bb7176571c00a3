"""/diagnostics: the shared helper and the nodes' level rules, without a ROS graph (messages only)."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from robot_dynamics_id.nodes._diagnostic_rules import (
    LATE_CYCLES_WARN_FRACTION, collision_monitor_report, controller_report, excitation_report, recorder_report,
    robot_loop_report)
from robot_dynamics_id.nodes._diagnostics import (
    ERROR, OK, WARN, CounterDeltas, Finding, Report, diagnostic_array, diagnostic_status, format_value, summarize,
    values_of)


def _loop_status(**overrides) -> dict:
    status = {"state": "ready", "connected": True, "robot_mode": 7, "safety_mode": 1, "watchdog": "idle",
              "fault": None, "mode": "none", "cycles": 0, "late_cycles": 0, "rejected_commands": 0,
              "skipped_cycles": 0, "backlog": 0, "real_time_factor": 1.0,
              "period_error_us": {"median": 20.0, "p99": 150.0, "max": 400.0, "window_cycles": 5000}}
    status.update(overrides)
    return status


# ---- the helper ------------------------------------------------------------------------------------------------
def test_summarize_takes_the_worst_level_and_its_messages_once_each():
    findings = [Finding(WARN, "a"), Finding(ERROR, "b"), Finding(WARN, "c"), Finding(ERROR, "b")]
    assert summarize(findings) == (ERROR, "b")
    assert summarize([Finding(WARN, "a"), Finding(WARN, "c")]) == (WARN, "a; c")
    assert summarize([], ok_message="all well") == (OK, "all well")
    with pytest.raises(ValueError, match="not OK"):
        Finding(3, "stale")


def test_status_carries_name_hardware_level_and_formatted_values():
    report = Report(values={"period_error_p99_us": 123.456789, "connected": True, "fault": None, "cycles": 12,
                            "q_rad": [0.1, math.nan]}, ok_message="robot loop running")
    status = diagnostic_status("ur_interface: robot loop", "ur3 simulated", report)
    assert status.level == bytes([OK]) and status.message == "robot loop running"
    assert status.name == "ur_interface: robot loop" and status.hardware_id == "ur3 simulated"
    assert values_of(status) == {"period_error_p99_us": "123.457", "connected": "true", "fault": "n/a",
                                 "cycles": "12", "q_rad": "[0.1, nan]"}
    report.warn("watchdog: no command for 40 ms; arm stopped")
    assert diagnostic_status("n: p", "h", report).level == bytes([WARN])
    assert format_value(1e-7) == "1e-07"


def test_array_is_stamped_with_the_given_time():
    msg = diagnostic_array([diagnostic_status("n: p", "h", Report())], 1700000000.25)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1700000000, 250000000)
    assert len(msg.status) == 1


def test_counter_deltas_count_growth_since_the_previous_call_only():
    deltas = CounterDeltas()
    assert deltas.delta("refused", 5) == 0  # the first report sees no "new" ones from before it
    assert deltas.delta("refused", 7) == 2
    assert deltas.delta("refused", 7) == 0
    assert deltas.delta("refused", 3) == 0  # a counter that restarted is not negative


# ---- ur_interface: robot loop ----------------------------------------------------------------------------
def test_robot_loop_ready_is_ok_with_timing_in_microseconds():
    report = robot_loop_report(_loop_status(), CounterDeltas(), rate_hz=500.0, simulated=False)
    level, message = summarize(report.findings, report.ok_message)
    assert level == OK, message
    assert report.values["loop_period_error_p99_us"] == 150.0
    assert report.values["safety_mode"] == "normal"


def test_a_refused_command_warns_once_with_its_reason():
    deltas = CounterDeltas()
    robot_loop_report(_loop_status(rejected_commands=0), deltas, rate_hz=500.0, simulated=False)
    report = robot_loop_report(_loop_status(rejected_commands=1), deltas, rate_hz=500.0, simulated=False,
                               last_refusal="velocity command refused: joint 0 is NaN")
    assert summarize(report.findings) == (WARN, "1 command refused since the last report: velocity command "
                                                "refused: joint 0 is NaN")
    again = robot_loop_report(_loop_status(rejected_commands=1), deltas, rate_hz=500.0, simulated=False)
    assert summarize(again.findings)[0] == OK


@pytest.mark.parametrize("overrides, level, text", [
    ({"state": "fault", "fault": "RTDE connection lost"}, ERROR, "robot fault: RTDE connection lost"),
    ({"state": "connecting", "connected": False, "fault": "refused"}, ERROR, "not connected to the robot"),
    ({"safety_mode": 3}, ERROR, "safety mode protective_stop"),
    ({"backlog": 900}, WARN, "900 samples (1.8 s) behind"),
    ({"real_time_factor": 0.5}, WARN, "runs at 0.50 of the wall clock"),
])
def test_robot_loop_faults_name_what_is_wrong(overrides, level, text):
    report = robot_loop_report(_loop_status(**overrides), CounterDeltas(), rate_hz=500.0, simulated=False)
    got_level, message = summarize(report.findings)
    assert got_level == level and text in message, message


def test_late_cycles_warn_above_their_fraction_of_the_period():
    deltas = CounterDeltas()
    robot_loop_report(_loop_status(cycles=1000, late_cycles=0), deltas, rate_hz=500.0, simulated=False)
    few = int(LATE_CYCLES_WARN_FRACTION * 500)
    assert summarize(robot_loop_report(_loop_status(cycles=1500, late_cycles=few), deltas,
                                       rate_hz=500.0, simulated=False).findings)[0] == OK
    level, message = summarize(robot_loop_report(_loop_status(cycles=2000, late_cycles=few + 50), deltas,
                                                 rate_hz=500.0, simulated=False).findings)
    assert level == WARN and "50 of 500 cycles" in message


def test_a_slow_simulation_is_ok_and_says_so_a_slow_real_robot_warns():
    deltas = CounterDeltas()
    robot_loop_report(_loop_status(cycles=0), deltas, rate_hz=500.0, simulated=True)
    slow = _loop_status(cycles=500, late_cycles=400, real_time_factor=0.37)
    report = robot_loop_report(slow, deltas, rate_hz=500.0, simulated=True)
    assert summarize(report.findings, report.ok_message) == (
        OK, "robot loop running (simulation at 0.37 of real time: the machine is loaded)")
    deltas = CounterDeltas()
    robot_loop_report(_loop_status(cycles=0), deltas, rate_hz=500.0, simulated=False)
    level, message = summarize(robot_loop_report(slow, deltas, rate_hz=500.0, simulated=False).findings)
    assert level == WARN and "400 of 500 cycles" in message and "0.37 of the wall clock" in message


def test_loop_events_keep_their_level():
    report = robot_loop_report(_loop_status(), CounterDeltas(), rate_hz=500.0, simulated=False,
                               events=[("info", "connected", False), ("warn", "watchdog: no command for 40 ms", True)])
    assert summarize(report.findings) == (WARN, "watchdog: no command for 40 ms")
    # the watchdog ends every trajectory and every stream that ended with a zero command: at rest, no warning
    at_rest = robot_loop_report(_loop_status(), CounterDeltas(), rate_hz=500.0, simulated=False,
                                events=[("warn", "watchdog: no command for 40 ms", False)])
    assert summarize(at_rest.findings)[0] == OK
    error = robot_loop_report(_loop_status(), CounterDeltas(), rate_hz=500.0, simulated=False,
                              events=[("error", "protective stop: collision", False)])
    assert summarize(error.findings) == (ERROR, "protective stop: collision")
    # the fault's own event ("<fault>; arm stopped") is not said a second time beside "robot fault: <fault>"
    fault = "collision at t = 8.030 s: joint 3 (wrist_1_joint) external torque -0.23 Nm over its threshold 0.20 Nm"
    faulted = robot_loop_report(_loop_status(state="fault", fault=fault), CounterDeltas(), rate_hz=500.0,
                                simulated=False, events=[("error", f"{fault}; arm stopped", False)])
    assert summarize(faulted.findings) == (ERROR, f"robot fault: {fault}")


# ---- the other nodes ------------------------------------------------------------------------------------------
def _command(force_error_z=0.0, singular=0.0):
    return SimpleNamespace(force_error=np.array([0, 0, force_error_z, 0, 0, 0.0]), position_error_m=np.array([
        0.003, 0.004, 0.0]), orientation_error_rad=np.zeros(3), sigma_min=0.2, singular_weight=singular)


def test_controller_rules():
    common = dict(stage="hybrid", started=True, force_error_limit_n=15.0, timing={})
    ok = controller_report(_command(2.0), stopped=None, **common)
    assert summarize(ok.findings, ok.ok_message) == (OK, "stage hybrid")
    assert ok.values["position_error_m"] == pytest.approx(0.005)
    assert summarize(controller_report(_command(-16.0), stopped=None, **common).findings)[0] == WARN
    assert summarize(controller_report(_command(singular=0.3), stopped=None, **common).findings)[0] == WARN
    stopped = controller_report(_command(), stopped="control error: FloatingPointError", **common)
    assert summarize(stopped.findings) == (ERROR, "controller stopped: control error: FloatingPointError")
    finished = controller_report(_command(), stopped="polishing finished", **common)
    assert summarize(finished.findings, finished.ok_message) == (OK, "controller stopped: polishing finished")
    waiting = controller_report(None, stopped=None, **dict(common, started=False))
    assert summarize(waiting.findings)[0] == WARN


def test_excitation_rules():
    running = {"stage": "excitation", "phase": "running", "fraction": 0.4, "position_error_rad": 0.01}
    report = excitation_report(running, max_position_error_rad=0.25, exit_code=0, finished=False)
    assert summarize(report.findings, report.ok_message) == (OK, "excitation running")
    assert report.values["progress_fraction"] == 0.4
    lagging = excitation_report(dict(running, position_error_rad=0.2), max_position_error_rad=0.25, exit_code=0,
                                finished=False)
    assert summarize(lagging.findings)[0] == WARN
    aborted = excitation_report({"stage": "excitation", "phase": "aborted", "reason": "joint 2 lags"},
                                max_position_error_rad=0.25, exit_code=4, finished=True)
    assert summarize(aborted.findings) == (ERROR, "excitation aborted: joint 2 lags")


def test_recorder_rules():
    deltas = CounterDeltas()
    first = recorder_report({"/joint_states": 500}, {"/joint_states": 0}, deltas, waiting=["/motor_currents"],
                            bag_path="b", bag_size_bytes=2_500_000, period_s=1.0)
    assert summarize(first.findings)[0] == WARN and "/motor_currents" in summarize(first.findings)[1]
    assert first.values["bag_size_mb"] == 2.5
    second = recorder_report({"/joint_states": 1000}, {"/joint_states": 3}, deltas, waiting=[], bag_path="b",
                             bag_size_bytes=5_000_000, period_s=1.0)
    assert second.values["/joint_states rate_hz"] == 500.0
    assert summarize(second.findings) == (WARN, "3 messages of /joint_states lost since the last report: the "
                                                "recorder fell behind (a loaded machine or a slow disk)")


def test_collision_monitor_rules():
    deltas = CounterDeltas()
    kwargs = dict(monitoring=True, rate_problem=None, samples=100, collisions=0, last_collision=None,
                  sample_age_s=0.01)
    assert summarize(collision_monitor_report(deltas=deltas, **kwargs).findings)[0] == OK
    hit = collision_monitor_report(deltas=deltas, **dict(kwargs, collisions=1, last_collision="joint 1"))
    assert summarize(hit.findings) == (WARN, "collision: joint 1")
    wrong_rate = collision_monitor_report(deltas=deltas, **dict(kwargs, monitoring=False, rate_problem="125 Hz"))
    assert summarize(wrong_rate.findings) == (ERROR, "not monitoring: 125 Hz")
