"""MJCF (MuJoCo XML) generation for the simulated arm, from the same model pinocchio uses.

The kinematic chain is copied from the pinocchio model built out of the robot
description (``robots.load_robot`` → generated URDF): each MuJoCo body is placed
with pinocchio's ``jointPlacements[i]`` (the joint frame relative to its parent
joint frame), so MuJoCo body frame i *is* pinocchio joint frame i and the flange
site is pinocchio's ``tool0`` frame. Link inertials come from a
:class:`~robot_dynamics_id.io.model_file.DynamicModel` (expressed in those same
joint frames), so the plant's "truth" and the identifier's model share one
parameterisation. Rotor inertia is MuJoCo joint ``armature`` (pinocchio's
``model.armature`` is the same quantity).

Bodies and names used by :mod:`robot_dynamics_id.sim.plant`:

* ``base`` — the body carrying the arm: fixed in the world, or, with ``moving_base``,
  on three slide joints ``base_x/y/z`` with a huge armature (1e6 kg) whose position
  and velocity the plant prescribes every substep. Unlike a mocap body this gives the
  links their true world velocities (contact damping and friction see the base's
  motion); the base's acceleration does not act on the arm (negligible for a few cm
  at 0.1–0.3 Hz: ~0.05 m/s²);
* ``link1`` … ``linkN`` with hinge joints ``joint1`` … ``jointN``;
* ``end_effector`` — welded at the flange; holds the payload and the optional tool;
  its origin site ``ft_site`` (= tool0) carries the force/torque sensors ``ft_force``
  and ``ft_torque``;
* ``flange`` — a site at tool0 on the last link;
* ``surface`` — the optional rigid contact geom in the world, ``tool_tip`` the tool's ball
  (with a compliant pad: in body ``tool_pad`` on slide joint ``tool_pad_slide``, after the
  arm joints in qpos/qvel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from ..io.model_file import DynamicModel
from ..robots.model import RobotModel

if TYPE_CHECKING:  # pragma: no cover
    from .scene import Scene

__all__ = ["PHYSICS_TIMESTEP_S", "build_mjcf"]

#: Default physics substep, s. 0.5 ms = 4 substeps per 500 Hz cycle, 16 per 125 Hz cycle:
#: small enough for the explicit joint servo (natural frequency 200 rad/s: k_d·h = 0.18) and the
#: stiff contact of the polishing scene to stay well damped.
PHYSICS_TIMESTEP_S = 0.0005

_AXES = {"JointModelRX": (1.0, 0.0, 0.0), "JointModelRY": (0.0, 1.0, 0.0), "JointModelRZ": (0.0, 0.0, 1.0)}


def _f(values) -> str:
    return " ".join(f"{float(v):.17g}" for v in np.ravel(values))


def _quat_wxyz(rotation: np.ndarray) -> np.ndarray:
    q = pin.Quaternion(np.asarray(rotation, float))
    return np.array([q.w, q.x, q.y, q.z])


def _joint_axis(joint_model) -> tuple[float, float, float]:
    name = joint_model.shortname()
    if name in _AXES:
        return _AXES[name]
    if name == "JointModelRevoluteUnaligned":
        return tuple(float(v) for v in joint_model.axis)
    raise ValueError(
        f"the simulator supports revolute joints only, got {name}; use a URDF whose joints are all revolute"
    )


def _inertial_xml(mass_kg: float, com_m: np.ndarray, inertia_kgm2: np.ndarray, indent: str) -> str:
    inertia = np.asarray(inertia_kgm2, float)
    full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2])
    return f'{indent}<inertial pos="{_f(com_m)}" mass="{float(mass_kg):.17g}" fullinertia="{_f(full)}"/>'


def _end_effector_inertial(payload_kg: float, payload_com_m: np.ndarray, scene: Scene | None, *,
                           rigid_only: bool = False):
    """Combined inertial (mass, CoM, inertia about CoM in the tool0 frame) of payload + tool.

    ``rigid_only``: leave out a compliant pad (it is its own body in the MJCF); by default the
    whole tool with its pad at rest, i.e. what the F/T sensor's weight compensation and the
    controller's payload use."""
    parts = []
    if payload_kg > 0:
        # A payload is a point-like mass: give it the inertia of a 2 cm solid sphere so
        # MuJoCo accepts it (negligible against the arm).
        r = 0.02
        parts.append((payload_kg, np.asarray(payload_com_m, float), np.eye(3) * 0.4 * payload_kg * r * r))
    if scene is not None and scene.tool is not None:
        parts.append(scene.tool.rigid_inertial() if rigid_only else scene.tool.inertial())
    mass = sum(p[0] for p in parts)
    if mass <= 0:
        return None
    com = sum(p[0] * p[1] for p in parts) / mass
    inertia = np.zeros((3, 3))
    for m, c, i_c in parts:
        d = c - com
        inertia += i_c + m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
    return mass, com, inertia


def build_mjcf(
    robot_model: RobotModel,
    truth: DynamicModel,
    *,
    timestep_s: float = PHYSICS_TIMESTEP_S,
    payload_kg: float = 0.0,
    payload_com_m=(0.0, 0.0, 0.0),
    scene: Scene | None = None,
    moving_base: bool = False,
) -> str:
    """Return the MJCF text of the arm with ``truth``'s inertials, optional payload and scene.

    ``payload_com_m`` is in the tool0 (flange) frame. Joint friction and the servo are
    not in the XML: :class:`~robot_dynamics_id.sim.plant.SimulatedUR` applies them each
    substep so they follow the package's own friction model exactly.
    """
    model = robot_model.model
    n = robot_model.n_joints
    if truth.n_joints != n:
        raise ValueError(f"truth has {truth.n_joints} joints but robot {robot_model.name!r} has {n}")
    if model.nq != n or model.njoints != n + 1:
        raise ValueError("the simulator needs a serial chain of n revolute joints (one body per joint)")
    bad = ~truth.is_physically_consistent()
    if bad.any():
        raise ValueError(
            f"truth links {np.flatnonzero(bad).tolist()} are not physically consistent (mass <= 0 or an "
            "inertia violating the triangle inequality); MuJoCo cannot simulate them"
        )
    tool_frame = model.frames[robot_model.tool_frame_id]
    if tool_frame.parentJoint != n:
        raise ValueError(f"frame {robot_model.tool_frame!r} must be attached to the last joint")

    # friction cone: a model-wide option, chosen by the scene's contact model
    cone = scene.contact.cone if scene is not None else "pyramidal"
    lines = [
        f'<mujoco model="{robot_model.name}_sim">',
        '  <compiler angle="radian" autolimits="true"/>',
        # Euler integrates dof damping implicitly: plant.py uses that for the stiff
        # (regularised) static/Coulomb friction slope near zero velocity.
        f'  <option timestep="{timestep_s:.17g}" integrator="Euler" gravity="0 0 -9.81" cone="{cone}"/>',
        "  <worldbody>",
    ]
    if scene is not None and scene.surface is not None:
        lines.append("    " + scene.surface.geom_xml(scene.contact))
    lines.append('    <body name="base" pos="0 0 0">')
    if moving_base:
        lines.append('      <inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>')
        for axis_name, axis in (("x", "1 0 0"), ("y", "0 1 0"), ("z", "0 0 1")):
            lines.append(f'      <joint name="base_{axis_name}" type="slide" axis="{axis}" armature="1e6" '
                         'damping="0" limited="false"/>')
    indent = "      "
    for i in range(1, n + 1):
        placement = model.jointPlacements[i]
        axis = _joint_axis(model.joints[i])
        pos, quat = _f(placement.translation), _f(_quat_wxyz(placement.rotation))
        lines.append(f'{indent}<body name="link{i}" pos="{pos}" quat="{quat}">')
        inner = indent + "  "
        lines.append(_inertial_xml(truth.link_mass_kg[i - 1], truth.link_com_m[i - 1],
                                   truth.link_inertia_kgm2[i - 1], inner))
        lines.append(
            f'{inner}<joint name="joint{i}" type="hinge" axis="{_f(axis)}" '
            f'armature="{float(truth.rotor_inertia_kgm2[i - 1]):.17g}" damping="0" limited="false"/>'
        )
        indent = inner
    # tool0 on the last link, and the end-effector body welded there (payload + tool)
    tp = tool_frame.placement
    pos, quat = _f(tp.translation), _f(_quat_wxyz(tp.rotation))
    lines.append(f'{indent}<site name="flange" pos="{pos}" quat="{quat}" size="0.005"/>')
    lines.append(f'{indent}<body name="end_effector" pos="{pos}" quat="{quat}">')
    inner = indent + "  "
    ee = _end_effector_inertial(float(payload_kg), np.asarray(payload_com_m, float), scene, rigid_only=True)
    if ee is not None:
        lines.append(_inertial_xml(ee[0], ee[1], ee[2], inner))
    lines.append(f'{inner}<site name="ft_site" pos="0 0 0" size="0.005"/>')
    if scene is not None and scene.tool is not None:
        lines += [inner + g for g in scene.tool.geoms_xml(scene.contact)]
    lines.append(f"{indent}</body>")
    for i in range(n, 0, -1):
        indent = indent[:-2]
        lines.append(f"{indent}</body>")
    lines += [
        "    </body>",
        "  </worldbody>",
        "  <sensor>",
        '    <force name="ft_force" site="ft_site"/>',
        '    <torque name="ft_torque" site="ft_site"/>',
        "  </sensor>",
        "</mujoco>",
    ]
    return "\n".join(lines) + "\n"
