"""Loading a robot — by UR name or from a user's URDF — as a pinocchio model plus limits.

``load_robot("ur3")`` and ``load_robot("/path/to/arm.urdf")`` are interchangeable
everywhere a robot is named, so a lab with its own calibrated URDF can use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from .description import ROBOT_NAMES, RobotDescription, get_robot
from .urdf import urdf_from_description

__all__ = ["RobotModel", "load_robot", "model_from_description", "robot_key", "same_robot"]

#: Acceleration limit used when a URDF carries none (URDF has no field for it), rad/s².
DEFAULT_ACCELERATION_LIMIT_RAD_S2 = 10.0


@dataclass(frozen=True, eq=False)
class RobotModel:
    """A pinocchio model of an arm with the limits the package enforces.

    ``description`` is set for the built-in UR arms (DH + inertial priors) and
    ``None`` for a custom URDF.
    """

    name: str
    model: pin.Model
    urdf: str
    joint_names: tuple[str, ...]
    position_limit_rad: np.ndarray
    velocity_limit_rad_s: np.ndarray
    acceleration_limit_rad_s2: np.ndarray
    torque_limit_nm: np.ndarray
    tool_frame: str = "tool0"
    description: RobotDescription | None = None

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def tool_frame_id(self) -> int:
        return self.model.getFrameId(self.tool_frame)

    def new_data(self) -> pin.Data:
        """A fresh pinocchio Data for this model (one per thread)."""
        return self.model.createData()


def model_from_description(robot: RobotDescription, *, tf_prefix: str = "") -> RobotModel:
    """Build the pinocchio model of a :class:`RobotDescription` via its generated URDF."""
    urdf = urdf_from_description(robot, tf_prefix=tf_prefix)
    model = pin.buildModelFromXML(urdf)
    model.armature = np.asarray(robot.rotor_inertia_kgm2, float).copy()
    return RobotModel(
        name=robot.name,
        model=model,
        urdf=urdf,
        joint_names=tuple(tf_prefix + j for j in robot.joint_names),
        position_limit_rad=robot.position_limit_rad,
        velocity_limit_rad_s=robot.velocity_limit_rad_s,
        acceleration_limit_rad_s2=robot.acceleration_limit_rad_s2,
        torque_limit_nm=robot.torque_limit_nm,
        tool_frame=tf_prefix + "tool0",
        description=robot,
    )


def _model_from_urdf_file(path: Path, tool_frame: str) -> RobotModel:
    if not path.is_file():
        raise FileNotFoundError(
            f"robot {str(path)!r} is neither a known robot ({', '.join(ROBOT_NAMES)}) nor an existing URDF file"
        )
    urdf = path.read_text()
    try:
        model = pin.buildModelFromXML(urdf)
    except Exception as exc:  # pinocchio raises RuntimeError/ValueError with parser text
        raise ValueError(f"cannot parse URDF {path}: {exc}") from exc
    if not model.existFrame(tool_frame):
        raise ValueError(
            f"URDF {path} has no frame {tool_frame!r}; add a link of that name or pass tool_frame=..."
        )
    names = tuple(model.names[1:])
    if model.nq != model.nv or model.nv != len(names):
        raise ValueError(f"URDF {path}: only chains of revolute/prismatic joints are supported")
    upper = np.asarray(model.upperPositionLimit, float)
    velocity = np.asarray(model.velocityLimit, float)
    effort = np.asarray(model.effortLimit, float)
    for label, values in (("position (upper)", upper), ("velocity", velocity), ("effort", effort)):
        if not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise ValueError(f"URDF {path}: every joint needs a positive finite {label} limit in <limit>")
    return RobotModel(
        name=path.stem,
        model=model,
        urdf=urdf,
        joint_names=names,
        position_limit_rad=upper,
        velocity_limit_rad_s=velocity,
        acceleration_limit_rad_s2=np.full(len(names), DEFAULT_ACCELERATION_LIMIT_RAD_S2),
        torque_limit_nm=effort,
        tool_frame=tool_frame,
        description=None,
    )


def load_robot(robot: str | RobotDescription, *, tool_frame: str = "tool0", tf_prefix: str = "") -> RobotModel:
    """Load a robot by name (``ur3``, ``ur3e``, ``ur5e``, ``ur10e``), description, or URDF path."""
    if isinstance(robot, RobotDescription):
        return model_from_description(robot, tf_prefix=tf_prefix)
    text = str(robot).strip()
    if text.lower() in ROBOT_NAMES:
        return model_from_description(get_robot(text), tf_prefix=tf_prefix)
    if text.endswith(".urdf") or "/" in text or Path(text).exists():
        return _model_from_urdf_file(Path(text).expanduser(), tool_frame)
    get_robot(text)  # raises the "unknown robot" error with the list of names
    raise AssertionError("unreachable")


def robot_key(robot: str) -> str:
    """What identifies a robot named in a file or a parameter: the UR name (lower case), or a URDF's stem.

    Model files record the robot as given (``ur3`` or a URDF path), trajectory files as the robot's name
    (a URDF's stem), so a URDF is compared by its stem: the same calibrated URDF copied to another
    machine still matches."""
    text = str(robot).strip()
    if text.lower() in ROBOT_NAMES:
        return text.lower()
    return Path(text).stem


def same_robot(a: str, b: str) -> bool:
    """Whether two robot names or URDF paths (see :func:`robot_key`) name the same robot."""
    return robot_key(a) == robot_key(b)
