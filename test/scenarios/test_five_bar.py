"""Five-bar motion + internal-force control with a passive joint (scenarios/five_bar.py, Aghili P5)."""

from robot_dynamics_id.scenarios.five_bar import CircleTask, run_five_bar


def test_one_passive_joint_leaves_one_force_direction_and_both_errors_small():
    task = CircleTask(force_steps=((0.0, 0.0), (0.3, 4.0)))
    r = run_five_bar(actuated=(True, True, True, False), task=task, duration_s=0.8, settle_s=0.2)
    assert r.controllable_force_dimension == 1 and r.passive_joints_controllable
    assert r.max_position_error_m < 1e-4 and r.max_force_error_n < 0.2
    assert r.max_passive_torque_nm < 1e-9  # the passive joint is never driven
    usual = run_five_bar(actuated=(True, False, True, False), task=task, duration_s=0.4, force_control=False,
                         settle_s=0.2)
    assert usual.controllable_force_dimension == 0 and usual.max_position_error_m < 1e-4
