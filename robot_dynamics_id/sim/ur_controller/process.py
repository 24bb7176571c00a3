"""Run the stand-in controller as its own process, and drive it from a test.

The stand-in must not share a process with a ur_rtde client: ur_rtde's Python
binding keeps the GIL while it blocks (connecting, waiting for the control
script), so a stand-in thread in the same interpreter could never answer it.
:class:`StandInProcess` starts ``python -m robot_dynamics_id.sim.ur_controller``
(the same code as ``rdi sim-controller``) with a fault-control port and talks
to it over that port.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["StandInProcess", "raise_priority", "run_foreground"]

#: the line the foreground runner prints once every port listens
READY_PREFIX = "STANDIN READY "


def raise_priority(nice: int, pid: int = 0) -> bool:
    """Lower the nice value of process ``pid`` (0: this one) to ``nice``; False if not permitted.

    A real controller runs its loop on a real-time kernel; on a shared test machine a higher
    priority keeps the stand-in's 500 Hz loop close to on time (root may do this, others may not)."""
    try:
        current = os.getpriority(os.PRIO_PROCESS, pid)
        if nice < current:
            os.setpriority(os.PRIO_PROCESS, pid, nice)
        return True
    except (OSError, AttributeError):
        return False


def run_foreground(*, duration_s: float | None = None, quiet: bool = False, exit_on_stdin_eof: bool = False,
                   priority: int | None = None, **controller_kwargs) -> int:
    """Run a :class:`StandInController` until SIGINT/SIGTERM (or ``duration_s``); exit code 0.

    ``exit_on_stdin_eof``: also stop when standard input closes (the parent process died).
    ``priority``: nice value to run at (e.g. -10), when the user may raise it."""
    import logging

    from .controller import StandInController

    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="%(asctime)s.%(msecs)03d [sim-controller] %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    sys.setswitchinterval(float(os.environ.get("RDI_STANDIN_SWITCH", "0.005")))
    if priority is not None:
        raise_priority(priority)
    kwargs = {k: v for k, v in controller_kwargs.items() if v is not None}
    if kwargs.get("realtime_priority"):
        # Every thread of this process (each inherits it from the one that starts it) runs SCHED_FIFO 1, the
        # control loop at its own higher priority. A helper thread at normal priority that a busy machine
        # preempts while it holds the GIL would otherwise stall the control loop for as long (priority
        # inversion through the GIL: 50 ms stalls measured at load 5 on 2 cores).
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
        except (OSError, AttributeError):
            pass
    controller = StandInController(**kwargs)
    done = threading.Event()

    def _stop(signum, frame):
        done.set()

    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    if exit_on_stdin_eof:
        def _watch_stdin():
            # os.read on the descriptor, not sys.stdin.buffer: a daemon thread blocked inside the buffered
            # reader holds its lock, and the interpreter's shutdown then aborts the process ("could not
            # acquire lock for <stdin> at interpreter shutdown": exit code -6 instead of 0, seen in a CI run)
            try:
                fd = sys.stdin.fileno()
                while os.read(fd, 1024):
                    pass
            except (OSError, ValueError):
                pass
            done.set()

        threading.Thread(target=_watch_stdin, name="stdin-watch", daemon=True).start()
    controller.start()
    # The plant, the model and the imported modules live as long as the process: keep them out of the
    # garbage collector, whose full collections otherwise stall the 500 Hz loop for milliseconds.
    gc.collect()
    gc.freeze()
    ports = {name: controller.port(name) for name in controller._listeners}
    print(READY_PREFIX + json.dumps({"host": controller.host, "ports": ports,
                                     "personality": controller.personality.name}), flush=True)
    try:
        done.wait(duration_s)
    finally:
        controller.stop()
        state = controller.true_state()
        logging.getLogger("robot_dynamics_id.sim.ur_controller").info(
            f"stopped after {state['ticks']} ticks ({state['late_ticks']} late, at most "
            f"{state['max_lateness_s'] * 1000:.1f} ms; work per tick {state['mean_work_time_s'] * 1e6:.0f} us mean, "
            f"{state['max_work_time_s'] * 1e6:.0f} us max), {state['rejections']} rejected inputs")
    return 0


class StandInProcess:
    """A stand-in controller in a child process, with a fault-control connection.

    Args (keyword-only): ``personality``, ``host`` (a loopback address), ``log_dir`` (where
    ``sim_controller.log`` goes), ``unlock_delay_s``, ``extra_args`` (more CLI options),
    ``startup_timeout_s``, ``nice`` (priority to try for the stand-in; ignored if not permitted),
    ``rt_priority`` (SCHED_FIFO priority of its control loop thread when permitted; None: off).
    """

    def __init__(self, *, personality: str = "e-series", host: str = "127.0.0.1", log_dir: str | Path = ".",
                 unlock_delay_s: float | None = None, extra_args: list[str] | None = None,
                 startup_timeout_s: float = 30.0, env: dict | None = None, nice: int = -10,
                 rt_priority: int | None = 20) -> None:
        self.host = host
        self.personality = personality
        log_dir = Path(log_dir)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = log_dir / f"sim_controller_{host}.log"
        cmd = [sys.executable, "-m", "robot_dynamics_id.sim.ur_controller", "--personality", personality,
               "--host", host, "--control-port", "0", "--exit-with-parent", "--nice", str(nice)]
        if rt_priority:
            cmd += ["--rt-priority", str(rt_priority)]
        if unlock_delay_s is not None:
            cmd += ["--unlock-delay", str(unlock_delay_s)]
        cmd += list(extra_args or [])
        run_env = dict(os.environ if env is None else env)
        run_env.setdefault("PYTHONUNBUFFERED", "1")
        self._log_file = open(self.log_path, "w")
        # stdin is a pipe nobody writes to: when this process dies, the stand-in sees EOF and exits
        self.popen = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log_file,
                                      env=run_env, text=True, start_new_session=True)
        self.ports: dict[str, int] = {}
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._pump_stdout, daemon=True)
        self._reader.start()
        if not self._ready.wait(startup_timeout_s):
            self.stop()
            raise RuntimeError(f"stand-in controller did not start within {startup_timeout_s:g} s:\n{self.log()}")
        if not self.ports:
            self.stop()
            raise RuntimeError(f"stand-in controller exited during start-up:\n{self.log()}")

    def _pump_stdout(self) -> None:
        for line in self.popen.stdout:
            if line.startswith(READY_PREFIX):
                info = json.loads(line[len(READY_PREFIX):])
                self.ports = info["ports"]
                self._ready.set()
            else:
                self._log_file.write(line)
                self._log_file.flush()
        self._ready.set()

    # ---- fault control -----------------------------------------------------------------------
    def command(self, line: str, timeout_s: float = 5.0) -> str:
        """Send one fault-control command; returns the reply line (see :mod:`.fault_control`)."""
        with self._lock:
            if self._sock is None:
                self._sock = socket.create_connection((self.host, self.ports["control"]), timeout=timeout_s)
                self._buffer = b""
            self._sock.settimeout(timeout_s)
            self._sock.sendall((line.strip() + "\n").encode())
            while b"\n" not in self._buffer:
                chunk = self._sock.recv(65536)
                if not chunk:
                    self._sock = None
                    raise ConnectionError("the stand-in closed the fault-control connection")
                self._buffer += chunk
            reply, self._buffer = self._buffer.split(b"\n", 1)
        text = reply.decode()
        if text.startswith("error"):
            raise RuntimeError(f"stand-in refused {line!r}: {text}")
        return text

    def state(self) -> dict:
        return json.loads(self.command("state"))

    def events(self, index: int = 0) -> tuple[int, list]:
        reply = json.loads(self.command(f"events {index}"))
        return reply["index"], reply["events"]

    def stops(self) -> list:
        return json.loads(self.command("stops"))

    def motion(self) -> list:
        return json.loads(self.command("motion"))

    def stop_records(self) -> list:
        """[cycle, wall time, cause, deceleration, speed] of every stop (see StandInController.stop_records)."""
        return json.loads(self.command("stop_records"))

    def velocity_trace(self, since_tick: int = 0) -> list:
        """[cycle, wall time, max |reference qd|, max |true qd|] per controller cycle from ``since_tick``."""
        return json.loads(self.command(f"trace {int(since_tick)}"))

    def wait_until(self, predicate, timeout_s: float, poll_s: float = 0.02) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(poll_s)
        return bool(predicate())

    # ---- lifecycle ------------------------------------------------------------------------------
    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self, timeout_s: float = 5.0) -> int:
        """SIGINT, then SIGKILL if it hangs; returns the exit code."""
        with self._lock:
            if self._sock is not None:
                try:
                    self._sock.close()
                except OSError:
                    pass
                self._sock = None
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.stdin.close()
            except OSError:
                pass
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        if self._reader is not None:
            self._reader.join(2.0)
        self._log_file.close()
        return self.popen.returncode

    def __enter__(self) -> StandInProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
