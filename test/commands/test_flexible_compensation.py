"""The ``rdi flexible-compensation`` command prints the P4 reproduction and the UR3 demo."""

from robot_dynamics_id.cli import main


def test_flexible_compensation_command_prints_reproduction(capsys):
    assert main(["flexible-compensation", "--family", "0"]) == 0
    out = capsys.readouterr().out
    assert "paper: 335 iterations" in out and "paper: 1427 iterations" in out
    assert "converged=False" in out and "not reached" in out
    assert "force error before correction" in out and "force error after correction" in out


def test_flexible_compensation_command_rejects_bad_family(capsys):
    assert main(["flexible-compensation", "--family", "-1"]) == 1
    assert "--family" in capsys.readouterr().err
