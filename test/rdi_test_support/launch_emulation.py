"""Run this package's launch files where ROS 2 ``launch`` is not installed (test-only, never installed).

``ros2 launch`` imports a Python launch file and calls
``generate_launch_description()``. Where ``launch``/``launch_ros`` are missing
(the PyPI ROS wheels do not carry them), :func:`plan_launch` executes the same
file against small stand-ins of the classes our launch files use, resolves the
substitutions for the given launch arguments, and returns the processes the
launch file describes (:class:`robot_dynamics_id.node_launch.NodeLaunch`).

The tests start the package's nodes through this, so they run the same
executables with the same parameter files as the launch files, and check that
the runtime plans of robot_dynamics_id.node_launch (what ``rdi demo`` starts)
agree. Only the constructs our launch files use are supported; anything else
raises :class:`LaunchEmulationError` naming it. On a ROS machine use ``ros2 launch``.
"""

from __future__ import annotations

import abc
import contextlib
import runpy
import sys
import types
from pathlib import Path
from typing import Any

from robot_dynamics_id.node_launch import PACKAGE, NodeLaunch, node_command, package_share

__all__ = ["LaunchEmulationError", "NodeLaunch", "declared_arguments", "node_command", "package_share", "plan_launch"]


class LaunchEmulationError(RuntimeError):
    """The launch file uses something the emulation does not support, or an argument is missing."""


# ---- stand-ins for launch / launch_ros --------------------------------------------------------------
class _Context:
    def __init__(self, arguments: dict[str, str]):
        self.arguments = dict(arguments)


def _perform(value: Any, ctx: _Context) -> Any:
    if isinstance(value, _Substitution):
        return value.perform(ctx)
    if isinstance(value, (list, tuple)):
        return "".join(str(_perform(v, ctx)) for v in value)
    return value


def _perform_parameter(value: Any, ctx: _Context) -> Any:
    """A parameter value: as launch_ros does, a list of plain values is an array, a list of substitutions a string."""
    if isinstance(value, (list, tuple)) and not any(isinstance(v, _Substitution) for v in value):
        return list(value)
    return _perform(value, ctx)


class _Substitution(abc.ABC):
    """Base of the stand-in substitutions: each resolves itself for the given launch arguments."""

    @abc.abstractmethod
    def perform(self, ctx: _Context) -> str:
        """The substitution's text for these launch arguments."""


class _TextSubstitution(_Substitution):
    def __init__(self, *, text: str):
        self.text = text

    def perform(self, ctx):
        return self.text


class _LaunchConfiguration(_Substitution):
    def __init__(self, variable_name: str, *, default: Any = None):
        self.name = variable_name
        self.default = default

    def perform(self, ctx):
        if self.name in ctx.arguments:
            return ctx.arguments[self.name]
        if self.default is not None:
            return _perform(self.default, ctx)
        raise LaunchEmulationError(f"launch argument {self.name!r} has no value and no default")


class _PathJoinSubstitution(_Substitution):
    def __init__(self, substitutions):
        self.parts = substitutions

    def perform(self, ctx):
        return str(Path(*[str(_perform(p, ctx)) for p in self.parts]))


class _PythonExpression(_Substitution):
    def __init__(self, expression):
        self.expression = expression

    def perform(self, ctx):
        text = _perform(list(self.expression), ctx)
        return str(eval(text, {"__builtins__": {}}, {}))  # launch evaluates the same way


class _FindPackageShare(_Substitution):
    def __init__(self, package):
        self.package = package

    def perform(self, ctx):
        if _perform(self.package, ctx) != PACKAGE:
            raise LaunchEmulationError(f"FindPackageShare({self.package!r}): only {PACKAGE} is known here")
        return str(package_share())


class _Condition:
    def __init__(self, predicate, negate=False):
        self.predicate = predicate
        self.negate = negate

    def evaluate(self, ctx) -> bool:
        text = str(_perform(self.predicate, ctx)).strip().lower()
        if text not in ("true", "false", "1", "0"):
            raise LaunchEmulationError(f"condition value {text!r} is not true/false")
        value = text in ("true", "1")
        return not value if self.negate else value


def _if_condition(predicate_expression):
    return _Condition(predicate_expression)


def _unless_condition(predicate_expression):
    return _Condition(predicate_expression, negate=True)


class _DeclareLaunchArgument:
    def __init__(self, name, *, default_value=None, description="", choices=None):
        self.name = name
        self.default_value = default_value
        self.description = description
        self.choices = choices


class _LaunchDescription:
    def __init__(self, initial_entities=None):
        self.entities = list(initial_entities or [])


class _Node:
    def __init__(self, *, package, executable, name=None, output=None, parameters=None, arguments=None,
                 remappings=None, condition=None, namespace=None, emulate_tty=None, respawn=None):
        self.kwargs = dict(package=package, executable=executable, name=name, parameters=parameters or [],
                           arguments=arguments or [], remappings=remappings or [], condition=condition)


class _Shutdown:
    def __init__(self, *, reason="shutdown"):
        self.reason = reason


class _EmitEvent:
    def __init__(self, *, event):
        self.event = event


class _OnProcessExit:
    def __init__(self, *, target_action=None, on_exit=None):
        self.target_action = target_action
        self.on_exit = on_exit if isinstance(on_exit, list) else [on_exit]


class _RegisterEventHandler:
    def __init__(self, event_handler):
        self.event_handler = event_handler


class _PythonLaunchDescriptionSource:
    def __init__(self, launch_file_path):
        self.path = launch_file_path


class _IncludeLaunchDescription:
    def __init__(self, launch_description_source, *, launch_arguments=None, condition=None):
        self.source = launch_description_source
        self.launch_arguments = launch_arguments
        self.condition = condition


def _stub_modules() -> dict[str, types.ModuleType]:
    def module(name, **attrs):
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        return m

    return {
        "launch": module("launch", LaunchDescription=_LaunchDescription),
        "launch.actions": module("launch.actions", DeclareLaunchArgument=_DeclareLaunchArgument,
                                 IncludeLaunchDescription=_IncludeLaunchDescription, EmitEvent=_EmitEvent,
                                 RegisterEventHandler=_RegisterEventHandler),
        "launch.event_handlers": module("launch.event_handlers", OnProcessExit=_OnProcessExit),
        "launch.events": module("launch.events", Shutdown=_Shutdown),
        "launch.substitutions": module("launch.substitutions", LaunchConfiguration=_LaunchConfiguration,
                                       PathJoinSubstitution=_PathJoinSubstitution,
                                       PythonExpression=_PythonExpression, TextSubstitution=_TextSubstitution),
        "launch.conditions": module("launch.conditions", IfCondition=_if_condition,
                                    UnlessCondition=_unless_condition),
        "launch.launch_description_sources": module(
            "launch.launch_description_sources", PythonLaunchDescriptionSource=_PythonLaunchDescriptionSource),
        "launch_ros": module("launch_ros"),
        "launch_ros.actions": module("launch_ros.actions", Node=_Node),
        "launch_ros.substitutions": module("launch_ros.substitutions", FindPackageShare=_FindPackageShare),
    }


@contextlib.contextmanager
def _stubbed_launch():
    stubs = _stub_modules()
    saved = {name: sys.modules.get(name) for name in stubs}
    sys.modules.update(stubs)
    try:
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def declared_arguments(launch_file: str | Path) -> dict[str, _DeclareLaunchArgument]:
    """The launch arguments a launch file declares (name → declaration)."""
    with _stubbed_launch():
        description = runpy.run_path(str(launch_file))["generate_launch_description"]()
    return {e.name: e for e in description.entities if isinstance(e, _DeclareLaunchArgument)}


def plan_launch(launch_file: str | Path, arguments: dict[str, str] | None = None) -> list[NodeLaunch]:
    """The nodes ``ros2 launch <launch_file> k:=v ...`` would start, substitutions resolved."""
    path = Path(launch_file)
    if not path.is_file():
        candidate = package_share() / "launch" / str(launch_file)
        if not candidate.is_file():
            raise LaunchEmulationError(f"launch file {launch_file} not found (looked in {package_share() / 'launch'})")
        path = candidate
    return _plan(path, dict(arguments or {}))


def _plan(path: Path, arguments: dict[str, str]) -> list[NodeLaunch]:
    with _stubbed_launch():
        namespace = runpy.run_path(str(path))
        if "generate_launch_description" not in namespace:
            raise LaunchEmulationError(f"{path} defines no generate_launch_description()")
        description = namespace["generate_launch_description"]()
    ctx = _Context({})
    declared = [e for e in description.entities if isinstance(e, _DeclareLaunchArgument)]
    unknown = set(arguments) - {d.name for d in declared}
    if unknown:
        raise LaunchEmulationError(
            f"{path.name} has no launch argument(s) {sorted(unknown)}; it declares {[d.name for d in declared]}")
    for decl in declared:
        if decl.name in arguments:
            ctx.arguments[decl.name] = str(arguments[decl.name])
        elif decl.default_value is not None:
            ctx.arguments[decl.name] = str(_perform(decl.default_value, ctx))
        if decl.choices and ctx.arguments.get(decl.name) not in decl.choices:
            raise LaunchEmulationError(f"launch argument {decl.name}={ctx.arguments.get(decl.name)!r} is not one "
                                       f"of {decl.choices}")
    nodes: list[NodeLaunch] = []
    started: dict[int, NodeLaunch] = {}  # id of a launch file's Node -> what it starts
    for entity in description.entities:
        if isinstance(entity, _DeclareLaunchArgument):
            continue
        if isinstance(entity, _RegisterEventHandler):  # only "when this node exits, shut the launch down"
            handler = entity.event_handler
            ends = (isinstance(handler, _OnProcessExit) and handler.on_exit
                    and all(isinstance(a, _EmitEvent) and isinstance(a.event, _Shutdown) for a in handler.on_exit))
            if not ends or id(handler.target_action) not in started:
                raise LaunchEmulationError(f"{path.name}: an event handler other than OnProcessExit(target_action=<a "
                                           "Node before it>, on_exit=[EmitEvent(event=Shutdown())])")
            started[id(handler.target_action)].ends_launch = True
            continue
        if isinstance(entity, _Node):
            kw = entity.kwargs
            if kw["condition"] is not None and not kw["condition"].evaluate(ctx):
                continue
            node = NodeLaunch(package=kw["package"], executable=kw["executable"],
                              name=str(_perform(kw["name"], ctx) or kw["executable"]))
            for p in kw["parameters"]:
                if isinstance(p, dict):
                    for k, v in p.items():
                        node.parameter_overrides[str(k)] = _perform_parameter(v, ctx)
                else:
                    node.parameter_files.append(Path(str(_perform(p, ctx))))
            node.remappings = [(str(_perform(a, ctx)), str(_perform(b, ctx))) for a, b in kw["remappings"]]
            node.arguments = [str(_perform(a, ctx)) for a in kw["arguments"]]
            nodes.append(node)
            started[id(entity)] = node
        elif isinstance(entity, _IncludeLaunchDescription):
            if entity.condition is not None and not entity.condition.evaluate(ctx):
                continue
            included = Path(str(_perform(entity.source.path, ctx)))
            args = {}
            items = entity.launch_arguments.items() if isinstance(entity.launch_arguments, dict) else (
                entity.launch_arguments or [])
            for k, v in items:
                args[str(_perform(k, ctx))] = str(_perform(v, ctx))
            nodes.extend(_plan(included, args))
        else:
            raise LaunchEmulationError(f"{path.name}: {type(entity).__name__} is not supported by the emulation")
    return nodes
