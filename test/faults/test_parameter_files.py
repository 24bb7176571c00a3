"""Where a node's parameters come from, and broken parameter files found before rcl reads them (no ROS)."""

import pytest

from robot_dynamics_id.nodes._param_files import check_parameter_files, parameter_files, parameter_sources
from robot_dynamics_id.parameters import ParameterError


def test_parameter_files_and_rules_are_read_from_every_ros_args_block(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text("/**:\n  ros__parameters:\n    use_sim_time: false\n    shared: 1\n"
                 "ur_interface:\n  ros__parameters:\n    watchdog_s: 0.04\n    nested:\n      depth: 3\n"
                 "torque_logger:\n  ros__parameters:\n    storage: mcap\n")
    b.write_text("/ur_interface:\n  ros__parameters:\n    rate_hz: 125.0\n")
    argv = ["ur_interface", "--ros-args", "-r", "__node:=ur_interface", "--params-file", str(a), "--",
            "--ros-args", "--params-file", str(b), "-p", "robot:=ur3e", "-p", "other_node:x:=1"]
    assert parameter_files(argv) == [str(a), str(b)]
    sources = parameter_sources(argv, "ur_interface")
    assert sources.describe("watchdog_s") == f" (in {a})"
    assert sources.describe("rate_hz") == f" (in {b})"
    assert sources.describe("robot") == " (on the command line)"
    assert "nested.depth" in sources.where and "storage" not in sources.where and "x" not in sources.where
    assert sources.wildcard_only == {"use_sim_time", "shared"}


@pytest.mark.parametrize("text, message", [
    ("ur_interface:\n  ros__parameters:\n    rate_hz: [500\n", "is not valid YAML at line 4, column 1"),
    ("ur_interface:\n  rate_hz: 500\n", "section 'ur_interface' has no 'ros__parameters:' key"),
    ("- a\n- b\n", "must map node names to 'ros__parameters:' sections"),
    ("ur_interface:\n  ros__parameters: 3\n", "must be a mapping of parameter names to values"),
])
def test_a_broken_file_is_one_line_naming_the_file_and_the_fix(tmp_path, text, message):
    path = tmp_path / "broken.yaml"
    path.write_text(text)
    with pytest.raises(ParameterError, match=message) as info:
        check_parameter_files(["node", "--ros-args", "--params-file", str(path)])
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_a_missing_file_or_a_directory_is_named(tmp_path):
    with pytest.raises(ParameterError, match="missing.yaml does not exist"):
        check_parameter_files(["node", "--ros-args", "--params-file", str(tmp_path / "missing.yaml")])
    with pytest.raises(ParameterError, match="is not a file"):
        check_parameter_files(["node", "--ros-args", "--params-file", str(tmp_path)])


def test_a_file_without_a_section_for_the_node_is_refused_naming_the_close_one(tmp_path):
    """rcl ignores a whole file whose section names another node: a misspelt 'ur_inteface:' ran at defaults."""
    path = tmp_path / "badkey.yaml"
    path.write_text("ur_inteface:\n  ros__parameters:\n    velocity_scale: 0.25\n")
    with pytest.raises(ParameterError, match=r"has no section for node 'ur_interface': its sections are "
                                             r"\['ur_inteface'\] \(did you mean 'ur_interface' for 'ur_inteface'\?\)"):
        parameter_sources(["ur_interface", "--ros-args", "--params-file", str(path)], "ur_interface")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    assert parameter_sources(["ur_interface", "--ros-args", "--params-file", str(empty)], "ur_interface").where == {}
