"""The simulated arm's "true" dynamic parameters: nominal ones plus a seeded random perturbation.

Identification needs something real to find, so the plant does not run on the
published priors: :func:`make_truth` draws link masses, centres of mass, inertias,
rotor inertias, joint friction and drive gains around the nominal values. The
result is a :class:`~robot_dynamics_id.io.model_file.DynamicModel` (inertials in
pinocchio joint frames), so ``truth.save(path)`` writes the very YAML schema the
identifier produces and scoring compares like with like.

Physical consistency by construction: each link's inertia about its CoM is
written as ``I = tr(Σ) 1 − Σ`` with Σ the mass-weighted second moment of the
link's body (Wensing et al. 2017). Perturbing Σ's eigenvalues by positive factors
and rotating its eigenvectors keeps Σ positive definite, hence the triangle
inequalities of I hold for every draw.

Assumptions (nothing here is published for the UR3; see ur.md):

* Drive gains (joint torque per motor current, Nm/A): the assumed nominal ones of
  :mod:`robot_dynamics_id.robots.priors`, drawn around. The model the simulated UR
  controller believes in (``controller_model``) is
  :func:`robot_dynamics_id.io.model_file.ur_controller_model`.
* Friction (seeds.md P2 eq. 11 form, dynamics/friction.py): UR3 Coulomb 2.2/2.2/1.5 Nm
  on base/shoulder/elbow and 0.7 Nm on the wrists; extra static friction ~40 % of
  Coulomb; Stribeck velocity 0.1 rad/s; viscous 1.4/1.4/0.8/0.25/0.25/0.25 Nm·s/rad;
  Coulomb smoothing velocity :data:`COULOMB_VELOCITY_RAD_S` (sharp, like a strain-wave
  joint). Larger arms scale with the torque limit.
* ``friction="real"`` (:data:`FRICTION_KINDS`): the friction measured on real e-Series
  joints (issue 15: big joints 13-35 Nm, concave in velocity; load-dependent Coulomb
  mu = 0.06-0.07; wrists holding torque at standstill in the direction of the last
  motion), scaled to the UR3's torque limits. Per joint (base, shoulder, elbow, wrists):
  Coulomb 3.5/3.5/2.0/0.8 Nm; Stribeck amplitude -40 % of Coulomb on the big joints
  (friction *rises* from standstill: concave) and +30 % on the wrists, Stribeck velocity
  0.3 / 0.08 rad/s; viscous 2.0/2.0/1.2/0.35 Nm·s/rad with a quadratic term of -20 % of
  it per rad/s (concave at speed); load coefficient mu 0.06 on every joint; Dahl
  presliding distance 1 mrad. The base joint's friction then spans 2.1 Nm at standstill
  to 5.5 Nm at 1.5 rad/s (4-10 % of its 56 Nm rating, as 13-35 Nm is of a 150-330 Nm
  e-Series big joint). Drawn like the P2 values (±35 %, velocities and distance ±50 %);
  the rigid-body draws of a seed do not depend on the friction kind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..dynamics.friction import FrictionParameters
from ..io.model_file import DynamicModel
from ..io.model_file import ur_controller_model as controller_model
from ..robots.description import get_robot
from ..robots.priors import nominal_drive_gains

__all__ = [
    "COULOMB_VELOCITY_RAD_S",
    "FRICTION_KINDS",
    "PlantTruth",
    "TruthSpread",
    "controller_friction",
    "controller_model",
    "p2_part",
    "make_truth",
    "nominal_drive_gains",
    "nominal_friction",
    "nominal_truth",
]

#: The plant's truth is a DynamicModel (inertials in pinocchio joint frames, rotor inertia,
#: friction, drive gains); the alias names its role.
PlantTruth = DynamicModel

#: Coulomb smoothing velocity v_k of the plant's friction, rad/s (fixed, not drawn).
COULOMB_VELOCITY_RAD_S = 0.01

#: The plant's friction families: ``p2`` (seeds.md P2 eq. 11 + offset) or ``real`` (what real UR joints show).
FRICTION_KINDS = ("p2", "real")

# UR3 "real" friction means (see module doc), per joint.
_REAL_COULOMB_NM = np.array([3.5, 3.5, 2.0, 0.8, 0.8, 0.8])
_REAL_STATIC_FRACTION = np.array([-0.4, -0.4, -0.4, 0.3, 0.3, 0.3])
_REAL_STRIBECK_RAD_S = np.array([0.3, 0.3, 0.3, 0.08, 0.08, 0.08])
_REAL_VISCOUS = np.array([2.0, 2.0, 1.2, 0.35, 0.35, 0.35])
_REAL_QUADRATIC_FRACTION_PER_RAD_S = -0.2
_REAL_LOAD_COEFFICIENT = 0.06
_REAL_PRESLIDING_RAD = 1e-3

# UR3 friction means (see module doc), per joint.
_UR3_COULOMB_NM = np.array([2.2, 2.2, 1.5, 0.7, 0.7, 0.7])
_UR3_VISCOUS = np.array([1.4, 1.4, 0.8, 0.25, 0.25, 0.25])
_UR3_TORQUE_LIMIT_NM = np.array([56.0, 56.0, 28.0, 12.0, 12.0, 12.0])


@dataclass(frozen=True)
class TruthSpread:
    """Half-widths of the uniform perturbations drawn by :func:`make_truth`.

    Relative values are fractions of the nominal value (0.12 = ±12 %).
    """

    mass_rel: float = 0.12
    #: absolute CoM shift per axis, m
    com_m: float = 0.01
    #: relative change of each principal second moment
    inertia_rel: float = 0.25
    #: rotation of the principal axes, rad
    inertia_axes_rad: float = 0.15
    rotor_rel: float = 0.2
    drive_gain_rel: float = 0.1
    friction_rel: float = 0.35
    stribeck_rel: float = 0.5
    #: absolute friction offset half-width as a fraction of the Coulomb level
    friction_offset_rel: float = 0.1

    def scaled(self, factor: float) -> TruthSpread:
        """Every half-width multiplied by ``factor`` (0 = the nominal truth)."""
        if factor < 0:
            raise ValueError(f"spread factor must be >= 0, got {factor}")
        return TruthSpread(**{k: v * factor for k, v in self.__dict__.items()})


def _robot_name(robot: str) -> str:
    key = str(robot).strip().lower()
    get_robot(key)  # raises a ValueError naming the known robots
    return key


def _friction_kind(kind: str) -> str:
    if kind not in FRICTION_KINDS:
        raise ValueError(f"friction kind {kind!r} is unknown; choose one of {', '.join(FRICTION_KINDS)}")
    return kind


def nominal_friction(robot: str = "ur3", kind: str = "p2") -> FrictionParameters:
    """Plausible mid-range friction of a built-in UR arm (UR3 values scaled by torque limit).

    ``kind``: ``p2`` (P2 eq. 11 form) or ``real`` (+ load-dependent Coulomb, concave viscous law,
    presliding; see the module doc)."""
    desc = get_robot(_robot_name(robot))
    scale = desc.torque_limit_nm / _UR3_TORQUE_LIMIT_NM
    if _friction_kind(kind) == "real":
        size = np.sqrt(scale)
        coulomb = _REAL_COULOMB_NM * size
        viscous = _REAL_VISCOUS * size
        return FrictionParameters(
            static_nm=_REAL_STATIC_FRACTION * coulomb,
            coulomb_nm=coulomb,
            viscous_nm_s_per_rad=viscous,
            offset_nm=np.zeros(6),
            stribeck_velocity_rad_s=_REAL_STRIBECK_RAD_S.copy(),
            coulomb_velocity_rad_s=np.full(6, COULOMB_VELOCITY_RAD_S),
            load_coefficient=np.full(6, _REAL_LOAD_COEFFICIENT),
            viscous_quadratic_nm_s2_per_rad2=_REAL_QUADRATIC_FRACTION_PER_RAD_S * viscous,
            presliding_distance_rad=np.full(6, _REAL_PRESLIDING_RAD),
        )
    # The UR3 torque split is the reference; bigger drives have proportionally more friction.
    coulomb = _UR3_COULOMB_NM * np.sqrt(scale)
    return FrictionParameters(
        static_nm=0.4 * coulomb,
        coulomb_nm=coulomb,
        viscous_nm_s_per_rad=_UR3_VISCOUS * np.sqrt(scale),
        offset_nm=np.zeros(6),
        stribeck_velocity_rad_s=np.full(6, 0.1),
        coulomb_velocity_rad_s=np.full(6, COULOMB_VELOCITY_RAD_S),
    )


def p2_part(friction: FrictionParameters) -> FrictionParameters:
    """The P2 eq. (11) terms of a friction model (static, Coulomb, Stribeck, viscous, offset) and its speed range:
    no load term, no quadratic term, no presliding."""
    return FrictionParameters(static_nm=friction.static_nm, coulomb_nm=friction.coulomb_nm,
                              viscous_nm_s_per_rad=friction.viscous_nm_s_per_rad, offset_nm=friction.offset_nm,
                              stribeck_velocity_rad_s=friction.stribeck_velocity_rad_s,
                              coulomb_velocity_rad_s=friction.coulomb_velocity_rad_s,
                              speed_range_rad_s=friction.speed_range_rad_s)


def controller_friction(robot: str = "ur3", kind: str = "p2") -> FrictionParameters:
    """The friction model the simulated UR controller believes in (its target_current, sim/plant.py): the
    :func:`p2_part` of :func:`nominal_friction` of that kind. A guess at a manufacturer's model: the arm
    type's typical joint, not this arm's."""
    return p2_part(nominal_friction(robot, kind))


def nominal_truth(robot: str = "ur3", *, friction: str = "p2") -> DynamicModel:
    """The unperturbed plant: nominal inertials, rotor inertias, friction (``p2`` or ``real``) and drive gains."""
    name = _robot_name(robot)
    base = DynamicModel.nominal(name)
    return replace(
        base,
        friction=nominal_friction(name, friction),
        drive_gains_nm_per_a=nominal_drive_gains(name),
        provenance={"source": "robot_dynamics_id.sim.truth.nominal_truth", "robot": name, "friction": friction},
    )


def _second_moment(inertia: np.ndarray) -> np.ndarray:
    """Σ = tr(I)/2 · 1 − I: the mass-weighted second moment of the body about its CoM."""
    return 0.5 * np.trace(inertia) * np.eye(3) - inertia


def _rotation(axis_angle: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(axis_angle))
    if angle == 0.0:
        return np.eye(3)
    k = axis_angle / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def _perturb_inertia(inertia: np.ndarray, mass_ratio: float, spread: TruthSpread,
                     rng: np.random.Generator) -> np.ndarray:
    sigma = _second_moment(inertia)
    eigval, eigvec = np.linalg.eigh(sigma)
    # A flat prior (one zero second moment) is lifted to a thin but solid body.
    eigval = np.maximum(eigval, 0.02 * eigval.max())
    eigval = eigval * mass_ratio * rng.uniform(1 - spread.inertia_rel, 1 + spread.inertia_rel, 3)
    axes = _rotation(rng.uniform(-spread.inertia_axes_rad, spread.inertia_axes_rad, 3)) @ eigvec
    sigma_new = axes @ np.diag(eigval) @ axes.T
    inertia_new = np.trace(sigma_new) * np.eye(3) - sigma_new
    return 0.5 * (inertia_new + inertia_new.T)


def make_truth(robot: str = "ur3", seed: int = 0, *, spread: float | TruthSpread = 1.0,
               friction: str = "p2") -> DynamicModel:
    """A seeded random "true" plant around :func:`nominal_truth` (``friction``: ``p2`` or ``real``).

    ``spread`` is a :class:`TruthSpread` or a factor applied to the default one
    (1.0: masses ±12 %, CoMs ±1 cm, principal inertias ±25 % and axes ±0.15 rad,
    rotor ±20 %, drive gains ±10 %, friction ±35 %, Stribeck velocity ±50 %;
    0.0: exactly the nominal truth). Same (robot, seed, spread) → same truth.
    """
    name = _robot_name(robot)
    s = spread if isinstance(spread, TruthSpread) else TruthSpread().scaled(float(spread))
    nominal = nominal_truth(name, friction=friction)
    rng = np.random.default_rng(int(seed))
    n = nominal.n_joints

    mass_ratio = rng.uniform(1 - s.mass_rel, 1 + s.mass_rel, n)
    masses = nominal.link_mass_kg * mass_ratio
    coms = nominal.link_com_m + rng.uniform(-s.com_m, s.com_m, (n, 3))
    inertias = np.array([
        _perturb_inertia(nominal.link_inertia_kgm2[i], mass_ratio[i], s, rng) for i in range(n)
    ]) if (s.inertia_rel > 0 or s.inertia_axes_rad > 0 or s.mass_rel > 0) else nominal.link_inertia_kgm2.copy()
    rotor = nominal.rotor_inertia_kgm2 * rng.uniform(1 - s.rotor_rel, 1 + s.rotor_rel, n)
    gains = nominal.drive_gains_nm_per_a * rng.uniform(1 - s.drive_gain_rel, 1 + s.drive_gain_rel, n)

    f = nominal.friction

    def draw(values: np.ndarray, rel: float) -> np.ndarray:
        return values * rng.uniform(1 - rel, 1 + rel, n)

    drawn = FrictionParameters(
        static_nm=draw(f.static_nm, s.friction_rel),
        coulomb_nm=draw(f.coulomb_nm, s.friction_rel),
        viscous_nm_s_per_rad=draw(f.viscous_nm_s_per_rad, s.friction_rel),
        offset_nm=f.coulomb_nm * rng.uniform(-s.friction_offset_rel, s.friction_offset_rel, n),
        stribeck_velocity_rad_s=draw(f.stribeck_velocity_rad_s, s.stribeck_rel),
        coulomb_velocity_rad_s=f.coulomb_velocity_rad_s.copy(),
    )
    if friction == "real":
        # drawn after the P2 values, so a seed's rigid body and P2 friction draws stay the same
        drawn = replace(drawn, load_coefficient=draw(f.load_coefficient, s.friction_rel),
                        viscous_quadratic_nm_s2_per_rad2=draw(f.viscous_quadratic_nm_s2_per_rad2, s.friction_rel),
                        presliding_distance_rad=draw(f.presliding_distance_rad, s.stribeck_rel), terms=None)
    friction_model = drawn
    spread_dict = {k: float(v) for k, v in s.__dict__.items()}
    return replace(
        nominal,
        link_mass_kg=masses,
        link_com_m=coms,
        link_inertia_kgm2=inertias,
        rotor_inertia_kgm2=rotor,
        friction=friction_model,
        drive_gains_nm_per_a=gains,
        provenance={"source": "robot_dynamics_id.sim.truth.make_truth", "robot": name,
                    "seed": int(seed), "spread": spread_dict, "friction": friction},
    )
