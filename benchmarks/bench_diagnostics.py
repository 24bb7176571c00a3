"""CPU cost of /diagnostics and of the plottable Float64 topics, in-process (issue 17 item 4, issue 14's budget).

Times, in one process with one subscriber on each topic (a monitoring tool is listening):
  * one /diagnostics report of ur_interface (collect by the level rule, build the DiagnosticArray, publish),
    sent once a second;
  * one std_msgs/Float64 publish (the plottable numbers: 2 at status_rate_hz, 1 at 20 Hz during a trajectory);
  * the baseline, measured in the same run: one ~/status JSON publish (json.dumps of the same status dict and a
    std_msgs/String publish), which ur_interface already sends at status_rate_hz.
CPU time (time.process_time) per call: median and max of 5 runs of 1000 calls, and each case's median as a
multiple of the baseline's (the first case); the load average is printed.

    .venv/bin/python benchmarks/bench_diagnostics.py
"""

from __future__ import annotations

import json
import os
import statistics
import time

from robot_dynamics_id.ros_processes import use_loopback_here

use_loopback_here()

import rclpy  # noqa: E402
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rclpy.node import Node  # noqa: E402
from std_msgs.msg import Float64, String  # noqa: E402

from robot_dynamics_id.nodes._diagnostic_rules import robot_loop_report  # noqa: E402
from robot_dynamics_id.nodes._diagnostics import CounterDeltas, NodeDiagnostics  # noqa: E402

STATUS = {"state": "moving", "connected": True, "robot_mode": 7, "safety_mode": 1, "watchdog": "armed",
          "fault": None, "mode": "velocity", "cycles": 100000, "late_cycles": 3, "rejected_commands": 0,
          "skipped_cycles": 0, "backlog": 2, "real_time_factor": 0.998, "robot_time_s": 200.0,
          "stamp_offset_s": 1.7e9, "pid": 1234,
          "period_error_us": {"median": 20.0, "p99": 150.0, "max": 400.0, "window_cycles": 5000}}
TRAJECTORY = {"goal": 1, "phase": "running", "fraction": 0.5, "position_error_rad": 0.001,
              "max_position_error_rad": 0.002}


def cpu_per_call_us(fn, calls: int = 1000, runs: int = 5) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(calls):
            fn()
        out.append((time.process_time() - start) / calls * 1e6)
    return out


def main() -> None:
    rclpy.init()
    node = Node("bench_diagnostics")
    listener = Node("bench_diagnostics_listener")
    for msg_type, topic in ((DiagnosticArray, "/diagnostics"), (Float64, "~/number"), (String, "~/status")):
        listener.create_subscription(msg_type, topic.replace("~", "/bench_diagnostics"), lambda m: None, 10)
    deltas = CounterDeltas()
    diagnostics = NodeDiagnostics(node, part="robot loop", hardware_id="ur3 simulated", period_s=3600.0,
                                  collect=lambda: robot_loop_report(STATUS, deltas, rate_hz=500.0, simulated=True,
                                                                    trajectory=TRAJECTORY))
    number_pub = node.create_publisher(Float64, "~/number", 10)
    status_pub = node.create_publisher(String, "~/status", 10)
    time.sleep(1.0)  # discovery: the publishers have their subscriber
    cases = {
        "baseline: ~/status JSON publish": lambda: status_pub.publish(String(data=json.dumps(STATUS))),
        "/diagnostics report (rule + message + publish)": diagnostics.publish,
        "Float64 publish": lambda: number_pub.publish(Float64(data=1.0)),
    }
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores")
    baseline = None
    for name, fn in cases.items():
        runs = cpu_per_call_us(fn)
        median = statistics.median(runs)
        baseline = median if baseline is None else baseline
        print(f"{name:48s} CPU per call: median {median:7.1f} µs, max {max(runs):7.1f} µs "
              f"(5 runs x 1000); {median / baseline:.2f}x the baseline")
    listener.destroy_node()
    node.destroy_node()
    rclpy.shutdown()


if __name__ == "__main__":
    main()
