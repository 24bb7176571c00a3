"""A message's serialized (CDR) bytes rewritten in place: the 500 Hz state topics without rclpy's conversion.

``Publisher.publish(msg)`` converts the Python message field by field into its C struct (every joint name
string, every array) and rmw serializes that struct again, at each of the robot's 500 samples a second on
five topics. The state topics differ from one sample to the next only in the header stamp and in a few
fixed-length float64 arrays, so :class:`CdrTemplate` serializes the message once, finds where the stamp and
those arrays lie in the bytes, and afterwards writes just those bytes. ``Publisher.publish(bytes)`` (rclpy's
serialized publish, ``rcl_publish_serialized_message``; Foxy and later) sends them unchanged.

The template is serialized by rosbags (the bag reader's own CDR implementation: exact length, zeroed
padding), not by ``rclpy.serialization.serialize_message``: that returns a buffer longer than the message
with uninitialised padding bytes, which rosbags refuses to read back ("CDR message size mismatch"; measured
with Kilted's rclpy 9.1.2). test/nodes/test_cdr_template.py checks the bytes against what a typed publish
puts on the wire, for every shape of the state topics.

No ROS graph here.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from ..io.bag_writer import default_typestore

__all__ = ["CdrTemplate", "CdrTemplateError", "joint_state_template", "sentinel_block", "wrench_template"]

#: builtin_interfaces/Time as CDR: int32 sec, uint32 nanosec, little endian
_STAMP = struct.Struct("<iI")
#: stamp values that cannot be confused with anything else in the bytes (nanosec stays below 1e9)
_SEC_SENTINEL, _NSEC_SENTINEL = 0x5A3C1234, 0x2B2D5678
#: the first two bytes of the CDR encapsulation header of little-endian plain CDR (the ROS 2 default)
_CDR_LE = b"\x00\x01"


class CdrTemplateError(ValueError):
    """The message's bytes do not have the layout the template needs (a sentinel not found exactly once, a
    big-endian encapsulation, or values of another length than the template's)."""


def sentinel_block(index: int, length: int) -> list[float]:
    """``length`` float64 values that identify block ``index`` in a message's bytes (distinct, non-round)."""
    return [-987654.321 - 1000.0 * index - 7.0 * k for k in range(length)]


def _find_once(data: bytes, needle: bytes, what: str) -> int:
    at = data.find(needle)
    if at < 0 or data.find(needle, at + 1) >= 0:
        raise CdrTemplateError(f"{what} is not found exactly once in the serialized message")
    return at


class CdrTemplate:
    """Serialized bytes of ``msg`` whose header stamp and float64 blocks are rewritten for each publish.

    Args:
        data: the serialized message, its header stamp set to the sentinel stamp and the float64 fields that
            change filled with :func:`sentinel_block` values (block ``k`` = ``sentinel_block(k, length)``);
            everything else (joint names, frame id) is what every published message carries. Made by
            :func:`joint_state_template` and :func:`wrench_template`.
        block_lengths: the length of each block, in the order of their sentinel indices. A block is a run of
            consecutive float64 values in the bytes: one array field (``position``), or consecutive scalar
            fields (a wrench's force and torque).

    Raises:
        CdrTemplateError: a sentinel is not found exactly once, or the bytes are not little-endian CDR.
    """

    def __init__(self, data: bytes, block_lengths: Sequence[int]) -> None:
        if data[:2] != _CDR_LE:
            raise CdrTemplateError(f"the serialized message is not little-endian CDR (encapsulation "
                                   f"{data[:4].hex()})")
        self._stamp_at = _find_once(data, _STAMP.pack(_SEC_SENTINEL, _NSEC_SENTINEL), "the header stamp")
        self._blocks: list[tuple[int, int]] = []  # (byte offset, byte length)
        for index, length in enumerate(block_lengths):
            sentinel = np.asarray(sentinel_block(index, int(length)), "<f8").tobytes()
            if length:
                self._blocks.append((_find_once(data, sentinel, f"float64 block {index}"), len(sentinel)))
            else:
                self._blocks.append((0, 0))
        self._buffer = bytearray(data)
        self._view = memoryview(self._buffer)

    def fill(self, stamp_sec: int, stamp_nanosec: int, *blocks) -> bytes:
        """The message's bytes with this stamp and these values (one array-like per block, each of the
        template's length; the values are converted to float64)."""
        view = self._view
        _STAMP.pack_into(self._buffer, self._stamp_at, stamp_sec, stamp_nanosec)
        for (at, size), values in zip(self._blocks, blocks, strict=True):
            if size:
                raw = np.asarray(values, "<f8").tobytes()
                if len(raw) != size:
                    raise CdrTemplateError(f"{len(raw) // 8} values for a block of {size // 8}")
                view[at:at + size] = raw
        return bytes(self._buffer)


def _sentinel_stamp():
    ts = default_typestore()
    Header, Time = ts.types["std_msgs/msg/Header"], ts.types["builtin_interfaces/msg/Time"]
    return Header, Time(sec=_SEC_SENTINEL, nanosec=_NSEC_SENTINEL)


def joint_state_template(names: Sequence[str], lengths: tuple[int, int, int], frame_id: str = "") -> CdrTemplate:
    """sensor_msgs/JointState with these joint names and (position, velocity, effort) of these lengths
    (0: the array stays empty); fill with ``(sec, nanosec, position, velocity, effort)``."""
    ts = default_typestore()
    Header, stamp = _sentinel_stamp()
    arrays = [np.asarray(sentinel_block(k, m), float) for k, m in enumerate(lengths)]
    msg = ts.types["sensor_msgs/msg/JointState"](header=Header(stamp=stamp, frame_id=frame_id), name=list(names),
                                                 position=arrays[0], velocity=arrays[1], effort=arrays[2])
    return CdrTemplate(bytes(ts.serialize_cdr(msg, "sensor_msgs/msg/JointState")), lengths)


def wrench_template(frame_id: str) -> CdrTemplate:
    """geometry_msgs/WrenchStamped in ``frame_id``; fill with ``(sec, nanosec, [fx, fy, fz, tx, ty, tz])``."""
    ts = default_typestore()
    Header, stamp = _sentinel_stamp()
    Vector3, Wrench = ts.types["geometry_msgs/msg/Vector3"], ts.types["geometry_msgs/msg/Wrench"]
    f = sentinel_block(0, 6)
    msg = ts.types["geometry_msgs/msg/WrenchStamped"](
        header=Header(stamp=stamp, frame_id=frame_id),
        wrench=Wrench(force=Vector3(x=f[0], y=f[1], z=f[2]), torque=Vector3(x=f[3], y=f[4], z=f[5])))
    return CdrTemplate(bytes(ts.serialize_cdr(msg, "geometry_msgs/msg/WrenchStamped")), (6,))
