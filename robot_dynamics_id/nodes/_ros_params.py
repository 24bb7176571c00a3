"""Declare a node's parameters from its table (robot_dynamics_id.parameters) and read them back."""

from __future__ import annotations

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..parameters import ParameterSpec

_TYPE = {
    "double": Parameter.Type.DOUBLE,
    "integer": Parameter.Type.INTEGER,
    "string": Parameter.Type.STRING,
    "bool": Parameter.Type.BOOL,
    "double_array": Parameter.Type.DOUBLE_ARRAY,
    "string_array": Parameter.Type.STRING_ARRAY,
}


def declare_parameters(node: Node, specs: tuple[ParameterSpec, ...]) -> dict:
    """Declare every parameter with its description and return {name: value} (None where unset)."""
    values = {}
    for spec in specs:
        description = spec.description + (f" [{spec.unit}]" if spec.unit else "")
        descriptor = ParameterDescriptor(description=description, read_only=True)
        if spec.default is None or (isinstance(spec.default, list) and not spec.default):
            # Empty defaults cannot carry a type in rclpy: declare typed and unset.
            node.declare_parameter(spec.name, _TYPE[spec.type], descriptor)
        else:
            node.declare_parameter(spec.name, spec.default, descriptor)
        try:
            value = node.get_parameter(spec.name).value
        except ParameterUninitializedException:
            value = None
        if value is not None and not isinstance(value, (str, bool, int, float)):
            value = list(value)  # rclpy returns array.array for numeric arrays
        values[spec.name] = value
    return values
