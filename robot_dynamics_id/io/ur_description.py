"""Export an identified model in the form of Universal_Robots_ROS2_Description (``ur_description``).

Writes, into one folder:

* ``physical_parameters.yaml``: ur_description's keys (``offsets``,
  ``inertia_parameters`` with ``<link>_mass``, ``links.base``,
  ``center_of_mass.<link>_cog``, ``rotation.<link>``, ``tensor.<link>``), to
  replace ``config/<ur_type>/physical_parameters.yaml`` (or to pass as the
  ``physical_parameters_file`` argument of ``ur.urdf.xacro``);
* ``default_kinematics.yaml``: the nominal kinematics the model was identified
  with, in ur_description's ``kinematics`` form (a calibrated file from
  ``ur_calibration`` may replace it: the inertials are given in link frames);
* ``<robot>_identified.urdf``: a URDF with ur_description's links, joints and
  frames (``base_link``, ``base_link_inertia``, ``shoulder_link`` … ``wrist_3_link``,
  ``ft_frame``, ``base``, ``flange``, ``tool0``) carrying the identified inertials,
  no meshes;
* ``joint_dynamics.yaml``: ur_description's ``joint_dynamics`` (``damping`` =
  viscous friction, ``friction`` = Coulomb friction), as its URDF ``<dynamics>``
  tags and Gazebo use them;
* ``friction_and_drive_gains.yaml``: everything the URDF cannot carry: the full
  friction model, reflected rotor inertias and drive gains.

Frames. ur_description's link frames are the package's pinocchio joint frames
(robots/urdf.py): its ``kinematics`` yaml places joint i at Tx(a_{i-1})
Rx(alpha_{i-1}) Tz(d_i) of the previous link, and ``base_link_inertia`` (= ``base``,
base_link turned by pi about z) is DH frame 0. So the centre of mass carries over
unchanged; the inertia tensor is written in ur_description's inertial axes per
link (``rotation``: e.g. pitch pi/2 for the UR3 upper arm, the cylinder
approximation's axis), I_axes = R^T I_link R with R = rpy(roll, pitch, yaw).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pinocchio as pin
import yaml

from ..robots.description import RobotDescription
from ..robots.model import load_robot
from .model_file import DynamicModel, plain_for_yaml

__all__ = ["UR_DESCRIPTION_LINKS", "UrDescriptionExportError", "export_ur_description", "ur_description_parameters",
           "ur_description_urdf"]

#: ur_description's link keys, joint 1..6 (``<key>_mass``, ``<key>_cog``, ``rotation.<key>``, ``tensor.<key>``).
UR_DESCRIPTION_LINKS = ("shoulder", "upper_arm", "forearm", "wrist_1", "wrist_2", "wrist_3")
_KINEMATICS_KEYS = UR_DESCRIPTION_LINKS

_HALF_PI = float(np.pi / 2)
_E_SERIES_ROTATION = ((_HALF_PI, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (_HALF_PI, 0.0, 0.0),
                      (-_HALF_PI, 0.0, 0.0), (0.0, 0.0, 0.0))


class UrDescriptionExportError(ValueError):
    """The model cannot be exported in ur_description's form; the message names the reason and the fix."""


@dataclass(frozen=True)
class _Upstream:
    """What ur_description's physical_parameters.yaml holds that identification does not touch:
    visual offsets, the base link's (fixed) inertial, and the inertial axes each link is written in."""

    shoulder_offset_m: float
    elbow_offset_m: float
    base_mass_kg: float
    base_radius_m: float
    base_length_m: float
    rotation_rpy: tuple[tuple[float, float, float], ...]


# Values of Universal_Robots_ROS2_Description config/<ur_type>/physical_parameters.yaml (ur3, ur3e, ur5, ur5e, ur10,
# ur16e: current files; ur10e: offsets and base from its file, inertial axes as in the other e-Series files). The
# base link is fixed to the world, so its inertial never enters a joint torque.
_CYLINDER_ROTATION = ((0.0, 0.0, 0.0), (0.0, _HALF_PI, 0.0), (0.0, _HALF_PI, 0.0), (0.0, 0.0, 0.0),
                      (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
_UPSTREAM = {
    "ur3": _Upstream(0.1198, 0.0275, 2.0, 0.075, 0.038, _CYLINDER_ROTATION),
    "ur5": _Upstream(0.13585, 0.0165, 4.0, 0.06, 0.05, _CYLINDER_ROTATION),
    "ur10": _Upstream(0.220941, 0.049042, 4.0, 0.075, 0.038, _E_SERIES_ROTATION),
    "ur16e": _Upstream(0.176, 0.040, 4.0, 0.075, 0.038, _E_SERIES_ROTATION),
    "ur3e": _Upstream(0.120, 0.027, 2.0, 0.075, 0.038, _E_SERIES_ROTATION),
    "ur5e": _Upstream(0.138, 0.007, 4.0, 0.06, 0.05, _E_SERIES_ROTATION),
    "ur10e": _Upstream(0.1762, 0.0393, 4.0, 0.075, 0.038, _E_SERIES_ROTATION),
}


def _description(model: DynamicModel) -> tuple[RobotDescription, _Upstream]:
    robot = load_robot(model.robot)
    name = robot.description.name if robot.description is not None else None
    if name not in _UPSTREAM:
        raise UrDescriptionExportError(
            f"model robot {model.robot!r}: the ur_description export needs a built-in UR arm "
            f"({', '.join(_UPSTREAM)}); a model identified on a custom URDF keeps its own frames (model.urdf)")
    if model.n_joints != 6:
        raise UrDescriptionExportError(f"model has {model.n_joints} joints; a UR arm has 6")
    return robot.description, _UPSTREAM[name]


def _rotation(rpy) -> np.ndarray:
    return np.asarray(pin.rpy.rpyToMatrix(*[float(v) for v in rpy]), float)


def _kinematics(description: RobotDescription) -> list[dict[str, float]]:
    """ur_description's ``kinematics`` entries: joint i's origin = Tx(a_{i-1}) Rx(alpha_{i-1}) Tz(d_i)."""
    out = []
    for i in range(6):
        a_prev = float(description.dh_a_m[i - 1]) if i else 0.0
        alpha_prev = float(description.dh_alpha_rad[i - 1]) if i else 0.0
        d = float(description.dh_d_m[i])
        xyz = (a_prev, -np.sin(alpha_prev) * d, np.cos(alpha_prev) * d)
        out.append({"x": float(xyz[0]), "y": float(xyz[1]), "z": float(xyz[2]),
                    "roll": alpha_prev, "pitch": 0.0, "yaw": 0.0})
    return out


def ur_description_parameters(model: DynamicModel) -> dict:
    """The identified inertials as ur_description's ``physical_parameters.yaml`` mapping."""
    description, upstream = _description(model)
    masses, cogs, rotations, tensors = {}, {}, {}, {}
    for i, key in enumerate(UR_DESCRIPTION_LINKS):
        rpy = upstream.rotation_rpy[i]
        r = _rotation(rpy)
        inertia = r.T @ np.asarray(model.link_inertia_kgm2[i], float) @ r
        masses[f"{key}_mass"] = float(model.link_mass_kg[i])
        com = np.asarray(model.link_com_m[i], float)
        cogs[f"{key}_cog"] = {"x": float(com[0]), "y": float(com[1]), "z": float(com[2])}
        rotations[key] = {"roll": float(rpy[0]), "pitch": float(rpy[1]), "yaw": float(rpy[2])}
        tensors[key] = {"ixx": float(inertia[0, 0]), "ixy": float(inertia[0, 1]), "ixz": float(inertia[0, 2]),
                        "iyy": float(inertia[1, 1]), "iyz": float(inertia[1, 2]), "izz": float(inertia[2, 2])}
    return {
        "offsets": {"shoulder_offset": upstream.shoulder_offset_m, "elbow_offset": upstream.elbow_offset_m},
        "inertia_parameters": {
            "base_mass": upstream.base_mass_kg,
            **masses,
            "links": {"base": {"radius": upstream.base_radius_m, "length": upstream.base_length_m}},
            "center_of_mass": cogs,
            "rotation": rotations,
            "tensor": tensors,
        },
    }


def _fmt(values) -> str:
    return " ".join(f"{float(v):.17g}" for v in values)


def _origin(xyz, rpy) -> str:
    return f'<origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>'


def _cylinder_inertia(mass: float, radius: float, length: float) -> tuple[float, float, float]:
    transverse = mass * (3 * radius**2 + length**2) / 12.0
    return transverse, transverse, 0.5 * mass * radius**2


def ur_description_urdf(model: DynamicModel, *, tf_prefix: str = "") -> str:
    """A URDF with ur_description's links, joints and frames and the identified inertials (no meshes)."""
    description, upstream = _description(model)
    params = ur_description_parameters(model)["inertia_parameters"]
    p = escape(tf_prefix)
    kin = _kinematics(description)
    friction = model.friction
    bx, by, bz = _cylinder_inertia(upstream.base_mass_kg, upstream.base_radius_m, upstream.base_length_m)
    lines = [
        '<?xml version="1.0"?>',
        f'<robot name="{escape(description.name)}">',
        "  <!-- robot_dynamics_id: identified inertials in Universal_Robots_ROS2_Description's frames; "
        "no meshes (use ur.urdf.xacro with physical_parameters.yaml for those) -->",
        f'  <link name="{p}base_link"/>',
        f'  <link name="{p}base_link_inertia">',
        f'    <inertial><mass value="{upstream.base_mass_kg:.17g}"/>{_origin((0, 0, 0), (0, 0, 0))}'
        f'<inertia ixx="{bx:.17g}" ixy="0" ixz="0" iyy="{by:.17g}" iyz="0" izz="{bz:.17g}"/></inertial>',
        "  </link>",
        f'  <joint name="{p}base_link-base_link_inertia" type="fixed">',
        f'    <parent link="{p}base_link"/><child link="{p}base_link_inertia"/>',
        f"    {_origin((0, 0, 0), (0, 0, np.pi))}",
        "  </joint>",
    ]
    parent = f"{p}base_link_inertia"
    for i, key in enumerate(UR_DESCRIPTION_LINKS):
        link = f"{p}{key}_link"
        cog = params["center_of_mass"][f"{key}_cog"]
        rot = params["rotation"][key]
        t = params["tensor"][key]
        k = kin[i]
        joint = f"{p}{description.joint_names[i]}"
        lines += [
            f'  <link name="{link}">',
            "    <inertial>",
            f'      <mass value="{params[f"{key}_mass"]:.17g}"/>',
            f"      {_origin((cog['x'], cog['y'], cog['z']), (rot['roll'], rot['pitch'], rot['yaw']))}",
            f'      <inertia ixx="{t["ixx"]:.17g}" ixy="{t["ixy"]:.17g}" ixz="{t["ixz"]:.17g}" '
            f'iyy="{t["iyy"]:.17g}" iyz="{t["iyz"]:.17g}" izz="{t["izz"]:.17g}"/>',
            "    </inertial>",
            "  </link>",
            f'  <joint name="{joint}" type="revolute">',
            f'    <parent link="{parent}"/><child link="{link}"/>',
            f"    {_origin((k['x'], k['y'], k['z']), (k['roll'], k['pitch'], k['yaw']))}",
            '    <axis xyz="0 0 1"/>',
            f'    <limit lower="{-description.position_limit_rad[i]:.17g}" '
            f'upper="{description.position_limit_rad[i]:.17g}" effort="{description.torque_limit_nm[i]:.17g}" '
            f'velocity="{description.velocity_limit_rad_s[i]:.17g}"/>',
            f'    <dynamics damping="{friction.viscous_nm_s_per_rad[i]:.17g}" '
            f'friction="{friction.coulomb_nm[i]:.17g}"/>',
            "  </joint>",
        ]
        parent = link
    w3 = f"{p}wrist_3_link"
    lines += [
        f'  <link name="{p}ft_frame"/>',
        f'  <joint name="{p}wrist_3_link-ft_frame" type="fixed">',
        f'    <parent link="{w3}"/><child link="{p}ft_frame"/>{_origin((0, 0, 0), (np.pi, 0, 0))}',
        "  </joint>",
        f'  <link name="{p}base"/>',
        f'  <joint name="{p}base_link-base_fixed_joint" type="fixed">',
        f'    <parent link="{p}base_link"/><child link="{p}base"/>{_origin((0, 0, 0), (0, 0, np.pi))}',
        "  </joint>",
        f'  <link name="{p}flange"/>',
        f'  <joint name="{p}wrist_3-flange" type="fixed">',
        f'    <parent link="{w3}"/><child link="{p}flange"/>{_origin((0, 0, 0), (0, -np.pi / 2, -np.pi / 2))}',
        "  </joint>",
        f'  <link name="{p}tool0"/>',
        f'  <joint name="{p}flange-tool0" type="fixed">',
        f'    <parent link="{p}flange"/><child link="{p}tool0"/>{_origin((0, 0, 0), (np.pi / 2, 0, np.pi / 2))}',
        "  </joint>",
        "</robot>",
    ]
    return "\n".join(lines) + "\n"


def _joint_dynamics(model: DynamicModel, description: RobotDescription) -> dict:
    friction = model.friction
    return {"joint_dynamics": {
        name: {"damping": float(friction.viscous_nm_s_per_rad[i]), "friction": float(friction.coulomb_nm[i])}
        for i, name in enumerate(description.joint_names)}}


def _drive_file(model: DynamicModel, description: RobotDescription) -> dict:
    return {
        "robot": description.name,
        "joint_names": list(description.joint_names),
        "rotor_inertia_kgm2": [float(v) for v in model.rotor_inertia_kgm2],
        # null when the model does not know them (identified from joint torques without --drive-gains)
        "drive_gains_nm_per_a": (None if model.drive_gains_nm_per_a is None
                                 else [float(v) for v in model.drive_gains_nm_per_a]),
        "friction": model.friction.to_dict(),
        "note": "joint torque = drive gain x motor current (null: not known); rotor inertia is reflected to the joint side (URDF "
                "has no field for it: add it to the mass matrix diagonal); joint_dynamics.yaml keeps only the "
                "viscous (damping) and Coulomb (friction) terms",
    }


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def export_ur_description(model: DynamicModel | str | Path, out_dir: str | Path, *, tf_prefix: str = "",
                          ) -> dict[str, Path]:
    """Write the files listed in the module docstring into ``out_dir``; returns name -> path."""
    if not isinstance(model, DynamicModel):
        model = DynamicModel.load(model)
    description, _ = _description(model)
    if not re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*/?)*", tf_prefix):
        raise UrDescriptionExportError(f"--tf-prefix {tf_prefix!r} is not a ROS name prefix: letters, digits, '_' "
                                       "and '/', not starting with a digit (e.g. 'ur_' or 'left/')")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise UrDescriptionExportError(f"--out {out} is a file; give a folder")
    out.mkdir(parents=True, exist_ok=True)
    source = model.provenance.get("data") if isinstance(model.provenance, dict) else None
    header = (f"# Identified by robot_dynamics_id for {description.name}"
              + (f" from {source}" if source else "") + "\n"
              "# Universal_Robots_ROS2_Description form: link frames of its kinematics yaml; CoM in the link frame;\n"
              "# tensor about the CoM in the axes rotation.<link> (roll, pitch, yaw) turns the link frame to.\n")
    physical = ur_description_parameters(model)
    kinematics = {"kinematics": {key: k for key, k in zip(_KINEMATICS_KEYS, _kinematics(description))}}
    kinematics["kinematics"]["hash"] = f"robot_dynamics_id_nominal_{description.name}"
    files = {
        "physical_parameters": (out / "physical_parameters.yaml",
                                header + yaml.safe_dump(physical, sort_keys=False)),
        "default_kinematics": (out / "default_kinematics.yaml",
                               "# The nominal DH kinematics the model was identified with, in ur_description's "
                               "form\n" + yaml.safe_dump(kinematics, sort_keys=False)),
        "urdf": (out / f"{description.name}_identified.urdf", ur_description_urdf(model, tf_prefix=tf_prefix)),
        "joint_dynamics": (out / "joint_dynamics.yaml",
                           "# damping = viscous friction (Nm s/rad), friction = Coulomb friction (Nm)\n"
                           + yaml.safe_dump(_joint_dynamics(model, description), sort_keys=False)),
        "friction_and_drive_gains": (out / "friction_and_drive_gains.yaml",
                                     yaml.safe_dump(plain_for_yaml(_drive_file(model, description)),
                                                    sort_keys=False)),
    }
    for path, text in files.values():
        _write_atomic(path, text)
    return {name: path for name, (path, _) in files.items()}
