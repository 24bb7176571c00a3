"""The stateful controller: refusals, stop(), output modes, stages and events."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.contact import ContactStage
from robot_dynamics_id.control.controller import ContactForceExceeded, OperationalSpaceController
from robot_dynamics_id.control.controller_config import ControllerConfig, OutputMode, Payload
from robot_dynamics_id.io.model_file import DynamicModel

Q = np.array([0.0, -1.9, -1.6, -1.2, np.pi / 2, 0.0])


@pytest.fixture(scope="module")
def model():
    return DynamicModel.nominal("ur3")


def _controller(model, **options):
    ctl = OperationalSpaceController(model, config=ControllerConfig(**options))
    ctl.osm.update(Q, np.zeros(6))
    return ctl


def test_bad_targets_are_refused_with_clear_messages(model):
    ctl = _controller(model)
    here = ctl.osm.position_m.copy()
    with pytest.raises(ValueError, match="3 finite numbers"):
        ctl.set_motion_target([np.nan, 0.0, 0.3])
    with pytest.raises(ValueError, match="beyond the arm's reach"):
        ctl.set_motion_target([2.0, 0.0, 0.3])
    with pytest.raises(ValueError, match="not a rotation matrix"):
        ctl.set_motion_target(here, 2 * np.eye(3))
    with pytest.raises(ValueError, match="exceeds the configured limit"):
        ctl.set_force_target(500.0)
    with pytest.raises(ValueError, match="finite"):
        ctl.set_force_target(float("nan"))
    with pytest.raises(ValueError, match="-10 N is negative: the tool pushes into the surface"):
        ctl.set_force_target(wrench_task=[0.0, 0.0, -10.0, 0.0, 0.0, 0.0], start_contact=True)
    with pytest.raises(ValueError, match="no motion target"):
        ctl.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6))
    ctl.set_motion_target(here, ctl.osm.rotation)
    with pytest.raises(ValueError, match="NaN"):
        ctl.step(Q * np.nan, np.zeros(6), 0.0, wrench_base=np.zeros(6))
    with pytest.raises(ValueError, match="needs wrench_base"):
        ctl.step(Q, np.zeros(6), 0.0)
    with pytest.raises(ValueError, match="period_s"):
        ControllerConfig(period_s=0.0)


def test_a_target_that_puts_the_tool_tip_below_the_floor_is_refused(model):
    # the tool points down at Q: the tip (0.11 m along tool z) is below the motion point
    ctl = _controller(model, target_min_z_m=0.0)
    r = ctl.osm.rotation.copy()
    assert r[2, 2] < -0.9
    high = ctl.osm.position_m.copy()
    high[2] = 0.15
    ctl.set_motion_target(high, r)  # tip at ~0.04 m: above the floor
    low = high - [0.0, 0.0, 0.06]  # motion point at 0.09 m, above the floor, but the tip at ~-0.02 m
    with pytest.raises(ValueError, match=r"puts the tool tip at z = -0\.0\d+ m, below the floor target_min_z_m = 0 m"):
        ctl.set_motion_target(low, r)
    with pytest.raises(ValueError, match="puts the tool tip"):  # without a rotation: the target's present one
        ctl.check_motion_target(low)
    np.testing.assert_allclose(ctl._x_d, high)  # the refused target changed nothing
    tool_up = r @ np.diag([1.0, -1.0, -1.0])  # tip above the motion point: the motion point is what is low
    with pytest.raises(ValueError, match="puts the motion point at z = -0.0100 m"):
        ctl.check_motion_target(high - [0.0, 0.0, 0.16], tool_up)
    # a target exactly on the floor is on it (the polishing approach aims the tip there)
    on_floor = high.copy()
    on_floor[2] -= float(ctl.lowest_point(high, r)[1])
    ctl.check_motion_target(on_floor, r)
    # an arm that starts below the floor is not held there: the message says how to get out
    with pytest.raises(ValueError, match=r"the arm starts with its tool tip at z = -0\.0\d+ m, below target_min_z_m = "
                                         r"0 m: move it above the floor \(freedrive or the pendant\)"):
        ctl.check_start(low, r)
    ctl.check_start(high, r)
    # no floor by default: an arm on a pedestal reaches below its base
    _controller(model).set_motion_target(low, r)
    _controller(model).check_start(low, r)
    with pytest.raises(ValueError, match="target_min_z_m must be None or a finite height"):
        ControllerConfig(target_min_z_m=float("nan"))


def test_the_way_to_a_goal_is_refused_when_the_turn_may_sweep_the_tip_below_the_floor(model):
    ctl = _controller(model, target_min_z_m=0.05)
    r_down = ctl.osm.rotation.copy()  # tool z pointing down
    p0 = np.r_[ctl.osm.position_m[:2], 0.25]
    tip = ctl.osm.tip_position_m - ctl.osm.position_m
    assert np.linalg.norm(tip) == pytest.approx(0.11, abs=1e-6) and tip[2] < -0.1
    # the goal: 0.11 m lower, the tool turned to horizontal; both ends keep the tip at ~0.14 m, but the move may
    # end before the turn (their own profiles): the tip may pass 0.14 - 0.11 = 0.03 m, below the 0.05 m floor
    r_side = r_down @ pin.exp3(np.array([np.pi / 2, 0.0, 0.0]))
    p1 = p0 - [0.0, 0.0, 0.11]
    for p, r in ((p0, r_down), (p1, r_side)):
        ctl.check_motion_target(p, r)
        assert ctl.lowest_point(p, r)[1] > 0.13
    with pytest.raises(ValueError, match=r"on the way to motion target .* the tool tip may pass z = 0\.03\d+ m, "
                                         r"below the floor target_min_z_m = 0.05 m .*send an intermediate goal"):
        ctl.check_way(p0, r_down, p1, r_side)
    ctl.check_way(p0, r_down, p0, r_side)  # turning first, at the height of p0: the tip stays at 0.14 m or above
    ctl.check_way(p0, r_down, p0 + [0.05, 0.0, 0.0], r_down)  # a sideways move keeps its height
    # braking's overshoot counts: a tip 5 mm over the floor is refused with 10 mm of possible overshoot
    p_low = p0.copy()
    p_low[2] = 0.05 + 0.005 - ctl.lowest_point(p0, r_down)[1] + p0[2]
    ctl.check_way(p0, r_down, p_low, r_down)
    with pytest.raises(ValueError, match="braking may overshoot 10 mm"):
        ctl.check_way(p0, r_down, p_low, r_down, overshoot=(0.01, 0.0))
    _controller(model).check_way(p0, r_down, p1, r_side)  # no floor, nothing to check


def test_torque_output_subtracts_the_robots_own_gravity(model):
    payload = Payload(0.3, (0.0, 0.0, 0.05), ((1e-3, 0, 0), (0, 1e-3, 0), (0, 0, 1e-4)))
    ctl = _controller(model, payload=payload, friction_compensation=False)
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.enter_free_motion()
    cmd = ctl.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6))
    # at rest on target: Gamma = g(q) of the model with payload, and the robot adds g itself
    g = pin.computeGeneralizedGravity(ctl.osm.model, ctl.osm.model.createData(), Q)
    np.testing.assert_allclose(cmd.joint_torque_nm, g, atol=1e-9)
    np.testing.assert_allclose(cmd.torque_nm, 0.0, atol=1e-9)
    ctl2 = _controller(model, payload=payload, friction_compensation=False, robot_adds_gravity=False)
    ctl2.set_motion_target(ctl2.osm.position_m, ctl2.osm.rotation)
    ctl2.enter_free_motion()
    np.testing.assert_allclose(ctl2.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6)).torque_nm, g, atol=1e-9)


def test_velocity_output_integrates_the_closed_loop_model(model):
    ctl = _controller(model, output_mode="velocity", period_s=0.008)
    here = ctl.osm.position_m.copy()
    ctl.set_motion_target(here + np.array([0.0, 0.0, 0.01]), ctl.osm.rotation)
    ctl.enter_free_motion()
    ctl.reset_velocity_integrator(np.zeros(6))
    cmd = ctl.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6))
    assert cmd.mode is OutputMode.VELOCITY
    # one period of the commanded acceleration kp * 0.01 m/s^2 upwards
    up = ctl.config.kp_position_per_s2 * 0.01 * 0.008
    np.testing.assert_allclose(ctl.osm.J @ cmd.velocity_rad_s, [0, 0, up, 0, 0, 0], atol=1e-6)


def test_velocity_output_from_its_command_damps_the_commanded_twist(model):
    # On target, the arm measured moving, the previous command zero: integrated from the command, the law damps
    # the commanded twist (zero) and commands nothing; integrated from the measured velocity, it damps the
    # measured one.
    moving = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.05])
    for base, still in (("command", True), ("measured", False)):
        ctl = _controller(model, output_mode="velocity", period_s=0.008, velocity_integration_base=base)
        ctl.set_motion_target(ctl.osm.position_m.copy(), ctl.osm.rotation.copy())
        ctl.enter_free_motion()
        ctl.reset_velocity_integrator(np.zeros(6))
        cmd = ctl.step(Q, moving, 0.0, wrench_base=np.zeros(6))
        assert bool(np.abs(cmd.velocity_rad_s).max() < 1e-9) is still, (base, cmd.velocity_rad_s)


def test_stop_commands_zero_and_holds(model):
    ctl = _controller(model)
    ctl.set_motion_target(ctl.osm.position_m + 0.05, ctl.osm.rotation)
    ctl.enter_free_motion()
    assert np.abs(ctl.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6)).torque_nm).max() > 0
    cmd = ctl.stop()
    assert cmd.stopped and not cmd.torque_nm.any() and not cmd.velocity_rad_s.any()
    again = ctl.step(Q, np.zeros(6), 0.01, wrench_base=np.zeros(6))
    assert again.stopped and not again.torque_nm.any()


def test_contact_stages_are_reported_through_step(model):
    ctl = _controller(model, min_impact_duration_s=0.0)
    rotation = ctl.osm.rotation
    ctl.set_motion_target(ctl.osm.position_m, rotation)
    ctl.set_force_target(10.0)
    ctl.start_approach(0.0)
    z = rotation[:, 2]
    press = np.r_[-15.0 * z, 0, 0, 0]  # environment pushes back on the tool: robot presses 15 N
    cmd = ctl.step(Q, np.zeros(6), 0.002, wrench_base=press)
    assert cmd.stage is ContactStage.IMPACT and cmd.events[0].to_stage is ContactStage.IMPACT
    cmd = ctl.step(Q, np.zeros(6), 0.004, wrench_base=np.r_[-5.0 * z, 0, 0, 0])
    assert cmd.stage is ContactStage.HYBRID
    # force error along tool z (task axes) is f_d - f = 10 - 5
    assert cmd.force_error[2] == pytest.approx(5.0, abs=1e-9)
    assert [e.to_stage for e in ctl.events] == [ContactStage.APPROACH, ContactStage.IMPACT, ContactStage.HYBRID]


def test_a_force_target_in_free_motion_starts_the_contact_sequence(model):
    """The external task: a wrench target alone begins the approach at the next step (else the force would never
    be regulated)."""
    ctl = _controller(model)
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.enter_free_motion()
    ctl.set_force_target(wrench_task=[0, 0, 0, 0, 0, 0], start_contact=False)
    assert ctl.step(Q, np.zeros(6), 0.002, wrench_base=np.zeros(6)).stage is ContactStage.FREE
    ctl.set_force_target(wrench_task=[0, 0, 8.0, 0, 0, 0], start_contact=True)
    cmd = ctl.step(Q, np.zeros(6), 0.004, wrench_base=np.zeros(6))
    assert cmd.stage is ContactStage.APPROACH and ctl.events[-1].time_s == 0.004
    assert [e.to_stage for e in cmd.events] == [ContactStage.APPROACH]  # reported this cycle, as the node logs


def test_a_contact_force_beyond_the_stop_limit_stops_the_law(model):
    """Targets are bounded by max_force_n; a measured force past 1.25 x max_force_n (a contact the law does not
    regulate) raises, and the node stops the arm on it."""
    ctl = _controller(model, max_force_n=40.0)
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.enter_free_motion()
    z = ctl.osm.rotation[:, 2]
    ctl.step(Q, np.zeros(6), 0.002, wrench_base=np.r_[-49.0 * z, 0, 0, 0])  # 49 N: within 1.25 x 40
    with pytest.raises(ContactForceExceeded, match=r"contact force 51.0 N exceeds 50 N \(1.25 x max_force_n 40 N\)"):
        ctl.step(Q, np.zeros(6), 0.004, wrench_base=np.r_[-51.0 * z, 0, 0, 0])


def test_sensorless_mode_needs_drive_gains_in_the_model(model):
    assert model.drive_gains_nm_per_a is None  # the nominal model knows no gains (UR publishes none)
    with pytest.raises(ValueError, match="has no drive gains"):
        _controller(model, force_source="estimated")
    with pytest.raises(ValueError, match="implausible"):
        _controller(replace(model, drive_gains_nm_per_a=np.full(6, 1e9)), force_source="estimated")


def test_sensorless_mode_needs_currents(model):
    ctl = _controller(replace(model, drive_gains_nm_per_a=np.array([10, 10, 8, 6, 6, 6.0])), force_source="estimated")
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.enter_free_motion()
    with pytest.raises(ValueError, match="needs current_a"):
        ctl.step(Q, np.zeros(6), 0.0)
    cmd = ctl.step(Q, np.zeros(6), 0.0, current_a=np.zeros(6))
    assert np.all(np.isfinite(cmd.torque_nm))


def test_law_option_is_validated(model):
    with pytest.raises(ValueError, match="law must be"):
        ControllerConfig(law="impedance")
    with pytest.raises(ValueError, match="needs output_mode='torque'"):
        ControllerConfig(law="projected", output_mode="velocity")


def test_projected_and_operational_space_laws_agree_at_rest_on_target(model):
    # At rest, on the motion target, pressing exactly f_d: both laws command gravity plus the
    # torque that presses f_d along tool z at the tip (P2 eq. (2) feed-forward; P5 eq. (52)).
    torques = []
    for law in ("operational_space", "projected"):
        ctl = _controller(model, law=law, friction_compensation=False, robot_adds_gravity=False,
                          min_impact_duration_s=0.0)
        ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
        ctl.set_force_target(10.0)
        ctl.start_approach(0.0)
        z = ctl.osm.tip_rotation[:, 2]
        ctl.step(Q, np.zeros(6), 0.002, wrench_base=np.r_[-12.0 * z, 0, 0, 0])  # impact
        # the sensor reads the environment's wrench, moment about the flange (tool0 = motion point)
        tip_lever = ctl.osm.tip_position_m - ctl.osm.position_m
        w_env = np.r_[-10.0 * z, np.cross(tip_lever, -10.0 * z)]
        cmd = ctl.step(Q, np.zeros(6), 0.004, wrench_base=w_env)
        assert cmd.stage is ContactStage.HYBRID
        torques.append(cmd.torque_nm.copy())
    np.testing.assert_allclose(torques[1], torques[0], atol=1e-6)
    jac_tip = ctl.osm.jacobian_at_tip()
    g = pin.computeGeneralizedGravity(ctl.osm.model, ctl.osm.model.createData(), Q)
    np.testing.assert_allclose(torques[0], g + jac_tip[:3].T @ (10.0 * z), atol=1e-6)


def test_friction_feed_forward_evaluates_the_extended_model(model):
    """Load-dependent Coulomb and the quadratic viscous term are fed forward as dynamics/friction computes them."""
    from dataclasses import replace

    from robot_dynamics_id.dynamics.friction import SIGN_SMOOTHING_RAD_S, friction_torque
    from robot_dynamics_id.sim.truth import nominal_friction

    rng = np.random.default_rng(2)
    # and an identified model's speed range (beyond it the extension: dynamics/friction.py), exercised past it
    for fr in (nominal_friction("ur3", "real"),
               replace(nominal_friction("ur3", "real"), speed_range_rad_s=np.array([0.3, 0.5, 0.8, 1.0, 1.2, 0.4]))):
        ctl = _controller(replace(model, friction=fr), friction_compensation_velocity_rad_s=SIGN_SMOOTHING_RAD_S)
        for _ in range(10):
            qd = rng.normal(0, 0.8, 6)
            load = rng.normal(0, 10, 6)
            np.testing.assert_allclose(ctl.friction_compensation.torque(qd, load),
                                       friction_torque(fr, qd, load_torque_nm=load), atol=1e-12)
        # without a load torque the load-dependent term is left out, nothing else changes
        qd = rng.normal(0, 0.8, 6)
        np.testing.assert_allclose(ctl.friction_compensation.torque(qd),
                                   friction_torque(fr, qd, load_torque_nm=np.zeros(6)), atol=1e-12)
    assert np.any(np.abs(qd) > fr.speed_range_rad_s)


def test_a_tilted_arm_is_controlled_with_its_mount(model):
    """The model's gravity (the mount) is the controller's and the robot's: at rest on target the law's torque is
    the tilted gravity torque, which the robot adds itself (nothing left to send)."""
    tilted = replace(model, gravity_m_s2=np.array([0.0, 4.905, -8.4957]))
    ctl = _controller(tilted, friction_compensation=False)
    ctl.set_motion_target(ctl.osm.position_m, ctl.osm.rotation)
    ctl.enter_free_motion()
    cmd = ctl.step(Q, np.zeros(6), 0.0, wrench_base=np.zeros(6))
    g_tilted = pin.computeGeneralizedGravity(tilted.robot_model().model, tilted.robot_model().new_data(), Q)
    g_floor = pin.computeGeneralizedGravity(model.robot_model().model, model.robot_model().new_data(), Q)
    assert np.max(np.abs(g_tilted - g_floor)) > 1.0
    np.testing.assert_allclose(cmd.joint_torque_nm, g_tilted, atol=1e-9)
    np.testing.assert_allclose(cmd.torque_nm, 0.0, atol=1e-9)
