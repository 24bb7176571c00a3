"""Contact scenes: the compliant polishing pad (sim/scene.CompliantPad) and the friction-cone option."""

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from robot_dynamics_id.robots.kinematics import solve_ik
from robot_dynamics_id.robots.model import load_robot
from robot_dynamics_id.sim.plant import SimulatedUR
from robot_dynamics_id.sim.scene import (POLISHING_PAD_CONTACT, CompliantPad, ContactModel, Tool,
                                         polishing_scene)
from robot_dynamics_id.sim.truth import nominal_truth

Q_DOWN = np.array([0.0, -1.9, -1.6, -1.2, np.pi / 2, 0.0])


def test_pad_tool_inertial_is_shaft_plus_pad_and_the_mjcf_has_the_slide_spring():
    pad = CompliantPad(stiffness_n_per_m=2000.0, damping_n_s_per_m=10.0, mass_kg=0.05)
    tool = Tool(pad=pad)
    mass, com, inertia = tool.inertial()
    assert mass == pytest.approx(0.35)
    # CoM between the shaft's middle (5 cm) and the ball centre (10 cm)
    assert com[2] == pytest.approx((0.3 * 0.05 + 0.05 * 0.10) / 0.35)
    assert tool.rigid_inertial()[0] == pytest.approx(0.3)
    assert np.all(np.linalg.eigvalsh(inertia) > 0)
    sim = SimulatedUR(truth=nominal_truth("ur3"), rate_hz=500, scene=polishing_scene(tool=tool,),
                      initial_q_rad=Q_DOWN, noise=False)
    m = sim._mj_model
    joint = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "tool_pad_slide")
    assert joint >= 0 and m.jnt_stiffness[joint] == pytest.approx(2000.0)
    assert m.dof_damping[m.jnt_dofadr[joint]] == pytest.approx(10.0)
    # the whole end effector (shaft + pad) weighs on the sensor: the compensated report is ~0 at rest
    sim.step(100)
    assert np.abs(sim.tcp_wrench_base_true()[:3]).max() < 0.05
    with pytest.raises(ValueError, match="pad stiffness"):
        CompliantPad(stiffness_n_per_m=0.0)
    with pytest.raises(ValueError, match="cone"):
        ContactModel(cone="round")


def test_pressed_pad_compresses_by_force_over_stiffness_and_the_sensor_reads_it():
    tool = Tool(pad=CompliantPad())
    scene = polishing_scene(tool=tool)
    scene = type(scene)(tool=tool, surface=scene.surface, contact=POLISHING_PAD_CONTACT)
    assert "elliptic" in SimulatedUR(truth=nominal_truth("ur3"), rate_hz=500, scene=scene,
                                     initial_q_rad=Q_DOWN, noise=False).mjcf
    robot = load_robot("ur3")
    # tip (uncompressed ball bottom) 4 mm below the crest at x = 0.30 m: pad + contact take it up
    target = pin.SE3(np.diag([1.0, -1.0, -1.0]), np.array([0.30, 0.0, -0.004]))
    q = solve_ik(robot, target, Q_DOWN, local_offset_m=tool.tip_point_tool0_m)
    sim = SimulatedUR(truth=nominal_truth("ur3"), rate_hz=500, scene=scene, initial_q_rad=q, noise=False)
    sim.step(400)  # the velocity servo holds q
    force = sim.contact_force_world()[2]  # the surface pushes the tool up
    compression = -sim._mj_data.qpos[sim._mj_model.jnt_qposadr[
        mujoco.mj_name2id(sim._mj_model, mujoco.mjtObj.mjOBJ_JOINT, "tool_pad_slide")]]
    # spring force = k x (+ the pad's weight); the contact itself takes well under 1 mm
    assert force == pytest.approx(tool.pad.stiffness_n_per_m * compression + 0.05 * 9.81, abs=0.2)
    assert 0.003 < compression < 0.004 and 8.0 < force < 12.5
    # the F/T report (weight compensated) sees the contact force through the pad
    assert sim.tcp_wrench_base_true()[2] == pytest.approx(force, abs=0.2)
