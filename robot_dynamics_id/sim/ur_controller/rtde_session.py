"""The RTDE side of the stand-in UR controller: every client connection, its recipes, inputs and outputs.

Protocol facts (shared/reference/rtde.md, UR's RTDE guide): protocol version 1 or 2, output
recipes with the real field types at a frequency that divides the controller rate, input
recipe ids handed out from 1 per connection, ``IN_USE`` for inputs another connection holds,
``NOT_FOUND`` for unknown names. The control loop thread of :class:`.StandInController` reads
and answers every socket itself (:meth:`RtdeSessions.service` between ticks) and sends the
output packages (:meth:`RtdeSessions.publish`); the listener threads only hand sockets over.
"""

from __future__ import annotations

import math
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ...robot_state import RobotMode
from . import rtde_protocol as rp
from .control_script import Registers
from .personality import Personality

__all__ = ["MAX_SEND_BACKLOG_BYTES", "RtdeClient", "RtdeSessions", "SessionHost", "Snapshot"]

#: bytes an RTDE client may fall behind before the controller drops it
MAX_SEND_BACKLOG_BYTES = 256 * 1024


@dataclass
class RtdeClient:
    """One RTDE connection's negotiated state."""

    sock: socket.socket
    peer: str
    protocol_version: int = 1
    outputs: list[rp.Recipe] = field(default_factory=list)
    output_getters: list[list] = field(default_factory=list)
    output_divisors: list[int] = field(default_factory=list)
    inputs: dict[int, rp.Recipe] = field(default_factory=dict)
    input_layouts: dict[int, list] = field(default_factory=dict)
    next_input_id: int = 1
    started: bool = False
    pending: bytearray = field(default_factory=bytearray)
    send_lock: threading.Lock = field(default_factory=threading.Lock)
    closed: bool = False
    done: threading.Event = field(default_factory=threading.Event)
    buffer: bytearray = field(default_factory=bytearray)
    packages_received: int = 0
    packages_sent: int = 0


class Snapshot:
    """What one controller cycle reports (the output getters read it; replaced whole every cycle)."""

    __slots__ = ("state", "runtime_state", "robot_status_bits", "safety_status_bits", "safety_mode",
                 "execution_time_ms", "target_q", "target_qd", "target_qdd")


class SessionHost(Protocol):
    """What the RTDE sessions need from their controller (:class:`.StandInController`)."""

    personality: Personality
    rate_hz: float
    registers: Registers
    plant: Any  # the SimulatedUR (payload_kg, flange_pose_base())
    snapshot: Snapshot
    ticks: int
    trace_inputs: bool

    @property
    def serving(self) -> bool: ...

    def log(self, level: str, message: str) -> None: ...

    def reject(self, message: str) -> None: ...


class RtdeSessions:
    """The RTDE connections of one :class:`.StandInController` (the ``controller``).

    ``lock`` is the controller's lock (recipes, input ownership and registers change under it).
    ``input_update_tick[name]`` is the controller cycle of the last data package that set input
    ``name``: the RTDE input watchdog of the control script counts from it.
    """

    def __init__(self, controller: SessionHost, lock: threading.RLock) -> None:
        self._ctl = controller
        self._lock = lock
        self.clients: list[RtdeClient] = []
        self._input_owner: dict[str, RtdeClient] = {}
        self.input_update_tick: dict[str, int] = {}

    def close_all(self, reason: str) -> None:
        for client in list(self.clients):
            self.close(client, reason)

    # ---- outputs ---------------------------------------------------------------------------------------
    def _getter(self, name: str):
        """A zero-argument function returning field ``name`` of the current snapshot."""
        ctl = self._ctl
        s = lambda: ctl.snapshot  # noqa: E731 - the snapshot object is replaced every tick
        regs = ctl.registers
        simple = {
            "timestamp": lambda: s().state.timestamp_s,
            "actual_q": lambda: s().state.q_rad,
            "actual_qd": lambda: s().state.qd_rad_s,
            "actual_current": lambda: s().state.current_a,
            "actual_current_window": lambda: np.abs(s().state.current_a) * 0.05,
            "target_current": lambda: s().state.target_current_a,
            "target_moment": lambda: s().state.target_moment_nm,
            "joint_control_output": lambda: s().state.target_current_a,
            "actual_TCP_force": lambda: s().state.tcp_wrench_base,
            "target_q": lambda: s().target_q,
            "target_qd": lambda: s().target_qd,
            "target_qdd": lambda: s().target_qdd,
            "robot_mode": lambda: int(RobotMode.RUNNING),
            "safety_mode": lambda: s().safety_mode,
            "safety_status": lambda: s().safety_mode,
            "runtime_state": lambda: s().runtime_state,
            "robot_status_bits": lambda: s().robot_status_bits,
            "safety_status_bits": lambda: s().safety_status_bits,
            "joint_mode": lambda: (253,) * 6,  # JOINT_RUNNING_MODE
            "speed_scaling": lambda: 1.0,
            "target_speed_fraction": lambda: 1.0,
            "actual_execution_time": lambda: s().execution_time_ms,
            "actual_main_voltage": lambda: 48.0,
            "actual_robot_voltage": lambda: 48.0,
            "actual_robot_current": lambda: float(np.sum(np.abs(s().state.current_a))) * 0.1,
            "actual_joint_voltage": lambda: (48.0,) * 6,
            "joint_temperatures": lambda: (32.0,) * 6,
            "actual_TCP_pose": self._tcp_pose,
            "target_TCP_pose": self._tcp_pose,
            "payload": lambda: float(ctl.plant.payload_kg),
            "output_bit_registers0_to_31": lambda: regs.output_bits & 0xFFFFFFFF,
            "output_bit_registers32_to_63": lambda: (regs.output_bits >> 32) & 0xFFFFFFFF,
            "input_bit_registers0_to_31": lambda: regs.input_bits & 0xFFFFFFFF,
            "input_bit_registers32_to_63": lambda: (regs.input_bits >> 32) & 0xFFFFFFFF,
        }
        if name in simple:
            return simple[name]
        m = rp._REGISTER.match(name)
        if m:
            direction, kind, index = m.group(1), m.group(2), int(m.group(3))
            if kind == "int":
                table = regs.output_int if direction == "output" else regs.input_int
                return lambda: table[index]
            if kind == "double":
                table = regs.output_double if direction == "output" else regs.input_double
                return lambda: table[index]
            bits_attr = "output_bits" if direction == "output" else "input_bits"
            return lambda: bool((getattr(regs, bits_attr) >> index) & 1)
        typ = rp.output_field_type(name)
        zero = {"VECTOR3D": (0.0,) * 3, "VECTOR6D": (0.0,) * 6, "VECTOR6INT32": (0,) * 6,
                "VECTOR6UINT32": (0,) * 6, "DOUBLE": 0.0, "BOOL": False}.get(typ, 0)
        return lambda: zero

    def _tcp_pose(self):
        from scipy.spatial.transform import Rotation

        pose = self._ctl.plant.flange_pose_base()
        return tuple(pose[:3, 3]) + tuple(Rotation.from_matrix(pose[:3, :3]).as_rotvec())

    def publish(self, tick: int) -> None:
        """Send every started client the output packages due at controller cycle ``tick``."""
        for client in list(self.clients):
            if not client.started or client.closed:
                continue
            for recipe, getters, divisor in zip(client.outputs, client.output_getters, client.output_divisors):
                if tick % divisor:
                    continue
                flat: list = []
                for vector, get in getters:
                    if vector:
                        flat.extend(get())
                    else:
                        flat.append(get())
                try:
                    payload = bytes((recipe.recipe_id,)) + recipe.codec.pack(*flat)
                except struct.error as exc:
                    self._ctl.log("error", f"cannot pack recipe {recipe.recipe_id} for {client.peer}: {exc}")
                    continue
                self._send(client, rp.frame(rp.PackageType.DATA_PACKAGE, payload))
                client.packages_sent += 1

    def _send(self, client: RtdeClient, data: bytes) -> None:
        """Non-blocking send: a client that stops reading must not stall the control loop."""
        with client.send_lock:
            if client.closed:
                return
            client.pending += data
            try:
                sent = client.sock.send(client.pending, socket.MSG_DONTWAIT)
                del client.pending[:sent]
            except BlockingIOError:
                pass
            except OSError:
                client.closed = True
                return
            if len(client.pending) > MAX_SEND_BACKLOG_BYTES:
                client.closed = True
                self._ctl.reject(f"RTDE client {client.peer} stopped reading ({len(client.pending)} bytes queued): "
                             "connection closed")
                try:
                    client.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    # ---- requests ---------------------------------------------------------------------------------------
    def serve(self, sock: socket.socket, peer) -> None:
        """Listener thread of one RTDE client: hands the socket to the control loop and waits.

        The control loop thread reads and answers every RTDE socket itself (select between ticks):
        reader threads competing for the GIL with the 500 Hz loop made it miss most deadlines."""
        client = RtdeClient(sock=sock, peer=f"{peer[0]}:{peer[1]}")
        sock.setblocking(False)
        with self._lock:
            self.clients.append(client)
        self._ctl.log("info", f"RTDE client {client.peer} connected")
        while not client.done.wait(0.5):
            if not self._ctl.serving:
                self.close(client, "controller stopped")

    def close(self, client: RtdeClient, reason: str) -> None:
        with self._lock:
            if client.done.is_set():
                return
            client.closed = True
            if client in self.clients:
                self.clients.remove(client)
            for name, owner in list(self._input_owner.items()):
                if owner is client:
                    del self._input_owner[name]
            client.done.set()
        self._ctl.log("info", f"RTDE client {client.peer} disconnected ({reason})")

    def service(self, timeout_s: float) -> None:
        """Read and handle what RTDE clients sent, waiting up to ``timeout_s`` for something to arrive."""
        live = []
        for c in list(self.clients):
            if not c.closed:
                try:
                    if c.sock.fileno() >= 0:
                        live.append(c)
                        continue
                except OSError:
                    pass
            # closed here, or marked closed by a failed send: forget it (else it stays in the client list and
            # its listener thread waits forever)
            self.close(c, "connection closed")
        if not live:
            if timeout_s > 0:
                time.sleep(timeout_s)
            return
        try:
            readable, _, _ = select.select([c.sock for c in live], [], [], max(0.0, timeout_s))
        except (OSError, ValueError):  # a socket was closed under us (fault injection): next round
            return
        for sock in readable:
            client = next((c for c in live if c.sock is sock), None)
            if client is None:
                continue
            try:
                chunk = sock.recv(65536)
            except BlockingIOError:
                continue
            except OSError as exc:
                self.close(client, f"connection error ({exc})")
                continue
            if not chunk:
                self.close(client, "closed by the client")
                continue
            client.buffer += chunk
            try:
                packages = rp.split_packages(client.buffer)
            except rp.ProtocolError as exc:
                self._ctl.reject(f"RTDE client {client.peer}: {exc}; closing the connection")
                self.close(client, "protocol error")
                continue
            for ptype, payload in packages:
                client.packages_received += 1
                self._handle(client, ptype, payload)

    def _reply(self, client: RtdeClient, ptype: int, payload: bytes) -> None:
        self._send(client, rp.frame(ptype, payload))

    def _refuse(self, client: RtdeClient, message: str) -> None:
        # Logged only: a refused setup is answered in its reply (recipe id 0, NOT_FOUND / IN_USE), and an
        # unsolicited TEXT_MESSAGE in between would desynchronise a client waiting for that reply.
        self._ctl.reject(f"RTDE client {client.peer}: {message}")

    def _handle(self, client: RtdeClient, ptype: int, payload: bytes) -> None:
        P = rp.PackageType
        if self._ctl.trace_inputs and ptype != P.DATA_PACKAGE:
            self._ctl.log("info", f"RTDE request {P.NAMES.get(ptype, ptype)} from {client.peer}: {payload[:60]!r}")
        if ptype == P.REQUEST_PROTOCOL_VERSION:
            if len(payload) != 2:
                self._refuse(client, f"protocol version request has {len(payload)} bytes, needs 2")
                self._reply(client, ptype, b"\x00")
                return
            (version,) = struct.unpack(">H", payload)
            accepted = version in (1, 2)
            if accepted:
                client.protocol_version = version
            else:
                self._refuse(client, f"protocol version {version} not supported (1 or 2)")
            self._reply(client, ptype, bytes((int(accepted),)))
        elif ptype == P.GET_URCONTROL_VERSION:
            self._reply(client, ptype, struct.pack(">IIII", *self._ctl.personality.version))
        elif ptype == P.CONTROL_PACKAGE_SETUP_OUTPUTS:
            self._setup_outputs(client, payload)
        elif ptype == P.CONTROL_PACKAGE_SETUP_INPUTS:
            self._setup_inputs(client, payload)
        elif ptype == P.CONTROL_PACKAGE_START:
            ok = bool(client.outputs or client.inputs)
            if not ok:
                self._refuse(client, "start requested before any recipe was set up")
            client.started = client.started or ok
            self._reply(client, ptype, bytes((int(ok),)))
        elif ptype == P.CONTROL_PACKAGE_PAUSE:
            client.started = False
            self._reply(client, ptype, b"\x01")
        elif ptype == P.DATA_PACKAGE:
            self._apply_inputs(client, payload)
        elif ptype == P.TEXT_MESSAGE:
            self._ctl.log("info", f"RTDE client {client.peer} message: {payload[:200]!r}")
        else:
            self._refuse(client, f"unknown package type {ptype} ignored")

    def _decode_names(self, client: RtdeClient, raw: bytes, what: str) -> list[str] | None:
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError:
            self._refuse(client, f"{what}: variable names are not ASCII")
            return None
        # ur_rtde terminates the list with a comma; a real controller accepts that
        names = [n.strip() for n in text.rstrip(",").split(",")]
        if not text.rstrip(",") or any(not n for n in names):
            self._refuse(client, f"{what}: empty variable name in {text[:200]!r}")
            return None
        return names

    def _setup_outputs(self, client: RtdeClient, payload: bytes) -> None:
        ptype = rp.PackageType.CONTROL_PACKAGE_SETUP_OUTPUTS
        if client.protocol_version >= 2:
            if len(payload) < 8:
                self._refuse(client, "output setup without a frequency")
                self._reply(client, ptype, b"\x00")
                return
            (frequency,) = struct.unpack(">d", payload[:8])
            raw = payload[8:]
        else:
            frequency, raw = self._ctl.rate_hz, payload
        names = self._decode_names(client, raw, "output setup")
        if names is None:
            self._reply(client, ptype, b"\x00")
            return
        types = [rp.output_field_type(n) or "NOT_FOUND" for n in names]
        type_text = ",".join(types).encode()
        if self._ctl.trace_inputs:
            self._ctl.log("info", f"RTDE output setup from {client.peer} at {frequency:g} Hz: {names}")
        if client.started:
            self._refuse(client, "output setup while the data exchange runs: pause first")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        if not (math.isfinite(frequency) and 0 < frequency <= self._ctl.rate_hz):
            self._refuse(client, f"output frequency {frequency} Hz is outside (0, {self._ctl.rate_hz:g}] Hz")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        if "NOT_FOUND" in types:
            missing = [n for n, t in zip(names, types) if t == "NOT_FOUND"]
            self._refuse(client, f"output setup: unknown variable(s) {missing[:5]}")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        recipe = rp.Recipe(len(client.outputs) + 1, names, types, frequency)
        divisor = max(1, int(round(self._ctl.rate_hz / frequency)))
        with self._lock:
            client.outputs.append(recipe)
            client.output_getters.append([(t.startswith("VECTOR"), self._getter(n)) for n, t in zip(names, types)])
            client.output_divisors.append(divisor)
        self._reply(client, ptype, bytes((recipe.recipe_id,)) + type_text)

    def _setup_inputs(self, client: RtdeClient, payload: bytes) -> None:
        ptype = rp.PackageType.CONTROL_PACKAGE_SETUP_INPUTS
        names = self._decode_names(client, payload, "input setup")
        if names is None:
            self._reply(client, ptype, b"\x00")
            return
        with self._lock:
            types = []
            for n in names:
                t = rp.input_field_type(n)
                owner = self._input_owner.get(n)
                if t is None:
                    types.append("NOT_FOUND")
                elif owner is not None and owner is not client and not owner.closed:
                    types.append("IN_USE")
                else:
                    types.append(t)
            type_text = ",".join(types).encode()
            bad = [f"{n} ({t})" for n, t in zip(names, types) if t in ("NOT_FOUND", "IN_USE")]
            if bad or client.started:
                self._refuse(client, "input setup refused: " + (", ".join(bad[:5]) if bad else
                                                                "the data exchange runs, pause first"))
                self._reply(client, ptype, b"\x00" + type_text)
                return
            if client.next_input_id > 255:
                self._refuse(client, "input setup refused: 255 recipes already set up on this connection")
                self._reply(client, ptype, b"\x00" + type_text)
                return
            if self._ctl.trace_inputs:
                self._ctl.log("info", f"RTDE input recipe {client.next_input_id} for {client.peer}: {names}")
            recipe = rp.Recipe(client.next_input_id, names, types)
            client.next_input_id += 1
            client.inputs[recipe.recipe_id] = recipe
            layout, position = [], 0
            for n, t in zip(names, types):
                m = rp._REGISTER.match(n)
                if m:
                    layout.append((m.group(2), int(m.group(3)), position))
                position += {"VECTOR3D": 3, "VECTOR6D": 6, "VECTOR6INT32": 6, "VECTOR6UINT32": 6}.get(t, 1)
            client.input_layouts[recipe.recipe_id] = layout
            for n in names:
                self._input_owner[n] = client
        self._reply(client, ptype, bytes((recipe.recipe_id,)) + type_text)

    def _apply_inputs(self, client: RtdeClient, payload: bytes) -> None:
        if not payload:
            self._refuse(client, "data package without a recipe id")
            return
        recipe = client.inputs.get(payload[0])
        if recipe is None:
            self._refuse(client, f"data package for unknown input recipe {payload[0]} ignored")
            return
        if not client.started:
            self._refuse(client, f"data package for recipe {payload[0]} before start ignored")
            return
        if len(payload) - 1 != recipe.codec.size:
            self._refuse(client, f"data package for recipe {recipe.recipe_id} has {len(payload) - 1} bytes of "
                                 f"fields, the recipe needs {recipe.codec.size}; ignored")
            return
        flat = recipe.codec.unpack_from(payload, 1)
        if self._ctl.trace_inputs:
            self._ctl.log("info", f"RTDE input recipe {payload[0]} from {client.peer}: {flat}")
        regs = self._ctl.registers
        ticks = self._ctl.ticks
        with self._lock:
            # (kind, register index, position in flat) precomputed at setup: no parsing per package
            for kind, index, position in client.input_layouts[recipe.recipe_id]:
                value = flat[position]
                if kind == "int":
                    regs.input_int[index] = value
                elif kind == "double":
                    regs.input_double[index] = value
                elif kind == "bit":
                    regs.input_bits = (regs.input_bits & ~(1 << index)) | (int(bool(value)) << index)
            for name in recipe.names:
                self.input_update_tick[name] = ticks
