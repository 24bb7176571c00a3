"""Read (and write) RTDE recordings as CSV: ur_rtde ``startFileRecording`` and UR's ``record.py``.

Both write one header line naming each field, with vector fields expanded as
``name_0 … name_5`` (e.g. ``timestamp,actual_q_0,…,actual_q_5,actual_qd_0,…``),
and one row per recorded sample (at most one per RTDE cycle: 125 Hz on a CB3, 500 Hz on an
e-Series; ur.md). A recorder that samples the stream from a host thread at a lower rate writes
uneven timestamp steps (whole controller cycles); preprocessing handles them
(identification/preprocessing.py, step 2).
ur_rtde separates with commas and prints 6 decimals; record.py separates with
spaces (or commas). The delimiter is detected from the header line.

Columns read into a :class:`~.recording.Recording` (units as RTDE reports them):

=============================  =====================  ======
RTDE field                     Recording field        unit
=============================  =====================  ======
timestamp                      time_s                 s (controller clock)
actual_q_0..5                  q_rad                  rad
actual_qd_0..5                 qd_rad_s               rad/s
actual_current_0..5            current_a              A
target_current_0..5            target_current_a       A
target_moment_0..5             target_moment_nm       Nm
actual_current_as_torque_0..5  current_as_torque_nm   Nm (gravity-compensated: not a joint torque)
actual_TCP_force_0..5          tcp_wrench             N, Nm (base frame)
actual_TCP_pose_0..5           tcp_pose               m, rad (base frame; rotation vector)
joint_temperatures_0..5        joint_temperature_c    degrees Celsius (a missing value keeps its row)
=============================  =====================  ======

Other columns are ignored, except the robot's state when recorded: rows where ``robot_mode`` is not
7 (RUNNING) or ``safety_mode`` is neither 1 (NORMAL) nor 2 (REDUCED) — a protective stop, an
emergency stop, a fault — are dropped with a warning: the arm is held by its brakes or a stop ramp
there, and its currents are not the dynamics of the motion (the gap they leave splits the recording
into segments; identification/preprocessing.py). RTDE joint order is base, shoulder, elbow, wrist 1-3.

What spreadsheets and hand-written recorders do to a file is read too, each with a warning: a UTF-8
byte-order mark and quoted header names (a spreadsheet's re-save), ``;`` separators with decimal
commas, empty cells (missing values: NaN, under ``nan_policy``), a last line cut after a separator,
timestamps in milliseconds (a median step of 1-20 "s" cannot be an RTDE recording: divided by 1000).
"""

from __future__ import annotations

import io
import re
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from ..robots.description import JOINT_NAMES
from .recording import FileRows, Recording, RecordingSource

__all__ = ["RTDE_FIELDS", "UrCsvError", "read_ur_csv", "write_ur_csv"]

#: RTDE field (column prefix) -> Recording field
RTDE_FIELDS: dict[str, str] = {
    "actual_q": "q_rad",
    "actual_qd": "qd_rad_s",
    "actual_current": "current_a",
    "target_current": "target_current_a",
    "target_moment": "target_moment_nm",
    "actual_current_as_torque": "current_as_torque_nm",
    "actual_TCP_force": "tcp_wrench",
    "actual_TCP_pose": "tcp_pose",
    "joint_temperatures": "joint_temperature_c",
}
_REQUIRED = ("timestamp", "actual_q", "actual_qd")
#: fields read when present whose missing values (NaN) leave the row in
INFORMATIONAL = ("joint_temperatures",)
#: robot_mode RUNNING (UR's RTDE guide: -1 no controller ... 7 running, 8 updating firmware)
ROBOT_MODE_RUNNING = 7
#: safety_mode NORMAL and REDUCED; 3 protective stop, 4 recovery, 5 safeguard stop, 6/7 emergency stops, 8
#: violation, 9 fault, ...: the arm does not follow the program there
SAFETY_MODES_MOVING = (1, 2)
#: a median timestamp step in this range (s) is read as milliseconds (RTDE: 2-8 ms; 1-20 s is no recording)
MILLISECOND_STEPS = (1.0, 20.0)
#: a timestamp falling back by more than this (s) is another recording, not rows written out of order
BACKWARD_JUMP_S = 0.1
#: rows of one RTDE cycle (the same timestamp) hold the same joint positions to the file's 6 decimals
SAME_CYCLE_Q_RAD = 1e-5

#: sorted rows closer than this fraction of the median step came from two clocks (a small jump back), not one
OFF_GRID_FRACTION = 0.5


class UrCsvError(ValueError):
    """An RTDE CSV file cannot be read; the message names the file, the problem and the fix."""


def _check_reordering(path: Path, t: np.ndarray, order: np.ndarray, row: np.ndarray) -> None:
    """Refuse rows out of order that a sort would interleave off the controller's time grid: rows written out of
    order keep their cycles' timestamps (sorted, they step by the period); a clock that fell back by less than
    :data:`BACKWARD_JUMP_S` and went on puts a second grid between the first one's rows."""
    sorted_t = t[order]
    steps = np.diff(sorted_t)
    period = float(np.median(steps[steps > 0])) if np.any(steps > 0) else 0.0
    moved = order != np.arange(t.size)
    involved = moved[:-1] | moved[1:]
    off_grid = involved & (steps > 0) & (steps < OFF_GRID_FRACTION * period)
    if not off_grid.any():
        return
    back = np.flatnonzero(np.diff(t) < 0)
    k = int(back[0]) if back.size else int(np.flatnonzero(off_grid)[0])
    raise UrCsvError(f"{path}: the timestamp steps back by {t[k] - t[k + 1]:.3f} s at line {int(row[k + 1]) + 2} "
                     f"({t[k]:.3f} s, then {t[k + 1]:.3f} s) and the rows after it fall between the earlier rows' "
                     f"{1e3 * period:.0f} ms cycles: the clock jumped back (a controller restart, two recordings), "
                     "it is not rows written out of order; sorted, they would interleave two stretches of motion. "
                     "Split the file there")


def _check_clock(path: Path, t: np.ndarray, row: np.ndarray) -> None:
    """Refuse a clock that jumps back more than :data:`BACKWARD_JUMP_S`: two recordings in one file (or a
    controller restarted mid-file), which sorting would interleave into one motion that never happened."""
    if t.size < 2:
        return
    steps = np.diff(t)
    k = int(np.argmin(steps))
    if steps[k] < -BACKWARD_JUMP_S:
        raise UrCsvError(f"{path}: the timestamp jumps back by {-steps[k]:.3f} s at line {int(row[k + 1]) + 2} "
                         f"({t[k]:.3f} s, then {t[k + 1]:.3f} s): the file holds two recordings, or the controller "
                         "restarted. Split it into one file per recording")


def _split(line: str, delimiter: str | None) -> list[str]:
    return line.split(delimiter) if delimiter else line.split()


def read_ur_csv(
    path: str | Path,
    *,
    joint_names: Sequence[str] = JOINT_NAMES,
    nan_policy: str = "raise",
    require: Collection[str] = (),
) -> Recording:
    """Read an ur_rtde / RTDE record.py CSV file into a :class:`Recording`.

    Args:
        joint_names: names for the 6 RTDE joints, in RTDE order.
        nan_policy: 'raise' (default) or 'drop' rows with NaN/inf in the columns used.
        require: Recording fields that must be present, e.g. ``('current_a',)``.

    Raises:
        UrCsvError: missing file or columns, binary file, malformed rows, NaN rows.
    """
    path = Path(path)
    if nan_policy not in ("raise", "drop"):
        raise ValueError(f"nan_policy must be 'raise' or 'drop', got {nan_policy!r}")
    n = len(joint_names)
    if n != 6:
        raise UrCsvError(f"{path}: RTDE records 6 joints; joint_names has {n}")
    if not path.is_file():
        raise UrCsvError(f"RTDE CSV file {path} does not exist")
    raw = path.read_bytes()
    if b"\x00" in raw[:4096]:
        raise UrCsvError(f"{path} is binary (record.py --binary?); record it as text (without --binary)")
    # utf-8-sig: a byte-order mark (a spreadsheet's re-save) is not part of the first column's name
    lines = [ln for ln in raw.decode("utf-8-sig", errors="replace").splitlines()
             if ln.strip() and not ln.startswith("#")]
    if not lines:
        raise UrCsvError(f"{path} is empty: no header line")
    header_line = lines[0].strip()
    delimiter = next((d for d in (",", ";", "\t") if d in header_line), None)
    header = [h.strip().strip('"').strip("'").strip() for h in _split(header_line, delimiter)]
    if delimiter and header and header[-1] == "":
        header = header[:-1]  # a trailing delimiter
    column = {name: k for k, name in enumerate(header)}
    warnings: list[str] = []
    if delimiter == ";" and len(lines) > 1 and re.search(r"\d,\d", lines[1]):
        # a spreadsheet in a locale with decimal commas: ';' separates, ',' is the decimal point
        lines = [lines[0]] + [ln.replace(",", ".") for ln in lines[1:]]
        warnings.append("';'-separated with decimal commas (a spreadsheet's export): read with ',' as the decimal "
                        "point")

    def columns_of(prefix: str) -> list[int] | None:
        width = 6
        if prefix == "timestamp":
            return [column["timestamp"]] if "timestamp" in column else None
        names = [f"{prefix}_{i}" for i in range(width)]
        if all(name in column for name in names):
            return [column[name] for name in names]
        if any(name in column for name in names):
            missing = [name for name in names if name not in column]
            raise UrCsvError(f"{path}: field {prefix} is incomplete, columns {missing} are missing")
        return None

    selected: dict[str, list[int]] = {}
    missing = []
    for prefix in ("timestamp", *RTDE_FIELDS):
        cols = columns_of(prefix)
        if cols is None:
            target = "time_s" if prefix == "timestamp" else RTDE_FIELDS[prefix]
            if prefix in _REQUIRED or target in require:
                missing.append(prefix)
            continue
        selected[prefix] = cols
    if missing and len(header) == 1 and "timestamp" in header[0]:  # one column: the separator is not one we read
        other = sorted({c for c in re.sub(r"[\w.\s\"']", "", header[0])})
        raise UrCsvError(f"{path}: the header is one column, {header[0][:60]!r}...: its separator "
                         f"{' or '.join(repr(c) for c in other) or '(unknown)'} is not one this reader takes (comma, "
                         "semicolon, tab or spaces); write the file with one of those")
    if missing:
        wanted = ", ".join(f"'{m}'" for m in missing)
        raise UrCsvError(
            f"{path}: missing column(s) for {', '.join(missing)} (vector fields as <name>_0..<name>_5). The file "
            f"has: {', '.join(header[:40])}{' ...' if len(header) > 40 else ''}. Record them, e.g. "
            f"rtde_receive.startFileRecording(filename, ['timestamp', 'actual_q', 'actual_qd', ...]) with {wanted}"
        )

    width = len(header)
    body = lines[1:]
    if not body:
        raise UrCsvError(f"{path} has a header but no data rows")
    last = [f for f in _split(body[-1].strip(), delimiter) if f.strip()]
    if len(last) < width:
        # The recorder was stopped mid-line (possibly right after a separator).
        warnings.append(f"last line ({len(body) + 1}) is incomplete (recording cut off); ignored")
        body = body[:-1]
        if not body:
            raise UrCsvError(f"{path} has a header but no complete data rows")
    state = {name: column[name] for name in ("robot_mode", "safety_mode") if name in column}
    used = sorted({c for cols in selected.values() for c in cols} | set(state.values()))
    data = _numbers(path, body, delimiter, used, warnings, header, nan_policy)
    if data.shape[0] == 0:
        raise UrCsvError(f"{path} has a header but no complete data rows")
    pos = {c: k for k, c in enumerate(used)}
    arrays = {prefix: data[:, [pos[c] for c in cols]] for prefix, cols in selected.items()}
    modes = {name: data[:, pos[c]] for name, c in state.items()}
    data = data[:, [pos[c] for cols in selected.values() for c in cols]]

    row = np.arange(data.shape[0])  # each remaining sample's data row in the file (FileRows)
    dropped: list[tuple[np.ndarray, np.ndarray, str]] = []  # (rows, timestamps as read, reason)
    stopped = _not_running(modes)
    if stopped.any():
        t_all = arrays["timestamp"][:, 0]
        dropped.append((row[stopped], t_all[stopped], "not_running"))
        row = row[~stopped]
        rows = np.flatnonzero(stopped)
        warnings.append(f"{rows.size} row(s) where the robot was not running normally (robot_mode != "
                        f"{ROBOT_MODE_RUNNING} RUNNING or safety_mode not NORMAL/REDUCED: a protective or emergency "
                        f"stop, a fault), t = {t_all[rows[0]]:.3f} ... {t_all[rows[-1]]:.3f} s; dropped (the gap "
                        "splits the recording)")
        arrays = {k: v[~stopped] for k, v in arrays.items()}
        data = data[~stopped]
        if not data.shape[0]:
            raise UrCsvError(f"{path}: the robot was not running normally in any row (robot_mode/safety_mode); "
                             "record while the program runs, without a protective stop")

    # a missing temperature reading is not a bad sample: temperatures only inform (validation notes), never fit
    informs = np.concatenate([np.full(len(cols), prefix in INFORMATIONAL) for prefix, cols in selected.items()])
    bad = ~np.all(np.isfinite(data[:, ~informs]), axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)
        text = (f"{int(bad.sum())} of {bad.size} rows hold NaN/inf (first data rows: "
                f"{', '.join(str(r + 1) for r in rows[:5])}{', ...' if rows.size > 5 else ''})")
        if nan_policy == "raise":
            raise UrCsvError(f"{path}: {text}. Pass --nan-policy drop (nan_policy='drop' in Python and the "
                             "identifier node) to drop them")
        warnings.append(text + "; dropped")
        dropped.append((row[bad], arrays["timestamp"][bad, 0], "non_finite"))
        row = row[~bad]
        arrays = {k: v[~bad] for k, v in arrays.items()}
    t = arrays.pop("timestamp")[:, 0]
    time_scale = 1.0
    if t.size > 1:
        step = float(np.median(np.abs(np.diff(t))))
        if MILLISECOND_STEPS[0] <= step <= MILLISECOND_STEPS[1]:
            time_scale = 1e-3
            t = t * time_scale
            warnings.append(f"timestamps step by {step:g} (median): read as milliseconds (RTDE records every 2-8 ms); "
                            "the file's timestamp column should be in seconds")
    _check_clock(path, t, row)
    order = np.argsort(t, kind="stable")
    keep = np.ones(t.size, dtype=bool)
    keep[1:] = np.diff(t[order]) > 0
    q = arrays["actual_q"][order]
    differ = ~keep & np.r_[False, np.any(np.abs(np.diff(q, axis=0)) > SAME_CYCLE_Q_RAD, axis=1)]
    if differ.any():
        first = int(row[order][np.flatnonzero(differ)[0]])
        raise UrCsvError(f"{path}: {int(differ.sum())} row(s) repeat an earlier timestamp with other joint positions "
                         f"(first: line {first + 2}): not the same RTDE cycle, so two recordings are interleaved. "
                         "Give one recording per file")
    if not np.all(order == np.arange(t.size)):
        _check_reordering(path, t, order, row)
        warnings.append("rows were not in timestamp order; sorted")
    if not np.all(keep):
        warnings.append(f"{int((~keep).sum())} row(s) repeat an earlier timestamp (same RTDE cycle); kept the first")
    sel = order[keep]
    repeats = order[~keep]
    dropped.append((row[repeats], t[repeats] / time_scale, "repeated"))
    file_rows = _file_rows(row[sel], dropped, time_scale, repeats_of=np.cumsum(keep)[~keep] - 1)
    fields = {RTDE_FIELDS[prefix]: values[sel] for prefix, values in arrays.items()}
    storage = "ur_rtde_csv" if delimiter == "," else "rtde_record"
    return Recording(
        joint_names=tuple(joint_names),
        time_s=t[sel],
        source=RecordingSource(str(path), storage,
                               {"time_s": "timestamp", **{RTDE_FIELDS[p]: p for p in arrays}}),
        warnings=tuple(warnings),
        file_rows=file_rows,
        **fields,
    )


def _file_rows(sample_row: np.ndarray, dropped: list[tuple[np.ndarray, np.ndarray, str]], time_scale: float,
               repeats_of: np.ndarray) -> FileRows:
    """The :class:`FileRows` of the samples kept and the rows dropped (the repeated rows last in ``dropped``)."""
    rows = np.concatenate([r for r, _, _ in dropped]).astype(int)
    reasons = np.concatenate([np.full(r.size, why) for r, _, why in dropped]).astype(str)
    repeats = np.concatenate([np.full(rows.size - repeats_of.size, -1), repeats_of]).astype(int)
    times = np.concatenate([np.asarray(t, float) for _, t, _ in dropped]) * time_scale
    return FileRows(sample_row=sample_row, dropped_row=rows, dropped_time_s=times, dropped_reason=reasons,
                    dropped_repeats=repeats)


def _numbers(path: Path, body: list[str], delimiter: str | None, used: list[int], warnings: list[str],
             header: list[str], nan_policy: str) -> np.ndarray:
    """The ``used`` columns of the data lines as floats; empty cells are missing values (NaN, with a warning);
    lines that cannot be read (text in a used cell, too few cells) are refused, or with ``nan_policy`` 'drop'
    read as NaN rows (with a warning) for the NaN rule to drop."""
    def load(lines: list[str]) -> np.ndarray:
        return np.loadtxt(io.StringIO("\n".join(lines)), delimiter=delimiter, usecols=used, ndmin=2, dtype=float)
    try:
        return load(body)
    except ValueError as first:
        error = first
        if delimiter:
            d = re.escape(delimiter)
            empty = re.compile(rf"(^|{d})[ \t]*(?={d}|$)")
            filled = [empty.sub(r"\1nan", line.rstrip()) for line in body]
            if filled != body:
                try:
                    data = load(filled)
                except ValueError as second:
                    error = second
                else:
                    warnings.append("empty cells read as missing values (NaN)")
                    return data
    # a few broken lines (text in a cell, a line cut short or two merged): read line by line, those rows NaN
    data, broken = _numbers_by_line(body, delimiter, used, header)
    if not broken:  # numpy failed on what Python reads: say what numpy said
        raise UrCsvError(f"{path}: the rows cannot be read as numbers ({error}); check the file for truncated or "
                         "merged lines") from error
    (first, why), count = broken[0], len(broken)
    text = (f"{count} data row(s) cannot be read as numbers (first: data row {first + 1}, {why})")
    if nan_policy == "raise":
        raise UrCsvError(f"{path}: {text}. Repair or delete those lines, or pass --nan-policy drop (nan_policy "
                         "'drop' in Python and the identifier node) to drop them") from error
    warnings.append(f"{text}: read as missing values (NaN)")
    return data


def _numbers_by_line(body: list[str], delimiter: str | None, used: list[int], header: list[str]
                     ) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """The ``used`` columns of every data line as floats, a line that cannot be read all NaN, and those lines as
    (data row from 0, what is wrong)."""
    data = np.full((len(body), len(used)), np.nan)
    broken: list[tuple[int, str]] = []
    for r, line in enumerate(body):
        cells = _split(line.strip(), delimiter)
        while len(cells) > len(header) and not cells[-1].strip():
            cells.pop()  # a trailing delimiter
        if len(cells) != len(header):  # cut short, or two lines merged
            broken.append((r, f"{len(cells)} cells where the header has {len(header)}"))
            continue
        try:
            data[r] = [float(cells[c].strip() or "nan") for c in used]
        except ValueError:
            bad = next(c for c in used if not _is_number(cells[c]))
            broken.append((r, f"column {header[bad] if bad < len(header) else bad}: {cells[bad].strip()!r}"))
            data[r] = np.nan
    return data, broken


def _is_number(cell: str) -> bool:
    try:
        float(cell.strip() or "nan")
    except ValueError:
        return False
    return True


def _not_running(modes: dict[str, np.ndarray]) -> np.ndarray:
    """Rows where the recorded robot/safety mode says the arm is not running its program normally."""
    stopped = None
    if "robot_mode" in modes:
        stopped = np.isfinite(modes["robot_mode"]) & (modes["robot_mode"] != ROBOT_MODE_RUNNING)
    if "safety_mode" in modes:
        unsafe = np.isfinite(modes["safety_mode"]) & ~np.isin(modes["safety_mode"], SAFETY_MODES_MOVING)
        stopped = unsafe if stopped is None else stopped | unsafe
    return np.zeros(0, bool) if stopped is None else stopped


def write_ur_csv(path: str | Path, recording: Recording, *, delimiter: str = ",", decimals: int = 6) -> Path:
    """Write a recording in the ur_rtde ``startFileRecording`` layout (``delimiter=' '`` for record.py's).

    Writes ``timestamp`` and every RTDE field of the table above that the recording has.
    """
    if recording.n_joints != 6:
        raise UrCsvError(f"RTDE files hold 6 joints; the recording has {recording.n_joints}")
    inverse = {v: k for k, v in RTDE_FIELDS.items()}
    parts = [recording.time_s[:, None]]
    header = ["timestamp"]
    for name in ("q_rad", "qd_rad_s", *recording.available()):
        if name not in inverse:
            continue
        parts.append(getattr(recording, name))
        header += [f"{inverse[name]}_{i}" for i in range(6)]
    table = np.hstack(parts)
    path = Path(path)
    with path.open("w", encoding="ascii") as handle:
        handle.write(delimiter.join(header) + "\n")
        np.savetxt(handle, table, fmt=f"%.{decimals}f", delimiter=delimiter)
    return path
