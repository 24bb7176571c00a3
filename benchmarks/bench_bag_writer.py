"""Bag writer throughput and per-write latency for the torque logger's load.

The logger records 4 topics at 500 Hz (2000 msg/s): /joint_states and
/motor_currents (sensor_msgs/JointState), the wrench (geometry_msgs/WrenchStamped)
and the velocity command (std_msgs/Float64MultiArray), as raw CDR bytes.

Measured per storage (mcap, sqlite3):
1. burst: write as fast as possible -> messages/s sustained and CPU time per
   message; baseline = rosbags' own Writer (no flushing, no splitting) in the same run;
2. paced at 500 Hz (4 messages per cycle) -> per-write latency median / p99 / max
   and CPU per message, including the periodic flush (every 0.5 s).

    .venv/bin/python benchmarks/bench_bag_writer.py [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from robot_dynamics_id.io.bag_writer import (
    BagWriter,
    default_typestore,
    float64_multi_array,
    joint_state,
    wrench_stamped,
)
from robot_dynamics_id.robots import JOINT_NAMES

TOPICS = (
    ("/joint_states", "sensor_msgs/msg/JointState"),
    ("/motor_currents", "sensor_msgs/msg/JointState"),
    ("/force_torque_sensor_broadcaster/wrench", "geometry_msgs/msg/WrenchStamped"),
    ("/forward_velocity_controller/commands", "std_msgs/msg/Float64MultiArray"),
)


def payloads() -> list[bytes]:
    """CDR bytes of one cycle's 4 messages (what an rclpy raw subscription delivers)."""
    ts = default_typestore()
    msgs = [
        joint_state(1, JOINT_NAMES, np.linspace(0, 1, 6), np.linspace(1, 2, 6), np.linspace(2, 3, 6)),
        joint_state(1, JOINT_NAMES, effort=np.linspace(0, 1, 6)),
        wrench_stamped(1, [1, 2, 3, 4, 5, 6]),
        float64_multi_array(np.linspace(0, 1, 6)),
    ]
    return [bytes(ts.serialize_cdr(m, t)) for m, (_, t) in zip(msgs, TOPICS)]


def burst_ours(path: Path, storage: str, cycles: int, data: list[bytes]) -> tuple[float, float]:
    with BagWriter(path, storage=storage) as bag:
        for topic, msgtype in TOPICS:
            bag.add_topic(topic, msgtype)
        names = [t for t, _ in TOPICS]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for k in range(cycles):
            t = 10**9 + k * 2_000_000
            for topic, raw in zip(names, data):
                bag.write_raw(topic, t, raw)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return 4 * cycles / wall, cpu / (4 * cycles)


def burst_rosbags(path: Path, storage: str, cycles: int, data: list[bytes]) -> tuple[float, float]:
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    ts = default_typestore()
    with Writer(path, version=9 if storage == "mcap" else 8, storage_plugin=plugin) as writer:
        conns = [writer.add_connection(topic, msgtype, typestore=ts) for topic, msgtype in TOPICS]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        for k in range(cycles):
            t = 10**9 + k * 2_000_000
            for conn, raw in zip(conns, data):
                writer.write(conn, t, raw)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    return 4 * cycles / wall, cpu / (4 * cycles)


def paced(path: Path, storage: str, seconds: float, data: list[bytes]) -> dict[str, float]:
    latencies = []
    with BagWriter(path, storage=storage, flush_period_s=0.5) as bag:
        for topic, msgtype in TOPICS:
            bag.add_topic(topic, msgtype)
        names = [t for t, _ in TOPICS]
        period = 0.002
        cycles = int(seconds / period)
        next_t = time.monotonic()
        cpu0 = time.process_time()
        for k in range(cycles):
            t = time.time_ns()
            for topic, raw in zip(names, data):
                a = time.perf_counter()
                bag.write_raw(topic, t, raw)
                latencies.append(time.perf_counter() - a)
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
        cpu = time.process_time() - cpu0
    lat = np.asarray(latencies) * 1e6
    return {"median_us": float(np.median(lat)), "p99_us": float(np.percentile(lat, 99)),
            "max_us": float(lat.max()), "cpu_us_per_msg": 1e6 * cpu / lat.size, "messages": float(lat.size)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a few seconds in total)")
    args = parser.parse_args()
    from _machine import report_load  # benchmarks/_machine.py

    report_load()
    cycles = 5_000 if args.quick else 25_000
    seconds = 2.0 if args.quick else 10.0
    repeats = 3
    data = payloads()
    print(f"message sizes (bytes): {[len(d) for d in data]}; load = 4 topics x 500 Hz = 2000 msg/s")
    tmp = Path(tempfile.mkdtemp(prefix="bench_bag_"))
    try:
        for storage in ("mcap", "sqlite3"):
            ours = [burst_ours(tmp / f"o_{storage}_{r}", storage, cycles, data) for r in range(repeats)]
            base = [burst_rosbags(tmp / f"b_{storage}_{r}", storage, cycles, data) for r in range(repeats)]
            rate = float(np.median([o[0] for o in ours]))
            base_rate = float(np.median([b[0] for b in base]))
            cpu = float(np.median([o[1] for o in ours]))
            print(f"[{storage}] burst ({4 * cycles} msgs x {repeats} runs): BagWriter {rate:,.0f} msg/s "
                  f"(CPU {cpu * 1e6:.1f} us/msg); rosbags Writer {base_rate:,.0f} msg/s; ratio {rate / base_rate:.2f}; "
                  f"headroom over 2000 msg/s: {rate / 2000:.0f}x")
            res = paced(tmp / f"p_{storage}", storage, seconds, data)
            print(f"[{storage}] paced 500 Hz x 4 topics for {seconds:.0f} s ({res['messages']:.0f} writes): "
                  f"latency median {res['median_us']:.1f} us, p99 {res['p99_us']:.1f} us, max {res['max_us']:.0f} us; "
                  f"CPU {res['cpu_us_per_msg']:.1f} us/msg (incl. sleeping loop) = "
                  f"{res['cpu_us_per_msg'] * 2000 / 1e4:.1f} % of one core")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
