"""ur_interface with backend rtde, as real processes, against the stand-in UR controller.

Three processes: the stand-in (``python -m robot_dynamics_id.sim.ur_controller`` on 127.0.0.3, with a
fault-control port), ur_interface started from its launch file with ``sim:=false
robot_ip:=127.0.0.3`` (the unmodified ur_rtde client inside), and this test's DDS probe.

The behaviour tests are those of the sim backend (test_ur_interface.py). The fault tests inject each
fault while the arm moves and check, on the stand-in's own record of every controller cycle (its
velocity trace: cycle count, commanded and true joint speed), that

* the stop reaches the arm's servo no later than 3 control cycles (plus a scheduling allowance) after
  the node noticed the fault; where the node is cut off (outage, node frozen), the controller itself
  stops the arm within its RTDE watchdog time;
* from that cycle on, the commanded velocity ramps to zero at the stop's deceleration and the true
  velocity is at rest a few servo-settling cycles after the ramp ends.

"At rest within 3 control cycles of noticing" cannot be met literally: from 0.3 rad/s a UR3 joint
needs 0.3 / 10 rad/s^2 = 30 ms (15 cycles) to stop at its deceleration limit, on a real arm as on the
simulated one. What the node controls is when the stop reaches the arm; the rest is physics, which is
checked against the configured deceleration.

They also check that the fault is on the status topic, the node comes back to ``ready``, and nothing
moves until a new command arrives.
"""

import math
import os
import re
import signal
import time

import numpy as np
import pytest
import rclpy
from std_msgs.msg import Empty

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node
from robot_dynamics_id.sim.ur_controller import StandInProcess
from robot_dynamics_id.sim.ur_controller.process import raise_priority

pytestmark = pytest.mark.ros

HOST = "127.0.0.3"
PERIOD_S = 0.002  # e-Series, 500 Hz
#: how much later than "3 cycles after the node noticed" a stop may land on this shared 2-core machine
SCHEDULING_ALLOWANCE_S = 0.05
WATCHDOG_S = 0.1
#: the controller-side RTDE watchdog; 5 Hz rather than the default 10 Hz because on a loaded 2-core CI
#: machine the node process is sometimes not scheduled for 100 ms (which would, correctly, stop the arm)
CONTROLLER_WATCHDOG_HZ = 5.0
#: controller cycles the true velocity may take to settle below the rest threshold after the commanded
#: velocity reached zero (servo: 200 rad/s, damping 0.9 -> 4 / (0.9 * 200) = 22 ms = 11 cycles)
SETTLE_CYCLES = 12
#: the stand-in's rest threshold (max |true joint velocity|), rad/s, and how long the arm must stay below it
REST_SPEED_RAD_S = 0.005
REST_CYCLES = 25
#: the ur_interface process the module fixture stops at the end (the last test replaces it)
_SYSTEM_NODE: list = [None]
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
                      extra_ros_args=["-p", f"watchdog_s:={WATCHDOG_S}",
                                      "-p", f"controller_watchdog_hz:={CONTROLLER_WATCHDOG_HZ}"])
    previous_nice = _boost_this_process()  # the tests stream commands as a controller node would
    try:
        _boost(proc.pid)
        assert probe.wait_ready(90.0), f"ur_interface (rtde) never became ready:\n{proc.log()}\n{standin.log()}"
        _boost(proc.pid)  # again, for the ur_rtde control process the node has started meanwhile
        _SYSTEM_NODE[0] = proc
        yield standin, proc, probe
    finally:
        code = _SYSTEM_NODE[0].stop()
        proc = _SYSTEM_NODE[0]
        probe.close()
        rclpy.shutdown()
        standin_code = standin.stop()
        _restore_this_process(previous_nice)
        assert code == 0, f"ur_interface did not exit cleanly ({code}):\n{proc.log()}"
        assert standin_code == 0, standin.log()


def _boost(pid):
    """Run the node (and its children) at nice -10, as a robot driver would run at real-time priority:
    on a loaded 2-core CI machine a 500 Hz loop at normal priority is often not scheduled for 50 ms.
    Best effort (needs root, which CI has)."""
    pids = [pid]
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        pids.append(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    for p in pids:
        try:
            threads = [int(t) for t in os.listdir(f"/proc/{p}/task")]  # nice is per thread on Linux
        except OSError:
            continue
        for tid in threads:
            raise_priority(-10, tid)


def _boost_this_process() -> int:
    """Run this test process's threads at nice -10 too: the tests send the commands a controller node would,
    and a gap of 100 ms (the node's watchdog) while two hogs run stops the arm before the fault under test.
    Returns the nice value to restore."""
    previous = os.getpriority(os.PRIO_PROCESS, 0)
    for tid in os.listdir("/proc/self/task"):
        raise_priority(-10, int(tid))
    return previous


def _restore_this_process(nice: int) -> None:
    for tid in os.listdir("/proc/self/task"):
        try:
            os.setpriority(os.PRIO_PROCESS, int(tid), nice)
        except OSError:  # the thread has ended, or raising nice back is not permitted
            pass


def _at_rest(standin):
    return abs(standin.state()["qd_rad_s"][0]) < 1e-3


def test_velocity_command_moves_the_joint_then_watchdog_stops_it(system):
    standin, proc, probe = system
    assert standin.wait_until(lambda: _at_rest(standin), 5.0)
    start_q = standin.state()["q_rad"]
    probe.clear()
    t_first = time.time()
    probe.stream_velocity([0.5, 0, 0, 0, 0, 0], duration_s=1.0, rate_hz=100.0)
    t_last = time.time()
    time.sleep(0.6)
    end = standin.state()
    moved = end["q_rad"][0] - start_q[0]
    # 0.5 rad/s for 1 s (the 10 rad/s^2 ramps lose 0.0125 rad going in and give it back going out); after
    # the last command the joint runs on for at most the node's watchdog time. Three processes share a
    # loaded 2-core machine here, so the wall-clock windows get a 0.1 s allowance on each side.
    # (A controller-watchdog stop here came from the node's loop stalling ~150 ms at its first sample.)
    assert 0.5 - 0.05 - 0.5 * 0.1 <= moved <= 0.5 + 0.5 * (WATCHDOG_S + 0.1) + 0.02, \
        f"joint 0 moved {moved:.4f} rad; stand-in motion {standin.motion()[-6:]}, stops {standin.stops()[-4:]}"
    assert np.abs(np.subtract(end["q_rad"][1:], start_q[1:])).max() < 0.01
    assert abs(end["qd_rad_s"][0]) < 1e-3
    # the velocity itself is the commanded one, as seen on /joint_states
    _, _, qd = probe.joint_arrays()
    cruising = qd[qd[:, 0] > 0.3, 0]
    assert cruising.size > 100 and np.median(cruising) == pytest.approx(0.5, abs=0.01)
    # the travel matches the time the stand-in's arm moved (its own clock), summed over its moving spells: a
    # stall of the stream on a loaded machine stops the arm mid-way (the watchdog) and the next command restarts it
    stops = [t for t, cause in standin.stops() if t > t_last and cause.startswith("speedStop")]
    log = [(t, what) for t, what in standin.motion() if t >= t_first - 0.05]
    spells = [(t, next((u for u, w in log if u > t and w == "rest"), None)) for t, what in log if what == "moving"]
    assert stops and spells and all(end is not None for _, end in spells), (log, standin.stops())
    # each spell from rest to rest ramps up and down at 10 rad/s^2 (UR3 joint 0's limit, the stop's deceleration):
    # a trapezoid losing v^2/a = 0.025 rad against the cruise speed, or a triangle when too short to reach it (a
    # run with two stalls lost 0.058 rad so, beyond the 0.04 allowed when the ramps were not counted)
    ramp = 10.0

    def travel(d):
        return 0.5 * (d - 0.5 / ramp) if d >= 2 * 0.5 / ramp else ramp * d * d / 4

    assert moved == pytest.approx(sum(travel(end - start) for start, end in spells), abs=0.03), (spells, moved)
    assert stops[0] - t_last < WATCHDOG_S + 0.15
    assert probe.wait_for(lambda: any("watchdog" in e for e in probe.events), 3.0), probe.events


def test_nan_command_is_refused_and_stops_the_arm(system):
    standin, proc, probe = system
    probe.events.clear()
    probe.stream_velocity([0.3, 0, 0, 0, 0, 0], duration_s=0.3)
    probe.send_velocity([math.nan, 0, 0, 0, 0, 0])
    assert probe.wait_for(lambda: any("NaN" in e and "refused" in e for e in probe.events), 5.0), probe.events
    assert standin.wait_until(lambda: _at_rest(standin), 2.0)
    assert (probe.latest_status() or {}).get("rejected_commands", 0) >= 1


def _inject_and_check(standin, proc, probe, name, inject, recover=None, stop_deadline_s=None,
                      stop_causes=("RTDE input watchdog",)):
    """Move, inject a fault, check stop timing and deceleration, recovery to ready, and that nothing is replayed.

    ``stop_deadline_s``: for faults that cut the node off from the controller (an outage, a frozen node),
    the stop can only come from the controller itself (its RTDE watchdog): then the stop must land within
    this time of the fault.
    """
    probe.events.clear()
    probe.statuses.clear()
    # stream until the arm cruises (a loaded machine can delay the start by a few hundred ms); the stand-in
    # is asked only every 5th command: a gap of 100 ms would let the node's own watchdog stop the arm
    give_up = time.monotonic() + 3.0
    cruising_since = None
    count = 0
    while time.monotonic() < give_up:
        probe.send_velocity([0.3, 0, 0, 0, 0, 0])
        time.sleep(0.01)
        count += 1
        if count % 5 == 0 and abs(standin.state()["qd_rad_s"][0] - 0.3) < 0.01:
            cruising_since = cruising_since or time.monotonic()
            if time.monotonic() - cruising_since > 0.2:
                break
    assert not _at_rest(standin), f"{name}: the arm did not move before the fault:\n{proc.log()[-2000:]}"
    probe.send_velocity([0.3, 0, 0, 0, 0, 0])
    tick_fault = standin.state()["ticks"]
    probe.send_velocity([0.3, 0, 0, 0, 0, 0])
    t_fault = time.time()
    inject()
    # keep commanding through the fault, as a controller node would
    stream_until = time.monotonic() + 0.3
    while time.monotonic() < stream_until:
        probe.send_velocity([0.3, 0, 0, 0, 0, 0])
        time.sleep(0.01)
    t_stream_end = time.time()
    # the stand-in keeps the last 4 s of cycles: take its trace of the stop now
    time.sleep(0.1)
    trace = standin.velocity_trace(tick_fault - 10)
    stop_records = [r for r in standin.stop_records() if r[0] >= tick_fault]
    assert not [r for r in stop_records if r[1] < t_fault - 0.002], \
        f"{name}: the arm was stopped before the fault was injected ({stop_records[0][2]}): the test could not " \
        "send a command for 100 ms (the node's watchdog), the machine is overloaded"
    # the fault is on the status topic (status messages are depth 1: look at states, not only events)
    assert probe.wait_for(lambda: any(s.get("state") in ("fault", "connecting") and s.get("fault")
                                      for s in list(probe.statuses)), 5.0), \
        f"{name}: no fault on the status topic: {probe.events}"
    if recover is not None:
        recover()
    # back to ready
    assert probe.wait_for(lambda: any("ready" in e for e in probe.events) and
                          (probe.latest_status() or {}).get("state") == "ready", 20.0), \
        f"{name}: never ready again: {probe.events}\n{proc.log()[-3000:]}"
    notices = [t for t, level, msg in _node_log(proc) if t >= t_fault - 0.01 and level in ("ERROR", "WARN")]
    assert notices, f"{name}: the node logged nothing"
    t_notice = notices[0]
    assert stop_records, f"{name}: the controller never stopped the arm: {standin.stops()[-5:]}"
    stop_tick, t_stop, cause, deceleration, _ = stop_records[0]
    ramp_ticks, rest_tick = _check_deceleration(name, trace, stop_tick, deceleration)
    print(f"{name}: noticed {1000 * (t_notice - t_fault):.0f} ms after the fault; stop ({cause}) reached the arm "
          f"{1000 * (t_stop - t_notice):+.1f} ms from noticing, {1000 * (t_stop - t_fault):.0f} ms after the fault; "
          f"ramp {ramp_ticks} cycles at {deceleration:g} rad/s^2, at rest {rest_tick - stop_tick} cycles after "
          "the stop")
    if stop_deadline_s is None:
        # The node logs the fault right after it sent the stop, so t_notice is, if anything, late.
        assert t_stop <= t_notice + 3 * PERIOD_S + SCHEDULING_ALLOWANCE_S, \
            f"{name}: the stop reached the arm {t_stop - t_notice:.3f} s after the node noticed"
    else:
        # cut off (outage) or frozen: no stop of the node can reach the arm; the controller stops it itself
        assert stop_causes is None or any(c in cause for c in stop_causes), \
            f"{name}: stopped by {cause!r}, not by {stop_causes}"
        assert t_stop <= t_fault + stop_deadline_s, f"{name}: stop {t_stop - t_fault:.3f} s after the fault"
    # Nothing is replayed: once the node is ready and the last command (if the node accepted it after
    # recovering) has timed out, the arm stays at rest until a new command comes.
    t_quiet = max(t_stream_end, time.time()) + WATCHDOG_S + 0.1
    time.sleep(max(0.0, t_quiet - time.time()) + 0.4)
    t_check = time.time()
    assert _at_rest(standin), f"{name}: the arm moves after recovery without a new command"
    assert not [t for t, what in standin.motion() if t > t_quiet and what == "moving"], \
        f"{name}: motion without a command after recovery (stale command replayed?)"
    # resumes on a new command
    probe.stream_velocity([0.2, 0, 0, 0, 0, 0], duration_s=0.3)
    assert standin.wait_until(lambda: [t for t, what in standin.motion() if t > t_check and what == "moving"], 1.0), \
        f"{name}: no resume: {probe.events[-5:]}\n{proc.log()[-1500:]}"
    assert standin.wait_until(lambda: _at_rest(standin), 3.0)
    # ready again (on a starved machine the controller's RTDE watchdog may fault the session once more; the
    # node must then recover by itself too)
    assert probe.wait_for(lambda: (probe.latest_status() or {}).get("state") in ("ready", "moving"), 10.0), \
        f"{name}: not ready after recovery: {probe.latest_status()}\n{proc.log()[-1500:]}"


def _check_deceleration(name, trace, stop_tick, deceleration):
    """From the cycle the stop reached the servo: the commanded speed ramps to 0 at ``deceleration`` and the
    true speed settles below the rest threshold within SETTLE_CYCLES. Returns (ramp cycles, rest cycle)."""
    rows = {row[0]: row for row in trace}
    ticks = sorted(rows)
    assert stop_tick - 1 in rows and all(t in rows for t in range(stop_tick - 1, ticks[-1] + 1)), \
        f"{name}: the stand-in's trace misses cycles around the stop"
    ref_before = rows[stop_tick - 1][2]
    assert ref_before > 0.25, f"{name}: the arm was not moving when the stop arrived ({ref_before:.3f} rad/s)"
    step = deceleration * PERIOD_S
    zero = next((t for t in ticks if t >= stop_tick and rows[t][2] < 1e-9), None)
    assert zero is not None, f"{name}: the commanded velocity never reached 0 after the stop"
    ramp_ticks = zero - stop_tick + 1
    # the ramp takes ref_before / (deceleration * period) cycles (rounded up), and each cycle removes one step
    assert math.ceil(ref_before / step - 1e-9) - 1 <= ramp_ticks <= math.ceil(ref_before / step - 1e-9) + 1, \
        f"{name}: commanded velocity reached 0 in {ramp_ticks} cycles from {ref_before:.3f} rad/s at {deceleration}"
    for t in range(stop_tick, zero):
        expected = max(0.0, ref_before - step * (t - stop_tick + 1))
        assert rows[t][2] == pytest.approx(expected, abs=step * 1.01), \
            f"{name}: commanded speed {rows[t][2]:.4f} at cycle {t - stop_tick} of the stop, expected {expected:.4f}"
    # at rest: below the threshold for REST_CYCLES in a row (later cycles may move again: after a frozen node
    # recovers, the commands the test keeps sending are new ones, and they are obeyed)
    rest = next((t for t in ticks if t >= zero and all(rows.get(u, (0, 0, 0, 1.0))[3] <= REST_SPEED_RAD_S
                                                       for u in range(t, t + REST_CYCLES))), None)
    assert rest is not None and rest - zero <= SETTLE_CYCLES, \
        f"{name}: true speed not at rest {SETTLE_CYCLES} cycles after the ramp: " \
        f"{[round(rows[t][3], 4) for t in ticks if zero <= t <= zero + 2 * SETTLE_CYCLES]}"
    return ramp_ticks, rest


def test_faults_stop_the_arm_report_and_recover(system):
    standin, proc, probe = system

    def unlock():
        time.sleep(0.35)  # PolyScope refuses to unlock right after the stop (stand-in: 0.3 s)
        assert "releasing" in standin.command("unlock")

    def freeze_node():
        # the node goes silent: the controller's RTDE watchdog stops the program
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGCONT)

    # Dropping the RTDE connections also cuts the node's RTDE stop off. The stop then comes by another path:
    # ur_rtde's control interface reconnects and stops the script, or the node's dashboard stop, or else
    # the controller's RTDE watchdog (seen: 15 ms, and 123 ms on a loaded CI run). Whichever it is, it must
    # land within the watchdog's time.
    _inject_and_check(standin, proc, probe, "drop", lambda: standin.command("drop rtde"),
                      stop_deadline_s=1.0 / CONTROLLER_WATCHDOG_HZ + 10 * PERIOD_S + SCHEDULING_ALLOWANCE_S,
                      stop_causes=None)
    _inject_and_check(standin, proc, probe, "stall", lambda: standin.command("stall 0.6"))
    _inject_and_check(standin, proc, probe, "protective stop", lambda: standin.command("protective_stop"),
                      recover=unlock)
    # A program stopped on the controller (pendant, dashboard) stays stopped: the node does not upload the
    # script again by itself (it once did within 200 ms, and a cancelled trajectory's ramp then moved the arm)
    # but on ~/resend_robot_program.
    resend_pub = probe.create_publisher(Empty, "/ur_interface/resend_robot_program", 10)

    def resend():
        held = probe.wait_for(lambda: "program stopped on the controller" in
                              str((probe.latest_status() or {}).get("fault")), 5.0)
        assert held, (probe.latest_status(), probe.events)
        time.sleep(1.0)  # longer than any reconnection back-off: still stopped, nothing uploaded
        status = probe.latest_status() or {}
        assert status.get("state") == "fault" and "robot connected and ready" not in probe.events, \
            (status, probe.events)
        assert probe.wait_for(lambda: resend_pub.get_subscription_count() > 0, 10.0)
        resend_pub.publish(Empty())

    _inject_and_check(standin, proc, probe, "program stop", lambda: standin.command("stop_program"), recover=resend)
    # The node is frozen, so it notices only afterwards: the controller's RTDE watchdog stops the arm. Resumed,
    # the node sees it sent nothing for longer than the watchdog's period (or its stream broken): it uploads the
    # script again by itself, no resend needed.
    _inject_and_check(standin, proc, probe, "controller watchdog", freeze_node,
                      stop_deadline_s=1.0 / CONTROLLER_WATCHDOG_HZ + 10 * PERIOD_S + SCHEDULING_ALLOWANCE_S)
    # every port closes: nothing reaches the controller, whose RTDE watchdog stops the program
    _inject_and_check(standin, proc, probe, "outage", lambda: standin.command("unreachable 1.0"),
                      stop_deadline_s=1.0 / CONTROLLER_WATCHDOG_HZ + 10 * PERIOD_S + SCHEDULING_ALLOWANCE_S)
    assert proc.alive()


def test_malformed_commands_are_refused_logged_and_survived(system):
    standin, proc, probe = system
    def rejected():
        return (probe.latest_status() or {}).get("rejected_commands", 0)

    bad = [[], [0.1] * 5, [0.1] * 7, [0.0] * 100, [math.inf, 0, 0, 0, 0, 0], [-math.inf] * 6, [math.nan] * 6]
    sends = [(probe.send_velocity, values) for values in bad]
    sends.append((probe.send_torque, [1.0] * 6))  # this robot is configured without torque control
    for send, values in sends:
        # commands are "newest only" (depth 1): one at a time, each until its rejection is counted
        count = rejected()
        for _ in range(5):
            send(values)
            if probe.wait_for(lambda: rejected() > count, 1.0):
                break
        assert rejected() > count, f"{values!r} was not rejected: {probe.latest_status()}"
    # one line per refusal at most, and at most one a second of each kind (the next says how many it held back)
    refused = [(t, msg) for t, level, msg in _node_log(proc) if level == "ERROR" and "refused" in msg]
    for kind in ("velocity", "torque"):
        times = [t for t, msg in refused if msg.startswith(f"{kind} command refused")]
        assert times and all(b - a >= 0.99 for a, b in zip(times, times[1:])), refused
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


def test_out_of_limit_command_is_clamped_to_the_velocity_limit(system, tmp_path):
    # On a fresh node (as in the sim-backend test), so this runs last and replaces the module's node:
    # ur_interface.py logs clamp notes with get_logger().warn(..., throttle_duration_sec=1.0), and rclpy
    # attributes every .warn() call to one call site (its @deprecated wrapper), so after an unthrottled
    # warn (e.g. a watchdog event) that call raises "Requested logging filters cannot be changed between
    # calls" and the node dies. Reported to the lead (fix: .warning() instead of .warn()).
    standin, proc, probe = system
    assert proc.stop() == 0, proc.log()
    probe.statuses.clear()
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": HOST})
    fresh = start_node(node, log_dir=tmp_path, env=loopback_environment())
    _SYSTEM_NODE[0] = fresh  # the fixture stops this one
    _boost(fresh.pid)
    assert probe.wait_ready(90.0, pid=fresh.pid), fresh.log()
    peak = []

    def at_limit() -> bool:  # the 10 rad/s^2 ramp reaches the limit after 0.31 s of the controller's time
        peak.append(standin.state()["reference_qd_rad_s"][0])
        return len(peak) > 20 and peak[-1] >= math.pi - 0.02 and peak[-20] >= math.pi - 0.02
    # until the controller has held the limit for a while (a loaded machine only makes it take longer)
    assert probe.stream_velocity_until([5.0, 0, 0, 0, 0, 0], at_limit, 20.0), max(peak)
    assert max(peak) == pytest.approx(math.pi, abs=0.02)  # UR3 base limit
    assert standin.wait_until(lambda: _at_rest(standin), 3.0)
    assert fresh.alive()


def test_a_configuration_the_robot_refuses_ends_the_node_with_exit_2(tmp_path):
    """A CB3 (125 Hz RTDE) asked for 500 Hz answers and refuses: one error and the process ends with 2, as any
    configuration error (it used to keep running and exit 0 on Ctrl-C). docs/faults.md "configuration_refused_by_robot"."""
    host = "127.0.0.11"
    standin = StandInProcess(personality="cb3", host=host, log_dir=tmp_path)
    try:
        (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": host})  # config/ur3.yaml: 500 Hz
        proc = start_node(node, log_dir=tmp_path, env=loopback_environment())
        try:
            proc.popen.wait(timeout=60)
        finally:
            proc.stop()
        assert proc.popen.returncode == 2, proc.log()
        assert "cannot use the robot as configured" in proc.log() and "rate_hz" in proc.log()
    finally:
        standin.stop()


def test_a_second_client_of_the_controller_ends_with_exit_2_and_the_first_keeps_it(system, tmp_path):
    # A review started a second ur_interface against a controller the first held: it retried for ever, named a
    # fieldbus, and under load took the controller over whenever the first one's watchdog lapsed.
    standin, _, probe = system
    proc = _SYSTEM_NODE[0]  # the node holding the controller now (an earlier test may have replaced the first)
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": HOST})
    second = start_node(node, log_dir=tmp_path / "second", env=loopback_environment())  # the same launch twice
    try:
        second.popen.wait(timeout=90)
    finally:
        second.stop()
    assert second.popen.returncode == 2, second.log()
    assert "Another RTDE client may hold them: only one program may command the robot" in second.log()
    probe.statuses.clear()
    assert proc.alive() and probe.wait_for(lambda: (probe.latest_status() or {}).get("state") == "ready", 10.0), \
        probe.latest_status()  # not taken over (it once alternated with the second, each stopping the other)
