"""Natural-oscillation identification (seeds.md P1) of a UR3's shoulder and elbow gravity terms.

With the base (pan) joint fixed, a UR3's shoulder-lift and elbow joints have
parallel horizontal axes: standing straight up (``q = [0, -pi/2, 0, -pi/2, 0, 0]``)
with the wrist held, the arm is a 2-link inverted pendulum in a vertical plane.
Its gravity potential separates in the absolute angles of the upper arm
(psi_2 = q2 - q2_up) and of the forearm + wrist (psi_3 = q2 + q3 - q2_up - q3_up)::

    V = g [MX2 cos psi_2 + MY2 sin psi_2 + MX3 cos psi_3 + MY3 sin psi_3] + const

so exactly four lumped first moments (kg m) are identifiable from gravity:
MX3, MY3 — mass times CoM of forearm + wrist + tool about the elbow, along and
across the forearm; MX2, MY2 — the same for the upper arm about the shoulder,
including the forearm group's mass times the upper-arm length (the along-link
products are P1's "m l"). Nothing else the method sees is identifiable from
gravity: masses and CoMs are not separable, CoM components along the joint
axes do not enter, the base joint is not moved by gravity at all.

The FULL upright UR3 frees wrist 1 too (``ACTIVE_JOINTS_FULL = (1, 2, 3)``): joints 2-4
have parallel horizontal axes, so the arm is a 3-link inverted pendulum with a third
group (MX4, MY4: wrist + tool about wrist 1). These are all the joints gravity loads at
this pose: axis 5 is vertical there (no gravity torque), and axis 6 is parallel to axes
2-4 (q5 = 0) but carries only the tool's off-axis first moment (zero for the plain
flange). Every function here takes any number of such parallel active joints.

The factor model scales each group's (MX, MY) by one factor (P1's f_m) and
adds a perpendicular correction learned from where the arm oscillates: the
centre psi* of the oscillation is the equilibrium of the residual potential,
``tan psi* = dMY / dMX`` (true minus model), so MY is corrected from the centre
while the factor is bisected on the fall boundary.

:class:`FrictionCompensatedModel` adds a friction model's torque to the law (our extension: a real
arm's Coulomb friction exceeds the gravity residual being searched).

:class:`PinocchioArm` is a small torque-controlled plant (pinocchio ABA + RK4)
on a model with the other joints locked; it can add a controller gravity
model to every command, as UR's ``direct_torque`` does.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..dynamics.friction import FrictionParameters, friction_torque
from .natural_oscillation import PushExperiment, bracketing_search, run_push_trial

__all__ = [
    "ACTIVE_JOINTS",
    "ACTIVE_JOINTS_FULL",
    "UR3_UPRIGHT_Q_RAD",
    "FrictionCompensatedModel",
    "PinocchioArm",
    "VerticalPlaneGravityModel",
    "VerticalPlaneIdentification",
    "active_joint_friction",
    "identify_in_passes",
    "identify_vertical_plane_gravity",
    "perturbed_model",
    "reduced_vertical_plane_model",
    "vertical_plane_first_moments",
]

#: UR3 standing straight up (UR joint convention): upper arm, forearm and wrist 1 vertical.
UR3_UPRIGHT_Q_RAD = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
#: Shoulder-lift and elbow: the joints of the vertical-plane pendulum (0-based).
ACTIVE_JOINTS = (1, 2)
#: Shoulder-lift, elbow and wrist 1: every joint gravity loads at the upright pose.
ACTIVE_JOINTS_FULL = (1, 2, 3)


def reduced_vertical_plane_model(model: pin.Model, q_full_rad: np.ndarray = UR3_UPRIGHT_Q_RAD,
                                 active_joints: tuple[int, ...] = ACTIVE_JOINTS) -> pin.Model:
    """The model with every joint but ``active_joints`` locked at ``q_full_rad`` (wrist held rigid)."""
    lock = [j + 1 for j in range(model.nq) if j not in active_joints]  # pinocchio joint ids are 1-based
    reduced = pin.buildReducedModel(model, lock, np.asarray(q_full_rad, float))
    reduced.armature = np.asarray(model.armature, float)[list(active_joints)].copy()
    return reduced


def _absolute_angles(q: np.ndarray, upright: np.ndarray) -> np.ndarray:
    """psi_j: angle of group j from upright (cumulative sum of the parallel joints' offsets)."""
    return np.cumsum(np.asarray(q, float) - upright, axis=-1)


def _basis(q: np.ndarray, upright: np.ndarray) -> np.ndarray:
    psi = _absolute_angles(q, upright)
    return np.stack([f(psi[..., j]) for j in range(psi.shape[-1]) for f in (np.cos, np.sin)], -1)


def vertical_plane_first_moments(reduced: pin.Model, upright_q_rad: np.ndarray) -> np.ndarray:
    """(MX2, MY2, MX3, MY3[, MX4, MY4]), kg m, from the potential energy of a reduced model of parallel joints.

    V(q) is exactly a constant plus the sinusoids of the module docstring (two per
    group), so a least-squares fit over a set of poses returns them to rounding error.
    """
    data = reduced.createData()
    k = reduced.nq
    grid = np.random.default_rng(0).uniform(-np.pi, np.pi, (12 * (2 * k + 1), k))
    v = np.array([pin.computePotentialEnergy(reduced, data, q) for q in grid])
    a = np.column_stack([np.ones(len(grid)), _basis(grid, np.asarray(upright_q_rad, float))])
    coef, *_ = np.linalg.lstsq(a, v, rcond=None)
    g = float(np.linalg.norm(reduced.gravity.linear))
    return coef[1:] / g


@dataclass
class VerticalPlaneGravityModel:
    """Factorised c_hat + g_hat of the vertical-plane UR3 (a ``FactorizedArmModel``), k parallel joints.

    Factors (f_shoulder, f_elbow[, f_wrist1]) scale (MX2, MY2), (MX3, MY3)[, (MX4, MY4)];
    ``perpendicular_correction_kgm`` (k,) is added to the MYs. Coriolis
    torques come from the nominal pinocchio model (P1: inertial terms enter
    only through c, which is second order in the small push velocities).
    """

    nominal: pin.Model
    upright_q_rad: np.ndarray
    perpendicular_correction_kgm: np.ndarray | None = None
    factor_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        self.upright_q_rad = np.asarray(self.upright_q_rad, float)
        k = self.upright_q_rad.size
        if self.perpendicular_correction_kgm is None:
            self.perpendicular_correction_kgm = np.zeros(k)
        if self.factor_names is None:
            self.factor_names = ("shoulder_first_moment", "elbow_first_moment", "wrist1_first_moment")[:k]
        self.first_moments_kgm = vertical_plane_first_moments(self.nominal, self.upright_q_rad)
        self.gravity_m_s2 = float(np.linalg.norm(self.nominal.gravity.linear))
        self._data = self.nominal.createData()

    def lumped(self, factors: np.ndarray) -> np.ndarray:
        """(MX2, MY2, MX3, MY3, ...) the model uses at these factors."""
        f = np.repeat(np.asarray(factors, float), 2)
        p = self.first_moments_kgm * f
        p[1::2] += self.perpendicular_correction_kgm
        return p

    def gravity_torque(self, q: np.ndarray, factors: np.ndarray) -> np.ndarray:
        p = self.lumped(factors)
        psi = _absolute_angles(q, self.upright_q_rad)
        # dV/dpsi_j for V = g sum_j (MX_j cos psi_j + MY_j sin psi_j); joint i carries every group j >= i.
        d = self.gravity_m_s2 * (-p[0::2] * np.sin(psi) + p[1::2] * np.cos(psi))
        return np.cumsum(d[::-1])[::-1]

    def torque(self, q: np.ndarray, qd: np.ndarray, factors: np.ndarray) -> np.ndarray:
        q = np.asarray(q, float)
        qd = np.asarray(qd, float)
        coriolis = pin.rnea(self.nominal, self._data, q, qd, np.zeros(q.size)) - pin.computeGeneralizedGravity(
            self.nominal, self._data, q)
        return coriolis + self.gravity_torque(q, factors)

    def oscillation_coordinates(self, q: np.ndarray) -> np.ndarray:
        return np.cumsum(np.asarray(q, float), axis=-1)


@dataclass
class FrictionCompensatedModel:
    """A factorised c_hat + g_hat law plus a friction model's torque (our extension of P1).

    P1's law has no friction term; on an arm whose Coulomb friction exceeds the
    gravity residual being searched the fall boundary is then biased or gone.
    Adding ``friction_torque(friction, qd)`` (P2 eq. 11 form) on the active
    joints cancels as much of it as the friction model is right. A load-dependent
    Coulomb term (``rdi identify``'s ``+load`` families) takes the law's own
    rigid-body torque as the load (Coriolis + the factored gravity: the law has no
    acceleration term, so neither has the load).
    """

    inner: VerticalPlaneGravityModel
    friction: FrictionParameters  # of the active joints only

    @property
    def factor_names(self) -> tuple[str, ...]:
        return self.inner.factor_names

    @property
    def upright_q_rad(self) -> np.ndarray:
        return self.inner.upright_q_rad

    @property
    def first_moments_kgm(self) -> np.ndarray:
        return self.inner.first_moments_kgm

    @property
    def perpendicular_correction_kgm(self) -> np.ndarray:
        return self.inner.perpendicular_correction_kgm

    def lumped(self, factors: np.ndarray) -> np.ndarray:
        return self.inner.lumped(factors)

    def torque(self, q: np.ndarray, qd: np.ndarray, factors: np.ndarray) -> np.ndarray:
        rigid = self.inner.torque(q, qd, factors)
        load = rigid if self.friction.has_load_term else None
        return rigid + friction_torque(self.friction, np.asarray(qd, float), load_torque_nm=load)

    def oscillation_coordinates(self, q: np.ndarray) -> np.ndarray:
        return self.inner.oscillation_coordinates(q)


def active_joint_friction(friction: FrictionParameters, active: list[int]) -> FrictionParameters:
    """The friction parameters of the joints ``active`` only (for :class:`FrictionCompensatedModel`)."""
    return FrictionParameters(**{f.name: np.asarray(getattr(friction, f.name), float)[active]
                                 for f in dataclasses.fields(FrictionParameters) if f.name != "terms"},
                              terms=tuple(friction.terms[j] for j in active))


@dataclass
class PinocchioArm:
    """Torque-controlled plant on a pinocchio model (ABA forward dynamics, RK4, torque held per period).

    ``controller_gravity`` (a pinocchio model or None) adds that model's
    gravity torque to every command — what UR's ``direct_torque`` does with
    the controller's own model. ``coulomb_nm`` / ``viscous_nm_s_per_rad`` (one per
    joint) add joint friction, applied implicitly after each RK4 step with stick/slip
    (projected Gauss–Seidel on ``(M + h B) qd + lambda = M qd_free``, ``|lambda_j| <= h f_c,j``,
    as :class:`robot_dynamics_id.sim.pendulum.PlanarPendulumArm` does).
    """

    model: pin.Model
    period_s: float = 0.002
    controller_gravity: pin.Model | None = None
    coulomb_nm: np.ndarray | None = None
    viscous_nm_s_per_rad: np.ndarray | None = None

    def __post_init__(self) -> None:
        self._data = self.model.createData()
        self._cdata = None if self.controller_gravity is None else self.controller_gravity.createData()
        self.q = pin.neutral(self.model)
        self.qd = np.zeros(self.model.nv)
        self._tau = np.zeros(self.model.nv)

    def reset(self, q: np.ndarray, qd: np.ndarray) -> None:
        self.q = np.array(q, float)
        self.qd = np.array(qd, float)

    def apply_torque(self, tau_nm: np.ndarray) -> None:
        tau = np.array(tau_nm, float)
        if self.controller_gravity is not None:
            tau = tau + pin.computeGeneralizedGravity(self.controller_gravity, self._cdata, self.q)
        self._tau = tau

    def _acc(self, q, qd):
        return pin.aba(self.model, self._data, q, qd, self._tau)

    def _apply_friction(self, q: np.ndarray, qd_free: np.ndarray) -> np.ndarray:
        h, n = self.period_s, self.model.nv
        coulomb = np.zeros(n) if self.coulomb_nm is None else np.asarray(self.coulomb_nm, float)
        viscous = np.zeros(n) if self.viscous_nm_s_per_rad is None else np.asarray(self.viscous_nm_s_per_rad, float)
        m = pin.crba(self.model, self._data, q)
        m = np.triu(m) + np.triu(m, 1).T
        a = m + h * np.diag(viscous)
        rhs = m @ qd_free
        qd = qd_free.copy()
        for _ in range(8):
            for j in range(n):
                w = rhs[j] - a[j] @ qd + a[j, j] * qd[j]
                qd[j] = (w - np.clip(w, -h * coulomb[j], h * coulomb[j])) / a[j, j]
        return qd

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        h = self.period_s
        q, qd = self.q, self.qd
        k1 = self._acc(q, qd)
        k2 = self._acc(q + 0.5 * h * qd, qd + 0.5 * h * k1)
        k3 = self._acc(q + 0.5 * h * (qd + 0.5 * h * k1), qd + 0.5 * h * k2)
        k4 = self._acc(q + h * (qd + 0.5 * h * k2), qd + h * k3)
        self.q = q + h * qd + h * h / 6.0 * (k1 + k2 + k3)
        self.qd = qd + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if self.coulomb_nm is not None or self.viscous_nm_s_per_rad is not None:
            free = self.qd
            self.qd = self._apply_friction(self.q, free)
            self.q = self.q + 0.5 * h * (self.qd - free)  # the friction impulse spread over the step
        return self.q.copy(), self.qd.copy()


def perturbed_model(model: pin.Model, *, seed: int = 0, mass_rel: float = 0.08, com_m: float = 0.01,
                    inertia_rel: float = 0.3) -> pin.Model:
    """A copy of ``model`` with every link's mass, CoM and rotational inertia changed (a "true" robot).

    Masses by up to ``mass_rel`` (relative), CoMs by up to ``com_m`` per axis,
    inertias about the CoM scaled by up to ``inertia_rel`` (kept positive definite).
    """
    rng = np.random.default_rng(seed)
    out = model.copy()
    for i in range(1, out.njoints):
        inertia = out.inertias[i]
        mass = inertia.mass * (1 + rng.uniform(-mass_rel, mass_rel))
        lever = np.asarray(inertia.lever) + rng.uniform(-com_m, com_m, 3)
        rot = np.asarray(inertia.inertia) * (1 + rng.uniform(-inertia_rel, inertia_rel))
        out.inertias[i] = pin.Inertia(mass, lever, rot)
    return out


@dataclass
class VerticalPlaneIdentification:
    """Identified (MX2, MY2, MX3, MY3, ...) in kg m, the final factors and the number of push trials."""

    first_moments_kgm: np.ndarray
    factors: np.ndarray
    n_trials: int


def identify_vertical_plane_gravity(arm, model: VerticalPlaneGravityModel, experiment: PushExperiment, *,
                                    low: float = 0.8, high: float = 1.25, tolerance: float = 0.004,
                                    over_compensation: float = 1.3, max_trials: int = 15,
                                    push_group_under_test: bool = False) -> VerticalPlaneIdentification:
    """P1 on the vertical-plane arm: per group, bisect the factor on the fall boundary and correct MY.

    The other group is held over-compensated (its factor ``over_compensation``)
    so only the group under test can fall; the fall boundary of a group does not
    depend on the other group because gravity separates in psi_2, psi_3. After
    each oscillating trial MY of the group is corrected from the oscillation
    centre: dMY = dMX tan(psi*), dMX estimated from the current bracket.
    ``push_group_under_test`` gives the push (the largest entry of the experiment's push)
    to the joint of the group being bisected instead of the experiment's joint: a light
    outer group (the UR3's wrist) is otherwise thrown past the bound by the coupling
    before its own oscillation shows.
    """
    k = model.upright_q_rad.size
    estimate = np.full(k, over_compensation)
    n_trials = 0
    for j in range(k - 1, -1, -1):  # outermost group first: it is the smaller, faster one
        nominal_mx = model.first_moments_kgm[2 * j]

        exp_j = experiment
        if push_group_under_test:
            push = np.zeros_like(experiment.push_qd_rad_s)
            push[j] = float(np.max(np.abs(experiment.push_qd_rad_s)))
            exp_j = dataclasses.replace(experiment, push_qd_rad_s=push)

        def run(f: np.ndarray, exp_j=exp_j) -> object:
            return run_push_trial(arm, model, f, exp_j)

        def correct(trial, f_est: float, j: int = j, nominal_mx: float = nominal_mx) -> None:
            center = float(trial.center_rad[j]) - float(model.oscillation_coordinates(model.upright_q_rad)[j])
            if np.isfinite(center):
                d_mx = nominal_mx * (f_est - float(trial.factors[j]))
                model.perpendicular_correction_kgm[j] += d_mx * np.tan(center)

        base = np.full(k, over_compensation)  # the other groups stay over-compensated, never at their estimate
        base[j] = high
        result = bracketing_search(run, base, j, low=low, high=high, tolerance=tolerance,
                                   max_trials=max_trials, on_stable_trial=correct, frequency_coordinate=j)
        estimate[j] = result.estimate
        n_trials += result.n_trials
    return VerticalPlaneIdentification(model.lumped(estimate), estimate, n_trials)


def identify_in_passes(arm, model, experiment: PushExperiment, *, passes: int = 2, low: float = 0.8,
                       high: float = 1.25, coarse_tolerance: float = 0.015, tolerance: float = 0.004,
                       fine_window_s: float = 30.0, max_trials: int = 15,
                       push_group_under_test: bool = False) -> VerticalPlaneIdentification:
    """:func:`identify_vertical_plane_gravity` as a coarse pass, then ``passes - 1`` fine passes around it.

    The coarse pass (``coarse_tolerance`` on the factors, bracket [low, high]) corrects MY
    from the oscillation centres; each fine pass bisects to ``tolerance`` in a bracket just
    around the previous factors, watching up to ``fine_window_s`` (near the boundary an
    under-compensated arm falls slowly, e-folding time ~ 1/sqrt(|dMX|)). One pass leaves
    part of MY uncorrected, which near the boundary tilts the equilibrium
    (tan psi* = dMY / dMX) towards the bound and biases MX.
    """
    if passes < 1:
        raise ValueError(f"passes must be >= 1, got {passes}")
    result = identify_vertical_plane_gravity(arm, model, experiment, low=low, high=high, tolerance=coarse_tolerance,
                                             max_trials=max_trials, push_group_under_test=push_group_under_test)
    trials = result.n_trials
    fine = dataclasses.replace(experiment, window_steps=int(round(fine_window_s / arm.period_s)))
    for _ in range(passes - 1):
        f = result.factors
        result = identify_vertical_plane_gravity(arm, model, fine, low=float(np.min(f)) - 2 * coarse_tolerance,
                                                 high=float(np.max(f)) + 3 * coarse_tolerance, tolerance=tolerance,
                                                 max_trials=max_trials, push_group_under_test=push_group_under_test)
        trials += result.n_trials
    return VerticalPlaneIdentification(result.first_moments_kgm, result.factors, trials)
