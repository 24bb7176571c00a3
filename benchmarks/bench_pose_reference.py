"""The external task's pose reference (control/pose_reference.py): what the motion law is asked to follow.

Baseline, measured in the same run: the goal handed to the law as given (what osc_controller did before the
reference: a step), and the reference's rule without the stream ramp (each goal of a stream jumped to).
Printed, at the controller's 500 Hz on the robot's clock:

* a single 4 cm goal: the time to arrive, peak speed and acceleration asked of the law (the step: the whole
  4 cm in one 2 ms cycle, i.e. 20 m/s and 10^4 m/s^2 as a finite difference);
* a path streamed at 500, 100 and 20 Hz (0.05 m/s along x for 2 s): the lag behind the path while it moves,
  the feed-forward acceleration's largest value while it moves (a steady path needs 0), and how far the
  reference goes past the path's end; with the ramp and without it;
* the cost of one ``targets`` call (median and p99 over several runs, thread CPU time) beside the cost of one
  controller step, and the load average.

    .venv/bin/python benchmarks/bench_pose_reference.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pinocchio as pin

import robot_dynamics_id.control.pose_reference as pose_reference
from robot_dynamics_id.control.controller import OperationalSpaceController
from robot_dynamics_id.control.controller_config import ControllerConfig
from robot_dynamics_id.control.pose_reference import PoseReference
from robot_dynamics_id.sim.truth import nominal_truth

DT = 0.002
BOUNDS = dict(speed_m_s=0.1, acceleration_m_s2=0.5, angular_speed_rad_s=0.5, angular_acceleration_rad_s2=2.0)


def _reference() -> PoseReference:
    return PoseReference(np.array([0.3, 0.0, 0.3]), np.eye(3), **BOUNDS)


def single_goal() -> None:
    ref = _reference()
    ref.set_goal([0.34, 0.0, 0.3], pin.exp3(np.array([0.0, 0.0, 0.2])))
    targets = [ref.targets(k * DT) for k in range(1000)]
    x = np.array([t.position_m[0] for t in targets])
    speed = max(np.linalg.norm(t.twist[:3]) for t in targets)
    acceleration = max(np.linalg.norm(t.acceleration[:3]) for t in targets)
    arrival = np.argmax(x == 0.34) * DT
    print(f"4 cm goal (and 0.2 rad about z): arrives in {arrival:.3f} s, peak speed {speed:.3f} m/s, peak "
          f"acceleration {acceleration:.3f} m/s^2; as given (baseline): 1 cycle, {0.04 / DT:.0f} m/s, "
          f"{0.04 / DT ** 2:.0f} m/s^2 as finite differences")


def stream(every: int, ramp: bool) -> tuple[float, float, float]:
    saved = pose_reference.STREAM_INTERVAL_S
    pose_reference.STREAM_INTERVAL_S = saved if ramp else 0.0
    try:
        ref = _reference()
        lag, acc = [], []
        for k in range(int(3.0 / DT)):
            t = k * DT
            goal_x = 0.3 + 0.05 * min(t, 2.0)
            if k % every == 0:
                ref.set_goal([0.3 + 0.05 * min(t, 2.0), 0.0, 0.3])
            target = ref.targets(t)
            lag.append(goal_x - target.position_m[0])
            acc.append(target.acceleration[0])
    finally:
        pose_reference.STREAM_INTERVAL_S = saved
    moving = slice(int(0.8 / DT), int(1.9 / DT))
    return float(np.max(np.abs(lag[moving]))), float(np.max(np.abs(acc[moving]))), float(max(0.0, -min(lag)))


def cost(runs: int) -> None:
    def per_call(fn, n=2000) -> float:
        start = time.thread_time()
        for k in range(n):
            fn(k)
        return (time.thread_time() - start) / n * 1e6

    ref_costs, step_costs = [], []
    ctl = OperationalSpaceController(nominal_truth("ur3"), config=ControllerConfig())
    q = np.array([0.0, -1.9, -1.6, -1.2, np.pi / 2, 0.0])
    ctl.osm.update(q, np.zeros(6))
    ctl.set_motion_target(ctl.osm.position_m.copy(), ctl.osm.rotation.copy())
    ctl.enter_free_motion()
    for _ in range(runs):
        ref = _reference()
        ref.set_goal([0.7, 0.0, 0.3])  # 4 s of motion: every call moves the reference
        ref_costs.append(per_call(lambda k: ref.targets(k * DT)))
        step_costs.append(per_call(lambda k: ctl.step(q, np.zeros(6), k * DT, wrench_base=np.zeros(6))))
    for name, values in (("PoseReference.targets", ref_costs), ("controller step", step_costs)):
        print(f"{name}: median {np.median(values):.1f} us, p99 {np.percentile(values, 99):.1f} us of thread CPU "
              f"per call ({runs} runs x 2000 calls)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    single_goal()
    print("path streamed at 0.05 m/s: max lag while moving (mm), max |feed-forward acceleration| while moving "
          "(m/s^2), overshoot at its end (mm)")
    for every in (1, 5, 25):
        with_ramp, without = stream(every, True), stream(every, False)
        print(f"  {500 / every:>5.0f} Hz: with the ramp {with_ramp[0] * 1e3:.2f} mm, {with_ramp[1]:.3f} m/s^2, "
              f"{with_ramp[2] * 1e3:.3f} mm; each goal jumped to (baseline) {without[0] * 1e3:.2f} mm, "
              f"{without[1]:.3f} m/s^2, {without[2] * 1e3:.3f} mm")
    cost(args.runs)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
