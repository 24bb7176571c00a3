"""Trajectory files (YAML, ``schema: robot_dynamics_id/excitation/1``; format in :mod:`.trajectory`).

:func:`save_trajectory` writes :meth:`JointTrajectory.to_dict`; :func:`load_trajectory`
reads it back, regenerating generated kinds from their parameters (Fourier series,
PRBS + sinusoid schedule), so this module sits above the generators and
:mod:`.trajectory` below them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .fourier import FourierTrajectory
from .prbs import PrbsSinusoidSchedule
from .trajectory import TRAJECTORY_SCHEMA, JointTrajectory

__all__ = ["TrajectoryFileError", "load_trajectory", "save_trajectory", "trajectory_from_dict"]


class TrajectoryFileError(ValueError):
    """A trajectory file cannot be read; the message names the file, the key and the fix."""


def save_trajectory(trajectory: JointTrajectory, path: str | Path, *, include_samples: bool | None = None) -> Path:
    """Write ``trajectory`` to a YAML file (parameters for generated kinds, samples otherwise)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        yaml.safe_dump(trajectory.to_dict(include_samples=include_samples), fh, sort_keys=False,
                       default_flow_style=None, width=120)
    return path


def load_trajectory(path: str | Path) -> JointTrajectory:
    """Read a trajectory file; generated kinds are regenerated from their parameters."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file {str(path)!r} does not exist")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise TrajectoryFileError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise TrajectoryFileError(f"{path}: expected a mapping with 'kind' and 'parameters' or 'samples'")
    try:
        return trajectory_from_dict(doc)
    except TrajectoryFileError as exc:
        raise TrajectoryFileError(f"{path}: {exc}") from exc


def trajectory_from_dict(doc: dict[str, Any]) -> JointTrajectory:
    """Inverse of :meth:`JointTrajectory.to_dict`."""
    schema = doc.get("schema", TRAJECTORY_SCHEMA)
    if schema != TRAJECTORY_SCHEMA:
        raise TrajectoryFileError(f"unknown schema {schema!r}; expected {TRAJECTORY_SCHEMA!r}")
    kind = doc.get("kind", "samples" if "samples" in doc else None)
    common = dict(robot=doc.get("robot"), limits=doc.get("limits"), metadata=doc.get("metadata"))
    rate_hz = doc.get("rate_hz")
    if kind == "samples":
        if "samples" not in doc:
            raise TrajectoryFileError("kind 'samples' needs a 'samples' block with time_s and position_rad")
        trajectory = _trajectory_from_samples(doc["samples"], doc.get("joint_names"))
        trajectory.robot = common["robot"]
        trajectory.limits = dict(common["limits"] or {})
        trajectory.metadata = dict(common["metadata"] or {})
        return trajectory
    if "parameters" not in doc:
        raise TrajectoryFileError(f"kind {kind!r} needs a 'parameters' block")
    params = doc["parameters"]
    if kind == "fourier":
        generator = FourierTrajectory.from_dict(params)
        trajectory = generator.to_trajectory(rate_hz=float(rate_hz or 125.0), joint_names=doc.get("joint_names"))
    elif kind == "prbs_sinusoid":
        generator = PrbsSinusoidSchedule.from_dict(params)
        trajectory = generator.to_trajectory(rate_hz=float(rate_hz or 125.0), joint_names=doc.get("joint_names"))
    else:
        raise TrajectoryFileError(f"unknown trajectory kind {kind!r}: use fourier, prbs_sinusoid or samples")
    trajectory.robot = common["robot"]
    trajectory.limits = dict(common["limits"] or {})
    trajectory.metadata = dict(common["metadata"] or {})
    return trajectory


def _trajectory_from_samples(samples: dict[str, Any], joint_names) -> JointTrajectory:
    if not isinstance(samples, dict) or "time_s" not in samples or "position_rad" not in samples:
        raise TrajectoryFileError("'samples' needs at least time_s (N) and position_rad (N x n)")
    t = np.asarray(samples["time_s"], dtype=float).ravel()
    q = np.asarray(samples["position_rad"], dtype=float)
    if q.ndim != 2 or q.shape[0] != t.size:
        raise TrajectoryFileError(f"position_rad must be {t.size} rows of joint values, got shape {q.shape}")
    if t.size < 3:
        raise TrajectoryFileError("a sampled trajectory needs at least 3 samples")
    # Differentiate what the user did not give (np.gradient: second-order central differences).
    qd = np.asarray(samples["velocity_rad_s"], float) if "velocity_rad_s" in samples else np.gradient(q, t, axis=0)
    qdd = (np.asarray(samples["acceleration_rad_s2"], float) if "acceleration_rad_s2" in samples
           else np.gradient(qd, t, axis=0))
    if qd.shape != q.shape or qdd.shape != q.shape:
        raise TrajectoryFileError("velocity_rad_s and acceleration_rad_s2 must have the shape of position_rad")
    return JointTrajectory(time_s=t - t[0], position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd,
                           joint_names=joint_names, kind="samples")
