"""Repeated fault messages: one line per kind per interval, and the count of those held back (virtual clock)."""

from robot_dynamics_id.nodes._throttle import RepeatThrottle


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_flood_gives_one_line_per_second_with_the_count_held_back():
    clock = Clock()
    throttle = RepeatThrottle(1.0, clock=clock, wall=clock)
    lines = []
    for k in range(1500):  # 3 s of a 500 Hz publisher stuck on NaN
        clock.t = 1000.0 + k / 500
        line = throttle.admit("velocity refused", f"velocity command refused: NaN #{k}")
        if line is not None:
            lines.append(line)
    assert len(lines) == 3
    assert lines[0] == "velocity command refused: NaN #0"
    assert lines[1].startswith("velocity command refused: NaN #500 (499 more since ")
    assert lines[2].startswith("velocity command refused: NaN #1000 (499 more since ")
    clock.t += 1.0
    (last,) = throttle.pending()
    assert last.startswith("velocity command refused: NaN #1499 (499 more since ") and "the last of them" in last
    assert throttle.pending() == []  # reported once


def test_kinds_are_throttled_separately_and_a_lone_message_passes_unchanged():
    clock = Clock()
    throttle = RepeatThrottle(1.0, clock=clock, wall=clock)
    assert throttle.admit("a", "first a") == "first a"
    assert throttle.admit("b", "first b") == "first b"
    assert throttle.admit("a", "second a") is None
    clock.t += 1.5
    assert throttle.admit("b", "second b") == "second b"  # nothing of kind b was held back
    assert throttle.pending() == ["second a (1 more since " + throttle._since(1000.0) + "; the last of them)"]
