"""``rdi``: the command line of robot_dynamics_id (offline work, simulation, the demo).

Sub-commands live in :mod:`robot_dynamics_id.commands`, one module each.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import re
import signal
import sys

# Before numpy loads: the package's matrices are small, and threaded BLAS on a shared
# 2-core machine was measured 50x slower on them (identification, excitation planning).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from . import __version__, commands

__all__ = ["build_parser", "main"]


def _command_modules():
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(module, "COMMAND") and hasattr(module, "run"):
            yield module


class _Parser(argparse.ArgumentParser):
    """argparse taking a comma list that starts with a minus (``--payload-com -0.1,0.05,0.05``, ``--pose -1.57,...``)
    as the option's value: argparse's own rule knows single negative numbers only, and an option value such as
    a CoM with a negative x needed ``--payload-com=-0.1,...``, with an error that did not say so."""

    _NUMBER = r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(rf"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(,{self._NUMBER})*$")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rdi",
        description="Identify UR arm dynamics and run model-based force/motion control (robot_dynamics_id).",
    )
    parser.add_argument("--version", action="version", version=f"robot_dynamics_id {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        p = sub.add_parser(module.COMMAND, help=module.HELP, description=module.HELP)
        module.configure(p)
        p.set_defaults(_run=module.run)
    return parser


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so that every command cleans up (no half-written result stays)."""


def _on_sigterm(signum, frame):
    raise _Terminated


def _os_error_text(exc: OSError, args) -> str:
    """An OSError as a user reads it: a full disk names where the command was writing (a write to an open file
    carries no file name) and what to do."""
    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return str(exc)
    where = exc.filename or getattr(args, "out", None)
    place = f" while writing {where}" if where else ""
    return (f"the disk is full{place} ({exc.strerror}): free space or write elsewhere (--out); the files written "
            "before it are kept, but this command's results are incomplete")


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        return int(args._run(args) or 0)
    except _Terminated:
        print(f"rdi {args.command}: terminated (SIGTERM)", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print(f"rdi {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:
        print(f"rdi {args.command}: error: {_os_error_text(exc, args)}", file=sys.stderr)
        return 1
    except (ValueError, RuntimeError) as exc:
        # Errors of the package carry the fix in their message; no traceback for users.
        print(f"rdi {args.command}: error: {exc}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
