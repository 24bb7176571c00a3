"""The model file: no placeholder gains, parameters of any model, a clear refusal where bodies must be real."""

from dataclasses import replace

import numpy as np
import pinocchio as pin
import pytest
import yaml

from robot_dynamics_id.io.model_file import DynamicModel, ModelFileError
from robot_dynamics_id.identification.synthetic import perturbed_truth


def test_unknown_drive_gains_are_stored_as_null_and_read_back_as_none(tmp_path):
    model = DynamicModel.nominal("ur3")
    assert model.drive_gains_nm_per_a is None
    path = model.save(tmp_path / "m.yaml")
    assert yaml.safe_load(path.read_text())["drive_gains_nm_per_a"] is None
    assert DynamicModel.load(path).drive_gains_nm_per_a is None
    with_gains = replace(model, drive_gains_nm_per_a=np.array([10, 10, 8, 6, 6, 6.0]))
    np.testing.assert_array_equal(DynamicModel.load(with_gains.save(tmp_path / "g.yaml")).drive_gains_nm_per_a,
                                  [10, 10, 8, 6, 6, 6])


def test_placeholder_gains_of_older_files_are_read_as_unknown(tmp_path):
    data = DynamicModel.nominal("ur3").to_dict()
    data["drive_gains_nm_per_a"] = [1.0] * 6  # what identify wrote before provenance.identified_from existed
    path = tmp_path / "old.yaml"
    path.write_text(yaml.safe_dump(data))
    assert DynamicModel.load(path).drive_gains_nm_per_a is None
    # the same values in a file that records what it was identified from are real gains
    data["provenance"] = {"identified_from": {"torque_source": "current", "drive_gains_nm_per_a": [1.0] * 6}}
    path.write_text(yaml.safe_dump(data))
    np.testing.assert_array_equal(DynamicModel.load(path).drive_gains_nm_per_a, np.ones(6))


def test_standard_parameters_of_consistent_and_non_physical_models():
    truth = perturbed_truth("ur3", seed=4)
    expected = np.concatenate([pin.Inertia(float(truth.link_mass_kg[i]), truth.link_com_m[i],
                                           truth.link_inertia_kgm2[i]).toDynamicParameters() for i in range(6)])
    np.testing.assert_allclose(truth.standard_parameters(), expected, rtol=1e-12, atol=1e-15)
    theta = truth.standard_parameters().reshape(6, 10)
    theta[2, 0] = -0.4  # a negative mass, as an unconstrained estimate may give
    theta[4, 4] = -0.01
    broken = truth.with_standard_parameters(theta.ravel())
    assert not broken.is_physically_consistent()[2]
    np.testing.assert_allclose(broken.standard_parameters(), theta.ravel(), rtol=1e-9, atol=1e-12)
    with pytest.raises(ModelFileError, match=r"link\(s\) \[2, 4\] are not physically consistent.*--method consistent"):
        broken.robot_model()


def test_the_mount_is_recorded_and_files_without_it_are_a_floor_mount(tmp_path):
    tilted = replace(perturbed_truth("ur3", seed=5), gravity_m_s2=np.array([0.0, 4.905, -8.496]))
    path = tilted.save(tmp_path / "model.yaml")
    loaded = DynamicModel.load(path)
    np.testing.assert_allclose(loaded.gravity_m_s2, [0.0, 4.905, -8.496])
    np.testing.assert_allclose(loaded.robot_model().gravity_m_s2, [0.0, 4.905, -8.496])
    np.testing.assert_allclose(loaded.kinematics().gravity_m_s2, [0.0, 4.905, -8.496])
    data = yaml.safe_load(path.read_text())
    del data["gravity_m_s2"]  # a file written before the key existed
    np.testing.assert_allclose(DynamicModel.from_dict(data).gravity_m_s2, [0.0, 0.0, -9.81])
    data["gravity_m_s2"] = [0.0, 0.0, -1.0]
    with pytest.raises(ModelFileError, match="gravity_m_s2: .*floor mount is 0,0,-9.81"):
        DynamicModel.from_dict(data, source="bad.yaml")
