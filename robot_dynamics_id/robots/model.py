"""Loading a robot — by UR name or from a user's URDF — as a pinocchio model plus limits.

``load_robot("ur3")`` and ``load_robot("/path/to/arm.urdf")`` are interchangeable
everywhere a robot is named, so a lab with its own calibrated URDF can use it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from .description import ROBOT_NAMES, RobotDescription, get_robot
from .urdf import urdf_from_description

__all__ = ["STANDARD_GRAVITY_M_S2", "RobotModel", "add_body_at_frame", "check_gravity", "gravity_from_text",
           "load_robot", "model_from_description", "robot_key", "same_robot"]

#: Acceleration limit used when a URDF carries none (URDF has no field for it), rad/s².
DEFAULT_ACCELERATION_LIMIT_RAD_S2 = 10.0
#: Gravitational acceleration in the robot's base frame for a floor (table) mount, m/s² (pinocchio's default).
STANDARD_GRAVITY_M_S2 = (0.0, 0.0, -9.81)
#: |g| accepted for a given gravity vector, m/s² (the Earth's surface spans 9.78-9.83)
GRAVITY_NORM_RANGE_M_S2 = (9.7, 9.9)


def check_gravity(value, *, what: str = "gravity") -> np.ndarray:
    """The gravitational acceleration (3-vector, m/s², robot base frame, pointing towards the Earth) or
    ValueError naming the fix. (0, 0, -9.81) is a floor mount; an arm on a wall has its gravity along a base
    axis in x/y. UR's installation stores the opposite vector (the acceleration the robot experiences, +z on a
    floor): negate it."""
    try:
        g = np.asarray(value, float).reshape(3)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected three numbers gx,gy,gz in m/s² (base frame), got {value!r}") from None
    norm = float(np.linalg.norm(g)) if np.all(np.isfinite(g)) else float("nan")
    low, high = GRAVITY_NORM_RANGE_M_S2
    if not low <= norm <= high:
        raise ValueError(f"{what}: |g| = {norm:.3g} m/s² from {np.round(g, 4).tolist()}; give the gravitational "
                         f"acceleration in the robot's base frame, |g| between {low} and {high} m/s² (a floor mount "
                         "is 0,0,-9.81)")
    return g


def gravity_from_text(text: str, *, what: str = "--gravity") -> np.ndarray:
    """``"gx,gy,gz"`` (m/s², base frame) as a checked vector (:func:`check_gravity`)."""
    try:
        values = [float(v) for v in str(text).replace(" ", "").split(",")]
    except ValueError:
        raise ValueError(f"{what} {text!r}: expected three numbers gx,gy,gz in m/s², e.g. 0,0,-9.81") from None
    if len(values) != 3:
        raise ValueError(f"{what} {text!r}: expected three numbers gx,gy,gz in m/s², e.g. 0,0,-9.81")
    return check_gravity(values, what=what)


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
    def gravity_m_s2(self) -> np.ndarray:
        """Gravitational acceleration in the base frame (m/s²) this model's dynamics use."""
        return np.asarray(self.model.gravity.linear, float).copy()

    def is_standard_gravity(self) -> bool:
        """Whether gravity is the floor mount's (0, 0, -9.81)."""
        return bool(np.allclose(self.gravity_m_s2, STANDARD_GRAVITY_M_S2, atol=1e-9))

    def with_gravity(self, gravity_m_s2) -> RobotModel:
        """A copy (new pinocchio model) whose dynamics use ``gravity_m_s2`` (base frame, :func:`check_gravity`)."""
        model = self.model.copy()
        model.gravity.linear = check_gravity(gravity_m_s2)
        return replace(self, model=model)

    def with_flange_payload(self, mass_kg: float, com_m, inertia_about_com_kgm2=None) -> RobotModel:
        """A copy (new pinocchio model) whose tool frame carries a rigid payload: mass (kg), CoM (m) and
        inertia about it (kg m^2, default a point mass), in the tool frame."""
        model = self.model.copy()
        inertia = np.zeros((3, 3)) if inertia_about_com_kgm2 is None else np.asarray(inertia_about_com_kgm2, float)
        add_body_at_frame(model, self.tool_frame_id, pin.Inertia(float(mass_kg), np.asarray(com_m, float), inertia))
        return replace(self, model=model)

    def tool_poses(self, q_rad) -> tuple[np.ndarray, np.ndarray]:
        """Rotation (N, 3, 3) and position (N, 3; m) of the tool frame in the base frame at each q (N, n)."""
        q = np.atleast_2d(np.asarray(q_rad, float))
        data, frame = self.model.createData(), self.tool_frame_id
        rotations, positions = np.empty((q.shape[0], 3, 3)), np.empty((q.shape[0], 3))
        for k, qk in enumerate(q):
            pin.framesForwardKinematics(self.model, data, qk)
            rotations[k], positions[k] = data.oMf[frame].rotation, data.oMf[frame].translation
        return rotations, positions

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


def load_robot(robot: str | RobotDescription, *, tool_frame: str = "tool0", tf_prefix: str = "",
               gravity_m_s2=None) -> RobotModel:
    """Load a robot by name (``ur3``, ``ur3e``, ``ur5``, ``ur5e``, ``ur10``, ``ur10e``, ``ur16e``), description, or
    URDF path.

    ``gravity_m_s2``: gravitational acceleration in the base frame (m/s², :func:`check_gravity`); None: a
    floor mount, :data:`STANDARD_GRAVITY_M_S2`."""
    text = str(robot).strip()
    if isinstance(robot, RobotDescription):
        rm = model_from_description(robot, tf_prefix=tf_prefix)
    elif text.lower() in ROBOT_NAMES:
        rm = model_from_description(get_robot(text), tf_prefix=tf_prefix)
    elif text.endswith(".urdf") or "/" in text or Path(text).exists():
        rm = _model_from_urdf_file(Path(text).expanduser(), tool_frame)
    else:
        get_robot(text)  # raises the "unknown robot" error with the list of names
        raise AssertionError("unreachable")
    if gravity_m_s2 is None:
        rm.model.gravity.linear = np.asarray(STANDARD_GRAVITY_M_S2, float)
        return rm
    return rm.with_gravity(gravity_m_s2)


def add_body_at_frame(model: pin.Model, frame_id: int, inertia: pin.Inertia) -> None:
    """Add a rigid body (``inertia`` in the frame's coordinates) to the link the frame is fixed to, in place."""
    frame = model.frames[frame_id]
    model.inertias[frame.parentJoint] = model.inertias[frame.parentJoint] + frame.placement.act(inertia)


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
