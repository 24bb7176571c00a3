"""ur_interface with backend rtde, as real processes, against the stand-in UR controller.

Three processes: the stand-in (``python -m robot_dynamics_id.sim.ur_controller`` on 127.0.0.3, with a
fault-control port), ur_interface started from its launch file with ``sim:=false
robot_ip:=127.0.0.3`` (the unmodified ur_rtde client inside), and this test's DDS probe.

The behaviour tests are those of the sim backend (test_ur_interface.py). The fault tests inject each
fault while the arm moves and check: the arm is commanded to stop no later than 3 control cycles (plus
a scheduling allowance) after the node logs the fault, it is at rest soon after, the fault is on the
status topic, the node comes back to ``ready``, and nothing moves until a new command arrives.
"""

import math
import os
import re
import signal
import time

import numpy as np
import pytest
import rclpy

from robot_dynamics_id.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node
from robot_dynamics_id.sim.ur_controller import StandInProcess

pytestmark = pytest.mark.ros

HOST = "127.0.0.3"
PERIOD_S = 0.002  # e-Series, 500 Hz
#: how much later than "3 cycles after the node noticed" a stop may land on this shared 2-core machine
SCHEDULING_ALLOWANCE_S = 0.05
WATCHDOG_S = 0.1
_LOG_LINE = re.compile(r"\[(INFO|WARN|ERROR)\] \[(\d+\.\d+)\] \[ur_interface\]: (.*)")


def _node_log(proc):
    """(wall time, level, message) of every ur_interface log line."""
    return [(float(m.group(2)), m.group(1), m.group(3)) for m in map(_LOG_LINE.search, proc.log().splitlines()) if m]


@pytest.fixture(scope="module")
def system(tmp_path_factory):
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    log_dir = tmp_path_factory.mktemp("rtde_system")
    standin = StandInProcess(personality="e-series", host=HOST, unlock_delay_s=0.3, log_dir=log_dir)
    probe = probe_session(name="ur_interface_rtde_probe")
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": HOST})
    proc = start_node(node, log_dir=log_dir, env=loopback_environment(),
                      extra_ros_args=["-p", f"watchdog_s:={WATCHDOG_S}"])
    try:
        assert probe.wait_ready(60.0), f"ur_interface (rtde) never became ready:\n{proc.log()}\n{standin.log()}"
        yield standin, proc, probe
    finally:
        code = proc.stop()
        probe.close()
        rclpy.shutdown()
        standin_code = standin.stop()
        assert code == 0, f"ur_interface did not exit cleanly ({code}):\n{proc.log()}"
        assert standin_code == 0, standin.log()


def _at_rest(standin):
    return abs(standin.state()["qd_rad_s"][0]) < 1e-3


def test_velocity_command_moves_the_joint_then_watchdog_stops_it(system):
    standin, proc, probe = system
    assert standin.wait_until(lambda: _at_rest(standin), 5.0)
    start_q = standin.state()["q_rad"]
    probe.stream_velocity([0.5, 0, 0, 0, 0, 0], duration_s=1.0, rate_hz=100.0)
    t_last = time.time()
    time.sleep(0.6)
    end = standin.state()
    moved = end["q_rad"][0] - start_q[0]
    # 0.5 rad/s for 1 s (ramp losses cancel); after the last command the joint runs on for at most the
    # node's watchdog time
    assert 0.5 - 0.03 <= moved <= 0.5 + 0.5 * WATCHDOG_S + 0.03, f"joint 0 moved {moved:.4f} rad"
    assert np.abs(np.subtract(end["q_rad"][1:], start_q[1:])).max() < 0.01
    assert abs(end["qd_rad_s"][0]) < 1e-3
    stops = [t for t, cause in standin.stops() if t > t_last and cause.startswith("speedStop")]
    assert stops and stops[0] - t_last < WATCHDOG_S + 0.15
    assert probe.wait_for(lambda: any("watchdog" in e for e in probe.events), 3.0), probe.events


def test_nan_command_is_refused_and_stops_the_arm(system):
    standin, proc, probe = system
    probe.events.clear()
    probe.stream_velocity([0.3, 0, 0, 0, 0, 0], duration_s=0.3)
    probe.send_velocity([math.nan, 0, 0, 0, 0, 0])
    assert probe.wait_for(lambda: any("NaN" in e and "refused" in e for e in probe.events), 5.0), probe.events
    assert standin.wait_until(lambda: _at_rest(standin), 2.0)
    assert (probe.latest_status() or {}).get("rejected_commands", 0) >= 1


def test_out_of_limit_command_is_clamped(system):
    standin, proc, probe = system
    peak = []
    t_end = time.monotonic() + 0.8
    while time.monotonic() < t_end:
        probe.send_velocity([5.0, 0, 0, 0, 0, 0])
        peak.append(standin.state()["reference_qd_rad_s"][0])
        time.sleep(0.01)
    assert max(peak) == pytest.approx(math.pi, abs=0.02)  # UR3 base limit
    assert standin.wait_until(lambda: _at_rest(standin), 3.0)


def _inject_and_check(standin, proc, probe, name, inject, recover=None, stop_deadline_s=None):
    """Move, inject a fault, check stop timing, recovery to ready, and that nothing is replayed.

    ``stop_deadline_s``: for faults that cut the node off from the controller (an outage), the stop can
    only come from the controller itself: then the stop must land within this time of the fault.
    """
    probe.events.clear()
    stream_until = time.monotonic() + 0.4
    while time.monotonic() < stream_until:
        probe.send_velocity([0.3, 0, 0, 0, 0, 0])
        time.sleep(0.01)
    assert not _at_rest(standin), f"{name}: the arm did not move before the fault"
    t_fault = time.time()
    inject()
    # keep commanding through the fault, as a controller node would
    stream_until = time.monotonic() + 0.3
    while time.monotonic() < stream_until:
        probe.send_velocity([0.3, 0, 0, 0, 0, 0])
        time.sleep(0.01)
    assert probe.wait_for(lambda: any("arm stopped" in e or "safety mode" in e for e in probe.events), 5.0), \
        f"{name}: no fault on the status topic: {probe.events}"
    if recover is not None:
        recover()
    # back to ready; the first state after the fault must be a fresh one
    assert probe.wait_for(lambda: any("ready" in e for e in probe.events[1:]), 20.0), \
        f"{name}: never ready again: {probe.events}\n{proc.log()[-3000:]}"
    notices = [t for t, level, msg in _node_log(proc) if t >= t_fault - 0.01 and level in ("ERROR", "WARN")]
    assert notices, f"{name}: the node logged nothing"
    t_notice = notices[0]
    stops = [t for t, cause in standin.stops() if t >= t_fault - 0.01]
    assert stops, f"{name}: the controller never stopped the arm"
    motion = [(t, what) for t, what in standin.motion() if t >= stops[0]]
    rests = [t for t, what in motion if what == "rest"]
    assert rests, f"{name}: the arm never came to rest"
    print(f"{name}: noticed {1000 * (t_notice - t_fault):.0f} ms after the fault, stop commanded "
          f"{1000 * (stops[0] - t_notice):+.0f} ms from noticing, at rest {1000 * (rests[0] - stops[0]):.0f} ms "
          "after the stop")
    if stop_deadline_s is None:
        assert stops[0] <= t_notice + 3 * PERIOD_S + SCHEDULING_ALLOWANCE_S, \
            f"{name}: stop {stops[0] - t_notice:.3f} s after the node noticed"
    else:
        assert stops[0] <= t_fault + stop_deadline_s, f"{name}: stop {stops[0] - t_fault:.3f} s after the fault"
    # from 0.3 rad/s at >= 10 rad/s^2: 30 ms, plus the servo's settling
    assert rests[0] - stops[0] < 0.25
    # nothing is replayed: no motion after recovery until a new command
    time.sleep(0.4)
    t_check = time.time()
    assert _at_rest(standin), f"{name}: the arm moves after recovery without a new command"
    assert not [t for t, what in standin.motion() if t > rests[0] + 0.05 and what == "moving"], \
        f"{name}: stale command replayed"
    # resumes on a new command
    probe.stream_velocity([0.2, 0, 0, 0, 0, 0], duration_s=0.3)
    assert [t for t, what in standin.motion() if t > t_check and what == "moving"], f"{name}: no resume"
    assert standin.wait_until(lambda: _at_rest(standin), 3.0)
    status = probe.latest_status() or {}
    assert status.get("state") in ("ready", "moving"), status


def test_faults_stop_the_arm_report_and_recover(system):
    standin, proc, probe = system

    def unlock():
        time.sleep(0.35)  # PolyScope refuses to unlock right after the stop (stand-in: 0.3 s)
        assert "releasing" in standin.command("unlock")

    def freeze_node():
        # the node goes silent: the controller's RTDE watchdog (10 Hz) stops the program
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.3)
        os.kill(proc.pid, signal.SIGCONT)

    _inject_and_check(standin, proc, probe, "drop", lambda: standin.command("drop rtde"))
    _inject_and_check(standin, proc, probe, "stall", lambda: standin.command("stall 0.6"))
    _inject_and_check(standin, proc, probe, "protective stop", lambda: standin.command("protective_stop"),
                      recover=unlock)
    _inject_and_check(standin, proc, probe, "program stop", lambda: standin.command("stop_program"))
    _inject_and_check(standin, proc, probe, "controller watchdog", freeze_node)
    # every port closes: nothing reaches the controller, whose RTDE watchdog (10 Hz) stops the program
    _inject_and_check(standin, proc, probe, "outage", lambda: standin.command("unreachable 1.0"),
                      stop_deadline_s=0.1 + 10 * PERIOD_S + SCHEDULING_ALLOWANCE_S)
    assert proc.alive()


def test_malformed_commands_are_refused_logged_and_survived(system):
    standin, proc, probe = system
    before = (probe.latest_status() or {}).get("rejected_commands", 0)
    bad = [[], [0.1] * 5, [0.1] * 7, [0.0] * 100, [math.inf, 0, 0, 0, 0, 0], [-math.inf] * 6, [math.nan] * 6]
    for values in bad:
        probe.send_velocity(values)
        time.sleep(0.05)
    probe.send_torque([1.0] * 6)  # this robot is configured without torque control
    assert probe.wait_for(lambda: (probe.latest_status() or {}).get("rejected_commands", 0) >= before + len(bad) + 1,
                          5.0), probe.latest_status()
    refused = [msg for _, level, msg in _node_log(proc) if level == "ERROR" and "refused" in msg]
    assert len(refused) >= len(bad) + 1
    assert proc.alive()
    assert _at_rest(standin)
    probe.stream_velocity([0.1, 0, 0, 0, 0, 0], duration_s=0.2)  # still works
    assert probe.wait_for(lambda: (probe.latest_status() or {}).get("state") in ("ready", "moving"), 2.0)


def test_unreachable_controller_is_retried_with_back_off_and_stops_cleanly(tmp_path):
    # 127.0.0.9: loopback, nothing listens there
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": "127.0.0.9"})
    proc = start_node(node, log_dir=tmp_path, env=loopback_environment())
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(re.findall("retrying in", proc.log())) < 3:
            time.sleep(0.2)
        log = proc.log()
        waits = [float(w) for w in re.findall(r"retrying in ([0-9.]+) s", log)]
        assert len(waits) >= 3, log
        assert waits[:3] == sorted(waits[:3]) and waits[2] > waits[0]  # back-off grows
        assert proc.alive()
    finally:
        assert proc.stop() == 0, proc.log()
