"""Start and stop the package's nodes as separate processes, always on loopback.

Used by the demo and the tests to run nodes the way a launch file would
(:mod:`robot_dynamics_id.node_launch` gives the command lines). Every
process gets :func:`loopback_environment`: DDS discovery stays on 127.0.0.1
(Fast DDS multicasts to 239.255.0.1 on every interface otherwise), in a DDS
domain of its own. No rclpy import here.
"""

from __future__ import annotations

import atexit
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from .node_launch import NodeLaunch, node_command

__all__ = ["NodeProcess", "loopback_environment", "reserve_domain_id", "start_node", "use_loopback_here"]

_DOMAIN_LOCK_DIR = Path("/tmp/robot_dynamics_id_dds_domains")
_held_domain_locks: list = []
#: every node process started here; whatever is still running when this process exits is killed,
#: so a crashed test or demo never leaves a simulated robot running in the background
_started: list[subprocess.Popen] = []


@atexit.register
def _kill_leftovers() -> None:
    for popen in _started:
        if popen.poll() is None:
            try:
                os.killpg(popen.pid, signal.SIGKILL)
            except OSError:
                pass


def reserve_domain_id(low: int = 1, high: int = 101) -> int:
    """Pick a DDS domain no other run of this package on this machine is using, and hold it.

    Each run (a test session, a demo) takes an exclusive lock on a file per
    domain, kept until the process exits, so parallel runs never hear each
    other's topics. Domains 1..101 are the ones Fast DDS can use on Linux.
    """
    import fcntl

    _DOMAIN_LOCK_DIR.mkdir(parents=True, exist_ok=True)
    candidates = list(range(low, high + 1))
    random.shuffle(candidates)
    for domain in candidates:
        handle = open(_DOMAIN_LOCK_DIR / f"{domain}.lock", "w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        _held_domain_locks.append(handle)
        return domain
    raise RuntimeError(f"every DDS domain {low}..{high} is in use by other runs on this machine")


def loopback_environment(domain_id: int | None = None, base: dict | None = None) -> dict[str, str]:
    """``base`` (default os.environ) with DDS confined to loopback and a DDS domain set.

    ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (Iron and later) and, for Humble,
    ``ROS_LOCALHOST_ONLY=1``. The domain is ``domain_id``, else the caller's
    ``ROS_DOMAIN_ID``, else a free one from :func:`reserve_domain_id`.
    """
    env = dict(os.environ if base is None else base)
    env["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    if env.get("ROS_DISTRO") == "humble":
        env["ROS_LOCALHOST_ONLY"] = "1"
    if domain_id is not None:
        env["ROS_DOMAIN_ID"] = str(int(domain_id))
    if "ROS_DOMAIN_ID" not in env:
        env["ROS_DOMAIN_ID"] = str(reserve_domain_id())
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("MUJOCO_GL", "egl")
    return env


def use_loopback_here() -> dict[str, str]:
    """Confine THIS process's DDS to loopback (and a reserved domain) before rclpy starts; returns the env.

    Call it before ``rclpy.init()`` in any process of ours that talks ROS (the demo, benchmarks), so it
    and the nodes it starts with :func:`loopback_environment` share one private domain.
    """
    env = loopback_environment()
    for key in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_LOCALHOST_ONLY", "ROS_DOMAIN_ID"):
        if key in env:
            os.environ[key] = env[key]
    return env


def _executable_dir() -> Path:
    return Path(sys.executable).parent


class NodeProcess:
    """A node running as a child process, its output in a log file."""

    def __init__(self, popen: subprocess.Popen, name: str, log_path: Path) -> None:
        self.popen = popen
        self.name = name
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self, timeout_s: float = 10.0) -> int:
        """Ctrl-C (SIGINT) like ``ros2 launch`` does, then SIGKILL if it hangs. Returns the exit code."""
        if self.alive():
            # the whole process group: a wrapper (e.g. strace) must not leave the node running
            self._signal_group(signal.SIGINT)
            try:
                self.popen.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGKILL)
                self.popen.wait(5)
        return self.popen.returncode

    def _signal_group(self, signum: int) -> None:
        try:
            os.killpg(self.popen.pid, signum)
        except OSError:
            self.popen.send_signal(signum)

    def kill(self) -> None:
        """SIGKILL: a crash, for the crash tests."""
        if self.alive():
            self._signal_group(signal.SIGKILL)
            self.popen.wait(5)


def start_node(node: NodeLaunch, *, log_dir: str | Path, env: dict[str, str] | None = None,
               extra_ros_args: list[str] | None = None, prefix: list[str] | None = None) -> NodeProcess:
    """Start ``node`` (from a launch plan) with the venv's console script; output to ``log_dir``."""
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    cmd = node_command(node, executable_dir=_executable_dir())
    if extra_ros_args:
        cmd += list(extra_ros_args)
    if prefix:
        cmd = list(prefix) + cmd
    log_path = log_dir / f"{node.name}.log"
    log_file = open(log_path, "w")
    # The children inherit our DDS-domain locks: an orphaned node keeps its domain reserved.
    popen = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env or loopback_environment(),
                             start_new_session=True, pass_fds=[h.fileno() for h in _held_domain_locks])
    log_file.close()
    _started.append(popen)
    return NodeProcess(popen, node.name, log_path)


def wait_until(predicate, timeout_s: float, poll_s: float = 0.02) -> bool:
    """Poll ``predicate`` until it is true or ``timeout_s`` passes."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(poll_s)
    return bool(predicate())
