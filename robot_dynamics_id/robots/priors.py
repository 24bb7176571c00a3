"""Nominal values of the UR arms that UR does not publish and the package assumes (robot facts, not fitted).

* Drive gains (joint torque per motor current, Nm/A): UR3 10, 10, 8, 6, 6, 6 (big joints ~10 like
  the identified UR10e values in shared/reference/ur.md, the smaller elbow and wrist drives lower);
  UR5e/UR10e/UR16e use the published UR10e values, UR5/UR10 the published UR10 (CB3) ones. They convert
  currents to torques wherever no identified gains are given, and are what the simulated UR controller
  believes in.

The published inertial priors are in :mod:`.description`.
"""

from __future__ import annotations

import numpy as np

from .description import get_robot

__all__ = ["NOMINAL_DRIVE_GAINS_NM_PER_A", "nominal_drive_gains"]

#: Assumed nominal drive gains, joint side, Nm/A (not published for the UR3: see the module doc).
NOMINAL_DRIVE_GAINS_NM_PER_A: dict[str, tuple[float, ...]] = {
    "ur3": (10.0, 10.0, 8.0, 6.0, 6.0, 6.0),
    "ur3e": (10.0, 10.0, 8.0, 6.0, 6.0, 6.0),
    # UR10e identified gains quoted in ur.md, used for the two larger e-Series arms.
    "ur5e": (10.0, 10.70, 8.46, 9.00, 9.48, 10.12),
    "ur10e": (10.0, 10.70, 8.46, 9.00, 9.48, 10.12),
    "ur16e": (10.0, 10.70, 8.46, 9.00, 9.48, 10.12),
    # UR10 (CB3) identified gains quoted in ur.md, used for the two larger CB3 arms.
    "ur5": (13.58, 14.30, 11.37, 11.24, 11.77, 11.77),
    "ur10": (13.58, 14.30, 11.37, 11.24, 11.77, 11.77),
}


def nominal_drive_gains(robot: str = "ur3") -> np.ndarray:
    """Assumed nominal drive gains of a built-in UR arm, Nm/A (raises ValueError naming the known robots)."""
    name = str(robot).strip().lower()
    get_robot(name)  # raises a ValueError naming the known robots
    return np.array(NOMINAL_DRIVE_GAINS_NM_PER_A[name], float)
