"""Recording: shape checks, selection, npz round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robot_dynamics_id.io.recording import Recording, RecordingSource
from robot_dynamics_id.robots import JOINT_NAMES


def _rec(n: int = 10) -> Recording:
    t = np.arange(n) * 0.002
    return Recording(joint_names=JOINT_NAMES, time_s=t, q_rad=np.ones((n, 6)), qd_rad_s=np.zeros((n, 6)),
                     tcp_wrench=np.arange(6.0 * n).reshape(n, 6), source=RecordingSource("x", "simulated"))


def test_shapes_and_order_are_checked() -> None:
    with pytest.raises(ValueError, match=r"q_rad has shape \(10, 5\), expected \(10, 6\)"):
        Recording(joint_names=JOINT_NAMES, time_s=np.arange(10.0), q_rad=np.ones((10, 5)), qd_rad_s=np.ones((10, 6)))
    with pytest.raises(ValueError, match="strictly increasing"):
        Recording(joint_names=JOINT_NAMES, time_s=np.array([0.0, 1.0, 1.0]), q_rad=np.ones((3, 6)),
                  qd_rad_s=np.ones((3, 6)))


def test_select_describe_and_npz(tmp_path: Path) -> None:
    rec = _rec()
    assert rec.available() == ("tcp_wrench",)
    assert rec.sample_period_s == pytest.approx(0.002)
    part = rec.select(slice(2, 5))
    assert part.n_samples == 3 and part.tcp_wrench[0, 0] == 12.0
    assert "10 samples" in rec.describe()
    rec.save_npz(tmp_path / "r.npz")
    back = Recording.load_npz(tmp_path / "r.npz")
    assert back.joint_names == JOINT_NAMES
    np.testing.assert_array_equal(back.tcp_wrench, rec.tcp_wrench)
    assert back.current_a is None
