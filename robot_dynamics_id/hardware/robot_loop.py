"""The real-time robot loop: one thread, one cycle per controller period.

Each cycle reads the robot, decides what to send (the newest command, bounded
by the :class:`~robot_dynamics_id.hardware.safety.SafetyGuard`, or a stop when
the watchdog fires or anything is wrong), sends it, and hands the sample to a
callback. Other threads (ROS callbacks) only exchange the *latest* values with
the loop through lock-protected slots, never a queue of commands, so a late
command can never be replayed.

Fault handling: any backend error, a protective/emergency stop, or a stopped
program stops the arm, drops the pending command and reports the fault. The
loop then reconnects with back-off and reports ``ready``; motion resumes only
when a new command arrives after that. A program stopped on the controller
while the loop was connected and the robot fine (a stop on the pendant or
dashboard) is an operator's stop: only :meth:`RobotLoop.request_program_restart`
uploads the script again (the UR driver's ``resend_robot_program``). A lost
connection, a protective stop once unlocked, and the controller's RTDE watchdog
after this PC stalled (the backend's ``watchdog_starved_s``) reconnect by themselves.

A controller can also run *inside* the cycle (``cycle_controller``): it gets
each fresh sample and returns the command for the same cycle, so a torque loop
has no transport delay between reading the arm and commanding it (the way
ros2_control hosts controllers inside the UR driver). Its commands pass the
same guard and watchdog as commands from other threads.

A ``cycle_monitor`` (the collision observer) sees every fresh sample first; when it returns a reason,
the loop makes a protective stop through the backend (a plain stop where the backend has none),
drops every command and faults with that reason.

:meth:`RobotLoop.run_cycles` runs cycles in the caller's thread, back to back, for a simulated robot
whose clock is the only clock (in-process scenarios and benchmarks, faster than real time).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..robot_state import RobotMode, RobotState, SafetyMode
from .backend import BackendConfigurationError, BackendError, RobotBackend
from .os_thread import set_os_thread_name
from .safety import CommandRejected, GuardedCommand, SafetyGuard

__all__ = ["PROGRAM_STOPPED", "CycleCommand", "LoopState", "LoopStatus", "RobotLoop"]


#: the fault while the control script is stopped on the controller and the robot fine (see the module docstring)
PROGRAM_STOPPED = ("program stopped on the controller (a stop on the pendant or dashboard): the arm stays stopped; "
                   "restart the control script when it is safe (ur_interface: ~/resend_robot_program, std_msgs/Empty)")


class LoopState:
    """Values of :attr:`LoopStatus.state`."""

    CONNECTING = "connecting"
    READY = "ready"
    MOVING = "moving"
    FAULT = "fault"
    STOPPED = "stopped"


@dataclass(frozen=True)
class LoopStatus:
    """What the loop reports on the status topic."""

    state: str
    connected: bool
    robot_mode: int
    safety_mode: int
    watchdog: str
    fault: str | None
    mode: str
    cycles: int
    late_cycles: int
    rejected_commands: int
    #: deadlines skipped after a delay, with a robot that keeps its own time (see RobotBackend.robot_keeps_time)
    skipped_cycles: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CycleCommand:
    """What a cycle controller returns: ``kind`` velocity (rad/s) or torque (Nm), or stop."""

    kind: str
    values: np.ndarray | None = None
    reason: str = ""


@dataclass
class _CommandSlot:
    kind: str  # "velocity" | "torque"
    values: np.ndarray
    acceleration_rad_s2: float | None
    received_s: float
    #: from the cycle controller, which commands once per fresh sample (silent only while the stream is late)
    from_cycle: bool = False


class RobotLoop:
    """Runs a :class:`RobotBackend` at its rate in a dedicated thread.

    Args:
        backend: the robot.
        guard: the safety guard every command passes.
        on_sample: called in the loop thread with every :class:`RobotState` (keep it cheap:
            e.g. append to a deque that another thread publishes).
        on_event: called with (level, message) for every fault, stop and recovery.
        cycle_controller: called in the loop thread with each new sample while the robot is ready; returns the
            :class:`CycleCommand` to send in this very cycle, or None to keep the previous one. An exception
            stops the arm and faults the loop (it reconnects; the controller decides when to command again).
        on_command: called in the loop thread with (state, kind, values) for every command sent to the robot,
            after the guard: what the arm was actually told, per cycle (e.g. to record it).
        cycle_monitor: called in the loop thread with every new sample, before the cycle controller, in any
            state; a returned reason (a detected collision) makes a protective stop (:meth:`protective_stop`).
        realtime_priority: run the loop thread SCHED_FIFO at this priority (1-99; 0: normal scheduling), as
            ur_rtde's ``rt_priority``; refused without the privilege (then a warning, normal scheduling).
        reconnect_backoff_s: waits between reconnection attempts; the last repeats.
        clock: monotonic clock in seconds (injectable for tests).
    """

    def __init__(
        self,
        *,
        backend: RobotBackend,
        guard: SafetyGuard,
        on_sample: Callable[[RobotState], None] | None = None,
        on_event: Callable[[str, str], None] | None = None,
        cycle_controller: Callable[[RobotState], CycleCommand | None] | None = None,
        on_command: Callable[[RobotState, str, np.ndarray], None] | None = None,
        cycle_monitor: Callable[[RobotState], str | None] | None = None,
        realtime_priority: int = 0,
        reconnect_backoff_s: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0, 5.0),
        timing_window: int = 60_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.backend = backend
        self.guard = guard
        self.period_s = 1.0 / backend.rate_hz
        self._on_sample = on_sample
        self._on_event = on_event
        self._cycle_controller = cycle_controller
        self._on_command = on_command
        self._cycle_monitor = cycle_monitor
        self.realtime_priority = int(realtime_priority)
        self._backoff = tuple(reconnect_backoff_s) or (1.0,)
        self._clock = clock
        self._lock = threading.Lock()
        self._status_lock = threading.Lock()
        self._cycles = 0  # LoopStatus.cycles (see status)
        self._slot: _CommandSlot | None = None
        self._active: _CommandSlot | None = None
        self._latest: RobotState | None = None
        self._status = LoopStatus(LoopState.CONNECTING, False, int(RobotMode.DISCONNECTED),
                                  int(SafetyMode.NORMAL), "idle", None, "none", 0, 0, 0)
        self._stop_event = threading.Event()
        self._thread: threading.Thread | None = None
        #: the robot answered and refused this configuration (BackendConfigurationError): the loop has ended
        self.configuration_fault: str | None = None
        self._cycle_starts = np.full(timing_window, np.nan)
        self._cycle_lateness = np.full(timing_window, np.nan)  # start - deadline (s)
        #: how far behind the loop may fall before it stops catching up (s)
        self.max_lag_s = 0.25
        self._last_sample_stamp: float | None = None
        self._cycle_count = 0
        self._pending_protective_stop: str | None = None
        self._pending_unlock = False
        self._restart_requested = False  # request_program_restart(), taken at the next program stop check
        self._saw_safety_stop = False  # a protective/emergency stop since the last upload: its unlock restarts

    # ---- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Start the loop thread (connects to the robot inside it)."""
        if self._thread is not None:
            raise RuntimeError("RobotLoop already started")
        self._thread = threading.Thread(target=self._run, name="robot_loop", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the arm, end the loop and disconnect. Safe to call more than once."""
        self._stop_event.set()
        abort = getattr(self.backend, "abort", None)
        if abort is not None:
            # A connection attempt in progress (the first, or a reconnection after a fault) gives up at once.
            abort()
        if self._thread is not None:
            self._thread.join(timeout_s)
        self._set_status(state=LoopState.STOPPED)

    # ---- commands (any thread) ----------------------------------------------------------------
    def submit_velocity(self, qd_rad_s, acceleration_rad_s2: float | None = None) -> GuardedCommand:
        """Queue a joint-velocity command as the newest one; raises :class:`CommandRejected`."""
        return self._submit("velocity", qd_rad_s, acceleration_rad_s2)

    def submit_torque(self, torque_nm) -> GuardedCommand:
        """Queue a joint-torque command as the newest one; raises :class:`CommandRejected`."""
        if not self.backend.supports_torque:
            self._count_rejection()
            raise CommandRejected(
                "this robot does not accept torque commands (CB3 UR3, or e-Series before PolyScope 5.23); "
                "send joint velocities on /forward_velocity_controller/commands instead"
            )
        return self._submit("torque", torque_nm, None)

    def request_stop(self, reason: str = "stop requested", *, report: bool = True) -> None:
        """Bring the arm to rest and drop any pending command; ``report``: emit ``reason`` as an info event."""
        with self._lock:
            self._slot = _CommandSlot("stop", np.zeros(0), None, self._clock())
        if report:
            self._emit("info", reason)

    def protective_stop(self, reason: str) -> None:
        """Protective stop through the backend (a speed stop where it has none), drop every command and fault
        with ``reason``; the robot's own protective stop then keeps the loop in fault until it is unlocked.
        Loop thread only (the cycle monitor's path); other threads use :meth:`request_protective_stop`."""
        try:
            self.backend.protective_stop()
        except Exception:
            self._stop_arm_quietly()
        self._drop_commands()
        self._emit("error", f"{reason}; protective stop")
        self._set_status(state=LoopState.FAULT, fault=reason, mode="none", watchdog="idle")

    def request_protective_stop(self, reason: str) -> None:
        """Ask for a protective stop at the next cycle (any thread; e.g. a collision monitor beside the loop)."""
        self._pending_protective_stop = reason

    def request_unlock_protective_stop(self) -> None:
        """Ask the robot to leave its protective stop at the next cycle (any thread; the result is an event)."""
        self._pending_unlock = True

    def request_program_restart(self) -> bool:
        """Upload the control script again after a program stop (any thread): the operator's decision, never
        the loop's. False (and nothing done) when no program stop holds the loop."""
        if self._status.fault != PROGRAM_STOPPED:
            return False
        self._restart_requested = True
        return True

    def run_cycles(self, count: int) -> None:
        """Connect if needed, then run ``count`` cycles in the calling thread without waiting for deadlines.

        For a simulated robot whose clock is the only clock (give the loop ``clock=`` the plant's time):
        scenarios and benchmarks run the real loop faster than real time. Not for a loop that was
        :meth:`start` ed. A failing cycle faults the loop as in its thread, then raises BackendError."""
        if self._thread is not None:
            raise RuntimeError("run_cycles drives a loop that was not started; this one runs in its thread")
        if not self._status.connected:
            self.backend.connect()
            self._latest = self.backend.read()
            self._drop_commands()
            self._set_status(state=LoopState.READY, connected=True, fault=None, mode="none")
        for _ in range(int(count)):
            try:
                self._cycle(self._clock())
            except Exception as exc:
                reason = str(exc) if isinstance(exc, BackendError) else f"{type(exc).__name__}: {exc}"
                self._fault(f"robot loop error: {reason}")
                self._set_status(connected=False)
                raise BackendError(reason) from exc

    def _submit(self, kind: str, values, acceleration) -> GuardedCommand:
        latest = self._latest
        status = self._status
        if status.state not in (LoopState.READY, LoopState.MOVING) or latest is None:
            self._count_rejection()
            fault = f" ({status.fault})" if status.fault else ""
            raise CommandRejected(f"robot not ready: state is {status.state}{fault}; command ignored")
        try:
            if kind == "velocity":
                guarded = self.guard.guard_velocity(values, q_rad=latest.q_rad, acceleration_rad_s2=acceleration)
            else:
                guarded = self.guard.guard_torque(values, q_rad=latest.q_rad, qd_rad_s=latest.qd_rad_s)
        except CommandRejected as exc:
            # A refused command also stops the arm: the sender is misbehaving. The caller reports it (one
            # line per refusal, not two; a flood of bad commands is throttled there).
            self._count_rejection()
            self.request_stop(f"command refused, arm stopped: {exc.reason}", report=False)
            raise CommandRejected(f"{exc.reason}; arm stopped") from None
        now = self._clock()
        with self._lock:
            self._slot = _CommandSlot(kind, np.asarray(values, float).copy(), acceleration, now)
            self.guard.feed_watchdog(now)
        return guarded

    def _count_rejection(self) -> None:
        with self._status_lock:
            self._status = replace(self._status, rejected_commands=self._status.rejected_commands + 1)

    # ---- observation (any thread) -------------------------------------------------------------------
    @property
    def status(self) -> LoopStatus:
        # The cycle count lives outside the status (an immutable snapshot): replacing the snapshot every
        # cycle cost the loop more than its readers (10-100 Hz) pay for this.
        with self._status_lock:
            status = self._status
        return status if status.cycles == self._cycles else replace(status, cycles=self._cycles)

    @property
    def latest_state(self) -> RobotState | None:
        return self._latest

    def cycle_starts_s(self, newest: int | None = None) -> np.ndarray:
        """Start times (the loop clock, s) of the newest ``newest`` cycles (default: the whole timing window),
        oldest first."""
        return self._cycle_starts[self._window_index(newest)]

    def cycle_lateness_s(self, newest: int | None = None) -> np.ndarray:
        """How long after its deadline each of the newest ``newest`` cycles started (s), oldest first; a cycle
        more than one period late counts in :attr:`LoopStatus.late_cycles`."""
        return self._cycle_lateness[self._window_index(newest)]

    def _window_index(self, newest: int | None) -> np.ndarray:
        count = min(self._cycle_count, self._cycle_starts.size)
        if newest is not None:
            count = min(count, max(0, int(newest)))
        return np.arange(self._cycle_count - count, self._cycle_count) % self._cycle_starts.size

    def period_errors_s(self, newest: int | None = None) -> np.ndarray:
        """Deviation of each measured cycle period from the nominal one (s), for the newest ``newest`` periods
        (default: the whole timing window), oldest first."""
        starts = self.cycle_starts_s(None if newest is None else int(newest) + 1)
        if starts.size < 2:
            return np.zeros(0)
        return np.diff(starts) - self.period_s

    # ---- internals --------------------------------------------------------------------------------------
    def _emit(self, level: str, message: str) -> None:
        if self._on_event is not None:
            try:
                self._on_event(level, message)
            except Exception:  # a reporting failure must never stop the robot loop
                pass

    def _set_status(self, **changes) -> None:
        # The loop thread and the command callbacks both update the status: without the lock one of two
        # concurrent updates was lost (a refusal counted by a callback, overwritten by the cycle's update).
        with self._status_lock:
            self._status = replace(self._status, **changes)

    def _stop_arm_quietly(self) -> None:
        try:
            if self.backend.is_connected():
                self.backend.speed_stop(self.guard.stopping_deceleration())
        except Exception:
            pass

    def _drop_commands(self) -> None:
        with self._lock:
            self._slot = None
            self._active = None
            self.guard.disarm_watchdog()

    def _fault(self, message: str) -> None:
        self._stop_arm_quietly()
        self._drop_commands()
        if self._status.fault != message:
            self._emit("error", f"{message}; arm stopped")
        self._set_status(state=LoopState.FAULT, fault=message, mode="none", watchdog="idle")

    def _connect_with_backoff(self) -> bool:
        attempt = 0
        while not self._stop_event.is_set():
            try:
                self.backend.connect()
                self._latest = self.backend.read()
                self._drop_commands()
                self._set_status(state=LoopState.READY, connected=True, fault=None, mode="none")
                notes = getattr(self.backend, "notes", None)
                while notes:  # what the backend found while connecting (e.g. a rate below the controller's)
                    self._emit("warn", notes.pop(0))
                self._emit("info", "robot connected and ready")
                return True
            except BackendConfigurationError as exc:  # the robot answered and refused this configuration
                self.configuration_fault = f"cannot use the robot as configured: {exc}"
                self._fault(self.configuration_fault)
                return False
            except Exception as exc:
                wait = self._backoff[min(attempt, len(self._backoff) - 1)]
                message = f"cannot reach the robot ({exc}); retrying in {wait:.1f} s"
                if self._status.fault != message:
                    self._emit("warn", message)
                self._set_status(state=LoopState.CONNECTING, connected=False, fault=str(exc))
                attempt += 1
                self._stop_event.wait(wait)
        return False

    def _robot_problem(self, state: RobotState) -> str | None:
        if state.safety_mode not in (int(SafetyMode.NORMAL), int(SafetyMode.REDUCED)):
            try:
                name = SafetyMode(state.safety_mode).name
            except ValueError:
                name = str(state.safety_mode)
            return f"safety mode {name}: clear it on the teach pendant or dashboard (unlock protective stop)"
        if state.robot_mode != int(RobotMode.RUNNING):
            try:
                name = RobotMode(state.robot_mode).name
            except ValueError:
                name = str(state.robot_mode)
            return f"robot mode {name}: power on and release the brakes"
        if not state.program_running:
            return "control script not running on the controller"
        return None

    def _use_realtime_scheduling(self) -> None:
        if self.realtime_priority <= 0:
            return
        import os

        try:  # pid 0: this thread only
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.realtime_priority))
            self._emit("info", f"robot loop runs SCHED_FIFO priority {self.realtime_priority}")
        except (OSError, AttributeError) as exc:
            self._emit("warn", f"robot loop keeps normal scheduling: SCHED_FIFO refused ({exc}); allow it with "
                               "'ulimit -r 99' / an rtprio limit in /etc/security/limits.conf, or set "
                               "realtime_priority: 0")

    def _run(self) -> None:
        set_os_thread_name("robot_loop")
        self._use_realtime_scheduling()
        if not self._connect_with_backoff():
            return
        deadline = self._clock()
        while not self._stop_event.is_set():
            start = self._clock()
            lateness = start - deadline
            self._cycle_starts[self._cycle_count % self._cycle_starts.size] = start
            self._cycle_lateness[self._cycle_count % self._cycle_starts.size] = lateness
            self._cycle_count += 1
            if lateness > self.period_s:
                # Behind (the OS did not run us). A real controller kept its own time meanwhile and only its
                # newest sample is left: skip the deadlines already missed and go on in step with it. A
                # simulated robot steps once per cycle: catch up cycle by cycle so that it keeps wall-clock
                # time; give up and resynchronise past max_lag_s.
                if self.backend.robot_keeps_time:
                    missed = int(lateness // self.period_s)
                    deadline += missed * self.period_s
                    self._set_status(late_cycles=self._status.late_cycles + 1,
                                     skipped_cycles=self._status.skipped_cycles + missed)
                else:
                    self._set_status(late_cycles=self._status.late_cycles + 1)
                    if lateness > self.max_lag_s:
                        deadline = start
            try:
                self._cycle(start)
            except Exception as exc:  # BackendError or anything unexpected: stop, report, reconnect
                reason = str(exc) if isinstance(exc, BackendError) else f"{type(exc).__name__}: {exc}"
                self._fault(f"robot loop error: {reason}")
                self._set_status(connected=False)
                if not self._connect_with_backoff():
                    break
                deadline = self._clock()
                continue
            deadline += self.period_s
            delay = deadline - self._clock()
            if delay > 0:
                time.sleep(delay)
        self._stop_arm_quietly()
        try:
            self.backend.disconnect()
        except Exception:
            pass
        self._set_status(state=LoopState.STOPPED, connected=False)

    def _cycle(self, now: float) -> None:
        backend = self.backend
        state = backend.read()
        self._latest = state
        problem = self._robot_problem(state)
        if state.safety_mode not in (int(SafetyMode.NORMAL), int(SafetyMode.REDUCED)):
            self._saw_safety_stop = True
        if problem is not None and not state.program_running and state.safety_mode == int(SafetyMode.NORMAL) \
                and state.robot_mode == int(RobotMode.RUNNING):
            # The control script stopped while the robot is fine. After an unlocked protective stop, on the
            # operator's request, or by the RTDE watchdog while this PC stalled, reconnecting uploads it again;
            # otherwise it was stopped on purpose as far as the loop can tell (pendant, dashboard): it stays so.
            starved = getattr(backend, "watchdog_starved_s", lambda: None)()  # this PC stalled: the RTDE watchdog
            if self._saw_safety_stop or self._restart_requested or starved:
                restart = self._restart_requested
                self._saw_safety_stop = self._restart_requested = False
                raise BackendError("control script restarted on request" if restart else
                                   f"the controller's RTDE watchdog stopped the program: this PC sent nothing for "
                                   f"{starved * 1e3:.0f} ms" if starved else "control script not running")
            problem = PROGRAM_STOPPED
        if problem is not None:
            self._fault(problem)
        elif self._status.state == LoopState.FAULT:
            self._drop_commands()
            self._set_status(state=LoopState.READY, fault=None)
            self._emit("info", "fault cleared; ready (waiting for a new command)")

        fresh = state.timestamp_s != self._last_sample_stamp
        # Without a collision monitor and no stop/unlock request, this costs three attribute reads (issue 14).
        if self._cycle_monitor is not None or self._pending_protective_stop is not None or self._pending_unlock:
            self._monitor_cycle(state, fresh)
        if self._status.state in (LoopState.READY, LoopState.MOVING):
            if self._cycle_controller is not None and fresh:
                self._run_cycle_controller(state)
            self._command(state, now, fresh)
        # A real controller may not have produced a new sample since the last read.
        if self._on_sample is not None and state.timestamp_s != self._last_sample_stamp:
            self._last_sample_stamp = state.timestamp_s
            self._on_sample(state)
        backend.end_cycle()
        self._cycles += 1
        status = self._status
        if (status.robot_mode, status.safety_mode, status.connected) != (state.robot_mode, state.safety_mode, True):
            self._set_status(robot_mode=state.robot_mode, safety_mode=state.safety_mode, connected=True)

    def _monitor_cycle(self, state: RobotState, fresh: bool) -> None:
        """Unlock / protective-stop requests from other threads, then the cycle monitor on a fresh sample."""
        if self._pending_unlock:
            self._pending_unlock = False
            try:
                self.backend.unlock_protective_stop()
                self._emit("info", "protective stop unlocked")
            except BackendError as exc:
                self._emit("warn", f"unlock protective stop refused: {exc}")
        stop_reason, self._pending_protective_stop = self._pending_protective_stop, None
        if self._cycle_monitor is not None and fresh:
            stop_reason = self._cycle_monitor(state) or stop_reason
        if stop_reason and self._status.state in (LoopState.READY, LoopState.MOVING):
            self.protective_stop(stop_reason)

    def _run_cycle_controller(self, state: RobotState) -> None:
        command = self._cycle_controller(state)
        if command is None:
            return
        if command.kind == "stop":
            if self._active is not None or self._slot is not None:
                self.request_stop(command.reason or "controller stopped")
            return
        if command.kind == "torque" and not self.backend.supports_torque:
            self._count_rejection()
            self._emit("error", "controller command refused: this robot does not accept torque commands")
            return
        # Straight into the slot: _command() guards it this same cycle (guarding here too would do it twice).
        now = self._clock()
        with self._lock:
            self._slot = _CommandSlot(command.kind, np.asarray(command.values, float).copy(), None, now,
                                      from_cycle=True)
            self.guard.feed_watchdog(now)

    def _command(self, state: RobotState, now: float, fresh: bool = True) -> None:
        with self._lock:
            slot, self._slot = self._slot, None
            if slot is not None:
                self._active = None if slot.kind == "stop" else slot
                if slot.kind == "stop":  # nothing is pending any more: a finished trajectory is not a silent sender
                    self.guard.disarm_watchdog()
            active = self._active
            # The cycle controller commands once per fresh sample: without one the stream is late, not the controller
            expired = self.guard.watchdog_expired(now) and (fresh or active is None or not active.from_cycle)
            if expired:
                self._active = None
                self.guard.disarm_watchdog()
        if slot is not None and slot.kind == "stop":
            self.backend.speed_stop(self.guard.stopping_deceleration())
            self._set_status(state=LoopState.READY, mode="none", watchdog="idle")
            return
        if expired:
            self.backend.speed_stop(self.guard.stopping_deceleration())
            self._set_status(state=LoopState.READY, mode="none", watchdog="expired")
            silent = f"no command for {self.guard.watchdog_s * 1000:.0f} ms"
            if active is not None and active.kind == "velocity" and not np.any(active.values):
                # a stream that ended on zero velocity (an excitation's normal finish) is not a fault
                self._emit("info", f"velocity commands ended at zero ({silent}); idle")
            else:
                self._emit("warn", f"watchdog: {silent}; arm stopped")
            return
        if active is None:
            return
        try:
            if active.kind == "velocity":
                # Re-guarded every cycle: the position-limit bound depends on where the arm is now.
                cmd = self.guard.guard_velocity(active.values, q_rad=state.q_rad,
                                                acceleration_rad_s2=active.acceleration_rad_s2)
                self.backend.speed_j(cmd.values, cmd.acceleration_rad_s2)
            else:
                cmd = self.guard.guard_torque(active.values, q_rad=state.q_rad, qd_rad_s=state.qd_rad_s)
                self.backend.direct_torque(cmd.values)
        except CommandRejected as exc:
            with self._lock:
                self._active = None
                self.guard.disarm_watchdog()
            self.backend.speed_stop(self.guard.stopping_deceleration())
            self._emit("error", f"command stopped: {exc.reason}")
            self._set_status(state=LoopState.READY, mode="none")
            return
        if self._on_command is not None:
            self._on_command(state, active.kind, cmd.values)
        status = self._status
        if status.state != LoopState.MOVING or status.mode != active.kind or status.watchdog != "armed":
            self._set_status(state=LoopState.MOVING, mode=active.kind, watchdog="armed")
