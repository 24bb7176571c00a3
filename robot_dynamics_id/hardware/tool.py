"""Checks of a tool (payload) given as node parameters: a unit slip is refused before it reaches a model.

A tool's mass in grams (350 for 0.35 kg) or its centre of mass in millimetres (57.1 for 0.0571 m) does not look
wrong to a parameter parser, but a model carrying it swings a torque-controlled arm, or makes the collision
observer see a huge external torque at once. Every node that takes a tool checks it here: the mass against the
robot's rated payload, a point against :data:`MAX_TOOL_OFFSET_M` from the flange.
"""

from __future__ import annotations

import numpy as np

from ..parameters import ParameterError, check_vector
from ..robots.description import ROBOT_NAMES, get_robot
from ..robots.model import robot_key

__all__ = ["MAX_TOOL_OFFSET_M", "check_tool_mass", "check_tool_offset"]

#: farthest a tool's CoM or tip may lie from the flange, m: far beyond any real tool, so a value in mm (57.1 for
#: 0.0571) is caught before it reaches the model (a 57 m lever arm swings the arm at speed)
MAX_TOOL_OFFSET_M = 1.0


def check_tool_offset(name: str, values) -> tuple[float, float, float]:
    """A tool-frame point (m), refused beyond :data:`MAX_TOOL_OFFSET_M` from the flange."""
    v = tuple(check_vector(name, values, 3))
    if float(np.linalg.norm(v)) > MAX_TOOL_OFFSET_M:
        raise ParameterError(f"parameter {name!r} = {list(v)} lies {np.linalg.norm(v):.3g} m from the flange "
                             f"(more than {MAX_TOOL_OFFSET_M:g} m): give it in metres (57 mm is 0.057)")
    return v


def check_tool_mass(name: str, mass_kg: float, robot: str) -> float:
    """A tool mass (kg), refused above the rated payload of a built-in ``robot`` (a URDF robot: not checked)."""
    rated = get_robot(robot).payload_kg if robot_key(robot) in ROBOT_NAMES else None
    if rated is not None and mass_kg > rated:
        raise ParameterError(f"parameter {name!r}: a tool of {mass_kg:g} kg exceeds the {robot}'s rated payload "
                             f"{rated:g} kg: give the mass in kg (350 g is 0.35)")
    return mass_kg
