"""Joint friction: the P2 model of Jamisola et al. (seeds.md) and the terms real UR joints add.

Per joint (P2, eq. (11)), extended by a constant offset and an explicit
smoothing velocity for the Coulomb term::

    tau_f = f_s sgn_s(qd) / (1 + (qd / x_s)^2) + f_k sgn_k(qd) + k_v qd + offset            (P2 eq. 11)
          + mu |tau_load| sgn_k(qd)                                   (load-dependent Coulomb)
          + k_2 qd |qd|                                                (odd polynomial viscous law)

* ``sgn_k(qd) = tanh(qd / v_k)``. ``v_k = 1 rad/s`` is exactly the paper's
  ``f_k tanh(qd)``; a UR joint's dead zone is much sharper, so the plant and the
  identifier use a smaller ``v_k``. ``sgn_s(qd) = tanh(qd / SIGN_SMOOTHING_RAD_S)``
  keeps the model Lipschitz for integration and optimisation.
* Load-dependent Coulomb friction (strain-wave gears: the tooth and bearing
  normal forces grow with the transmitted torque; Madsen et al. 2020 on UR5e
  joints, the AURT toolbox's friction-load models): ``tau_load`` is the link-side
  rigid-body torque the joint transmits (inverse dynamics of the links without
  rotor inertia and friction), ``mu >= 0`` dimensionless (a negative mu, which only an
  unconstrained fit gives, is kept but flagged: :attr:`FrictionParameters.non_physical_load`).
* ``k_2 qd |qd|`` (odd in qd, the lowest odd term after qd) bends the viscous law; with a
  negative Stribeck amplitude ``f_s`` (friction *rising* from ``f_k + f_s`` at rest
  to ``f_k``) and/or ``k_2 < 0`` the curve is concave in |qd|, as measured on big
  UR joints.
* Presliding (Dahl 1968; the rate-independent core of the LuGre/GMS models): with
  a presliding distance ``delta > 0`` both sign functions are replaced by the
  state ``z`` in [-1, 1] of

      dz/dq = (sgn(dq) - z) / delta                                               (Dahl, rate-independent)

  so friction builds up over ``delta`` rad of travel after a reversal and, at
  standstill, keeps the sign of the last motion (a joint at rest holds torque in
  the direction it last moved). :func:`dahl_state` integrates it exactly for
  piecewise-linear motion: ``z_k = sgn_k + (z_{k-1} - sgn_k) exp(-|dq_k| / delta)``.

* Beyond the speeds it was identified over (``speed_range_rad_s`` V, per joint; infinite unless
  set) the Stribeck, viscous and quadratic terms are held at V (the signs, the Coulomb and the
  load term stay as everywhere) and a concave growth is added:

      tau_f(qd) = [terms at V sgn qd] + sgn(qd) 2 s V (sqrt(|qd| / V) - 1)          (|qd| > V)

  whose slope is ``s`` at V and falls as ``s sqrt(V / |qd|)``. ``s`` is the steady curve's slope
  at V, no steeper than its chord over [V/2, V], and >= 0. Why: a polynomial bends where the data
  say it does and nowhere else, and its slope at the edge of the data is the least determined
  thing about it. A concave fit (``k_2 < 0``) extended as written turns down and soon pushes the
  joint (friction that adds energy); extended along a convex edge's tangent it soon doubles. The
  joint-side curves of UR joints are concave (a UR5e controller's calibration, sim/measured_friction.py,
  but for wrist 3's positive direction: the slope falls by about half from 0.5-1.5 to 1.5-3.2 rad/s,
  close to the square root's 1/sqrt(v)); a joint that stays nearly linear is underestimated. The
  slope is the whole curve's, so a Stribeck term still falling at V (f_s > 0) lowers it although
  the term is held beyond V. Past V the law is an assumption, and this is a bounded, stated one;
  validate names the joints a recording drives there.

For fixed shape constants (x_s, v_k, delta) and a given ``tau_load`` the model is
linear in (f_s, f_k, k_v, offset, mu, k_2): :func:`friction_basis` gives those
columns, :data:`EXTENDED_FRICTION_NAMES` their order. :func:`friction_regressor`
keeps the four P2 columns (base-parameter maps, excitation design).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "EXTENDED_FRICTION_NAMES",
    "FRICTION_TERMS",
    "LINEAR_FRICTION_NAMES",
    "SIGN_SMOOTHING_RAD_S",
    "FrictionParameters",
    "bounded_speed",
    "check_presliding_distances",
    "dahl_state",
    "extension_growth",
    "friction_basis",
    "friction_regressor",
    "friction_signs",
    "friction_torque",
    "steady_friction_curve",
]

#: Velocity over which sgn(qd) is smoothed (tanh), rad/s.
SIGN_SMOOTHING_RAD_S = 1e-3

#: Order of the P2 linear friction parameters per joint in regressors and vectors.
LINEAR_FRICTION_NAMES = ("static_nm", "coulomb_nm", "viscous_nm_s_per_rad", "offset_nm")
#: Order of all linear friction parameters per joint (:func:`friction_basis`, :meth:`FrictionParameters.extended_vector`).
EXTENDED_FRICTION_NAMES = LINEAR_FRICTION_NAMES + (
    "load_coefficient", "viscous_quadratic_nm_s2_per_rad2")
#: Optional terms on top of P2 eq. (11): which linear parameters each brings (presliding brings a state, none).
FRICTION_TERMS: dict[str, tuple[str, ...]] = {
    "load": ("load_coefficient",),
    "poly": ("viscous_quadratic_nm_s2_per_rad2",),
    "presliding": (),
}
_N_LINEAR = len(EXTENDED_FRICTION_NAMES)
_P2_MODEL_NAME = "stribeck_coulomb_viscous (Jamisola P2 eq. 11 + offset)"
_EXTRA_NAMES = EXTENDED_FRICTION_NAMES[4:]


def _vec(n: int, value: float) -> np.ndarray:
    return np.full(n, float(value))


def parse_terms(text: str) -> tuple[str, ...]:
    """``"p2+load+presliding"`` -> ("load", "presliding") (sorted, validated); ``"p2"`` -> ()."""
    parts = [p.strip() for p in str(text).split("+") if p.strip()]
    if not parts or parts[0] != "p2":
        raise ValueError(f"friction terms {text!r} must start with 'p2' (e.g. p2, p2+load, p2+load+poly+presliding)")
    extra = parts[1:]
    unknown = [p for p in extra if p not in FRICTION_TERMS]
    if unknown:
        raise ValueError(f"unknown friction term(s) {unknown} in {text!r}; known: {', '.join(FRICTION_TERMS)}")
    return tuple(sorted(set(extra), key=list(FRICTION_TERMS).index))


def terms_name(terms) -> str:
    """("load", "presliding") -> ``"p2+load+presliding"``."""
    return "+".join(("p2",) + tuple(sorted(set(terms), key=list(FRICTION_TERMS).index)))


@dataclass(frozen=True)
class FrictionParameters:
    """Per-joint friction parameters (arrays of length n); the extended terms default to absent.

    ``terms``: per joint, the model family (``"p2"``, ``"p2+load"``, ..., see
    :func:`parse_terms`); derived from the non-zero parameters when not given.
    ``speed_range_rad_s``: per joint, the largest speed the law was identified over (module doc: beyond
    it the fitted terms are held and the curve grows on, concave); default infinite (the law as written).
    """

    static_nm: np.ndarray
    coulomb_nm: np.ndarray
    viscous_nm_s_per_rad: np.ndarray
    offset_nm: np.ndarray
    stribeck_velocity_rad_s: np.ndarray
    coulomb_velocity_rad_s: np.ndarray = field(default=None)  # type: ignore[assignment]
    load_coefficient: np.ndarray = field(default=None)  # type: ignore[assignment]
    viscous_quadratic_nm_s2_per_rad2: np.ndarray = field(default=None)  # type: ignore[assignment]
    presliding_distance_rad: np.ndarray = field(default=None)  # type: ignore[assignment]
    terms: tuple[str, ...] | None = None
    speed_range_rad_s: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        n = np.asarray(self.static_nm).shape[0]
        defaults = {"coulomb_velocity_rad_s": 1.0, "load_coefficient": 0.0, "viscous_quadratic_nm_s2_per_rad2": 0.0,
                    "presliding_distance_rad": 0.0, "speed_range_rad_s": np.inf}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, _vec(n, value))
        for name in EXTENDED_FRICTION_NAMES + ("stribeck_velocity_rad_s", "coulomb_velocity_rad_s",
                                               "presliding_distance_rad"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (n,):
                raise ValueError(f"friction {name} must have shape ({n},), got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"friction {name} contains NaN or inf")
            object.__setattr__(self, name, value)
        if np.any(self.stribeck_velocity_rad_s <= 0) or np.any(self.coulomb_velocity_rad_s <= 0):
            raise ValueError("friction velocity constants (stribeck, coulomb) must be > 0 rad/s")
        if np.any(self.presliding_distance_rad < 0):
            raise ValueError("friction presliding_distance_rad must be >= 0 rad (0 = no presliding state)")
        speed_range = np.asarray(self.speed_range_rad_s, dtype=float)
        if speed_range.shape != (n,) or np.any(np.isnan(speed_range)) or np.any(speed_range <= 0):
            raise ValueError(f"friction speed_range_rad_s must be {n} speeds > 0 rad/s (inf: no range), "
                             f"got {speed_range.tolist()}")
        object.__setattr__(self, "speed_range_rad_s", speed_range)
        if self.terms is None:
            derived = []
            for j in range(n):
                t = [name for name, params in FRICTION_TERMS.items()
                     if any(getattr(self, p)[j] != 0 for p in params)]
                if self.presliding_distance_rad[j] > 0:
                    t.append("presliding")
                derived.append(terms_name(t))
            object.__setattr__(self, "terms", tuple(derived))
        else:
            terms = tuple(terms_name(parse_terms(t)) for t in self.terms)
            if len(terms) != n:
                raise ValueError(f"friction terms must name one model per joint ({n}), got {len(terms)}")
            for j, t in enumerate(terms):
                if ("presliding" in t) != bool(self.presliding_distance_rad[j] > 0):
                    raise ValueError(f"joint {j}: terms {t!r} and presliding_distance_rad "
                                     f"{self.presliding_distance_rad[j]:g} disagree (presliding needs a distance > 0)")
                absent = [p for name, params in FRICTION_TERMS.items() if name not in parse_terms(t)
                          for p in params if getattr(self, p)[j] != 0]
                if absent:
                    raise ValueError(f"joint {j}: terms {t!r} exclude {', '.join(absent)}, which are not zero")
            object.__setattr__(self, "terms", terms)

    @property
    def n_joints(self) -> int:
        return self.static_nm.shape[0]

    @property
    def has_load_term(self) -> bool:
        return bool(np.any(self.load_coefficient != 0))

    @property
    def non_physical_load(self) -> np.ndarray:
        """Per joint: a load coefficient below 0 — friction falling as the transmitted torque grows, which
        gears do not do. Only an unconstrained estimator (wls, ols, irls) gives one; it is kept (the model
        then predicts what was identified) and flagged; the consistent estimator bounds mu >= 0."""
        return self.load_coefficient < 0

    @property
    def presliding(self) -> np.ndarray:
        """Per joint: does the sign follow a presliding (Dahl) state?"""
        return self.presliding_distance_rad > 0

    @property
    def bounded(self) -> bool:
        """Has any joint a finite identified speed range (beyond which the law is extended)?"""
        return bool(np.any(np.isfinite(self.speed_range_rad_s)))

    def unbounded_turnover_rad_s(self) -> np.ndarray:
        """Per joint, the speed past which the viscous law ``k_v qd + k_2 qd|qd|`` evaluated as written falls for
        good: ``max(-k_v / (2 k_2), 0)`` for ``k_2 < 0``, 0 for ``k_2 = 0`` and ``k_v < 0``; past it the friction
        in the end drives the joint. Infinite where the law rises at high speed (``k_2 > 0``, or ``k_2 = 0`` and
        ``k_v >= 0``) or a speed range is recorded (beyond which the law is extended, module doc); a model file
        written before the range was recorded has none. (n,)"""
        k_v, k_2 = self.viscous_nm_s_per_rad, self.viscous_quadratic_nm_s2_per_rad2
        with np.errstate(divide="ignore", invalid="ignore"):
            top = np.where(k_2 < 0, np.maximum(-k_v / (2.0 * k_2), 0.0),
                           np.where((k_2 == 0) & (k_v < 0), 0.0, np.inf))
        return np.where(np.isfinite(self.speed_range_rad_s), np.inf, top)

    def extension_slope(self) -> np.ndarray:
        """Per joint, the slope ``s`` (Nm s/rad, >= 0) the curve grows on with beyond ``speed_range_rad_s`` V
        (module doc): the steady curve's slope at V, at most its chord slope over [V/2, V], clipped at 0;
        0 where the range is infinite."""
        finite = np.isfinite(self.speed_range_rad_s)
        v = np.where(finite, self.speed_range_rad_s, 1.0)
        f_s, x_s = self.static_nm, self.stribeck_velocity_rad_s
        k_v, k_2 = self.viscous_nm_s_per_rad, self.viscous_quadratic_nm_s2_per_rad2
        r = (v / x_s) ** 2
        tangent = k_v + 2.0 * k_2 * v - f_s * 2.0 * v / x_s**2 / (1.0 + r) ** 2
        half = v / 2.0
        chord = (f_s * (1.0 / (1.0 + r) - 1.0 / (1.0 + (half / x_s) ** 2)) + k_v * half
                 + k_2 * (v**2 - half**2)) / half
        return np.where(finite, np.maximum(np.minimum(tangent, chord), 0.0), 0.0)

    @property
    def is_p2(self) -> bool:
        """Only the P2 eq. (11) terms (+ offset)."""
        return all(t == "p2" for t in self.terms) and not np.any(self.extended_vector().reshape(-1, _N_LINEAR)[:, 4:])

    @classmethod
    def zeros(cls, n: int, *, stribeck_velocity_rad_s: float = 0.1, coulomb_velocity_rad_s: float = 1.0):
        """No friction (velocity constants set to harmless defaults)."""
        z = np.zeros(n)
        return cls(z, z, z, z, _vec(n, stribeck_velocity_rad_s), _vec(n, coulomb_velocity_rad_s))

    def linear_vector(self) -> np.ndarray:
        """(f_s, f_k, k_v, offset) per joint, joint-major: shape (4n,)."""
        return np.column_stack([self.static_nm, self.coulomb_nm, self.viscous_nm_s_per_rad, self.offset_nm]).ravel()

    def extended_vector(self) -> np.ndarray:
        """All linear parameters per joint, :data:`EXTENDED_FRICTION_NAMES` order, joint-major: shape (6n,)."""
        return np.column_stack([getattr(self, name) for name in EXTENDED_FRICTION_NAMES]).ravel()

    @classmethod
    def from_linear_vector(cls, values: np.ndarray, *, stribeck_velocity_rad_s: np.ndarray,
                           coulomb_velocity_rad_s: np.ndarray) -> FrictionParameters:
        v = np.asarray(values, float).reshape(-1, 4)
        return cls(v[:, 0], v[:, 1], v[:, 2], v[:, 3], np.asarray(stribeck_velocity_rad_s, float),
                   np.asarray(coulomb_velocity_rad_s, float))

    @classmethod
    def from_extended_vector(cls, values: np.ndarray, *, stribeck_velocity_rad_s, coulomb_velocity_rad_s,
                             presliding_distance_rad=None, terms=None, speed_range_rad_s=None) -> FrictionParameters:
        v = np.asarray(values, float).reshape(-1, _N_LINEAR)
        n = v.shape[0]
        return cls(*(v[:, i] for i in range(4)), np.broadcast_to(np.asarray(stribeck_velocity_rad_s, float), (n,)),
                   np.broadcast_to(np.asarray(coulomb_velocity_rad_s, float), (n,)), v[:, 4], v[:, 5],
                   None if presliding_distance_rad is None else np.asarray(presliding_distance_rad, float),
                   None if terms is None else tuple(terms),
                   None if speed_range_rad_s is None else np.asarray(speed_range_rad_s, float))

    def to_dict(self) -> dict:
        out = {
            "model": _P2_MODEL_NAME if self.is_p2 else
            "P2 eq. 11 + offset, load-dependent Coulomb, odd polynomial viscous, Dahl presliding (per-joint terms)",
            "terms": list(self.terms),
            "static_nm": self.static_nm.tolist(),
            "coulomb_nm": self.coulomb_nm.tolist(),
            "viscous_nm_s_per_rad": self.viscous_nm_s_per_rad.tolist(),
            "offset_nm": self.offset_nm.tolist(),
            "stribeck_velocity_rad_s": self.stribeck_velocity_rad_s.tolist(),
            "coulomb_velocity_rad_s": self.coulomb_velocity_rad_s.tolist(),
        }
        if not self.is_p2:
            for name in _EXTRA_NAMES + ("presliding_distance_rad",):
                out[name] = getattr(self, name).tolist()
        if self.bounded:
            out["speed_range_rad_s"] = [float(v) if np.isfinite(v) else None for v in self.speed_range_rad_s]
        return out

    @classmethod
    def from_dict(cls, data: dict) -> FrictionParameters:
        try:
            n = len(data["static_nm"])
            optional = {name: None if name not in data else np.asarray(data[name], float)
                        for name in _EXTRA_NAMES + ("presliding_distance_rad",)}
            return cls(
                np.asarray(data["static_nm"], float),
                np.asarray(data["coulomb_nm"], float),
                np.asarray(data["viscous_nm_s_per_rad"], float),
                np.asarray(data.get("offset_nm", np.zeros(n)), float),
                np.asarray(data["stribeck_velocity_rad_s"], float),
                np.asarray(data.get("coulomb_velocity_rad_s", np.ones(n)), float),
                terms=None if data.get("terms") is None else tuple(data["terms"]),
                speed_range_rad_s=None if data.get("speed_range_rad_s") is None else
                np.array([np.inf if v is None else v for v in data["speed_range_rad_s"]], float),
                **optional,
            )
        except KeyError as exc:
            raise ValueError(f"friction block is missing the key {exc.args[0]!r}") from exc


def friction_regressor(qd_rad_s: np.ndarray, stribeck_velocity_rad_s: np.ndarray,
                       coulomb_velocity_rad_s: np.ndarray) -> np.ndarray:
    """Columns of the friction torque that are linear in (f_s, f_k, k_v, offset).

    ``qd_rad_s`` has shape (N, n); returns shape (N, n, 4) so that
    ``tau_f[k, j] = Y[k, j] @ (f_s_j, f_k_j, k_v_j, offset_j)`` (P2, eq. (11)).
    """
    qd = np.atleast_2d(np.asarray(qd_rad_s, float))
    x_s = np.asarray(stribeck_velocity_rad_s, float)
    v_k = np.asarray(coulomb_velocity_rad_s, float)
    sign = np.tanh(qd / SIGN_SMOOTHING_RAD_S)
    out = np.empty(qd.shape + (4,))
    out[..., 0] = sign / (1.0 + (qd / x_s) ** 2)
    out[..., 1] = np.tanh(qd / v_k)
    out[..., 2] = qd
    out[..., 3] = 1.0
    return out



def check_presliding_distances(values, n_joints: int, *, what: str = "presliding_distance_rad") -> np.ndarray | None:
    """None (unset), or Dahl presliding distances in rad, one value or one per joint, as an (n_joints,) array;
    ValueError naming ``what`` and the fix otherwise."""
    if values is None:
        return None
    delta = np.atleast_1d(np.asarray(values, float)).reshape(-1)
    if delta.size not in (1, n_joints):
        raise ValueError(f"{what} has {delta.size} values for a {n_joints}-joint robot: give one value or one per "
                         "joint, in rad (e.g. 0.001)")
    if not np.all(np.isfinite(delta) & (delta > 0)):
        raise ValueError(f"{what} must be > 0 rad (one value, or one per joint; e.g. 0.001 = 1 mrad), got "
                         f"{delta.tolist()}; leave it unset to have it searched")
    return np.broadcast_to(delta, (n_joints,)).copy()

def dahl_state(position_increment_rad, distance_rad, initial=None) -> np.ndarray:
    """The Dahl presliding state z (N, n) along a motion given by its position increments dq (N, n).

    ``z_k = sgn(dq_k) + (z_{k-1} - sgn(dq_k)) exp(-|dq_k| / delta)``: the exact solution of
    ``dz/dq = (sgn(dq) - z) / delta`` over each increment (rate-independent, unconditionally
    stable, z stays in [-1, 1]). ``initial`` is z before the first increment (default 0).
    Vectorised: with L the cumulative travel / delta, ``z_k = e^{-(L_k - L_b)} (z_b + sum_{b<i<=k}
    (e^{L_i - L_b} - e^{L_{i-1} - L_b}) sgn_i)`` inside blocks of at most 500 travel units (so the
    exponentials stay finite), block by block.
    """
    dq = np.atleast_2d(np.asarray(position_increment_rad, float))
    delta = np.broadcast_to(np.asarray(distance_rad, float), (dq.shape[1],))
    if np.any(delta <= 0):
        raise ValueError("dahl_state needs presliding distances > 0 rad")
    z0 = np.zeros(dq.shape[1]) if initial is None else np.broadcast_to(np.asarray(initial, float), (dq.shape[1],))
    out = np.empty_like(dq)
    block = 500.0
    for j in range(dq.shape[1]):
        # one increment of more than 50 distances ends exactly on sgn(dq) (e^-50 ~ 2e-22): clip it
        travel = np.minimum(np.abs(dq[:, j]) / delta[j], 50.0)
        sign = np.sign(dq[:, j])
        cum = np.cumsum(travel)
        z = float(z0[j])
        start = 0
        total = dq.shape[0]
        while start < total:
            base = cum[start - 1] if start > 0 else 0.0
            stop = int(np.searchsorted(cum, base + block, side="right"))
            stop = min(max(stop, start + 1), total)
            rel = cum[start:stop] - base  # L_i - L_b, in [0, block]
            grow = np.exp(rel)
            prev = np.concatenate([[1.0], grow[:-1]])
            acc = np.cumsum((grow - prev) * sign[start:stop])
            out[start:stop, j] = (z + acc) / grow
            z = float(out[stop - 1, j])
            start = stop
    return out


def friction_signs(qd_rad_s, coulomb_velocity_rad_s, *, presliding_state=None, presliding=None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """(static sign, Coulomb sign), each (N, n): ``tanh(qd/eps)`` and ``tanh(qd/v_k)``, or the presliding
    state where ``presliding`` (bool per joint) is set (then ``presliding_state`` (N, n) is required)."""
    qd = np.atleast_2d(np.asarray(qd_rad_s, float))
    static = np.tanh(qd / SIGN_SMOOTHING_RAD_S)
    coulomb = np.tanh(qd / np.asarray(coulomb_velocity_rad_s, float))
    if presliding is not None and np.any(presliding):
        if presliding_state is None:
            raise ValueError("presliding joints need their presliding state (dahl_state of the motion)")
        state = np.atleast_2d(np.asarray(presliding_state, float))
        mask = np.asarray(presliding, bool)
        static[:, mask] = state[:, mask]
        coulomb[:, mask] = state[:, mask]
    return static, coulomb


def friction_basis(qd_rad_s, stribeck_velocity_rad_s, static_sign, coulomb_sign, load_torque_nm=None, *,
                   viscous_qd_rad_s=None) -> np.ndarray:
    """The friction columns (N, n, 6) of every linear parameter, :data:`EXTENDED_FRICTION_NAMES` order.

    ``load_torque_nm`` (N, n): the link-side rigid-body torque; ``None`` gives a zero load column.
    ``viscous_qd_rad_s``: the velocity of the Stribeck, viscous and quadratic columns when it differs from
    ``qd_rad_s`` (a model's speed range: :func:`bounded_speed`; the signs stay those of ``qd_rad_s``).
    """
    qd = np.atleast_2d(np.asarray(qd_rad_s, float))
    v = qd if viscous_qd_rad_s is None else np.atleast_2d(np.asarray(viscous_qd_rad_s, float))
    x_s = np.asarray(stribeck_velocity_rad_s, float)
    out = np.empty(qd.shape + (_N_LINEAR,))
    out[..., 0] = static_sign / (1.0 + (v / x_s) ** 2)
    out[..., 1] = coulomb_sign
    out[..., 2] = v
    out[..., 3] = 1.0
    out[..., 4] = 0.0 if load_torque_nm is None else np.abs(np.asarray(load_torque_nm, float)) * coulomb_sign
    out[..., 5] = v * np.abs(v)
    return out


def friction_torque(params: FrictionParameters, qd_rad_s: np.ndarray, *, load_torque_nm=None,
                    presliding_state=None) -> np.ndarray:
    """Friction torque (Nm) for joint velocities of shape (n,) or (N, n).

    ``load_torque_nm`` (same shape): the link-side rigid-body torque, required when the model has a
    load-dependent term. ``presliding_state`` (same shape, :func:`dahl_state` of the motion): without
    it, presliding joints give their steady (kinetic) friction, the sign smoothed over ``v_k``.
    """
    qd = np.asarray(qd_rad_s, float)
    if params.has_load_term and load_torque_nm is None:
        raise ValueError("this friction model has a load-dependent term (mu |tau_load|): pass load_torque_nm, "
                         "the link-side rigid-body torque (inverse dynamics without rotor inertia and friction)")
    q2 = np.atleast_2d(qd)
    presliding = params.presliding if presliding_state is not None else None
    static, coulomb = friction_signs(q2, params.coulomb_velocity_rad_s, presliding=presliding,
                                     presliding_state=None if presliding_state is None
                                     else np.atleast_2d(np.asarray(presliding_state, float)))
    load = None if load_torque_nm is None else np.atleast_2d(np.asarray(load_torque_nm, float))
    inside, beyond = bounded_speed(params, q2)
    y = friction_basis(q2, params.stribeck_velocity_rad_s, static, coulomb, load, viscous_qd_rad_s=inside)
    theta = params.extended_vector().reshape(-1, _N_LINEAR)
    tau = np.einsum("...jk,jk->...j", y, theta)
    if beyond is not None:
        tau = tau + extension_growth(params.speed_range_rad_s, params.extension_slope(), beyond)
    return tau.reshape(qd.shape)


def bounded_speed(params: FrictionParameters, qd_rad_s: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(qd clipped to +-``speed_range_rad_s``, the part beyond it) per joint; (qd, None) when no joint has a
    finite range. The fitted terms are evaluated at the first, :func:`extension_growth` takes the second."""
    qd = np.asarray(qd_rad_s, float)
    if not params.bounded:
        return qd, None
    inside = np.clip(qd, -params.speed_range_rad_s, params.speed_range_rad_s)
    return inside, qd - inside


def extension_growth(speed_range_rad_s, slope, beyond_rad_s) -> np.ndarray:
    """The friction added beyond the speed range V (module doc): ``sgn(b) 2 s V (sqrt(1 + |b| / V) - 1)`` for
    the velocity ``b`` beyond +-V (:func:`bounded_speed`), slope ``s`` (:meth:`FrictionParameters.extension_slope`);
    arrays broadcast per joint, 0 where V is infinite."""
    v = np.asarray(speed_range_rad_s, float)
    b = np.asarray(beyond_rad_s, float)
    finite = np.isfinite(v)
    v_safe = np.where(finite, v, 1.0)
    grow = 2.0 * np.asarray(slope, float) * v_safe * (np.sqrt(1.0 + np.abs(b) / v_safe) - 1.0)
    return np.where(finite, np.sign(b) * grow, 0.0)


def steady_friction_curve(params: FrictionParameters, speed_rad_s, *, load_torque_nm=0.0) -> np.ndarray:
    """The physical friction curve at positive speeds (M,) -> (M, n): the odd part of the model in
    steady sliding (sgn = 1: its smoothing over a few mrad/s is numerical, not physics), offset
    excluded. Friction dissipates energy (``tau_f(qd) qd >= 0``) where this is >= 0."""
    v = np.asarray(speed_rad_s, float).reshape(-1, 1) * np.ones(params.n_joints)
    ones = np.ones_like(v)
    load = np.full_like(v, float(load_torque_nm))
    inside, beyond = bounded_speed(params, v)
    y = friction_basis(v, params.stribeck_velocity_rad_s, ones, ones, load, viscous_qd_rad_s=inside)
    theta = params.extended_vector().reshape(-1, _N_LINEAR).copy()
    theta[:, 3] = 0.0
    curve = np.einsum("mjk,jk->mj", y, theta)
    return curve if beyond is None else curve + extension_growth(params.speed_range_rad_s,
                                                                 params.extension_slope(), beyond)
