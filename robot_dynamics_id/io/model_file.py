"""The dynamic-model YAML file: what the identifier writes and the controller and simulator read.

Schema (``schema: robot_dynamics_id/model/1``)::

    schema: robot_dynamics_id/model/1
    robot: ur3                      # a UR name or a URDF path (kinematics come from it)
    gravity_m_s2: [0, 0, -9.81]     # gravitational acceleration in the base frame (the mount); absent:
                                    # a floor mount
    joint_names: [...]
    frame_convention: pinocchio_joint_frame
    links:                          # one per joint, in the pinocchio joint frame of that joint
      - {name: shoulder_link, mass_kg: 2.0, com_m: [x, y, z],
         inertia_about_com_kgm2: {ixx: .., ixy: .., ixz: .., iyy: .., iyz: .., izz: ..}}
    rotor_inertia_kgm2: [...]       # reflected to the joint side
    friction: {...}                 # FrictionParameters.to_dict() (seeds.md P2 eq. 11 form)
    drive_gains_nm_per_a: [...]     # joint torque per motor current, Nm/A; null = not known (never a placeholder)
    base_parameters: {names: [...], values: [...], std: [...], std_method: "..."}   # optional
    provenance: {...}               # optional: data, method, date, metrics, and
                                    # identified_from: {data, robot, torque_source, drive_gains_nm_per_a, signal,
                                    #   joint_temperature_c (median per joint, degrees C; when the data hold them)}
    collision_thresholds: {...}     # optional: residual thresholds of the collision observer
                                    # (control/collision.py; written by `rdi validate --collision-thresholds`)

``provenance.identified_from`` records what the model was identified from
(identification/torque_source.py); ``rdi validate`` scores other data with the
same torque source unless told otherwise. Files written before it existed
stored drive gains of exactly 1.0 when none were known; such all-1.0 gains
without ``identified_from`` are read as unknown (``None``).

For the built-in UR arms the pinocchio joint frame of joint i lies on the joint
axis; DH frame i is that frame moved by Tx(a_i) Rx(alpha_i) (robots/urdf.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin
import yaml

from ..dynamics.friction import FrictionParameters
from ..robots.model import STANDARD_GRAVITY_M_S2, RobotModel, check_gravity, load_robot
from ..robots.priors import nominal_drive_gains

__all__ = ["MODEL_SCHEMA", "DynamicModel", "ModelFileError", "ur_controller_model"]

MODEL_SCHEMA = "robot_dynamics_id/model/1"


class ModelFileError(ValueError):
    """A model file cannot be read; the message names the file, the key and the fix."""


def _inertia_matrix(d: dict) -> np.ndarray:
    return np.array(
        [[d["ixx"], d["ixy"], d["ixz"]], [d["ixy"], d["iyy"], d["iyz"]], [d["ixz"], d["iyz"], d["izz"]]], float
    )


@dataclass(frozen=True, eq=False)
class DynamicModel:
    """Rigid-body, rotor, friction and drive-gain parameters of an arm.

    Inertial parameters are expressed in the pinocchio joint frame of each joint.
    """

    robot: str
    joint_names: tuple[str, ...]
    link_mass_kg: np.ndarray
    link_com_m: np.ndarray
    link_inertia_kgm2: np.ndarray
    rotor_inertia_kgm2: np.ndarray
    friction: FrictionParameters
    #: joint torque per motor current, Nm/A; None when not known
    drive_gains_nm_per_a: np.ndarray | None
    base_parameters: dict | None = None
    provenance: dict = field(default_factory=dict)
    #: control/collision.CollisionThresholds.to_dict(), kept as read (None: not measured)
    collision_thresholds: dict | None = None
    #: gravitational acceleration in the robot's base frame, m/s² (how the arm is mounted)
    gravity_m_s2: np.ndarray = field(default_factory=lambda: np.array(STANDARD_GRAVITY_M_S2))

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    # ---- construction -------------------------------------------------------------
    @classmethod
    def from_robot_model(
        cls,
        robot_model: RobotModel,
        *,
        friction: FrictionParameters | None = None,
        drive_gains_nm_per_a: np.ndarray | None = None,
        robot: str | None = None,
    ) -> DynamicModel:
        """The inertials a pinocchio model carries (e.g. the nominal priors), plus friction and gains."""
        m = robot_model.model
        n = robot_model.n_joints
        inertias = [m.inertias[i + 1] for i in range(n)]
        return cls(
            robot=robot or robot_model.name,
            joint_names=tuple(robot_model.joint_names),
            link_mass_kg=np.array([I.mass for I in inertias]),
            link_com_m=np.array([np.asarray(I.lever) for I in inertias]),
            link_inertia_kgm2=np.array([np.asarray(I.inertia) for I in inertias]),
            rotor_inertia_kgm2=np.asarray(m.armature, float).copy(),
            friction=friction or FrictionParameters.zeros(n),
            drive_gains_nm_per_a=(None if drive_gains_nm_per_a is None
                                  else np.asarray(drive_gains_nm_per_a, float)),
            gravity_m_s2=robot_model.gravity_m_s2,
        )

    @classmethod
    def nominal(cls, robot: str = "ur3") -> DynamicModel:
        """The nominal model of a robot: published masses/CoMs, inertia priors, no friction, no drive gains
        (UR publishes none for its arms)."""
        return cls.from_robot_model(load_robot(robot), robot=str(robot))

    # ---- views ----------------------------------------------------------------------
    def standard_parameters(self) -> np.ndarray:
        """The 10n standard parameters in pinocchio's order per link:
        (m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz), inertia about the joint-frame origin.

        Computed directly (parallel-axis theorem), not through pinocchio's Inertia, so a model that is not
        physically consistent (``--method wls|ols|irls``) still gives the parameters it was identified with."""
        out = np.empty((self.n_joints, 10))
        for i in range(self.n_joints):
            m = float(self.link_mass_kg[i])
            c = np.asarray(self.link_com_m[i], float)
            inertia = np.asarray(self.link_inertia_kgm2[i], float) + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
            out[i] = (m, *(m * c), inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2], inertia[1, 2],
                      inertia[2, 2])
        return out.ravel()

    def link_inertia(self, i: int) -> pin.Inertia:
        return pin.Inertia(float(self.link_mass_kg[i]), np.asarray(self.link_com_m[i], float),
                           np.asarray(self.link_inertia_kgm2[i], float))

    def kinematics(self, *, tool_frame: str = "tool0") -> RobotModel:
        """The robot this model was identified on (its ``robot``: nominal inertials) with this model's gravity."""
        return load_robot(self.robot, tool_frame=tool_frame, gravity_m_s2=self.gravity_m_s2)

    def robot_model(self) -> RobotModel:
        """The robot's kinematics with this model's inertials and rotor inertias (a new pinocchio model).

        Raises ModelFileError for a model whose links are not physically consistent (rigid-body algorithms
        need real bodies; such a model predicts torques through its regressor form only)."""
        bad = np.flatnonzero(~self.is_physically_consistent())
        if bad.size:
            raise ModelFileError(
                f"model of {self.robot}: link(s) {bad.tolist()} are not physically consistent (mass "
                f"{np.round(self.link_mass_kg[bad], 4).tolist()} kg, or an inertia that no body has), as models "
                "from --method wls/ols/irls may be; a controller or simulator needs a consistent model: identify "
                "with --method consistent")
        base = self.kinematics()
        model = base.model.copy()
        for i in range(self.n_joints):
            model.inertias[i + 1] = self.link_inertia(i)
        model.armature = np.asarray(self.rotor_inertia_kgm2, float).copy()
        return replace(base, model=model)

    def with_standard_parameters(self, theta: np.ndarray, **changes: Any) -> DynamicModel:
        """A copy whose link inertials are the 10n standard parameters ``theta`` (pinocchio order)."""
        theta = np.asarray(theta, float).reshape(self.n_joints, 10)
        inertias = [pin.Inertia.FromDynamicParameters(t) for t in theta]
        return replace(
            self,
            link_mass_kg=np.array([I.mass for I in inertias]),
            link_com_m=np.array([np.asarray(I.lever) for I in inertias]),
            link_inertia_kgm2=np.array([np.asarray(I.inertia) for I in inertias]),
            **changes,
        )

    def is_physically_consistent(self, *, tolerance: float = 0.0) -> np.ndarray:
        """Per link: positive mass and a realisable inertia (pseudo-inertia positive definite;
        equivalently positive principal moments satisfying the triangle inequalities)."""
        ok = np.zeros(self.n_joints, bool)
        for i in range(self.n_joints):
            m = self.link_mass_kg[i]
            inertia = self.link_inertia_kgm2[i]
            # Pseudo-inertia about the CoM: J = tr(I)/2 * 1 - I must be p.d. (Wensing et al. 2017)
            sigma = 0.5 * np.trace(inertia) * np.eye(3) - inertia
            ok[i] = m > tolerance and np.linalg.eigvalsh(sigma).min() > -tolerance
        return ok

    # ---- YAML ---------------------------------------------------------------------------
    def to_dict(self) -> dict:
        robot_model_links = None
        try:
            from ..robots.urdf import LINK_NAMES
            robot_model_links = LINK_NAMES if self.n_joints == len(LINK_NAMES) else None
        except ImportError:  # pragma: no cover
            pass
        links = []
        for i in range(self.n_joints):
            I = self.link_inertia_kgm2[i]
            links.append({
                "name": robot_model_links[i] if robot_model_links else f"link_{i + 1}",
                "mass_kg": float(self.link_mass_kg[i]),
                "com_m": [float(v) for v in self.link_com_m[i]],
                "inertia_about_com_kgm2": {
                    "ixx": float(I[0, 0]), "ixy": float(I[0, 1]), "ixz": float(I[0, 2]),
                    "iyy": float(I[1, 1]), "iyz": float(I[1, 2]), "izz": float(I[2, 2]),
                },
            })
        out = {
            "schema": MODEL_SCHEMA,
            "robot": self.robot,
            "gravity_m_s2": [float(v) for v in self.gravity_m_s2],
            "joint_names": list(self.joint_names),
            "frame_convention": "pinocchio_joint_frame",
            "links": links,
            "rotor_inertia_kgm2": [float(v) for v in self.rotor_inertia_kgm2],
            "friction": self.friction.to_dict(),
            "drive_gains_nm_per_a": (None if self.drive_gains_nm_per_a is None
                                     else [float(v) for v in self.drive_gains_nm_per_a]),
            "provenance": self.provenance,
        }
        if self.base_parameters is not None:
            out["base_parameters"] = self.base_parameters
        if self.collision_thresholds is not None:
            out["collision_thresholds"] = self.collision_thresholds
        return out

    def save(self, path: str | Path) -> Path:
        """Write the model as YAML (atomically: a crash never leaves half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(yaml.safe_dump(plain_for_yaml(self.to_dict()), sort_keys=False))
        tmp.replace(path)
        return path

    @classmethod
    def from_dict(cls, data: dict, *, source: str = "<dict>") -> DynamicModel:
        if not isinstance(data, dict):
            raise ModelFileError(f"{source}: a model file must be a YAML mapping, got {type(data).__name__}")
        if data.get("schema") != MODEL_SCHEMA:
            raise ModelFileError(
                f"{source}: schema is {data.get('schema')!r}, expected {MODEL_SCHEMA!r}; "
                "write model files with `rdi identify` or DynamicModel.save()"
            )
        try:
            links = data["links"]
            n = len(data["joint_names"])
            if len(links) != n:
                raise ModelFileError(f"{source}: {len(links)} links but {n} joint_names")
            provenance = data.get("provenance") or {}
            return cls(
                robot=str(data["robot"]),
                joint_names=tuple(data["joint_names"]),
                link_mass_kg=np.array([float(l["mass_kg"]) for l in links]),
                link_com_m=np.array([l["com_m"] for l in links], float),
                link_inertia_kgm2=np.array([_inertia_matrix(l["inertia_about_com_kgm2"]) for l in links]),
                rotor_inertia_kgm2=np.asarray(data.get("rotor_inertia_kgm2", np.zeros(n)), float),
                friction=FrictionParameters.from_dict(data["friction"]),
                drive_gains_nm_per_a=_drive_gains_from_file(data.get("drive_gains_nm_per_a"), provenance, n),
                base_parameters=data.get("base_parameters"),
                provenance=provenance,
                collision_thresholds=data.get("collision_thresholds"),
                gravity_m_s2=_gravity_from_file(data.get("gravity_m_s2"), source),
            )
        except ModelFileError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelFileError(f"{source}: malformed model file ({exc!r}); see the schema in "
                                 "robot_dynamics_id/io/model_file.py") from exc

    def notes_for_use(self) -> list[str]:
        """What a controller or observer built on this model should warn about: a result identified as doubtful
        (its problems), a friction law that falls with speed below the velocity limits
        (:meth:`friction_turnover_note`)."""
        notes = []
        if self.provenance.get("status") == "doubtful":
            notes.append("was identified as DOUBTFUL: " + "; ".join(self.provenance.get("problems") or []))
        turnover = self.friction_turnover_note()
        return notes + ([turnover] if turnover else [])

    def friction_turnover_note(self) -> str | None:
        """A note naming the joints whose friction law, without a recorded speed range (a file written before
        it was recorded), stops rising below the arm's velocity limits (any speed for an arm not built in): past
        that speed it falls, and a feed-forward or observer built on it is wrong there (dynamics/friction.py).
        None when there is none."""
        from ..robots.description import get_robot

        try:
            limit = get_robot(self.robot).velocity_limit_rad_s
        except ValueError:  # an arm from a URDF: its limits are not known here
            limit = np.full(self.n_joints, np.inf)
        turnover = self.friction.unbounded_turnover_rad_s()
        turns = np.flatnonzero(turnover < limit)
        if not turns.size:
            return None
        listed = ", ".join(f"{self.joint_names[j]} past {turnover[j]:.2f} rad/s" for j in turns)
        return (f"records no speed range for its friction (friction.speed_range_rad_s), and its law, "
                f"evaluated as fitted at every speed, falls with speed below the velocity limits ({listed}): "
                "identify the model again to record the range")

    @classmethod
    def load(cls, path: str | Path) -> DynamicModel:
        path = Path(path)
        if not path.is_file():
            raise ModelFileError(f"model file {path} does not exist; run `rdi identify` to create one")
        try:
            data = yaml.safe_load(path.read_text())
        except yaml.YAMLError as exc:
            raise ModelFileError(f"{path}: not valid YAML: {exc}") from exc
        return cls.from_dict(data, source=str(path))


def ur_controller_model(robot: str = "ur3") -> DynamicModel:
    """The model a UR controller believes in: published inertials and rotor priors, no friction, the
    nominal drive gains (robots/priors.py). The simulated controller uses it for feed-forward, gravity
    compensation and target_current (which adds the P2 part of the arm type's nominal friction, sim/plant.py); a
    procedure on a real arm takes it as its prior."""
    name = str(robot).strip().lower()
    gains = nominal_drive_gains(name)  # first: raises a ValueError naming the known robots
    return replace(DynamicModel.nominal(name), drive_gains_nm_per_a=gains,
                   provenance={"source": "robot_dynamics_id.io.model_file.ur_controller_model", "robot": name})


def _gravity_from_file(value, source: str) -> np.ndarray:
    """The file's gravity vector (absent: a floor mount, as every file written before the key existed)."""
    if value is None:
        return np.array(STANDARD_GRAVITY_M_S2)
    try:
        return check_gravity(value, what="gravity_m_s2")
    except ValueError as exc:
        raise ModelFileError(f"{source}: {exc}") from None


def _drive_gains_from_file(value, provenance: dict, n: int) -> np.ndarray | None:
    """The file's drive gains; None when absent, null, or the all-1.0 placeholder of older files."""
    if value is None:
        return None
    gains = np.asarray(value, float)
    if gains.shape != (n,):
        raise ValueError(f"drive_gains_nm_per_a has {gains.size} values for {n} joints")
    if "identified_from" not in provenance and np.all(gains == 1.0):
        return None  # placeholder written before provenance.identified_from existed: not real gains
    return gains


def plain_for_yaml(value: Any) -> Any:
    """numpy scalars/arrays → plain Python, recursively, so yaml.safe_dump accepts them."""
    if isinstance(value, dict):
        return {str(k): plain_for_yaml(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_for_yaml(v) for v in value]
    if isinstance(value, np.ndarray):
        return plain_for_yaml(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    return value
