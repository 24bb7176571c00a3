"""The three contact stages of Jamisola et al. (seeds.md P2, eq. (10)).

1. ``APPROACH``: pure motion control towards a point just below the expected surface.
2. ``IMPACT``: once the normal contact force exceeds ``threshold_n`` (P2: 10 N), the
   impact is dissipated with ``F*_motion = -k_v xd`` (P2, eq. (10)) in every direction.
3. ``HYBRID``: when the force falls back below the threshold, hybrid force/motion
   control (P2, eqs. (2)-(5)).

``FREE`` is plain motion control with no contact expected (free-motion tasks).
Every transition is recorded as a :class:`StageEvent`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["ContactStage", "ContactStageMachine", "StageEvent"]


class ContactStage(str, Enum):
    """Which law the controller runs this cycle."""

    FREE = "free"
    APPROACH = "approach"
    IMPACT = "impact"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class StageEvent:
    """One stage change: when, from, to and the normal force (N) that caused it."""

    time_s: float
    from_stage: ContactStage
    to_stage: ContactStage
    normal_force_n: float

    def __str__(self) -> str:
        return (f"t={self.time_s:.3f} s: {self.from_stage.value} -> {self.to_stage.value} "
                f"(normal force {self.normal_force_n:.2f} N)")


class ContactStageMachine:
    """Approach -> impact -> hybrid switching on the normal force (P2, eq. (10)).

    ``min_impact_duration_s`` keeps the impact stage at least that long, so a
    bouncing first touch does not switch to force control mid-bounce (0 = the paper's
    rule exactly).
    """

    def __init__(self, *, threshold_n: float = 10.0, min_impact_duration_s: float = 0.0,
                 initial_stage: ContactStage | str = ContactStage.FREE) -> None:
        if not threshold_n > 0.0:
            raise ValueError(f"contact threshold must be > 0 N, got {threshold_n}")
        if min_impact_duration_s < 0.0:
            raise ValueError("min_impact_duration_s must be >= 0")
        self.threshold_n = float(threshold_n)
        self.min_impact_duration_s = float(min_impact_duration_s)
        self.stage = ContactStage(initial_stage)
        self.events: list[StageEvent] = []
        self._impact_start_s = 0.0

    def reset(self, stage: ContactStage | str = ContactStage.FREE) -> None:
        """Back to a stage without recording an event (e.g. a new task)."""
        self.stage = ContactStage(stage)

    def _switch(self, to: ContactStage, time_s: float, force_n: float) -> StageEvent:
        event = StageEvent(float(time_s), self.stage, to, float(force_n))
        self.events.append(event)
        self.stage = to
        return event

    def start_approach(self, time_s: float) -> StageEvent | None:
        """Begin stage 1 (from FREE or after a lift-off)."""
        if self.stage in (ContactStage.APPROACH,):
            return None
        return self._switch(ContactStage.APPROACH, time_s, 0.0)

    def update(self, normal_force_n: float, time_s: float) -> StageEvent | None:
        """Advance on this cycle's normal force (N, pushing into the surface > 0); the event if any."""
        stage = self.stage
        if stage is ContactStage.APPROACH and normal_force_n > self.threshold_n:
            self._impact_start_s = time_s
            return self._switch(ContactStage.IMPACT, time_s, normal_force_n)
        if (stage is ContactStage.IMPACT and normal_force_n < self.threshold_n
                and time_s - self._impact_start_s >= self.min_impact_duration_s):
            return self._switch(ContactStage.HYBRID, time_s, normal_force_n)
        return None
