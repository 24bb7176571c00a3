"""The identification experiment as real processes over DDS: ur_interface (sim) + excitation + torque_logger.

Started from launch/experiment.launch.py through the launch emulation (same
executables, same parameter files, same overrides as ``ros2 launch``).
"""

import contextlib
import json
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from diagnostic_msgs.msg import DiagnosticArray
from std_msgs.msg import Float64MultiArray

from robot_dynamics_id.excitation.prbs import PrbsSinusoidSchedule
from robot_dynamics_id.excitation.trajectory_file import save_trajectory
from robot_dynamics_id.io.bag_decode import PARTIAL_EXCITATION, read_bag
from robot_dynamics_id.io.bag_reader import open_bag
from robot_dynamics_id.io.bag_writer import default_typestore
from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = [pytest.mark.ros, pytest.mark.slow]

HOME = [0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0]  # config/ur3.yaml sim_initial_q_rad


def _excitation_file(tmp_path, duration_s):
    schedule = PrbsSinusoidSchedule(duration_s=duration_s, start_position_rad=HOME, sinusoid_amplitude_rad=0.2,
                                    prbs_velocity_rad_s=0.2,
                                    prbs_register_bits=4, seed=3)
    return save_trajectory(schedule.to_trajectory(rate_hz=500.0, robot="ur3"), tmp_path / "excitation.yaml")


def _nodes(tmp_path, duration_s):
    plan = plan_launch("experiment.launch.py", {"sim": "true", "excitation": str(_excitation_file(tmp_path, duration_s)),
                                                "bag": str(tmp_path / "bag")})
    return {n.name: n for n in plan}


def _logged_commands(log: str) -> int:
    """The newest count of velocity commands torque_logger reported in its log."""
    counts = re.findall(r"/forward_velocity_controller/commands: (\d+)", log)
    return int(counts[-1]) if counts else 0


def _read(bag, topic):
    ts = default_typestore()
    out = []
    with open_bag(bag) as source:
        for _, msgtype, t_ns, raw in source.messages([topic]):
            out.append((t_ns, ts.deserialize_cdr(raw, msgtype)))
    return out


@pytest.fixture(scope="module")
def probe():
    commands = []

    def subscribe(p):  # before spinning: the probe then keeps up with 500 Hz commands (EventsExecutor)
        p.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                              lambda m: commands.append(list(m.data)),
                              QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE))
        p.commands = commands
        p.diagnostics = []
        p.create_subscription(DiagnosticArray, "/diagnostics", lambda m: p.diagnostics.extend(m.status),
                              QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))

    p = probe_session(name="experiment_probe", setup=subscribe)
    yield p
    p.close()
    rclpy.shutdown()


@contextlib.contextmanager
def cpu_hogs(count):
    """``count`` busy processes beside the test (a lab PC is never idle): each spins one core."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _stamps_s(messages):
    return np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for _, m in messages])


@pytest.mark.parametrize("hogs", [0, 2])
def test_sixty_second_experiment_records_every_sample_and_every_command(tmp_path, probe, hogs):
    """The trajectory runs inside ur_interface's loop on the robot's clock: with two CPU hogs beside it the
    simulated robot's time may run slower than the wall clock, but no sample is missing and the arm stays on
    its path."""
    nodes = _nodes(tmp_path, 60.0)
    assert set(nodes) == {"ur_interface", "torque_logger", "excitation"}
    env = loopback_environment()
    with cpu_hogs(hogs):
        interface = start_node(nodes["ur_interface"], log_dir=tmp_path, env=env)
        logger = start_node(nodes["torque_logger"], log_dir=tmp_path, env=env)
        excitation = None
        try:
            assert probe.wait_ready(90.0, pid=interface.pid), interface.log()
            assert wait_until(lambda: "recording /joint_states" in logger.log(), 30.0), logger.log()
            excitation = start_node(nodes["excitation"], log_dir=tmp_path, env=env)
            excitation.popen.wait(timeout=400)
            assert excitation.popen.returncode == 0, excitation.log()
            # once ur_interface runs the goal, its status is watched, not the 500 Hz joint states (CPU)
            assert "watching the trajectory through /ur_interface/trajectory_status" in excitation.log()
            time.sleep(1.0)  # let the last messages reach the logger
        finally:
            if excitation is not None:
                excitation.stop()
            assert logger.stop() == 0, logger.log()
            interface.stop()
    bag = tmp_path / "bag"
    assert (bag / "metadata.yaml").is_file(), "a clean stop must finish the bag"
    stamps = _stamps_s(_read(bag, "/joint_states"))
    assert np.all(np.diff(stamps) > 0), "joint-state stamps must strictly increase"
    # every 2 ms robot cycle from the first recorded sample to the last: no gap longer than 2 samples
    assert np.max(np.diff(stamps)) < 3 * 0.002 + 1e-6, f"largest gap {np.max(np.diff(stamps)) * 1e3:.1f} ms"
    assert stamps[-1] - stamps[0] > 60.0
    # the bag holds the trajectory as sent, and what the loop sent the robot in every cycle of the motion
    (sent,) = [m for _, m in _read(bag, "/scaled_joint_trajectory_controller/joint_trajectory")]
    assert len(sent.points) == 60 * 100 + 1
    commands = _read(bag, "/ur_interface/command")
    command_stamps = _stamps_s(commands)
    assert np.all(np.isin(np.round(command_stamps, 4), np.round(stamps, 4))), "commands share the samples' stamps"
    assert np.max(np.diff(command_stamps)) < 0.002 + 1e-6, "a command in every cycle of the motion"
    assert command_stamps[-1] - command_stamps[0] > 59.9  # the 60 s trajectory; its final stop is no velocity
    assert all(len(m.velocity) == 6 and len(m.position) == 6 for _, m in commands[:-1])
    status = [json.loads(m.data) for _, m in _read(bag, "/ur_interface/trajectory_status")]
    finals = [s for s in status if s.get("phase") == "succeeded"]
    assert len(finals) == 1 and finals[0]["max_position_error_rad"] < 0.01, status[-3:]
    progress = [json.loads(m.data) for _, m in _read(bag, "/excitation/progress")]
    assert progress[-1]["phase"] == "done" and progress[-1]["fraction"] == 1.0
    running = [p for p in progress if p.get("stage") == "excitation" and p["phase"] == "running"]
    assert len(running) > 100 and np.all(np.diff([p["fraction"] for p in running]) >= 0)
    assert max(p["position_error_rad"] for p in running) < 0.01


def test_velocity_streaming_option_records_every_command_it_published(tmp_path, probe):
    """command_interface: velocity streams joint velocities as before (for controllers without trajectories)."""
    nodes = _nodes(tmp_path, 15.0)
    env = loopback_environment()
    # Streaming needs three processes scheduled on time at 500 Hz (README: a real-time capable machine): they
    # run at nice -10 here, as a lab would run a streaming chain (nice only warns where it is not permitted).
    boost = ["nice", "-n", "-10"]
    interface = start_node(nodes["ur_interface"], log_dir=tmp_path, env=env, extra_ros_args=["-p", "watchdog_s:=0.2"],
                           prefix=boost)
    logger = start_node(nodes["torque_logger"], log_dir=tmp_path, env=env, extra_ros_args=["-p", "report_period_s:=1.0"],
                        prefix=boost)
    excitation = None
    probe.commands.clear()
    probe.diagnostics.clear()
    try:
        assert probe.wait_ready(90.0, pid=interface.pid), interface.log()
        assert wait_until(lambda: "recording /joint_states" in logger.log(), 30.0), logger.log()
        # The probe below checks the bag against what was published: the excitation waits for it too (else,
        # on a loaded machine, it may match after the logger and miss commands the logger has)
        excitation = start_node(nodes["excitation"], log_dir=tmp_path, env=env, extra_ros_args=[
            "-p", "command_interface:=velocity", "-p", "max_position_error_rad:=1.0",
            "-p", "wait_for_subscribers:=[torque_logger, experiment_probe]"], prefix=boost)
        excitation.popen.wait(timeout=150)
        assert excitation.popen.returncode == 0, excitation.log()
        # the logger reports its counts every second here: wait until it has what the probe saw (a loaded
        # machine may hold the tail in DDS queues a while), at most 30 s
        wait_until(lambda: _logged_commands(logger.log()) >= len(probe.commands) - 2, 30.0)
    finally:
        if excitation is not None:
            excitation.stop()
        assert logger.stop() == 0, logger.log()
        interface.stop()
    bag = tmp_path / "bag"
    recorded = [list(m.data) for _, m in _read(bag, "/forward_velocity_controller/commands")]
    # ~500 commands/s when the machine keeps up; the streamer skips cycles (never queues them) when starved,
    # so the count says how busy the machine was, not whether the stream is recorded: only that it ran
    assert len(recorded) > 100
    # Every command the excitation published (seen by an independent subscriber) is in the bag, in order,
    # from the moment the logger's subscription matched (DDS does not deliver what was published before).
    published = probe.commands
    start = published.index(recorded[0])
    assert start < 50, f"the logger missed the first {start} commands"
    tail = published[start:start + len(recorded)]
    first_difference = next((i for i, (a, b) in enumerate(zip(recorded, tail)) if a != b), None)
    assert first_difference is None, f"bag and published commands differ from command {first_difference}"
    assert abs(len(recorded) - (len(published) - start)) <= 2, (len(recorded), len(published), start)
    progress = [json.loads(m.data) for _, m in _read(bag, "/excitation/progress")]
    assert progress[-1]["phase"] == "done" and progress[-1]["fraction"] >= 0.995
    # the recorder's /diagnostics: per topic counts and rates, the bag's growing size
    from robot_dynamics_id.nodes._diagnostics import values_of
    recorder = [values_of(s) for s in probe.diagnostics if s.name == "torque_logger: recorder"]
    assert len(recorder) >= 5, len(recorder)
    sizes = [float(v["bag_size_mb"]) for v in recorder]
    assert sizes[-1] > sizes[0] and all(b >= a for a, b in zip(sizes, sizes[1:])), sizes
    assert max(float(v["/joint_states rate_hz"]) for v in recorder) > 50.0
    assert int(recorder[-1]["/forward_velocity_controller/commands recorded_messages"]) > 0
    assert all(v["/joint_states lost_messages"] == "0" for v in recorder if "/joint_states lost_messages" in v)


def test_logger_killed_mid_run_keeps_all_but_the_last_second(tmp_path, probe):
    nodes = _nodes(tmp_path, 30.0)
    env = loopback_environment()
    interface = start_node(nodes["ur_interface"], log_dir=tmp_path, env=env)
    logger = start_node(nodes["torque_logger"], log_dir=tmp_path, env=env)
    excitation = None
    try:
        assert probe.wait_ready(90.0, pid=interface.pid), interface.log()
        assert wait_until(lambda: "recording /joint_states" in logger.log(), 30.0), logger.log()
        probe.clear()
        excitation = start_node(nodes["excitation"], log_dir=tmp_path, env=env)
        assert wait_until(lambda: "excitation started" in excitation.log(), 60.0), excitation.log()
        # 15 s before the end: a SIGKILLed recorder's subscription stays in the ROS graph longer than that (its
        # DDS lease), so the excitation must tell from the recorder's silence on /diagnostics (it once exited 0)
        time.sleep(15.0)
        logger.kill()  # SIGKILL: no chance to finish the bag
        # The robot's time at the kill, as an independent subscriber saw it: the stamps are robot time, which
        # falls behind the wall clock when a loaded machine makes the simulator resynchronise.
        robot_t_kill = probe.joint_times_s[-1]
        # the excitation stops the arm once the recorder is silent (5 diagnostics periods), not at the run's end:
        # the rest would be motion nobody records (it used to run on for the last 12 s); exit 4
        excitation.popen.wait(timeout=180)
        assert excitation.popen.returncode == 4 and "excitation stopped: ['torque_logger'] stopped recording" in \
            excitation.log() and "excitation finished" not in excitation.log(), excitation.log()
    finally:
        if excitation is not None:
            excitation.stop()
        interface.stop()
    bag = tmp_path / "bag"
    assert not (bag / "metadata.yaml").exists()  # the recorder died: no metadata
    states = _read(bag, "/joint_states")  # still readable
    stamps = np.array([m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for _, m in states])
    assert np.all(np.diff(stamps) > 0)
    # Everything up to at most 1 s (robot time) before the kill is there, without gaps.
    assert stamps[-1] >= robot_t_kill - 1.0, f"last sample {robot_t_kill - stamps[-1]:.2f} s before the kill"
    dt = np.diff(stamps)
    assert dt.max() < 0.05
    # what identification reads: the bag's last progress message is mid-run, so the reader says it is partial
    recording = read_bag(bag)
    assert any(w.startswith(PARTIAL_EXCITATION) and "excitation stage" in w for w in recording.warnings), \
        recording.warnings


def test_excitation_waits_for_the_recorder_and_gives_up_with_a_clear_error(tmp_path, probe):
    """No command leaves before the recorder subscribes; without it the excitation exits 4 and names it."""
    nodes = _nodes(tmp_path, 10.0)
    excitation = nodes["excitation"]
    assert excitation.parameter_overrides["wait_for_subscribers"] == ["torque_logger"]
    excitation.parameter_overrides["subscriber_wait_s"] = 3.0
    probe.commands.clear()
    process = start_node(excitation, log_dir=tmp_path, env=loopback_environment())
    try:
        process.popen.wait(timeout=60)
    finally:
        process.stop()
    assert process.popen.returncode == 4, process.log()
    assert "['torque_logger']" in process.log() and "wait_for_subscribers" in process.log(), process.log()
    # no trajectory sent while the recorder is missing
    assert "sent" not in process.log(), process.log()
