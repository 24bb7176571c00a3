"""The machine a benchmark ran on, printed with its numbers (benchmarks only): the load beside the run."""

from __future__ import annotations

import atexit
import os


def report_load() -> None:
    """Print the load average now and again at exit (1/5/15 min, and the cores): a timing read without the load
    beside it cannot be compared with another run's."""
    def line(when: str) -> str:
        one, five, fifteen = os.getloadavg()
        return (f"machine load average {when}: {one:.2f} / {five:.2f} / {fifteen:.2f} (1/5/15 min) on "
                f"{os.cpu_count()} cores")

    print(line("before"), flush=True)
    atexit.register(lambda: print(line("after"), flush=True))
