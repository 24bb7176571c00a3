"""Settings of the simulated UR (sim/plant.py): measurement noise and the joint servo's gains."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SensorNoise", "ServoGains"]


@dataclass(frozen=True)
class SensorNoise:
    """Measurement imperfections (standard deviations of white Gaussian noise; assumptions).

    Encoder step: 2π / 2^20 rad (~6 µrad, an absolute encoder of 20 bit at the joint).
    Current noise 0.02 A is of the order seen in UR RTDE logs at standstill.
    """

    position_resolution_rad: float = 2 * np.pi / 2**20
    position_noise_rad: float = 2e-6
    velocity_noise_rad_s: float = 2e-4
    current_noise_a: float = 0.02
    force_noise_n: float = 0.2
    torque_noise_nm: float = 0.005


@dataclass(frozen=True)
class ServoGains:
    """The joint servo's closed-loop dynamics (computed-torque PID on the nominal mass matrix).

    Error dynamics ``ë + k_d ė + k_p e + k_i ∫e = 0`` with ``k_p = ω²``, ``k_d = 2ζω`` and
    ``k_i = integral_fraction · ω³`` (stable while ``k_i < k_d k_p``). The integral removes
    the position lag that friction would otherwise leave behind a moving or stopped joint;
    its state is clamped to ``integral_limit_rad_s`` (anti-windup, e.g. when pressing a surface).
    """

    natural_frequency_rad_s: float = 200.0
    damping_ratio: float = 0.9
    integral_fraction: float = 0.0
    integral_limit_rad_s: float = 2e-3

    def __post_init__(self) -> None:
        if self.natural_frequency_rad_s <= 0 or self.damping_ratio <= 0:
            raise ValueError("servo natural frequency and damping ratio must be > 0")
        if not 0 <= self.integral_fraction < 2 * self.damping_ratio:
            raise ValueError("servo integral_fraction must be in [0, 2·damping_ratio) for stability")

    @property
    def kp(self) -> float:
        return self.natural_frequency_rad_s**2

    @property
    def kd(self) -> float:
        return 2.0 * self.damping_ratio * self.natural_frequency_rad_s

    @property
    def ki(self) -> float:
        return self.integral_fraction * self.natural_frequency_rad_s**3
