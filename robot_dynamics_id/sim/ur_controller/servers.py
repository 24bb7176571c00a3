"""TCP listeners of the stand-in: one accept thread per port, one thread per client.

:class:`Listener` binds (loopback by default), sets SO_REUSEADDR so a restarted
stand-in gets its fixed ports back at once (ur_rtde always connects to 30004,
29999 and 30003), and hands every accepted socket to a handler function in its
own daemon thread. Closing the listener closes every client socket it accepted.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable

__all__ = ["Listener", "check_loopback", "LineReader"]


def check_loopback(host: str, allow_non_loopback: bool = False) -> str:
    """``host`` if it is a loopback address (127.0.0.0/8, ::1, localhost); else ValueError.

    The stand-in is a test fixture: it must not be reachable from the network unless asked.
    """
    if host == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"host must be an IP address such as 127.0.0.1, got {host!r}") from None
    if not ip.is_loopback and not allow_non_loopback:
        raise ValueError(f"refusing to bind the stand-in controller to {host}: it is not a loopback address "
                         "(use 127.0.0.1 or another 127.x.y.z address)")
    return host


class Listener:
    """Accepts connections on (host, port) and runs ``handler(sock, peer)`` in a thread per client."""

    def __init__(self, *, name: str, host: str, port: int, handler: Callable[[socket.socket, tuple], None],
                 on_error: Callable[[str], None] | None = None, backlog: int = 8) -> None:
        self.name = name
        self.host = host
        self._handler = handler
        self._on_error = on_error or (lambda message: None)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((host, port))
        except OSError as exc:
            self._sock.close()
            raise OSError(exc.errno, f"{name}: cannot listen on {host}:{port} ({exc.strerror}); is another "
                                     "stand-in or a URSim running there? Use another 127.x.y.z address") from None
        self._sock.listen(backlog)
        self.port: int = self._sock.getsockname()[1]
        self._clients: set[socket.socket] = set()
        self._clients_lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept_loop, name=f"{name}-accept", daemon=True)
        self._thread.start()

    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                sock, peer = self._sock.accept()
            except OSError:
                if self._closed:
                    return
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._clients_lock:
                self._clients.add(sock)
            threading.Thread(target=self._serve, args=(sock, peer), name=f"{self.name}-client",
                             daemon=True).start()

    def _serve(self, sock: socket.socket, peer) -> None:
        try:
            self._handler(sock, peer)
        except Exception as exc:  # a handler bug must not take the controller down
            self._on_error(f"{self.name}: client {peer[0]}:{peer[1]} handler failed: {type(exc).__name__}: {exc}")
        finally:
            with self._clients_lock:
                self._clients.discard(sock)
            _hard_close(sock)

    def drop_clients(self) -> int:
        """Close every client connection abruptly (RST); returns how many were open."""
        with self._clients_lock:
            clients = list(self._clients)
        for sock in clients:
            _hard_close(sock, reset=True)
        return len(clients)

    @property
    def client_count(self) -> int:
        with self._clients_lock:
            return len(self._clients)

    def close(self) -> None:
        self._closed = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
        self.drop_clients()
        self._thread.join(2.0)


def _hard_close(sock: socket.socket, reset: bool = False) -> None:
    try:
        if reset:
            # SO_LINGER 0: the peer sees a reset, like a cable pulled / controller rebooted
            import struct

            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass


class LineReader:
    """Reads newline-terminated text lines from a socket, bounding the line length."""

    def __init__(self, sock: socket.socket, max_line_bytes: int = 4096) -> None:
        self._sock = sock
        self._buffer = bytearray()
        self._max = max_line_bytes

    def read_line(self) -> str | None:
        """The next line without its terminator, None when the peer closed; ValueError if too long."""
        while True:
            nl = self._buffer.find(b"\n")
            if nl >= 0:
                line = bytes(self._buffer[:nl])
                del self._buffer[:nl + 1]
                return line.decode("utf-8", "replace").rstrip("\r")
            if len(self._buffer) > self._max:
                self._buffer.clear()
                raise ValueError(f"line longer than {self._max} bytes")
            try:
                chunk = self._sock.recv(4096)
            except OSError:
                return None
            if not chunk:
                return None
            self._buffer += chunk
