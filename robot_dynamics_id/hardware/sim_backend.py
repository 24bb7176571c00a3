"""The simulated UR (MuJoCo, in-process) as a robot backend."""

from __future__ import annotations

import numpy as np

from ..robot_state import RobotState
from .backend import BackendError, RobotBackend

__all__ = ["SimBackend"]


class SimBackend(RobotBackend):
    """Drives :class:`robot_dynamics_id.sim.plant.SimulatedUR`; each loop cycle advances it one period.

    Args:
        robot: robot name or URDF path of the simulated arm.
        rate_hz: controller rate (500 e-Series, 125 CB3).
        truth_seed: seed of the plant's perturbed "true" parameters (None: nominal).
        noise_seed: seed of the measurement noise.
        initial_q_rad: start configuration.
        scene: "none" or "polishing" (tool, curved surface, F/T sensor: sim/scene.py).
        base_motion: move the base slowly (polishing scene only).
        external_loads: forces on the links (sim/contacts.py: pushes, obstacles), on the plant's clock.
    """

    supports_torque = True

    def __init__(
        self,
        *,
        robot: str = "ur3",
        rate_hz: float = 500.0,
        truth_seed: int | None = None,
        noise_seed: int = 0,
        initial_q_rad: np.ndarray | None = None,
        scene: str = "none",
        base_motion: bool = False,
        external_loads=(),
    ) -> None:
        self.rate_hz = float(rate_hz)
        self._options = dict(robot=robot, rate_hz=self.rate_hz, truth_seed=truth_seed,
                             noise_seed=noise_seed, initial_q_rad=initial_q_rad, external_loads=tuple(external_loads))
        self._scene = scene
        self._base_motion = base_motion
        self.plant = None
        self._connected = False

    def connect(self) -> None:
        if self.plant is None:
            from ..sim.plant import SimulatedUR  # MuJoCo is imported only when a simulation is used

            scene = None
            if self._scene == "polishing":
                from ..sim.scene import (POLISHING_PAD_CONTACT, CompliantPad, Scene, SinusoidalBaseMotion, Tool,
                                         polishing_scene)

                # The P2 tool: a shaft with a compliant polishing pad (ball tip on a spring-damper).
                shape = polishing_scene(tool=Tool(pad=CompliantPad()),
                                        base_motion=SinusoidalBaseMotion() if self._base_motion else None)
                scene = Scene(tool=shape.tool, surface=shape.surface, contact=POLISHING_PAD_CONTACT,
                              base_motion=shape.base_motion)
            self.plant = SimulatedUR(scene=scene, **self._options)
            self.n_joints = self.plant.n_joints
        self._connected = True

    def disconnect(self) -> None:
        if self.plant is not None and self._connected:
            self.plant.speed_stop()
        self._connected = False

    def is_connected(self) -> bool:
        return self._connected

    def _require(self):
        if not self._connected or self.plant is None:
            raise BackendError("simulated robot is not connected")
        return self.plant

    def read(self) -> RobotState:
        return self._require().state()

    def speed_j(self, qd_rad_s: np.ndarray, acceleration_rad_s2: float) -> None:
        self._require().speed_j(qd_rad_s, acceleration_rad_s2)

    def speed_stop(self, deceleration_rad_s2: float) -> None:
        self._require().speed_stop(deceleration_rad_s2)

    def direct_torque(self, torque_nm: np.ndarray) -> None:
        self._require().direct_torque(torque_nm)

    def protective_stop(self) -> None:
        self._require().protective_stop()

    def unlock_protective_stop(self) -> None:
        self._require().clear_protective_stop()

    def end_cycle(self) -> None:
        self._require().step(1)
