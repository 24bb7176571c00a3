"""The robot loop against a small kinematic fake robot: commands, watchdog, faults, reconnection."""

import os
import sys
import time

import numpy as np
import pytest

from robot_dynamics_id.hardware.backend import BackendConfigurationError, BackendError, RobotBackend
from robot_dynamics_id.hardware import robot_loop as robot_loop_module
from robot_dynamics_id.hardware.robot_loop import PROGRAM_STOPPED, CycleCommand, LoopState, RobotLoop
from robot_dynamics_id.hardware.safety import CommandRejected, SafetyGuard, SafetyLimits
from robot_dynamics_id.robot_state import RobotState, SafetyMode


class FakeRobot(RobotBackend):
    """speedJ semantics on a double integrator; faults can be injected."""

    supports_torque = False

    def __init__(self, rate_hz=500.0):
        self.rate_hz = rate_hz
        self.q = np.zeros(6)
        self.qd = np.zeros(6)
        self.target = np.zeros(6)
        self.acc = 1.0
        self.t = 0.0
        self.connected = False
        self.fail_reads = False
        self.refuse_connect = 0
        self.safety = int(SafetyMode.NORMAL)
        self.program_running = True
        self.frozen = False
        self.uploads = 0  # connect() calls: each uploads the control script (rtde)
        self.commands = []

    def connect(self):
        if self.refuse_connect > 0:
            self.refuse_connect -= 1
            raise BackendError("unreachable")
        self.connected = True
        self.fail_reads = False
        self.program_running = True
        self.uploads += 1

    def disconnect(self):
        self.connected = False

    def is_connected(self):
        return self.connected

    def read(self):
        if self.fail_reads:
            self.connected = False
            raise BackendError("connection dropped")
        return RobotState(timestamp_s=self.t, q_rad=self.q.copy(), qd_rad_s=self.qd.copy(), safety_mode=self.safety,
                          program_running=self.program_running)

    def speed_j(self, qd, acc):
        self.target, self.acc = np.asarray(qd, float), acc
        self.commands.append(("speedj", np.array(qd)))

    def speed_stop(self, dec):
        self.target, self.acc = np.zeros(6), dec
        self.commands.append(("stop", None))

    def end_cycle(self):
        if self.frozen:  # the robot's stream has no new sample (the arm still moves on its last command)
            return
        dt = 1.0 / self.rate_hz
        step = np.clip(self.target - self.qd, -self.acc * dt, self.acc * dt)
        self.qd = self.qd + step
        self.q = self.q + self.qd * dt
        self.t += dt


def make_loop(robot, **kw):
    limits = SafetyLimits(position_lower_rad=np.full(6, -6.0), position_upper_rad=np.full(6, 6.0),
                          velocity_rad_s=np.full(6, 1.0), acceleration_rad_s2=np.full(6, 10.0),
                          torque_nm=np.full(6, 10.0))
    events = []
    loop = RobotLoop(backend=robot, guard=SafetyGuard(limits=limits, watchdog_s=0.04),
                     on_event=lambda lvl, msg: events.append((lvl, msg)),
                     reconnect_backoff_s=(0.05,), **kw)
    return loop, events


def wait_for(predicate, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return False


def test_velocity_command_moves_and_watchdog_stops():
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        for _ in range(50):  # stream for ~0.5 s at 100 Hz
            loop.submit_velocity(np.array([0.5, 0, 0, 0, 0, 0]))
            time.sleep(0.01)
        assert robot.qd[0] == pytest.approx(0.5, abs=1e-6)
        assert loop.status.state == LoopState.MOVING
        # silence: the watchdog stops the arm
        assert wait_for(lambda: any("watchdog" in m for _, m in events), timeout=1.0)
        assert wait_for(lambda: abs(robot.qd[0]) < 1e-9, timeout=1.0)
    finally:
        loop.stop()
    assert not robot.connected


def test_a_stream_that_ends_on_zero_velocity_is_not_a_watchdog_warning():
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        for speed in [0.3] * 20 + [0.0] * 20:  # an excitation's finish: ramp out, then zeros, then silence
            loop.submit_velocity(np.array([speed, 0, 0, 0, 0, 0]))
            time.sleep(0.01)
        assert wait_for(lambda: any("ended at zero" in m for _, m in events), timeout=1.0), events
        # the last word is info (a stall of this test's own sender mid-stream, on a loaded machine, would be a warning)
        assert events[-1] == ("info", "velocity commands ended at zero (no command for 40 ms); idle"), events
    finally:
        loop.stop()


def test_nan_command_is_refused_and_stops_the_arm():
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        loop.submit_velocity(np.full(6, 0.2))
        time.sleep(0.05)
        with pytest.raises(CommandRejected, match="NaN.*; arm stopped"):
            loop.submit_velocity(np.array([np.nan, 0, 0, 0, 0, 0]))
        assert wait_for(lambda: np.all(np.abs(robot.qd) < 1e-9), timeout=1.0)
        assert loop.status.rejected_commands == 1
        # the caller reports the refusal (it raised to it); the loop adds no second line
        assert not any("refused" in m for _, m in events)
    finally:
        loop.stop()


def test_fault_stops_reconnects_and_never_replays_a_stale_command():
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        loop.submit_velocity(np.full(6, 0.3))
        time.sleep(0.02)
        robot.refuse_connect = 2
        robot.fail_reads = True
        assert wait_for(lambda: loop.status.state == LoopState.CONNECTING)
        assert wait_for(lambda: loop.status.state == LoopState.READY, timeout=3.0)
        n_before = len(robot.commands)
        time.sleep(0.1)
        # nothing was sent after reconnecting: the old command is gone
        assert all(kind == "stop" for kind, _ in robot.commands[n_before:])
        assert any("cannot reach the robot" in m for _, m in events)
        loop.submit_velocity(np.full(6, 0.1))  # a new command is accepted again
        assert wait_for(lambda: loop.status.state == LoopState.MOVING)
    finally:
        loop.stop()


def test_a_configuration_the_robot_refuses_is_a_fault_not_retried_for_ever():
    """A CB3 asked for 500 Hz answers, and refuses: retrying every 5 s would hide a configuration error."""
    robot = FakeRobot()
    calls = []

    def refuse():
        calls.append(1)
        raise BackendConfigurationError("a CB3, whose RTDE runs at 125 Hz, but rate_hz is 500: set rate_hz: 125")

    robot.connect = refuse
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.FAULT)
        time.sleep(0.2)  # four backoffs of 0.05 s: no second attempt
        assert len(calls) == 1 and "set rate_hz: 125" in loop.status.fault
        assert any(level == "error" and "cannot use the robot as configured" in m for level, m in events)
    finally:
        loop.stop()


def test_protective_stop_is_a_fault_until_cleared():
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        loop.submit_velocity(np.full(6, 0.3))
        time.sleep(0.02)
        robot.safety = int(SafetyMode.PROTECTIVE_STOP)
        assert wait_for(lambda: loop.status.state == LoopState.FAULT)
        assert "PROTECTIVE_STOP" in loop.status.fault
        with pytest.raises(CommandRejected, match="not ready"):
            loop.submit_velocity(np.full(6, 0.3))
        robot.safety = int(SafetyMode.NORMAL)
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        time.sleep(0.05)
        assert np.all(robot.target == 0)
    finally:
        loop.stop()


def test_a_program_stopped_on_the_controller_stays_stopped_until_a_restart_is_requested():
    # a stop on the pendant or dashboard (or the RTDE watchdog): the loop must not upload the script again itself
    robot = FakeRobot()
    loop, events = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        assert not loop.request_program_restart()  # nothing to restart
        loop.submit_velocity(np.full(6, 0.3))
        time.sleep(0.02)
        robot.program_running = False
        assert wait_for(lambda: loop.status.state == LoopState.FAULT)
        assert loop.status.fault == PROGRAM_STOPPED
        time.sleep(0.3)  # six reconnection back-offs: none was tried
        assert robot.uploads == 1 and loop.status.state == LoopState.FAULT
        assert loop.request_program_restart()
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        assert robot.uploads == 2 and np.all(robot.target == 0)  # nothing replayed
        # after a protective stop, the unlock leaves the program stopped: that restart is the unlock's
        robot.safety = int(SafetyMode.PROTECTIVE_STOP)
        robot.program_running = False
        assert wait_for(lambda: loop.status.state == LoopState.FAULT)
        robot.safety = int(SafetyMode.NORMAL)
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        assert robot.uploads == 3
    finally:
        loop.stop()


def test_a_late_sample_does_not_stop_a_trajectory_mid_path():
    # The cycle controller (trajectory tracking) commands once per fresh sample. A review's loaded machine delayed
    # the RTDE stream past the 40 ms watchdog: the arm was stopped mid-trajectory, which then carried on.
    robot = FakeRobot()
    loop, events = make_loop(robot, cycle_controller=lambda state: CycleCommand("velocity", np.full(6, 0.2)),
                             on_sample=lambda state: None)  # (the loop tells fresh samples by what it handed on)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.MOVING)
        robot.frozen = True
        time.sleep(0.12)  # three watchdog periods without a new sample
        robot.frozen = False
        time.sleep(0.05)
        assert not any(kind == "stop" for kind, _ in robot.commands), robot.commands[-3:]
        assert not any("watchdog" in message for _, message in events), events
        assert loop.status.state == LoopState.MOVING
    finally:
        loop.stop()


def test_torque_refused_on_a_velocity_only_robot():
    robot = FakeRobot()
    loop, _ = make_loop(robot)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        with pytest.raises(CommandRejected, match="does not accept torque"):
            loop.submit_torque(np.zeros(6))
    finally:
        loop.stop()


def test_cycle_controller_commands_in_the_same_cycle_through_the_guard():
    """The controller's command for sample k is the one the robot gets in cycle k, bounded by the limits."""
    from robot_dynamics_id.hardware.robot_loop import CycleCommand

    robot = FakeRobot()
    seen = []

    def controller(state):
        seen.append(state.timestamp_s)
        # 5 rad/s asked, 1 rad/s allowed; the value encodes which sample it answers
        return CycleCommand("velocity", np.array([5.0, 0.1 + 0.001 * (len(seen) % 7), 0, 0, 0, 0]))

    loop, events = make_loop(robot, cycle_controller=controller)
    loop.start()
    try:
        assert wait_for(lambda: len(robot.commands) > 200)
    finally:
        loop.stop()
    speeds = [c for kind, c in robot.commands if kind == "speedj"]
    assert max(c[0] for c in speeds) == pytest.approx(1.0)  # clamped to the velocity limit
    # the k-th command carries the k-th sample's code: no cycle of delay, none skipped
    codes = [round((c[1] - 0.1) / 0.001) for c in speeds[:150]]
    assert codes == [(k + 1) % 7 for k in range(len(codes))]


def test_cycle_controller_nan_or_stop_brings_the_arm_to_rest():
    from robot_dynamics_id.hardware.robot_loop import CycleCommand

    robot = FakeRobot()
    mode = ["move"]

    def controller(state):
        if mode[0] == "move":
            return CycleCommand("velocity", np.full(6, 0.3))
        if mode[0] == "nan":
            return CycleCommand("velocity", np.array([np.nan, 0, 0, 0, 0, 0]))
        return CycleCommand("stop", reason="task over")

    for last in ("nan", "stop"):
        robot = FakeRobot()
        mode[0] = "move"
        loop, events = make_loop(robot, cycle_controller=controller)
        loop.start()
        try:
            assert wait_for(lambda: robot.qd[0] > 0.29)
            mode[0] = last
            assert wait_for(lambda: np.all(np.abs(robot.qd) < 1e-9), timeout=1.0), last
            assert any(kind == "stop" for kind, _ in robot.commands)
            if last == "nan":
                assert any("NaN" in m for lvl, m in events if lvl == "error"), events
            else:  # a controller that ended its task is not a sender gone silent (this warned after every run)
                time.sleep(0.1)
                assert not any("watchdog" in m for _, m in events), events
                assert loop.status.watchdog == "idle"
        finally:
            loop.stop()


class VirtualTime:
    """The loop's clock and sleep in virtual time: a cycle takes no time, a sleep lasts exactly as asked.

    Makes lateness exact, whatever else the machine runs (a real 12 ms stall would be blurred by the
    machine's own stalls of several ms)."""

    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += max(0.0, seconds)
        time.sleep(0.0001)  # let the test thread run


class StallingRobot(FakeRobot):
    """A robot whose read blocks once for ``stall_s`` of virtual time (a stalled connection or a descheduled
    process)."""

    def __init__(self, clock: VirtualTime, stall_at_read: int, stall_s: float):
        super().__init__()
        self.clock = clock
        self.reads = 0
        self.stall_at_read = stall_at_read
        self.stall_s = stall_s

    def read(self):
        self.reads += 1
        if self.reads == self.stall_at_read:
            self.clock.now += self.stall_s
        return super().read()


def run_through_a_stall(monkeypatch, *, robot_keeps_time: bool) -> RobotLoop:
    """300 cycles at 500 Hz in virtual time; the read of cycle 100 takes 13 ms."""
    clock = VirtualTime()
    monkeypatch.setattr(robot_loop_module, "time", clock)  # the loop's sleeps
    robot = StallingRobot(clock, stall_at_read=101, stall_s=0.013)  # read 1 is the connection's
    robot.robot_keeps_time = robot_keeps_time
    loop, _ = make_loop(robot, clock=clock.monotonic)
    loop.start()
    try:
        assert wait_for(lambda: loop.status.cycles > 300)
    finally:
        loop.stop()
    return loop


def test_cycle_timing_record_shows_the_late_cycles_after_a_stall(monkeypatch):
    loop = run_through_a_stall(monkeypatch, robot_keeps_time=False)
    period = loop.period_s
    starts = loop.cycle_starts_s()
    lateness = loop.cycle_lateness_s()
    assert starts.size == lateness.size == loop.status.cycles
    np.testing.assert_allclose(loop.period_errors_s(), np.diff(starts) - period)
    np.testing.assert_allclose(loop.period_errors_s(10), (np.diff(starts) - period)[-10:])
    assert loop.cycle_starts_s(5).size == 5
    # The cycle after the stall starts 13 - 2 = 11 ms late; a simulated robot's time must keep up, so the loop
    # runs the missed cycles back to back, each one period less late: 11, 9, 7, 5, 3 ms, then 1 ms (on time).
    late = np.flatnonzero(lateness > period)
    np.testing.assert_allclose(lateness[late], [0.011, 0.009, 0.007, 0.005, 0.003], atol=1e-9)
    np.testing.assert_array_equal(late, np.arange(100, 105))
    assert lateness[105] == pytest.approx(0.001, abs=1e-9)
    assert loop.status.late_cycles == 5  # the status counter counts the same cycles
    assert loop.status.skipped_cycles == 0


def test_a_robot_that_keeps_its_own_time_skips_the_missed_cycles_instead_of_replaying_them(monkeypatch):
    loop = run_through_a_stall(monkeypatch, robot_keeps_time=True)
    period = loop.period_s
    lateness = loop.cycle_lateness_s()
    late = np.flatnonzero(lateness > period)
    # one late cycle (11 ms), then straight back in step with the controller: the five deadlines that passed
    # meanwhile are skipped (and counted), not run back to back
    np.testing.assert_array_equal(late, [100])
    assert lateness[100] == pytest.approx(0.011, abs=1e-9)
    assert np.all(np.abs(lateness[101:]) < 0.0011), lateness[101:110]
    assert loop.status.late_cycles == 1
    assert loop.status.skipped_cycles == 5


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="kernel thread names are read from /proc (Linux)")
def test_loop_thread_has_an_os_name_for_kernel_tools():
    loop, _ = make_loop(FakeRobot())
    loop.start()
    try:
        assert wait_for(lambda: loop.status.state == LoopState.READY)
        names = []
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/comm") as f:
                names.append(f.read().strip())
        assert "robot_loop" in names, names
    finally:
        loop.stop()


# ---- the cycle monitor (collision observer's hook), protective stop, synchronous cycles ----------------------

class StoppableRobot(FakeRobot):
    """A fake robot with UR's protective stop: it stops and reports safety mode 3 until unlocked."""

    def __init__(self):
        super().__init__()
        self.protective_stops = 0

    def protective_stop(self):
        self.protective_stops += 1
        self.safety = int(SafetyMode.PROTECTIVE_STOP)
        self.target = np.zeros(6)

    def unlock_protective_stop(self):
        self.safety = int(SafetyMode.NORMAL)


def _moving_loop(robot, monitor):
    commands = []

    def controller(state):
        commands.append(state.timestamp_s)
        return CycleCommand("velocity", np.full(6, 0.5))

    loop, events = make_loop(robot, cycle_controller=controller, cycle_monitor=monitor, clock=lambda: robot.t)
    return loop, events, commands


def test_a_monitor_reason_makes_a_protective_stop_and_a_fault_until_unlocked():
    robot = StoppableRobot()
    seen = []

    def monitor(state):
        seen.append(state.timestamp_s)
        return "collision on joint 2" if abs(state.timestamp_s - 0.1) < 1e-9 else None

    loop, events, commands = _moving_loop(robot, monitor)
    loop.run_cycles(100)  # 0.2 s of robot time, in this thread
    assert robot.protective_stops == 1
    assert len(seen) == 100  # every fresh sample, also while in fault
    assert loop.status.state == LoopState.FAULT and "PROTECTIVE_STOP" in loop.status.fault
    assert any(level == "error" and "collision on joint 2; protective stop" in m for level, m in events)
    assert max(commands) < 0.1 + 1e-9  # the controller commands nothing after the stop
    assert np.all(robot.target == 0) and np.abs(robot.qd).max() < 0.5
    robot.unlock_protective_stop()
    loop.run_cycles(2)
    assert loop.status.state in (LoopState.READY, LoopState.MOVING)


def test_a_robot_without_protective_stop_gets_a_speed_stop():
    robot = FakeRobot()
    loop, events, _ = _moving_loop(robot, lambda s: "contact" if abs(s.timestamp_s - 0.05) < 1e-9 else None)
    loop.run_cycles(26)
    assert loop.status.state == LoopState.FAULT and loop.status.fault == "contact"
    assert robot.commands[-1][0] == "stop"


def test_a_protective_stop_requested_from_another_thread_runs_in_the_next_cycle():
    robot = StoppableRobot()
    loop, events, _ = _moving_loop(robot, None)
    loop.run_cycles(5)
    loop.request_protective_stop("collision reported by collision_monitor")
    loop.run_cycles(1)
    assert robot.protective_stops == 1
    assert any("collision reported by collision_monitor" in m for _, m in events)


def test_run_cycles_reports_a_failing_cycle_as_a_fault():
    robot = FakeRobot()
    loop, _, _ = _moving_loop(robot, None)
    loop.run_cycles(3)
    robot.fail_reads = True
    try:
        loop.run_cycles(1)
    except BackendError as exc:
        assert "connection dropped" in str(exc)
    else:
        raise AssertionError("a failing read must raise")
    assert loop.status.state == LoopState.FAULT
