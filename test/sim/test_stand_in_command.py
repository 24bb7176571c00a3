"""``rdi sim-controller``'s options: a controller generation the simulated arm never had is refused."""

from robot_dynamics_id.cli import main


def test_an_e_series_arm_behind_a_cb3_controller_is_refused(capsys):
    assert main(["sim-controller", "--robot", "ur16e", "--personality", "cb3", "--duration", "0.1"]) == 1
    assert "--robot ur16e is an e-Series arm: there is no CB3 ur16e" in capsys.readouterr().err
