"""Run small dense linear algebra on one BLAS thread (best effort, no dependency).

Why: the optimiser does thousands of SVDs of ~600 x 64 matrices. On a loaded
2-core machine a multi-threaded OpenBLAS spends most of its time waiting for a
thread that is not scheduled — measured here 60x slower than one thread. This
sets the thread count of the OpenBLAS builds numpy and scipy ship
(``scipy_openblas*`` symbols), found among the loaded shared libraries, and
restores it afterwards; anything it cannot find is left alone.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["single_threaded_blas"]

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads", "openblas_set_num_threads64_",
            "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads", "openblas_get_num_threads64_",
            "openblas_get_num_threads")


def _openblas_handles() -> list[tuple[object, object]]:
    paths: set[str] = set()
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                path = line.rsplit(None, 1)[-1]
                if "openblas" in path.lower() and path.startswith("/"):
                    paths.add(path)
    except OSError:  # not Linux: nothing to do
        return []
    handles = []
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(lib, s) for s in _SETTERS if hasattr(lib, s)), None)
        getter = next((getattr(lib, g) for g in _GETTERS if hasattr(lib, g)), None)
        if setter is not None and getter is not None:
            getter.restype = ctypes.c_int
            handles.append((setter, getter))
    return handles


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Context in which numpy/scipy OpenBLAS calls use one thread."""
    handles = _openblas_handles()
    previous = []
    for setter, getter in handles:
        try:
            previous.append((setter, int(getter())))
            setter(ctypes.c_int(1))
        except Exception:  # an unexpected ABI: leave that library as it is
            continue
    try:
        yield
    finally:
        for setter, count in previous:
            try:
                setter(ctypes.c_int(count))
            except Exception:
                pass
