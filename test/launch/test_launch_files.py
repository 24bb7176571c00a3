"""The launch files, tested as far as possible without ROS 2 ``launch`` installed.

Each launch file is executed (its generate_launch_description()) through
test/rdi_test_support/launch_emulation.py, and what it would start is checked: every
executable is a console script of this package, every parameter file exists,
and every parameter in those files and in the launch overrides is one the node
declares. The processes themselves are started the same way in
test/nodes/test_ur_interface.py and test/nodes/test_experiment.py.

``test_real_launch_library_parses_every_launch_file`` needs the real library
(a ROS machine) and is skipped here; it is not counted as evidence.
"""

import ast
import inspect
from pathlib import Path

import pytest
import yaml

from robot_dynamics_id.commands.params import NODE_TABLES, node_parameters
from rdi_test_support.launch_emulation import LaunchEmulationError, declared_arguments, node_command, plan_launch
from robot_dynamics_id.node_launch import LAUNCH_PLANS, launch_plan

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def console_scripts() -> set[str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    return {ast.literal_eval(e).split("=")[0].strip() for e in value.elts}
    raise AssertionError("setup.py declares no console_scripts")


def required_arguments(path):
    return {name: "x" for name, decl in declared_arguments(path).items() if decl.default_value is None}


def test_there_are_launch_files_for_the_three_workflows():
    names = {p.name for p in LAUNCH_FILES}
    assert {"ur_interface.launch.py", "experiment.launch.py"} <= names


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("sim", ["true", "false"])
def test_launch_file_starts_known_executables_with_declared_parameters(path, sim):
    args = required_arguments(path)
    if "sim" in declared_arguments(path):
        args["sim"] = sim
    nodes = plan_launch(path, args)
    assert nodes, f"{path.name} starts nothing"
    scripts = console_scripts()
    for node in nodes:
        assert node.package == "robot_dynamics_id"
        assert node.executable in scripts, f"{node.executable} is not a console script in setup.py"
        declared = {s.name for s in node_parameters(node.executable)}
        for f in node.parameter_files:
            assert f.is_file(), f"{path.name}: parameter file {f} missing"
            doc = yaml.safe_load(f.read_text())
            assert node.name in doc, f"{f.name} has no section for node {node.name}"
            unknown = set(doc[node.name]["ros__parameters"]) - declared
            assert not unknown, f"{f.name}: {sorted(unknown)} are not parameters of {node.executable}"
        unknown = set(node.parameter_overrides) - declared
        assert not unknown, f"{path.name} overrides undeclared parameters {sorted(unknown)}"
        cmd = node_command(node)
        assert cmd[0] == node.executable and "--ros-args" in cmd


def test_sim_argument_selects_the_backend():
    (sim,) = plan_launch("ur_interface.launch.py", {"sim": "true"})
    (real,) = plan_launch("ur_interface.launch.py", {"sim": "false", "robot_ip": "192.168.1.102"})
    assert sim.parameter_overrides["backend"] == "sim"
    assert real.parameter_overrides["backend"] == "rtde"
    assert real.parameter_overrides["robot_ip"] == "192.168.1.102"


_CONFIG = Path(__file__).resolve().parents[2] / "config"

RUNTIME_PLAN_CASES = [
    ("ur_interface.launch.py", {}),
    ("ur_interface.launch.py", {"sim": "false", "robot_ip": "192.168.1.102"}),
    ("ur_interface.launch.py", {"collision_model": "/m.yaml"}),
    ("experiment.launch.py", {"excitation": "/x/excitation.yaml"}),
    ("experiment.launch.py", {"excitation": "e.yaml", "bag": "/b", "sim": "false", "move_to_start": "true"}),
    ("identify.launch.py", {"bag": "/b"}),
    ("identify.launch.py", {"bag": "/b", "out": "o", "robot": "ur5e", "validation": "/v", "payload_model": "/m.yaml",
                            "drive_gains": "/g.json"}),
    ("control.launch.py", {}),
    ("control.launch.py", {"sim": "false", "task": "polishing", "model": "/m.yaml", "output_mode": "velocity",
                           "force_source": "estimated", "connection": "topics"}),
    ("control.launch.py", {"connection": "topics"}),
    ("natural_oscillation.launch.py", {}),
    ("natural_oscillation.launch.py", {"sim": "false", "robot_ip": "192.168.1.102", "model": "/m.yaml",
                                       "compensate_friction": "true", "output": "/o.json", "robot": "ur5e"}),
    # another arm: its ur_interface parameter file (the launch files check it exists: here the package's own,
    # given by path) and, for the controller, its name
    ("experiment.launch.py", {"excitation": "e.yaml", "config": str(_CONFIG / "ur3_control.yaml")}),
    ("control.launch.py", {"config": str(_CONFIG / "ur3_control.yaml"), "robot": "ur16e", "model": "/m.yaml"}),
]


@pytest.mark.parametrize("launch_file, args", RUNTIME_PLAN_CASES)
def test_runtime_plans_start_what_the_launch_files_start(launch_file, args):
    """rdi demo and the benchmarks start nodes from robot_dynamics_id.node_launch (no launch library at run
    time): the same command lines as the launch files themselves give."""
    emulated = [(node_command(n), n.ends_launch) for n in plan_launch(launch_file, args)]
    runtime = [(node_command(n), n.ends_launch) for n in launch_plan(launch_file, args)]
    assert runtime == emulated


@pytest.mark.parametrize("launch_file, job", [("experiment.launch.py", ["torque_logger", "excitation"]),
                                              ("natural_oscillation.launch.py", ["natural_oscillation"])])
def test_a_jobs_launch_ends_when_its_job_ends(launch_file, job):
    """A run left the recorder and ur_interface running for 10 minutes after the excitation finished (a 307 MB bag,
    identified with all its standstill): the launch now shuts down the rest when the job's process exits."""
    args = {"excitation": "e.yaml"} if launch_file.startswith("experiment") else {}
    assert [n.name for n in plan_launch(launch_file, args) if n.ends_launch] == job
    assert not any(n.ends_launch for name in ("control.launch.py", "ur_interface.launch.py")
                   for n in plan_launch(name, {}))


def test_every_launch_file_has_a_runtime_plan():
    assert set(LAUNCH_PLANS) == {p.name for p in LAUNCH_FILES}
    for path in LAUNCH_FILES:
        assert set(declared_arguments(path)) == set(inspect.signature(LAUNCH_PLANS[path.name]).parameters), path.name
    with pytest.raises(ValueError, match="has no launch argument|unexpected keyword"):
        launch_plan("ur_interface.launch.py", {"simulation": "true"})


def test_unknown_launch_argument_is_refused():
    with pytest.raises(LaunchEmulationError, match="has no launch argument"):
        plan_launch("ur_interface.launch.py", {"simulation": "true"})


def test_every_config_file_matches_a_node_table():
    for f in sorted((ROOT / "config").glob("*.yaml")):
        doc = yaml.safe_load(f.read_text())
        for node_name, section in doc.items():
            if not isinstance(section, dict) or "ros__parameters" not in section:
                continue
            executable = node_name
            assert executable in NODE_TABLES, f"{f.name}: no node named {node_name}"
            declared = {s.name for s in node_parameters(executable)}
            unknown = set(section["ros__parameters"]) - declared
            assert not unknown, f"{f.name}: {sorted(unknown)} not declared by {executable}"


def test_real_launch_library_parses_every_launch_file():
    pytest.importorskip("launch_ros", reason="needs ROS 2 launch (a ROS machine); not installable here")
    import importlib.util

    for path in LAUNCH_FILES:
        spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        description = module.generate_launch_description()
        assert description.entities
