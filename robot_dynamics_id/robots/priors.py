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

__all__ = ["NOMINAL_DRIVE_GAINS_NM_PER_A", "foreign_nominal_gains", "is_nominal_gains", "nominal_drive_gains"]

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


def is_nominal_gains(gains_nm_per_a, robot: str) -> bool:
    """True when ``gains_nm_per_a`` are ``robot``'s assumed nominal gains (a model identified without calibrated
    gains: its torques in Nm carry their error)."""
    nominal = NOMINAL_DRIVE_GAINS_NM_PER_A.get(str(robot).strip().lower())
    g = None if gains_nm_per_a is None else np.asarray(gains_nm_per_a, float)
    return nominal is not None and g is not None and g.shape == (len(nominal),) and bool(np.allclose(g, nominal))


def foreign_nominal_gains(gains_nm_per_a, robot: str) -> str | None:
    """A warning when ``gains_nm_per_a`` are the assumed nominal gains of other built-in arms and not ``robot``'s
    (a configuration copied from another arm's: config/ur3.yaml's gains on a UR10 scale its torques 0.64x), else
    None. Identified gains never match a table exactly, so only a copied table trips it."""
    name = str(robot).strip().lower()
    g = np.asarray(gains_nm_per_a, float)
    if name not in NOMINAL_DRIVE_GAINS_NM_PER_A or g.shape != (len(NOMINAL_DRIVE_GAINS_NM_PER_A[name]),):
        return None
    own = np.array(NOMINAL_DRIVE_GAINS_NM_PER_A[name], float)
    if np.allclose(g, own):
        return None
    others = [k for k, v in NOMINAL_DRIVE_GAINS_NM_PER_A.items() if k != name and np.allclose(g, v)]
    if not others:
        return None
    listed = ", ".join(f"{v:g}" for v in own)
    return (f"the drive gains {', '.join(f'{v:g}' for v in g)} Nm/A are the assumed nominal gains of "
            f"{' / '.join(others)}, not of the {name} ({listed}): a configuration copied from another arm scales "
            "every torque; give this arm's gains (identify them with a known payload: rdi drive-gains)")
