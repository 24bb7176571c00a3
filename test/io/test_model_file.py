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


def test_a_controller_is_told_of_a_doubtful_model_and_of_friction_that_falls_before_the_velocity_limits():
    """notes_for_use (osc_controller, collision observer): a doubtful result's problems; a friction law without
    a speed range (a file from before it was recorded) that stops rising below the arm's velocity limits."""
    model = perturbed_truth("ur3", seed=2, relative=0.1)
    n = model.n_joints
    assert model.notes_for_use() == []
    doubtful = replace(model, provenance={"status": "doubtful", "problems": ["training fit is below zero"]})
    assert doubtful.notes_for_use() == ["was identified as DOUBTFUL: training fit is below zero"]
    falls = np.zeros(n)
    falls[1] = -0.5  # k_v + 2 k_2 v = 0 at v = k_v: below the UR3's 3.14 rad/s for k_v < 3.14
    friction = replace(model.friction, viscous_nm_s_per_rad=np.full(n, 1.0), viscous_quadratic_nm_s2_per_rad2=falls,
                       load_coefficient=np.zeros(n), presliding_distance_rad=np.zeros(n), terms=None)
    (note,) = replace(model, friction=friction).notes_for_use()
    assert note.startswith("records no speed range") and f"{model.joint_names[1]} past 1.00 rad/s" in note
    ranged = replace(friction, speed_range_rad_s=np.full(n, 0.8))
    assert replace(model, friction=ranged).notes_for_use() == []  # a recorded range extends the law safely
    slow_top = replace(friction, viscous_quadratic_nm_s2_per_rad2=np.where(falls < 0, -0.1, 0.0), terms=None)
    assert replace(model, friction=slow_top).notes_for_use() == []  # its top, 5 rad/s, is past the limits
