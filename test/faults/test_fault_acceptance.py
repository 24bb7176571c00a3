"""Issue 16's findings, each through the real executables (console scripts, loopback DDS, a domain of our own).

Expectations (exit code, the phrase the user sees) come from the fault matrix (fault_matrix.py), which
docs/faults.md is generated from. Controllers are simulated: the MuJoCo backend, or misbehaving RTDE peers
on a 127.x address of their own (rtde_peers.py); never a real robot.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import rclpy
from fault_matrix import row
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rtde_peers import RtdePeer
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_id.excitation.prbs import PrbsSinusoidSchedule
from robot_dynamics_id.excitation.trajectory_file import save_trajectory
from robot_dynamics_id.io.bag_reader import open_bag
from robot_dynamics_id.io.model_file import DynamicModel
from rdi_test_support.launch_emulation import NodeLaunch, package_share, plan_launch
from robot_dynamics_id.nodes._trajectory_msgs import TRAJECTORY_TOPIC, message_from_arrays
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until
from robot_dynamics_id.robots import JOINT_NAMES
from robot_dynamics_id.sim.ur_controller.process import raise_priority

pytestmark = pytest.mark.ros

BIN = Path(sys.executable).parent
#: the simulated UR3's initial pose (ur_interface's sim_initial_q_rad default)
HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
#: the targets of issue 16 are 2 s; a loaded 2-core machine gets this much on top
ALLOWANCE_S = 0.5
_LINE = re.compile(r"\[(INFO|WARN|ERROR)\] \[(\d+\.\d+)\] \[([\w.]+)\]: (.*)")
_RELIABLE = QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE)


def _log(proc) -> list[tuple[str, float, str]]:
    """(level, wall time, message) of every log line of a node process."""
    return [(m.group(1), float(m.group(2)), m.group(4)) for m in map(_LINE.search, proc.log().splitlines()) if m]


def _signal_and_wait(proc, signum: int, timeout_s: float) -> tuple[int | None, float]:
    """Send ``signum`` to the node's process group; (exit code or None, seconds it took)."""
    start = time.monotonic()
    os.killpg(proc.pid, signum)
    try:
        proc.popen.wait(timeout_s)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - start
    return proc.popen.returncode, time.monotonic() - start


def _boost(proc) -> None:
    """Run a node's threads at nice -10, as a robot driver runs at real-time priority: the stop's ramp is on the
    robot's clock, but a 500 Hz stream starved of CPU by other processes on a shared 2-core machine misses
    ur_interface's 40 ms watchdog (best effort; root may do it, as on CI)."""
    try:
        threads = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]  # nice is per thread on Linux
    except OSError:
        return
    for tid in threads:
        raise_priority(-10, tid)


def _settle(count, quiet_s: float = 0.5, timeout_s: float = 10.0) -> None:
    """Wait until ``count()`` (what the probe has received so far) stops growing: on a loaded machine the
    probe's executor may still be working through messages a node published just before it exited."""
    end = time.monotonic() + timeout_s
    last, since = count(), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.05)
        now = count()
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def _probe_entities(p) -> None:
    """The test's own subscriptions and publishers, created before the probe spins (EventsExecutor)."""
    p.commands = []
    p.trajectory_status = []
    p.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                          lambda m: p.commands.append((time.monotonic(), np.array(m.data))), _RELIABLE)
    p.create_subscription(String, "/ur_interface/trajectory_status",
                          lambda m: p.trajectory_status.append(json.loads(m.data)), _RELIABLE)
    p.joint_pub = p.create_publisher(JointState, "/joint_states", _RELIABLE)
    p.trajectory_pub = p.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE))


@pytest.fixture(scope="module")
def probe():
    p = probe_session(name="fault_acceptance_probe", setup=_probe_entities)
    yield p
    p.close()
    rclpy.shutdown()


def _ur_interface_sim(tmp_path, *extra):
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    args = [item for pair in (("-p", e) for e in extra) for item in pair]
    return start_node(node, log_dir=tmp_path, env=loopback_environment(), extra_ros_args=args)


# ---- the robot connection -------------------------------------------------------------------------------------
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_silent_controller_is_reported_and_signals_end_the_node(tmp_path, signum):
    expect = row("rtde_silent_controller")
    with RtdePeer(answer=0) as peer:
        (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": peer.host})
        proc = start_node(node, log_dir=tmp_path, env=loopback_environment())
        try:
            assert wait_until(lambda: expect.phrase in proc.log(), 30.0), proc.log()
            lines = _log(proc)
            started = next(t for _, t, m in lines if m.startswith("ur_interface: robot"))
            warned = next(t for level, t, m in lines if level == "WARN" and expect.phrase in m)
            assert warned - started < 2.0 + ALLOWANCE_S, proc.log()
            assert peer.host in proc.log() and peer.connections >= 1
            code, took = _signal_and_wait(proc, signum, 10.0)
        finally:
            proc.kill()
    assert code == expect.exit, proc.log()
    assert took < 2.0 + ALLOWANCE_S, f"the node took {took:.2f} s to end after {signum!r}"


# ---- configuration --------------------------------------------------------------------------------------------
def _run(executable: str, *ros_args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / executable), "--ros-args", *ros_args], env=loopback_environment(),
                          capture_output=True, text=True, timeout=60)


def test_configuration_mistakes_are_one_line_and_exit_2(tmp_path):
    typo = tmp_path / "typo.yaml"
    typo.write_text("ur_interface:\n  ros__parameters:\n    wachdog_s: 0.1\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("ur_interface:\n  ros__parameters:\n    rate_hz: [500\n")
    bag = tmp_path / "recorded"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    cases = [
        ("rtde_address", "ur_interface", ["-p", "backend:=rtde", "-p", "robot_ip:=not.an.ip",
                                          "-p", "effort_source:=target_moment"]),
        ("unknown_parameter", "ur_interface", ["--params-file", str(typo)]),
        ("wrong_type", "ur_interface", ["-p", "watchdog_s:=abc"]),
        ("malformed_params_file", "ur_interface", ["--params-file", str(broken)]),
        ("missing_params_file", "ur_interface", ["--params-file", str(tmp_path / "missing.yaml")]),
        ("bag_path_unusable", "torque_logger", ["-p", f"bag_path:={bag / 'inner'}"]),
    ]
    for fault_id, executable, args in cases:
        expect = row(fault_id)
        result = _run(executable, *args)
        assert result.returncode == expect.exit, (fault_id, result)
        ours = [line for line in result.stderr.splitlines() if line.startswith(f"{executable}: ")]
        assert len(ours) == 1 and expect.phrase in ours[0], (fault_id, result.stderr)
        assert "Traceback" not in result.stderr + result.stdout, (fault_id, result.stderr)
    assert "did you mean 'watchdog_s'?" in _run("ur_interface", "--params-file", str(typo)).stderr
    assert sorted(p.name for p in bag.iterdir()) == ["metadata.yaml"]  # nothing written into the existing bag


def test_an_integer_for_a_double_is_accepted(tmp_path):
    expect = row("integer_for_double")
    proc = _ur_interface_sim(tmp_path, "rate_hz:=500", "velocity_scale:=1")  # both integers for doubles
    try:
        assert wait_until(lambda: "robot connected and ready" in proc.log(), 60.0), proc.log()
        assert expect.phrase in proc.log()
    finally:
        assert proc.stop() == 0, proc.log()


# ---- compatibility --------------------------------------------------------------------------------------------
def _excitation_file(path: Path, robot: str | None, duration_s: float = 8.0) -> Path:
    schedule = PrbsSinusoidSchedule(duration_s=duration_s, start_position_rad=HOME, sinusoid_amplitude_rad=0.2,
                                    prbs_velocity_rad_s=0.2, prbs_register_bits=3, seed=3)
    return save_trajectory(schedule.to_trajectory(rate_hz=500.0, robot=robot), path)


def _excitation_node(tmp_path, trajectory: Path, *extra: str):
    plan = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": str(trajectory),
                                                                    "bag": str(tmp_path / "bag")})}
    args = ["-p", "trajectory_status_topic:=''"]
    for item in extra:
        args += ["-p", item]
    return start_node(plan["excitation"], log_dir=tmp_path, env=loopback_environment(), extra_ros_args=args)


def test_a_model_or_trajectory_for_another_robot_is_refused(tmp_path):
    model = DynamicModel.nominal("ur10e").save(tmp_path / "ur10e_model.yaml")
    expect = row("model_for_another_robot")
    result = _run("osc_controller", "-p", f"model_file:={model}", "-p", "robot:=ur3")
    assert result.returncode == expect.exit and expect.phrase in result.stderr, result

    expect = row("trajectory_for_another_robot")
    proc = _excitation_node(tmp_path, _excitation_file(tmp_path / "ur10e.yaml", "ur10e"), "robot:=ur3")
    proc.popen.wait(60)
    assert proc.popen.returncode == expect.exit and expect.phrase in proc.log(), proc.log()

    expect = row("trajectory_without_robot")
    unnamed = tmp_path / "unnamed"
    unnamed.mkdir()
    proc = _excitation_node(unnamed, _excitation_file(unnamed / "unnamed.yaml", None), "robot:=ur3")
    try:
        assert wait_until(lambda: expect.phrase in proc.log(), 60.0), proc.log()
        assert "only checked against the ur3 limits" in proc.log() and proc.alive()
    finally:
        assert proc.stop() == 6, proc.log()  # it was waiting for the robot: cancelled before it started


def test_an_interface_of_another_arm_or_lower_limits_gets_nothing(tmp_path):
    expect = row("trajectory_for_another_interface")
    # config/ur3.yaml: robot ur3; velocity_scale 0.05: 0.157 rad/s on the big joints, below the plan's 0.2 rad/s
    robot = _ur_interface_sim(tmp_path / "robot", "velocity_scale:=0.05")
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        assert "a real ur3 is a CB3 (125 Hz, no torque); set rate_hz: 125" in robot.log()  # what the sim allows
        # the excitation's robot parameter is empty (config/excitation.yaml): the file's ur3e is the run's arm
        proc = _excitation_node(tmp_path, _excitation_file(tmp_path / "ur3e.yaml", "ur3e"))
        proc.popen.wait(60)
        assert proc.popen.returncode == expect.exit and expect.phrase in proc.log(), proc.log()
        assert "config:=" in proc.log() and " sent " not in proc.log(), proc.log()
        assert "trajectory 1" not in robot.log(), robot.log()  # no goal reached the robot loop
        expect = row("trajectory_faster_than_interface")
        fast = tmp_path / "fast"
        fast.mkdir()
        proc = _excitation_node(fast, _excitation_file(fast / "ur3.yaml", "ur3"), "move_to_start:=true")
        proc.popen.wait(60)
        assert proc.popen.returncode == expect.exit and expect.phrase in proc.log(), proc.log()
        assert "moving slowly" not in proc.log() and "trajectory 1" not in robot.log(), proc.log()
    finally:
        assert robot.stop() == 0, robot.log()


# ---- signals: one shutdown path -------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_ramps_the_streaming_excitation_out_and_exits_6(tmp_path, probe, signum):
    expect = row("signal_excitation_streaming")
    # 125 Hz (a CB3's rate): a quarter of the CPU, so that other processes on a shared 2-core machine starve
    # the simulated robot and the stream less (a robot silent for 1 s is, rightly, "gone": exit 5)
    robot = _ur_interface_sim(tmp_path / "robot", "rate_hz:=125.0")
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        _boost(robot)
        probe.commands.clear()
        excitation = _excitation_node(tmp_path, _excitation_file(tmp_path / "ex.yaml", "ur3"),
                                      "command_interface:=velocity", "ramp_s:=1.0", "rate_hz:=125.0",
                                      "wait_for_subscribers:=[ur_interface]")
        try:
            assert wait_until(lambda: "excitation started" in excitation.log(), 60.0), excitation.log()
            _boost(excitation)
            assert wait_until(lambda: len(probe.commands) > 190, 30.0)  # > 1.5 s of streaming, past the start ramp
            signalled = time.monotonic()
            code, _ = _signal_and_wait(excitation, signum, 15.0)
        finally:
            excitation.kill()
        _settle(lambda: len(probe.commands))
        log = excitation.log()
        assert code == expect.exit and expect.phrase in log, log
        assert "robot interface is gone" not in log, log
        after = [(t, v) for t, v in probe.commands if t >= signalled]
        speeds = np.array([np.max(np.abs(v)) for _, v in after])
        before = max(np.max(np.abs(v)) for t, v in probe.commands if signalled - 0.5 <= t < signalled)
        assert before > 0.05 and speeds.size > 10, (before, speeds.size)
        # A ramp, not a cut (issue 16: the command stayed frozen, then a hard stop): the stream ends at zero
        # coming from a small speed, more than half the ramp time after the signal. (The speed is not required
        # to fall monotonically: the streamer's position feedback adds speed when the arm lags its plan.)
        assert speeds[-1] == 0.0
        nonzero = speeds[speeds > 0.0]
        assert nonzero.size and nonzero[-1] < 0.25 * before, (nonzero[-5:], before)
        stopped_at = after[int(np.argmax(speeds == 0.0))][0]
        assert stopped_at - signalled > 0.5, "the stream stopped at once instead of ramping over ramp_s (1 s)"
        time.sleep(0.5)
        _settle(lambda: len(probe.joint_arrays()[0]), quiet_s=0.1)
        _, _, qd = probe.joint_arrays()
        assert np.max(np.abs(qd[-1])) < 0.01  # the arm is at rest
    finally:
        assert robot.stop() == 0, robot.log()


@pytest.mark.slow
def test_a_signal_stops_ur_interfaces_trajectory_along_its_path(tmp_path, probe):
    expect = row("signal_ur_interface_trajectory")
    robot = _ur_interface_sim(tmp_path, "rate_hz:=125.0")  # a CB3's rate: less CPU on a shared machine
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        _boost(robot)
        assert probe.wait_for(lambda: probe.trajectory_pub.get_subscription_count() > 0, 10.0)
        probe.clear()
        t = np.linspace(0.0, 6.0, 601)
        shape = 0.5 * (1 - np.cos(np.pi * t / 6.0))
        q = HOME + np.outer(shape, [0.6, 0, 0, 0, 0, 0])
        qd = np.gradient(q, t, axis=0)
        probe.trajectory_status.clear()
        probe.trajectory_pub.publish(message_from_arrays(t, q, qd, np.gradient(qd, t, axis=0), JOINT_NAMES))
        assert probe.wait_for(lambda: any(s.get("phase") == "running" and s.get("time_s", 0) > 2.0
                                          for s in probe.trajectory_status), 30.0), probe.trajectory_status
        code, took = _signal_and_wait(robot, signal.SIGTERM, 10.0)
    finally:
        robot.kill()
    _settle(lambda: len(probe.joint_arrays()[0]) + len(probe.trajectory_status))
    log = robot.log()
    assert code == expect.exit and expect.phrase in log, log
    final = probe.trajectory_status[-1]
    assert final["phase"] == "cancelled" and final["max_position_error_rad"] < 0.05, final
    _, _, velocity = probe.joint_arrays()
    assert np.max(np.abs(velocity[-1])) < 0.01  # it came to rest before the node disconnected


# SIGHUP: the terminal or ssh session that started the recorder closed
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_finishes_the_bag_with_its_metadata(tmp_path, probe, signum):
    expect = row("signal_torque_logger")
    bag = tmp_path / "bag"
    plan = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": "unused.yaml",
                                                                    "bag": str(bag)})}
    proc = start_node(plan["torque_logger"], log_dir=tmp_path, env=loopback_environment(),
                      extra_ros_args=["-p", "topics:=[/joint_states]"])
    try:
        assert wait_until(lambda: "recording /joint_states" in proc.log(), 30.0), proc.log()
        # the probe's own /joint_states subscription counts too: wait for the logger's match as well
        assert probe.wait_for(lambda: probe.joint_pub.get_subscription_count() >= 2 and any(
            i.node_name == "torque_logger" for i in probe.get_subscriptions_info_by_topic("/joint_states")), 10.0)
        for k in range(300):
            msg = JointState(name=list(JOINT_NAMES), position=[0.001 * k] * 6, velocity=[0.0] * 6)
            msg.header.stamp.sec, msg.header.stamp.nanosec = 100 + k // 500, (k % 500) * 2_000_000
            probe.joint_pub.publish(msg)
            time.sleep(0.002)
        time.sleep(0.5)
        code, _ = _signal_and_wait(proc, signum, 15.0)
    finally:
        proc.kill()
    assert code == expect.exit and expect.phrase in proc.log(), proc.log()
    written = int(re.search(r"closed: (\d+) messages", proc.log()).group(1))
    assert written == 300, proc.log()
    assert (bag / "metadata.yaml").is_file()
    with open_bag(bag) as opened:  # a finished bag: every message the logger received, no recovery needed
        assert opened.topics["/joint_states"][1] == written and not opened.warnings


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_cancels_natural_oscillation_with_exit_6(tmp_path, signum):
    expect = row("signal_natural_oscillation")
    # alone, as ros2 run with its config file starts it (natural_oscillation.launch.py adds ur_interface)
    node = NodeLaunch("robot_dynamics_id", "natural_oscillation", "natural_oscillation",
                      parameter_files=[package_share() / "config" / "natural_oscillation.yaml"])
    proc = start_node(node, log_dir=tmp_path, env=loopback_environment())
    try:
        assert wait_until(lambda: "waiting for /joint_states" in proc.log(), 60.0), proc.log()
        code, took = _signal_and_wait(proc, signum, 10.0)
    finally:
        proc.kill()
    assert code == expect.exit and expect.phrase in proc.log(), proc.log()
    assert took < 2.0 + ALLOWANCE_S


# ---- noise on a fault -----------------------------------------------------------------------------------------
def test_a_flood_of_bad_commands_is_one_line_a_second_with_a_count(tmp_path, probe):
    expect = row("command_flood")
    robot = _ur_interface_sim(tmp_path)
    try:
        assert probe.wait_ready(60.0, pid=robot.pid), robot.log()
        stop = threading.Event()

        def flood() -> None:
            while not stop.is_set():
                probe.send_velocity([float("nan")] * 6)
                time.sleep(0.002)

        def refusal_lines() -> int:
            return sum(1 for level, _, m in _log(robot) if level == "ERROR" and "velocity command refused" in m)

        sender = threading.Thread(target=flood)
        started = time.monotonic()
        sender.start()
        # At least 3 s, and until the node has let a second line through: on a loaded machine its executor
        # may take the whole burst in under a second (one line and the count is then right, but says less).
        time.sleep(3.0)
        assert wait_until(lambda: refusal_lines() >= 2, 30.0), robot.log()
        stop.set()
        sender.join()
        flood_s = time.monotonic() - started
        time.sleep(2.0)  # the timer reports the last of the burst
        rejected = probe.latest_status()["rejected_commands"]
        lines = [(level, t, m) for level, t, m in _log(robot) if "velocity command refused" in m]
    finally:
        assert robot.stop() == 0, robot.log()
    errors = [(t, m) for level, t, m in lines if level == "ERROR"]
    assert 2 <= len(errors) <= flood_s + 1, errors  # at most one a second
    # the throttle's clock is read a moment before the logger stamps the line: on a loaded machine the thread
    # may be preempted in between, so the stamps may come closer than the 1 s interval by that moment
    assert all(b - a >= 0.9 for (a, _), (b, _) in zip(errors, errors[1:])), errors
    assert any(expect.phrase in m for _, m in errors[1:])
    held = sum(int(n) for _, _, m in lines for n in re.findall(r"\((\d+) more since", m))
    # every refusal is either a line or counted in one (as many as the probe managed to send on this machine)
    assert rejected > 50 and len(errors) + held == rejected, (rejected, len(errors), held, lines)
    assert not [m for level, _, m in _log(robot) if level == "INFO" and "refused" in m]  # no second line each
