"""Periodic excitation by a finite Fourier series per joint, starting and ending at rest.

Swevers, Ganseman, Tükel, De Schutter & Van Brussel, "Optimal robot excitation
and identification", IEEE T-RA 13(5), 1997, eq. (12): with fundamental
ω_f = 2π / period and K harmonics, joint j moves as

    q_j(t)   = q_j0 + Σ_l [ a_jl / (ω_f l) sin(ω_f l t) − b_jl / (ω_f l) cos(ω_f l t) ]
    qd_j(t)  = Σ_l [ a_jl cos(ω_f l t) + b_jl sin(ω_f l t) ]
    qdd_j(t) = Σ_l ω_f l [ −a_jl sin(ω_f l t) + b_jl cos(ω_f l t) ]

so the velocity command the robot receives is a plain sum of harmonics. Being
periodic, the trajectory is at the same state at every multiple of the period.
Rest at t = 0 (hence at the end of every whole period) is imposed by
construction (this package's choice, instead of a smooth window):

    qd_j(0) = Σ_l a_jl = 0          qdd_j(0) = ω_f Σ_l l b_jl = 0

:func:`rest_constrained_coefficients` fills the first harmonic from the others,
so an optimiser works on free coefficients and every candidate starts and ends
at rest with zero acceleration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .trajectory import JointTrajectory

__all__ = ["FourierTrajectory", "fourier_basis", "rest_constrained_coefficients"]


def rest_constrained_coefficients(a_free: np.ndarray, b_free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Full (n, K) coefficients from harmonics 2..K (n, K−1), choosing harmonic 1 for rest at t = 0.

    a_j1 = −Σ_{l≥2} a_jl makes qd_j(0) = 0; b_j1 = −Σ_{l≥2} l b_jl makes qdd_j(0) = 0.
    """
    a_free = np.atleast_2d(np.asarray(a_free, float))
    b_free = np.atleast_2d(np.asarray(b_free, float))
    if a_free.shape != b_free.shape:
        raise ValueError(f"a_free {a_free.shape} and b_free {b_free.shape} differ")
    harmonics = np.arange(2, a_free.shape[1] + 2)
    a1 = -a_free.sum(axis=1, keepdims=True)
    b1 = -(b_free * harmonics).sum(axis=1, keepdims=True)
    return np.hstack([a1, a_free]), np.hstack([b1, b_free])


def fourier_basis(t_s: np.ndarray, period_s: float, n_harmonics: int) -> dict[str, np.ndarray]:
    """sin/cos of each harmonic at times ``t_s``: arrays (M, K) and ω_f l (K,)."""
    t = np.asarray(t_s, float).ravel()
    w = 2 * np.pi / period_s * np.arange(1, n_harmonics + 1)
    arg = np.outer(t, w)
    return {"sin": np.sin(arg), "cos": np.cos(arg), "omega": w}


@dataclass(frozen=True, kw_only=True)
class FourierTrajectory:
    """Fourier-series excitation (see the module docstring).

    ``a_rad_s`` and ``b_rad_s`` are (n, K) velocity amplitudes of the cos and
    sin terms; ``offset_rad`` (n,) is q_j0; the trajectory repeats ``n_periods``
    times. Use :meth:`from_free_coefficients` to obtain one that starts at rest.
    """

    period_s: float
    offset_rad: np.ndarray
    a_rad_s: np.ndarray
    b_rad_s: np.ndarray
    n_periods: int = 1

    def __post_init__(self) -> None:
        a = np.atleast_2d(np.asarray(self.a_rad_s, float))
        b = np.atleast_2d(np.asarray(self.b_rad_s, float))
        offset = np.asarray(self.offset_rad, float).ravel()
        if a.shape != b.shape or a.shape[0] != offset.size:
            raise ValueError(f"a {a.shape}, b {b.shape} must both be (n_joints, n_harmonics) with n_joints = "
                             f"{offset.size} (offset_rad)")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(np.isfinite(offset))):
            raise ValueError("Fourier coefficients and offsets must be finite")
        if not self.period_s > 0:
            raise ValueError(f"period_s must be > 0, got {self.period_s}")
        if int(self.n_periods) < 1:
            raise ValueError(f"n_periods must be >= 1, got {self.n_periods}")
        object.__setattr__(self, "a_rad_s", a)
        object.__setattr__(self, "b_rad_s", b)
        object.__setattr__(self, "offset_rad", offset)
        object.__setattr__(self, "n_periods", int(self.n_periods))

    @classmethod
    def from_free_coefficients(cls, *, period_s: float, offset_rad, a_free_rad_s, b_free_rad_s,
                               n_periods: int = 1) -> FourierTrajectory:
        """A trajectory at rest (zero velocity and acceleration) at t = 0 and every period end."""
        a, b = rest_constrained_coefficients(a_free_rad_s, b_free_rad_s)
        return cls(period_s=period_s, offset_rad=offset_rad, a_rad_s=a, b_rad_s=b, n_periods=n_periods)

    @property
    def n_joints(self) -> int:
        return self.offset_rad.size

    @property
    def n_harmonics(self) -> int:
        return self.a_rad_s.shape[1]

    @property
    def duration_s(self) -> float:
        return self.period_s * self.n_periods

    @property
    def fundamental_rad_s(self) -> float:
        return 2 * np.pi / self.period_s

    @property
    def start_position_rad(self) -> np.ndarray:
        """q(0) = q0 − Σ_l b_l / (ω_f l)."""
        w = self.fundamental_rad_s * np.arange(1, self.n_harmonics + 1)
        return self.offset_rad - (self.b_rad_s / w).sum(axis=1)

    def evaluate(self, t_s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, qdd), each (M, n), at times ``t_s`` (Swevers et al. 1997, eq. (12))."""
        basis = fourier_basis(np.atleast_1d(t_s), self.period_s, self.n_harmonics)
        s, c, w = basis["sin"], basis["cos"], basis["omega"]
        a, b = self.a_rad_s, self.b_rad_s
        q = self.offset_rad + s @ (a / w).T - c @ (b / w).T
        qd = c @ a.T + s @ b.T
        qdd = -s @ (a * w).T + c @ (b * w).T
        return q, qd, qdd

    def scaled(self, factor: float) -> FourierTrajectory:
        """The same shape with every harmonic × ``factor`` (motion shrunk about the offsets; still at rest)."""
        return FourierTrajectory(period_s=self.period_s, offset_rad=self.offset_rad, a_rad_s=self.a_rad_s * factor,
                                 b_rad_s=self.b_rad_s * factor, n_periods=self.n_periods)

    def to_trajectory(self, *, rate_hz: float = 125.0, joint_names: Sequence[str] | None = None,
                      robot: str | None = None, metadata: dict[str, Any] | None = None) -> JointTrajectory:
        """Samples at ``rate_hz`` over all periods, with exact evaluation in between."""
        if not rate_hz > 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        n_samples = int(round(self.duration_s * rate_hz)) + 1
        t = np.linspace(0.0, self.duration_s, n_samples)
        q, qd, qdd = self.evaluate(t)
        return JointTrajectory(time_s=t, position_rad=q, velocity_rad_s=qd, acceleration_rad_s2=qdd,
                               joint_names=joint_names, kind="fourier", parameters=self.to_dict(), robot=robot,
                               metadata=metadata, evaluator=self.evaluate)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": "q_j(t) = offset_j + sum_l a_jl/(w l) sin(w l t) - b_jl/(w l) cos(w l t), w = 2 pi/period "
                     "(Swevers et al. 1997 eq. 12)",
            "period_s": float(self.period_s),
            "n_periods": int(self.n_periods),
            "offset_rad": self.offset_rad.tolist(),
            "a_rad_s": self.a_rad_s.tolist(),
            "b_rad_s": self.b_rad_s.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FourierTrajectory:
        try:
            return cls(period_s=float(data["period_s"]), offset_rad=data["offset_rad"], a_rad_s=data["a_rad_s"],
                       b_rad_s=data["b_rad_s"], n_periods=int(data.get("n_periods", 1)))
        except KeyError as exc:
            raise ValueError(f"Fourier parameters are missing the key {exc.args[0]!r} "
                             "(need period_s, offset_rad, a_rad_s, b_rad_s)") from exc
