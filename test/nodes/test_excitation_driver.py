"""The excitation node against a stand-in of the official UR driver: prefixed joint names, a trajectory
controller that executes the trajectory, one that is loaded but inactive (nothing moves), and Ctrl-C.

The stand-in publishes /joint_states (names with the driver's tf_prefix, stamps on its own virtual clock) and
subscribes to /scaled_joint_trajectory_controller/joint_trajectory as the driver's controller does.
"""

import threading

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_id.excitation.prbs import PrbsSinusoidSchedule
from robot_dynamics_id.excitation.trajectory_file import save_trajectory
from rdi_test_support.launch_emulation import plan_launch
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

pytestmark = [pytest.mark.ros]

HOME = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])
NAMES = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
         "wrist_3_joint"]
PREFIX = "ur_"
PERIOD_S = 0.01  # the stand-in's joint-state period, on its own (virtual) clock


class DriverStandIn(Node):
    """/joint_states with prefixed names; executes received trajectories when ``active`` (else ignores them)."""

    def __init__(self) -> None:
        super().__init__("driver_stand_in")
        self.active = True
        self.received: list[JointTrajectory] = []
        self._lock = threading.Lock()
        self._t = 0.0
        self._q = HOME.copy()
        self._plan = None  # (start time, times, positions in NAMES order)
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self._pub = self.create_publisher(JointState, "/joint_states", reliable)
        self.create_subscription(JointTrajectory, "/scaled_joint_trajectory_controller/joint_trajectory",
                                 self._on_trajectory, reliable)
        self.create_timer(PERIOD_S, self._tick)
        # what a lab plots and monitors: the excitation's progress (Float64) and its /diagnostics status
        self.fractions: list[float] = []
        self.diagnostics = []
        self.create_subscription(Float64, "/excitation/progress_fraction", lambda m: self.fractions.append(m.data),
                                 reliable)
        self.create_subscription(DiagnosticArray, "/diagnostics", lambda m: self.diagnostics.extend(
            s for s in m.status if s.name == "excitation: trajectory"), reliable)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        with self._lock:
            self.received.append(msg)
            if not self.active:
                return
            if not msg.points:
                self._plan = None  # empty trajectory: stop where it is
                return
            order = [list(msg.joint_names).index(PREFIX + n) for n in NAMES]
            t = np.array([p.time_from_start.sec + p.time_from_start.nanosec * 1e-9 for p in msg.points])
            q = np.array([p.positions for p in msg.points])[:, order]
            self._plan = (self._t, t, q)

    def _tick(self) -> None:
        with self._lock:
            self._t += PERIOD_S
            if self._plan is not None:
                t0, t, q = self._plan
                tau = self._t - t0
                self._q = np.array([np.interp(tau, t, q[:, j]) for j in range(6)])
            msg = JointState(name=[PREFIX + n for n in NAMES], position=self._q.tolist(),
                             velocity=[0.0] * 6, effort=[0.0] * 6)
            msg.header.stamp.sec = int(self._t)
            msg.header.stamp.nanosec = int((self._t % 1.0) * 1e9)
        self._pub.publish(msg)


@pytest.fixture()
def driver():
    if not rclpy.ok():
        rclpy.init()
    node = DriverStandIn()
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = threading.Thread(target=executor.spin, daemon=True)
    thread.start()
    yield node
    executor.shutdown(timeout_sec=2.0)
    thread.join(2.0)
    node.destroy_node()


def _excitation(tmp_path, *overrides):
    schedule = PrbsSinusoidSchedule(duration_s=8.0, start_position_rad=HOME, sinusoid_amplitude_rad=0.2,
                                    prbs_velocity_rad_s=0.2, prbs_register_bits=3, seed=3)
    path = save_trajectory(schedule.to_trajectory(rate_hz=500.0, robot="ur3"), tmp_path / "excitation.yaml")
    plan = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": str(path),
                                                                    "bag": str(tmp_path / "bag")})}
    args = ["-p", "wait_for_subscribers:=[driver_stand_in]", "-p", "trajectory_status_topic:=''", "-p", "start_timeout_s:=1.0",
            "-p", "subscriber_wait_s:=20.0"]
    for item in overrides:
        args += ["-p", item]
    return start_node(plan["excitation"], log_dir=tmp_path, env=loopback_environment(), extra_ros_args=args)


def test_with_the_drivers_prefixed_names_the_trajectory_runs_to_the_end(tmp_path, driver):
    process = _excitation(tmp_path, f"tf_prefix:={PREFIX}")
    try:
        process.popen.wait(timeout=60)
    finally:
        process.stop()
    assert process.popen.returncode == 0, process.log()
    (sent,) = driver.received
    assert list(sent.joint_names) == [PREFIX + n for n in NAMES]
    assert len(sent.points) == 8 * 100 + 1 and len(sent.points[10].accelerations) == 6
    assert "excitation finished" in process.log()
    # ~/progress_fraction: 10 Hz through the 8 s run, never backwards, ending at 1
    fractions = driver.fractions
    assert len(fractions) > 20 and fractions[-1] == 1.0, fractions
    assert all(b >= a for a, b in zip(fractions, fractions[1:])), fractions
    # /diagnostics, 1 Hz: OK while it runs, with the progress and the deviation (rad) in its values
    from robot_dynamics_id.nodes._diagnostics import OK, values_of
    running = [values_of(s) for s in driver.diagnostics if s.level == bytes([OK]) and s.message == "excitation running"]
    assert len(running) >= 3, [(s.level, s.message) for s in driver.diagnostics]
    assert all(0.0 <= float(v["progress_fraction"]) <= 1.0 and float(v["position_error_rad"]) < 0.05
               for v in running), running
    assert {s.hardware_id for s in driver.diagnostics} == {"ur3"}


def test_without_the_prefix_the_names_mismatch_is_named_with_the_fix(tmp_path, driver):
    process = _excitation(tmp_path)
    try:
        process.popen.wait(timeout=60)
    finally:
        process.stop()
    assert process.popen.returncode == 2, process.log()
    assert "prefix 'ur_'" in process.log() and "tf_prefix" in process.log(), process.log()
    assert not driver.received


def test_an_inactive_controller_is_reported_with_the_switch_controllers_call(tmp_path, driver):
    driver.active = False
    process = _excitation(tmp_path, f"tf_prefix:={PREFIX}")
    try:
        process.popen.wait(timeout=60)
    finally:
        process.stop()
    assert process.popen.returncode == 4, process.log()
    log = process.log()
    assert "has not moved" in log and "switch_controllers --activate scaled_joint_trajectory_controller" in log, log
    assert len(driver.received) == 2 and not driver.received[-1].points  # the trajectory, then the stop


def test_ctrl_c_sends_the_stop_and_exits_cancelled(tmp_path, driver):
    process = _excitation(tmp_path, f"tf_prefix:={PREFIX}")
    try:
        assert wait_until(lambda: "sent" in process.log(), 30.0), process.log()
        assert process.stop() == 6, process.log()  # SIGINT
    finally:
        process.stop()
    assert len(driver.received) == 2 and not driver.received[-1].points, driver.received
    assert "cancelled" in process.log()
