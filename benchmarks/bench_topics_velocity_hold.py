"""osc_controller over topics with velocity output (a CB3's set-up) holding the tool still: the two integration bases.

Each run starts ur_interface (simulated UR3, ``config/ur3.yaml`` + ``ur3_control.yaml``) and osc_controller with
``robot_connection: topics``, ``output_mode: velocity``, ``task: external`` and no goal, both at ``--rate`` Hz, and
records for ``--seconds``:

* the velocity commands ur_interface sent the robot (``/ur_interface/command``): per-sample max |command| over the
  joints, median and p99 (rad/s);
* the controller's position and orientation errors (``~/state``), median and max;
* whether the controller stopped itself (e.g. on a force reading the chatter makes).

Each run is made three times: ``velocity_integration_base: command`` (the previous command plus the law's
acceleration, the law damping the commanded twist; the default) with ``state_prediction: true`` (each joint state
advanced by the commands over its age; the default), the same without the prediction, and ``measured`` (the
measured velocity plus the acceleration, the law damping the measured twist), the baselines measured in the same
run. The controller's rate is the robot node's: a 2-core machine keeps up with 500 Hz over topics only in part,
and then the state's age grows.

    .venv/bin/python benchmarks/bench_topics_velocity_hold.py [--runs 3] [--seconds 10] [--rate 125]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_dynamics_id.ros_processes import loopback_environment, reserve_domain_id, start_node, wait_until

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(reserve_domain_id()))

import rclpy  # noqa: E402  (after the loopback environment is set)
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics_id.node_launch import launch_plan  # noqa: E402

_QOS = QoSProfile(depth=10000, reliability=ReliabilityPolicy.RELIABLE)


VARIANTS = {"command": ["velocity_integration_base:=command"],
            "no prediction": ["velocity_integration_base:=command", "state_prediction:=false"],
            "measured": ["velocity_integration_base:=measured"]}


def one_run(base: str, rate_hz: float, seconds: float, folder: Path) -> dict:
    interface, controller = launch_plan("control.launch.py", {"sim": "true", "connection": "topics",
                                                              "output_mode": "velocity", "force_source": "sensor"})
    env = loopback_environment()
    rate = ["-p", f"rate_hz:={rate_hz:g}"]
    node = rclpy.create_node(f"bench_topics_hold_{base.replace(' ', '_')}_{int(time.monotonic() * 1000)}")
    commands, states = [], []
    node.create_subscription(JointState, "/ur_interface/command",
                             lambda m: commands.append(np.max(np.abs(m.velocity))) if len(m.velocity) else None, _QOS)
    node.create_subscription(String, "/osc_controller/state", lambda m: states.append(json.loads(m.data)), _QOS)
    label = base.replace(" ", "_")
    robot = start_node(interface, log_dir=folder / f"{label}_robot", env=env, extra_ros_args=rate)
    ctl = None
    try:
        assert wait_until(lambda: "robot connected and ready" in robot.log(), 60.0), robot.log()
        ctl = start_node(controller, log_dir=folder / f"{label}_ctl", env=env,
                         extra_ros_args=rate + [x for o in VARIANTS[base] for x in ("-p", o)])
        end = None
        while end is None or time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
            if end is None and len(commands) > 10:
                end = time.monotonic() + seconds
            if end is None and not ctl.alive():
                break
    finally:
        if ctl is not None:
            ctl.stop()
        robot.stop()
        node.destroy_node()
    moving = [s for s in states if s.get("position_error_m") is not None]
    pos = np.array([s["position_error_m"] for s in moving]) * 1000.0
    ori = np.array([s.get("orientation_error_rad", np.nan) for s in moving])
    stopped = next((s["stopped"] for s in states if s.get("stopped")), None)
    cmd = np.array(commands)
    return {"cmd_median": float(np.median(cmd)), "cmd_p99": float(np.percentile(cmd, 99)),
            "pos_median_mm": float(np.median(pos)), "pos_max_mm": float(pos.max()),
            "ori_median_rad": float(np.nanmedian(ori)), "ori_max_rad": float(np.nanmax(ori)),
            "stopped": stopped if stopped not in (None, "shutdown", "stopped by a signal") else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rate", type=float, default=125.0, help="ur_interface's and the controller's rate, Hz")
    args = parser.parse_args()
    rclpy.init()
    print(f"load average before: {os.getloadavg()[0]:.2f}; {args.runs} runs x {args.seconds:g} s at {args.rate:g} Hz")
    results: dict[str, list[dict]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="bench_topics_hold_") as tmp:
        for run in range(args.runs):
            for base in results:
                r = one_run(base, args.rate, args.seconds, Path(tmp) / f"run{run}")
                results[base].append(r)
                print(f"run {run + 1} {base:13s}: max|cmd| median {r['cmd_median']:.4f} p99 {r['cmd_p99']:.4f} rad/s; "
                      f"position error median {r['pos_median_mm']:.2f} max {r['pos_max_mm']:.2f} mm; orientation "
                      f"median {r['ori_median_rad']:.4f} max {r['ori_max_rad']:.4f} rad; stopped: {r['stopped']}",
                      flush=True)
    rclpy.shutdown()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for base, runs in results.items():
        med = np.median([r["cmd_median"] for r in runs])
        p99 = np.median([r["cmd_p99"] for r in runs])
        pos = np.median([r["pos_median_mm"] for r in runs])
        stops = sum(r["stopped"] is not None for r in runs)
        print(f"{base:13s}: median over runs of max|cmd| median {med:.4f} rad/s, p99 {p99:.4f} rad/s; position error "
              f"median {pos:.2f} mm; runs stopped by the controller: {stops}/{len(runs)}")
    ours = np.median([r["cmd_median"] for r in results["command"]])
    for baseline in ("no prediction", "measured"):
        ratio = ours / max(np.median([r["cmd_median"] for r in results[baseline]]), 1e-9)
        print(f"ratio command / {baseline} (median max|cmd|): {ratio:.3f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
