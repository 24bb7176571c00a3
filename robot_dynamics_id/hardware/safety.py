"""The safety guard shared by every robot backend.

Every motion command passes through :class:`SafetyGuard` before it reaches a
robot, simulated or real. The guard

* refuses NaN/inf commands and commands of the wrong length,
* clamps (or, if so configured, refuses) velocities, accelerations and torques
  beyond the configured limits,
* keeps every joint inside its position limits: a velocity that would carry a
  joint past its limit before it can stop is reduced to the largest one from
  which the joint can still stop in time,
* runs the command watchdog: when no command has arrived for ``watchdog_s``
  (default 40 ms, like the UR driver) the arm must be brought to rest.

It holds only configuration and the watchdog's time stamp, and never talks to
the robot itself: the robot loop asks it what to send.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

__all__ = ["CommandRejected", "GuardedCommand", "LimitPolicy", "SafetyGuard", "SafetyLimits"]


#: a measured joint speed above its limit by more than this factor stops torque commands (speed noise and a
#: cycle's acceleration stay well inside it)
OVERSPEED_TOLERANCE = 1.05


class LimitPolicy(str, Enum):
    """What the guard does with a command beyond a limit."""

    CLAMP = "clamp"
    REFUSE = "refuse"


class CommandRejected(ValueError):
    """A command was refused; ``reason`` says why in words a user can act on."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class SafetyLimits:
    """Per-joint limits the guard enforces (arrays of length n).

    Positions in rad (symmetric ``lower``/``upper`` allowed to differ), velocities
    rad/s, accelerations rad/s², torques Nm.
    """

    position_lower_rad: np.ndarray
    position_upper_rad: np.ndarray
    velocity_rad_s: np.ndarray
    acceleration_rad_s2: np.ndarray
    torque_nm: np.ndarray

    def __post_init__(self) -> None:
        n = np.asarray(self.velocity_rad_s).shape[0]
        for name in ("position_lower_rad", "position_upper_rad", "velocity_rad_s", "acceleration_rad_s2", "torque_nm"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (n,):
                raise ValueError(f"limit {name} must have {n} entries, got shape {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"limit {name} contains NaN or inf")
            object.__setattr__(self, name, value)
        for name in ("velocity_rad_s", "acceleration_rad_s2", "torque_nm"):
            if np.any(getattr(self, name) <= 0):
                raise ValueError(f"every entry of limit {name} must be > 0, got {getattr(self, name).tolist()}")
        if np.any(self.position_lower_rad >= self.position_upper_rad):
            raise ValueError("each position lower limit must be below its upper limit")

    @property
    def n_joints(self) -> int:
        return self.velocity_rad_s.shape[0]


@dataclass(frozen=True)
class GuardedCommand:
    """A command after the guard: what to send, and what the guard changed."""

    values: np.ndarray
    acceleration_rad_s2: float = 0.0
    clamped_joints: tuple[int, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class _Bounds:
    """What the guard compares commands with, derived once from the limits: velocity and torque limits with
    a 1e-9 relative tolerance (rad/s, Nm), the smallest acceleration limit (rad/s²), and the position limits
    less the margin (rad)."""

    velocity_rad_s: np.ndarray
    torque_nm: np.ndarray
    acceleration_rad_s2: float
    overspeed_rad_s: np.ndarray
    upper_rad: np.ndarray
    lower_rad: np.ndarray


class SafetyGuard:
    """Validates and bounds joint commands; owns the command watchdog.

    Args:
        limits: the limits to enforce.
        policy: clamp or refuse commands beyond a limit.
        watchdog_s: time without commands after which the arm must stop.
        position_margin_rad: distance kept from the position limits.
    """

    def __init__(
        self,
        *,
        limits: SafetyLimits,
        policy: LimitPolicy | str = LimitPolicy.CLAMP,
        watchdog_s: float = 0.04,
        position_margin_rad: float = 0.02,
    ) -> None:
        if not (watchdog_s > 0 and math.isfinite(watchdog_s)):
            raise ValueError(f"watchdog_s must be > 0 s, got {watchdog_s}")
        self.limits = limits
        self.policy = LimitPolicy(policy)
        self.watchdog_s = float(watchdog_s)
        self.position_margin_rad = float(position_margin_rad)
        self._last_command_time_s: float | None = None
        self._derived_for: tuple | None = None  # (limits, margin) the bounds below were computed from

    def _bounds(self) -> _Bounds:
        """The per-cycle constants of the limits, recomputed only when ``limits`` or the margin change
        (the robot loop guards every cycle: recomputing them cost more than the checks themselves)."""
        key = (self.limits, self.position_margin_rad)
        if self._derived_for is None or self._derived_for[0] is not key[0] or self._derived_for[1] != key[1]:
            limits = self.limits
            self._derived = _Bounds(
                velocity_rad_s=limits.velocity_rad_s * (1 + 1e-9),
                torque_nm=limits.torque_nm * (1 + 1e-9),
                acceleration_rad_s2=float(np.min(limits.acceleration_rad_s2)),
                overspeed_rad_s=limits.velocity_rad_s * OVERSPEED_TOLERANCE,
                upper_rad=limits.position_upper_rad - self.position_margin_rad,
                lower_rad=limits.position_lower_rad + self.position_margin_rad)
            self._derived_for = key
        return self._derived

    # ---- watchdog -------------------------------------------------------------------
    def feed_watchdog(self, now_s: float) -> None:
        """Record that a valid command arrived at ``now_s`` (monotonic seconds)."""
        self._last_command_time_s = now_s

    def disarm_watchdog(self) -> None:
        """Forget the last command (after a stop: nothing is pending any more)."""
        self._last_command_time_s = None

    def watchdog_expired(self, now_s: float) -> bool:
        """True once a command stream has been silent for longer than ``watchdog_s``."""
        last = self._last_command_time_s
        return last is not None and now_s - last > self.watchdog_s

    # ---- commands -------------------------------------------------------------------
    def _check_finite(self, values: np.ndarray, kind: str) -> np.ndarray:
        arr = np.asarray(values, dtype=float).ravel()
        if arr.shape != (self.limits.n_joints,):
            raise CommandRejected(
                f"{kind} command has {arr.size} values, expected {self.limits.n_joints} (one per joint, "
                "in the configured joint order)"
            )
        if not np.isfinite(arr).all():
            bad = [int(i) for i in np.flatnonzero(~np.isfinite(arr))]
            raise CommandRejected(f"{kind} command contains NaN/inf at joint index {bad}; command refused")
        return arr

    def _bound(self, values: np.ndarray, limit: np.ndarray, bound: np.ndarray, kind: str, unit: str):
        """Values beyond ``bound`` (the limit with its tolerance, :class:`_Bounds`) clamped to ``limit``, or
        refused; and the joints that were."""
        over = np.abs(values) > bound
        if not over.any():
            return values, ()
        joints = tuple(int(i) for i in np.flatnonzero(over))
        if self.policy is LimitPolicy.REFUSE:
            j = joints[0]
            raise CommandRejected(
                f"{kind} command {values[j]:.4g} {unit} on joint {j} exceeds its limit {limit[j]:.4g} {unit}; "
                "refused (limit_policy: refuse)"
            )
        return np.clip(values, -limit, limit), joints

    def guard_velocity(
        self,
        qd_rad_s: np.ndarray,
        *,
        q_rad: np.ndarray,
        acceleration_rad_s2: float | None = None,
    ) -> GuardedCommand:
        """Bound a joint-velocity command (speedJ) at the current position ``q_rad``.

        The acceleration is capped at the smallest per-joint limit, since speedJ
        takes one acceleration for all joints.
        """
        qd = self._check_finite(qd_rad_s, "velocity")
        q = np.asarray(q_rad, dtype=float)
        bounds = self._bounds()
        qd, clamped = self._bound(qd, self.limits.velocity_rad_s, bounds.velocity_rad_s, "velocity", "rad/s")
        notes = [f"velocity clamped on joints {list(clamped)}"] if clamped else []
        acc_limit = bounds.acceleration_rad_s2
        if acceleration_rad_s2 is None:
            acc = acc_limit
        else:
            acc = float(acceleration_rad_s2)
            if not math.isfinite(acc) or acc <= 0:
                raise CommandRejected(f"acceleration {acceleration_rad_s2} must be a positive number of rad/s²")
            if acc > acc_limit:
                if self.policy is LimitPolicy.REFUSE:
                    raise CommandRejected(
                        f"acceleration {acc:.4g} rad/s² exceeds the limit {acc_limit:.4g} rad/s²; refused"
                    )
                notes.append(f"acceleration clamped to {acc_limit:.4g} rad/s²")
                acc = acc_limit
        # Position limits: the joint must be able to stop before the limit at the
        # guard's deceleration: v_max = sqrt(2 a d) towards the limit (d = distance left).
        room_up = np.maximum(bounds.upper_rad - q, 0.0)
        room_down = np.maximum(q - bounds.lower_rad, 0.0)
        v_up = np.sqrt(2.0 * acc * room_up)
        v_down = np.sqrt(2.0 * acc * room_down)
        limited = np.minimum(np.maximum(qd, -v_down), v_up)  # np.clip's values (-v_down <= v_up) at less cost
        change = np.abs(limited - qd)
        pos_joints = tuple(int(i) for i in np.flatnonzero(change > 1e-12)) if change.max() > 1e-12 else ()
        if pos_joints:
            if self.policy is LimitPolicy.REFUSE and np.any(np.abs(limited - qd)[list(pos_joints)] > 1e-6):
                j = pos_joints[0]
                raise CommandRejected(
                    f"velocity {qd[j]:.4g} rad/s on joint {j} at {q[j]:.4g} rad would pass its position limit "
                    f"[{self.limits.position_lower_rad[j]:.4g}, {self.limits.position_upper_rad[j]:.4g}] rad; refused"
                )
            notes.append(f"slowed near the position limit on joints {list(pos_joints)}")
        return GuardedCommand(
            values=limited,
            acceleration_rad_s2=acc,
            clamped_joints=tuple(sorted(set(clamped) | set(pos_joints))),
            notes=tuple(notes),
        )

    def guard_torque(self, torque_nm: np.ndarray, *, q_rad: np.ndarray, qd_rad_s: np.ndarray) -> GuardedCommand:
        """Bound a joint-torque command; near a position limit, torque that drives a
        joint further out is refused (the arm must stop instead), and so is any torque
        while a joint moves faster than its velocity limit (x :data:`OVERSPEED_TOLERANCE`):
        a torque command bounds no speed, so the measured one is checked, as a UR's
        joint-speed safety limit does."""
        tau = self._check_finite(torque_nm, "torque")
        bounds = self._bounds()
        tau, clamped = self._bound(tau, self.limits.torque_nm, bounds.torque_nm, "torque", "Nm")
        q = np.asarray(q_rad, float)
        qd = np.asarray(qd_rad_s, float)
        over = np.abs(qd) > bounds.overspeed_rad_s
        if over.any():
            j = int(np.flatnonzero(over)[0])
            raise CommandRejected(f"joint {j} moves at {qd[j]:.3g} rad/s, beyond its velocity limit "
                                  f"{bounds.velocity_rad_s[j]:.3g} rad/s: torque commands stopped (a controller "
                                  "that lets the arm run away: check its model, tool and targets)")
        outside = (q > bounds.upper_rad) & (qd > 0)
        outside |= (q < bounds.lower_rad) & (qd < 0)
        if outside.any():
            j = int(np.flatnonzero(outside)[0])
            raise CommandRejected(f"joint {j} at {q[j]:.4g} rad is at its position limit and moving outwards")
        notes = (f"torque clamped on joints {list(clamped)}",) if clamped else ()
        return GuardedCommand(values=tau, clamped_joints=clamped, notes=notes)

    def stopping_deceleration(self) -> float:
        """Deceleration (rad/s²) used to bring the arm to rest."""
        return self._bounds().acceleration_rad_s2
