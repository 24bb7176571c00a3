"""Closed-loop planar linkages (parallelogram four-bar, five-bar) and the augmented baseline at a singular start."""

import numpy as np
import pytest

from robot_dynamics_id.scenarios.five_bar import five_bar_ik
from robot_dynamics_id.sim.constrained_simulation import simulate_augmented, simulate_constrained
from robot_dynamics_id.sim.planar_mechanisms import ClosedLoopLinkage, five_bar, parallelogram_four_bar, uniform_rods

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("linkage", [parallelogram_four_bar(), five_bar()])
def test_loop_jacobian_and_bias_acceleration_match_finite_differences(linkage: ClosedLoopLinkage):
    q, qd = RNG.uniform(-1, 1, linkage.n_joints), RNG.uniform(-2, 2, linkage.n_joints)
    eps = 1e-6
    num = np.column_stack([(linkage.constraint(q + eps * e) - linkage.constraint(q - eps * e)) / (2 * eps)
                           for e in np.eye(linkage.n_joints)])
    assert np.allclose(linkage.constraint_jacobian(q), num, atol=1e-8)
    # Adot qd = d/dt (A qd) at fixed qd along q' = qd
    m, h, a, adot_qd = linkage.terms(q, qd)
    dadt = (linkage.constraint_jacobian(q + eps * qd) - linkage.constraint_jacobian(q - eps * qd)) / (2 * eps)
    assert np.allclose(adot_qd, dadt @ qd, atol=1e-6)
    assert np.allclose(m, m.T) and np.all(np.linalg.eigvalsh(m) > 0)


def test_the_flat_parallelogram_is_singular_and_only_the_augmented_baseline_stops_there():
    linkage = parallelogram_four_bar()
    a = linkage.constraint_jacobian(np.zeros(3))
    assert np.all(a[0] == 0.0) and np.linalg.matrix_rank(a) == 1  # every link on the ground line
    q0, qd0 = np.zeros(3), np.array([5.0, -5.0, 5.0])
    proj = simulate_constrained(linkage, q0, qd0, duration_s=0.2)
    aug = simulate_augmented(linkage, q0, qd0, duration_s=0.2)
    assert proj.completed and proj.constraint_error_m.max() < 1e-12
    assert np.abs(proj.energy_j - proj.energy_j[0]).max() < 1e-8
    assert np.abs(proj.q[:, 0] + proj.q[:, 1]).max() < 1e-9  # stays a parallelogram (coupler parallel to ground)
    assert not aug.completed and "singular" in aug.failure.lower()


def test_baumgarte_stabilisation_option_keeps_a_regular_crossing_on_the_constraint():
    linkage = five_bar()
    q0 = five_bar_ik(linkage, np.array([0.1, 0.33]))
    run = simulate_augmented(linkage, q0, np.zeros(4), duration_s=0.3, stabilisation="baumgarte", baumgarte_per_s=20.0)
    assert run.completed and run.constraint_error_m.max() < 1e-6
    with pytest.raises(ValueError, match="stabilisation"):
        simulate_augmented(linkage, q0, np.zeros(4), duration_s=0.1, stabilisation="penalty")


def test_five_bar_ik_puts_the_pin_where_asked():
    linkage = five_bar()
    for point in ([0.1, 0.33], [0.05, 0.3], [0.15, 0.38]):
        q = five_bar_ik(linkage, np.array(point))
        assert np.allclose(linkage.constraint(q), 0.0, atol=1e-12)
        assert np.allclose(linkage.tip(q), point, atol=1e-12)
    with pytest.raises(ValueError, match="out of reach"):
        five_bar_ik(linkage, np.array([0.1, 1.0]))


def test_uniform_rods_inertia():
    chain = uniform_rods([0.3, 0.2], 2.0)
    assert np.allclose(chain.com_inertia_kgm2, 2.0 * np.array([0.09, 0.04]) / 12)
