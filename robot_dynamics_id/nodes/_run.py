"""Running a node process: one shutdown path for Ctrl-C/SIGTERM, configuration errors as exit code 2."""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time

import rclpy
from rclpy.task import Future
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

try:  # the exception rcl raises on unusable arguments (rclpy 3.x Humble to 9.x Kilted)
    from rclpy._rclpy_pybind11 import RCLError
except ImportError:  # pragma: no cover - a future rclpy that moves it
    RCLError = RuntimeError

from ..parameters import ParameterError

__all__ = ["EXIT_CANCELLED", "flush_publishers", "freeze_startup_objects", "make_executor", "raise_python_threads_priority", "run_node"]

#: SCHED_FIFO priority of a real-time node's other Python threads: below its robot loop, above ordinary processes
PYTHON_THREADS_PRIORITY = 1


def raise_python_threads_priority(logger, priority: int = PYTHON_THREADS_PRIORITY) -> bool:
    """Run the calling thread, and every thread it starts from now on, SCHED_FIFO ``priority``.

    A node's robot loop shares the GIL with the executor and the publishing threads. An ordinary process that
    preempts one of them while it holds the GIL stalls the loop until that thread runs again (priority
    inversion through the GIL). At SCHED_FIFO 1 they stay below the loop but are never preempted by ordinary
    processes. Called by nodes whose loop runs SCHED_FIFO (``realtime_priority`` > 0), before they start
    threads; says on ``logger`` what it did. False where not permitted (the node then runs as before)."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(priority)))
    except (OSError, AttributeError) as exc:
        logger.warning(f"executor threads keep normal scheduling ({exc})")
        return False
    logger.info(f"executor and publishing threads run SCHED_FIFO {priority}, below the robot loop (no GIL holder "
                "is preempted by ordinary processes)")
    return True


def freeze_startup_objects() -> None:
    """Collect once and move every object built so far out of the garbage collector's reach.

    Called by a node right before it starts its real-time loop: the first full collection after start-up
    walks everything imported and built (tens of ms holding the GIL) and would stall a loop already running.
    What start-up built lives as long as the process; later collections then skip it."""
    gc.collect()
    gc.freeze()


def make_executor(events: bool = True):
    """rclpy's EventsExecutor where this rclpy has it (Jazzy, Kilted) and ``events`` is set, else the
    SingleThreadedExecutor (Humble, or a node that asks for it).

    The events executor dispatches each message from C++ without rebuilding a wait set per callback: several
    times less CPU per message at the robot's 500 Hz (benchmarks/RESULTS.md, "CPU per robot second"). Nodes
    whose executor receives the 500 Hz streams (torque_logger, excitation) ask for it with a class attribute
    ``events_executor = True``. The robot-loop nodes do not: they publish the 500 Hz streams from their own
    thread, and with the EventsExecutor spinning beside a busy loop thread a late-joining subscriber of
    ur_interface's reliable ``~/status`` was seen to receive 1 message in 6 s (Kilted wheels 9.1.2, reproduced
    here; the SingleThreadedExecutor delivered all 58). rclpy's EventsExecutor also deadlocks when another
    thread creates an entity on a node it spins, so it is used only where every entity is created first.
    ``RDI_EXECUTOR=single`` in the environment forces the SingleThreadedExecutor (for comparisons)."""
    if not events or os.environ.get("RDI_EXECUTOR") == "single":
        return SingleThreadedExecutor()
    try:
        from rclpy.experimental import EventsExecutor
    except ImportError:
        return SingleThreadedExecutor()
    return EventsExecutor()


#: exit code of a job node (one with ``done``) stopped by a signal before its job finished
EXIT_CANCELLED = 6


def flush_publishers(publishers, timeout_s: float = 0.5) -> bool:
    """Wait (at most ``timeout_s`` in all) until every reliable subscriber acknowledged what was published.

    A node's last messages (the excitation's final zero velocity, ur_interface's last joint states) are
    otherwise lost when the process exits right after publishing them: DDS drops what is not yet
    acknowledged when the writer goes. True if all were acknowledged in time."""
    from rclpy.duration import Duration

    deadline = time.monotonic() + timeout_s
    acknowledged = True
    for publisher in publishers:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            acknowledged = publisher.wait_for_all_acked(Duration(nanoseconds=int(remaining * 1e9))) and acknowledged
        except Exception:  # the context is already gone: nothing more can be delivered
            return False
    return acknowledged


def run_node(node_factory, args=None, *, name: str = "node") -> int:
    """Run one node process: configuration checks, spinning, and the one shutdown path every node shares.

    Before rclpy starts, the parameter files of the command line are read (:mod:`._param_files`): a
    missing, unreadable or malformed file is one line on stderr naming it, and exit code 2 (rcl would
    end in a traceback). A :class:`ParameterError` from the node's constructor, or any error rcl
    reports about the arguments, is one line too, and exit code 2.

    The executor spins until Ctrl-C/SIGTERM or the node's ``done`` turns true (then the exit code is its
    ``exit_code``). rclpy's own signal handlers would invalidate the context while the node's threads
    still publish, so SIGINT/SIGTERM are handled here instead: while the node is built they raise KeyboardInterrupt; once it
    spins they set a flag the loop checks between callbacks (never an exception inside a callback, which could
    leave a file half-written). On a signal every node goes through the same steps:

    1. ``begin_stop()`` if it has one: it stops its robot activity the way its cancel does (the excitation
       ramps out along its path, ur_interface stops a running trajectory along its path); the executor
       keeps spinning, so the joint states that drive the ramp still arrive, until ``stop_finished()``
       or ``stop_timeout_s`` (default 5 s). Further signals are ignored meanwhile: the stop is not cut short.
    2. ``shutdown()``: the arm at rest, files flushed and closed (the bag's metadata written).
    3. The exit code: ``exit_code_when_interrupted`` if the node defines it; else, for a job node (one
       with ``done``), :data:`EXIT_CANCELLED` (6) unless its job had finished; else 0 (a service such as
       ur_interface or torque_logger ends normally on a signal).
    """
    from ._param_files import check_parameter_files

    argv = list(sys.argv if args is None else args)
    own = argv[1:argv.index("--ros-args")] if "--ros-args" in argv else argv[1:]
    if "-h" in own or "--help" in own:  # a lab's first try: answer it, never start the node (a recorder records)
        print(f"{name}: a robot_dynamics_id ROS 2 node.\n"
              f"usage: ros2 run robot_dynamics_id {name} --ros-args [-p NAME:=VALUE ...] [--params-file FILE]\n"
              f"its parameters (name, type, default, unit): rdi params {name}; the README's \"Parameter reference\"")
        return 0
    try:
        check_parameter_files(argv)
    except ParameterError as exc:
        print(f"{name}: configuration error: {exc}", file=sys.stderr)
        return 2
    # The robot loop shares the GIL with the executor and the publisher: a short
    # switch interval bounds how long it can wait for it (default 5 ms; 0.5 ms measured p99 0.59 ms).
    sys.setswitchinterval(0.0001)
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except RCLError as exc:
        reason = str(exc).split(", at ")[0].replace("failed to initialize rcl: ", "")
        print(f"{name}: configuration error: ROS cannot start with these arguments: {reason}", file=sys.stderr)
        return 2

    # While the node is being built (it may wait for a robot), a signal interrupts at once. Once it spins, a
    # signal only sets a flag that the loop checks between callbacks: an exception raised inside a callback
    # would cut a write short (a bag record half-written is a damaged bag).
    stop_requested = threading.Event()

    def _interrupt(signum, frame):
        raise KeyboardInterrupt

    def _request_stop(signum, frame):
        stop_requested.set()

    # SIGHUP (the terminal or ssh session closed) stops a node as Ctrl-C does: never an arm left running
    stop_signals = (signal.SIGINT, signal.SIGTERM) + ((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())
    for signum in stop_signals:
        signal.signal(signum, _interrupt)
    node = None
    executor = None
    code = 0
    interrupted = False
    try:
        node = node_factory()
        for signum in stop_signals:
            signal.signal(signum, _request_stop)
        # Everything built so far (models, MuJoCo, rclpy) lives as long as the process: move it out of the
        # garbage collector's reach so a full collection does not stall the real-time loop for milliseconds
        # (nodes with a real-time loop did it once already, before starting it; this pass is then short).
        freeze_startup_objects()
        # spin_once with a timeout, not spin(): a Python signal handler only runs when the main thread
        # returns from the executor's wait, and a node without timers may otherwise wait forever.
        executor = make_executor(events=bool(getattr(node, "events_executor", False)))
        executor.add_node(node)
        # The EventsExecutor spins up to 0.1 s per call in its own (C++) loop rather than one callback per
        # Python iteration: a 2,500 message/s recorder spends less per message. The future never completes;
        # the loop's conditions are checked between calls. (The SingleThreadedExecutor's own loop is Python:
        # no gain there.)
        idle = Future()
        events = not isinstance(executor, SingleThreadedExecutor)
        while rclpy.ok() and not getattr(node, "done", False) and not stop_requested.is_set():
            if events:
                executor.spin_until_future_complete(idle, timeout_sec=0.1)
            else:
                executor.spin_once(timeout_sec=0.1)
        if stop_requested.is_set():
            raise KeyboardInterrupt
        if getattr(node, "done", False):
            code = int(getattr(node, "exit_code", 0) or 0)
    except ParameterError as exc:
        print(f"{name}: configuration error: {exc}", file=sys.stderr)
        code = 2
    except (KeyboardInterrupt, ExternalShutdownException):
        interrupted = True
        # a job node interrupted before it existed did not do its job
        code = EXIT_CANCELLED if node is None and hasattr(node_factory, "done") else 0
    finally:
        # from here on a signal must not cut the clean stop short
        for signum in stop_signals:
            signal.signal(signum, signal.SIG_IGN)
        if node is not None:
            if interrupted and hasattr(node, "begin_stop"):
                if executor is None:  # the signal came between the constructor and the first spin
                    executor = make_executor(events=bool(getattr(node, "events_executor", False)))
                    executor.add_node(node)
                _spin_until_stopped(node, executor)
            node.shutdown()
            if interrupted:
                code = _interrupted_exit_code(node)
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
    return code


def _interrupted_exit_code(node) -> int:
    own = getattr(node, "exit_code_when_interrupted", None)
    if own is not None:
        return int(own)
    if hasattr(node, "done") and not node.done:
        return EXIT_CANCELLED
    return int(getattr(node, "exit_code", 0) or 0) if hasattr(node, "done") else 0


def _spin_until_stopped(node, executor) -> None:
    node.begin_stop()
    deadline = time.monotonic() + float(getattr(node, "stop_timeout_s", 5.0))
    while not node.stop_finished() and time.monotonic() < deadline and rclpy.ok():
        executor.spin_once(timeout_sec=0.05)
