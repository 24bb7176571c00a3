"""ur_interface (rtde) against a controller that accepts TCP on 30004 and never answers (issue 16, finding 1).

For each run: a silent peer on a free 127.x address (port 30004), ur_interface started from its launch file
with ``sim:=false robot_ip:=<that address>``, then

* report: how long after the node's start-up line the first "cannot reach the robot" warning is logged
  (target: within 2 s);
* stop: how long after SIGINT / SIGTERM the process has exited (target: within 2 s).

Baseline, measured in the same run: the same node with the simulated robot (connected, running), stopped
by the same signal. Prints medians and the worst of each, and the load average.

    .venv/bin/python benchmarks/bench_silent_controller.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

import numpy as np

from robot_dynamics_id.node_launch import launch_plan as plan_launch  # the runtime plan of the launch file
from robot_dynamics_id.ros_processes import loopback_environment, start_node, wait_until

_LINE = re.compile(r"\[(?:INFO|WARN|ERROR)\] \[(\d+\.\d+)\] \[ur_interface\]: (.*)")


class SilentPeer:
    """Accepts every connection on host:30004 and never sends a byte."""

    def __init__(self) -> None:
        for _ in range(200):
            self.host = f"127.{random.randint(10, 250)}.{random.randint(0, 255)}.{random.randint(2, 250)}"
            self.sock = socket.socket()
            try:
                self.sock.bind((self.host, 30004))
                break
            except OSError:
                self.sock.close()
        self.sock.listen(8)
        self.clients: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                self.clients.append(self.sock.accept()[0])
            except OSError:
                return

    def close(self) -> None:
        for s in [self.sock, *self.clients]:
            s.close()


def _times(proc, key: str) -> list[float]:
    return [float(m.group(1)) for m in map(_LINE.search, proc.log().splitlines()) if m and key in m.group(2)]


def _stop(proc, signum: int) -> float:
    start = time.monotonic()
    os.killpg(proc.pid, signum)
    try:
        proc.popen.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        return float("inf")
    return time.monotonic() - start


def run_silent(signum: int, log_dir: str) -> tuple[float, float]:
    peer = SilentPeer()
    try:
        (node,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": peer.host})
        proc = start_node(node, log_dir=log_dir, env=loopback_environment())
        if not wait_until(lambda: _times(proc, "cannot reach the robot"), 30.0):
            proc.kill()
            raise RuntimeError(f"no warning within 30 s:\n{proc.log()}")
        report = _times(proc, "cannot reach the robot")[0] - _times(proc, "ur_interface: robot")[0]
        return report, _stop(proc, signum)
    finally:
        peer.close()


def run_baseline(signum: int, log_dir: str) -> float:
    (node,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    proc = start_node(node, log_dir=log_dir, env=loopback_environment())
    if not wait_until(lambda: _times(proc, "robot connected and ready"), 60.0):
        proc.kill()
        raise RuntimeError(proc.log())
    time.sleep(1.0)
    return _stop(proc, signum)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        for name, signum in (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)):
            reports, stops, baseline = [], [], []
            for k in range(args.runs):
                report, stop = run_silent(signum, f"{tmp}/{name}_{k}")
                reports.append(report)
                stops.append(stop)
                baseline.append(run_baseline(signum, f"{tmp}/{name}_sim_{k}"))
                loads.append(os.getloadavg()[0])
            print(f"{name}, {args.runs} runs: silent controller reported after {np.median(reports):.2f} s median "
                  f"(worst {max(reports):.2f} s); node ended {np.median(stops):.2f} s median (worst {max(stops):.2f} s) "
                  f"after the signal; baseline (simulated robot, running): ended {np.median(baseline):.2f} s median "
                  f"(worst {max(baseline):.2f} s)")
    print(f"load average (1 min) during the runs: mean {np.mean(loads):.1f}, max {max(loads):.1f} (2 cores)")


if __name__ == "__main__":
    main()
