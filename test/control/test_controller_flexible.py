"""The controller's compliant-joint option (Bicchi & Melchiorri, seeds.md P4): a quasi-static UR3
contact in which the joints are torsional springs between the encoder (motor-side) angle and the
link. The plant is independent of the correction's code: pinocchio's fixed point
theta = q + K^-1 J(theta)^T w for the link-side angles, the robot reporting the sensor reading
rotated to the base frame with the RIGID kinematics at the encoder angles (as UR's
actual_TCP_force does)."""

import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.control.contact import ContactStage
from robot_dynamics_id.control.controller import OperationalSpaceController
from robot_dynamics_id.control.controller_config import ControllerConfig
from robot_dynamics_id.control.flexible import UR3_JOINT_STIFFNESS_NM_PER_RAD, compliant_force_setpoint
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots import load_robot

Q_CONTACT = np.array([0.3, -1.2, 1.4, -1.77, -1.57, 0.2])
#: the wrench the tool should apply to the surface, world (base) axes: pressing down with friction
FORCE_WORLD_N = np.array([8.0, -4.0, -30.0])
STIFFNESS = UR3_JOINT_STIFFNESS_NM_PER_RAD / 4  # softer than the assumed default: a visible effect


@pytest.fixture(scope="module")
def model():
    return DynamicModel.nominal("ur3")


def _link_side_angles(pmodel, q, frame_id, load_local, stiffness):
    data = pmodel.createData()
    theta = q.copy()
    for _ in range(100):
        jac = pin.computeFrameJacobian(pmodel, data, theta, frame_id, pin.LOCAL)
        new = q + (jac.T @ load_local) / stiffness
        if np.max(np.abs(new - theta)) < 1e-15:
            break
        theta = new
    return theta


def _steady_state_world_force(model, *, flexible: bool) -> tuple[np.ndarray, OperationalSpaceController]:
    """World-frame force the tool applies once the force loop has settled (force error zero)."""
    ctl = OperationalSpaceController(model, config=ControllerConfig(
        motion_axes=(False, False, False, True, True, True), flexible_compensation=flexible,
        joint_stiffness_nm_per_rad=tuple(STIFFNESS), flexible_compensation_rate_hz=1000.0))
    osm = ctl.osm
    osm.update(Q_CONTACT, np.zeros(6))
    ctl.set_motion_target(osm.position_m, osm.rotation)
    r_tip = osm.tip_rotation.copy()
    ctl.set_force_target(wrench_task=np.r_[r_tip.T @ FORCE_WORLD_N, np.zeros(3)])
    ctl.stages.reset(ContactStage.HYBRID)
    pm, data = osm.model, osm.model.createData()
    tip_id, sensor_id = osm.force_frame_id, osm.motion_frame_id
    pin.framesForwardKinematics(pm, data, Q_CONTACT)
    sensor_to_tip = data.oMf[sensor_id].actInv(data.oMf[tip_id])
    r_sensor_rigid = data.oMf[sensor_id].rotation.copy()
    load_tip = np.r_[-r_tip.T @ FORCE_WORLD_N, np.zeros(3)]  # environment on robot, true tip axes
    for k in range(8):
        load_sensor = sensor_to_tip.act(pin.Force(load_tip[:3], load_tip[3:])).vector
        wrench_base = np.r_[r_sensor_rigid @ load_sensor[:3], r_sensor_rigid @ load_sensor[3:]]
        cmd = ctl.step(Q_CONTACT, np.zeros(6), 0.01 * k, wrench_base=wrench_base)
        # the force loop's integral action settles where its error is zero: emulate the settled state
        load_tip = load_tip - cmd.force_error
    assert np.max(np.abs(ctl.step(Q_CONTACT, np.zeros(6), 1.0, wrench_base=wrench_base).force_error)) < 1e-9
    theta = _link_side_angles(pm, Q_CONTACT, tip_id, load_tip, STIFFNESS)
    pin.framesForwardKinematics(pm, data, theta)
    return data.oMf[tip_id].rotation @ -load_tip[:3], ctl


def test_compliant_joint_option_reduces_the_world_frame_force_error(model):
    off, _ = _steady_state_world_force(model, flexible=False)
    on, ctl = _steady_state_world_force(model, flexible=True)
    error_off = np.linalg.norm(off - FORCE_WORLD_N)
    error_on = np.linalg.norm(on - FORCE_WORLD_N)
    print(f"world-frame force error: option off {error_off:.4f} N, on {error_on:.2e} N")
    assert error_off > 0.2  # the joint deflections really do turn the applied force
    assert error_on < 0.01 * error_off
    # the option changed the target the force law regulates, not the target that was set
    assert not np.allclose(ctl.force_target_used[:3], ctl._wrench_d_task[:3])


def test_controller_correction_matches_the_core_function(model):
    _, ctl = _steady_state_world_force(model, flexible=True)
    robot = load_robot("ur3")
    # The core function on the bare UR3 (sensor = tool0) under the load the controller settled at:
    # the force it asks the sensor to hold is R_true^T f_d, which is what the controller holds.
    tip = ctl.osm.model.frames[ctl.osm.force_frame_id].placement
    tool = robot.model.frames[robot.tool_frame_id].placement
    tool_to_tip = tool.actInv(tip)
    # robot-on-environment target -> load on the robot; moments are motion-controlled here, the
    # settled load has none about the tip (the plant above)
    held_tip = np.r_[-ctl.force_target_used[:3], np.zeros(3)]
    held_tool = tool_to_tip.act(pin.Force(held_tip[:3], held_tip[3:])).vector
    result = compliant_force_setpoint(robot, Q_CONTACT, held_tool, np.r_[-FORCE_WORLD_N, np.zeros(3)], STIFFNESS)
    np.testing.assert_allclose(result.sensor_wrench_setpoint[:3], held_tool[:3], atol=1e-6)
    assert np.max(np.abs(result.joint_deflection_rad)) > 1e-3
    # and the rigid controller's own target differs from it by the correction (> 0.2 N)
    rigid_tool = tool_to_tip.act(pin.Force(-ctl._wrench_d_task[:3], -ctl._wrench_d_task[3:])).vector
    assert np.linalg.norm(rigid_tool[:3] - held_tool[:3]) > 0.2


def test_compliant_joint_option_validates_its_stiffness(model):
    with pytest.raises(ValueError, match="6 values"):
        OperationalSpaceController(model, config=ControllerConfig(flexible_compensation=True,
                                                                  joint_stiffness_nm_per_rad=(1e4, 1e4)))
    with pytest.raises(ValueError, match="stiffness > 0"):
        ControllerConfig(joint_stiffness_nm_per_rad=(1e4, 0.0, 1e4, 1e3, 1e3, 1e3))
    with pytest.raises(ValueError, match="rate_hz"):
        ControllerConfig(flexible_compensation_rate_hz=0.0)
