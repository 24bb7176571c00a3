"""Loop timing of the ur_interface node (sim backend, 500 Hz) against an rclpy-timer baseline.

For each run: start ur_interface as its launch file would, let it run for
``--seconds`` (default 30), read the loop's period errors from its status
topic (|measured period - 2 ms| over the newest 5,000 cycles, i.e. the last 10 s), stop it. The baseline,
measured in the same run, is a 500 Hz rclpy timer on a SingleThreadedExecutor
doing nothing (the way a naive node would run its loop). Prints median and p99
per run and across runs, and the ratio of the p99s. Target: node p99 <= 0.5 ms.

    .venv/bin/python benchmarks/bench_ur_interface_loop.py [--runs 3] [--seconds 30]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

from robot_dynamics_id.ros_processes import loopback_environment, reserve_domain_id, start_node

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(reserve_domain_id()))

import rclpy  # noqa: E402  (after the loopback environment is set)

from robot_dynamics_id.node_launch import launch_plan as plan_launch  # noqa: E402
from robot_dynamics_id.nodes.probe import RobotProbe  # noqa: E402


def node_run(seconds: float, log_dir: str, probe: RobotProbe) -> np.ndarray:
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    proc = start_node(node, log_dir=log_dir, env=loopback_environment(),
                      extra_ros_args=["-p", "status_rate_hz:=1.0"])
    try:
        if not probe.wait_ready(60.0, pid=proc.pid):
            raise RuntimeError(proc.log())
        probe.statuses.clear()
        time.sleep(seconds)
        status = probe.latest_status()
    finally:
        proc.stop()
    stats = status.get("period_error_us", {})
    return stats


def baseline_run(seconds: float) -> np.ndarray:
    node = rclpy.create_node("bench_timer_baseline")
    stamps: list[float] = []
    node.create_timer(0.002, lambda: stamps.append(time.monotonic()))
    executor = rclpy.executors.SingleThreadedExecutor()
    executor.add_node(node)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.1)
    executor.shutdown()
    node.destroy_node()
    return np.abs(np.diff(stamps) - 0.002) * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    rclpy.init()
    probe = RobotProbe(name="bench_probe")
    probe.spin_in_background()
    node_p99, node_med, base_p99, base_med = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            stats = node_run(args.seconds, tmp, probe)
            base = baseline_run(min(args.seconds, 10.0))
            node_p99.append(stats["p99"])
            node_med.append(stats["median"])
            base_p99.append(float(np.percentile(base, 99)))
            base_med.append(float(np.median(base)))
            print(f"run {run + 1}: ur_interface period error median {stats['median']:.1f} us, "
                  f"p99 {stats['p99']:.1f} us, max {stats['max']:.1f} us over {stats['window_cycles']} cycles | "
                  f"rclpy timer baseline median {base_med[-1]:.1f} us, p99 {base_p99[-1]:.1f} us", flush=True)
    probe.close()
    rclpy.shutdown()
    p99 = float(np.median(node_p99))
    print(f"ur_interface loop (500 Hz, sim backend): median {np.median(node_med):.1f} us, "
          f"p99 {p99:.1f} us (median of {args.runs} runs; worst run p99 {max(node_p99):.1f} us)")
    print(f"baseline rclpy timer: median {np.median(base_med):.1f} us, p99 {np.median(base_p99):.1f} us; "
          f"ratio of p99 node/baseline = {p99 / np.median(base_p99):.2f}")
    print(f"target p99 <= 500 us: {'MET' if p99 <= 500 else 'NOT MET'}")
    return 0 if p99 <= 500 else 1


if __name__ == "__main__":
    sys.exit(main())
