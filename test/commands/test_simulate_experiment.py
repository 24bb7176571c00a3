"""``rdi simulate-experiment``: bag + truth (+ CSV, + known-payload run) from the simulated arm; clear errors."""

import argparse
import json

import numpy as np
import pytest
import yaml

from robot_dynamics_id.cli import main
from robot_dynamics_id.commands import simulate_experiment
from robot_dynamics_id.excitation.trajectory_file import load_trajectory, save_trajectory
from robot_dynamics_id.io.bag_reader import open_bag, read_bag
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.io.ur_csv import read_ur_csv
from robot_dynamics_id.sim.excitation_presets import paper_prbs_excitation
from robot_dynamics_id.sim.truth import make_truth, nominal_drive_gains


def _custom_data(bag):
    return yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]["custom_data"]


def test_prbs_run_with_csv_sqlite3_and_known_payload(tmp_path, capsys):
    out, out2, truth = tmp_path / "bag", tmp_path / "bag_payload", tmp_path / "truth.yaml"
    code = main(["simulate-experiment", "--excitation", "prbs", "--duration", "1.5", "--seed", "2",
                 "--truth-seed", "4", "--out", str(out), "--truth-out", str(truth), "--storage", "sqlite3",
                 "--csv", str(tmp_path / "run.csv"), "--known-payload-kg", "1.5", "--known-payload-com",
                 "0.05,0,0.04", "--known-payload-out", str(out2), "--save-excitation",
                 str(tmp_path / "excitation.yaml")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    # progress on stderr, as lines (captured output is not a terminal): each run's start and end, no \r
    for label in ("run", "run with known payload"):
        assert f"simulate-experiment: {label}: simulate 0 %" in captured.err
        assert f"simulate-experiment: {label}: done in " in captured.err
    assert "\r" not in captured.err
    assert "known payload: 1.5 kg" in captured.out
    assert sorted(p.suffix for p in out.iterdir()) == [".db3", ".yaml"]

    rec = read_bag(out)
    rec2 = read_bag(out2)
    assert rec.n_samples == rec2.n_samples > 1.5 * 500
    np.testing.assert_allclose(np.diff(rec.time_s), 1 / 500, atol=1e-6)
    np.testing.assert_allclose(rec.effort_nm, rec.current_a * nominal_drive_gains("ur3"), rtol=1e-15)
    csv = read_ur_csv(tmp_path / "run.csv")
    assert csv.n_samples == rec.n_samples
    np.testing.assert_allclose(csv.q_rad, rec.q_rad, atol=1e-6)  # CSV prints 6 decimals
    np.testing.assert_allclose(csv.time_s, rec.time_s - rec.time_s[0], atol=1e-6)

    model = DynamicModel.load(truth)
    np.testing.assert_array_equal(model.standard_parameters(), make_truth("ur3", 4).standard_parameters())
    np.testing.assert_array_equal(model.drive_gains_nm_per_a, make_truth("ur3", 4).drive_gains_nm_per_a)
    # the truth file says what was simulated with it: an estimate can be compared with the payload later
    runs = model.provenance["simulated_runs"]
    assert [r["payload_kg"] for r in runs] == [0.0, 1.5] and runs[1]["payload_com_m"] == [0.05, 0.0, 0.04]
    assert runs[0]["bag"] == str(out.resolve()) and runs[1]["noise_seed"] == 1

    first, second = _custom_data(out), _custom_data(out2)
    assert first["truth_seed"] == second["truth_seed"] == "4"
    assert first["noise_seed"] == "0" and second["noise_seed"] == "1"
    assert json.loads(first["payload"]) is None
    assert json.loads(second["payload"])["mass_kg"] == 1.5
    spec = json.loads(first["known_payload_experiment"])
    assert spec["role"] == "without_payload" and spec["payload"]["com_m"] == [0.05, 0.0, 0.04]
    assert json.loads(second["known_payload_experiment"])["role"] == "with_payload"
    assert load_trajectory(tmp_path / "excitation.yaml").duration_s == pytest.approx(1.5)


def test_excitation_file_nominal_truth_and_configured_gains(tmp_path, capsys):
    path = save_trajectory(paper_prbs_excitation("ur3", duration_s=1.2, seed=5), tmp_path / "exc.yaml")
    out = tmp_path / "bag"
    assert main(["simulate-experiment", "--excitation", str(path), "--truth-seed", "-1", "--out", str(out),
                 "--truth-out", str(tmp_path / "truth.yaml"), "--drive-gains", "9,9,9,7,7,7", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert _custom_data(out)["truth_seed"] == "nominal"
    with open_bag(out) as bag:
        assert bag.storage == "mcap" and "/excitation/progress" in bag.topics
    rec = read_bag(out)
    np.testing.assert_allclose(rec.effort_nm, rec.current_a * [9, 9, 9, 7, 7, 7], rtol=1e-15)
    np.testing.assert_array_equal(DynamicModel.load(tmp_path / "truth.yaml").drive_gains_nm_per_a,
                                  nominal_drive_gains("ur3"))


def test_csv_at_a_lower_rate_holds_every_nth_controller_sample(tmp_path, capsys):
    """--csv-rate 100 at 500 Hz: the CSV a 100 Hz ur_rtde recording of the run would be (every 5th sample, exactly
    the bag's values there); the bag keeps every sample; the truth file records the CSV's rate."""
    out, csv = tmp_path / "bag", tmp_path / "run.csv"
    assert main(["simulate-experiment", "--excitation", "prbs", "--duration", "1.5", "--out", str(out),
                 "--truth-out", str(tmp_path / "t.yaml"), "--csv", str(csv), "--csv-rate", "100", "--quiet"]) == 0
    assert f"CSV {csv} (100 Hz)" in capsys.readouterr().out
    rec, rows = read_bag(out), read_ur_csv(csv)
    np.testing.assert_allclose(np.diff(rec.time_s), 1 / 500, atol=1e-6)
    np.testing.assert_allclose(np.diff(rows.time_s), 1 / 100, atol=1e-6)
    assert rows.n_samples == len(range(0, rec.n_samples, 5))
    np.testing.assert_allclose(rows.q_rad, rec.q_rad[::5], atol=1e-6)
    np.testing.assert_allclose(rows.current_a, rec.current_a[::5], atol=1e-6)
    assert DynamicModel.load(tmp_path / "t.yaml").provenance["simulated_runs"][0]["csv_rate_hz"] == 100.0


def test_measured_friction_runs_the_calibrated_law_and_the_truth_file_names_it(tmp_path, capsys):
    """--friction measured: the joints follow sim/measured_friction.py's law of the truth seed (the currents differ
    from the P2 plant of the same seed's); TRUTH.yaml has the seed's rigid body, no friction, and the law's
    parameters in provenance.joint_friction."""
    from robot_dynamics_id.sim.measured_friction import measured_friction

    recordings = {}
    for kind in ("p2", "measured"):
        out, truth = tmp_path / f"bag_{kind}", tmp_path / f"truth_{kind}.yaml"
        assert main(["simulate-experiment", "--robot", "ur5e", "--excitation", "prbs", "--duration", "1.5",
                     "--truth-seed", "8", "--friction", kind, "--out", str(out), "--truth-out", str(truth),
                     "--quiet"]) == 0
        recordings[kind] = read_bag(out)
    model = DynamicModel.load(tmp_path / "truth_measured.yaml")
    np.testing.assert_array_equal(model.standard_parameters(), make_truth("ur5e", 8).standard_parameters())
    assert not np.any(model.friction.linear_vector())
    assert model.provenance["friction"] == "measured"
    assert model.provenance["joint_friction"]["positive_nm"] == measured_friction("ur5e", 8).summary()["positive_nm"]
    p2, measured = recordings["p2"], recordings["measured"]
    np.testing.assert_allclose(measured.q_rad, p2.q_rad, atol=0.02)  # the same motion (the servo tracks it) ...
    torque_gap = np.abs((measured.current_a - p2.current_a) * model.drive_gains_nm_per_a).max(axis=0)
    assert np.all(torque_gap[:3] > 1.0)  # ... with other friction on the big joints


@pytest.mark.parametrize("rate, csv_rate", [("125", "25"), ("500", "100.0000001"), ("500", "500")])
def test_csv_rates_that_divide_the_controller_rate_are_accepted(tmp_path, rate, csv_rate):
    parser = argparse.ArgumentParser()
    simulate_experiment.configure(parser)
    args = parser.parse_args(["--excitation", "prbs", "--out", str(tmp_path / "bag"), "--truth-out",
                              str(tmp_path / "t.yaml"), "--csv", str(tmp_path / "run.csv"), "--rate", rate,
                              "--csv-rate", csv_rate])
    simulate_experiment._validate(args)  # raises ValueError on a rate it refuses


def test_fourier_is_planned_with_the_seed(tmp_path, capsys):
    out = tmp_path / "bag"
    assert main(["simulate-experiment", "--excitation", "fourier", "--duration", "2", "--seed", "3",
                 "--fourier-iterations", "3", "--out", str(out), "--truth-out", str(tmp_path / "t.yaml")]) == 0
    err = capsys.readouterr().err
    assert "planning a 2 s Fourier excitation (seed 3" in err and "condition number" in err
    custom = _custom_data(out)
    assert custom["excitation_kind"] == "fourier" and custom["excitation_seed"] == "3"
    assert read_bag(out).duration_s >= 2.0


@pytest.mark.parametrize("argv, message", [
    (["--robot", "ur7"], "unknown robot 'ur7'"),
    (["--excitation", "missing.yaml"], "no such file"),
    (["--duration", "-2"], "--duration must be > 0"),
    (["--known-payload-kg", "1.0"], "needs --known-payload-out"),
    (["--payload-kg", "-1"], "--payload-kg must be >= 0"),
    (["--payload-kg", "5"], "rated payload"),
    (["--known-payload-kg", "5", "--known-payload-out", "other"], "rated payload"),
    (["--drive-gains", "10,10"], "--drive-gains needs 6 positive values"),
    (["--csv", "run.csv", "--csv-rate", "300"], "--csv-rate must divide the controller rate --rate 500 Hz"),
    (["--csv", "run.csv", "--csv-rate", "1000"], "--csv-rate must divide"),
    (["--csv", "run.csv", "--csv-rate", "0.5"], "--csv-rate 0.5 Hz: a recording below 10 Hz cannot hold"),
    (["--csv-rate", "100"], "give --csv OUT.csv"),
])
def test_bad_arguments_give_clear_errors(tmp_path, capsys, argv, message):
    base = {"--excitation": "prbs", "--duration": "1.5", "--out": str(tmp_path / "bag"),
            "--truth-out": str(tmp_path / "truth.yaml")}
    for key, value in zip(argv[::2], argv[1::2]):
        base[key] = value
    args = [item for pair in base.items() for item in pair]
    assert main(["simulate-experiment", "--quiet", *args]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bag").exists()


def test_existing_out_and_duration_with_a_file_are_refused(tmp_path, capsys):
    (tmp_path / "bag").mkdir()
    assert main(["simulate-experiment", "--excitation", "prbs", "--out", str(tmp_path / "bag"),
                 "--truth-out", str(tmp_path / "t.yaml")]) == 1
    assert "exists already" in capsys.readouterr().err
    path = save_trajectory(paper_prbs_excitation("ur3", duration_s=1.2), tmp_path / "exc.yaml")
    assert main(["simulate-experiment", "--excitation", str(path), "--duration", "5", "--out",
                 str(tmp_path / "new"), "--truth-out", str(tmp_path / "t.yaml")]) == 1
    assert "fixes its own duration" in capsys.readouterr().err
    # an existing CSV or true model is not replaced either (a review lost a 21 s recording that way)
    (tmp_path / "t.yaml").write_text("kept\n")
    (tmp_path / "run.csv").write_text("kept\n")
    for extra, message in ((["--truth-out", str(tmp_path / "t.yaml")], "--truth-out"),
                           (["--truth-out", str(tmp_path / "t2.yaml"), "--csv", str(tmp_path / "run.csv")], "--csv")):
        assert main(["simulate-experiment", "--excitation", "prbs", "--out", str(tmp_path / "new2"), *extra]) == 1
        assert f"{message} {tmp_path}" in capsys.readouterr().err
    assert (tmp_path / "t.yaml").read_text() == "kept\n" and (tmp_path / "run.csv").read_text() == "kept\n"
