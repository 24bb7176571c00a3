"""CPU of publishing the robot's five state topics at 500 Hz (RobotStateTopics, inline as ur_interface does).

One thread publishes /joint_states, /motor_currents, /target_moment, the wrench and ~/command for ``--samples``
samples paced at 500 Hz, first with no subscriber (the baseline, measured in the same run), then with a raw
EventsExecutor subscriber of all five in another process (as torque_logger subscribes). Prints, per topic, CPU
(``time.thread_time``) and wall time of one ``publish``, and the publishing process's CPU in cores.

    .venv/bin/python benchmarks/bench_state_topics.py [--samples 5000]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from robot_dynamics_id.ros_processes import use_loopback_here

use_loopback_here()

import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402

TOPICS = ["/joint_states", "/motor_currents", "/target_moment", "/force_torque_sensor_broadcaster/wrench",
          "/bench_state_topics/command"]


def subscriber(seconds: float) -> int:
    from geometry_msgs.msg import WrenchStamped
    from rclpy.experimental import EventsExecutor
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node("bench_state_topics_sub")
    qos = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)
    count = [0]
    for topic in TOPICS:
        node.create_subscription(WrenchStamped if "wrench" in topic else JointState, topic,
                                 lambda data: count.__setitem__(0, count[0] + 1), qos, raw=True)
    executor = EventsExecutor()
    executor.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    print(f"  subscriber received {count[0]} messages, {time.process_time():.2f} s CPU", flush=True)
    return 0


def publish(samples: int, with_subscriber: bool) -> None:
    from robot_dynamics_id.hardware.config import UrInterfaceConfig
    from robot_dynamics_id.nodes import _robot_topics
    from robot_dynamics_id.robot_state import RobotState

    node = rclpy.create_node("bench_state_topics_" + ("sub" if with_subscriber else "alone"))
    config = UrInterfaceConfig.from_parameter_files([os.path.join(os.path.dirname(__file__), "..", "config",
                                                                  "ur3.yaml")], {"backend": "sim"})
    topics = _robot_topics.RobotStateTopics(node=node, config=config, inline=True)
    topics._command_pub = node.create_publisher(_robot_topics.JointState, TOPICS[-1], _robot_topics.STATE_QOS)
    pubs = [topics._joint_pub, topics._current_pub, topics._moment_pub, topics._wrench_pub, topics._command_pub]
    sub = None
    if with_subscriber:
        sub = subprocess.Popen([sys.executable, __file__, "--subscriber", str(samples * 0.002 + 20)])
        end = time.monotonic() + 30
        while min(p.get_subscription_count() for p in pubs) < 1 and time.monotonic() < end:
            time.sleep(0.1)
        time.sleep(1.0)
    cpu, wall = np.zeros(len(pubs)), np.zeros(len(pubs))
    for i, pub in enumerate(pubs):
        raw_publish = pub.publish

        def timed(data, i=i, raw_publish=raw_publish):
            c0, w0 = time.thread_time(), time.perf_counter()
            raw_publish(data)
            cpu[i] += time.thread_time() - c0
            wall[i] += time.perf_counter() - w0
        pub.publish = timed
    deadline, c0 = time.perf_counter(), time.process_time()
    for k in range(samples):
        state = RobotState(timestamp_s=k * 0.002, q_rad=np.full(6, k * 1e-3), qd_rad_s=np.ones(6),
                           current_a=np.ones(6), target_moment_nm=np.ones(6), tcp_wrench_base=np.ones(6))
        topics.on_command(state, "velocity", np.ones(6), np.ones(6))
        topics.on_sample(state)
        deadline += 0.002
        time.sleep(max(0.0, deadline - time.perf_counter()))
    process_cpu = time.process_time() - c0
    print(("with a raw subscriber" if with_subscriber else "no subscriber (baseline)") +
          f": publishing process {process_cpu / (samples * 0.002):.3f} core at 500 Hz; load {os.getloadavg()[0]:.2f}")
    for topic, c, w in zip(TOPICS, cpu, wall):
        print(f"  {topic:42s} CPU {c / samples * 1e6:6.1f} us, wall {w / samples * 1e6:6.1f} us per publish")
    node.destroy_node()
    if sub is not None:
        sub.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--subscriber", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.subscriber is not None:
        return subscriber(args.subscriber)
    rclpy.init()
    try:
        publish(args.samples, with_subscriber=False)
        publish(args.samples, with_subscriber=True)
    finally:
        rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
