"""One interface for every robot the package drives: the simulated UR and a real UR over ur_rtde.

A backend does no safety checking and no pacing of its own beyond what the
robot imposes: the :class:`~robot_dynamics_id.hardware.robot_loop.RobotLoop`
guards every command and runs the cycle.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..robot_state import RobotState

__all__ = ["BackendConfigurationError", "BackendError", "RobotBackend"]


class BackendError(RuntimeError):
    """The robot cannot be reached or refused a command; the message says what to check."""


class BackendConfigurationError(BackendError):
    """The robot answers but refuses this configuration (e.g. 500 Hz on a CB3): retrying cannot help."""


class RobotBackend(ABC):
    """A robot that accepts speedJ / directTorque commands and reports a :class:`RobotState`.

    The robot loop calls, once per cycle: :meth:`read`, then one of
    :meth:`speed_j` / :meth:`speed_stop` / :meth:`direct_torque`, then :meth:`end_cycle`.
    """

    #: controller rate (Hz) this backend runs at
    rate_hz: float
    #: True when the robot accepts joint torque commands (e-Series direct_torque, the simulator)
    supports_torque: bool
    n_joints: int = 6
    #: True when the robot runs on its own clock (a real controller): cycles the loop could not run in time
    #: are skipped, not made up later, since there is no sample to process for them. False for the simulator,
    #: whose time advances one step per loop cycle and must keep up with the wall clock.
    robot_keeps_time: bool = False

    @abstractmethod
    def connect(self) -> None:
        """Connect (or reconnect); raises :class:`BackendError` when the robot is unreachable."""

    @abstractmethod
    def disconnect(self) -> None:
        """Stop the arm if possible and release the connection; never raises."""

    @abstractmethod
    def is_connected(self) -> bool:
        """True while commands can reach the robot."""

    @abstractmethod
    def read(self) -> RobotState:
        """The newest robot state."""

    @abstractmethod
    def speed_j(self, qd_rad_s: np.ndarray, acceleration_rad_s2: float) -> None:
        """Joint velocity command with speedJ semantics (held until changed)."""

    @abstractmethod
    def speed_stop(self, deceleration_rad_s2: float) -> None:
        """Decelerate every joint to rest."""

    def direct_torque(self, torque_nm: np.ndarray) -> None:
        """Joint torque command (the UR controller adds its own gravity compensation)."""
        raise BackendError(f"{type(self).__name__} does not accept torque commands")

    def protective_stop(self) -> None:
        """Make the robot's own protective stop (UR: triggerProtectiveStop): the arm stops and refuses motion
        until it is unlocked (:meth:`unlock_protective_stop`, or the teach pendant)."""
        raise BackendError(f"{type(self).__name__} has no protective stop")

    def unlock_protective_stop(self) -> None:
        """Clear a protective stop (UR dashboard: 'unlock protective stop'); raises BackendError when refused."""
        raise BackendError(f"{type(self).__name__} has no protective stop to unlock")

    def end_cycle(self) -> None:
        """Called at the end of each loop cycle (the simulator advances its physics here)."""

