"""The identifier node's payload mode, started as ``identify.launch.py payload_model:=…`` starts it."""

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml

from robot_dynamics_id.excitation.payload import PayloadExcitationSettings, plan_payload_excitation
from rdi_test_support.launch_emulation import node_command, plan_launch
from robot_dynamics_id.robots import load_robot
from robot_dynamics_id.ros_processes import loopback_environment
from robot_dynamics_id.sim.experiment import run_experiment
from robot_dynamics_id.sim.experiment_bag import write_experiment_bag

pytestmark = pytest.mark.ros


def test_identify_launch_with_payload_model_writes_payload_yaml(tmp_path):
    trajectory = plan_payload_excitation(load_robot("ur3"), PayloadExcitationSettings(
        duration_s=10.0, n_starts=1, max_iterations=20), rate_hz=500.0)
    result = run_experiment(trajectory, robot="ur3", truth_seed=5, noise_seed=1, payload_kg=0.8,
                            payload_com_m=(0.0, 0.03, 0.04))
    bag = write_experiment_bag(tmp_path / "bag", result)
    arm = replace(result.truth, provenance={"torque": "motor current x drive gains (simulated truth) Nm/A"})
    arm.save(tmp_path / "arm.yaml")
    (node,) = plan_launch("identify.launch.py", {"bag": str(bag), "out": str(tmp_path / "out"),
                                                 "payload_model": str(tmp_path / "arm.yaml")})
    run = subprocess.run(node_command(node, executable_dir=Path(sys.executable).parent), cwd=tmp_path,
                         env=loopback_environment(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    data = yaml.safe_load((tmp_path / "out" / "payload.yaml").read_text())
    assert data["mass_kg"] == pytest.approx(0.8, rel=0.02)
    np.testing.assert_allclose(data["com_m"], (0.0, 0.03, 0.04), atol=0.005)
    assert "payload written to" in run.stdout + run.stderr
