"""Joint friction: the static + Stribeck, Coulomb, viscous model of Jamisola et al. (seeds.md P2).

Per joint (P2, eq. (11)), extended by a constant offset and an explicit
smoothing velocity for the Coulomb term::

    tau_f = f_s sgn(qd) / (1 + (qd / x_s)^2) + f_k tanh(qd / v_k) + k_v qd + offset

``v_k = 1 rad/s`` is exactly the paper's ``f_k tanh(qd)``; a UR joint's dead zone
is much sharper, so the plant and the identifier use a smaller ``v_k``. ``sgn``
itself is smoothed over :data:`SIGN_SMOOTHING_RAD_S` so the model stays
Lipschitz for integration and optimisation.

For fixed (x_s, v_k) the model is linear in (f_s, f_k, k_v, offset):
:func:`friction_regressor` gives those columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SIGN_SMOOTHING_RAD_S", "FrictionParameters", "friction_regressor", "friction_torque"]

#: Velocity over which sgn(qd) is smoothed (tanh), rad/s.
SIGN_SMOOTHING_RAD_S = 1e-3

#: Order of the linear friction parameters per joint in regressors and vectors.
LINEAR_FRICTION_NAMES = ("static_nm", "coulomb_nm", "viscous_nm_s_per_rad", "offset_nm")


def _vec(n: int, value: float) -> np.ndarray:
    return np.full(n, float(value))


@dataclass(frozen=True)
class FrictionParameters:
    """Per-joint friction parameters (arrays of length n)."""

    static_nm: np.ndarray
    coulomb_nm: np.ndarray
    viscous_nm_s_per_rad: np.ndarray
    offset_nm: np.ndarray
    stribeck_velocity_rad_s: np.ndarray
    coulomb_velocity_rad_s: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        n = np.asarray(self.static_nm).shape[0]
        if self.coulomb_velocity_rad_s is None:
            object.__setattr__(self, "coulomb_velocity_rad_s", _vec(n, 1.0))
        for name in ("static_nm", "coulomb_nm", "viscous_nm_s_per_rad", "offset_nm",
                     "stribeck_velocity_rad_s", "coulomb_velocity_rad_s"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.shape != (n,):
                raise ValueError(f"friction {name} must have shape ({n},), got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"friction {name} contains NaN or inf")
            object.__setattr__(self, name, value)
        if np.any(self.stribeck_velocity_rad_s <= 0) or np.any(self.coulomb_velocity_rad_s <= 0):
            raise ValueError("friction velocity constants (stribeck, coulomb) must be > 0 rad/s")

    @property
    def n_joints(self) -> int:
        return self.static_nm.shape[0]

    @classmethod
    def zeros(cls, n: int, *, stribeck_velocity_rad_s: float = 0.1, coulomb_velocity_rad_s: float = 1.0):
        """No friction (velocity constants set to harmless defaults)."""
        z = np.zeros(n)
        return cls(z, z, z, z, _vec(n, stribeck_velocity_rad_s), _vec(n, coulomb_velocity_rad_s))

    def linear_vector(self) -> np.ndarray:
        """(f_s, f_k, k_v, offset) per joint, joint-major: shape (4n,)."""
        return np.column_stack([self.static_nm, self.coulomb_nm, self.viscous_nm_s_per_rad, self.offset_nm]).ravel()

    @classmethod
    def from_linear_vector(cls, values: np.ndarray, *, stribeck_velocity_rad_s: np.ndarray,
                           coulomb_velocity_rad_s: np.ndarray) -> "FrictionParameters":
        v = np.asarray(values, float).reshape(-1, 4)
        return cls(v[:, 0], v[:, 1], v[:, 2], v[:, 3], np.asarray(stribeck_velocity_rad_s, float),
                   np.asarray(coulomb_velocity_rad_s, float))

    def to_dict(self) -> dict:
        return {
            "model": "stribeck_coulomb_viscous (Jamisola P2 eq. 11 + offset)",
            "static_nm": self.static_nm.tolist(),
            "coulomb_nm": self.coulomb_nm.tolist(),
            "viscous_nm_s_per_rad": self.viscous_nm_s_per_rad.tolist(),
            "offset_nm": self.offset_nm.tolist(),
            "stribeck_velocity_rad_s": self.stribeck_velocity_rad_s.tolist(),
            "coulomb_velocity_rad_s": self.coulomb_velocity_rad_s.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "FrictionParameters":
        try:
            return cls(
                np.asarray(data["static_nm"], float),
                np.asarray(data["coulomb_nm"], float),
                np.asarray(data["viscous_nm_s_per_rad"], float),
                np.asarray(data.get("offset_nm", np.zeros(len(data["static_nm"]))), float),
                np.asarray(data["stribeck_velocity_rad_s"], float),
                np.asarray(data.get("coulomb_velocity_rad_s", np.ones(len(data["static_nm"]))), float),
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


def friction_torque(params: FrictionParameters, qd_rad_s: np.ndarray) -> np.ndarray:
    """Friction torque (Nm) for joint velocities of shape (n,) or (N, n) (P2, eq. (11))."""
    qd = np.asarray(qd_rad_s, float)
    y = friction_regressor(qd, params.stribeck_velocity_rad_s, params.coulomb_velocity_rad_s)
    theta = np.column_stack([params.static_nm, params.coulomb_nm, params.viscous_nm_s_per_rad, params.offset_nm])
    tau = np.einsum("...jk,jk->...j", y, theta)
    return tau.reshape(qd.shape)
