"""Base parameters: the reduced regressor reproduces the full one for any motion; excitation checks."""

import numpy as np
import pytest

from robot_dynamics_id.dynamics.base_parameters import (
    InsufficientExcitationError,
    check_excitation,
    compute_base_parameters,
    condition_number,
)
from robot_dynamics_id.dynamics.regressor import full_regressor
from robot_dynamics_id.robots.model import load_robot


@pytest.mark.parametrize("name", ["ur3", "ur5e", "ur10e"])
def test_base_regressor_reproduces_full_regressor(name):
    robot = load_robot(name)
    base = compute_base_parameters(robot)
    # 6R arm with parallel joints 2-4: 36 rigid-body + 4 rotor (rotors 1, 2 merge) + 24 friction
    assert base.n_base == 64 and base.n_full == 90
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.normal(size=(3, 40, 6))
    w, _ = full_regressor(robot, q, qd, qdd)
    for seed in range(3):
        theta = np.random.default_rng(seed).normal(size=90)
        full = w @ theta
        reduced = base.base_regressor(w) @ base.base_from_standard(theta)
        assert np.max(np.abs(full - reduced)) < 1e-9 * np.max(np.abs(full))
    # standard_near returns a full vector with the requested base parameters
    target = base.base_from_standard(np.random.default_rng(9).normal(size=90))
    np.testing.assert_allclose(base.base_from_standard(base.standard_near(target, np.zeros(90))), target, atol=1e-9)


def test_names_show_classical_regrouping():
    base = compute_base_parameters(load_robot("ur3"))
    mx2 = [n for n in base.names if n.startswith("link2.mx")][0]
    assert "link3.m" in mx2  # the masses of later links regroup onto link 2's first moment


def test_condition_number_and_rank_check():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(200, 3)) * np.array([1.0, 1e3, 1e-3])
    assert condition_number(w) < 2.0  # column normalisation removes the units
    assert condition_number(w, normalise=False) > 1e5
    assert condition_number(np.column_stack([w, np.zeros(200)])) == np.inf
    dependent = np.column_stack([w, w[:, 0] + w[:, 1] / 1e3])
    with pytest.raises(InsufficientExcitationError) as err:
        check_excitation(dependent, ["a", "b", "c", "d"])
    assert len(err.value.unidentifiable) == 1 and "unidentifiable" in str(err.value)


def test_only_the_wrist_moving_names_unidentifiable_parameters():
    robot = load_robot("ur3")
    base = compute_base_parameters(robot)
    t = np.linspace(0, 10, 400)
    q = np.tile([0.0, -1.5, 1.0, -1.0, 1.0, 0.0], (400, 1))
    q[:, 5] = np.sin(t)
    qd = np.zeros_like(q)
    qd[:, 5] = np.cos(t)
    qdd = np.zeros_like(q)
    qdd[:, 5] = -np.sin(t)
    w, _ = full_regressor(robot, q, qd, qdd)
    with pytest.raises(InsufficientExcitationError) as err:
        check_excitation(base.base_regressor(w), base.names)
    assert any(name.startswith("link2") for name in err.value.unidentifiable)
    assert "rdi excite plan" in str(err.value)
