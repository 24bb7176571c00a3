"""nodes/_run.run_node: the shutdown path every node process shares."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from robot_dynamics_id.ros_processes import loopback_environment

# A node whose timer callback signals its own process in the middle of a two-step "write", then finishes it.
# An exception raised inside the callback (what a KeyboardInterrupt signal handler does) would leave the write
# half done; the bag writer's records are the real case (a damaged MCAP chunk).
_NODE = textwrap.dedent("""
    import os, signal, sys
    from rclpy.node import Node
    from robot_dynamics_id.nodes._run import run_node

    class Writer(Node):
        def __init__(self):
            super().__init__("run_node_probe")
            self.steps = []
            self.timer = self.create_timer(0.01, self.write)

        def write(self):
            if self.steps:
                return
            self.steps.append("begin")
            os.kill(os.getpid(), signal.{signal})
            for _ in range(1000):  # bytecodes after the signal: the handler would run among them
                pass
            self.steps.append("end")

        def shutdown(self):
            print("steps:", "+".join(self.steps), flush=True)

    sys.exit(run_node(Writer, name="run_node_probe"))
""")


def _run(signal_name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _NODE.format(signal=signal_name)], env=loopback_environment(),
                          capture_output=True, text=True, timeout=60)


def test_a_signal_during_a_callback_lets_the_callback_finish_then_stops_cleanly():
    for name in ("SIGINT", "SIGTERM"):
        result = _run(name)
        assert result.returncode == 0, result.stderr
        assert "steps: begin+end" in result.stdout, (name, result.stdout, result.stderr)


def test_help_answers_and_never_starts_the_node(tmp_path):
    """`torque_logger --help` used to start recording (a 722 MB bag of an idle robot in 24 min)."""
    result = subprocess.run([sys.executable, "-m", "robot_dynamics_id.nodes.torque_logger", "--help"],
                            env=loopback_environment(), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "usage: ros2 run robot_dynamics_id torque_logger --ros-args" in result.stdout
    assert "rdi params torque_logger" in result.stdout
    assert list(tmp_path.iterdir()) == []  # no bags/ folder: nothing was recorded
