"""ur_interface as a real process over DDS (loopback), started the way its launch file starts it."""

import math
import os

import numpy as np
import pytest
import rclpy

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = pytest.mark.ros


def _start(tmp_path, extra=None):
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    return start_node(node, log_dir=tmp_path, env=loopback_environment(), extra_ros_args=extra)


@pytest.fixture(scope="module")
def probe():
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    p = probe_session(name="ur_interface_test_probe")
    yield p
    p.close()
    rclpy.shutdown()


@pytest.fixture()
def interface(tmp_path, probe):
    proc = _start(tmp_path)
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), f"ur_interface never became ready:\n{proc.log()}"
        yield proc
    finally:
        code = proc.stop()
        probe.statuses.clear()
        probe.events.clear()
        assert code == 0, f"ur_interface did not exit cleanly ({code}):\n{proc.log()}"


def test_velocity_command_moves_the_joint_then_watchdog_brings_the_arm_to_rest(tmp_path, probe):
    # Timed by the robot's clock (/joint_states stamps, the robot_time_s of the status event), never by the
    # wall clock: on a loaded machine the simulated robot runs slower than the wall clock and the probe sees
    # its stream late. The exact watchdog timing is tested in virtual time (test/hardware/test_safety.py).
    # The probe is a Python publisher on a shared 2-core machine: its 100 Hz stream can stall for more than
    # 40 ms, which (correctly) trips the default watchdog mid-stream, so the test runs with a 100 ms watchdog;
    # if the stream stalled even so, each stop is reported and the run resumes with the next command.
    watchdog_s = 0.1
    speed_rad_s = 0.5
    ramp_s = speed_rad_s / 10.0  # the guard's 10 rad/s^2 acceleration and stopping deceleration
    proc = _start(tmp_path, extra=["-p", f"watchdog_s:={watchdog_s}"])
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), proc.log()
        probe.clear()
        probe.statuses.clear()
        probe.events.clear()
        assert probe.wait_for(lambda: len(probe.joint_arrays()[0]) > 50, 5.0)
        start_q = probe.joint_arrays()[1][-1].copy()

        def at_speed_s() -> float:  # robot time the joint has run at the commanded speed
            t, _, qd = probe.joint_arrays()
            return float(np.sum(np.diff(t)[qd[1:, 0] > speed_rad_s - 0.01])) if len(t) > 1 else 0.0
        # one second at speed on the robot's clock: stalls of the probe's stream stop the arm (reported) and
        # the run resumes with the next command, so the stream lasts as long as it takes
        assert probe.stream_velocity_until([speed_rad_s, 0, 0, 0, 0, 0], lambda: at_speed_s() >= 1.0, 30.0)
        t_last = probe.joint_arrays()[0][-1]  # the robot's clock already passed this at the last command

        def stop_times() -> list[float]:
            # the status's robot time, on the clock of the /joint_states stamps
            return [s["robot_time_s"] + s["stamp_offset_s"] for s in list(probe.statuses)
                    if "watchdog" in s.get("event", "")]
        # The stop after the last command: the probe saw the robot's clock at t_last when it sent it, late, so
        # a stall stop may also come after t_last; the last stop is the one the robot then stays still after.
        def settled() -> bool:
            stops = stop_times()
            return bool(stops) and stops[-1] > t_last and probe.joint_arrays()[0][-1] > stops[-1] + 0.5
        assert probe.wait_for(settled, 10.0), probe.events
        stops = stop_times()
        t_stop = stops[-1]
        t, q, qd = probe.joint_arrays()
        # the joint ran at the commanded speed, and only joint 0 moved
        assert np.max(qd[:, 0]) == pytest.approx(speed_rad_s, abs=0.01)
        assert np.abs(q[-1, 1:] - start_q[1:]).max() < 0.01
        moved = q[-1, 0] - start_q[0]
        assert moved >= speed_rad_s * 1.0 - 0.01, f"joint 0 moved {moved:.4f} rad in 1 s at {speed_rad_s} rad/s"
        # at rest once the stopping ramp is over (robot time, a few cycles of slack)
        after = t > t_stop + ramp_s + 0.02
        assert after.sum() > 10  # a loaded probe may miss samples; the stamps below show the period
        assert np.abs(qd[after]).max() < 0.01, f"still moving: {np.abs(qd[after]).max():.4f} rad/s"
        # stamps strictly increase, spaced at the robot period
        dt = np.diff(t)
        assert np.all(dt > 0)
        assert np.median(dt) == pytest.approx(0.002, abs=1e-4)
    finally:
        assert proc.stop() == 0, proc.log()
        probe.events.clear()


def test_nan_command_is_refused_reported_and_stops_the_arm(interface, probe):
    probe.stream_velocity([0.3, 0, 0, 0, 0, 0], duration_s=0.3)
    probe.send_velocity([math.nan, 0, 0, 0, 0, 0])
    assert probe.wait_for(lambda: any("NaN" in e and "refused" in e for e in probe.events), 5.0), probe.events
    probe.clear()
    assert probe.wait_for(lambda: len(probe.joint_arrays()[0]) > 200, 5.0)
    _, _, qd = probe.joint_arrays()
    assert np.abs(qd[-50:]).max() < 0.01
    assert (probe.latest_status() or {}).get("rejected_commands", 0) >= 1


def test_out_of_limit_command_is_clamped_to_the_velocity_limit(interface, probe):
    probe.clear()
    assert probe.wait_for(lambda: len(probe.joint_arrays()[0]) > 50, 5.0)
    # the 10 rad/s^2 ramp reaches the UR3 base limit, pi rad/s, after 0.31 s of robot time; stream until the
    # joint is at it (a simulated robot on a loaded machine runs slower than the wall clock), then 0.2 s more
    assert probe.stream_velocity_until([5.0, 0, 0, 0, 0, 0],
                                       lambda: probe.joint_arrays()[2][-1, 0] > math.pi - 0.05, 20.0)
    t_top = probe.joint_arrays()[0][-1]
    assert probe.stream_velocity_until([5.0, 0, 0, 0, 0, 0], lambda: probe.joint_arrays()[0][-1] > t_top + 0.2,
                                       20.0)
    _, _, qd = probe.joint_arrays()
    assert qd[:, 0].max() == pytest.approx(math.pi, abs=0.05)
    assert qd[:, 0].max() <= math.pi + 0.02


def test_out_of_limit_command_is_refused_under_refuse_policy(tmp_path, probe):
    proc = _start(tmp_path, extra=["-p", "limit_policy:=refuse"])
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), proc.log()
        probe.clear()
        probe.stream_velocity([5.0, 0, 0, 0, 0, 0], duration_s=0.3)
        assert probe.wait_for(lambda: any("exceeds its limit" in e for e in probe.events), 5.0), probe.events
        _, _, qd = probe.joint_arrays()
        assert np.abs(qd[:, 0]).max() < 0.01
    finally:
        assert proc.stop() == 0
        probe.events.clear()


@pytest.mark.parametrize("override, message", [
    ("robot:=ur4", "unknown robot 'ur4'"),
    ("robot:=/nonexistent/arm.urdf", "neither a known robot"),
    ("velocity_limits_rad_s:=[-1.0,1.0,1.0,1.0,1.0,1.0]", "velocity_limits_rad_s' must be > 0"),
    ("joint_names:=[a,b,c]", "'joint_names' has 3 names, the robot has 6 joints"),
    ("rate_hz:=300.0", "'rate_hz' = 300.0 is not allowed"),
    ("watchdog_s:=5.0", "'watchdog_s' = 5.0 is out of range"),
])
def test_bad_configuration_stops_start_up_naming_the_problem(tmp_path, override, message):
    import subprocess
    import sys
    from pathlib import Path

    from rdi_test_support.launch_emulation import node_command

    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    cmd = node_command(node, executable_dir=Path(sys.executable).parent) + ["-p", override]
    result = subprocess.run(cmd, env=loopback_environment(), capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr


def test_missing_parameter_file_is_named(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "ur_interface")
    result = subprocess.run([exe, "--ros-args", "--params-file", str(tmp_path / "missing.yaml")],
                            env=loopback_environment(), capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "missing.yaml" in result.stderr + result.stdout


def test_malformed_parameter_file_is_refused(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    bad = tmp_path / "bad.yaml"
    bad.write_text("ur_interface:\n  ros__parameters:\n    rate_hz: [500\n")
    exe = str(Path(sys.executable).parent / "ur_interface")
    result = subprocess.run([exe, "--ros-args", "--params-file", str(bad)],
                            env=loopback_environment(), capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "bad.yaml" in result.stderr + result.stdout


def test_diagnostics_and_plottable_topics_report_the_loop_a_trajectory_and_a_refused_command(interface, probe):
    """/diagnostics is OK on a ready arm, turns WARN naming a refused NaN command, and is OK again the next
    report; the Float64 topics carry the loop's period error, the real-time factor and, while a trajectory
    runs, its position error. Waits are on received messages (a loaded machine only makes them later)."""
    from diagnostic_msgs.msg import DiagnosticArray
    from std_msgs.msg import Float64

    from robot_dynamics_id.nodes._diagnostics import OK, WARN, values_of
    from robot_dynamics_id.nodes._trajectory_msgs import TRAJECTORY_TOPIC, message_from_arrays
    from trajectory_msgs.msg import JointTrajectory

    reliable = rclpy.qos.QoSProfile(depth=1000, reliability=rclpy.qos.ReliabilityPolicy.RELIABLE)
    statuses, numbers = [], {"loop_period_error_us": [], "real_time_factor": [], "trajectory_position_error_rad": []}
    subscriptions = [probe.create_subscription(DiagnosticArray, "/diagnostics", lambda m: statuses.extend(
        s for s in m.status if s.name == "ur_interface: robot loop"), reliable)]
    for topic, values in numbers.items():
        subscriptions.append(probe.create_subscription(Float64, f"/ur_interface/{topic}",
                                                       lambda m, values=values: values.append(m.data), reliable))
    trajectory_pub = probe.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, reliable)
    try:
        def timed_ok():  # the loop timing is known from the second report on
            return [s for s in statuses if s.level == bytes([OK]) and values_of(s)["loop_period_error_p99_us"] != "n/a"]
        assert probe.wait_for(timed_ok, 20.0), [(s.level, s.message) for s in statuses]
        ok = timed_ok()[0]
        values = values_of(ok)
        assert ok.hardware_id == "ur3 simulated" and ok.message.startswith("robot loop running"), ok.message
        assert values["state"] in ("ready", "moving") and values["loop_rate_hz"] == "500"
        assert 0.0 <= float(values["loop_period_error_p99_us"]) < 1e6
        assert probe.wait_for(lambda: len(numbers["loop_period_error_us"]) >= 5
                              and len(numbers["real_time_factor"]) >= 2, 10.0), numbers
        assert all(0.0 <= v < 1e6 for v in numbers["loop_period_error_us"])  # µs: below a second
        # robot s per wall s over the last 0.5 s: a starved moment may be near 0, or above 1 when the loop
        # catches up on cycles it was late for; typically it is about 1
        rtf = numbers["real_time_factor"]
        assert all(0.0 < v < 5.0 for v in rtf) and 0.05 < float(np.median(rtf)) < 1.5, rtf

        # a 1 s trajectory of joint 0 by 0.1 rad: its position error is published while it runs, and is small
        assert probe.wait_for(lambda: trajectory_pub.get_subscription_count() > 0, 10.0)
        q0 = probe.joint_arrays()[1][-1]
        t = np.linspace(0.0, 1.0, 11)
        s = 10 * t**3 - 15 * t**4 + 6 * t**5  # quintic from rest to rest
        q = q0 + np.outer(s, [0.1, 0, 0, 0, 0, 0])
        qd = np.outer(30 * t**2 - 60 * t**3 + 30 * t**4, [0.1, 0, 0, 0, 0, 0])
        qdd = np.outer(60 * t - 180 * t**2 + 120 * t**3, [0.1, 0, 0, 0, 0, 0])
        names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                 "wrist_3_joint"]
        trajectory_pub.publish(message_from_arrays(t, q, qd, qdd, names))
        assert probe.wait_for(lambda: abs(probe.joint_arrays()[1][-1][0] - q[-1, 0]) < 0.005, 20.0)
        errors = numbers["trajectory_position_error_rad"]
        assert len(errors) >= 3, errors  # 20 Hz over one robot second (fewer on a slow machine)
        assert all(0.0 <= e < 0.02 for e in errors), errors
        assert probe.wait_for(lambda: values_of(statuses[-1]).get("trajectory_phase") == "succeeded", 10.0)

        # a NaN command: the next report is WARN and says what was refused
        count = len(statuses)
        probe.send_velocity([math.nan, 0, 0, 0, 0, 0])
        assert probe.wait_for(lambda: any(s.level == bytes([WARN]) for s in statuses[count:]), 10.0), \
            [(s.level, s.message) for s in statuses[count:]]
        warned = next(i for i in range(count, len(statuses)) if statuses[i].level == bytes([WARN]))
        assert "1 command refused" in statuses[warned].message and "NaN" in statuses[warned].message, \
            statuses[warned].message
        # one refusal is one report: the one after it is OK again
        assert probe.wait_for(lambda: any(s.level == bytes([OK]) for s in statuses[warned + 1:]), 10.0), \
            [(s.level, s.message) for s in statuses[warned + 1:]]
    finally:
        for subscription in subscriptions:
            probe.destroy_subscription(subscription)
        probe.destroy_publisher(trajectory_pub)
