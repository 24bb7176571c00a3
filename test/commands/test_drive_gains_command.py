"""``rdi drive-gains``: two recordings -> gains; its inputs checked first (units, --out), nothing good lost."""

import json

import numpy as np
import pytest

from robot_dynamics_id.cli import main
from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
from robot_dynamics_id.io.bag_writer import write_recording_bag
from robot_dynamics_id.io.payload_file import FlangePayload, model_with_payload

GAINS = np.array([9.5, 10.2, 8.1, 7.0, 7.3, 7.7])
PAYLOAD_KG, PAYLOAD_COM = 1.5, "0.05,0.02,0.06"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A UR3 truth's runs (different excitations) without and with a known payload, as bags with currents."""
    folder = tmp_path_factory.mktemp("drive_gains")
    truth = perturbed_truth("ur3", seed=2, relative=0.1)
    payload = FlangePayload(mass_kg=PAYLOAD_KG, com_m=np.array([0.05, 0.02, 0.06]),
                            inertia_about_com_kgm2=np.zeros((3, 3)), frame="tool0", inertia_used=False, doubtful=(),
                            robot="ur3", arm_model=None, source="test")
    empty = write_recording_bag(folder / "empty", synthetic_ur_recording(truth, GAINS, duration_s=30.0, seed=1))
    loaded = write_recording_bag(folder / "loaded", synthetic_ur_recording(model_with_payload(truth, payload), GAINS,
                                                                           duration_s=30.0, seed=2))
    return folder, empty, loaded


def _drive_gains(empty, loaded, *extra):
    return main(["drive-gains", "--data", str(empty), "--payload-data", str(loaded), "--payload-kg", str(PAYLOAD_KG),
                 "--payload-com", PAYLOAD_COM, *extra])


def test_gains_are_written_and_a_doubtful_run_never_replaces_them(runs, capsys):
    folder, empty, loaded = runs
    out = folder / "result"
    out.mkdir()
    assert _drive_gains(empty, loaded, "--out", str(out)) == 0, capsys.readouterr().err
    written = json.loads((out / "drive_gains.json").read_text())
    assert written["status"] == "ok"
    np.testing.assert_allclose(written["drive_gains_nm_per_a"], GAINS, rtol=0.03)
    assert f"or --drive-gains {out / 'drive_gains.json'}" in capsys.readouterr().out
    from robot_dynamics_id.commands.identify import parse_gains

    assert parse_gains(str(out / "drive_gains.json")) == written["drive_gains_nm_per_a"]  # identify reads the file
    assert parse_gains(str(out / "drive_gains.json"), "ur3") == written["drive_gains_nm_per_a"]
    # gains calibrated as one arm are refused for another (a review's ur3e gains were taken for a ur3 in silence)
    with pytest.raises(ValueError, match=r"calibrated as a ur3 \(its inputs.robot\), but the arm here is ur5e"):
        parse_gains(str(out / "drive_gains.json"), "ur5e")
    # the CoM's x offset left out: the runs do not fit one arm with the declared payload (exit 3)
    assert main(["drive-gains", "--data", str(empty), "--payload-data", str(loaded), "--payload-kg", str(PAYLOAD_KG),
                 "--payload-com", "0,0.02,0.06", "--out", str(out / "drive_gains.json")]) == 3
    captured = capsys.readouterr()
    assert "DOUBTFUL RESULT" in captured.err and "drive_gains.doubtful.json" in captured.out
    assert json.loads((out / "drive_gains.json").read_text()) == written  # the good result is kept
    assert json.loads((out / "drive_gains.doubtful.json").read_text())["status"] == "doubtful"
    with pytest.raises(ValueError, match="the gains there are 'doubtful'"):
        parse_gains(str(out / "drive_gains.doubtful.json"))


@pytest.mark.parametrize("extra, phrase", [
    (("--payload-kg", "3.31"), "exceeds the ur3's rated payload 3 kg: give the mass in kg (1 lb = 0.4536 kg"),
    (("--payload-com", "50,20,60"), "give it in metres (57 mm is 0.057)"),
], ids=["mass_in_lb", "com_in_mm"])
def test_a_unit_slip_in_the_known_payload_is_refused_before_any_data_is_read(runs, capsys, extra, phrase):
    folder, empty, loaded = runs
    assert main(["drive-gains", "--data", str(folder / "not_read"), "--payload-data", str(loaded),
                 "--payload-kg", str(PAYLOAD_KG), "--payload-com", PAYLOAD_COM, *extra]) == 1
    assert phrase in capsys.readouterr().err


def test_out_is_checked_before_the_fit_and_never_replaces_other_files(runs, capsys, tmp_path):
    folder, empty, loaded = runs
    notes = tmp_path / "notes.txt"
    notes.write_text("lab notes\n")
    size = sum(f.stat().st_size for f in empty.iterdir())
    for target, phrase in ((empty / "gains.json", "points into the input data"),
                           (tmp_path / "missing" / "gains.json", "does not exist; create it first"),
                           (notes, "exists and is not an earlier rdi drive-gains result")):
        assert _drive_gains(empty, loaded, "--out", str(target)) == 1
        captured = capsys.readouterr()
        assert phrase in captured.err and captured.out == "", target  # refused before the fit printed anything
    assert notes.read_text() == "lab notes\n" and sum(f.stat().st_size for f in empty.iterdir()) == size
    assert not (empty / "gains.json").exists()


def test_a_payload_mass_off_by_half_makes_the_gains_doubtful(runs, capsys, tmp_path):
    # every gain scales with the declared mass, which the two runs cannot show: the arm's own gravity torque can
    folder, empty, loaded = runs
    out = tmp_path / "gains.json"
    assert main(["drive-gains", "--data", str(empty), "--payload-data", str(loaded), "--payload-kg",
                 str(PAYLOAD_KG / 2), "--payload-com", PAYLOAD_COM, "--out", str(out)]) == 3
    err = capsys.readouterr().err
    assert "with these gains the run without the payload is 0.5" in err and "every gain is off by that factor" in err
    written = [json.loads(f.read_text())["status"] for f in tmp_path.glob("gains*.json")]
    assert written == ["doubtful"], written
