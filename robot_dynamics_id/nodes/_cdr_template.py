"""A message's serialized (CDR) bytes rewritten in place: the 500 Hz state topics without rclpy's conversion.

``Publisher.publish(msg)`` converts the Python message field by field into its C struct (every joint name
string, every array) and rmw serializes that struct again, at each of the robot's 500 samples a second on
five topics. The state topics differ from one sample to the next only in the header stamp and in a few
fixed-length float64 arrays, so :class:`CdrTemplate` serializes the message once with rclpy's own serializer
(the layout, alignment and encapsulation are rclpy's, not re-implemented here), finds where the stamp and
those arrays lie in the bytes, and afterwards writes just those bytes. ``Publisher.publish(bytes)`` (rclpy's
serialized publish, ``rcl_publish_serialized_message``; Foxy and later) sends them unchanged: the subscribers
receive the same bytes the typed publish would have produced (test/nodes/test_cdr_template.py checks them
against ``serialize_message``).

No ROS graph here: only ``rclpy.serialization``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from rclpy.serialization import serialize_message

__all__ = ["CdrTemplate", "CdrTemplateError", "sentinel_block"]

#: builtin_interfaces/Time as CDR: int32 sec, uint32 nanosec, little endian
_STAMP = struct.Struct("<iI")
#: stamp values that cannot be confused with anything else in the bytes (nanosec stays below 1e9)
_SEC_SENTINEL, _NSEC_SENTINEL = 0x5A3C1234, 0x2B2D5678
#: the 4-byte CDR encapsulation header of little-endian plain CDR (XCDR1 CDR_LE, the ROS 2 default)
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
        msg: a message with a ``header`` whose float64 fields that change are filled with
            :func:`sentinel_block` values (block ``k`` = ``sentinel_block(k, length)``); everything else
            (joint names, frame id) is what every published message carries.
        block_lengths: the length of each block, in the order of their sentinel indices. A block is a run of
            consecutive float64 values in the bytes: one array field (``position``), or consecutive scalar
            fields (a wrench's force and torque).

    Raises:
        CdrTemplateError: a sentinel is not found exactly once, or the bytes are not little-endian CDR.
    """

    def __init__(self, msg, block_lengths: Sequence[int]) -> None:
        msg.header.stamp.sec, msg.header.stamp.nanosec = _SEC_SENTINEL, _NSEC_SENTINEL
        data = serialize_message(msg)
        if data[:2] != _CDR_LE:
            raise CdrTemplateError(f"the serialized {type(msg).__name__} is not little-endian CDR "
                                   f"(encapsulation {data[:4].hex()}): publish typed messages instead")
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
