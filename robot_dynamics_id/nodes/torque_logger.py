"""torque_logger: record the identification topics into a rosbag2 bag.

Subscribes to each configured topic as soon as it appears in the ROS graph
(its type is taken from the graph, so the official UR driver's topics record
just as well; this package's own topics at once), reliable unless a publisher
offers best effort only (then best effort, also when that publisher appears
later), with ``raw=True`` so the CDR bytes go into the bag unchanged,
and writes them with :class:`robot_dynamics_id.io.bag_writer.BagWriter`:
mcap by default, sqlite3 (metadata version 8) for Humble users, split by size
or duration, flushed every ``flush_period_s`` so that a ``kill -9`` loses at
most that much, and finished (metadata.yaml) on a clean stop. Each message is
stored at its receive time; the messages' own header stamps carry the robot's
clock and are what the identifier uses.

Publishes ``/diagnostics`` (diagnostic_msgs/DiagnosticArray, 1 Hz, "torque_logger: recorder", hardware_id
the bag's path): per topic the messages recorded (``<topic> recorded_messages``), their rate since the
previous report (``<topic> rate_hz``) and the messages DDS reported lost (``<topic> lost_messages``, where
the RMW reports them: the recorder fell behind and the publisher's history overwrote them), and the bag's
size (``bag_size_mb``); WARN while a wanted topic has not appeared and when messages were lost since the
previous report.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from datetime import datetime
from pathlib import Path

from rclpy.node import Node

try:  # rclpy >= Iron; Humble's name for the same module
    from rclpy.event_handler import SubscriptionEventCallbacks, UnsupportedEventTypeError
except ImportError:  # pragma: no cover - Humble
    from rclpy.qos_event import SubscriptionEventCallbacks, UnsupportedEventTypeError
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from ..io.bag_writer import BagWriter, BagWriterError
from ..parameters import ParameterError, ParameterSpec, check_choice, check_positive
from ._diagnostic_rules import recorder_report
from ._diagnostics import DIAGNOSTICS_PERIOD_S, CounterDeltas, NodeDiagnostics
from ._ros_params import declare_parameters
from ._run import run_node

__all__ = ["TORQUE_LOGGER_PARAMETERS", "TorqueLoggerNode", "main"]

#: seconds of draining after Ctrl-C/SIGTERM (see TorqueLoggerNode.begin_stop)
STOP_DRAIN_S = 0.5

#: Types of this package's topics: these are subscribed at once, before any publisher exists, so their first
#: messages are not lost while discovery finds the publisher. Reliable then; a best-effort publisher found later
#: (a sensor-QoS driver) makes the subscription best effort (rclpy's incompatible-QoS event).
KNOWN_TYPES = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/motor_currents": "sensor_msgs/msg/JointState",
    "/target_moment": "sensor_msgs/msg/JointState",
    "/force_torque_sensor_broadcaster/wrench": "geometry_msgs/msg/WrenchStamped",
    "/forward_velocity_controller/commands": "std_msgs/msg/Float64MultiArray",
    "/forward_effort_controller/commands": "std_msgs/msg/Float64MultiArray",
    "/scaled_joint_trajectory_controller/joint_trajectory": "trajectory_msgs/msg/JointTrajectory",
    "/ur_interface/command": "sensor_msgs/msg/JointState",
    "/ur_interface/trajectory_status": "std_msgs/msg/String",
    "/excitation/progress": "std_msgs/msg/String",
}

DEFAULT_TOPICS = [
    "/joint_states",
    "/motor_currents",
    "/target_moment",
    "/force_torque_sensor_broadcaster/wrench",
    "/forward_velocity_controller/commands",
    "/forward_effort_controller/commands",
    "/scaled_joint_trajectory_controller/joint_trajectory",
    "/ur_interface/command",
    "/ur_interface/trajectory_status",
    "/excitation/progress",
]

TORQUE_LOGGER_PARAMETERS: tuple[ParameterSpec, ...] = (
    ParameterSpec("bag_path", "string", "",
                  "bag directory to create (must not exist); empty: bags/rdi_<date>_<time> in the working directory"),
    ParameterSpec("storage", "string", "mcap", "mcap (Iron/Jazzy/Kilted default) or sqlite3 (Humble)"),
    ParameterSpec("topics", "string_array", DEFAULT_TOPICS, "topics to record (subscribed when they appear)"),
    ParameterSpec("max_file_size_mb", "double", 0.0, "split the bag into files of about this size; 0: no split",
                  "MB"),
    ParameterSpec("max_file_duration_s", "double", 0.0, "split the bag into files of this duration; 0: no split",
                  "s"),
    ParameterSpec("flush_period_s", "double", 0.5, "hand data to the OS at least this often (a crash loses less)",
                  "s"),
    ParameterSpec("report_period_s", "double", 5.0, "log message counts this often", "s"),
)


def message_class(msgtype: str):
    """The rclpy message class of 'package/msg/Type'."""
    try:
        package, kind, name = msgtype.split("/")
        return getattr(importlib.import_module(f"{package}.{kind}"), name)
    except (ValueError, ImportError, AttributeError) as exc:
        raise ValueError(f"message type {msgtype!r} is not available in this Python environment") from exc


def check_bag_path(value: str | Path) -> Path:
    """The bag directory to create, checked before anything is recorded; ParameterError naming the fix.

    It must not exist (a bag is never overwritten), must not lie inside another bag (rosbag2 would read the
    new files as part of it), and its parent must be a directory this process can create and write to."""
    path = Path(value).expanduser()
    if path.exists():
        raise ParameterError(f"parameter 'bag_path': {path} already exists; choose a new directory "
                             "(a bag is never overwritten)")
    for parent in path.parents:
        # a bag: its metadata.yaml, or (a recorder killed before writing it) rosbag2's first storage file
        if any((parent / name).is_file() for name in ("metadata.yaml", f"{parent.name}_0.mcap",
                                                       f"{parent.name}_0.db3")):
            raise ParameterError(f"parameter 'bag_path': {path} is inside the bag {parent}; choose a directory "
                                 "outside it")
        if parent.exists():
            break
    existing = next((parent for parent in path.parents if parent.exists()), Path("."))
    if not existing.is_dir():
        raise ParameterError(f"parameter 'bag_path': {existing} is a file, not a directory; choose another path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(f"parameter 'bag_path': cannot create {path.parent} ({exc.strerror}); choose a "
                             "directory you can write to") from None
    if not os.access(path.parent, os.W_OK | os.X_OK):
        raise ParameterError(f"parameter 'bag_path': {path.parent} is not writable by this user; choose a "
                             "directory you can write to")
    return path


class TorqueLoggerNode(Node):
    """Records topics into a bag; see the module docstring."""

    #: run_node spins it with the EventsExecutor: it receives the 500 Hz streams
    events_executor = True

    def __init__(self) -> None:
        super().__init__("torque_logger")
        p = declare_parameters(self, TORQUE_LOGGER_PARAMETERS)
        storage = check_choice("storage", p["storage"], ("mcap", "sqlite3"))
        flush = check_positive("flush_period_s", p["flush_period_s"], upper=10.0)
        size_mb = check_positive("max_file_size_mb", p["max_file_size_mb"], allow_zero=True)
        duration = check_positive("max_file_duration_s", p["max_file_duration_s"], allow_zero=True)
        report = check_positive("report_period_s", p["report_period_s"])
        topics = list(p["topics"] or [])
        if not topics:
            raise ParameterError("parameter 'topics' is empty: name at least one topic to record")
        path = check_bag_path(p["bag_path"] or f"bags/rdi_{datetime.now():%Y%m%d_%H%M%S}")
        self.bag = BagWriter(path, storage=storage, max_file_size_bytes=int(size_mb * 1e6),
                             max_file_duration_s=duration, flush_period_s=flush,
                             custom_data={"recorder": "robot_dynamics_id torque_logger"})
        try:
            self.bag.open()
        except (OSError, BagWriterError) as exc:
            raise ParameterError(f"parameter 'bag_path': cannot create the bag {path} ({exc}): choose a "
                                 "directory you can write to") from None
        self._wanted = topics
        self._subscribed: dict[str, str] = {}
        self._counts: dict[str, int] = {}
        self._lost: dict[str, int] = {}
        self._topic_subscriptions: dict[str, object] = {}
        self._switch: dict[str, object] = {}  # topic -> type whose subscription becomes best effort (next timer)
        self._best_effort: set[str] = set()
        self._started = time.monotonic()
        deltas = CounterDeltas()
        NodeDiagnostics(self, part="recorder", hardware_id=str(path), collect=lambda: recorder_report(
            self._counts, self._lost, deltas, waiting=[t for t in self._wanted if t not in self._subscribed],
            bag_path=str(path), bag_size_bytes=self._bag_size_bytes(), period_s=DIAGNOSTICS_PERIOD_S))
        self.create_timer(0.2, self._discover)
        self.create_timer(min(flush, 0.5) / 2, self._flush)
        self.create_timer(report, self._report)
        self._discover()
        self.get_logger().info(f"recording {len(topics)} topics into {path} ({storage})")

    def _discover(self) -> None:
        """Subscribe to wanted topics that have appeared (type from the graph)."""
        self._switch_to_best_effort()
        missing = [t for t in self._wanted if t not in self._subscribed]
        if not missing:
            return
        graph = dict(self.get_topic_names_and_types())
        for topic in missing:
            types = graph.get(topic) or ([KNOWN_TYPES[topic]] if topic in KNOWN_TYPES else None)
            if not types:
                continue
            msgtype = types[0]
            try:
                cls = message_class(msgtype)
            except ValueError as exc:
                self.get_logger().error(f"cannot record {topic}: {exc}")
                self._subscribed[topic] = msgtype
                continue
            self.bag.add_topic(topic, msgtype)
            self._counts[topic] = 0
            best_effort = self._best_effort_publisher(topic)
            if best_effort:
                self._best_effort.add(topic)
            self._subscribe(topic, cls, best_effort)
            self._subscribed[topic] = msgtype
            self.get_logger().info(f"recording {topic} [{msgtype}]")

    def _subscribe(self, topic: str, cls, best_effort: bool) -> None:
        # A reliable subscription never connects to a best-effort publisher; a best-effort one takes both kinds.
        qos = QoSProfile(depth=10000, durability=DurabilityPolicy.VOLATILE,
                         reliability=ReliabilityPolicy.BEST_EFFORT if best_effort else ReliabilityPolicy.RELIABLE)
        events = {"incompatible_qos": self._on_incompatible(topic, cls)} if not best_effort else {}
        try:  # messages DDS reports lost (the recorder fell behind): counted for /diagnostics
            sub = self.create_subscription(cls, topic, self._writer_for(topic), qos, raw=True, event_callbacks=(
                SubscriptionEventCallbacks(message_lost=self._on_lost(topic), **events)))
            self._lost.setdefault(topic, 0)
        except UnsupportedEventTypeError:  # an RMW without these events: not counted, not switched
            sub = self.create_subscription(cls, topic, self._writer_for(topic), qos, raw=True)
        self._topic_subscriptions[topic] = sub

    def _best_effort_publisher(self, topic: str) -> bool:
        return any(i.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
                   for i in self.get_publishers_info_by_topic(topic))

    def _on_incompatible(self, topic: str, cls):
        def incompatible(info) -> None:  # a best-effort publisher appeared after the reliable subscription
            if "RELIABILITY" in str(getattr(info, "last_policy_kind", "")):
                self._switch[topic] = cls
        return incompatible

    def _switch_to_best_effort(self) -> None:
        for topic in list(self._switch):
            cls = self._switch.pop(topic)
            if topic in self._best_effort:
                continue
            self._best_effort.add(topic)
            self.destroy_subscription(self._topic_subscriptions.pop(topic))
            self._subscribe(topic, cls, best_effort=True)
            self.get_logger().warning(f"a publisher of {topic} offers best-effort QoS: now recording {topic} best "
                                      "effort (it takes every publisher; what DDS drops is counted as lost)")

    def _writer_for(self, topic: str):
        def write(data: bytes) -> None:
            if self.done:
                return
            try:
                self.bag.write_raw(topic, time.time_ns(), data)
            except OSError as exc:  # a full disk, a removed drive: stop recording, keep what was written
                self._write_failed(exc)
                return
            self._counts[topic] += 1
        return write

    def _flush(self) -> None:
        if self.done:
            return
        try:
            self.bag.flush_if_due()
        except OSError as exc:
            self._write_failed(exc)

    def _write_failed(self, exc: OSError) -> None:
        self.exit_code, self.done = 1, True
        self.get_logger().error(f"cannot write the bag {self.bag.path}: {exc.strerror or exc}; recording stopped. "
                                f"What was written before ({sum(self._counts.values())} messages) stays readable "
                                "(rdi identify reads it and says what is missing); free space and record again")

    def _on_lost(self, topic: str):
        def lost(info) -> None:
            self._lost[topic] += int(info.total_count_change)
        return lost

    def _bag_size_bytes(self) -> int:
        return sum(f.stat().st_size for f in self.bag.files if f.exists())

    def _report(self) -> None:
        counts = ", ".join(f"{t}: {n}" for t, n in self._counts.items()) or "nothing yet"
        waiting = [t for t in self._wanted if t not in self._subscribed]
        extra = f"; waiting for {waiting}" if waiting else ""
        lost = {t: n for t, n in self._lost.items() if n}
        if lost:  # said while recording, so the run can be repeated now rather than found short at identify
            self.get_logger().warning(f"recorded {counts}{extra}; LOST (the recorder fell behind; DDS dropped them): "
                                      + ", ".join(f"{t}: {n}" for t, n in lost.items()))
            return
        self.get_logger().info(f"recorded {counts}{extra}")

    # ---- Ctrl-C / SIGTERM (run_node) ------------------------------------------------------------------------
    #: a recorder stopped by a signal has done its job; 1 when it could not write (then ``done``: the process ends)
    exit_code = 0
    done = False

    @property
    def exit_code_when_interrupted(self) -> int:
        return self.exit_code
    #: after a signal, keep taking what DDS has already delivered for this long before closing the bag: a
    #: recorder that fell behind on a loaded machine would otherwise drop the tail of the run
    stop_timeout_s = STOP_DRAIN_S

    def begin_stop(self) -> None:
        self._stop_at = time.monotonic()
        self.get_logger().info(f"stopping: taking what is already queued for {STOP_DRAIN_S} s, then closing the bag")

    def stop_finished(self) -> bool:
        return time.monotonic() - self._stop_at >= STOP_DRAIN_S

    def shutdown(self) -> None:
        """Finish the bag (metadata.yaml)."""
        try:
            self.bag.close()
        except OSError as exc:
            if self.exit_code == 1:  # the write error said it all; one line on what that means for the bag
                self.get_logger().warning(f"the bag has no metadata.yaml either ({exc.strerror or exc}); rdi "
                                          "identify reads it without")
                return
            self.exit_code = 1
            self.get_logger().error(f"cannot finish the bag {self.bag.path} ({exc.strerror or exc}): it has no "
                                    "metadata.yaml; rdi identify still reads what was written")
            return
        total = sum(self._counts.values())
        self.get_logger().info(f"bag {self.bag.path} closed: {total} messages")


def main(args=None) -> int:
    return run_node(TorqueLoggerNode, args, name="torque_logger")


if __name__ == "__main__":
    sys.exit(main())
