"""Where a node's parameters come from: the ``--ros-args`` of its command line and the parameter files.

rcl reads the parameter files and ``-p`` rules itself, but it reports a broken file as a traceback
from ``rclpy.init`` and cannot say which file set a value. This module reads the same command line
(no rclpy): :func:`check_parameter_files` finds a missing, unreadable or malformed file before rcl does
and says so in one line; :func:`parameter_sources` tells, for every parameter a node is given, where it
was set (file or command line) and whether only a ``/**`` wildcard section set it (meant for every
node of a launch, so a name this node does not know is not an error there).
"""

from __future__ import annotations

import difflib
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..parameters import ParameterError

__all__ = ["ParameterSources", "check_parameter_files", "parameter_files", "parameter_sources"]

_PARAMS_FILE_FLAGS = ("--params-file",)
_PARAM_FLAGS = ("-p", "--param")
#: ROS arguments that take one value, skipped while looking for the ones above
_VALUE_FLAGS = ("-r", "--remap", "-e", "--enclave", "--log-level", "--log-config-file", "--log-file-name")


def _ros_arguments(argv: list[str]) -> list[tuple[str, str]]:
    """(flag, value) of every parameter-related argument inside ``--ros-args ... [--]`` blocks."""
    found: list[tuple[str, str]] = []
    inside = False
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--ros-args":
            inside = True
        elif arg == "--" and inside:
            inside = False
        elif inside and (arg in _PARAMS_FILE_FLAGS or arg in _PARAM_FLAGS) and i + 1 < len(args):
            found.append((arg, args[i + 1]))
            i += 1
        elif inside and arg in _VALUE_FLAGS:
            i += 1
        i += 1
    return found


def parameter_files(argv: list[str]) -> list[str]:
    """The ``--params-file`` paths of a command line, in order."""
    return [value for flag, value in _ros_arguments(argv) if flag in _PARAMS_FILE_FLAGS]


def _load(path: str) -> dict:
    """A parameter file's document; ParameterError in one line naming the file, the problem and the fix."""
    file = Path(path)
    if not file.exists():
        raise ParameterError(f"parameter file {path} does not exist: check the path given to --params-file")
    if not file.is_file():
        raise ParameterError(f"parameter file {path} is not a file (a directory?): give the .yaml file to "
                             "--params-file")
    try:
        text = file.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"parameter file {path} cannot be read ({exc}): check its permissions") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParameterError(f"parameter file {path} is not valid YAML{where}: {problem}; fix the file (a list is "
                             "[a, b], text with ':' or '#' needs quotes)") from None
    if document is None:
        return {}
    if not isinstance(document, dict):
        raise ParameterError(f"parameter file {path} must map node names to 'ros__parameters:' sections, e.g. "
                             "'ur_interface:\\n  ros__parameters:\\n    watchdog_s: 0.04'")
    for node, section in document.items():
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise ParameterError(f"parameter file {path}: section {node!r} has no 'ros__parameters:' key; write "
                                 f"'{node}:\\n  ros__parameters:\\n    name: value'")
        if not isinstance(section["ros__parameters"], dict):
            raise ParameterError(f"parameter file {path}: {node}/ros__parameters must be a mapping of "
                                 "parameter names to values")
    return document


def check_parameter_files(argv: list[str]) -> None:
    """Raise ParameterError (one line: file, problem, fix) for a parameter file rcl would fail to read."""
    for path in parameter_files(argv):
        _load(path)


def _section_matches(key: str, node_name: str, fully_qualified: str) -> str | None:
    """'node' when the section key names this node, 'wildcard' for a pattern that matches every node."""
    key = str(key)
    if key in ("/**", "**"):
        return "wildcard"
    if key in (node_name, fully_qualified) or (not key.startswith("/") and "/" + key == fully_qualified):
        return "node"
    pattern = key if key.startswith("/") else "/" + key
    if any(c in pattern for c in "*?") and fnmatch.fnmatchcase(fully_qualified, pattern.replace("**", "*")):
        return "node"
    return None


def _flat_names(parameters: dict, prefix: str = "") -> list[str]:
    """Parameter names as rcl forms them: nested mappings join with dots (``qos_overrides./topic.depth``)."""
    names: list[str] = []
    for key, value in parameters.items():
        name = f"{prefix}{key}"
        names += _flat_names(value, name + ".") if isinstance(value, dict) else [name]
    return names


@dataclass
class ParameterSources:
    """For each parameter name given to a node: where (``in FILE`` / ``on the command line``) and how."""

    where: dict[str, str] = field(default_factory=dict)
    #: names that only a ``/**`` wildcard section sets
    wildcard_only: set[str] = field(default_factory=set)

    def describe(self, name: str) -> str:
        """' (in config/ur3.yaml)' or ' (on the command line)', or '' when unknown."""
        where = self.where.get(name)
        return f" ({where})" if where else ""


def parameter_sources(argv: list[str], node_name: str, fully_qualified: str | None = None) -> ParameterSources:
    """Where each parameter of node ``node_name`` is set on this command line (later settings win, as in rcl).

    Unreadable files are skipped here (:func:`check_parameter_files` reports them before rcl starts)."""
    fully_qualified = fully_qualified or "/" + node_name
    sources = ParameterSources()
    specific: set[str] = set()
    for flag, value in _ros_arguments(argv):
        if flag in _PARAM_FLAGS:
            name = value.split(":=", 1)[0]
            if ":" in name:  # node:name:=value applies to that node only
                target, _, name = name.rpartition(":")
                if target not in (node_name, fully_qualified):
                    continue
            sources.where[name] = "on the command line"
            specific.add(name)
            continue
        try:
            document = _load(value)
        except ParameterError:
            continue
        if document and not any(_section_matches(key, node_name, fully_qualified) for key in document):
            # rcl would ignore the whole file: every value in it silently at its default (a misspelt section)
            close = difflib.get_close_matches(node_name, [str(k).lstrip("/") for k in document], n=1, cutoff=0.6)
            hint = f" (did you mean {node_name!r} for {close[0]!r}?)" if close else ""
            raise ParameterError(f"parameter file {value} has no section for node {node_name!r}: its sections are "
                                 f"{[str(k) for k in document]}{hint}, so every value in it would be ignored. Name "
                                 f"the section '{node_name}:' (or '/**:' for every node)")
        for key, section in document.items():
            kind = _section_matches(key, node_name, fully_qualified)
            if kind is None:
                continue
            for name in _flat_names(section["ros__parameters"]):
                sources.where[name] = f"in {value}"
                if kind == "node":
                    specific.add(name)
    sources.wildcard_only = set(sources.where) - specific
    return sources
