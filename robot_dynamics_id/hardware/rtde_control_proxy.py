"""The ur_rtde control interface in a child process, fed through a pipe (see rtde_backend's docstring: why).

Parent side: :class:`ControlProxy` starts ``python -m robot_dynamics_id.hardware.rtde_control_proxy IP RATE
WATCHDOG [PRIORITY]``, writes fire-and-forget command messages to its stdin (never blocking: a stuck child
cannot stall the robot loop) and reads its replies (``READY``, ``ERROR ...``, ``REFUSED ...``, ``ACCEPTED``)
in a thread. Child side: :func:`control_proxy_main` owns one ``RTDEControlInterface`` and executes the
newest real-time command of every batch it reads (a stale command is never replayed).
"""

from __future__ import annotations

import gc
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import time

from .backend import BackendError

__all__ = ["OP_CLOSE", "OP_DIRECT_TORQUE", "OP_KICK", "OP_PROTECTIVE_STOP", "OP_SPEEDJ", "OP_SPEED_STOP",
           "OP_STOP_SCRIPT", "ControlProxy", "control_proxy_main"]

# ---- parent <-> control proxy messages: uint8 op, float64 sent (monotonic s), uint8 n, n x float64 ----
_HEADER = struct.Struct("<BdB")
OP_SPEEDJ = 1          # qd x6, acceleration
OP_SPEED_STOP = 2      # deceleration
OP_DIRECT_TORQUE = 3   # torque x6, viscous scale x6, coulomb scale x6
OP_KICK = 4            # kickWatchdog
OP_STOP_SCRIPT = 5
OP_CLOSE = 6
OP_PROTECTIVE_STOP = 7  # triggerProtectiveStop
_REALTIME_OPS = (OP_SPEEDJ, OP_DIRECT_TORQUE, OP_KICK)
#: a real-time command older than this when the proxy gets to it is dropped, not replayed (s)
_MAX_COMMAND_AGE_S = 0.05


class ControlProxy:
    """``RTDEControlInterface`` in a child process, driven through its stdin; replies on its stdout."""

    def __init__(self, robot_ip: str, rate_hz: float, watchdog_hz: float, realtime_priority: int = 0) -> None:
        cmd = [sys.executable, "-m", "robot_dynamics_id.hardware.rtde_control_proxy", "--control-proxy",
               robot_ip, repr(float(rate_hz)), repr(float(watchdog_hz)), str(int(realtime_priority))]
        # stderr is inherited: ur_rtde's own messages land in the node's log
        self.popen = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        self._stdin_fd = self.popen.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)  # a stuck child must never block the robot loop
        self.ready = threading.Event()
        self.error: str | None = None
        self.refused: str | None = None
        #: (when it was reported, monotonic s; how long) of the child's last gap between writes beyond the watchdog
        self.stalled: tuple[float, float] | None = None
        self._reader = threading.Thread(target=self._read_replies, name="rtde-control-proxy", daemon=True)
        self._reader.start()

    def _read_replies(self) -> None:
        for raw in self.popen.stdout:
            line = raw.decode("utf-8", "replace").strip()
            if line == "READY":
                self.ready.set()
            elif line.startswith("ERROR "):
                self.error = self.error or line[6:]
            elif line.startswith("REFUSED "):
                self.refused = line[8:]
            elif line == "ACCEPTED":
                self.refused = None
            elif line.startswith("STALLED "):  # the child wrote nothing for longer than the watchdog's period
                self.stalled = (time.monotonic(), float(line[8:]))
        if self.error is None:
            self.error = f"the ur_rtde control process ended (exit code {self.popen.poll()})"
        self.ready.set()

    def alive(self) -> bool:
        return self.popen.poll() is None and self.error is None

    def send(self, op: int, values=()) -> None:
        values = [float(v) for v in values]
        message = _HEADER.pack(op, time.monotonic(), len(values)) + struct.pack(f"<{len(values)}d", *values)
        try:
            os.write(self._stdin_fd, message)  # < PIPE_BUF: written whole or not at all
        except BlockingIOError:
            raise BackendError("the ur_rtde control process is not keeping up (command pipe full): "
                               "the controller connection is probably stalled") from None
        except OSError as exc:
            raise BackendError(f"the ur_rtde control process is gone ({exc})") from None

    def close(self, timeout_s: float = 0.8) -> None:
        """Ask the child to stop the arm and disconnect; kill it if it does not exit in time."""
        if self.popen.poll() is None:
            try:
                self.send(OP_CLOSE)
            except BackendError:
                pass
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
            try:
                self.popen.wait(2.0)
            except subprocess.TimeoutExpired:
                pass
        for stream in (self.popen.stdin, self.popen.stdout):
            try:
                stream.close()
            except OSError:
                pass



# ---- the control proxy process -------------------------------------------------------------------------------
def _proxy_messages(fd: int, buffer: bytearray, block: bool) -> list[tuple[int, float, list[float]]] | None:
    """Complete messages available on ``fd`` (waiting for one if ``block``); None at end of input."""
    while True:
        messages = []
        while len(buffer) >= _HEADER.size:
            op, sent, n = _HEADER.unpack_from(buffer)
            size = _HEADER.size + 8 * n
            if len(buffer) < size:
                break
            values = list(struct.unpack_from(f"<{n}d", buffer, _HEADER.size))
            del buffer[:size]
            messages.append((op, sent, values))
        if messages and not block:
            return messages
        ready, _, _ = select.select([fd], [], [], None if (block and not messages) else 0)
        if not ready:
            return messages
        chunk = os.read(fd, 65536)
        if not chunk:
            return messages or None
        buffer += chunk
        block = False


def _coalesce(messages: list[tuple[int, float, list[float]]], now: float) -> list[tuple[int, list[float]]]:
    """Drop real-time commands that a later command supersedes or that are too old to send.

    A kick is dropped when any other command is in the batch: every command writes the script's command
    register, which is what the controller's watchdog watches, and a kick sent right after a command would
    overwrite that register before the control script reads it (the command would be lost)."""
    keep = []
    commands = [m[0] for m in messages if m[0] != OP_KICK]
    for i, (op, sent, values) in enumerate(messages):
        if op in _REALTIME_OPS:
            later = [m[0] for m in messages[i + 1:]]
            superseded = bool(later or commands) if op == OP_KICK else any(
                o in (OP_SPEEDJ, OP_DIRECT_TORQUE, OP_SPEED_STOP) for o in later)
            if superseded or now - sent > _MAX_COMMAND_AGE_S:
                continue
        keep.append((op, values))
    return keep


def control_proxy_main(robot_ip: str, rate_hz: float, watchdog_hz: float, realtime_priority: int = 0) -> int:
    """Child process: own an RTDEControlInterface, execute commands from stdin, report on stdout.

    Ctrl-C and SIGTERM reach the whole process group, this child too: it ignores them, because its parent
    decides when it ends (a stop and a close message, or the end of its stdin when the parent is gone,
    after which it stops the arm itself). Dying on the signal would drop the connection mid-stop."""
    import rtde_control

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    if realtime_priority > 0:
        # this (command) thread, and every thread created later, runs SCHED_FIFO; best effort
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(realtime_priority))
        except (OSError, AttributeError):
            realtime_priority = 0

    out = sys.stdout

    def say(line: str) -> None:
        try:
            out.write(line.replace("\n", " ") + "\n")
            out.flush()
        except OSError:  # the parent stopped listening; it will see this process end
            pass

    try:
        flags = rtde_control.RTDEControlInterface.FLAG_UPLOAD_SCRIPT
        control = rtde_control.RTDEControlInterface(robot_ip, rate_hz, flags, 50002, realtime_priority)
        if watchdog_hz > 0 and not control.setWatchdog(watchdog_hz):
            say("ERROR setWatchdog was refused by the controller")
            return 1
    except Exception as exc:  # noqa: BLE001 - everything the client throws is reported to the parent
        say(f"ERROR {type(exc).__name__}: {exc}")
        return 1
    # Everything allocated so far lives as long as the process: keep it out of the collector, whose full
    # collections otherwise pause this process for milliseconds now and then (a late command).
    gc.collect()
    gc.freeze()
    say("READY")
    fd = sys.stdin.fileno()
    buffer = bytearray()
    refused = False
    calls = {
        OP_SPEEDJ: lambda v: control.speedJ(v[:6], v[6], 0.0),
        OP_SPEED_STOP: lambda v: control.speedStop(v[0]),
        OP_DIRECT_TORQUE: lambda v: control.directTorque(v[:6], v[6:12], v[12:18]),
        OP_KICK: lambda v: control.kickWatchdog(),
        OP_STOP_SCRIPT: lambda v: control.stopScript(),
        OP_PROTECTIVE_STOP: lambda v: control.triggerProtectiveStop(),
    }
    names = {OP_SPEEDJ: "speedJ", OP_SPEED_STOP: "speedStop", OP_DIRECT_TORQUE: "directTorque",
             OP_KICK: "kickWatchdog", OP_STOP_SCRIPT: "stopScript", OP_PROTECTIVE_STOP: "triggerProtectiveStop"}
    last_call_s = None  # a gap between writes beyond the watchdog's period is reported (STALLED seconds)
    while True:
        messages = _proxy_messages(fd, buffer, block=True)
        if messages is None:  # the parent is gone: stop the arm and leave
            try:
                control.speedStop(2.0)
                control.disconnect()
            finally:
                return 0
        for op, values in _coalesce(messages, time.monotonic()):
            if op == OP_CLOSE:
                # The commands before CLOSE (speedStop, stopScript) have been sent. ur_rtde's disconnect()
                # sleeps 0.5 s; leaving at once closes the sockets just as well and keeps shutdown fast.
                out.flush()
                os._exit(0)
            try:
                ok = calls[op](values)
            except Exception as exc:  # noqa: BLE001
                say(f"ERROR {names.get(op, op)} failed: {type(exc).__name__}: {exc}")
                return 1
            now = time.monotonic()
            if last_call_s is not None and watchdog_hz > 0 and now - last_call_s > 1.0 / watchdog_hz:
                say(f"STALLED {now - last_call_s:.4f}")
            last_call_s = now
            if ok is False and not refused:
                refused = True
                say(f"REFUSED {names.get(op, op)}")
            elif ok is not False and refused and op != OP_KICK:
                refused = False
                say("ACCEPTED")


if __name__ == "__main__":
    if len(sys.argv) in (5, 6) and sys.argv[1] == "--control-proxy":
        sys.exit(control_proxy_main(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]),
                                     int(sys.argv[5]) if len(sys.argv) == 6 else 0))
    print("usage: python -m robot_dynamics_id.hardware.rtde_control_proxy --control-proxy IP RATE_HZ WATCHDOG_HZ "
          "[RT_PRIORITY]", file=sys.stderr)
    sys.exit(2)
