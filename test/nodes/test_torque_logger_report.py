"""torque_logger's periodic report: messages DDS dropped are said while recording, as a warning."""

import rclpy

from robot_dynamics_id.nodes.torque_logger import TorqueLoggerNode


class _Log:
    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        return lambda text: self.lines.append((level, text))


def test_lost_messages_turn_the_report_into_a_warning_naming_the_topic(tmp_path):
    rclpy.init(args=["--ros-args", "-p", f"bag_path:={tmp_path / 'bag'}", "-p", "topics:=[/joint_states]"])
    try:
        node = TorqueLoggerNode()
        log = _Log()
        node.get_logger = lambda: log
        node._counts["/joint_states"] = 900
        node._lost["/joint_states"] = 0
        node._report()
        node._lost["/joint_states"] = 12  # the message-lost event (the recorder fell behind)
        node._report()
        assert log.lines[0] == ("info", "recorded /joint_states: 900")
        level, text = log.lines[1]
        assert level == "warning" and text.startswith("recorded /joint_states: 900; LOST") and \
            text.endswith("/joint_states: 12"), log.lines
        node.bag.close()
        node.destroy_node()
    finally:
        rclpy.shutdown()
