"""torque_logger's reports of trouble: a full disk (one clear error, exit 1, what was written stays, no traceback)
and messages DDS dropped (a warning while recording)."""

import errno

import pytest
import rclpy

from rdi_test_support.recording_log import RecordingLog
from robot_dynamics_id.nodes.torque_logger import TorqueLoggerNode


def _full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def logger(tmp_path):
    """A torque_logger recording /joint_states, its log kept in ``node.log.lines``."""
    rclpy.init(args=["--ros-args", "-p", f"bag_path:={tmp_path / 'bag'}", "-p", "topics:=[/joint_states]"])
    try:
        node = TorqueLoggerNode()
        node.log = RecordingLog()
        node.get_logger = lambda: node.log
        yield node
        node.destroy_node()
    finally:
        rclpy.shutdown()


def test_a_full_disk_stops_recording_with_exit_1_and_no_traceback(logger):
    # docs/faults.md row "disk_full_logger"
    node = logger
    write = node._writer_for("/joint_states")
    node._counts["/joint_states"] = 7  # what was recorded before the disk filled
    node.bag.write_raw = _full
    write(b"\x00\x01\x00\x00")  # the subscription callback: must not raise (rclpy would print a FATAL)
    assert node.done and node.exit_code == 1 and node._counts["/joint_states"] == 7
    write(b"\x00\x01\x00\x00")  # later messages are dropped quietly, not a second error each
    node.bag.flush_if_due = _full
    node._flush()
    node.bag.close = _full  # finishing the bag fails too: said once, not raised
    node.shutdown()
    assert node.exit_code_when_interrupted == 1
    # one error (what happened, what is kept, the fix), then one warning on the bag's missing metadata
    errors = [text for level, text in node.log.lines if level == "error"]
    assert len(errors) == 1 and "No space left on device" in errors[0] and "7 messages" in errors[0], node.log.lines
    assert [text for level, text in node.log.lines if level == "warning"] == [
        "the bag has no metadata.yaml either (No space left on device); rdi identify reads it without"]


def test_lost_messages_turn_the_report_into_a_warning_naming_the_topic(logger):
    node = logger
    node._counts["/joint_states"] = 900
    node._lost["/joint_states"] = 0
    node._report()
    node._lost["/joint_states"] = 12  # the message-lost event (the recorder fell behind)
    node._report()
    assert node.log.lines[0] == ("info", "recorded /joint_states: 900")
    level, text = node.log.lines[1]
    assert level == "warning" and text.startswith("recorded /joint_states: 900; LOST") and \
        text.endswith("/joint_states: 12"), node.log.lines
    node.bag.close()


def test_a_best_effort_publisher_found_after_the_start_is_recorded(logger):
    """/joint_states is subscribed (reliable) before any publisher exists; a sensor-QoS publisher that appeared
    later was never connected: 0 messages recorded, exit 0, only rcl's "incompatible QoS" line."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    node = logger
    publisher_node = Node("best_effort_driver")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(publisher_node)
    try:
        for _ in range(20):  # the reliable subscription exists before the publisher
            executor.spin_once(timeout_sec=0.01)
        assert "/joint_states" in node._topic_subscriptions and not node._best_effort
        publisher = publisher_node.create_publisher(
            JointState, "/joint_states", QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT))
        for _ in range(3000):  # until 50 messages are recorded (bounded: a failure ends, it does not hang)
            publisher.publish(JointState(name=["shoulder_pan_joint"], position=[0.1]))
            executor.spin_once(timeout_sec=0.005)
            if node._counts["/joint_states"] >= 50:
                break
        assert node._counts["/joint_states"] >= 50, node.log.lines
        assert node._best_effort == {"/joint_states"}
        warnings = [text for level, text in node.log.lines if level == "warning"]
        assert any("a publisher of /joint_states offers best-effort QoS: now recording /joint_states best effort"
                   in text for text in warnings), node.log.lines
    finally:
        executor.shutdown()
        publisher_node.destroy_node()
        node.bag.close()
