"""Misbehaving RTDE peers on loopback for the fault tests: a controller that never answers, or one that
answers the handshake and then falls silent. Test-only; they bind a 127.x address of their own on port
30004 (ur_rtde's receive interface has no port argument), chosen free at start."""

from __future__ import annotations

import random
import socket
import struct
import threading

RTDE_PORT = 30004


def free_loopback_host() -> str:
    """A 127.a.b.c address whose port 30004 is free (Linux routes all of 127/8 to the loopback device)."""
    for _ in range(200):
        host = f"127.{random.randint(10, 250)}.{random.randint(0, 255)}.{random.randint(2, 250)}"
        probe = socket.socket()
        try:
            probe.bind((host, RTDE_PORT))
            return host
        except OSError:
            continue
        finally:
            probe.close()
    raise RuntimeError("no free 127.x.y.z address with port 30004 free")


class RtdePeer:
    """Accepts TCP on ``host``:30004 and answers the first ``answer`` RTDE requests, then nothing.

    ``answer=0``: a peer that accepts and never replies (a hung controller, or another device on the port).
    Replies follow the RTDE guide: V -> accepted, v -> version, O/I -> recipe id + types (all DOUBLE),
    S/P -> accepted; after S, ``data_packages`` data packages 2 ms apart. Connections after the first
    ``answer_connections`` get no answer at all (a controller that hangs between two connections).
    """

    def __init__(self, host: str | None = None, *, answer: int = 0, version=(5, 23, 0, 0),
                 data_packages: int = 0, answer_connections: int | None = None) -> None:
        self.host = host or free_loopback_host()
        self.answer = answer
        self.data_packages = data_packages
        self.answer_connections = answer_connections
        self._fields = 1
        self.version = version
        self.connections = 0
        self.requests: list[int] = []
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((self.host, RTDE_PORT))
        self._sock.listen(16)
        self._clients: list[socket.socket] = []
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True, name="rtde-peer").start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            self._clients.append(client)
            mute = self.answer_connections is not None and self.connections > self.answer_connections
            threading.Thread(target=self._serve, args=(client, mute), daemon=True).start()

    def _serve(self, client: socket.socket, mute: bool) -> None:
        buffer = b""
        answered = self.answer if mute else 0
        while not self._closed.is_set():
            try:
                chunk = client.recv(4096)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while len(buffer) >= 3:
                size, kind = struct.unpack_from(">HB", buffer)
                if len(buffer) < size:
                    break
                payload, buffer = buffer[3:size], buffer[size:]
                self.requests.append(kind)
                if answered >= self.answer:
                    continue  # silent from here on
                answered += 1
                reply = self._reply(kind, payload)
                if reply is not None:
                    try:
                        client.sendall(struct.pack(">HB", 3 + len(reply), kind) + reply)
                    except OSError:
                        return
                if kind == ord("S") and self.data_packages:
                    threading.Thread(target=self._stream, args=(client,), daemon=True).start()

    def _stream(self, client: socket.socket) -> None:
        """``data_packages`` packages of recipe 1 (all fields DOUBLE, zero), 2 ms apart, then nothing."""
        import time

        for k in range(self.data_packages):
            body = b"\x01" + struct.pack(">" + "d" * self._fields, *([k * 0.002] + [0.0] * (self._fields - 1)))
            try:
                client.sendall(struct.pack(">HB", 3 + len(body), ord("U")) + body)
            except OSError:
                return
            time.sleep(0.002)

    def _reply(self, kind: int, payload: bytes) -> bytes | None:
        if kind == ord("V"):
            return b"\x01"
        if kind == ord("v"):
            return struct.pack(">IIII", *self.version)
        if kind == ord("O"):
            names = payload[8:].decode().split(",")
            self._fields = len(names)
            return b"\x01" + ",".join("DOUBLE" for _ in names).encode()
        if kind == ord("I"):
            names = payload.decode().split(",")
            return b"\x01" + ",".join("DOUBLE" for _ in names).encode()
        if kind in (ord("S"), ord("P")):
            return b"\x01"
        return None

    def close(self) -> None:
        self._closed.set()
        for sock in [self._sock, *self._clients]:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> RtdePeer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
