"""The drive: motor current (A) to joint torque (Nm) through the drive gain, and what a gain may be.

Every place that turns a measured motor current into a joint torque uses
:func:`torque_from_current` with gains checked by :func:`check_drive_gains`
(ur_interface's ``JointState.effort``, the controller's sensorless force, the
identifier's torque source, the simulated experiment), so a missing, misshapen
or absurd gain is refused the same way everywhere.

Plausible gains. UR publishes no gear ratios or motor constants; identified
joint-side gains published for UR arms are 8.46-14.30 Nm/A (UR10e 10.0, 10.70,
8.46, 9.00, 9.48, 10.12; UR10 CB3 13.58-14.30; shared/reference/ur.md). A
strain-wave joint of ~100:1 with a motor constant of 0.02-0.5 Nm/A spans
2-50 Nm/A, so :data:`PLAUSIBLE_DRIVE_GAIN_NM_PER_A` = (1, 60) Nm/A refuses
only gains that cannot belong to a UR joint (a mistyped exponent, a gain in
mNm/A, a placeholder). The data-based check against the nominal model
(identification/data_checks.py) is the finer one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DriveGainError", "GAIN_SPREAD_WARN", "PLAUSIBLE_DRIVE_GAIN_NM_PER_A", "check_drive_gains",
           "gain_spread_warnings", "torque_from_current"]

#: Joint-side drive gains outside this range (Nm/A) are refused as not belonging to a UR joint (module doc).
PLAUSIBLE_DRIVE_GAIN_NM_PER_A: tuple[float, float] = (1.0, 60.0)
#: a gain this many times above or below the median of an arm's gains is warned about: a digit or a unit off is
#: the likely cause (published identified gains of one arm lie within 1.3x of each other; module doc). A wrist's
#: gain error cannot be seen in the data (it only scales that joint's identified torques), so this is its check.
GAIN_SPREAD_WARN = 3.0


class DriveGainError(ValueError):
    """Drive gains are missing, misshapen or implausible; the message names the fix."""


def check_drive_gains(gains, n_joints: int, *, what: str = "drive gains", plausible: bool = True) -> np.ndarray:
    """``gains`` as a float vector of ``n_joints`` finite positive values (Nm/A).

    ``plausible``: also refuse values outside :data:`PLAUSIBLE_DRIVE_GAIN_NM_PER_A` (turn it off only for
    data that are deliberately in amperes, e.g. the drive-gain identification's own unit gains).
    """
    if gains is None:
        raise DriveGainError(f"{what}: none given; pass {n_joints} gains in Nm/A (identify them with "
                             "`rdi drive-gains` and a known payload)")
    try:
        values = np.asarray(gains, float).ravel()
    except (TypeError, ValueError):
        raise DriveGainError(f"{what} {gains!r}: give {n_joints} numbers in Nm/A") from None
    if values.shape != (n_joints,):
        raise DriveGainError(f"{what}: {values.size} value(s) given for {n_joints} joints; give one gain per "
                             f"joint in Nm/A, e.g. {','.join(['10'] * n_joints)}")
    if not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise DriveGainError(f"{what} {values.tolist()}: every gain must be a finite positive number (Nm/A)")
    if plausible:
        lo, hi = PLAUSIBLE_DRIVE_GAIN_NM_PER_A
        bad = np.flatnonzero((values < lo) | (values > hi))
        if bad.size:
            listed = ", ".join(f"joint {j}: {values[j]:.4g}" for j in bad)
            raise DriveGainError(
                f"{what} implausible ({listed} Nm/A): a UR joint's torque per motor current lies within "
                f"{lo:g}-{hi:g} Nm/A (published UR gains are 8.5-14.3 Nm/A). Check the unit (Nm/A, joint side) "
                "and the digits, or identify the gains with `rdi drive-gains` and a known payload")
    return values


def gain_spread_warnings(gains_nm_per_a, joint_names, *, what: str = "--drive-gains") -> list[str]:
    """A warning naming each checked gain more than :data:`GAIN_SPREAD_WARN` times above or below the median of
    all of them (none when they are alike)."""
    values = np.asarray(gains_nm_per_a, float)
    median = float(np.median(values))
    apart = np.flatnonzero((values > GAIN_SPREAD_WARN * median) | (values < median / GAIN_SPREAD_WARN))
    if not apart.size:
        return []
    listed = ", ".join(f"{joint_names[j]} {values[j]:.4g}" for j in apart)
    return [f"{what}: {listed} Nm/A, more than {GAIN_SPREAD_WARN:g}x apart from the gains' median {median:.4g} Nm/A: "
            "a digit or a unit off? A wrong gain scales that joint's identified torques, which the data cannot "
            "show on a joint that bears little gravity"]


def torque_from_current(current_a: np.ndarray, gains_nm_per_a: np.ndarray) -> np.ndarray:
    """Joint torque (Nm) = motor current (A) x drive gain (Nm/A), per joint (gains already checked)."""
    return np.asarray(current_a, float) * gains_nm_per_a
