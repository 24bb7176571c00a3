"""CPU per received message of a raw EventsExecutor subscriber, by how run_node spins it.

A publisher process sends the five state topics' worth of traffic (five JointState topics at 500 Hz, 2,500
messages/s, reliable) for ``--seconds``; a subscriber process takes them raw (as torque_logger does) with
rclpy's EventsExecutor, spun either

  spin_once   ``executor.spin_once(timeout_sec=0.1)`` in a Python loop: one callback per iteration (the
              baseline: how run_node spun before)
  until       ``executor.spin_until_future_complete(never, timeout_sec=0.1)``: the executor's own C++ loop
              for up to 0.1 s per call (how run_node spins an EventsExecutor now)

interleaved, ``--runs`` times each. Prints the subscriber's CPU (user + system, start-up included), the
messages received, CPU per message, and the ratio of the medians.

    .venv/bin/python benchmarks/bench_executor_spin.py [--runs 3] [--seconds 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from robot_dynamics_id.ros_processes import use_loopback_here

TOPICS = [f"/bench_executor_spin/state_{i}" for i in range(5)]


def _qos():
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)


def subscriber(mode: str, seconds: float) -> None:
    import rclpy
    from rclpy.experimental import EventsExecutor
    from rclpy.task import Future
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node(f"bench_executor_spin_{mode}")
    count = [0]

    def on_message(_data: bytes) -> None:
        count[0] += 1

    for topic in TOPICS:
        node.create_subscription(JointState, topic, on_message, _qos(), raw=True)
    executor = EventsExecutor()
    executor.add_node(node)
    never = Future()
    end = time.monotonic() + seconds
    while rclpy.ok() and time.monotonic() < end:
        if mode == "until":
            executor.spin_until_future_complete(never, timeout_sec=0.1)
        else:
            executor.spin_once(timeout_sec=0.1)
    print(f"{count[0]} {time.process_time():.4f}", flush=True)
    os._exit(0)  # the measurement is printed; skip rclpy's teardown


def publisher(seconds: float) -> None:
    import rclpy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node("bench_executor_spin_pub")
    pubs = [node.create_publisher(JointState, topic, _qos()) for topic in TOPICS]
    msg = JointState(name=[f"joint_{i}" for i in range(6)], position=[0.1] * 6, velocity=[0.2] * 6,
                     effort=[0.3] * 6)
    t0 = time.monotonic()
    k = 0
    while time.monotonic() - t0 < seconds:
        for pub in pubs:
            pub.publish(msg)
        k += 1
        time.sleep(max(0.0, t0 + k * 0.002 - time.monotonic()))
    time.sleep(0.5)  # let reliable delivery finish
    os._exit(0)


def one_run(mode: str, seconds: float) -> tuple[int, float]:
    me = [sys.executable, __file__]
    sub = subprocess.Popen(me + ["--role", mode, "--seconds", str(seconds + 4.0)], stdout=subprocess.PIPE, text=True)
    time.sleep(3.0)  # the subscriber has started and matched
    subprocess.run(me + ["--role", "pub", "--seconds", str(seconds)], check=True)
    out, _ = sub.communicate(timeout=seconds + 30)
    received, cpu = out.split()
    return int(received), float(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0, help="publishing time per run")
    parser.add_argument("--role", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    use_loopback_here()  # one private domain, inherited by both child processes
    if args.role == "pub":
        publisher(args.seconds)
    elif args.role:
        subscriber(args.role, args.seconds)
    results: dict[str, list[tuple[int, float]]] = {"spin_once": [], "until": []}
    sent = int(args.seconds * 500) * len(TOPICS)
    print(f"{len(TOPICS)} topics x 500 Hz for {args.seconds:g} s (~{sent} messages) per run; {args.runs} runs, "
          f"interleaved; {os.cpu_count()} cores")
    for run in range(args.runs):
        for mode in results:
            received, cpu = one_run(mode, args.seconds)
            results[mode].append((received, cpu))
            print(f"  run {run + 1} {mode:9s} received {received:6d}  subscriber CPU {cpu:6.2f} s  "
                  f"{cpu / max(received, 1) * 1e6:6.1f} µs/message (start-up included)  load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    medians = {}
    for mode, rows in results.items():
        per_message = sorted(cpu / max(received, 1) * 1e6 for received, cpu in rows)
        medians[mode] = per_message[len(per_message) // 2]
        print(f"{mode:9s} median {medians[mode]:6.1f} µs/message  (received {min(r for r, _ in rows)}"
              f"-{max(r for r, _ in rows)})")
    print(f"until / spin_once = {medians['until'] / medians['spin_once']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
