"""Open rosbag2 bags (sqlite3 or mcap, any metadata version, split, unfinished or damaged) and say what was lost.

:func:`open_bag` opens a bag directory or a single ``.mcap``/``.db3`` file and iterates its serialized
messages (:class:`BagSource`). It also opens bags the recorder did not finish or that were damaged
afterwards (:mod:`.bag_recovery` does the work on temporary copies):

* no ``metadata.yaml``: the storage files are read directly (split files in index order);
* an MCAP file cut off mid-write or mid-copy: its complete records are read;
* a sqlite3 file with a leftover ``-journal``/``-wal``: a copy rolled back to its last commit is read;
* a sqlite3 file sqlite calls malformed (cut in half, a bad sector): the rows that can still be read are
  read, and the unreadable row ranges named with the times around them.

Each such step adds a line to :attr:`BagSource.warnings`. When ``metadata.yaml`` says how many messages
each topic has, :meth:`BagSource.losses` compares that with what was actually read ("36 % of
/joint_states read: 10,092 of 27,811 messages; 17,719 lost after t=20.18 s"), so a partial bag is never
taken for a whole one. Every problem that stops reading raises :class:`BagReadError` naming the bag,
what is wrong and the fix. Decoding is in :mod:`.bag_decode`.
"""

from __future__ import annotations

import re
import sqlite3
import tempfile
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

import yaml
from rosbags.interfaces import MessageDefinitionFormat
from rosbags.rosbag2 import Reader
from rosbags.rosbag2.storage_mcap import McapReader

from .bag_recovery import SalvagedSqlite, recover_mcap_copy, recover_sqlite_copy

__all__ = ["DATA_LOST", "BagReadError", "BagSource", "bag_summary", "open_bag"]

#: phrases of the reader's warnings that say part of the recording is not in the data (a storage file missing, fewer
#: messages readable than metadata.yaml lists): an identification from it is doubtful
DATA_LOST = ("lists missing file(s)", "messages metadata.yaml lists;")


class BagReadError(ValueError):
    """A bag cannot be read as asked; the message names the bag, the problem and the fix."""


def _split_index(path: Path) -> tuple[int, str]:
    match = re.search(r"_(\d+)$", path.stem)
    return (int(match.group(1)) if match else -1, path.name)


class _StorageFile:
    """One opened storage file: a rosbags storage reader, or the salvaged rows of a damaged sqlite file."""

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


@dataclass(frozen=True)
class _Expected:
    """What a finished bag's metadata.yaml says it holds."""

    counts: dict[str, int]
    start_ns: int
    end_ns: int


@dataclass
class BagSource:
    """An opened bag: its topics, its serialized messages, what was done to open it and what was lost.

    Use :func:`open_bag` (a context manager) to get one.
    """

    path: Path
    storage: str
    files: list[Path]
    warnings: list[str] = field(default_factory=list)
    _parts: list[_StorageFile] = field(default_factory=list, repr=False)
    _tmpdir: tempfile.TemporaryDirectory | None = field(default=None, repr=False)
    _expected: _Expected | None = field(default=None, repr=False)
    #: per topic, from the last complete pass over it: (messages read, receive time of the last one, ns)
    _read: dict[str, tuple[int, int | None]] = field(default_factory=dict, repr=False)
    #: whether a storage file lost messages in its middle (salvaged sqlite), not only at its end
    _lost_inside: bool = field(default=False, repr=False)

    @property
    def topics(self) -> dict[str, tuple[str, int]]:
        """topic -> (message type, message count readable from the storage files)."""
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
        """Yield (topic, message type, bag receive time in ns, CDR bytes), file by file.

        A complete pass is remembered per topic (count, last receive time) for :meth:`losses`."""
        counts: dict[str, int] = {}
        last_ns: dict[str, int] = {}
        for part in self._parts:
            conns = [c for c in part.connections if topics is None or c.topic in topics]
            if not conns:
                continue
            done = 0
            try:
                for conn, t_ns, raw in part.messages(conns):
                    counts[conn.topic] = counts.get(conn.topic, 0) + 1
                    last_ns[conn.topic] = max(t_ns, last_ns.get(conn.topic, t_ns))
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
        for topic in (self.topics if topics is None else topics):
            self._read[topic] = (counts.get(topic, 0), last_ns.get(topic))

    def losses(self) -> list[str]:
        """One line per topic read (see :meth:`messages`) of which fewer messages were readable than
        metadata.yaml lists: how much was read, how much was lost, and from when. Empty when the bag has no
        metadata.yaml (nothing to compare with) or nothing was lost."""
        if self._expected is None:
            return []
        expected = self._expected
        lines = []
        for topic, (read, last_ns) in sorted(self._read.items()):
            total = expected.counts.get(topic)
            if total is None or read >= total:
                continue
            lost = total - read
            if self._lost_inside:
                where = "in the unreadable stretches listed in the damaged-file warning"
            elif last_ns is None:
                where = "(all of them)"
            else:
                where = (f"after t={(last_ns - expected.start_ns) * 1e-9:.2f} s (the recording runs to "
                         f"t={(expected.end_ns - expected.start_ns) * 1e-9:.2f} s)")
            lines.append(f"only {100.0 * read / total:.0f} % of {topic} read: {read:,} of the {total:,} messages "
                         f"metadata.yaml lists; {lost:,} lost {where}")
        return lines

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


def _bag_time(source: BagSource, t_ns: int | None) -> str:
    """A receive time as seconds into the recording (from metadata.yaml's start; else absolute)."""
    if t_ns is None:
        return "?"
    start = source._expected.start_ns if source._expected is not None else 0
    return f"{(t_ns - start) * 1e-9:.2f} s"


def _salvage_sqlite(source: BagSource, path: Path, tmpdir: Path, error: Exception) -> _StorageFile:
    """The readable rows of a sqlite file rosbags cannot open; warnings name what could not be read."""
    try:
        salvaged = SalvagedSqlite(path, tmpdir)
    except sqlite3.DatabaseError as exc:
        raise BagReadError(f"bag {source.path}: cannot open sqlite3 storage file {path.name} ({error}; salvaging "
                           f"its readable rows failed too: {exc}). It is corrupt, or not a rosbag2 file; copy it "
                           "again from the recording machine") from exc
    if salvaged.rows_read == 0:
        salvaged.close()
        raise BagReadError(f"bag {source.path}: sqlite3 storage file {path.name} is damaged ({error}) and none of "
                           "its messages can be read; copy it again from the recording machine")
    stretches = []
    for gap in salvaged.unreadable:
        rows = f"rows {gap.first_id}-{gap.last_id}" if gap.last_id is not None else f"rows from {gap.first_id} on"
        span = (f"between t={_bag_time(source, gap.after_ns)} and t={_bag_time(source, gap.before_ns)}"
                if gap.before_ns is not None else f"after t={_bag_time(source, gap.after_ns)}")
        stretches.append(f"{rows} ({span})")
        source._lost_inside = source._lost_inside or gap.last_id is not None
    source.warnings.append(f"{path.name}: damaged sqlite3 file ({error}); salvaged its {salvaged.rows_read:,} readable "
                           f"messages; unreadable: {'; '.join(stretches) or 'none'}")
    return _StorageFile(salvaged, path.name)


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
                path = recover_sqlite_copy(path, tmpdir())
            except sqlite3.DatabaseError as exc:
                raise BagReadError(f"bag {source.path}: {path.name} is not a readable sqlite3 database ({exc}); "
                                   "the file is corrupt") from exc
            source.warnings.append(f"{path.name}: left with an unfinished sqlite transaction (-journal/-wal file); "
                                   "read a copy that sqlite rolled back to its last commit")
        reader = Reader(path)
        try:
            reader.open()
        except Exception as exc:  # malformed (cut short, bad sectors): salvage the readable rows
            return _salvage_sqlite(source, path, tmpdir(), exc)
        return _StorageFile(reader, path.name)
    if path.suffix == ".mcap":
        reader = Reader(path)
        try:
            reader.open()
            return _StorageFile(reader, path.name)
        except Exception as exc:  # unfinished file: no footer/summary
            first_error = exc
        try:
            copy, lost = recover_mcap_copy(path, tmpdir())
        except ValueError as exc:
            raise BagReadError(f"bag {source.path}: {exc}") from None
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
        source.warnings.append(f"{path.name}: unfinished MCAP file (writer did not close it, or it was cut short: "
                               f"{first_error}); read its complete records ({lost:,} trailing bytes of an incomplete "
                               "record ignored)")
        return _StorageFile(mcap, path.name, scan_only=True)
    raise BagReadError(f"{path}: unknown storage file type {path.suffix!r}; expected .mcap or .db3 "
                       "(compressed .zstd bags need their metadata.yaml; decompress them with `ros2 bag convert`)")


def _expected(info: dict) -> _Expected | None:
    """Per-topic message counts and the time span a finished bag's metadata.yaml states (None if absent)."""
    try:
        counts = {str(entry["topic_metadata"]["name"]): int(entry["message_count"])
                  for entry in info.get("topics_with_message_count") or []}
        start = int(info["starting_time"]["nanoseconds_since_epoch"])
        return _Expected(counts, start, start + int(info["duration"]["nanoseconds"]))
    except (KeyError, TypeError, ValueError):
        return None


def _files_from_metadata(path: Path, metadata: Path,
                         found: list[Path]) -> tuple[list[Path] | None, str, _Expected | None]:
    """Storage files listed by metadata.yaml (in its order), or None and the reason it cannot be used; and
    what the metadata says the bag holds.

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
        return None, f"its metadata.yaml cannot be read ({type(exc).__name__}: {exc})", None
    if compression and compression != "none":
        raise BagReadError(f"bag {path} is compressed ({compression} mode, {info.get('compression_format')}); "
                           "decompress it first: `ros2 bag decompress` or `rosbags-convert`")
    if storage not in ("sqlite3", "mcap"):
        raise BagReadError(f"bag {path}: storage {storage!r} is not supported; convert it to mcap or sqlite3 "
                           "with `ros2 bag convert`")
    listed = [path / name for name in names]
    missing = [p.name for p in listed if not p.exists()]
    if missing:
        return None, f"its metadata.yaml lists missing file(s) {missing}", None
    note = ""
    extra = [p.name for p in found if p not in listed]
    if extra:
        note = f"bag {path}: storage file(s) {extra} are not listed in metadata.yaml and were not read"
    return listed, note, _expected(info)


def _opened(path: Path, files: list[Path], warnings: list[str], expected: _Expected | None = None) -> BagSource:
    source = BagSource(path, "mcap" if files and files[0].suffix == ".mcap" else "sqlite3", files, warnings,
                       _expected=expected)
    try:
        for file in files:
            source._parts.append(_open_file(source, file))
    except BaseException:
        source.close()
        raise
    return source


def open_bag(path: str | Path) -> BagSource:
    """Open a rosbag2 bag directory or storage file for reading (use as a context manager).

    Raises:
        BagReadError: the path does not exist, is not a bag, or a file is corrupt beyond salvage.
    """
    path = Path(path)
    if not path.exists():
        raise BagReadError(f"bag {path} does not exist; pass the bag directory (the one holding metadata.yaml) "
                           "or one .mcap/.db3 file")
    if path.is_file():
        return _opened(path, [path], [])

    files = sorted((p for p in path.iterdir() if p.suffix in (".mcap", ".db3") and p.is_file()), key=_split_index)
    metadata = path / "metadata.yaml"
    if metadata.exists():
        listed, note, expected = _files_from_metadata(path, metadata, files)
        if listed is not None:
            return _opened(path, listed, [note] if note else [], expected)
        if not files:
            raise BagReadError(f"bag {path}: {note}, and there are no .mcap/.db3 files; the bag is incomplete")
        note = f"bag {path}: {note}; read its {len(files)} storage file(s) directly"
    else:
        if not files:
            raise BagReadError(f"{path} is not a rosbag2 bag: no metadata.yaml and no .mcap/.db3 files in it")
        note = (f"bag {path} has no metadata.yaml (the recorder was probably killed before finishing the bag); "
                f"read its {len(files)} storage file(s) directly. To make a finished bag for other tools run "
                "`ros2 bag reindex` on it or robot_dynamics_id.io.bag_writer.repair_bag")
    if len({p.suffix for p in files}) > 1:
        raise BagReadError(f"bag {path} mixes .mcap and .db3 files and has no usable metadata.yaml; "
                           "move the files of one recording into their own directory")
    return _opened(path, files, [note])


def bag_summary(path: str | Path) -> str:
    """A few lines describing a bag: storage, files, topics, counts, warnings and losses."""
    with open_bag(path) as bag:
        lines = [f"bag {bag.path} [{bag.storage}], {len(bag.files)} file(s), {bag.message_count} messages"]
        lines += [f"  {t}: {m}, {c} msgs" for t, (m, c) in sorted(bag.topics.items())]
        if bag._expected is not None:
            readable = bag.topics
            for topic, total in sorted(bag._expected.counts.items()):
                count = readable.get(topic, ("", 0))[1]
                if count < total:
                    lines.append(f"  lost: {topic}: {count:,} of the {total:,} messages metadata.yaml lists are "
                                 "readable")
        lines += [f"  warning: {w}" for w in bag.warnings]
    return "\n".join(lines)
