"""torque_logger on a full disk: one clear error, the process ends with 1, what was written stays (no traceback)."""

import errno

import rclpy

from robot_dynamics_id.nodes.torque_logger import TorqueLoggerNode


def _full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


class _Log:
    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        return lambda text: self.lines.append((level, text))


def test_a_full_disk_stops_recording_with_exit_1_and_no_traceback(tmp_path):
    # docs/faults.md row "disk_full_logger"
    rclpy.init(args=["--ros-args", "-p", f"bag_path:={tmp_path / 'bag'}", "-p", "topics:=[/joint_states]"])
    try:
        node = TorqueLoggerNode()
        log = _Log()
        node.get_logger = lambda: log
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
        errors = [text for level, text in log.lines if level == "error"]
        assert len(errors) == 1 and "No space left on device" in errors[0] and "7 messages" in errors[0], log.lines
        assert [text for level, text in log.lines if level == "warning"] == [
            "the bag has no metadata.yaml either (No space left on device); rdi identify reads it without"]
        node.destroy_node()
    finally:
        rclpy.shutdown()
