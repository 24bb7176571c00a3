"""``rdi sim-controller``: a local stand-in UR controller for the real ur_rtde client.

Serves RTDE (30004), the dashboard (29999) and the script ports (30001-30003) on
a loopback address, in front of the simulated UR3, until Ctrl-C. Point
ur_interface at it with ``-p backend:=rtde -p robot_ip:=127.0.0.1``. ur_rtde
always uses the standard ports, so run one stand-in per address; more can run
side by side on 127.0.0.2, 127.0.0.3, ...
"""

from __future__ import annotations

from ..sim.stand_in_command import HELP, configure, run

__all__ = ["COMMAND", "HELP", "configure", "run"]

COMMAND = "sim-controller"
