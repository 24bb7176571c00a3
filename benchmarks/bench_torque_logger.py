"""torque_logger throughput over DDS: ur_interface (sim, 500 Hz) -> torque_logger for N seconds.

Counts what reached the bag against what the robot produced (joint-state
stamps are the robot clock: expected = span x 500 + 1), and reports messages/s
and the logger's CPU (user+system time from /proc over the run). The baseline,
measured in the same run, is the bag writer alone (benchmarks/bench_bag_writer.py
has its details): CPU per message without DDS.

Several runs (each its own processes; the default, 3 runs of 300 s, takes ~16 min); prints each run, then the
median and max over runs and the load.

    .venv/bin/python benchmarks/bench_torque_logger.py [--seconds 300] [--runs 3]
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


def one_run(seconds: float, probe: RobotProbe, tmp: str) -> dict:
    """One run: ur_interface + torque_logger for ``seconds``; what reached the bag, the logger's CPU, the baseline."""
    nodes = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": "unused",
                                                                       "bag": str(Path(tmp) / "bag")})}
    interface = start_node(nodes["ur_interface"], log_dir=tmp, env=ENV)
    logger = start_node(nodes["torque_logger"], log_dir=tmp, env=ENV,
                        extra_ros_args=["-p", "topics:=" + "[" + ",".join(TOPICS) + "]"])
    try:
        assert probe.wait_ready(120.0, pid=interface.pid), interface.log()
        assert wait_until(lambda: all(f"recording {t}" in logger.log() for t in TOPICS), 60.0), logger.log()
        cpu0, t0, w0 = cpu_seconds(logger.pid), time.monotonic(), time.time_ns()
        time.sleep(seconds)
        cpu1, t1, w1 = cpu_seconds(logger.pid), time.monotonic(), time.time_ns()
    finally:
        interface.stop()
        time.sleep(1.0)
        logger.stop()
    with open_bag(Path(tmp) / "bag") as bag:
        counts = {t: c for t, (_, c) in bag.topics.items()}
        ts = default_typestore()
        stamps = [ts.deserialize_cdr(raw, mt).header.stamp for _, mt, _, raw in bag.messages(["/joint_states"])]
        # the logger stamps each message with the host's clock when it writes it: those written in the CPU window
        in_window = sum(1 for _, _, logged_ns, _ in bag.messages(TOPICS) if w0 <= logged_ns <= w1)
    stamps = np.array([s.sec + s.nanosec * 1e-9 for s in stamps])
    total = sum(counts.get(t, 0) for t in TOPICS)
    wall = t1 - t0
    cpu = (cpu1 - cpu0) / wall
    rate = total / max(stamps[-1] - stamps[0], 1e-9)
    # CPU per message: the CPU of the measured window over the messages written in it (the bag also holds the
    # start-up and the shutdown, which the CPU window does not).
    return dict(recorded=len(stamps), expected=int(round((stamps[-1] - stamps[0]) * 500.0)) + 1, counts=counts,
                rate=rate, cpu=cpu, wall=wall, per_msg_us=1e6 * (cpu1 - cpu0) / max(in_window, 1),
                base_us=1e6 * writer_baseline(20000, tmp))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300.0, help="length of each run (s)")
    parser.add_argument("--runs", type=int, default=3, help="runs; each starts its own ur_interface and logger")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    rclpy.init()
    probe = RobotProbe(name="bench_logger_probe")
    probe.spin_in_background()
    runs = []
    try:
        for k in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                r = one_run(args.seconds, probe, tmp)
            runs.append(r)
            print(f"run {k + 1}: recorded {r['recorded']} of {r['expected']} joint-state samples "
                  f"({100 * r['recorded'] / r['expected']:.3f} %); per topic: {r['counts']}; "
                  f"{r['rate']:.0f} messages/s; logger CPU {100 * r['cpu']:.1f} % of one core over {r['wall']:.0f} s; "
                  f"{r['per_msg_us']:.1f} us per message against the bag writer alone's {r['base_us']:.1f} us "
                  f"({r['per_msg_us'] / r['base_us']:.1f}x)", flush=True)
    finally:
        probe.close()
        rclpy.shutdown()
    cpu = np.array([r["cpu"] for r in runs]) * 100
    ratio = np.array([r["per_msg_us"] / r["base_us"] for r in runs])
    missing = [r["expected"] - r["recorded"] for r in runs]
    print(f"{len(runs)} runs x {args.seconds:.0f} s: logger CPU median {np.median(cpu):.1f} % of a core "
          f"(max {cpu.max():.1f}); per message / bag writer alone (no DDS, same run) median {np.median(ratio):.1f}x "
          f"(max {ratio.max():.1f}); joint-state samples missing per run: {missing}")
    return 0 if all(r["recorded"] >= 0.999 * r["expected"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
