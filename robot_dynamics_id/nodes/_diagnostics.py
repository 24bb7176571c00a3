"""/diagnostics (diagnostic_msgs/DiagnosticArray) from a long-running node, about once a second.

Each node owns one :class:`NodeDiagnostics`: a ROS timer in the node's executor (never the robot loop's
thread) calls the node's ``collect()``, which returns a :class:`Report` — the values to show (keys carry
their units, as ``loop_period_error_p99_us``) and the :class:`Finding` s of the node's level rule — and one
``DiagnosticStatus`` goes out, named "<node name>: <part>" as the UR driver's diagnostic_updater names
them, with ``hardware_id`` the robot. The status's level is the worst finding's; its message is the worst
findings' messages (each says what is wrong), or the node's OK text. rqt_robot_monitor and
diagnostic_aggregator read it as they read the UR driver's.

The level rules themselves are pure functions (:mod:`._diagnostic_rules`); what is built here from them is
plain messages, so everything but :class:`NodeDiagnostics` is tested without a ROS graph.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.qos import QoSProfile, ReliabilityPolicy

__all__ = ["DIAGNOSTICS_PERIOD_S", "DIAGNOSTICS_TOPIC", "ERROR", "OK", "WARN", "CounterDeltas", "Finding",
           "NodeDiagnostics", "Report", "diagnostic_array", "diagnostic_status", "format_value", "median_p99_us",
           "summarize", "values_of"]

DIAGNOSTICS_TOPIC = "/diagnostics"
#: how often a node publishes its status (s); diagnostic_updater's default period is 1 s too
DIAGNOSTICS_PERIOD_S = 1.0
#: levels (diagnostic_msgs/DiagnosticStatus); STALE is the aggregator's, never sent by a node
OK, WARN, ERROR = 0, 1, 2
_LEVEL_NAMES = {OK: "OK", WARN: "WARN", ERROR: "ERROR"}
#: reliable, shallow: a late subscriber (rqt_robot_monitor) needs only the next status
_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)


@dataclass(frozen=True)
class Finding:
    """One thing the level rule found: its level (OK/WARN/ERROR) and a message that says what is wrong."""

    level: int
    message: str

    def __post_init__(self) -> None:
        if self.level not in _LEVEL_NAMES:
            raise ValueError(f"diagnostic level {self.level!r} is not OK (0), WARN (1) or ERROR (2)")


@dataclass
class Report:
    """What a node's ``collect()`` returns: values (key with unit -> value) and findings (empty: all is well)."""

    values: dict = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    ok_message: str = "running"

    def warn(self, message: str) -> None:
        self.findings.append(Finding(WARN, message))

    def error(self, message: str) -> None:
        self.findings.append(Finding(ERROR, message))


def summarize(findings: Iterable[Finding], ok_message: str = "running") -> tuple[int, str]:
    """(level, message): the worst level among ``findings``, and the messages of the findings at that level
    joined by "; " (each once, in order); ``ok_message`` when nothing is above OK."""
    findings = list(findings)
    level = max((f.level for f in findings), default=OK)
    if level == OK:
        return OK, ok_message
    messages = list(dict.fromkeys(f.message for f in findings if f.level == level))
    return level, "; ".join(messages)


def format_value(value) -> str:
    """A KeyValue's text: floats to 6 significant digits, booleans as true/false, None as "n/a"."""
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.6g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def diagnostic_status(name: str, hardware_id: str, report: Report) -> DiagnosticStatus:
    """The DiagnosticStatus of ``report`` (see :func:`summarize` for its level and message)."""
    level, message = summarize(report.findings, report.ok_message)
    return DiagnosticStatus(level=bytes([level]), name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=str(k), value=format_value(v)) for k, v in report.values.items()])


def diagnostic_array(statuses: Iterable[DiagnosticStatus], stamp_s: float) -> DiagnosticArray:
    """A DiagnosticArray of ``statuses`` stamped ``stamp_s`` (s since the epoch)."""
    msg = DiagnosticArray(status=list(statuses))
    sec = int(math.floor(stamp_s))
    msg.header.stamp.sec = sec
    msg.header.stamp.nanosec = min(999_999_999, int(round((stamp_s - sec) * 1e9)))
    return msg


class CounterDeltas:
    """How much each cumulative counter (commands refused, late cycles, messages lost) grew since the previous
    call: the level rules warn about what happened in the last period, not about everything since start."""

    def __init__(self) -> None:
        self._previous: dict[str, int] = {}

    def delta(self, key: str, total: int) -> int:
        previous = self._previous.get(key)
        self._previous[key] = int(total)
        return 0 if previous is None else max(0, int(total) - previous)


class NodeDiagnostics:
    """Publishes ``collect()`` on /diagnostics every ``period_s`` from a timer of ``node`` (its executor).

    Args:
        node: the node (its name is the status name's first part).
        part: what the status is about ("robot loop", "recorder", ...).
        hardware_id: the robot (as "ur3e 192.168.1.10" or "ur3 simulated").
        collect: returns the :class:`Report`; called in the executor, so it must be cheap (no per-cycle work,
            read what the node already keeps). An exception it raises is reported as an ERROR status.
    """

    def __init__(self, node, *, part: str, hardware_id: str, collect: Callable[[], Report],
                 period_s: float = DIAGNOSTICS_PERIOD_S) -> None:
        self.name = f"{node.get_name()}: {part}"
        self.hardware_id = hardware_id
        self._node = node
        self._collect = collect
        self._publisher = node.create_publisher(DiagnosticArray, DIAGNOSTICS_TOPIC, _QOS)
        self._timer = node.create_timer(period_s, self.publish)

    def publish(self) -> None:
        try:
            report = self._collect()
        except Exception as exc:  # a bug in a rule must show, not end the node's executor
            report = Report(findings=[Finding(ERROR, f"diagnostics failed: {type(exc).__name__}: {exc}")])
        status = diagnostic_status(self.name, self.hardware_id, report)
        now = self._node.get_clock().now().nanoseconds * 1e-9
        try:
            self._publisher.publish(diagnostic_array([status], now))
        except Exception:  # the context may already be shut down during exit
            pass


def median_p99_us(values_s) -> dict:
    """{"median": .., "p99": ..} of ``values_s`` (s) in µs, for timing statistics in a status."""
    values = np.asarray(values_s, float)
    return {"median": float(np.median(values) * 1e6), "p99": float(np.percentile(values, 99) * 1e6)}


def values_of(status: DiagnosticStatus) -> Mapping[str, str]:
    """The status's key/values as a dict (for probes and tests)."""
    return {kv.key: kv.value for kv in status.values}
