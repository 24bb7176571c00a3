"""`rdi excite plan` / `rdi excite check`: plan, save, validate, and refuse with the violation named."""

import re

import numpy as np
import pytest
import yaml

from robot_dynamics_id.cli import main
from robot_dynamics_id.excitation.trajectory_file import load_trajectory


def test_plan_prbs_then_check(tmp_path, capsys):
    out = tmp_path / "prbs.yaml"
    rc = main(["excite", "plan", "--kind", "prbs", "--duration", "18", "--prbs-register-bits", "4", "--seed", "2",
               "--out", str(out)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert "condition number" in printed and str(out) in printed
    traj = load_trajectory(out)
    assert traj.kind == "prbs_sinusoid" and traj.robot == "ur3" and traj.rate_hz == 125.0
    assert main(["excite", "check", str(out)]) == 0
    assert "OK" in capsys.readouterr().out


def test_plan_fourier_small(tmp_path, capsys):
    out = tmp_path / "fourier.yaml"
    rc = main(["excite", "plan", "--kind", "fourier", "--duration", "8", "--period", "4", "--harmonics", "3",
               "--starts", "1", "--max-iterations", "8", "--out", str(out), "--table-height", "0.08"])
    assert rc == 0
    traj = load_trajectory(out)
    assert traj.kind == "fourier" and traj.limits["table_height_m"] == 0.08
    # plan checks against the optimiser's limits (0.5 x the robot's velocity and acceleration): it says so, and
    # gives the fraction of the robot's own limits that `excite check` (full limits) prints
    planned = re.search(r"rad/s \(max (\d+)% of the limit checked, (\d+)% of the robot's\)", capsys.readouterr().out)
    assert planned and int(planned[2]) == pytest.approx(int(planned[1]) / 2, abs=1), planned
    assert main(["excite", "check", str(out), "--robot", "ur3", "--table-height", "0.08"]) == 0
    checked = re.search(r"rad/s \(max (\d+)% of the limit checked\)", capsys.readouterr().out)
    assert checked and checked[1] == planned[2]


def test_check_refuses_and_names_the_violation(tmp_path, capsys):
    t = np.arange(0, 2.0 + 1e-9, 0.008)
    home = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    q = np.tile(home, (t.size, 1))
    q[:, 2] += 0.2 * (1 - np.cos(np.pi * t))  # elbow: rest to rest
    q[100:, 5] = 7.0  # wrist 3 beyond 2 pi from t = 0.8 s
    path = tmp_path / "user.yaml"
    path.write_text(yaml.safe_dump({"robot": "ur3", "samples": {
        "time_s": t.tolist(), "position_rad": q.tolist(),
        "velocity_rad_s": np.zeros_like(q).tolist(), "acceleration_rad_s2": np.zeros_like(q).tolist()}}))
    assert main(["excite", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "REFUSED" in err and "position violation at t = 0.8000 s, wrist_3_joint" in err
    # Unknown robot and missing files: errors naming the fix, non-zero exit.
    assert main(["excite", "check", str(path), "--robot", "ur99"]) == 1
    assert "unknown robot" in capsys.readouterr().err
    assert main(["excite", "check", str(tmp_path / "none.yaml"), "--robot", "ur3"]) == 1
