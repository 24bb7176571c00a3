"""Contact stages approach -> impact -> hybrid (seeds.md P2 eq. (10))."""

import pytest

from robot_dynamics_id.control.contact import ContactStage, ContactStageMachine


def test_stages_follow_the_normal_force_and_are_reported():
    sm = ContactStageMachine(threshold_n=10.0)
    assert sm.stage is ContactStage.FREE
    assert sm.update(50.0, 0.0) is None  # free motion ignores force
    event = sm.start_approach(0.1)
    assert event.to_stage is ContactStage.APPROACH
    assert sm.update(9.9, 0.2) is None
    impact = sm.update(12.0, 0.3)
    assert impact.from_stage is ContactStage.APPROACH and impact.to_stage is ContactStage.IMPACT
    assert impact.normal_force_n == 12.0 and impact.time_s == 0.3
    assert sm.update(25.0, 0.31) is None  # still dissipating
    hybrid = sm.update(8.0, 0.35)
    assert hybrid.to_stage is ContactStage.HYBRID
    assert sm.update(30.0, 0.4) is None and sm.stage is ContactStage.HYBRID
    assert [e.to_stage for e in sm.events] == [ContactStage.APPROACH, ContactStage.IMPACT, ContactStage.HYBRID]
    assert "impact -> hybrid" in str(hybrid)


def test_minimum_impact_duration_holds_the_dissipation_stage():
    sm = ContactStageMachine(threshold_n=10.0, min_impact_duration_s=0.05, initial_stage="approach")
    sm.update(11.0, 1.0)
    assert sm.update(2.0, 1.02) is None and sm.stage is ContactStage.IMPACT
    assert sm.update(2.0, 1.06).to_stage is ContactStage.HYBRID


def test_invalid_threshold_is_refused():
    with pytest.raises(ValueError, match="threshold"):
        ContactStageMachine(threshold_n=0.0)
