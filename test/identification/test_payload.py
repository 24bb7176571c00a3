"""Payload identification: the regressor's frame change, the estimate on data with a known payload, the warnings
and the refusals."""

import re
from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.dynamics.payload import (
    payload_inertials, payload_parameters, payload_regressor, tool_to_joint_transform,
)
from robot_dynamics_id.excitation.payload import PayloadExcitationSettings, plan_payload_excitation
from robot_dynamics_id.identification.drive_gains import payload_standard_parameters
from robot_dynamics_id.identification.payload import PayloadIdentificationError, identify_payload, realisable_inertia
from robot_dynamics_id.identification.payload_job import _torque_source, arm_torque_source, is_doubtful
from robot_dynamics_id.identification.synthetic import inverse_dynamics, perturbed_truth
from robot_dynamics_id.robots import load_robot

PAYLOAD_KG = 1.3
PAYLOAD_COM = np.array([0.02, -0.01, 0.05])
PAYLOAD_INERTIA = np.array([[3e-3, 2e-4, -1e-4], [2e-4, 2.5e-3, 3e-4], [-1e-4, 3e-4, 2e-3]])


@pytest.fixture(scope="module")
def wrist_motion():
    robot = load_robot("ur3")
    trajectory = plan_payload_excitation(robot, PayloadExcitationSettings(n_starts=1, max_iterations=40,
                                                                          velocity_scale=1.0,
                                                                          acceleration_scale=1.0), rate_hz=500.0)
    return robot, trajectory


def _torques_with_payload(truth, q, qd, qdd, mass, com, inertia):
    """RNEA of the arm with the payload merged into its last body (pinocchio's own frame change)."""
    rm = truth.robot_model()
    model = rm.model.copy()
    frame = model.frames[rm.tool_frame_id]
    model.inertias[model.njoints - 1] = model.inertias[model.njoints - 1] + frame.placement.act(
        pin.Inertia(mass, np.asarray(com, float), np.asarray(inertia, float)))
    data = model.createData()
    tau = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, qd, qdd)])
    return tau + inverse_dynamics(truth, q, qd, qdd) - np.array(
        [pin.rnea(rm.model, rm.model.createData(), a, b, c) for a, b, c in zip(q, qd, qdd)])


def test_tool_frame_regressor_matches_pinocchio_frame_change():
    robot = load_robot("ur3")
    theta_tool = payload_parameters(PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA)
    np.testing.assert_allclose(tool_to_joint_transform(robot) @ theta_tool,
                               payload_standard_parameters(robot, PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA), atol=1e-14)
    mass, com, inertia = payload_inertials(theta_tool)
    assert mass == pytest.approx(PAYLOAD_KG)
    np.testing.assert_allclose(com, PAYLOAD_COM, atol=1e-15)
    np.testing.assert_allclose(inertia, PAYLOAD_INERTIA, atol=1e-15)
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (3, 50, 6))
    truth = perturbed_truth("ur3", seed=1)
    expected = _torques_with_payload(truth, q, qd, qdd, PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA) \
        - inverse_dynamics(truth, q, qd, qdd)
    np.testing.assert_allclose((payload_regressor(robot, q, qd, qdd) @ theta_tool).reshape(-1, 6), expected, atol=1e-10)


def test_recovers_mass_com_and_inertia_with_the_true_arm_model(wrist_motion):
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2
    tau = _torques_with_payload(truth, q, qd, qdd, PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA)
    noisy = tau + np.random.default_rng(5).normal(size=tau.shape) * 0.02
    exact = identify_payload({"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": tau}, truth, robot)
    # Noise-free torques, but q̈ comes from filtering and differentiating q̇ (the identifier's preprocessing): that
    # leaves ~1e-6 on the inertia entries, depending on the planned trajectory (whose optimiser's path differs
    # between machines). A wrong frame change or regressor column is off by ~1e-3 or more.
    np.testing.assert_allclose(exact.parameters, payload_parameters(PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA),
                               atol=1e-5)
    recording = {"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": noisy}
    est = identify_payload(recording, truth, robot)
    assert est.mass_kg == pytest.approx(PAYLOAD_KG, rel=2e-3)
    np.testing.assert_allclose(est.com_m, PAYLOAD_COM, atol=5e-4)
    # the standard deviations describe the errors (within 4 sigma)
    assert abs(est.mass_kg - PAYLOAD_KG) < 4 * est.mass_std_kg
    assert np.all(np.abs(est.com_m - PAYLOAD_COM) < 4 * est.com_std_m)
    index = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
    inertia_error = np.array([est.inertia_about_com_kgm2[i, j] - PAYLOAD_INERTIA[i, j] for i, j in index])
    assert np.all(np.abs(inertia_error) < 4 * est.inertia_std_kgm2), (inertia_error, est.inertia_std_kgm2)
    assert np.all(est.inertia_std_kgm2 < 1e-3)
    assert np.all(est.com_std_m < 1e-3) and est.physically_consistent
    assert not is_doubtful(est)
    assert "setPayload(1.30" in est.ur_rtde_snippet()
    assert "center_of_gravity: {x: 0.02" in est.ur_driver_snippet()
    inertia = exact.inertia_about_com_kgm2
    assert f"ixx: {inertia[0, 0]:.3e}, iyy: {inertia[1, 1]:.3e}" in exact.ur_driver_snippet(with_inertia=True)
    np.testing.assert_allclose(inertia, PAYLOAD_INERTIA, atol=1e-5)


def test_a_wrong_arm_model_shows_as_a_wrong_payload(wrist_motion):
    """The payload is what the arm model does not explain: a model 30 % off in the last link's mass is not
    silently absorbed into a correct answer (guards against an estimator that ignores the arm model)."""
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2
    tau = _torques_with_payload(truth, q, qd, qdd, PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA)
    masses = truth.link_mass_kg.copy()
    masses[5] *= 1.3
    wrong = replace(truth, link_mass_kg=masses)
    est = identify_payload({"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": tau}, wrong, robot)
    assert est.mass_kg == pytest.approx(PAYLOAD_KG - 0.3 * truth.link_mass_kg[5], rel=0.02)


def test_slow_motion_warns_that_the_inertia_is_not_excited(wrist_motion):
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    # the same path 8x slower: gravity still identifies m and c, accelerations 64x smaller
    t = trajectory.time_s * 8
    q = trajectory.position_rad
    qd, qdd = trajectory.velocity_rad_s / 8, trajectory.acceleration_rad_s2 / 64
    tau = _torques_with_payload(truth, q, qd, qdd, PAYLOAD_KG, PAYLOAD_COM, PAYLOAD_INERTIA)
    tau = tau + np.random.default_rng(1).normal(size=tau.shape) * 0.05
    est = identify_payload({"time_s": t, "q_rad": q, "qd_rad_s": qd, "effort_nm": tau}, truth, robot)
    assert est.mass_kg == pytest.approx(PAYLOAD_KG, rel=0.02)
    advice = next(w for w in est.warnings if "does not excite the payload's inertia" in w)
    # faster, in steps: never "100 % of the robot's limits" with a tool on the flange
    scales = [float(x) for x in re.findall(r"--(?:velocity|acceleration)-scale ([0-9.]+)", advice)]
    assert len(scales) == 2 and all(0.5 < x < 1.0 for x in scales) and "clamping" in advice, advice
    # no set-payload call with an inertia the data did not determine; the one without it stays
    calls = est.to_dict()["set_payload"]
    assert calls["ur_ros2_driver_with_inertia"] is None and calls["ur_ros2_driver"].startswith("ros2 service call")


def test_nothing_mounted_is_an_error(wrist_motion):
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2
    masses = truth.link_mass_kg.copy()
    masses[5] += 0.2  # the model is heavier than the arm: "payload" of -0.2 kg
    tau = inverse_dynamics(truth, q, qd, qdd)
    with pytest.raises(PayloadIdentificationError, match="estimated payload mass is -0.2"):
        identify_payload({"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": tau},
                         replace(truth, link_mass_kg=masses), robot)


def test_realisable_projection_keeps_realisable_inertias_and_fixes_others():
    np.testing.assert_allclose(realisable_inertia(PAYLOAD_INERTIA), PAYLOAD_INERTIA, atol=1e-15)
    bad = np.diag([1e-3, 1e-3, 5e-3])  # izz > ixx + iyy: no body has it
    fixed = realisable_inertia(bad)
    sigma = 0.5 * np.trace(fixed) * np.eye(3) - fixed
    assert np.linalg.eigvalsh(sigma).min() >= -1e-15


def test_torque_source_rule():
    model = perturbed_truth("ur3", seed=0)
    from_currents = replace(model, provenance={"torque": "motor current x drive gains [10.0] Nm/A"})
    assert arm_torque_source(from_currents) == "current"
    assert _torque_source(from_currents, "auto") == "current"
    with pytest.raises(PayloadIdentificationError, match="--torque-source current"):
        _torque_source(from_currents, "effort")
    with pytest.raises(PayloadIdentificationError, match="target moment is the controller's model torque"):
        _torque_source(from_currents, "target_moment")
    assert arm_torque_source(model) is None and _torque_source(model, "auto") == "auto"


def test_a_mass_the_noise_could_make_from_zero_is_nothing_mounted(wrist_motion):
    """One rule for "nothing there": an estimate within 3 std of zero is refused, a positive one too."""
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2
    tau = inverse_dynamics(truth, q, qd, qdd) + np.random.default_rng(0).normal(scale=0.3, size=q.shape)
    data = {"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": tau}
    # this noise makes +1.2 g (std 0.55 g): positive, but not 3 std above zero
    with pytest.raises(PayloadIdentificationError, match=r"payload mass is 0\.001\d kg .*not 3 std above zero"):
        identify_payload(data, truth, robot)
    # 4 g with the same noise is 7 std above zero: measured
    tau_4g = tau + (payload_regressor(robot, q, qd, qdd) @ payload_parameters(0.004, (0.0, 0.0, 0.05))).reshape(-1, 6)
    assert identify_payload({**data, "effort_nm": tau_4g}, truth, robot).mass_kg == pytest.approx(0.004, abs=0.0015)


def test_an_inertia_within_noise_of_zero_is_not_offered_as_determined(wrist_motion):
    """A small tool (a 2 cm sphere's inertia) beside the wrist rotors: the std passes the excitation rule, but the
    principal moments are not above twice their noise, so only mass and CoM are offered."""
    robot, trajectory = wrist_motion
    truth = perturbed_truth("ur3", seed=3)
    q, qd, qdd = trajectory.position_rad, trajectory.velocity_rad_s, trajectory.acceleration_rad_s2
    small = np.diag([5e-5, 5e-5, 5e-5])
    tau = _torques_with_payload(truth, q, qd, qdd, PAYLOAD_KG, PAYLOAD_COM, small)
    noisy = tau + np.random.default_rng(5).normal(size=tau.shape) * 0.1
    est = identify_payload({"time_s": trajectory.time_s, "q_rad": q, "qd_rad_s": qd, "effort_nm": noisy}, truth, robot)
    assert np.all(est.inertia_std_kgm2 < PAYLOAD_KG * 0.02**2), est.inertia_std_kgm2  # "excited" by the std rule
    assert not est.inertia_determined
    assert any(w.startswith("the inertia about the CoM is within noise of zero") for w in est.warnings)
    assert est.to_dict()["set_payload"]["ur_ros2_driver_with_inertia"] is None
    assert est.mass_kg == pytest.approx(PAYLOAD_KG, rel=0.02) and not is_doubtful(est)
