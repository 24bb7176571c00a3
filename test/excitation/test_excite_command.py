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
    checked = re.search(r"rad/s \(max (\d+)% of the robot's limit\)", capsys.readouterr().out)
    assert checked and checked[1] == planned[2]


def test_plan_point_to_point_is_a_validation_run_with_stops(tmp_path, capsys):
    out = tmp_path / "ptp.yaml"
    assert main(["excite", "plan", "--kind", "point-to-point", "--duration", "12", "--seed", "3", "--out",
                 str(out)]) == 0
    printed = capsys.readouterr().out
    assert "waypoints (and back to the start) in" in printed and "rdi validate" in printed and str(out) in printed
    traj = load_trajectory(out)
    assert traj.kind == "samples" and traj.robot == "ur3" and traj.metadata["purpose"] == "validation"
    assert 8.0 < traj.duration_s <= 12.0  # within the duration asked for
    centre = np.array([0.0, -1.57, 1.0, -1.0, 1.0, 0.0])
    np.testing.assert_allclose(traj.position_rad[[0, -1]], [centre, centre], atol=1e-9)
    # every move within 0.3 x the velocity limits (the kind's default, not the Fourier optimiser's 0.5)
    from robot_dynamics_id.robots import load_robot
    peak = np.abs(traj.velocity_rad_s).max(axis=0) / load_robot("ur3").velocity_limit_rad_s
    assert peak.max() <= 0.3 + 1e-6 and peak.max() > 0.1
    # stops: stretches where no joint moves, between the first and last sample
    still = np.all(np.abs(traj.velocity_rad_s) < 1e-9, axis=1)
    assert still[traj.time_s.size // 4: -traj.time_s.size // 4].any()
    # a validation run is not judged by its condition number, in plan or check
    assert main(["excite", "check", str(out)]) == 0
    assert "its condition number is not judged" in capsys.readouterr().out
    other = tmp_path / "ptp2.yaml"
    assert main(["excite", "plan", "--kind", "point-to-point", "--duration", "12", "--seed", "3", "--out",
                 str(other), "--velocity-scale", "0.1", "--pose", "0.5,-1.57,1,-1,1,0"]) == 0
    traj, ur3 = load_trajectory(other), load_robot("ur3")
    assert (np.abs(traj.velocity_rad_s).max(axis=0) / ur3.velocity_limit_rad_s).max() <= 0.1 + 1e-6
    assert (np.abs(traj.acceleration_rad_s2).max(axis=0) / ur3.acceleration_limit_rad_s2).max() <= 0.2 + 1e-6
    assert traj.position_rad[0, 0] == pytest.approx(0.5)
    assert main(["excite", "plan", "--kind", "point-to-point", "--out", str(other), "--velocity-scale", "2"]) == 1
    assert "a fraction of the robot's limits" in capsys.readouterr().err
    assert main(["excite", "plan", "--kind", "prbs", "--out", str(other), "--pose", "0,-1.57,1,-1,1,0"]) == 1
    assert "--pose is for --kind payload or point-to-point" in capsys.readouterr().err
    # a plan too short for one move names the options to change, not the library's setting names
    short = tmp_path / "short.yaml"
    assert main(["excite", "plan", "--kind", "point-to-point", "--duration", "3", "--out", str(short)]) == 1
    err = capsys.readouterr().err
    assert "--duration 3 s is too short" in err and "a smaller --position-range" in err
    assert "duration_s" not in err and "range_rad" not in err and not short.exists()


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


def test_plan_out_never_replaces_a_bag_or_a_model_and_a_low_rate_is_refused(tmp_path, capsys):
    model = tmp_path / "model.yaml"
    model.write_text("schema: robot_dynamics_id/model/1\n")
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    base = ["excite", "plan", "--kind", "prbs", "--duration", "18", "--prbs-register-bits", "4"]
    for target, phrase in ((model, "exists and is not an earlier trajectory file"),
                           (bag / "metadata.yaml", "points into the bag"), (bag / "x.yaml", "points into the bag")):
        assert main([*base, "--out", str(target)]) == 1
        assert phrase in capsys.readouterr().err, target
    assert model.read_text() == "schema: robot_dynamics_id/model/1\n"
    assert sorted(p.name for p in bag.iterdir()) == ["metadata.yaml"]
    for rate in ("5", "0"):  # 0 was silently the default
        assert main([*base, "--rate", rate, "--out", str(tmp_path / "r.yaml")]) == 1
        assert "plan at the robot's rate" in capsys.readouterr().err
    assert not (tmp_path / "r.yaml").exists()


def test_a_sparse_file_and_a_poor_condition_number_are_judged_as_identify_will(tmp_path, capsys):
    t = np.arange(0, 4.0 + 1e-9, 0.2)  # 5 Hz: a trajectory controller leaves the limits between the samples
    home = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
    q = np.tile(home, (t.size, 1))
    q[:, 2] += 0.2 * (1 - np.cos(np.pi * t / 2))
    sparse = tmp_path / "sparse.yaml"
    sparse.write_text(yaml.safe_dump({"robot": "ur3", "samples": {
        "time_s": t.tolist(), "position_rad": q.tolist(), "velocity_rad_s": np.zeros_like(q).tolist(),
        "acceleration_rad_s2": np.zeros_like(q).tolist()}}))
    assert main(["excite", "check", str(sparse), "--no-rest"]) == 1
    err = capsys.readouterr().err
    assert "rate violation" in err and "sampled at 5 Hz, below 50 Hz" in err
    # one joint moving: the base regressor is nearly singular (identify: doubtful above 1000)
    t = np.arange(0, 4.0 + 1e-9, 0.008)
    q = np.tile(home, (t.size, 1))
    q[:, 2] += 0.2 * (1 - np.cos(np.pi * t / 2))
    qd = np.zeros_like(q)
    qd[:, 2] = 0.2 * np.pi / 2 * np.sin(np.pi * t / 2)
    one = tmp_path / "one_joint.yaml"
    one.write_text(yaml.safe_dump({"robot": "ur3", "samples": {
        "time_s": t.tolist(), "position_rad": q.tolist(), "velocity_rad_s": qd.tolist(),
        "acceleration_rad_s2": np.gradient(qd, t, axis=0).tolist()}}))
    assert main(["excite", "check", str(one), "--no-rest"]) == 3
    captured = capsys.readouterr()
    assert "OK" in captured.out and "DOUBTFUL: condition number" in captured.err
    assert main(["excite", "check", str(one), "--no-rest", "--robot", "ur5e"]) in (1, 3)
    assert "was planned for ur3; checked against ur5e's limits" in capsys.readouterr().err


@pytest.mark.parametrize("options, phrase", [
    (["--position-range", "90"], "90 degrees is 1.571 rad"),
    (["--kind", "payload", "--pose", "0,-90,90,-90,-90,0"], "this pose is --pose 0,-1.571,1.571,-1.571,-1.571,0"),
    (["--kind", "payload", "--pose", "0,-1.57"], "2 values for 6 joints, in rad"),
    (["--kind", "point-to-point", "--pose", "0,-90,60,-60,60,0"], "this pose is --pose 0,-1.571,1.047"),
    (["--kind", "prbs", "--prbs-velocity", "30"], "30 deg/s is 0.5236 rad/s"),
    (["--kind", "prbs", "--amplitude", "30"], "30 degrees is 0.5236 rad"),
    (["--table-height", "50"], "the unit is m (50 mm is 0.05 m"),
    (["--table-height", "-50"], "is below the ur5e's reach"),
    (["--duration", "30000"], "30000 ms is 30 s"),
    (["--kind", "prbs", "--prbs-clock", "100"], "PRBS clock 100 s is longer than a joint's turn"),
])
def test_plan_names_a_value_in_degrees_or_mm_before_planning(tmp_path, capsys, options, phrase):
    out = tmp_path / "t.yaml"
    assert main(["excite", "plan", "--robot", "ur5e", "--duration", "10", "--out", str(out), *options]) == 1
    err = capsys.readouterr().err
    assert phrase in err and "optimis" not in err, err
    assert not out.exists()


def test_check_names_a_table_height_in_mm_and_plan_notes_a_cb3_rate(tmp_path, capsys):
    out = tmp_path / "prbs.yaml"
    base = ["excite", "plan", "--robot", "ur3", "--kind", "prbs", "--duration", "18", "--prbs-register-bits", "4"]
    assert main([*base, "--rate", "500", "--out", str(out)]) == 0
    assert "above the ur3's controller rate (125 Hz, RTDE)" in capsys.readouterr().err
    assert main(["excite", "check", str(out), "--table-height", "50"]) == 1
    assert "50 mm is 0.05 m" in capsys.readouterr().err
    assert main(["excite", "check", str(out)]) == 0
