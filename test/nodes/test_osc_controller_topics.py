"""osc_controller with ``robot_connection: topics`` beside ur_interface (control.launch.py connection:=topics).

What ``direct`` gets from owning the robot loop, the topics connection checks from the robot node's topics: a
robot node running another arm gets no command (exit 2), and a protective stop or a robot node that is gone
stops the controller for good (exit 1), instead of commands streaming on into the void.
"""

import time

import pytest
import rclpy
from geometry_msgs.msg import WrenchStamped
from std_msgs.msg import Float64MultiArray, String

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.node_launch import package_share
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = [pytest.mark.ros, pytest.mark.slow]


@pytest.fixture(scope="module")
def probe():
    p = probe_session(name="osc_topics_test_probe")
    p.velocity_commands = []
    p.create_subscription(Float64MultiArray, "/forward_velocity_controller/commands",
                          lambda m: p.velocity_commands.append((time.monotonic(), list(m.data))), 100)
    p.protective_stop = p.create_publisher(String, "/ur_interface/protective_stop", 10)
    p.target_wrench = p.create_publisher(WrenchStamped, "/osc_controller/target_wrench", 10)
    yield p
    p.close()
    rclpy.shutdown()  # the next module's session initialises its own context


def _start(tmp_path, node, name, *overrides):
    args = [x for o in overrides for x in ("-p", o)]
    return start_node(node, log_dir=tmp_path / name, env=loopback_environment(), extra_ros_args=args)


def test_a_topics_controller_refuses_another_arm_and_stops_on_a_fault_or_a_silent_robot(tmp_path, probe):
    interface, controller = plan_launch("control.launch.py", {"sim": "true", "connection": "topics",
                                                              "output_mode": "velocity", "force_source": "estimated"})
    assert controller.parameter_overrides["robot_connection"] == "topics"
    robot = _start(tmp_path, interface, "robot")
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        # a UR5e model against the UR3 that ur_interface runs: nothing is sent, exit 2 naming both arms
        other = _start(tmp_path, controller, "ur5e", "robot:=ur5e")
        other.popen.wait(60)
        assert other.popen.returncode == 2, other.log()
        assert "runs a ur3 (/ur_interface/status), but the controller's model is of a ur5e" in other.log()
        assert not probe.velocity_commands, probe.velocity_commands[:3]

        # a protective stop reported by ur_interface stops the controller for good (direct does the same)
        # state_timeout_s above a loaded machine's DDS stalls: this part is about the fault
        ctl = _start(tmp_path, controller, "fault", "state_timeout_s:=3.0")
        try:
            # holding still over topics: velocity commands stay small. They once rang up to the joint limits (the
            # measured twist damped through the transport's delay), then, on a 2-core machine where the state
            # arrived tens of ms late, the pose loop rang growing (median 0.05-0.1 rad/s, peaks 0.3 rad/s to the
            # limits): the states are now advanced by the commands over their age (_osc_topics.StateAge)
            assert wait_until(lambda: len(probe.velocity_commands) > 1000, 60.0), ctl.log()
            peaks = [max(abs(v) for v in command) for _, command in probe.velocity_commands[200:]]
            median = sorted(peaks)[len(peaks) // 2]
            assert median < 0.03 and max(peaks) < 0.5 and "controller stopped" not in ctl.log(), \
                (median, max(peaks), ctl.log())
            # a force target starts the approach; the stage line counts time from the first joint state, as
            # direct's robot time does (it once printed the stamp's epoch time)
            target = WrenchStamped()
            target.wrench.force.z = 5.0
            probe.target_wrench.publish(target)
            assert wait_until(lambda: "free -> approach" in ctl.log(), 30.0), ctl.log()
            assert "force target set: approaching the pose goal until the contact force exceeds 10 N" in ctl.log()
            line = next(x for x in ctl.log().splitlines() if "free -> approach" in x)
            assert 0.0 < float(line.split("stage t=")[1].split(" s:")[0]) < 600.0, line
            probe.protective_stop.publish(String(data="test: protective stop"))
            assert wait_until(lambda: "controller stopped: robot fault" in ctl.log(), 30.0), ctl.log()
            assert ctl.alive()  # stopped, not gone: it waits for Ctrl-C, then reports the error
        finally:
            assert ctl.stop() == 1, ctl.log()
    finally:
        robot.stop()

    # a robot node that goes away: the controller stops instead of streaming on
    robot = _start(tmp_path, interface, "robot2")
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        ctl = _start(tmp_path, controller, "gone", "state_timeout_s:=2.0")
        try:
            probe.velocity_commands.clear()
            assert wait_until(lambda: len(probe.velocity_commands) > 20, 60.0), ctl.log()
            robot.kill()
            assert wait_until(lambda: "controller stopped: no joint state for" in ctl.log(), 30.0), ctl.log()
            assert "the robot node is gone or stalled" in ctl.log()
            stopped = time.monotonic()
            time.sleep(1.0)
            after = [v for t, v in probe.velocity_commands if t > stopped + 0.2]
            assert all(not any(v) for v in after), after[:3]  # nothing but the stop's zero velocity
        finally:
            assert ctl.stop() == 1, ctl.log()
    finally:
        robot.kill()


def test_a_topics_controller_runs_at_the_rate_of_the_robot_nodes_files(tmp_path, probe):
    # control.launch.py connection:=topics with a CB3's parameter file (rate_hz 125): the controller takes the
    # rate from the files ur_interface is started from, not its own 500 Hz default
    cb3 = tmp_path / "ur3_cb3.yaml"
    cb3.write_text((package_share() / "config" / "ur3.yaml").read_text().replace("rate_hz: 500.0", "rate_hz: 125.0"))
    interface, controller = plan_launch("control.launch.py", {"sim": "true", "connection": "topics", "config": str(cb3),
                                                              "output_mode": "velocity", "force_source": "sensor"})
    ctl = _start(tmp_path, controller, "cb3")
    try:
        assert wait_until(lambda: "velocity output at 125 Hz to the robot node over topics" in ctl.log(), 60.0), \
            ctl.log()
    finally:
        ctl.stop()


def test_a_command_ur_interface_refused_or_stopped_is_recognised_in_its_status():
    from robot_dynamics_id.nodes._osc_topics import command_refusal

    stopped = {"state": "ready", "event": "command stopped: joint 3 moves at 7.16 rad/s, beyond its velocity limit"}
    assert command_refusal(stopped) == stopped["event"]
    assert command_refusal({"event": "velocity command refused: NaN in the command; arm stopped"})
    assert command_refusal({"event": "watchdog: no command for 40 ms; arm stopped"}) is None
    assert command_refusal({"state": "moving"}) is None


def test_a_late_state_is_advanced_by_the_velocities_commanded_since_it_was_taken():
    import numpy as np
    from robot_dynamics_id.nodes._osc_topics import PREDICTION_MAX_AGE_S, advanced_by_commands

    q = np.array([0.1, -0.2])
    sent_s = np.array([9.0, 10.02, 10.05])  # the first in force when the state was taken at 10.0
    sent = np.array([[1.0, 0.0], [0.0, 2.0], [-1.0, 0.0]])
    # 0.02 s of the first, 0.03 s of the second, 0.01 s of the last
    np.testing.assert_allclose(advanced_by_commands(q, 10.0, 10.06, sent_s, sent), q + [0.02 - 0.01, 0.06])
    assert advanced_by_commands(q, 10.07, 10.06, sent_s, sent) is q  # a stamp ahead of now: not advanced
    assert advanced_by_commands(q, 10.0, 10.0 + PREDICTION_MAX_AGE_S + 0.01, sent_s, sent) is q  # a stall
    assert advanced_by_commands(q, 10.0, 10.06, sent_s[:0], sent[:0]) is q


def test_a_state_age_is_measured_against_the_least_delayed_arrival_whatever_the_senders_clock():
    from robot_dynamics_id.nodes._osc_topics import StateAge

    age = StateAge(window_s=1.0, blocks=4)
    offset = 1.7e9  # a sender clock that started at 0 (a simulation), a receiver on the epoch
    for k in range(500):  # 500 Hz, delays of 2 ms, one stretch of 80 ms
        t = k * 0.002
        age.arrived(t, offset + t + (0.08 if 200 <= k < 260 else 0.002))
    # the state stamped 0.99 s, received 80 ms late, was taken at its stamp + the clock offset + 2 ms
    assert abs(age.stamp_on_local_clock(0.99) - (offset + 0.99 + 0.002)) < 1e-6
    # a sender clock that runs 10 % slow (an overloaded simulation) is followed within the window
    for k in range(500, 2000):
        t = 1.0 + (k - 500) * 0.002 * 0.9
        age.arrived(t, offset + 1.0 + (k - 500) * 0.002 + 0.002)
    error_s = age.stamp_on_local_clock(t) - (offset + 1.0 + 1499 * 0.002 + 0.002)
    assert -0.1 * (1.0 + 1.0 / 4) - 1e-6 < error_s < 0.0, error_s  # the age too long, by the drift over the window
