"""What a UR controller reports each cycle, as plain arrays (shared by sim, hardware, nodes)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

__all__ = ["RobotMode", "RobotState", "SafetyMode"]


class RobotMode(IntEnum):
    """RTDE ``robot_mode`` values (UR RTDE guide)."""

    NO_CONTROLLER = -1
    DISCONNECTED = 0
    CONFIRM_SAFETY = 1
    BOOTING = 2
    POWER_OFF = 3
    POWER_ON = 4
    IDLE = 5
    BACKDRIVE = 6
    RUNNING = 7


class SafetyMode(IntEnum):
    """RTDE ``safety_mode`` values (UR RTDE guide)."""

    NORMAL = 1
    REDUCED = 2
    PROTECTIVE_STOP = 3
    RECOVERY = 4
    SAFEGUARD_STOP = 5
    SYSTEM_EMERGENCY_STOP = 6
    ROBOT_EMERGENCY_STOP = 7
    VIOLATION = 8
    FAULT = 9


def _zeros6() -> np.ndarray:
    return np.zeros(6)


@dataclass(frozen=True)
class RobotState:
    """One controller cycle of robot data, in the units RTDE uses.

    ``timestamp_s`` is the robot's own clock (RTDE ``timestamp``: seconds since
    controller start), not the host's.
    """

    timestamp_s: float
    q_rad: np.ndarray = field(default_factory=_zeros6)
    qd_rad_s: np.ndarray = field(default_factory=_zeros6)
    #: measured motor currents (RTDE actual_current), A
    current_a: np.ndarray = field(default_factory=_zeros6)
    #: the controller's model-predicted currents (RTDE target_current), A
    target_current_a: np.ndarray = field(default_factory=_zeros6)
    #: the controller's model torque (RTDE target_moment), Nm; excludes friction
    target_moment_nm: np.ndarray = field(default_factory=_zeros6)
    #: TCP wrench [Fx, Fy, Fz, Mx, My, Mz] in N and Nm, in the BASE frame (as RTDE actual_TCP_force)
    tcp_wrench_base: np.ndarray = field(default_factory=_zeros6)
    robot_mode: int = int(RobotMode.RUNNING)
    safety_mode: int = int(SafetyMode.NORMAL)
    #: True while the control script runs (RTDE runtime_state == PLAYING)
    program_running: bool = True
    #: simulation ground truth: the noise-free ``tcp_wrench_base`` (None on a real robot); for scoring only
    tcp_wrench_base_true: np.ndarray | None = None
