"""The primary/secondary/real-time interfaces (30001/30002/30003), as far as programs go.

A client sends URScript text; a complete top-level ``def name(): ... end`` block
is a program that replaces the running one (what ur_rtde's ScriptClient relies
on when it uploads ``rtde_control``). The stand-in does not stream the binary
robot-state packages those ports also carry; ur_rtde does not read them.
"""

from __future__ import annotations

import re
import socket

__all__ = ["serve", "complete_programs"]

#: the largest script the stand-in buffers (ur_rtde's control script is about 60 kB)
MAX_SCRIPT_BYTES = 1 << 20

_DEF = re.compile(r"^def\s+\w+\s*\(\s*\)\s*:\s*$", re.MULTILINE)
_END = re.compile(r"^end\s*$", re.MULTILINE)


def complete_programs(text: str) -> tuple[list[str], str]:
    """Split buffered text into complete ``def ... end`` programs and the unfinished rest.

    A program ends at the first line that is exactly ``end`` at column 0 after its ``def``
    (nested blocks are indented in URScript as ur_rtde sends it)."""
    programs = []
    while True:
        d = _DEF.search(text)
        if d is None:
            return programs, text
        e = _END.search(text, d.end())
        if e is None:
            return programs, text[d.start():]
        programs.append(text[d.start():e.end()] + "\n")
        text = text[e.end():]


def serve(controller, sock: socket.socket, peer, port: int) -> None:
    """Receive script text from one client until it disconnects."""
    buffer = ""
    while True:
        try:
            chunk = sock.recv(65536)
        except OSError:
            break
        if not chunk:
            break
        buffer += chunk.decode("utf-8", "replace")
        if len(buffer) > MAX_SCRIPT_BYTES:
            controller.reject(f"script port {port}: more than {MAX_SCRIPT_BYTES} bytes without a complete "
                               "program; buffer discarded")
            buffer = ""
            continue
        programs, buffer = complete_programs(buffer)
        for program in programs:
            controller.receive_program(program, port)
    rest = buffer.strip()
    if rest:
        controller.reject(f"script port {port}: {len(rest)} bytes that are not a complete 'def ...: ... end' "
                           f"program ignored: {rest[:80]!r}")
