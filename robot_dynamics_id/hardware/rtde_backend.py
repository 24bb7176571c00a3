"""A real UR controller (or the local stand-in, ``rdi sim-controller``) through the ur_rtde client.

Uses ``rtde_control.RTDEControlInterface`` for speedJ / speedStop / directTorque
and the controller-side watchdog, and ``rtde_receive.RTDEReceiveInterface`` for
the state. Every ur_rtde failure is turned into :class:`BackendError` whose
message says what to check on the robot.
"""

from __future__ import annotations

import numpy as np

from ..robot_state import RobotState
from .backend import BackendError, RobotBackend

__all__ = ["RtdeBackend"]

# RTDE fields the receive interface subscribes to (names from the UR RTDE guide).
_RECEIVE_VARIABLES = [
    "timestamp", "actual_q", "actual_qd", "actual_current", "target_current", "target_moment",
    "actual_TCP_force", "robot_mode", "safety_mode", "runtime_state",
]


class RtdeBackend(RobotBackend):
    """UR controller over RTDE.

    Args:
        robot_ip: controller address (a lab robot, or 127.0.0.1 for the stand-in).
        rate_hz: RTDE rate; 125 for CB3, 500 for e-Series.
        supports_torque: send direct_torque (e-Series, PolyScope >= 5.23) when asked.
        controller_watchdog_hz: ur_rtde ``setWatchdog`` minimum command frequency; the
            controller stops the arm if the client goes silent longer than 1/f.
        connect_timeout_s: not enforced by ur_rtde itself; documented for users.
    """

    def __init__(
        self,
        *,
        robot_ip: str,
        rate_hz: float = 500.0,
        supports_torque: bool = False,
        controller_watchdog_hz: float = 10.0,
        viscous_scale: tuple[float, ...] = (0.9, 0.9, 0.8, 0.9, 0.9, 0.9),
        coulomb_scale: tuple[float, ...] = (0.8, 0.8, 0.7, 0.8, 0.8, 0.8),
    ) -> None:
        self.robot_ip = robot_ip
        self.rate_hz = float(rate_hz)
        self.supports_torque = bool(supports_torque)
        self.controller_watchdog_hz = float(controller_watchdog_hz)
        self._viscous_scale = list(viscous_scale)
        self._coulomb_scale = list(coulomb_scale)
        self._control = None
        self._receive = None

    # ---- connection -------------------------------------------------------------------
    def connect(self) -> None:
        import rtde_control
        import rtde_receive

        try:
            if self._receive is None:
                self._receive = rtde_receive.RTDEReceiveInterface(self.robot_ip, self.rate_hz, _RECEIVE_VARIABLES)
            elif not self._receive.isConnected():
                self._receive.reconnect()
            if self._control is None:
                self._control = rtde_control.RTDEControlInterface(self.robot_ip, self.rate_hz)
            elif not self._control.isConnected():
                self._control.reconnect()
            if self.controller_watchdog_hz > 0:
                self._control.setWatchdog(self.controller_watchdog_hz)
        except RuntimeError as exc:
            raise BackendError(
                f"cannot connect to the UR controller at {self.robot_ip}: {exc}. Check that the robot is "
                "powered on, in remote control (e-Series), reachable on the network, and that no other "
                "program holds the RTDE input registers (IN_USE)"
            ) from exc
        if not self.is_connected():
            raise BackendError(f"UR controller at {self.robot_ip} accepted the connection but is not ready")

    def disconnect(self) -> None:
        try:
            if self._control is not None and self._control.isConnected():
                self._control.speedStop(2.0)
                self._control.stopScript()
                self._control.disconnect()
        except RuntimeError:
            pass
        try:
            if self._receive is not None:
                self._receive.disconnect()
        except RuntimeError:
            pass

    def is_connected(self) -> bool:
        try:
            return bool(
                self._control is not None and self._receive is not None
                and self._control.isConnected() and self._receive.isConnected()
                and self._control.isProgramRunning()
            )
        except RuntimeError:
            return False

    # ---- cycle --------------------------------------------------------------------------
    def read(self) -> RobotState:
        r = self._receive
        if r is None:
            raise BackendError("RTDE receive interface is not connected")
        try:
            return RobotState(
                timestamp_s=float(r.getTimestamp()),
                q_rad=np.array(r.getActualQ()),
                qd_rad_s=np.array(r.getActualQd()),
                current_a=np.array(r.getActualCurrent()),
                target_current_a=np.array(r.getTargetCurrent()),
                target_moment_nm=np.array(r.getTargetMoment()),
                tcp_wrench_base=np.array(r.getActualTCPForce()),
                robot_mode=int(r.getRobotMode()),
                safety_mode=int(r.getSafetyMode()),
                program_running=bool(self._control is not None and self._control.isProgramRunning()),
            )
        except RuntimeError as exc:
            raise BackendError(f"lost the RTDE data stream from {self.robot_ip}: {exc}") from exc

    def _call(self, what: str, fn, *args) -> None:
        if self._control is None:
            raise BackendError("RTDE control interface is not connected")
        try:
            ok = fn(*args)
        except RuntimeError as exc:
            raise BackendError(f"{what} failed: {exc}") from exc
        if ok is False:
            raise BackendError(
                f"{what} was refused by the controller (protective stop, program not running, "
                "or the robot is not in remote control)"
            )

    def speed_j(self, qd_rad_s: np.ndarray, acceleration_rad_s2: float) -> None:
        # ur_rtde's default acceleration (0.5 rad/s²) is far too low for a velocity loop: always pass it.
        self._call("speedJ", self._control.speedJ, [float(v) for v in qd_rad_s], float(acceleration_rad_s2), 0.0)

    def speed_stop(self, deceleration_rad_s2: float) -> None:
        self._call("speedStop", self._control.speedStop, float(deceleration_rad_s2))

    def direct_torque(self, torque_nm: np.ndarray) -> None:
        if not self.supports_torque:
            raise BackendError(
                "this robot is configured without torque control (CB3, or PolyScope < 5.23): "
                "use velocity commands, or set supports_torque: true for an e-Series robot"
            )
        self._call("directTorque", self._control.directTorque, [float(v) for v in torque_nm],
                   self._viscous_scale, self._coulomb_scale)

    def end_cycle(self) -> None:
        if self._control is not None and self.controller_watchdog_hz > 0:
            try:
                self._control.kickWatchdog()
            except RuntimeError as exc:
                raise BackendError(f"kickWatchdog failed: {exc}") from exc
