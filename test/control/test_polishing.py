"""Short runs of the simulated tasks on the MuJoCo UR3 (full runs: benchmarks/bench_polishing.py)."""

import numpy as np

from robot_dynamics_id.control.contact import ContactStage
from robot_dynamics_id.control.polishing import run_free_motion, run_polishing


def test_polishing_goes_through_the_three_stages_and_holds_the_force():
    r = run_polishing(tracking_duration_s=0.3, base_motion=False, settle_s=0.5)
    stages = [e.to_stage for e in r.events]
    assert stages == [ContactStage.APPROACH, ContactStage.IMPACT, ContactStage.HYBRID]
    impact = r.events[1]
    assert impact.normal_force_n > 10.0
    # holding 10 N at rest after the impact settled: true contact force within 1.5 N
    hold = r.settled & (r.time_s < r.tracking_start_s + 0.3)
    assert hold.sum() > 100
    error = np.abs(r.normal_force_true_n[hold] - 10.0)
    assert error.max() < 1.5, error.max()


def test_velocity_output_presses_with_the_desired_mean_force():
    r = run_polishing(output_mode="velocity", tracking_duration_s=0.2, base_motion=False, settle_s=0.5)
    assert r.events[-1].to_stage is ContactStage.HYBRID
    hold = r.settled
    assert abs(np.mean(r.normal_force_true_n[hold]) - 10.0) < 1.0


def test_free_motion_tracks_a_fast_circle_within_5_mm():
    fm = run_free_motion(peak_speed_m_s=0.4, duration_s=2.0)
    assert fm.max_position_error_m < 5e-3
    assert fm.max_orientation_error_deg < 1.0
