"""The ur_rtde control script (``def rtde_control(): ... end``), emulated cycle by cycle.

ur_rtde uploads a URScript program that loops once per controller cycle: it
reads a command id from ``input_int_register_0`` (+ the register offset, 0 or
24), its arguments from ``input_double_register_0..``, acts, and answers through
``output_int_register_0``: 1 = ready for a command, 2 = done. Real-time
commands (speedJ, servoJ, directTorque, ...) are processed every cycle while
their id stays in the register; the others are processed once and then wait
until the client clears the register (NO_CMD = 0). The dispatch below follows
the script embedded in ur_rtde 1.6.5 (``strings`` of the wheel's
rtde_control module: ``elif cmd == N:``); commands the stand-in does not model
are answered like the script would (ready/done) and logged once.

This class does the script's bookkeeping only; it commands a
:class:`~robot_dynamics_id.sim.plant.SimulatedUR` and reads/writes a
:class:`Registers`. The controller calls :meth:`ControlScript.cycle` once per
tick (one ``sync()`` of the real script).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Command", "ControlScript", "Registers", "REALTIME_COMMANDS", "ScriptError", "parse_register_offsets"]

N_REGISTERS = 48


class Command:
    """Command ids of the ur_rtde 1.6.5 control script (``process_cmd``)."""

    NO_CMD = 0
    MOVEJ = 1
    FORCE_MODE = 6
    FORCE_MODE_STOP = 7
    ZERO_FT_SENSOR = 8
    SPEEDJ = 9
    SPEEDL = 10
    SERVOJ = 11
    SPEED_STOP = 15
    SERVO_STOP = 16
    PROTECTIVE_STOP = 31
    STOPL = 33
    STOPJ = 34
    SET_WATCHDOG = 35
    DIRECT_TORQUE = 66
    STOP_SCRIPT = 255


#: ids the script handles every cycle and answers with "ready" (the 1.6.5 script's real-time list)
REALTIME_COMMANDS = frozenset({24, 11, 9, 10, 6, 25, 26, 27, 38, 58, 66, 67, 68, 69, 70, 71})
#: ids the script knows at all (anything else falls through process_cmd and is answered "done")
KNOWN_COMMANDS = frozenset({1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 15, 16, 17, 18, 19, 20, 21, 24, 25, 26, 27, 28,
                            29, 30, 31, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 51, 52, 53,
                            54, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71, 255})

#: output_int_register_0 values the client waits for
SCRIPT_READY = 1
SCRIPT_DONE = 2


class ScriptError(RuntimeError):
    """A URScript runtime error: the real controller stops the program with this message."""


@dataclass
class Registers:
    """The controller's general-purpose RTDE registers (48 int, 48 double each way)."""

    input_int: list[int] = field(default_factory=lambda: [0] * N_REGISTERS)
    input_double: list[float] = field(default_factory=lambda: [0.0] * N_REGISTERS)
    output_int: list[int] = field(default_factory=lambda: [0] * N_REGISTERS)
    output_double: list[float] = field(default_factory=lambda: [0.0] * N_REGISTERS)
    input_bits: int = 0
    output_bits: int = 0


class ControlScript:
    """One run of the uploaded control script.

    Args:
        registers: shared register file (the RTDE server writes the inputs).
        plant: the simulated arm (speed_j, speed_stop, direct_torque, protective_stop).
        int_offset / float_offset: register offset the client put in the script (0 or 24).
        supports_direct_torque: the controller version runs ``direct_torque`` (else the script
            compiles it as a no-op, as ur_rtde's script does below PolyScope 5.26).
        stop_deceleration_rad_s2: deceleration of the stop a program end causes.
        log: called with (level, message) for everything worth a line in the controller log.
        on_stop: called with (cause, deceleration rad/s² or None for the controller's default) whenever the
            script commands the arm to stop.
    """

    def __init__(self, *, registers: Registers, plant, int_offset: int = 0, float_offset: int = 0,
                 supports_direct_torque: bool = False, stop_deceleration_rad_s2: float = 10.0,
                 log: Callable[[str, str], None] | None = None,
                 on_stop: Callable[[str, float | None], None] | None = None) -> None:
        if int_offset not in (0, 24) or float_offset not in (0, 24):
            raise ValueError(f"register offsets must be 0 or 24, got int {int_offset}, float {float_offset}")
        self.registers = registers
        self.plant = plant
        self.int_offset = int_offset
        self.float_offset = float_offset
        self.supports_direct_torque = supports_direct_torque
        self.stop_deceleration_rad_s2 = float(stop_deceleration_rad_s2)
        self._log = log or (lambda level, message: None)
        self._on_stop = on_stop or (lambda cause, deceleration: None)
        self.running = True
        self.executing_cmd = False
        #: (register name, min frequency Hz) once setWatchdog was processed
        self.watchdog: tuple[str, float] | None = None
        self.is_speeding = False
        self.commands_processed = 0
        self._warned: set[int] = set()
        self._async_wr_count = 0
        self._async_op_id = 0
        # Script start: reset_async_progress(), then signal_ready() before the main loop.
        self._write_async_progress(-1)
        self._write_int(0, SCRIPT_READY)

    # ---- register access with the script's offsets -------------------------------------------------
    def _int(self, i: int) -> int:
        return self.registers.input_int[i + self.int_offset]

    def _float(self, i: int) -> float:
        return self.registers.input_double[i + self.float_offset]

    def _floats(self, start: int, n: int = 6) -> np.ndarray:
        o = start + self.float_offset
        return np.array(self.registers.input_double[o:o + n], float)

    def _write_int(self, i: int, value: int) -> None:
        self.registers.output_int[i + self.int_offset] = int(value)

    def _write_async_progress(self, value: int) -> None:
        # write_async_progress_register of the script: bits 16-23 write count, 24-30 operation id,
        # bit 15 running, bits 0-14 progress.
        self._async_wr_count = (self._async_wr_count + 1) % 128
        if value == 0:
            self._async_op_id = (self._async_op_id + 1) % 128
        reg = self._async_wr_count * 65536 + self._async_op_id * 16777216
        if value >= 0:
            reg += min(int(value), 32767) + 32768
        self._write_int(2, reg)

    # ---- one controller cycle ---------------------------------------------------------------------------
    def cycle(self) -> None:
        """One iteration of the script's main loop (``while keep_running: ... sync()``).

        Raises :class:`ScriptError` on a URScript runtime error (the caller stops the program).
        """
        if not self.running:
            return
        cmd = self._int(0)
        if cmd in REALTIME_COMMANDS:
            self.running = self._process(cmd)
            self._write_int(0, SCRIPT_READY)
        elif cmd == Command.NO_CMD:
            self.executing_cmd = False
            self._write_int(0, SCRIPT_READY)
        else:
            if not self.executing_cmd:
                self.running = self._process(cmd)
            self.executing_cmd = True

    def _process(self, cmd: int) -> bool:
        """process_cmd: act on one command; False ends the script (STOP_SCRIPT)."""
        self.commands_processed += 1
        plant = self.plant
        if cmd == Command.SPEEDJ:
            qd = self._floats(0)
            acceleration = self._float(6)
            self._check_finite("speedj", qd, acceleration)
            if not acceleration > 0:
                raise ScriptError(f"speedj: acceleration must be > 0, got {acceleration}")
            plant.speed_j(qd, acceleration)
            self.is_speeding = True
        elif cmd == Command.SPEED_STOP:
            deceleration = self._float(0)
            self._check_finite("stopj", deceleration)
            deceleration = deceleration if deceleration > 0 else self.stop_deceleration_rad_s2
            plant.speed_stop(deceleration)
            self.is_speeding = False
            self._on_stop(f"speedStop ({deceleration:g} rad/s^2)", deceleration)
        elif cmd == Command.DIRECT_TORQUE:
            if self.supports_direct_torque:
                torque = self._floats(0)
                self._check_finite("direct_torque", torque)
                plant.direct_torque(torque)
            else:
                self._warn_once(cmd, "directTorque ignored: this controller version compiles it as a no-op "
                                     "(needs e-Series PolyScope >= 5.23)")
        elif cmd == Command.SET_WATCHDOG:
            frequency = self._float(0)
            self._check_finite("rtde_set_watchdog", frequency)
            if not frequency > 0:
                raise ScriptError(f"rtde_set_watchdog: minimum frequency must be > 0, got {frequency}")
            self.watchdog = (f"input_int_register_{self.int_offset}", float(frequency))
            self._log("info", f"RTDE watchdog set on input_int_register_{self.int_offset}: "
                              f"{frequency:g} Hz, action stop")
        elif cmd == Command.PROTECTIVE_STOP:
            plant.protective_stop()
            self._log("warn", "protective stop triggered by the client (triggerProtectiveStop)")
            self._on_stop("triggerProtectiveStop", None)
        elif cmd in (Command.STOPL, Command.STOPJ, Command.SERVO_STOP, Command.FORCE_MODE_STOP):
            deceleration = self._float(0) if cmd in (Command.STOPL, Command.STOPJ) else self.stop_deceleration_rad_s2
            self._check_finite("stop", deceleration)
            deceleration = deceleration if deceleration > 0 else self.stop_deceleration_rad_s2
            plant.speed_stop(deceleration)
            self.is_speeding = False
            self._on_stop(f"stop command {cmd}", deceleration)
        elif cmd == Command.STOP_SCRIPT:
            self._log("info", "Received stop script!")
            return False
        elif cmd in KNOWN_COMMANDS:
            self._warn_once(cmd, f"command {cmd} is not modelled by the stand-in: answered without effect")
        else:
            # process_cmd has no branch for it: the real script falls through and signals done
            self._warn_once(cmd, f"unknown command id {cmd} in input_int_register_{self.int_offset}: ignored")
        if cmd not in REALTIME_COMMANDS:
            self._write_int(0, SCRIPT_DONE)  # signal_done_with_cmd()
        return True

    def _check_finite(self, what: str, *values) -> None:
        for v in values:
            arr = np.atleast_1d(np.asarray(v, float))
            if not np.all(np.isfinite(arr)):
                raise ScriptError(f"{what}: argument is not a finite number ({arr.tolist()})")

    def _warn_once(self, cmd: int, message: str) -> None:
        if cmd not in self._warned:
            self._warned.add(cmd)
            self._log("warn", message)


def parse_register_offsets(script_text: str) -> tuple[int, int]:
    """(int offset, float offset) the client wrote into the uploaded script (0 or 24 each)."""
    import re

    def find(name: str) -> int:
        # ur_rtde injects the value on the line after a comment: "global reg_offset_int = # int ...\n24"
        m = re.search(rf"global\s+{name}\s*=\s*(?:#[^\n]*\n)?\s*(\d+)", script_text)
        return int(m.group(1)) if m else 0

    return find("reg_offset_int"), find("reg_offset_float")

