"""nodes/_cdr_template.py and the state topics' serialized messages: the bytes a typed publish would send."""

from __future__ import annotations

from array import array
from types import SimpleNamespace

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from robot_dynamics_id.nodes._cdr_template import CdrTemplate, CdrTemplateError, sentinel_block
from robot_dynamics_id.nodes._robot_topics import RobotStateTopics, _stamp
from robot_dynamics_id.robot_state import RobotState

NAMES = [f"tool_prefix_joint_{k}" for k in range(6)]


def _joint_state(sec, nanosec, position=(), velocity=(), effort=(), names=NAMES) -> JointState:
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.name = list(names)
    msg.position, msg.velocity, msg.effort = array("d", position), array("d", velocity), array("d", effort)
    return msg


def _template(lengths, names=NAMES) -> CdrTemplate:
    blocks = [sentinel_block(k, m) for k, m in enumerate(lengths)]
    return CdrTemplate(_joint_state(0, 0, *blocks, names=names), lengths)


@pytest.mark.parametrize("lengths", [(6, 6, 6), (0, 0, 6), (6, 6, 0), (0, 6, 0), (6, 0, 6), (0, 0, 0), (7, 3, 1)])
@pytest.mark.parametrize("names", [NAMES, ["a", "bb", "ccc"], []])
def test_joint_state_bytes_equal_the_typed_serialization(lengths, names):
    """Every array shape (empty arrays change the alignment that follows) and name lengths (string padding)."""
    rng = np.random.default_rng(sum(lengths) + len(names))
    template = _template(lengths, names)
    for sec, nanosec in ((1_795_000_000, 999_999_999), (0, 0), (12, 500_000_000)):
        values = [rng.normal(size=m) for m in lengths]
        data = template.fill(sec, nanosec, *values)
        assert data == serialize_message(_joint_state(sec, nanosec, *values, names=names))
        back = deserialize_message(data, JointState)
        assert (back.header.stamp.sec, back.header.stamp.nanosec) == (sec, nanosec)
        assert list(back.name) == names
        for got, want in zip((back.position, back.velocity, back.effort), values):
            np.testing.assert_array_equal(np.asarray(got), want)


def test_wrench_bytes_equal_the_typed_serialization():
    msg = WrenchStamped()
    msg.header.frame_id = "left_base"
    f = sentinel_block(0, 6)
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = f[:3]
    msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = f[3:]
    template = CdrTemplate(msg, (6,))
    w = [1.5, -2.25, 3.0, 0.125, -0.5, 7.0]
    want = WrenchStamped()
    want.header.frame_id = "left_base"
    want.header.stamp.sec, want.header.stamp.nanosec = 42, 7
    want.wrench.force.x, want.wrench.force.y, want.wrench.force.z = w[:3]
    want.wrench.torque.x, want.wrench.torque.y, want.wrench.torque.z = w[3:]
    assert template.fill(42, 7, np.array(w)) == serialize_message(want)


def test_values_of_another_length_are_refused_and_leave_the_template_intact():
    template = _template((6, 6, 6))
    good = template.fill(1, 2, np.ones(6), np.ones(6), np.ones(6))
    with pytest.raises(CdrTemplateError, match="5 values for a block of 6"):
        template.fill(1, 2, np.ones(5), np.ones(6), np.ones(6))
    with pytest.raises(ValueError):  # a block missing
        template.fill(1, 2, np.ones(6), np.ones(6))
    assert template.fill(1, 2, np.ones(6), np.ones(6), np.ones(6)) == good


def test_a_sentinel_missing_from_the_message_is_named():
    msg = _joint_state(0, 0, sentinel_block(0, 6), [0.0] * 6, sentinel_block(2, 6))
    with pytest.raises(CdrTemplateError, match="float64 block 1"):
        CdrTemplate(msg, (6, 6, 6))


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
