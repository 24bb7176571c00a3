"""RtdeBackend's words for what ur_rtde reports (the connection itself: test/sim/test_ur_controller.py)."""

from types import SimpleNamespace

import numpy as np
import pytest

from robot_dynamics_id.hardware.backend import BackendError
from robot_dynamics_id.hardware.rtde_backend import RtdeBackend


@pytest.mark.parametrize("raw, lost", [
    ("speedJ failed: RuntimeError: Timeout connecting to UR dashboard server", True),
    ("speedJ failed: RuntimeError: write: Broken pipe", True),
    ("the ur_rtde control process ended (exit code -9)", False),  # killed: not the network
    ("directTorque failed: RuntimeError: RTDE control script is not running!", False),
])
def test_a_dead_control_connection_is_said_as_lost_with_ur_rtde_text_kept(raw, lost):
    """ur_rtde's reconnect reads "Timeout connecting to UR dashboard server" when the robot stopped answering on
    any port: the loop's fault names the lost connection and its likely causes, and keeps ur_rtde's text."""
    backend = RtdeBackend(robot_ip="127.0.0.1", rate_hz=500.0)
    backend._proxy = SimpleNamespace(error=raw)  # what the control process reported before it ended
    try:
        with pytest.raises(BackendError) as caught:
            backend.speed_j(np.zeros(6), 10.0)
    finally:
        backend._proxy = None  # nothing for the exit hook to kill
    message = str(caught.value)
    assert raw in message
    assert ("lost the control connection to the robot at 127.0.0.1" in message) == lost, message
    if lost:
        assert "network cable" in message
