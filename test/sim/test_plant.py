"""The simulated UR: kinematics equal pinocchio's, dynamics equal the truth's, UR-like servo and reports."""

import time
from dataclasses import replace

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.dynamics.friction import FrictionParameters, friction_torque
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robot_state import RobotState, SafetyMode
from robot_dynamics_id.robots import dh_forward_kinematics, get_robot, load_robot
from robot_dynamics_id.sim.mjcf import build_mjcf
from robot_dynamics_id.sim.plant import SimulatedUR
from robot_dynamics_id.sim.scene import Scene, SinusoidalBaseMotion, Tool, polishing_scene
from robot_dynamics_id.sim.truth import (controller_friction, controller_model, make_truth, nominal_drive_gains,
                                         nominal_truth, p2_part)

HOME = np.array([0.0, -1.57, 1.0, -1.0, -1.57, 0.0])


def _frictionless(robot="ur3"):
    return replace(nominal_truth(robot), friction=FrictionParameters.zeros(6))


@pytest.mark.parametrize("robot", ["ur3", "ur3e", "ur10e"])
def test_flange_pose_equals_pinocchio_tool0_and_dh(robot):
    sim = SimulatedUR(robot=robot, noise=False)
    model = load_robot(robot)
    data = model.new_data()
    rng = np.random.default_rng(1)
    for _ in range(30):
        q = rng.uniform(-np.pi, np.pi, 6)
        sim.reset(q)
        pin.framesForwardKinematics(model.model, data, q)
        expected = data.oMf[model.tool_frame_id].homogeneous
        np.testing.assert_allclose(sim.flange_pose_base(), expected, atol=1e-12)
        np.testing.assert_allclose(sim.flange_pose_base(), dh_forward_kinematics(get_robot(robot), q), atol=1e-12)


def test_mujoco_dynamics_equal_the_truth_in_pinocchio():
    """Forward dynamics of the generated MJCF = pinocchio ABA with the truth's inertials and rotors."""
    truth = make_truth("ur3", 5)
    robot = load_robot("ur3")
    mj_model = mujoco.MjModel.from_xml_string(build_mjcf(robot, truth))
    mj_data = mujoco.MjData(mj_model)
    pin_model = truth.robot_model().model
    pin_data = pin_model.createData()
    rng = np.random.default_rng(2)
    for _ in range(10):
        q, qd, tau = rng.uniform(-3, 3, 6), rng.uniform(-1, 1, 6), rng.uniform(-5, 5, 6)
        mj_data.qpos[:], mj_data.qvel[:], mj_data.qfrc_applied[:] = q, qd, tau
        mujoco.mj_forward(mj_model, mj_data)
        expected = pin.aba(pin_model, pin_data, q, qd, tau)
        np.testing.assert_allclose(mj_data.qacc, expected, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("rate_hz", [500.0, 125.0])
def test_speed_j_moves_the_commanded_distance(rate_hz):
    sim = SimulatedUR(truth_seed=1, rate_hz=rate_hz, initial_q_rad=HOME, noise=False)
    acceleration = 5.0
    q0 = sim.state().q_rad
    sim.speed_j([0.5, 0, 0, 0, 0, 0], acceleration)
    state = sim.step(int(round(rate_hz)))
    assert state.timestamp_s == pytest.approx(1.0)
    expected = 0.5 * 1.0 - 0.5**2 / (2 * acceleration)  # 1 s at 0.5 rad/s minus the ramp
    moved = state.q_rad - q0
    assert moved[0] == pytest.approx(expected, abs=0.005)
    assert np.max(np.abs(moved[1:])) < 0.005
    assert state.qd_rad_s[0] == pytest.approx(0.5, abs=0.01)


def test_speed_j_uses_leading_axis_acceleration():
    sim = SimulatedUR(truth_seed=1, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([1.0, 0.0, 0.0, 0.0, 0.0, 0.5], 2.0)
    sim.step(125)  # 0.25 s: half-way up the 0.5 s ramp of the leading axis
    ref = sim.reference_qd_rad_s
    assert ref[0] == pytest.approx(0.5, abs=1e-6)
    assert ref[5] == pytest.approx(0.25, abs=1e-6)  # same fraction of its command


@pytest.mark.parametrize("rate_hz", [500.0, 125.0])
def test_a_streamed_velocity_ramp_drives_the_arm_evenly_within_each_cycle(rate_hz, monkeypatch):
    """A speedj stream ramping at 2 rad/s^2 under a 20 rad/s^2 limit: each cycle's velocity change is spread over
    its substeps (as a controller interpolates its targets for the drives), so the drive torque does not kick once
    per cycle, and target_moment holds the ramp's acceleration (it was the whole change in the first substep, then
    none: a kick of several Nm on the UR3 shoulder each cycle, and a target_moment without inertia)."""
    sim = SimulatedUR(truth=_frictionless(), rate_hz=rate_hz, initial_q_rad=HOME, noise=False)
    drive_torque = sim._drive_torque
    substep_torques = []

    def spy(q, qd, **kwargs):
        tau = drive_torque(q, qd, **kwargs)
        if kwargs.get("update_reference"):
            substep_torques.append(tau)
        return tau

    monkeypatch.setattr(sim, "_drive_torque", spy)
    ramp = np.array([0.0, 2.0, -2.0, 0.0, 0.0, 0.0])  # rad/s^2
    period = 1.0 / rate_hz
    for k in range(1, int(0.2 * rate_hz)):
        sim.speed_j(ramp * k * period, 20.0)
        state = sim.step()
    per_cycle = np.array(substep_torques).reshape(-1, sim.substeps, 6)[10:]  # past the first cycles' transient
    swing = (per_cycle.max(axis=1) - per_cycle.min(axis=1)).max(axis=0)
    assert swing[1] < 0.1 and swing[2] < 0.1, swing
    model = sim.controller_model.robot_model().model
    expected = pin.rnea(model, model.createData(), state.q_rad, state.qd_rad_s, ramp)
    np.testing.assert_allclose(state.target_moment_nm, expected, atol=0.02)


def test_speed_stop_brings_the_arm_to_rest():
    sim = SimulatedUR(truth_seed=2, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.5, 0.3, -0.4, 0.5, 0.6, 1.0], 5.0)
    sim.step(400)
    sim.speed_stop(5.0)
    sim.step(250)  # 0.2 s ramp + settling
    assert np.max(np.abs(sim.qd_true_rad_s)) < 5e-3
    np.testing.assert_allclose(sim.reference_qd_rad_s, 0.0, atol=1e-12)


def test_direct_torque_zero_is_gravity_compensated():
    # exact nominal plant, no friction: the nominal gravity compensation holds it
    sim = SimulatedUR(truth=_frictionless(), rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.direct_torque(np.zeros(6))
    sim.step(250)
    assert np.max(np.abs(sim.q_true_rad - HOME)) < 1e-6
    # a perturbed frictionless plant drifts: the truth differs from the nominal model
    truth = replace(make_truth("ur3", 4), friction=FrictionParameters.zeros(6))
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.direct_torque(np.zeros(6))
    sim.step(100)
    drift = np.max(np.abs(sim.q_true_rad - HOME))
    assert 1e-4 < drift < 0.3
    # with the true friction the same arm is held roughly (friction absorbs the model error)
    sim = SimulatedUR(truth_seed=4, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.direct_torque(np.zeros(6))
    sim.step(100)
    assert np.max(np.abs(sim.q_true_rad - HOME)) < drift


def test_direct_torque_adds_nominal_gravity_to_the_command():
    sim = SimulatedUR(truth_seed=3, rate_hz=500, initial_q_rad=HOME, noise=False)
    command = np.array([1.0, -2.0, 0.5, 0.1, -0.1, 0.05])
    sim.direct_torque(command)
    state = sim.step()
    nominal = DynamicModel.nominal("ur3").robot_model()
    q_before = sim.q_true_rad  # last substep started within 0.5 ms of this: gravity barely changes
    g = pin.computeGeneralizedGravity(nominal.model, nominal.new_data(), q_before)
    np.testing.assert_allclose(sim.motor_torque_nm, command + g, atol=0.05)
    assert sim.mode == "torque"
    np.testing.assert_allclose(state.target_moment_nm, sim.motor_torque_nm)


def test_currents_times_drive_gains_are_the_motor_torque():
    sim = SimulatedUR(truth_seed=6, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.3, -0.2, 0.4, 0.5, -0.5, 0.8], 3.0)
    for _ in range(50):
        state = sim.step(3)
        np.testing.assert_allclose(state.current_a * sim.truth.drive_gains_nm_per_a, sim.motor_torque_nm,
                                   rtol=1e-12, atol=1e-12)
    # true and nominal gains differ, so current and target current disagree systematically
    assert not np.allclose(sim.truth.drive_gains_nm_per_a, nominal_drive_gains("ur3"))


@pytest.mark.parametrize("kind", ["p2", "real"])
def test_target_current_is_the_controller_model_with_its_friction(kind):
    """UR's target_current = (target_moment + the controller's friction model at the reference velocity) / the
    nominal gains; target_moment excludes friction (ur.md). At a constant speed the difference is the controller's
    friction there (the P2 part of the arm type's nominal friction of the truth's kind), and the target current
    times the nominal gains is closer to the drive torque (current x true gains) than the moment alone."""
    sim = SimulatedUR(truth=make_truth("ur3", 6, friction=kind), rate_hz=500, initial_q_rad=HOME, noise=False)
    command = np.array([0.3, -0.2, 0.4, 0.5, -0.5, 0.8])
    sim.speed_j(command, 3.0)
    sim.step(250)  # 0.5 s: at the commanded speed (0.27 s at 3 rad/s^2)
    gains = nominal_drive_gains("ur3")
    states = [sim.step() for _ in range(50)]
    for state in states:
        np.testing.assert_allclose(state.target_current_a * gains - state.target_moment_nm,
                                   friction_torque(controller_friction("ur3", kind), command), rtol=1e-9, atol=1e-9)
    true_torque = np.array([s.current_a for s in states]) * sim.truth.drive_gains_nm_per_a
    with_friction = np.array([s.target_current_a for s in states]) * gains
    moment = np.array([s.target_moment_nm for s in states])
    assert np.all(np.abs(with_friction - true_torque).mean(axis=0) < 0.5 * np.abs(moment - true_torque).mean(axis=0))
    sim.direct_torque(np.zeros(6))
    state = sim.step()
    np.testing.assert_allclose(state.target_current_a * gains, state.target_moment_nm, rtol=1e-12, atol=1e-12)


def test_target_current_takes_the_friction_of_a_nominal_model_that_has_one():
    """A nominal model passed in with its own friction (an identified model): target_current adds the P2 part of
    that friction, not the arm type's; one without friction gets the arm type's."""
    own = make_truth("ur3", 2, friction="real")
    command = np.array([0.3, -0.2, 0.4, 0.5, -0.5, 0.8])
    for nominal, expected in ((own, p2_part(own.friction)), (controller_model("ur3"), controller_friction("ur3"))):
        sim = SimulatedUR(truth_seed=6, rate_hz=500, initial_q_rad=HOME, noise=False, nominal_model=nominal)
        sim.speed_j(command, 3.0)
        sim.step(250)
        state = sim.step()
        np.testing.assert_allclose(state.target_current_a * nominal.drive_gains_nm_per_a - state.target_moment_nm,
                                   friction_torque(expected, command), rtol=1e-9, atol=1e-9)


def test_applied_friction_is_the_package_friction_model():
    truth = make_truth("ur3", 8)
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.4, -0.3, 0.3, 0.6, -0.6, 0.9], 4.0)
    sim.step(300)  # constant velocity: the implicit correction D·Δq̇ is negligible
    for _ in range(20):
        sim.step()
        qd_before = sim.qd_true_rad_s  # within one 0.5 ms substep of the friction evaluation
        np.testing.assert_allclose(sim.friction_torque_nm, friction_torque(truth.friction, qd_before), atol=1e-6)


def test_motor_torque_follows_the_true_model_at_constant_velocity():
    """At constant velocity the drive torque = true gravity + Coriolis + friction (what identification fits)."""
    truth = make_truth("ur3", 9)
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.5, 0, 0, 0, 0, 0], 5.0)
    sim.step(250)
    true_model = truth.robot_model()
    nominal_model = DynamicModel.nominal("ur3").robot_model()
    data_t, data_n = true_model.new_data(), nominal_model.new_data()
    q, qd = sim.q_true_rad, sim.qd_true_rad_s
    expected = pin.rnea(true_model.model, data_t, q, qd, np.zeros(6)) + friction_torque(truth.friction, qd)
    np.testing.assert_allclose(sim.motor_torque_nm, expected, atol=1e-3)
    # and this differs from the nominal-model target moment by clearly more than that
    nominal = pin.rnea(nominal_model.model, data_n, q, qd, np.zeros(6))
    assert np.max(np.abs(sim.motor_torque_nm - nominal)) > 0.5


def test_same_seeds_same_run_and_noise_seed_changes_noise():
    def run(noise_seed):
        sim = SimulatedUR(truth_seed=3, noise_seed=noise_seed, rate_hz=500, initial_q_rad=HOME)
        sim.speed_j([0.2, 0.1, -0.1, 0.2, 0.3, 0.4], 2.0)
        return [sim.step() for _ in range(100)]

    a, b, c = run(1), run(1), run(2)
    for sa, sb in zip(a, b):
        for field in ("q_rad", "qd_rad_s", "current_a", "tcp_wrench_base", "target_moment_nm"):
            np.testing.assert_array_equal(getattr(sa, field), getattr(sb, field))
    assert not np.array_equal(a[-1].current_a, c[-1].current_a)
    # the noise is noise, not a different plant
    np.testing.assert_allclose(a[-1].q_rad, c[-1].q_rad, atol=1e-4)


def test_measurements_are_quantised_and_noisy():
    sim = SimulatedUR(truth_seed=3, rate_hz=500, initial_q_rad=HOME)
    state = sim.step(10)
    step = sim.sensor_noise.position_resolution_rad
    np.testing.assert_allclose(state.q_rad / step, np.round(state.q_rad / step), atol=1e-6)
    currents = np.array([sim.step().current_a for _ in range(200)])
    assert 0.005 < np.std(currents[:, 5]) < 0.1


def test_default_rate_follows_the_generation_and_can_be_overridden():
    assert SimulatedUR(robot="ur3").rate_hz == 125.0
    e_series = SimulatedUR(robot="ur3e")
    assert e_series.rate_hz == 500.0 and e_series.period_s == pytest.approx(0.002)
    assert e_series.substeps == 4
    assert SimulatedUR(robot="ur3", rate_hz=500.0).substeps == 4
    assert SimulatedUR(robot="ur3").substeps == 16
    state = e_series.step(3)
    assert isinstance(state, RobotState) and state.timestamp_s == pytest.approx(0.006)


def test_protective_stop_stops_and_refuses_motion_until_cleared():
    sim = SimulatedUR(truth_seed=1, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.8, 0, 0, 0, 0, 0], 10.0)
    sim.step(200)
    sim.protective_stop()
    state = sim.step(100)  # 0.8 rad/s at 10 rad/s² stops in 80 ms
    assert state.safety_mode == SafetyMode.PROTECTIVE_STOP
    assert abs(sim.qd_true_rad_s[0]) < 5e-3
    sim.speed_j([0.8, 0, 0, 0, 0, 0], 10.0)
    sim.direct_torque(np.full(6, 5.0))
    q_held = sim.q_true_rad
    sim.step(100)
    assert np.max(np.abs(sim.q_true_rad - q_held)) < 2e-3
    sim.clear_protective_stop()
    assert sim.state().safety_mode == SafetyMode.PROTECTIVE_STOP  # reported from the next cycle
    assert sim.step().safety_mode == SafetyMode.NORMAL
    sim.speed_j([0.8, 0, 0, 0, 0, 0], 10.0)
    sim.step(100)
    assert sim.qd_true_rad_s[0] > 0.5


def test_payload_is_in_the_plant_and_in_the_controllers_gravity_model():
    truth = _frictionless()
    sim = SimulatedUR(truth=truth, payload_kg=1.5, payload_com_m=(0, 0, 0.05), rate_hz=500,
                      initial_q_rad=HOME, noise=False)
    sim.direct_torque(np.zeros(6))
    sim.step(100)
    assert np.max(np.abs(sim.q_true_rad - HOME)) < 1e-6  # the set payload is compensated
    # the payload hangs past the F/T sensor, and the report removes its static weight
    np.testing.assert_allclose(sim.ft_sensor_wrench_flange()[:3] @ sim.ft_sensor_wrench_flange()[:3],
                               (1.5 * 9.81) ** 2, rtol=1e-3)
    np.testing.assert_allclose(sim.tcp_wrench_base_true(), 0.0, atol=1e-3)


# joint damping of the test's torque loop, N·m·s/rad: small on the light wrists so that a
# 125 Hz zero-order hold stays stable (b·T/J < 2)
_PRESS_DAMPING = np.array([3.0, 3.0, 2.0, 0.3, 0.3, 0.3])


def _press(sim, force_n, cycles):
    """Torque-mode press of the tool along world -z with joint damping; returns contact-force history."""
    model = load_robot("ur3")
    data = model.new_data()
    forces, wrenches = [], []
    for _ in range(cycles):
        q = sim.q_true_rad
        pin.computeJointJacobians(model.model, data, q)
        pin.framesForwardKinematics(model.model, data, q)
        jac = pin.getFrameJacobian(model.model, data, model.tool_frame_id, pin.LOCAL_WORLD_ALIGNED)
        sim.direct_torque(jac.T @ np.array([0, 0, -force_n, 0, 0, 0]) - _PRESS_DAMPING * sim.qd_true_rad_s)
        state = sim.step()
        forces.append(sim.contact_force_world())
        wrenches.append(state.tcp_wrench_base)
    return np.array(forces), np.array(wrenches)


def _tool_down_above(sim, xyz):
    """Joint angles putting tool0 at ``xyz`` with tool z pointing down (damped least squares)."""
    model = load_robot("ur3")
    data = model.new_data()
    target = pin.SE3(np.diag([1.0, -1.0, -1.0]), np.asarray(xyz, float))
    q = np.array([0.0, -1.0, 1.8, -2.37, -1.57, 0.0])
    for _ in range(100):
        pin.framesForwardKinematics(model.model, data, q)
        err = pin.log6(data.oMf[model.tool_frame_id].actInv(target)).vector
        jac = pin.computeFrameJacobian(model.model, data, q, model.tool_frame_id, pin.LOCAL)
        q = q + np.linalg.solve(jac.T @ jac + 1e-9 * np.eye(6), jac.T @ err)
    assert np.linalg.norm(err) < 1e-9
    return np.mod(q + np.pi, 2 * np.pi) - np.pi


@pytest.mark.parametrize("rate_hz", [500.0, 125.0])
def test_stiff_contact_ten_newton_press_sub_millimetre_no_chatter(rate_hz):
    tool = Tool(length_m=0.10, tip_radius_m=0.01, mass_kg=0.3)
    scene = polishing_scene(surface_top_m=(0.30, 0.0, 0.0), tool=tool)
    sim = SimulatedUR(truth=_frictionless(), rate_hz=rate_hz, scene=scene, noise=False)
    sim.reset(_tool_down_above(sim, (0.30, 0.0, tool.length_m + tool.tip_radius_m + 0.003)))
    forces, wrenches = _press(sim, 10.0, int(rate_hz))
    settled = forces[-int(rate_hz / 4):]
    assert np.mean(settled[:, 2]) == pytest.approx(10.0, abs=0.5)  # the surface pushes up on the tool
    assert np.std(settled[:, 2]) < 0.15  # no chatter
    assert np.max(forces[:, 2]) < 60.0  # a 3 mm drop is not a violent impact
    penetration = tool.tip_radius_m - scene.surface.signed_distance_m(sim.tool_tip_position_world())
    assert 1e-6 < penetration < 0.3e-3
    # the F/T report (weight-compensated, base frame) matches the true contact force
    # (to the tool's own inertial forces: 0.3 kg jiggling under the 125 Hz torque loop)
    np.testing.assert_allclose(wrenches[-1][:3], forces[-1], atol=0.15)
    # and so does the moment about the flange: tip lever × contact force
    lever = sim.tool_tip_position_world() - sim.flange_pose_base()[:3, 3] - sim.base_position_world_m
    lever = lever - tool.tip_radius_m * scene.surface.normal_world(sim.tool_tip_position_world())
    np.testing.assert_allclose(wrenches[-1][3:], np.cross(lever, forces[-1]), atol=0.03)


def test_force_limit_triggers_a_protective_stop():
    tool = Tool()
    scene = polishing_scene(surface_top_m=(0.30, 0.0, 0.0), tool=tool)
    sim = SimulatedUR(truth=_frictionless(), rate_hz=500, scene=scene, noise=False, protective_force_limit_n=20.0)
    sim.reset(_tool_down_above(sim, (0.30, 0.0, tool.length_m + tool.tip_radius_m + 0.003)))
    _press(sim, 40.0, 300)
    assert sim.in_protective_stop and "force" in sim.protective_stop_reason
    assert sim.state().safety_mode == SafetyMode.PROTECTIVE_STOP


def test_base_motion_moves_the_base_kinematically():
    motion = SinusoidalBaseMotion(amplitude_m=(0.03, 0.0, 0.0), frequency_hz=(0.25, 0.0, 0.0))
    sim = SimulatedUR(truth_seed=1, rate_hz=500, scene=Scene(base_motion=motion), initial_q_rad=HOME, noise=False)
    sim.step(500)  # t = 1 s: a quarter period
    np.testing.assert_allclose(sim.base_position_world_m, [0.03, 0.0, 0.0], atol=1e-6)
    # joints are held by the servo; the flange pose in the base frame is unaffected
    assert np.max(np.abs(sim.q_true_rad - HOME)) < 2e-3
    sim.step(250)  # t = 1.5 s: the base moves in -x
    expected_vx = 0.03 * 2 * np.pi * 0.25 * np.cos(2 * np.pi * 0.25 * 1.5)
    # the links carry the base's velocity (contact damping and friction see it)
    np.testing.assert_allclose(sim.flange_velocity_world(), [expected_vx, 0, 0], atol=2e-3)


def test_truth_can_be_given_as_a_model_file(tmp_path):
    truth = make_truth("ur3", 12)
    path = truth.save(tmp_path / "truth.yaml")
    sim = SimulatedUR(truth=path, rate_hz=500, noise=False)
    np.testing.assert_allclose(sim.truth.link_mass_kg, truth.link_mass_kg)


def test_realtime_mode_sleeps_to_deadlines():
    sim = SimulatedUR(truth_seed=1, rate_hz=500, realtime=True)
    start = time.perf_counter()
    sim.step(50)
    assert time.perf_counter() - start >= 0.09


def test_bad_commands_are_rejected_with_clear_errors():
    sim = SimulatedUR(rate_hz=500)
    with pytest.raises(ValueError, match="6 finite joint velocities"):
        sim.speed_j([0.1, 0.2], 1.0)
    with pytest.raises(ValueError, match="acceleration"):
        sim.speed_j(np.zeros(6), 0.0)
    with pytest.raises(ValueError, match="finite torques"):
        sim.direct_torque([np.nan] * 6)
    with pytest.raises(ValueError, match="rate_hz"):
        SimulatedUR(rate_hz=0.0)
    with pytest.raises(ValueError, match="truth is a model of 'ur3e'"):
        SimulatedUR(robot="ur3", truth=nominal_truth("ur3e"))


def test_fused_friction_evaluation_equals_the_package_model():
    from robot_dynamics_id.sim.joint_friction import JointFriction

    p2 = make_truth("ur3", 13).friction
    # also an identified model simulated as the truth: beyond its speed range the held terms and the growth
    # (dynamics/friction.py)
    bounded = replace(make_truth("ur3", 13, friction="real").friction, presliding_distance_rad=np.zeros(6),
                      terms=("p2+load+poly",) * 6, speed_range_rad_s=np.array([0.3, 0.5, 0.8, 1.0, 1.2, 0.4]))
    load = np.array([2.0, -10.0, 4.0, 1.0, -0.5, 0.1])
    rng = np.random.default_rng(0)
    for friction, load_torque in ((p2, None), (bounded, load)):
        evaluator = JointFriction(friction)

        def reference(qd):
            return friction_torque(friction, qd, load_torque_nm=load_torque)

        for qd in np.concatenate([rng.normal(0, 0.002, (50, 6)), rng.normal(0, 1.0, (50, 6))]):
            torque, slope = evaluator.torque_and_slope(qd, load_torque)
            np.testing.assert_allclose(torque, reference(qd), rtol=0, atol=1e-12)
            h = 1e-7  # the slope is the derivative (it is integrated implicitly)
            numeric = (reference(qd + h) - reference(qd - h)) / (2 * h)
            np.testing.assert_allclose(slope, numeric, rtol=1e-4, atol=1e-3)


def _links_torque(truth, q, qd, qdd):
    links = truth.robot_model().model.copy()
    links.armature = np.zeros(6)
    return np.array(pin.rnea(links, links.createData(), q, qd, qdd))


def test_real_friction_at_constant_velocity_is_the_extended_model():
    """At constant velocity the plant's friction = the model with the links' load torque and a fully slid state."""
    truth = make_truth("ur3", 8, friction="real")
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    sim.speed_j([0.4, -0.3, 0.3, 0.6, -0.6, 0.9], 4.0)
    sim.step(300)
    for _ in range(10):
        sim.step()
        q, qd = sim.q_true_rad, sim.qd_true_rad_s
        load = _links_torque(truth, q, qd, np.zeros(6))
        expected = friction_torque(truth.friction, qd, load_torque_nm=load, presliding_state=np.sign(qd))
        np.testing.assert_allclose(sim.friction_torque_nm, expected, atol=2e-3)
    # the load-dependent part is really there: the shoulder carries its arm's weight
    assert truth.friction.load_coefficient[1] * abs(load[1]) > 0.1


def test_a_joint_at_rest_holds_torque_in_the_direction_it_last_moved():
    """Presliding: after moving + and stopping the friction holds +; after moving - it holds -."""
    truth = nominal_truth("ur3", friction="real")
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    model = truth.robot_model()
    held = []
    for direction in (1.0, -1.0, 1.0):
        sim.speed_j(direction * np.array([0.3, 0, 0, 0, 0.3, 0]), 2.0)
        sim.step(500)
        sim.speed_j(np.zeros(6), 2.0)
        sim.step(500)
        assert np.max(np.abs(sim.qd_true_rad_s)) < 1e-6  # at rest
        gravity = pin.computeGeneralizedGravity(model.model, model.new_data(), sim.q_true_rad)
        held.append((sim.motor_torque_nm - gravity)[[0, 4]])
    held = np.array(held)
    breakaway = (truth.friction.coulomb_nm + truth.friction.static_nm)[[0, 4]]
    assert np.all(held[0] > 0.3 * breakaway) and np.all(held[1] < -0.3 * breakaway) and np.all(held[2] > 0)
    assert np.all(np.abs(held) <= breakaway + 1e-6)


def test_extended_friction_slope_is_its_derivative():
    from robot_dynamics_id.sim.joint_friction import JointFriction

    truth = make_truth("ur3", 13, friction="real")
    friction = replace(truth.friction, presliding_distance_rad=np.r_[1e-3, 1e-3, 1e-3, 0.0, 0.0, 0.0],
                       terms=("p2+load+poly+presliding",) * 3 + ("p2+load+poly",) * 3)
    evaluator = JointFriction(friction)
    evaluator.state = np.array([0.3, -1.0, 1.0, 0.0, 0.0, 0.0])
    load = np.array([2.0, -10.0, 4.0, 1.0, -0.5, 0.1])
    rng = np.random.default_rng(0)
    for qd in np.concatenate([rng.normal(0, 0.02, (20, 6)), rng.normal(0, 1.0, (20, 6))]):
        torque, slope = evaluator.torque_and_slope(qd, load)
        state = np.where(friction.presliding, evaluator.state, np.nan)
        expected = friction_torque(friction, qd, load_torque_nm=load, presliding_state=state)
        np.testing.assert_allclose(torque, expected, atol=1e-12)
        h = 1e-7
        numeric = (friction_torque(friction, qd + h, load_torque_nm=load, presliding_state=state)
                   - friction_torque(friction, qd - h, load_torque_nm=load, presliding_state=state)) / (2 * h)
        np.testing.assert_allclose(slope, numeric, rtol=1e-4, atol=1e-3)


def test_a_tilted_mount_is_simulated_and_known_to_the_controller():
    """The truth's gravity (its mount) acts in MuJoCo, and the simulated controller's gravity compensation uses it
    (UR's installation): direct_torque(0) holds a frictionless nominal arm mounted 30 degrees tilted."""
    tilt = np.radians(30.0)
    gravity = 9.81 * np.array([0.0, np.sin(tilt), -np.cos(tilt)])
    truth = replace(_frictionless(), gravity_m_s2=gravity)
    sim = SimulatedUR(truth=truth, rate_hz=500, initial_q_rad=HOME, noise=False)
    np.testing.assert_allclose(sim._mj_model.opt.gravity, gravity)
    sim.direct_torque(np.zeros(6))
    sim.step(250)
    assert np.max(np.abs(sim.q_true_rad - HOME)) < 1e-6
    tilted = load_robot("ur3", gravity_m_s2=gravity)
    expected = pin.computeGeneralizedGravity(tilted.model, tilted.new_data(), HOME)
    floor = pin.computeGeneralizedGravity(load_robot("ur3").model, load_robot("ur3").new_data(), HOME)
    np.testing.assert_allclose(sim.motor_torque_nm, expected, atol=0.02)
    assert np.max(np.abs(expected - floor)) > 1.0  # the mount matters at this pose
