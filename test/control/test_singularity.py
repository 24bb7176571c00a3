"""Lambda near the wrist singularity: padding (P2 eqs. (6)-(9)), truncation, damped least squares."""

import numpy as np
import pytest

from robot_dynamics_id.control.operational_space import OperationalSpaceModel
from robot_dynamics_id.control.singularity import SingularityHandler, SingularityMethod, smoothstep
from robot_dynamics_id.robots.model import load_robot

Q0 = np.array([0.3, -1.6, 1.6, -1.57, -1.57, 0.0])


_OSM = OperationalSpaceModel(load_robot("ur3"))


def _terms(q5: float):
    osm = _OSM
    q = Q0.copy()
    q[4] = q5
    osm.update(q, np.zeros(6))
    return osm.lambda_inv.copy(), osm.J.copy()


@pytest.mark.parametrize("method", list(SingularityMethod))
def test_far_from_the_singularity_every_method_is_the_plain_inverse(method):
    lam_inv, jac = _terms(-1.2)
    handler = SingularityHandler(method=method)
    lam = handler.operational_inertia(lam_inv, jac)
    np.testing.assert_allclose(lam, np.linalg.inv(lam_inv), rtol=1e-9)
    assert not handler.in_region and handler.padding_weight == 0.0


def test_padding_at_the_singularity_gives_unit_inertia_along_the_lost_direction():
    lam_inv, jac = _terms(0.0)
    handler = SingularityHandler(method="padding")
    lam = handler.operational_inertia(lam_inv, jac)
    assert handler.sigma_min < 1e-6 and handler.padding_weight == 1.0
    assert np.all(np.isfinite(lam))
    np.testing.assert_allclose(lam, lam.T, atol=1e-9)
    u = handler.lost_direction
    # P2 eq. (8): the padded diagonal element is one (unit inertia), no coupling to the rest.
    assert u @ lam @ u == pytest.approx(1.0, rel=1e-6)
    np.testing.assert_allclose((np.eye(6) - np.outer(u, u)) @ lam @ u, 0.0, atol=1e-6)
    assert np.linalg.eigvalsh(lam).min() > 0


def test_truncation_removes_the_lost_direction():
    lam_inv, jac = _terms(0.0)
    handler = SingularityHandler(method="truncation")
    lam = handler.operational_inertia(lam_inv, jac)
    np.testing.assert_allclose(lam @ handler.lost_direction, 0.0, atol=1e-6)


def test_padding_is_continuous_at_the_region_edge_but_truncation_jumps():
    handler_p = SingularityHandler(method="padding")
    handler_t = SingularityHandler(method="truncation")
    # sigma_min ~ 0.16 |q5| here: find q5 just inside / outside the region border (0.04)
    grid = np.linspace(-0.4, -0.1, 1501)
    sig = []
    for q5 in grid:
        lam_inv, jac = _terms(q5)
        sig.append(np.linalg.svd(jac, compute_uv=False).min())
    sig = np.array(sig)
    k = int(np.argmin(np.abs(sig - handler_p.region_enter_sigma)))
    outside, inside = grid[k - 1], grid[k + 1]
    lam_p = [handler_p.operational_inertia(*_terms(q5)).copy() for q5 in (outside, inside)]
    lam_t = [handler_t.operational_inertia(*_terms(q5)).copy() for q5 in (outside, inside)]
    jump_p = np.abs(lam_p[1] - lam_p[0]).max()
    jump_t = np.abs(lam_t[1] - lam_t[0]).max()
    assert jump_p < 0.05 * jump_t, (jump_p, jump_t)


def test_damped_least_squares_is_finite_at_the_singularity():
    lam_inv, jac = _terms(0.0)
    handler = SingularityHandler(method="damped_least_squares", damping_max=0.02)
    lam = handler.operational_inertia(lam_inv, jac)
    assert np.all(np.isfinite(lam))
    assert handler.lost_direction @ lam @ handler.lost_direction == pytest.approx(1 / 0.02, rel=0.05)


def test_bad_region_is_refused_and_smoothstep_is_a_c1_ramp():
    with pytest.raises(ValueError, match="region_enter_sigma > region_full_sigma"):
        SingularityHandler(region_enter_sigma=0.01, region_full_sigma=0.02)
    assert smoothstep(-1) == 0.0 and smoothstep(2) == 1.0 and smoothstep(0.5) == 0.5
