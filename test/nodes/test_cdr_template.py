"""nodes/_cdr_template.py and the state topics' serialized messages: the bytes a typed publish puts on the wire
(same length, same values; the padding zeroed where rclpy leaves it uninitialised)."""

from __future__ import annotations

import time
from array import array
from types import SimpleNamespace

import numpy as np
import pytest
import rclpy
from geometry_msgs.msg import WrenchStamped
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState

from robot_dynamics_id.io.bag_writer import default_typestore
from robot_dynamics_id.nodes._cdr_template import CdrTemplate, CdrTemplateError, joint_state_template, wrench_template
from robot_dynamics_id.nodes._robot_topics import RobotStateTopics, _stamp
from robot_dynamics_id.robot_state import RobotState
from robot_dynamics_id.ros_processes import use_loopback_here

NAMES = [f"left_joint_{k}" for k in range(6)]
SHAPES = [(6, 6, 6), (0, 0, 6), (6, 6, 0), (0, 6, 0), (6, 0, 6), (0, 0, 0), (7, 3, 1)]
NAME_SETS = [NAMES, ["a", "bb", "ccc"], []]


def _joint_state(sec, nanosec, position=(), velocity=(), effort=(), names=NAMES) -> JointState:
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.name = list(names)
    msg.position, msg.velocity, msg.effort = array("d", position), array("d", velocity), array("d", effort)
    return msg


def _wrench(sec, nanosec, w, frame_id) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(v) for v in w[:3])
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = (float(v) for v in w[3:])
    return msg


def _canonical(data: bytes, msgtype: str) -> bytes:
    """The bytes with zeroed padding (rosbags' serialization of what they decode to): rclpy's typed publish
    leaves the alignment padding uninitialised, so the wire bytes are compared in this form."""
    ts = default_typestore()
    return bytes(ts.serialize_cdr(ts.deserialize_cdr(data, msgtype), msgtype))


@pytest.fixture(scope="module")
def wire():
    """A function: the bytes a typed rclpy publish of a message puts on the wire (a raw subscription's view)."""
    use_loopback_here()
    rclpy.init()
    node = rclpy.create_node("cdr_template_wire")
    qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
    pairs = {}

    def received(msg) -> bytes:
        kind = type(msg)
        if kind not in pairs:
            got: list[bytes] = []
            topic = f"/cdr_template_{kind.__name__.lower()}"
            node.create_subscription(kind, topic, got.append, qos, raw=True)
            pub = node.create_publisher(kind, topic, qos)
            deadline = time.monotonic() + 10.0
            while pub.get_subscription_count() < 1 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            pairs[kind] = (pub, got)
        pub, got = pairs[kind]
        before = len(got)
        pub.publish(msg)
        deadline = time.monotonic() + 10.0
        while len(got) == before and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        assert len(got) == before + 1, "the typed message did not come back over the loopback"
        return got[-1]

    yield received
    node.destroy_node()
    rclpy.shutdown()


@pytest.mark.parametrize("lengths", SHAPES)
@pytest.mark.parametrize("names", NAME_SETS)
def test_joint_state_bytes_equal_the_typed_publish_on_the_wire(wire, lengths, names):
    """Every array shape (an empty array changes the alignment that follows) and name lengths (string padding);
    the bag reader (rosbags) and rclpy read the values back."""
    rng = np.random.default_rng(sum(lengths) + len(names))
    template = joint_state_template(names, lengths)
    ts = default_typestore()
    for sec, nanosec in ((1_795_000_000, 999_999_999), (0, 0), (12, 500_000_000)):
        values = [rng.normal(size=m) for m in lengths]
        data = template.fill(sec, nanosec, *values)
        sent = wire(_joint_state(sec, nanosec, *values, names=names))
        assert len(data) == len(sent)
        assert data == _canonical(sent, "sensor_msgs/msg/JointState")
        for back in (deserialize_message(data, JointState), ts.deserialize_cdr(data, "sensor_msgs/msg/JointState")):
            assert (back.header.stamp.sec, back.header.stamp.nanosec) == (sec, nanosec)
            assert list(back.name) == names
            for got, want in zip((back.position, back.velocity, back.effort), values):
                np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("frame_id", ["base", "left_base", ""])
def test_wrench_bytes_equal_the_typed_publish_on_the_wire(wire, frame_id):
    template = wrench_template(frame_id)
    w = [1.5, -2.25, 3.0, 0.125, -0.5, 7.0]
    data = template.fill(42, 7, np.array(w))
    sent = wire(_wrench(42, 7, w, frame_id))
    assert len(data) == len(sent)
    assert data == _canonical(sent, "geometry_msgs/msg/WrenchStamped")
    back = default_typestore().deserialize_cdr(data, "geometry_msgs/msg/WrenchStamped")
    assert back.header.frame_id == frame_id and back.wrench.torque.z == 7.0


def test_values_of_another_length_are_refused_and_leave_the_template_intact():
    template = joint_state_template(NAMES, (6, 6, 6))
    good = template.fill(1, 2, np.ones(6), np.ones(6), np.ones(6))
    with pytest.raises(CdrTemplateError, match="5 values for a block of 6"):
        template.fill(1, 2, np.ones(5), np.ones(6), np.ones(6))
    with pytest.raises(ValueError):  # a block missing
        template.fill(1, 2, np.ones(6), np.ones(6))
    assert template.fill(1, 2, np.ones(6), np.ones(6), np.ones(6)) == good


def test_a_sentinel_missing_from_the_bytes_is_named():
    data = joint_state_template(NAMES, (6, 0, 6)).fill(1, 2, np.ones(6), (), np.ones(6))
    with pytest.raises(CdrTemplateError, match="header stamp"):
        CdrTemplate(data, (6, 0, 6))


def test_stamp_carries_a_fraction_that_rounds_to_a_whole_second():
    assert _stamp(5.9999999999) == (6, 0)
    assert _stamp(5.25) == (5, 250_000_000)
    assert _stamp(0.0) == (0, 0)


class _Publisher:
    def __init__(self):
        self.sent: list[bytes] = []

    def publish(self, data):
        assert isinstance(data, bytes)
        self.sent.append(data)


class _Node:
    """Stands in for the node: RobotStateTopics only creates publishers on it."""

    def __init__(self):
        self.publishers: dict[str, _Publisher] = {}

    def create_publisher(self, msg_type, topic, qos):
        return self.publishers.setdefault(topic, _Publisher())


def test_state_topics_publish_every_field_of_the_sample_and_the_commands():
    node = _Node()
    config = SimpleNamespace(joint_names=NAMES, tf_prefix="left_",
                             joint_torque_nm=lambda s: np.asarray(s.current_a) * 10.0)
    topics = RobotStateTopics(node=node, config=config, inline=True)
    state = RobotState(timestamp_s=12.5, q_rad=np.arange(6.0), qd_rad_s=np.arange(6.0) + 10,
                       current_a=np.arange(6.0) + 20, target_moment_nm=np.arange(6.0) + 30,
                       tcp_wrench_base=np.arange(6.0) + 40)
    topics.on_sample(state)
    topics.on_command(state, "velocity", np.full(6, 0.5), reference_rad=np.full(6, 0.25))
    topics.on_command(state, "torque", np.full(6, -1.0))
    p = node.publishers
    js = deserialize_message(p["/joint_states"].sent[0], JointState)
    assert list(js.name) == NAMES
    np.testing.assert_array_equal(js.position, state.q_rad)
    np.testing.assert_array_equal(js.velocity, state.qd_rad_s)
    np.testing.assert_array_equal(js.effort, state.current_a * 10.0)
    stamp = js.header.stamp.sec + js.header.stamp.nanosec * 1e-9
    assert stamp == pytest.approx(12.5 + topics.clock_offset_s, abs=1e-6)
    cur = deserialize_message(p["/motor_currents"].sent[0], JointState)
    mom = deserialize_message(p["/target_moment"].sent[0], JointState)
    assert (len(cur.position), len(cur.velocity), len(mom.position)) == (0, 0, 0)
    np.testing.assert_array_equal(cur.effort, state.current_a)
    np.testing.assert_array_equal(mom.effort, state.target_moment_nm)
    w = deserialize_message(p["/force_torque_sensor_broadcaster/wrench"].sent[0], WrenchStamped)
    assert w.header.frame_id == "left_base" and w.header.stamp == js.header.stamp
    assert [w.wrench.force.x, w.wrench.force.y, w.wrench.force.z, w.wrench.torque.x, w.wrench.torque.y,
            w.wrench.torque.z] == list(state.tcp_wrench_base)
    moving, pushing = (deserialize_message(d, JointState) for d in p["~/command"].sent)
    assert moving.header.stamp == js.header.stamp
    np.testing.assert_array_equal(moving.position, np.full(6, 0.25))
    np.testing.assert_array_equal(moving.velocity, np.full(6, 0.5))
    assert len(moving.effort) == 0 and len(pushing.position) == 0 and len(pushing.velocity) == 0
    np.testing.assert_array_equal(pushing.effort, np.full(6, -1.0))


def test_stamps_never_go_back_when_the_controller_restarts_its_clock():
    # A review restarted the stand-in controller: its clock began again near 0 and the stamps went back 37 s, so
    # a bag across the restart interleaved two sessions once sorted.
    node = _Node()
    config = SimpleNamespace(joint_names=NAMES, tf_prefix="", joint_torque_nm=lambda s: np.asarray(s.current_a))

    def stamp_of(message):
        js = deserialize_message(message, JointState)
        return js.header.stamp.sec + js.header.stamp.nanosec * 1e-9

    topics = RobotStateTopics(node=node, config=config, inline=True)
    for t in (40.0, 40.002, 0.004, 0.006):  # the controller restarted between the 2nd and the 3rd sample
        topics.on_sample(RobotState(timestamp_s=t, q_rad=np.zeros(6), qd_rad_s=np.zeros(6),
                                    current_a=np.zeros(6)))
    stamps = [stamp_of(m) for m in node.publishers["/joint_states"].sent]
    assert np.all(np.diff(stamps) > 0), stamps
    assert stamps[1] - stamps[0] == pytest.approx(0.002, abs=1e-6)  # the robot's clock, within one session
    assert stamps[3] - stamps[2] == pytest.approx(0.002, abs=1e-6)
    assert topics.clock_restarts == 1
