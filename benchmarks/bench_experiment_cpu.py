"""CPU of the identification experiment per robot second: ur_interface (simulated UR3) + torque_logger + excitation.

Runs the experiment as ``experiment.launch.py sim:=true`` starts it, on a full-speed optimised Fourier
excitation, in three configurations, interleaved, ``--runs`` times each:

  streaming/single   the excitation streams 500 Hz velocity commands; rclpy's SingleThreadedExecutor everywhere
                     (wave 1's chain)
  streaming/events   the same stream, EventsExecutor (the baseline for the new path: same executor)
  trajectory/events  the trajectory goes out whole and is executed in ur_interface's robot loop (the default)
  trajectory/events-wrench  the same, the logger recording every default topic but the 500 Hz wrench (not used
                     by identification): what one topic fewer saves

For each process: CPU seconds (user + system, /proc) per robot second (the simulated arm's clock, from
ur_interface's ~/status) while the excitation runs. Also: the largest position error, whether every joint-state
sample reached the bag (largest gap), the real-time factor, and the load average. ``--hogs N`` runs N busy
processes beside it (a lab PC is never idle).

    .venv/bin/python benchmarks/bench_experiment_cpu.py [--runs 3] [--seconds 30] [--hogs 0]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robot_dynamics_id.ros_processes import loopback_environment, use_loopback_here

ENV = use_loopback_here()

import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_dynamics_id.excitation.trajectory_file import save_trajectory  # noqa: E402
from robot_dynamics_id.io.bag_reader import open_bag  # noqa: E402
from robot_dynamics_id.io.bag_writer import default_typestore  # noqa: E402
from robot_dynamics_id.node_launch import launch_plan as plan_launch  # noqa: E402
from robot_dynamics_id.nodes.probe import RobotProbe  # noqa: E402
from robot_dynamics_id.nodes.torque_logger import DEFAULT_TOPICS  # noqa: E402
from robot_dynamics_id.ros_processes import start_node, wait_until  # noqa: E402
from robot_dynamics_id.sim.excitation_presets import planned_fourier_excitation  # noqa: E402

#: name: (command interface, executor, the logger records the 500 Hz wrench as its default topics do)
CONFIGS = {
    "streaming/single": ("velocity", "single", True),
    "streaming/events": ("velocity", "events", True),
    "trajectory/events": ("trajectory", "events", True),
    "trajectory/events-wrench": ("trajectory", "events", False),
}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def robot_time(probe: RobotProbe, pid: int) -> float | None:
    status = probe.latest_status() or {}
    return status.get("robot_time_s") if status.get("pid") == pid else None


def largest_gap_ms(bag: Path) -> float:
    ts = default_typestore()
    stamps = []
    with open_bag(bag) as source:
        for _, msgtype, _, raw in source.messages(["/joint_states"]):
            h = ts.deserialize_cdr(raw, msgtype).header.stamp
            stamps.append(h.sec + h.nanosec * 1e-9)
    return float(np.max(np.diff(stamps)) * 1e3) if len(stamps) > 1 else float("nan")


def one_run(config: str, excitation: Path, start_q, out: Path, probe: RobotProbe) -> dict:
    interface_kind, executor, record_wrench = CONFIGS[config]
    env = loopback_environment(base=dict(ENV))
    if executor == "single":
        env["RDI_EXECUTOR"] = "single"
    nodes = {n.name: n for n in plan_launch("experiment.launch.py", {"sim": "true", "excitation": str(excitation),
                                                                    "bag": str(out / "bag")})}
    extra = ["-p", f"command_interface:={interface_kind}"]
    if interface_kind == "velocity":  # the streaming path needs wave 1's tolerances to finish at all when loaded
        extra += ["-p", "max_position_error_rad:=1.0"]
    # the simulated arm starts at the excitation's start pose: only the excitation itself is measured
    start = "[" + ", ".join(repr(float(v)) for v in start_q) + "]"
    interface_args = ["-p", f"sim_initial_q_rad:={start}"]
    if interface_kind == "velocity":
        interface_args += ["-p", "watchdog_s:=0.1"]
    interface = start_node(nodes["ur_interface"], log_dir=out, env=env, extra_ros_args=interface_args)
    logger_args = []
    if not record_wrench:  # what not recording one of the five 500 Hz topics saves (identification does not use it)
        topics = [t for t in DEFAULT_TOPICS if t != "/force_torque_sensor_broadcaster/wrench"]
        logger_args = ["-p", "topics:=[" + ",".join(topics) + "]"]
    logger = start_node(nodes["torque_logger"], log_dir=out, env=env, extra_ros_args=logger_args)
    for messages in probe.messages.values():
        messages.clear()
    result: dict = {"config": config}
    try:
        if not probe.wait_ready(120.0, pid=interface.pid):
            raise RuntimeError(interface.log()[-2000:])
        if not wait_until(lambda: "recording /joint_states" in logger.log(), 60.0):
            raise RuntimeError(logger.log()[-2000:])
        time.sleep(2.0)
        t_robot0, c_if0, c_lg0 = robot_time(probe, interface.pid), cpu_seconds(interface.pid), cpu_seconds(logger.pid)
        wall0, load0 = time.monotonic(), os.getloadavg()[0]
        proc = start_node(nodes["excitation"], log_dir=out, env=env, extra_ros_args=extra)
        c_ex = 0.0
        while proc.alive():
            try:
                c_ex = cpu_seconds(proc.pid)
            except (FileNotFoundError, ProcessLookupError):
                break
            time.sleep(0.05)
        proc.popen.wait()
        t_robot1 = robot_time(probe, interface.pid)
        c_if1, c_lg1 = cpu_seconds(interface.pid), cpu_seconds(logger.pid)
        robot_s = t_robot1 - t_robot0
        result.update(ok=proc.popen.returncode == 0, robot_s=robot_s, wall_s=time.monotonic() - wall0,
                      load=(load0 + os.getloadavg()[0]) / 2,
                      cpu={"ur_interface": (c_if1 - c_if0) / robot_s, "torque_logger": (c_lg1 - c_lg0) / robot_s,
                           "excitation": c_ex / robot_s})
        result["cpu"]["total"] = sum(result["cpu"].values())
        time.sleep(0.5)  # the last status messages
        result["excitation_log_tail"] = proc.log()[-300:] if not result["ok"] else ""
        if interface_kind == "trajectory":  # the robot loop's own record: |q_ref(τ) − q| every cycle
            finals = [m for m in probe.messages["trajectory"] if m.get("phase") == "succeeded"]
            result["max_error_rad"] = finals[-1]["max_position_error_rad"] if finals else None
        else:  # the streamer's error against the plan, sampled at 10 Hz in its progress
            errors = [m["position_error_rad"] for m in probe.messages["progress"] if "position_error_rad" in m]
            result["max_error_rad"] = max(errors) if errors else None
    finally:
        logger.stop()
        interface.stop()
    result["gap_ms"] = largest_gap_ms(out / "bag")
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="excitation length (robot time)")
    parser.add_argument("--hogs", type=int, default=0, help="busy processes beside the experiment")
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated subset of " + ", ".join(CONFIGS))
    args = parser.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    tmp = Path(tempfile.mkdtemp(prefix="bench_experiment_cpu_"))
    atexit.register(shutil.rmtree, tmp, True)  # the bags and logs of the runs (tens of MB): not kept
    trajectory = planned_fourier_excitation("ur3", duration_s=args.seconds, seed=0, rate_hz=500.0,
                                            period_s=min(10.0, args.seconds))
    excitation = save_trajectory(trajectory, tmp / "excitation.yaml")
    print(f"excitation: optimised Fourier, {args.seconds:.0f} s, peak joint speed "
          f"{np.abs(trajectory.velocity_rad_s).max():.2f} rad/s; {args.runs} runs per configuration, interleaved; "
          f"{args.hogs} CPU hog(s); {os.cpu_count()} cores")
    rclpy.init()
    probe = RobotProbe(name="bench_experiment_probe", record_joint_states=False)
    probe.messages = {"progress": [], "trajectory": []}
    for key, topic in (("progress", "/excitation/progress"), ("trajectory", "/ur_interface/trajectory_status")):
        probe.create_subscription(String, topic, lambda m, key=key: probe.messages[key].append(json.loads(m.data)),
                                  QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    probe.spin_in_background(events=True)  # every subscription exists already
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    results: dict[str, list[dict]] = {c: [] for c in configs}
    try:
        for k in range(args.runs):
            for config in configs:
                r = one_run(config, excitation, trajectory.start_position_rad, tmp / f"{config.replace('/', '_')}_{k}",
                            probe)
                results[config].append(r)
                cpu = r.get("cpu", {})
                print(f"  run {k + 1} {config:24s} ok={r.get('ok')} total {cpu.get('total', float('nan')):.3f} "
                      f"core/robot-s (ur_interface {cpu.get('ur_interface', float('nan')):.3f}, torque_logger "
                      f"{cpu.get('torque_logger', float('nan')):.3f}, excitation {cpu.get('excitation', float('nan')):.3f})"
                      f"; robot {r.get('robot_s', 0):.1f} s in {r.get('wall_s', 0):.1f} s wall; max error "
                      f"{r.get('max_error_rad')} rad; largest joint-state gap {r['gap_ms']:.1f} ms; load "
                      f"{r.get('load', 0):.2f}", flush=True)
                if not r.get("ok"):
                    print("    excitation failed: " + r.get("excitation_log_tail", "").replace("\n", " | "))
    finally:
        for hog in hogs:
            hog.kill()
        probe.close()
        rclpy.shutdown()
    print("\nCPU seconds per robot second, median over runs (max in brackets)")
    print(f"{'configuration':24s} {'ur_interface':>16s} {'torque_logger':>16s} {'excitation':>16s} {'total':>16s}"
          f" {'ok':>5s} {'max err rad':>12s} {'gap ms':>8s}")
    medians = {}
    for config, runs in results.items():
        cells = []
        for key in ("ur_interface", "torque_logger", "excitation", "total"):
            v = np.array([r["cpu"][key] for r in runs if "cpu" in r])
            cells.append(f"{np.median(v):.3f} [{v.max():.3f}]" if v.size else "n/a")
            if key == "total" and v.size:
                medians[config] = float(np.median(v))
        ok = sum(bool(r.get("ok")) for r in runs)
        errs = [r["max_error_rad"] for r in runs if r.get("max_error_rad") is not None]
        gaps = [r["gap_ms"] for r in runs]
        print(f"{config:24s} {cells[0]:>16s} {cells[1]:>16s} {cells[2]:>16s} {cells[3]:>16s} {ok:>2d}/{len(runs)}"
              f" {max(errs) if errs else float('nan'):12.4f} {max(gaps):8.1f}")
    base = medians.get("streaming/events")
    if base and "trajectory/events" in medians:
        print(f"\ntrajectory/events total / streaming/events total = {medians['trajectory/events'] / base:.2f}")
    if "trajectory/events-wrench" in medians and "trajectory/events" in medians:
        print(f"trajectory/events-wrench total / trajectory/events total = "
              f"{medians['trajectory/events-wrench'] / medians['trajectory/events']:.2f}")
    if "streaming/single" in medians and "trajectory/events" in medians:
        print(f"trajectory/events total / streaming/single total = "
              f"{medians['trajectory/events'] / medians['streaming/single']:.2f}")
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
