"""Parameters of the collision observer (control/collision.py) and the monitor they build.

One table, :data:`COLLISION_PARAMETERS`, serves both places the observer runs: inside a robot loop
(ur_interface declares it with the prefix ``collision_``: :data:`UR_INTERFACE_COLLISION_PARAMETERS`)
and beside it (the collision_monitor node declares it as is).
"""

from __future__ import annotations

from dataclasses import replace

from ..control.collision import CollisionDetector, CollisionModelError, CollisionMonitor, CollisionThresholds
from ..io.model_file import DynamicModel, ModelFileError
from ..parameters import ParameterError, ParameterSpec, check_choice, check_positive
from ..robots.model import same_robot
from .tool import check_tool_mass, check_tool_offset

__all__ = ["COLLISION_PARAMETERS", "COLLISION_PREFIX", "UR_INTERFACE_COLLISION_PARAMETERS", "make_collision_detector",
           "make_collision_monitor", "unprefixed"]

#: above this, thresholds that were measured are no longer what the detector uses (10x: a detector that hardly fires)
MAX_THRESHOLD_SCALE = 10.0

COLLISION_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("model_file", "string", "",
                  "identified model with collision thresholds (rdi validate --collision-thresholds); empty: off"),
    ParameterSpec("threshold_scale", "double", 1.0,
                  "multiplies every collision threshold (> 1: less sensitive, fewer false alarms)", ""),
    ParameterSpec("reaction", "string", "protective_stop",
                  "protective_stop (stop the arm, UR style, and report) or report (report only)"),
    ParameterSpec("payload_kg", "double", 0.0, "tool mass at the flange (UR 'set payload')", "kg"),
    ParameterSpec("payload_com_m", "double_array", [0.0, 0.0, 0.0], "tool centre of mass in tool0 coordinates", "m"),
)

COLLISION_PREFIX = "collision_"
#: ur_interface's copy: the observer in its robot loop
UR_INTERFACE_COLLISION_PARAMETERS: tuple[ParameterSpec, ...] = tuple(
    replace(s, name=COLLISION_PREFIX + s.name, description="collision observer in the robot loop: " + s.description)
    for s in COLLISION_PARAMETERS)


def unprefixed(values: dict) -> dict:
    """ur_interface's ``collision_*`` values under the table's own names."""
    return {k[len(COLLISION_PREFIX):]: v for k, v in values.items() if k.startswith(COLLISION_PREFIX)}


def make_collision_detector(p: dict, *, rate_hz: float | None, joint_names=None,
                            robot: str | None = None) -> CollisionDetector | None:
    """The detector from :data:`COLLISION_PARAMETERS` values (None when ``model_file`` is empty).

    ``detector.notes``: what the node should warn about (thresholds measured with another tool than it carries).
    Raises ParameterError naming the parameter: a missing model or thresholds, thresholds measured at
    another rate, joints that are not the robot's, a model of another arm than ``robot`` (its residual at rest is
    the difference of two arms' gravity torques: a false collision at once)."""
    path = p.get("model_file") or ""
    if not path:
        return None
    try:
        model = DynamicModel.load(path)
        thresholds = CollisionThresholds.from_model(model, source=str(path))
        if robot is not None and not same_robot(model.robot, robot):
            raise CollisionModelError(f"{path} is a model of a {model.robot}, the robot is a {robot}: give the model "
                                      f"identified on this arm")
        if joint_names is not None and tuple(joint_names) != tuple(model.joint_names):
            raise CollisionModelError(f"{path} is a model of joints {list(model.joint_names)}, the robot's are "
                                      f"{list(joint_names)}; use the same robot (and tf_prefix)")
        com = check_tool_offset("payload_com_m", p.get("payload_com_m", (0.0, 0.0, 0.0)))
        mass = check_tool_mass("payload_kg", check_positive("payload_kg", p.get("payload_kg", 0.0), allow_zero=True),
                               model.robot)
        detector = CollisionDetector(model, thresholds,
                                     threshold_scale=check_positive("threshold_scale", p.get("threshold_scale", 1.0),
                                                                    upper=MAX_THRESHOLD_SCALE),
                                     payload_kg=mass, payload_com_m=com, rate_hz=rate_hz)
        measured_kg = (thresholds.provenance or {}).get("payload_kg")  # recorded since the thresholds carry a tool
        if measured_kg is not None and abs(float(measured_kg) - mass) > max(0.05, 0.1 * float(measured_kg)):
            # not refused: thresholds measured bare hold for a tool that is mounted and declared
            detector.notes.append(
                f"{path}'s thresholds were measured with a {float(measured_kg):g} kg tool, the observer carries "
                f"{mass:g} kg (payload_kg): if the mounted tool is not the declared one, its weight reads as a "
                "collision or hides one (measure them with it: rdi validate --collision-thresholds --payload FILE)")
        # a doubtful model, or friction falling past some speed: either reads as a collision where it is wrong
        detector.notes += [f"{path} {note}" for note in model.notes_for_use()]
        return detector
    except (ModelFileError, CollisionModelError) as exc:
        raise ParameterError(f"parameter 'model_file': {exc}") from None


def make_collision_monitor(p: dict, *, rate_hz: float, joint_names=None, on_collision=None,
                           on_sample=None, robot: str | None = None) -> CollisionMonitor | None:
    """The robot loop's cycle monitor from :data:`COLLISION_PARAMETERS` values (None when off)."""
    reaction = check_choice("reaction", p.get("reaction", "protective_stop"), ("protective_stop", "report"))
    detector = make_collision_detector(p, rate_hz=rate_hz, joint_names=joint_names, robot=robot)
    if detector is None:
        return None
    return CollisionMonitor(detector, react=reaction == "protective_stop", on_collision=on_collision,
                            on_sample=on_sample)
