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

The factor model scales each group's (MX, MY) by one factor (P1's f_m) and
adds a perpendicular correction learned from where the arm oscillates: the
centre psi* of the oscillation is the equilibrium of the residual potential,
``tan psi* = dMY / dMX`` (true minus model), so MY is corrected from the centre
while the factor is bisected on the fall boundary.

:class:`PinocchioArm` is a small torque-controlled plant (pinocchio ABA + RK4)
on a model with the other joints locked; it can add a controller gravity
model to every command, as UR's ``direct_torque`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from .natural_oscillation import PushExperiment, bracketing_search, run_push_trial

__all__ = [
    "UR3_UPRIGHT_Q_RAD",
    "PinocchioArm",
    "VerticalPlaneGravityModel",
    "VerticalPlaneIdentification",
    "identify_vertical_plane_gravity",
    "perturbed_model",
    "reduced_vertical_plane_model",
    "vertical_plane_first_moments",
]

#: UR3 standing straight up (UR joint convention): upper arm, forearm and wrist 1 vertical.
UR3_UPRIGHT_Q_RAD = np.array([0.0, -np.pi / 2, 0.0, -np.pi / 2, 0.0, 0.0])
#: Shoulder-lift and elbow: the joints of the vertical-plane pendulum (0-based).
ACTIVE_JOINTS = (1, 2)


def reduced_vertical_plane_model(model: pin.Model, q_full_rad: np.ndarray = UR3_UPRIGHT_Q_RAD,
                                 active_joints: tuple[int, int] = ACTIVE_JOINTS) -> pin.Model:
    """The model with every joint but ``active_joints`` locked at ``q_full_rad`` (wrist held rigid)."""
    lock = [j + 1 for j in range(model.nq) if j not in active_joints]  # pinocchio joint ids are 1-based
    reduced = pin.buildReducedModel(model, lock, np.asarray(q_full_rad, float))
    reduced.armature = np.asarray(model.armature, float)[list(active_joints)].copy()
    return reduced


def _basis(q2: np.ndarray, upright: np.ndarray) -> np.ndarray:
    psi2 = q2[..., 0] - upright[0]
    psi3 = q2[..., 0] + q2[..., 1] - upright[0] - upright[1]
    return np.stack([np.cos(psi2), np.sin(psi2), np.cos(psi3), np.sin(psi3)], -1)


def vertical_plane_first_moments(reduced: pin.Model, upright_q_rad: np.ndarray) -> np.ndarray:
    """(MX2, MY2, MX3, MY3), kg m, from the potential energy of a 2-joint reduced model.

    V(q) is exactly a constant plus the four sinusoids of the module docstring,
    so a least-squares fit over a grid of poses returns them to rounding error.
    """
    data = reduced.createData()
    grid = np.array([[a, b] for a in np.linspace(-np.pi, np.pi, 7) for b in np.linspace(-np.pi, np.pi, 5)])
    v = np.array([pin.computePotentialEnergy(reduced, data, q) for q in grid])
    a = np.column_stack([np.ones(len(grid)), _basis(grid, np.asarray(upright_q_rad, float))])
    coef, *_ = np.linalg.lstsq(a, v, rcond=None)
    g = float(np.linalg.norm(reduced.gravity.linear))
    return coef[1:] / g


@dataclass
class VerticalPlaneGravityModel:
    """Factorised c_hat + g_hat of the 2-joint vertical-plane UR3 (a ``FactorizedArmModel``).

    Factors (f_shoulder, f_elbow) scale (MX2, MY2) and (MX3, MY3);
    ``perpendicular_correction_kgm`` (2,) is added to (MY2, MY3). Coriolis
    torques come from the nominal pinocchio model (P1: inertial terms enter
    only through c, which is second order in the small push velocities).
    """

    nominal: pin.Model
    upright_q_rad: np.ndarray
    perpendicular_correction_kgm: np.ndarray = field(default_factory=lambda: np.zeros(2))
    factor_names: tuple[str, ...] = ("shoulder_first_moment", "elbow_first_moment")

    def __post_init__(self) -> None:
        self.upright_q_rad = np.asarray(self.upright_q_rad, float)
        self.first_moments_kgm = vertical_plane_first_moments(self.nominal, self.upright_q_rad)
        self.gravity_m_s2 = float(np.linalg.norm(self.nominal.gravity.linear))
        self._data = self.nominal.createData()

    def lumped(self, factors: np.ndarray) -> np.ndarray:
        """(MX2, MY2, MX3, MY3) the model uses at these factors."""
        f = np.repeat(np.asarray(factors, float), 2)
        p = self.first_moments_kgm * f
        p[[1, 3]] += self.perpendicular_correction_kgm
        return p

    def gravity_torque(self, q: np.ndarray, factors: np.ndarray) -> np.ndarray:
        p = self.lumped(factors)
        psi2 = q[0] - self.upright_q_rad[0]
        psi3 = q[0] + q[1] - self.upright_q_rad[0] - self.upright_q_rad[1]
        # dV/dpsi for V = g (MX cos psi + MY sin psi); joint torques = T' dV/dpsi.
        d2 = self.gravity_m_s2 * (-p[0] * np.sin(psi2) + p[1] * np.cos(psi2))
        d3 = self.gravity_m_s2 * (-p[2] * np.sin(psi3) + p[3] * np.cos(psi3))
        return np.array([d2 + d3, d3])

    def torque(self, q: np.ndarray, qd: np.ndarray, factors: np.ndarray) -> np.ndarray:
        q = np.asarray(q, float)
        qd = np.asarray(qd, float)
        coriolis = pin.rnea(self.nominal, self._data, q, qd, np.zeros(2)) - pin.computeGeneralizedGravity(
            self.nominal, self._data, q)
        return coriolis + self.gravity_torque(q, factors)

    def oscillation_coordinates(self, q: np.ndarray) -> np.ndarray:
        q = np.asarray(q, float)
        return np.stack([q[..., 0], q[..., 0] + q[..., 1]], -1)


@dataclass
class PinocchioArm:
    """Torque-controlled plant on a pinocchio model (ABA forward dynamics, RK4, torque held per period).

    ``controller_gravity`` (a pinocchio model or None) adds that model's
    gravity torque to every command — what UR's ``direct_torque`` does with
    the controller's own model. Viscous + Coulomb friction is not modelled here
    (see :class:`robot_dynamics_id.sim.pendulum.PlanarPendulumArm` for that).
    """

    model: pin.Model
    period_s: float = 0.002
    controller_gravity: pin.Model | None = None

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

    def step(self) -> tuple[np.ndarray, np.ndarray]:
        h = self.period_s
        q, qd = self.q, self.qd
        k1 = self._acc(q, qd)
        k2 = self._acc(q + 0.5 * h * qd, qd + 0.5 * h * k1)
        k3 = self._acc(q + 0.5 * h * (qd + 0.5 * h * k1), qd + 0.5 * h * k2)
        k4 = self._acc(q + h * (qd + 0.5 * h * k2), qd + h * k3)
        self.q = q + h * qd + h * h / 6.0 * (k1 + k2 + k3)
        self.qd = qd + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
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
    """Identified (MX2, MY2, MX3, MY3) in kg m, the final factors and the number of push trials."""

    first_moments_kgm: np.ndarray
    factors: np.ndarray
    n_trials: int


def identify_vertical_plane_gravity(arm, model: VerticalPlaneGravityModel, experiment: PushExperiment, *,
                                    low: float = 0.8, high: float = 1.25, tolerance: float = 0.004,
                                    over_compensation: float = 1.3, max_trials: int = 15
                                    ) -> VerticalPlaneIdentification:
    """P1 on the vertical-plane arm: per group, bisect the factor on the fall boundary and correct MY.

    The other group is held over-compensated (its factor ``over_compensation``)
    so only the group under test can fall; the fall boundary of a group does not
    depend on the other group because gravity separates in psi_2, psi_3. After
    each oscillating trial MY of the group is corrected from the oscillation
    centre: dMY = dMX tan(psi*), dMX estimated from the current bracket.
    """
    estimate = np.full(2, over_compensation)
    n_trials = 0
    for j in (1, 0):  # elbow first: it is the smaller, faster group
        nominal_mx = model.first_moments_kgm[2 * j]

        def run(f: np.ndarray) -> object:
            return run_push_trial(arm, model, f, experiment)

        def correct(trial, f_est: float, j: int = j, nominal_mx: float = nominal_mx) -> None:
            center = float(trial.center_rad[j]) - float(model.oscillation_coordinates(model.upright_q_rad)[j])
            if np.isfinite(center):
                d_mx = nominal_mx * (f_est - float(trial.factors[j]))
                model.perpendicular_correction_kgm[j] += d_mx * np.tan(center)

        base = np.full(2, over_compensation)  # the other group stays over-compensated, never at its estimate
        base[j] = high
        result = bracketing_search(run, base, j, low=low, high=high, tolerance=tolerance,
                                   max_trials=max_trials, on_stable_trial=correct, frequency_coordinate=j)
        estimate[j] = result.estimate
        n_trials += result.n_trials
    return VerticalPlaneIdentification(model.lumped(estimate), estimate, n_trials)
