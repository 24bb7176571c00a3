"""Progress that behaves (issue 17 item 5): a bar on a terminal only, bounded plain lines anywhere else.

The reporter is driven with an injected clock (no wall-clock windows); the terminal case uses a real
pseudo-terminal (pty), and the commands are run as a user runs them, with their output to a pipe or a pty.
"""

import io
import os
import pty
import select
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from robot_dynamics_id.progress import ProgressReporter, scaled, stage_logger, stream_is_terminal

RDI = str(Path(sys.executable).parent / "rdi")


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _drive(reporter: ProgressReporter, clock: FakeClock, stages=("read", "regressor", "write report"),
           updates_per_stage: int = 2000, dt_s: float = 0.01) -> None:
    """Many updates per stage, 10 ms apart on the clock: 20 s per stage."""
    for k, stage in enumerate(stages):
        for i in range(updates_per_stage):
            clock.t += dt_s
            reporter((k + i / updates_per_stage) / len(stages), stage)
    reporter.close()


def test_a_pipe_or_file_gets_one_line_per_stage_and_at_most_one_every_few_seconds():
    out, clock = io.StringIO(), FakeClock()
    reporter = ProgressReporter("identify", out, clock=clock, log_interval_s=5.0)
    assert not reporter.terminal  # a StringIO is not a terminal
    _drive(reporter, clock)
    text = out.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    # 3 stages of 20 s each: a line when each starts, then at most one per 5 s, plus the final 'done' line
    assert len(lines) <= 3 * (1 + 20 / 5.0) + 1, lines
    for stage in ("read", "regressor", "write report"):
        assert any(line.startswith(f"identify: {stage} ") for line in lines), (stage, lines)
    assert lines[-1] == "identify: done in 60.0 s"
    assert all(len(line) < 100 for line in lines)


def test_an_error_or_interrupt_inside_never_ends_in_done():
    """'identify: done in 12.7 s' came before 'interrupted' (a review): a job left by an exception is not done."""
    for error in (KeyboardInterrupt, ValueError):
        out, clock = io.StringIO(), FakeClock()
        with pytest.raises(error):
            with ProgressReporter("identify", out, clock=clock) as reporter:
                reporter(0.3, "regressor")
                clock.t += 12.7
                raise error()
        assert out.getvalue().splitlines()[-1] == "identify: stopped after 12.7 s"


def test_a_stage_change_is_always_reported_however_fast_the_updates():
    out, clock = io.StringIO(), FakeClock()
    reporter = ProgressReporter("plan", out, clock=clock, log_interval_s=5.0)
    for i in range(4):  # no time passes at all
        reporter(i / 4, f"start {i + 1}/4")
    reporter.close()
    assert [line.split(" 0 %")[0].split(" 25 %")[0].split(" 50 %")[0].split(" 75 %")[0]
            for line in out.getvalue().splitlines()[:4]] == [f"plan: start {i}/4" for i in range(1, 5)]


def test_notes_are_lines_with_the_elapsed_time_and_never_carriage_returns_in_a_log():
    out, clock = io.StringIO(), FakeClock()
    reporter = ProgressReporter("demo", out, clock=clock)
    reporter.note("1/5 planning")
    clock.t += 2.5
    reporter(0.5, "excitation running")
    reporter.note("bag written")
    reporter.close()
    assert out.getvalue().splitlines() == ["[   0.0 s] 1/5 planning", "demo: excitation running 50 % (2.5 s)",
                                           "[   2.5 s] bag written", "demo: done in 2.5 s"]


def test_nothing_is_written_when_nothing_is_reported():
    out = io.StringIO()
    with ProgressReporter("identify", out):
        pass
    assert out.getvalue() == ""


def _pty_stream():
    master, slave = pty.openpty()
    return master, os.fdopen(slave, "w")


def _read_all(master: int) -> str:
    chunks = []
    while select.select([master], [], [], 0.2)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:  # the other side closed
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_gets_a_live_bar_redrawn_in_place(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    master, stream = _pty_stream()
    try:
        clock = FakeClock()
        reporter = ProgressReporter("identify", stream, clock=clock, min_interval_s=0.1)
        assert reporter.terminal and stream_is_terminal(stream)
        _drive(reporter, clock, updates_per_stage=200)
        stream.flush()
        text = _read_all(master)
    finally:
        stream.close()
        os.close(master)
    assert "\r" in text
    assert "identify [" in text and "#" * 28 + "] 100.0%" in text
    # one finished line per stage stays on the screen: three stages, three newlines
    assert text.replace("\r\n", "\n").count("\n") == 3, text
    # redraws are limited by min_interval_s on the injected clock: 2 s per stage / 0.1 s, not 200 per stage
    assert text.count("\r") <= 3 * (2 / 0.1 + 2) + 3


def test_a_dumb_terminal_gets_lines(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    master, stream = _pty_stream()
    try:
        assert not stream_is_terminal(stream)
    finally:
        stream.close()
        os.close(master)


def test_scaled_maps_a_sub_job_onto_its_slice_and_stage_logger_logs_stage_changes_only():
    seen = []
    sub = scaled(lambda f, s: seen.append((round(f, 6), s)), 0.2, 0.6, "regressor")
    for f in (0.0, 0.5, 1.0, 2.0):
        sub(f, "chunk")
    assert seen == [(0.2, "regressor"), (0.4, "regressor"), (0.6, "regressor"), (0.6, "regressor")]
    assert scaled(None, 0.0, 1.0) is None
    logged = []
    log = stage_logger(logged.append, "identify")
    for f, s in ((0.0, "read"), (0.05, "read"), (0.1, "preprocess"), (0.5, "regressor"), (0.6, "regressor")):
        log(f, s)
    assert logged == ["identify: read (0 %)", "identify: preprocess (10 %)", "identify: regressor (50 %)"]
    # the identifier node's: once cancelling, the stages the job still passes through are not logged
    cancel, logged = threading.Event(), []
    log = stage_logger(logged.append, "identify", silenced_by=cancel)
    log(0.1, "preprocess")
    cancel.set()
    log(0.56, "estimate")
    assert logged == ["identify: preprocess (10 %)"]


# ---- through the commands, as a user runs them ------------------------------------------------------------
@pytest.fixture(scope="module")
def recording_csv(tmp_path_factory):
    from robot_dynamics_id.identification.synthetic import perturbed_truth, synthetic_ur_recording
    from robot_dynamics_id.io.ur_csv import write_ur_csv

    truth = perturbed_truth("ur3", seed=5, relative=0.1)
    rec = synthetic_ur_recording(truth, [10.0, 10.0, 8.0, 6.0, 6.0, 6.0], duration_s=12.0, seed=1,
                                 torque_noise_nm=0.02)
    return str(write_ur_csv(tmp_path_factory.mktemp("progress") / "train.csv", rec))


IDENTIFY_STAGES = ("read", "preprocess", "regressor", "friction", "estimate", "check fit", "write report")


def _identify_argv(data: str, out: Path) -> list[str]:
    return [RDI, "identify", "--data", data, "--out", str(out), "--no-plots", "--drive-gains", "10,10,8,6,6,6"]


def test_rdi_identify_to_a_pipe_names_its_stages_in_lines_without_carriage_returns(recording_csv, tmp_path):
    result = subprocess.run(_identify_argv(recording_csv, tmp_path / "m"), capture_output=True, text=True,
                            timeout=600, env={**os.environ, "TERM": "xterm"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert "\r" not in result.stderr and "\r" not in result.stdout
    progress = [line for line in result.stderr.splitlines() if line.startswith("identify:")]
    for stage in IDENTIFY_STAGES:
        assert any(line.startswith(f"identify: {stage} ") for line in progress), (stage, result.stderr)
    assert progress[-1].startswith("identify: done in ")
    assert len(progress) <= 40, progress
    assert "fit per joint" in result.stdout  # the results stay on stdout


def test_rdi_identify_on_a_terminal_draws_a_bar(recording_csv, tmp_path):
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(_identify_argv(recording_csv, tmp_path / "m"), stdout=subprocess.DEVNULL,
                                stderr=slave, env={**os.environ, "TERM": "xterm"})
        os.close(slave)
        chunks = []
        while True:
            ready = select.select([master], [], [], 1.0)[0]
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        assert proc.wait(timeout=600) == 0
    finally:
        os.close(master)
    text = b"".join(chunks).decode("utf-8", "replace")
    assert "\ridentify [" in text and "] 100.0%" in text, text[-2000:]


def test_rdi_excite_plan_payload_to_a_pipe_reports_each_start_on_its_own_line(tmp_path):
    result = subprocess.run([RDI, "excite", "plan", "--kind", "payload", "--starts", "2", "--max-iterations", "8",
                             "--duration", "6", "--period", "6", "--out", str(tmp_path / "payload.yaml")],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "\r" not in result.stdout and "\r" not in result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("optimise: start 1/2 ") for line in lines), lines
    assert any(line.startswith("optimise: start 2/2, best condition number ") for line in lines), lines
    assert sum(line.startswith("optimise:") for line in lines) <= 8, lines
