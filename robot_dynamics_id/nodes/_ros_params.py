"""Declare a node's parameters from its tables (robot_dynamics_id.parameters), check what it was given, read them.

Every node calls :func:`declare_parameters` once, with every table it declares, before it starts any
work. Besides declaring, it

* refuses a parameter the node does not have (a misspelt ``wachdog_s`` would otherwise be ignored and
  the default used), naming the closest known name (difflib) and where it was set; names that only a
  ``/**`` wildcard section sets are meant for other nodes too and are ignored with a warning;
* accepts an integer where a double is expected (``rate_hz:=500``), an integer list for a double list,
  and a whole double for an integer; any other type mismatch is one line naming the parameter, the
  value, where it was set and how to write it.

The values a node was given come from rclpy's ``Node._parameter_overrides`` (the ``--params-file`` /
``-p`` values for this node). rclpy has no public accessor for them before declaration (Humble to
Kilted); the public alternative, ``automatically_declare_parameters_from_overrides``, would declare
every given name untyped, which is what must not happen.
"""

from __future__ import annotations

import difflib
import sys

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..parameters import ParameterError, ParameterSpec
from ._param_files import ParameterSources, parameter_sources

__all__ = ["declare_parameters"]

_TYPE = {
    "double": Parameter.Type.DOUBLE,
    "integer": Parameter.Type.INTEGER,
    "string": Parameter.Type.STRING,
    "bool": Parameter.Type.BOOL,
    "double_array": Parameter.Type.DOUBLE_ARRAY,
    "string_array": Parameter.Type.STRING_ARRAY,
}
_TYPE_NAMES = {
    Parameter.Type.BOOL: "a bool", Parameter.Type.INTEGER: "an integer", Parameter.Type.DOUBLE: "a double",
    Parameter.Type.STRING: "a string", Parameter.Type.BYTE_ARRAY: "a byte list",
    Parameter.Type.BOOL_ARRAY: "a list of bools", Parameter.Type.INTEGER_ARRAY: "a list of integers",
    Parameter.Type.DOUBLE_ARRAY: "a list of doubles", Parameter.Type.STRING_ARRAY: "a list of strings",
}
_HOW_TO_WRITE = {
    "double": "a number with a decimal point, e.g. 0.5",
    "integer": "a whole number, e.g. 3",
    "string": "text; quote it when YAML would read a number or true/false, e.g. \"ur3\"",
    "bool": "true or false",
    "double_array": "a list of numbers, e.g. [0.1, 0.2]",
    "string_array": "a list of quoted strings, e.g. [\"x\", \"y\"]",
}
#: parameters rclpy itself handles for every node
_RCLPY_PREFIXES = ("qos_overrides.",)


def _coerce(name: str, given: Parameter, spec: ParameterSpec, sources: ParameterSources) -> Parameter:
    """The given value in the spec's type where that loses nothing; else ParameterError in one line."""
    want = _TYPE[spec.type]
    got, value = given.type_, given.value
    if got in (want, Parameter.Type.NOT_SET):
        return given
    if want == Parameter.Type.DOUBLE and got == Parameter.Type.INTEGER:
        return Parameter(name, Parameter.Type.DOUBLE, float(value))
    if want == Parameter.Type.DOUBLE_ARRAY and got == Parameter.Type.INTEGER_ARRAY:
        return Parameter(name, Parameter.Type.DOUBLE_ARRAY, [float(v) for v in value])
    if want == Parameter.Type.INTEGER and got == Parameter.Type.DOUBLE and float(value).is_integer():
        return Parameter(name, Parameter.Type.INTEGER, int(value))
    shown = list(value) if got in (Parameter.Type.INTEGER_ARRAY, Parameter.Type.DOUBLE_ARRAY,
                                   Parameter.Type.BOOL_ARRAY) else value
    raise ParameterError(f"parameter {name!r} = {shown!r}{sources.describe(name)} is {_TYPE_NAMES.get(got, got)}, "
                         f"but {name} must be {_HOW_TO_WRITE[spec.type]}")


def _unknown_parameters(node: Node, given: dict, known: list[str], sources: ParameterSources) -> list[str]:
    """Names given to the node that it does not declare; raises ParameterError for those set for it."""
    declared = set(node._parameters)  # includes rclpy's own (use_sim_time, start_type_description_service)
    unknown = sorted(n for n in given if n not in declared and not n.startswith(_RCLPY_PREFIXES))
    errors = []
    for name in unknown:
        if name in sources.wildcard_only:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f": did you mean {close[0]!r}?" if close else ""
        errors.append(f"{name!r}{sources.describe(name)}{hint}")
    if errors:
        plural = "s" if len(errors) > 1 else ""
        raise ParameterError(f"unknown parameter{plural} {'; '.join(errors)} ({node.get_name()} has no such "
                             f"parameter; every one it has: rdi params {node.get_name()})")
    return [n for n in unknown if n in sources.wildcard_only]


def declare_parameters(node: Node, *tables: tuple[ParameterSpec, ...], argv: list[str] | None = None) -> dict:
    """Declare every parameter of ``tables`` with its description and return {name: value} (None where unset).

    Call it once per node, with every table the node has, before any work starts: it also refuses
    parameters the node does not have (see the module docstring). ``argv``: the command line the node
    was started with (default ``sys.argv``), to say where a bad value was set.

    Raises:
        ParameterError: an unknown parameter (with the closest known name) or a value of the wrong type.
    """
    specs = [spec for table in tables for spec in table]
    sources = parameter_sources(list(sys.argv if argv is None else argv), node.get_name(),
                                node.get_fully_qualified_name())
    given = getattr(node, "_parameter_overrides", {})
    for spec in specs:
        if spec.name in given:
            given[spec.name] = _coerce(spec.name, given[spec.name], spec, sources)
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
    ignored = _unknown_parameters(node, given, [s.name for s in specs], sources)
    if ignored:
        node.get_logger().warning(f"parameters {ignored} from a '/**' section are not {node.get_name()}'s; ignored")
    return values
