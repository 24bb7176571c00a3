"""Where the consistent fit lets each link's centre of mass and mass go (its bounds, not physics' own).

Realisable inertia is physics (identification/estimators.py, log-Cholesky); these bounds keep a loose direction
of the data from producing a link no arm has:

* **CoM box** (half-width per axis, around the prior CoM): half the distance to the next joint + 5 cm, so a
  link's CoM stays within its own geometry;
* **mass range**: 1 % to 10x the prior mass.

The last link carries whatever the lab mounted on the flange (a gripper, a force sensor), which its mass and CoM
take on: its mass may add :data:`TOOL_MASS_FACTOR` x the arm's rated payload (robots/description.py ``payload_kg``;
a URDF robot without a rating keeps the 10x bound), and its box reaches :data:`TOOL_COM_REACH_M`. So does the box
of the link before it: a mass on the last joint's axis acts alike on both links (joint torques fix only their
sum), so part of a tool's mass may land on that link, at the tool's place.
"""

from __future__ import annotations

import numpy as np

from ..robots.model import RobotModel

__all__ = ["TOOL_COM_REACH_M", "TOOL_MASS_FACTOR", "link_com_half_widths", "link_mass_bounds"]

#: the CoM box half-width of the last two links, m: a tool's CoM is rarely beyond 0.3 m of the flange (UR's payload
#: charts end about there), and the merged link's CoM lies between the tool's and the bare link's
TOOL_COM_REACH_M = 0.3
#: the last link's mass may exceed its prior by this many rated payloads (a tool at the rating, with margin)
TOOL_MASS_FACTOR = 1.5


def link_com_half_widths(rm: RobotModel) -> np.ndarray:
    """Per link, the CoM box half-width (m) of the module doc."""
    model = rm.model
    n = rm.n_joints
    lengths = np.zeros(n)
    for i in range(1, n):
        lengths[i - 1] = np.linalg.norm(model.jointPlacements[i + 1].translation)
    frame = model.frames[rm.tool_frame_id]
    lengths[n - 1] = np.linalg.norm(frame.placement.translation)
    half = 0.5 * lengths + 0.05
    half[max(n - 2, 0):] = np.maximum(half[max(n - 2, 0):], TOOL_COM_REACH_M)
    return half


def link_mass_bounds(rm: RobotModel, prior_mass_kg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per link, (lower, upper) mass in kg of the module doc, from the prior masses."""
    prior = np.maximum(np.asarray(prior_mass_kg, float), 1e-3)
    lower, upper = 0.01 * prior, 10.0 * prior
    if rm.description is not None:
        upper[-1] = max(upper[-1], prior[-1] + TOOL_MASS_FACTOR * float(rm.description.payload_kg))
    return lower, upper
