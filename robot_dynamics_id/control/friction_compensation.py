"""The friction torque the force/motion controller feeds forward (P2, eqs. (11)-(12)).

The identified model's terms (dynamics/friction.py): P2 eq. (11) + offset, the quadratic
viscous term, and load-dependent Coulomb friction mu |tau_load| sgn with tau_load the
commanded rigid-body torque (or, for the force estimate, the drive torque). Computed as
:func:`robot_dynamics_id.dynamics.friction.friction_torque` computes it in steady sliding,
inlined (it runs every cycle), with the sign switching smoothed over at least the
configured velocity (ControllerConfig.friction_compensation_velocity_rad_s: compensating
a friction whose sign flips faster than the loop can resolve risks a limit cycle in contact).
A presliding state is not fed forward: at standstill the friction holds whatever torque the
joint is given, so a fed-forward held torque would only push a resting joint. Beyond the speeds
the model was identified over, the fitted terms are held and the curve grows on from there,
concave (the model's ``speed_range_rad_s``, dynamics/friction.py).
"""

from __future__ import annotations

import numpy as np

from ..dynamics.friction import SIGN_SMOOTHING_RAD_S, FrictionParameters, extension_growth

__all__ = ["FrictionCompensation"]


class FrictionCompensation:
    """The identified friction torque, scaled by ``scale``, its signs smoothed over ``smoothing_velocity_rad_s``."""

    def __init__(self, friction: FrictionParameters, *, scale: float = 1.0,
                 smoothing_velocity_rad_s: float = SIGN_SMOOTHING_RAD_S) -> None:
        fr = friction
        self._static = fr.static_nm * scale
        self._coulomb = fr.coulomb_nm * scale
        self._viscous = fr.viscous_nm_s_per_rad * scale
        self._offset = fr.offset_nm * scale
        self._quadratic = fr.viscous_quadratic_nm_s2_per_rad2 * scale
        self._load = fr.load_coefficient * scale
        #: the model has a quadratic viscous or a load-dependent term (the caller then passes the load torque)
        self.extended = bool(np.any(self._quadratic) or np.any(self._load))
        self._inv_xs = 1.0 / fr.stribeck_velocity_rad_s
        smoothing = max(smoothing_velocity_rad_s, SIGN_SMOOTHING_RAD_S)
        self._inv_sign = 1.0 / smoothing
        self._inv_vk = 1.0 / np.maximum(fr.coulomb_velocity_rad_s, smoothing)
        self._same_smoothing = bool(np.all(self._inv_vk == self._inv_sign))
        #: the identified speed range and the growth's slope beyond it (None: the law everywhere)
        self._range = (fr.speed_range_rad_s, fr.extension_slope() * scale) if fr.bounded else None

    def torque(self, qd: np.ndarray, load_torque_nm: np.ndarray | None = None) -> np.ndarray:
        """Friction torque (Nm) at joint velocities ``qd``; ``load_torque_nm`` feeds the load-dependent term."""
        beyond, v = None, qd  # v: the fitted terms' velocity (within the identified range)
        if self._range is not None:
            v = np.clip(qd, -self._range[0], self._range[0])
            beyond = qd - v
        r = v * self._inv_xs
        r *= r
        r += 1.0
        if self._same_smoothing:
            # the static and Coulomb sign functions coincide (both smoothed over the same speed)
            tau = self._static / r
            tau += self._coulomb
            tau *= np.tanh(qd * self._inv_sign)
        else:
            tau = self._static * np.tanh(qd * self._inv_sign) / r
            tau += self._coulomb * np.tanh(qd * self._inv_vk)
        tau += self._viscous * v
        tau += self._offset
        if self.extended:
            tau += self._quadratic * v * np.abs(v)
            if load_torque_nm is not None:
                tau += self._load * np.abs(load_torque_nm) * np.tanh(qd * self._inv_vk)
        if beyond is not None:
            tau += extension_growth(self._range[0], self._range[1], beyond)
        return tau
