"""Joint friction from a UR controller's own joint calibration: a law outside the identifier's model family.

The plant's friction kinds ``p2`` and ``real`` (sim/truth.py) are the identifier's own
families (dynamics/friction.py), so recovering them shows that the fit works, not that
the family fits a real joint. :class:`MeasuredJointFriction` is friction the identifier
cannot represent exactly, built from what a real UR joint measures:

* **Steady curve** — the friction calibration a UR5e controller keeps for its joints
  (its calibration summary: motor-side torque at ±0.01, 0.5, 1.5 and 3.2 rad/s joint
  speed, each direction, near 45 °C; published with the AURT toolbox's data sets,
  ``resources/Dataset/ur5e_data/robot_calibration_summary.txt`` of
  INTO-CPS-Association/aurt), times the gear ratio 101 (ur.md; the file's back-EMF column
  agrees: 0.072 V s/rad x 3.2 rad/s x 101 = 23.3 V against 23.8 V measured). Joint side
  that is 5.6 Nm at 0.01 rad/s rising to 17.6 Nm at 3.2 rad/s on the base joint: concave
  in speed (the chord slopes fall on every joint and direction but wrist 3's positive one above
  0.5 rad/s; no Coulomb + viscous line, no Stribeck dip). Between the points the curve is a
  monotone cubic (PCHIP) in |qd|, constant below 0.01 rad/s, linear beyond 3.2 rad/s; each
  direction has its own curve (they differ by up to 11 %), and the friction's sign picks it. Other arms:
  scaled by sqrt(torque limit / the UR5e's), as sim/truth.py scales its friction.
* **Load** — ``(mu_abs |tau_l| + mu_sq tau_l^2 / tau_rated)(1 + beta s)``: AURT's two
  friction-load models (``abs``, ``square``) together, and the power-flow asymmetry of a
  strain-wave gear: ``s = +1`` when the joint drives its links (``tau_l qd > 0``), ``-1``
  when they back-drive it (a lowered load); ``s = sgn(tau_l) z`` with z the friction's sign
  (below), which is that while sliding and continuous at rest. ``tau_l``: the links' rigid-body
  torque. The identifier's load term is ``mu |tau_l|`` alone.
* **Presliding** — two Maxwell-slip elements (the generalised Maxwell-slip idea of
  Al-Bender et al. 2005 with two rate-independent Dahl elements) of distances delta and
  ``5 delta``, weights 0.6 and 0.4; the sign of the friction is their weighted state. The
  identifier's presliding is one Dahl state.

Per truth seed (:func:`measured_friction`) each joint's curve is scaled in level (±20 %)
and stretched in speed (x0.7-1.4, the knee moves), and mu_abs, mu_sq, beta and delta are
drawn. What UR's own model (target_current) knows of it (:meth:`MeasuredJointFriction.
controller_view`): this arm's steady curve, both directions averaged, with no load term —
what a calibration at constant speed and low load measures.

The object has :class:`~robot_dynamics_id.sim.joint_friction.JointFriction`'s interface
(``reset``, ``advance``, ``torque_and_slope``, ``torque_and_slope_lists``), so
:class:`~robot_dynamics_id.sim.plant.SimulatedUR` takes it as ``joint_friction``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..robots.description import get_robot

__all__ = ["CALIBRATION_SPEEDS_RAD_S", "MeasuredJointFriction", "measured_friction"]

#: Joint speeds of the calibration table, rad/s.
CALIBRATION_SPEEDS_RAD_S = (0.01, 0.5, 1.5, 3.2)
#: The UR5e's calibration: motor-side friction torque (Nm) at CALIBRATION_SPEEDS_RAD_S, per joint,
#: positive then negative direction (magnitudes). Source: see the module docstring.
_UR5E_MOTOR_NM = {
    "positive": ((0.055, 0.095, 0.136, 0.174), (0.064, 0.107, 0.160, 0.210), (0.050, 0.089, 0.136, 0.183),
                 (0.014, 0.023, 0.033, 0.043), (0.012, 0.020, 0.029, 0.037), (0.013, 0.022, 0.028, 0.039)),
    "negative": ((0.059, 0.094, 0.139, 0.181), (0.066, 0.106, 0.158, 0.219), (0.050, 0.089, 0.136, 0.180),
                 (0.014, 0.024, 0.034, 0.044), (0.012, 0.021, 0.030, 0.038), (0.012, 0.022, 0.031, 0.040)),
}
_GEAR_RATIO = 101.0
_UR5E_TORQUE_LIMIT_NM = np.array([150.0, 150.0, 150.0, 28.0, 28.0, 28.0])
#: Second presliding element: distance factor and weights of the two elements.
_SECOND_ELEMENT_FACTOR = 5.0
_ELEMENT_WEIGHTS = (0.6, 0.4)


def _pchip_slopes(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Fritsch-Carlson slopes of the monotone cubic through (x, y) (y increasing or flat)."""
    h = np.diff(x)
    d = np.diff(y) / h
    m = np.zeros_like(y)
    for k in range(1, x.size - 1):
        if d[k - 1] * d[k] <= 0:
            m[k] = 0.0
        else:  # weighted harmonic mean (Fritsch & Butland 1984)
            w1, w2 = 2 * h[k] + h[k - 1], h[k] + 2 * h[k - 1]
            m[k] = (w1 + w2) / (w1 / d[k - 1] + w2 / d[k])
    m[0], m[-1] = d[0], d[-1]
    return m


@dataclass(frozen=True)
class _Curve:
    """A steady friction magnitude F(|qd|) >= 0: flat below the first point, a monotone cubic between the
    points, linear beyond the last (its last chord's slope)."""

    speeds: tuple[float, ...]
    values: tuple[float, ...]
    slopes: tuple[float, ...]

    @classmethod
    def through(cls, speeds, values) -> _Curve:
        x, y = np.asarray(speeds, float), np.asarray(values, float)
        if np.any(np.diff(x) <= 0) or np.any(np.diff(y) < 0) or np.any(y < 0):
            raise ValueError("a friction curve needs increasing speeds and non-decreasing, non-negative values")
        return cls(tuple(x.tolist()), tuple(y.tolist()), tuple(_pchip_slopes(x, y).tolist()))

    def value_and_slope(self, speed: float) -> tuple[float, float]:
        x, y, m = self.speeds, self.values, self.slopes
        if speed <= x[0]:
            return y[0], 0.0
        if speed >= x[-1]:
            return y[-1] + m[-1] * (speed - x[-1]), m[-1]
        k = 0
        while speed > x[k + 1]:
            k += 1
        h = x[k + 1] - x[k]
        t = (speed - x[k]) / h
        t2, t3 = t * t, t * t * t
        value = ((2 * t3 - 3 * t2 + 1) * y[k] + (t3 - 2 * t2 + t) * h * m[k]
                 + (-2 * t3 + 3 * t2) * y[k + 1] + (t3 - t2) * h * m[k + 1])
        slope = ((6 * t2 - 6 * t) * y[k] / h + (3 * t2 - 4 * t + 1) * m[k]
                 + (-6 * t2 + 6 * t) * y[k + 1] / h + (3 * t2 - 2 * t) * m[k + 1])
        return value, slope

    def __call__(self, speed) -> np.ndarray:
        return np.array([self.value_and_slope(float(s))[0] for s in np.atleast_1d(np.abs(speed))])


class MeasuredJointFriction:
    """Friction torque (Nm) and slope of every joint for one physics substep, from calibrated curves (module doc).

    ``positive``/``negative``: per joint the steady curve of each direction; ``mu_abs``, ``mu_square``, ``beta``,
    ``rated_torque_nm``: the load term; ``presliding_distance_rad``: the first element's distance (the second's
    is 5x); ``coulomb_velocity_rad_s``: only :meth:`controller_view` uses it (UR's model takes the sign of the
    reference velocity, smoothed).
    """

    def __init__(self, positive: list[_Curve], negative: list[_Curve], *, mu_abs, mu_square, beta, rated_torque_nm,
                 presliding_distance_rad, load: bool = True, presliding: bool = True,
                 coulomb_velocity_rad_s: float = 0.01) -> None:
        n = len(positive)
        self.positive, self.negative = list(positive), list(negative)
        self.mu_abs = np.broadcast_to(np.asarray(mu_abs, float), (n,)).copy()
        self.mu_square = np.broadcast_to(np.asarray(mu_square, float), (n,)).copy()
        self.beta = np.broadcast_to(np.asarray(beta, float), (n,)).copy()
        self.rated_torque_nm = np.broadcast_to(np.asarray(rated_torque_nm, float), (n,)).copy()
        self.delta = np.broadcast_to(np.asarray(presliding_distance_rad, float), (n,)).copy()
        self.coulomb_velocity_rad_s = float(coulomb_velocity_rad_s)
        self.needs_load_torque = bool(load)
        self.any_presliding = bool(presliding)
        #: the two presliding elements' states, each in [-1, 1]
        self.elements = np.zeros((2, n))
        self._distances = np.vstack([self.delta, _SECOND_ELEMENT_FACTOR * self.delta])

    @property
    def n_joints(self) -> int:
        return len(self.positive)

    @property
    def state(self) -> np.ndarray:
        """The friction's sign at each joint: the weighted presliding state."""
        w1, w2 = _ELEMENT_WEIGHTS
        return w1 * self.elements[0] + w2 * self.elements[1]

    def reset(self, qd_rad_s) -> None:
        """Fully slid where the joint moves, relaxed at rest."""
        qd = np.asarray(qd_rad_s, float)
        self.elements[:] = np.where(np.abs(qd) > 0, np.sign(qd), 0.0)

    def advance(self, position_increment_rad) -> None:
        """Both elements over one substep's position increment (exact for that increment)."""
        if not self.any_presliding:
            return
        dq = np.asarray(position_increment_rad, float)
        sign = np.sign(dq)
        self.elements = sign + (self.elements - sign) * np.exp(-np.abs(dq) / self._distances)

    def steady_curve(self, speed_rad_s, joint: int, *, direction: int = 1) -> np.ndarray:
        """The steady friction magnitude (Nm) of ``joint`` at the given speeds, no load."""
        return (self.positive if direction >= 0 else self.negative)[joint](speed_rad_s)

    def torque_and_slope(self, qd, load_torque_nm=None) -> tuple[np.ndarray, np.ndarray]:
        torque, slope = self.torque_and_slope_lists(
            np.asarray(qd, float).tolist(), None if load_torque_nm is None else np.asarray(load_torque_nm).tolist())
        return np.array(torque), np.array(slope)

    def torque_and_slope_lists(self, qd: list[float], load_torque_nm: list[float] | None = None
                               ) -> tuple[list[float], list[float]]:
        if self.needs_load_torque and load_torque_nm is None:
            raise ValueError("this friction is load-dependent: pass the links' rigid-body torque")
        sign_state = self.state.tolist() if self.any_presliding else None
        torque = [0.0] * len(qd)
        slope = [0.0] * len(qd)
        for j, v in enumerate(qd):
            # z: the friction's sign (presliding state, or the smoothed sign of qd); it picks the direction's curve
            # and the power flow, so the torque z F is continuous through rest and reversals (choosing them by the
            # sign of qd made a joint held at rest chatter between the two directions' values)
            z = sign_state[j] if sign_state is not None else math.tanh(v / self.coulomb_velocity_rad_s)
            value, d_value = (self.positive if z >= 0 else self.negative)[j].value_and_slope(abs(v))
            if load_torque_nm is not None and self.needs_load_torque:
                tl = load_torque_nm[j]
                # tl z > 0 while sliding: the joint drives its links (tau_l qd > 0)
                power = math.copysign(z, tl) if tl != 0.0 else 0.0
                value += ((self.mu_abs[j] * abs(tl) + self.mu_square[j] * tl * tl / self.rated_torque_nm[j])
                          * (1.0 + self.beta[j] * power))
            torque[j] = z * value
            # d/dqd of z F(|qd|): z depends on position only, dF(|qd|)/dqd = F'(|qd|) sgn(qd)
            slope[j] = z * d_value * (1.0 if v > 0 else (-1.0 if v < 0 else 0.0))
        return torque, slope

    def controller_view(self) -> MeasuredJointFriction:
        """What UR's own model knows: this arm's steady curves averaged over both directions, no load term, the
        sign of the (reference) velocity smoothed over ``coulomb_velocity_rad_s`` (no presliding)."""
        mean = [_Curve.through(p.speeds, 0.5 * (np.asarray(p.values) + np.asarray(q.values)))
                for p, q in zip(self.positive, self.negative)]
        return MeasuredJointFriction(mean, mean, mu_abs=0.0, mu_square=0.0, beta=0.0,
                                     rated_torque_nm=self.rated_torque_nm, presliding_distance_rad=self.delta,
                                     load=False, presliding=False, coulomb_velocity_rad_s=self.coulomb_velocity_rad_s)

    def summary(self) -> dict:
        """The law's parameters, for a truth file or a report (curves as speed -> Nm tables)."""
        return {
            "law": "measured (sim/measured_friction.py)",
            "speeds_rad_s": [list(c.speeds) for c in self.positive],
            "positive_nm": [list(c.values) for c in self.positive],
            "negative_nm": [list(c.values) for c in self.negative],
            "mu_abs": self.mu_abs.tolist(), "mu_square": self.mu_square.tolist(), "beta": self.beta.tolist(),
            "rated_torque_nm": self.rated_torque_nm.tolist(),
            "presliding_distances_rad": self._distances.T.tolist(), "presliding_weights": list(_ELEMENT_WEIGHTS),
        }


def measured_friction(robot: str = "ur5e", seed: int | None = None) -> MeasuredJointFriction:
    """The calibrated-curve friction of ``robot`` (module doc); ``seed`` None = the UR5e table as measured
    (scaled to the arm), else drawn around it: level ±20 %, speed stretch x0.7-1.4, mu_abs 0.03-0.07,
    mu_square 0-0.04, beta 0.1-0.3, presliding distance 0.5-1.5 mrad."""
    desc = get_robot(str(robot).strip().lower())
    n = desc.n_joints
    if n != 6:
        raise ValueError(f"the calibration table has 6 joints; {desc.name} has {n}")
    scale = np.sqrt(np.asarray(desc.torque_limit_nm, float) / _UR5E_TORQUE_LIMIT_NM)
    rng = None if seed is None else np.random.default_rng([int(seed), 15])

    def draw(lo: float, hi: float, mid: float) -> np.ndarray:
        return np.full(n, mid) if rng is None else rng.uniform(lo, hi, n)

    level = draw(0.8, 1.2, 1.0)
    stretch = draw(0.7, 1.4, 1.0)
    speeds = np.asarray(CALIBRATION_SPEEDS_RAD_S)
    curves = {}
    for direction, table in _UR5E_MOTOR_NM.items():
        # the breakaway point stays at 0.01 rad/s; the others move with the stretch (the knee of the curve)
        curves[direction] = [
            _Curve.through(np.concatenate([speeds[:1], speeds[1:] * stretch[j]]),
                           np.asarray(table[j]) * _GEAR_RATIO * scale[j] * level[j])
            for j in range(n)]
    return MeasuredJointFriction(
        curves["positive"], curves["negative"], mu_abs=draw(0.03, 0.07, 0.05), mu_square=draw(0.0, 0.04, 0.02),
        beta=draw(0.1, 0.3, 0.2), rated_torque_nm=np.asarray(desc.torque_limit_nm, float),
        presliding_distance_rad=draw(5e-4, 1.5e-3, 1e-3))
