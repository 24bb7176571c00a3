"""The README's commands work: every ``$ `` line in its console blocks is run, planned or marked.

* ``rdi …`` lines run, in order, in one scratch folder (they build on each other);
* ``ros2 launch …`` lines are executed through the launch emulation (arguments valid,
  files present); the identify launch line is also run for real; the experiment and
  control launches are started by test/nodes/test_experiment.py and by the demo;
* ``make demo`` / ``make test``: the Makefile targets exist, CI runs ``make test``,
  and test_demo_quick runs the demo;
* everything else (colcon, pip, ros2 bag, a real robot) must be marked
  ``# (ROS machine)`` or ``# (real robot)``: it cannot run here, and says so.
"""

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from robot_dynamics_id.commands.params import readme_with_reference
from rdi_test_support.launch_emulation import node_command, plan_launch
from robot_dynamics_id.ros_processes import loopback_environment

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MARKS = ("(ROS machine)", "(real robot)")


def readme_commands() -> list[tuple[str, str]]:
    """(command, mark) for every '$ ' line inside ```console blocks."""
    commands, in_console = [], False
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            in_console = line.strip() == "```console"
            continue
        if in_console and line.startswith("$ "):
            text = line[2:]
            mark = next((m for m in MARKS if m in text), "")
            if "  #" in text:
                text = text.split("  #", 1)[0]
            commands.append((text.strip(), mark))
    return commands


def test_readme_has_the_two_quick_start_commands_first():
    commands = [c for c, _ in readme_commands()]
    assert commands[:2] == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text()
    assert "\ndemo:" in makefile and "\ntest:" in makefile
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_command_is_runnable_here_or_marked():
    for command, mark in readme_commands():
        runnable = command.startswith(("make ", "rdi ", "ros2 launch robot_dynamics_id "))
        assert runnable or mark, f"README command cannot run here and is not marked {MARKS}: {command}"


def test_parameter_reference_matches_the_nodes():
    text = README.read_text()
    assert readme_with_reference(text) == text, "README parameter reference is stale: run `rdi params --update-readme README.md`"


def _launch_arguments(command: str) -> tuple[str, dict]:
    parts = shlex.split(command)
    launch_file = parts[3]
    args = dict(p.split(":=", 1) for p in parts[4:])
    return launch_file, args


@pytest.mark.slow
def test_readme_workflow_commands_run_in_order(tmp_path):
    env = loopback_environment()
    env["OPENBLAS_NUM_THREADS"] = "1"
    bin_dir = Path(sys.executable).parent
    ran = 0
    for command, mark in readme_commands():
        if command.startswith("rdi "):
            assert not mark, f"an rdi command needs no robot: {command}"
            result = subprocess.run([str(bin_dir / "rdi"), *shlex.split(command)[1:]], cwd=tmp_path, env=env,
                                    capture_output=True, text=True, timeout=900)
            assert result.returncode == 0, f"`{command}` failed:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
            ran += 1
        elif command.startswith("ros2 launch robot_dynamics_id "):
            launch_file, args = _launch_arguments(command)
            nodes = plan_launch(launch_file, args)
            assert nodes
            if launch_file == "identify.launch.py":
                (node,) = nodes
                result = subprocess.run(node_command(node, executable_dir=bin_dir), cwd=tmp_path, env=env,
                                        capture_output=True, text=True, timeout=600)
                assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
                assert (tmp_path / args["out"] / "model.yaml").is_file()
    assert ran >= 6
    # what the README promises the commands write
    for name in ("model.yaml", "model.urdf", "metrics.json", "torque_fit.png", "residuals.png", "friction.png"):
        assert (tmp_path / "model" / name).is_file(), name
    header = (tmp_path / "validation" / "predictions.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["time_s", "status", "scored"]
    for prefix in ("measured_nm", "measured_filtered_nm", "predicted_nm", "ur_model_nm", "moving"):
        assert [h for h in header if h.rsplit("_", 1)[0] == prefix] == [f"{prefix}_{j}" for j in range(6)]
