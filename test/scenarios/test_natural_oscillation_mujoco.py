"""P1 natural oscillation on the MuJoCo UR3 in torque mode (direct_torque adds the controller's gravity)."""

import numpy as np
import pytest

from robot_dynamics_id.identification.natural_oscillation import run_push_trial
from robot_dynamics_id.identification.natural_oscillation_robot import (
    ArmStopped,
    FallGuard,
    SimulatedRobotLink,
    StreamingVerticalPlaneArm,
)
from robot_dynamics_id.identification.natural_oscillation_ur3 import (
    UR3_UPRIGHT_Q_RAD,
    FrictionCompensatedModel,
    VerticalPlaneGravityModel,
    active_joint_friction,
    reduced_vertical_plane_model,
)
from robot_dynamics_id.scenarios.natural_oscillation_mujoco import (
    MujocoVerticalPlaneArm,
    default_mujoco_experiment,
    mujoco_truth,
    vertical_plane_truth_first_moments,
)
from robot_dynamics_id.sim.truth import controller_model


def _model_with_true_perpendicular(truth):
    up = UR3_UPRIGHT_Q_RAD
    model = VerticalPlaneGravityModel(reduced_vertical_plane_model(controller_model("ur3").robot_model().model, up),
                                      up[[1, 2]])
    true_p = vertical_plane_truth_first_moments(truth)
    model.perpendicular_correction_kgm[:] = true_p[[1, 3]]
    return model, true_p[[0, 2]] / model.first_moments_kgm[[0, 2]]


@pytest.fixture(scope="module")
def frictionless():
    truth = mujoco_truth(1, friction=False)
    return truth, MujocoVerticalPlaneArm(truth=truth)


def test_fall_boundary_lies_within_one_percent_of_the_true_lumped_parameters(frictionless):
    truth, arm = frictionless
    model, true_factor = _model_with_true_perpendicular(truth)
    assert abs(true_factor[0] - 1) > 0.03  # the prior is really wrong (shoulder +5 %)
    exp = default_mujoco_experiment(arm, window_steps=10000)
    for j in (0, 1):  # shoulder, elbow: the other group over-compensated
        f = np.array([1.3, 1.3])
        f[j] = true_factor[j] * 1.01
        above = run_push_trial(arm, model, f, exp)
        f[j] = true_factor[j] * 0.99
        below = run_push_trial(arm, model, f, exp)
        assert not above.fell, f"group {j} fell 1 % over-compensated"
        assert below.fell, f"group {j} did not fall 1 % under-compensated"
    # the PD hold keeps base and wrist joints within a few mrad of upright
    assert arm.max_hold_error_rad < 0.01


def test_without_subtracting_the_controller_gravity_an_under_compensated_arm_oscillates(frictionless):
    truth, arm = frictionless
    model, true_factor = _model_with_true_perpendicular(truth)
    exp = default_mujoco_experiment(arm)
    import dataclasses

    naive = dataclasses.replace(exp, plant_gravity_compensation=None)
    under = np.array([1.3, 0.9 * true_factor[1]])
    assert run_push_trial(arm, model, under, exp).fell
    assert not run_push_trial(arm, model, under, naive).fell  # direct_torque's own g doubles g_hat


def test_friction_holds_an_under_compensated_arm_unless_it_is_fed_forward():
    truth = mujoco_truth(1)  # the plant's normal friction (P2 eq. 11 form)
    arm = MujocoVerticalPlaneArm(truth=truth)
    model, true_factor = _model_with_true_perpendicular(truth)
    exp = default_mujoco_experiment(arm)
    half = np.array([1.3, 0.5])  # elbow gravity 50 % under-compensated
    stuck = run_push_trial(arm, model, half, exp)
    assert not stuck.fell
    assert np.abs(stuck.coordinates_rad[-1] - model.oscillation_coordinates(model.upright_q_rad)).max() < 0.01
    compensated = FrictionCompensatedModel(model, active_joint_friction(truth.friction, [1, 2]))
    assert run_push_trial(arm, compensated, np.array([1.3, 0.97 * true_factor[1]]), exp).fell
    assert not run_push_trial(arm, compensated, np.array([1.3, 1.03 * true_factor[1]]), exp).fell


def test_streaming_procedure_moves_upright_pushes_and_stops_a_fall():
    from robot_dynamics_id.sim.plant import SimulatedUR

    truth = mujoco_truth(1, friction=False)
    start = UR3_UPRIGHT_Q_RAD + np.array([0.0, 0.05, -0.1, 0.0, 0.05, 0.0])
    plant = SimulatedUR(truth=truth, initial_q_rad=start)
    nominal = controller_model("ur3").robot_model().model
    model, true_factor = _model_with_true_perpendicular(truth)
    limit = plant.robot_model.position_limit_rad
    # (with a 1-cycle command delay wrist 1's PD hold rings up to > 3 rad/s during a fast fall: open issue)
    guard = FallGuard(max_excursion_rad=0.3, position_lower_rad=-limit, position_upper_rad=limit,
                      max_velocity_rad_s=3.0)
    ended = []
    arm = StreamingVerticalPlaneArm(link=SimulatedRobotLink(plant, command_delay_cycles=0), guard=guard,
                                    coordinates=model.oscillation_coordinates, on_trial_end=ended.append)
    exp = default_mujoco_experiment(arm, max_excursion_rad=0.3, window_steps=4000,
                                    gravity_compensation=arm.gravity_compensation(nominal))
    import dataclasses

    trial = run_push_trial(arm, model, np.array([1.3, 0.9 * true_factor[1]]), exp)
    assert np.abs(plant.q_true_rad[[0, 3, 4, 5]] - UR3_UPRIGHT_Q_RAD[[0, 3, 4, 5]]).max() < 0.01
    assert trial.fell and arm.falls == 1 and arm.stopped
    arm.link.next_state(0.1)  # the stop command reaches the robot with the next cycle
    assert plant.mode == "velocity"  # the guard's zero-velocity command took the arm out of torque mode
    plant.step(300)
    assert np.abs(plant.qd_true_rad_s).max() < 0.01
    arm.finish_trial()
    assert ended == [{"trial": 1, "fell": True, "duration_s": pytest.approx(trial.time_s[-1], abs=0.01),
                      "fall": "excursion"}]
    # in a trial a joint faster than the guard's speed is a fall: stopped, reported, and the search may go on
    events = []
    fast = StreamingVerticalPlaneArm(link=SimulatedRobotLink(plant), coordinates=model.oscillation_coordinates,
                                     guard=FallGuard(max_excursion_rad=0.3, position_lower_rad=-limit,
                                                     position_upper_rad=limit, max_velocity_rad_s=0.1),
                                     on_event=events.append)
    trial = run_push_trial(fast, model, np.array([1.3, 0.5]),
                           dataclasses.replace(exp, push_qd_rad_s=np.array([0, 0.2])))
    assert trial.fell and fast.falls == 1 and fast.stopped
    assert any(e.startswith("fall: joint") and "above the guard's 0.1 rad/s" in e for e in events), events
    # a position limit is a hard limit: the procedure is aborted
    near = np.abs(plant.q_true_rad) + 0.05
    with pytest.raises(ArmStopped, match="of its position limit"):
        run_push_trial(StreamingVerticalPlaneArm(
            link=SimulatedRobotLink(plant), coordinates=model.oscillation_coordinates,
            guard=FallGuard(max_excursion_rad=0.3, position_lower_rad=-near, position_upper_rad=near)),
            model, np.array([1.3, 0.5]), exp)
