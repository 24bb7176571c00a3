"""``rdi natural-oscillation``: what it prints, and a selection that would print nothing."""

from robot_dynamics_id.cli import main


def test_skipping_the_tables_with_nothing_else_is_refused_not_a_silent_success(capsys):
    assert main(["natural-oscillation", "--skip-tables"]) == 1
    err = capsys.readouterr().err
    assert "nothing to print: --skip-tables leaves out the tables" in err and "--search" in err
