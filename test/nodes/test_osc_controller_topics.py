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
            # holding still over topics: velocity commands stay small (they once rang up to the joint limits: the
            # velocity integrated from the previous command is unstable with the transport's delay)
            assert wait_until(lambda: len(probe.velocity_commands) > 1000, 60.0), ctl.log()
            peaks = [max(abs(v) for v in command) for _, command in probe.velocity_commands[200:]]
            assert sorted(peaks)[len(peaks) // 2] < 0.05 and "controller stopped" not in ctl.log(), \
                (sorted(peaks)[len(peaks) // 2], max(peaks), ctl.log())
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
