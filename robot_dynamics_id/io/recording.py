"""The in-memory result of reading an experiment: time series over the robot's timestamps.

A :class:`Recording` is what the bag reader (:mod:`.bag_reader`) and the ur_rtde CSV
reader (:mod:`.ur_csv`) return and what identification consumes. Every array has
one row per sample of the joint-state stream; columns are in ``joint_names`` order.

Fields, units, and their source in a bag (package default topics) / an RTDE CSV:

- ``time_s`` [s]: header.stamp of /joint_states / ``timestamp`` (s since controller start)
- ``q_rad`` [rad]: /joint_states position / ``actual_q_0..5``
- ``qd_rad_s`` [rad/s]: /joint_states velocity / ``actual_qd_0..5``
- ``current_a`` [A]: /motor_currents effort, or /joint_states effort for the
  official UR driver / ``actual_current_0..5``
- ``target_current_a`` [A]: /target_currents effort / ``target_current_0..5``
- ``target_moment_nm`` [Nm]: /target_moment effort / ``target_moment_0..5``
- ``effort_nm`` [Nm]: /joint_states effort (a joint-torque interface, e.g. our ur_interface) / (none)
- ``current_as_torque_nm`` [Nm]: /joint_states effort of the official UR driver on new firmware
  (``joint_states_effort='current_as_torque_nm'``) / ``actual_current_as_torque_0..5``. UR documents
  it as gravity-compensated (0 for a joint at rest without external load): it cannot identify
  gravity, so it is never used as the joint torque (identification/torque_source.py)
- ``tcp_wrench`` [N, Nm], [Fx Fy Fz Mx My Mz]: /force_torque_sensor_broadcaster/wrench
  (in the message's frame) / ``actual_TCP_force_0..5`` (base frame)
- ``tcp_pose`` [m, rad], [x y z rx ry rz] (rotation vector), the controller's base frame: (none) /
  ``actual_TCP_pose_0..5`` (the TCP offset set on the pendant included)
- ``joint_temperature_c`` [°C]: (none) / ``joint_temperatures_0..5`` (the joints' own sensors)
- ``velocity_command_rad_s`` [rad/s]: /forward_velocity_controller/commands / (none)
- ``effort_command_nm`` [Nm]: /forward_effort_controller/commands / (none)

Optional fields are ``None`` when the source did not have them. Commands carry
no time stamp of their own; they are held (zero-order) from the moment they
were received and are NaN before the first command.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

__all__ = ["CARTESIAN_SIGNALS", "JOINT_SIGNALS", "FileRows", "Recording", "RecordingSource"]

#: Per-joint (N, n) signals of a :class:`Recording`, besides q and qd.
JOINT_SIGNALS: tuple[str, ...] = (
    "current_a",
    "target_current_a",
    "target_moment_nm",
    "effort_nm",
    "current_as_torque_nm",
    "velocity_command_rad_s",
    "effort_command_nm",
    "joint_temperature_c",
)

#: Six-axis (N, 6) signals of a :class:`Recording`: the TCP wrench and pose.
CARTESIAN_SIGNALS: tuple[str, ...] = ("tcp_wrench", "tcp_pose")


@dataclass(frozen=True)
class RecordingSource:
    """Where a recording came from: file, storage format and the topics/columns used."""

    path: str
    #: 'sqlite3', 'mcap', 'ur_rtde_csv', 'rtde_record', 'simulated', ...
    storage: str
    #: field name of the Recording -> topic (bag) or column prefix (CSV) it was read from
    topics: dict[str, str] = field(default_factory=dict)
    #: optional fields the source did not hold -> the topic they would have come from (not a warning: every
    #: command that needs one refuses with the fix, and most runs need few of them)
    absent: dict[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for reports and logs."""
        used = ", ".join(f"{k}<-{v}" for k, v in self.topics.items())
        missing = f"; absent: {', '.join(f'{k} ({v})' for k, v in self.absent.items())}" if self.absent else ""
        return f"{self.path} [{self.storage}] {used}{missing}"


@dataclass(frozen=True, eq=False)
class FileRows:
    """How a recording's samples map to the data rows of the file they were read from, and which rows the reader
    left out and why: outputs with one row per row of the file (predictions.csv) are built from it."""

    #: data row of each sample (0-based, the file's order), (N,)
    sample_row: np.ndarray
    #: data rows left out, (M,)
    dropped_row: np.ndarray
    #: their timestamps, s (NaN where unreadable), (M,)
    dropped_time_s: np.ndarray
    #: why each was left out: 'not_running' (robot or safety mode), 'non_finite', 'repeated' (an earlier timestamp)
    dropped_reason: np.ndarray
    #: for a 'repeated' row, the sample it repeats (index into the samples); -1 otherwise, (M,)
    dropped_repeats: np.ndarray

    @classmethod
    def none_dropped(cls, n_samples: int) -> FileRows:
        empty = np.zeros(0)
        return cls(np.arange(n_samples), empty.astype(int), empty, empty.astype(str), empty.astype(int))


@dataclass(frozen=True, eq=False)
class Recording:
    """Robot time series of one experiment (see the module docstring for units and sources)."""

    joint_names: tuple[str, ...]
    #: sample times on the robot's clock, s, strictly increasing, shape (N,)
    time_s: np.ndarray
    #: joint positions, rad, (N, n)
    q_rad: np.ndarray
    #: joint velocities as reported by the robot, rad/s, (N, n)
    qd_rad_s: np.ndarray
    #: measured motor currents, A, (N, n)
    current_a: np.ndarray | None = None
    #: the controller's model-predicted currents, A, (N, n)
    target_current_a: np.ndarray | None = None
    #: the controller's model torque (excludes friction), Nm, (N, n)
    target_moment_nm: np.ndarray | None = None
    #: joint torque reported by a torque interface, Nm, (N, n)
    effort_nm: np.ndarray | None = None
    #: UR's actual_current_as_torque: gravity-compensated joint torque, Nm, (N, n) (not a joint torque)
    current_as_torque_nm: np.ndarray | None = None
    #: [Fx, Fy, Fz, Mx, My, Mz] in N and Nm, (N, 6)
    tcp_wrench: np.ndarray | None = None
    #: [x, y, z, rx, ry, rz] in m and rad (rotation vector), the controller's base frame, (N, 6)
    tcp_pose: np.ndarray | None = None
    #: commanded joint velocities, rad/s, (N, n); NaN before the first command
    velocity_command_rad_s: np.ndarray | None = None
    #: commanded joint torques, Nm, (N, n); NaN before the first command
    effort_command_nm: np.ndarray | None = None
    #: joint temperatures, degrees Celsius, (N, n): friction depends on them
    joint_temperature_c: np.ndarray | None = None
    source: RecordingSource | None = None
    #: what the reader noticed and did (dropped samples, recovered files, ...)
    warnings: tuple[str, ...] = ()
    #: the samples' rows in the file and the rows left out (readers of row files set it; None: not known)
    file_rows: FileRows | None = None

    def __post_init__(self) -> None:
        names = tuple(self.joint_names)
        object.__setattr__(self, "joint_names", names)
        n = len(names)
        t = np.asarray(self.time_s, dtype=float)
        if t.ndim != 1:
            raise ValueError(f"Recording.time_s must be 1-D, got shape {t.shape}")
        object.__setattr__(self, "time_s", t)
        n_samples = t.shape[0]
        for name in ("q_rad", "qd_rad_s", *JOINT_SIGNALS, *CARTESIAN_SIGNALS):
            value = getattr(self, name)
            if value is None:
                continue
            arr = np.asarray(value, dtype=float)
            width = 6 if name in CARTESIAN_SIGNALS else n
            if arr.shape != (n_samples, width):
                raise ValueError(
                    f"Recording.{name} has shape {arr.shape}, expected ({n_samples}, {width}) "
                    f"(one row per time_s sample, one column per {'axis' if name in CARTESIAN_SIGNALS else 'joint'})"
                )
            object.__setattr__(self, name, arr)
        if n_samples > 1 and not np.all(np.diff(t) > 0):
            bad = int(np.argmin(np.diff(t) > 0))
            raise ValueError(
                f"Recording.time_s must be strictly increasing; sample {bad + 1} "
                f"({t[bad + 1]!r} s) does not come after {t[bad]!r} s. Sort and de-duplicate the samples first."
            )

    @property
    def n_samples(self) -> int:
        """Number of samples N."""
        return int(self.time_s.shape[0])

    @property
    def n_joints(self) -> int:
        """Number of joints n."""
        return len(self.joint_names)

    @property
    def duration_s(self) -> float:
        """Time from the first to the last sample, s."""
        return float(self.time_s[-1] - self.time_s[0]) if self.n_samples else 0.0

    @property
    def sample_period_s(self) -> float:
        """Median sampling period, s (NaN for fewer than two samples)."""
        return float(np.median(np.diff(self.time_s))) if self.n_samples > 1 else float("nan")

    def available(self) -> tuple[str, ...]:
        """Names of the optional signals present."""
        return tuple(name for name in (*JOINT_SIGNALS, *CARTESIAN_SIGNALS) if getattr(self, name) is not None)

    def select(self, index: np.ndarray | slice) -> Recording:
        """A recording holding only the samples ``index`` selects (a slice, mask or index array)."""
        changes: dict[str, np.ndarray] = {"time_s": self.time_s[index], "q_rad": self.q_rad[index],
                                          "qd_rad_s": self.qd_rad_s[index]}
        for name in self.available():
            changes[name] = getattr(self, name)[index]
        return replace(self, file_rows=None, **changes)  # a subset no longer maps onto the file's rows

    def with_warnings(self, *messages: str) -> Recording:
        """A copy with more warnings appended."""
        return replace(self, warnings=self.warnings + tuple(messages))

    def describe(self) -> str:
        """A short human-readable summary."""
        src = self.source.describe() if self.source else "(no source)"
        rate = 1.0 / self.sample_period_s if self.n_samples > 1 else float("nan")
        return (f"{self.n_samples} samples over {self.duration_s:.3f} s (~{rate:.1f} Hz), joints "
                f"{list(self.joint_names)}, signals {list(self.available())}; from {src}")

    def save_npz(self, path: str | Path) -> None:
        """Store as a numpy .npz archive (for caching a decoded bag)."""
        arrays = {"time_s": self.time_s, "q_rad": self.q_rad, "qd_rad_s": self.qd_rad_s,
                  "joint_names": np.array(self.joint_names)}
        for name in self.available():
            arrays[name] = getattr(self, name)
        np.savez(path, **arrays)

    @classmethod
    def load_npz(cls, path: str | Path) -> Recording:
        """Read an archive written by :meth:`save_npz`."""
        with np.load(path) as data:
            kwargs = {k: data[k] for k in data.files if k != "joint_names"}
            names = tuple(str(x) for x in data["joint_names"])
        return cls(joint_names=names, source=RecordingSource(str(path), "npz"), **kwargs)
