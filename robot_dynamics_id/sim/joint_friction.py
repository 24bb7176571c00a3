"""The simulated joints' friction, applied every physics substep: dynamics/friction.py's model, fused.

:class:`JointFriction` evaluates the package's friction model (seeds.md P2 eq. (11)
+ offset, and the terms real UR joints add: load-dependent Coulomb, odd polynomial
viscous law, Dahl presliding; dynamics/friction.py) together with its slope
``d tau_f / d qd``, which the plant integrates implicitly (sim/plant.py).

* P2-only models take exactly the expression of
  :func:`~robot_dynamics_id.dynamics.friction.friction_torque` (equal to ~1e-15 Nm),
  without re-stacking the parameters every substep.
* Load-dependent Coulomb friction ``mu |tau_load| sgn`` needs the torque the joint
  transmits: the caller passes the links' rigid-body torque (no rotor inertia, no
  friction) for the substep.
* A model with an identified speed range (``speed_range_rad_s``, e.g. an identified model
  simulated as the truth): beyond it the fitted terms are held and the curve grows on from
  there, as dynamics/friction.py evaluates it.
* Presliding joints (``presliding_distance_rad > 0``): the sign functions are the Dahl
  state ``z`` (dynamics/friction.dahl_state), advanced after each substep with the
  joint's position increment by :meth:`JointFriction.advance`. ``z`` depends on
  position, not velocity, so it contributes nothing to the slope; at standstill it
  makes the joint a stiff spring of ``(f_k + f_s + mu |tau_load|) / delta`` Nm/rad
  (the presliding stiffness), which holds torque in the direction of the last motion.
"""

from __future__ import annotations

import math

import numpy as np

from ..dynamics.friction import SIGN_SMOOTHING_RAD_S, FrictionParameters

__all__ = ["JointFriction"]


class JointFriction:
    """Friction torque and slope of every joint for one physics substep; the presliding state is explicit."""

    def __init__(self, friction: FrictionParameters) -> None:
        self.f_s = np.asarray(friction.static_nm, float)
        self.f_k = np.asarray(friction.coulomb_nm, float)
        self.k_v = np.asarray(friction.viscous_nm_s_per_rad, float)
        self.offset = np.asarray(friction.offset_nm, float)
        self.x_s = np.asarray(friction.stribeck_velocity_rad_s, float)
        self.v_k = np.asarray(friction.coulomb_velocity_rad_s, float)
        self.mu = np.asarray(friction.load_coefficient, float)
        self.k_2 = np.asarray(friction.viscous_quadratic_nm_s2_per_rad2, float)
        self.delta = np.asarray(friction.presliding_distance_rad, float)
        self.presliding = self.delta > 0
        #: does any joint carry a presliding state (else :meth:`advance` has nothing to do)
        self.any_presliding = bool(np.any(self.presliding))
        self.p2_only = friction.is_p2 and not friction.bounded
        #: per joint (speed range, the growth's slope at it); None: no range
        self._ranges = (list(zip(friction.speed_range_rad_s.tolist(), friction.extension_slope().tolist()))
                        if friction.bounded else None)
        self.needs_load_torque = friction.has_load_term
        #: the Dahl state of the presliding joints (sign of the last motion at rest), in [-1, 1]
        self.state = np.zeros(self.f_s.shape[0])
        # per-joint floats for the substep evaluation (torque_and_slope_lists)
        self._p2_lists = tuple(a.tolist() for a in (self.f_s, self.f_k, self.k_v, self.offset, self.x_s, self.v_k))
        self._mu_list = self.mu.tolist()
        self._k_2_list = self.k_2.tolist()
        self._presliding_list = self.presliding.tolist()

    def reset(self, qd_rad_s: np.ndarray) -> None:
        """Start the presliding state from a velocity: fully slid where the joint moves, relaxed at rest."""
        qd = np.asarray(qd_rad_s, float)
        self.state = np.where(np.abs(qd) > 0, np.sign(qd), 0.0)

    def advance(self, position_increment_rad: np.ndarray) -> None:
        """Advance the presliding state over one substep's position increment (exact for that increment)."""
        if not self.any_presliding:
            return
        dq = np.asarray(position_increment_rad, float)
        sign = np.sign(dq)
        decay = np.exp(-np.abs(dq) / np.where(self.presliding, self.delta, 1.0))
        self.state = np.where(self.presliding, sign + (self.state - sign) * decay, self.state)

    def torque_and_slope(self, qd: np.ndarray, load_torque_nm: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Friction torque (Nm) opposing ``qd`` and its derivative d tau_f / d qd (Nm s/rad)."""
        torque, slope = self.torque_and_slope_lists(np.asarray(qd, float).tolist(),
                                                    None if load_torque_nm is None
                                                    else np.asarray(load_torque_nm, float).tolist())
        return np.array(torque), np.array(slope)

    def torque_and_slope_lists(self, qd: list[float], load_torque_nm: list[float] | None = None
                               ) -> tuple[list[float], list[float]]:
        """:meth:`torque_and_slope` on plain lists, one joint at a time.

        The plant calls this every physics substep: for six joints a loop of float operations
        costs a fraction of the ~30 whole-array numpy calls the vectorised expression needs
        (each call's overhead is larger than its arithmetic at this size). Same expressions,
        term by term, as dynamics/friction.py.
        """
        if self.needs_load_torque and load_torque_nm is None:
            raise ValueError("the truth's friction is load-dependent: pass the links' rigid-body torque")
        eps = SIGN_SMOOTHING_RAD_S
        tanh = math.tanh
        torque = [0.0] * len(qd)
        slope = [0.0] * len(qd)
        for j, (v, f_s, f_k, k_v, offset, x_s, v_k) in enumerate(zip(qd, *self._p2_lists)):
            w, beyond = v, 0.0  # w: the fitted terms' velocity (at most the identified range)
            if self._ranges is not None and abs(v) > self._ranges[j][0]:
                w = math.copysign(self._ranges[j][0], v)
                beyond = v - w
            r = w / x_s
            denom = 1.0 + r * r
            th = tanh(v / eps)
            tk = tanh(v / v_k)
            if self.p2_only:
                torque[j] = f_s * (th / denom) + f_k * tk + k_v * v + offset
                d_static = (1.0 - th * th) / eps / denom - th * 2.0 * r / x_s / (denom * denom)
                slope[j] = f_s * d_static + f_k * (1.0 - tk * tk) / v_k + k_v
                continue
            if load_torque_nm is not None:
                f_k = f_k + self._mu_list[j] * abs(load_torque_nm[j])
            if self._presliding_list[j]:
                static_sign = coulomb_sign = float(self.state[j])
                d_static_sign = d_coulomb_sign = 0.0
            else:
                static_sign, coulomb_sign = th, tk
                d_static_sign, d_coulomb_sign = (1.0 - th * th) / eps, (1.0 - tk * tk) / v_k
            k_2 = self._k_2_list[j]
            aw = abs(w)
            torque[j] = f_s * static_sign / denom + f_k * coulomb_sign + k_v * w + k_2 * w * aw + offset
            if beyond == 0.0:
                d_static = d_static_sign / denom - static_sign * 2.0 * r / x_s / (denom * denom)
                slope[j] = f_s * d_static + f_k * d_coulomb_sign + k_v + 2.0 * k_2 * aw
                continue
            # beyond the range: the terms held at it (only the signs vary) and the concave growth
            # 2 s V (sqrt(1 + |b| / V) - 1), slope s / sqrt(1 + |b| / V) (dynamics/friction.py)
            v_range, s_range = self._ranges[j]
            root = math.sqrt(1.0 + abs(beyond) / v_range)
            torque[j] += math.copysign(2.0 * s_range * v_range * (root - 1.0), beyond)
            slope[j] = f_s * d_static_sign / denom + f_k * d_coulomb_sign + s_range / root
        return torque, slope
