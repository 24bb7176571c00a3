"""Selection matrices of hybrid force/motion control, per axis of a task frame (seeds.md P2).

Jamisola P2, eq. (2): ``F = Lambda (Omega F*_motion + Omega~ F*_force) + ... + Omega~ f_d`` with
``Omega~ = I - Omega``. ``Omega`` is diagonal (1 = motion-controlled, 0 = force-controlled)
in the TASK frame and is rotated into base axes::

    Omega_base = R6 diag(s) R6^T,   R6 = blockdiag(R_task, R_task)

Axis order of a selection: ``(x, y, z, rx, ry, rz)`` of the task frame, translations
first. The polishing task of P2: force along tool z, zero moments about tool x and y,
motion along tool x, y and rotation about tool z (:data:`POLISHING_MOTION_AXES`).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "AXIS_NAMES",
    "FREE_MOTION_AXES",
    "POLISHING_MOTION_AXES",
    "motion_axes_from_names",
    "selection_matrices",
]

AXIS_NAMES: tuple[str, ...] = ("x", "y", "z", "rx", "ry", "rz")

#: Every axis motion-controlled (approach and impact stages).
FREE_MOTION_AXES = np.ones(6, dtype=bool)
#: P2 polishing: motion x, y, rz; force z; moments rx, ry (pad aligns with the surface).
POLISHING_MOTION_AXES = np.array([True, True, False, False, False, True])


def motion_axes_from_names(force_axes: list[str] | tuple[str, ...]) -> np.ndarray:
    """Motion mask (6 bools) from the names of the FORCE-controlled task axes, e.g. ``("z", "rx", "ry")``."""
    mask = np.ones(6, dtype=bool)
    for name in force_axes:
        key = str(name).strip().lower()
        if key not in AXIS_NAMES:
            raise ValueError(f"unknown task axis {name!r}; use one of {', '.join(AXIS_NAMES)}")
        mask[AXIS_NAMES.index(key)] = False
    return mask


def selection_matrices(task_rotation: np.ndarray, motion_axes: np.ndarray,
                       omega_out: np.ndarray | None = None,
                       omega_tilde_out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Omega, Omega~) in base axes for a task frame with rotation ``task_rotation`` (base <- task).

    P2, eq. (2): Omega~ = I - Omega. Written into the optional preallocated outputs.
    """
    omega = np.zeros((6, 6)) if omega_out is None else omega_out
    omega_t = np.zeros((6, 6)) if omega_tilde_out is None else omega_tilde_out
    s = np.asarray(motion_axes, dtype=float)
    r = task_rotation
    omega[:3, :3] = (r * s[:3]) @ r.T
    omega[3:, 3:] = (r * s[3:]) @ r.T
    omega[:3, 3:] = 0.0
    omega[3:, :3] = 0.0
    np.subtract(_EYE6, omega, out=omega_t)
    return omega, omega_t


_EYE6 = np.eye(6)
