"""Task generators for the operational-space controller: what to aim at, cycle by cycle.

:class:`PolishingTask` is the polishing task of Jamisola et al. (seeds.md P2),
UR3-sized: from the pose the arm is in when the task starts, approach straight
down (tool axis) toward a point just below the *expected* surface (stage 1 of
P2 eq. (10)); once the controller reports contact and hybrid control (stages
2-3), hold the normal force and track a sinusoid along the tool's x axis
(default 0.08 m amplitude, 5 s period) with the amplitude ramped in over one
period. The controller is told only the expected surface height, never its
shape. Pure numpy; the osc_controller node calls :meth:`targets` every cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .contact import ContactStage

__all__ = ["APPROACH_DEPTH_M", "CONTACT_WAIT_S", "ContactMissed", "MotionTarget", "PolishingTask"]

#: the approach aims this far below the expected surface (P2: "just below"), m
APPROACH_DEPTH_M = 0.02
#: after the approach has reached its end point (below the expected surface), wait this long for contact
CONTACT_WAIT_S = 1.0


class ContactMissed(RuntimeError):
    """The approach ended below the expected surface without touching anything: the caller must stop."""


def _smooth(x: float) -> tuple[float, float, float]:
    """Quintic 0 -> 1 ramp and its first two derivatives (in x), clamped."""
    if x <= 0.0:
        return 0.0, 0.0, 0.0
    if x >= 1.0:
        return 1.0, 0.0, 0.0
    return x**3 * (10 - 15 * x + 6 * x * x), 30 * x * x * (1 - x) ** 2, 60 * x * (1 - x) * (1 - 2 * x)


@dataclass(frozen=True)
class MotionTarget:
    """Desired pose, twist and acceleration of the motion point (base frame)."""

    position_m: np.ndarray
    rotation: np.ndarray
    twist: np.ndarray
    acceleration: np.ndarray


class PolishingTask:
    """Approach, contact, then force + sinusoidal sliding (see the module docstring).

    Args:
        start_position_m: motion-point position when the task starts (base frame).
        start_rotation: its orientation (kept throughout).
        tip_offset_base_m: tool tip minus motion point, base frame, at the start.
        expected_surface_z_m: the surface height the controller is told (base frame z).
        approach_depth_m: aim this far below the expected surface (P2: "just below").
        approach_speed_m_s: peak approach speed.
        amplitude_m, period_s: the sinusoid along the base x axis.
        settle_s: hold still this long after hybrid control begins before sliding.
    """

    def __init__(self, *, start_position_m, start_rotation, tip_offset_base_m, expected_surface_z_m: float,
                 approach_depth_m: float = APPROACH_DEPTH_M, approach_speed_m_s: float = 0.05,
                 amplitude_m: float = 0.08, period_s: float = 5.0, settle_s: float = 0.5) -> None:
        if not (approach_speed_m_s > 0 and period_s > 0 and amplitude_m >= 0 and approach_depth_m >= 0):
            raise ValueError("approach speed and period must be > 0, amplitude and depth >= 0")
        self.start = np.asarray(start_position_m, float).copy()
        self.rotation = np.asarray(start_rotation, float).copy()
        self.tip_offset = np.asarray(tip_offset_base_m, float).copy()
        self.expected_surface_z_m = float(expected_surface_z_m)
        self.target = self.start.copy()
        self.target[2] = self.expected_surface_z_m - self.tip_offset[2] - approach_depth_m
        length = float(self.start[2] - self.target[2])
        if length <= 0:
            raise ValueError(f"the tool tip is already {-length:.3f} m below the approach point: start above the surface")
        self.approach_time_s = 1.875 * length / approach_speed_m_s  # quintic: peak speed 1.875 L / T
        self.amplitude_m = float(amplitude_m)
        self.period_s = float(period_s)
        self.settle_s = float(settle_s)
        self.hybrid_start_s: float | None = None

    @property
    def sliding(self) -> bool:
        return self.hybrid_start_s is not None

    def targets(self, t_s: float, stage: ContactStage) -> MotionTarget:
        """The motion target at task time ``t_s`` (s since the task began), given the contact stage."""
        zero = np.zeros(6)
        if stage is ContactStage.APPROACH and t_s > self.approach_time_s + CONTACT_WAIT_S:
            tip_z = self.target[2] + self.tip_offset[2]
            raise ContactMissed(
                f"no contact: the tool tip reached z = {tip_z:.3f} m, {self.expected_surface_z_m - tip_z:.3f} m below "
                f"the expected surface (polishing_surface_z_m = {self.expected_surface_z_m:g} m), and touched "
                "nothing: is the part where the task was told? (the start pose decides x and y)")
        if stage in (ContactStage.APPROACH, ContactStage.IMPACT) or stage is None:
            s, ds, dds = _smooth(t_s / self.approach_time_s)
            delta = self.target - self.start
            twist, acceleration = np.zeros(6), np.zeros(6)  # (np.r_ costs more than the rest: per cycle)
            twist[:3] = delta * (ds / self.approach_time_s)
            acceleration[:3] = delta * (dds / self.approach_time_s**2)
            return MotionTarget(self.start + delta * s, self.rotation, twist, acceleration)
        if self.hybrid_start_s is None:
            self.hybrid_start_s = t_s
        tau = t_s - self.hybrid_start_s - self.settle_s
        p = np.array([self.start[0], self.start[1], self.expected_surface_z_m - self.tip_offset[2]])
        if tau <= 0:
            return MotionTarget(p, self.rotation, zero, zero)
        T, w, A = self.period_s, 2 * np.pi / self.period_s, self.amplitude_m
        env, denv, ddenv = _smooth(tau / T)
        s, c = np.sin(w * tau), np.cos(w * tau)
        x = A * env * s
        dx = A * (denv / T * s + env * w * c)
        ddx = A * (ddenv / T**2 * s + 2 * denv / T * w * c - env * w * w * s)
        p[0] += x
        twist, acceleration = np.zeros(6), np.zeros(6)
        twist[0], acceleration[0] = dx, ddx
        return MotionTarget(p, self.rotation, twist, acceleration)
