"""The processes the package's launch files start, for machines without ROS 2 ``launch``.

``ros2 launch robot_dynamics_id <file>`` is the way to start the nodes on a ROS
machine. Where ``launch`` is not installed (the PyPI ROS 2 wheels do not carry
it), ``rdi demo`` and the benchmarks start the same nodes from the plans here:
for each launch file, the executables, node names, parameter files and
parameter overrides it describes for given arguments (:data:`LAUNCH_PLANS`).
:func:`node_command` turns one into the command line ``ros2 run`` would use
(``<executable> --ros-args -r __node:=<name> --params-file <file> -p k:=v``).

The plans restate the launch files; test/launch/test_launch_files.py executes the
real launch files against stand-ins of ``launch``/``launch_ros`` (test-only code)
and checks that both give the same command lines, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

__all__ = ["LAUNCH_PLANS", "NodeLaunch", "control_nodes", "experiment_nodes", "identify_nodes", "launch_plan",
           "natural_oscillation_nodes", "node_command", "package_share", "ur_interface_nodes"]

PACKAGE = "robot_dynamics_id"


def package_share() -> Path:
    """The package's share directory: the installed one, else the source tree (launch/, config/)."""
    try:  # an ament install (colcon) has the real share directory
        from ament_index_python.packages import get_package_share_directory

        share = Path(get_package_share_directory(PACKAGE))
        if (share / "launch").is_dir():
            return share
    except Exception:  # noqa: BLE001 - not an ament install: fall back to the source tree
        pass
    return Path(__file__).resolve().parent.parent


@dataclass
class NodeLaunch:
    """One node a launch file starts, with every substitution resolved."""

    package: str
    executable: str
    name: str
    parameter_files: list[Path] = field(default_factory=list)
    parameter_overrides: dict[str, Any] = field(default_factory=dict)
    remappings: list[tuple[str, str]] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)
    #: when this process exits, the launch ends the others (launch's OnProcessExit -> Shutdown: SIGINT to each,
    #: so the recorder finishes its bag and ur_interface stops the arm): a job's launch ends with its job
    ends_launch: bool = False


def _config(name: str) -> Path:
    return package_share() / "config" / name


def _node(executable: str, files: list[Path], overrides: dict[str, Any], *, ends_launch: bool = False) -> NodeLaunch:
    return NodeLaunch(package=PACKAGE, executable=executable, name=executable, parameter_files=files,
                      parameter_overrides=overrides, ends_launch=ends_launch)


def _flag(value: bool | str) -> str:
    """A launch argument as launch passes it on: the text given (``'true'``/``'false'`` for booleans)."""
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _backend(sim: bool | str) -> str:
    return "sim" if _flag(sim).lower() == "true" else "rtde"


def ur_interface_nodes(*, sim: bool | str = True, robot_ip: str = "127.0.0.1",
                       config: str | Path | None = None, collision_model: str | Path = "",
                       sim_truth_seed: int | str = -1) -> list[NodeLaunch]:
    """``ur_interface.launch.py``."""
    return [_node("ur_interface", [Path(config) if config else _config("ur3.yaml")],
                  {"backend": _backend(sim), "robot_ip": str(robot_ip), "collision_model_file": str(collision_model),
                   "sim_truth_seed": str(sim_truth_seed)})]


def experiment_nodes(*, excitation: str | Path, bag: str | Path = "", sim: bool | str = True,
                     robot_ip: str = "127.0.0.1", move_to_start: bool | str = False,
                     config: str | Path | None = None) -> list[NodeLaunch]:
    """``experiment.launch.py``: ur_interface, torque_logger, excitation (the end of either of the last two ends
    the launch: a recorder that refused its bag_path or died leaves nothing to run for)."""
    return [
        *ur_interface_nodes(sim=sim, robot_ip=robot_ip, config=config),
        _node("torque_logger", [_config("torque_logger.yaml")], {"bag_path": str(bag)}, ends_launch=True),
        _node("excitation", [_config("excitation.yaml")],
              {"trajectory_file": str(excitation), "move_to_start": _flag(move_to_start),
               "wait_for_subscribers": ["torque_logger"]}, ends_launch=True),
    ]


def identify_nodes(*, bag: str | Path, out: str | Path = "identification", robot: str = "ur3",
                   validation: str | Path = "", payload_model: str | Path = "",
                   drive_gains: str | Path = "") -> list[NodeLaunch]:
    """``identify.launch.py``."""
    return [_node("identifier", [_config("identifier.yaml")],
                  {"data_path": str(bag), "out_dir": str(out), "robot": str(robot),
                   "validation_data_path": str(validation), "payload_model_file": str(payload_model),
                   "drive_gains_file": str(drive_gains)})]


def control_nodes(*, sim: bool | str = True, robot_ip: str = "127.0.0.1", model: str | Path = "",
                  task: str = "external", output_mode: str = "torque", force_source: str = "sensor",
                  connection: str = "direct", payload: str | Path = "",
                  sim_truth_seed: int | str = -1, config: str | Path | None = None,
                  robot: str = "") -> list[NodeLaunch]:
    """``control.launch.py``: osc_controller (+ ur_interface with ``connection='topics'``)."""
    robot_files = [Path(config) if config else _config("ur3.yaml"), _config("ur3_control.yaml")]
    backend = _backend(sim)
    torque = output_mode == "torque"
    nodes = []
    if connection == "topics":
        nodes.append(_node("ur_interface", list(robot_files),
                           {"backend": backend, "robot_ip": str(robot_ip), "supports_torque": str(torque),
                            "sim_truth_seed": str(sim_truth_seed)}))
    nodes.append(_node("osc_controller", [_config("osc_controller.yaml")], {
        "robot": str(robot), "model_file": str(model), "payload_file": str(payload), "task": task, "output_mode": output_mode,
        "force_source": force_source,
        "robot_connection": connection, "robot_config_files": f"[{robot_files[0]}, {robot_files[1]}]",
        "robot_backend": backend, "robot_ip": str(robot_ip),
        "robot_parameters": f"[supports_torque={'true' if torque else 'false'}, sim_truth_seed={sim_truth_seed}]"}))
    return nodes


def natural_oscillation_nodes(*, sim: bool | str = True, robot_ip: str = "127.0.0.1", config: str | Path | None = None,
                              sim_truth_seed: int | str = -1, robot: str = "ur3", model: str | Path = "",
                              compensate_friction: bool | str = False, output: str | Path = "") -> list[NodeLaunch]:
    """``natural_oscillation.launch.py``: ur_interface + natural_oscillation (its end ends the launch)."""
    return [_node("ur_interface", [Path(config) if config else _config("ur3.yaml")],
                  {"backend": _backend(sim), "robot_ip": str(robot_ip), "sim_truth_seed": str(sim_truth_seed)}),
            _node("natural_oscillation", [_config("natural_oscillation.yaml")],
                  {"robot": str(robot), "model_file": str(model), "compensate_friction": _flag(compensate_friction),
                   "output_file": str(output)}, ends_launch=True)]


#: launch file -> the function giving the processes it starts
LAUNCH_PLANS: dict[str, Callable[..., list[NodeLaunch]]] = {
    "ur_interface.launch.py": ur_interface_nodes,
    "experiment.launch.py": experiment_nodes,
    "identify.launch.py": identify_nodes,
    "control.launch.py": control_nodes,
    "natural_oscillation.launch.py": natural_oscillation_nodes,
}


def launch_plan(launch_file: str, arguments: dict[str, str] | None = None) -> list[NodeLaunch]:
    """The nodes ``ros2 launch robot_dynamics_id <launch_file> k:=v ...`` starts (launch arguments as text)."""
    name = Path(launch_file).name
    if name not in LAUNCH_PLANS:
        raise ValueError(f"no plan for launch file {launch_file!r}; known: {', '.join(LAUNCH_PLANS)}")
    try:
        return LAUNCH_PLANS[name](**dict(arguments or {}))
    except TypeError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    if value is None:
        return "''"
    return str(value)


def _ros_arg_value(value: Any) -> str:
    """A parameter override as ``-p name:=value`` expects it (YAML syntax)."""
    if isinstance(value, str):
        if value == "":
            return "''"
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
        # PythonExpression results such as "True" are YAML booleans: normalise their spelling.
        return _yaml_scalar(parsed) if isinstance(parsed, bool) else value
    return _yaml_scalar(value)


def node_command(node: NodeLaunch, *, executable_dir: str | Path | None = None) -> list[str]:
    """The command line that starts ``node`` as ``ros2 run``/``ros2 launch`` would: an argument list for
    ``subprocess`` (to paste into a shell, quote it with ``shlex.join``: an empty value is ``''`` there)."""
    exe = node.executable if executable_dir is None else str(Path(executable_dir) / node.executable)
    cmd = [exe, *node.arguments, "--ros-args", "-r", f"__node:={node.name}"]
    for a, b in node.remappings:
        cmd += ["-r", f"{a}:={b}"]
    for f in node.parameter_files:
        if not f.is_file():
            raise FileNotFoundError(f"parameter file {f} named by the launch file does not exist")
        cmd += ["--params-file", str(f)]
    for k, v in node.parameter_overrides.items():
        cmd += ["-p", f"{k}:={_ros_arg_value(v)}"]
    return cmd
