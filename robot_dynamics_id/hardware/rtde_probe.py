"""Does the controller speak RTDE? A short handshake in Python, bounded in time, before ur_rtde is called.

ur_rtde 1.6.5's Python binding holds the GIL while its constructors and ``reconnect()`` wait on the
network, and two of those waits have no timeout (the protocol-version reply and the start reply; measured
against a peer that accepts TCP on 30004 and never replies: the process froze until ``kill -9``, no other
thread and no signal handler ran; issue 16). So :func:`probe_rtde` runs the same handshake first with
Python sockets, which release the GIL, honour a deadline and let a stopping robot loop give up at once:

    connect -> REQUEST_PROTOCOL_VERSION (V, 2) -> GET_URCONTROL_VERSION (v)
            -> CONTROL_PACKAGE_SETUP_OUTPUTS (O, frequency + the fields) -> START (S)
            -> the first DATA_PACKAGE (U) -> PAUSE (P), close

(framing and package types: UR "Real-Time Data Exchange (RTDE) Guide", summarised in
shared/reference/rtde.md). A controller that passes it answered every step ur_rtde will wait for a moment
later, so ur_rtde's own blocking calls then return in milliseconds; for the remaining window (a controller
that fails exactly between the probe and ur_rtde's handshake) the backend bounds the call with
:func:`bounded_native_call`.
"""

from __future__ import annotations

import errno
import faulthandler
import os
import select
import socket
import struct
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .backend import BackendConfigurationError, BackendError

__all__ = ["RTDE_PORT", "ControllerVersion", "RtdeConfigurationError", "RtdeProbeError", "bounded_native_call",
           "probe_rtde"]

RTDE_PORT = 30004
_HEADER = struct.Struct(">HB")
_V, _VERSION, _OUTPUTS, _START, _PAUSE, _DATA, _TEXT = (ord(c) for c in "VvOSPUM")
#: how often a wait checks whether the caller gave up (s)
_SLICE_S = 0.05


class RtdeProbeError(BackendError):
    """The controller did not complete the RTDE handshake; the message says which step and what to check."""


class RtdeConfigurationError(RtdeProbeError, BackendConfigurationError):
    """The controller completed the handshake up to a set-up it refuses for this configuration."""


@dataclass(frozen=True)
class ControllerVersion:
    """URControl software version as the controller reports it (``v``)."""

    major: int
    minor: int
    bugfix: int
    build: int

    @property
    def is_cb3(self) -> bool:
        """CB-series (software 3.x): RTDE output at 125 Hz at most."""
        return self.major < 5

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.bugfix}.{self.build}"


class _Stopped(Exception):
    pass


class _Session:
    """One probing connection: every wait ends at the deadline or when ``should_stop()`` turns true."""

    def __init__(self, host: str, port: int, budget_s: float, should_stop: Callable[[], bool]) -> None:
        self.host, self.port, self.budget_s, self.should_stop = host, port, budget_s, should_stop
        self.deadline = time.monotonic() + budget_s
        self.sock: socket.socket | None = None
        self.buffer = b""

    def _remaining(self) -> float:
        if self.should_stop():
            raise _Stopped
        return self.deadline - time.monotonic()

    def connect(self) -> None:
        try:
            infos = socket.getaddrinfo(self.host, self.port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise RtdeProbeError(f"cannot resolve the controller address {self.host!r} ({exc}): give its IP "
                                 "address in robot_ip") from None
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        self.sock = sock
        sock.setblocking(False)
        code = sock.connect_ex(address)
        if code not in (0, errno.EINPROGRESS):
            raise self._connect_error(code)
        while True:
            remaining = self._remaining()
            if remaining <= 0:
                raise RtdeProbeError(
                    f"no answer from {self.host} within {self.budget_s:.1f} s (TCP connection to the RTDE port "
                    f"{self.port} timed out): check the address, the network cable and that the robot is on")
            _, writable, _ = select.select([], [sock], [], min(remaining, _SLICE_S))
            if writable:
                break
        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if code:
            raise self._connect_error(code)

    def _connect_error(self, code: int) -> RtdeProbeError:
        if code == errno.ECONNREFUSED:
            return RtdeProbeError(f"{self.host} refuses connections on the RTDE port {self.port} (nothing listens "
                                  "there): is the controller booted, and is this its address?")
        return RtdeProbeError(f"cannot connect to {self.host}:{self.port}: {errno.errorcode.get(code, code)} "
                              f"({os.strerror(code)}); check the address and the network")

    def send(self, kind: int, payload: bytes = b"") -> None:
        self.sock.setblocking(True)
        self.sock.settimeout(max(0.01, self.deadline - time.monotonic()))
        try:
            self.sock.sendall(_HEADER.pack(_HEADER.size + len(payload), kind) + payload)
        except OSError as exc:
            raise RtdeProbeError(f"{self.host} closed the RTDE connection during the handshake ({exc})") from None
        finally:
            self.sock.setblocking(False)

    def receive(self, kind: int, step: str) -> bytes:
        """The payload of the next package of type ``kind``; text messages and older data are skipped."""
        while True:
            while len(self.buffer) >= _HEADER.size:
                size, got = _HEADER.unpack_from(self.buffer)
                if size < _HEADER.size:
                    raise RtdeProbeError(f"{self.host}:{self.port} sent a malformed RTDE package (size {size}); "
                                         "is it a UR controller?")
                if len(self.buffer) < size:
                    break
                payload, self.buffer = self.buffer[_HEADER.size:size], self.buffer[size:]
                if got == kind:
                    return payload
                if got not in (_TEXT, _DATA):
                    raise RtdeProbeError(f"{self.host}:{self.port} answered {step} with an unexpected RTDE "
                                         f"package type {got}; is it a UR controller?")
            remaining = self._remaining()
            if remaining <= 0:
                raise RtdeProbeError(
                    f"{self.host} accepts TCP on the RTDE port {self.port} but did not answer {step} within "
                    f"{self.budget_s:.1f} s: a UR controller answers in milliseconds. Check that this address is "
                    "the robot (not another device) and that the controller is not hung (reboot it)")
            readable, _, _ = select.select([self.sock], [], [], min(remaining, _SLICE_S))
            if not readable:
                continue
            try:
                chunk = self.sock.recv(65536)
            except OSError as exc:
                raise RtdeProbeError(f"{self.host} broke the RTDE connection during {step} ({exc})") from None
            if not chunk:
                raise RtdeProbeError(f"{self.host} closed the RTDE connection during {step}")
            self.buffer += chunk

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass


def probe_rtde(host: str, *, fields: list[str], frequency_hz: float, port: int = RTDE_PORT,
               timeout_s: float = 1.5, should_stop: Callable[[], bool] | None = None) -> ControllerVersion:
    """Run the RTDE handshake ur_rtde's receive interface will run, with a deadline; return the version.

    Args:
        host: controller address.
        fields: the output fields to ask for (a field the controller does not know is an error naming it).
        frequency_hz: the output frequency to ask for.
        timeout_s: the whole handshake must finish within this.
        should_stop: polled every 50 ms; when it returns True the probe gives up with :class:`BackendError`.

    Raises:
        RtdeProbeError: which step failed and what to check.
        BackendError: ``should_stop`` asked to give up.
    """
    session = _Session(host, port, timeout_s, should_stop or (lambda: False))
    try:
        session.connect()
        session.send(_V, struct.pack(">H", 2))
        if session.receive(_V, "the protocol-version request")[:1] != b"\x01":
            raise RtdeProbeError(f"{host} refused RTDE protocol version 2: the controller software is too old "
                                 "(ur_rtde needs CB3 3.4 or later, or any e-Series)")
        session.send(_VERSION)
        payload = session.receive(_VERSION, "the version request")
        if len(payload) < 16:
            raise RtdeProbeError(f"{host} sent a malformed controller-version reply ({len(payload)} bytes)")
        version = ControllerVersion(*struct.unpack(">IIII", payload[:16]))
        session.send(_OUTPUTS, struct.pack(">d", float(frequency_hz)) + ",".join(fields).encode())
        reply = session.receive(_OUTPUTS, "the output set-up")
        types = reply[1:].decode("ascii", "replace").split(",")
        unknown = [name for name, kind in zip(fields, types) if kind == "NOT_FOUND"]
        if unknown:
            raise RtdeProbeError(f"the controller at {host} (software {version}) does not know the RTDE output(s) "
                                 f"{unknown}: update the controller software")
        if reply[:1] == b"\x00" or len(types) != len(fields):
            if version.is_cb3 and frequency_hz > 125:
                raise RtdeConfigurationError(
                    f"the controller at {host} is a CB3 (software {version}), whose RTDE runs at 125 Hz, but rate_hz "
                    f"is {frequency_hz:g}: set rate_hz: 125 (it refused the output set-up at {frequency_hz:g} Hz)")
            raise RtdeProbeError(f"the controller at {host} (software {version}) refused the output set-up at "
                                 f"{frequency_hz:g} Hz ({reply[1:60]!r})")
        session.send(_START)
        if session.receive(_START, "the start request")[:1] != b"\x01":
            raise RtdeProbeError(f"the controller at {host} refused to start RTDE data synchronisation")
        session.receive(_DATA, "with a first data package after the start")
        try:
            session.send(_PAUSE)
        except RtdeProbeError:
            pass  # the handshake succeeded; the pause is a courtesy
        return version
    except _Stopped:
        raise BackendError("the RTDE backend is shutting down") from None
    finally:
        session.close()


@contextmanager
def bounded_native_call(bound_s: float) -> Iterator[None]:
    """End the process if a native call that holds the GIL does not return within ``bound_s``.

    The last resort for ur_rtde calls that block while holding the GIL (see the module docstring): no
    Python code can run then, so neither a timeout nor a signal handler can end them. faulthandler's watchdog
    is a C thread that needs no GIL: past the bound it writes "Timeout" and every thread's stack to stderr
    (the robot loop's innermost frame is the ur_rtde call) and exits with status 1. The
    controller-side RTDE watchdog stops the arm when this process goes silent, and the control process sees
    its pipe close and stops the arm too.
    """
    try:
        sys.stderr.write("")  # make sure stderr exists before handing its descriptor to faulthandler
        faulthandler.dump_traceback_later(bound_s, exit=True, file=sys.stderr)
        armed = True
    except (ValueError, RuntimeError, AttributeError, OSError):
        armed = False  # no usable stderr (e.g. under a test capture): run unbounded rather than fail
    try:
        yield
    finally:
        if armed:
            faulthandler.cancel_dump_traceback_later()
