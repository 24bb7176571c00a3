"""RTDE wire format (protocol version 2): package framing, field types, recipes.

Pure functions and small classes, no sockets. Every multi-byte value is
big-endian. A package is ``uint16 size`` (including the 3-byte header),
``uint8 type``, payload (UR "Real-Time Data Exchange (RTDE) Guide"; summarised in
shared/reference/rtde.md).

The field table matters: the ur_rtde client decodes output packages with its own
name -> type table, so every width here must equal a real controller's.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

__all__ = [
    "HEADER", "PackageType", "ProtocolError", "Recipe", "INPUT_FIELDS", "OUTPUT_FIELDS",
    "frame", "input_field_type", "output_field_type", "pack_values", "split_packages", "text_message",
    "unpack_values",
]

#: the package header: uint16 size (header included), uint8 type
HEADER = struct.Struct(">HB")
#: no package may exceed this (the size field is 16 bit)
MAX_PACKAGE_BYTES = 65535


class PackageType:
    """RTDE package type bytes (ASCII letters)."""

    REQUEST_PROTOCOL_VERSION = 86            # 'V'
    GET_URCONTROL_VERSION = 118              # 'v'
    TEXT_MESSAGE = 77                        # 'M'
    DATA_PACKAGE = 85                        # 'U'
    CONTROL_PACKAGE_SETUP_OUTPUTS = 79       # 'O'
    CONTROL_PACKAGE_SETUP_INPUTS = 73        # 'I'
    CONTROL_PACKAGE_START = 83               # 'S'
    CONTROL_PACKAGE_PAUSE = 80               # 'P'

    NAMES = {86: "REQUEST_PROTOCOL_VERSION", 118: "GET_URCONTROL_VERSION", 77: "TEXT_MESSAGE",
             85: "DATA_PACKAGE", 79: "CONTROL_PACKAGE_SETUP_OUTPUTS", 73: "CONTROL_PACKAGE_SETUP_INPUTS",
             83: "CONTROL_PACKAGE_START", 80: "CONTROL_PACKAGE_PAUSE"}


class ProtocolError(ValueError):
    """A package that cannot be parsed; the message says what is wrong with it."""


# struct codes of the RTDE types
_CODES = {
    "BOOL": "?", "UINT8": "B", "UINT32": "I", "UINT64": "Q", "INT32": "i", "DOUBLE": "d",
    "VECTOR3D": "3d", "VECTOR6D": "6d", "VECTOR6INT32": "6i", "VECTOR6UINT32": "6I",
}
_WIDTH = {"3d": 3, "6d": 6, "6i": 6, "6I": 6}

# Output fields of a UR controller (RTDE guide, "Field names and associated types").
_OUTPUTS: dict[str, str] = {
    "timestamp": "DOUBLE",
    "target_q": "VECTOR6D", "target_qd": "VECTOR6D", "target_qdd": "VECTOR6D",
    "target_current": "VECTOR6D", "target_moment": "VECTOR6D",
    "actual_q": "VECTOR6D", "actual_qd": "VECTOR6D", "actual_current": "VECTOR6D",
    "actual_current_window": "VECTOR6D", "joint_control_output": "VECTOR6D",
    "actual_TCP_pose": "VECTOR6D", "actual_TCP_speed": "VECTOR6D", "actual_TCP_force": "VECTOR6D",
    "target_TCP_pose": "VECTOR6D", "target_TCP_speed": "VECTOR6D",
    "actual_digital_input_bits": "UINT64", "joint_temperatures": "VECTOR6D",
    "actual_execution_time": "DOUBLE", "robot_mode": "INT32", "joint_mode": "VECTOR6INT32",
    "safety_mode": "INT32", "safety_status": "INT32", "actual_tool_accelerometer": "VECTOR3D",
    "speed_scaling": "DOUBLE", "target_speed_fraction": "DOUBLE", "actual_momentum": "DOUBLE",
    "actual_main_voltage": "DOUBLE", "actual_robot_voltage": "DOUBLE", "actual_robot_current": "DOUBLE",
    "actual_joint_voltage": "VECTOR6D", "actual_digital_output_bits": "UINT64",
    "runtime_state": "UINT32", "elbow_position": "VECTOR3D", "elbow_velocity": "VECTOR3D",
    "robot_status_bits": "UINT32", "safety_status_bits": "UINT32", "analog_io_types": "UINT32",
    "standard_analog_input0": "DOUBLE", "standard_analog_input1": "DOUBLE",
    "standard_analog_output0": "DOUBLE", "standard_analog_output1": "DOUBLE",
    "io_current": "DOUBLE", "euromap67_input_bits": "UINT32", "euromap67_output_bits": "UINT32",
    "euromap67_24V_voltage": "DOUBLE", "euromap67_24V_current": "DOUBLE",
    "tool_mode": "UINT32", "tool_analog_input_types": "UINT32",
    "tool_analog_input0": "DOUBLE", "tool_analog_input1": "DOUBLE",
    "tool_output_voltage": "INT32", "tool_output_current": "DOUBLE", "tool_temperature": "DOUBLE",
    "tcp_force_scalar": "DOUBLE", "output_bit_registers0_to_31": "UINT32",
    "output_bit_registers32_to_63": "UINT32", "input_bit_registers0_to_31": "UINT32",
    "input_bit_registers32_to_63": "UINT32", "tool_output_mode": "UINT8",
    "tool_digital_output0_mode": "UINT8", "tool_digital_output1_mode": "UINT8",
    "payload": "DOUBLE", "payload_cog": "VECTOR3D", "payload_inertia": "VECTOR6D",
    "script_control_line": "UINT32", "ft_raw_wrench": "VECTOR6D",
    "joint_position_deviation_ratio": "DOUBLE", "collision_detection_ratio": "DOUBLE",
    "time_scale_source": "UINT32", "actual_current_as_torque": "VECTOR6D",
}

# Input fields a client may write (RTDE guide).
_INPUTS: dict[str, str] = {
    "speed_slider_mask": "UINT32", "speed_slider_fraction": "DOUBLE",
    "standard_digital_output_mask": "UINT8", "standard_digital_output": "UINT8",
    "configurable_digital_output_mask": "UINT8", "configurable_digital_output": "UINT8",
    "tool_digital_output_mask": "UINT8", "tool_digital_output": "UINT8",
    "standard_analog_output_mask": "UINT8", "standard_analog_output_type": "UINT8",
    "standard_analog_output_0": "DOUBLE", "standard_analog_output_1": "DOUBLE",
    "input_bit_registers0_to_31": "UINT32", "input_bit_registers32_to_63": "UINT32",
    "external_force_torque": "VECTOR6D",
}

_REGISTER = re.compile(r"^(input|output)_(bit|int|double)_register_(\d+)$")
_REGISTER_TYPES = {"bit": "BOOL", "int": "INT32", "double": "DOUBLE"}


def _register_type(name: str, direction: str) -> str | None:
    m = _REGISTER.match(name)
    if not m:
        return None
    kind, index = m.group(2), int(m.group(3))
    # bit registers 64..127, int/double registers 0..47 (0..23 lower range, 24..47 upper range)
    if kind == "bit" and not 64 <= index <= 127:
        return None
    if kind != "bit" and not 0 <= index <= 47:
        return None
    if m.group(1) != direction and direction == "input":
        return None
    return _REGISTER_TYPES[kind]


def output_field_type(name: str) -> str | None:
    """RTDE type of an output (controller -> client) field, or None if the controller has none."""
    t = _OUTPUTS.get(name)
    if t is not None:
        return t
    # the controller also streams the input registers' current values as outputs
    return _register_type(name, "output")


def input_field_type(name: str) -> str | None:
    """RTDE type of an input (client -> controller) field, or None if no such input exists."""
    t = _INPUTS.get(name)
    if t is not None:
        return t
    return _register_type(name, "input")


#: every named (non-register) output and input field
OUTPUT_FIELDS: tuple[str, ...] = tuple(_OUTPUTS)
INPUT_FIELDS: tuple[str, ...] = tuple(_INPUTS)


@dataclass
class Recipe:
    """A negotiated list of fields and their binary layout."""

    recipe_id: int
    names: list[str]
    types: list[str]
    frequency_hz: float = 0.0
    codec: struct.Struct = field(init=False)

    def __post_init__(self) -> None:
        self.codec = struct.Struct(">" + "".join(_CODES[t] for t in self.types))


def pack_values(recipe: Recipe, values: dict) -> bytes:
    """Payload of a DATA_PACKAGE for ``recipe``: uint8 id + fields in recipe order."""
    flat: list = []
    for name, typ in zip(recipe.names, recipe.types):
        v = values[name]
        width = _WIDTH.get(_CODES[typ])
        if width is None:
            flat.append(v)
        else:
            flat.extend(v)
    return bytes((recipe.recipe_id,)) + recipe.codec.pack(*flat)


def unpack_values(recipe: Recipe, payload: bytes) -> dict:
    """Field values of a DATA_PACKAGE payload (recipe id byte already removed)."""
    if len(payload) != recipe.codec.size:
        raise ProtocolError(f"data package for recipe {recipe.recipe_id} has {len(payload)} bytes of fields, "
                            f"the recipe needs {recipe.codec.size}")
    flat = recipe.codec.unpack(payload)
    out = {}
    i = 0
    for name, typ in zip(recipe.names, recipe.types):
        width = _WIDTH.get(_CODES[typ])
        if width is None:
            out[name] = flat[i]
            i += 1
        else:
            out[name] = flat[i:i + width]
            i += width
    return out


def frame(package_type: int, payload: bytes = b"") -> bytes:
    """One package: header + payload."""
    size = HEADER.size + len(payload)
    if size > MAX_PACKAGE_BYTES:
        raise ProtocolError(f"package of {size} bytes exceeds the RTDE limit of {MAX_PACKAGE_BYTES}")
    return HEADER.pack(size, package_type) + payload


def split_packages(buffer: bytearray) -> list[tuple[int, bytes]]:
    """Remove and return every complete package (type, payload) at the start of ``buffer``.

    Raises :class:`ProtocolError` on a size field smaller than the header (the
    stream cannot be resynchronised then: the connection must be closed).
    """
    packages = []
    while len(buffer) >= HEADER.size:
        size, ptype = HEADER.unpack_from(buffer, 0)
        if size < HEADER.size:
            raise ProtocolError(f"package size field {size} is smaller than the 3-byte header")
        if len(buffer) < size:
            break
        packages.append((ptype, bytes(buffer[HEADER.size:size])))
        del buffer[:size]
    return packages


def text_message(message: str, source: str = "RTDE", level: int = 1) -> bytes:
    """A TEXT_MESSAGE package (protocol v2): uint8 len + text, uint8 len + source, uint8 level.

    Levels: 0 exception, 1 error, 2 warning, 3 info.
    """
    m = message.encode("utf-8", "replace")[:255]
    s = source.encode("utf-8", "replace")[:255]
    return frame(PackageType.TEXT_MESSAGE, bytes((len(m),)) + m + bytes((len(s),)) + s + bytes((level,)))
