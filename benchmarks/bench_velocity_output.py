"""Velocity output (speedJ, a CB3's 125 Hz) in the direct connection: the two integration bases side by side.

On the MuJoCo UR3 in-process (scenarios/polishing.py, measurement noise on), for each
``velocity_integration_base``:

* holding still (no goal): the largest joint command after the first second, per cycle, median and max (rad/s),
  and the main frequency of wrist 3's command;
* a horizontal circle at 0.1, 0.25 and 0.5 m/s peak: max position error (mm) and orientation error (deg);
* polishing at 10 N (no base motion): normal-force error after settling, median and max (N).

``command`` (the previous command plus the law's acceleration; the direct default) damps the commanded twist;
``measured`` (the measured velocity plus the acceleration; the topics default) damps the measured one. The
second is the baseline measured in the same run. The scenario is deterministic: one run per base.

    .venv/bin/python benchmarks/bench_velocity_output.py [--rate 125]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from robot_dynamics_id.scenarios.polishing import run_free_motion, run_polishing


def one_base(base: str, rate_hz: float) -> dict:
    overrides = {"velocity_integration_base": base}
    hold = run_free_motion(output_mode="velocity", peak_speed_m_s=0.0, duration_s=6.0, rate_hz=rate_hz,
                           config_overrides=overrides)
    held = hold.command_max[hold.time_s > 1.0]
    out = {"hold_median": float(np.median(held)), "hold_max": float(held.max()),
           "hold_position_mm": 1e3 * hold.max_position_error_m}
    circles = {}
    for speed in (0.1, 0.25, 0.5):
        fm = run_free_motion(output_mode="velocity", peak_speed_m_s=speed, duration_s=4.0, rate_hz=rate_hz,
                             config_overrides=overrides)
        circles[speed] = (1e3 * fm.max_position_error_m, fm.max_orientation_error_deg)
    out["circles"] = circles
    pol = run_polishing(output_mode="velocity", rate_hz=rate_hz, config_overrides=overrides)
    settled = pol.settled
    error = np.abs(pol.normal_force_true_n[settled] - pol.desired_force_n)
    out["force_median"], out["force_max"] = float(np.median(error)), float(error.max())
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=125.0, help="control rate, Hz (default 125, a CB3)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}; velocity output at {args.rate:g} Hz, direct connection")
    results = {}
    for base in ("command", "measured"):
        r = results[base] = one_base(base, args.rate)
        circles = "; ".join(f"{v:g} m/s {p:.2f} mm {o:.3f} deg" for v, (p, o) in r["circles"].items())
        print(f"{base:8s}: hold max|command| median {r['hold_median']:.4f} max {r['hold_max']:.4f} rad/s, position "
              f"error max {r['hold_position_mm']:.3f} mm; circle {circles}; polishing |force error| median "
              f"{r['force_median']:.2f} max {r['force_max']:.2f} N")
    ratio = results["command"]["hold_max"] / max(results["measured"]["hold_max"], 1e-12)
    print(f"ratio command / measured, hold max|command|: {ratio:.2f}x; load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
