"""Decode a rosbag2 bag's package topics into a :class:`~.recording.Recording` on the robot's clock.

:func:`read_bag` reads the topics :class:`BagTopics` names (the package's own by default,
``BagTopics.ur_driver()`` for the official UR driver) from a bag opened by
:func:`~.bag_storage.open_bag`: the header stamps of ``/joint_states`` give ``time_s`` (bag receive times
only when the stamps are all zero); other stamped topics are interpolated onto those times; commands (no
header) are held from their receive time. Joints are reordered by name to ``joint_names`` (a ``tf_prefix``
is recognised).

Nothing is interpolated across a gap: a stamped signal that stops for longer than 5 of its sample periods
leaves the joint-state samples inside that gap without a value (NaN), and identification splits the
recording there, as it does at a gap of the joint states themselves (identification/preprocessing.py).
What the storage layer could not read is stated first in ``Recording.warnings``
(:meth:`~.bag_storage.BagSource.losses`).

Every problem raises :class:`~.bag_storage.BagReadError` naming the bag, what is wrong and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from ..robots.description import JOINT_NAMES
from .bag_storage import BagReadError, BagSource, open_bag
from .recording import Recording, RecordingSource

__all__ = ["EXCITATION_PROGRESS", "FLOAT64_MULTI_ARRAY", "JOINT_STATE", "JOINT_STATES_EFFORT", "PARTIAL_EXCITATION",
           "WRENCH_STAMPED", "BagTopics", "JointVectorTopic", "read_bag"]

JOINT_STATE = "sensor_msgs/msg/JointState"
#: the excitation node's progress (std_msgs/String JSON; nodes/excitation.py), recorded by torque_logger
EXCITATION_PROGRESS = "/excitation/progress"
#: how the reader's warning about a recording cut off before its excitation ended begins (a partial run)
PARTIAL_EXCITATION = "the recording ends before its excitation finished"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
FLOAT64_MULTI_ARRAY = "std_msgs/msg/Float64MultiArray"

#: what JointState.effort on the joint-states topic may hold (BagTopics.joint_states_effort)
JOINT_STATES_EFFORT = ("torque_nm", "current_a", "current_as_torque_nm", "ignore")


@dataclass(frozen=True)
class JointVectorTopic:
    """A topic carrying one value per joint: which topic, message type and field.

    ``msgtype`` is ``sensor_msgs/msg/JointState`` (``field`` = 'effort',
    'position' or 'velocity'; joints matched by name; header stamp used) or
    ``std_msgs/msg/Float64MultiArray`` (``field`` = 'data'; values in the
    requested joint order; receive time used).
    """

    topic: str
    msgtype: str = JOINT_STATE
    field: str = "effort"

    def __post_init__(self) -> None:
        allowed = {JOINT_STATE: ("effort", "position", "velocity"), FLOAT64_MULTI_ARRAY: ("data",)}
        if self.msgtype not in allowed:
            raise ValueError(f"JointVectorTopic {self.topic}: message type {self.msgtype!r} is not supported; "
                             f"use {JOINT_STATE} or {FLOAT64_MULTI_ARRAY}")
        if self.field not in allowed[self.msgtype]:
            raise ValueError(f"JointVectorTopic {self.topic}: field {self.field!r} is not in {self.msgtype}; "
                             f"use one of {allowed[self.msgtype]}")


@dataclass(frozen=True, kw_only=True)
class BagTopics:
    """Topic names and meanings to read; defaults are the package's own topics.

    ``joint_states_effort`` says what ``JointState.effort`` on ``joint_states``
    holds: 'torque_nm' (a torque interface -> Recording.effort_nm), 'current_a'
    (the official UR driver's default -> Recording.current_a), 'current_as_torque_nm'
    (the UR driver on new firmware: UR's gravity-compensated actual_current_as_torque ->
    Recording.current_as_torque_nm) or 'ignore'.
    An optional topic set to ``None`` is not read; one missing from the bag is
    reported in ``Recording.warnings`` unless listed in ``read_bag(require=...)``.
    """

    joint_states: str = "/joint_states"
    joint_states_effort: str = "torque_nm"
    motor_currents: JointVectorTopic | None = JointVectorTopic("/motor_currents")
    target_currents: JointVectorTopic | None = JointVectorTopic("/target_currents")
    target_moment: JointVectorTopic | None = JointVectorTopic("/target_moment")
    wrench: str | None = "/force_torque_sensor_broadcaster/wrench"
    velocity_commands: str | None = "/forward_velocity_controller/commands"
    effort_commands: str | None = "/forward_effort_controller/commands"

    def __post_init__(self) -> None:
        if self.joint_states_effort not in JOINT_STATES_EFFORT:
            raise ValueError(f"BagTopics.joint_states_effort must be one of {', '.join(JOINT_STATES_EFFORT)}, "
                             f"got {self.joint_states_effort!r}")

    @classmethod
    def ur_driver(cls) -> BagTopics:
        """Topics of the official UR ROS 2 driver: JointState.effort is motor current (A)."""
        return cls(joint_states_effort="current_a", motor_currents=None, target_currents=None, target_moment=None)


_TYPESTORE: Typestore | None = None


def _typestore() -> Typestore:
    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_HUMBLE)
    return _TYPESTORE


def _stamp_ns(header: Any) -> int:
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


class _JointMatcher:
    """Column indices of the requested joints in a JointState name list (cached per name list)."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        self.joint_names = tuple(joint_names)
        self._cache: dict[tuple[str, ...], np.ndarray | None] = {}
        self.seen: set[tuple[str, ...]] = set()
        self.prefixed = False

    def index(self, names: Sequence[str]) -> np.ndarray | None:
        key = tuple(names)
        if key in self._cache:
            return self._cache[key]
        self.seen.add(key)
        pos = {name: k for k, name in enumerate(key)}
        idx: list[int] = []
        for joint in self.joint_names:
            if joint in pos:
                idx.append(pos[joint])
                continue
            # A tf_prefix (e.g. 'ur_') in front of the driver's joint names.
            candidates = [k for k, name in enumerate(key) if name.endswith(joint)]
            if len(candidates) != 1:
                self._cache[key] = None
                return None
            idx.append(candidates[0])
            self.prefixed = True
        result = np.asarray(idx, dtype=int)
        self._cache[key] = result
        return result


@dataclass
class _Series:
    """Decoded samples of one topic before alignment."""

    topic: str
    stamp_ns: np.ndarray  # header stamps (or receive times for headerless messages)
    receive_ns: np.ndarray
    values: np.ndarray  # (M, k)
    stamped: bool


def _vector(arr: Any, idx: np.ndarray, n: int) -> np.ndarray | None:
    a = np.asarray(arr, dtype=float)
    if a.shape[0] == 0:
        return None
    if idx.size and idx.max() >= a.shape[0]:
        return np.full(n, np.nan)
    return a[idx]


def _decode_joint_states(bag: BagSource, topic: str, effort: str, matcher: _JointMatcher,
                         warnings: list[str]) -> tuple[_Series, _Series | None]:
    """q and qd as one (M, 2n) series, and the effort series (None if absent or not wanted)."""
    ts = _typestore()
    n = len(matcher.joint_names)
    stamps, rx, rows, efforts = [], [], [], []
    skipped = 0
    missing_velocity = 0
    for _, msgtype, t_ns, raw in bag.messages([topic]):
        msg = ts.deserialize_cdr(raw, msgtype)
        idx = matcher.index(msg.name)
        if idx is None:
            skipped += 1
            continue
        q = _vector(msg.position, idx, n)
        qd = _vector(msg.velocity, idx, n)
        if q is None:
            skipped += 1
            continue
        if qd is None:
            missing_velocity += 1
            qd = np.full(n, np.nan)
        stamps.append(_stamp_ns(msg.header))
        rx.append(t_ns)
        rows.append(np.concatenate([q, qd]))
        if effort != "ignore":
            e = _vector(msg.effort, idx, n)
            efforts.append(np.full(n, np.nan) if e is None else e)
    if not rows:
        seen = "; ".join(str(list(s)) for s in sorted(matcher.seen)[:3]) or "none"
        raise BagReadError(
            f"bag {bag.path}: no message on {topic} holds positions for all joints {list(matcher.joint_names)} "
            f"(joint names seen: {seen}). Pass joint_names= in the order you want, using the bag's names")
    if skipped:
        warnings.append(f"{topic}: skipped {skipped} message(s) without positions of all requested joints "
                        "(e.g. another publisher's joints)")
    if missing_velocity == len(rows):
        raise BagReadError(f"bag {bag.path}: {topic} carries no velocities (JointState.velocity is empty); "
                           "this reader needs the robot's measured joint velocities")
    if matcher.prefixed:
        warnings.append(f"{topic}: joint names carry a prefix (tf_prefix); matched by suffix")
    stamps_a = np.asarray(stamps, dtype=np.int64)
    rx_a = np.asarray(rx, dtype=np.int64)
    stamped = bool(np.any(stamps_a != 0))
    if not stamped:
        warnings.append(f"{topic}: header stamps are all zero; used the bag receive times as sample times")
        stamps_a = rx_a.copy()
    series = _Series(topic, stamps_a, rx_a, np.asarray(rows), stamped)
    effort_series = None
    if efforts:
        e = np.asarray(efforts)
        if np.all(np.isnan(e)):
            warnings.append(f"{topic}: JointState.effort is empty; no {effort} from it")
        else:
            effort_series = _Series(topic + " (effort)", stamps_a, rx_a, e, stamped)
    return series, effort_series


def _decode_joint_vector(bag: BagSource, spec: JointVectorTopic, matcher: _JointMatcher,
                         warnings: list[str]) -> _Series | None:
    ts = _typestore()
    n = len(matcher.joint_names)
    stamps, rx, rows = [], [], []
    skipped = 0
    for _, msgtype, t_ns, raw in bag.messages([spec.topic]):
        msg = ts.deserialize_cdr(raw, msgtype)
        if spec.msgtype == JOINT_STATE:
            idx = matcher.index(msg.name)
            value = None if idx is None else _vector(getattr(msg, spec.field), idx, n)
            stamp = _stamp_ns(msg.header)
        else:
            data = np.asarray(msg.data, dtype=float)
            value = data if data.shape == (n,) else None
            stamp = t_ns
        if value is None:
            skipped += 1
            continue
        stamps.append(stamp)
        rx.append(t_ns)
        rows.append(value)
    if skipped:
        warnings.append(f"{spec.topic}: skipped {skipped} message(s) without {spec.field} for all {n} joints")
    if not rows:
        return None
    stamps_a = np.asarray(stamps, dtype=np.int64)
    rx_a = np.asarray(rx, dtype=np.int64)
    stamped = spec.msgtype == JOINT_STATE and bool(np.any(stamps_a != 0))
    return _Series(spec.topic, stamps_a if stamped else rx_a, rx_a, np.asarray(rows), stamped)


def _decode_wrench(bag: BagSource, topic: str) -> _Series | None:
    ts = _typestore()
    stamps, rx, rows = [], [], []
    for _, msgtype, t_ns, raw in bag.messages([topic]):
        msg = ts.deserialize_cdr(raw, msgtype)
        f, m = msg.wrench.force, msg.wrench.torque
        stamps.append(_stamp_ns(msg.header))
        rx.append(t_ns)
        rows.append((f.x, f.y, f.z, m.x, m.y, m.z))
    if not rows:
        return None
    stamps_a = np.asarray(stamps, dtype=np.int64)
    rx_a = np.asarray(rx, dtype=np.int64)
    stamped = bool(np.any(stamps_a != 0))
    return _Series(topic, stamps_a if stamped else rx_a, rx_a, np.asarray(rows, dtype=float), stamped)


def _excitation_cut_off(bag: BagSource) -> str | None:
    """A warning (beginning with :data:`PARTIAL_EXCITATION`) when the bag's last ``/excitation/progress``
    message is not the excitation's end (nodes/excitation.py publishes it while the trajectory runs): the
    recorder stopped before the run did, or the run was aborted or cancelled. None without that topic."""
    if EXCITATION_PROGRESS not in bag.topics:
        return None
    last = None
    for _, msgtype, t_ns, raw in bag.messages([EXCITATION_PROGRESS]):
        if last is None or t_ns >= last[0]:
            last = (t_ns, msgtype, raw)
    if last is None:
        return None
    try:
        progress = json.loads(_typestore().deserialize_cdr(last[2], last[1]).data)
    except (ValueError, AttributeError, KeyError):
        return None  # not the excitation node's JSON: nothing to say
    if not isinstance(progress, dict):
        return None
    stage, phase = progress.get("stage"), progress.get("phase")
    if stage == "excitation" and phase == "done":
        return None
    if phase in ("aborted", "cancelled", "refused"):
        why = f": {progress['reason']}" if progress.get("reason") else ""
        return f"{PARTIAL_EXCITATION}: it was {phase} during its {stage or 'start'} stage{why}"
    fraction = progress.get("fraction")
    at = f" at {100 * fraction:.0f} % of its trajectory" if isinstance(fraction, (int, float)) else ""
    return (f"{PARTIAL_EXCITATION}: the last progress message is its {stage or 'start'} stage {phase}{at} (the "
            "recorder stopped before the run ended); the bag holds part of the run")


def _handle_nan(series: _Series, nan_policy: str, bag_path: Path, warnings: list[str]) -> _Series:
    bad = ~np.all(np.isfinite(series.values), axis=1)
    count = int(bad.sum())
    if not count:
        return series
    where = np.flatnonzero(bad)
    t0 = series.stamp_ns[0]
    first = ", ".join(f"#{i} (t={1e-9 * (series.stamp_ns[i] - t0):.3f} s)" for i in where[:5])
    text = (f"{series.topic}: {count} of {len(bad)} samples hold NaN/inf values (first: {first}"
            f"{', ...' if count > 5 else ''})")
    if nan_policy == "raise":
        raise BagReadError(f"bag {bag_path}: {text}. Pass --nan-policy drop (nan_policy='drop' in Python and "
                           "the identifier node) to drop those samples")
    warnings.append(text + "; dropped")
    keep = ~bad
    return _Series(series.topic, series.stamp_ns[keep], series.receive_ns[keep], series.values[keep], series.stamped)


def _sorted_unique(series: _Series, warnings: list[str]) -> _Series:
    order = np.argsort(series.stamp_ns, kind="stable")
    stamps = series.stamp_ns[order]
    keep = np.ones(stamps.shape[0], dtype=bool)
    keep[1:] = np.diff(stamps) > 0
    if not np.all(order == np.arange(order.size)):
        warnings.append(f"{series.topic}: samples were not in stamp order in the bag; sorted")
    if not np.all(keep):
        warnings.append(f"{series.topic}: {int((~keep).sum())} sample(s) repeat an earlier stamp; kept the first")
    sel = order[keep]
    return _Series(series.topic, series.stamp_ns[sel], series.receive_ns[sel], series.values[sel], series.stamped)


#: a step between stamps longer than this many median periods is a gap
GAP_PERIODS = 5
#: joint-state samples outside the stamped signals' span dropped without a warning (a recorder's topics start and
#: stop a cycle or two apart; more is a signal that started late or ended early)
EDGE_SAMPLES = 5


def _gaps(stamps_ns: np.ndarray) -> list[tuple[int, int]]:
    """(last stamp before, first stamp after) of each step longer than GAP_PERIODS median periods."""
    if stamps_ns.shape[0] < 3:
        return []
    steps = np.diff(stamps_ns)
    where = np.flatnonzero(steps > GAP_PERIODS * np.median(steps))
    return [(int(stamps_ns[k]), int(stamps_ns[k + 1])) for k in where]


def _describe_gaps(gaps: list[tuple[int, int]], t0_ns: int) -> str:
    """'N gap(s) longer than 5 sample periods (the longest X s, after t=Y s)'."""
    start, end = max(gaps, key=lambda g: g[1] - g[0])
    return (f"{len(gaps)} gap(s) longer than {GAP_PERIODS} sample periods (the longest {(end - start) * 1e-9:.3g} s, "
            f"after t={(start - t0_ns) * 1e-9:.3f} s)")


def read_bag(
    path: str | Path,
    *,
    joint_names: Sequence[str] = JOINT_NAMES,
    topics: BagTopics | None = None,
    nan_policy: str = "raise",
    require: Collection[str] = (),
) -> Recording:
    """Read a bag into a :class:`Recording` on the robot's clock.

    Args:
        path: bag directory, or one ``.mcap``/``.db3`` file.
        joint_names: joints to read, in the column order wanted.
        topics: topic names and meanings (default: the package's topics;
            ``BagTopics.ur_driver()`` for bags of the official UR driver).
        nan_policy: 'raise' (default) or 'drop' samples holding NaN/inf.
        require: Recording fields that must be present, e.g. ``('current_a', 'tcp_wrench')``.

    Raises:
        BagReadError: missing bag/topic/field, wrong message type, empty bag, NaN samples, corrupt file.
    """
    topics = topics or BagTopics()
    if nan_policy not in ("raise", "drop"):
        raise ValueError(f"nan_policy must be 'raise' or 'drop', got {nan_policy!r}")
    path = Path(path)
    matcher = _JointMatcher(joint_names)
    n = len(matcher.joint_names)
    with open_bag(path) as bag:
        warnings = list(bag.warnings)
        absent: dict[str, str] = {}
        present = bag.topics
        if bag.message_count == 0:
            raise BagReadError(f"bag {path} is empty: it holds 0 messages (topics: {bag.describe_topics()}). "
                               "The recording did not receive any data; check that the robot interface was publishing")

        def check(topic: str, expected: str, field_name: str, required: bool, *, quiet_if_empty: bool = False) -> bool:
            if topic not in present:
                if required or field_name in require:
                    raise BagReadError(
                        f"bag {path} has no topic {topic} (needed for {field_name}). The bag has: "
                        f"{bag.describe_topics()}. Set the topic name with read_bag(topics=BagTopics(...)) "
                        "(BagTopics.ur_driver() for the official UR driver)")
                absent[field_name] = topic
                return False
            msgtype, count = present[topic]
            if msgtype != expected:
                raise BagReadError(f"bag {path}: topic {topic} carries {msgtype}, expected {expected} for "
                                   f"{field_name}. Point BagTopics at the right topic or message type")
            if count == 0:
                if required or field_name in require:
                    raise BagReadError(f"bag {path}: topic {topic} has no messages (needed for {field_name}); "
                                       f"the bag has: {bag.describe_topics()}")
                if not quiet_if_empty:
                    warnings.append(f"{topic} has no messages: no {field_name}")
                return False
            return True

        check(topics.joint_states, JOINT_STATE, "q_rad/qd_rad_s", True)
        js, js_effort = _decode_joint_states(bag, topics.joint_states, topics.joint_states_effort,
                                                matcher, warnings)
        stamped: dict[str, _Series] = {}
        held: dict[str, _Series] = {}
        used: dict[str, str] = {"q_rad": topics.joint_states, "qd_rad_s": topics.joint_states}
        js_effort_field = None
        if js_effort is not None:
            name = js_effort_field = {"torque_nm": "effort_nm"}.get(topics.joint_states_effort,
                                                                     topics.joint_states_effort)
            stamped[name] = js_effort
            used[name] = topics.joint_states + " effort"
        for name, spec in (("current_a", topics.motor_currents), ("target_current_a", topics.target_currents),
                           ("target_moment_nm", topics.target_moment)):
            if spec is None or name in stamped:
                continue
            if check(spec.topic, spec.msgtype, name, False):
                series = _decode_joint_vector(bag, spec, matcher, warnings)
                if series is not None:
                    (stamped if series.stamped else held)[name] = series
                    used[name] = f"{spec.topic} {spec.field}"
        if topics.wrench and check(topics.wrench, WRENCH_STAMPED, "tcp_wrench", False):
            series = _decode_wrench(bag, topics.wrench)
            if series is not None:
                (stamped if series.stamped else held)["tcp_wrench"] = series
                used["tcp_wrench"] = topics.wrench
        for name, topic in (("velocity_command_rad_s", topics.velocity_commands),
                            ("effort_command_nm", topics.effort_commands)):
            # a recorder subscribes both command topics; the interface used fills one or none (trajectory
            # interface): an empty one is the normal case, not worth a warning on every identification
            if topic and check(topic, FLOAT64_MULTI_ARRAY, name, False, quiet_if_empty=True):
                series = _decode_joint_vector(bag, JointVectorTopic(topic, FLOAT64_MULTI_ARRAY, "data"),
                                              matcher, warnings)
                if series is not None:
                    held[name] = series
                    used[name] = topic
        cut_off = _excitation_cut_off(bag)
        storage = bag.storage
        # what could not be read comes first: a partial bag must not read like a whole one
        warnings = bag.losses() + ([cut_off] if cut_off else []) + warnings

    # NaN policy applies to the measured samples as recorded; then time order.
    js = _sorted_unique(_handle_nan(js, nan_policy, path, warnings), warnings)
    if js.values.shape[0] == 0:
        raise BagReadError(f"bag {path}: no valid samples left on {topics.joint_states}")
    stamped = {k: _sorted_unique(_handle_nan(s, nan_policy, path, warnings), warnings) for k, s in stamped.items()}
    held = {k: _sorted_unique(_handle_nan(s, nan_policy, path, warnings), warnings) if k not in
            ("velocity_command_rad_s", "effort_command_nm") else s for k, s in held.items()}

    # Keep the joint-state samples covered by every stamped signal (interpolation, no extrapolation).
    t_ns = js.stamp_ns
    lo = max([t_ns[0]] + [s.stamp_ns[0] for s in stamped.values() if s.values.shape[0]])
    hi = min([t_ns[-1]] + [s.stamp_ns[-1] for s in stamped.values() if s.values.shape[0]])
    keep = (t_ns >= lo) & (t_ns <= hi)
    if not np.any(keep):
        raise BagReadError(f"bag {path}: the time stamps of {', '.join(s.topic for s in stamped.values())} do not "
                           f"overlap those of {topics.joint_states}; they come from different clocks. Read those "
                           "topics separately or fix the publisher's header stamps")
    dropped = int((~keep).sum())
    if dropped > EDGE_SAMPLES:  # a recorder's topics start and stop a cycle or two apart: not worth a warning
        warnings.append(f"dropped {dropped} joint-state sample(s) outside the time span of all stamped signals "
                        f"({', '.join(s.topic for s in stamped.values())}): a signal started late or ended early")
    t_ns, rx_ns, qqd = js.stamp_ns[keep], js.receive_ns[keep], js.values[keep]
    t0 = int(t_ns[0])
    time_s = t_ns * 1e-9  # float64 keeps ~0.2 us resolution even for epoch stamps
    fields: dict[str, np.ndarray] = {}
    gaps = _gaps(t_ns)
    if gaps:
        warnings.append(f"{topics.joint_states}: {_describe_gaps(gaps, t0)}: identification splits the recording at "
                        f"{'each one' if len(gaps) > 1 else 'it if it is'} too long to bridge (its gap note says how "
                        "many: nothing is filtered or interpolated over those)")
    for name, series in stamped.items():
        st = series.stamp_ns
        x = (t_ns - t0).astype(float)
        xp = (st - t0).astype(float)
        values = np.column_stack([np.interp(x, xp, series.values[:, j]) for j in range(series.values.shape[1])])
        if name != js_effort_field:  # the joint states' own effort has their stamps: no gaps of its own
            inside = np.zeros(t_ns.shape[0], dtype=bool)
            series_gaps = _gaps(st)
            for start, end in series_gaps:
                inside |= (t_ns > start) & (t_ns < end)
            if inside.any():
                values[inside] = np.nan
                warnings.append(f"{series.topic}: {_describe_gaps(series_gaps, t0)}; the {int(inside.sum())} "
                                f"joint-state sample(s) inside have no {name} (NaN, not interpolated): identification "
                                "leaves them out and splits the recording there")
        fields[name] = values
    for name, series in held.items():
        # Zero-order hold on the receive-time axis: the value last received before each joint state.
        k = np.searchsorted(series.receive_ns, rx_ns, side="right") - 1
        values = np.full((rx_ns.shape[0], series.values.shape[1]), np.nan)
        ok = k >= 0
        values[ok] = series.values[k[ok]]
        fields[name] = values
    for name in require:
        if name not in fields and name not in ("q_rad", "qd_rad_s"):
            raise BagReadError(f"bag {path}: required signal {name} could not be read (see warnings: "
                               f"{'; '.join(warnings) or 'none'})")
    return Recording(
        joint_names=matcher.joint_names,
        time_s=time_s,
        q_rad=qqd[:, :n],
        qd_rad_s=qqd[:, n:],
        source=RecordingSource(str(path), storage, used, absent),
        warnings=tuple(warnings),
        **fields,
    )
