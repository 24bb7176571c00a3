"""RTDE CSV reader: ur_rtde and record.py layouts, round trip, and each bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_id.io.recording import Recording
from robot_dynamics_id.io.ur_csv import UrCsvError, read_ur_csv, write_ur_csv
from robot_dynamics_id.robots import JOINT_NAMES


def _recording(n: int = 250) -> Recording:
    rng = np.random.default_rng(3)
    t = 1234.5 + 0.008 * np.arange(n)  # CB3 125 Hz, controller clock

    def sig() -> np.ndarray:
        return np.round(rng.normal(size=(n, 6)), 6)

    return Recording(joint_names=JOINT_NAMES, time_s=t, q_rad=sig(), qd_rad_s=sig(), current_a=sig(),
                     target_current_a=sig(), target_moment_nm=sig(), tcp_wrench=sig())


@pytest.mark.parametrize("delimiter", [",", " "])
def test_round_trip(tmp_path: Path, delimiter: str) -> None:
    rec = _recording()
    path = write_ur_csv(tmp_path / "rec.csv", rec, delimiter=delimiter)
    header = path.read_text().splitlines()[0]
    assert header.startswith(f"timestamp{delimiter}actual_q_0{delimiter}")
    assert "actual_TCP_force_5" in header
    out = read_ur_csv(path)
    np.testing.assert_allclose(out.time_s, rec.time_s, atol=5e-7)
    for name in ("q_rad", "qd_rad_s", "current_a", "target_current_a", "target_moment_nm", "tcp_wrench"):
        np.testing.assert_allclose(getattr(out, name), getattr(rec, name), atol=5e-7, err_msg=name)
    assert out.effort_nm is None
    assert out.source is not None and out.source.storage == ("ur_rtde_csv" if delimiter == "," else "rtde_record")


def test_ur_rtde_file_with_extra_columns_and_cut_last_line(tmp_path: Path) -> None:
    """Columns in another order plus fields the reader ignores; the recorder stopped mid-line."""
    names = (["timestamp"] + [f"target_q_{i}" for i in range(6)] + [f"actual_qd_{i}" for i in range(6)]
             + ["robot_mode"] + [f"actual_q_{i}" for i in range(6)])
    lines = [",".join(names)]
    for k in range(5):
        row = [f"{0.002 * k:.6f}"] + ["9.0"] * 6 + [f"{-k:.6f}"] * 6 + ["7"] + [f"{k + i / 10:.6f}" for i in range(6)]
        lines.append(",".join(row))
    lines.append("0.010000,1.0,2.0")  # cut off
    path = tmp_path / "robot_data.csv"
    path.write_text("\n".join(lines) + "\n")
    rec = read_ur_csv(path)
    assert rec.n_samples == 5
    np.testing.assert_allclose(rec.q_rad[:, 2], np.arange(5) + 0.2)
    np.testing.assert_allclose(rec.qd_rad_s[:, 0], -np.arange(5))
    assert rec.current_a is None
    assert any("incomplete" in w for w in rec.warnings)


def test_missing_columns_name_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text("timestamp,actual_q_0,actual_q_1,actual_q_2,actual_q_3,actual_q_4,actual_q_5\n0,1,2,3,4,5,6\n")
    with pytest.raises(UrCsvError, match=r"missing column\(s\) for actual_qd.*startFileRecording"):
        read_ur_csv(path)
    rec = _recording(20)
    good = write_ur_csv(tmp_path / "b.csv", Recording(joint_names=JOINT_NAMES, time_s=rec.time_s,
                                                      q_rad=rec.q_rad, qd_rad_s=rec.qd_rad_s))
    with pytest.raises(UrCsvError, match="actual_current"):
        read_ur_csv(good, require=["current_a"])
    partial = tmp_path / "c.csv"
    text = good.read_text().splitlines()
    partial.write_text("\n".join([text[0] + ",actual_current_0"] + [ln + ",1.0" for ln in text[1:]]) + "\n")
    with pytest.raises(UrCsvError, match=r"actual_current is incomplete.*actual_current_1"):
        read_ur_csv(partial)
    # another separator: said as such (it read "missing column(s) for timestamp, actual_q ..." before)
    piped = tmp_path / "d.csv"
    piped.write_text("\n".join(line.replace(",", "|") for line in text) + "\n")
    with pytest.raises(UrCsvError, match=r"the header is one column, .*its separator '\|' is not one this reader "
                                         r"takes \(comma, semicolon, tab or spaces\)"):
        read_ur_csv(piped)


def test_nan_rows_raise_or_drop(tmp_path: Path) -> None:
    rec = _recording(30)
    path = write_ur_csv(tmp_path / "n.csv", rec)
    lines = path.read_text().splitlines()
    for row in (4, 11):
        cells = lines[row].split(",")
        cells[3] = "nan"
        lines[row] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UrCsvError, match=r"2 of 30 rows hold NaN/inf \(first data rows: 4, 11\).*nan_policy='drop'"):
        read_ur_csv(path)
    out = read_ur_csv(path, nan_policy="drop")
    assert out.n_samples == 28


def test_other_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(UrCsvError, match="does not exist"):
        read_ur_csv(tmp_path / "nope.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(UrCsvError, match="empty"):
        read_ur_csv(empty)
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\x00\x01\x02timestamp")
    with pytest.raises(UrCsvError, match="binary"):
        read_ur_csv(binary)
    header_only = tmp_path / "h.csv"
    write_ur_csv(header_only, _recording(3))
    header_only.write_text(header_only.read_text().splitlines()[0] + "\n")
    with pytest.raises(UrCsvError, match="no data rows"):
        read_ur_csv(header_only)
    text_cell = tmp_path / "t.csv"
    write_ur_csv(text_cell, _recording(5))
    lines = text_cell.read_text().splitlines()
    lines[2] = lines[2].replace(lines[2].split(",")[1], "abc", 1)
    text_cell.write_text("\n".join(lines) + "\n")
    with pytest.raises(UrCsvError, match=r"1 data row\(s\) cannot be read as numbers \(first: data row 2, "
                                         r"column actual_q_0: 'abc'\)\. Repair or delete those lines, or pass "
                                         r"--nan-policy drop"):
        read_ur_csv(text_cell)
    with pytest.raises(UrCsvError, match="6 joints"):
        read_ur_csv(text_cell, joint_names=["a", "b"])


def test_repeated_timestamps_are_dropped(tmp_path: Path) -> None:
    rec = _recording(10)
    path = write_ur_csv(tmp_path / "r.csv", rec)
    lines = path.read_text().splitlines()
    lines.insert(5, lines[4])  # the same RTDE cycle twice
    path.write_text("\n".join(lines) + "\n")
    out = read_ur_csv(path)
    assert out.n_samples == 10
    assert any("repeat" in w for w in out.warnings)


def test_two_recordings_in_one_file_are_refused_not_interleaved(tmp_path: Path) -> None:
    """Sorting rows a clock jump put out of order would merge two motions 1 ms apart (found by a review)."""
    rec = _recording(40)
    path = write_ur_csv(tmp_path / "r.csv", rec)
    lines = path.read_text().splitlines()
    # rows 20.. recorded again from an earlier clock: a second run appended
    shifted = [",".join([f"{float(line.split(',')[0]) - 0.1 - 0.008 * 20:.6f}", *line.split(",")[1:]])
               for line in lines[21:]]
    path.write_text("\n".join(lines[:21] + shifted) + "\n")
    with pytest.raises(UrCsvError, match=r"jumps back by 0\.252 s at line 22 .*"
                                         r"the file holds two recordings, or the controller restarted"):
        read_ur_csv(path)
    # the same timestamp twice with other joint positions: not one RTDE cycle
    lines = write_ur_csv(tmp_path / "d.csv", rec).read_text().splitlines()
    twin = lines[6].split(",")
    twin[1] = f"{float(twin[1]) + 0.5:.6f}"
    lines.insert(7, ",".join(twin))
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(UrCsvError, match=r"1 row\(s\) repeat an earlier timestamp with other joint positions"):
        read_ur_csv(tmp_path / "d.csv")
    # a clock that falls back by less than BACKWARD_JUMP_S (0.05 s, off the cycle grid) and goes on: sorting used
    # to interleave two stretches of motion with only "sorted" said (found by a review)
    lines = write_ur_csv(tmp_path / "s.csv", rec).read_text().splitlines()
    small = [",".join([f"{float(line.split(',')[0]) - 0.05:.6f}", *line.split(",")[1:]]) for line in lines[21:]]
    (tmp_path / "s.csv").write_text("\n".join(lines[:21] + small) + "\n")
    with pytest.raises(UrCsvError, match=r"steps back by 0\.042 s at line 22 .*the clock jumped back .*Split the "
                                         r"file there"):
        read_ur_csv(tmp_path / "s.csv")
    # rows a few cycles out of order (a recorder's buffer): sorted, with a warning
    lines = write_ur_csv(tmp_path / "o.csv", rec).read_text().splitlines()
    lines[5], lines[6] = lines[6], lines[5]
    (tmp_path / "o.csv").write_text("\n".join(lines) + "\n")
    out = read_ur_csv(tmp_path / "o.csv")
    assert out.n_samples == 40 and "rows were not in timestamp order; sorted" in out.warnings


def test_actual_current_as_torque_is_read_as_gravity_compensated_not_as_joint_torque(tmp_path: Path) -> None:
    rec = _recording()
    compensated = np.round(np.random.default_rng(4).normal(size=(rec.n_samples, 6)), 6)
    path = write_ur_csv(tmp_path / "rec.csv", Recording(
        joint_names=JOINT_NAMES, time_s=rec.time_s, q_rad=rec.q_rad, qd_rad_s=rec.qd_rad_s,
        current_a=rec.current_a, current_as_torque_nm=compensated))
    assert "actual_current_as_torque_0" in path.read_text().splitlines()[0]
    out = read_ur_csv(path)
    assert out.effort_nm is None  # UR documents it as gravity-compensated: never a joint torque
    np.testing.assert_allclose(out.current_as_torque_nm, compensated, atol=5e-7)
    assert out.source.topics["current_as_torque_nm"] == "actual_current_as_torque"


def _with_modes(tmp_path: Path, robot_mode: list[int], safety_mode: list[int]) -> Path:
    rec = _recording(len(robot_mode))
    path = write_ur_csv(tmp_path / "modes.csv", rec)
    lines = path.read_text().splitlines()
    lines[0] += ",robot_mode,safety_mode"
    for k, (r, s) in enumerate(zip(robot_mode, safety_mode)):
        lines[k + 1] += f",{r},{s}"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rows_of_a_protective_stop_or_a_stopped_robot_are_dropped_with_a_warning(tmp_path: Path) -> None:
    n = 40
    robot_mode = [7] * n
    safety_mode = [1] * 10 + [3] * 8 + [1] * 12 + [2] * 5 + [1] * 5  # a protective stop; reduced mode is motion
    robot_mode[30] = 5  # IDLE
    out = read_ur_csv(_with_modes(tmp_path, robot_mode, safety_mode))
    kept = [k for k in range(n) if safety_mode[k] in (1, 2) and robot_mode[k] == 7]
    np.testing.assert_allclose(out.time_s, _recording(n).time_s[kept], atol=5e-7)
    (warning,) = [w for w in out.warnings if "not running normally" in w]
    assert warning.startswith("9 row(s)") and "protective" in warning
    with pytest.raises(UrCsvError, match="not running normally in any row"):
        read_ur_csv(_with_modes(tmp_path, [7] * 5, [3] * 5))


def test_what_spreadsheets_and_hand_written_recorders_do_is_read_with_warnings(tmp_path: Path) -> None:
    rec = _recording(30)
    path = write_ur_csv(tmp_path / "r.csv", rec)
    text = path.read_text()
    lines = text.splitlines()
    # a byte-order mark and quoted header names (a spreadsheet's re-save)
    quoted = tmp_path / "quoted.csv"
    quoted.write_bytes(b"\xef\xbb\xbf" + "\n".join([",".join(f'"{h}"' for h in lines[0].split(","))] + lines[1:])
                       .encode())
    np.testing.assert_allclose(read_ur_csv(quoted).q_rad, rec.q_rad, atol=5e-7)
    # ';' separators with decimal commas
    european = tmp_path / "eu.csv"
    european.write_text("\n".join(line.replace(",", ";").replace(".", ",") for line in lines) + "\n")
    out = read_ur_csv(european)
    np.testing.assert_allclose(out.current_a, rec.current_a, atol=5e-7)
    assert any("decimal commas" in w for w in out.warnings)
    # an empty cell is a missing value: refused or dropped under the NaN policy, the row counted from 1
    empty = tmp_path / "empty_cell.csv"
    cells = lines[7].split(",")
    cells[3] = ""
    empty.write_text("\n".join(lines[:7] + [",".join(cells)] + lines[8:]) + "\n")
    with pytest.raises(UrCsvError, match=r"1 of 30 rows hold NaN/inf \(first data rows: 7\)"):
        read_ur_csv(empty)
    out = read_ur_csv(empty, nan_policy="drop")
    assert out.n_samples == 29 and any("empty cells" in w for w in out.warnings)
    # a recording killed right after a separator
    cut = tmp_path / "cut.csv"
    cut.write_text(text + lines[-1].split(",", 1)[0] + ",")
    out = read_ur_csv(cut)
    assert out.n_samples == 30 and any("incomplete" in w for w in out.warnings)
    # a garbled cell names its data row counted from 1, as the NaN message does
    garbled = tmp_path / "garbled.csv"
    cells = lines[7].split(",")
    cells[3] = "1.2.3"
    garbled.write_text("\n".join(lines[:7] + [",".join(cells)] + lines[8:]) + "\n")
    with pytest.raises(UrCsvError, match=r"first: data row 7, column actual_q_2: '1.2.3'"):
        read_ur_csv(garbled)


def test_timestamps_in_milliseconds_are_read_as_such_with_a_warning(tmp_path: Path) -> None:
    rec = _recording(20)
    ms = Recording(joint_names=rec.joint_names, time_s=rec.time_s * 1000.0, q_rad=rec.q_rad, qd_rad_s=rec.qd_rad_s)
    out = read_ur_csv(write_ur_csv(tmp_path / "ms.csv", ms))
    np.testing.assert_allclose(out.time_s, rec.time_s, atol=1e-6)
    assert any("milliseconds" in w for w in out.warnings)
    assert not read_ur_csv(write_ur_csv(tmp_path / "s.csv", rec)).warnings


def test_file_rows_map_every_sample_and_every_row_left_out(tmp_path: Path) -> None:
    """predictions.csv keeps one row per data row of the file: the reader says which row each sample came from and
    which rows it left out, why, and (for a repeated cycle) which sample the row repeats."""
    n = 20
    robot_mode, safety_mode = [7] * n, [1] * n
    safety_mode[3] = 3  # protective stop
    path = _with_modes(tmp_path, robot_mode, safety_mode)
    lines = path.read_text().splitlines()
    cells = lines[9].split(",")  # data row 8
    cells[3] = "nan"
    lines[9] = ",".join(cells)
    lines.insert(13, lines[12])  # data row 11 repeated as data row 12
    path.write_text("\n".join(lines) + "\n")
    out = read_ur_csv(path, nan_policy="drop")
    rows = out.file_rows
    t = _recording(n).time_s
    assert out.n_samples == n - 2
    np.testing.assert_array_equal(rows.sample_row, [k for k in range(n + 1) if k not in (3, 8, 12)])
    np.testing.assert_array_equal(rows.dropped_row, [3, 8, 12])
    np.testing.assert_array_equal(rows.dropped_reason, ["not_running", "non_finite", "repeated"])
    np.testing.assert_allclose(rows.dropped_time_s, t[[3, 8, 11]], atol=5e-7)
    repeated = rows.dropped_repeats[2]
    assert rows.dropped_repeats[:2].tolist() == [-1, -1] and out.time_s[repeated] == pytest.approx(t[11], abs=5e-7)
    assert out.select(slice(0, 5)).file_rows is None  # a subset no longer maps onto the file


def test_broken_lines_are_dropped_and_reported_with_the_nan_policy(tmp_path: Path) -> None:
    """Text in a cell, a line cut short in the middle of the file, two lines merged: refused naming the first and
    the fix; with nan_policy 'drop' those rows are dropped (reason non_finite in the file's rows), the rest kept."""
    rec = _recording(30)
    path = write_ur_csv(tmp_path / "b.csv", rec)
    lines = path.read_text().splitlines()
    cells = lines[6].split(",")
    lines[6] = ",".join(cells[:1] + ["garbage"] + cells[2:])  # data row 6
    lines[12] = lines[12][: len(lines[12]) // 3]  # data row 12, cut short
    lines[20] = lines[20] + lines[21]  # data row 20 merged with the next: a number like 1.5e-3-0.2
    del lines[21]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(UrCsvError, match=r"3 data row\(s\) cannot be read as numbers \(first: data row 6, "
                                         r"column [a-z_0-9]+: 'garbage'\)"):
        read_ur_csv(path)
    out = read_ur_csv(path, nan_policy="drop")
    assert out.n_samples == 26
    assert any("3 data row(s) cannot be read as numbers" in w for w in out.warnings)
    assert sorted(out.file_rows.dropped_row.tolist()) == [5, 11, 19]
    assert set(out.file_rows.dropped_reason.tolist()) == {"non_finite"}
    keep = [k for k in range(30) if k not in (5, 11, 19, 20)]  # row 20 went into the merged line
    np.testing.assert_allclose(out.q_rad, rec.q_rad[keep], atol=1e-9)


def test_joint_temperatures_are_read_and_a_missing_one_drops_no_row(tmp_path: Path) -> None:
    rec = _recording(30)
    warm = np.round(np.full((30, 6), 31.0) + np.arange(6), 1)
    path = write_ur_csv(tmp_path / "t.csv", Recording(
        joint_names=rec.joint_names, time_s=rec.time_s, q_rad=rec.q_rad, qd_rad_s=rec.qd_rad_s,
        current_a=rec.current_a, joint_temperature_c=warm))
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    assert "joint_temperatures_5" in header
    np.testing.assert_allclose(read_ur_csv(path).joint_temperature_c, warm)
    cells = lines[5].split(",")
    cells[header.index("joint_temperatures_2")] = ""  # a recorder that missed one reading
    path.write_text("\n".join(lines[:5] + [",".join(cells)] + lines[6:]) + "\n")
    out = read_ur_csv(path)  # nan_policy 'raise': the temperature does not make the row bad
    assert out.n_samples == 30 and np.isnan(out.joint_temperature_c[4, 2])
    assert np.isfinite(np.delete(out.joint_temperature_c.ravel(), 4 * 6 + 2)).all()
