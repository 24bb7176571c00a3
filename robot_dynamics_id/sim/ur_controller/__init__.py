"""A local stand-in for a UR controller, for the real ur_rtde client (tests, demos, soak runs).

* :class:`StandInController` — RTDE (30004), dashboard (29999) and script ports
  (30001-30003) in front of :class:`~robot_dynamics_id.sim.plant.SimulatedUR`,
  with fault injection (drop, stall, protective stop, program stop, outage)
  and the RTDE watchdog of the ur_rtde control script.
* :class:`StandInProcess` — the same in a child process, driven over the
  fault-control port (a ur_rtde client must not share the stand-in's process:
  its binding holds the GIL while it blocks).
* ``rdi sim-controller`` — the command line.

Facts it reproduces: shared/reference/rtde.md; the control script's dispatch is
taken from the ur_rtde 1.6.5 wheel (see :mod:`.control_script`).
"""

from .controller import ControllerEvent, RuntimeState, StandInController
from .personality import PERSONALITIES, Personality, get_personality
from .process import StandInProcess

__all__ = ["PERSONALITIES", "ControllerEvent", "Personality", "RuntimeState", "StandInController",
           "StandInProcess", "get_personality"]
