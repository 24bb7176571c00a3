"""Collision detection through the real executables: rdi validate --collision-thresholds, then ur_interface with
the observer in its loop (and the collision_monitor node beside it) on the simulated UR3 with an obstacle.

The arm sweeps joint 0 out and back; a soft obstacle (10 N/mm) stands where the middle of the forearm passes
mid-way out. The model is the simulated arm's true one, its thresholds measured by `rdi validate` on a bag of
`rdi simulate-experiment`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import rclpy
import yaml
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Empty, String
from trajectory_msgs.msg import JointTrajectory

from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.node_launch import NodeLaunch, launch_plan
from robot_dynamics_id.nodes._collision_topics import COLLISION_EVENT_QOS
from robot_dynamics_id.nodes._trajectory_msgs import TRAJECTORY_TOPIC, message_from_arrays
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node
from robot_dynamics_id.sim.contacts import SOFT_OBSTACLE, SphereObstacle

pytestmark = [pytest.mark.ros, pytest.mark.slow]

START_Q = np.array([0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0])  # ur_interface's sim_initial_q_rad default
SWEEP_RAD, SWEEP_S = 0.8, 4.0
CONTACT_AT_RAD = 0.4  # joint 0 when the forearm's middle touches the obstacle
OBSTACLE_RADIUS_M, LINK_RADIUS_M = 0.05, 0.04


def _sweep_message(names) -> JointTrajectory:
    """Joint 0 out by SWEEP_RAD and back, quintic, SWEEP_S each way; the other joints hold."""
    s = np.linspace(0.0, 1.0, 51)
    shape, rate, accel = 10 * s**3 - 15 * s**4 + 6 * s**5, (30 * s**2 - 60 * s**3 + 30 * s**4), (
        60 * s - 180 * s**2 + 120 * s**3)
    t = np.r_[s * SWEEP_S, SWEEP_S + s[1:] * SWEEP_S]
    j0 = np.r_[shape, 1 - shape[1:]] * SWEEP_RAD
    v0 = np.r_[rate, -rate[1:]] * SWEEP_RAD / SWEEP_S
    a0 = np.r_[accel, -accel[1:]] * SWEEP_RAD / SWEEP_S**2
    q = np.tile(START_Q, (t.size, 1))
    q[:, 0] += j0
    qd, qdd = np.zeros_like(q), np.zeros_like(q)
    qd[:, 0], qdd[:, 0] = v0, a0
    return message_from_arrays(t, q, qd, qdd, names)


def _obstacle(model: DynamicModel) -> SphereObstacle:
    robot = model.robot_model()
    m, d = robot.model, robot.model.createData()
    point = 0.5 * np.asarray(m.jointPlacements[4].translation)  # middle of the forearm (link 3)
    q = START_Q.copy()
    q[0] = CONTACT_AT_RAD
    pin.forwardKinematics(m, d, q)
    position = d.oMi[3].act(point)
    ahead = np.cross([0.0, 0.0, 1.0], position)  # joint 0 turns about the vertical: the point moves this way
    ahead[2] = 0.0
    ahead /= np.linalg.norm(ahead)
    centre = position + (OBSTACLE_RADIUS_M + LINK_RADIUS_M) * ahead
    return SphereObstacle(link=3, point_m=tuple(point), centre_m=tuple(centre), radius_m=OBSTACLE_RADIUS_M,
                          material=SOFT_OBSTACLE, link_radius_m=LINK_RADIUS_M)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The simulated arm's true model with thresholds from `rdi validate`, and the obstacle file."""
    folder = tmp_path_factory.mktemp("collision")
    rdi = str(Path(sys.executable).parent / "rdi")
    env = loopback_environment()
    model_path, bag = folder / "model.yaml", folder / "bag"
    for args in (["simulate-experiment", "--excitation", "prbs", "--duration", "8", "--truth-seed", "-1",
                  "--out", str(bag), "--truth-out", str(model_path), "--quiet"],
                 ["validate", "--model", str(model_path), "--data", str(bag), "--out", str(folder / "validation"),
                  "--collision-thresholds"]):
        result = subprocess.run([rdi, *args], env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
    loads = folder / "obstacle.yaml"
    loads.write_text(yaml.safe_dump([_obstacle(DynamicModel.load(model_path)).to_dict()]))
    return model_path, loads


class Recorder:
    """The probe's extra entities (created before it spins): collision events, residual count, trajectory."""

    def __init__(self):
        self.collisions, self.trajectory_status, self.residuals = [], [], 0
        self.diagnostics = []
        self.max_ratio = 0.0

    def setup(self, probe):
        reliable = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        probe.create_subscription(String, "/collision_monitor/collision",
                                  lambda m: self.collisions.append(json.loads(m.data)), COLLISION_EVENT_QOS)
        probe.create_subscription(JointState, "/collision_monitor/residual", self._on_residual, reliable)
        probe.create_subscription(String, "/ur_interface/trajectory_status",
                                  lambda m: self.trajectory_status.append(json.loads(m.data)), reliable)
        self.trajectory_pub = probe.create_publisher(JointTrajectory, TRAJECTORY_TOPIC, reliable)
        self.unlock_pub = probe.create_publisher(Empty, "/ur_interface/unlock_protective_stop", reliable)
        self.other_arm_status_pub = probe.create_publisher(String, "/other_arm/status", reliable)
        probe.create_subscription(DiagnosticArray, "/diagnostics", lambda m: self.diagnostics.extend(m.status),
                                  reliable)

    def diagnosed(self, name, level, text=""):
        """The /diagnostics statuses of ``name`` at ``level`` whose message contains ``text``."""
        return [s for s in list(self.diagnostics) if s.name == name and s.level == bytes([level]) and text in s.message]

    def _on_residual(self, msg):
        self.residuals += 1
        self.max_ratio = max(self.max_ratio, float(np.max(np.abs(msg.effort))))

    def phases(self):
        return [s.get("phase") for s in self.trajectory_status]


@pytest.fixture()
def session():
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    recorder = Recorder()
    probe = probe_session(name="collision_test_probe", setup=recorder.setup)
    yield probe, recorder
    probe.close()
    rclpy.shutdown()


def _start_interface(tmp_path, collision_model="", loads=""):
    (node,) = launch_plan("ur_interface.launch.py", {"sim": "true", "collision_model": str(collision_model)})
    extra = ["-p", f"sim_external_loads_file:={loads}"] if loads else None
    return start_node(node, log_dir=tmp_path, env=loopback_environment(), extra_ros_args=extra)


def _send_sweep(probe, recorder):
    assert probe.wait_for(lambda: recorder.trajectory_pub.get_subscription_count() > 0, 30.0)
    recorder.trajectory_pub.publish(_sweep_message([f"{n}" for n in DynamicModel.nominal("ur3").joint_names]))


def _assert_stopped_by_a_collision(probe, recorder, proc, *, monitor_log=""):
    assert probe.wait_for(lambda: recorder.collisions, 2 * SWEEP_S + 30.0), proc.log() + monitor_log
    event = recorder.collisions[0]
    # the forearm pushes joint 0 back (and joints 1-2 up or down): a shoulder/elbow joint names the contact
    assert event["joint"] in (0, 1, 2) and event["ratio"] >= 1.0
    assert event["contact_link_at_least"] <= 3
    assert probe.wait_for(lambda: "PROTECTIVE_STOP" in str((probe.latest_status() or {}).get("fault")), 10.0), \
        probe.statuses[-3:]
    assert probe.wait_for(lambda: "aborted" in recorder.phases(), 5.0), recorder.trajectory_status[-3:]
    # at rest, short of the sweep's end: stopped at the obstacle
    probe.clear()
    assert probe.wait_for(lambda: len(probe.joint_arrays()[0]) > 100, 10.0)
    _, q, qd = probe.joint_arrays()
    assert np.abs(qd[-50:]).max() < 0.01
    assert CONTACT_AT_RAD - 0.05 < q[-1, 0] < CONTACT_AT_RAD + 0.1
    assert "succeeded" not in recorder.phases()


def test_an_obstacle_in_the_path_stops_the_arm_and_is_reported(tmp_path, files, session):
    probe, recorder = session
    model, loads = files
    proc = _start_interface(tmp_path, model, loads)
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), proc.log()
        _send_sweep(probe, recorder)
        _assert_stopped_by_a_collision(probe, recorder, proc)
        assert recorder.residuals > 100
        # unlocking the protective stop makes the robot ready again. (The arm rests against the soft obstacle:
        # the re-armed observer sees that contact again within a few time constants and stops once more, so
        # the "ready" status may be too brief for a status message; the loop's events show it.)
        recorder.unlock_pub.publish(Empty())
        assert probe.wait_for(lambda: "fault cleared; ready (waiting for a new command)" in probe.events, 10.0), \
            probe.events
        assert probe.events.index("protective stop unlocked") < probe.events.index(
            "fault cleared; ready (waiting for a new command)")
    finally:
        assert proc.stop() == 0, proc.log()


def test_the_sweep_without_an_obstacle_raises_nothing(tmp_path, files, session):
    probe, recorder = session
    model, _ = files
    proc = _start_interface(tmp_path, model)
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), proc.log()
        _send_sweep(probe, recorder)
        assert probe.wait_for(lambda: "succeeded" in recorder.phases(), 2 * SWEEP_S + 30.0), \
            recorder.trajectory_status[-3:]
        assert recorder.collisions == []
        assert recorder.residuals > 2 * SWEEP_S * 100  # monitored all along (500 Hz; a loaded machine drops some)
        assert 0.0 < recorder.max_ratio < 1.0
    finally:
        assert proc.stop() == 0, proc.log()


def test_collision_monitor_beside_ur_interface_stops_the_arm_through_it(tmp_path, files, session):
    probe, recorder = session
    model, loads = files
    proc = _start_interface(tmp_path, "", loads)
    monitor = start_node(NodeLaunch(package="robot_dynamics_id", executable="collision_monitor",
                                    name="collision_monitor", parameter_overrides={"model_file": str(model)}),
                         log_dir=tmp_path, env=loopback_environment())
    try:
        assert probe.wait_ready(90.0, pid=proc.pid), proc.log()
        # monitoring once its rate check has passed: the residual flows
        assert probe.wait_for(lambda: recorder.residuals > 50, 60.0), monitor.log()
        from robot_dynamics_id.nodes._diagnostics import ERROR, OK, WARN
        assert probe.wait_for(lambda: recorder.diagnosed("collision_monitor: observer", OK, "monitoring"), 10.0), \
            [(s.name, s.level, s.message) for s in recorder.diagnostics]
        _send_sweep(probe, recorder)
        _assert_stopped_by_a_collision(probe, recorder, proc, monitor_log=monitor.log())
        assert any("collision" in e for e in probe.events), probe.events
        # /diagnostics: the monitor reports the collision (WARN; at the stamp's clock time), the robot loop its
        # protective stop (ERROR)
        assert probe.wait_for(lambda: recorder.diagnosed("collision_monitor: observer", WARN, " UTC (stamp "),
                              10.0), [(s.name, s.level, s.message) for s in recorder.diagnostics]
        assert probe.wait_for(lambda: recorder.diagnosed("ur_interface: robot loop", ERROR, "protective"), 10.0), \
            [(s.name, s.level, s.message) for s in recorder.diagnostics if s.name.startswith("ur_interface")]
        # a robot_node that is not the robot node's name: a collision would stop nothing, and it says so
        wrong = start_node(NodeLaunch(package="robot_dynamics_id", executable="collision_monitor",
                                      name="collision_monitor_wrong", parameter_overrides={
                                          "model_file": str(model), "robot_node": "/ur_iface"}),
                           log_dir=tmp_path / "wrong", env=loopback_environment())
        try:
            assert probe.wait_for(lambda: "no one subscribes to /ur_iface/protective_stop" in wrong.log(), 60.0), \
                wrong.log()
            assert "no one subscribes" not in monitor.log(), monitor.log()  # the right one's stop is taken
        finally:
            assert wrong.stop() == 0, wrong.log()
    finally:
        assert monitor.stop() == 0, monitor.log()
        assert proc.stop() == 0, proc.log()


def test_collision_monitor_names_missing_samples_and_ends_with_exit_2_beside_another_arm(tmp_path, files, session):
    # A ur3 model's observer on a ur5e's samples would stop the arm at once: the monitor names both arms and
    # ends, exit code 2 (a configuration error, as the controller's), rather than staying up doing nothing.
    probe, recorder = session
    model, _ = files
    monitor = start_node(NodeLaunch(package="robot_dynamics_id", executable="collision_monitor",
                                    name="collision_monitor_other", parameter_overrides={
                                        "model_file": str(model), "robot_node": "/other_arm"}),
                         log_dir=tmp_path, env=loopback_environment())
    try:
        # no robot node publishes: after 5 s the monitor says what it lacks (it used to wait without a word)
        assert probe.wait_for(lambda: "no /joint_states and no /motor_currents in 5 s" in monitor.log(), 60.0), \
            monitor.log()

        def ended() -> bool:
            recorder.other_arm_status_pub.publish(String(data=json.dumps({"robot": "ur5e", "state": "ready"})))
            return not monitor.alive()

        assert probe.wait_for(ended, 60.0), monitor.log()
        assert monitor.popen.returncode == 2, monitor.log()
        assert "the robot node runs a ur5e (/other_arm/status), the model is of a ur3" in monitor.log()
    finally:
        monitor.stop()
