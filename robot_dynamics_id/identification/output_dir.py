"""Output folders (rdi identify / validate, the identifier node) and files (rdi payload / drive-gains): checked
first, complete or absent.

:func:`check_output_dir` runs before any data is read and refuses, in one line,
an ``--out`` that is a file, lies inside a bag or the input data, holds files
that are not an earlier result of ours, or cannot be written.

:func:`staged_output` gives the job a hidden staging folder next to ``--out``
(``.<name>.incomplete-<pid>``) and renames it to ``--out`` only when the job has
finished; an exception, Ctrl-C or SIGTERM removes it. So a folder named
``--out`` is always a complete result: no half-written folder looks like one.
An earlier result of ours (it holds the :data:`MARKER` file, which lists what the
result wrote) is replaced at that moment; anything else is never overwritten: a
result folder that also holds files of the user's, or a folder inside a result
(which the next run would delete with it), is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["MARKER", "OutputDirError", "check_output_dir", "check_output_file", "discard_staging", "foreign_entries",
           "staged_output", "staging_path", "write_output_file"]

#: file that marks a folder as a complete result of rdi identify/validate/export (JSON: command, date, and the
#: entries the result wrote)
MARKER = ".rdi-output.json"


class OutputDirError(ValueError):
    """The output folder cannot be used; the message names it and the fix."""


def _is_bag_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    if (path / "metadata.yaml").is_file():
        return True
    return any(child.suffix in (".mcap", ".db3") for child in path.iterdir() if child.is_file())


def check_output_dir(out: str | Path, *, inputs: Sequence[str | Path | None] = (), command: str | None = None) -> Path:
    """Refuse an unusable output folder before any work starts (module doc); returns it as an absolute path.
    With ``command``, an earlier result of another rdi command is refused too (an export never replaces the
    model it was made from, a validation never an identification)."""
    out = Path(out).expanduser()
    resolved = out.resolve()
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"--out {out} is a file: give a folder to write the results into")
    for item in inputs:
        if item is None:
            continue
        data = Path(item).expanduser().resolve()
        container = data if data.is_dir() else data.parent
        if resolved == data or (data.is_dir() and data in resolved.parents):
            raise OutputDirError(f"--out {out} points into the input data {item}: choose a folder outside it")
        if data.is_file() and resolved == data.parent:
            raise OutputDirError(f"--out {out} is the folder holding the input {item}: the result would replace it; "
                                 "choose another folder")
        if _is_bag_dir(container) and (resolved == container or container in resolved.parents):
            raise OutputDirError(f"--out {out} points into the bag {container}: choose a folder outside it")
    for ancestor in [resolved, *resolved.parents]:
        if _is_bag_dir(ancestor):
            raise OutputDirError(f"--out {out} points into the bag {ancestor}: choose a folder outside it")
    for ancestor in resolved.parents:
        if (ancestor / MARKER).is_file():  # the next run of that command replaces the folder, and this one with it
            raise OutputDirError(f"--out {out} points into {ancestor}, the result of rdi "
                                 f"{_earlier_command(ancestor) or 'identify'}, which a new run replaces whole: write "
                                 f"the result beside it (--out {ancestor.parent / resolved.name})")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise OutputDirError(f"--out {out} exists and holds files that are not an earlier rdi result: choose a new "
                             "folder (results are never mixed with other files)")
    earlier = _earlier_command(out)
    if command is not None and earlier is not None and earlier != command:
        raise OutputDirError(f"--out {out} holds the result of rdi {earlier}: choose a new folder (rdi {command} "
                             f"replaces only an earlier result of rdi {command})")
    foreign = foreign_entries(out)
    if foreign:
        raise OutputDirError(f"--out {out} holds an earlier result of rdi {earlier or 'identify'} and also "
                             f"{_names(foreign)}, which rdi did not write: a new result replaces the folder whole and "
                             "would delete them; move them out or choose a new folder")
    parent = resolved.parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputDirError(f"--out {out}: cannot create files in {parent} (permission denied); choose a "
                             "writable folder")
    return resolved


def foreign_entries(out: str | Path) -> list[str]:
    """Names in an earlier result folder that its result did not write (the marker lists what it wrote), sorted;
    empty for a folder that is not a result, and for a result from before the marker listed its entries."""
    out = Path(out)
    try:
        written = json.loads((out / MARKER).read_text()).get("entries")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(written, list):
        return []
    return sorted(p.name for p in out.iterdir() if p.name != MARKER and p.name not in written)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _earlier_command(out: Path) -> str | None:
    """The rdi command whose complete result ``out`` holds (its marker), or None."""
    try:
        return str(json.loads((out / MARKER).read_text()).get("command")) or None
    except (OSError, ValueError, AttributeError):
        return None


def check_output_file(out: str | Path, *, inputs: Sequence[str | Path | None] = (), default_name: str,
                      earlier_result: Callable[[Path], bool], what: str) -> Path:
    """Refuse an unusable output *file* before any work starts; returns it as an absolute path.

    A folder means ``FOLDER/default_name``. Refused, each in one line with the fix: an input (or a file inside an
    input folder or a bag), a folder that does not exist or cannot be written, and an existing file that
    ``earlier_result`` does not recognise as an earlier ``what`` (nothing else is ever overwritten)."""
    out = Path(out).expanduser()
    if out.is_dir():
        out = out / default_name
    resolved = out.resolve()
    for item in inputs:
        if item is None:
            continue
        data = Path(item).expanduser().resolve()
        if resolved == data:
            raise OutputDirError(f"--out {out} would overwrite the input {item}: choose another file")
        if data.is_dir() and data in resolved.parents:
            raise OutputDirError(f"--out {out} points into the input data {item}: choose a file outside it")
    for ancestor in resolved.parents:
        if _is_bag_dir(ancestor):
            raise OutputDirError(f"--out {out} points into the bag {ancestor}: choose a file outside it")
        if (ancestor / MARKER).is_file():  # the next run of that command replaces the folder, and this file with it
            raise OutputDirError(f"--out {out} points into {ancestor}, the result of rdi "
                                 f"{_earlier_command(ancestor) or 'identify'}, which a new run replaces whole: write "
                                 f"the file beside it (--out {ancestor.parent / resolved.name})")
    if not resolved.parent.is_dir():
        raise OutputDirError(f"--out {out}: the folder {resolved.parent} does not exist; create it first "
                             f"(mkdir -p {resolved.parent})")
    if not os.access(resolved.parent, os.W_OK | os.X_OK):
        raise OutputDirError(f"--out {out}: cannot create files in {resolved.parent} (permission denied); choose a "
                             "writable folder")
    if resolved.exists() and not earlier_result(resolved):
        raise OutputDirError(f"--out {out} exists and is not an earlier {what}: choose another file (nothing else "
                             "is overwritten)")
    return resolved


def write_output_file(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` complete or not at all (a temporary file beside it, renamed)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.incomplete-{os.getpid()}")
    try:
        tmp.write_text(text)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def staging_path(out: str | Path) -> Path:
    """The staging folder this process uses for ``out``."""
    out = Path(out).expanduser().resolve()
    return out.parent / f".{out.name}.incomplete-{os.getpid()}"


def discard_staging(out: str | Path) -> bool:
    """Remove this process's staging folder for ``out`` (a job that will not finish); True if one existed."""
    staging = staging_path(out)
    if not staging.exists():
        return False
    shutil.rmtree(staging, ignore_errors=True)
    return True


@contextmanager
def staged_output(out: str | Path, *, command: str) -> Iterator[Path]:
    """Yield a staging folder; on success it becomes ``out`` (replacing an earlier result of ours)."""
    out = Path(out).expanduser().resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_path(out)
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    keep_staging = False
    try:
        yield staging
        entries = sorted(p.name for p in staging.iterdir())  # what this result wrote: nothing else is replaced
        (staging / MARKER).write_text(json.dumps({"command": command, "complete": True, "entries": entries,
                                                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")
        old = None
        if out.exists():
            if (not (out / MARKER).is_file() and any(out.iterdir())) or foreign_entries(out):
                keep_staging = True
                raise OutputDirError(f"--out {out} was filled by something else while the job ran; the result is "
                                     f"left in {staging}")
            old = out.parent / f".{out.name}.replaced-{os.getpid()}"
            out.rename(old)
        staging.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if staging.exists() and not keep_staging:
            shutil.rmtree(staging, ignore_errors=True)
