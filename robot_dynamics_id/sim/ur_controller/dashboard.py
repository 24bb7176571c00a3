"""The dashboard server (port 29999): one text command per line, one reply line each.

Replies follow PolyScope's wording for the commands ur_rtde and operators use
(the client parses some of them: ``PolyscopeVersion`` must contain a d.d.d.d
version, ``get serial number`` a number, ``is in remote control`` true/false).
Anything else gets PolyScope's ``could not understand: '<line>'`` and is logged
as a rejection. Commands PolyScope 3.x lacks (remote control, serial number)
are answered that way on the CB3 personality.
"""

from __future__ import annotations

import socket

from .servers import LineReader

__all__ = ["handle_command", "serve", "WELCOME"]

WELCOME = "Connected: Universal Robots Dashboard Server"


def serve(controller, sock: socket.socket, peer) -> None:
    """Serve one dashboard client until it disconnects or sends ``quit``."""
    sock.sendall((WELCOME + "\n").encode())
    reader = LineReader(sock, max_line_bytes=4096)
    while True:
        try:
            line = reader.read_line()
        except ValueError as exc:
            controller.reject(f"dashboard {peer[0]}:{peer[1]}: {exc}; connection closed")
            return
        if line is None:
            return
        reply, close = handle_command(controller, line)
        if controller.trace_inputs:
            controller.log("info", f"dashboard {peer[0]}:{peer[1]}: {line[:200]!r} -> {reply[:200]!r}")
        try:
            sock.sendall((reply + "\n").encode("utf-8", "replace"))
        except OSError:
            return
        if close:
            return


def handle_command(controller, line: str) -> tuple[str, bool]:
    """(reply, close connection) for one dashboard line."""
    p = controller.personality
    command = line.strip()
    key = " ".join(command.lower().split())
    e_series = p.has_remote_control

    if key == "polyscopeversion":
        return p.polyscope_version, False
    if key == "version" and e_series:
        return p.version_string, False
    if key == "get serial number" and p.serial_number is not None:
        return p.serial_number, False
    if key == "get robot model" and e_series:
        return p.robot_model, False
    if key == "is in remote control" and e_series:
        return "true", False
    if key == "unlock protective stop":
        return controller.unlock_protective_stop(), False
    if key == "stop":
        # PolyScope answers "Stopped" also when nothing runs; ur_rtde's reconnect() relies on it
        if controller.program_running:
            controller.stop_program("dashboard stop")
        return "Stopped", False
    if key == "pause":
        return "Failed to execute: pause", False
    if key == "play":
        controller.reject("dashboard play: no program is loaded on the stand-in (programs arrive on the "
                           "script port)")
        return "Failed to execute: play", False
    if key == "running":
        return f"Program running: {str(controller.program_running).lower()}", False
    if key == "programstate":
        state = controller.true_state()
        name = state["program"] or "<unnamed>"
        return ("PLAYING " if state["program_running"] else "STOPPED ") + name, False
    if key == "robotmode":
        return "Robotmode: RUNNING", False
    if key == "safetymode":
        return "Safetymode: " + ("PROTECTIVE_STOP" if controller.in_protective_stop else "NORMAL"), False
    if key == "safetystatus" and e_series:
        return "Safetystatus: " + ("PROTECTIVE_STOP" if controller.in_protective_stop else "NORMAL"), False
    if key == "power on":
        return "Powering on", False
    if key == "power off":
        controller.reject("dashboard power off: the stand-in arm stays powered")
        return "Powering off", False
    if key == "brake release":
        return "Brake releasing", False
    if key == "close popup":
        return "closing popup", False
    if key == "close safety popup":
        return "closing safety popup", False
    if key.startswith("popup "):
        controller.log("info", f"dashboard popup: {command[6:][:200]}")
        return "showing popup", False
    if key == "restart safety" and e_series:
        return "Restarting safety", False
    if key == "get operational mode" and e_series:
        return "NONE", False
    if key == "is program saved":
        return "true <unnamed>", False
    if key == "get loaded program":
        return "No program loaded", False
    if key.startswith("load "):
        controller.reject(f"dashboard load: no such program {command[5:][:200]!r}")
        return f"File not found: {command[5:]}", False
    if key.startswith("log "):
        controller.log("info", f"dashboard log: {command[4:][:200]}")
        return "Added log message", False
    if key == "quit":
        return "Disconnected", True
    if key == "shutdown":
        controller.reject("dashboard shutdown: the stand-in keeps running (stop it with Ctrl-C)")
        return "Shutting down", True
    controller.reject(f"dashboard command not understood: {command[:200]!r}")
    return f"could not understand: '{command}'", False
