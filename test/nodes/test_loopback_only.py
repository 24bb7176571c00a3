"""Nothing leaves loopback: trace the destinations of every packet a node and a client send.

Runs ur_interface (sim) under strace while a client in this process talks to it
over DDS, then checks every sendto/sendmsg/connect destination is 127.0.0.0/8.
The negative case (default discovery multicasting to 239.255.0.1) is NOT run
here, because these machines must send nothing beyond loopback; the parser's
ability to flag it is tested on a recorded line instead.
"""

import shutil

import pytest
import rclpy

from rdi_test_support.launch_emulation import plan_launch
from rdi_test_support.net_trace import destinations, non_loopback_destinations
from robot_dynamics_id.nodes.probe import probe_session
from robot_dynamics_id.ros_processes import loopback_environment, start_node

pytestmark = pytest.mark.ros


def test_parser_flags_multicast_and_accepts_loopback():
    trace = (
        '123 sendto(5, "RTPS"..., 72, 0, {sa_family=AF_INET, sin_port=htons(7400), '
        'sin_addr=inet_addr("239.255.0.1")}, 16) = 72\n'
        '123 sendmsg(6, {msg_name={sa_family=AF_INET, sin_port=htons(7410), '
        'sin_addr=inet_addr("127.0.0.1")}, msg_namelen=16}, 0) = 60\n'
        '124 connect(7, {sa_family=AF_UNIX, sun_path="/dev/shm/x"}, 110) = 0\n'
    )
    assert destinations(trace) == [("sendto", "239.255.0.1"), ("sendmsg", "127.0.0.1")]
    assert non_loopback_destinations(trace) == [("sendto", "239.255.0.1")]


def test_node_and_client_send_only_to_loopback(tmp_path):
    strace = shutil.which("strace")
    assert strace, "strace is required for this test (the Makefile installs it with apt-get)"
    env = loopback_environment()
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    trace_file = tmp_path / "trace.txt"
    proc = start_node(node, log_dir=tmp_path, env=env,
                      prefix=[strace, "-f", "-qq", "-e", "trace=sendto,sendmsg,sendmmsg,connect",
                              "-o", str(trace_file)])
    probe = probe_session(name="loopback_probe")
    try:
        assert probe.wait_ready(90.0), proc.log()  # (proc.pid is strace's, not the node's)
        probe.stream_velocity([0.1, 0, 0, 0, 0, 0], duration_s=0.5)
        assert probe.wait_for(lambda: len(probe.joint_arrays()[0]) > 100, 10.0)
    finally:
        probe.close()
        rclpy.shutdown()
        proc.stop()
    text = trace_file.read_text()
    found = destinations(text)
    assert found, "the trace saw no network sends at all: strace did not trace the node"
    assert any(addr.startswith("127.") for _, addr in found)
    assert non_loopback_destinations(text) == []
