"""The friction model: P2 eq. (11) unchanged, the load-dependent, quadratic and presliding terms, the file form."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.friction import (
    FrictionParameters,
    dahl_state,
    friction_regressor,
    friction_torque,
    parse_terms,
    steady_friction_curve,
)


def _extended(n=3, **changes):
    rng = np.random.default_rng(4)
    values = dict(static_nm=-rng.uniform(0.2, 0.5, n), coulomb_nm=rng.uniform(1, 2, n),
                  viscous_nm_s_per_rad=rng.uniform(0.5, 1, n), offset_nm=rng.uniform(-0.1, 0.1, n),
                  stribeck_velocity_rad_s=rng.uniform(0.1, 0.3, n), coulomb_velocity_rad_s=np.full(n, 0.01),
                  load_coefficient=np.full(n, 0.06), viscous_quadratic_nm_s2_per_rad2=np.full(n, -0.1),
                  presliding_distance_rad=np.full(n, 1e-3))
    values.update(changes)
    return FrictionParameters(**values)


def test_dahl_state_is_the_exact_recursion_and_holds_the_last_direction_at_rest():
    rng = np.random.default_rng(0)
    t = np.arange(6000) / 500.0
    q = np.column_stack([0.5 * np.sin(2 * np.pi * 0.3 * t) + rng.normal(0, 1e-6, t.size),
                         np.where(t < 6, t, 6.0) * 0.1])
    dq = np.diff(q, axis=0, prepend=q[:1])
    delta = np.array([1e-3, 5e-4])
    z = dahl_state(dq, delta, initial=0.2)
    expected = np.empty_like(dq)
    state = np.array([0.2, 0.2])
    for k in range(dq.shape[0]):
        sign = np.sign(dq[k])
        state = sign + (state - sign) * np.exp(-np.abs(dq[k]) / delta)
        expected[k] = state
    np.testing.assert_allclose(z, expected, atol=1e-8)
    assert np.all(np.abs(z) <= 1.0 + 1e-12)
    # joint 1 moved forward then stopped: at rest the state keeps the sign of the last motion
    assert np.all(z[t > 7, 1] > 0.95)
    # it takes about delta of travel to build up: after 1 delta from rest it is 1 - 1/e of the way
    single = dahl_state(np.full((10, 1), 1e-4), 1e-3)
    np.testing.assert_allclose(single[-1, 0], 1 - np.exp(-1.0), rtol=1e-9)


def test_p2_models_evaluate_exactly_as_before():
    rng = np.random.default_rng(1)
    fr = FrictionParameters(*rng.uniform(0, 1, (4, 6)), rng.uniform(0.05, 0.2, 6), np.full(6, 0.01))
    qd = rng.normal(0, 1, (20, 6))
    y = friction_regressor(qd, fr.stribeck_velocity_rad_s, fr.coulomb_velocity_rad_s)
    np.testing.assert_allclose(friction_torque(fr, qd), np.einsum("kjl,jl->kj", y, fr.linear_vector().reshape(6, 4)),
                               rtol=0, atol=1e-14)
    assert fr.is_p2 and fr.terms == ("p2",) * 6
    assert fr.to_dict()["model"].startswith("stribeck_coulomb_viscous")


def test_extended_terms_add_what_their_equations_say():
    fr = _extended()
    qd = np.array([[0.5, -0.3, 1.0]])
    load = np.array([[10.0, -4.0, 0.0]])
    state = np.array([[1.0, -1.0, 1.0]])
    tau = friction_torque(fr, qd, load_torque_nm=load, presliding_state=state)
    expected = (fr.static_nm * state / (1 + (qd / fr.stribeck_velocity_rad_s) ** 2)
                + (fr.coulomb_nm + fr.load_coefficient * np.abs(load)) * state + fr.viscous_nm_s_per_rad * qd
                + fr.viscous_quadratic_nm_s2_per_rad2 * qd * np.abs(qd) + fr.offset_nm)
    np.testing.assert_allclose(tau, expected, rtol=1e-12)
    with pytest.raises(ValueError, match="load_torque_nm"):
        friction_torque(fr, qd)
    # without a presliding state: the steady (kinetic) friction, sign smoothed over v_k
    steady = friction_torque(fr, qd, load_torque_nm=load)
    np.testing.assert_allclose(steady, expected, rtol=1e-6)


def test_the_steady_curve_is_the_dissipative_part():
    fr = _extended()
    v = np.array([0.0, 0.1, 1.0])
    curve = steady_friction_curve(fr, v)
    expected = (fr.static_nm / (1 + (v[:, None] / fr.stribeck_velocity_rad_s) ** 2) + fr.coulomb_nm
                + fr.viscous_nm_s_per_rad * v[:, None] + fr.viscous_quadratic_nm_s2_per_rad2 * v[:, None] ** 2)
    np.testing.assert_allclose(curve, expected, rtol=1e-12)


def test_file_form_round_trips_and_old_files_still_load():
    fr = _extended()
    again = FrictionParameters.from_dict(fr.to_dict())
    np.testing.assert_allclose(again.extended_vector(), fr.extended_vector())
    np.testing.assert_allclose(again.presliding_distance_rad, fr.presliding_distance_rad)
    assert again.terms == ("p2+load+poly+presliding",) * 3
    old = {"static_nm": [0.1, 0.2], "coulomb_nm": [1.0, 1.0], "viscous_nm_s_per_rad": [0.5, 0.5],
           "stribeck_velocity_rad_s": [0.1, 0.1]}
    loaded = FrictionParameters.from_dict(old)
    assert loaded.is_p2 and np.all(loaded.load_coefficient == 0)


def test_negative_load_coefficient_is_kept_and_flagged():
    # an unconstrained estimator may give mu < 0: the model must still predict what was identified
    fr = _extended(load_coefficient=np.array([0.06, -0.1, 0.0]))
    np.testing.assert_array_equal(fr.non_physical_load, [False, True, False])
    assert not _extended().non_physical_load.any()
    again = FrictionParameters.from_dict(fr.to_dict())
    np.testing.assert_array_equal(again.load_coefficient, fr.load_coefficient)


def test_inconsistent_terms_and_values_are_refused():
    with pytest.raises(ValueError, match="exclude load_coefficient"):
        _extended(terms=("p2+poly+presliding",) * 3)
    with pytest.raises(ValueError, match="presliding needs a distance"):
        _extended(terms=("p2+load+poly",) * 3)
    with pytest.raises(ValueError, match="unknown friction term"):
        parse_terms("p2+stiction")
    assert parse_terms("p2+presliding+load") == ("load", "presliding")


def test_beyond_the_identified_speeds_the_curve_grows_on_concave_from_its_value_there():
    """A fit evaluated past its speed range V: the fitted terms held at V and a growth 2 s V (sqrt(|qd|/V) - 1)
    added, s the steady curve's slope at V (no steeper than its chord over [V/2, V], >= 0): continuous in value
    and slope at V, concave beyond, never below the value at V; inside V nothing changes; the load term and the
    signs are untouched."""
    concave = _extended(viscous_quadratic_nm_s2_per_rad2=np.array([-0.8, -0.8, 0.6]),
                        presliding_distance_rad=np.zeros(3), terms=("p2+load+poly",) * 3)
    v_max = np.array([0.5, 0.8, 1.0])
    bounded = FrictionParameters(**{**concave.__dict__, "speed_range_rad_s": v_max})
    load = np.full(3, 5.0)
    inside = np.linspace(-0.99, 0.99, 41)[:, None] * v_max
    np.testing.assert_allclose(friction_torque(bounded, inside, load_torque_nm=np.broadcast_to(load, inside.shape)),
                               friction_torque(concave, inside, load_torque_nm=np.broadcast_to(load, inside.shape)),
                               rtol=1e-12)
    # s: the numerical slope of the fitted curve at V, or its chord over [V/2, V] where that is less (joint 2: a
    # convex edge), clipped at 0 (joint 1: k_2 bends it down before V)
    h = 1e-6
    at_v = steady_friction_curve(concave, v_max).diagonal()
    tangent = (at_v - steady_friction_curve(concave, v_max - h).diagonal()) / h
    chord = (at_v - steady_friction_curve(concave, v_max / 2).diagonal()) / (v_max / 2)
    np.testing.assert_allclose(bounded.extension_slope(), np.maximum(np.minimum(tangent, chord), 0.0), atol=1e-5)
    assert tangent[0] > 0 > tangent[1] and tangent[2] > chord[2] > 0  # every branch of the rule is taken
    speeds = np.array([1.0, 2.0, 4.0, 8.0])
    curve = steady_friction_curve(bounded, speeds)
    s = bounded.extension_slope()
    np.testing.assert_allclose(curve, at_v + 2 * s * v_max * (np.sqrt(speeds[:, None] / v_max) - 1), rtol=1e-12)
    # continuous at V, in value and (where s is the tangent) in slope
    np.testing.assert_allclose(steady_friction_curve(bounded, v_max * (1 + 1e-9)).diagonal(), at_v, rtol=1e-8)
    just_past = (steady_friction_curve(bounded, v_max + h).diagonal() - at_v) / h
    np.testing.assert_allclose(just_past, s, rtol=1e-4, atol=1e-6)  # the slope it grows on, on every branch
    is_tangent = np.isclose(s, tangent, rtol=1e-4)
    assert is_tangent[0] and not is_tangent[1:].any()
    np.testing.assert_allclose(just_past[is_tangent], tangent[is_tangent], rtol=1e-4)
    assert np.all(steady_friction_curve(concave, [8.0])[0, :2] < 0)  # the unbounded concave law pushes the joint there
    assert np.all(curve >= at_v) and np.all(np.diff(np.diff(curve, axis=0) / np.diff(speeds)[:, None], axis=0) <= 0)
    # odd in qd, and the load term beside it as before
    fast = np.array([[-3.0, -3.0, -3.0], [3.0, 3.0, 3.0]])
    tau = friction_torque(bounded, fast, load_torque_nm=np.broadcast_to(load, fast.shape))
    np.testing.assert_allclose(tau[0] - bounded.offset_nm, -(tau[1] - bounded.offset_nm), rtol=1e-12)
    # the file form keeps the range; a model without one (every file before it) has none
    again = FrictionParameters.from_dict(bounded.to_dict())
    np.testing.assert_array_equal(again.speed_range_rad_s, v_max)
    assert "speed_range_rad_s" not in concave.to_dict() and not FrictionParameters.from_dict(concave.to_dict()).bounded
    with pytest.raises(ValueError, match="speed_range_rad_s must be 3 speeds > 0"):
        FrictionParameters(**{**concave.__dict__, "speed_range_rad_s": np.array([0.5, 0.0, 1.0])})


def test_a_law_without_a_range_that_bends_down_with_speed_is_found():
    """A model file from before the range was recorded: where each joint's law stops rising, -k_v / (2 k_2)."""
    law = _extended(viscous_quadratic_nm_s2_per_rad2=np.array([-0.25, 0.0, 0.3]),
                    viscous_nm_s_per_rad=np.array([0.5, -0.1, -0.1]), presliding_distance_rad=np.zeros(3),
                    load_coefficient=np.zeros(3), terms=("p2+poly", "p2", "p2+poly"))
    # joint 2 dips below zero slope at low speed and rises for good past 1/6 rad/s: it does not turn over
    np.testing.assert_allclose(law.unbounded_turnover_rad_s(), [1.0, 0.0, np.inf])
    ranged = FrictionParameters(**{**law.__dict__, "speed_range_rad_s": np.array([1.0, np.inf, 1.0])})
    np.testing.assert_allclose(ranged.unbounded_turnover_rad_s(), [np.inf, 0.0, np.inf])  # extended safely
