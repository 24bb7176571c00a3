"""The simulator's true parameters: seeded, plausible, physically consistent, and in the model-file schema."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.friction import FrictionParameters
from robot_dynamics_id.io.model_file import DynamicModel
from robot_dynamics_id.robots import ROBOT_NAMES
from robot_dynamics_id.sim.truth import (
    TruthSpread, controller_model, make_truth, nominal_drive_gains, nominal_friction, nominal_truth,
)


def _assert_models_equal(a: DynamicModel, b: DynamicModel) -> None:
    np.testing.assert_allclose(a.link_mass_kg, b.link_mass_kg, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.link_com_m, b.link_com_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.link_inertia_kgm2, b.link_inertia_kgm2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.rotor_inertia_kgm2, b.rotor_inertia_kgm2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.drive_gains_nm_per_a, b.drive_gains_nm_per_a, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.friction.linear_vector(), b.friction.linear_vector(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.friction.stribeck_velocity_rad_s, b.friction.stribeck_velocity_rad_s, atol=1e-12)
    np.testing.assert_allclose(a.friction.coulomb_velocity_rad_s, b.friction.coulomb_velocity_rad_s, atol=1e-12)


def test_same_seed_same_truth_and_different_seeds_differ():
    _assert_models_equal(make_truth("ur3", 7), make_truth("ur3", 7))
    a, b = make_truth("ur3", 7), make_truth("ur3", 8)
    assert np.max(np.abs(a.link_mass_kg - b.link_mass_kg)) > 1e-3
    assert np.max(np.abs(a.friction.coulomb_nm - b.friction.coulomb_nm)) > 1e-3


def test_zero_spread_is_the_nominal_truth():
    _assert_models_equal(make_truth("ur3", 3, spread=0.0), nominal_truth("ur3"))


@pytest.mark.parametrize("robot", ROBOT_NAMES)
def test_truths_are_physically_consistent_and_within_the_spread(robot):
    nominal = nominal_truth(robot)
    spread = TruthSpread()
    for seed in range(40):
        truth = make_truth(robot, seed)
        assert truth.is_physically_consistent().all(), f"seed {seed}"
        ratio = truth.link_mass_kg / nominal.link_mass_kg
        assert np.all(np.abs(ratio - 1) <= spread.mass_rel + 1e-12)
        assert np.all(np.abs(truth.link_com_m - nominal.link_com_m) <= spread.com_m + 1e-12)
        gain_ratio = truth.drive_gains_nm_per_a / nominal.drive_gains_nm_per_a
        assert np.all(np.abs(gain_ratio - 1) <= spread.drive_gain_rel + 1e-12)
        assert np.all(truth.rotor_inertia_kgm2 > 0)
        # principal moments strictly positive (MuJoCo rejects anything else)
        for inertia in truth.link_inertia_kgm2:
            assert np.linalg.eigvalsh(inertia).min() > 0
        # the perturbation actually changes inertias (something to identify)
    assert not np.allclose(make_truth(robot, 1).link_inertia_kgm2, nominal.link_inertia_kgm2)


def test_ur3_friction_is_in_the_plausible_range():
    for seed in range(40):
        f = make_truth("ur3", seed).friction
        assert np.all((f.coulomb_nm[:2] >= 1.0) & (f.coulomb_nm[:2] <= 3.0)), f.coulomb_nm
        assert np.all((f.coulomb_nm[3:] >= 0.4) & (f.coulomb_nm[3:] <= 1.0)), f.coulomb_nm
        assert np.all((f.stribeck_velocity_rad_s >= 0.05) & (f.stribeck_velocity_rad_s <= 0.2))
        assert np.all(f.static_nm > 0) and np.all(f.viscous_nm_s_per_rad > 0)
        assert np.all(np.abs(f.offset_nm) <= 0.1 * nominal_friction("ur3").coulomb_nm + 1e-12)


def test_drive_gains_are_the_stated_assumption():
    np.testing.assert_allclose(nominal_drive_gains("ur3"), [10, 10, 8, 6, 6, 6])
    assert np.all(nominal_drive_gains("ur10e") > 8)
    with pytest.raises(ValueError, match="unknown robot"):
        nominal_drive_gains("ur42")


def test_truth_round_trips_through_the_model_yaml(tmp_path):
    truth = make_truth("ur3", 11)
    path = truth.save(tmp_path / "truth.yaml")
    loaded = DynamicModel.load(path)
    _assert_models_equal(truth, loaded)
    assert loaded.robot == "ur3"
    assert loaded.provenance["seed"] == 11
    assert loaded.is_physically_consistent().all()


def test_controller_model_is_nominal_without_friction():
    model = controller_model("ur3")
    nominal = DynamicModel.nominal("ur3")
    np.testing.assert_allclose(model.standard_parameters(), nominal.standard_parameters())
    assert np.all(model.friction.linear_vector() == 0)
    np.testing.assert_allclose(model.drive_gains_nm_per_a, nominal_drive_gains("ur3"))
    assert isinstance(model.friction, FrictionParameters)


def test_negative_spread_is_rejected():
    with pytest.raises(ValueError, match="spread"):
        make_truth("ur3", 0, spread=-1.0)


def test_real_friction_truths_are_dissipative_concave_and_keep_the_rigid_body_draws():
    from robot_dynamics_id.dynamics.friction import steady_friction_curve

    for seed in range(30):
        real, p2 = make_truth("ur3", seed, friction="real"), make_truth("ur3", seed)
        np.testing.assert_allclose(real.link_mass_kg, p2.link_mass_kg, rtol=0, atol=0)
        np.testing.assert_allclose(real.link_inertia_kgm2, p2.link_inertia_kgm2, rtol=0, atol=0)
        f = real.friction
        assert f.terms == ("p2+load+poly+presliding",) * 6
        speeds = np.linspace(0.0, 2.0, 41)
        curve = steady_friction_curve(f, speeds)
        assert np.all(curve > 0), seed  # dissipative wherever a UR3 joint moves in an excitation
        # the big joints' friction rises from standstill and flattens: above its chord from 0 to 2 rad/s
        # (concave on that scale; near 0 the Stribeck rise itself is convex for speeds below x_s / sqrt(3))
        assert np.all(curve[20, :3] > 0.5 * (curve[0, :3] + curve[40, :3])), seed
        assert np.all((f.load_coefficient > 0.03) & (f.load_coefficient < 0.09))
        assert np.all((f.presliding_distance_rad >= 5e-4) & (f.presliding_distance_rad <= 1.5e-3))
    with pytest.raises(ValueError, match="friction kind"):
        make_truth("ur3", 1, friction="lugre")
