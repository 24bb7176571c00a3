"""torque_logger throughput over DDS: ur_interface (sim, 500 Hz) -> torque_logger for N seconds.

Counts what reached the bag against what the robot produced (joint-state
stamps are the robot clock: expected = span x 500 + 1), and reports messages/s
and the logger's CPU (user+system time from /proc over the run). The baseline,
measured in the same run, is the bag writer alone (benchmarks/bench_bag_writer.py
has its details): CPU per message without DDS.

    .venv/bin/python benchmarks/bench_torque_logger.py [--seconds 300]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_dynamics_id.ros_processes import use_loopback_here

ENV = use_loopback_here()

import rclpy  # noqa: E402

from robot_dynamics_id.io.bag_reader import open_bag  # noqa: E402
from robot_dynamics_id.io.bag_writer import BagWriter, default_typestore, joint_state  # noqa: E402
from robot_dynamics_id.node_launch import launch_plan as plan_launch  # noqa: E402
from robot_dynamics_id.nodes.probe import RobotProbe  # noqa: E402
from robot_dynamics_id.ros_processes import start_node, wait_until  # noqa: E402

TOPICS = ["/joint_states", "/motor_currents", "/target_moment", "/force_torque_sensor_broadcaster/wrench"]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def writer_baseline(n: int, tmp: str) -> float:
    ts = default_typestore()
    raw = ts.serialize_cdr(joint_state(0, [f"j{i}" for i in range(6)], np.zeros(6), np.zeros(6), np.zeros(6)),
                           "sensor_msgs/msg/JointState")
    t0 = time.process_time()
    with BagWriter(Path(tmp) / "baseline", storage="mcap") as bag:
        bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        for k in range(n):
            bag.write_raw("/joint_states", k * 2_000_000, raw)
    return (time.process_time() - t0) / n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0)
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    rclpy.init()
    probe = RobotProbe(name="bench_logger_probe")
    probe.spin_in_background()
    with tempfile.TemporaryDirectory() as tmp:
        nodes = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": "unused",
                                                                           "bag": str(Path(tmp) / "bag")})}
        interface = start_node(nodes["ur_interface"], log_dir=tmp, env=ENV)
        logger = start_node(nodes["torque_logger"], log_dir=tmp, env=ENV,
                            extra_ros_args=["-p", "topics:=" + "[" + ",".join(TOPICS) + "]"])
        try:
            assert probe.wait_ready(120.0, pid=interface.pid), interface.log()
            assert wait_until(lambda: all(f"recording {t}" in logger.log() for t in TOPICS), 60.0), logger.log()
            cpu0, t0 = cpu_seconds(logger.pid), time.monotonic()
            time.sleep(args.seconds)
            cpu1, t1 = cpu_seconds(logger.pid), time.monotonic()
        finally:
            interface.stop()
            time.sleep(1.0)
            logger.stop()
        counts = {}
        with open_bag(Path(tmp) / "bag") as bag:
            counts = {t: c for t, (_, c) in bag.topics.items()}
            ts = default_typestore()
            stamps = [ts.deserialize_cdr(raw, mt).header.stamp for _, mt, _, raw in bag.messages(["/joint_states"])]
        stamps = np.array([s.sec + s.nanosec * 1e-9 for s in stamps])
        expected = int(round((stamps[-1] - stamps[0]) * 500.0)) + 1
        per_msg = writer_baseline(20000, tmp)
    probe.close()
    rclpy.shutdown()
    total = sum(counts.get(t, 0) for t in TOPICS)
    wall = t1 - t0
    cpu = (cpu1 - cpu0) / wall
    print(f"recorded {len(stamps)} of {expected} joint-state samples ({100 * len(stamps) / expected:.3f} %), "
          f"{expected - len(stamps)} missing; per topic: {counts}")
    print(f"throughput {total / max(stamps[-1] - stamps[0], 1e-9):.0f} messages/s on {len(TOPICS)} topics; "
          f"logger CPU {100 * cpu:.1f} % of one core over {wall:.0f} s")
    print(f"baseline (bag writer alone, no DDS): {per_msg * 1e6:.1f} us CPU per message; "
          f"logger total per message {1e6 * cpu * wall / max(total, 1):.1f} us "
          f"(ratio {cpu * wall / max(total, 1) / per_msg:.1f}x)")
    return 0 if len(stamps) >= 0.999 * expected else 1


if __name__ == "__main__":
    sys.exit(main())
