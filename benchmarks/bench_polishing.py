"""The simulated polishing task and the other force/motion acceptance runs (project issue 5).

Runs on the MuJoCo UR3 (sim/plant.py, sim/scene.py) and prints:

1. polishing at 10 N with the moving base: max |force error| after the impact stage
   settled (true contact force along the tool axis), for torque output, velocity output
   and sensorless force estimation;
2. free motion along a circle at 0.5 m/s peak TCP speed: max position / orientation error;
3. sliding in contact through the wrist singularity: force error and peak joint
   acceleration for padding (P2), truncation and damped least squares;
4. identified vs nominal model on a plant whose truth differs from the nominal
   (sim.truth.make_truth): force and position errors and their ratio.

    .venv/bin/python benchmarks/bench_polishing.py [--quick]
"""

from __future__ import annotations

import argparse
import time

from robot_dynamics_id.control.polishing import run_free_motion, run_polishing, run_singularity_crossing
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.sim.truth import make_truth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--seed", type=int, default=3, help="seed of the perturbed truth (part 4)")
    args = parser.parse_args()
    tracking = 5.0 if args.quick else 10.0
    t_start = time.perf_counter()

    print("== 1. polishing, 10 N desired, sinusoid 0.08 m / 5 s, moving base (truth = nominal_truth('ur3'),")
    print("      controller model = the truth, i.e. a perfectly identified model) ==")
    print(f"{'variant':34s} {'max|f err| N':>12s} {'rms N':>8s} {'path max mm':>12s} {'hybrid at s':>12s}")
    for name, kwargs in (
        ("torque output (500 Hz), F/T sensor", dict(output_mode="torque")),
        ("velocity output (125 Hz), F/T", dict(output_mode="velocity")),
        ("torque output, sensorless", dict(output_mode="torque", force_source="estimated")),
        ("torque output, P2 zero-moment axes", dict(output_mode="torque", align_with_surface=True)),
        ("torque, elliptic cone (diagnostic)", dict(output_mode="torque", contact_cone="elliptic")),
        ("velocity, elliptic cone (diagnostic)", dict(output_mode="velocity", contact_cone="elliptic")),
    ):
        r = run_polishing(tracking_duration_s=tracking, **kwargs)
        print(f"{name:34s} {r.max_force_error_n:12.3f} {r.rms_force_error_n:8.3f} "
              f"{r.max_path_error_m * 1e3:12.2f} {r.hybrid_start_s:12.3f}")
        print("    events: " + "; ".join(str(e) for e in r.events))

    print("\n== 2. free motion, circle r = 0.08 m, 0.5 m/s peak TCP speed ==")
    for mode in ("torque", "velocity"):
        fm = run_free_motion(output_mode=mode, peak_speed_m_s=0.5)
        print(f"{mode:10s} max position error {fm.max_position_error_m * 1e3:7.3f} mm   "
              f"max orientation error {fm.max_orientation_error_deg:6.3f} deg")

    print("\n== 3. sliding in contact through the wrist singularity (10 N) ==")
    print(f"{'method':33s} {'min|q5| rad':>11s} {'max|f err| N':>12s} {'max|qdd| rad/s2':>16s} {'max dtau/dt Nm/s':>17s}")
    for cone in (None, "elliptic"):
        for method in ("padding", "truncation", "damped_least_squares"):
            s = run_singularity_crossing(method=method, contact_cone=cone)
            label = method + ("" if cone is None else " (elliptic)")
            print(f"{label:33s} {s.min_abs_q5_rad:11.4f} {s.max_force_error_n:12.3f} "
                  f"{s.max_joint_acceleration_rad_s2:16.1f} {s.max_torque_rate_nm_s:17.1f}")

    print(f"\n== 4. identified vs nominal model; plant truth = make_truth('ur3', seed={args.seed}) ==")
    truth = make_truth("ur3", args.seed)
    rows = {}
    for label, model in (("nominal", DynamicModel.nominal("ur3")), ("identified", truth)):
        r = run_polishing(truth=truth, controller_model=model, tracking_duration_s=tracking)
        fm = run_free_motion(truth=truth, controller_model=model)
        rows[label] = (r.rms_force_error_n, r.max_force_error_n, fm.max_position_error_m, fm.max_orientation_error_deg)
        print(f"{label:10s} polishing rms |f err| {r.rms_force_error_n:7.3f} N  max {r.max_force_error_n:7.3f} N   "
              f"free-motion max pos {fm.max_position_error_m * 1e3:7.3f} mm  ori {fm.max_orientation_error_deg:6.3f} deg")
    n, i = rows["nominal"], rows["identified"]
    print(f"ratio nominal/identified: rms force {n[0] / i[0]:.2f}  max force {n[1] / i[1]:.2f}  "
          f"position {n[2] / i[2]:.2f}  orientation {n[3] / i[3]:.2f}")
    print(f"\n(wall time {time.perf_counter() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
