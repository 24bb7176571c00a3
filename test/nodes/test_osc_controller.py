"""osc_controller as a real process (loopback DDS), started the way control.launch.py starts it.

Default connection ``direct``: the node opens the simulated UR3 itself and runs the law in the robot
loop's cycle. The force-error and timing targets of issue 5 are measured by benchmarks/ and the demo;
these tests check the behaviour a lab relies on: contact is made and held, the task ends cleanly,
bad targets and bad configuration are refused with a message, the robot state topics are published.
"""

import json
import math
import os
import time

import numpy as np
import pinocchio as pin
import pytest
import rclpy
from geometry_msgs.msg import PoseStamped, WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, String

from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = [pytest.mark.ros, pytest.mark.slow]

_RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


def _controller(**arguments):
    (node,) = plan_launch("control.launch.py", {"sim": "true", **arguments})
    assert node.name == "osc_controller" and node.parameter_overrides["robot_connection"] == "direct"
    return node


@pytest.fixture(scope="module")
def probe():
    p = probe_session(name="osc_controller_test_probe")
    p.states = []
    p.create_subscription(String, "/osc_controller/state", lambda m: p.states.append(json.loads(m.data)), _RELIABLE)
    p.target_frame = p.create_publisher(PoseStamped, "/osc_controller/target_frame", _RELIABLE)
    p.target_wrench = p.create_publisher(WrenchStamped, "/osc_controller/target_wrench", _RELIABLE)
    p.numbers = {"force_error_n": [], "position_error_m": []}
    for topic, values in p.numbers.items():
        p.create_subscription(Float64, f"/osc_controller/{topic}", lambda m, v=values: v.append(m.data), _RELIABLE)
    p.commands = []
    p.create_subscription(JointState, "/osc_controller/command", p.commands.append, _RELIABLE)
    p.diagnostics = []
    p.create_subscription(DiagnosticArray, "/diagnostics", lambda m: p.diagnostics.extend(m.status), _RELIABLE)
    yield p
    p.close()
    rclpy.shutdown()


def test_polishing_makes_contact_holds_the_force_and_ends_cleanly(tmp_path, probe):
    probe.states.clear()
    probe.diagnostics.clear()
    for values in probe.numbers.values():
        values.clear()
    probe.clear()
    process = start_node(_controller(task="polishing", output_mode="torque"), log_dir=tmp_path,
                         env=loopback_environment(),
                         extra_ros_args=["-p", "robot_parameters:=[supports_torque=true, sim_truth_seed=3]",
                                         "-p", "polishing_duration_s:=6.0", "-p", "exit_when_done:=true"])
    try:
        process.popen.wait(timeout=180)
    finally:
        process.stop()
    log = process.log()
    assert process.popen.returncode == 0, log
    assert "polishing finished" in log, log
    # the stage sequence, as the last state reports it (a probe that matched late misses early events)
    stages = probe.states[-1]["stage_history"] if probe.states else []
    assert any("approach -> impact" in e for e in stages) and any("-> hybrid" in e for e in stages), stages
    hybrid = [s for s in probe.states if s.get("stage") == "hybrid" and "force_error_abs_max_n" in s]
    assert len(hybrid) > 100, f"only {len(hybrid)} states in hybrid control"
    # contact is held through the sliding motion: the worst normal-force error of every cycle after the
    # first second of contact stays well below the 10 N set-point (the 1 N target is the benchmark's)
    worst = max(s["force_error_abs_max_n"] for s in hybrid[50:])
    assert worst < 3.0, f"normal force error reached {worst:.2f} N"
    assert all(s["stopped"] in (None, "polishing finished") for s in probe.states)
    timing = [s for s in probe.states if "period_error_us" in s]
    assert timing and all(s["robot"]["state"] in ("ready", "moving", "stopped") for s in timing)
    # the robot's state topics come from the controller process in direct connection
    t, q, _ = probe.joint_arrays()
    assert t.size > 1000 and np.all(np.diff(t) > 0)
    # the plottable numbers at the state's rate: the normal force error (N, 0 before contact) and the position
    # error (m) of the newest cycle
    force, position = (np.array(probe.numbers[k]) for k in ("force_error_n", "position_error_m"))
    assert force.size > 100 and position.size > 100 and np.all(np.isfinite(force)) and np.all(position >= 0)
    in_contact = force[force != 0.0]
    assert in_contact.size > 100 and np.median(np.abs(in_contact[50:])) < 3.0, in_contact
    # (the norm includes the force-controlled normal axis, where the pose target is not tracked)
    assert 0.0 < np.median(position) < 0.05, np.median(position)
    # /diagnostics: the controller (OK in hybrid control) and the robot loop it owns (direct connection)
    from robot_dynamics_id.nodes._diagnostics import OK
    controller = [s for s in probe.diagnostics if s.name == "osc_controller: controller"]
    assert sum(s.level == bytes([OK]) and s.message == "stage hybrid" for s in controller) >= 2, \
        [(s.level, s.message) for s in controller]
    loop = [s for s in probe.diagnostics if s.name == "osc_controller: robot loop"]
    assert loop and {s.hardware_id for s in loop} == {"ur3 simulated"}


def _start_external(tmp_path, probe, extra=()):
    probe.states.clear()
    process = start_node(_controller(task="external", output_mode="torque"), log_dir=tmp_path,
                         env=loopback_environment(), extra_ros_args=list(extra))
    assert wait_until(lambda: any(s.get("stage") == "free" and "robot" in s for s in probe.states), 90.0), \
        process.log()
    return process


def test_bad_targets_are_refused_with_a_message_and_the_arm_holds(tmp_path, probe):
    process = _start_external(tmp_path, probe,
                              ["-p", "robot_parameters:=[supports_torque=true]", "-p", "max_force_n:=40.0",
                               "-p", "flexible_compensation:=true", "-p", "target_min_z_m:=[0.0]"])
    try:
        # realtime_priority 80 (config/ur3_control.yaml): the executor thread runs SCHED_FIFO 1, below the loop,
        # where the privilege allows it (the node says which)
        log = process.log()
        if "executor threads keep normal scheduling" not in log:
            assert "threads run SCHED_FIFO 1" in log, log
            assert os.sched_getscheduler(process.popen.pid) == os.SCHED_FIFO
            assert os.sched_getparam(process.popen.pid).sched_priority == 1
        assert wait_until(lambda: probe.target_frame.get_subscription_count() > 0
                          and probe.target_wrench.get_subscription_count() > 0, 30.0)
        nan_pose = PoseStamped()
        nan_pose.pose.position.x = math.nan
        nan_pose.pose.orientation.w = 1.0
        # targets keep only the newest (depth 1, like commands): one at a time
        probe.target_frame.publish(nan_pose)
        time.sleep(0.3)
        not_unit = PoseStamped()
        not_unit.pose.position.x, not_unit.pose.position.z = 0.3, 0.3
        not_unit.pose.orientation.w = 0.5
        probe.target_frame.publish(not_unit)
        time.sleep(0.3)
        unreachable = PoseStamped()
        unreachable.pose.position.x = 2.0  # the UR3 reaches 0.5 m
        unreachable.pose.orientation.w = 1.0
        probe.target_frame.publish(unreachable)
        too_strong = WrenchStamped()
        too_strong.wrench.force.z = 100.0
        probe.target_wrench.publish(too_strong)
        time.sleep(0.3)
        probe.target_frame.publish(_goal([0.3, 0.0, -0.05], [0.0, 0.0, 0.0, 1.0]))  # reachable, below the floor
        time.sleep(0.3)
        # both ends above the floor (the tip at ~0.027 m at the start, pointing down, and at the goal, 0.11 m lower
        # and turned horizontal), but the way between may take the tip to ~-0.08 m: refused as a way
        pose = probe.states[-1]["pose"]
        turned = pin.Quaternion(*np.roll(pose["quaternion_xyzw"], 1)) * pin.Quaternion(pin.exp3(np.r_[np.pi / 2, 0, 0]))
        probe.target_frame.publish(_goal(np.subtract(pose["position_m"], [0.0, 0.0, 0.11]), turned.coeffs()))

        def refusals():
            return [e for s in probe.states for e in s.get("events", []) if "refused" in e]

        assert wait_until(lambda: len(refusals()) >= 6, 20.0), (refusals(), process.log())
        text = " | ".join(refusals())
        assert "finite" in text and "unit quaternion" in text and "reach" in text and "max_force_n = 40" in text, text
        assert "puts the motion point at z = -0.0500 m, below the floor target_min_z_m = 0 m" in text, text
        assert "on the way to motion target" in text and "send an intermediate goal" in text, text
        time.sleep(1.0)
        # none of them moved the arm: still holding the start pose, the controller not stopped
        latest = probe.states[-1]
        assert latest["stopped"] is None and latest["position_error_m"] < 0.005, latest
    finally:
        assert process.stop() == 0, process.log()


def test_an_arm_that_starts_below_the_floor_is_not_held_there(tmp_path, probe):
    # the simulated arm starts with its tool tip at z ~ 0.027 m: a floor at 0.05 m has it below from the start
    process = start_node(_controller(task="external", output_mode="torque"), log_dir=tmp_path,
                         env=loopback_environment(), extra_ros_args=["-p", "target_min_z_m:=[0.05]"])
    try:
        assert wait_until(lambda: "the arm starts with its tool tip at z = 0.02" in process.log(), 90.0), \
            process.log()
        assert "below target_min_z_m = 0.05 m: move it above the floor (freedrive or the pendant)" in process.log()
    finally:
        assert process.stop() == 1, process.log()


@pytest.mark.parametrize("overrides, expected", [
    # torque output on a robot without torque control
    (["robot_backend:=rtde", "robot_parameters:=[supports_torque=false]"], ("supports_torque", "output_mode velocity")),
    # a stiffness per joint is required for the flexible compensation
    (["flexible_compensation:=true", "joint_stiffness_nm_per_rad:=[3000.0, 3000.0]"],
     ("joint_stiffness_nm_per_rad", "expected 6")),
    # the collision observer: a model that is not there; a contact task it would take for a collision
    (["collision_model_file:=/nonexistent/model.yaml"], ("collision_model_file", "does not exist")),
    (["collision_model_file:=/nonexistent/model.yaml", "task:=polishing"], ("collision_model_file", "polishing")),
    # the tool from rdi payload: a file that is not there
    (["payload_file:=/nonexistent/payload.yaml"], ("payload_file", "does not exist; write one with `rdi payload")),
    # torque over topics: the transport's delay inside the torque loop (a review's arm oscillated in contact)
    (["robot_connection:=topics"], ("output_mode torque needs robot_connection: direct",)),
    # a floor above the polishing approach's aim (2 cm below polishing_surface_z_m)
    (["task:=polishing", "target_min_z_m:=[0.0]"], ("polishing_surface_z_m", "lower target_min_z_m to at most")),
])
def test_bad_configuration_is_refused_at_start_up(tmp_path, overrides, expected):
    process = start_node(_controller(task="external", output_mode="torque"), log_dir=tmp_path,
                         env=loopback_environment(), extra_ros_args=[x for o in overrides for x in ("-p", o)])
    process.popen.wait(timeout=60)
    assert process.popen.returncode == 2, process.log()
    assert all(text in process.log() for text in expected), process.log()


def _goal(position_m, quaternion_xyzw) -> PoseStamped:
    goal = PoseStamped()
    goal.header.frame_id = "base"
    goal.pose.position.x, goal.pose.position.y, goal.pose.position.z = (float(v) for v in position_m)
    o = goal.pose.orientation
    o.x, o.y, o.z, o.w = (float(v) for v in quaternion_xyzw)
    return goal


def _joint_speed_peak_after(probe, t0_s: float) -> float:
    t, _, qd = probe.joint_arrays()
    return float(np.abs(qd[t > t0_s]).max())


@pytest.mark.parametrize("bounds, smooth", [
    ([], True),  # the defaults: 0.1 m/s, 0.5 m/s^2
    # bounds far above what the 4 cm move needs: the goal is handed to the law almost as a step
    (["target_speed_m_s:=1.0", "target_acceleration_m_s2:=10.0"], False),
])
def test_a_pose_goal_is_reached_along_a_bounded_path_without_a_false_contact(tmp_path, probe, bounds, smooth):
    """A 4 cm goal with a wrench target: the reference moves there within the target_* bounds, so neither the
    joints nor the F/T sensor (the tool's own inertia) see the step; the arm arrives, the contact sequence waits
    in approach (nothing is touched), ~/state says where the arm and the goal are."""
    probe.commands.clear()
    process = _start_external(tmp_path, probe, ["-p", "robot_parameters:=[supports_torque=true, sim_truth_seed=3]"]
                              + [x for b in bounds for x in ("-p", b)])
    try:
        assert wait_until(lambda: probe.target_frame.get_subscription_count() > 0
                          and probe.target_wrench.get_subscription_count() > 0, 30.0)
        assert wait_until(lambda: "pose" in probe.states[-1], 10.0), probe.states[-1]
        start = probe.states[-1]["pose"]
        goal = np.array(start["position_m"]) + [0.0, 0.04, 0.0]
        t_sent, n_sent = probe.joint_arrays()[0][-1], len(probe.states)
        wrench = WrenchStamped()
        wrench.wrench.force.z = 10.0  # starts the contact sequence: approach until the force passes 10 N
        probe.target_wrench.publish(wrench)
        probe.target_frame.publish(_goal(goal, start["quaternion_xyzw"]))

        def arrived():
            s = probe.states[-1]
            return s["stopped"] is not None or ("goal" in s and s["goal"]["at_rest"]
                                                and np.linalg.norm(np.subtract(s["pose"]["position_m"], goal)) < 0.002)

        assert wait_until(arrived, 30.0), (probe.states[-1], process.log())
        time.sleep(0.5)
        latest = probe.states[-1]
        history = latest["stage_history"]
        peak = _joint_speed_peak_after(probe, t_sent)
        worst_force = max(np.linalg.norm(s["contact_wrench_tip_base"][:3]) for s in probe.states[n_sent:])
        if smooth:
            assert latest["stopped"] is None, latest
            assert np.allclose(latest["goal"]["position_m"], goal) and latest["goal"]["remaining_m"] == 0.0
            assert np.linalg.norm(np.subtract(latest["pose"]["position_m"], goal)) < 0.002, latest["pose"]
            # at 0.1 m/s the UR3's joints turn well below 1 rad/s; the tool's inertia stays far below 10 N
            assert peak < 0.6, peak
            assert worst_force < 5.0, worst_force
            assert history and history[-1].startswith("t=") and "free -> approach" in history[-1], history
            # what the loop sent the robot each cycle (torque output: effort, Nm), stamped on the robot's clock
            sent = [m for m in probe.commands if m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec > t_sent]
            stamps = np.array([m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in sent])
            assert len(sent) > 200 and all(len(m.effort) == 6 and not m.velocity for m in sent)
            assert np.all(np.diff(stamps) > 0) and np.all(np.isfinite([m.effort for m in sent]))
        else:  # the step the old controller saw: a false impact or an overspeed stop, or at least a swing
            assert (peak > 1.0 or worst_force > 10.0 or latest["stopped"] is not None
                    or any("impact" in e for e in history)), (peak, worst_force, latest)
    finally:
        process.stop()
