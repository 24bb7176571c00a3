"""rdi's top level: errors reach the user as one line with the fix, never a traceback."""

import errno

import pytest

from robot_dynamics_id import cli
from robot_dynamics_id.commands import params


@pytest.mark.parametrize("error, expected", [
    # a write to an open file carries no file name: the message names what the command was writing (--out)
    (OSError(errno.ENOSPC, "No space left on device"), "the disk is full while writing /data/run1 "),
    (OSError(errno.ENOSPC, "No space left on device", "/data/run1/model.yaml"),
     "the disk is full while writing /data/run1/model.yaml "),
    (OSError(errno.EDQUOT, "Disk quota exceeded"), "(Disk quota exceeded): free space or write elsewhere (--out)"),
    (PermissionError(errno.EACCES, "Permission denied", "/data/run1"), "[Errno 13] Permission denied: '/data/run1'"),
])
def test_an_os_error_is_one_line_naming_where_and_the_fix(monkeypatch, capsys, error, expected):
    def failing(args):
        args.out = "/data/run1"  # as the commands that write results have
        raise error

    monkeypatch.setattr(params, "run", failing)
    assert cli.main(["params", "osc_controller"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rdi params: error: ") and expected in err and err.count("\n") == 1, err
    if error.errno == errno.ENOSPC:
        assert "results are incomplete" in err


def test_a_comma_list_starting_with_a_minus_is_an_option_value():
    # a CoM with a negative x once failed with "expected one argument" (argparse took it for an option)
    from robot_dynamics_id.cli import build_parser

    args = build_parser().parse_args(["drive-gains", "--data", "a", "--payload-data", "b", "--payload-kg", "2.4",
                                      "--payload-com", "-0.1,0.05,-5e-2", "--out", "gains.json"])
    assert args.payload_com == "-0.1,0.05,-5e-2"
    args = build_parser().parse_args(["excite", "plan", "--pose", "-.5,-1.57,1.57,-1.57,-1.57,0", "--out", "e.yaml"])
    assert args.pose == "-.5,-1.57,1.57,-1.57,-1.57,0"
