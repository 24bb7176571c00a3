"""The stand-in UR controller: RTDE, dashboard and script ports in front of a simulated UR3.

An unmodified ur_rtde client (``rtde_receive.RTDEReceiveInterface``,
``rtde_control.RTDEControlInterface``) connects to it as to a real controller:

* **RTDE** (30004): protocol version 2, recipes with the real field types,
  input recipe ids handed out from 1 per connection, data packages at the
  recipe frequency (a divisor of the controller rate), ``IN_USE`` for inputs
  another connection holds.
* **Dashboard** (29999): the text commands ur_rtde and operators use
  (``PolyscopeVersion``, ``unlock protective stop``, ``stop``, ``is in remote
  control``, ...); see :mod:`.dashboard`.
* **Script ports** (30001-30003): a program ``def name(): ... end`` sent there
  replaces the running one. ``rtde_control`` is run by :class:`.ControlScript`
  (the emulated script); any other program is logged and ends at once.
* **Control loop**: one tick per controller period (125 Hz CB3, 500 Hz
  e-Series): RTDE watchdog check, one script cycle, one plant step, output
  packages out.

Faults can be injected from tests (:meth:`StandInController.drop_connections`,
:meth:`stall_stream`, :meth:`trigger_protective_stop`, :meth:`stop_program`,
:meth:`set_unreachable`) or, for a stand-in in another process, through the
line-based fault-control port (:mod:`.fault_control`). Everything the stand-in
rejects or does on its own is written to its event log (``events``) and to the
``robot_dynamics_id.sim.ur_controller`` logger.

Binds to loopback only unless told otherwise: it is a test fixture.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import select
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ...hardware.os_thread import set_os_thread_name
from ...robot_state import RobotMode, SafetyMode
from . import rtde_protocol as rp
from .control_script import ControlScript, Registers, ScriptError, parse_register_offsets
from .personality import Personality, get_personality
from .servers import Listener, check_loopback

__all__ = ["RuntimeState", "StandInController", "ControllerEvent"]

LOG = logging.getLogger("robot_dynamics_id.sim.ur_controller")

DEFAULT_INITIAL_Q_RAD = (0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0)
#: a joint faster than this (true velocity, rad/s) counts as moving in the rest log
REST_SPEED_RAD_S = 0.005
#: how far the control loop may fall behind the wall clock before it gives up catching up (s)
CATCH_UP_LIMIT_S = 0.5
#: bytes an RTDE client may fall behind before the controller drops it
MAX_SEND_BACKLOG_BYTES = 256 * 1024
#: controller cycles kept in the velocity trace (:attr:`StandInController.velocity_trace`): 4 s at 500 Hz
VELOCITY_TRACE_TICKS = 2000


class RuntimeState:
    """RTDE ``runtime_state`` values (UR RTDE guide)."""

    STOPPING = 0
    STOPPED = 1
    PLAYING = 2
    PAUSING = 3
    PAUSED = 4
    RESUMING = 5


@dataclass(frozen=True)
class ControllerEvent:
    """One line of the stand-in's log: wall time (time.time()), level, message."""

    time_s: float
    level: str
    message: str


@dataclass
class _RtdeClient:
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


class _Snapshot:
    """What one tick reports (read by the output getters)."""

    __slots__ = ("state", "runtime_state", "robot_status_bits", "safety_status_bits", "safety_mode",
                 "execution_time_ms", "target_q", "target_qd", "target_qdd")


class _NumericRing:
    """The newest ``capacity`` rows of ``columns`` numbers, in memory allocated once.

    The per-cycle records of the control loop live here rather than in deques of tuples: a deque grows
    until it is full (a slow-filling log looks like a leak in a soak) and allocates on every append."""

    def __init__(self, capacity: int, columns: int) -> None:
        self._rows = np.full((int(capacity), int(columns)), np.nan)  # written now: the memory is resident
        self._count = 0

    def append(self, *values: float) -> None:
        self._rows[self._count % self._rows.shape[0]] = values
        self._count += 1

    def __len__(self) -> int:
        return min(self._count, self._rows.shape[0])

    def rows(self) -> np.ndarray:
        """A copy, oldest row first."""
        n = len(self)
        return self._rows[np.arange(self._count - n, self._count) % self._rows.shape[0]].copy()


class StandInController:
    """A local UR controller for the real ur_rtde client, backed by :class:`SimulatedUR`.

    Args (keyword-only):
        personality: ``"cb3"`` (URControl 3.15, 125 Hz) or ``"e-series"`` (5.23, 500 Hz), or a
            :class:`Personality`.
        host: address to bind; loopback only (127.x.y.z) unless ``allow_non_loopback``.
        rtde_port, dashboard_port: 30004 and 29999 (ur_rtde cannot be told other ports).
        script_ports: the primary/secondary/real-time ports that accept programs.
        control_port: fault-control port (:mod:`.fault_control`); None disables it, 0 picks a free port.
        robot: robot of the simulated arm (default ur3).
        initial_q_rad: start pose (default: the "home" pose of config/ur3.yaml).
        truth_seed, noise_seed, noise: passed to :class:`SimulatedUR`.
        protective_stop_unlock_delay_s: seconds before ``unlock protective stop`` works
            (default: the personality's, 5 s like PolyScope).
        script_start_delay_s: time from a program's upload to its first cycle.
        realtime_priority: run the control loop thread SCHED_FIFO at this priority (1-99) when
            permitted (Linux, root or CAP_SYS_NICE); None: normal scheduling.
    """

    def __init__(
        self,
        *,
        personality: str | Personality = "e-series",
        host: str = "127.0.0.1",
        rtde_port: int = 30004,
        dashboard_port: int = 29999,
        script_ports: tuple[int, ...] = (30001, 30002, 30003),
        control_port: int | None = None,
        robot: str = "ur3",
        initial_q_rad=DEFAULT_INITIAL_Q_RAD,
        truth_seed: int | None = None,
        noise_seed: int = 0,
        noise: bool = True,
        protective_stop_unlock_delay_s: float | None = None,
        script_start_delay_s: float = 0.05,
        allow_non_loopback: bool = False,
        realtime_priority: int | None = None,
    ) -> None:
        self.personality = personality if isinstance(personality, Personality) else get_personality(personality)
        self.host = check_loopback(host, allow_non_loopback)
        self._ports = {"rtde": int(rtde_port), "dashboard": int(dashboard_port)}
        self._script_ports = tuple(int(p) for p in script_ports)
        self._control_port = control_port
        self._robot = robot
        self._initial_q = np.asarray(initial_q_rad, float)
        self._truth_seed = truth_seed
        self._noise_seed = noise_seed
        self._noise = noise
        self.unlock_delay_s = (self.personality.protective_stop_unlock_delay_s
                               if protective_stop_unlock_delay_s is None else float(protective_stop_unlock_delay_s))
        if self.unlock_delay_s < 0 or script_start_delay_s < 0:
            raise ValueError("protective_stop_unlock_delay_s and script_start_delay_s must be >= 0")
        self.script_start_delay_s = float(script_start_delay_s)
        self.realtime_priority = realtime_priority
        self.rate_hz = self.personality.rate_hz
        self.period_s = 1.0 / self.rate_hz

        self._lock = threading.RLock()
        self.registers = Registers()
        self._input_owner: dict[str, _RtdeClient] = {}
        self._rtde_clients: list[_RtdeClient] = []
        self._program: ControlScript | None = None
        self._program_name = ""
        self._pending_program: tuple[float, str, str] | None = None
        self._watchdog_armed_tick = 0
        self._input_update_tick: dict[str, int] = {}
        self._protective_stop_since: float | None = None
        self._stall_until = 0.0
        self._unreachable_until = 0.0
        self._closed_ports: list[str] = []
        self._events: collections.deque[ControllerEvent] = collections.deque(maxlen=5000)
        self._event_count = 0
        self._stop_log: collections.deque[tuple[float, str]] = collections.deque(maxlen=1000)
        #: (wall time, 1.0 moving / 0.0 at rest) transitions of the simulated arm
        self._motion_log = _NumericRing(1000, 2)
        #: (tick, wall time, cause, deceleration rad/s^2, true speed rad/s) of every stop
        self._stop_records: collections.deque[tuple[int, float, str, float, float]] = collections.deque(maxlen=1000)
        #: (tick, wall time, max |reference qd|, max |true qd|) of the last VELOCITY_TRACE_TICKS cycles
        self._velocity_trace = _NumericRing(VELOCITY_TRACE_TICKS, 4)
        self._moving = False
        self.last_script_text = ""
        #: log every input data package (debugging a client)
        self.trace_inputs = bool(os.environ.get("RDI_STANDIN_TRACE"))
        self.rejections = 0
        self.ticks = 0
        self.late_ticks = 0
        self.max_lateness_s = 0.0
        #: time spent computing ticks (physics, script, outputs), for the load report
        self.work_time_total_s = 0.0
        self.max_work_time_s = 0.0
        #: the last ticks whose work took longer than a period: (tick, total, step, snapshot, send) in s
        self.slow_ticks = _NumericRing(100, 5)
        self._snap = _Snapshot()
        self._listeners: dict[str, Listener] = {}
        self._thread: threading.Thread | None = None
        self._stop_event = threading.Event()
        self.plant = None

    # ---- lifecycle -----------------------------------------------------------------------------
    def start(self) -> StandInController:
        """Build the plant, open the ports, start the control loop. Returns self."""
        if self._thread is not None:
            raise RuntimeError("StandInController already started")
        from ..plant import SimulatedUR

        self.plant = SimulatedUR(robot=self._robot, rate_hz=self.rate_hz, initial_q_rad=self._initial_q,
                                 truth_seed=self._truth_seed, noise_seed=self._noise_seed, noise=self._noise)
        self._stop_deceleration = float(np.min(self.plant.robot_model.acceleration_limit_rad_s2))
        self._update_snapshot(0.0)
        names = ["rtde", "dashboard"] + [f"script{port}" for port in self._script_ports]
        if self._control_port is not None:
            names.append("control")
        try:
            self._open_listeners(names)
        except OSError:
            self._close_listeners()
            raise
        self._stop_event.clear()
        self._thread = threading.Thread(target=self._run, name="standin-control-loop", daemon=True)
        self._thread.start()
        self.log("info", f"stand-in {self.personality.name} controller (URControl "
                         f"{self.personality.version_string}, {self.rate_hz:g} Hz) on {self.host}: "
                         + ", ".join(f"{k} {v.port}" for k, v in self._listeners.items()))
        return self

    def _open_listeners(self, names: list[str]) -> None:
        from . import dashboard, fault_control, script_port

        for name in names:
            if name == "rtde":
                listener = Listener(name="rtde", host=self.host, port=self._ports["rtde"],
                                    handler=self._serve_rtde, on_error=self._reject)
            elif name == "dashboard":
                listener = Listener(name="dashboard", host=self.host, port=self._ports["dashboard"],
                                    handler=lambda s, p: dashboard.serve(self, s, p), on_error=self._reject)
            elif name == "control":
                listener = Listener(name="fault-control", host=self.host, port=self._control_port,
                                    handler=lambda s, p: fault_control.serve(self, s, p), on_error=self._reject)
            else:
                port = int(name[len("script"):])
                listener = Listener(name=f"script:{port}", host=self.host, port=port,
                                    handler=lambda s, p, port=port: script_port.serve(self, s, p, port),
                                    on_error=self._reject)
            self._listeners[name] = listener

    def stop(self) -> None:
        """Close every port and stop the control loop. Safe to call twice."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        for client in list(self._rtde_clients):
            self._close_rtde(client, "controller stopped")
        self._close_listeners()

    def _close_listeners(self) -> None:
        for listener in self._listeners.values():
            listener.close()
        self._listeners.clear()

    def __enter__(self) -> StandInController:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    def port(self, name: str) -> int:
        """Bound port of ``rtde``, ``dashboard``, ``control`` or ``script<port>``."""
        return self._listeners[name].port

    # ---- logging ----------------------------------------------------------------------------------
    def log(self, level: str, message: str) -> None:
        """Append to the event log (and the Python logger)."""
        self._events.append(ControllerEvent(time.time(), level, message))
        self._event_count += 1
        LOG.log({"info": logging.INFO, "warn": logging.WARNING}.get(level, logging.ERROR), message)

    def _reject(self, message: str) -> None:
        self.rejections += 1
        self.log("warn", f"rejected: {message}")

    @property
    def events(self) -> list[ControllerEvent]:
        return list(self._events)

    def events_since(self, index: int) -> tuple[int, list[ControllerEvent]]:
        """(new index, events after ``index``) where index counts every event ever logged."""
        events = list(self._events)
        count = self._event_count
        first = count - len(events)
        start = max(index, first) - first
        return count, events[start:]

    @property
    def stop_log(self) -> list[tuple[float, str]]:
        """(wall time, cause) of every stop the controller commanded (script stop, watchdog, ...)."""
        return list(self._stop_log)

    @property
    def stop_records(self) -> list[tuple[int, float, str, float, float]]:
        """(controller cycle, wall time, cause, deceleration rad/s², max true joint speed rad/s) of every stop
        the controller commanded: the cycle in which the stop reached the arm's servo."""
        return list(self._stop_records)

    def velocity_trace(self, since_tick: int = 0) -> list[tuple[int, float, float, float]]:
        """(controller cycle, wall time, max |commanded (reference) joint velocity|, max |true joint velocity|)
        per cycle, rad/s, for the last :data:`VELOCITY_TRACE_TICKS` cycles from ``since_tick`` on."""
        with self._lock:
            rows = self._velocity_trace.rows()
        return [(int(tick), float(t), float(ref), float(true)) for tick, t, ref, true in rows if tick >= since_tick]

    @property
    def motion_log(self) -> list[tuple[float, str]]:
        """(wall time, "moving" | "rest") transitions of the simulated arm (true velocity)."""
        with self._lock:
            rows = self._motion_log.rows()
        return [(float(t), "moving" if moving else "rest") for t, moving in rows]

    # ---- fault injection (any thread) -----------------------------------------------------------------
    def drop_connections(self, kind: str = "rtde") -> int:
        """Close client connections abruptly: ``rtde``, ``dashboard``, ``script`` or ``all``."""
        names = [n for n in self._listeners if kind == "all" or n.startswith(kind)]
        if not names:
            raise ValueError(f"drop_connections: unknown kind {kind!r}; use rtde, dashboard, script or all")
        count = sum(self._listeners[n].drop_clients() for n in names if n != "control")
        self.log("warn", f"fault injected: dropped {count} {kind} connection(s)")
        return count

    def stall_stream(self, seconds: float | None = None) -> None:
        """Stop sending RTDE data packages for ``seconds`` (None: until :meth:`resume_stream`).

        Connections stay open and inputs are still accepted: the client just sees no new data."""
        with self._lock:
            self._stall_until = math.inf if seconds is None else time.monotonic() + float(seconds)
        self.log("warn", f"fault injected: RTDE output stream stalled for "
                         f"{'ever' if seconds is None else f'{seconds:g} s'}")

    def resume_stream(self) -> None:
        with self._lock:
            self._stall_until = 0.0
        self.log("info", "RTDE output stream resumed")

    @property
    def stream_stalled(self) -> bool:
        return time.monotonic() < self._stall_until

    def trigger_protective_stop(self, reason: str = "injected") -> None:
        """Protective stop: the arm stops, the program stops, motion is refused until unlocked."""
        with self._lock:
            self._enter_protective_stop(f"protective stop ({reason})")

    def stop_program(self, reason: str = "injected") -> None:
        """Stop the running program (as the dashboard's ``stop``): the arm decelerates to rest."""
        with self._lock:
            self._stop_program(f"program stopped ({reason})")

    def set_unreachable(self, seconds: float) -> None:
        """Close every port (connections reset, new ones refused) for ``seconds``, like a controller
        reboot or a pulled cable; the arm stops as the program loses its client (watchdog) or not."""
        with self._lock:
            self._unreachable_until = time.monotonic() + float(seconds)
            closed = [name for name in self._listeners if name != "control"]
            for name in closed:
                self._listeners.pop(name).close()
            self._closed_ports = closed
        self.log("warn", f"fault injected: controller unreachable for {seconds:g} s (ports closed: "
                         f"{', '.join(closed)})")

    def unlock_protective_stop(self) -> str:
        """The dashboard's ``unlock protective stop``; returns its reply."""
        with self._lock:
            if self._protective_stop_since is None:
                return "Protective stop releasing"
            if time.monotonic() - self._protective_stop_since < self.unlock_delay_s:
                self._reject(f"unlock protective stop less than {self.unlock_delay_s:g} s after it occurred")
                return (f"Cannot unlock protective stop until {self.unlock_delay_s:g}s after occurrence. "
                        "Always inspect cause of protective stop before unlocking")
            self.plant.clear_protective_stop()
            self._protective_stop_since = None
            self.log("info", "protective stop unlocked")
            return "Protective stop releasing"

    # ---- observation ---------------------------------------------------------------------------------
    @property
    def program_running(self) -> bool:
        with self._lock:
            return self._program is not None and self._program.running

    @property
    def in_protective_stop(self) -> bool:
        return self._protective_stop_since is not None

    def true_state(self) -> dict:
        """Noise-free arm state and controller bookkeeping, JSON-serialisable."""
        with self._lock:
            plant = self.plant
            program = self._program
            watchdog = program.watchdog if program is not None and program.running else None
            return {
                "time_s": time.time(),
                "robot_time_s": plant.time_s,
                "q_rad": plant.q_true_rad.tolist(),
                "qd_rad_s": plant.qd_true_rad_s.tolist(),
                "reference_qd_rad_s": plant.reference_qd_rad_s.tolist(),
                "mode": plant.mode,
                "program_running": self.program_running,
                "program": self._program_name,
                "runtime_state": self._snap.runtime_state,
                "protective_stop": self.in_protective_stop,
                "watchdog_hz": None if watchdog is None else watchdog[1],
                "stream_stalled": self.stream_stalled,
                "rtde_clients": len(self._rtde_clients),
                "ticks": self.ticks,
                "late_ticks": self.late_ticks,
                "max_lateness_s": self.max_lateness_s,
                "mean_work_time_s": self.work_time_total_s / max(1, self.ticks),
                "max_work_time_s": self.max_work_time_s,
                "slow_ticks": self.slow_ticks.rows().tolist(),
                "rejections": self.rejections,
                "commands_processed": 0 if program is None else program.commands_processed,
            }

    def wait_until(self, predicate, timeout_s: float, poll_s: float = 0.005) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(poll_s)
        return bool(predicate())

    # ---- programs --------------------------------------------------------------------------------------
    def receive_program(self, text: str, port: int) -> None:
        """A complete program arrived on a script port: it replaces the running one after a short delay."""
        import re

        m = re.search(r"^def\s+(\w+)\s*\(\s*\)\s*:", text, re.MULTILINE)
        name = m.group(1) if m else ""
        if self.trace_inputs:
            from pathlib import Path

            Path(f"/tmp/standin_script_{name or 'statement'}.txt").write_text(text)
        with self._lock:
            self.last_script_text = text
            self._pending_program = (time.monotonic() + self.script_start_delay_s, name, text)
        self.log("info", f"program {name or '<statement>'!r} received on port {port} ({len(text)} bytes)")

    def _start_pending_program(self, now: float) -> None:
        start_s, name, text = self._pending_program
        if now < start_s:
            return
        self._pending_program = None
        if self._program is not None and self._program.running:
            self._stop_program(f"program {self._program_name!r} replaced by {name!r}")
        if self._protective_stop_since is not None:
            self._reject(f"program {name!r} not started: the robot is in a protective stop "
                         "(unlock it on the dashboard first)")
            return
        if name != "rtde_control":
            self.log("warn", f"program {name or '<statement>'!r} is not the ur_rtde control script: the stand-in "
                             "does not interpret URScript, so it ends at once")
            return
        int_offset, float_offset = parse_register_offsets(text)
        try:
            self._program = ControlScript(
                registers=self.registers, plant=self.plant, int_offset=int_offset, float_offset=float_offset,
                # ur_rtde compiles direct_torque into the script only for versions that have it ($5.26 tag
                # in 1.6.5); below that cmd 66 is "dummy_op = 1". Follow what was uploaded.
                supports_direct_torque=self.personality.supports_direct_torque and "direct_torque(" in text,
                stop_deceleration_rad_s2=self._stop_deceleration, log=self.log, on_stop=self._record_stop)
        except ValueError as exc:
            self._reject(f"program {name!r} not started: {exc}")
            return
        self._program_name = name
        self._watchdog_armed_tick = self.ticks
        self.log("info", f"program {name!r} running (register offsets int {int_offset}, float {float_offset})")

    def _stop_program(self, reason: str, level: str = "warn") -> None:
        program = self._program
        if program is None or not program.running:
            return
        program.running = False
        self.log(level, reason)
        if self._protective_stop_since is None:
            self.plant.speed_stop(self._stop_deceleration)
        self._record_stop(reason)

    def _enter_protective_stop(self, reason: str) -> None:
        if self._protective_stop_since is None:
            if not self.plant.in_protective_stop:
                self.plant.protective_stop()
            self._protective_stop_since = time.monotonic()
            self.log("error", reason)
            self._record_stop(reason)
        self._stop_program("program stopped by the protective stop")

    def _record_stop(self, cause: str, deceleration_rad_s2: float | None = None) -> None:
        now = time.time()
        self._stop_log.append((now, cause))
        speed = float(np.max(np.abs(self.plant.qd_true_rad_s))) if self.plant is not None else 0.0
        decel = self._stop_deceleration if deceleration_rad_s2 is None else float(deceleration_rad_s2)
        self._stop_records.append((self.ticks, now, cause, decel, speed))

    # ---- the control loop -------------------------------------------------------------------------------
    def _run(self) -> None:
        set_os_thread_name("standin_loop")
        if self.realtime_priority:
            # Linux: applies to this thread only. A real controller's loop runs on a real-time kernel; on a
            # shared test machine SCHED_FIFO keeps the 500 Hz loop on time (it sleeps most of each period).
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(self.realtime_priority)))
                self.log("info", f"control loop runs SCHED_FIFO priority {self.realtime_priority}")
            except (OSError, AttributeError) as exc:
                self.log("warn", f"control loop keeps normal scheduling (SCHED_FIFO refused: {exc})")
        profile_path = os.environ.get("RDI_STANDIN_PROFILE")
        if profile_path:  # developer aid: profile the control loop thread
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
            try:
                self._loop()
            finally:
                profiler.disable()
                profiler.dump_stats(profile_path)
        else:
            self._loop()

    def _loop(self) -> None:
        period = self.period_s
        deadline = time.perf_counter()
        while not self._stop_event.is_set():
            start = time.perf_counter()
            lateness = start - deadline
            if lateness > period:
                self.late_ticks += 1
            self.max_lateness_s = max(self.max_lateness_s, lateness)
            t_tick = t_snapshot = start
            try:
                with self._lock:
                    self._tick()
                t_tick = time.perf_counter()
                self._update_snapshot(t_tick - start)
                t_snapshot = time.perf_counter()
                self._publish()
            except Exception as exc:  # the loop must survive anything a client provokes
                self.log("error", f"control loop error: {type(exc).__name__}: {exc}")
            end = time.perf_counter()
            work = end - start
            self.work_time_total_s += work
            self.max_work_time_s = max(self.max_work_time_s, work)
            if work > period:
                # kept for the soak benchmark: which part of a tick overran (tick, total, step, snapshot, send)
                self.slow_ticks.append(self.ticks, work, t_tick - start, t_snapshot - t_tick, end - t_snapshot)
            self.ticks += 1
            deadline += period
            delay = deadline - time.perf_counter()
            try:
                self._service_rtde(0.0)
                while delay > 0:  # wait for the next tick, answering clients meanwhile
                    self._service_rtde(delay)
                    delay = deadline - time.perf_counter()
            except Exception as exc:
                self.log("error", f"RTDE service error: {type(exc).__name__}: {exc}")
            if delay < -CATCH_UP_LIMIT_S:
                deadline = time.perf_counter()  # far behind: resynchronise (robot time falls behind)
            # else: behind (this process was not scheduled): run the missed ticks back to back so the
            # arm's time keeps up with the wall clock that the client's commands follow

    def _tick(self) -> None:
        now = time.monotonic()
        if self._unreachable_until and now >= self._unreachable_until:
            self._unreachable_until = 0.0
            try:
                self._open_listeners(self._closed_ports)
                self.log("info", "controller reachable again")
            except OSError as exc:
                self.log("error", f"cannot reopen the ports after the outage: {exc}")
        if self._pending_program is not None:
            self._start_pending_program(now)
        program = self._program
        if program is not None and program.running:
            if program.watchdog is not None:
                # Counted in controller cycles, as the controller does: if this process itself is not
                # scheduled for a while (a loaded test machine), client packages wait in the socket
                # instead of counting as missing.
                name, frequency = program.watchdog
                last_tick = max(self._input_update_tick.get(name, -1), self._watchdog_armed_tick)
                if self.ticks - last_tick > self.rate_hz / frequency:
                    self._stop_program(f"RTDE input watchdog: no update of {name} for "
                                       f"{self.ticks - last_tick} cycles (min {frequency:g} Hz): program stopped",
                                       level="error")
            if program.running:
                if program.watchdog is None:
                    self._watchdog_armed_tick = self.ticks
                try:
                    program.cycle()
                except (ScriptError, ValueError) as exc:
                    self._stop_program(f"URScript runtime error, program stopped: {exc}", level="error")
                if not program.running and self._protective_stop_since is None:
                    # the script ended (stop script): the controller stops the arm with the program
                    self.plant.speed_stop(self._stop_deceleration)
                    self._record_stop("control script ended")
        self.plant.step()
        if self.plant.in_protective_stop and self._protective_stop_since is None:
            self._enter_protective_stop(f"protective stop ({self.plant.protective_stop_reason})")
        speed = float(np.max(np.abs(self.plant.qd_true_rad_s)))
        self._velocity_trace.append(self.ticks, time.time(), float(np.max(np.abs(self.plant.reference_qd_rad_s))),
                                    speed)
        moving = speed > REST_SPEED_RAD_S
        if moving != self._moving:
            self._moving = moving
            self._motion_log.append(time.time(), 1.0 if moving else 0.0)

    def _update_snapshot(self, execution_time_s: float) -> None:
        snap = _Snapshot()
        plant = self.plant
        with self._lock:
            snap.state = plant.state()
            running = self._program is not None and self._program.running
            snap.runtime_state = RuntimeState.PLAYING if running else RuntimeState.STOPPED
            snap.robot_status_bits = 1 | (2 if running else 0)  # bit 0 power on, bit 1 program running
            protective = self._protective_stop_since is not None
            # safety_status_bits: bit 0 normal mode, bit 2 protective stopped
            snap.safety_status_bits = 4 if protective else 1
            snap.safety_mode = int(SafetyMode.PROTECTIVE_STOP if protective else SafetyMode.NORMAL)
            snap.execution_time_ms = execution_time_s * 1000.0
            snap.target_q = plant.reference_q_rad
            snap.target_qd = plant.reference_qd_rad_s
            snap.target_qdd = np.zeros(6)
        self._snap = snap

    # ---- RTDE: outputs ---------------------------------------------------------------------------------------
    def _getter(self, name: str):
        """A zero-argument function returning field ``name`` of the current snapshot."""
        s = lambda: self._snap  # noqa: E731 - the snapshot object is replaced every tick
        regs = self.registers
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
            "payload": lambda: float(self.plant.payload_kg),
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

        pose = self.plant.flange_pose_base()
        return tuple(pose[:3, 3]) + tuple(Rotation.from_matrix(pose[:3, :3]).as_rotvec())

    def _publish(self) -> None:
        if time.monotonic() < self._stall_until:
            return
        tick = self.ticks
        for client in list(self._rtde_clients):
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
                    self.log("error", f"cannot pack recipe {recipe.recipe_id} for {client.peer}: {exc}")
                    continue
                self._send(client, rp.frame(rp.PackageType.DATA_PACKAGE, payload))
                client.packages_sent += 1

    def _send(self, client: _RtdeClient, data: bytes) -> None:
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
                self._reject(f"RTDE client {client.peer} stopped reading ({len(client.pending)} bytes queued): "
                             "connection closed")
                try:
                    client.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    # ---- RTDE: requests ---------------------------------------------------------------------------------------
    def _serve_rtde(self, sock: socket.socket, peer) -> None:
        """Listener thread of one RTDE client: hands the socket to the control loop and waits.

        The control loop thread reads and answers every RTDE socket itself (select between ticks):
        reader threads competing for the GIL with the 500 Hz loop made it miss most deadlines."""
        client = _RtdeClient(sock=sock, peer=f"{peer[0]}:{peer[1]}")
        sock.setblocking(False)
        with self._lock:
            self._rtde_clients.append(client)
        self.log("info", f"RTDE client {client.peer} connected")
        while not client.done.wait(0.5):
            if self._stop_event.is_set() or self._thread is None:
                self._close_rtde(client, "controller stopped")

    def _close_rtde(self, client: _RtdeClient, reason: str) -> None:
        with self._lock:
            if client.done.is_set():
                return
            client.closed = True
            if client in self._rtde_clients:
                self._rtde_clients.remove(client)
            for name, owner in list(self._input_owner.items()):
                if owner is client:
                    del self._input_owner[name]
            client.done.set()
        self.log("info", f"RTDE client {client.peer} disconnected ({reason})")

    def _service_rtde(self, timeout_s: float) -> None:
        """Read and handle what RTDE clients sent, waiting up to ``timeout_s`` for something to arrive."""
        live = []
        for c in list(self._rtde_clients):
            if not c.closed:
                try:
                    if c.sock.fileno() >= 0:
                        live.append(c)
                        continue
                except OSError:
                    pass
            # closed here, or marked closed by a failed send: forget it (else it stays in the client list and
            # its listener thread waits forever)
            self._close_rtde(c, "connection closed")
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
                self._close_rtde(client, f"connection error ({exc})")
                continue
            if not chunk:
                self._close_rtde(client, "closed by the client")
                continue
            client.buffer += chunk
            try:
                packages = rp.split_packages(client.buffer)
            except rp.ProtocolError as exc:
                self._reject(f"RTDE client {client.peer}: {exc}; closing the connection")
                self._close_rtde(client, "protocol error")
                continue
            for ptype, payload in packages:
                client.packages_received += 1
                self._handle_rtde(client, ptype, payload)

    def _reply(self, client: _RtdeClient, ptype: int, payload: bytes) -> None:
        self._send(client, rp.frame(ptype, payload))

    def _refuse(self, client: _RtdeClient, message: str) -> None:
        # Logged only: a refused setup is answered in its reply (recipe id 0, NOT_FOUND / IN_USE), and an
        # unsolicited TEXT_MESSAGE in between would desynchronise a client waiting for that reply.
        self._reject(f"RTDE client {client.peer}: {message}")

    def _handle_rtde(self, client: _RtdeClient, ptype: int, payload: bytes) -> None:
        P = rp.PackageType
        if self.trace_inputs and ptype != P.DATA_PACKAGE:
            self.log("info", f"RTDE request {P.NAMES.get(ptype, ptype)} from {client.peer}: {payload[:60]!r}")
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
            self._reply(client, ptype, struct.pack(">IIII", *self.personality.version))
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
            self.log("info", f"RTDE client {client.peer} message: {payload[:200]!r}")
        else:
            self._refuse(client, f"unknown package type {ptype} ignored")

    def _decode_names(self, client: _RtdeClient, raw: bytes, what: str) -> list[str] | None:
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

    def _setup_outputs(self, client: _RtdeClient, payload: bytes) -> None:
        ptype = rp.PackageType.CONTROL_PACKAGE_SETUP_OUTPUTS
        if client.protocol_version >= 2:
            if len(payload) < 8:
                self._refuse(client, "output setup without a frequency")
                self._reply(client, ptype, b"\x00")
                return
            (frequency,) = struct.unpack(">d", payload[:8])
            raw = payload[8:]
        else:
            frequency, raw = self.rate_hz, payload
        names = self._decode_names(client, raw, "output setup")
        if names is None:
            self._reply(client, ptype, b"\x00")
            return
        types = [rp.output_field_type(n) or "NOT_FOUND" for n in names]
        type_text = ",".join(types).encode()
        if self.trace_inputs:
            self.log("info", f"RTDE output setup from {client.peer} at {frequency:g} Hz: {names}")
        if client.started:
            self._refuse(client, "output setup while the data exchange runs: pause first")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        if not (math.isfinite(frequency) and 0 < frequency <= self.rate_hz):
            self._refuse(client, f"output frequency {frequency} Hz is outside (0, {self.rate_hz:g}] Hz")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        if "NOT_FOUND" in types:
            missing = [n for n, t in zip(names, types) if t == "NOT_FOUND"]
            self._refuse(client, f"output setup: unknown variable(s) {missing[:5]}")
            self._reply(client, ptype, b"\x00" + type_text)
            return
        recipe = rp.Recipe(len(client.outputs) + 1, names, types, frequency)
        divisor = max(1, int(round(self.rate_hz / frequency)))
        with self._lock:
            client.outputs.append(recipe)
            client.output_getters.append([(t.startswith("VECTOR"), self._getter(n)) for n, t in zip(names, types)])
            client.output_divisors.append(divisor)
        self._reply(client, ptype, bytes((recipe.recipe_id,)) + type_text)

    def _setup_inputs(self, client: _RtdeClient, payload: bytes) -> None:
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
            if self.trace_inputs:
                self.log("info", f"RTDE input recipe {client.next_input_id} for {client.peer}: {names}")
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

    def _apply_inputs(self, client: _RtdeClient, payload: bytes) -> None:
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
        if self.trace_inputs:
            self.log("info", f"RTDE input recipe {payload[0]} from {client.peer}: {flat}")
        regs = self.registers
        ticks = self.ticks
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
                self._input_update_tick[name] = ticks
