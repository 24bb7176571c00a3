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

Faults can be injected from tests (:mod:`.faults`: :meth:`StandInController.drop_connections`,
:meth:`stall_stream`, :meth:`trigger_protective_stop`, :meth:`stop_program`,
:meth:`set_unreachable`) or, for a stand-in in another process, through the
line-based fault-control port (:mod:`.fault_control`). The RTDE connections are
served by :mod:`.rtde_session`; this module holds the lifecycle, the programs and the
control loop. Everything the stand-in
rejects or does on its own is written to its event log (``events``) and to the
``robot_dynamics_id.sim.ur_controller`` logger.

Binds to loopback only unless told otherwise: it is a test fixture.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from ...hardware.os_thread import set_os_thread_name
from ...robot_state import SafetyMode
from .control_script import ControlScript, Registers, ScriptError, parse_register_offsets
from .faults import FaultInjection
from .personality import Personality, get_personality
from .rtde_session import RtdeSessions, Snapshot
from .servers import Listener, check_loopback

__all__ = ["RuntimeState", "StandInController", "ControllerEvent"]

LOG = logging.getLogger("robot_dynamics_id.sim.ur_controller")

DEFAULT_INITIAL_Q_RAD = (0.0, -1.5708, 1.5708, -1.5708, -1.5708, 0.0)
#: a joint faster than this (true velocity, rad/s) counts as moving in the rest log
REST_SPEED_RAD_S = 0.005
#: how far the control loop may fall behind the wall clock before it gives up catching up (s)
CATCH_UP_LIMIT_S = 0.5
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


class StandInController(FaultInjection):
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
        self._rtde = RtdeSessions(self, self._lock)
        self._program: ControlScript | None = None
        self._program_name = ""
        self._pending_program: tuple[float, str, str] | None = None
        self._watchdog_armed_tick = 0
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
        self.snapshot = Snapshot()
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
                                    handler=self._rtde.serve, on_error=self.reject)
            elif name == "dashboard":
                listener = Listener(name="dashboard", host=self.host, port=self._ports["dashboard"],
                                    handler=lambda s, p: dashboard.serve(self, s, p), on_error=self.reject)
            elif name == "control":
                listener = Listener(name="fault-control", host=self.host, port=self._control_port,
                                    handler=lambda s, p: fault_control.serve(self, s, p), on_error=self.reject)
            else:
                port = int(name[len("script"):])
                listener = Listener(name=f"script:{port}", host=self.host, port=port,
                                    handler=lambda s, p, port=port: script_port.serve(self, s, p, port),
                                    on_error=self.reject)
            self._listeners[name] = listener

    def stop(self) -> None:
        """Close every port and stop the control loop. Safe to call twice."""
        self._stop_event.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        self._rtde.close_all("controller stopped")
        self._close_listeners()

    def _close_listeners(self) -> None:
        for listener in self._listeners.values():
            listener.close()
        self._listeners.clear()

    def __enter__(self) -> StandInController:
        return self.start() if self._thread is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def serving(self) -> bool:
        """True from :meth:`start` until :meth:`stop`."""
        return self._thread is not None and not self._stop_event.is_set()

    def port(self, name: str) -> int:
        """Bound port of ``rtde``, ``dashboard``, ``control`` or ``script<port>``."""
        return self._listeners[name].port

    # ---- logging ----------------------------------------------------------------------------------
    def log(self, level: str, message: str) -> None:
        """Append to the event log (and the Python logger)."""
        self._events.append(ControllerEvent(time.time(), level, message))
        self._event_count += 1
        LOG.log({"info": logging.INFO, "warn": logging.WARNING}.get(level, logging.ERROR), message)

    def reject(self, message: str) -> None:
        """Count and log something the stand-in refused (a bad request, a refused command)."""
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
                "runtime_state": self.snapshot.runtime_state,
                "protective_stop": self.in_protective_stop,
                "watchdog_hz": None if watchdog is None else watchdog[1],
                "stream_stalled": self.stream_stalled,
                "rtde_clients": len(self._rtde.clients),
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
            self.reject(f"program {name!r} not started: the robot is in a protective stop "
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
            self.reject(f"program {name!r} not started: {exc}")
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
                if not self.stream_stalled:
                    self._rtde.publish(self.ticks)
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
                self._rtde.service(0.0)
                while delay > 0:  # wait for the next tick, answering clients meanwhile
                    self._rtde.service(delay)
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
                last_tick = max(self._rtde.input_update_tick.get(name, -1), self._watchdog_armed_tick)
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
        snap = Snapshot()
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
        self.snapshot = snap
