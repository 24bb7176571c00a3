"""A real UR controller (or the local stand-in, ``rdi sim-controller``) through the ur_rtde client.

Uses ``rtde_receive.RTDEReceiveInterface`` (in this process) for the state and
``rtde_control.RTDEControlInterface`` for speedJ / speedStop / directTorque and
the controller-side watchdog. Every ur_rtde failure is turned into
:class:`BackendError` whose message says what to check on the robot.

Why the control interface runs in a child process
--------------------------------------------------
Tested against the stand-in controller with ur_rtde 1.6.5:

* When its RTDE connection drops and the controller is reachable again at once,
  ``RTDEControlInterface``'s receive thread reconnects by itself, starts a
  second receive thread, and keeps reconnecting (its ``should_reconnect`` flag
  is never reset); the threads then read the same socket and the process
  aborts (``malloc(): corrupted top size``, segmentation fault) or hangs in
  ``disconnect()``. Calling ``reconnect()`` from another thread meanwhile makes
  it worse.
* The binding holds the GIL while it blocks (connecting, waiting for the control
  script's "done"), freezing every other thread of the node.

So the control interface lives in a small child process
(:mod:`~robot_dynamics_id.hardware.rtde_control_proxy`) fed through a
pipe: commands are fire-and-forget messages, the child coalesces a backlog to
the newest real-time command (a stale command is never replayed), and a child
that dies, hangs or reports an error is killed and replaced on the next
:meth:`RtdeBackend.connect`. The receive interface has no auto-reconnect (its
thread ends on a drop), so it stays in-process and is reconnected explicitly.

A dashboard connection (29999) is kept open as a second way to stop the arm:
when the RTDE connection breaks, the stream stalls or the control process dies,
``stop`` is sent there at once (the controller stops the program and the arm),
instead of waiting for the controller-side RTDE watchdog.

Never hanging on a controller that does not answer
--------------------------------------------------
The receive interface's constructor and ``reconnect()`` wait on the network
while holding the GIL, two of those waits without a timeout: a peer that
accepts TCP on 30004 and never replies froze the whole node, signals
included (issue 16). Every connection attempt therefore starts with
:func:`~robot_dynamics_id.hardware.rtde_probe.probe_rtde`, the same handshake
in Python with a deadline (``answer_timeout_s``) that a stopping loop can cut
short; a controller that does not answer is reported within that time and
the loop retries with back-off. The ur_rtde calls that may still block are
bounded by :func:`~robot_dynamics_id.hardware.rtde_probe.bounded_native_call`
(``native_call_bound_s``: the process ends with status 1 past it, the only
way out of a native call that holds the GIL). ``disconnect()`` is not called
on a controller whose stream has stalled (it waits up to 2.5 s for the
pause reply); such an interface is retired without it.

Other client facts this backend relies on (also verified against the stand-in):
the receive getters return the last cached sample forever after a drop or a
stall, so :meth:`RtdeBackend.read` checks ``isConnected()`` and that the
timestamp advances; after a protective stop or an RTDE watchdog stop the control
script is not running and every command returns False until a new script is
uploaded (a fresh control interface does that).
"""

from __future__ import annotations

import atexit
import math
import socket
import time
import weakref

import numpy as np

from ..robot_state import RobotState, SafetyMode
from .backend import BackendConfigurationError, BackendError, RobotBackend
from .rtde_control_proxy import (OP_DIRECT_TORQUE, OP_KICK, OP_PROTECTIVE_STOP, OP_SPEED_STOP, OP_SPEEDJ,
                                 OP_STOP_SCRIPT, ControlProxy)
from .rtde_probe import ControllerVersion, bounded_native_call, probe_rtde

__all__ = ["RtdeBackend"]

# RTDE fields the receive interface subscribes to (names from the UR RTDE guide).
_RECEIVE_VARIABLES = [
    "timestamp", "actual_q", "actual_qd", "actual_current", "target_current", "target_moment",
    "actual_TCP_force", "robot_mode", "safety_mode", "runtime_state",
]
#: what ur_rtde's message says when the RTDE input registers are held by someone else (IN_USE)
_REGISTERS_HELD = ("IN_USE", "EtherNet/IP", "PROFINET", "MODBUS")
#: words of ur_rtde's errors when the robot stopped answering (its reconnect attempt reads "Timeout connecting to UR
#: dashboard server" even for the script port): said as a lost connection, ur_rtde's text kept after it
_CONNECTION_LOST = ("Timeout connecting", "Broken pipe", "Connection reset", "Connection refused", "not connected",
                    "End of file")
#: RTDE runtime_state while a program runs
_RUNTIME_PLAYING = 2


class RtdeBackend(RobotBackend):
    """UR controller over RTDE (the controller keeps time: the loop skips the cycles it could not run in time).

    Args:
        robot_ip: controller address (a lab robot, or 127.0.0.1 for the stand-in).
        rate_hz: RTDE rate; 125 for CB3, 500 for e-Series.
        supports_torque: send direct_torque (e-Series, PolyScope >= 5.23) when asked.
        controller_watchdog_hz: ur_rtde ``setWatchdog`` minimum command frequency; the
            controller stops the arm if the client goes silent longer than 1/f.
        stale_after_s: the data stream counts as stalled when the robot timestamp has not
            advanced for this long (and for half as many reads as controller periods in that
            time); default 25 controller periods, at least 0.2 s (a loaded machine can pause a
            process for 100 ms).
        connect_timeout_s: how long one connection attempt may wait for the first data and for
            the control script to run.
        answer_timeout_s: the RTDE handshake probe must complete within this: a controller that does not
            answer is reported after it (a UR controller answers in milliseconds).
        native_call_bound_s: a ur_rtde call that blocks holding the GIL longer than this ends the process
            (status 1, stacks on stderr): nothing else can interrupt it.
        realtime_priority: SCHED_FIFO priority (1-99; 0: normal scheduling) of ur_rtde's receive threads and
            of the whole control process, as ur_rtde's ``rt_priority``; ignored where not permitted. Give the
            robot loop thread the same (RobotLoop ``realtime_priority``).
        sample_wait_s: when :meth:`read` finds no sample newer than the one it returned last, how long it
            waits for one (default: half a controller period; 0: never wait). A loop and a stream that
            both run at 500 Hz on different clocks alias: a sample that lands just after the loop's
            wake-up would be read late, so the next read finds two new ones and one is never seen
            (measured: 6 % of the samples on a loaded machine, ``benchmarks/bench_rtde_soak.py
            --no-sample-wait``). Half a period, not a whole one: a loop catching up after a delay must
            still gain on its schedule with every cycle.
    """

    robot_keeps_time = True

    def __init__(
        self,
        *,
        robot_ip: str,
        rate_hz: float = 500.0,
        supports_torque: bool = False,
        controller_watchdog_hz: float = 10.0,
        viscous_scale: tuple[float, ...] = (0.9, 0.9, 0.8, 0.9, 0.9, 0.9),
        coulomb_scale: tuple[float, ...] = (0.8, 0.8, 0.7, 0.8, 0.8, 0.8),
        stale_after_s: float | None = None,
        connect_timeout_s: float = 15.0,
        sample_wait_s: float | None = None,
        realtime_priority: int = 0,
        answer_timeout_s: float = 1.5,
        native_call_bound_s: float = 5.0,
    ) -> None:
        self.robot_ip = robot_ip
        self.rate_hz = float(rate_hz)
        self.supports_torque = bool(supports_torque)
        self.controller_watchdog_hz = float(controller_watchdog_hz)
        self._viscous_scale = [float(v) for v in viscous_scale]
        self._coulomb_scale = [float(v) for v in coulomb_scale]
        self.stale_after_s = max(0.2, 25.0 / self.rate_hz) if stale_after_s is None else float(stale_after_s)
        self.connect_timeout_s = float(connect_timeout_s)
        self.answer_timeout_s = float(answer_timeout_s)
        self.native_call_bound_s = float(native_call_bound_s)
        #: the controller's software version, from the last successful handshake
        self.controller_version: ControllerVersion | None = None
        #: warnings found while connecting, for the robot loop to report once (then cleared)
        self.notes: list[str] = []
        self._connected_once = False
        self._last_send_s = -math.inf  # monotonic time of the last write to the control script
        self._longest_gap = (-math.inf, 0.0)  # (when it ended, the longest time between writes), s
        self.realtime_priority = max(0, int(realtime_priority))
        self.sample_wait_s = 0.5 / self.rate_hz if sample_wait_s is None else max(0.0, float(sample_wait_s))
        #: reads that had to wait for the sample / that gave up waiting (diagnostics for the soak benchmark)
        self.sample_waits = 0
        self.sample_wait_timeouts = 0
        self._receive = None
        self._proxy: ControlProxy | None = None
        self._last_stamp: float | None = None
        self._last_fresh_s = 0.0
        self._stale_reads = 0
        self._stale_reads_limit = max(2, int(0.5 * self.stale_after_s * self.rate_hz))
        self._dashboard: socket.socket | None = None
        self._stale_connects = 0
        self._commanded_this_cycle = False
        self._closing = False
        self._aborted = False
        _LIVE_BACKENDS.add(self)

    # ---- connection -------------------------------------------------------------------
    def connect(self) -> None:
        self._closing = False
        self._open_receive()
        try:
            state = self._wait_for_fresh_sample()
        except BackendError:
            # A reconnect that the controller cut short leaves the receive interface "connected"
            # without data; only another successful reconnect repairs it (ur_rtde 1.6.5).
            self._stale_connects += 1
            if self._stale_connects >= 2:
                try:
                    self._probe()
                    with bounded_native_call(self.native_call_bound_s):
                        self._receive.reconnect()
                except (RuntimeError, BackendError):
                    pass
            raise
        self._stale_connects = 0
        if state.safety_mode not in (int(SafetyMode.NORMAL), int(SafetyMode.REDUCED)):
            raise BackendError(f"the robot is in safety mode {state.safety_mode} (3 = protective stop): unlock it "
                               "on the teach pendant or the dashboard ('unlock protective stop')")
        proxy = self._proxy
        if proxy is None or not proxy.alive() or not state.program_running:
            # a fresh control interface (re-)uploads the control script
            self._drop_proxy()
            proxy = ControlProxy(self.robot_ip, self.rate_hz, self.controller_watchdog_hz, self.realtime_priority)
            self._proxy = proxy
            deadline = time.monotonic() + self.connect_timeout_s
            while not proxy.ready.wait(0.05) and time.monotonic() < deadline:
                self._check_closing()
            if not proxy.ready.is_set() or not proxy.alive():
                reason = proxy.error or f"no answer within {self.connect_timeout_s:g} s"
                self._drop_proxy()
                message = f"cannot start the ur_rtde control interface on {self.robot_ip}: {reason}"
                if any(word in reason for word in _REGISTERS_HELD):
                    message += (". Another RTDE client may hold them: only one program may command the robot "
                                "(a second ur_interface, or osc_controller with robot_connection direct, on this "
                                "or another PC)")
                    if not self._connected_once:  # held from the start: another client, not our own reconnection
                        raise BackendConfigurationError(message)
                raise BackendError(message)
        self._wait_for_program()
        self._connected_once = True
        self._last_send_s, self._longest_gap = time.monotonic(), (-math.inf, 0.0)  # a new script: a new watchdog
        self._last_stamp = None
        self._stale_reads = 0
        self._open_dashboard()

    def _probe(self) -> ControllerVersion:
        """The RTDE handshake with a deadline (see the module docstring); raises BackendError naming the step."""
        self._check_closing()
        version = probe_rtde(self.robot_ip, fields=_RECEIVE_VARIABLES, frequency_hz=self.rate_hz,
                             timeout_s=self.answer_timeout_s, should_stop=lambda: self._closing or self._aborted)
        if version.is_cb3 and self.rate_hz > 125.0:
            raise BackendConfigurationError(f"the controller at {self.robot_ip} is a CB3 (software {version}), whose "
                                            f"RTDE runs at 125 Hz, but rate_hz is {self.rate_hz:g}: set rate_hz: 125")
        if self.supports_torque and (version.major, version.minor) < (5, 23):
            # an older controller runs a script whose direct_torque is a no-op: the arm would not be controlled
            raise BackendConfigurationError(
                f"supports_torque is set, but the controller at {self.robot_ip} runs software {version}: direct_torque "
                "needs an e-Series with PolyScope 5.23 or later. Set supports_torque: false and use velocity "
                "commands (osc_controller: output_mode velocity, force_source estimated)")
        if not version.is_cb3 and self.rate_hz < 500.0 and self.controller_version is None:
            # allowed (e.g. a deliberate 125 Hz set-up), but usually a CB3 configuration used on an e-Series
            self.notes.append(f"the controller at {self.robot_ip} is an e-Series (software {version}), whose RTDE "
                              f"runs at 500 Hz, but rate_hz is {self.rate_hz:g}: set rate_hz: 500 unless this rate "
                              "is meant (a CB3's parameter file?)")
        self.controller_version = version
        return version

    def _open_receive(self) -> None:
        """Create (or reconnect) the receive interface, only after the controller answered the probe."""
        import rtde_receive

        self._probe()
        try:
            # ur_rtde holds the GIL while it connects: bounded, see rtde_probe.bounded_native_call
            with bounded_native_call(self.native_call_bound_s):
                if self._receive is None:
                    self._receive = rtde_receive.RTDEReceiveInterface(
                        self.robot_ip, self.rate_hz, _RECEIVE_VARIABLES, False, False, self.realtime_priority)
                elif not self._receive.isConnected():
                    # safe: the receive interface's own thread has ended when it reports disconnected
                    self._receive.reconnect()
        except RuntimeError as exc:
            self._drop_proxy()
            raise BackendError(
                f"cannot connect to the UR controller at {self.robot_ip}: {exc}. Check that the robot is "
                "powered on, in remote control (e-Series), reachable on the network, and that no other "
                "program holds the RTDE input registers (IN_USE)"
            ) from exc

    def abort(self) -> None:
        """Make a :meth:`connect` running in another thread give up soon (for a loop that is stopping)."""
        self._aborted = True

    def _check_closing(self) -> None:
        if self._closing or self._aborted:
            raise BackendError("the RTDE backend is shutting down")

    def _wait_for_fresh_sample(self) -> RobotState:
        """The first sample whose timestamp is new, or BackendError after connect_timeout_s."""
        r = self._receive
        first = float(r.getTimestamp())
        deadline = time.monotonic() + min(self.connect_timeout_s, max(1.0, 5 * self.stale_after_s))
        while time.monotonic() < deadline:
            self._check_closing()
            if float(r.getTimestamp()) != first:
                return self._state()
            time.sleep(0.002)
        raise BackendError(f"connected to {self.robot_ip} but no RTDE data arrives (stream stalled)")

    def _wait_for_program(self) -> None:
        deadline = time.monotonic() + self.connect_timeout_s
        while time.monotonic() < deadline:
            self._check_closing()
            if self._state().program_running:
                return
            time.sleep(0.01)
        raise BackendError(f"the control script is not running on {self.robot_ip}")

    # ---- the dashboard as a second way to stop the arm ------------------------------------------------
    def _open_dashboard(self) -> None:
        """Keep a dashboard connection (port 29999) so the arm can be stopped when RTDE breaks."""
        self._close_dashboard()
        try:
            sock = socket.create_connection((self.robot_ip, 29999), timeout=1.0)
            sock.settimeout(1.0)
            sock.recv(256)  # the welcome line
            sock.setblocking(False)
            self._dashboard = sock
        except OSError:
            self._dashboard = None  # optional: RTDE stays the primary path

    def _close_dashboard(self) -> None:
        sock, self._dashboard = self._dashboard, None
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def _dashboard_stop(self) -> None:
        """Stop the program (and so the arm) through the dashboard; never blocks, never raises."""
        sock = self._dashboard
        if sock is None:
            return
        try:
            sock.send(b"stop\n")
        except OSError:
            self._close_dashboard()

    def _drop_proxy(self) -> None:
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            proxy.kill()

    def disconnect(self) -> None:
        self._closing = True  # a connect() in progress in another thread gives up
        proxy, self._proxy = self._proxy, None
        if proxy is not None:
            try:
                if proxy.alive():
                    proxy.send(OP_STOP_SCRIPT)  # ends the program: the controller stops the arm
            except BackendError:
                pass
            proxy.close()
        self._close_dashboard()
        receive, self._receive = self._receive, None
        if receive is not None:
            _retire_receive_interface(receive, wait_s=4.0 / self.rate_hz, bound_s=self.native_call_bound_s)

    def is_connected(self) -> bool:
        try:
            return bool(self._proxy is not None and self._proxy.alive() and self._proxy.ready.is_set()
                        and self._receive is not None and self._receive.isConnected())
        except RuntimeError:
            return False

    # ---- cycle --------------------------------------------------------------------------
    def _state(self) -> RobotState:
        r = self._receive
        try:
            return RobotState(
                timestamp_s=float(r.getTimestamp()),
                q_rad=np.array(r.getActualQ()),
                qd_rad_s=np.array(r.getActualQd()),
                current_a=np.array(r.getActualCurrent()),
                target_current_a=np.array(r.getTargetCurrent()),
                target_moment_nm=np.array(r.getTargetMoment()),
                tcp_wrench_base=np.array(r.getActualTCPForce()),
                robot_mode=int(r.getRobotMode()),
                safety_mode=int(r.getSafetyMode()),
                program_running=int(r.getRuntimeState()) == _RUNTIME_PLAYING,
            )
        except RuntimeError as exc:
            raise BackendError(f"lost the RTDE data stream from {self.robot_ip}: {exc}") from exc

    def read(self) -> RobotState:
        r = self._receive
        if r is None:
            raise BackendError("RTDE receive interface is not connected")
        if not r.isConnected():
            self._dashboard_stop()
            self._drop_proxy()  # its connection broke too; its auto-reconnect must not run on
            raise BackendError(f"lost the RTDE connection to {self.robot_ip}")
        proxy = self._proxy
        if proxy is None or not proxy.alive():
            self._dashboard_stop()
            reason = "not started" if proxy is None else proxy.error
            raise BackendError(f"the ur_rtde control connection to {self.robot_ip} failed: {reason}")
        if self.sample_wait_s > 0 and self._last_stamp is not None:
            self._wait_for_new_sample(r)
        state = self._state()
        now = time.monotonic()
        if state.timestamp_s != self._last_stamp:
            self._last_stamp = state.timestamp_s
            self._last_fresh_s = now
            self._stale_reads = 0
        else:
            # Stalled only if both the wall time and the number of reads say so: a process that was
            # not scheduled for a while must not mistake its own pause for a silent controller.
            self._stale_reads += 1
            if now - self._last_fresh_s > self.stale_after_s and self._stale_reads >= self._stale_reads_limit:
                self._dashboard_stop()  # commands may not get through either
                raise BackendError(f"the RTDE data stream from {self.robot_ip} stalled: no new sample for "
                                   f"{(now - self._last_fresh_s) * 1000:.0f} ms")
        # A stopped control script is reported in the state (program_running): the robot loop decides whether
        # to upload it again (connect) or to wait for the operator (robot_loop.PROGRAM_STOPPED).
        return state

    def _wait_for_new_sample(self, r) -> None:
        """Wait (at most ``sample_wait_s``) until the receive interface holds a sample newer than the last
        one read. Polls: ur_rtde 1.6.5 has no call that blocks until the next package arrives."""
        last = self._last_stamp
        try:
            if float(r.getTimestamp()) != last:
                return
            self.sample_waits += 1
            give_up = time.monotonic() + self.sample_wait_s
            # 100 us polls: a sample is picked up at most ~0.15 ms after it arrived (5 % of a 500 Hz period)
            while True:
                remaining = give_up - time.monotonic()
                if remaining <= 0:
                    self.sample_wait_timeouts += 1
                    return
                time.sleep(min(remaining, 1e-4))
                if float(r.getTimestamp()) != last:
                    return
        except RuntimeError:
            return  # read() reports the broken stream right after

    def _send(self, op: int, values=()) -> None:
        proxy = self._proxy
        if proxy is None:
            raise BackendError("RTDE control interface is not connected")
        if proxy.error is not None:
            if any(word.lower() in proxy.error.lower() for word in _CONNECTION_LOST):
                raise BackendError(f"lost the control connection to the robot at {self.robot_ip} (network cable, "
                                   f"robot powered off or rebooted; ur_rtde: {proxy.error})")
            raise BackendError(f"the ur_rtde control connection failed: {proxy.error}")
        proxy.send(op, values)
        now = time.monotonic()
        gap = now - self._last_send_s
        if gap > self._longest_gap[1] or now - self._longest_gap[0] > 2.0:
            self._longest_gap = (now, gap)
        self._last_send_s = now
        if op != OP_KICK:
            self._commanded_this_cycle = True

    def watchdog_starved_s(self) -> float | None:
        """How long this process sent the controller nothing, when that was longer than the controller's RTDE
        watchdog period within the last 2 s (then the watchdog, not an operator, stopped the program), else None.
        """
        if self.controller_watchdog_hz <= 0 or self._last_send_s == -math.inf:
            return None
        now = time.monotonic()
        recent = self._longest_gap[1] if now - self._longest_gap[0] < 2.0 else 0.0
        child = self._proxy.stalled if self._proxy is not None else None  # the control process's own gaps
        if child is not None and now - child[0] < 2.0:
            recent = max(recent, child[1])
        starved = max(recent, now - self._last_send_s)
        return starved if starved > 1.0 / self.controller_watchdog_hz else None

    def speed_j(self, qd_rad_s: np.ndarray, acceleration_rad_s2: float) -> None:
        # ur_rtde's default acceleration (0.5 rad/s²) is far too low for a velocity loop: always pass it.
        self._send(OP_SPEEDJ, [*qd_rad_s, acceleration_rad_s2])

    def speed_stop(self, deceleration_rad_s2: float) -> None:
        self._send(OP_SPEED_STOP, [deceleration_rad_s2])

    def direct_torque(self, torque_nm: np.ndarray) -> None:
        if not self.supports_torque:
            raise BackendError(
                "this robot is configured without torque control (CB3, or PolyScope < 5.23): "
                "use velocity commands, or set supports_torque: true for an e-Series robot"
            )
        self._send(OP_DIRECT_TORQUE, [*torque_nm, *self._viscous_scale, *self._coulomb_scale])

    def protective_stop(self) -> None:
        """ur_rtde triggerProtectiveStop; the dashboard's ``stop`` as well when the control connection is gone."""
        try:
            self._send(OP_PROTECTIVE_STOP)
        except BackendError:
            self._dashboard_stop()
            raise

    def unlock_protective_stop(self) -> None:
        """The dashboard's ``unlock protective stop`` (UR refuses it for 5 s after the stop; the reply says so)."""
        try:
            with socket.create_connection((self.robot_ip, 29999), timeout=2.0) as sock:
                sock.recv(256)  # the welcome line
                sock.sendall(b"unlock protective stop\n")
                reply = sock.recv(512).decode(errors="replace").strip()
        except OSError as exc:
            raise BackendError(f"cannot reach the dashboard of {self.robot_ip} (port 29999): {exc}") from exc
        if not reply.lower().startswith("protective stop releasing"):
            raise BackendError(f"the controller refused to unlock the protective stop: {reply}")

    def end_cycle(self) -> None:
        # Kick the controller's watchdog only in a cycle without a command. ur_rtde's kickWatchdog writes the
        # control script's command register, as speedJ / directTorque do (which feeds the watchdog too): a
        # kick right after a command lands in the same controller cycle, overwrites the command before the
        # script reads it, and the arm keeps executing the previous one (measured with the stand-in: joint 0
        # ran off to its position limit at a stale 0.27 rad/s once the loop was in step with the stream).
        commanded, self._commanded_this_cycle = self._commanded_this_cycle, False
        if self._proxy is not None and self.controller_watchdog_hz > 0 and not commanded:
            self._send(OP_KICK)


#: receive interfaces that could not be disconnected cleanly; kept alive on purpose (see below)
_UNDESTROYABLE: list = []
#: every backend, so that interpreter exit can release ur_rtde objects before Python tears down
_LIVE_BACKENDS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _release_at_exit() -> None:
    """Kill control processes and disconnect receive interfaces still open at exit.

    A node may exit while its robot loop thread is still inside :meth:`RtdeBackend.connect`; ur_rtde
    objects destroyed during interpreter teardown with their threads running abort the process."""
    for backend in list(_LIVE_BACKENDS):
        backend._closing = True
        proxy, backend._proxy = backend._proxy, None
        if proxy is not None:
            proxy.kill()
        backend._close_dashboard()
        receive, backend._receive = backend._receive, None
        if receive is not None:
            _retire_receive_interface(receive, wait_s=4.0 / backend.rate_hz, bound_s=backend.native_call_bound_s)
            _UNDESTROYABLE.append(receive)  # never destroyed during teardown either


def _retire_receive_interface(receive, *, wait_s: float, bound_s: float) -> None:
    """Disconnect a receive interface so that destroying it is safe, without waiting on a silent controller.

    ur_rtde 1.6.5 aborts the whole process (std::terminate, "write: Broken pipe") when an
    RTDEReceiveInterface is destroyed while it believes it is connected but the controller has
    gone; and its ``disconnect()`` waits up to 2.5 s (holding the GIL) for the reply to its pause
    request. So ``disconnect()`` is called only while data still arrives (a new timestamp within
    ``wait_s``); otherwise, or if it fails, the object is leaked deliberately: a small leak on an
    error path is better than a crash or a hang at shutdown.
    """
    try:
        if not receive.isConnected():
            return
        first = receive.getTimestamp()
        deadline = time.monotonic() + wait_s
        while receive.getTimestamp() == first and time.monotonic() < deadline:
            time.sleep(0.001)
        if receive.getTimestamp() != first:
            with bounded_native_call(bound_s):
                receive.disconnect()
            return
    except RuntimeError:
        pass
    import ctypes

    _UNDESTROYABLE.append(receive)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(receive))  # survives interpreter shutdown too
