"""What a ROS install gets: package.xml names every package the code imports, test-only modules are not in
the runtime package, and (under tools/colcon_check.sh) the tests ran the workspace's copy and its install."""

import ast
import importlib.util
import os
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import robot_dynamics_id

ROOT = Path(__file__).resolve().parents[1]
# top-level module -> the package.xml key that provides it (rosdep keys for the non-ROS ones)
ROSDEP_KEY = {
    "numpy": "python3-numpy", "scipy": "python3-scipy", "yaml": "python3-yaml", "matplotlib": "python3-matplotlib",
    "pinocchio": "pinocchio", "rosbags": "python3-rosbags-pip", "mujoco": "python3-mujoco-pip",
}
#: imported, but installed with pip (no rosdep key): README "Lab set-up" says how
PIP_ONLY = {"rtde_control", "rtde_receive", "rtde_io"}


def _imports() -> set[str]:
    found = set()
    files = list((ROOT / "robot_dynamics_id").rglob("*.py")) + list((ROOT / "launch").glob("*.py"))
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"robot_dynamics_id"}


def test_package_xml_declares_every_imported_package():
    declared = {e.text for e in ET.parse(ROOT / "package.xml").getroot() if e.tag in ("exec_depend", "depend")}
    needed = {ROSDEP_KEY.get(m, m) for m in _imports() - PIP_ONLY}
    assert needed <= declared, f"package.xml lacks exec_depend on {sorted(needed - declared)}"
    assert "rcl_interfaces" in declared and "pinocchio" in declared


def test_test_only_modules_are_not_in_the_runtime_package():
    for name in ("launch_emulation", "net_trace"):
        assert importlib.util.find_spec(f"robot_dynamics_id.{name}") is None, name
    assert not any(p.name == "rdi_test_support" for p in (ROOT / "robot_dynamics_id").rglob("*"))


def test_the_tested_package_is_the_workspace_copy_when_colcon_check_says_so():
    """tools/colcon_check.sh sets RDI_EXPECT_INSTALL_PREFIX (the workspace's install folder): the tests must run
    the workspace's copy of the package (colcon runs an ament_python package's tests in its source folder) and
    find launch files and configuration in the install's share directory, through the ament index."""
    prefix = os.environ.get("RDI_EXPECT_INSTALL_PREFIX")
    if prefix is None:
        assert Path(robot_dynamics_id.__file__).is_file()
        return
    workspace = Path(prefix).resolve().parent
    assert Path(robot_dynamics_id.__file__).resolve().is_relative_to(workspace), robot_dynamics_id.__file__
    from robot_dynamics_id.node_launch import package_share

    share = package_share()
    assert share.resolve().is_relative_to(Path(prefix).resolve()), share
    assert (share / "launch" / "identify.launch.py").is_file() and (share / "config" / "ur3.yaml").is_file()
