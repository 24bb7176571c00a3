"""Contact through the UR3 wrist singularity on the post (scenarios/singularity_crossing.py, P2 eqs. (6)-(9))."""

import numpy as np
import pinocchio as pin

from robot_dynamics_id.robots.kinematics import solve_ik
from robot_dynamics_id.scenarios.polishing import POLISHING_TOOL
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.scenarios.singularity_crossing import SINGULAR_Q_RAD, post_path, run_singularity_crossing
from robot_dynamics_id.sim.truth import make_truth


def test_the_post_path_crosses_q5_zero_transversally():
    robot = DynamicModel.nominal("ur3").robot_model()
    path = post_path(robot, POLISHING_TOOL)
    q = SINGULAR_Q_RAD + np.array([0, 0, 0, 0, 0.3, 0])
    q5 = []
    for psi in np.linspace(0.35, -0.35, 15):
        q = solve_ik(robot, pin.SE3(path.rotation(psi), path.tip(psi)), q, local_offset_m=path.tip_offset_m)
        q5.append(q[4])
    q5 = np.array(q5)
    assert q5[0] > 0.2 and q5[-1] < -0.2 and np.all(np.diff(q5) < 0)  # monotone through zero
    q_mid = solve_ik(robot, pin.SE3(path.rotation(0.0), path.tip(0.0)), SINGULAR_Q_RAD, local_offset_m=path.tip_offset_m)
    assert abs(q_mid[4]) < 1e-9
    # motion-point twist = derivative of the motion-point pose along psi
    p0, r0, tw, _ = path.motion_point(0.1, 1.0, 0.0)
    p1, r1, _, _ = path.motion_point(0.1 + 1e-6)
    assert np.allclose((p1 - p0) / 1e-6, tw[:3], atol=1e-5) and np.allclose(tw[3:], [0, 0, 1.0])


def test_padding_holds_the_contact_through_q5_zero_and_truncation_jerks_at_the_region_border():
    truth, nominal = make_truth("ur3", 3), DynamicModel.nominal("ur3")
    pad = run_singularity_crossing(method="padding", truth=truth, controller_model=nominal, travel_time_s=2.0)
    assert pad.q5_changed_sign and pad.min_sigma < 1e-3 and np.isnan(pad.contact_lost_s)
    assert pad.max_force_error_n(pad.in_region) < 3.7  # the paper's figure through the singularity
    trunc = run_singularity_crossing(method="truncation", truth=truth, controller_model=nominal, travel_time_s=2.0)
    border_pad = pad.peak(pad.joint_acceleration_rad_s2, pad.border_windows())
    border_trunc = trunc.peak(trunc.joint_acceleration_rad_s2, trunc.border_windows())
    assert border_trunc > 2.0 * border_pad, (border_trunc, border_pad)
    assert trunc.peak(trunc.torque_rate_nm_s) > 3.0 * pad.peak(pad.torque_rate_nm_s)
