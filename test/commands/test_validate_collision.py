"""``rdi validate --collision-thresholds``: thresholds of the collision observer from a collision-free bag."""

import json

import pytest

from robot_dynamics_id.cli import main
from robot_dynamics_id.control.collision import CollisionDetector, CollisionThresholds
from robot_dynamics_id.io.bag_reader import read_bag
from robot_dynamics_id.io.model_file import DynamicModel


@pytest.mark.parametrize("rate, gain", [(500.0, 50.0), (125.0, 31.25)])
def test_thresholds_from_a_simulated_bag_go_into_the_model_and_pass_that_bag(tmp_path, capsys, rate, gain):
    bag, model_path = tmp_path / "bag", tmp_path / "model.yaml"
    assert main(["simulate-experiment", "--excitation", "prbs", "--duration", "6", "--seed", "1", "--truth-seed", "4",
                 "--rate", str(rate), "--out", str(bag), "--truth-out", str(model_path), "--quiet"]) == 0
    before = model_path.read_text()
    code = main(["validate", "--model", str(model_path), "--data", str(bag), "--out", str(tmp_path / "v"),
                 "--collision-thresholds"])
    out = capsys.readouterr().out
    assert code == 0
    assert f"collision thresholds (Nm) at {rate:g} Hz, observer gain {gain:g} 1/s" in out
    model = DynamicModel.load(model_path)
    thresholds = CollisionThresholds.from_model(model)
    assert thresholds.rate_hz == rate and thresholds.observer_gain_per_s == gain
    assert thresholds.threshold_nm.shape == (6, 4) and thresholds.threshold_nm.max() < 2.0
    assert json.loads((tmp_path / "v" / "collision_thresholds.json").read_text())["rate_hz"] == rate
    # the rest of the model is unchanged
    unchanged = DynamicModel.load(model_path)
    assert before.split("provenance")[0] == model_path.read_text().split("provenance")[0]
    assert unchanged.standard_parameters().tolist() == model.standard_parameters().tolist()
    # the recording they came from raises no collision
    recording = read_bag(bag)
    detector = CollisionDetector(model, thresholds, rate_hz=rate)
    events = [detector.update(t, q, qd, i) for t, q, qd, i in
              zip(recording.time_s, recording.q_rad, recording.qd_rad_s, recording.current_a)]
    assert not any(events)


def test_thresholds_refuse_a_model_file_that_does_not_exist(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    code = main(["validate", "--model", str(tmp_path / "none.yaml"), "--data", str(tmp_path / "data"), "--out",
                 str(tmp_path / "v"), "--collision-thresholds"])
    assert code == 1
    assert "does not exist" in capsys.readouterr().err


def test_thresholds_refuse_drive_gains_other_than_the_model_files(tmp_path):
    """The observer uses the model file's gains on the robot: thresholds scored with other gains (rdi validate
    --drive-gains) would belong to another torque scale, so they are refused, naming the fix."""
    from robot_dynamics_id.commands._collision_thresholds import measure_collision_thresholds

    bag, model_path = tmp_path / "bag", tmp_path / "model.yaml"
    assert main(["simulate-experiment", "--excitation", "prbs", "--duration", "4", "--seed", "1", "--truth-seed", "4",
                 "--rate", "125", "--out", str(bag), "--truth-out", str(model_path), "--quiet"]) == 0
    stored = DynamicModel.load(model_path).drive_gains_nm_per_a
    before = model_path.read_text()
    with pytest.raises(ValueError, match="differ from the gains in .*rdi identify --drive-gains"):
        measure_collision_thresholds(model_path, bag, drive_gains_nm_per_a=list(stored * 1.1))
    assert model_path.read_text() == before  # nothing written
    thresholds = measure_collision_thresholds(model_path, bag, drive_gains_nm_per_a=list(stored))
    assert thresholds.rate_hz == 125.0


@pytest.mark.parametrize("flags, expected", [
    (["--collision-quantile", "1.5"], "--collision-quantile 1.5 must be in [0.5, 1]"),
    (["--collision-margin", "-1"], "--collision-margin -1 must be >= 0"),
    (["--collision-gain", "0"], "--collision-gain 0 must be > 0"),
])
def test_bad_collision_options_are_refused_before_anything_is_written(tmp_path, capsys, flags, expected):
    (tmp_path / "data").mkdir()
    (tmp_path / "model.yaml").write_text("not read: the options are checked first\n")
    code = main(["validate", "--model", str(tmp_path / "model.yaml"), "--data", str(tmp_path / "data"), "--out",
                 str(tmp_path / "v"), "--collision-thresholds", *flags])
    assert code == 1 and expected in capsys.readouterr().err
    assert not (tmp_path / "v").exists()


def test_a_gain_too_large_for_the_recording_rate_is_refused_naming_the_flag(tmp_path):
    from robot_dynamics_id.commands._collision_thresholds import measure_collision_thresholds

    bag, model_path = tmp_path / "bag", tmp_path / "model.yaml"
    assert main(["simulate-experiment", "--excitation", "prbs", "--duration", "4", "--seed", "1", "--truth-seed", "4",
                 "--rate", "125", "--out", str(bag), "--truth-out", str(model_path), "--quiet"]) == 0
    before = model_path.read_text()
    with pytest.raises(ValueError, match=r"--collision-gain: observer gain 500 1/s is too large for 125 Hz"):
        measure_collision_thresholds(model_path, bag, gain_per_s=500.0)
    assert model_path.read_text() == before


def test_useless_thresholds_are_refused_and_the_tool_they_were_measured_with_is_kept(tmp_path, capsys):
    """A margin that puts a threshold near the rated torque is refused (the detector would miss collisions); the
    thresholds record the tool the observer carried, and a detector carrying another one is refused."""
    from dataclasses import replace

    from robot_dynamics_id.commands._collision_thresholds import measure_collision_thresholds
    from robot_dynamics_id.hardware.collision_config import make_collision_detector

    bag, model_path = tmp_path / "bag", tmp_path / "model.yaml"
    assert main(["simulate-experiment", "--excitation", "prbs", "--duration", "4", "--seed", "1", "--truth-seed", "4",
                 "--rate", "125", "--out", str(bag), "--truth-out", str(model_path), "--quiet"]) == 0
    before = model_path.read_text()
    with pytest.raises(ValueError, match=r"% of the ur3's rated .* Nm: a detector that misses collisions. Cause: "
                                         r"--collision-margin 100 is large"):
        measure_collision_thresholds(model_path, bag, margin=100.0)
    assert model_path.read_text() == before  # nothing written
    # measured on the recording the model came from: said, and a second measurement says what it replaced
    replace(DynamicModel.load(model_path), provenance={"data": str(bag.resolve())}).save(model_path)
    args = ["validate", "--model", str(model_path), "--data", str(bag), "--collision-thresholds"]
    assert main([*args, "--out", str(tmp_path / "v1")]) == 0
    assert "is the recording the model was identified from" in capsys.readouterr().err
    assert main([*args, "--out", str(tmp_path / "v2")]) == 0
    assert f"note: replaced the thresholds measured on {bag.resolve()}" in capsys.readouterr().err
    assert CollisionThresholds.from_model(DynamicModel.load(model_path)).provenance["payload_kg"] == 0.0
    assert make_collision_detector({"model_file": str(model_path)}, rate_hz=125.0).notes == []
    # another tool than they were measured with: said (not refused: a mounted, declared tool is compensated)
    (note,) = make_collision_detector({"model_file": str(model_path), "payload_kg": 1.5}, rate_hz=125.0).notes
    assert "measured with a 0 kg tool, the observer carries 1.5 kg (payload_kg)" in note
