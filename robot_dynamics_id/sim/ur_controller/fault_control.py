"""Fault-control port: drive a stand-in running in another process from a test.

Not part of a UR controller. One command per line, one reply line each:
``ok [detail]``, a JSON document, or ``error <message>``.

===============================  ===================================================
``ping``                         ``ok pong``
``drop rtde|dashboard|script|all``  close those client connections abruptly
``stall <seconds>``              no RTDE data packages for that long (0: resume)
``protective_stop``              raise a protective stop
``stop_program``                 stop the running program (the control script)
``unreachable <seconds>``        drop everything and refuse connections for that long
``unlock``                       ``unlock protective stop`` (as on the dashboard)
``state``                        JSON: true arm state and controller bookkeeping
``events [index]``               JSON: {"index": n, "events": [[time, level, msg], ...]}
``stops``                        JSON: [[wall time, cause], ...] stops the controller commanded
``motion``                       JSON: [[wall time, "moving"|"rest"], ...]
``stop_records``                 JSON: [[cycle, wall time, cause, deceleration, speed], ...] every stop
``trace [cycle]``                JSON: [[cycle, wall time, max |ref qd|, max |true qd|], ...] per
                                 controller cycle from ``cycle`` on (the last 2000 cycles are kept)
``quit``                         close this connection
===============================  ===================================================
"""

from __future__ import annotations

import json
import math
import socket

from .servers import LineReader

__all__ = ["handle_command", "serve"]


def serve(controller, sock: socket.socket, peer) -> None:
    reader = LineReader(sock, max_line_bytes=1024)
    while True:
        try:
            line = reader.read_line()
        except ValueError as exc:
            controller.reject(f"fault-control: {exc}")
            return
        if line is None:
            return
        if line.strip() == "quit":
            return
        reply = handle_command(controller, line)
        try:
            sock.sendall((reply + "\n").encode())
        except OSError:
            return


def _seconds(arg: str) -> float:
    value = float(arg)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"seconds must be a finite number >= 0, got {arg!r}")
    return value


def handle_command(controller, line: str) -> str:
    """The reply line for one fault-control command."""
    parts = line.split()
    if not parts:
        return "error empty command"
    cmd, args = parts[0].lower(), parts[1:]
    try:
        if cmd == "ping":
            return "ok pong"
        if cmd == "drop":
            return f"ok {controller.drop_connections(args[0] if args else 'rtde')}"
        if cmd == "stall":
            seconds = _seconds(args[0]) if args else 1.0
            if seconds == 0:
                controller.resume_stream()
            else:
                controller.stall_stream(seconds)
            return "ok"
        if cmd == "protective_stop":
            controller.trigger_protective_stop("fault-control")
            return "ok"
        if cmd == "stop_program":
            controller.stop_program("fault-control")
            return "ok"
        if cmd == "unreachable":
            controller.set_unreachable(_seconds(args[0]) if args else 1.0)
            return "ok"
        if cmd == "unlock":
            return "ok " + controller.unlock_protective_stop()
        if cmd == "state":
            return json.dumps(controller.true_state())
        if cmd == "events":
            index, events = controller.events_since(int(args[0]) if args else 0)
            return json.dumps({"index": index, "events": [[e.time_s, e.level, e.message] for e in events]})
        if cmd == "stops":
            return json.dumps(controller.stop_log)
        if cmd == "motion":
            return json.dumps(controller.motion_log)
        if cmd == "stop_records":
            return json.dumps(controller.stop_records)
        if cmd == "trace":
            return json.dumps(controller.velocity_trace(int(args[0]) if args else 0))
    except (ValueError, IndexError) as exc:
        controller.reject(f"fault-control {line[:100]!r}: {exc}")
        return f"error {exc}"
    controller.reject(f"fault-control: unknown command {line[:100]!r}")
    return f"error unknown command {cmd!r}: see robot_dynamics_id.sim.ur_controller.fault_control"
