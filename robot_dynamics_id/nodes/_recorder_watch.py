"""Is a recorder still alive? Its /diagnostics heartbeat, for what the ROS graph cannot tell in time.

A recorder killed with SIGKILL (or whose machine lost power) keeps its subscription in the ROS graph until
its DDS participant's lease runs out (tens of seconds), so an excitation that only asks the graph finishes
"successfully" with half a recording. Our torque_logger publishes a /diagnostics status every
``DIAGNOSTICS_PERIOD_S``; a named node that was heard and then fell silent for several periods has gone.
``ros2 bag record`` publishes none: for it the graph is all there is.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy

from ._diagnostics import DIAGNOSTICS_PERIOD_S, DIAGNOSTICS_TOPIC

__all__ = ["RecorderWatch"]

#: periods without a status after which a recorder that published some is taken as gone
SILENT_PERIODS = 5
#: seconds between two checks during a run (a graph query each)
CHECK_PERIOD_S = 0.5


class RecorderWatch:
    """Listens to /diagnostics for the nodes ``names`` (status names ``"<node>: <part>"``)."""

    def __init__(self, node: Node, names: list[str], *, clock=time.monotonic) -> None:
        self._names = {n.strip("/") for n in names}
        self._heard: dict[str, float] = {}
        self._clock = clock
        self._next_check = -float("inf")
        if self._names:
            node.create_subscription(DiagnosticArray, DIAGNOSTICS_TOPIC, self._on_diagnostics,
                                     QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE))

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        now = self._clock()
        for status in msg.status:
            name = status.name.split(":", 1)[0].strip("/")
            if name in self._names:
                self._heard[name] = now

    def silent(self) -> list[str]:
        """The named nodes that published a status and then none for :data:`SILENT_PERIODS` periods."""
        limit = self._clock() - SILENT_PERIODS * DIAGNOSTICS_PERIOD_S
        return sorted(name for name, heard in self._heard.items() if heard < limit)

    def gone(self, unsubscribed: Callable[[], list[str]], *, throttled: bool = True) -> list[str]:
        """The required subscribers that left the graph (``unsubscribed()``) or fell silent; with ``throttled``,
        empty between checks (one every :data:`CHECK_PERIOD_S`), so a run loop may call it every cycle."""
        now = self._clock()
        if throttled and now < self._next_check:
            return []
        self._next_check = now + CHECK_PERIOD_S
        return sorted({*unsubscribed(), *self.silent()})
