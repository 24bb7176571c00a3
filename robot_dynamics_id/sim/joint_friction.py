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
* Presliding joints (``presliding_distance_rad > 0``): the sign functions are the Dahl
  state ``z`` (dynamics/friction.dahl_state), advanced after each substep with the
  joint's position increment by :meth:`JointFriction.advance`. ``z`` depends on
  position, not velocity, so it contributes nothing to the slope; at standstill it
  makes the joint a stiff spring of ``(f_k + f_s + mu |tau_load|) / delta`` Nm/rad
  (the presliding stiffness), which holds torque in the direction of the last motion.
"""

from __future__ import annotations

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
        self.p2_only = friction.is_p2
        self.needs_load_torque = friction.has_load_term
        #: the Dahl state of the presliding joints (sign of the last motion at rest), in [-1, 1]
        self.state = np.zeros(self.f_s.shape[0])

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
        eps = SIGN_SMOOTHING_RAD_S
        r = qd / self.x_s
        denom = 1.0 + r * r
        th = np.tanh(qd / eps)
        tk = np.tanh(qd / self.v_k)
        if self.p2_only:
            torque = self.f_s * (th / denom) + self.f_k * tk + self.k_v * qd + self.offset
            d_static = (1.0 - th * th) / eps / denom - th * 2.0 * r / self.x_s / (denom * denom)
            slope = self.f_s * d_static + self.f_k * (1.0 - tk * tk) / self.v_k + self.k_v
            return torque, slope
        if self.needs_load_torque and load_torque_nm is None:
            raise ValueError("the truth's friction is load-dependent: pass the links' rigid-body torque")
        load = 0.0 if load_torque_nm is None else self.mu * np.abs(load_torque_nm)
        z = self.state
        static_sign = np.where(self.presliding, z, th)
        coulomb_sign = np.where(self.presliding, z, tk)
        d_static_sign = np.where(self.presliding, 0.0, (1.0 - th * th) / eps)
        d_coulomb_sign = np.where(self.presliding, 0.0, (1.0 - tk * tk) / self.v_k)
        aq = np.abs(qd)
        torque = (self.f_s * static_sign / denom + (self.f_k + load) * coulomb_sign + self.k_v * qd
                  + self.k_2 * qd * aq + self.offset)
        slope = (self.f_s * (d_static_sign / denom - static_sign * 2.0 * r / self.x_s / (denom * denom))
                 + (self.f_k + load) * d_coulomb_sign + self.k_v + 2.0 * self.k_2 * aq)
        return torque, slope
