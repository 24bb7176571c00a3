"""Read rosbag2 bags (sqlite3 or mcap, any metadata version, split, or unfinished) into a Recording.

Two layers:

* :func:`open_bag` opens a bag directory or a single ``.mcap``/``.db3`` file and
  iterates its serialized messages. It also opens bags whose recorder died
  before finishing them: with no ``metadata.yaml`` it reads the storage files
  directly (rosbags' storage-level readers; split files in index order); an MCAP
  file cut off mid-write (no summary/footer) is read from a temporary copy
  truncated to its last complete record and closed with an empty footer; a
  sqlite3 file with a leftover ``-journal``/``-wal`` is read from a temporary
  copy that sqlite has rolled back / checkpointed. Each such step adds a line to
  ``BagSource.warnings``.
* :func:`read_bag` decodes the package's topics (:class:`BagTopics`) into a
  :class:`~.recording.Recording` on the robot's clock: the header stamps of
  ``/joint_states`` give ``time_s`` (bag receive times only when the stamps are
  all zero); other stamped topics are interpolated onto those times; commands
  (no header) are held from their receive time. Joints are reordered by name to
  ``joint_names`` (a ``tf_prefix`` is recognised).

Every problem raises :class:`BagReadError` naming the bag, what is wrong and the fix.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import tempfile
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

import numpy as np
import yaml
from rosbags.interfaces import MessageDefinitionFormat
from rosbags.rosbag2 import Reader
from rosbags.rosbag2.storage_mcap import McapReader
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from ..robots.description import JOINT_NAMES
from .recording import Recording, RecordingSource

__all__ = [
    "BagReadError",
    "BagSource",
    "BagTopics",
    "JOINT_STATES_EFFORT",
    "JointVectorTopic",
    "bag_summary",
    "open_bag",
    "read_bag",
]

JOINT_STATE = "sensor_msgs/msg/JointState"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
FLOAT64_MULTI_ARRAY = "std_msgs/msg/Float64MultiArray"
_MCAP_MAGIC = b"\x89MCAP0\r\n"


#: what JointState.effort on the joint-states topic may hold (BagTopics.joint_states_effort)
JOINT_STATES_EFFORT = ("torque_nm", "current_a", "current_as_torque_nm", "ignore")


class BagReadError(ValueError):
    """A bag cannot be read as asked; the message names the bag, the problem and the fix."""


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


# --------------------------------------------------------------------------- storage layer
def _split_index(path: Path) -> tuple[int, str]:
    match = re.search(r"_(\d+)$", path.stem)
    return (int(match.group(1)) if match else -1, path.name)


def _recover_sqlite_copy(db: Path, tmpdir: Path) -> Path:
    """Copy a sqlite file with its journal/WAL and let sqlite roll back / checkpoint the copy."""
    copy = tmpdir / db.name
    shutil.copyfile(db, copy)
    for suffix in ("-journal", "-wal"):
        side = db.with_name(db.name + suffix)
        if side.exists():
            shutil.copyfile(side, tmpdir / side.name)
    conn = sqlite3.connect(str(copy))
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # rolls back a hot journal
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        conn.close()
    return copy


def _mcap_complete_prefix(path: Path) -> tuple[int, bool]:
    """Length of the data section up to its last complete record, and whether the file is finished.

    MCAP records are ``opcode (1 byte) + length (uint64 LE) + body``; the data
    section ends with a DataEnd record (0x0F). A killed writer leaves a file
    that stops somewhere inside the data section.
    """
    size = path.stat().st_size
    with path.open("rb") as handle:
        if handle.read(8) != _MCAP_MAGIC:
            raise BagReadError(f"{path} is not an MCAP file (bad magic bytes); the file is corrupt")
        pos = 8
        while pos + 9 <= size:
            handle.seek(pos)
            head = handle.read(9)
            opcode, length = head[0], int.from_bytes(head[1:], "little")
            if opcode == 0x0F:  # DataEnd: the summary follows; keep the data section only
                return pos, False
            if pos + 9 + length > size:
                break
            pos += 9 + length
    return pos, False


def _recover_mcap_copy(path: Path, tmpdir: Path) -> tuple[Path, int]:
    """A copy of an unfinished MCAP file cut at its last complete record and closed with an empty footer."""
    end, _ = _mcap_complete_prefix(path)
    copy = tmpdir / path.name
    with path.open("rb") as src, copy.open("wb") as dst:
        remaining = end
        while remaining:
            block = src.read(min(remaining, 1 << 20))
            if not block:
                break
            dst.write(block)
            remaining -= len(block)
        dst.write(b"\x0f" + (4).to_bytes(8, "little") + bytes(4))  # DataEnd, crc 0 = not computed
        # Footer with no summary section: readers scan the data section.
        dst.write(b"\x02" + (20).to_bytes(8, "little") + bytes(20))
        dst.write(_MCAP_MAGIC)
    return copy, path.stat().st_size - end


class _StorageFile:
    """One opened storage file (or a rosbags DirectoryReader for a finished bag)."""

    def __init__(self, reader: Any, label: str, scan_only: bool = False) -> None:
        self.reader = reader
        self.label = label
        self.scan_only = scan_only  # recovered MCAP: no chunk index, read by scanning

    @property
    def connections(self) -> list[Any]:
        return list(self.reader.connections)

    def messages(self, connections: list[Any]) -> Iterator[tuple[Any, int, bytes]]:
        if self.scan_only:
            yield from self.reader.messages_scan(connections)
        else:
            yield from self.reader.messages(connections)

    def close(self) -> None:
        self.reader.close()


@dataclass
class BagSource:
    """An opened bag: its topics, its serialized messages and what was done to open it.

    Use :func:`open_bag` (a context manager) to get one.
    """

    path: Path
    storage: str
    files: list[Path]
    warnings: list[str] = field(default_factory=list)
    _parts: list[_StorageFile] = field(default_factory=list, repr=False)
    _tmpdir: tempfile.TemporaryDirectory | None = field(default=None, repr=False)

    @property
    def topics(self) -> dict[str, tuple[str, int]]:
        """topic -> (message type, message count)."""
        result: dict[str, tuple[str, int]] = {}
        for part in self._parts:
            for conn in part.connections:
                msgtype, count = result.get(conn.topic, (conn.msgtype, 0))
                if msgtype != conn.msgtype:
                    raise BagReadError(f"bag {self.path}: topic {conn.topic} has two message types, {msgtype} "
                                       f"and {conn.msgtype}; read the files separately")
                result[conn.topic] = (msgtype, count + conn.msgcount)
        return result

    @property
    def message_count(self) -> int:
        """Messages in the bag."""
        return sum(count for _, count in self.topics.values())

    def describe_topics(self) -> str:
        """'topic (type, N msgs), ...' for error messages."""
        topics = self.topics
        if not topics:
            return "no topics"
        return ", ".join(f"{t} ({m}, {c} msgs)" for t, (m, c) in sorted(topics.items()))

    def message_definition(self, msgtype: str) -> tuple[str | None, str | None]:
        """The message definition text and RIHS01 hash stored in the bag (None, None if absent)."""
        for part in self._parts:
            for conn in part.connections:
                if conn.msgtype == msgtype and conn.msgdef.format != MessageDefinitionFormat.NONE:
                    return conn.msgdef.data, conn.digest or ""
        return None, None

    def messages(self, topics: Collection[str] | None = None) -> Iterator[tuple[str, str, int, bytes]]:
        """Yield (topic, message type, bag receive time in ns, CDR bytes), file by file."""
        for part in self._parts:
            conns = [c for c in part.connections if topics is None or c.topic in topics]
            if not conns:
                continue
            done = 0
            try:
                for conn, t_ns, raw in part.messages(conns):
                    yield conn.topic, conn.msgtype, t_ns, raw
                    done += 1
            except BagReadError:
                raise
            except Exception as exc:  # rosbags/sqlite/zstd errors on damaged data
                raise BagReadError(
                    f"bag {self.path}: storage file {part.label} is damaged after {done} readable messages "
                    f"({type(exc).__name__}: {exc}). Copy the bag again from the recording machine; if the recorder "
                    "was killed, try robot_dynamics_id.io.bag_writer.repair_bag to salvage what is readable"
                ) from exc

    def close(self) -> None:
        """Close the files and delete temporary copies."""
        for part in self._parts:
            try:
                part.close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
        self._parts.clear()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self) -> BagSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _open_file(source: BagSource, path: Path) -> _StorageFile:
    """Open one storage file, from a recovered temporary copy if the writer did not finish it."""

    def tmpdir() -> Path:
        if source._tmpdir is None:
            source._tmpdir = tempfile.TemporaryDirectory(prefix="rdi_bag_")
        sub = Path(source._tmpdir.name) / str(len(source._parts))
        sub.mkdir(exist_ok=True)
        return sub

    if path.stat().st_size == 0:
        raise BagReadError(f"bag {source.path}: storage file {path.name} is empty (0 bytes); the recorder stopped "
                           "before writing anything to it. Delete it, or record again")
    if path.suffix == ".db3":
        sides = [path.with_name(path.name + s) for s in ("-journal", "-wal")]
        if any(s.exists() and s.stat().st_size > 0 for s in sides):
            try:
                path = _recover_sqlite_copy(path, tmpdir())
            except sqlite3.DatabaseError as exc:
                raise BagReadError(f"bag {source.path}: {path.name} is not a readable sqlite3 database ({exc}); "
                                   "the file is corrupt") from exc
            source.warnings.append(f"{path.name}: left with an unfinished sqlite transaction (-journal/-wal file); "
                                   "read a copy that sqlite rolled back to its last commit")
        reader = Reader(path)
        try:
            reader.open()
        except Exception as exc:
            raise BagReadError(f"bag {source.path}: cannot open sqlite3 storage file {path.name} ({exc}). "
                               "It is corrupt, truncated, or not a rosbag2 file; copy it again from the "
                               "recording machine") from exc
        return _StorageFile(reader, path.name)
    if path.suffix == ".mcap":
        reader = Reader(path)
        try:
            reader.open()
            return _StorageFile(reader, path.name)
        except Exception as exc:  # unfinished file: no footer/summary
            first_error = exc
        copy, lost = _recover_mcap_copy(path, tmpdir())
        mcap = McapReader(copy)
        try:
            mcap.open()
        except Exception as exc:
            raise BagReadError(f"bag {source.path}: cannot read MCAP file {path.name} ({first_error}; after "
                               f"truncation to complete records: {exc}). The file is corrupt") from exc
        if not mcap.connections:
            mcap.close()
            raise BagReadError(f"bag {source.path}: MCAP file {path.name} is cut off ({first_error}) before its first "
                               "complete chunk; nothing in it is readable. Copy it again if it was cut in transfer")
        source.warnings.append(f"{path.name}: unfinished MCAP file (writer did not close it: {first_error}); read "
                               f"its complete records ({lost} trailing bytes of an incomplete record ignored)")
        return _StorageFile(mcap, path.name, scan_only=True)
    raise BagReadError(f"{path}: unknown storage file type {path.suffix!r}; expected .mcap or .db3 "
                       "(compressed .zstd bags need their metadata.yaml; decompress them with `ros2 bag convert`)")


def _files_from_metadata(path: Path, metadata: Path, found: list[Path]) -> tuple[list[Path] | None, str]:
    """Storage files listed by metadata.yaml (in its order), or None and the reason it cannot be used.

    The files are then opened one by one with rosbags' storage readers rather
    than through rosbags' directory reader: the latter matches topics of the
    metadata to those of the storage files by QoS, and rosbags 0.11.9 yields no
    messages at all for real rosbag2 sqlite3 bags whose two QoS records differ
    (e.g. the rosbag2 talker test bag).
    """
    try:
        info = yaml.safe_load(metadata.read_text())["rosbag2_bagfile_information"]
        names = [PurePath(x).name for x in info["relative_file_paths"]]
        storage = info.get("storage_identifier", "")
        compression = (info.get("compression_mode") or "").lower()
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        return None, f"its metadata.yaml cannot be read ({type(exc).__name__}: {exc})"
    if compression and compression != "none":
        raise BagReadError(f"bag {path} is compressed ({compression} mode, {info.get('compression_format')}); "
                           "decompress it first: `ros2 bag decompress` or `rosbags-convert`")
    if storage not in ("sqlite3", "mcap"):
        raise BagReadError(f"bag {path}: storage {storage!r} is not supported; convert it to mcap or sqlite3 "
                           "with `ros2 bag convert`")
    listed = [path / name for name in names]
    missing = [p.name for p in listed if not p.exists()]
    if missing:
        return None, f"its metadata.yaml lists missing file(s) {missing}"
    note = ""
    extra = [p.name for p in found if p not in listed]
    if extra:
        note = f"bag {path}: storage file(s) {extra} are not listed in metadata.yaml and were not read"
    return listed, note


def open_bag(path: str | Path) -> BagSource:
    """Open a rosbag2 bag directory or storage file for reading (use as a context manager).

    Raises:
        BagReadError: the path does not exist, is not a bag, or a file is corrupt.
    """
    path = Path(path)
    if not path.exists():
        raise BagReadError(f"bag {path} does not exist; pass the bag directory (the one holding metadata.yaml) "
                           "or one .mcap/.db3 file")
    if path.is_file():
        source = BagSource(path, "mcap" if path.suffix == ".mcap" else "sqlite3", [path])
        try:
            source._parts.append(_open_file(source, path))
        except BaseException:
            source.close()
            raise
        return source

    files = sorted((p for p in path.iterdir() if p.suffix in (".mcap", ".db3") and p.is_file()), key=_split_index)
    metadata = path / "metadata.yaml"
    if metadata.exists():
        listed, note = _files_from_metadata(path, metadata, files)
        if listed is not None:
            source = BagSource(path, "mcap" if listed and listed[0].suffix == ".mcap" else "sqlite3", listed,
                               [note] if note else [])
            try:
                for file in listed:
                    source._parts.append(_open_file(source, file))
            except BaseException:
                source.close()
                raise
            return source
        if not files:
            raise BagReadError(f"bag {path}: {note}, and there are no .mcap/.db3 files; the bag is incomplete")
        note = f"bag {path}: {note}; read its {len(files)} storage file(s) directly"
    else:
        if not files:
            raise BagReadError(f"{path} is not a rosbag2 bag: no metadata.yaml and no .mcap/.db3 files in it")
        note = (f"bag {path} has no metadata.yaml (the recorder was probably killed before finishing the bag); "
                f"read its {len(files)} storage file(s) directly. To make a finished bag for other tools run "
                "`ros2 bag reindex` on it or robot_dynamics_id.io.bag_writer.repair_bag")
    kinds = {p.suffix for p in files}
    if len(kinds) > 1:
        raise BagReadError(f"bag {path} mixes .mcap and .db3 files and has no usable metadata.yaml; "
                           "move the files of one recording into their own directory")
    source = BagSource(path, "mcap" if ".mcap" in kinds else "sqlite3", files, [note])
    try:
        for file in files:
            source._parts.append(_open_file(source, file))
    except BaseException:
        source.close()
        raise
    return source


def bag_summary(path: str | Path) -> str:
    """A few lines describing a bag: storage, files, topics, counts, warnings."""
    with open_bag(path) as bag:
        lines = [f"bag {bag.path} [{bag.storage}], {len(bag.files)} file(s), {bag.message_count} messages"]
        lines += [f"  {t}: {m}, {c} msgs" for t, (m, c) in sorted(bag.topics.items())]
        lines += [f"  warning: {w}" for w in bag.warnings]
    return "\n".join(lines)


# --------------------------------------------------------------------------- decoding
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
        raise BagReadError(f"bag {bag_path}: {text}. Pass nan_policy='drop' (rdi: --nan-policy drop) to drop "
                           "those samples")
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
        present = bag.topics
        if bag.message_count == 0:
            raise BagReadError(f"bag {path} is empty: it holds 0 messages (topics: {bag.describe_topics()}). "
                               "The recording did not receive any data; check that the robot interface was publishing")

        def check(topic: str, expected: str, field_name: str, required: bool) -> bool:
            if topic not in present:
                if required or field_name in require:
                    raise BagReadError(
                        f"bag {path} has no topic {topic} (needed for {field_name}). The bag has: "
                        f"{bag.describe_topics()}. Set the topic name with read_bag(topics=BagTopics(...)) "
                        "(BagTopics.ur_driver() for the official UR driver)")
                warnings.append(f"{topic} not in bag: no {field_name}")
                return False
            msgtype, count = present[topic]
            if msgtype != expected:
                raise BagReadError(f"bag {path}: topic {topic} carries {msgtype}, expected {expected} for "
                                   f"{field_name}. Point BagTopics at the right topic or message type")
            if count == 0:
                if required or field_name in require:
                    raise BagReadError(f"bag {path}: topic {topic} has no messages (needed for {field_name}); "
                                       f"the bag has: {bag.describe_topics()}")
                warnings.append(f"{topic} has no messages: no {field_name}")
                return False
            return True

        check(topics.joint_states, JOINT_STATE, "q_rad/qd_rad_s", True)
        js, js_effort = _decode_joint_states(bag, topics.joint_states, topics.joint_states_effort,
                                                matcher, warnings)
        stamped: dict[str, _Series] = {}
        held: dict[str, _Series] = {}
        used: dict[str, str] = {"q_rad": topics.joint_states, "qd_rad_s": topics.joint_states}
        if js_effort is not None:
            name = {"torque_nm": "effort_nm"}.get(topics.joint_states_effort, topics.joint_states_effort)
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
            if topic and check(topic, FLOAT64_MULTI_ARRAY, name, False):
                series = _decode_joint_vector(bag, JointVectorTopic(topic, FLOAT64_MULTI_ARRAY, "data"),
                                              matcher, warnings)
                if series is not None:
                    held[name] = series
                    used[name] = topic
        storage, files = bag.storage, bag.files

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
    if not np.all(keep):
        warnings.append(f"dropped {int((~keep).sum())} joint-state sample(s) outside the time span of all "
                        "stamped signals")
    t_ns, rx_ns, qqd = js.stamp_ns[keep], js.receive_ns[keep], js.values[keep]
    t0 = int(t_ns[0])
    time_s = t_ns * 1e-9  # float64 keeps ~0.2 us resolution even for epoch stamps
    fields: dict[str, np.ndarray] = {}
    for name, series in stamped.items():
        st = series.stamp_ns
        if st.shape[0] > 2:
            period = np.median(np.diff(st))
            gaps = int(np.sum(np.diff(st) > 5 * period))
            if gaps:
                warnings.append(f"{series.topic}: {gaps} gap(s) longer than 5 sample periods; interpolated across")
        x = (t_ns - t0).astype(float)
        xp = (st - t0).astype(float)
        fields[name] = np.column_stack([np.interp(x, xp, series.values[:, j]) for j in range(series.values.shape[1])])
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
        source=RecordingSource(str(path), storage, used),
        warnings=tuple(warnings),
        **fields,
    )
