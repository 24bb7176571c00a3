"""rosbag2 bag writer for the torque logger and the simulated experiment.

:class:`BagWriter` writes ordinary rosbag2 bag directories (``metadata.yaml`` plus
storage files ``<bag>_0.mcap``, ``<bag>_1.mcap``, ...) with the storage writers of
the ``rosbags`` library, adding what a long recording on a robot needs:

* **split files** by size and/or duration (rosbag2 naming ``<bag>_<i>.<ext>``);
* **crash safety**: data reach the operating system at least every
  ``flush_period_s`` (default 0.5 s), so a ``kill -9`` (or a crash of the node)
  loses at most that much. rosbags on its own keeps everything in memory until
  ``close()``: its MCAP writer buffers a chunk of up to 1 MiB (about 3 s of the
  logger's 4 topics at 500 Hz), and its sqlite3 writer keeps one transaction open
  for the whole bag, so a killed writer leaves nothing readable. Here the pending
  MCAP chunk is closed and written, or the sqlite3 transaction is committed, each
  period. A killed bag has no ``metadata.yaml``; :func:`.bag_storage.open_bag`
  reads it anyway (and :func:`repair_bag` rewrites it into a finished bag);
* a finished bag on a clean stop: ``close()`` (or leaving the ``with`` block,
  also on an exception) writes ``metadata.yaml`` in the format rosbag2 uses, so
  ``ros2 bag info/play`` and rosbags' ``Reader`` open it.

Messages can be given as serialized CDR bytes (``write_raw``: e.g. straight from
an rclpy subscription created with ``raw=True``; rclpy's CDR is byte-identical to
rosbags') or as rosbags message objects (``write``; serialized with the typestore).

Storage: ``'mcap'`` (metadata version 9, the default of Iron/Jazzy/Kilted) or
``'sqlite3'`` (metadata version 8, readable by Humble's ``ros2 bag play``).

:func:`write_recording_bag` writes a :class:`~.recording.Recording` (arrays) as
the package's topics, for the simulated experiment and for tests without ROS.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rosbags.interfaces import (
    Connection,
    ConnectionExtRosbag2,
    MessageDefinition,
    MessageDefinitionFormat,
    Qos,
)
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.metadata import dump_qos_v8, dump_qos_v9
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from .bag_decode import BagTopics
from .bag_storage import open_bag
from .recording import Recording

__all__ = [
    "BagWriter",
    "BagWriterError",
    "STORAGE_EXTENSIONS",
    "default_typestore",
    "float64_multi_array",
    "joint_state",
    "repair_bag",
    "wrench_stamped",
    "write_recording_bag",
]

#: storage identifier -> file extension (as rosbag2 names them)
STORAGE_EXTENSIONS: dict[str, str] = {"mcap": ".mcap", "sqlite3": ".db3"}
#: metadata version written by default per storage (see the module docstring)
_DEFAULT_VERSION: dict[str, int] = {"mcap": 9, "sqlite3": 8}
#: per-message overhead used to estimate the file size for splitting, bytes
_RECORD_OVERHEAD_BYTES = 40

_TYPESTORE: Typestore | None = None


def default_typestore() -> Typestore:
    """The rosbags typestore used for message definitions and (de)serialization.

    ROS 2 Humble definitions: sensor_msgs/JointState, geometry_msgs/WrenchStamped
    and std_msgs/Float64MultiArray are the same (same RIHS01 hash) in later distros.
    """
    global _TYPESTORE
    if _TYPESTORE is None:
        _TYPESTORE = get_typestore(Stores.ROS2_HUMBLE)
    return _TYPESTORE


class BagWriterError(ValueError):
    """The bag cannot be written as asked; the message says why and what to do."""


@dataclass
class _Topic:
    connection: Connection
    dumped_qos: str
    count_total: int = 0


@dataclass
class _FileStats:
    path: Path
    start_ns: int = 2**63 - 1
    end_ns: int = 0
    message_count: int = 0
    size_bytes: int = 0


@dataclass
class _OpenFile:
    storage: Any  # McapWriter | Sqlite3Writer
    stats: _FileStats
    opened_wall_s: float = field(default_factory=time.monotonic)


class BagWriter:
    """Write a rosbag2 bag that survives a crash (see the module docstring).

    Use as a context manager, or call :meth:`open` and :meth:`close`::

        with BagWriter(path, storage="mcap", max_file_duration_s=600) as bag:
            bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
            bag.write_raw("/joint_states", receive_time_ns, cdr_bytes)

    Not for a real-time loop: a write takes microseconds, but every
    ``flush_period_s`` one write also hands the buffered data to the OS (see
    ``benchmarks/bench_bag_writer.py`` for measured latencies). Writes from
    several threads are serialized by a lock.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        storage: str = "mcap",
        version: int | None = None,
        typestore: Typestore | None = None,
        max_file_size_bytes: int = 0,
        max_file_duration_s: float = 0.0,
        flush_period_s: float = 0.5,
        fsync: bool = False,
        custom_data: dict[str, str] | None = None,
    ) -> None:
        """Set up a writer for a new bag directory ``path`` (it must not exist yet).

        Args:
            storage: ``'mcap'`` or ``'sqlite3'``.
            version: rosbag2 metadata version, 8 or 9 (default: 9 for mcap, 8 for sqlite3).
            typestore: rosbags typestore for message definitions (default: ROS 2 Humble).
            max_file_size_bytes: start a new storage file when the current one
                reaches this size (approximately); 0 = no limit.
            max_file_duration_s: start a new storage file when the current one
                spans this much bag time; 0 = no limit.
            flush_period_s: hand buffered data to the OS at least this often
                (while messages arrive); bounds what a crash loses.
            fsync: also ``fsync`` at each flush (survives a power cut, costs
                milliseconds per flush); without it a killed process loses
                nothing that was flushed, but an OS crash may.
            custom_data: string key/values stored in ``metadata.yaml`` (rosbag2 ``custom_data``).
        """
        if storage not in STORAGE_EXTENSIONS:
            raise BagWriterError(f"unknown bag storage {storage!r}; use one of {sorted(STORAGE_EXTENSIONS)}")
        version = _DEFAULT_VERSION[storage] if version is None else int(version)
        if version not in (8, 9):
            raise BagWriterError(
                f"rosbag2 metadata version {version} is not supported; use 9 (Iron and later) or 8 (Humble)"
            )
        if max_file_size_bytes < 0 or max_file_duration_s < 0:
            raise BagWriterError("max_file_size_bytes and max_file_duration_s must be >= 0 (0 = no splitting)")
        if not flush_period_s > 0:
            raise BagWriterError(f"flush_period_s must be > 0, got {flush_period_s!r}")
        self.path = Path(path)
        self.storage = storage
        self.version = version
        self.typestore = typestore or default_typestore()
        self.max_file_size_bytes = int(max_file_size_bytes)
        self.max_file_duration_ns = int(round(max_file_duration_s * 1e9))
        self.flush_period_s = float(flush_period_s)
        self.fsync = bool(fsync)
        self.custom_data = dict(custom_data or {})
        for key, value in self.custom_data.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise BagWriterError(f"custom_data must map str to str; got {key!r}: {value!r}")
        self._topics: dict[str, _Topic] = {}
        self._msgdefs: dict[str, tuple[MessageDefinition, str]] = {}
        self._files: list[_FileStats] = []
        self._current: _OpenFile | None = None
        self._last_flush_s = time.monotonic()
        self._lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------------ lifecycle
    def open(self) -> BagWriter:
        """Create the bag directory and its first storage file."""
        if self._current is not None or self._closed:
            raise BagWriterError(f"bag {self.path} is already open or closed; make a new BagWriter")
        if self.path.exists():
            raise BagWriterError(f"{self.path} exists already; rosbag2 bags are never appended to: choose a new path")
        self.path.mkdir(parents=True)
        self._open_next_file()
        return self

    def __enter__(self) -> BagWriter:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        # Finish the bag even when the recording ends with an exception: what was
        # written is valid data and should stay readable by every tool.
        self.close()

    @property
    def is_open(self) -> bool:
        """True between :meth:`open` and :meth:`close`."""
        return self._current is not None

    @property
    def files(self) -> list[Path]:
        """Storage files written so far (the last one may still be open)."""
        return [f.path for f in self._files]

    @property
    def message_count(self) -> int:
        """Messages written so far."""
        return sum(t.count_total for t in self._topics.values())

    def close(self) -> None:
        """Write what is buffered, close the storage file and write ``metadata.yaml``."""
        with self._lock:
            if self._current is None:
                return
            self._close_current_file()
            self._write_metadata_yaml()
            self._closed = True

    # ------------------------------------------------------------------ topics
    def add_topic(
        self,
        topic: str,
        msgtype: str,
        *,
        offered_qos_profiles: Sequence[Qos] = (),
        msgdef: str | None = None,
        rihs01: str | None = None,
    ) -> None:
        """Register a topic before writing to it (e.g. ``'sensor_msgs/msg/JointState'``).

        ``msgdef``/``rihs01`` are only needed for types the typestore does not know.
        Adding the same topic again with the same type is a no-op.
        """
        with self._lock:
            self._require_open()
            if "/msg/" not in msgtype:
                raise BagWriterError(
                    f"message type {msgtype!r} must be written as 'package/msg/Type', e.g. 'sensor_msgs/msg/JointState'"
                )
            if topic in self._topics:
                if self._topics[topic].connection.msgtype != msgtype:
                    raise BagWriterError(
                        f"topic {topic} was added as {self._topics[topic].connection.msgtype}, not {msgtype}; "
                        "one topic carries one message type"
                    )
                return
            if msgtype not in self._msgdefs:
                if msgdef is None or rihs01 is None:
                    if msgtype not in self.typestore.types:
                        raise BagWriterError(
                            f"message type {msgtype} is unknown to the typestore; pass msgdef= and rihs01=, "
                            "or register the type in the typestore"
                        )
                    msgdef, _ = self.typestore.generate_msgdef(msgtype, ros_version=2)
                    rihs01 = self.typestore.hash_rihs01(msgtype)
                is_idl = msgdef.startswith("=" * 80 + "\nIDL: ")
                fmt = MessageDefinitionFormat.IDL if is_idl else MessageDefinitionFormat.MSG
                self._msgdefs[msgtype] = (MessageDefinition(fmt, msgdef), rihs01)
            definition, digest = self._msgdefs[msgtype]
            qos = list(offered_qos_profiles)
            connection = Connection(
                id=len(self._topics) + 1,
                topic=topic,
                msgtype=msgtype,
                msgdef=definition,
                digest=digest,
                msgcount=0,
                ext=ConnectionExtRosbag2(serialization_format="cdr", offered_qos_profiles=qos),
                owner=self,
            )
            dumped = dump_qos_v8(qos)  # the storage files hold the QoS as YAML text, like rosbag2
            entry = _Topic(connection, dumped)
            self._register_in_storage(entry, self._current)
            self._topics[topic] = entry

    # ------------------------------------------------------------------ writing
    def write_raw(self, topic: str, timestamp_ns: int, data: bytes | memoryview) -> None:
        """Write one serialized (CDR) message received at ``timestamp_ns`` (bag time, ns)."""
        with self._lock:
            self._require_open()
            entry = self._topics.get(topic)
            if entry is None:
                raise BagWriterError(
                    f"topic {topic} was not added; call add_topic({topic!r}, msgtype) first "
                    f"(added: {sorted(self._topics)})"
                )
            t = int(timestamp_ns)
            current = self._current
            assert current is not None
            if current.stats.message_count and self._split_due(current.stats, t):
                self._close_current_file()
                self._open_next_file()
                current = self._current
                assert current is not None
            current.storage.write(entry.connection, t, data)
            stats = current.stats
            stats.message_count += 1
            stats.size_bytes += len(data) + _RECORD_OVERHEAD_BYTES
            if t < stats.start_ns:
                stats.start_ns = t
            if t > stats.end_ns:
                stats.end_ns = t
            entry.count_total += 1
            now = time.monotonic()
            if now - self._last_flush_s >= self.flush_period_s:
                self._flush_locked(now)

    def write(self, topic: str, timestamp_ns: int, message: object) -> None:
        """Serialize a rosbags message object with the typestore and write it."""
        entry = self._topics.get(topic)
        if entry is None:
            raise BagWriterError(f"topic {topic} was not added; call add_topic({topic!r}, msgtype) first")
        msgtype = entry.connection.msgtype
        if getattr(message, "__msgtype__", msgtype) != msgtype:
            raise BagWriterError(
                f"topic {topic} carries {msgtype}, but a {getattr(message, '__msgtype__')} was given"
            )
        self.write_raw(topic, timestamp_ns, self.typestore.serialize_cdr(message, msgtype))

    def flush(self) -> None:
        """Hand everything written so far to the OS (and fsync if configured)."""
        with self._lock:
            self._require_open()
            self._flush_locked(time.monotonic())

    def flush_if_due(self) -> None:
        """Flush if ``flush_period_s`` has passed; call from a timer when messages may stop arriving."""
        with self._lock:
            if self._current is not None and time.monotonic() - self._last_flush_s >= self.flush_period_s:
                self._flush_locked(time.monotonic())

    # ------------------------------------------------------------------ internals
    def _require_open(self) -> None:
        if self._current is None:
            state = "closed" if self._closed else "not opened"
            raise BagWriterError(f"bag {self.path} is {state}; use 'with BagWriter(...)' or call open() first")

    def _split_due(self, stats: _FileStats, t_ns: int) -> bool:
        if self.max_file_size_bytes and stats.size_bytes >= self.max_file_size_bytes:
            return True
        return bool(self.max_file_duration_ns) and t_ns - stats.start_ns >= self.max_file_duration_ns

    def _open_next_file(self) -> None:
        index = len(self._files)
        final = self.path / f"{self.path.name}_{index}{STORAGE_EXTENSIONS[self.storage]}"
        # rosbags' storage writers name their file after the directory they are
        # given; create it in a staging directory of that name and move it to
        # the rosbag2 split name <bag>_<i>.<ext>.
        staging_root = self.path / ".staging"
        staging = staging_root / final.stem
        staging.mkdir(parents=True)
        try:
            if self.storage == "mcap":
                storage: Any = McapWriter(staging, CompressionMode.NONE)
                os.replace(storage.path, final)  # the open file handle follows the rename
                storage.path = final
            else:
                storage = Sqlite3Writer(staging, CompressionMode.NONE)
                storage.conn.close()  # the schema is committed; reopen under the final name
                os.replace(storage.path, final)
                storage.path = final
                storage.conn = sqlite3.connect(str(final))
                # Without fsync a commit only needs to reach the OS (survives kill -9).
                storage.conn.execute(f"PRAGMA synchronous={'FULL' if self.fsync else 'OFF'}")
                storage.cursor = storage.conn.cursor()
        finally:
            shutil.rmtree(staging_root, ignore_errors=True)
        opened = _OpenFile(storage, _FileStats(final))
        for entry in self._topics.values():
            self._register_in_storage(entry, opened)
        self._files.append(opened.stats)
        self._current = opened
        self._flush_locked(time.monotonic())  # the header and topics are on disk before any message

    def _register_in_storage(self, entry: _Topic, opened: _OpenFile | None) -> None:
        assert opened is not None
        storage = opened.storage
        known = getattr(storage, "_rdi_msgtypes", set())
        if entry.connection.msgtype not in known:
            storage.add_msgtype(entry.connection)
            known.add(entry.connection.msgtype)
            storage._rdi_msgtypes = known
        storage.add_connection(entry.connection, entry.dumped_qos)

    def _flush_locked(self, now_s: float) -> None:
        current = self._current
        if current is None:
            return
        storage = current.storage
        if isinstance(storage, McapWriter):
            # Close the pending chunk only when it holds messages: a chunk is
            # indexed by its message time range.
            if storage.chunk.msgs:
                storage.close_chunk()
            storage.bio.flush()
            if self.fsync:
                os.fsync(storage.bio.fileno())
        else:
            storage.conn.commit()
        self._last_flush_s = now_s

    def _close_current_file(self) -> None:
        current = self._current
        assert current is not None
        stats = current.stats
        metadata = self._metadata()
        inner = yaml.safe_dump(metadata["rosbag2_bagfile_information"], sort_keys=False).strip()
        current.storage.close(self.version, inner)
        if self.fsync:
            with open(stats.path, "rb+") as handle:
                os.fsync(handle.fileno())
        self._current = None

    def _metadata(self) -> dict[str, Any]:
        # A new split file is opened only for a message, so only a bag without
        # any message has an empty file (its only one).
        files = self._files
        start = min((f.start_ns for f in files if f.message_count), default=2**63 - 1)
        end = max((f.end_ns for f in files if f.message_count), default=0)
        count = sum(f.message_count for f in files)
        duration = max(0, end - start) if count else 0
        dump_qos = dump_qos_v9 if self.version >= 9 else dump_qos_v8
        info: dict[str, Any] = {
            "version": self.version,
            "storage_identifier": self.storage,
            "duration": {"nanoseconds": duration},
            "starting_time": {"nanoseconds_since_epoch": start},
            "message_count": count,
            "topics_with_message_count": [
                {
                    "topic_metadata": {
                        "name": t.connection.topic,
                        "type": t.connection.msgtype,
                        "serialization_format": "cdr",
                        "offered_qos_profiles": dump_qos(list(t.connection.ext.offered_qos_profiles)),
                        "type_description_hash": t.connection.digest,
                    },
                    "message_count": t.count_total,
                }
                for t in self._topics.values()
            ],
            "compression_format": "",
            "compression_mode": "",
            "relative_file_paths": [f.path.name for f in files],
            "files": [
                {
                    "path": f.path.name,
                    "starting_time": {"nanoseconds_since_epoch": f.start_ns if f.message_count else start},
                    "duration": {"nanoseconds": max(0, f.end_ns - f.start_ns) if f.message_count else 0},
                    "message_count": f.message_count,
                }
                for f in files
            ],
            "custom_data": self.custom_data or None,
            "ros_distro": os.environ.get("ROS_DISTRO", "rosbags"),
        }
        return {"rosbag2_bagfile_information": info}

    def _write_metadata_yaml(self) -> None:
        text = yaml.safe_dump(self._metadata(), sort_keys=False)
        tmp = self.path / "metadata.yaml.tmp"
        tmp.write_text(text, encoding="utf8")
        os.replace(tmp, self.path / "metadata.yaml")


# ---------------------------------------------------------------------- typed messages
def _header(stamp_ns: int, frame_id: str = "") -> object:
    ts = default_typestore()
    sec, nanosec = divmod(int(stamp_ns), 1_000_000_000)
    return ts.types["std_msgs/msg/Header"](stamp=ts.types["builtin_interfaces/msg/Time"](sec=sec, nanosec=nanosec),
                                           frame_id=frame_id)


def joint_state(stamp_ns: int, names: Sequence[str], position: Iterable[float] = (),
                velocity: Iterable[float] = (), effort: Iterable[float] = ()) -> object:
    """A rosbags ``sensor_msgs/msg/JointState`` (empty arrays for fields not given)."""
    cls = default_typestore().types["sensor_msgs/msg/JointState"]
    return cls(header=_header(stamp_ns), name=list(names),
               position=np.asarray(list(position), dtype=np.float64),
               velocity=np.asarray(list(velocity), dtype=np.float64),
               effort=np.asarray(list(effort), dtype=np.float64))


def wrench_stamped(stamp_ns: int, wrench: Sequence[float], frame_id: str = "tool0_controller") -> object:
    """A rosbags ``geometry_msgs/msg/WrenchStamped`` from [Fx, Fy, Fz, Mx, My, Mz] (N, Nm)."""
    types = default_typestore().types
    vec = types["geometry_msgs/msg/Vector3"]
    w = [float(x) for x in wrench]
    return types["geometry_msgs/msg/WrenchStamped"](
        header=_header(stamp_ns, frame_id),
        wrench=types["geometry_msgs/msg/Wrench"](force=vec(x=w[0], y=w[1], z=w[2]),
                                                 torque=vec(x=w[3], y=w[4], z=w[5])))


def float64_multi_array(values: Iterable[float]) -> object:
    """A rosbags ``std_msgs/msg/Float64MultiArray`` with an empty layout (as the UR controllers expect)."""
    types = default_typestore().types
    layout = types["std_msgs/msg/MultiArrayLayout"](dim=[], data_offset=0)
    return types["std_msgs/msg/Float64MultiArray"](layout=layout, data=np.asarray(list(values), dtype=np.float64))


def write_recording_bag(
    path: str | Path,
    recording: Recording,
    *,
    storage: str = "mcap",
    topics: BagTopics | None = None,
    receive_delay_s: float = 0.0,
    max_file_duration_s: float = 0.0,
) -> Path:
    """Write a recording as the package's topics (what the torque logger records).

    Header stamps are ``recording.time_s``; bag (receive) times are the same plus
    ``receive_delay_s``. Joint-state effort carries ``effort_nm`` or ``current_a``
    according to ``topics.joint_states_effort``; commands are written at every
    sample where they are finite. Returns the bag path.
    """
    topics = topics or BagTopics()
    names = list(recording.joint_names)
    t_ns = np.round(recording.time_s * 1e9).astype(np.int64)
    rx_ns = t_ns + int(round(receive_delay_s * 1e9))
    js_effort = {"torque_nm": recording.effort_nm, "current_a": recording.current_a,
                 "current_as_torque_nm": recording.current_as_torque_nm}.get(topics.joint_states_effort)
    per_joint: list[tuple[str, str, str, np.ndarray]] = []  # (topic, msgtype, field, values)
    for attr, spec in (("current_a", topics.motor_currents), ("target_current_a", topics.target_currents),
                       ("target_moment_nm", topics.target_moment)):
        values = getattr(recording, attr)
        if spec is None or values is None or (attr == "current_a" and topics.joint_states_effort == "current_a"):
            continue
        per_joint.append((spec.topic, spec.msgtype, spec.field, values))
    commands = [(topic, values) for topic, values in ((topics.velocity_commands, recording.velocity_command_rad_s),
                                                      (topics.effort_commands, recording.effort_command_nm))
                if topic and values is not None]
    with BagWriter(path, storage=storage, max_file_duration_s=max_file_duration_s) as bag:
        bag.add_topic(topics.joint_states, "sensor_msgs/msg/JointState")
        for topic, msgtype, _, _ in per_joint:
            bag.add_topic(topic, msgtype)
        if topics.wrench and recording.tcp_wrench is not None:
            bag.add_topic(topics.wrench, "geometry_msgs/msg/WrenchStamped")
        for topic, _ in commands:
            bag.add_topic(topic, "std_msgs/msg/Float64MultiArray")
        for k in range(recording.n_samples):
            stamp, rx = int(t_ns[k]), int(rx_ns[k])
            for topic, values in commands:
                if np.all(np.isfinite(values[k])):
                    bag.write(topic, rx, float64_multi_array(values[k]))
            bag.write(topics.joint_states, rx, joint_state(
                stamp, names, recording.q_rad[k], recording.qd_rad_s[k],
                js_effort[k] if js_effort is not None else ()))
            for topic, msgtype, fld, values in per_joint:
                if msgtype == "sensor_msgs/msg/JointState":
                    bag.write(topic, rx, joint_state(stamp, names, **{fld: values[k]}))
                else:
                    bag.write(topic, rx, float64_multi_array(values[k]))
            if topics.wrench and recording.tcp_wrench is not None:
                bag.write(topics.wrench, rx, wrench_stamped(stamp, recording.tcp_wrench[k]))
    return Path(path)


def repair_bag(source: str | Path, destination: str | Path, *, storage: str | None = None) -> Path:
    """Rewrite a bag whose recorder died (no ``metadata.yaml``, truncated file) into a finished bag.

    Every message that can still be read is copied, in the source's order, to a
    new bag at ``destination`` (same storage unless ``storage`` is given).
    """
    with open_bag(source) as src:
        with BagWriter(destination, storage=storage or src.storage) as dst:
            for topic, (msgtype, _count) in src.topics.items():
                msgdef, rihs01 = src.message_definition(msgtype)
                dst.add_topic(topic, msgtype, msgdef=msgdef, rihs01=rihs01)
            for topic, _msgtype, t_ns, raw in src.messages():
                dst.write_raw(topic, t_ns, raw)
    return Path(destination)
