"""payload.yaml read back: the payload a user gets, the refusals, and an arm model carrying it."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robot_dynamics_id.dynamics.payload import payload_parameters, payload_regressor
from robot_dynamics_id.dynamics.regressor import rigid_body_regressor
from robot_dynamics_id.identification.payload import PayloadEstimate
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.io.payload_file import (
    PayloadFileError, load_payload_file, model_with_payload, payload_notes,
)
from robot_dynamics_id.robots import load_robot

MASS, COM = 1.3, np.array([0.02, -0.01, 0.05])
INERTIA = np.array([[3e-3, 2e-4, -1e-4], [2e-4, 2.5e-3, 3e-4], [-1e-4, 3e-4, 2e-3]])


def _write(path, *, determined=True, warnings=(), robot="ur3", arm_model="/somewhere/model.yaml", **changes):
    """A payload.yaml as `rdi payload` writes it (PayloadEstimate.to_dict)."""
    theta = payload_parameters(MASS, COM, INERTIA)
    estimate = PayloadEstimate(
        mass_kg=MASS, mass_std_kg=0.001, com_m=COM, com_std_m=np.full(3, 1e-4), inertia_about_com_kgm2=INERTIA,
        inertia_std_kgm2=np.full(6, 1e-5), parameters=theta, parameters_std=np.full(10, 1e-4),
        parameters_covariance=np.eye(10) * 1e-8, physically_consistent=True, realisable_inertia_kgm2=INERTIA,
        condition_number=1.5, residual_rms_nm=np.full(6, 0.1), payload_torque_rms_nm=np.ones(6), n_samples=300,
        warnings=tuple(warnings), provenance={"robot": robot, "arm_model": arm_model}, inertia_determined=determined)
    doc = {**estimate.to_dict(), **changes}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_reads_what_rdi_payload_writes(tmp_path):
    payload = load_payload_file(_write(tmp_path / "payload.yaml"))
    assert payload.mass_kg == MASS and payload.frame == "tool0" and payload.robot == "ur3"
    np.testing.assert_allclose(payload.com_m, COM)
    np.testing.assert_allclose(payload.inertia_about_com_kgm2, INERTIA)
    assert payload.inertia_used and payload.doubtful == ()
    assert payload_notes(payload, "/somewhere/model.yaml") == []


def test_an_undetermined_inertia_is_read_as_a_point_mass_and_doubts_are_kept(tmp_path):
    path = _write(tmp_path / "p.yaml", determined=False, warnings=["the mass is uncertain: std 0.1 kg (8 % > 2 %)"])
    payload = load_payload_file(path)
    assert not payload.inertia_used and np.all(payload.inertia_about_com_kgm2 == 0)
    notes = " ".join(payload_notes(payload, tmp_path / "other_model.yaml"))
    assert "point mass of 1.300 kg" in notes and "doubtful (the mass is uncertain)" in notes
    assert "identified with another arm model (/somewhere/model.yaml)" in notes
    # files written before `inertia_determined`: the missing set-payload call with an inertia says it
    doc = yaml.safe_load(path.read_text())
    del doc["inertia_determined"]
    path.write_text(yaml.safe_dump(doc))
    assert not load_payload_file(path).inertia_used


@pytest.mark.parametrize("change, message", [
    ({"schema": "robot_dynamics_id/model/1"}, "expected 'robot_dynamics_id/payload/1'"),
    ({"mass_kg": 0.0}, "a payload needs a positive mass"),
    ({"com_m": [0.0, 0.1]}, "com_m must be 3 finite numbers"),
    ({"realisable_inertia_about_com_kgm2": {"ixx": 1.0}}, "must map each of"),
])
def test_bad_files_are_refused_naming_the_entry(tmp_path, change, message):
    with pytest.raises(PayloadFileError, match=message):
        load_payload_file(_write(tmp_path / "p.yaml", **change))


def test_missing_or_not_yaml(tmp_path):
    with pytest.raises(PayloadFileError, match="does not exist; write one with `rdi payload"):
        load_payload_file(tmp_path / "none.yaml")
    (tmp_path / "bad.yaml").write_text("mass_kg: [1,\n")
    with pytest.raises(PayloadFileError, match="not valid YAML"):
        load_payload_file(tmp_path / "bad.yaml")


def test_the_model_with_the_payload_predicts_arm_plus_payload_torque(tmp_path):
    model = DynamicModel.nominal("ur3")
    robot = load_robot("ur3")
    payload = load_payload_file(_write(tmp_path / "p.yaml"))
    loaded = model_with_payload(model, payload)
    assert loaded.provenance["payload"]["mass_kg"] == MASS and loaded.base_parameters is None
    assert np.all(loaded.is_physically_consistent())
    q, qd, qdd = np.random.default_rng(0).uniform(-2, 2, (3, 40, 6))
    w = rigid_body_regressor(robot, q, qd, qdd)
    expected = w @ model.standard_parameters() + payload_regressor(robot, q, qd, qdd) @ payload_parameters(
        MASS, COM, INERTIA)
    np.testing.assert_allclose(w @ loaded.standard_parameters(), expected, atol=1e-9)
    # the nominal robot carrying it (what validate's data checks compare with): pinocchio's own RNEA agrees
    def rnea(rm):
        data = rm.model.createData()
        return np.array([pin.rnea(rm.model, data, a, b, c) for a, b, c in zip(q, qd, qdd)]).ravel()

    np.testing.assert_allclose(rnea(robot.with_flange_payload(MASS, COM, INERTIA)) - rnea(robot),
                               expected - w @ model.standard_parameters(), atol=1e-9)


def test_another_robot_or_an_inconsistent_model_cannot_carry_it(tmp_path):
    payload = load_payload_file(_write(tmp_path / "p.yaml", robot="ur5e"))
    with pytest.raises(PayloadFileError, match="identified on ur5e, the model is of ur3"):
        model_with_payload(DynamicModel.nominal("ur3"), payload)
    model = DynamicModel.nominal("ur3")
    masses = model.link_mass_kg.copy()
    masses[2] = -1.0
    with pytest.raises(PayloadFileError, match=r"links \[2\] are not physically consistent"):
        model_with_payload(replace(model, link_mass_kg=masses), load_payload_file(_write(tmp_path / "q.yaml")))


def test_a_copy_of_the_arm_model_is_the_same_model(tmp_path):
    original, copy = tmp_path / "a" / "model.yaml", tmp_path / "shared" / "model.yaml"
    for path in (original, copy):  # the model moved to a shared folder: the same content
        path.parent.mkdir()
        path.write_text("schema: robot_dynamics_id/model/1\nrobot: ur3\n")
    payload = load_payload_file(_write(tmp_path / "p.yaml", arm_model=str(original)))
    assert payload.arm_model == str(original)
    assert payload_notes(payload, copy) == []
    copy.write_text("schema: robot_dynamics_id/model/1\nrobot: ur5e\n")
    assert any("another arm model" in note for note in payload_notes(payload, copy))
