"""Reading what is left of damaged rosbag2 storage files: copies that sqlite or an MCAP reader can open.

Used by :mod:`.bag_storage`; nothing here modifies the user's files (every repair works on a copy in a
temporary directory).

* :func:`recover_sqlite_copy`: a ``.db3`` left with a ``-journal``/``-wal`` file (the recorder was
  killed inside a transaction): sqlite rolls the copy back / checkpoints it to its last commit.
* :func:`recover_mcap_copy`: an unfinished or cut-off ``.mcap``: the copy ends at the last complete
  record and gets an empty footer, so a reader scans its data section.
* :class:`SalvagedSqlite`: a ``.db3`` that sqlite calls malformed (cut in half by a copy, a bad
  sector): the rows that can still be read, in row order, with the ranges that could not. A file cut
  short keeps its first half intact; sqlite refuses it only because the header's page count exceeds the
  file, and because the message table's tree points past the end. The copy gets the real page count,
  and the rows are read in id order; where the tree is broken, reading resumes at the next readable id.
"""

from __future__ import annotations

import shutil
import sqlite3
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rosbags.interfaces import Connection, ConnectionExtRosbag2, MessageDefinition, MessageDefinitionFormat

__all__ = ["MCAP_MAGIC", "SalvagedSqlite", "recover_mcap_copy", "recover_sqlite_copy"]

MCAP_MAGIC = b"\x89MCAP0\r\n"
#: rows fetched per query while salvaging
_BATCH_ROWS = 5000
#: the largest skip past a broken page is 2**_RESUME_ATTEMPTS ids (the skip doubles with each failed read)
_RESUME_ATTEMPTS = 48


def recover_sqlite_copy(db: Path, tmpdir: Path) -> Path:
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


def mcap_complete_prefix(path: Path) -> int:
    """Length of an MCAP file's data section up to its last complete record.

    MCAP records are ``opcode (1 byte) + length (uint64 LE) + body``; the data
    section ends with a DataEnd record (0x0F). A killed writer leaves a file
    that stops somewhere inside the data section. Raises ValueError for a file without the MCAP magic.
    """
    size = path.stat().st_size
    with path.open("rb") as handle:
        if handle.read(8) != MCAP_MAGIC:
            raise ValueError(f"{path} is not an MCAP file (bad magic bytes); the file is corrupt")
        pos = 8
        while pos + 9 <= size:
            handle.seek(pos)
            head = handle.read(9)
            opcode, length = head[0], int.from_bytes(head[1:], "little")
            if opcode == 0x0F:  # DataEnd: the summary follows; keep the data section only
                return pos
            if pos + 9 + length > size:
                break
            pos += 9 + length
    return pos


def recover_mcap_copy(path: Path, tmpdir: Path) -> tuple[Path, int]:
    """A copy of an unfinished MCAP file cut at its last complete record and closed with an empty footer;
    also the number of trailing bytes left out."""
    end = mcap_complete_prefix(path)
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
        dst.write(MCAP_MAGIC)
    return copy, path.stat().st_size - end


@dataclass(frozen=True)
class UnreadableRows:
    """Message rows a salvage could not read: ids ``first_id``..``last_id`` (None: to the end of the file),
    between the readable rows received at ``after_ns`` and ``before_ns`` (None where there is none)."""

    first_id: int
    last_id: int | None
    after_ns: int | None
    before_ns: int | None


def _patched_copy(db: Path, tmpdir: Path) -> Path:
    """A copy cut to whole pages whose header states the page count the file really has."""
    data = bytearray(db.read_bytes())
    if len(data) < 100 or not data.startswith(b"SQLite format 3\x00"):
        raise sqlite3.DatabaseError("not a sqlite3 database (no 'SQLite format 3' header)")
    page = struct.unpack(">H", data[16:18])[0]
    page = 65536 if page == 1 else page
    pages = len(data) // page
    del data[pages * page:]
    if struct.unpack(">I", data[28:32])[0] > pages:
        data[28:32] = struct.pack(">I", pages)
    data[18:20] = b"\x01\x01"  # rollback journal mode: the copy has no -wal file
    copy = tmpdir / ("salvaged_" + db.name)
    copy.write_bytes(bytes(data))
    return copy


class SalvagedSqlite:
    """The readable rows of a damaged rosbag2 sqlite3 file, as a storage reader for :mod:`.bag_storage`.

    Offers what :class:`rosbags.rosbag2.Reader` offers there: ``connections`` (with the count of readable
    messages) and ``messages(connections)``; :attr:`unreadable` lists the row ranges that were lost and
    :attr:`rows_read` how many rows were read. Raises ``sqlite3.DatabaseError`` when not even the topic
    table can be read.
    """

    def __init__(self, db: Path, tmpdir: Path) -> None:
        self._db = sqlite3.connect(f"file:{_patched_copy(db, tmpdir)}?mode=ro", uri=True)
        topics = self._db.execute("SELECT id, name, type, serialization_format FROM topics ORDER BY id").fetchall()
        definitions = self._definitions()
        self._ranges, self.unreadable = self._scan()
        counts: dict[int, int] = {}
        for _, _, topic_counts in self._ranges:
            for topic_id, count in topic_counts.items():
                counts[topic_id] = counts.get(topic_id, 0) + count
        self.rows_read = sum(counts.values())
        self.connections: list[Connection] = []
        for topic_id, name, msgtype, serialization in topics:
            kind, text, digest = definitions.get(msgtype, (MessageDefinitionFormat.NONE, "", ""))
            msgdef = MessageDefinition(kind if text else MessageDefinitionFormat.NONE, text)
            self.connections.append(Connection(topic_id, name, msgtype, msgdef, digest, counts.get(topic_id, 0),
                                               ConnectionExtRosbag2(serialization or "cdr", []), self))

    def _definitions(self) -> dict[str, tuple[MessageDefinitionFormat, str, str]]:
        """type -> (format, definition text, RIHS01 hash) from the message_definitions table (schema 4)."""
        try:
            rows = self._db.execute("SELECT topic_type, encoding, encoded_message_definition, type_description_hash "
                                    "FROM message_definitions").fetchall()
        except sqlite3.DatabaseError:  # absent (schema < 4) or unreadable: decoding uses the typestore
            return {}
        formats = {"ros2msg": MessageDefinitionFormat.MSG, "ros2idl": MessageDefinitionFormat.IDL}
        return {msgtype: (formats.get(encoding, MessageDefinitionFormat.NONE), text or "", digest or "")
                for msgtype, encoding, text, digest in rows}

    def _scan(self) -> tuple[list[tuple[int, int, dict[int, int]]], list[UnreadableRows]]:
        """Readable id ranges (first id, last id, messages per topic) and the unreadable stretches between.

        Rows are read in id order until sqlite reports a broken page; reading then resumes past it, skipping
        1, 2, 4, ... ids until a read succeeds again (so a stretch reported unreadable may include a few rows
        that a finer search would have found)."""
        ranges: list[tuple[int, int, dict[int, int]]] = []
        unreadable: list[UnreadableRows] = []
        pos, last_ns, skip = 0, None, 1
        gap: tuple[int, int | None] | None = None  # (first unreadable id, receive time before it)
        for _ in range(_RESUME_ATTEMPTS * 64):
            start, counts, broken = None, {}, False
            try:
                for row_id, topic_id, stamp in self._db.execute(
                        "SELECT id, topic_id, timestamp FROM messages WHERE id > ? ORDER BY id", (pos,)):
                    if gap is not None:
                        unreadable.append(UnreadableRows(gap[0], row_id - 1, gap[1], int(stamp)))
                        gap = None
                    start = row_id if start is None else start
                    counts[topic_id] = counts.get(topic_id, 0) + 1
                    pos, last_ns = row_id, int(stamp)
            except sqlite3.DatabaseError:
                broken = True
            if start is not None:
                ranges.append((start, pos, counts))
            if not broken:
                break
            if gap is None:
                gap = (pos + 1, last_ns)
            skip = 1 if start is not None else skip * 2
            if skip > 2 ** _RESUME_ATTEMPTS:
                break
            pos += skip
        if gap is not None:
            unreadable.append(UnreadableRows(gap[0], None, gap[1], None))
        return ranges, unreadable

    def messages(self, connections: list[Connection]) -> Iterator[tuple[Connection, int, bytes]]:
        """(connection, receive time ns, CDR bytes) of the readable rows of those connections, in row order."""
        wanted = {c.id: c for c in connections}
        marks = ",".join("?" * len(wanted))
        for first, last, _ in self._ranges:
            cursor = first - 1
            while cursor < last:
                rows = self._db.execute(
                    f"SELECT id, topic_id, timestamp, data FROM messages WHERE id > ? AND id <= ? AND topic_id IN "
                    f"({marks}) ORDER BY id LIMIT ?", (cursor, last, *wanted, _BATCH_ROWS)).fetchall()
                if not rows:
                    break
                for _, topic_id, stamp, data in rows:
                    yield wanted[topic_id], int(stamp), bytes(data)
                cursor = rows[-1][0]

    def close(self) -> None:
        self._db.close()
