"""Data that do not fit the robot or the torque source are named, not identified silently."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.identification.data_checks import (DataCheckError, check_joint_count, check_torque_fits_robot,
                                                          gravity_direction, gravity_scale, likely_robots,
                                                          mass_warnings)
from robot_dynamics_id.identification.preprocessing import preprocess
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.robots.model import load_robot

UR3_GAINS = np.array([10.0, 10.0, 8.0, 6.0, 6.0, 6.0])
UR10E_GAINS = np.array([10.0, 10.70, 8.46, 9.00, 9.48, 10.12])


def _prepared(recording, torque):
    data = preprocess(recording.time_s, recording.q_rad, torque, qd_rad_s=recording.qd_rad_s)
    return data.q_rad, data.qd_rad_s, data.qdd_rad_s2, data.torque


@pytest.fixture(scope="module")
def ur3():
    return synthetic_ur_recording(perturbed_truth("ur3", seed=11, relative=0.1), UR3_GAINS, duration_s=20.0)


@pytest.fixture(scope="module")
def ur10e():
    return synthetic_ur_recording(perturbed_truth("ur10e", seed=12, relative=0.1), UR10E_GAINS, duration_s=20.0)


def test_a_joint_torque_of_the_named_robot_passes(ur3):
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.effort_nm), source="effort")
    assert warnings == []
    assert 0.8 < scale.scale < 1.2 and scale.checked[1] and scale.checked[2]


def test_ur10e_data_named_ur3_are_refused_naming_the_ur10e(ur10e):
    # the UR10 (CB3) has nearly the UR10e's masses: the torques name both, and say why
    with pytest.raises(DataCheckError, match=r"do not fit --robot ur3.*They fit (ur10|ur10e) \(\S+x\) or (ur10e|ur10) "
                                             r"\(\S+x\): pass --robot ur10e? \(or pass --robot ur10e?: .*twin; name "
                                             r"the arm you have\)"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur10e, ur10e.effort_nm), source="effort")
    warnings, _ = check_torque_fits_robot(load_robot("ur10e"), *_prepared(ur10e, ur10e.effort_nm), source="effort")
    assert warnings == []
    assert set(list(likely_robots(*_prepared(ur10e, ur10e.effort_nm)))[:2]) == {"ur10", "ur10e"}


def test_motor_current_read_as_torque_is_named(ur3):
    # the two ways to say it (the driver's topics, or the effort's meaning), not --torque-source current, which
    # looks for a current the data do not hold
    with pytest.raises(DataCheckError, match=r"looks like motor current in A .*--ur-driver-topics and --drive-gains; "
                                             r".*--joint-states-effort current and --drive-gains"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_a), source="effort")


def test_gravity_compensated_effort_is_named(ur3):
    with pytest.raises(DataCheckError, match="gravity-compensated .*use_currents_as_efforts"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_as_torque_nm), source="effort")
    scale = gravity_scale(load_robot("ur3"), *_prepared(ur3, ur3.current_as_torque_nm))
    assert abs(scale.scale) < 0.15 and scale.inertial_scale > 0.5


def test_gains_three_times_too_large_name_the_implied_gains(ur3):
    torque = ur3.current_a * UR3_GAINS * 3
    with pytest.raises(DataCheckError, match=r"drive gains are off: ur3's nominal model implies joint 1 \(shoulder_lift_joint\): (9|10|11)"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, torque), source="current",
                                drive_gains_nm_per_a=UR3_GAINS * 3)


def test_a_moderate_mismatch_is_a_warning_and_skip_turns_errors_into_warnings(ur3, ur10e):
    warnings, _ = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.effort_nm * 2.0), source="effort")
    assert any("do not fit --robot ur3" in w for w in warnings)
    warnings, _ = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur10e, ur10e.effort_nm), source="effort",
                                          skip_robot_check=True)
    assert any("not refused: --skip-robot-check" in w for w in warnings)
    assert any("beyond ur3's rated" in w for w in warnings)


def test_a_tcp_pose_of_another_arm_is_named_in_the_refusal_but_a_twins_leaves_the_torques_to_decide(ur3):
    """Torques 2x the nominal (a payload) with a TCP pose check that found the UR3e twin: a warning naming the
    payload, as without the pose (a twin's kinematics do not make the result doubtful); a pose of another arm (a
    UR10's) is named, and makes the result doubtful."""
    data = _prepared(ur3, ur3.effort_nm * 2.0)
    twin = {"checked": True, "fits_other_robot": "ur3e", "wrong_arm": False}
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *data, source="effort", tcp_pose=twin)
    assert scale.doubtful_reason is None and any("payload at the flange" in w for w in warnings), warnings
    assert not any("TCP pose" in w for w in warnings)
    other = {"checked": True, "fits_other_robot": "ur10", "wrong_arm": True}
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *data, source="effort", tcp_pose=other)
    assert scale.fits_other_robot == "ur10" and "TCP pose fits ur10's" in scale.doubtful_reason
    text = next(w for w in warnings if "do not fit" in w)
    assert "The recorded TCP pose fits ur10's kinematics: pass --robot ur10" in text and "drive gains" not in text


def test_one_joints_gain_off_is_named_with_the_gain_the_model_implies(ur3):
    gains = UR3_GAINS.copy()
    gains[2] *= 2.0  # the elbow's gain typed twice too large
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_a * gains),
                                              source="current", drive_gains_nm_per_a=gains)
    assert scale.checked[1] and scale.checked[2] and 0.6 < scale.scale < 1.7  # the median alone passes
    # a UR3's checked joints are the shoulder and the elbow: which of the two is off, the data cannot tell
    (warning,) = [w for w in warnings if "drive gains looks off" in w]
    implied = [float(v) for v in warning.split("implies ")[1].split(" Nm/A")[0].split(" and ")]
    assert warning.startswith("Joints 1 (shoulder_lift_joint) and 2 (elbow_joint) disagree") and implied[1] == pytest.approx(UR3_GAINS[2], rel=0.15)
    assert implied[0] == pytest.approx(UR3_GAINS[1], rel=0.15)  # the implied gains are the true ones
    assert not [w for w in check_torque_fits_robot(load_robot("ur3"), *_prepared(ur3, ur3.current_a * UR3_GAINS),
                                                   source="current", drive_gains_nm_per_a=UR3_GAINS)[0]]


def test_with_three_checked_joints_the_one_whose_gain_is_off_is_named():
    """The scales a UR5e recording gave with the elbow's gain typed twice too large (shoulder, elbow and wrist 1
    carry the check there): the elbow alone is named, with the gain that puts it at the others' scale."""
    from robot_dynamics_id.identification.data_checks import TorqueScale, _joint_scale_warnings

    gains = np.array([9.805, 9.837, 18.5, 8.487, 9.806, 9.716])
    scale = TorqueScale(robot="ur5e", gravity_coefficient=np.array([np.nan, 1.0, 2.01, 0.88, np.nan, np.nan]),
                        inertial_coefficient=np.full(6, np.nan),
                        checked=np.array([False, True, True, True, False, False]))
    (warning,) = _joint_scale_warnings(scale, "current", gains, load_robot("ur5e"))
    assert warning.startswith("Joint 2 (elbow_joint)'s torque is 2.01x") and "median is 1.00x" in warning
    assert "implies 9.2 Nm/A" in warning
    assert _joint_scale_warnings(replace(scale, gravity_coefficient=np.array([np.nan, 1.0, 1.1, 0.88] + [np.nan] * 2)),
                                 "current", gains, load_robot("ur5e")) == []
    assert "implies" not in _joint_scale_warnings(scale, "effort", None, load_robot("ur5e"))[0]


def test_torques_of_another_ur_that_fit_it_mark_the_result_not_only_warn(ur10e):
    """UR10e torques named a UR5e: 2x the UR5e's gravity torque (a warning, not a refusal: a payload does that
    too), but the UR10e's nominal model fits them: the result is doubtful unless the check is overridden."""
    data = _prepared(ur10e, ur10e.effort_nm)
    warnings, scale = check_torque_fits_robot(load_robot("ur5e"), *data, source="effort")
    assert any("They fit ur10" in w and "ur10e" in w for w in warnings) and scale.fits_other_robot in ("ur10", "ur10e")
    _, scale = check_torque_fits_robot(load_robot("ur5e"), *data, source="effort", skip_robot_check=True)
    assert scale.fits_other_robot is None
    _, scale = check_torque_fits_robot(load_robot("ur10e"), *data, source="effort")
    assert scale.fits_other_robot is None


def test_joint_count_and_masses():
    with pytest.raises(DataCheckError, match="hold 7 joints but ur3 has 6"):
        check_joint_count(7, load_robot("ur3"))
    rm = load_robot("ur3")
    nominal = np.array([rm.model.inertias[i + 1].mass for i in range(6)])
    assert mass_warnings(nominal * 1.2, rm, consistent=True) == []
    (warning,) = mass_warnings(nominal * 4, rm, consistent=True)
    assert "4.00x the nominal ur3's" in warning
    assert mass_warnings(nominal * 4, rm, consistent=False) == []
    # beyond what a payload explains (0.4-2.5x): the result is doubtful
    assert mass_warnings(nominal * 2.2, rm, consistent=True, doubtful=True) == []
    assert mass_warnings(nominal * 0.45, rm, consistent=True, doubtful=True) == []
    (problem,) = mass_warnings(nominal * 0.3, rm, consistent=True, doubtful=True)
    assert "0.30x the nominal ur3's" in problem and "no payload a UR carries explains that" in problem


def _mounted(robot, gains, tilt_deg, seed):
    tilt = np.radians(tilt_deg)
    gravity = 9.81 * np.array([0.0, np.sin(tilt), -np.cos(tilt)])
    truth = replace(perturbed_truth(robot, seed=seed, relative=0.1), gravity_m_s2=gravity)
    return synthetic_ur_recording(truth, gains, duration_s=20.0), gravity


@pytest.mark.parametrize("robot, gains", [("ur3", UR3_GAINS), ("ur10e", UR10E_GAINS)])
def test_the_gravity_direction_is_read_from_the_data(robot, gains):
    for tilt_deg in (0.0, 30.0):
        recording, gravity = _mounted(robot, gains, tilt_deg, seed=13)
        found = gravity_direction(load_robot(robot), *_prepared(recording, recording.effort_nm))
        assert np.degrees(np.arccos(found @ gravity / 9.81)) < 3.0
    # currents read as torque (no scale) show no gravity direction to compare
    assert gravity_direction(load_robot(robot), *_prepared(recording, recording.current_a)) is None


def test_a_tilted_mount_fitted_as_a_floor_mount_is_named_with_the_vector_to_pass():
    recording, gravity = _mounted("ur3", UR3_GAINS, 30.0, seed=14)
    data = _prepared(recording, recording.effort_nm)
    warnings, _ = check_torque_fits_robot(load_robot("ur3"), *data, source="effort")
    (mount,) = [w for w in warnings if "mounted tilted" in w]
    assert "30° from the model's (0, 0, -9.81)" in mount
    vector = np.array([float(v) for v in mount.split("Pass --gravity ")[1].split(" ")[0].split(",")])
    assert np.degrees(np.arccos(vector @ gravity / 9.81**2)) < 3.0  # nominal inertials 10 % off the truth
    warnings, _ = check_torque_fits_robot(load_robot("ur3", gravity_m_s2=vector), *data, source="effort")
    assert warnings == []
    # a wall mount does not fit the floor model at all: refused, the mount named first
    recording, _ = _mounted("ur3", UR3_GAINS, 90.0, seed=14)
    with pytest.raises(DataCheckError, match=r"do not fit --robot ur3.*The torques fit gravity along .*--gravity"):
        check_torque_fits_robot(load_robot("ur3"), *_prepared(recording, recording.effort_nm), source="effort")


def test_a_small_tilt_is_a_warning_and_a_larger_one_makes_the_result_doubtful():
    recording, _ = _mounted("ur3", UR3_GAINS, 7.0, seed=15)
    warnings, scale = check_torque_fits_robot(load_robot("ur3"), *_prepared(recording, recording.effort_nm),
                                              source="effort")
    assert any("mounted tilted" in w for w in warnings) and not scale.mount_differs
    assert 5.0 < scale.gravity_angle_deg < 10.0
    recording, _ = _mounted("ur3", UR3_GAINS, 20.0, seed=15)
    _, scale = check_torque_fits_robot(load_robot("ur3"), *_prepared(recording, recording.effort_nm), source="effort")
    assert scale.mount_differs


def test_a_tool_on_the_flange_does_not_read_as_a_tilt():
    """A payload the nominal model does not hold adds gravity torque of another shape; the direction fit holds an
    unknown mass on the last link, so a floor-mounted arm with a 1.5 kg tool is still a floor mount, and a tilted
    one with it is found tilted."""
    for tilt_deg, expect_warning in ((0.0, False), (30.0, True)):
        tilt = np.radians(tilt_deg)
        gravity = 9.81 * np.array([0.0, np.sin(tilt), -np.cos(tilt)])
        truth = perturbed_truth("ur3", seed=16, relative=0.1)
        mass, com = truth.link_mass_kg.copy(), truth.link_com_m.copy()
        com[5] = (mass[5] * com[5] + 1.5 * np.array([0.05, 0.0, 0.12])) / (mass[5] + 1.5)
        mass[5] += 1.5
        truth = replace(truth, link_mass_kg=mass, link_com_m=com, gravity_m_s2=gravity)
        recording = synthetic_ur_recording(truth, UR3_GAINS, duration_s=20.0)
        data = _prepared(recording, recording.effort_nm)
        found = gravity_direction(load_robot("ur3"), *data)
        assert np.degrees(np.arccos(found @ gravity / 9.81)) < 3.0
        warnings, _ = check_torque_fits_robot(load_robot("ur3"), *data, source="effort")
        assert any("mounted tilted" in w for w in warnings) == expect_warning, warnings


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_point_to_point_run_with_real_friction_names_no_drive_gain(seed):
    """At each stop a real joint holds a torque its friction terms cannot tell (presliding: any size up to the
    static level, the sign of the last motion). Fitted with the rows at rest, the wrist's gravity scale of the
    simulated UR3's point-to-point runs read 0.60x against 0.96x for the others: a false "drive gain looks off"."""
    from robot_dynamics_id.excitation.point_to_point import PointToPointSettings, point_to_point_trajectory
    from robot_dynamics_id.identification.synthetic import inverse_dynamics
    from robot_dynamics_id.sim.truth import nominal_friction

    robot = load_robot("ur3")
    truth = replace(perturbed_truth("ur3", seed=11, relative=0.1), friction=nominal_friction("ur3", "real"))
    run = point_to_point_trajectory(robot, PointToPointSettings(duration_s=40.0, seed=seed), rate_hz=100.0)
    tau = inverse_dynamics(truth, run.position_rad, run.velocity_rad_s, run.acceleration_rad_s2)
    data = preprocess(run.time_s, run.position_rad, tau, qd_rad_s=run.velocity_rad_s)
    warnings, scale = check_torque_fits_robot(robot, data.q_rad, data.qd_rad_s, data.qdd_rad_s2, data.torque,
                                              source="current", drive_gains_nm_per_a=UR3_GAINS)
    assert not any("drive gain" in w or "disagree" in w for w in warnings), warnings
    checked = scale.gravity_coefficient[scale.checked]
    assert checked.max() / checked.min() < 1.25, scale.gravity_coefficient


def test_drive_gains_copied_from_another_arm_are_named(ur3):
    """config/ur3.yaml's gains on a UR10 scale every torque 0.64x, inside the scale check's tolerance: the gains
    themselves give it away."""
    ur10 = load_robot("ur10")
    data = _prepared(ur3, ur3.current_a * np.array(UR3_GAINS))
    warnings, _ = check_torque_fits_robot(ur10, *data, source="current", drive_gains_nm_per_a=list(UR3_GAINS),
                                          skip_robot_check=True)
    assert any(w.startswith("--drive-gains: the drive gains 10, 10, 8, 6, 6, 6 Nm/A are the assumed nominal gains "
                            "of ur3 / ur3e, not of the ur10") for w in warnings), warnings


def test_an_arm_identified_with_a_tool_mounted_is_warned_about(ur3):
    """A full excitation with 1.3 kg on a UR3's flange identified with exit 0 and no warning: the tool went into the
    links (wrist 3 0.37 -> 0.87 kg), and rdi payload / the controller's tool would then count it twice."""
    from robot_dynamics_id.dynamics.payload import payload_parameters, payload_regressor
    from robot_dynamics_id.identification.data_checks import loaded_arm_notes

    robot = load_robot("ur3")
    q, qd, qdd, tau = _prepared(ur3, ur3.effort_nm)
    tool = (payload_regressor(robot, q, qd, qdd) @ payload_parameters(1.3, (0.02, -0.01, 0.05))).reshape(-1, 6)
    notes = {}
    for name, torque in (("bare", tau), ("tool", tau + tool)):
        _, scale = check_torque_fits_robot(robot, q, qd, qdd, torque, source="effort")
        notes[name] = loaded_arm_notes({"torque_scale_vs_nominal": scale.scale}, robot)
    assert notes["bare"] == []
    (note,) = notes["tool"]
    assert "was a tool or payload mounted during the run?" in note and "Identify the arm with the flange empty" in note
    # beyond the plausible band the robot check itself speaks: no second message
    assert loaded_arm_notes({"torque_scale_vs_nominal": 2.2}, robot) == []


def test_torques_lighter_than_a_bare_arm_name_the_drive_gains(ur3):
    """Drive gains 0.7x the arm's: every check passed and the model came out 0.7x too light, without a word."""
    from robot_dynamics_id.identification.data_checks import loaded_arm_notes

    robot = load_robot("ur3")
    q, qd, qdd, tau = _prepared(ur3, ur3.effort_nm)
    notes = {}
    for factor in (1.0, 0.7, 0.5):
        _, scale = check_torque_fits_robot(robot, q, qd, qdd, factor * tau, source="effort")
        notes[factor] = loaded_arm_notes({"torque_scale_vs_nominal": scale.scale}, robot)
    assert notes[1.0] == []
    (note,) = notes[0.7]
    assert "lighter than a bare ur3" in note and "drive gains too low" in note and "rdi drive-gains" in note
    assert notes[0.5] == []  # below the band the robot check itself refuses or warns (its own message)
