"""Soak test: 500 Hz velocity streaming through the real ur_rtde client to the stand-in controller.

The robot loop of ur_interface (RobotLoop + RtdeBackend, no ROS) drives an e-Series stand-in
(``rdi sim-controller``, its own process) for ``--minutes`` (default 10; ``--quick``: 30 s). A feeder
thread submits a slow sinusoidal joint-0 velocity at 100 Hz, like a ROS publisher.

What is counted (the issue-6 target is missed + late <= 0.1 %):

* **late cycle**: a cycle of the robot loop that started more than one period (2 ms) after its
  deadline, on this process's CLOCK_MONOTONIC (``RobotLoop.cycle_lateness_s``, the same cycles as
  ``status.late_cycles``; the deadlines are ``t0 + k * period`` with t0 the loop start after the
  connection, moved on by whole periods when the loop skips the deadlines it missed). Per cent of loop
  cycles. Skipped deadlines are printed too; their samples are missed samples.
* **missed sample**: a controller sample the loop never read: the controller's timestamp (the
  stand-in's robot clock, one tick = one 2 ms controller cycle) jumped by more than one period between
  two samples the loop handed on. Per cent of the samples the controller sent in that time. Each miss
  is attributed to *loop delayed* (the loop's previous sample was handed on more than 1.5 periods
  earlier on this process's clock) or *stream* (the loop was on time: the controller sent two
  samples in one period, e.g. catching up after a late tick).
* **period error**: |actual - nominal| cycle period of the loop, median / p99 / max.
* stand-in late ticks: controller cycles that started more than a period late on the stand-in's clock.
* memory: resident set size of this process (receive interface and loop), of the ur_rtde control
  process and of the stand-in, every 5 s; after the warm-up (the first 20 %, at least 30 s) a straight
  line is fitted: growth = its slope in KiB/min +- the slope's standard error, with the RMS of the
  residuals (how far RSS wanders around the line).
* load average: the 1-minute load average of the machine, sampled every 5 s (mean and max).
* machine stalls: one do-nothing process per CPU, pinned to it, SCHED_FIFO 90 (above every thread of the
  soak), sleeps to 1 ms deadlines and records every wake-up more than 0.5 ms late. Nothing of the soak can run
  on a CPU while its probe cannot: such a stall is the machine's (on these virtual machines the hypervisor
  holds the virtual CPU; /proc/stat's steal time is printed too). A late cycle is *the machine's* when the
  probes saw at least its lateness beyond one period of stall in the period before it started; a missed
  sample is when they saw at least one period of stall between the loop's two reads (and the period before).
  The result is printed twice: everything, and without what the machine's stalls explain.

Measured from ``SETTLE_S`` after the feeder starts (the start-up collection before it holds the GIL).

    .venv/bin/python benchmarks/bench_rtde_soak.py --quick
    .venv/bin/python benchmarks/bench_rtde_soak.py --minutes 10
"""

from __future__ import annotations

import argparse
import collections
import gc
import math
import os
import struct
import sys
import tempfile
import threading
import time

import numpy as np

from robot_dynamics_id.hardware.config import UrInterfaceConfig
from robot_dynamics_id.hardware.os_thread import set_os_thread_name
from robot_dynamics_id.hardware.robot_loop import RobotLoop
from robot_dynamics_id.hardware.safety import CommandRejected
from robot_dynamics_id.sim.ur_controller import StandInProcess
from robot_dynamics_id.sim.ur_controller.process import raise_priority

HOST = "127.0.0.6"
RATE_HZ = 500.0
MEMORY_PERIOD_S = 5.0
#: the loop keeps this many seconds of cycle start times; the bench folds them into histograms every
#: MEMORY_PERIOD_S, so its own temporaries stay small (a few 10 KiB) and do not step up its RSS
TIMING_WINDOW_S = 8.0
#: the soak is measured from this long after the feeder starts (s)
SETTLE_S = 2.0


def rss_kb(pid: int | None) -> float:
    if pid is None:
        return math.nan
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return math.nan


def platform_probe(seconds: float, priority: int = 30) -> str:
    """The machine's own share: one SCHED_FIFO thread that only sleeps to 2 ms deadlines, nothing else of
    this benchmark running. Its late periods (> 2 ms behind) are a floor for the loop's."""
    result = {}

    def run() -> None:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
        except OSError:
            pass
        n = int(seconds * RATE_HZ)
        deadline = time.monotonic()
        late = 0
        worst = 0.0
        for _ in range(n):
            deadline += 1.0 / RATE_HZ
            delay = deadline - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            lag = time.monotonic() - deadline
            worst = max(worst, lag)
            late += lag > 1.0 / RATE_HZ
        result["text"] = (f"{late} of {n} periods late ({100.0 * late / n:.3f} %), worst {worst * 1e3:.1f} ms, "
                          f"load average {os.getloadavg()[0]:.1f}")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result["text"]


#: a process pinned to one CPU that does nothing but sleep to 1 ms deadlines at SCHED_FIFO 90 (above everything the
#: soak runs) and writes every wake-up that came more than STALL_PROBE_MS late: (deadline, lag) as two
#: little-endian doubles, CLOCK_MONOTONIC seconds
STALL_PROBE_MS = 0.5
STALL_PROBE_PERIOD_S = 0.001
_STALL_PROBE = """
import os, struct, sys, time
period, limit, cpu = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
try:
    os.sched_setaffinity(0, {cpu})
    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(90))
except OSError:
    pass
deadline = time.monotonic()
while True:
    deadline += period
    delay = deadline - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    lag = time.monotonic() - deadline
    if lag > limit:
        os.write(1, struct.pack("<dd", deadline, lag))
    if lag > 0.25:
        deadline = time.monotonic()
"""


class StallProbe:
    """The machine's stalls while the soak runs, seen by one do-nothing SCHED_FIFO 90 process pinned to each CPU.

    When a probe, which has nothing to do and outranks every thread of the soak, wakes up late, nothing of the
    soak could run on that CPU either: the virtual machine or the kernel held it (hypervisor steal, interrupts).
    The soak's own misses are the ones outside those intervals."""

    def __init__(self) -> None:
        import subprocess

        self.stalls = Record(200_000, 3)  # (deadline, lag, cpu) s
        self._popens = []
        for cpu in sorted(os.sched_getaffinity(0)):
            popen = subprocess.Popen([sys.executable, "-c", _STALL_PROBE, repr(STALL_PROBE_PERIOD_S),
                                      repr(STALL_PROBE_MS / 1000.0), str(cpu)], stdout=subprocess.PIPE, bufsize=0)
            self._popens.append(popen)
            threading.Thread(target=self._read, args=(popen, cpu), daemon=True).start()

    def _read(self, popen, cpu: int) -> None:
        # fixed 16-byte records read into one buffer: a text reader's buffers grow, and this process's memory
        # is measured
        record = bytearray(16)
        view = memoryview(record)
        while True:
            got = 0
            while got < 16:
                n = popen.stdout.readinto(view[got:])
                if not n:
                    return
                got += n
            deadline, lag = struct.unpack("<dd", record)
            self.stalls.append(deadline, lag, cpu)

    def stop(self) -> None:
        for popen in self._popens:
            popen.kill()
            popen.wait()

    def union(self) -> np.ndarray:
        """The stalls as disjoint (start, end) intervals, s: times at which at least one CPU was stalled."""
        merged: list[list[float]] = []
        for deadline, lag, _ in sorted(self.stalls.rows().tolist()):
            if merged and deadline <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], deadline + lag)
            else:
                merged.append([deadline, deadline + lag])
        return np.array(merged, dtype=float).reshape(-1, 2)


class Record:
    """Up to ``capacity`` rows of numbers in memory written once at start: the bench's own bookkeeping must not
    grow while it measures growth (a list of tuples would)."""

    def __init__(self, capacity: int, columns: int) -> None:
        self._rows = np.full((capacity, columns), np.nan)
        self.count = 0

    def append(self, *values: float) -> None:
        if self.count < self._rows.shape[0]:
            self._rows[self.count] = values
            self.count += 1

    def clear(self) -> None:
        self.count = 0

    def rows(self) -> np.ndarray:
        return self._rows[:self.count]


def overlap_s(intervals: np.ndarray, start_s: float, end_s: float) -> float:
    """Total length of the disjoint ``intervals`` (n x 2, s) inside [start_s, end_s]."""
    if intervals.size == 0:
        return 0.0
    return float(np.sum(np.clip(np.minimum(intervals[:, 1], end_s) - np.maximum(intervals[:, 0], start_s), 0, None)))


def steal_jiffies() -> int:
    """Time the hypervisor ran something else while this machine's CPUs had work (/proc/stat "steal")."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8])
    except (OSError, IndexError, ValueError):
        return 0


def count_fifo(pid: int) -> str:
    """"n of m" threads of ``pid`` that run SCHED_FIFO."""
    try:
        tids = [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return "?"
    fifo = 0
    for tid in tids:
        try:
            fifo += os.sched_getscheduler(tid) == os.SCHED_FIFO
        except OSError:
            pass
    return f"{fifo} of {len(tids)}"


def memory_fit(samples: list[tuple[float, float]], warmup_s: float) -> tuple[float, float, float, int]:
    """(slope KiB/min, its standard error KiB/min, RMS residual KiB, points) of RSS after ``warmup_s``."""
    pts = [(t, m) for t, m in samples if t >= warmup_s and math.isfinite(m)]
    if len(pts) < 4:
        return math.nan, math.nan, math.nan, len(pts)
    t = np.array([p[0] for p in pts]) / 60.0
    m = np.array([p[1] for p in pts])
    A = np.column_stack([t, np.ones_like(t)])
    coef, *_ = np.linalg.lstsq(A, m, rcond=None)
    residual = m - A @ coef
    dof = len(pts) - 2
    sigma2 = float(residual @ residual) / dof
    stderr = math.sqrt(sigma2 / float(np.sum((t - t.mean()) ** 2)))
    return float(coef[0]), stderr, math.sqrt(float(np.mean(residual ** 2))), len(pts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="soak duration (default 10)")
    parser.add_argument("--quick", action="store_true", help="30 s run")
    parser.add_argument("--no-priority", action="store_true",
                        help="do not raise priorities (by default the stand-in loop runs SCHED_FIFO 20, the "
                             "driver side's loop and ur_rtde threads SCHED_FIFO 10, as a controller and a "
                             "driver would, when permitted)")
    parser.add_argument("--no-sample-wait", action="store_true",
                        help="let the loop read without waiting for a new sample (the old behaviour: loop and "
                             "stream alias)")
    parser.add_argument("--no-gc-freeze", action="store_true",
                        help="do not freeze the objects built during start-up out of the garbage collector")
    parser.add_argument("--switch-interval", type=float, default=0.0005,
                        help="sys.setswitchinterval of this process (s; Python's default 0.005): how long the "
                             "loop thread may wait for the GIL held by another thread (default 0.0005)")
    parser.add_argument("--feeder-priority", type=int, default=5,
                        help="SCHED_FIFO priority of the feeder thread (default 5, below the loop's 10; 0: normal "
                             "scheduling, like a ROS executor thread that nobody raised: when the machine is busy "
                             "it is preempted while it holds the GIL and the loop waits for it)")
    parser.add_argument("--platform-probe", type=float, default=0.0, metavar="SECONDS",
                        help="first measure the machine alone for that long: a SCHED_FIFO thread that only sleeps "
                             "to 2 ms deadlines (the floor for the loop's late cycles)")
    parser.add_argument("--no-stall-probe", action="store_true",
                        help="do not run the machine-stall probe (a do-nothing SCHED_FIFO 90 process) alongside")
    parser.add_argument("--dump", metavar="JSON", help="write the late cycles, missed samples and machine stalls "
                        "(CLOCK_MONOTONIC s) to this file for a closer look")
    parser.add_argument("--verbose", action="store_true", help="print joint 0 and the loop state every 5 s")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also print the Python allocations of this process that grew after the warm-up "
                             "(slows the process down: timing numbers of such a run do not count)")
    args = parser.parse_args()
    duration_s = 30.0 if args.quick else args.minutes * 60.0
    warmup_s = max(30.0, 0.2 * duration_s) if duration_s >= 60 else 0.2 * duration_s
    sys.setswitchinterval(args.switch_interval)

    if args.platform_probe > 0:
        print(f"platform alone, {args.platform_probe:g} s: {platform_probe(args.platform_probe)}", flush=True)
    if not args.no_priority:
        raise_priority(-10)
        # Every thread this process starts from here on inherits SCHED_FIFO 5 (the loop and ur_rtde's threads
        # get 10 below): a thread at normal priority that a busy machine preempts while it holds the GIL
        # stalls the loop thread as long (priority inversion through the GIL).
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(5))
        except OSError:
            pass
    stall_probe = None if args.no_stall_probe else StallProbe()
    log_dir = tempfile.mkdtemp(prefix="rdi_soak_")
    print(f"stand-in log (kept, for a run to look into): {log_dir}")
    standin = StandInProcess(personality="e-series", host=HOST, log_dir=log_dir,
                             rt_priority=None if args.no_priority else 20,
                             nice=0 if args.no_priority else -10)
    cfg = UrInterfaceConfig.from_parameters({
        "backend": "rtde", "robot_ip": HOST, "rate_hz": RATE_HZ, "watchdog_s": 0.1,
        "drive_gains_nm_per_a": [10, 10, 8, 6, 6, 6]})
    backend = cfg.make_backend()
    if not args.no_priority:
        backend.realtime_priority = 10  # ur_rtde's receive threads and the control process
    if args.no_sample_wait:
        backend.sample_wait_s = 0.0
    event_counts: collections.Counter = collections.Counter()  # counted, not stored: the bench must not grow
    period = 1.0 / RATE_HZ
    samples = {"last": None, "last_call": None, "seen": 0, "missed": 0, "missed_loop": 0, "missed_stream": 0,
               "minute_missed": 0}

    miss_events = Record(100_000, 3)  # (previous read, this read, samples missed) monotonic s

    def on_sample(state) -> None:
        now = time.monotonic()
        last = samples["last"]
        if last is not None:
            gap = round((state.timestamp_s - last) * RATE_HZ)
            if gap > 1:
                samples["missed"] += gap - 1
                samples["minute_missed"] += gap - 1
                key = "missed_loop" if now - samples["last_call"] > 1.5 * period else "missed_stream"
                samples[key] += gap - 1
                miss_events.append(samples["last_call"], now, gap - 1)
        samples["last"] = state.timestamp_s
        samples["last_call"] = now
        samples["seen"] += 1

    def on_event(level: str, message: str) -> None:
        event_counts[(level, message[:120])] += 1

    loop = RobotLoop(backend=backend, guard=cfg.make_guard(), on_sample=on_sample, on_event=on_event,
                     timing_window=int(RATE_HZ * TIMING_WINDOW_S), realtime_priority=0 if args.no_priority else 10)
    loop.start()
    deadline = time.monotonic() + 60
    while loop.status.state != "ready" and time.monotonic() < deadline:
        time.sleep(0.05)
    if loop.status.state != "ready":
        print(f"the loop never became ready: {loop.status}\n{standin.log()}", file=sys.stderr)
        loop.stop()
        standin.stop()
        return 1

    stop_feeding = threading.Event()
    rejected: collections.Counter = collections.Counter()

    q_start = np.array(loop.latest_state.q_rad)

    def feeder() -> None:
        set_os_thread_name("soak_feeder")
        # a ROS-like publisher: 100 Hz, slow sine on joint 0 (+-0.2 rad/s, 8 s period) plus a weak pull of
        # every joint back to its start so that nothing drifts towards a limit in a long run
        try:
            if args.feeder_priority > 0 and not args.no_priority:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.feeder_priority))
            else:
                os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        except OSError:
            pass
        t0 = time.monotonic()
        next_t = t0
        while not stop_feeding.is_set():
            t = time.monotonic() - t0
            qd = -0.5 * (np.array(loop.latest_state.q_rad) - q_start)
            qd[0] += 0.2 * math.sin(2 * math.pi * t / 8.0)
            try:
                loop.submit_velocity(qd, 10.0)
            except CommandRejected as exc:
                rejected[str(exc)[:120]] += 1
            next_t += 0.01
            time.sleep(max(0.0, next_t - time.monotonic()))

    if not args.no_priority:
        # the driver side as a robot driver runs it: the loop and ur_rtde threads (this process and the
        # control process) SCHED_FIFO 10, below the stand-in's loop (20); each sleeps most of every period
        print(f"SCHED_FIFO threads: {count_fifo(os.getpid())} here, "
              f"{count_fifo(backend._proxy.popen.pid) if backend._proxy else 0} in the control process, "
              f"{count_fifo(standin.popen.pid)} in the stand-in", flush=True)
    # Run the statistics code once before anything is measured: its first call imports modules lazily
    # (tracemalloc: +0.5 MiB of module code at the first per-minute row), a one-off step that would
    # otherwise land in this process's memory-growth fit.
    probe_window = np.abs(loop.period_errors_s()) if loop.status.cycles > 2 else np.zeros(10)
    np.cumsum(np.bincount(np.searchsorted([0.0, 1.0], probe_window), minlength=3))
    memory_fit([(float(i), float(i)) for i in range(5)], 0.0)
    if not args.no_gc_freeze:
        gc.collect()
        gc.freeze()  # what start-up built lives as long as the process (the nodes do the same)
    threading.Thread(target=feeder, daemon=True).start()
    # Measure from a settled state: the collection just above holds the GIL for tens of ms (the loop is late
    # then, once), and the first commands take first-call paths.
    time.sleep(SETTLE_S)
    samples.update(last=None, last_call=None, seen=0, missed=0, missed_loop=0, missed_stream=0, minute_missed=0)
    miss_events.clear()

    def proxy_pid():
        proxy = backend._proxy
        return proxy.popen.pid if proxy is not None else None
    print(f"soak: {duration_s:.0f} s at {RATE_HZ:.0f} Hz through ur_rtde to the stand-in on {HOST} "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); sample wait "
          f"{backend.sample_wait_s * 1e3:.1f} ms, gc freeze {not args.no_gc_freeze}, switch interval "
          f"{sys.getswitchinterval() * 1e3:.2f} ms, feeder "
          f"{'SCHED_FIFO %d' % args.feeder_priority if args.feeder_priority > 0 else 'SCHED_OTHER'}", flush=True)

    # (t, RSS KiB) and the load average every MEMORY_PERIOD_S, in memory written once (lists would grow ~4 KiB/min)
    n_memory = int(duration_s / MEMORY_PERIOD_S) + 10
    memory = {name: Record(n_memory, 2) for name in ("this process", "ur_rtde control process", "stand-in")}
    loads = Record(n_memory, 1)
    late_cycles = Record(100_000, 2)  # (start, lateness) s of cycles started > 1 period late
    minute_rows = []  # summaries only: the bench must not grow while it measures growth
    edges_s = np.concatenate([[0.0], np.logspace(-6, 0, 241)])  # period-error histogram bins, 1 us .. 1 s
    histogram = np.zeros(edges_s.size, dtype=np.int64)
    minute_histogram = np.zeros(edges_s.size, dtype=np.int64)
    largest_error_s = 0.0

    def quantile_s(hist: np.ndarray, q: float) -> float:
        cumulative = np.cumsum(hist)
        return float(edges_s[min(np.searchsorted(cumulative, q * cumulative[-1]), edges_s.size - 1)])

    folded = {"cycles": loop.status.cycles, "largest_s": 0.0}

    def fold() -> None:
        """Fold the cycles since the last fold into the histograms and the late-cycle record (the loop keeps
        only TIMING_WINDOW_S of them)."""
        cycles_now = loop.status.cycles
        new_periods = min(cycles_now - folded["cycles"], int(TIMING_WINDOW_S * RATE_HZ) - 1)
        folded["cycles"] = cycles_now
        if new_periods <= 0:
            return
        starts = loop.cycle_starts_s(new_periods + 1)
        window = np.abs(np.diff(starts) - period)
        lateness = loop.cycle_lateness_s(new_periods)
        for i in np.flatnonzero(lateness > period):
            late_cycles.append(starts[1:][i], lateness[i])
        counts = np.bincount(np.searchsorted(edges_s, window), minlength=edges_s.size + 1)[:edges_s.size]
        histogram[:] += counts
        minute_histogram[:] += counts
        folded["largest_s"] = max(folded["largest_s"], float(window.max()))

    tracer = None
    cycles_at_start = loop.status.cycles
    skipped_at_start = loop.status.skipped_cycles
    folded["cycles"] = cycles_at_start
    t_start = time.monotonic()
    steal_start = steal_jiffies()
    next_memory = t_start
    last_cycles, last_late = loop.status.cycles, loop.status.late_cycles
    next_minute = t_start + min(60.0, duration_s)
    while time.monotonic() - t_start < duration_s:
        time.sleep(0.2)
        now = time.monotonic()
        if now >= next_memory:
            t = now - t_start
            memory["this process"].append(t, rss_kb(os.getpid()))
            memory["ur_rtde control process"].append(t, rss_kb(proxy_pid()))
            memory["stand-in"].append(t, rss_kb(standin.popen.pid))
            loads.append(os.getloadavg()[0])
            if args.verbose and loop.latest_state is not None:
                print(f"  t {t:6.1f} s: q0 - start {loop.latest_state.q_rad[0] - q_start[0]:+.4f} rad, qd0 "
                      f"{loop.latest_state.qd_rad_s[0]:+.4f} rad/s, state {loop.status.state}, "
                      f"RSS {memory['this process'].rows()[-1, 1] / 1024:.1f} MiB", flush=True)
            next_memory += MEMORY_PERIOD_S
            fold()
            if args.tracemalloc and tracer is None and t >= warmup_s:
                import tracemalloc

                tracemalloc.start(5)
                tracer = tracemalloc.take_snapshot()
        if now >= next_minute or now - t_start >= duration_s:
            status = loop.status
            if now - t_start >= duration_s:
                fold()  # the last seconds
            minute_largest_s, folded["largest_s"] = folded["largest_s"], 0.0
            if minute_histogram.sum():
                largest_error_s = max(largest_error_s, minute_largest_s)
                minute_rows.append((now - t_start, status.cycles - last_cycles, status.late_cycles - last_late,
                                    samples["minute_missed"], quantile_s(minute_histogram, 0.5),
                                    quantile_s(minute_histogram, 0.99), minute_largest_s, os.getloadavg()[0]))
            minute_histogram[:] = 0
            samples["minute_missed"] = 0
            last_cycles, last_late = status.cycles, status.late_cycles
            next_minute = now + 60.0
    stop_feeding.set()
    status = loop.status
    growth_report = None
    if tracer is not None:
        import tracemalloc

        growth_report = tracemalloc.take_snapshot().compare_to(tracer, "traceback")[:8]
        tracemalloc.stop()
    loop.stop()
    sa = standin.state()
    standin.stop()

    missed = samples["missed"]
    expected_samples = samples["seen"] + missed

    print("\nper minute: t [s], cycles, late cycles, missed samples, period error median / p99 (histogram bin "
          "edges) / max [us], load")
    for t, cycles, late, miss, median, p99, largest, load in minute_rows:
        print(f"  {t:7.1f}  {cycles:7d}  {late:5d}  {miss:5d}  {median * 1e6:7.1f} / {p99 * 1e6:8.1f} / "
              f"{largest * 1e6:9.1f}  {load:4.1f}")
    own = None
    if stall_probe is not None:
        stall_probe.stop()
        stalls = [(d, lag, cpu) for d, lag, cpu in stall_probe.stalls.rows().tolist() if d >= t_start]
        machine = stall_probe.union()
        late_rows = late_cycles.rows().tolist()
        miss_rows = miss_events.rows().tolist()
        late_machine = sum(1 for start, late in late_rows
                           if overlap_s(machine, start - late - period, start) >= late - period)
        miss_machine = sum(int(n) for before, now, n in miss_rows
                           if overlap_s(machine, before - 2 * period, now) >= period)
        own = (len(late_rows) - late_machine, samples["missed"] - miss_machine)
        if args.dump:
            import json

            with open(args.dump, "w") as f:
                json.dump({"period_s": period, "start_s": t_start, "late_cycles": late_rows,
                           "miss_events": miss_rows, "stalls": stalls}, f)
        print(f"\nmachine stalls (one do-nothing SCHED_FIFO 90 probe per CPU woke > {STALL_PROBE_MS:g} ms late): "
              f"{len(stalls)}, {sum(lag for _, lag, _ in stalls) * 1e3:.0f} ms summed over CPUs, "
              f"{sum(e - b for b, e in machine) * 1e3:.0f} ms with at least one CPU stalled, longest "
              f"{max((lag for _, lag, _ in stalls), default=0) * 1e3:.1f} ms; steal time (/proc/stat) "
              f"{(steal_jiffies() - steal_start) * 1000 / os.sysconf('SC_CLK_TCK'):.0f} ms")
        print(f"attributed to those stalls: {late_machine} of {len(late_rows)} late cycles (the machine stalled "
              f"for at least the lateness beyond one period, in the period before the cycle), {miss_machine} of "
              f"{samples['missed']} missed samples (a stall of at least one period while the sample was due)")
    measured_cycles = status.cycles - cycles_at_start
    late_count = late_cycles.count  # from the per-cycle lateness record, the same test as status.late_cycles
    late_pct = 100.0 * late_count / max(1, measured_cycles)
    missed_pct = 100.0 * missed / max(1, expected_samples)
    print(f"\nloop cycles           {measured_cycles}")
    print(f"late cycles           {late_count} ({late_pct:.3f} % of loop cycles; started > 1 period after "
          "their deadline)")
    print(f"skipped deadlines     {status.skipped_cycles - skipped_at_start} (after a delay the loop goes on in step with "
          "the controller instead of running the missed cycles; the samples of those cycles count as missed)")
    if histogram.sum():
        print(f"period error (us)     median {quantile_s(histogram, 0.5) * 1e6:.1f}, "
              f"p99 {quantile_s(histogram, 0.99) * 1e6:.1f} "
              f"(histogram bin edges, 2.5 % wide), max {largest_error_s * 1e6:.1f}")
    print(f"samples missed        {missed} of {expected_samples} ({missed_pct:.3f} %): loop delayed "
          f"{samples['missed_loop']}, stream (loop on time) {samples['missed_stream']}")
    print(f"sample waits          {backend.sample_waits} reads waited for the sample, "
          f"{backend.sample_wait_timeouts} gave up after {backend.sample_wait_s * 1e3:.1f} ms")
    faults = {k: v for k, v in event_counts.items() if k[0] in ("error", "warn") and "watchdog" not in k[1]}
    print(f"loop events           {sum(event_counts.values())}; faults {sum(faults.values())}"
          + "".join(f"\n    {n} x [{level}] {msg}" for (level, msg), n in list(event_counts.items())[:10]))
    print(f"commands rejected     {sum(rejected.values())}"
          + "".join(f"\n    {n} x {msg}" for msg, n in rejected.most_common(5)))
    if loop.latest_state is not None:
        print(f"final q - start (rad) {np.round(np.array(loop.latest_state.q_rad) - q_start, 4).tolist()}")
    print(f"stand-in              {sa['ticks']} ticks, {sa['late_ticks']} late "
          f"({100.0 * sa['late_ticks'] / max(1, sa['ticks']):.3f} %), "
          f"max lateness {sa['max_lateness_s'] * 1000:.1f} ms, work per tick {sa['mean_work_time_s'] * 1e6:.0f} us "
          f"mean, {sa['max_work_time_s'] * 1e6:.0f} us max")
    slow = sa.get("slow_ticks", [])
    if slow:
        print(f"stand-in ticks whose work overran a period (last {len(slow)}): tick at s, total / step / "
              "snapshot / send ms")
        for tick, total, step, snap, send in sorted(slow, key=lambda r: -r[1])[:8]:
            print(f"    {tick / RATE_HZ:8.2f}  {total * 1e3:6.2f} / {step * 1e3:6.2f} / {snap * 1e3:6.2f} / "
                  f"{send * 1e3:6.2f}")
    print(f"memory growth after a {warmup_s:.0f} s warm-up, RSS every {MEMORY_PERIOD_S:.0f} s, line fit:")
    for name, record in memory.items():
        points = [(float(t), float(m)) for t, m in record.rows()]
        slope, stderr, rms, n = memory_fit(points, warmup_s)
        finite = [m for _, m in points if math.isfinite(m)]
        if finite:
            print(f"  {name:24s} {finite[0] / 1024:7.1f} -> {finite[-1] / 1024:7.1f} MiB; growth "
                  f"{slope:+7.1f} +- {stderr:5.1f} KiB/min, residual RMS {rms:6.1f} KiB ({n} points)")
    if growth_report:
        print("Python allocations grown after the warm-up (tracemalloc):")
        for stat in growth_report:
            print(f"  {stat.size_diff / 1024:+8.1f} KiB  {stat.count_diff:+6d} blocks  {stat.traceback.format()[-1]}")
    load_text = f"mean {np.mean(loads.rows()):.1f}, max {np.max(loads.rows()):.1f}" if loads.count else "n/a"
    late_fraction = (late_count + missed) / max(1, measured_cycles)
    print(f"\nload average (1 min) during the run: {load_text} on {os.cpu_count()} cores")
    print(f"target missed+late <= 0.1 %: {'met' if late_fraction <= 0.001 else 'NOT met'} "
          f"(late {late_pct:.3f} % + missed {missed_pct:.3f} % = {100 * late_fraction:.3f} %)")
    if own is not None:
        own_fraction = (own[0] + own[1]) / max(1, measured_cycles)
        print(f"without the machine's stalls: {'met' if own_fraction <= 0.001 else 'NOT met'} (late "
              f"{100 * own[0] / max(1, measured_cycles):.3f} % + missed {100 * own[1] / max(1, expected_samples):.3f} % "
              f"= {100 * own_fraction:.3f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
