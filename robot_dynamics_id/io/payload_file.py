"""The payload YAML file (``rdi payload``'s output) read back, and an arm model carrying that payload.

``payload.yaml`` (``schema: robot_dynamics_id/payload/1``, written by
identification/payload.py ``PayloadEstimate.to_dict``) holds the payload's mass
(kg), centre of mass (m) and inertia about it (kg m^2), all in the frame it names
(``tool0``, the flange), with standard deviations, warnings and provenance.

What is read here is what a user of the payload needs: mass, CoM and the
*realisable* inertia about the CoM (the estimate projected onto the nearest
physically realisable one when noise broke the triangle inequality). When the
file says the motion did not determine the inertia (``inertia_determined: false``,
or, in files written before that key, no set-payload call with an inertia), the
payload is read as a point mass, as UR's own ``setPayload(mass, cog)`` takes it.

A rigid payload on the flange adds to the last link's 10 standard parameters
(dynamics/payload.py: theta_last += A theta_tool, Featherstone eq. (2.66)), so an
arm model with the payload is the same model with its last link heavier: every
prediction (rigid body, the load the load-dependent friction sees) then includes
it, exactly as the payload was identified.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..dynamics.payload import payload_parameters, tool_to_joint_transform
from ..robots.model import same_robot
from .model_file import DynamicModel

__all__ = ["DOUBTFUL_WARNINGS", "PAYLOAD_SCHEMA", "FlangePayload", "PayloadFileError", "load_payload_file",
           "model_with_payload", "payload_notes"]

PAYLOAD_SCHEMA = "robot_dynamics_id/payload/1"

#: beginnings of the ``rdi payload`` warnings that make an estimate doubtful (identification/payload_job uses them)
DOUBTFUL_WARNINGS = ("the centre of mass is uncertain", "the mass is uncertain", "the mass exceeds",
                     "the mass is below", "the recorded TCP pose")
_COMPONENTS = ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")


class PayloadFileError(ValueError):
    """A payload file cannot be read or used; the message names the file, the entry and the fix."""


@dataclass(frozen=True)
class FlangePayload:
    """A payload read from payload.yaml: SI units, in ``frame`` (tool0)."""

    mass_kg: float
    com_m: np.ndarray
    #: about the CoM, the realisable estimate; zeros when the file says the inertia was not determined
    inertia_about_com_kgm2: np.ndarray
    frame: str
    #: False: read as a point mass (the data did not determine the inertia)
    inertia_used: bool
    #: the ``rdi payload`` warnings that make the estimate doubtful (mass or CoM uncertain)
    doubtful: tuple[str, ...]
    #: the robot and the arm model the payload was identified with (from its provenance; None if not recorded)
    robot: str | None
    arm_model: str | None
    source: str

    def describe(self) -> dict:
        """What a result records about the payload it used."""
        return {"file": self.source, "mass_kg": self.mass_kg, "com_m": self.com_m.tolist(), "frame": self.frame,
                "inertia": "identified (realisable)" if self.inertia_used else "point mass (not determined)"}


def _inertia(d, source: str, key: str) -> np.ndarray:
    if not isinstance(d, dict) or any(c not in d for c in _COMPONENTS):
        raise PayloadFileError(f"{source}: '{key}' must map each of {list(_COMPONENTS)} to kg m^2")
    i = {c: float(d[c]) for c in _COMPONENTS}
    return np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])


def load_payload_file(path: str | Path) -> FlangePayload:
    """Read ``rdi payload``'s payload.yaml; raises :class:`PayloadFileError` naming what is wrong."""
    path = Path(path)
    if not path.is_file():
        raise PayloadFileError(f"payload file {path} does not exist; write one with `rdi payload --model "
                               f"model.yaml --data <run with the payload mounted> --out {path}`")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise PayloadFileError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema") != PAYLOAD_SCHEMA:
        got = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise PayloadFileError(f"{path}: schema is {got!r}, expected {PAYLOAD_SCHEMA!r}: give the payload.yaml "
                               "that `rdi payload` writes (a model.yaml is not a payload file)")
    source = str(path)
    try:
        mass = float(doc["mass_kg"])
        com = np.asarray(doc["com_m"], float)
        inertia = _inertia(doc.get("realisable_inertia_about_com_kgm2", doc.get("inertia_about_com_kgm2")), source,
                           "realisable_inertia_about_com_kgm2")
    except PayloadFileError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise PayloadFileError(f"{source}: malformed payload file ({exc!r}); it needs mass_kg, com_m and "
                               "realisable_inertia_about_com_kgm2 as `rdi payload` writes them") from exc
    if not (np.isfinite(mass) and mass > 0):
        raise PayloadFileError(f"{source}: mass_kg is {mass}: a payload needs a positive mass")
    if com.shape != (3,) or not np.all(np.isfinite(com)) or not np.all(np.isfinite(inertia)):
        raise PayloadFileError(f"{source}: com_m must be 3 finite numbers (m) and the inertia finite")
    determined = doc.get("inertia_determined")
    if determined is None:  # files written before the key: the set-payload call with an inertia says it
        determined = (doc.get("set_payload") or {}).get("ur_ros2_driver_with_inertia") is not None
    warnings = [str(w) for w in doc.get("warnings") or ()]
    doubtful = tuple(w for w in warnings if w.startswith(DOUBTFUL_WARNINGS))
    if doc.get("status") == "doubtful" and not doubtful:  # the file's verdict counts, whatever its warnings say
        doubtful = ("status: doubtful (rdi payload exited 3)",)
    provenance = doc.get("provenance") or {}
    return FlangePayload(
        mass_kg=mass, com_m=com, inertia_about_com_kgm2=inertia if determined else np.zeros((3, 3)),
        frame=str(doc.get("frame", "tool0")), inertia_used=bool(determined),
        doubtful=doubtful,
        robot=provenance.get("robot"), arm_model=provenance.get("arm_model"), source=source)


def _same_file(a: Path, b: Path) -> bool:
    """The same model file: the same path, or a copy with the same content (a model moved to a shared folder)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return a.read_bytes() == b.read_bytes()
    except OSError:
        return False


def payload_notes(payload: FlangePayload, model_path: str | Path | None = None) -> list[str]:
    """What a result that uses ``payload`` should say about it: doubtful estimates, a point mass, another arm
    model than ``model_path`` behind the estimate."""
    notes = [f"the payload {payload.source} is doubtful ({w.split(':')[0]}): predictions with it inherit that"
             for w in payload.doubtful]
    if not payload.inertia_used:
        notes.append(f"the payload {payload.source} did not determine its inertia: used as a point mass of "
                     f"{payload.mass_kg:.3f} kg at its CoM")
    if (model_path is not None and payload.arm_model
            and not _same_file(Path(payload.arm_model), Path(model_path))):
        notes.append(f"the payload was identified with another arm model ({payload.arm_model}): it absorbed that "
                     "model's errors at the payload run's poses, not this one's")
    return notes


def model_with_payload(model: DynamicModel, payload: FlangePayload) -> DynamicModel:
    """``model`` with ``payload`` rigidly added to its last link (its per-link parameters; the stored base
    parameters are dropped: they describe the arm without it). Refused for a payload identified on another
    robot, and for a model whose links are not physically consistent (it predicts from base parameters, which
    cannot take a body added to one link)."""
    if payload.robot is not None and not same_robot(payload.robot, model.robot):
        raise PayloadFileError(f"{payload.source}: the payload was identified on {payload.robot}, the model is of "
                               f"{model.robot}: identify the payload with this robot's arm model")
    inconsistent = np.flatnonzero(~model.is_physically_consistent())
    if inconsistent.size:
        raise PayloadFileError(f"the model's links {inconsistent.tolist()} are not physically consistent, so it "
                               "predicts from its base parameters, which cannot carry a payload on the flange: "
                               "identify the arm with --method consistent (the default)")
    robot = model.kinematics(tool_frame=payload.frame)
    if robot.tool_frame != payload.frame or not robot.model.existFrame(payload.frame):
        raise PayloadFileError(f"{payload.source}: the payload is given in frame {payload.frame!r}, the model's "
                               f"robot {model.robot} has its flange frame {robot.tool_frame!r}: identify the payload "
                               "with this robot's arm model")
    theta = model.standard_parameters().copy()
    added = tool_to_joint_transform(robot) @ payload_parameters(payload.mass_kg, payload.com_m,
                                                                payload.inertia_about_com_kgm2)
    theta[-10:] += added
    return model.with_standard_parameters(theta, base_parameters=None,
                                          provenance={**model.provenance, "payload": payload.describe()})
