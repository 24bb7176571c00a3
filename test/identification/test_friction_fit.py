"""Friction in the identification: recovery of known terms, the choice of the family, dissipativity, standstill."""

from dataclasses import replace

import numpy as np
import pytest

from robot_dynamics_id.dynamics.friction import FrictionParameters, steady_friction_curve
from robot_dynamics_id.identification.friction_columns import FrictionDesign, dissipativity_rows, standstill_mask
from robot_dynamics_id.identification.friction_fit import _valleys, local_minima
from robot_dynamics_id.identification.friction_uncertainty import _on_search_boundary
from robot_dynamics_id.identification.pipeline import IdentificationOptions, identify, predict_torque, validate
from robot_dynamics_id.identification.synthetic import inverse_dynamics, perturbed_truth, synthetic_recording
from robot_dynamics_id.sim.truth import make_truth, nominal_friction


def _truth(friction: FrictionParameters):
    return replace(perturbed_truth("ur3", seed=1), friction=friction)


@pytest.fixture(scope="module")
def real():
    """A UR3 with the friction real joints have (load-dependent, concave, presliding) and noisy torques."""
    truth = _truth(nominal_friction("ur3", "real"))
    train = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3, torque_noise_nm=0.05,
                                position_noise_rad=1e-5)
    check = synthetic_recording(truth, duration_s=15, rate_hz=200, seed=8, torque_noise_nm=0.05,
                                position_noise_rad=1e-5)
    return truth, train, check


def test_known_terms_are_recovered_where_the_data_excite_them(real):
    truth, train, _ = real
    result = identify(train, "ur3", IdentificationOptions(friction_model="p2+load+poly+presliding"))
    fr, tr = result.model.friction, truth.friction
    assert fr.terms == ("p2+load+poly+presliding",) * 6
    # the joints carrying load torque: mu within 10 %, the presliding distance (seen only through the
    # low-passed transitions at reversals) within 20 %
    for name, bar in (("load_coefficient", 0.10), ("presliding_distance_rad", 0.20)):
        error = np.abs(getattr(fr, name)[1:3] / getattr(tr, name)[1:3] - 1)
        assert np.all(error < bar), (name, getattr(fr, name), getattr(tr, name))
    # the friction curve over the speeds the run reached, within 5 % (Stribeck, Coulomb, viscous and
    # quadratic terms can trade with each other over a limited speed range: the curve is what counts)
    for j in range(6):
        speeds = np.linspace(0.05, np.abs(train.qd_rad_s[:, j]).max(), 20)
        curve, true_curve = steady_friction_curve(fr, speeds)[:, j], steady_friction_curve(tr, speeds)[:, j]
        assert np.all(np.abs(curve - true_curve) < 0.05 * np.abs(true_curve)), j
        assert np.all(curve >= 0)
    # every parameter the reported uncertainty calls determined (3 sigma inside 10 %) is within 10 %
    u = result.friction_uncertainty
    determined = 0
    for name, std in zip(u["names"], u["std"]):
        joint, parameter = int(name[5]) - 1, name.split(".")[1]
        if parameter == "offset_nm":
            continue
        value, true = getattr(fr, parameter)[joint], getattr(tr, parameter)[joint]
        relative = std if parameter in ("stribeck_velocity_rad_s", "presliding_distance_rad") else std / abs(value)
        if relative < 0.1 / 3:
            determined += 1
            assert abs(value / true - 1) < 0.10, (name, value, true, relative)
    assert determined >= 6


def test_the_choice_finds_the_true_family_and_beats_the_p2_model(real):
    truth, train, check = real
    chosen = identify(train, "ur3")
    selection = chosen.model.provenance["friction_model"]["selection"]
    assert selection["chosen"] == list(chosen.model.friction.terms)
    # every joint's friction has a presliding state and the loaded joints a load term: both must be found
    assert all("presliding" in t for t in chosen.model.friction.terms), chosen.model.friction.terms
    assert all("load" in t for t in chosen.model.friction.terms[1:3]), chosen.model.friction.terms
    p2 = identify(train, "ur3", IdentificationOptions(friction_model="p2"))
    # the condition number without the extended terms is the P2 model's own (excitation_checks.excitation_checks)
    assert chosen.condition_number_p2 == pytest.approx(p2.condition_number, rel=1e-9)
    assert p2.condition_number_p2 == p2.condition_number < chosen.condition_number
    rms_auto = np.asarray(validate(chosen.model, check, "ur3", cutoff_hz=chosen.data.cutoff_hz)["rms_nm"])
    rms_p2 = np.asarray(validate(p2.model, check, "ur3", cutoff_hz=p2.data.cutoff_hz)["rms_nm"])
    assert np.all(rms_auto < 0.5 * rms_p2), (rms_auto, rms_p2)


def test_the_search_starts_from_the_lowest_valleys_of_a_profile():
    profile = np.array([3.0, 2.0, 2.5, 1.0, 4.0, 0.5, 0.7, 0.6])
    assert local_minima(profile) == [1, 3, 5, 7]
    assert _valleys(profile, keep=3) == [5, 7, 3]
    assert _valleys(np.array([2.0, 1.0, 0.5])) == [2]


def test_the_shape_search_fits_as_well_as_the_true_shape_constants():
    """The Stribeck velocity and the presliding distance trade at reversals: from the starting distance the
    lowest valley of the Stribeck profile can be the wrong one (this truth, searched coordinate-wise from
    there, ended 27-30 % above the true constants' residual on joints 1 and 3). Searched from every valley,
    the fit is as good as the one with the true Stribeck velocities."""
    truth = make_truth("ur3", 14, friction="real")
    train = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3, torque_noise_nm=0.05,
                                position_noise_rad=1e-5)
    rms = {}
    for label, options in (("searched", {}), ("true x_s", {"fit_stribeck": False, "stribeck_velocity_rad_s":
                                                            truth.friction.stribeck_velocity_rad_s})):
        result = identify(train, "ur3", IdentificationOptions(friction_model="p2+load+poly+presliding", **options))
        rms[label] = np.sqrt(np.mean((result.measured_torque_nm - result.predicted_torque_nm) ** 2, axis=0))
    assert np.all(rms["searched"] <= 1.03 * rms["true x_s"]), rms["searched"] / rms["true x_s"]


def test_a_p2_arm_gets_the_p2_model():
    truth = perturbed_truth("ur3", seed=1)
    train = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3, torque_noise_nm=0.05)
    result = identify(train, "ur3")
    terms = result.model.friction.terms
    assert sum(t == "p2" for t in terms) >= 5, terms
    assert not any("presliding" in t or "load" in t for t in terms), terms


def test_consistent_estimate_keeps_a_negative_static_term_and_loses_nothing(real):
    """Friction that rises from standstill needs f_s < 0; the constraint is dissipativity, not f_s >= 0."""
    truth, train, _ = real
    consistent = identify(train, "ur3", IdentificationOptions(friction_model="p2+load+poly+presliding"))
    rms = consistent.model.provenance["training_moving_rms_nm"]
    # the unconstrained weighted fit is the best possible on these rows: the consistent one is within 2 %
    assert np.all(np.asarray(rms["model"]) <= 1.02 * np.asarray(rms["linear"])), rms
    assert np.all(consistent.model.friction.static_nm[:3] < 0)
    assert consistent.physically_consistent_links.all()
    assert consistent.consistent.info["min_inequality"] >= -1e-9
    # the friction it records dissipates at every speed: over its range, and past it, where the model extends it
    friction = consistent.model.friction
    speeds = np.concatenate([np.geomspace(1e-3, 1.0, 20)[:, None] * friction.speed_range_rad_s,
                             np.geomspace(1.0, 20.0, 20)[:, None] * friction.speed_range_rad_s])
    curve = np.array([steady_friction_curve(friction, v).diagonal() for v in speeds])
    assert np.all(curve >= -1e-6), curve.min(axis=0)


def test_dissipativity_rows_describe_the_steady_curve():
    fr = nominal_friction("ur3", "real")
    design = FrictionDesign.of(fr)
    rows = dissipativity_rows(design, np.full(6, 1.5), points=8)
    values = np.concatenate([fr.linear_vector()] + [fr.extended_vector().reshape(6, -1)[j, 4:][
        [p in design.joint_parameters(j) for p in ("load_coefficient", "viscous_quadratic_nm_s2_per_rad2")]]
        for j in range(6)])
    from_rows = (rows @ values).reshape(6, 8).T
    speeds = np.concatenate([[0.0], np.geomspace(1e-3, 1.5, 7)])
    np.testing.assert_allclose(from_rows, steady_friction_curve(fr, speeds), rtol=1e-12)
    # beyond the range the model only adds a growth >= 0 to its value at V: the row at V covers every speed past it
    bounded = replace(fr, speed_range_rad_s=np.full(6, 1.5))
    far = steady_friction_curve(bounded, np.geomspace(1.5, 1e4, 30))
    assert np.all(far >= from_rows[-1] - 1e-12)


def test_standstill_rows_are_left_out_and_do_not_bias_the_fit(real):
    truth, train, _ = real
    data = identify(train, "ur3", IdentificationOptions(friction_model="p2")).data
    mask = standstill_mask(data, 0.02).reshape(-1, 6)
    np.testing.assert_array_equal(mask == 0, np.abs(data.qd_rad_s) < 0.02)
    # Hold every joint still for 2 s in the middle of the run with an arbitrary torque (what friction at
    # rest holds depends on the servo): the identified model must not notice.
    t, q, qd, qdd = train.time_s, train.q_rad.copy(), train.qd_rad_s.copy(), train.qdd_rad_s2.copy()
    rest = (t > 12) & (t < 14)
    first = np.flatnonzero(rest)[0]
    q[rest], qd[rest], qdd[rest] = q[first], 0.0, 0.0
    q[np.flatnonzero(rest)[-1] + 1:] += q[first] - train.q_rad[np.flatnonzero(rest)[-1] + 1]
    clean = replace(train, q_rad=q, qd_rad_s=qd, qdd_rad_s2=qdd, effort_nm=inverse_dynamics(truth, q, qd, qdd))
    effort = clean.effort_nm.copy()
    effort[rest] += np.array([1.0, -1.5, 0.8, 0.3, -0.3, 0.2])  # held friction, set by the servo
    held = replace(clean, effort_nm=effort)
    _, _, check = real

    def change_of_prediction(options):
        """RMS change (Nm, per joint) of the held-out prediction that the torque held at rest makes."""
        a, b = identify(held, "ur3", options).model, identify(clean, "ur3", options).model
        diff = (predict_torque(a, check.q_rad, check.qd_rad_s, check.qdd_rad_s2)
                - predict_torque(b, check.q_rad, check.qd_rad_s, check.qdd_rad_s2))
        return np.sqrt(np.mean(diff**2, axis=0))

    # the weighted fit, where the rows enter directly (the consistent fit starts from it, and stops at its budget
    # in the directions these data leave loose)
    masked = change_of_prediction(IdentificationOptions(friction_model="p2", estimator="wls"))
    kept = change_of_prediction(IdentificationOptions(friction_model="p2", estimator="wls",
                                                      standstill_velocity_rad_s=0.0))
    # the low-pass smears the held torque's steps into the moving rows next to the rest: small, not zero
    assert np.all(masked < 0.6 * kept) and np.median(masked / kept) < 0.35, (masked, kept)


def test_shape_constants_on_the_search_edge_leave_their_parameters_undetermined():
    design = FrictionDesign(((), ("load",)), np.array([1.0, 0.1]), np.full(2, 0.01), np.full(2, 1e-3))
    names = _on_search_boundary(design, (0.005, 1.0), (2e-4, 1e-2))
    assert "joint1.coulomb_nm" in names and "joint1.stribeck_velocity_rad_s" in names
    assert not any(name.startswith("joint2") for name in names)


def test_predictions_follow_the_model_along_a_motion():
    truth = _truth(nominal_friction("ur3", "real"))
    rec = synthetic_recording(truth, duration_s=10, rate_hz=200, seed=8)
    predicted = predict_torque(truth, rec.q_rad, rec.qd_rad_s, rec.qdd_rad_s2)
    np.testing.assert_allclose(predicted, rec.effort_nm, atol=1e-9)


def test_bad_friction_options_name_the_fix():
    with pytest.raises(ValueError, match="known: load, poly, presliding"):
        IdentificationOptions(friction_model="p2+stiction")
    with pytest.raises(ValueError, match="one per joint"):
        IdentificationOptions(friction_model="p2,p2+load").friction_terms(6)


def test_presliding_distances_can_be_given_per_joint():
    truth = _truth(nominal_friction("ur3", "real"))
    rec = synthetic_recording(truth, duration_s=10, rate_hz=200, seed=8)
    given = truth.friction.presliding_distance_rad * np.linspace(0.8, 1.2, 6)
    result = identify(rec, "ur3", IdentificationOptions(friction_model="p2+presliding", fit_stribeck=False,
                                                        presliding_distance_rad=given))
    np.testing.assert_allclose(result.model.friction.presliding_distance_rad, given)
    with pytest.raises(ValueError, match="presliding_distance_rad must be > 0 rad"):
        IdentificationOptions(presliding_distance_rad=np.r_[given[:5], 0.0])
    with pytest.raises(ValueError, match="has 5 values for a 6-joint robot: give one value or one per joint"):
        identify(rec, "ur3", IdentificationOptions(friction_model="p2+presliding", fit_stribeck=False,
                                                   presliding_distance_rad=given[:5]))


def test_a_narrow_slow_excitation_leaves_the_consistent_fit_close_to_the_unconstrained_one():
    """Half the Fourier run's amplitudes and speeds: the data fix the rigid body poorly (condition number ~780).
    The consistent fit started only from the linear estimate's repaired links stayed in a valley 1.8x worse on the
    training data (shoulder; 8.6x on wrist 1 with another trajectory seed), and the load term then saw other links'
    torque than the one it was fitted with; now it also starts from the prior, and the load term's fixed point
    includes the consistent links."""
    from robot_dynamics_id.identification.excitation_checks import CONSISTENT_LOSS_RATIO, consistent_fit_notes
    from robot_dynamics_id.identification.synthetic import SyntheticRecording

    truth = _truth(nominal_friction("ur3", "real"))
    wide = synthetic_recording(truth, duration_s=30, rate_hz=200, seed=3)
    q0 = wide.q_rad.mean(axis=0)
    q, qd, qdd = q0 + 0.5 * (wide.q_rad - q0), 0.5 * wide.qd_rad_s, 0.5 * wide.qdd_rad_s2
    tau = inverse_dynamics(truth, q, qd, qdd) + np.random.default_rng(5).normal(size=q.shape) * 0.05
    narrow = SyntheticRecording(time_s=wide.time_s, q_rad=q, qd_rad_s=qd, qdd_rad_s2=qdd, effort_nm=tau)
    result = identify(narrow, "ur3", IdentificationOptions())
    rms = result.model.provenance["training_moving_rms_nm"]
    ratio = np.asarray(rms["model"]) / np.asarray(rms["linear"])
    assert np.all(ratio < CONSISTENT_LOSS_RATIO), ratio
    assert consistent_fit_notes(rms, list(result.model.robot_model().joint_names)) == []
    assert result.physically_consistent_links.all()
